#!/bin/bash
# The seed's node count on one machine (make check-scale, not make check):
# the local Slurm test cluster grown to 24 emulated nodes of 1 CPU (system
# 24xlocal) and one benchd per node on 127.0.0.2-25, each in its own mount
# namespace with its own "disk" at the staging destination.
#   - submit --system 24xlocal allreduce --wait: 24 ranks through Slurm, report
#   - nodes --system 24xlocal: 24 nodes answer
#   - health --system 24xlocal: 24 nodes checked (shape, two rounds of
#     twelve pairs at once), timed against the smallest check (two nodes);
#     one node slowed named by its pairs; the node whose slurmd is killed
#     below failed and drained
#   - stage --system 24xlocal: staged and verified on all 24
#   - a slurmd killed mid-run: a node failure that names the node
#   - a benchd stopped mid-stage: named, the other 23 complete; started again,
#     it resumes and completes
#   - 24xp3dn's launch as Slurm would run it (launcher=slurm) against
#     sbatch --test-only: refused by these 1-CPU nodes, accepted by the same
#     24 nodes started again in p3dn's shape (96 CPUs, 8 GPUs each)
# Prints the time taken and the peak memory (the processes the test started,
# sampled twice a second by proc-mem.py) and checks them against the budget:
# 5 minutes and 8 GiB on two cores.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/stage-lib.sh"
t_start=$SECONDS
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
[ -x "$top_builddir/benchd-allreduce" ] || skip_all "benchd-allreduce not built (no MPI)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (munge, slurmd, mount namespaces)"
unshare --mount --propagation private true 2>/dev/null || skip_all "cannot make mount namespaces here"
NODES=24
BD_PORT=9410                  # 24xlocal's benchd.port (the default)
addr() { echo "127.0.0.$(($1 + 1))"; }   # node nK's benchd: 127.0.0.(K+1)
for ((k = 1; k <= NODES; k++)); do
    (exec 3<>"/dev/tcp/$(addr $k)/$BD_PORT") 2>/dev/null &&
        skip_all "something listens on $(addr $k):$BD_PORT already (a benchd on 0.0.0.0?)"
done

