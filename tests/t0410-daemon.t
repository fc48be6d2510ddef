#!/bin/bash
# benchd as a daemon: every endpoint through curl, errors and bad input,
# access control and the token, metrics (promtool), the recorded p3dn's
# counters, SIGHUP, SIGTERM, sd_notify and the watchdog, socket activation,
# the Unix socket, the unit files, going to the background.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
command -v curl >/dev/null || skip_all "curl not installed"
own_servers
py() { /usr/bin/python3 -c "$@"; }
jget() { py "import json,sys; j=json.load(sys.stdin); print($1)"; }

port=$(free_port 19411)
url="http://127.0.0.1:$port"
cat > "$tmp/benchd.conf" <<CONF
# test configuration
listen = 127.0.0.1:$port
socket = $tmp/benchd.sock
token_file = $tmp/state/token
state_dir = $tmp/state
threads = 2
max_body_bytes = 1024
log_level = debug
CONF
"$BENCHD" -f -c "$tmp/benchd.conf" 2>"$tmp/log" &
pid=$!; pids+=("$pid")
check "benchd starts and answers /v1/health" wait_until 10 curl -sf "$url/v1/health"
is "health says ok" "$(curl -s "$url/v1/health" | jget 'j["status"], j["version"]')" "ok 0.1.0"
is "the token file was created, mode 0600" "$(stat -c %a "$tmp/state/token")" 600

# every endpoint
inv=$(curl -s -w '\n%{http_code} %{content_type}' "$url/v1/inventory")
is "GET /v1/inventory: 200 JSON" "$(tail -1 <<<"$inv")" "200 application/json"
want=$("$BENCHD" --inventory --json | jget 'j["host"]["hostname"], j["cpu"]["online_cpus"], len(j["numa_nodes"]), len(j["nics"])')
is "  the same node as benchd --inventory" "$(head -n -1 <<<"$inv" | jget 'j["host"]["hostname"], j["cpu"]["online_cpus"], len(j["numa_nodes"]), len(j["nics"])')" "$want"
is "GET /v1/topology" "$(curl -s "$url/v1/topology" | jget 'sorted(j.keys())')" \
   "['cpu_affinity', 'gpu_gpu', 'gpu_nic', 'gpus', 'hostname', 'legend', 'nics', 'numa_affinity']"
is "GET /v1/binding?ranks=2: two ranks, measured" \
   "$(curl -s "$url/v1/binding?ranks=2" | jget 'len(j["ranks"]), j["source"], j["ranks"][1]["local_rank"]')" "2 measured 1"
is "  the rank's numactl options" "$(curl -s "$url/v1/binding?ranks=1" | jget 'j["ranks"][0]["numactl"]')" \
   "--physcpubind=$(curl -s "$url/v1/binding?ranks=1" | jget 'j["ranks"][0]["physcpubind"]') --membind=0"
m=$(curl -s -w '\n%{http_code} %{content_type}' "$url/metrics")
is "GET /metrics: 200 in Prometheus text format" "$(tail -1 <<<"$m")" "200 text/plain; version=0.0.4; charset=utf-8"
like "  build info" "$m" '^benchd_build_info\{version="0.1.0",features="[^"]*"\} 1$'
like "  NIC counters" "$m" '^benchd_nic_receive_bytes_total\{device="[^"]+"\} [0-9]+$'
like "  scrape duration" "$m" '^benchd_scrape_duration_seconds [0-9.e-]+$'
if command -v promtool >/dev/null; then
    out=$(head -n -1 <<<"$m" | promtool check metrics 2>&1); rc=$?
    is "promtool check metrics: no problems" "$rc $out" "0 "
fi
is "GET / lists the endpoints" "$(curl -s "$url/" | jget '"GET /metrics" in j["endpoints"]')" True
is "HEAD /v1/health" "$(curl -s -o /dev/null -w '%{http_code}' -I "$url/v1/health")" 200
is "the Unix socket serves the API" "$(curl -s --unix-socket "$tmp/benchd.sock" http://x/v1/health | jget 'j["status"]')" ok

