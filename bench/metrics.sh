#!/bin/bash
# bench/metrics.sh: benchd's /metrics vs prometheus-node-exporter (its default
# collectors) on this machine under the same wrk load, in one run: CPU time
# per scrape of each server (utime+stime from /proc) and requests/s, and the
# ratio of CPU per scrape (target <= 0.5).
#
#   bench/metrics.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
secs=${2:-10}
conns=${3:-8}
BENCHD="$build/benchd"
[ -x "$BENCHD" ] || { echo "metrics: no $BENCHD (build first)" >&2; exit 1; }
for tool in wrk prometheus-node-exporter; do
    command -v "$tool" >/dev/null || { echo "metrics: $tool not installed (apt-get install wrk prometheus-node-exporter)" >&2; exit 1; }
done
. "$src/tests/lib.sh" >/dev/null
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do stop_pid "$p"; done; rm -rf "$tmp"; }
trap cleanup EXIT

bport=$(free_port 19600)
nport=$(free_port $((bport + 1)))
"$BENCHD" -f --listen "127.0.0.1:$bport" --token-file "$tmp/token" 2>/dev/null &
bpid=$!; pids+=("$bpid")
prometheus-node-exporter --web.listen-address="127.0.0.1:$nport" > "$tmp/ne.log" 2>&1 &
npid=$!; pids+=("$npid")
wait_until 10 curl -sf "http://127.0.0.1:$bport/metrics"
wait_until 10 curl -sf "http://127.0.0.1:$nport/metrics"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# measure NAME PID URL: prints "requests cpu_seconds"
measure() {
    local pid=$2 url=$3 t0 t1 out n
    wrk -t1 -c"$conns" -d2s "$url" >/dev/null    # warm up
    t0=$(ticks "$pid")
    out=$(wrk -t1 -c"$conns" -d"${secs}s" "$url")
    t1=$(ticks "$pid")
    n=$(awk '/requests in/ {print $1}' <<<"$out")
    grep -q 'Non-2xx\|Socket errors' <<<"$out" && { echo "metrics: $1 had errors:" >&2; echo "$out" >&2; exit 1; }
    echo "$n $(( t1 - t0 ))"
}
read -r bn bt < <(measure benchd "$bpid" "http://127.0.0.1:$bport/metrics")
read -r nn nt < <(measure node_exporter "$npid" "http://127.0.0.1:$nport/metrics")
bsz=$(curl -s "http://127.0.0.1:$bport/metrics" | wc -c)
nsz=$(curl -s "http://127.0.0.1:$nport/metrics" | wc -c)
awk -v bn="$bn" -v bt="$bt" -v nn="$nn" -v nt="$nt" -v hz="$hz" -v s="$secs" -v c="$conns" -v bsz="$bsz" -v nsz="$nsz" 'BEGIN {
    bc = bt / hz / bn * 1e6; nc = nt / hz / nn * 1e6
    printf "wrk, %d connections, %d s each, on this machine (%s)\n", c, s, ENVIRON["HOSTNAME"]
    printf "benchd /metrics:        %8.0f scrapes/s, %7.1f us CPU per scrape, %6d bytes\n", bn / s, bc, bsz
    printf "node_exporter /metrics: %8.0f scrapes/s, %7.1f us CPU per scrape, %6d bytes\n", nn / s, nc, nsz
    printf "CPU per scrape ratio:   %.3f (target <= 0.5)\n", bc / nc
}'