# Its own cluster directory and port: 18617 (nodes 18801-18824), not the
# default 16817 nor another test's (make check and CI use 16817-17417).
export BENCHD_CLUSTER_NODES=$NODES BENCHD_CLUSTER_CPUS=1
cluster_test 18617
CLUSTER_24="$BENCHD_CLUSTER_DIR"
P3DN_DIR="$tmp/cluster-p3dn"
pids=()
sampler=
torn_down=
cancel_runs() {
    local d
    for d in "$BENCHD_HOME"/runs/*; do
        [ -d "$d" ] && "$BENCHCTL" cancel "$(basename "$d")" >/dev/null 2>&1
    done
}
# everything the test started, by PID and by the clusters' pid files, even
# when it ends early (torn_down: the test's own teardown did it)
scale_cleanup() {
    local p
    if [ -z "$torn_down" ]; then
        cancel_runs
        for p in "${pids[@]}"; do stop_pid "$p"; done
        bash "$CLUSTER" down "$P3DN_DIR" >/dev/null 2>&1
        bash "$CLUSTER" down "$CLUSTER_24" >/dev/null 2>&1
    fi
    [ -n "$sampler" ] && stop_pid "$sampler"
    rm -rf "$tmp"
}
trap scale_cleanup EXIT
# a signal ends the test through its cleanup, as an exit does
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
/usr/bin/python3 "$srcdir/tests/proc-mem.py" "$tmp/mem.json" $$ "$tmp" &
sampler=$!
echo "# cluster up after $((SECONDS - t_start)) s ($(nproc) cores)"

out=$(timeout 20 sinfo -h -N -p debug -o '%N %t %c')
is "24 idle nodes of 1 CPU" "$(grep -cE '^n([1-9]|1[0-9]|2[0-4]) idle 1$' <<<"$out")" $NODES

# ---- a benchd per node ------------------------------------------------------
local_dir="$tmp/local"          # the staging destination, the same path on every node
mkdir -p "$local_dir"
printf '%s' "0123456789abcdef0123456789abcdef" > "$tmp/token"
chmod 600 "$tmp/token"
declare -A bpid
# start_benchd K: node nK's benchd on its address, its own disk at $local_dir
start_benchd() {
    local k=$1 a
    a=$(addr "$k")
    mkdir -p "$tmp/disk/n$k"
    cat > "$tmp/benchd-n$k.conf" <<CONF
listen = $a:$BD_PORT
token_file = $tmp/token
state_dir = $tmp/state/n$k
stage_allow = $local_dir
node_name = n$k
log_level = notice
CONF
    unshare --mount --propagation private bash -c \
        "mount --bind '$tmp/disk/n$k' '$local_dir' && exec '$BENCHD' -f -c '$tmp/benchd-n$k.conf'" \
        2>>"$tmp/benchd-n$k.log" &
    bpid[$k]=$!
    pids+=("$!")
}
for ((k = 1; k <= NODES; k++)); do start_benchd $k; done
up=0
for ((k = 1; k <= NODES; k++)); do
    wait_until 20 curl -sf "http://$(addr $k):$BD_PORT/v1/health" && up=$((up + 1))
done
is "24 benchd answer on 127.0.0.2-25" "$up" $NODES

# ---- benchctl nodes ---------------------------------------------------------
out=$("$BENCHCTL" nodes --system 24xlocal 2>&1); rc=$?
is "nodes --system 24xlocal: exit 0" "$rc" 0
is "  24 nodes ok" "$(grep -cE '^127\.0\.0\.[0-9]+ +ok ' <<<"$out")" $NODES
is "  each of 127.0.0.2-25 once" "$(awk 'NR > 1 {print $1}' <<<"$out" | sort -u | tr '\n' ' ')" \
   "$(for ((k = 1; k <= NODES; k++)); do addr $k; done | sort | tr '\n' ' ')"
is "  --json: 24 inventories" \
   "$("$BENCHCTL" nodes --system 24xlocal --json | /usr/bin/python3 -c '
import json, sys
print(sum(1 for n in json.load(sys.stdin) if n["ok"] and n["inventory"]["host"]["hostname"]))')" $NODES

# ---- benchctl health: 24 nodes in the rounds of two -----------------------
# A node of one rank has no allreduce inside it, so the smallest check that
# runs one is two nodes (shape and signals, the pair: one round); 24 nodes
# take two rounds of pairs (health.pair_rounds), a round's twelve pairs at
# once.  The seed's budget (24 nodes in at most 3x one node's time) holds
# where each pair has its own nodes: rounds, not nodes, cost time.  Here the
# 24 emulated nodes share two cores, so a round of twelve pairs does twelve
# times the work of one: the times are printed; what is asserted is that the
# rounds do not grow with the nodes and that a round's pairs ran at once.
# (benchd on each node names it n1..n24, its node_name, as Slurm knows it.)
ms() { echo $(( $(date +%s%N) / 1000000 )); }
hsets=(--set health.allreduce_bytes=65536 --set health.tolerance=0.9)
t0=$(ms)
out=$("$BENCHCTL" health --system 24xlocal --set nodes=2 --set benchd.hosts=127.0.0.2,127.0.0.3 "${hsets[@]}" \
      2>"$tmp/health2.err"); rc=$?
t_two=$(( $(ms) - t0 ))
check "health of two nodes: exit 0 (6 where the pair strayed: $rc)" [ "$rc" = 0 -o "$rc" = 6 ]
like "  their shape and their allreduce" "$out" "^  n1 +inside -  with n2 [0-9.]+ [kMG]B/s( slow)?$"
t0=$(ms)
out=$("$BENCHCTL" health --system 24xlocal "${hsets[@]}" --json 2>"$tmp/health24.err"); rc=$?
t_all=$(( $(ms) - t0 ))
echo "# health: two nodes $t_two ms, 24 nodes $t_all ms ($(awk -v a="$t_all" -v b="$t_two" 'BEGIN { printf "%.2f", a / b }')x; the emulated nodes share $(nproc) cores)"
check "health of 24 nodes: exit 0 (6 where a pair strayed on the shared cores: $rc)" [ "$rc" = 0 -o "$rc" = 6 ]
is "  a row each (benchd's node_name is Slurm's), its shape checked, none failed, each with two partners" "$(/usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
rows = [n for n in j["nodes"] if n["verdict"] != "failed" and n["checks"] > 5 and n["node_name"] == "n%d" % (int(n["node"].split(".")[3]) - 1)]
pairs = {}
for p in j["allreduce"]["pairs"]:
    for x in (p["a"], p["b"]):
        pairs[x] = pairs.get(x, 0) + 1
print(len(j["nodes"]), len(rows), len(j["allreduce"]["nodes"]), sorted(set(pairs.values())))' <<<"$out")" "24 24 24 [2]"
hid=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["allreduce"]["run"])' <<<"$out")
is "  two rounds of twelve pairs, each round's pairs at once (each started before any ended)" "$("$BENCHCTL" status "$hid" --json | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)["trials"]
rounds = [t[0:12], t[12:24]]
print(len(t), all(max(x["start_time"] for x in r) <= min(x["end_time"] for x in r) for r in rounds),
      max(x["end_time"] for x in rounds[0]) <= min(x["start_time"] for x in rounds[1]) + 1)')" "24 True True"

# one node slow among the 24 (its slurmd, so every rank it starts, confined
# to a hundredth of a CPU by the cpu controller: 24 ranks on two cores have
# a twelfth each anyway): named by its pairs, alone.  A megabyte twenty
# times: with 64 KiB five times the twelve pairs sharing two cores stray
# by a hundred times and name several nodes
if [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
    cgv=1 cgbase=/sys/fs/cgroup/cpu
elif [ -w /sys/fs/cgroup/cgroup.procs ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cgv=2 cgbase=/sys/fs/cgroup
else
    cgv=
fi
if [ -n "$cgv" ]; then
    slow_cg=$cgbase/benchd-t0990-$$
    mkdir "$slow_cg"
    if [ "$cgv" = 1 ]; then echo 1000 > "$slow_cg/cpu.cfs_quota_us"; else echo "1000 100000" > "$slow_cg/cpu.max"; fi
    cat "$CLUSTER_24/run/slurmd-n7.pid" > "$slow_cg/cgroup.procs"
    out=$("$BENCHCTL" health --system 24xlocal --set health.allreduce_bytes=1048576 --set allreduce.iters=20 \
          --set health.tolerance=0.5 --no-report --json 2>/dev/null); rc=$?
    for p in $(cat "$slow_cg/cgroup.procs" 2>/dev/null); do echo "$p" > "$cgbase/cgroup.procs" 2>/dev/null; done
    rmdir "$slow_cg"
    is "n7 slow among 24: exit 6" "$rc" 6
    # (a healthy node's two pairs may both stray as far on the shared cores,
    # now and then: the test asks that n7 be named and be the slowest)
    is "  n7 named slow with each of its partners, its pairs the slowest of any node's" "$(/usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
named = [n.get("node_name", n["node"]) for n in j["nodes"] if any(f["check"] == "perf.pairs" for f in n["findings"])]
best = {}
for p in j["allreduce"]["pairs"]:
    for x in (p["a"], p["b"]):
        best[x] = max(best.get(x, 0), p["gbps"] or 0)
print("n7" in named, min(best, key=best.get))' <<<"$out")" "True n7"
    printf '#   n7 with: %s\n' "$(/usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)["allreduce"]
print([(p["a"], p["b"], p["gbps"]) for p in j["pairs"] if "n7" in (p["a"], p["b"])], j["pair_reference_gbps"])' <<<"$out")"
    printf '#   named: %s\n' "$(/usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print([n.get("node_name", n["node"]) for n in j["nodes"] if any(f["check"] == "perf.pairs" for f in n["findings"])])' <<<"$out")"
else
    skip 2 "no writable cpu cgroup controller to slow a node with"
fi
# ---- submit --wait: 24 ranks through Slurm ----------------------------------
logs="$tmp/logs"
t0=$SECONDS
out=$("$BENCHCTL" submit --system 24xlocal allreduce --wait --logdir "$logs" 2>&1); rc=$?
echo "# submit --wait took $((SECONDS - t0)) s"
is "submit --system 24xlocal allreduce --wait: exit 0" "$rc" 0
like "  through Slurm" "$out" "^run [^ ]+ submitted: Slurm job [0-9]+ \((libslurm|sbatch)\), 1 trial"
id=$(sed -n 's/^run \([^ ]*\) submitted.*/\1/p' <<<"$out")
is "  the trial completed on n[1-24]" "$("$BENCHCTL" status "$id" --json | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], " ".join(t["state"] + "@" + str(t["nodes"]) for t in j["trials"]))')" "completed completed@n[1-24]"
log=$("$BENCHCTL" logs "$id" --trial 1)
like "  24 ranks took part" "$log" "benchd-allreduce [^:]*: 24 ranks"
is "  the page cache was dropped on each of the 24 nodes" \
   "$(sed -n 's/^benchd: \(n[0-9]*\): page cache dropped$/\1/p' <<<"$log" | sort -u | wc -l)" $NODES
out=$("$BENCHCTL" report "$id")
like "report: the trial succeeded, 18 sizes up to 1 MiB, nothing wrong" "$out" \
     "^  1 +success +[0-9.]+ +18 +1048576 +[0-9.]+ +0"
like "  with a score" "$out" "MLPerf score: [0-9.]+ GB/s"

# ---- stage on all 24 nodes ---------------------------------------------------
mk_files "$tmp/src/train" 40 50000
mk_files "$tmp/src/val" 10 50000
printf '{"images": []}\n' > "$tmp/src/annotations.json"
t0=$SECONDS
out=$("$BENCHCTL" stage --system 24xlocal --src "$tmp/src" --dst "$local_dir/coco" --name coco \
      --token-file "$tmp/token" 2>"$tmp/stage.err"); rc=$?
echo "# stage on 24 nodes took $((SECONDS - t0)) s"
is "stage --system 24xlocal: exit 0" "$rc" 0
is "  24 nodes complete, every file copied" \
   "$(grep -cE '^127\.0\.0\.[0-9]+ +complete: 51 files, .*; 51 copied' <<<"$out")" $NODES
exact=0
for ((k = 1; k <= NODES; k++)); do check_tree "$tmp/src" "$tmp/disk/n$k/coco" >/dev/null 2>&1 && exact=$((exact + 1)); done
is "  each node's disk holds the exact tree" "$exact" $NODES
is "  and nothing is in the path outside the namespaces" "$(ls -A "$local_dir")" ""
out=$("$BENCHCTL" stage --system 24xlocal --dst "$local_dir/coco" --name coco --verify-only \
      --token-file "$tmp/token" 2>"$tmp/verify.err"); rc=$?
is "stage --verify-only on 24 nodes: exit 0" "$rc" 0
is "  24 nodes checksummed every file" \
   "$(grep -cE '^127\.0\.0\.[0-9]+ +complete: 51 files, .*; 51 checksummed' <<<"$out")" $NODES

# ---- a slurmd killed mid-run: node failure, naming the node ------------------
# a real allreduce that runs until Slurm ends it (a million of 1 KiB: hours)
out=$("$BENCHCTL" submit --system 24xlocal allreduce --logdir "$logs" --set allreduce.min_bytes=1024 \
      --set allreduce.max_bytes=1024 --set allreduce.iters=1000000 2>&1)
like "a long allreduce is submitted" "$out" "^run [^ ]+ submitted: Slurm job"
id=$(sed -n 's/^run \([^ ]*\) submitted.*/\1/p' <<<"$out")
# its 24 ranks are up once the trainer prints its header
wait_until 120 eval '"$BENCHCTL" logs "$id" --trial 1 2>/dev/null | grep -q "benchd-allreduce .*: 24 ranks"'
like "  it runs on the 24 nodes" "$("$BENCHCTL" status "$id")" "^  1 +running +n\[1-24\]"
victim=n17
t0=$SECONDS
bash "$CLUSTER" kill-node $victim "$CLUSTER_24" >/dev/null 2>&1
out=$(timeout 240 "$BENCHCTL" status "$id" --watch); rc=$?
echo "# the node failure was reported $((SECONDS - t0)) s after the kill"
is "status --watch returns once Slurm notices" "$rc" 0
like "the run ends as a node failure naming $victim" "$out" \
     "allreduce on 24xlocal, node_fail \(NodeDown: node $victim \(Not responding\)\)"
like "  and so does its trial" "$out" "^  1 +node_fail +n\[1-24\] .*NodeDown: node $victim \(Not responding\)$"
# health with the node down (Slurm says: not responding): failed after
# --start-timeout, not waited for; --drain drains exactly it
t0=$SECONDS
out=$("$BENCHCTL" health --system 24xlocal "${hsets[@]}" --start-timeout 5 --drain --no-report --json \
      2>"$tmp/down.err"); rc=$?
is "health with $victim down among 24: exit 7, in $((SECONDS - t0)) s" "$rc" 7
is "  $victim, and only $victim, failed: Slurm holds it down; drained" "$(/usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print([(n.get("node_name", n["node"]), [f["check"] for f in n["findings"] if f["level"] == "failed"], n["drain"]["drained"])
       for n in j["nodes"] if n["verdict"] == "failed"])' <<<"$out")" "[('$victim', ['slurm.state'], True)]"