# errors are JSON with a status
code() { curl -s -o "$tmp/body" -w '%{http_code}' "$@"; }
is "unknown path: 404" "$(code "$url/v1/nope")" 404
is "  as JSON" "$(jget 'j["status"], bool(j["error"])' < "$tmp/body")" "404 True"
is "wrong method: 405" "$(code -X DELETE "$url/v1/inventory")" 405
like "  with Allow" "$(curl -s -D - -o /dev/null -X PUT "$url/v1/inventory")" '^Allow: GET, HEAD'
is "bad query value: 400" "$(code "$url/v1/binding?ranks=-3")" 400
is "  names the parameter" "$(jget 'j["error"]' < "$tmp/body")" "ranks: expected an integer from 1 to 64, not '-3'"
is "too many ranks for the node: 409" "$(code "$url/v1/binding?ranks=64")" 409
is "path traversal: 400" "$(code --path-as-is "$url/v1/../../etc/passwd")" 400
is "encoded path traversal: 400" "$(code --path-as-is "$url/v1/%2e%2e/%2e%2e/etc/passwd")" 400
big=$(head -c 40000 /dev/zero | tr '\0' a)
is "huge header: 431" "$(code -H "X-Big: $big" "$url/v1/health")" 431
is "  as JSON" "$(jget 'j["status"], j["error"]' < "$tmp/body")" "431 request line and headers larger than 16384 bytes"
is "huge URI: 414" "$(code "$url/v1/health?x=$big")" 414
is "  as JSON" "$(jget 'j["status"], j["error"]' < "$tmp/body")" "414 request line longer than 16384 bytes"
is "a header just within max_header_bytes: 200" "$(code -H "X-Big: ${big:0:16000}" "$url/v1/health")" 200
head -c 5000 /dev/zero > "$tmp/bigbody"
is "body over max_body_bytes: 413" "$(code -X POST --data-binary @"$tmp/bigbody" "$url/v1/inventory/refresh")" 413
raw() { (exec 3<>"/dev/tcp/127.0.0.1/$port"; printf "$1" >&3; timeout 5 cat <&3) 2>/dev/null | head -1; }
like "unknown protocol version: 400" "$(raw 'GET /v1/health FOO/1.1\r\n\r\n')" '^HTTP/1\.[01] 400'
like "no protocol version: 400" "$(raw 'GET /v1/health\r\n\r\n')" '^HTTP/1\.[01] 400'
is "garbage: the connection is closed without an answer" "$(raw 'GARBAGE\r\n\r\n')" ""
is "binary junk: the same" "$(raw '\x01\x02\xff\xfe\r\n\r\n')" ""
like "malformed header: 400" "$(raw 'GET /v1/health HTTP/1.1\r\nHost x\r\n\r\n')" '^HTTP/1\.[01] 400'
# 1,000 query arguments in a 10 KB URL: libmicrohttpd keeps each in the
# connection's memory and, when it runs out, answers nothing and frees nothing
args=$(seq -f 'k%g=1' 0 999 | paste -sd '&')
start=$(date +%s%N)
is "1,000 query arguments: 414" "$(code -m 5 "$url/v1/binding?$args")" 414
is "  as JSON" "$(jget 'j["status"], j["error"]' < "$tmp/body")" "414 more than 64 query arguments"
check "  at once" test $(( ($(date +%s%N) - start) / 1000000 )) -lt 2000
is "64 arguments are fine" "$(code "$url/v1/binding?ranks=1&$(seq -f 'k%g=1' 1 63 | paste -sd '&')")" 200
raw_all() { (exec 3<>"/dev/tcp/127.0.0.1/$port"; printf "$1" >&3; timeout 5 cat <&3) 2>/dev/null; }
out=$(raw_all 'POST /v1/inventory/refresh HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{}')
like "two different Content-Length headers: 400" "$out" '^HTTP/1\.1 400 '
like "  saying so" "$out" '"Content-Length given twice with different values"'
is "a path with bytes that are not UTF-8: the error is JSON in UTF-8, U+FFFD for each" \
   "$(raw_all 'GET /v1/\xff\xfeno HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' | sed -n '/^{/p' |
      py 'import json,sys; print(json.loads(sys.stdin.buffer.read().decode("utf-8"))["error"] == "no such endpoint: /v1/\ufffd\ufffdno")')" True
