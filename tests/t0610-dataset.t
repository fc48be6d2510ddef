#!/bin/bash
# benchctl dataset synth, index and check: a deterministic COCO tree that
# appears atomically, its annotation index, and the counts of bad data.
. "${srcdir:-.}/tests/lib.sh"
"$BENCHCTL" --version | grep -q coco-data || skip_all "benchctl built without the COCO data pipeline"
PY=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

tree_sum() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16); }

# ---- synth: deterministic, whatever the threads ---------------------------------------
check "synth writes a dataset" "$BENCHCTL" dataset synth --images 40 --val-images 8 --size 320 --classes 12 \
    --seed 9 --threads 1 -o "$tmp/a"
check "  again on 2 threads" "$BENCHCTL" dataset synth --images 40 --val-images 8 --size 320 --classes 12 \
    --seed 9 --threads 2 -o "$tmp/b"
is "the same options give the same bytes, on 1 or 2 threads" "$(tree_sum "$tmp/a")" "$(tree_sum "$tmp/b")"
"$BENCHCTL" dataset synth --images 40 --val-images 8 --size 320 --classes 12 --seed 10 -o "$tmp/c" >/dev/null
ok=$([ "$(tree_sum "$tmp/a")" != "$(tree_sum "$tmp/c")" ] && echo yes)
is "another seed gives another dataset" "$ok" yes

# ---- synth: what is in it ----------------------------------------------------------------
out=$("$PY" - "$tmp/a" <<'PY'
import json, os, sys
from PIL import Image
root = sys.argv[1]
problems, notes = [], {}
for split, n in (("train2017", 40), ("val2017", 8)):
    d = json.load(open(os.path.join(root, "annotations", "instances_%s.json" % split)))
    ims = {im["id"]: im for im in d["images"]}
    if len(ims) != n: problems.append("%s: %d images" % (split, len(ims)))
    files = sorted(os.listdir(os.path.join(root, split)))
    if files != sorted(im["file_name"] for im in d["images"]): problems.append(split + ": files differ from the JSON")
    for im in d["images"]:
        with Image.open(os.path.join(root, split, im["file_name"])) as p:
            if p.size != (im["width"], im["height"]) or p.format != "JPEG": problems.append("size of " + im["file_name"])
    cats = [c["id"] for c in d["categories"]]
    if len(cats) != 12 or len(set(cats)) != 12: problems.append("categories")
    notes.setdefault("gaps", 0)
    notes["gaps"] += max(cats) > len(cats)
    ids = set()
    for a in d["annotations"]:
        ids.add(a["id"])
        im = ims[a["image_id"]]
        x, y, w, h = a["bbox"]
        if a["category_id"] not in cats: problems.append("category of %d" % a["id"])
        if not (x >= 0 and y >= 0 and x + w <= im["width"] + 1e-6 and y + h <= im["height"] + 1e-6 and w > 0 and h > 0):
            problems.append("bbox of %d" % a["id"])
        # the mask's pixels: may pass the polygon's box by the pixels its edges touch
        if a["area"] <= 0 or a["area"] > (w + 1) * (h + 1) + 1e-6: problems.append("area of %d" % a["id"])
        if a["iscrowd"]:
            s = a["segmentation"]
            if s["size"] != [im["height"], im["width"]] or sum(s["counts"]) != im["height"] * im["width"] \
               or sum(s["counts"][1::2]) != a["area"]:
                problems.append("crowd RLE of %d" % a["id"])
            notes["crowd"] = notes.get("crowd", 0) + 1
        else:
            p = a["segmentation"][0]
            xs, ys = p[0::2], p[1::2]
            if abs(min(xs) - x) > 0.011 or abs(max(xs) - x - w) > 0.011 or abs(max(ys) - y - h) > 0.011:
                problems.append("polygon of %d" % a["id"])
            sz = "small" if a["area"] < 32 ** 2 else "medium" if a["area"] < 96 ** 2 else "large"
            notes[sz] = notes.get(sz, 0) + 1
    if len(ids) != len(d["annotations"]): problems.append("duplicate annotation ids")
    notes[split] = len(d["annotations"]) / n
print("problems: %s" % (problems[:5] or "none"))
print("crowd: %s" % ("yes" if notes.get("crowd") else "no"))
print("sizes: %s" % ("all" if all(notes.get(k) for k in ("small", "medium", "large")) else notes))
print("objects per image: %s" % ("several" if notes["train2017"] > 2 else notes["train2017"]))
print("gaps: %d" % notes["gaps"])
PY
)
like "every file decodes at the JSON's size; boxes, areas, polygons and crowd RLE consistent" "$out" "^problems: none"
like "  crowd regions with RLE masks" "$out" "crowd: yes"
like "  small, medium and large objects" "$out" "sizes: all"
like "  several objects per image" "$out" "objects per image: several"
like "  category ids with gaps, as COCO's" "$out" "gaps: 2"

