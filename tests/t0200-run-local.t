#!/bin/bash
# submit, status, logs, runs, cancel and their errors on the 'local' system
# (no Slurm): the script runs detached, the results store records it.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
own_runs     # its runs, stopped at the end by their recorded process ids
logs="$tmp/logs"
set_fast=(--set allreduce.max_bytes=65536 --set allreduce.iters=2 --set allreduce.warmup=1)
ALLREDUCE="$top_builddir/benchd-allreduce"

err=$("$BENCHCTL" status 2>&1); rc=$?
is "status before any run: exit 1" "$rc" 1
like "  saying there is none yet" "$err" "^benchctl: no runs recorded yet in $BENCHD_HOME/benchd.db$"

# 1. the real allreduce benchmark, two trials, --wait
if [ -x "$ALLREDUCE" ]; then
    out=$("$BENCHCTL" submit --system local allreduce --runs 2 --logdir "$logs" "${set_fast[@]}" --wait 2>&1); rc=$?
    is "submit --wait exits 0 when every trial completed" "$rc" 0
    like "submit prints the run id and process" "$out" "^run [0-9]{8}-[0-9]{6}-[0-9a-f]{4} started: process [0-9]+, 2 trials"
    like "--wait shows the trials" "$out" "^  2 +completed"
    like "  and its line: how the trials ended" "$out" "^run [^ ]+: completed, 2 trials: 2 completed, elapsed "
    id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started.*/\1/p')
    json=$("$BENCHCTL" status "$id" --json)
    is "status --json: run and both trials completed with exit code 0" \
       "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], j["exit_code"], " ".join(t["state"] + ":" + str(t["exit_code"]) for t in j["trials"]))')" \
       "completed 0 completed:0 completed:0"
    out=$("$BENCHCTL" logs "$id")
    like "logs prints trial 1" "$out" "^==> trial 1: .*_1.log <=="
    like "logs prints trial 2" "$out" "^==> trial 2: .*_2.log <=="
    like "the trial log holds the allreduce table" "$out" "65536 +16384 +float"
    check "logs copied into the run directory" test -f "$BENCHD_HOME/runs/$id/logs/${id}_2.log"
    check "the rendered script is kept" test -x "$BENCHD_HOME/runs/$id/script.sh"
    check "the resolved configuration is kept" /usr/bin/python3 -c "import json; json.load(open('$BENCHD_HOME/runs/$id/config.json'))"
    is "render --run prints the script the store recorded" "$("$BENCHCTL" render --run "$id" | cksum)" "$(cksum < "$BENCHD_HOME/runs/$id/script.sh")"
    is "show --run --json the configuration it recorded" \
       "$("$BENCHCTL" show --run "$id" --json | /usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["name"], j["run"], j["launcher"], j["allreduce"]["max_bytes"])')" \
       "local $id local 65536"
    out=$("$BENCHCTL" logs "$id" --trial 2)
    check_fails "--trial 2 prints only trial 2" grep -q "trial 1:" <<<"$out"
    out=$("$BENCHCTL" runs)
    like "runs lists the run" "$out" "^$id +local +allreduce +completed +2 "
    out=$("$BENCHCTL" report "$id" --reference)
    is "report: both trials succeeded with numbers" "$(grep -Ec '^  [12] +success +[0-9.]+ +14 +65536 +[0-9.]+ +0' <<<"$out")" 2
    like "report: the score" "$out" "MLPerf score: [0-9.]+ GB/s \(mean bus bandwidth at the largest size over 2 trials\)"
    like "report --reference says when nothing was published" "$out" "no published result for allreduce on local"
    json=$("$BENCHCTL" report "$id" --json)
    is "report --json: score equals the mean of the trials' bus bandwidth" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)[0]
