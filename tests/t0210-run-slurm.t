#!/bin/bash
# The same flow on the real local Slurm cluster (4xlocal: 4 emulated nodes x 4
# ranks): submit with --wait, status, logs; cancel; a node that dies; Slurm
# forgetting a finished job; the controller down.
. "${srcdir:-.}/tests/lib.sh"
# a node that stops answering is down after 10 s (the cluster's default: 30)
export BENCHD_CLUSTER_SLURMD_TIMEOUT=10
cluster_test 17017
logs="$tmp/logs"
ALLREDUCE="$top_builddir/benchd-allreduce"
bin="$tmp/bin"; mkdir -p "$bin"

# 1. allreduce, 2 trials, --wait: 16 ranks over n1..n4
if [ -x "$ALLREDUCE" ]; then
    out=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 2 --logdir "$logs" \
          --set allreduce.max_bytes=1048576 --set allreduce.iters=3 --wait 2>&1); rc=$?
    is "submit --wait on Slurm exits 0" "$rc" 0
    like "submitted through libslurm or sbatch" "$out" "^run [^ ]+ submitted: Slurm job [0-9]+ \((libslurm|sbatch)\), 2 trials"
    id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted.*/\1/p')
    json=$("$BENCHCTL" status "$id" --json)
    is "both trials completed on n[1-4]" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], " ".join(t["state"] + "@" + str(t["nodes"]) for t in j["trials"]))')" \
       "completed completed@n[1-4] completed@n[1-4]"
    out=$("$BENCHCTL" logs "$id" --trial 1)
    like "the trial log shows the cache drop on each node" "$out" "benchd: n3: "
    like "and the allreduce table" "$out" "1048576 +262144 +float"
    like "16 ranks took part" "$out" "ranks: 16|nranks 16|16 ranks"
    out=$("$BENCHCTL" report "$id")
    is "report: both trials succeeded with numbers" "$(grep -Ec '^  [12] +success +[0-9.]+ +18 +1048576 +[0-9.]+ +0' <<<"$out")" 2
    like "report: the score" "$out" "MLPerf score: [0-9.]+ GB/s"
else
    echo "# $ALLREDUCE not built: real allreduce flow skipped"
fi

# 2. cancel a running submission
printf '#!/bin/sh\nsleep 300\n' > "$bin/benchd-allreduce"; chmod +x "$bin/benchd-allreduce"
out=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 2 --logdir "$logs" --set paths.bin="$bin")
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\1/p')
job=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\2/p')
wait_until 120 eval '"$BENCHCTL" status "$id" | grep -q "^  1 *running"'
like "trial 1 running" "$("$BENCHCTL" status "$id")" "^  1 +running +n\[1-4\]"
check "cancel exits 0" "$BENCHCTL" cancel "$id"
like "the run is recorded as cancelled" "$("$BENCHCTL" status "$id")" "allreduce on 4xlocal, cancelled"
gone=yes
wait_until 60 eval '[ -z "$(squeue -h -j "$job" 2>/dev/null)" ]' || gone=no
is "Slurm no longer runs the job" "$gone" yes

# 2b. what a Slurm run keeps: the script and configuration in its run
# directory and in the store, the script the controller holds, and the run
# id in the job's comment
out=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin")
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\1/p')
job=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\2/p')
check "the rendered script is kept in the run directory" test -x "$BENCHD_HOME/runs/$id/script.sh"
check "  and the resolved configuration" /usr/bin/python3 -c "import json; json.load(open('$BENCHD_HOME/runs/$id/config.json'))"
scontrol write batch_script "$job" "$tmp/held.sh" >/dev/null
is "  the script is the one the controller holds" "$(cksum < "$BENCHD_HOME/runs/$id/script.sh")" "$(cksum < "$tmp/held.sh")"
is "  and the one render --run prints" "$("$BENCHCTL" render --run "$id" | cksum)" "$(cksum < "$tmp/held.sh")"
is "show --run: the configuration it ran with" \
   "$("$BENCHCTL" show --run "$id" --json | /usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["name"], j["run"], j["paths"]["bin"])')" \
   "4xlocal $id $bin"
