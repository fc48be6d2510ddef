#!/bin/bash
# benchctl coco-eval against pycocotools' COCOeval on the same detections:
# random ground truth and detections (crowd regions, ties, > 100 per image),
# a generated dataset, several seeds; all 12 numbers within 1e-4 and the
# printed lines identical.  Bad input: one line, exit 1.
. "${srcdir:-.}/tests/lib.sh"
"$BENCHCTL" --version | grep -q coco-data || skip_all "benchctl built without the COCO data pipeline"
ORACLE="$srcdir/tests/coco-oracle.py"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# pycocotools in a virtual environment of the build tree, made once
venv="$top_builddir/venv"
if ! "$venv/bin/python" -c 'import pycocotools.cocoeval' 2>/dev/null; then
    { [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"; } >/dev/null 2>&1 ||
        skip_all "cannot create a Python virtual environment in $venv"
    "$venv/bin/pip" install -q pycocotools >"$tmp/pip.log" 2>&1 ||
        skip_all "cannot install pycocotools from PyPI (no network?): $(tail -1 "$tmp/pip.log")"
fi
PY="$venv/bin/python"

# compare GT DT NAME: our --json numbers against pycocotools', and the text
compare() {
    local gt=$1 dt=$2 name=$3
    "$PY" "$ORACLE" eval "$gt" "$dt" > "$tmp/ref.json" 2>"$tmp/ref.err" || {
        _t_result 1 "$name: pycocotools ran"; sed 's/^/#   /' "$tmp/ref.err" | tail -5; return; }
    "$BENCHCTL" coco-eval "$gt" "$dt" --json > "$tmp/ours.json" 2>"$tmp/ours.err"
    is "$name: benchctl coco-eval --json exits 0" "$?" 0
    is "$name: the 12 numbers within 1e-4 of pycocotools" "$("$PY" - "$tmp/ref.json" "$tmp/ours.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))["stats"]
ours = json.load(open(sys.argv[2]))["stats"]
keys = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]
diff = max(abs(r - ours[k]) for r, k in zip(ref, keys))
print("ok" if diff <= 1e-4 else "max difference %g: %s vs %s" % (diff, ref, [ours[k] for k in keys]))
PY
)" ok
    "$BENCHCTL" coco-eval "$gt" "$dt" > "$tmp/ours.txt"
    "$PY" -c 'import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))["text"])' "$tmp/ref.json" > "$tmp/ref.txt"
    is "$name: the same 12 lines as pycocotools prints" "$(diff "$tmp/ref.txt" "$tmp/ours.txt" && echo same)" same
}

for seed in 1 2 3 4 5 6; do
    "$PY" "$ORACLE" gen-gt "$seed" "$tmp/gt$seed.json"
    "$PY" "$ORACLE" gen-dets "$seed" "$tmp/gt$seed.json" "$tmp/dt$seed.json"
    compare "$tmp/gt$seed.json" "$tmp/dt$seed.json" "random seed $seed"
done
is "the random sets hold crowd regions" "$(grep -o '"iscrowd": 1' "$tmp"/gt*.json | wc -l | awk '$1 > 5 {print "yes"}')" yes

# a generated dataset (polygons, crowd RLE) with detections near its boxes
"$BENCHCTL" dataset synth --images 4 --val-images 60 --size 320 --classes 6 --seed 3 -o "$tmp/ds" >/dev/null
gt="$tmp/ds/annotations/instances_val2017.json"
"$PY" - "$gt" "$tmp/dsdt.json" <<'PY'
import json, random, sys
gt = json.load(open(sys.argv[1]))
rnd = random.Random(7)
cats = [c["id"] for c in gt["categories"]]
dets = []
for a in gt["annotations"]:
    x, y, w, h = a["bbox"]
    for _ in range(rnd.choice([1, 1, 2])):
        s = rnd.choice([0.01, 0.05, 0.2])
        dets.append({"image_id": a["image_id"], "category_id": a["category_id"] if rnd.random() < 0.9 else rnd.choice(cats),
                     "bbox": [x + rnd.gauss(0, s * w), y + rnd.gauss(0, s * h), w * abs(1 + rnd.gauss(0, s)), h * abs(1 + rnd.gauss(0, s))],
                     "score": rnd.random()})