is "  Slurm drains $victim alone" "$(sinfo -h -N -t drain,drained,draining -o %N | sort -u | tr '\n' ' ')" "$victim "
# resumed (no longer drained), then its slurmd started: idle again
scontrol update NodeName=$victim State=RESUME
out=$(bash "$CLUSTER" start-node $victim "$CLUSTER_24" 2>&1); rc=$?
is "$victim's slurmd started again: back in the cluster" "$rc" 0

# ---- a benchd stopped mid-stage ---------------------------------------------
stopped=8                     # node n8, 127.0.0.9
a=$(addr $stopped)
"$BENCHCTL" stage --system 24xlocal --src "$tmp/src" --dst "$local_dir/slow" --name slow --bwlimit 0.25 \
    --token-file "$tmp/token" >"$tmp/slow.out" 2>"$tmp/slow.err" &
spid=$!
pids+=("$spid")
wait_until 30 bash -c "[ \$(find '$tmp/disk/n$stopped/slow' -name 'f*.bin' 2>/dev/null | wc -l) -ge 3 ]"
stop_pid "${bpid[$stopped]}"
done_then=$(find "$tmp/disk/n$stopped/slow" -name 'f*.bin' | wc -l)
t0=$SECONDS
wait "$spid"; rc=$?
echo "# benchd of $a stopped with $done_then of 50 files staged; benchctl ended $((SECONDS - t0)) s later"
like "  its stage was suspended" "$(cat "$tmp/benchd-n$stopped.log")" "dataset 'slow': stage suspended"
is "a benchd stopped mid-stage: exit 4 (a node unreachable)" "$rc" 4
like "  the node is named with why" "$(cat "$tmp/slow.out")" "^$a +failed: .*\(no answer for 3[0-9] s\)"
like "  on stderr too" "$(cat "$tmp/slow.err")" "benchctl: stage: node $a: "
is "  the other 23 nodes complete" \
   "$(grep -vE "^$a " "$tmp/slow.out" | grep -cE '^127\.0\.0\.[0-9]+ +complete: 51 files, .*; 51 copied')" 23