is "after all that, still serving" "$(curl -s "$url/v1/health" | jget 'j["status"]')" ok

# the token guards mutating requests
is "POST without a token: 401" "$(code -X POST "$url/v1/inventory/refresh")" 401
like "  with a Bearer challenge" "$(curl -s -D - -o /dev/null -X POST "$url/v1/inventory/refresh")" '^WWW-Authenticate: Bearer'
is "POST with a wrong token: 401" "$(code -X POST -H 'Authorization: Bearer 0123456789abcdef0123' "$url/v1/inventory/refresh")" 401
is "POST with the token: 200" \
   "$(code -X POST -H "Authorization: Bearer $(cat "$tmp/state/token")" "$url/v1/inventory/refresh")" 200

# reads from another address: refused until read_access = any (SIGHUP)
addr=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')
if [ -n "$addr" ]; then
    port2=$(free_port $((port + 1)))
    cat > "$tmp/open.conf" <<CONF
listen = 0.0.0.0:$port2
token_file = $tmp/state/token
read_access = local
CONF
    "$BENCHD" -f -c "$tmp/open.conf" 2>"$tmp/open.log" &
    pid2=$!; pids+=("$pid2")
    wait_until 10 curl -sf "http://127.0.0.1:$port2/v1/health"
    is "a read from $addr with read_access = local: 403" "$(code "http://$addr:$port2/v1/health")" 403
    sed -i 's/^read_access = local/read_access = any/; s/^listen = .*/listen = 0.0.0.0:1/' "$tmp/open.conf"
    kill -HUP "$pid2"
    check "SIGHUP: reads opened to any address" wait_until 10 curl -sf "http://$addr:$port2/v1/health"
    like "  a changed listen address waits for a restart" "$(cat "$tmp/open.log")" "'listen' changed; it takes effect at the next start"
    echo "bogus_key = 1" >> "$tmp/open.conf"
    kill -HUP "$pid2"
    check "SIGHUP with a broken file keeps the running configuration" \
        wait_until 10 grep -q "open.conf:4: unknown key 'bogus_key'; keeping the running configuration" "$tmp/open.log"
    is "  and keeps serving" "$(code "http://$addr:$port2/v1/health")" 200
    stop_pid "$pid2"
fi

# a recorded machine: p3dn's counters, InfiniBand-style words in bytes
port3=$(free_port $((port + 5)))
"$BENCHD" -f --listen "127.0.0.1:$port3" --token-file "$tmp/state/token" \
    --sysfs-root "$srcdir/tests/fixtures/sysfs/p3dn" 2>/dev/null &
pid3=$!; pids+=("$pid3")
wait_until 10 curl -sf "http://127.0.0.1:$port3/v1/health"
m=$(curl -s "http://127.0.0.1:$port3/metrics")
efa=$(cat "$srcdir/tests/fixtures/sysfs/p3dn/sys/class/infiniband/rdmap16s27/ports/1/hw_counters/rx_bytes")
ens=$(cat "$srcdir/tests/fixtures/sysfs/p3dn/sys/class/net/ens5/statistics/tx_bytes")
like "p3dn: the EFA's received bytes" "$m" "^benchd_nic_receive_bytes_total\{device=\"rdmap16s27\",port=\"1\"\} $efa\$"
like "p3dn: ens5's transmitted bytes" "$m" "^benchd_nic_transmit_bytes_total\{device=\"ens5\"\} $ens\$"
like "p3dn: eight GPUs" "$m" '^benchd_gpus 8$'
like "p3dn: GPU 5's identity" "$m" '^benchd_gpu_info\{gpu="5",name="Tesla V100-SXM2-32GB",uuid="GPU-[0-9a-f-]+",pci_bus_id="0000:86:00.0",numa_node="1",driver="535.129.03"\} 1$'
like "p3dn: the EFA is up at 100 Gb/s" "$m" '^benchd_nic_speed_bytes\{device="rdmap16s27"\} 12500000000$'
is "p3dn: binding plan of rank 5 over HTTP" \
   "$(curl -s "http://127.0.0.1:$port3/v1/binding" | jget 'j["ranks"][5]["numactl"], j["ranks"][5]["nic"]')" \
   "--physcpubind=30-35,78-83 --membind=1 rdmap16s27"
