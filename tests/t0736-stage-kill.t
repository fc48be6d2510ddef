#!/bin/bash
# SIGKILL at random points, ten rounds each: a local stage (benchctl stage
# --local) and benchd staging through its API.  After the last round the
# dataset is complete and verified, nothing is lost, no temporary file is
# left.  The kill times come from a seed printed first (BENCHD_KILL_SEED to
# replay one).
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/stage-lib.sh"
BENCHD="$top_builddir/benchd"
own_servers
rounds=${BENCHD_KILL_ROUNDS:-10}
seed=${BENCHD_KILL_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
echo "# seed $seed, $rounds rounds"

# the dataset: files of many sizes in nested directories, some large enough
# to be copied in several pieces
/usr/bin/python3 - "$tmp/src" <<'EOF_PY'
import os, random, sys
root = sys.argv[1]
rng = random.Random(7)
for i in range(120):
    d = os.path.join(root, "d%d" % (i % 6), "e%d" % (i % 4))
    os.makedirs(d, exist_ok=True)
    size = rng.choice([0, 1, 100, 4096, 65536, 300000, 1 << 20])
    with open(os.path.join(d, "f%03d.bin" % i), "wb") as f:
        f.write(os.urandom(size))
EOF_PY
printf '{"images": []}\n' > "$tmp/src/annotations.json"
total=$(find "$tmp/src" -type f | wc -l)
bytes=$(du -sb "$tmp/src" | cut -f1)
echo "# $total files, $bytes bytes"

# a random point: every fourth round early (planning, the manifest), the
# others anywhere in the next 1.4 s of a copy that takes about 8 s in all, so
# that each round makes progress and the ten rounds together about finish it
random_ms() { if (($1 % 4 == 1)); then echo $((RANDOM % 200)); else echo $((RANDOM % 1400)); fi; }
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
leftovers() {   # temporaries in the destination and the state directory (named as comments)
    { find "$1" -name '.benchd-tmp.*'; find "$2" -name '*.tmp*' -o -name '.benchd-tmp*'; } 2>/dev/null | sed 's/^/# left: /' >&2
    echo $(( $(temporaries "$1") + $(find "$2" -name '*.tmp*' -o -name '.benchd-tmp*' 2>/dev/null | wc -l) ))
}
bwlimit=$((bytes / 8000000 + 1))     # MB/s: the copy takes about 8 s

# ---- benchctl stage --local ---------------------------------------------------------
export BENCHD_HOME="$tmp/home"
dst="$tmp/local-dst"
killed=0
for r in $(seq "$rounds"); do
    ms=$(random_ms "$r")
    "$BENCHCTL" stage --local --src "$tmp/src" --dst "$dst" --name k --bwlimit "$bwlimit" -q >/dev/null 2>"$tmp/err" &
    p=$!
    sleep_ms "$ms"
    if kill -9 "$p" 2>/dev/null; then killed=$((killed + 1)); fi
    wait "$p" 2>/dev/null
    echo "# local round $r: SIGKILL after $ms ms, $(staged "$dst" | wc -l) files in place"
done
check "local: most rounds were killed mid-stage ($killed of $rounds)" test "$killed" -ge $((rounds / 2))
json=$("$BENCHCTL" stage --local --src "$tmp/src" --dst "$dst" --name k --json 2>"$tmp/err"); rc=$?
is "local: the stage after the last kill completes" "$rc $(printf '%s' "$json" | jfield state)" "0 complete"
check "  the tree is exact: nothing lost, nothing extra" check_tree "$tmp/src" "$dst"
check "  and verifies against its manifest" "$BENCHCTL" stage --local --src "$tmp/src" --dst "$dst" --name k --verify-only -q
is "  no temporary file is left" "$(leftovers "$dst" "$BENCHD_HOME")" 0
# a kill between the state file's temporary and its rename leaves the
# temporary: the next stage of the name (its lock held) removes it
: > "$BENCHD_HOME/stage/k.state.tmp.Xy12Zw"
"$BENCHCTL" stage --local --src "$tmp/src" --dst "$dst" --name k -q >/dev/null 2>&1
is "  a state file's temporary a kill left is removed by the next stage" "$(leftovers "$dst" "$BENCHD_HOME")" 0

# ---- benchd staging, benchd killed ----------------------------------------------------
mkdir -p "$tmp/allowed"
printf '%s' "0123456789abcdef0123456789abcdef" > "$tmp/token"
chmod 600 "$tmp/token"
port=$(free_port 19560)
url="http://127.0.0.1:$port"
cat > "$tmp/benchd.conf" <<CONF
listen = 127.0.0.1:$port
token_file = $tmp/token
state_dir = $tmp/state
stage_allow = $tmp/allowed
CONF
bpid=
start_benchd() {
    "$BENCHD" -f -c "$tmp/benchd.conf" 2>>"$tmp/benchd.log" &
    bpid=$!; pids+=("$bpid")
    wait_until 10 curl -sf "$url/v1/health"
}
api() { curl -s -H "Authorization: Bearer $(cat "$tmp/token")" "$@"; }
state() { curl -s "$url/v1/datasets/kd" | jfield state 2>/dev/null; }
body="{\"source\": \"$tmp/src\", \"destination\": \"$tmp/allowed/kd\", \"bwlimit_mbps\": $bwlimit}"
ddst="$tmp/allowed/kd"
resumed=0
for r in $(seq "$rounds"); do
    start_benchd
    s=$(state)
    case $s in
    running) resumed=$((resumed + 1)) ;;      # the killed benchd's job, resumed by itself
    complete) ;;
    *) api -X POST -d "$body" "$url/v1/datasets/kd/stage" >/dev/null ;;
    esac
    ms=$(random_ms "$r")
    sleep_ms "$ms"
    kill -9 "$bpid"; wait "$bpid" 2>/dev/null
    echo "# benchd round $r: state '$s' at start, SIGKILL after $ms ms, $(staged "$ddst" | wc -l) files in place"
done
start_benchd
case $(state) in running | complete) ;; *) api -X POST -d "$body" "$url/v1/datasets/kd/stage" >/dev/null ;; esac
check "benchd: the stage after the last kill completes" \
    wait_until 60 bash -c "curl -s '$url/v1/datasets/kd' | grep -q '\"state\":\"complete\"'"
echo "# benchd: $resumed rounds found the killed benchd's job and resumed it"
check "  the tree is exact: nothing lost, nothing extra" check_tree "$tmp/src" "$ddst"
out=$("$BENCHCTL" stage --nodes "127.0.0.1:$port" --src "$tmp/src" --dst "$ddst" --name kd --verify-only \
      --token-file "$tmp/token" 2>&1); rc=$?
is "  and verifies against its manifest (benchctl stage --verify-only through benchd)" "$rc" 0
like "  every file checksummed" "$out" "complete: $total files, .*; $total checksummed"
is "  no temporary file is left" "$(leftovers "$ddst" "$tmp/state")" 0
is "  and benchd's log holds no error" "$(grep -ci 'error' "$tmp/benchd.log")" 0
done_testing