is "the job's comment names the run" "$(squeue -h -j "$job" -o %k)" "benchd run $id"
check "  cancel" "$BENCHCTL" cancel "$id"

# 3. a node dies during a run: node failure, not hanging, not success
out=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 2 --logdir "$logs" --set paths.bin="$bin")
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted.*/\1/p')
wait_until 120 eval '"$BENCHCTL" status "$id" | grep -q "^  1 *running"'
bash "$CLUSTER" kill-node n2 "$BENCHD_CLUSTER_DIR" >/dev/null 2>&1
out=$(timeout 240 "$BENCHCTL" status "$id" --watch); rc=$?
is "--watch returns once the node failure is noticed" "$rc" 0
like "the run ends as node failure" "$out" "allreduce on 4xlocal, node_fail"
unlike "  without an exit code (Slurm's 0 is none)" "$out" "node_fail, exit code"
# mpirun may notice the lost node first (the trial fails) or Slurm does (node_fail);
# either way no trial may count as completed and the failure reaches a trial
like "a trial ends in node failure" "$out" "^  [12] +node_fail"
check_fails "no trial counts as completed" grep -Eq "^  [12] +completed" <<<"$out"
bash "$CLUSTER" start-node n2 "$BENCHD_CLUSTER_DIR" >/dev/null 2>&1

# 4. Slurm forgets a job (MinJobAge) that benchctl never saw ending: the job
# output decides: the trials' closing line, else what slurmstepd wrote there
# when it ended the job (here scancel behind benchctl's back)
out=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin")
cid=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\1/p')
cjob=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\2/p')
wait_until 120 eval '[ "$(squeue -h -j "$cjob" -o %T)" = RUNNING ] && grep -q "trial 1/1 started" "$logs/${cid}_slurm-$cjob.out"'
scancel "$cjob"
printf '#!/bin/sh\necho done\n' > "$bin/benchd-allreduce"
out=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 2 --logdir "$logs" --set paths.bin="$bin")
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\1/p')
job=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\2/p')
forgot=no
for _ in $(seq 120); do
    ! scontrol show job "$job" >/dev/null 2>&1 && ! scontrol show job "$cjob" >/dev/null 2>&1 && { forgot=yes; break; }
    sleep 1
done
is "the controller forgot the jobs" "$forgot" yes
like "status still answers from the job output" "$("$BENCHCTL" status "$id")" "allreduce on 4xlocal, completed"
out=$("$BENCHCTL" status "$cid")
like "a job cancelled behind benchctl's back: cancelled, not incomplete" "$out" "allreduce on 4xlocal, cancelled"
like "  the reason quotes slurmstepd" "$out" "the job output says: \\*\\*\\* JOB $cjob ON n[1-4] CANCELLED AT "
like "  and its trial was cancelled" "$out" "^  1 +cancelled"

# the controller refuses the job: one line with its reasons
err=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 1 --logdir "$logs" --set slurm.partition=nope 2>&1); rc=$?
is "a partition the controller does not have: exit 1" "$rc" 1
like "  the controller's words" "$err" "^benchctl: cannot submit the job: .*invalid partition specified: nope"
is "  in one line" "$(printf '%s\n' "$err" | wc -l)" 1

# a results store that cannot be opened, found while the job was being
# submitted (benchctl opens it beside the submission): the job is cancelled
mkdir -p "$tmp/badhome"
head -c 8192 /dev/urandom > "$tmp/badhome/benchd.db"
err=$(BENCHD_HOME="$tmp/badhome" "$BENCHCTL" submit --system 4xlocal allreduce --runs 1 --logdir "$logs" 2>&1); rc=$?
is "a store that is not a database: exit 1" "$rc" 1
like "  says why, and that the job was cancelled" "$err" \
     "^benchctl: results store $tmp/badhome/benchd.db: open: file is not a database; the run could not be recorded: its Slurm job [0-9]+ was cancelled$"