b = [t["busbw_gbps"] for t in r["trials"]]
print(abs(r["score"]["value"] - sum(b) / len(b)) < 1e-9, r["trials"][0]["status"], r["trials"][1]["sizes"])')" "True success 14"
    is "report --csv: a header and a row per trial" "$("$BENCHCTL" report "$id" --csv | wc -l)" 3
    # the copies in the run directory outlive the log directory's
    log2=$(ls "$logs/${id}_2.log") && cp "$log2" "$tmp/log2.keep"
    : > "$log2"
    out=$("$BENCHCTL" logs "$id" --trial 2)
    like "a log truncated since it was collected: logs shows the copy" "$out" \
         "^==> trial 2: .*/runs/$id/logs/${id}_2.log \(collected earlier; .* is shorter now\) <=="
    check "  which it leaves whole" cmp "$BENCHD_HOME/runs/$id/logs/${id}_2.log" "$tmp/log2.keep"
    rm -f "$log2"
    like "a log gone from the log directory: logs says so" "$("$BENCHCTL" logs "$id" --trial 2)" "is gone\) <=="
    is "  and report reads the copy" "$("$BENCHCTL" report "$id" | grep -Ec '^  [12] +success +[0-9.]+ +14 +65536 ')" 2
    cp "$tmp/log2.keep" "$log2"
    # a relative --logdir is the current directory's, recorded absolute
    mkdir -p "$tmp/cwd"
    out=$(cd "$tmp/cwd" && "$BENCHCTL" submit --system local allreduce --runs 1 --logdir rel "${set_fast[@]}" --wait 2>&1)
    id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started.*/\1/p')
    check "a relative --logdir is taken from the current directory" test -s "$tmp/cwd/rel/${id}_1.log"
    is "  and recorded absolute" "$("$BENCHCTL" show --run "$id" --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["logs"])')" "$tmp/cwd/rel"
    is "  so report finds the log from elsewhere" "$(cd / && "$BENCHCTL" report "$id" | grep -Ec '^  1 +success ')" 1
else
    echo "# $ALLREDUCE not built: real allreduce flow skipped"
fi

# stand-ins for the trainer, to make trials fail or last
bin="$tmp/bin"; mkdir -p "$bin"
# (its last words a moment after the rest: with two ranks the lines of both
# interleave, and under load both ranks' "working on it" came last, the
# error out of the 12 lines shown)
printf '#!/bin/sh\necho "working on it"\nsleep 0.3\necho "out of cheese" >&2\nexit 3\n' > "$bin/benchd-allreduce"
chmod +x "$bin/benchd-allreduce"

# 2. a failing trial: state failed, exit code and the last lines of its log
out=$("$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin" --wait 2>&1); rc=$?
is "submit --wait exits 5 when a trial failed" "$rc" 5
like "the failed trial is shown with its exit status" "$out" "^  1 +failed .* 3 +the trainer exited with an error"
like "with the last lines of its log" "$out" "\| .*out of cheese"
like "  its line: no trial completed, one failed" "$out" "^run [^ ]+: failed, 1 trial: 0 completed, 1 failed, elapsed "
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started.*/\1/p')
out=$("$BENCHCTL" report "$id")
like "report of a failed trial: no run_start, no score" "$out" "^  1 +no run .*no run_start in the log"
like "  and no score" "$out" "MLPerf score: INVALID"

# 3. cancel a running submission
printf '#!/bin/sh\nsleep 300\n' > "$bin/benchd-allreduce"
out=$("$BENCHCTL" submit --system local allreduce --runs 2 --logdir "$logs" --set paths.bin="$bin"); rc=$?
is "submit without --wait returns at once" "$rc" 0
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started: process \([0-9]*\).*/\1/p')
pid=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started: process \([0-9]*\).*/\2/p')
wait_until 120 grep -q "trial 1/2 started" "$BENCHD_HOME/runs/$id/job.out"
like "status shows trial 1 running" "$("$BENCHCTL" status "$id")" "^  1 +running"
out=$("$BENCHCTL" report "$id")
like "report of a running run: the running trial is running" "$out" "^  1 +running .*no run_stop yet"
like "  the next one pending" "$out" "^  2 +pending .*not started yet"
like "  and no score yet" "$out" "MLPerf score: no score: the run has not ended \(2 of 2 trials still to finish\)"
like "  the run records its process: host, boot, PID namespace, start time" "$(cat "$BENCHD_HOME/runs/$id/process")" \
     "^host=$(hostname)
machine=.*
boot=$(cat /proc/sys/kernel/random/boot_id)
pidns=$(stat -L -c %i /proc/self/ns/pid)
pid=$pid
start=[1-9][0-9]*$"
# the host renamed meanwhile (a UTS namespace with another name, the same
# kernel): still this host's run
if unshare --uts true 2>/dev/null; then
    renamed() { unshare --uts bash -c 'hostname benchd-renamed && exec "$@"' renamed "$@"; }
    out=$(renamed "$BENCHCTL" status "$id" 2>&1)
    like "status after the host was renamed: running" "$out" "^  1 +running"
    unlike "  with no word of another host" "$out" "another host"