exact=0
for ((k = 1; k <= NODES; k++)); do
    ((k == stopped)) && continue
    check_tree "$tmp/src" "$tmp/disk/n$k/slow" >/dev/null 2>&1 && exact=$((exact + 1))
done
is "  with the exact tree on their disks" "$exact" 23
start_benchd $stopped
wait_until 20 curl -sf "http://$a:$BD_PORT/v1/health"
like "started again, its benchd resumes the stage" "$(cat "$tmp/benchd-n$stopped.log")" \
     "dataset 'slow': resuming the stage"
check "  and completes it" wait_until 60 bash -c \
      "curl -s http://$a:$BD_PORT/v1/datasets/slow | grep -q '\"state\": *\"complete\"'"
check "  with the exact tree" check_tree "$tmp/src" "$tmp/disk/n$stopped/slow"
out=$("$BENCHCTL" stage --system 24xlocal --dst "$local_dir/slow" --name slow --verify-only \
      --token-file "$tmp/token" 2>"$tmp/verify.err"); rc=$?
is "then --verify-only on the 24: exit 0" "$rc" 0
is "  24 complete" "$(grep -cE '^127\.0\.0\.[0-9]+ +complete: 51 files, .*; 51 checksummed' <<<"$out")" $NODES

# ---- sbatch --test-only: 24xlocal here, 24xp3dn in p3dn's shape ---------------
for w in ssd maskrcnn allreduce; do
    "$BENCHCTL" render --system 24xlocal $w --set paths.logs="$logs" -o "$tmp/24xlocal-$w.sbatch"
    like "24xlocal $w: sbatch --test-only would run it on n[1-24]" \
         "$(sbatch --test-only "$tmp/24xlocal-$w.sbatch" 2>&1)" "Job [0-9]+ to start at .* on nodes n\[1-24\]"
    # 24xp3dn is launched by mpirun from a hostfile; under Slurm it would be
    # this script: 24 nodes x 8 tasks, gpu:8, exclusive
    "$BENCHCTL" render --system 24xp3dn $w --set launcher=slurm --set paths.logs="$logs" -o "$tmp/24xp3dn-$w.sbatch"
