#!/bin/bash
# Each exit status that the EXIT STATUS section of benchctl(1) documents
# (read from the page as the test runs: tests/doc-commands.py), brought
# about by the causes the page names for it, one at a time.  The table
# below gives each status its causes; a status the page documents and the
# table lacks, or the other way round, fails, as does a cause the page's
# entry no longer names.  benchctl --help lists the same statuses.
. "${srcdir:-.}/tests/lib.sh"
own_runs
DOC="$srcdir/tests/doc-commands.py"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export HOME="$tmp/user"          # none of the user's systems, workloads or logs
unset BENCHD_TOKEN SLURM_CONF BENCHD_WORKLOADS
mkdir -p "$tmp/wl" "$tmp/systems"
# workloads of the local system: one whose program fails, one that lasts
cat > "$tmp/wl/dies.json" <<'JSON'
{ "title": "dies", "program": "sh", "command": ["{program}", "-c", "echo 'out of cheese' >&2; exit 3"] }
JSON
cat > "$tmp/wl/lasts.json" <<'JSON'
{ "title": "lasts", "program": "sleep", "command": ["{program}", "300"] }
JSON
printf '{ "extends": "local", "nodes": \n' > "$tmp/systems/broken.json"
mpi_why=
command -v mpirun >/dev/null || mpi_why="mpirun not installed (openmpi-bin): no local run"

# The causes: cause_NAME runs one and sets rc; desc says what it is, named
# says how the page's entry names it (an ERE over the entry's text), want
# is the status it must end with (where the page says 128+N: the signal's),
# why, when set, why it cannot be brought about here.
declare -A causes=(
    [0]="success"
    [1]="unknown_run unreadable_file store damaged_copy"
    [2]="unknown_option rank_beyond"
    [3]="unknown_system unknown_workload bad_set bad_system_file impossible_binding trainer_not_built"
    [4]="controller_silent node_silent stage_node_silent"
    [5]="wait_failed sweep_failed"
    [6]="health_degraded"
    [7]="health_node_silent"
    [128+N]="wait_sigint stage_sigterm"
)
bctl() { "$BENCHCTL" "$@" >"$tmp/out" 2>&1; rc=$?; }