else
    skip 2 "no UTS namespaces here"
fi
# seen from another container sharing $BENCHD_HOME (a PID namespace: the
# process id means nothing there), the run is left as recorded
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    other() { unshare --pid --fork --mount-proc "$@"; }
    out=$(other "$BENCHCTL" status "$id" 2>&1)
    like "status in another container: the run is still running" "$out" "allreduce on local, running"
    like "  saying where it runs" "$out" "run $id: it runs on another host \(see 'host'\)"
    id2=$("$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin" |
          sed -n 's/^run \([^ ]*\) started.*/\1/p')
    out=$(other "$BENCHCTL" runs 2>&1)
    like "runs in another container: still running" "$out" "$id .*running"
    like "  both of them" "$out" "$id2 .*running"
    is "  with one warning for the two" "$(grep -c 'it runs on another host' <<<"$out")" 1
    out=$(other "$BENCHCTL" cancel --force "$id2" 2>&1); rc=$?
    is "cancel --force in another container: exit 0" "$rc" 0
    like "  warning that nothing was stopped" "$out" "^benchctl: warning: run $id2: its process [0-9]+ is another host's; recorded as cancelled without stopping it \(--force\)"
    like "  recorded with that reason" "$("$BENCHCTL" status "$id2")" \
         "allreduce on local, cancelled .*cancelled by benchctl --force, not stopped: its process [0-9]+ is another host's"
    pid2=$(sed -n 's/^pid=//p' "$BENCHD_HOME/runs/$id2/process")
    check "  its processes still run" kill -0 "$pid2"
    pkill -KILL -s "$pid2"
    out=$(other "$BENCHCTL" cancel "$id" 2>&1); rc=$?
    is "cancel in another container: exit 1" "$rc" 1
    like "  naming the host to cancel it on" "$out" \
         "run $id was started on host '$(hostname)' \(another container or PID namespace\): cancel it there"
    like "  the run still runs" "$("$BENCHCTL" status "$id")" "^  1 +running"
else
    skip 12 "no PID namespaces here"
fi
# a run without that record (started by an older benchctl) is judged by
# its host name
if unshare --uts true 2>/dev/null; then
    mv "$BENCHD_HOME/runs/$id/process" "$tmp/process"
    out=$(unshare --uts bash -c 'hostname benchd-elsewhere && exec "$@"' other "$BENCHCTL" status "$id" 2>&1)
    like "no record, another host name: another host's run" "$out" "run $id: it runs on another host \(see 'host'\)"
    like "  same host name: this host's" "$("$BENCHCTL" status "$id")" "^  1 +running"
    mv "$tmp/process" "$BENCHD_HOME/runs/$id/process"
else
    skip 2 "no UTS namespaces here"
fi
# a record without a boot id (a kernel without one): by host name too
cp "$BENCHD_HOME/runs/$id/process" "$tmp/process"
sed -i 's/^boot=.*/boot=/' "$BENCHD_HOME/runs/$id/process"
like "a record without a boot id: still this host's running run" "$("$BENCHCTL" status "$id")" "^  1 +running"
mv "$tmp/process" "$BENCHD_HOME/runs/$id/process"
"$BENCHCTL" status "$id" --watch --json > "$tmp/watch.jsonl" 2>"$tmp/watch.err" &
watcher=$!
wait_until 30 test -s "$tmp/watch.jsonl"
check "cancel exits 0" "$BENCHCTL" cancel "$id"
like "status says cancelled" "$("$BENCHCTL" status "$id")" "allreduce on local, cancelled"
wait_until 30 eval '! kill -0 "$watcher"'
wait "$watcher"; rc=$?
is "status --watch --json ends with the run: exit 0" "$rc" 0
err=$(timeout 30 "$BENCHCTL" logs "$id" --follow --trial 2 2>&1); rc=$?
is "logs --follow of a trial that never started: exit 1" "$rc" 1
like "  saying the run ended before it wrote a log" "$err" "^benchctl: run $id ended \(cancelled: cancelled by benchctl\) before the trial wrote a log$"
out=$("$BENCHCTL" status "$id" --watch)
like "status --watch of the cancelled run: one running trial cancelled, one never started" "$out" \
     "^run $id: cancelled, 2 trials: 0 completed, 1 cancelled, 1 never started, elapsed "
