#!/bin/bash
# benchctl coco-eval against pycocotools' COCOeval on the same detections,
# bbox and segm: random ground truth (boxes; or polygon outlines of several
# parts, crowd blobs as uncompressed RLE, compressed RLE objects) and
# results (boxes with crowd regions, ties, > 100 per image; masks: jittered
# polygons turned to RLE, pasted 28x28 masks, speckle, empty masks, images
# without detections), a generated dataset, several seeds; all 12 numbers
# within 1e-4 and the printed lines identical.  Bad input: one line, exit 1.
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

# compare GT DT NAME [TYPE]: our --json numbers against pycocotools', and the text
compare() {
    local gt=$1 dt=$2 name=$3 type=${4:-bbox}
    "$PY" "$ORACLE" eval "$gt" "$dt" "$type" > "$tmp/ref.json" 2>"$tmp/ref.err" || {
        _t_result 1 "$name: pycocotools ran"; sed 's/^/#   /' "$tmp/ref.err" | tail -5; return; }
    "$BENCHCTL" coco-eval "$gt" "$dt" --type "$type" --json > "$tmp/ours.json" 2>"$tmp/ours.err"
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
    "$BENCHCTL" coco-eval "$gt" "$dt" --type "$type" > "$tmp/ours.txt"
    "$PY" -c 'import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))["text"])' "$tmp/ref.json" > "$tmp/ref.txt"
    is "$name: the same 12 lines as pycocotools prints" "$(diff "$tmp/ref.txt" "$tmp/ours.txt" && echo same)" same
}

for seed in 1 2 3 4 5 6; do
    "$PY" "$ORACLE" gen-gt "$seed" "$tmp/gt$seed.json"
    "$PY" "$ORACLE" gen-dets "$seed" "$tmp/gt$seed.json" "$tmp/dt$seed.json"
    compare "$tmp/gt$seed.json" "$tmp/dt$seed.json" "random seed $seed"
done
is "the random sets hold crowd regions" "$(grep -o '"iscrowd": 1' "$tmp"/gt*.json | wc -l | awk '$1 > 5 {print "yes"}')" yes

# segm: mask results (evaluated as segm, and as bbox from the masks' boxes),
# and box results evaluated as segm (their boxes' polygons)
for seed in 11 12 13 14 15; do
    "$PY" "$ORACLE" gen-gt-segm "$seed" "$tmp/sgt$seed.json"
    "$PY" "$ORACLE" gen-segm "$seed" "$tmp/sgt$seed.json" "$tmp/sdt$seed.json"
    compare "$tmp/sgt$seed.json" "$tmp/sdt$seed.json" "segm seed $seed" segm
    compare "$tmp/sgt$seed.json" "$tmp/sdt$seed.json" "segm seed $seed, as bbox" bbox
done
"$PY" "$ORACLE" gen-dets 16 "$tmp/sgt11.json" "$tmp/sbox.json"
compare "$tmp/sgt11.json" "$tmp/sbox.json" "box results as segm" segm
is "the segm sets hold crowd blobs, compressed RLE objects, several parts and empty masks" "$("$PY" - "$tmp" <<'PY'
import json, sys, glob
crowd = rle = parts = empty = 0
for f in glob.glob(sys.argv[1] + "/sgt*.json"):
    for a in json.load(open(f))["annotations"]:
        s = a["segmentation"]
        crowd += a["iscrowd"]
        rle += isinstance(s, dict) and isinstance(s["counts"], str)
        parts += isinstance(s, list) and len(s) > 1
for f in glob.glob(sys.argv[1] + "/sdt*.json"):
    for d in json.load(open(f)):
        c = d["segmentation"]["counts"]
        h, w = d["segmentation"]["size"]
        empty += len(c) <= 4 and d["segmentation"]["counts"] != ""
print("yes" if crowd > 3 and rle > 3 and parts > 10 and empty > 3 else "no: %d %d %d %d" % (crowd, rle, parts, empty))
PY
)" yes
"$BENCHCTL" coco-eval "$tmp/sgt12.json" "$tmp/sdt12.json" --type both --json > "$tmp/both.json"
"$BENCHCTL" coco-eval "$tmp/sgt12.json" "$tmp/sdt12.json" --type segm --json > "$tmp/segm.json"
"$BENCHCTL" coco-eval "$tmp/sgt12.json" "$tmp/sdt12.json" --type bbox --json > "$tmp/bbox.json"
is "--type both: the bbox and segm numbers of two runs" "$(python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
both = json.load(open(d + "/both.json"))
print(both["type"] == "both" and both["segm"] == json.load(open(d + "/segm.json"))["stats"]
      and both["bbox"] == json.load(open(d + "/bbox.json"))["stats"])
