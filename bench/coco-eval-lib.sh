# bench/coco-eval-lib.sh: what segm-eval.sh and maskrcnn-eval.sh share (sourced).
# shellcheck shell=bash disable=SC2154  # B, py: set by the caller
# coco_eval_check NAME TYPE: exits unless benchctl ($B) evaluates --type TYPE
# and $py imports numpy and pycocotools.
coco_eval_check() {
        [ -x "$B" ] || { echo "$1: no $B (build first)" >&2; exit 1; }
        "$B" coco-eval --help | grep -q -- "--type .*$2" ||
                { echo "$1: $B coco-eval has no --type $2" >&2; exit 1; }
        "$py" -c 'import numpy, pycocotools.cocoeval' 2>/dev/null ||
                { echo "$1: $py cannot import numpy and pycocotools (set PYTHON)" >&2; exit 1; }
}