is "  a JSON line per change, running then cancelled" "$(/usr/bin/python3 -c '
import json, sys
print(" ".join(json.loads(l)["state"] for l in open(sys.argv[1])))' "$tmp/watch.jsonl")" "running cancelled"
gone=yes
wait_until 60 eval '! kill -0 "$pid"' || gone=no
is "the run's processes are gone" "$gone" yes
like "cancel of an ended run says so" "$("$BENCHCTL" cancel "$id")" "already ended: cancelled"

# a record from before the host restarted (another boot id), and a process
# id now taken by another process (another start time): the run's process
# is gone, whatever now has its id
start_run() {   # start_run [SUBMIT ARGS...]: a run in the background; sets id and pid once trial 1 started
    out=$("$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin" "$@")
    id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started: process \([0-9]*\).*/\1/p')
    pid=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started: process \([0-9]*\).*/\2/p')
    wait_until 120 grep -q "trial 1/1 started" "$BENCHD_HOME/runs/$id/job.out"
}
for what in boot start; do
    start_run
    rec="$BENCHD_HOME/runs/$id/process"
    if [ $what = boot ]; then
        sed 's/^boot=.*/boot=00000000-0000-4000-8000-000000000000/' "$rec" > "$rec.new"
        why="the host restarted since it started; process $pid ended without an exit status"
    else
        sed 's/^start=.*/start=1/' "$rec" > "$rec.new"
        why="process $pid ended without an exit status\)"
    fi
    mv "$rec.new" "$rec"
    out=$("$BENCHCTL" status "$id")
    like "process record of another $what: the run is incomplete" "$out" "allreduce on local, incomplete"
    like "  saying why" "$out" "$why"
    like "  cancel: it ended already" "$("$BENCHCTL" cancel "$id")" "already ended: incomplete"
    check "  and its process was left alone" kill -0 "$pid"
    pkill -KILL -s "$pid"
done

# a damaged process record: named, and the run judged by host name
start_run
sed -i 's/^pidns=.*/pidns=xyz/' "$BENCHD_HOME/runs/$id/process"
out=$("$BENCHCTL" status "$id")
like "a damaged process record: still running" "$out" "^  1 +running"
like "  naming the file and field" "$out" "runs/$id/process: field 'pidns': not valid; judged by host name"
printf 'abc\n' > "$BENCHD_HOME/runs/$id/exit_status"
out=$("$BENCHCTL" status "$id")
like "a damaged exit status: incomplete, naming the file" "$out" \
     "allreduce on local, incomplete .*runs/$id/exit_status: 'abc' is not an exit status"
pkill -KILL -s "$pid"

# cancel marks the run before it signals it: a look while its processes die
# (the mark there, the processes gone, the store not yet updated) sees a
# cancelled run, not one that ended without an exit status
start_run
date +%s > "$BENCHD_HOME/runs/$id/cancelled"
# again until none is left: a process the run forks while the first pkill
# reads the process table escapes it (under ASan in CI one did, and the run
# still ran 30 s later)
wait_until 30 eval 'pkill -KILL -s "$pid"; ! pgrep -s "$pid" >/dev/null'
like "a run stopped by a cancel not yet recorded: cancelled, not incomplete" "$("$BENCHCTL" status "$id")" \
     "allreduce on local, cancelled"

# the run goes on while any process of its session does, though the
# wrapper that records the exit status was killed; its output decides
printf '#!/bin/sh\nsleep 5\nexit 0\n' > "$bin/benchd-allreduce"
start_run
kill -KILL "$pid"
like "the run's first process killed: the run still runs" "$("$BENCHCTL" status "$id")" "^  1 +running"
wait_until 120 grep -q "trials succeeded" "$BENCHD_HOME/runs/$id/job.out"
wait_until 60 eval '[ "$(ps -o stat= -s "$pid" | grep -vc Z)" = 0 ]'
out=$("$BENCHCTL" status "$id")
like "  then completed, by its output's closing line" "$out" \
     "allreduce on local, completed .*ended without an exit status; the job output says 1 of 1 trials succeeded"
like "  the trial too" "$out" "^  1 +completed"
e1=$(printf '%s\n' "$out" | awk '$1 == 1 {print $4}')
sleep 1.2
is "  its elapsed time stays put" "$(printf '%s\n' "$("$BENCHCTL" status "$id")" | awk '$1 == 1 {print $4}')" "$e1"

