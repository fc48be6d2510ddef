#!/bin/bash
# Staging through benchd: two "nodes" (benchd in their own mount namespaces,
# each with its own disk mounted at the same path), benchctl stage --nodes,
# the API's checks, cancelling, kill -9 and SIGTERM of benchd mid-copy with
# the job resumed by the next start, verification and repair, metrics.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/stage-lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (mount namespaces)"
unshare --mount --propagation private true 2>/dev/null || skip_all "cannot make mount namespaces here"
own_servers
py() { /usr/bin/python3 -c "$@"; }

# the dataset on "shared storage"
mk_files "$tmp/src/train" 40 150000
mk_files "$tmp/src/val" 10 150000
printf '{"images": []}\n' > "$tmp/src/annotations.json"
local_dir="$tmp/local"                 # the node-local path, the same on every node
mkdir -p "$local_dir" "$tmp/diskA" "$tmp/diskB"
printf '%s' "0123456789abcdef0123456789abcdef" > "$tmp/token"
chmod 600 "$tmp/token"

# start_node NAME PORT: benchd with NAME's disk mounted at $local_dir
start_node() {
    cat > "$tmp/$1.conf" <<CONF
listen = 127.0.0.1:$2
token_file = $tmp/token
state_dir = $tmp/state-$1
stage_allow = $local_dir
log_level = info
CONF
    unshare --mount --propagation private bash -c \
        "mount --bind '$tmp/disk$1' '$local_dir' && exec '$BENCHD' -f -c '$tmp/$1.conf'" 2>>"$tmp/$1.log" &
    eval "pid$1=\$!"; pids+=($!)
    wait_until 10 curl -sf "http://127.0.0.1:$2/v1/health"
}
pA=$(free_port 19520); pB=$(free_port $((pA + 1)))
start_node A "$pA"
start_node B "$pB"
A="127.0.0.1:$pA"; B="127.0.0.1:$pB"
api() { curl -s -H "Authorization: Bearer $(cat "$tmp/token")" "$@"; }
code() { curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$tmp/token")" "$@"; }

out=$("$BENCHCTL" stage --nodes "$A,$B" --src "$tmp/src" --dst "$local_dir/coco" --name coco \
      --token-file "$tmp/token" 2>"$tmp/err"); rc=$?
is "two nodes staged: exit 0" "$rc" 0
like "  node A complete, every file copied" "$out" "^$A +complete: 51 files, .*; 51 copied"
like "  node B too" "$out" "^$B +complete: 51 files"
check "  node A's disk holds the exact tree" check_tree "$tmp/src" "$tmp/diskA/coco"
check "  node B's disk too" check_tree "$tmp/src" "$tmp/diskB/coco"
is "  and nothing is in the path outside the namespaces" "$(ls -A "$local_dir")" ""
mk_files "$tmp/one" 1 1000
out=$("$BENCHCTL" stage --nodes "$A" --src "$tmp/one" --dst "$local_dir/one" --name one --token-file "$tmp/token" 2>/dev/null)
like "a dataset of one file: '1 file', in the singular" "$out" "^$A +complete: 1 file, .*; 1 copied"
out=$("$BENCHCTL" stage --nodes "$A" --src "$tmp/one" --dst "$local_dir/one" --name one --verify-only \
      --token-file "$tmp/token" 2>/dev/null)
like "  verify-only too" "$out" "^$A +complete: 1 file, .*; 1 checksummed"
j=$(curl -s "http://$A/v1/datasets/coco")
is "GET /v1/datasets/coco: complete, no error, a manifest checksum" \
   "$(py "import json,sys; j=json.loads(sys.argv[1]); print(j['state'], j['error'], len(j['manifest_checksum']))" "$j")" \
   "complete None 32"
is "  the checksum of the source's manifest" \
   "$(py "import json,sys; print(json.loads(sys.argv[1])['manifest_checksum'])" "$j")" \
   "$("$BENCHCTL" manifest "$tmp/src" -q | awk '$1 == "end" {print $2}')"
is "GET /v1/datasets lists it" "$(curl -s "http://$B/v1/datasets" | py 'import json,sys; print([d["name"] for d in json.load(sys.stdin)["datasets"]])')" "['coco']"
like "/metrics: the dataset's bytes" "$(curl -s "http://$A/metrics")" '^benchd_dataset_bytes_done\{name="coco"\} [1-9][0-9]+$'

