#!/bin/bash
# benchd-allreduce: sizes, correctness check, MLPerf lines, bad options.
. "${srcdir:-.}/tests/lib.sh"
AR=${BENCHD_ALLREDUCE:-$top_builddir/benchd-allreduce}
[ -x "$AR" ] || skip_all "benchd-allreduce not built (no MPI)"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

mllog_check() {   # prints "ok" when the MLLOG lines are valid JSON in order with the given status
    /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
keys, status = [], None
for line in open(sys.argv[1]):
    if line.startswith(":::MLLOG "):
        j = json.loads(line[len(":::MLLOG "):])
        for k in ("namespace", "time_ms", "event_type", "key", "value", "metadata"):
            assert k in j, k
        keys.append(j["key"])
        if j["key"] == "run_stop":
            status = j["metadata"]["status"]
ok = (keys.index("run_start") < keys.index("run_stop") and status == sys.argv[2]
      and keys.count("run_start") == 1 and "allreduce_result" in keys)
print("ok" if ok else "bad %s %s" % (keys, status))
PY
}

for np in 1 2 4; do
    out=$(mpirun -np "$np" "$AR" --min-bytes 8 --max-bytes 256K --iters 3 --warmup 1 2>"$tmp/err.$np"); rc=$?
    is "$np ranks: exit 0" "$rc" 0
    printf '%s\n' "$out" > "$tmp/out.$np"
    is "$np ranks: every size from 8 B to 256 KiB" \
       "$(awk '$3 == "float" {print $1}' "$tmp/out.$np" | tr '\n' ' ')" \
       "8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 "
    is "$np ranks: no wrong element" "$(awk '$3 == "float" {s += $7} END {print s + 0}' "$tmp/out.$np")" 0
    like "$np ranks: header names the rank count" "$out" "^# benchd-allreduce .*: $np ranks, backend cpu"
    is "$np ranks: MLPerf lines valid, run_start before run_stop, success" "$(mllog_check "$tmp/out.$np" success)" ok
    is "$np ranks: only rank 0 logs (one run_start)" "$(grep -c '"key": "run_start"' "$tmp/out.$np")" 1
done
# bus bandwidth is algbw * 2(n-1)/n (from the full-precision MLLOG results:
# the table rounds to 3 decimals, too coarse when the machine is busy)
is "busbw = algbw x 2(n-1)/n with 4 ranks" \
   "$(sed -n 's/.*:::MLLOG //p' "$tmp/out.4" | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    j = json.loads(line)
    if j["key"] == "allreduce_result" and j["value"]["bytes"] == 262144:
        r = j["value"]["busbw_gbps"] / j["value"]["algbw_gbps"]
        print("1.5" if abs(r - 1.5) < 1e-9 else r)')" "1.5"
# one rank moves nothing between ranks: no bus bandwidth, not a 0 that reads as one
is "one rank: no bus bandwidth in the table ('-')" "$(awk '$3 == "float" && $1 == 262144 {print $6}' "$tmp/out.1")" -
like "  nor in the summary" "$(cat "$tmp/out.1")" "^# Avg bus bandwidth    : none \(one rank moves nothing between ranks\)"
is "  its MLPerf results' busbw_gbps null, algbw_gbps a number" "$(sed -n 's/.*:::MLLOG //p' "$tmp/out.1" |
   /usr/bin/python3 -c '
import json, sys
r = [json.loads(l)["value"] for l in sys.stdin if "allreduce_result" in l]
print(all(v["busbw_gbps"] is None and v["algbw_gbps"] > 0 for v in r) and len(r))')" 16

# the check can fail: a corrupted element makes the run fail
# (stdout apart from stderr: mpirun may forward the two interleaved within a line)
out=$(mpirun -np 2 "$AR" --max-bytes 4K --iters 2 --inject-error 1 2>"$tmp/bad.err"); rc=$?
is "a wrong element: exit 1" "$rc" 1
printf '%s\n' "$out" > "$tmp/bad"
like "  counted" "$out" "# Out of bounds values : [1-9][0-9]* FAILED"
like "  and said on stderr" "$(cat "$tmp/bad.err")" "benchd-allreduce: [0-9]+ wrong elements"
is "  and run_stop says aborted" "$(mllog_check "$tmp/bad" aborted)" ok

