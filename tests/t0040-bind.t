#!/bin/bash
# benchctl bind reproduces the reference bindings; benchd-bind applies them.
. "${srcdir:-.}/tests/lib.sh"
BIND="$top_builddir/benchd-bind"

p3dn=("0-5,48-53:0" "6-11,54-59:0" "12-17,60-65:0" "18-23,66-71:0"
      "24-29,72-77:1" "30-35,78-83:1" "36-41,84-89:1" "42-47,90-95:1")
for r in 0 1 2 3 4 5 6 7; do
    want="--physcpubind=${p3dn[$r]%:*} --membind=${p3dn[$r]##*:}"
    is "p3dn local rank $r" "$("$BENCHCTL" bind --system p3dn --local-rank "$r")" "$want"
done
is "DSS8440 rank 0" "$("$BENCHCTL" bind --system DSS8440 --local-rank 0)" "--physcpubind=0-4,40-44 --membind=0"
is "DSS8440 rank 7" "$("$BENCHCTL" bind --system DSS8440 --local-rank 7)" "--physcpubind=35-39,75-79 --membind=1"
for r in 0 1 2 3; do
    is "C4140 rank $r (HT off, membind r/2)" "$("$BENCHCTL" bind --system C4140 --local-rank "$r")" \
       "--physcpubind=$((r * 10))-$((r * 10 + 9)) --membind=$((r / 2))"
done
is "hyperthreads can be switched off" \
   "$("$BENCHCTL" bind --system p3dn --local-rank 5 --set binding.hyperthreads=false)" "--physcpubind=30-35 --membind=1"
json=$("$BENCHCTL" bind --system C4140 --local-rank 2 --json)
is "--json names the NIC" "$(printf '%s' "$json" | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["nic"], j["membind"])')" "mlx5_0 1"

# the rendered launch carries the same plan
script=$("$BENCHCTL" render --system p3dn ssd)
plan=$(printf '%s\n' "$script" | grep -o -- '-r [0-9][^ ]*' | cut -d' ' -f2 | tr '\n' ' ')
want=$(printf '%s:rdmap16s27/efa ' "${p3dn[@]}")
is "the p3dn script binds with the reference table, each rank with its EFA device" "$plan" "$want"
plan=$("$BENCHCTL" render --system DSS8440 ssd | grep -o -- '-r [0-9][^ ]*' | head -1 | cut -d' ' -f2)
is "DSS8440's ranks get their InfiniBand HCA" "$plan" "0-4,40-44:0:mlx5_0"

# benchd-bind applies a plan to this machine
ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
    out=$(OMPI_COMM_WORLD_LOCAL_RANK=1 "$BIND" -r 0:0 -r 1:0:mlx5_9 -- \
          bash -c 'grep Cpus_allowed_list /proc/self/status; echo "ucx=$UCX_NET_DEVICES"')
    like "rank 1 runs on CPU 1" "$out" "Cpus_allowed_list:[[:space:]]+1$"
    like "rank 1 gets its NIC for UCX" "$out" "^ucx=mlx5_9:1$"
    out=$(OMPI_COMM_WORLD_LOCAL_RANK=1 UCX_NET_DEVICES= "$BIND" -r 0:0 -r 1:0:rdmap16s27/efa -- \
          bash -c 'echo "efa=$FI_EFA_IFACE ucx=$UCX_NET_DEVICES nic=$BENCHD_NIC"')
    is "an EFA device goes to libfabric (FI_EFA_IFACE), not to UCX" "$out" "efa=rdmap16s27 ucx= nic=rdmap16s27"
    out=$(SLURM_LOCALID=0 "$BIND" -r 0:0 -r 1:0 -- grep Cpus_allowed_list /proc/self/status)
    like "SLURM_LOCALID selects rank 0" "$out" "Cpus_allowed_list:[[:space:]]+0$"
fi
err=$(OMPI_COMM_WORLD_LOCAL_RANK=0 "$BIND" -r 4000-4001:0 -- true 2>&1); rc=$?
is "CPUs this node lacks: exit 1" "$rc" 1
like "  named in the error" "$err" "CPUs 4000-4001 are not available"
err=$(env -u OMPI_COMM_WORLD_LOCAL_RANK -u SLURM_LOCALID "$BIND" -r 0:0 -- true 2>&1); rc=$?
is "no local rank: exit 1" "$rc" 1
like "  says which variables it read" "$err" "OMPI_COMM_WORLD_LOCAL_RANK"
err=$(OMPI_COMM_WORLD_LOCAL_RANK=2 "$BIND" -r 0:0 -r 1:0 -- true 2>&1); rc=$?
is "rank beyond the plan: exit 1" "$rc" 1
"$BIND" -r bad -- true 2>/dev/null; is "malformed plan: exit 2" "$?" 2
"$BIND" -r 0:0:mlx5_0/ib -- true 2>/dev/null; is "a NIC kind other than efa: exit 2" "$?" 2
"$BIND" -r 0:0:/efa -- true 2>/dev/null; is "an EFA kind without its device: exit 2" "$?" 2
"$BIND" -r 0:0 2>/dev/null; is "no program: exit 2" "$?" 2
out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 "$BIND" -n -r 30-35,78-83:1 -- echo ran 2>&1)
like "--dry-run prints the binding without applying it" "$out" "local rank 0: --physcpubind=30-35,78-83 --membind=1 \(declared\) \(dry run\)"
like "  and still runs the program" "$out" "^ran$"
err=$(OMPI_COMM_WORLD_LOCAL_RANK=0 "$BIND" -r 0:0 -- /nonexistent/prog 2>&1); rc=$?
is "missing program: exit 127" "$rc" 127
done_testing