# the API's checks
is "no token: 401" "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '{}' "http://$A/v1/datasets/x/stage")" 401
is "destination outside stage_allow: 403" \
   "$(code -X POST -d "{\"source\": \"$tmp/src\", \"destination\": \"$tmp/elsewhere\"}" "http://$A/v1/datasets/x/stage")" 403
like "  says which directories are allowed" "$(cat "$tmp/body")" "not under a directory of stage_allow \\($local_dir\\)"
ln -s /etc "$tmp/diskA/escape"           # node A sees it as $local_dir/escape
is "a destination through a link leading out: 403" \
   "$(code -X POST -d "{\"source\": \"$tmp/src\", \"destination\": \"$local_dir/escape/x\"}" "http://$A/v1/datasets/x/stage")" 403
rm "$tmp/diskA/escape"
is "'..' in the destination: 403" \
   "$(code -X POST -d "{\"source\": \"$tmp/src\", \"destination\": \"$local_dir/../x\"}" "http://$A/v1/datasets/x/stage")" 403
is "a bad dataset name: 400" "$(code -X POST -d '{}' "http://$A/v1/datasets/-x/stage")" 400
is "an unknown field: 400" "$(code -X POST -d '{"sauce": "x"}' "http://$A/v1/datasets/x/stage")" 400
like "  with the closest one" "$(cat "$tmp/body")" "unknown field 'sauce' \\(did you mean 'source'\\?\\)"
is "malformed JSON: 400" "$(code -X POST -d '{"source": ' "http://$A/v1/datasets/x/stage")" 400
okjson="\"source\": \"$tmp/src\", \"destination\": \"$local_dir/x\""
is "more after the object: 400" "$(code -X POST -d "{$okjson} trailing" "http://$A/v1/datasets/x/stage")" 400
is "a field given twice: 400" "$(code -X POST -d "{$okjson, \"source\": \"/etc\"}" "http://$A/v1/datasets/x/stage")" 400
like "  says so" "$(cat "$tmp/body")" "a field is given twice"
is "a \\u0000 in a path: 400 (it would cut the path)" \
   "$(code -X POST -d "{\"source\": \"$tmp/src\", \"destination\": \"$local_dir/x\\u0000/../../etc\"}" "http://$A/v1/datasets/x/stage")" 400
is "%00 in a dataset's path: 400 (it cut the name: this was dataset 'coco')" \
   "$(code "http://$A/v1/datasets/coco%00x")" 400
is "  nor does it reach another endpoint" "$(code -X POST -d '{}' "http://$A/v1/datasets/coco%00/verify")" 400
is "other escapes are decoded: co%63o is coco" "$(code "http://$A/v1/datasets/co%63o")" 200
printf '{"source": "%s", "destination": "%s/x\0/../../etc"}' "$tmp/src" "$local_dir" > "$tmp/nul.json"
is "a raw NUL byte in the body: 400" "$(code -X POST --data-binary @"$tmp/nul.json" "http://$A/v1/datasets/x/stage")" 400
is "verify naming the dataset's destination spelled another way: not refused" \
   "$(code -X POST -d "{\"destination\": \"$local_dir/./coco/\"}" "http://$A/v1/datasets/coco/verify")" 202
wait_until 20 bash -c "curl -s http://$A/v1/datasets/coco | grep -q '\"state\":\"complete\"'"
is "verify of a dataset in another destination: 409" \
   "$(code -X POST -d "{\"destination\": \"$local_dir/other\"}" "http://$A/v1/datasets/coco/verify")" 409
like "  saying where it is staged" "$(cat "$tmp/body")" "dataset 'coco' is staged in '$local_dir/coco'"
is "  and the record still points there" \
   "$(curl -s "http://$A/v1/datasets/coco" | py 'import json,sys; print(json.load(sys.stdin)["destination"])')" "$local_dir/coco"
mkdir -p "$tmp/src-other"
is "verify against another source: 409" \
   "$(code -X POST -d "{\"source\": \"$tmp/src-other\"}" "http://$A/v1/datasets/coco/verify")" 409
like "  saying where it was staged from" "$(cat "$tmp/body")" "dataset 'coco' was staged from '$tmp/src'"
is "  and the record still names it" \
   "$(curl -s "http://$A/v1/datasets/coco" | py 'import json,sys; print(json.load(sys.stdin)["source"])')" "$tmp/src"
is "verify naming the same source spelled another way: not refused" \
   "$(code -X POST -d "{\"source\": \"$tmp/./src/\"}" "http://$A/v1/datasets/coco/verify")" 202
