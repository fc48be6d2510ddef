#!/bin/bash
# bench/workload-files.sh: what 50 workload files on the search path cost
# 'benchctl render' and 'benchctl submit --dry-run' of a bundled workload.
#
# Writes 50 small valid workload files into a directory (25 extending
# bundled ssd with a default of their own, 25 defining a workload of their
# own) and runs each command with BENCHD_WORKLOADS pointing there and
# without it: instructions executed (valgrind's callgrind, when installed;
# the same every run) and the median wall time of N runs of each,
# alternating.  Prints the ratios 50 files / none (target <= 1.1).  Needs a
# built tree; nothing is started (render prints, --dry-run submits nothing).
#
#   bench/workload-files.sh [BUILD_DIR] [N]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
n=${2:-40}
BENCHCTL="$build/benchctl"
[ -x "$BENCHCTL" ] || { echo "workload-files: no $BENCHCTL (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" BENCHD_HOME="$tmp/benchd" BENCHD_SYSTEMS="$src/systems"
unset BENCHD_WORKLOADS XDG_CONFIG_HOME
mkdir -p "$HOME" "$tmp/wl"
for i in $(seq -w 1 25); do
    printf '{ "extends": "ssd", "title": "SSD, batch %d", "keys": { "batch_size": { "default": %d } } }\n' \
        $((10#$i + 1)) $((10#$i + 1)) > "$tmp/wl/ssd-b$i.json"
    cat > "$tmp/wl/own$i.json" <<JSON
// someone else's trainer $i
{
  "title": "trainer $i", "program": "/opt/own/train$i.py",
  "result": { "kind": "throughput", "read": "regex", "match": { "throughput": "([0-9.]+) img/s" } },
  "command": ["python3", "{program}", "{args}", "--seed", "{trial_seed}"],
  "keys": {
    "lr": { "type": "number", "default": 0.1, "min": 0, "help": "learning rate" },
    "batch": { "type": "int", "default": 8, "min": 1, "arg": "--batch-size" }
  }
}
JSON
done
BENCHD_WORKLOADS="$tmp/wl" "$BENCHCTL" workloads >/dev/null ||
    { echo "workload-files: the 50 files do not read" >&2; exit 1; }
render=(render --system local ssd --run-id bench)
submit=(submit --system local ssd --dry-run)

# CMD... with and without the files
instructions() {   # WITH(0|1) CMD...
    local with=$1; shift
    if [ "$with" = 1 ]; then export BENCHD_WORKLOADS="$tmp/wl"; else unset BENCHD_WORKLOADS; fi
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCHCTL" "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : //p'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
walls() {   # CMD...: "median-none median-files" of n alternating runs
    local none=() files=() t0 t1
    for _ in $(seq "$n"); do
        unset BENCHD_WORKLOADS
        t0=$EPOCHREALTIME; "$BENCHCTL" "$@" >/dev/null; t1=$EPOCHREALTIME
        none+=("$(echo "$t1 - $t0" | bc -l)")
        export BENCHD_WORKLOADS="$tmp/wl"
        t0=$EPOCHREALTIME; "$BENCHCTL" "$@" >/dev/null; t1=$EPOCHREALTIME
        files+=("$(echo "$t1 - $t0" | bc -l)")
    done
    unset BENCHD_WORKLOADS
    echo "$(median "${none[@]}") $(median "${files[@]}")"
}
printf 'CPU:          %s\n' "$(lscpu | sed -n 's/^Model name: *//p')"
printf 'files:        50 in %s (25 extend ssd, 25 of their own)\n' "$tmp/wl"
for what in render submit; do
    declare -n cmd=$what
    if command -v valgrind >/dev/null; then
        i0=$(instructions 0 "${cmd[@]}")
        i1=$(instructions 1 "${cmd[@]}")
        printf '%-13s instructions: none %s, 50 files %s: ratio %.3f (target <= 1.1)\n' "$what" "$i0" "$i1" \
            "$(echo "$i1 / $i0" | bc -l)"
    fi
    read -r w0 w1 < <(walls "${cmd[@]}")
    printf '%-13s wall, median of %d each, alternating: none %.2f ms, 50 files %.2f ms: ratio %.3f (target <= 1.1)\n' \
        "$what" "$n" "$(echo "$w0 * 1000" | bc -l)" "$(echo "$w1 * 1000" | bc -l)" "$(echo "$w1 / $w0" | bc -l)"
done
command -v valgrind >/dev/null || echo "note:         no valgrind: instructions not counted"
