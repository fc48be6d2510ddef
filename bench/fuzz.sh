#!/bin/bash
# bench/fuzz.sh: every libFuzzer harness of tests/fuzz/ for a while, one
# after the other, each on a copy of its corpus (tests/fuzz/corpus/NAME):
# executions, executions per second, coverage (libFuzzer's cov: edges and
# ft: features), corpus files before and after, and findings (the crash,
# leak, timeout and out-of-memory files it wrote).  Exits 1 when there is a
# finding, and keeps the run's directory (the finding files, each harness's
# log) to reproduce them: tests/fuzz/replay-NAME FILE.
#
#   bench/fuzz.sh [--merge] [SECONDS] [BUILD_DIR] [NAME...]
#
# SECONDS per harness (default 60); BUILD_DIR a build configured with
# --enable-fuzzing (default build-fuzz; make fuzz is run there first); NAME:
# only these harnesses.  --merge adds the inputs that found new coverage to
# tests/fuzz/corpus (libFuzzer's -merge=1): the corpora change only then.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
merge=no
if [ "${1:-}" = --merge ]; then
    merge=yes
    shift
fi
secs=${1:-60}
build=${2:-$src/build-fuzz}
shift $(($# > 2 ? 2 : $#))
case $secs in ''|*[!0-9]*) echo "fuzz: SECONDS must be a number, not '$secs'" >&2; exit 2;; esac
[ -f "$build/Makefile" ] || { echo "fuzz: no build in $build (mkdir build-fuzz && cd build-fuzz && CC=clang ../configure --enable-fuzzing)" >&2; exit 2; }
build=$(cd "$build" && pwd)     # each harness runs in its own directory
make -s -C "$build" fuzz >/dev/null || { echo "fuzz: make fuzz failed in $build" >&2; exit 2; }

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for d in "$src"/tests/fuzz/corpus/*/; do
        n=$(basename "$d")
        [ -x "$build/tests/fuzz/fuzz-$n" ] && names+=("$n")
    done
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/benchd-fuzz-run.XXXXXX")
findings=0

# the last value of "KEY: N" in libFuzzer's status lines
last_stat() { grep -oE "$1: [0-9]+" "$2" | tail -n 1 | grep -oE '[0-9]+$' || echo 0; }
final_stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }

printf '%-12s %12s %9s %7s %8s %15s %9s\n' harness executions exec/s cov ft corpus findings
for n in "${names[@]}"; do
    fuzzer="$build/tests/fuzz/fuzz-$n"
    [ -x "$fuzzer" ] || { echo "fuzz: no $fuzzer" >&2; exit 2; }
    mkdir -p "$work/$n/corpus" "$work/$n/findings"
    cp "$src/tests/fuzz/corpus/$n"/* "$work/$n/corpus/" 2>/dev/null || true
    before=$(find "$work/$n/corpus" -type f | wc -l)
    # leaks are findings too; a run of one input over 10 s is a timeout
    (cd "$work/$n" && ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$fuzzer" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
        -artifact_prefix="$work/$n/findings/" corpus > "$work/$n/log" 2>&1) || true
    after=$(find "$work/$n/corpus" -type f | wc -l)
    found=$(find "$work/$n/findings" -type f | wc -l)
    execs=$(final_stat number_of_executed_units "$work/$n/log")
    rate=$(final_stat average_exec_per_sec "$work/$n/log")
    printf '%-12s %12s %9s %7s %8s %15s %9s\n' "$n" "${execs:-?}" "${rate:-?}" "$(last_stat cov "$work/$n/log")" \
        "$(last_stat ft "$work/$n/log")" "$before -> $after" "$found"
    if [ "$found" -gt 0 ]; then
        findings=$((findings + found))
        for f in "$work/$n/findings"/*; do echo "  $f"; done
        grep -a -m 1 -E 'ERROR: |broken promise|runtime error' "$work/$n/log" | sed 's/^/  /' || true
    fi
    if [ "$merge" = yes ]; then
        "$fuzzer" -merge=1 "$src/tests/fuzz/corpus/$n" "$work/$n/corpus" > "$work/$n/merge.log" 2>&1 ||
            echo "fuzz: merging into tests/fuzz/corpus/$n failed (see $work/$n/merge.log)" >&2
    fi
done
if [ "$findings" -gt 0 ]; then
    echo "fuzz: $findings finding(s); the files and each harness's log are in $work"
    exit 1
fi
rm -rf "$work"