wait_until 20 bash -c "curl -s http://$A/v1/datasets/coco | grep -q '\"state\":\"complete\"'"
is "no source: 400" "$(code -X POST -d "{\"destination\": \"$local_dir/x\"}" "http://$A/v1/datasets/x/stage")" 400
is "workers out of range: 400" \
   "$(code -X POST -d "{\"source\": \"$tmp/src\", \"destination\": \"$local_dir/x\", \"workers\": 0}" "http://$A/v1/datasets/x/stage")" 400
is "unknown dataset: 404" "$(code "http://$A/v1/datasets/nothing")" 404
is "cancel with nothing running: 409" "$(code -X DELETE "http://$A/v1/datasets/coco")" 409
is "cancel of an unknown dataset: 404" "$(code -X DELETE "http://$A/v1/datasets/nothing")" 404
cp -r "$tmp/src/val" "$tmp/src-val"
api -X POST -d "{\"source\": \"$tmp/src-val//\", \"destination\": \"$local_dir/./spelled//\"}" \
    "http://$A/v1/datasets/spelled/stage" >/dev/null
wait_until 20 bash -c "curl -s http://$A/v1/datasets/spelled | grep -q '\"state\":\"complete\"'"
is "paths are recorded in one spelling ('/./', '//' and a trailing '/' go)" \
   "$(curl -s "http://$A/v1/datasets/spelled" | py 'import json,sys; j=json.load(sys.stdin); print(j["source"], j["destination"])')" \
   "$tmp/src-val $local_dir/spelled"
is "a relative destination: 400" \
   "$(code -X POST -d "{\"source\": \"$tmp/src\", \"destination\": \"x/y\"}" "http://$A/v1/datasets/x/stage")" 400
is "a source that does not exist: 400 at once" \
   "$(code -X POST -d "{\"source\": \"$tmp/nosrc\", \"destination\": \"$local_dir/x\"}" "http://$A/v1/datasets/x/stage")" 400
like "  saying why" "$(cat "$tmp/body")" "source '$tmp/nosrc': No such file or directory"
out=$("$BENCHCTL" stage --nodes "$A" --src "$tmp/src" --dst /etc/coco --token-file "$tmp/token" 2>&1); rc=$?
is "benchctl stage to a forbidden destination: exit 1" "$rc" 1
like "  names the node and why" "$out" "benchctl: stage: node $A: .*not under a directory of stage_allow"

# slow jobs: a bandwidth limit keeps them running long enough to act on
slow="{\"source\": \"$tmp/src\", \"destination\": \"$local_dir/slow\", \"bwlimit_mbps\": 1, \"workers\": 1}"
is "a slow stage starts: 202" "$(code -X POST -d "$slow" "http://$A/v1/datasets/slow/stage")" 202
is "a second job of the same dataset: 409" "$(code -X POST -d "$slow" "http://$A/v1/datasets/slow/stage")" 409
is "DELETE cancels it: 200" "$(code -X DELETE "http://$A/v1/datasets/slow")" 200
check "  it ends cancelled" wait_until 20 bash -c "curl -s http://$A/v1/datasets/slow | grep -q '\"state\":\"cancelled\"'"
is "  with no temporary file left" "$(temporaries "$tmp/diskA/slow")" 0

# kill -9 of benchd mid-copy: the next benchd resumes the job by itself
is "a stage at 1 MB/s starts" "$(code -X POST -d "$slow" "http://$B/v1/datasets/slow/stage")" 202
wait_until 30 bash -c "[ \$(find '$tmp/diskB/slow' -name 'f*.bin' 2>/dev/null | wc -l) -ge 3 ]"
kill -9 "$pidB"; wait "$pidB" 2>/dev/null
before=$(find "$tmp/diskB/slow" -name 'f*.bin' -printf '%p %i\n' | sort)
nbefore=$(wc -l <<<"$before")
check "  benchd killed with $nbefore files staged" test "$nbefore" -ge 3
start_node B "$pB"
like "  the new benchd resumes it" "$(cat "$tmp/B.log")" "dataset 'slow': resuming the stage that was running"
api -X DELETE "http://$B/v1/datasets/slow" >/dev/null      # a stage without a limit finishes it
wait_until 20 bash -c "curl -s http://$B/v1/datasets/slow | grep -q '\"state\":\"cancelled\"'"
fast="{\"source\": \"$tmp/src\", \"destination\": \"$local_dir/slow\"}"
api -X POST -d "$fast" "http://$B/v1/datasets/slow/stage" >/dev/null
check "  and it completes" wait_until 30 bash -c "curl -s http://$B/v1/datasets/slow | grep -q '\"state\":\"complete\"'"
check "  with the exact tree" check_tree "$tmp/src" "$tmp/diskB/slow"
is "  files staged before the kill were not copied again (same inodes)" \
   "$(join <(echo "$before") <(find "$tmp/diskB/slow" -name 'f*.bin' -printf '%p %i\n' | sort) | awk '$2 != $3' | wc -l)" 0
