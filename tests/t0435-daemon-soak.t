#!/bin/bash
# Soak: benchd under 64 concurrent connections for 60 s (BENCHD_SOAK_SECONDS)
# of mixed requests (tests/soak.py): good requests of every kind, malformed
# and oversized ones, clients that send a byte a second, clients that reset
# the connection in the middle of an answer.  No good request fails, resident
# memory and open descriptors stay flat, and a health check is answered within
# 100 ms all along.  Then the attacks the issue tracker recorded: 40,000
# requests of 1,000 query arguments, 300 clients dribbling a byte a second.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
command -v curl >/dev/null || skip_all "curl not installed"
own_servers
secs=${BENCHD_SOAK_SECONDS:-60}
py() { /usr/bin/python3 -c "$@"; }
asan=false
ldd "$BENCHD" 2>/dev/null | grep -q libasan && asan=true

port=$(free_port 19470)
url="http://127.0.0.1:$port"
mkdir -p "$tmp/allowed" "$tmp/src"
printf '%s' "0123456789abcdef0123456789abcdef" > "$tmp/token"
chmod 600 "$tmp/token"
cat > "$tmp/benchd.conf" <<CONF
listen = 127.0.0.1:$port
token_file = $tmp/token
state_dir = $tmp/state
stage_allow = $tmp/allowed
request_timeout = 5
CONF
"$BENCHD" -f -c "$tmp/benchd.conf" 2>"$tmp/benchd.log" &
pid=$!; pids+=("$pid")
check "benchd starts" wait_until 10 curl -sf "$url/v1/health"
# a dataset whose status the load asks for
head -c 100000 /dev/urandom > "$tmp/src/a.bin"
curl -s -H "Authorization: Bearer $(cat "$tmp/token")" -X POST \
    -d "{\"source\": \"$tmp/src\", \"destination\": \"$tmp/allowed/soak\"}" "$url/v1/datasets/soak/stage" >/dev/null
wait_until 20 bash -c "curl -s '$url/v1/datasets/soak' | grep -q '\"state\":\"complete\"'"

rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
fds() { ls "/proc/$pid/fd" | wc -l; }
# health TIMES: the slowest of TIMES health checks, one every 0.2 s, in ms;
# "fail" when one is not answered
health() {
    local worst=0 t
    for _ in $(seq "$1"); do
        t=$(curl -s -o /dev/null -m 5 -w '%{http_code} %{time_total}' "$url/v1/health")
        [ "${t% *}" = 200 ] || { echo fail; return; }
        t=$(py "print(int(${t#* } * 1000))")
        ((t > worst)) && worst=$t
        sleep 0.2
    done
    echo "$worst"
}

# warm-up: every thread has served, the allocator has its arenas
/usr/bin/python3 "$srcdir/tests/soak.py" 127.0.0.1 "$port" 8 "$tmp/token" soak > /dev/null
sleep 6         # the slow clients' connections are gone (request_timeout)
rss0=$(rss); fds0=$(fds)
# (the load at a lower priority: the daemon's answers are measured, not how
# the load generator and benchd share two CPUs)
nice -n 10 /usr/bin/python3 "$srcdir/tests/soak.py" 127.0.0.1 "$port" "$secs" "$tmp/token" soak > "$tmp/soak.json" &
spid=$!
sleep 2
worst=$(health $(( (secs - 4) * 5 )))
wait "$spid"
sleep 6
rss1=$(rss); fds1=$(fds)
counts=$(py "import json; print(json.load(open('$tmp/soak.json'))['counts'])")
echo "# $secs s, 64 connections: $counts"
echo "# resident memory $rss0 kB -> $rss1 kB, open descriptors $fds0 -> $fds1, slowest health check $worst ms"
is "no request failed" "$(py "import json; j = json.load(open('$tmp/soak.json')); print(j['counts'].get('failed', 0), j['failures'][:3])")" "0 []"
check "  thousands of good requests were served" \
    test "$(py "import json; print(json.load(open('$tmp/soak.json'))['counts'].get('good', 0))")" -gt 1000
