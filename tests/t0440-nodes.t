#!/bin/bash
# benchctl nodes: the benchd of several nodes in parallel (three recorded
# machines and this one), the table, JSON, the topology matrix, nodes that
# are down or hang, and the nodes of a system.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
own_servers
jget() { /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }

base=$(free_port 19480)
nodes=()
i=0
for m in p3dn dss8440 c4140 live; do
    port=$(free_port $((base + i)))
    root=/
    [ "$m" = live ] || root="$srcdir/tests/fixtures/sysfs/$m"
    "$BENCHD" -f --listen "127.0.0.1:$port" --token-file "$tmp/token" --sysfs-root "$root" 2>/dev/null &
    pids+=($!)
    wait_until 10 curl -sf "http://127.0.0.1:$port/v1/health"
    nodes+=("127.0.0.1:$port")
    i=$((port - base + 1))
done

out=$("$BENCHCTL" nodes "${nodes[@]}"); rc=$?
is "four nodes: exit 0" "$rc" 0
is "  a header and one line per node" "$(wc -l <<<"$out")" 5
like "  p3dn: 2 sockets x 24 cores x 2 threads, 8 V100" "$out" "^${nodes[0]} +ok +ip-172-31-42-17 +2x24x2 +2 +8 x Tesla V100-SXM2-32GB"
like "  DSS8440: its InfiniBand" "$out" "^${nodes[1]} +ok +dss8440-01 +2x20x2 .*mlx5_0\(infiniband\)"
like "  C4140: HT off, 4 GPUs" "$out" "^${nodes[2]} +ok +[^ ]+ +2x20x1 +2 +4 x Tesla V100-SXM2-32GB"
like "  this machine" "$out" "^${nodes[3]} +ok +$(hostname) "

json=$("$BENCHCTL" nodes --json "${nodes[@]}")
is "--json: every inventory" "$(jget '[(n["ok"], len(n["inventory"]["gpus"])) for n in j]' <<<"$json")" \
   "[(True, 8), (True, 8), (True, 4), (True, 0)]"

topo=$("$BENCHCTL" nodes --topo "${nodes[0]}")
like "--topo: the p3dn matrix, nvidia-smi style" "$topo" "^GPU0 +X +PIX +PHB +PHB +SYS +SYS +SYS +SYS +PHB +NODE +0-23,48-71 +0$"
like "  and the legend" "$topo" "^Legend: X self"
json=$("$BENCHCTL" nodes --topo --json "${nodes[1]}")
is "--topo --json: DSS8440 GPU0 x GPU1 and GPU0 x mlx5_0" \
   "$(jget 'j[0]["topology"]["gpu_gpu"][0][1], j[0]["topology"]["gpu_nic"][0][j[0]["topology"]["nics"].index("mlx5_0")]' <<<"$json")" "PIX PIX"

# a node that is down, and one that accepts but never answers
dead=$(free_port $((base + 20)))
/usr/bin/python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $dead)); s.listen(8)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
" &
pids+=($!)
wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$dead"
down=$(free_port $((dead + 1)))
start=$SECONDS
out=$("$BENCHCTL" nodes --timeout 1000 "${nodes[0]}" "127.0.0.1:$down" "127.0.0.1:$dead" 2>"$tmp/err"); rc=$?
is "a node down: exit 4 (unreachable)" "$rc" 4
like "  the good node is still shown" "$out" "^${nodes[0]} +ok"
like "  the down node, why" "$out" "^127.0.0.1:$down +error +.*(Couldn't connect|refused)"
like "  the silent node timed out" "$out" "^127.0.0.1:$dead +error +.*(timed out|Timeout)"
# a system launched by mpirun from a hostfile: its nodes are the file's
printf '# the nodes\n%s slots=8\n127.0.0.1:%s slots=8  # down\n' "${nodes[0]}" "$down" > "$tmp/hosts"
out=$("$BENCHCTL" nodes --system 24xp3dn --set mpirun.hostfile="$tmp/hosts" --timeout 1000 2>"$tmp/err"); rc=$?
is "nodes --system with an mpirun.hostfile: exit 4 (one down)" "$rc" 4
like "  its first host asked" "$out" "^${nodes[0]} +ok"
like "  and its second" "$out" "^127.0.0.1:$down +error"
printf 'n1 slots=eight\n' > "$tmp/badhosts"
err=$("$BENCHCTL" nodes --system 24xp3dn --set mpirun.hostfile="$tmp/badhosts" 2>&1); rc=$?
like "  a hostfile line that is not one: the file and line named" "$rc:$err" "^3:.*$tmp/badhosts:1: 'slots=eight': a whole number from 1"
like "  and stderr names them" "$(cat "$tmp/err")" "benchctl: node 127.0.0.1:$down: "
check "  within the timeout, not one after the other" test $((SECONDS - start)) -le 3