# ---- synth: atomic output, refusals ----------------------------------------------------------
out=$("$BENCHCTL" dataset synth --images 5 -o "$tmp/a" 2>&1); rc=$?
is "an existing directory: exit 1" "$rc" 1
like "  saying --force replaces it" "$out" "already exists \(--force replaces it\)"
is "  left as it was" "$(tree_sum "$tmp/a")" "$(tree_sum "$tmp/b")"
check "--force replaces it" "$BENCHCTL" dataset synth --images 6 --val-images 1 --size 64 --force -o "$tmp/a"
is "  with the new content" "$(find "$tmp/a/train2017" -name '*.jpg' | wc -l)" 6
is "  and nothing left beside it" "$(cd "$tmp" && echo *)" "a b c"
echo "not a dataset" > "$tmp/f"
check "--force replaces a plain file too" "$BENCHCTL" dataset synth --images 2 --val-images 1 --size 64 --force \
    -o "$tmp/f"
is "  with the dataset" "$(find "$tmp/f/train2017" -name '*.jpg' | wc -l)" 2
is "  and nothing left beside it" "$(cd "$tmp" && echo *)" "a b c f"
rm -rf "$tmp/f"
mkfifo "$tmp/fifo"
err=$("$BENCHCTL" dataset synth --images 2 --val-images 1 --size 64 --force -o "$tmp/fifo" 2>&1); rc=$?
is "--force onto a FIFO (or a device: /dev/null): exit 1" "$rc" 1
like "  refused, naming it" "$err" "'$tmp/fifo' is a device, FIFO or socket: --force replaces a directory or a file only"
check "  and it is still a FIFO" test -p "$tmp/fifo"
rm -f "$tmp/fifo"
check "a directory whose parents do not exist yet" "$BENCHCTL" dataset synth --images 2 --val-images 1 --size 64 \
    -o "$tmp/new/parents/d"
is "  is created with them" "$(find "$tmp/new/parents/d/train2017" -name '*.jpg' | wc -l)" 2
rm -rf "$tmp/new"
# killed while writing: no dataset under the final name
"$BENCHCTL" dataset synth --images 4000 --size 320 --threads 1 -o "$tmp/big" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do
    compgen -G "$tmp/big.tmp.*/train2017/*.jpg" >/dev/null && break
    sleep 0.05
done
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
ok=$([ ! -e "$tmp/big" ] && compgen -G "$tmp/big.tmp.*" >/dev/null && echo yes)
is "killed half way: only the temporary directory, no '$tmp/big'" "$ok" yes
rm -rf "$tmp"/big.tmp.*
for args in "--classes 0" "--classes 81" "--size 10" "--images x" "--quality 101" "--bogus" ""; do
    # shellcheck disable=SC2086
    err=$("$BENCHCTL" dataset synth $args ${args:+-o "$tmp/x"} 2>&1 >/dev/null); rc=$?
    is "synth '${args:-no -o}': exit 2" "$rc" 2
    is "synth '${args:-no -o}': one line" "$(printf '%s\n' "$err" | wc -l)" 1