# cancel stops every process of the run's session, also one that ignores
# SIGTERM (SIGKILL after 5 s) after the wrapper died of it, and one its
# parent left behind in a process group of its own (out of mpirun's sight)
printf '#!/bin/bash\nset -m\ntrap "" TERM\nsleep 300 &\nexec sleep 300\n' > "$bin/benchd-allreduce"
start_run
wait_until 120 eval '[ "$(pgrep -c -s "$pid" -x sleep)" = 4 ]'
t0=$SECONDS
check "cancel of a run that ignores SIGTERM" "$BENCHCTL" cancel "$id"
check "  took the 5 s to SIGKILL" test $((SECONDS - t0)) -ge 4
is "  nothing of its session is left (but zombies)" "$(ps -o stat= -s "$pid" | grep -vc Z)" 0
printf '#!/bin/sh\nsleep 300\n' > "$bin/benchd-allreduce"

# interrupting submit --wait stops following, not the run
"$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin" --wait \
    >"$tmp/wait.out" 2>"$tmp/wait.err" &
wpid=$!
wait_until 120 grep -q "trial 1/1" "$tmp/wait.out"
id=$(sed -n 's/^run \([^ ]*\) started.*/\1/p' "$tmp/wait.out")
kill -INT "$wpid"; wait "$wpid"; rc=$?
is "SIGINT during submit --wait: exit 130" "$rc" 130
like "  saying the run goes on" "$(cat "$tmp/wait.err")" "^benchctl: no longer following run $id; it goes on \('benchctl status $id' to look again, 'benchctl cancel $id' to stop it\)$"
like "  which it does" "$("$BENCHCTL" status "$id")" "allreduce on local, running"
check "  until cancelled" "$BENCHCTL" cancel "$id"

# logs --follow prints as the trials write, and returns when the run ends
printf '#!/bin/sh\n[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0\nfor i in 1 2 3; do echo "step $i"; sleep 1; done\n' > "$bin/benchd-allreduce"
out=$("$BENCHCTL" submit --system local allreduce --runs 2 --logdir "$logs" --set paths.bin="$bin")
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started.*/\1/p')
out=$(timeout 60 "$BENCHCTL" logs "$id" --follow); rc=$?
is "logs --follow returns when the run ends" "$rc" 0
is "  having printed every step of both trials" "$(grep -c '^step [123]$' <<<"$out")" 6
like "  and both trial headers" "$out" "==> trial 2: "

# 4. errors: one line, exit 1
err=$("$BENCHCTL" status nosuchrun 2>&1); rc=$?
is "unknown run id: exit 1" "$rc" 1
like "  one line naming it" "$err" "^benchctl: unknown run 'nosuchrun' \(see 'benchctl runs'\)$"
like "a run id prefix is matched as it is ('%' is no wildcard)" "$("$BENCHCTL" status '2%' 2>&1)" "unknown run '2%'"
like "  nor '_'" "$("$BENCHCTL" status '2_2' 2>&1)" "unknown run '2_2'"
err=$("$BENCHCTL" submit --system local allreduce --set allreduce.iters 2>&1); rc=$?
is "malformed --set: exit 3 (configuration)" "$rc" 3
like "  says so" "$err" "expected KEY=VALUE"
touch "$tmp/afile"
err=$("$BENCHCTL" submit --system local allreduce --logdir "$tmp/afile/sub" 2>&1); rc=$?
is "unwritable --logdir: exit 1" "$rc" 1
like "  names the directory" "$err" "log directory '$tmp/afile/sub'"
n=$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)
out=$("$BENCHCTL" submit --system local allreduce --dry-run); rc=$?
is "--dry-run exits 0" "$rc" 0
like "  says where it would run" "$out" "would start 2 ranks with mpirun on this machine"
is "  and records nothing" "$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)" "$n"
nruns=$(ls "$BENCHD_HOME/runs" | wc -l)
# a COCO tree's layout (what submit checks before it starts a run here)
mkdir -p "$tmp/coco/annotations" "$tmp/coco/train2017"
echo '{}' > "$tmp/coco/annotations/instances_train2017.json"
if [ -x "$top_builddir/benchd-maskrcnn" ]; then
    out=$("$BENCHCTL" submit --system local maskrcnn --logdir "$logs" --data "$tmp/coco" --dry-run 2>&1); rc=$?
    is "maskrcnn, built here: --dry-run exits 0" "$rc" 0
    like "  and would start it" "$out" "would start 2 ranks"
    is "  and starts nothing" "$(ls "$BENCHD_HOME/runs" | wc -l)" "$nruns"
