#!/bin/bash
# bench/coco-index.sh: converting a COCO train2017-sized annotation file
# (about 450 MB of JSON) into the binary index, and opening it again: wall
# time and peak memory of each, against Python's json.load of the same file
# (what pycocotools does).
#
#   bench/coco-index.sh [BUILD_DIR] [ANNOTATIONS.json]
# Without a file, bench/gen-coco-json.py writes a COCO-shaped one.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
json=${2:-}
if [ -z "$json" ]; then
    json="$tmp/instances_train2017.json"
    /usr/bin/python3 "$src/bench/gen-coco-json.py" "$json"
fi
printf '%s: %s MB\n' "$json" "$(( $(stat -c %s "$json") / 1000000 ))"
measure() {   # label command...: wall seconds and peak RSS in MB from GNU time
    local label=$1; shift
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null
    read -r secs kb < "$tmp/time"
    printf '%-40s %6.1f s  %7.1f MB peak RSS\n' "$label" "$secs" "$(echo "$kb / 1024" | bc -l)"
}
measure "benchctl dataset index (build)" "$build/benchctl" dataset index "$json" --cache-dir "$tmp/cache"
measure "benchctl dataset index (reuse)" "$build/benchctl" dataset index "$json" --cache-dir "$tmp/cache"
printf '%-40s %6.1f MB\n' "index file" "$(echo "$(stat -c %s "$tmp"/cache/*.bdidx) / 1000000" | bc -l)"
measure "python3 json.load (for comparison)" /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$json"
