#!/bin/bash
# bench/report-speed.sh: benchctl report vs the mlperf-logging package's
# result summarizer on the same trial logs.
#
# Generates 5 realistic SSD trial logs (80 epochs, MLPerf v0.7 lines,
# bench/gen-ssd-logs.py), records them as the trials of a real 'local' run
# (a stand-in trainer prints them), then times, N times each:
#   - benchctl report RUN (parse the 5 logs, score, print)
#   - the summarizer's scoring of the same 5 files (mlperf_logging
#     result_summarizer._compute_strong_score_standalone, what compute_score
#     and the summarizer call), in a fresh python each time as a user runs it
# and prints the medians, both scores and the ratio (target >= 20x).
# mlperf-logging is installed from PyPI into a virtual environment here.
#
#   bench/report-speed.sh [BUILD_DIR] [N]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
n=${2:-10}
BENCHCTL="$build/benchctl"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
venv=${BENCHD_BENCH_VENV:-$src/build/bench-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mlperf_logging' 2>/dev/null; then
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q mlperf-logging
fi
/usr/bin/python3 "$src/bench/gen-ssd-logs.py" "$tmp/results" 5 7
export BENCHD_HOME="$tmp/home" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$tmp/bin"
cat > "$tmp/bin/benchd-ssd" <<SH
#!/bin/bash
# prints the next generated log, from rank 0 only
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
i=\$(cat "$tmp/next" 2>/dev/null || echo 0)
echo \$((i + 1)) > "$tmp/next"
cat "$tmp/results/result_\$i.txt"
SH
chmod +x "$tmp/bin/benchd-ssd"
id=$("$BENCHCTL" submit --system local ssd --runs 5 --set paths.bin="$tmp/bin" --set ssd.target_map=0.23 \
        --logdir "$tmp/logs" --wait | sed -n 's/^run \([^ ]*\) started.*/\1/p')
cat > "$tmp/score.py" <<'PY'
import sys
from mlperf_logging.result_summarizer import result_summarizer as rs
r = rs._compute_strong_score_standalone("ssd", "local", False, sys.argv[1], "training", "0.7.0",
                                        return_full_scores=True)
print("%.4f" % r[2])
PY
now() { date +%s.%N; }
ours=() theirs=()
for _ in $(seq "$n"); do
    t0=$(now); "$BENCHCTL" report "$id" > "$tmp/ours.txt"; t1=$(now)
    ours+=("$(echo "$t1 - $t0" | bc -l)")
    t0=$(now); "$venv/bin/python" "$tmp/score.py" "$tmp/results" > "$tmp/theirs.txt"; t1=$(now)
    theirs+=("$(echo "$t1 - $t0" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
m_ours=$(median "${ours[@]}")
m_theirs=$(median "${theirs[@]}")
printf 'logs:               5 trials, %s lines\n' "$(cat "$tmp"/results/result_*.txt | wc -l)"
printf 'benchctl report:    median %.4f s, score %s\n' "$m_ours" "$(sed -n 's/.*MLPerf score: \([0-9.]*\) min.*/\1/p' "$tmp/ours.txt")"
printf 'mlperf-logging:     median %.4f s, score %s\n' "$m_theirs" "$(cat "$tmp/theirs.txt")"
printf 'speedup:            %.1fx (target >= 20x)\n' "$(echo "$m_theirs / $m_ours" | bc -l)"