is "  no temporary file left" "$(temporaries "$tmp/diskB/slow")" 0

# SIGTERM mid-copy: suspended, not cancelled; resumed at the next start
api -X POST -d "$slow" "http://$A/v1/datasets/slow2/stage" >/dev/null
sleep 1
stop_pid "$pidA"
like "SIGTERM: the job is suspended for the next start" "$(cat "$tmp/A.log")" "dataset 'slow2': stage suspended"
is "  its state file still says running" "$(grep -c '^state=running' "$tmp/state-A/stage/slow2.state")" 1
# its process id now someone else's (a reboot, an unreaped benchd): what
# counts is that nothing holds the destination
sleep 60 & sleeper=$!
sed -i "s/^pid=.*/pid=$sleeper/" "$tmp/state-A/stage/slow2.state"
# a job left running whose destination is no longer allowed
sed -e 's/^name=.*/name=gone/' -e "s|^dst=.*|dst=$tmp/elsewhere|" "$tmp/state-A/stage/slow2.state" \
    > "$tmp/state-A/stage/gone.state"
start_node A "$pA"
like "  and the next benchd resumes it" "$(tail -5 "$tmp/A.log")" "dataset 'slow2': resuming the stage"
kill "$sleeper"; wait "$sleeper" 2>/dev/null
j=$(curl -s "http://$A/v1/datasets/gone")
is "a job that cannot be resumed is failed, not left running" \
   "$(py "import json,sys; print(json.loads(sys.argv[1])['state'])" "$j")" failed
like "  with the reason" "$(py "import json,sys; print(json.loads(sys.argv[1])['error'])" "$j")" \
     "^not resumed: destination '$tmp/elsewhere' is not under a directory of stage_allow"
api -X DELETE "http://$A/v1/datasets/slow2" >/dev/null

# verification: a flipped byte is found on its node, the next stage repairs it
f=$(find "$tmp/diskA/coco/train" -name 'f*.bin' | sort | head -1)
flip_byte "$f" 1000
touch -r "$tmp/src/train/$(basename "$f")" "$f"
out=$("$BENCHCTL" stage --nodes "$A,$B" --name coco --dst "$local_dir/coco" --verify-only --token-file "$tmp/token" 2>"$tmp/err"); rc=$?
is "verify-only with a damaged file on node A: exit 1" "$rc" 1
like "  node B is fine" "$out" "^$B +complete: 51 files, .*; 51 checksummed"
like "  node A failed, and says so" "$(cat "$tmp/err")" "benchctl: stage: node $A: "
like "  the API names the file" "$(curl -s "http://$A/v1/datasets/coco")" "corrupt.*$(basename "$f")"
BIND="$top_builddir/benchd-bind"
out=$("$BIND" --check-dataset coco --dataset-dir "$local_dir/coco" --benchd "http://$B"); rc=$?
is "benchd-bind --check-dataset on node B: exit 0" "$rc" 0
like "  says where and which manifest" "$out" "dataset 'coco' staged in $local_dir/coco \(manifest [0-9a-f]{32}\)"
out=$("$BIND" --check-dataset coco --dataset-dir "$local_dir/coco" --benchd "http://$A" 2>&1); rc=$?
is "on node A, whose copy failed verification: exit 1" "$rc" 1
like "  and why" "$out" "dataset 'coco' in '$local_dir/coco' is not ready: its last verify is failed"
out=$("$BIND" --check-dataset coco --dataset-dir /elsewhere --benchd "http://$B" 2>&1); rc=$?
is "staged somewhere else: exit 1" "$rc $out" "1 benchd-bind: $(hostname): dataset 'coco' is staged in '$local_dir/coco', not in '/elsewhere'"
out=$("$BIND" --check-dataset imagenet --dataset-dir /x --benchd "http://$B" 2>&1); rc=$?
like "never staged: exit 1" "$rc $out" "^1 .*dataset 'imagenet' was never staged on this node"