else
    err=$("$BENCHCTL" submit --system local maskrcnn --logdir "$logs" 2>&1); rc=$?
    is "a workload without a trainer in this build: exit 3" "$rc" 3
    like "  one line saying so" "$err" "^benchctl: maskrcnn: the Mask R-CNN \(ResNet-50 FPN\) trainer is not built: this build of benchd has no benchd-maskrcnn \(a container image or a paths.bin that has it can run it\)$"
    is "  and starts nothing" "$(ls "$BENCHD_HOME/runs" | wc -l)" "$nruns"
    err=$("$BENCHCTL" submit --system local maskrcnn --logdir "$logs" --dry-run 2>&1); rc=$?
    is "  --dry-run too: exit 3" "$rc" 3
    like "    saying so" "$err" "the Mask R-CNN \(ResNet-50 FPN\) trainer is not built"
fi
mkdir -p "$tmp/site-bin"
printf '#!/bin/sh\necho site maskrcnn "$@"\n' > "$tmp/site-bin/benchd-maskrcnn"
chmod +x "$tmp/site-bin/benchd-maskrcnn"
out=$("$BENCHCTL" submit --system local maskrcnn --logdir "$logs" --data "$tmp/coco" --set paths.bin="$tmp/site-bin" \
      --dry-run 2>&1); rc=$?
is "  a paths.bin that has the program: not refused (--dry-run exits 0)" "$rc" 0
like "    and would start it" "$out" "would start 2 ranks"
render=$("$BENCHCTL" render --system local maskrcnn 2>&1); rc=$?
is "  it still renders: exit 0" "$rc" 0
like "    the launch of benchd-maskrcnn" "$render" "/benchd-maskrcnn "
err=$("$BENCHCTL" submit --system local allreduce --logdir "$logs" --set paths.bin="$tmp/nobin" --dry-run 2>&1); rc=$?
is "a paths.bin without the trainer, even for --dry-run: exit 3" "$rc" 3
like "  names it" "$err" "allreduce: no trainer '$tmp/nobin/benchd-allreduce'"
is "  nothing recorded" "$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)" "$n"
is "  and no run directory left" "$(ls "$BENCHD_HOME/runs" | wc -l)" "$nruns"
# what can be checked here before a run starts here: the dataset's tree, the weights
err=$("$BENCHCTL" submit --system local ssd --logdir "$logs" --data /no/such/dir --dry-run 2>&1); rc=$?
is "a dataset directory that is not there, even for --dry-run: exit 3" "$rc:$err" \
   "3:benchctl: ssd: no dataset directory '/no/such/dir' (No such file or directory): give it with --data or paths.data"
err=$("$BENCHCTL" submit --system local ssd --logdir "$logs" --data "$tmp" --dry-run 2>&1); rc=$?
like "a directory that is not a COCO tree: exit 3, the file it lacks named" "$rc:$err" \
     "^3:benchctl: ssd: no dataset file '$tmp/annotations/instances_train2017\.json' .*not the dataset's layout"
err=$("$BENCHCTL" submit --system local ssd --logdir "$logs" --data "$tmp/coco" --set ssd.pretrained=nope.bdw \
      --set paths.pretrained="$tmp" --dry-run 2>&1); rc=$?
is "pretrained weights that are not there: exit 3" "$rc:$err" \
   "3:benchctl: ssd: no pretrained weights '$tmp/nope.bdw' (No such file or directory): 'ssd.pretrained' names it in paths.pretrained"
is "  nothing recorded" "$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)" "$n"
check "--dry-run with a new --logdir" "$BENCHCTL" submit --system local allreduce --dry-run --logdir "$tmp/dry/logs"
check "  creates no directory" test ! -e "$tmp/dry"
err=$("$BENCHCTL" submit --system local allreduce --dry-run --logdir "$tmp/afile/sub" 2>&1); rc=$?
is "--dry-run with an impossible --logdir: exit 1" "$rc" 1
like "  says why" "$err" "log directory '$tmp/afile/sub': '$tmp/afile' is not a directory"
if [ -d /sys/kernel ]; then
    err=$("$BENCHCTL" submit --system local allreduce --logdir /sys/kernel 2>&1); rc=$?
    is "--logdir on sysfs (writable to root by access()): exit 1" "$rc" 1
    like "  says it is a kernel file system" "$err" "^benchctl: log directory '/sys/kernel' is on sysfs, a kernel file system"