is "p3dn: topology GPU0 x GPU1 and GPU0 x GPU4" \
   "$(curl -s "http://127.0.0.1:$port3/v1/topology" | jget 'j["gpu_gpu"][0][1], j["gpu_gpu"][0][4], j["nics"]')" \
   "PIX SYS ['ens5', 'rdmap16s27']"
if command -v promtool >/dev/null; then
    out=$(promtool check metrics <<<"$m" 2>&1); rc=$?
    is "promtool check metrics on p3dn: no problems" "$rc $out" "0 "
fi
# more ranks than GPUs: the others are spread (node 0 on a tie), each node's cores split among its ranks
plan() { jget '"; ".join(str(r["local_rank"]) + " " + r["numactl"] for r in '"$1"')'; }
is "p3dn: ranks=10: ranks 8 and 9 (no GPU) on node 0 and node 1" \
   "$(curl -s "http://127.0.0.1:$port3/v1/binding?ranks=10" | plan 'j["ranks"][3:10]')" \
   "3 --physcpubind=12-15,60-63 --membind=0; 4 --physcpubind=24-27,72-75 --membind=1; 5 --physcpubind=28-31,76-79 --membind=1; 6 --physcpubind=32-35,80-83 --membind=1; 7 --physcpubind=36-39,84-87 --membind=1; 8 --physcpubind=16-19,64-67 --membind=0; 9 --physcpubind=40-43,88-91 --membind=1"
is "p3dn: ranks=48: one core each, 24 per node" \
   "$(curl -s "http://127.0.0.1:$port3/v1/binding?ranks=48" | plan 'j["ranks"][7:9] + j["ranks"][46:]')" \
   "7 --physcpubind=27,75 --membind=1; 8 --physcpubind=4,52 --membind=0; 46 --physcpubind=46,94 --membind=1; 47 --physcpubind=47,95 --membind=1"
is "p3dn: ranks=49: 409" "$(code "http://127.0.0.1:$port3/v1/binding?ranks=49")" 409
is "  as JSON naming the node and the counts" "$(jget 'j["status"], j["error"]' < "$tmp/body")" \
   "409 more ranks on NUMA node 0 (25) than cores (24)"
# layouts the x86 formula gets wrong (tests/fixtures/sysfs/README.md), over HTTP
layout_plan() {
    local port8; port8=$(free_port $((port + 30)))
    "$BENCHD" -f --listen "127.0.0.1:$port8" --token-file "$tmp/state/token" \
        --sysfs-root "$srcdir/tests/fixtures/sysfs/$1" 2>/dev/null &
    local pid8=$!; pids+=("$pid8")
    wait_until 10 curl -sf "http://127.0.0.1:$port8/v1/health"
    curl -s "http://127.0.0.1:$port8/v1/binding?ranks=$2" | plan 'j["ranks"]'
    stop_pid "$pid8"
}
is "interleaved: 2 ranks per node, even CPUs on node 0, odd ones on node 1" "$(layout_plan interleaved 4)" \
   "0 --physcpubind=0,2,4,6,16,18,20,22 --membind=0; 1 --physcpubind=8,10,12,14,24,26,28,30 --membind=0; 2 --physcpubind=1,3,5,7,17,19,21,23 --membind=1; 3 --physcpubind=9,11,13,15,25,27,29,31 --membind=1"
