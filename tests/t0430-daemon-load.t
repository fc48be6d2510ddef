#!/bin/bash
# Load: 64 connections for 30 s (wrk) on /v1/inventory, then on /metrics:
# no error, no non-2xx answer, and memory that does not grow.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
command -v wrk >/dev/null || skip_all "wrk not installed (Debian package wrk)"
own_servers
secs=${BENCHD_LOAD_SECONDS:-30}

port=$(free_port 19450)
url="http://127.0.0.1:$port"
# wrk's 64 connections all come from 127.0.0.1, benchd's default limit per
# address: a wrk that starts while benchd still counts the last one's closing
# connections is refused some (a socket error in CI under AddressSanitizer).
# The limit itself is t0435's (slow clients from one address); here, the load.
printf 'per_ip_connections = 128\n' >"$tmp/benchd.conf"
"$BENCHD" -f -c "$tmp/benchd.conf" --listen "127.0.0.1:$port" --token-file "$tmp/token" 2>"$tmp/benchd.log" &
pid=$!; pids+=("$pid")
wait_until 10 curl -sf "$url/v1/health"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
# warm up: every thread has served, the allocator's arenas have grown to
# what this load needs (after 3 s they had not always: RSS then moved by
# 2-3 MiB either way over the run, up in one CI, down in the next); a leak
# of a few bytes a request still shows over the 100,000s below
wrk -t2 -c64 -d10s "$url/v1/inventory" >/dev/null
wrk -t2 -c64 -d10s "$url/metrics" >/dev/null
rss0=$(rss)
for ep in /v1/inventory /metrics; do
    # wrk counts an answer slower than its timeout (2 s) as a socket error:
    # under AddressSanitizer, beside the rest of make check on two cores,
    # /metrics (450 answers a second) had one; 10 s is still a failure bound
    out=$(wrk -t2 -c64 -d"${secs}s" --timeout 10s --latency "$url$ep" 2>&1)
    n=$(awk '/requests in/ {print $1}' <<<"$out")
    rate=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
    echo "# $ep: $n requests, $rate/s over ${secs} s with 64 connections"
    check "$ep: requests were served" test "${n:-0}" -gt 0
    is "$ep: no socket error" "$(grep 'Socket errors' <<<"$out")" ""
    is "$ep: no non-2xx answer" "$(grep -c 'Non-2xx' <<<"$out")" 0
done
rss1=$(rss)
echo "# RSS: $rss0 kB after warm-up, $rss1 kB after $((2 * secs)) s of load"
if ldd "$BENCHD" 2>/dev/null | grep -q libasan; then
    # AddressSanitizer keeps freed memory in quarantine: RSS says nothing here
    # (LeakSanitizer checks for leaks when benchd exits)
    echo "ok $((t_n + 1)) - memory does not grow # SKIP built with AddressSanitizer"; t_n=$((t_n + 1))
else
    check "memory does not grow (less than 2 MiB over the run)" test $((rss1 - rss0)) -lt 2048
fi
is "still healthy" "$(curl -s "$url/v1/health" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')" ok
done_testing