for im in gt["images"]:
    for _ in range(rnd.randint(0, 5)):
        dets.append({"image_id": im["id"], "category_id": rnd.choice(cats), "score": rnd.random() / 2,
                     "bbox": [rnd.uniform(0, 200), rnd.uniform(0, 150), rnd.uniform(2, 120), rnd.uniform(2, 120)]})
json.dump(dets, open(sys.argv[2], "w"))
PY
compare "$gt" "$tmp/dsdt.json" "generated dataset"
is "  which has crowd regions" "$(grep -c '"iscrowd": 1' "$gt" | awk '$1 > 0 {print "yes"}')" yes
# the ground truth itself as detections: AP 1 where defined
"$PY" -c 'import json,sys; g=json.load(open(sys.argv[1])); json.dump([{"image_id":a["image_id"],"category_id":a["category_id"],"bbox":a["bbox"],"score":1.0} for a in g["annotations"] if not a["iscrowd"]], open(sys.argv[2],"w"))' "$gt" "$tmp/perfect.json"
compare "$gt" "$tmp/perfect.json" "perfect detections"
like "  AP 1.000" "$("$BENCHCTL" coco-eval "$gt" "$tmp/perfect.json" | head -1)" "= 1\.000$"

# ---- bad input: one line, exit 1 ---------------------------------------------------------------------
bad() {   # bad NAME JSON PATTERN
    printf '%s' "$2" > "$tmp/bad.json"
    local err rc
    err=$("$BENCHCTL" coco-eval "$gt" "$tmp/bad.json" 2>&1 >/dev/null); rc=$?
    is "$1: exit 1" "$rc" 1
    is "$1: one line" "$(printf '%s\n' "$err" | wc -l)" 1
    like "$1: says why" "$err" "$3"
}
bad "unknown image id" '[{"image_id": 424242, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5}]' \
    "bad.json:1: detection 0: unknown image id 424242"
bad "unknown category id" '[
{"image_id": 5, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5},
{"image_id": 5, "category_id": 77, "bbox": [1, 2, 3, 4], "score": 0.5}]' "bad.json:3: detection 1: unknown category id 77"
bad "negative width" '[{"image_id": 5, "category_id": 1, "bbox": [1, 2, -3, 4], "score": 0.5}]' "negative bbox size"
bad "a NaN score" '[{"image_id": 5, "category_id": 1, "bbox": [1, 2, 3, 4], "score": NaN}]' "bad.json:1:.*malformed JSON near 'NaN"
bad "malformed JSON" '[
{"image_id": 5, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5}
{"image_id": 5}]' "bad.json:3:1: malformed JSON"
bad "not a list" '{"image_id": 5}' "results are not a JSON list"
bad "a missing score" '[{"image_id": 5, "category_id": 1, "bbox": [1, 2, 3, 4]}]' "'score': expected a number"
err=$("$BENCHCTL" coco-eval "$tmp/nonexistent.json" "$tmp/bad.json" 2>&1); rc=$?
is "a missing annotation file: exit 1" "$rc" 1
like "  one line" "$err" "^benchctl: cannot open '.*nonexistent.json'"
is "--type segm: exit 2" "$("$BENCHCTL" coco-eval --type segm "$gt" "$tmp/dsdt.json" >/dev/null 2>&1; echo $?)" 2
is "one file only: exit 2" "$("$BENCHCTL" coco-eval "$gt" >/dev/null 2>&1; echo $?)" 2
like "coco-eval --help" "$("$BENCHCTL" coco-eval --help)" "--type TYPE"
done_testing