bjob=$(printf '%s\n' "$err" | sed -n 's/.*its Slurm job \([0-9]*\) was cancelled$/\1/p')
is "  Slurm holds it as cancelled" "$(squeue -h -t all -j "${bjob:-0}" -o %T 2>/dev/null)" CANCELLED
is "  no run directory is left" "$(find "$tmp/badhome/runs" -mindepth 1 | wc -l)" 0

# 5. the controller is down: a clear error naming it, nothing recorded
# a job left pending (the nodes drained) stays in the controller's saved
# state while the controller is down and back (a running job's steps may
# not outlive a long outage)
printf '#!/bin/sh\nsleep 300\n' > "$bin/benchd-allreduce"
scontrol update nodename=ALL state=drain reason="t0210 pending job"
out=$("$BENCHCTL" submit --system 4xlocal allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin")
fid=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\1/p')
fjob=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted: Slurm job \([0-9]*\).*/\2/p')
wait_until 30 eval '[ "$(squeue -h -j "$fjob" -o %T)" = PENDING ]'
n=$("$BENCHCTL" runs | tail -n +2 | wc -l)
ndirs=$(find "$BENCHD_HOME/runs" -mindepth 1 -maxdepth 1 | wc -l)
ctld=$(cat "$BENCHD_CLUSTER_DIR/run/slurmctld.pid")
kill "$ctld"
wait_until 60 eval '! kill -0 "$ctld"'
err=$("$BENCHCTL" submit --system 4xlocal allreduce --logdir "$logs" 2>&1); rc=$?
is "submit with the controller down: exit 4 (unreachable)" "$rc" 4
like "  names the controller" "$err" "cannot reach the Slurm controller [^ ]+"
is "  in one line" "$(printf '%s\n' "$err" | wc -l)" 1
t0=$SECONDS
is "  and records nothing" "$("$BENCHCTL" runs | tail -n +2 | wc -l)" "$n"
asked=$((SECONDS - t0))   # runs asks for the pending job: one wait for the controller
is "  nor leaves a run directory" "$(find "$BENCHD_HOME/runs" -mindepth 1 -maxdepth 1 | wc -l)" "$ndirs"
# cancel while the controller is down: an error; --force records it
# cancelled; once the controller is back, cancel stops the job for real
t0=$SECONDS
err=$("$BENCHCTL" cancel "$fid" 2>&1); rc=$?
is "cancel with the controller down: exit 4" "$rc" 4
# cancel asks for the job, then would cancel it: the controller that did not
# answer the first call is not waited for again (one wait, not two)
ok=$(( SECONDS - t0 <= asked + 4 ))
is "  one wait for the controller, not one a call (${asked} s, then $((SECONDS - t0)) s)" "$ok" 1
like "  names the controller" "$err" "cannot reach the Slurm controller"
err=$("$BENCHCTL" cancel --force "$fid" 2>&1); rc=$?
is "cancel --force with the controller down: exit 0" "$rc" 0
like "  recorded cancelled, not stopped" "$("$BENCHCTL" status "$fid")" "allreduce on 4xlocal, cancelled .*--force, not stopped"
bash "$CLUSTER" up "$BENCHD_CLUSTER_DIR" >/dev/null 2>&1
still=yes
wait_until 60 eval '[ "$(squeue -h -j "$fjob" -o %T 2>/dev/null)" = PENDING ]' || still=no
is "the controller back: the job is still there" "$still" yes
[ "$still" = yes ] || { squeue -j "$fjob" 2>&1; grep "JobId=$fjob" "$BENCHD_CLUSTER_DIR/log/slurmctld.log"; } | sed 's/^/# /'
out=$("$BENCHCTL" cancel "$fid" 2>&1); rc=$?
is "  cancel again: exit 0" "$rc" 0
like "  says it stopped the job now" "$out" "^run $fid cancelled"
gone=yes
wait_until 60 eval '[ -z "$(squeue -h -j "$fjob" 2>/dev/null)" ]' || gone=no
is "  Slurm no longer runs the job" "$gone" yes
like "  the record says so" "$("$BENCHCTL" status "$fid")" "allreduce on 4xlocal, cancelled .*stopped after --force"
like "  a further cancel: already ended" "$("$BENCHCTL" cancel "$fid")" "already ended: cancelled"
done_testing