# --json writes the results
mpirun -np 2 "$AR" --max-bytes 1K --iters 2 --json "$tmp/r.json" >/dev/null 2>&1
is "--json writes one entry per size" "$(/usr/bin/python3 -c "import json; print(len(json.load(open('$tmp/r.json'))))")" 8
is "--json leaves no temporary file" "$(ls "$tmp" | grep -c '^r\.json\.')" 0
is "  the file's mode is 0666 less the umask" "$(stat -c %a "$tmp/r.json")" "$(printf '%o' $((0666 & ~0$(umask))))"
# a rank killed mid-run leaves nothing beside the target: the path was only
# tried at start
mpirun -np 1 "$AR" --max-bytes 256M --iters 50 --json "$tmp/k.json" >"$tmp/k.out" 2>&1 &
kpid=$!
wait_until 30 grep -q 'float' "$tmp/k.out"
rank=$(pgrep -P "$kpid" -f benchd-allreduce)
check "  the rank runs under mpirun" test -n "$rank"
kill -KILL $rank; wait "$kpid" 2>/dev/null
is "--json: a killed run leaves no temporary file" "$(ls "$tmp" | grep -c '^k\.json')" 0
# a path that cannot be written fails before the benchmark starts (no MLPerf line), on every rank
for target in "$tmp/nodir/r.json" "$tmp"; do
    err=$(timeout 60 mpirun -np 2 "$AR" --max-bytes 1K --iters 2 --json "$target" 2>&1 >"$tmp/j.out"); rc=$?
    is "--json '$target': exit 1" "$rc" 1
    like "--json '$target': one line naming the file, first" "$(printf '%s\n' "$err" | grep '^benchd-allreduce: ')" \
         "^benchd-allreduce: cannot write '$target': [A-Za-z ]+$"
    is "--json '$target': nothing ran (no MLPerf line)" "$(grep -c 'MLLOG\|float' "$tmp/j.out")" 0
done
is "  and left no temporary file" "$(ls "$tmp" | grep -c '^nodir\|\.tmp\.')" 0

# bad options: exit 2, one line, no hang
for args in "--max-bytes lots" "--max-bytes 9G" "--min-bytes 1M --max-bytes 1K" "--iters 0" "--backend tpu" "--bogus" "--factor 1"; do
    # shellcheck disable=SC2086
    err=$(timeout 60 mpirun -np 2 "$AR" $args 2>&1 >/dev/null); rc=$?
    is "'$args': exit 2" "$rc" 2
    is "'$args': one line" "$(printf '%s\n' "$err" | grep -c '^benchd-allreduce: ')" 1
done
# a rank that does not exist: refused before any work, by every rank (no hang)
for r in 2 5; do
    err=$(timeout 60 mpirun -np 2 "$AR" -e 1K --inject-error "$r" 2>&1 >"$tmp/inj.out"); rc=$?
    is "--inject-error $r with 2 ranks: exit 2" "$rc" 2
    is "--inject-error $r: one line" "$(printf '%s\n' "$err" | grep -c '^benchd-allreduce: ')" 1
    like "--inject-error $r: names the option and the rank count" "$err" \
         "^benchd-allreduce: --inject-error: rank $r does not exist \(2 ranks: 0 to 1\)"
    is "--inject-error $r: no benchmark ran" "$(grep -c 'MLLOG\|float' "$tmp/inj.out")" 0
done
# options come before MPI starts: an MPI that cannot start (no such pml) does
# not hide a usage error
err=$(OMPI_MCA_pml=nonesuch "$AR" --bogus 2>&1 >/dev/null); rc=$?
is "usage error, MPI not started: exit 2" "$rc" 2
is "  only the usage line" "$err" "benchd-allreduce: unknown option '--bogus' (see --help)"
out=$("$AR" --help); rc=$?
is "--help without mpirun exits 0" "$rc" 0
like "--help lists the options" "$out" "--max-bytes SIZE"
done_testing