else
    skip 2 "no /sys/kernel here"
fi

# 5. several benchctl processes at once never corrupt the store
printf '#!/bin/sh\nexit 0\n' > "$bin/benchd-allreduce"
for i in 1 2 3 4 5 6; do
    "$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin" --wait >/dev/null 2>&1 &
done
for i in 1 2 3 4 5 6; do "$BENCHCTL" runs >/dev/null 2>&1 & done
wait
is "six concurrent submissions all recorded" "$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)" "$((n + 6))"

# runs brings runs that ended unseen up to date (no status in between)
out=$("$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin")
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) started.*/\1/p')
wait_until 120 test -s "$BENCHD_HOME/runs/$id/exit_status"
like "runs shows a run that ended unseen as completed" "$("$BENCHCTL" runs)" "^$id +local +allreduce +completed "
n=$((n + 1))
is "the store passes SQLite's integrity check" \
   "$(/usr/bin/python3 -c "import sqlite3; print(sqlite3.connect('$BENCHD_HOME/benchd.db').execute('PRAGMA integrity_check').fetchone()[0])")" ok
is "  and is a WAL store (readers never block the writer)" \
   "$(/usr/bin/python3 -c "import sqlite3; print(sqlite3.connect('$BENCHD_HOME/benchd.db').execute('PRAGMA journal_mode').fetchone()[0])")" wal

# a store too busy to record the run once its job started: the job is
# stopped, not left running unseen
printf '#!/bin/sh\nsleep 300\n' > "$bin/benchd-allreduce"
nbefore=$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)
/usr/bin/python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(25)' "$BENCHD_HOME/benchd.db" > "$tmp/locker.out" &
locker=$!
wait_until 30 grep -q locked "$tmp/locker.out"
err=$("$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin" 2>&1); rc=$?
is "a busy store after the job started: exit 1" "$rc" 1
like "  the job is cancelled, and it says so" "$err" "^benchctl: results store .*: database is locked; the run could not be recorded: its process [0-9]+ was cancelled$"
bpid=$(printf '%s\n' "$err" | sed -n 's/.*its process \([0-9]*\) was cancelled$/\1/p')
is "  its processes are gone (zombies aside)" \
   "${bpid:+$(ps -e -o sid=,stat= | awk -v s="$bpid" '$1 == s && $2 !~ /^Z/' | wc -l)}" 0
stop_pid "$locker"
wait "$locker" 2>/dev/null
is "  and nothing is recorded" "$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)" "$nbefore"
printf '#!/bin/sh\nexit 0\n' > "$bin/benchd-allreduce"

# a results store that cannot be opened: an error before anything starts
mkdir -p "$tmp/badhome"
head -c 8192 /dev/urandom > "$tmp/badhome/benchd.db"
err=$(BENCHD_HOME="$tmp/badhome" "$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" \
      --set paths.bin="$bin" 2>&1); rc=$?
is "a store that is not a database: exit 1" "$rc" 1
is "  one line naming it, nothing started" "$err" \
   "benchctl: results store $tmp/badhome/benchd.db: open: file is not a database"
is "  no run directory is left" "$(find "$tmp/badhome/runs" -mindepth 1 | wc -l)" 0

# 6. the WAL stays short (every command reads all of it when it opens the store)
# (a submission adds 7 pages: 40 of them make 280 without checkpoints)
for i in $(seq 40); do
    "$BENCHCTL" submit --system local allreduce --runs 1 --logdir "$logs" --set paths.bin="$bin" >/dev/null 2>&1
done
wal=$(stat -c %s "$BENCHD_HOME/benchd.db-wal" 2>/dev/null || echo 0)
_t_result "$((wal > 128 * 4120 + 32))" "after 40 more submissions the WAL holds at most 128 pages ($wal bytes)"
is "  and all were recorded" "$("$BENCHCTL" runs --limit 1000 | tail -n +2 | wc -l)" "$((n + 46))"
done_testing