done
is "24xp3dn's script asks for 24 nodes x 8 tasks and 8 GPUs each" \
   "$(grep -E '^#SBATCH --(nodes|ntasks-per-node|ntasks|gres)=' "$tmp/24xp3dn-ssd.sbatch" | tr '\n' ' ')" \
   "#SBATCH --nodes=24 #SBATCH --ntasks-per-node=8 #SBATCH --ntasks=192 #SBATCH --gres=gpu:8 "
out=$(sbatch --test-only "$tmp/24xp3dn-ssd.sbatch" 2>&1); rc=$?
is "  refused by these nodes of 1 CPU and 4 GPUs" "$([ "$rc" -ne 0 ] && echo refused)" refused
like "  as a configuration they do not have" "$out" "Requested node configuration is not available"
bash "$CLUSTER" down "$CLUSTER_24" >/dev/null 2>&1
t0=$SECONDS
if envline=$(BENCHD_CLUSTER_CPUS=96 BENCHD_CLUSTER_GPUS=8 bash "$CLUSTER" up "$P3DN_DIR" 2>"$tmp/up-p3dn.err" | tail -1); then
    eval "$envline"
    _t_result 0 "the same 24 nodes started again as p3dn: 96 CPUs, 8 GPUs each ($((SECONDS - t0)) s)"
    is "  sinfo says so" "$(timeout 20 sinfo -h -N -p debug -o '%t %c %G' | sort | uniq -c | sed 's/^ *//')" \
       "24 idle 96 gpu:8"
    for w in ssd maskrcnn allreduce; do
        like "24xp3dn $w (launcher=slurm): sbatch --test-only accepts it on n[1-24]" \
             "$(sbatch --test-only "$tmp/24xp3dn-$w.sbatch" 2>&1)" "Job [0-9]+ to start at .* on nodes n\[1-24\]"
    done
    "$BENCHCTL" render --system 24xp3dn ssd --set launcher=slurm --set nodes=25 --set paths.logs="$logs" \
        -o "$tmp/25.sbatch"
    out=$(sbatch --test-only "$tmp/25.sbatch" 2>&1); rc=$?
    is "  25 such nodes are refused" "$([ "$rc" -ne 0 ] && echo refused)" refused
    like "  as nodes it does not have" "$out" "Requested node configuration is not available"