# the nodes of a system
mkdir -p "$tmp/systems"
printf '{ "extends": "p3dn", "benchd": { "hosts": ["%s", "%s"] } }\n' "${nodes[0]}" "${nodes[3]}" > "$tmp/systems/mine.json"
out=$("$BENCHCTL" nodes --systems-dir "$tmp/systems" --system mine); rc=$?
is "--system: its benchd.hosts" "$rc $(grep -c ' ok ' <<<"$out")" "0 2"
"$BENCHCTL" nodes --system mine "${nodes[0]}" --systems-dir "$tmp/systems" >/dev/null 2>&1
is "--system and node names: usage error" "$?" 2
"$BENCHCTL" nodes --timeout 0 >/dev/null 2>&1
is "--timeout 0: usage error" "$?" 2
"$BENCHCTL" nodes --system nosuch >/dev/null 2>&1
is "--system that does not exist: exit 3 (configuration)" "$?" 3
out=$("$BENCHCTL" nodes --system 4xlocal 2>&1); rc=$?
is "--system of 4 nodes naming none of them: exit 3 (configuration), not this node alone" "$rc" 3
like "  saying so" "$out" "^benchctl: nodes: system '4xlocal': 4 nodes, and no benchd.hosts, mpirun.hosts or mpirun.hostfile names them\$"
printf '{ "extends": "p3dn", "benchd": { "hosts": ["%s", "n1/x"] } }\n' "${nodes[0]}" > "$tmp/systems/bad.json"
out=$("$BENCHCTL" nodes --systems-dir "$tmp/systems" --system bad 2>&1); rc=$?
is "--system whose hosts hold a bad name: exit 3 (configuration)" "$rc" 3
like "  naming the entry" "$out" "system 'bad': benchd.hosts\[1\]: 'n1/x' is not a node name"
printf '{ "extends": "p3dn", "benchd": { "hosts": ["%s", "%s"] } }\n' "${nodes[0]}" "${nodes[0]}" > "$tmp/systems/twice.json"
out=$("$BENCHCTL" nodes --systems-dir "$tmp/systems" --system twice 2>&1); rc=$?
is "--system naming a node twice: exit 3" "$rc" 3
like "  saying so" "$out" "benchd.hosts\[1\]: node '${nodes[0]}' is named twice"
# the same benchd spelled twice: the system's port written out, an IPv6
# address written another way, a host name in capitals, a URL with its
# default port; nothing is asked
p0=${nodes[0]#127.0.0.1:}
printf '{ "extends": "p3dn", "benchd": { "port": %s, "hosts": ["127.0.0.1", "%s"] } }\n' "$p0" "${nodes[0]}" > "$tmp/systems/same.json"
out=$("$BENCHCTL" nodes --systems-dir "$tmp/systems" --system same 2>&1); rc=$?
is "--system naming a node twice with its port: exit 3" "$rc" 3
like "  naming the system and both" "$out" "^benchctl: nodes: system 'same': node '${nodes[0]}' is the same as node '127.0.0.1' \(http://127.0.0.1:$p0\)\$"
for pair in "localhost:$p0 LocalHost" "[::1]:$p0 [0:0::1]" "[fe80::1%lo]:$p0 [fe80::0:1%25lo]" \
            "http://h/ http://H:80" "https://h/x https://h:443/x" "unix:$tmp/s unix:$tmp//./s/" \
            "127.0.0.1:$p0 127.1" "n1.example n1.example." "0x7f.1 127.0.0.1"; do
    # shellcheck disable=SC2086
    out=$("$BENCHCTL" nodes --port "$p0" --timeout 300 $pair 2>&1); rc=$?
    is "'${pair% *}' and '${pair#* }' are one node: usage error" "$rc" 2
    like "  saying so" "$out" "is the same as node"
done
out=$("$BENCHCTL" stage --nodes "127.0.0.1:9410,127.0.0.1" --src /nonexistent --dst /nonexistent 2>&1); rc=$?
is "stage --nodes, one node twice: usage error" "$rc" 2
like "  saying so" "$out" "^benchctl: stage: node '127.0.0.1' is the same as node '127.0.0.1:9410'"
for pair in "h:1 h:2" "http://h https://h" "http://h/a http://h/b" "h:$p0 http://h"; do
    # shellcheck disable=SC2086
    out=$("$BENCHCTL" nodes --port "$p0" --timeout 300 $pair 2>&1)
    unlike "'${pair% *}' and '${pair#* }' are two nodes" "$out" "is the same as"
done

# a node that sends escape sequences, long names and a negative uptime: what
# reaches the terminal is printable, the columns stay aligned
fake=$(free_port $((base + 30)))
/usr/bin/python3 - > "$tmp/answers.json" <<'EOF_PY'
import json
inv = {"host": {"hostname": "evil\x1b]0;pwned\x07\x1b[31mhost", "uptime_seconds": -42},
       "cpu": {"sockets": 2, "cores_per_socket": 1e300, "threads_per_core": 2},
       "numa_nodes": [{}, {}],
       "gpus": [{"name": "G" * 120 + "\x1b[2J"}],
       "nics": [{"name": "n%02d\r" % i, "kind": "ethernet"} for i in range(12)]}
print(json.dumps({"/v1/inventory": [200, inv], "*": [500, {"error": "no\x1b[2Jpe", "status": 500}]}))
EOF_PY
/usr/bin/python3 "$srcdir/tests/json-server.py" "$fake" "$tmp/answers.json" &
pids+=($!)
wait_until 5 curl -s -o /dev/null "http://127.0.0.1:$fake/v1/inventory"
out=$("$BENCHCTL" nodes "${nodes[0]}" "127.0.0.1:$fake" 2>"$tmp/err"); rc=$?
is "odd node: exit 0" "$rc" 0
is "  no control character reaches the terminal" "$(tr -d '\n' <<<"$out" | tr -d '[:print:]' | LC_ALL=C tr -d '\200-\377' | wc -c)" 0
like "  they are shown as '?'" "$out" "^127.0.0.1:$fake +ok +evil\?\]0;pwned\?\?\[31mhost +2x\?x2 +2 +1 x G+… +n00\?\(ethernet\) n01"
like "  a negative uptime is '?'" "$out" "^127.0.0.1:$fake .* \?$"
is "  the columns stay aligned" "$(/usr/bin/python3 -c '
import sys
lines = sys.stdin.read().splitlines()
cols = [lines[0].index(h) for h in ("STATUS", "HOST", "CPUS", "NUMA", "GPUS", "NICS", "UPTIME")]
print(all(l[c - 1] == " " and l[c] != " " for l in lines[1:] for c in cols))' <<<"$out")" True
# wide (East Asian) and combining characters: aligned as a terminal shows
# them (a wide character takes two columns, a combining one none)
wide=$(free_port $((base + 31)))
/usr/bin/python3 - > "$tmp/wide.json" <<'EOF_PY'
import json
inv = {"host": {"hostname": "\u8a08\u7b97\u30ce\u30fc\u30c9", "uptime_seconds": 60},
       "cpu": {"sockets": 1, "cores_per_socket": 4, "threads_per_core": 1},
       "numa_nodes": [{}],
       "gpus": [{"name": "Te\u0301sla " + "\u6f22" * 60}],
       "nics": [{"name": "e\u0301th0", "kind": "ethernet"}]}
print(json.dumps({"/v1/inventory": [200, inv]}))
EOF_PY
/usr/bin/python3 "$srcdir/tests/json-server.py" "$wide" "$tmp/wide.json" &
pids+=($!)
wait_until 5 curl -s -o /dev/null "http://127.0.0.1:$wide/v1/inventory"
out=$("$BENCHCTL" nodes "127.0.0.1:$wide" "127.0.0.1:$fake" "${nodes[0]}" 2>"$tmp/err"); rc=$?
is "wide characters: exit 0" "$rc" 0
like "  shown as they are, a long name cut" "$out" "^127.0.0.1:$wide +ok +\S+ +1x4x1 +1 +1 x Te\S+sla \S+… +e\S+th0\(ethernet\)"
is "  the columns stay aligned on the screen" "$(/usr/bin/python3 -c '
import sys, unicodedata
def cells(s):
    out = []
    for c in s:
        w = 0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        if w:
            out += [c] + [""] * (w - 1)
    return out
lines = [cells(l) for l in sys.stdin.read().splitlines()]
cols = [i for i in range(1, len(lines[0])) if lines[0][i - 1] == " " and lines[0][i] != " "]
print(len(cols) == 7 and all(l[c - 1] == " " and l[c] not in (" ", "") for l in lines[1:] for c in cols))' <<<"$out")" True
"$BENCHCTL" nodes --topo "127.0.0.1:$fake" >"$tmp/topo" 2>"$tmp/err"
is "  a node that answers with an error: exit 1 (it was reached)" "$?" 1
like "  an error answer with escapes: shown as '?' on stderr" "$(cat "$tmp/err")" "HTTP 500: no\?\[2Jpe"
is "  and in the table" "$(tr -d '[:print:]\n' < "$tmp/topo" | LC_ALL=C tr -d '\200-\377' | wc -c)" 0

# a Unix socket that takes no connection: why, not curl's "localhost port 80"
: >"$tmp/file"
out=$("$BENCHCTL" nodes --timeout 300 "unix:$tmp/none" "unix:$tmp/file" 2>&1); rc=$?
is "Unix sockets that are not there: exit 4 (unreachable)" "$rc" 4
like "  a missing one" "$out" "unix:$tmp/none: cannot connect to the Unix socket $tmp/none: No such file or directory"
like "  a file" "$out" "unix:$tmp/file: cannot connect to $tmp/file: not a Unix socket"

# node names: what goes into a URL is checked first (usage error, nothing
# sent); the accepted ones are asked (exit 4: nothing listens there)
for bad in "http://127.0.0.1:1/x#frag" "http://127.0.0.1:1/a?b" "http://user@127.0.0.1:1" "http://" \
           "http://127.0.0.1:1/a b" "[fe80::1" "[fe80::1]x" "[::1%]:1" "[1234]:80" "[1.2]:80" "[:]" "[::1::2]:80" "127.0.0.1:0" "127.0.0.1:" "n1:123456" "a b"; do
    "$BENCHCTL" nodes --timeout 300 "$bad" >/dev/null 2>"$tmp/err"
    is "node name '$bad': usage error" "$?" 2
done
like "  saying what a node name is" "$(cat "$tmp/err")" "'a b' is not a node name \(HOST, HOST:PORT"
for good in "http://127.0.0.1:$down" "http://127.0.0.1:$down/prefix/" "[::1]:$down" "[::1%lo]:$down" \
            "[fe80::1%25lo]:$down" "localhost:$down"; do
    out=$("$BENCHCTL" nodes --timeout 300 "$good" 2>&1)
    is "node name '$good': asked (exit 4, nothing listens)" "$?" 4
done
like "  a zone id makes a URL curl takes (refused, not malformed)" "$out$("$BENCHCTL" nodes --timeout 300 "[::1%lo]:$down" 2>&1)" \
    "Couldn't connect|refused|Failed to connect"
done_testing