done
like "dataset synth --help" "$("$BENCHCTL" dataset synth --help)" "--val-images N"
like "dataset --help lists the subcommands" "$("$BENCHCTL" dataset --help)" "synth.*index.*check"
is "dataset without a subcommand: exit 2" "$("$BENCHCTL" dataset >/dev/null 2>&1; echo $?)" 2
is "an unknown subcommand: exit 2" "$("$BENCHCTL" dataset frobnicate >/dev/null 2>&1; echo $?)" 2

# ---- index: built once, reused, rebuilt when the JSON changes ----------------------------------
ann="$tmp/b/annotations/instances_train2017.json"
like "dataset index builds the index next to the JSON" "$("$BENCHCTL" dataset index "$ann")" \
    "instances_train2017\.[0-9a-f]{16}\.bdidx: built"
like "  the second time it is up to date" "$("$BENCHCTL" dataset index "$ann")" "bdidx: up to date"
json=$("$BENCHCTL" dataset index "$ann" --json)
is "  --json: counts from the file" "$(printf '%s' "$json" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["images"], d["categories"], d["built"])')" \
   "40 12 False"
"$PY" - "$ann" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["annotations"][0]["bbox"][0] += 1
json.dump(d, open(sys.argv[1], "w"))
PY
like "a changed JSON: built again" "$("$BENCHCTL" dataset index "$ann")" "bdidx: built"
is "  the stale index removed" "$(find "$tmp/b/annotations" -name '*.bdidx' | wc -l)" 1
like "--cache-dir puts it elsewhere" "$("$BENCHCTL" dataset index "$ann" --cache-dir "$tmp/cache")" "^$tmp/cache/"
printf '{"images": [\n{"id": 1}]}' > "$tmp/bad.json"
err=$("$BENCHCTL" dataset index "$tmp/bad.json" 2>&1); rc=$?
is "a malformed annotation file: exit 1" "$rc" 1
is "  one line naming file, line and field" "$err" "benchctl: $tmp/bad.json:2: image: field 'width': missing"