# a launch that requires the staged dataset checks it before each trial
render() {
    "$BENCHCTL" render --system local allreduce --runs 1 --set staging.require=true \
        --set staging.destination="$local_dir/coco" --set benchd.port="${1#*:}" --set staging.name="$2" \
        --set paths.logs="$tmp/logs" --set paths.bin="$top_builddir" --set allreduce.max_bytes=4096 \
        --set allreduce.iters=2 -o "$tmp/run.sh"
}
if render "$B" coco; then
    out=$(bash "$tmp/run.sh" 2>&1); rc=$?
    is "staging.require: the trial runs where the dataset is staged" "$rc" 0
    like "  after checking it" "$(cat "$tmp"/logs/*_1.log)" "benchd: .*: dataset 'coco' staged in $local_dir/coco"
    rm -rf "$tmp/logs"
    render "$B" imagenet
    bash "$tmp/run.sh" >/dev/null 2>&1; rc=$?
    is "  and fails where it is not" "$rc" 1
    like "  saying so" "$(cat "$tmp"/logs/*_1.log)" "the dataset is not staged and verified on every node: trial 1 not started"
fi
out=$("$BENCHCTL" stage --nodes "$A" --src "$tmp/src" --dst "$local_dir/coco" --name coco --token-file "$tmp/token" -q); rc=$?
is "the next stage: exit 0" "$rc" 0
like "  repaired the file" "$out" "1 repaired"
check "  the tree is exact again" check_tree "$tmp/src" "$tmp/diskA/coco"

# benchctl stage --nodes checks the name and the node list before it sends anything
out=$("$BENCHCTL" stage --nodes "$A" --src "$tmp/src" --dst "$local_dir/x" --name '../inventory/refresh#' \
      --token-file "$tmp/token" 2>&1); rc=$?
is "--nodes with a bad --name: usage error (the name goes into the URL)" "$rc" 2
like "  naming it" "$out" "invalid dataset name '../inventory/refresh#'"
for bad in "$A,$A" "$A," "127.0.0.1:99999" "127.0.0.1:abc"; do
    "$BENCHCTL" stage --nodes "$bad" --src "$tmp/src" --dst "$local_dir/x" --token-file "$tmp/token" >/dev/null 2>&1
    is "--nodes '$bad': usage error" "$?" 2
done

# what a node reports about single entries reaches the user
mkdir -p "$tmp/src2"
cp "$tmp/src/annotations.json" "$tmp/src2/"
ln -s /etc/passwd "$tmp/src2/out-link"
out=$("$BENCHCTL" stage --nodes "$A" --src "$tmp/src2" --dst "$local_dir/s2" --name s2 --token-file "$tmp/token" 2>&1); rc=$?
is "a stage with a link leading out of the source: exit 0" "$rc" 0
like "  the node's warning is shown" "$out" "^benchctl: stage: $A: warning: symlink 'out-link' points out of the source tree"

# benchctl stage --local --json spells progress and problems as benchd does
j=$(curl -s "http://$A/v1/datasets/s2")
lj=$("$BENCHCTL" stage --local --src "$tmp/src2" --dst "$tmp/s2-local" --name s2 --state-dir "$tmp/state-local" \
      --json 2>/dev/null)
is "stage --local --json: the progress fields of GET /v1/datasets/NAME" \
   "$(py 'import json,sys; print(sorted(json.loads(sys.argv[1])["progress"]))' "$lj")" \
   "$(py 'import json,sys; print(sorted(json.loads(sys.argv[1])["progress"]))' "$j")"
is "  and its problems, with their path" \
   "$(py 'import json,sys; print(json.loads(sys.argv[1])["problems"])' "$lj")" \
   "$(py 'import json,sys; print(json.loads(sys.argv[1])["problems"])' "$j")"

# benchd restarting under benchctl stage --nodes: benchctl waits, the job resumes
"$BENCHCTL" stage --nodes "$B" --src "$tmp/src" --dst "$local_dir/r" --name r --bwlimit 2 --workers 1 \
    --token-file "$tmp/token" >"$tmp/r.out" 2>&1 &
bpid=$!
wait_until 30 bash -c "[ \$(find '$tmp/diskB/r' -name 'f*.bin' 2>/dev/null | wc -l) -ge 2 ]"
stop_pid "$pidB"
start_node B "$pB"
wait "$bpid"; rc=$?
is "benchd restarted during benchctl stage --nodes: exit 0" "$rc" 0
like "  the node completed" "$(cat "$tmp/r.out")" "$B +complete"
check "  with the exact tree" check_tree "$tmp/src" "$tmp/diskB/r"