is "snc: 8 ranks, 4 GPUs on nodes 0-3: two ranks per node" "$(layout_plan snc 8)" \
   "0 --physcpubind=0-1,16-17 --membind=0; 1 --physcpubind=4-5,20-21 --membind=1; 2 --physcpubind=8-9,24-25 --membind=2; 3 --physcpubind=12-13,28-29 --membind=3; 4 --physcpubind=2-3,18-19 --membind=0; 5 --physcpubind=6-7,22-23 --membind=1; 6 --physcpubind=10-11,26-27 --membind=2; 7 --physcpubind=14-15,30-31 --membind=3"
is "cpuoff: 4 ranks: CPU 2 offline, core 2 is CPU 18 alone" "$(layout_plan cpuoff 4)" \
   "0 --physcpubind=0-1,3,16-19 --membind=0; 1 --physcpubind=8-11,24-27 --membind=1; 2 --physcpubind=4-7,20-23 --membind=0; 3 --physcpubind=12-15,28-31 --membind=1"
# strings from the tree that are not printable UTF-8 (a stray byte, an escape
# sequence) or need escaping (quotes, backslash): the JSON and the exposition
# stay valid, what cannot be shown becomes U+FFFD, with a warning
bad="$tmp/badroot"
cp -a "$srcdir/tests/fixtures/sysfs/p3dn" "$bad" && chmod -R u+w "$bad"
printf 'NAME=x\nPRETTY_NAME="Bad \xff\xfe OS \\ \x1b[31mred\xc2\x9b"\n' > "$bad/etc/os-release"
printf '5.15 "q" \\ \x07\xe2\x82\n' > "$bad/proc/sys/kernel/osrelease"
sed -i 's/^Model:.*/Model: \t Tesla "V100" \\ \xc0\xaf/' "$bad/proc/driver/nvidia/gpus/0000:06:00.0/information"
port8=$(free_port $((port + 30)))
"$BENCHD" -f --listen "127.0.0.1:$port8" --token-file "$tmp/state/token" --sysfs-root "$bad" 2>/dev/null &
pid8=$!; pids+=("$pid8")
wait_until 10 curl -sf "http://127.0.0.1:$port8/v1/health"
curl -s -o "$tmp/bad.json" "http://127.0.0.1:$port8/v1/inventory"
curl -s -o "$tmp/bad.prom" "http://127.0.0.1:$port8/metrics"
stop_pid "$pid8"
is "odd strings: the inventory is valid UTF-8 JSON" "$(py "
import json; j = json.loads(open('$tmp/bad.json', 'rb').read().decode('utf-8'))
print(ascii(j['host']['os']), ascii(j['host']['kernel']), ascii(j['gpus'][0]['name']))")" \
   "'Bad \\ufffd\\ufffd OS \\\\ \\ufffd[31mred\\ufffd' '5.15 \"q\" \\\\ \\ufffd\\ufffd\\ufffd' 'Tesla \"V100\" \\\\ \\ufffd\\ufffd'"
like "  with a warning naming the field" "$(py "import json; print(json.load(open('$tmp/bad.json'))['warnings'])")" \
     "OS name \(/etc/os-release\): not printable UTF-8"
check "  the exposition is valid UTF-8" py "open('$tmp/bad.prom', 'rb').read().decode('utf-8')"
like "  the OS label escaped" "$(cat "$tmp/bad.prom")" '^benchd_node_info\{.*,os="Bad .* OS \\\\ .*\[31mred.*",kernel="5\.15 \\"q\\" \\\\ .*"\} 1$'
if command -v promtool >/dev/null; then
    out=$(promtool check metrics < "$tmp/bad.prom" 2>&1); rc=$?
    is "  promtool check metrics: no problems" "$rc $out" "0 "