else
    sed 's/^/# /' "$tmp/up-p3dn.err" | tail -20
    _t_result 1 "the same 24 nodes started again as p3dn: 96 CPUs, 8 GPUs each"
fi

# ---- teardown, time and memory -----------------------------------------------
t0=$SECONDS
cancel_runs
for p in "${pids[@]}"; do stop_pid "$p"; done
bash "$CLUSTER" down "$P3DN_DIR" >/dev/null 2>&1
bash "$CLUSTER" down "$CLUSTER_24" >/dev/null 2>&1
torn_down=1
echo "# teardown took $((SECONDS - t0)) s"
elapsed=$((SECONDS - t_start))
stop_pid "$sampler"
sampler=
is "no process of the test is left (by its directory on their command line)" \
   "$(pgrep -f -- "$tmp/" | tr '\n' ' ')" ""
mem=$(/usr/bin/python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(m["rss_bytes"] >> 20, m["rss_processes"], m["rss_at_s"], m["pss_bytes"] >> 20, m["pss_processes"],
      m["pss_at_s"], m["samples"])' "$tmp/mem.json" 2>/dev/null)
read -r rss_mib rss_n rss_at pss_mib pss_n pss_at samples <<<"${mem:-0 0 0 0 0 0 0}"
echo "# time: $elapsed s for the whole test on $(nproc) cores"
echo "# peak memory of the test's processes ($samples samples): RSS $rss_mib MiB ($rss_n processes, at $rss_at s)," \
     "PSS $pss_mib MiB ($pss_n processes, at $pss_at s)"
check "the whole test took under 5 minutes ($elapsed s)" test "$elapsed" -lt 300
check "  its processes' memory stayed under 8 GiB (RSS $rss_mib MiB)" test "$rss_mib" -gt 0 -a "$rss_mib" -lt 8192
done_testing
