#!/bin/bash
# One job per GPU, as many users would (the mila suite): benchctl submit
# --tenants N starts N independent single-rank runs together on one node,
# each confined by benchd-bind --tenant K/N --confine: its share of the
# cores and the node's memory / N, in a cgroup of its own (checked here from
# inside each tenant, by a probe program added as a workload file, and by
# SSD itself); the report gives each tenant's rate, the round's sum and
# spread, and flags the slow tenant.
# Then four tenants on the Slurm test cluster, each a job step of its own;
# and what cannot have tenants is refused before anything runs.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
cluster_test 17267
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_WAIT_POLICY=passive
mkdir -p "$tmp/wl" "$tmp/bin"
logs="$tmp/logs"
ncpu=$(nproc)
memtotal=$(awk '/^MemTotal:/ { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)

# The probe: where it runs (its CPUs, its cgroups' memory limit, its Slurm
# step), then a rate of fixed CPU work
cat > "$tmp/bin/tenant-probe" <<'SH'
#!/bin/bash
work=2000000 slow=none
while [ $# -gt 0 ]; do case "$1" in --work) work=$2; shift 2;; --slow-on) slow=$2; shift 2;; *) shift;; esac; done
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
# --slow-on CPU: the tenant that runs on CPU stands for one on a device
# three times slower: it does each item's work three times
repeat=1
[ "$cpus" = "$slow" ] && repeat=3
limit=none
if m=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup) && [ -n "$m" ]; then
    limit=$(cat "/sys/fs/cgroup/memory$m/memory.limit_in_bytes" 2>/dev/null || echo none)
elif m=$(sed -n 's/^0:://p' /proc/self/cgroup) && [ -f "/sys/fs/cgroup$m/memory.max" ]; then
    limit=$(cat "/sys/fs/cgroup$m/memory.max")
fi
echo "probe: cpus $cpus limit $limit step ${SLURM_JOB_ID:-none}.${SLURM_STEP_ID:-none} node ${SLURMD_NODENAME:-$(hostname)}"
python3 - "$work" "$repeat" <<'PY'
import sys, time
n, repeat = int(sys.argv[1]), int(sys.argv[2])
t = time.perf_counter()
s = 0
for r in range(repeat):
    for i in range(n):
        s += i
print("rate: %.1f items/s" % (n / (time.perf_counter() - t)))
PY
SH
chmod +x "$tmp/bin/tenant-probe"
cat > "$tmp/wl/probe.json" <<JSON
// a tenant's probe: its confinement, then a rate
{
  "title": "says where it runs, then a rate",
  "program": "$tmp/bin/tenant-probe",
  "result": { "kind": "throughput", "read": "regex", "unit": "items/s",
              "match": { "throughput": "^rate: ([0-9.]+) items/s" } },
  "command": ["{program}", "{args}"],
  "keys": { "work": { "type": "int", "default": 2000000, "min": 1 },
            "slow_on": { "type": "string", "default": "none" } }
}
JSON
export BENCHD_WORKLOADS="$tmp/wl"
run_id() { sed -n 's/^run \([^ ]*\) \(started\|submitted\).*/\1/p' <<<"$1"; }

# 1. two tenants on local: each its own CPU and half the memory, checked from inside
out=$("$BENCHCTL" submit --system local probe --tenants 2 --logdir "$logs" --wait 2>&1); rc=$?
is "two tenants on local: submit --wait exits 0" "$rc" 0
like "  two trials, one per tenant" "$out" "^run [^ ]+ started: process [0-9]+, 2 trials"
id=$(run_id "$out")
probes=$(cat "$logs/${id}_1.log" "$logs/${id}_2.log" | grep '^probe:')
is "  each tenant printed where it runs" "$(grep -c . <<<"$probes")" 2
if [ "$ncpu" -ge 2 ]; then
    is "  each tenant has one CPU of its own, the two different" \
       "$(awk '{ print $3 }' <<<"$probes" | sort -u | grep -Ec '^[0-9]+$')" 2
fi
half=$((memtotal / 2))
is "  each tenant's cgroup holds it to half the memory (MemTotal / 2, in pages)" \
   "$(awk -v h="$half" '{ d = h - $5; print (d >= 0 && d < 4096) ? "ok" : $5 " vs " h }' <<<"$probes" | sort -u)" ok
like "  benchd-bind says so in the tenant's log" "$(cat "$logs/${id}_1.log")" \
     "benchd-bind: tenant 0 of 2 on [^:]+: CPUs [0-9]+, memory at most [0-9.]+ GiB \(cgroup v[12] "
is "  and their cgroups are gone once they ended" \
   "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "benchd-$id-t*" 2>/dev/null | wc -l)" 0
out=$("$BENCHCTL" report "$id")
like "report: the tenants' table" "$out" "tenants: 2 single-rank runs at once on one node, 1 round"
like "  tenant 1's rate and where it ran" "$out" "^  1 +1 +2 +[0-9.]+ +[-+][0-9.]+% +[^ ]+: CPUs [0-9]+, memory at most"
like "  the round's sum and spread" "$out" "round 1: sum [0-9.]+ items/s, median [0-9.]+, slowest/fastest [01]\.[0-9]+"
json=$("$BENCHCTL" report "$id" --json)
is "report --json: the sum is the tenants' rates added" "$(/usr/bin/python3 -c '
import json, sys
t = json.loads(sys.argv[1])[0]["tenants"]
v = [r["value"] for r in t["tenant_results"]]
s = t["rounds_summary"][0]
print(t["tenants"], len(v), abs(sum(v) - s["sum"]) < 1e-6 * s["sum"], abs(min(v) / max(v) - s["spread"]) < 1e-9)' "$json")" \
   "2 2 True True"

# 2. a tenant slower than the others is flagged
if [ "$ncpu" -ge 2 ]; then
    # the tenant on CPU 1 stands for one on a slow device (its work takes
    # three times as long)
    out=$("$BENCHCTL" submit --system local probe --tenants 2 --logdir "$logs" --set probe.work=1000000 \
          --set probe.slow_on=1 --wait 2>&1)
    id=$(run_id "$out")
    out=$("$BENCHCTL" report "$id")
    like "a slow tenant is flagged" "$out" "^  1 +1 +2 +[0-9.]+ +-[0-9.]+% +[^ ]+: CPUs 1, .*<- SLOW"
    unlike "  the other is not" "$out" "^  1 +0 +1 .*<- SLOW"
    like "  the round says one tenant flagged" "$out" "round 1: .*; 1 tenant flagged"
    json=$("$BENCHCTL" report "$id" --json)
    is "  the JSON names the same tenant" "$(/usr/bin/python3 -c '
import json, sys
t = json.loads(sys.argv[1])[0]["tenants"]
print([r["tenant"] for r in t["tenant_results"] if r["flagged"]])' "$json")" "[1]"
fi

# 3. SSD itself as two tenants, a throughput run: each tenant's rate from its JSON result
if [ -x "$top_builddir/benchd-ssd" ]; then
    "$BENCHCTL" dataset synth --images 24 --val-images 4 --size 96 --seed 1 -o "$tmp/data" --quiet >/dev/null 2>&1
    out=$("$BENCHCTL" submit --system local ssd --tenants 2 --data "$tmp/data" --logdir "$logs" \
          --set ssd.benchmark_steps=3 --set ssd.warmup_steps=1 --set ssd.batch_size=2 --set ssd.image_size=64 --wait 2>&1); rc=$?
    is "SSD as two tenants: exits 0" "$rc" 0
    id=$(run_id "$out")
    json=$("$BENCHCTL" report "$id" --json)
    is "  each tenant's rate is its JSON result's" "$(/usr/bin/python3 -c '
import json, sys
t = json.loads(sys.argv[1])[0]["tenants"]
ok = []
for r in t["tenant_results"]:
    res = json.load(open(sys.argv[2] + "/" + sys.argv[3] + "_%d.json" % r["trial"]))
    ok.append(abs(res["train_item"]["avg"] - r["value"]) < 1e-9 and res["ranks"] == 1)
print(t["unit"], ok)' "$json" "$logs" "$id")" "images/s [True, True]"
fi

# 3b. a suite holds each tenant's rate to a per-GPU (here per-core) target
cat > "$tmp/tenants-suite.json" <<'JSON'
// the probe as two tenants, each rate judged
{
  "description": "probes as tenants",
  "performance_tolerance": 0.0, "deviation_tolerance": 1.0,
  "benchmarks": {
    "probe2": { "workload": "probe", "set": { "tenants": "2", "work": 500000 }, "targets": { "local": 1000 } }
  }
}
JSON
out=$("$BENCHCTL" suite run "$tmp/tenants-suite.json" --system local --repeat 2 --logdir "$logs" 2>&1); rc=$?
is "a suite of tenants: exits 0" "$rc" 0
like "  each of 2 runs' 2 tenants is a result judged against the target" "$out" "^probe2 +4 +0 +1000 +[0-9]+ .* yes$"

# 4. four tenants on the Slurm test cluster: a job step each, confined inside it
out=$("$BENCHCTL" submit --system 4xlocal probe --tenants 4 --logdir "$logs" --set trials=1 --wait 2>&1); rc=$?
is "four tenants on 4xlocal: exits 0" "$rc" 0
like "  four trials" "$out" "submitted: Slurm job [0-9]+ \((libslurm|sbatch)\), 4 trials"
id=$(run_id "$out")
probes=$(cat "$logs/${id}"_[1-4].log | grep '^probe:')
is "  four tenants ran" "$(grep -c . <<<"$probes")" 4
is "  each in a job step of its own, all on one node" \
   "$(awk '{ print $7 }' <<<"$probes" | sort -u | wc -l) $(awk '{ print $9 }' <<<"$probes" | sort -u | wc -l)" "4 1"
quarter=$((memtotal / 4))
is "  each held to a quarter of the memory" \
   "$(awk -v h="$quarter" '{ d = h - $5; print (d >= 0 && d < 4096) ? "ok" : $5 " vs " h }' <<<"$probes" | sort -u)" ok
is "  each to one CPU" "$(awk '{ print $3 }' <<<"$probes" | grep -Ec '^[0-9]+$')" 4
script=$("$BENCHCTL" render --run "$id")
like "  the job asks for a task of one CPU per tenant" "$script" $'#SBATCH --ntasks=4\n#SBATCH --cpus-per-task=1'
like "  each tenant is a step of its own CPUs and memory" "$script" \
     'srun --exact --nodes=1 --ntasks=1 --cpus-per-task=1 --mem="\$TENANT_MEM"M'
like "report: four tenants" "$("$BENCHCTL" report "$id")" "round 1: sum [0-9.]+ items/s"

# 5. what cannot have tenants: one line, nothing started
nruns=$(ls "$BENCHD_HOME/runs" | wc -l)
out=$("$BENCHCTL" submit --system local probe --tenants per-gpu --logdir "$logs" 2>&1); rc=$?
is "per-gpu on a system without GPUs: exit 3" "$rc" 3
like "  one line that says why" "$out" "^benchctl: .*local\.json: 'tenants' per-gpu: the system has no GPUs"
out=$("$BENCHCTL" submit --system local probe --tenants 3 --logdir "$logs" 2>&1); rc=$?
is "more tenants than the node's cores: exit 3" "$rc" 3
like "  named" "$out" "'tenants' 3: more tenants than the node's 2 CPUs"
out=$("$BENCHCTL" render --system DSS8440 ssd --set tenants=9 2>&1); rc=$?
is "more tenants than GPUs: exit 3" "$rc" 3
like "  named" "$out" "'tenants' 9: more tenants than the node's 8 GPUs"
out=$("$BENCHCTL" render --system local-podman ssd --set tenants=2 2>&1); rc=$?
is "a runtime of one container for every rank: exit 3" "$rc" 3
like "  named" "$out" "container runtime podman runs every rank in one container"
out=$("$BENCHCTL" render --system 4xC4140 ngc-maskrcnn --set tenants=2 2>&1); rc=$?
is "a workload that starts its ranks per node: exit 3" "$rc" 3
like "  named" "$out" "workload ngc-maskrcnn starts its ranks itself"
out=$("$BENCHCTL" submit --system local probe --tenants 0 --logdir "$logs" 2>&1); rc=$?
is "--tenants 0: exit 3" "$rc" 3
like "  the rule" "$out" "tenants.*off, per-gpu or a number of tenants from 1 to 4096"
is "  no run was recorded for any of them" "$(ls "$BENCHD_HOME/runs" | wc -l)" "$nruns"

# 6. per-gpu on a GPU system: a tenant per GPU, each beside its GPU, its GPU alone
script=$("$BENCHCTL" render --system C4140 ssd --set tenants=per-gpu --set launcher=local 2>&1)
like "C4140 per-gpu: four tenants" "$script" "^NTENANTS=4$"
like "  each its GPU alone" "$script" "export CUDA_VISIBLE_DEVICES=\\\$tenant"
like "  its own of the binding plan of four, picked by --tenant" "$script" \
     'benchd-bind --tenant "\$tenant"/4 --confine "benchd-\$RUN_ID-t\$tenant"'
like "  two tenants beside each socket's GPUs" "$script" '-r [0-9,-]+:0[^ ]* -r [0-9,-]+:0[^ ]* -r [0-9,-]+:1[^ ]* -r [0-9,-]+:1[^ ]*'
done_testing