fi
# benchd-bind takes the node's measured plan over the declared one
declared=(); for r in 0 1 2 3 4 5 6 7; do declared+=(-r "$r:0"); done
out=$(OMPI_COMM_WORLD_LOCAL_RANK=5 "$top_builddir/benchd-bind" -n --benchd "http://127.0.0.1:$port3" "${declared[@]}" -- true 2>&1)
like "benchd-bind --benchd: rank 5 gets the measured p3dn plan, with its EFA device" "$out" \
     "local rank 5: --physcpubind=30-35,78-83 --membind=1 nic rdmap16s27/efa \(measured by benchd\)"
stop_pid "$pid3"
out=$(OMPI_COMM_WORLD_LOCAL_RANK=5 "$top_builddir/benchd-bind" -n --benchd "http://127.0.0.1:$port3" "${declared[@]}" -- true 2>&1)
like "  without benchd: the declared plan, and why" "$out" "Could not connect|Couldn't connect|refused"
like "  which is then used" "$out" "local rank 5: --physcpubind=5 --membind=0 \(declared\)"
# a plan naming a NUMA node out of range is not used (it indexed a fixed mask)
fport=$(free_port $((port + 20)))
/usr/bin/python3 -c 'import json; print(json.dumps({"*": [200, {"ranks": [{"physcpubind": "0", "membind": n}
                                                               for n in (100000000, -3, 1.5, 0)]}]}))' > "$tmp/plans.json"
/usr/bin/python3 "$srcdir/tests/json-server.py" "$fport" "$tmp/plans.json" &
fpid=$!; pids+=("$fpid")
wait_until 5 curl -s -o /dev/null "http://127.0.0.1:$fport/"
bad_mem=(100000000 -3 1.5)
for r in 0 1 2; do
    out=$(OMPI_COMM_WORLD_LOCAL_RANK=$r "$top_builddir/benchd-bind" -n --benchd "http://127.0.0.1:$fport" "${declared[@]}" -- true 2>&1); rc=$?
    is "a measured plan with membind ${bad_mem[r]}: exit 0" "$rc" 0
    like "  saying it is not usable" "$out" "no usable plan for local rank $r; using the declared plan"
    like "  and using the declared one" "$out" "local rank $r: --physcpubind=$r --membind=0 \(declared\)"
done
stop_pid "$fpid"

# SIGTERM: a clean stop that removes the socket file
kill -TERM "$pid"
wait "$pid"; rc=$?
is "SIGTERM: exit 0" "$rc" 0
check_fails "  the Unix socket file is gone" test -e "$tmp/benchd.sock"

# sd_notify: READY, STATUS, WATCHDOG, RELOADING, STOPPING
/usr/bin/python3 "$srcdir/tests/notify-listen.py" "$tmp/notify" "$tmp/notify.log" &
npid=$!; pids+=("$npid")
wait_until 5 grep -q listening "$tmp/notify.log"
port4=$(free_port $((port + 10)))
NOTIFY_SOCKET="$tmp/notify" WATCHDOG_USEC=300000 \
    "$BENCHD" -f --listen "127.0.0.1:$port4" --token-file "$tmp/state/token" 2>/dev/null &
pid4=$!; pids+=("$pid4")
check "READY=1 once serving" wait_until 10 grep -q "^READY=1|STATUS=serving on 127.0.0.1:$port4" "$tmp/notify.log"
check "WATCHDOG=1 pings at half the period" wait_until 5 bash -c "test \$(grep -c '^WATCHDOG=1\$' '$tmp/notify.log') -ge 3"
kill -HUP "$pid4"
check "SIGHUP: RELOADING=1 then READY=1" wait_until 10 grep -q '^READY=1|STATUS=serving$' "$tmp/notify.log"
like "  RELOADING=1 came first" "$(grep -n -E '^(RELOADING|READY=1\|STATUS=serving$)' "$tmp/notify.log" | head -1)" 'RELOADING=1'
kill -TERM "$pid4"; wait "$pid4"
# the listener may still hold the last datagrams when benchd has exited
check "SIGTERM: STOPPING=1" wait_until 5 grep -q '^STOPPING=1' "$tmp/notify.log"
like "  the last message" "$(tail -1 "$tmp/notify.log")" '^STOPPING=1'