cause_success() {
    desc="benchctl systems" named="Success"
    bctl systems
}
cause_unknown_run() {
    desc="status of an unknown run" named="an unknown run"
    bctl status nosuchrun
}
cause_unreadable_file() {
    desc="coco-eval of files that are not there" named="a file or directory that cannot be read"
    bctl coco-eval "$tmp/none.json" "$tmp/none2.json"
}
cause_store() {
    desc="runs with BENCHD_HOME a file" named="the results store"
    : > "$tmp/not-a-dir"
    BENCHD_HOME="$tmp/not-a-dir" bctl runs
}
cause_damaged_copy() {
    desc="stage --verify-only of a damaged copy" named="a stage job that could not copy or verify every file"
    mkdir -p "$tmp/src" && printf 'one\n' > "$tmp/src/a" && printf 'two\n' > "$tmp/src/b"
    "$BENCHCTL" stage --local --src "$tmp/src" --dst "$tmp/copy" >/dev/null 2>&1
    printf 'TWO\n' > "$tmp/copy/b"
    bctl stage --local --src "$tmp/src" --dst "$tmp/copy" --verify-only
}
cause_unknown_option() {
    desc="an unknown option" named="A usage error on the command line"
    bctl render --system local ssd --bogus
}
cause_rank_beyond() {
    desc="bind --local-rank 8 of p3dn's 8 ranks" named="--local-rank beyond the system's ranks"
    bctl bind --system p3dn --local-rank 8
}
cause_unknown_system() {
    desc="show of an unknown system" named="an unknown system"
    bctl show nosuch
}
cause_unknown_workload() {
    desc="render of an unknown workload" named="an unknown system or workload"
    bctl render --system local nosuch
}
cause_bad_set() {
    desc="--set ssd.batch_size=0" named="--set that does not hold"
    bctl show local --set ssd.batch_size=0
}
cause_bad_system_file() {
    desc="a system file cut short" named="a system file .* that does not hold"
    bctl --systems-dir "$tmp/systems" show broken
}
cause_impossible_binding() {
    desc="bind: p3dn's 8 ranks on NUMA node 0 of 4 cores" named="a binding plan the system's topology cannot give"
    bctl bind --system p3dn --local-rank 0 --set cpu.cores_per_socket=4 --set 'topology.gpu_numa=[0,0,0,0,0,0,0,0]'
    like "$status: $desc: one line saying why" "$(cat "$tmp/out")" "^benchctl: .*p3dn.json with --set: more ranks on NUMA node 0 \(8\) than cores \(4\)$"
}
cause_trainer_not_built() {
    desc="submit of a workload whose trainer this build does not make"
    named="a workload whose trainer this build does not make"
    local w
    w=$("$BENCHCTL" workloads --json | /usr/bin/python3 -c 'import json, sys
print(([w["name"] for w in json.load(sys.stdin) if w["own"] and w["runs_here"] != "yes"] + [""])[0])')
    if [ -z "$w" ]; then
        why="this build makes the trainer of every workload of benchd's own"
        return
    fi
    bctl submit --system local "$w" --dry-run
}
cause_controller_silent() {
    desc="submit --dry-run to a Slurm controller that does not answer"
    named="the Slurm controller did not answer \(submit, cancel\)"
    if ! "$BENCHCTL" --version | grep -q '^features:.* libslurm' && ! command -v sbatch >/dev/null; then
        why="neither libslurm nor sbatch here"
        return
    fi
    local port
    port=$(free_port 18490)
    cat > "$tmp/slurm.conf" <<CONF
ClusterName=nobody
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
AuthType=auth/munge
AuthInfo=socket=$tmp/no-munge.socket
MessageTimeout=2
NodeName=n1 NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=n1 Default=YES
CONF
    SLURM_CONF="$tmp/slurm.conf" timeout 60 "$BENCHCTL" submit --system 4xlocal allreduce --dry-run \
        --set paths.bin="$tmp" >"$tmp/out" 2>&1
    rc=$?
}
cause_node_silent() {
    desc="nodes: a node where nothing listens" named="a node's benchd did not answer \(nodes, stage\)"
    bctl nodes --timeout 1000 "127.0.0.1:$(free_port 18490)"
}
cause_stage_node_silent() {
    desc="stage --nodes: a node where nothing listens" named="a node's benchd did not answer \(nodes, stage\)"
    mkdir -p "$tmp/src"
    BENCHD_TOKEN=0123456789abcdef bctl stage --nodes "127.0.0.1:$(free_port 18490)" --src "$tmp/src" --dst "$tmp/far"
}
cause_health_degraded() {
    desc="health of a node with hyperthreads where the system has none"
    named="node is degraded and none failed \(health\)"
    if ! "$top_builddir/benchd" --help | grep -q -- '--listen'; then
        why="benchd built without libmicrohttpd"
        return
    fi
    local port pid
    port=$(free_port 18590)
    "$top_builddir/benchd" -f --listen "127.0.0.1:$port" --token-file "$tmp/benchd-token" \
        --sysfs-root "$srcdir/tests/fixtures/sysfs/c4140" 2>/dev/null &
    pid=$!
    wait_until 10 curl -sf "http://127.0.0.1:$port/v1/health"
    bctl health --system C4140 --set cpu.threads_per_core=2 --nodes "127.0.0.1:$port"
    kill "$pid"; wait "$pid" 2>/dev/null
}
cause_health_node_silent() {
    desc="health of a node where nothing listens" named="node failed or did not answer \(health\)"
    bctl health --system C4140 --nodes "127.0.0.1:$(free_port 18490)" --timeout 1000
}
cause_wait_failed() {
    desc="submit --wait of a local run whose program exits 3"
    named="one failed, was cancelled, or did not converge \(submit --wait\)"
    [ -n "$mpi_why" ] && { why=$mpi_why; return; }
    bctl --workloads-dir "$tmp/wl" submit --system local dies --runs 1 --logdir "$tmp/logs" --wait
    local id
    id=$(sed -n 's/^run \([^ ]*\) started.*/\1/p' "$tmp/out")
    # and the page's word on status --watch, in the same entry
    "$BENCHCTL" status "$id" --watch >/dev/null 2>&1
    is "$status: status --watch of that run: exit 0" "$?" 0
    like "$status: as the page says" "$entry" "status --watch exits 0 however the run ended"
}
cause_sweep_failed() {
    desc="sweep with a cell whose run failed" named="a sweep with a cell whose run did so"
    [ -n "$mpi_why" ] && { why=$mpi_why; return; }
    bctl --workloads-dir "$tmp/wl" sweep --system local dies --set ranks=1 --logdir "$tmp/logs"
    like "$status: $desc: its table printed all the same" "$(cat "$tmp/out")" "1 of 1 cells did not complete every trial"
}
# interrupt SIGNAL READY ARGS...: benchctl ARGS in the background, SIGNAL
# once it is under way (READY, a command, succeeds then), its status in rc.
# Its output starts empty: READY must not see the last command's.
interrupt() {
    local sig=$1 ready=$2 pid
    shift 2
    : > "$tmp/out"
    "$BENCHCTL" "$@" >"$tmp/out" 2>&1 &
    pid=$!
    wait_until 60 eval "$ready"
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
}
cause_wait_sigint() {
    desc="submit --wait interrupted by SIGINT" named="130 for SIGINT.*a run followed with --wait goes on"
    want=130
    [ -n "$mpi_why" ] && { why=$mpi_why; return; }
    interrupt INT "grep -q 'trial 1/1' '$tmp/out'" \
        --workloads-dir "$tmp/wl" submit --system local lasts --runs 1 --logdir "$tmp/logs" --wait
    local id
    id=$(sed -n 's/^run \([^ ]*\) started.*/\1/p' "$tmp/out")
    like "$status: $desc: the run goes on" "$("$BENCHCTL" status "$id" 2>&1)" "lasts on local, running"
    "$BENCHCTL" cancel "$id" >/dev/null 2>&1
}
cause_stage_sigterm() {
    desc="stage --local interrupted by SIGTERM" named="143 for SIGTERM.*a local stage job is cancelled"
    want=143
    mkdir -p "$tmp/big" && head -c 3000000 /dev/urandom > "$tmp/big/data.bin"
    interrupt TERM "[ -n \"\$(find '$tmp/big-copy' -name '.benchd-tmp.*' 2>/dev/null)\" ]" \
        stage --local --src "$tmp/big" --dst "$tmp/big-copy" --bwlimit 0.5
    like "$status: $desc: cancelled, to be resumed" "$(cat "$tmp/out")" "stage of 'big' cancelled: .* run it again to resume"
}

# ---- the page and the table ---------------------------------------------------
/usr/bin/python3 "$DOC" exit-status "$srcdir/man/benchctl.1" > "$tmp/exit-status"
page=$(cut -f1 "$tmp/exit-status" | sort | tr '\n' ' ')
like "the page documents exit statuses" "$page" "^0 "
is "the statuses the page documents are those this test has causes for" "$page" \
   "$(printf '%s\n' "${!causes[@]}" | sort | tr '\n' ' ')"
is "benchctl --help lists the same statuses" \
   "$("$BENCHCTL" --help | sed -n '/^exit status:/,$ s/^ *\([0-9][0-9+N]*\)  .*/\1/p' | sort | tr '\n' ' ')" "$page"

while IFS=$'\t' read -r status _ entry <&3; do
    if [ -z "${causes[$status]:-}" ]; then
        _t_result 1 "exit status $status: documented (\"$entry\"), and this test has no cause for it"
        continue
    fi
    for c in ${causes[$status]}; do
        desc='' named='' why='' want=$status rc=
        "cause_$c"
        if [ -n "$why" ]; then
            skip 2 "$status: $desc: $why"
            continue
        fi
        like "$status: the page names the cause: $desc" "$entry" "$named"
        is "$status: $desc: exit $want" "$rc" "$want"
        [ "$rc" = "$want" ] || sed 's/^/#   /' "$tmp/out" | tail -n 5
    done
done 3< "$tmp/exit-status"
done_testing