# a node that stops answering mid-stage (benchd stopped, not dead) is given
# 30 seconds, counted in time however long each request waits
"$BENCHCTL" stage --nodes "$B" --src "$tmp/src" --dst "$local_dir/s" --name s --bwlimit 1 --workers 1 \
    --timeout 1500 --token-file "$tmp/token" >"$tmp/s.out" 2>&1 &
bpid=$!
wait_until 30 bash -c "[ \$(find '$tmp/diskB/s' -name 'f*.bin' 2>/dev/null | wc -l) -ge 1 ]"
kill -STOP "$pidB"
start=$SECONDS
wait "$bpid"; rc=$?
took=$((SECONDS - start))
kill -CONT "$pidB"
is "a node silent mid-stage: exit 4 (unreachable)" "$rc" 4
like "  it is named with why" "$(cat "$tmp/s.out")" "$B: .*\(no answer for 3[0-9] s\)"
check "  after about 30 s ($took s)" test "$took" -ge 29 -a "$took" -le 40
api -X DELETE "http://$B/v1/datasets/s" >/dev/null
wait_until 10 bash -c "curl -s -H 'Authorization: Bearer $(cat "$tmp/token")' http://$B/v1/datasets/s | grep -q '\"state\": *\"cancelled\"'"

# Ctrl-C while a node's benchd is down: the DELETE it missed is sent again
# once it is back (it resumes the job from its state file)
"$BENCHCTL" stage --nodes "$B" --src "$tmp/src" --dst "$local_dir/c" --name c --bwlimit 1 --workers 1 \
    --timeout 1000 --token-file "$tmp/token" >"$tmp/c.out" 2>&1 &
bpid=$!
wait_until 30 bash -c "[ \$(find '$tmp/diskB/c' -name 'f*.bin' 2>/dev/null | wc -l) -ge 1 ]"
kill -KILL "$pidB"
wait "$pidB" 2>/dev/null
kill -INT "$bpid"
sleep 1         # the first DELETE finds nobody
start_node B "$pB"
wait "$bpid"; rc=$?
is "Ctrl-C with the node down: exit 130 (interrupted)" "$rc" 130
like "  the node's job was cancelled after all" "$(cat "$tmp/c.out")" "$B +cancelled"
like "  the job is recorded cancelled" "$(api "http://$B/v1/datasets/c")" '"state": *"cancelled"'

# SIGINT then SIGTERM: the second signal ends benchctl at once, whichever it is
"$BENCHCTL" stage --nodes "$B" --src "$tmp/src" --dst "$local_dir/t" --name t --bwlimit 1 --workers 1 \
    --timeout 5000 --token-file "$tmp/token" >/dev/null 2>&1 &
bpid=$!
wait_until 30 bash -c "[ \$(find '$tmp/diskB/t' -name 'f*.bin' 2>/dev/null | wc -l) -ge 1 ]"
kill -STOP "$pidB"      # the cancel waits for its answer
kill -INT "$bpid"
sleep 0.5
kill -TERM "$bpid"
gone=no
for _ in $(seq 20); do kill -0 "$bpid" 2>/dev/null || { gone=yes; break; }; sleep 0.1; done
is "SIGINT then SIGTERM: benchctl ends at once" "$gone" yes
wait "$bpid"; rc=$?
is "  killed by the SIGTERM" "$rc" 143
kill -CONT "$pidB"
api -X DELETE "http://$B/v1/datasets/t" >/dev/null

# after a restart /metrics still has the datasets staged before it
# (its last job a verify that found a damaged file)
f=$(find "$tmp/diskA/coco/train" -name 'f*.bin' | sort | head -1)
flip_byte "$f" 1000
touch -r "$tmp/src/train/$(basename "$f")" "$f"
"$BENCHCTL" stage --nodes "$A" --name coco --dst "$local_dir/coco" --verify-only --token-file "$tmp/token" >/dev/null 2>&1
samples() { curl -s "http://$A/metrics" | grep "^benchd_dataset_[a-z_]*{name=\"coco\"}" | sort; }
before=$(samples)
like "/metrics before: the dataset, its job ended" "$before" '^benchd_dataset_running\{name="coco"\} 0$'
like "  with the damaged file as an error" "$before" '^benchd_dataset_errors\{name="coco"\} 1$'
stop_pid "$pidA"
start_node A "$pA"
is "/metrics after a restart: the same samples of the dataset staged before it" "$(samples)" "$before"
done_testing