PY
)" True
like "--type both: two summaries" "$("$BENCHCTL" coco-eval "$tmp/sgt12.json" "$tmp/sdt12.json" --type both | grep -c 'IoU type')" "^2$"

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
# its exact masks: the polygons as pycocotools rasterises them
"$PY" - "$gt" "$tmp/perfect-segm.json" <<'PY'
import json, sys
import pycocotools.mask as M
g = json.load(open(sys.argv[1]))
ims = {i["id"]: i for i in g["images"]}
out = []
for a in g["annotations"]:
    if a["iscrowd"]:
        continue
    im = ims[a["image_id"]]
    r = M.merge(M.frPyObjects(a["segmentation"], im["height"], im["width"]))
    out.append({"image_id": a["image_id"], "category_id": a["category_id"], "score": 1.0,
                "segmentation": {"size": r["size"], "counts": r["counts"].decode()}})
json.dump(out, open(sys.argv[2], "w"))
PY
is "synth: every area is its mask's pixels as pycocotools rasterises it; no two masks share a pixel" "$("$PY" - "$gt" <<'PY'
import json, sys
import numpy as np
import pycocotools.mask as M
g = json.load(open(sys.argv[1]))
ims = {i["id"]: i for i in g["images"]}
taken, bad = {}, []
for a in g["annotations"]:
    im = ims[a["image_id"]]
    h, w = im["height"], im["width"]
    s = a["segmentation"]
    r = M.merge(M.frPyObjects(s, h, w)) if isinstance(s, list) else M.frPyObjects(s, h, w)
    m = M.decode(r).astype(bool)
    t = taken.setdefault(a["image_id"], np.zeros((h, w), bool))
    if M.area(r) != a["area"] or (t & m).any() or not m.any():
        bad.append(a["id"])
    t |= m
print("ok" if not bad else "annotations %s" % bad[:5])
PY
)" ok
compare "$gt" "$tmp/perfect-segm.json" "perfect masks" segm
like "  segm AP 1.000" "$("$BENCHCTL" coco-eval "$gt" "$tmp/perfect-segm.json" --type segm | head -1)" "= 1\.000$"

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
# mask results on the image of id 5 (H x W)
read -r H W < <(python3 -c 'import json,sys; i=[i for i in json.load(open(sys.argv[1]))["images"] if i["id"] == 5][0]; print(i["height"], i["width"])' "$gt")
seg() { printf '{"image_id": 5, "category_id": 1, "score": 0.5, "segmentation": %s}' "$1"; }
bad "a mask of the wrong size" "[$(seg "{\"size\": [$((H + 1)), $W], \"counts\": \"0\"}")]" \
    "bad.json:1: detection 0: segmentation size $((H + 1))x$W .height x width. differs from image 5.s ${H}x$W"
bad "undecodable counts" "[$(seg "{\"size\": [$H, $W], \"counts\": \"ab~~\"}")]" \
    "detection 0: 'segmentation.counts': not a compressed RLE string"
bad "counts that do not cover the image" "[$(seg "{\"size\": [$H, $W], \"counts\": [5, 10]}")]" \
    "detection 0: segmentation counts do not cover its ${H}x$W pixels"
bad "a mask without size" "[$(seg '{"counts": "0"}')]" "detection 0: 'segmentation': expected RLE"
bad "polygons as a result" "[$(seg '[[1, 2, 3, 4, 5, 6]]')]" "detection 0: 'segmentation': expected RLE"
bad "a box among masks" "[$(seg "{\"size\": [$H, $W], \"counts\": [$((H * W))]}"),
{\"image_id\": 5, \"category_id\": 1, \"bbox\": [1, 2, 3, 4], \"score\": 0.5}]" \
    "bad.json:2: detection 1: 'segmentation': missing"
bad "a mask with a NaN score" "[$(seg "{\"size\": [$H, $W], \"counts\": [$((H * W))]}" | sed 's/0.5/NaN/')]" "malformed JSON near 'NaN"
bad "neither box nor mask" '[{"image_id": 5, "category_id": 1, "score": 0.5}]' "detection 0: expected 'bbox' or 'segmentation'"

err=$("$BENCHCTL" coco-eval "$tmp/nonexistent.json" "$tmp/bad.json" 2>&1); rc=$?
is "a missing annotation file: exit 1" "$rc" 1
like "  one line" "$err" "^benchctl: cannot open '.*nonexistent.json'"
is "--type mask: exit 2" "$("$BENCHCTL" coco-eval --type mask "$gt" "$tmp/dsdt.json" >/dev/null 2>&1; echo $?)" 2
is "one file only: exit 2" "$("$BENCHCTL" coco-eval "$gt" >/dev/null 2>&1; echo $?)" 2
like "coco-eval --help" "$("$BENCHCTL" coco-eval --help)" "--type TYPE"
done_testing