# under systemd (JOURNAL_STREAM names our stderr) without a journal socket to
# send structured entries to: journald's "<priority>" lines
if [ ! -S /run/systemd/journal/socket ]; then
    : > "$tmp/journal.log"
    port7=$(free_port $((port + 25)))
    JOURNAL_STREAM="$(stat -c '%d:%i' "$tmp/journal.log")" "$BENCHD" -f --listen "127.0.0.1:$port7" \
        --token-file "$tmp/state/token" 2>>"$tmp/journal.log" &
    pid7=$!; pids+=("$pid7")
    wait_until 10 curl -sf "http://127.0.0.1:$port7/v1/health"
    stop_pid "$pid7"
    like "journal stream: notices as <5> lines" "$(cat "$tmp/journal.log")" "^<5>serving on 127.0.0.1:$port7$"
    like "  SIGTERM too" "$(cat "$tmp/journal.log")" '^<5>SIGTERM: stopping$'
fi

# socket activation
if command -v systemd-socket-activate >/dev/null; then
    port5=$(free_port $((port + 15)))
    systemd-socket-activate -l "127.0.0.1:$port5" "$BENCHD" -f --listen 127.0.0.1:1 \
        --token-file "$tmp/state/token" 2>"$tmp/sa.log" &
    pid5=$!; pids+=("$pid5")
    check "socket activation: serves on the passed socket" wait_until 10 curl -sf "http://127.0.0.1:$port5/v1/health"
    # the line follows the start of the server: it may come just after the first answer
    wait_until 5 grep -q "serving on 127.0.0.1:$port5 (socket activation)" "$tmp/sa.log"
    like "  and says so" "$(cat "$tmp/sa.log")" "serving on 127.0.0.1:$port5 \(socket activation\)"
    stop_pid "$pid5"
fi