# ---- check: counts of bad data --------------------------------------------------------------------
out=$("$BENCHCTL" dataset check "$tmp/b" --decode --json 2>/dev/null); rc=$?
is "check on a clean tree: exit 0" "$rc" 0
is "  nothing missing or corrupt" "$(printf '%s' "$out" | "$PY" -c 'import json,sys; d=json.load(sys.stdin)["train2017"]; print(d["missing_files"], d["corrupt_images"], d["boxes_outside"], d["images"])')" "0 0 0 40"
cp -r "$tmp/b" "$tmp/bad"
rm -f "$tmp"/bad/annotations/*.bdidx
head -c 3000 "$tmp/bad/train2017/000000000003.jpg" > "$tmp/t.jpg" && mv "$tmp/t.jpg" "$tmp/bad/train2017/000000000003.jpg"
printf 'not a jpeg at all' > "$tmp/bad/train2017/000000000004.jpg"
rm "$tmp/bad/train2017/000000000005.jpg"
"$PY" - "$tmp/bad/annotations/instances_train2017.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = dict(d["annotations"][0]); a["id"] = 999999; a["bbox"] = [5000, 5, 10, 10]; d["annotations"].append(a)
b = dict(a); b["id"] = 999998; b["bbox"] = [1, 1, 3, 3]; b["category_id"] = 1234; d["annotations"].append(b)
json.dump(d, open(sys.argv[1], "w"))
PY
out=$("$BENCHCTL" dataset check "$tmp/bad" --split train2017 --decode --json 2>"$tmp/warn"); rc=$?
is "check on a damaged tree: exit 0 (images remain usable)" "$rc" 0
is "  missing, corrupt, outside, unknown category counted" \
   "$(printf '%s' "$out" | "$PY" -c 'import json,sys; d=json.load(sys.stdin)["train2017"]; print(d["missing_files"], d["corrupt_images"], d["boxes_outside"], d["unknown_category_boxes"])')" "1 2 1 1"
like "  each reported once on stderr" "$(cat "$tmp/warn")" "warning: image 5: '.*000000000005.jpg' is missing"
is "  5 warnings (missing, outside, category, truncated, not a JPEG) and empty images" \
   "$(grep -c -e 'missing' -e 'outside' -e 'unknown category' -e 'truncated' -e 'not a JPEG' "$tmp/warn")" 5
rm -f "$tmp"/bad/train2017/*.jpg
err=$("$BENCHCTL" dataset check "$tmp/bad" --split train2017 2>&1); rc=$?
is "no image left: exit 1" "$rc" 1
like "  nothing usable, with the counts" "$(printf '%s\n' "$err" | tail -1)" "benchctl: .*nothing usable: 40 images, 40 missing files"
is "check --split other: exit 2" "$("$BENCHCTL" dataset check "$tmp/b" --split test2017 >/dev/null 2>&1; echo $?)" 2
# benchctl runs benchd-dataset for this command; it loads no JPEG library itself
is "benchctl links no JPEG library" "$(ldd "$BENCHCTL" | grep -c jpeg)" 0
like "  benchd-dataset does" "$(ldd "$(dirname "$BENCHCTL")/benchd-dataset")" "libturbojpeg"
# CMYK JPEGs (ImageNet-style data has them; Pillow writes them with Adobe's
# inverted inks): decoded as Pillow decodes them, whole and as a region,
# and counted, not corrupt
JT="$top_builddir/tests/helper/jpeg-tool"
if [ -x "$JT" ] && /usr/bin/python3 -c 'import PIL, numpy' 2>/dev/null; then
    "$BENCHCTL" dataset synth --images 6 --val-images 2 --seed 5 -o "$tmp/cmyk" >/dev/null 2>&1
    /usr/bin/python3 -c '
import sys
from PIL import Image
for n in sys.argv[1:]:
    Image.open(n).convert("CMYK").save(n, quality=92)' "$tmp"/cmyk/train2017/00000000000[12].jpg
    "$JT" "$tmp/cmyk/train2017/000000000001.jpg" > "$tmp/whole.ppm" 2>"$tmp/jt.err"
    "$JT" "$tmp/cmyk/train2017/000000000001.jpg" 40 30 200 150 > "$tmp/region.ppm" 2>>"$tmp/jt.err"
    is "a CMYK JPEG decoded as Pillow does: whole, and a region" "$(/usr/bin/python3 - "$tmp" <<'PY'
import re, sys
import numpy as np
from PIL import Image
t = sys.argv[1]
ref = np.asarray(Image.open(t + "/cmyk/train2017/000000000001.jpg").convert("RGB")).astype(int)
whole = np.asarray(Image.open(t + "/whole.ppm")).astype(int)
x0, y0 = map(int, re.findall(r"region at (\d+),(\d+)", open(t + "/jt.err").read())[1])
reg = np.asarray(Image.open(t + "/region.ppm")).astype(int)
ok = whole.shape == ref.shape and abs(whole - ref).max() <= 1 and \
     abs(reg - ref[y0:y0 + reg.shape[0], x0:x0 + reg.shape[1]]).max() <= 1
print("ok" if ok else (whole.shape, ref.shape, abs(whole - ref).max()))
PY
)" ok
    out=$("$BENCHCTL" dataset check "$tmp/cmyk" --decode --json 2>/dev/null)
    is "  dataset check: not corrupt, counted as CMYK" "$(printf '%s' "$out" | "$PY" -c 'import json,sys
d = json.load(sys.stdin)["train2017"]; print(d["corrupt_images"], d["cmyk_images"])')" "0 2"
else
    skip 2 "no tests/helper/jpeg-tool or no Pillow and numpy for /usr/bin/python3"
fi
done_testing