check "  and every kind of abuse was tried" py "
import json, sys; c = json.load(open('$tmp/soak.json'))['counts']
sys.exit(not all(c.get(k, 0) > 0 for k in ('refused', 'slow', 'dropped')))"
if $asan; then
    skip 1 "a health check within 100 ms: built with AddressSanitizer"
else
    check "a health check within 100 ms all along (slowest: $worst ms)" test "$worst" != fail -a "$worst" -lt 100
fi
is "open descriptors flat" "$fds1" "$fds0"
if $asan; then
    skip 1 "resident memory flat: AddressSanitizer keeps freed memory in quarantine"
else
    check "resident memory flat (less than 2 MiB more)" test $((rss1 - rss0)) -lt 2048
fi

# 40,000 requests of 1,000 query arguments: each answered 414 at once,
# nothing kept (libmicrohttpd alone neither answers nor frees them)
rss0=$(rss)
out=$(/usr/bin/python3 - "$port" <<'EOF_PY'
import socket, sys, time
port = int(sys.argv[1])
q = ("GET /v1/binding?%s HTTP/1.1\r\nHost: x\r\n\r\n" % "&".join("k%d=%d" % (i, i) for i in range(1000))).encode()
s, worst, n, sent = None, 0.0, 0, 0
while sent < 40000:
    if s is None:
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(5)
    t = time.monotonic()
    d = b""
    try:
        s.sendall(q)
        while not (b"\r\n\r\n" in d and d.endswith(b"}\n")):
            x = s.recv(65536)
            if not x:
                break
            d += x
    except ConnectionError:
        pass
    if d:
        sent += 1
        worst = max(worst, time.monotonic() - t)
        n += d.startswith(b"HTTP/1.1 414")
    if not d or b"Connection: close" in d:
        # closed after the answer: the next request goes on a new connection
        s.close(); s = None
print(n, int(worst * 1000))
EOF_PY
)
rss1=$(rss)
echo "# 40,000 requests of 1,000 arguments: ${out#* } ms the slowest; resident memory $rss0 kB -> $rss1 kB"
is "40,000 requests of 1,000 query arguments: each answered 414" "${out% *}" 40000
if ! $asan; then
    check "  and memory does not grow (less than 1 MiB)" test $((rss1 - rss0)) -lt 1024
fi

# 300 clients from one address sending a byte a second: the address gets its
# 64 connections (per_ip_connections), each cut off after request_timeout;
# other addresses are served all along, this one again after the timeout
out=$(/usr/bin/python3 - "$port" <<'EOF_PY'
import socket, subprocess, sys, time
port = int(sys.argv[1])
socks = []
for i in range(300):
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    socks.append(s)
msg = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n"
other, same = [], []
for sec in range(9):
    alive = 0
    for s in socks:
        try:
            s.send(msg[sec:sec + 1]); alive += 1
        except OSError:
            pass
    for src, got in (("127.0.0.2", other), ("127.0.0.1", same)):
        r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-m", "5", "-w", "%{http_code}",
                            "--interface", src, "http://127.0.0.1:%d/v1/health" % port], capture_output=True, text=True)
        got.append(r.stdout)
    time.sleep(1)
print(alive, " ".join(other), "|", " ".join(same))
EOF_PY
)
echo "# 300 slow clients: $out"
set -- $out
is "300 slow clients: all cut off within request_timeout (5 s) and a few" "$1" 0
unlike "  another address is served all along" "${out%|*}" "000"
like "  theirs again after the timeout" "${out#*|}" "200$"
like "  the cut-offs are counted" "$(curl -s "$url/metrics")" '^benchd_http_request_timeouts_total [1-9][0-9]+$'
is "still healthy, and no error in the log" "$(curl -s "$url/v1/health" | py 'import json,sys; print(json.load(sys.stdin)["status"])') $(grep -ci 'error' "$tmp/benchd.log")" "ok 0"
done_testing