# in the background: the parent returns once the daemon serves, or fails with it
port6=$(free_port $((port + 20)))
"$BENCHD" --listen "127.0.0.1:$port6" --token-file "$tmp/state/token" 2>/dev/null
is "background start: exit 0" "$?" 0
check "  serving" curl -sf "http://127.0.0.1:$port6/v1/health"
bgpid=$(ss -ltnpH "sport = :$port6" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
"$BENCHD" --listen "127.0.0.1:$port6" --token-file "$tmp/state/token" 2>"$tmp/bg.err"
is "a second one on the same port fails" "$?" 1
[ -n "$bgpid" ] && kill -TERM "$bgpid"
# a relative -c in the background (which works from /): SIGHUP still reads it
port7=$(free_port $((port + 25)))
printf 'listen = 127.0.0.1:%s\ntoken_file = %s\nsysfs_root = %s\n' "$port7" "$tmp/state/token" \
    "$srcdir/tests/fixtures/sysfs/p3dn" > "$tmp/rel.conf"
(cd "$tmp" && "$BENCHD" -c rel.conf 2>/dev/null)
is "background start with a relative -c: exit 0" "$?" 0
bgpid=$(ss -ltnpH "sport = :$port7" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
before=$(curl -s "http://127.0.0.1:$port7/v1/inventory" | jget 'j["host"]["hostname"]')
sed -i "s|sysfs/p3dn|sysfs/dss8440|" "$tmp/rel.conf"
[ -n "$bgpid" ] && kill -HUP "$bgpid"
after=$before
for _ in $(seq 50); do
    after=$(curl -s "http://127.0.0.1:$port7/v1/inventory" | jget 'j["host"]["hostname"]')
    [ "$after" != "$before" ] && break
    sleep 0.1
done
check "  serving the recorded p3dn" test -n "$before"
check "  SIGHUP reads it again (another sysfs root, another host name)" test "$after" != "$before"
[ -n "$bgpid" ] && kill -TERM "$bgpid"

# configuration errors
printf 'listen = 127.0.0.1:1\nthreds = 4\n' > "$tmp/bad.conf"
err=$("$BENCHD" -f -c "$tmp/bad.conf" 2>&1); rc=$?
is "unknown key: exit 1" "$rc" 1
like "  names file, line and the closest key" "$err" "bad.conf:2: unknown key 'threds' \(did you mean 'threads'\?\)"
printf 'threads = lots\n' > "$tmp/bad.conf"
like "bad value: names the range" "$("$BENCHD" -f -c "$tmp/bad.conf" 2>&1)" "bad.conf:1: 'threads': expected an integer from 1 to 64, not 'lots'"
like "a missing file" "$("$BENCHD" -f -c "$tmp/none.conf" 2>&1)" "cannot read '$tmp/none.conf'"
printf 'sysfs_root = fixtures\n' > "$tmp/bad.conf"
like "a relative path: refused" "$("$BENCHD" -f -c "$tmp/bad.conf" 2>&1)" \
     "bad.conf:1: 'sysfs_root': expected an absolute path, not 'fixtures'"
printf 'threads = 2\nlisten = garbage\n' > "$tmp/bad.conf"
err=$("$BENCHD" -f -c "$tmp/bad.conf" --token-file "$tmp/none/token" 2>&1); rc=$?
is "a bad listen address: exit 1" "$rc" 1
is "  names file and line" "$err" \
   "benchd: error: $tmp/bad.conf:2: 'listen': expected ADDR:PORT, [IPv6]:PORT or *:PORT, not 'garbage'"
check_fails "  before anything is written" test -e "$tmp/none"
printf 'listen = 127.0.0.1:70000\n' > "$tmp/bad.conf"
like "  a bad port" "$("$BENCHD" -f -c "$tmp/bad.conf" --token-file "$tmp/none/token" 2>&1)" \
     "bad.conf:1: 'listen': '127.0.0.1:70000': expected a port from 1 to 65535"
like "--listen with a bad host" "$("$BENCHD" -f --listen nohost:80 --token-file "$tmp/none/token" 2>&1)" \
     "'listen': 'nohost:80': 'nohost' is not an IPv4 or IPv6 address"
"$BENCHD" --bogus >/dev/null 2>&1; is "unknown option: exit 2" "$?" 2
check "--print-defaults gives a file benchd accepts" bash -c "'$BENCHD' --print-defaults > '$tmp/d.conf' && grep -q '^#threads = 4' '$tmp/d.conf'"

# etc/benchd.conf is benchd --print-defaults; under benchd.service, whose
# PrivateTmp gives benchd a /tmp and /var/tmp of its own, staging there would
# write where no job looks: the default stage_allow names neither
check "etc/benchd.conf is what --print-defaults prints" diff "$srcdir/etc/benchd.conf" "$tmp/d.conf"
allow=$(sed -n 's/^#stage_allow = //p' "$tmp/d.conf")
if grep -q '^PrivateTmp=yes' "$srcdir/etc/benchd.service.in"; then
    is "PrivateTmp: the default stage_allow names no /tmp or /var/tmp" \
       "$(tr ' ' '\n' <<<"$allow" | grep -cE '^/(var/)?tmp(/|$)')" 0
fi

# the unit files
if command -v systemd-analyze >/dev/null; then
    mkdir -p "$tmp/units"
    for u in benchd.service benchd.socket; do
        sed -e "s|@bindir@|$top_builddir|g" -e "s|@sysconfdir@|$tmp|g" "$srcdir/etc/$u.in" > "$tmp/units/$u"
    done
    out=$(cd "$tmp/units" && systemd-analyze verify --man=no ./benchd.service ./benchd.socket 2>&1); rc=$?
    is "systemd-analyze verify: the unit files are clean" "$rc $out" "0 "
fi
done_testing
