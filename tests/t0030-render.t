#!/bin/bash
# Every system x workload renders a script that bash and shellcheck accept;
# -o writes it atomically and executable.
. "${srcdir:-.}/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
SHELLCHECK=${SHELLCHECK:-$(command -v shellcheck || true)}

for sys in DSS8440 C4140 2xC4140 4xC4140 p3dn 24xp3dn local 4xlocal; do
    for w in ssd maskrcnn allreduce; do
        f="$tmp/$sys-$w.sh"
        check "$sys $w renders" "$BENCHCTL" render --system "$sys" "$w" --run-id test -o "$f"
        check "$sys $w: bash -n" bash -n "$f"
        if [ -n "$SHELLCHECK" ]; then
            check "$sys $w: shellcheck without warnings" "$SHELLCHECK" -S style "$f"
        fi
        is "$sys $w: exactly one RESULT line per trial" "$(grep -c 'echo "RESULT,' "$f")" 1
    done
done
[ -n "$SHELLCHECK" ] || echo "# shellcheck not found: lint checks skipped"

f="$tmp/4xC4140-ssd.sh"
is "-o writes an executable file" "$(stat -c %a "$f")" 755
like "slurm script: #SBATCH directives" "$(cat "$f")" "^#SBATCH --nodes=4$"
"$BENCHCTL" render --system 4xC4140 ssd --run-id test > "$tmp/stdout.sh"
check "stdout and -o render the same script" cmp "$f" "$tmp/stdout.sh"
out=$("$BENCHCTL" render --system 4xC4140 ssd --runs 3 --set ssd.batch_size=64 --set slurm.partition=gpu)
like "--runs sets the trial count" "$out" "^NTRIALS=3$"
like "--set reaches the trainer" "$out" "--batch-size 64"
like "--set reaches the #SBATCH lines" "$out" "^#SBATCH --partition=gpu$"
out=$("$BENCHCTL" render --system 4xC4140 ssd --set 'ssd.decay_epochs=[]' --set 'ssd.eval_epochs=[5,10]')
like "an empty list is an empty argument" "$out" "--decay-epochs '' "
like "a list is comma-separated" "$out" "--eval-epochs 5,10 "
id1=$("$BENCHCTL" render --system local allreduce | sed -n "s/^RUN_ID='\(.*\)'$/\1/p")
like "a fresh run id by default" "$id1" "^[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$"

# the environment reaches every rank: exported, and named with -x for mpirun
out=$("$BENCHCTL" render --system p3dn allreduce --set 'env.MY_VAR=a "quoted" $HOME value')
like "configured variable exported" "$out" '^export MY_VAR="a \\"quoted\\" \$\{HOME:-\} value"$'
like "configured variable passed to mpirun" "$out" "-x MY_VAR"
printf '%s\n' "$out" > "$tmp/env.sh"
check "quoted environment values still lint clean" bash -n "$tmp/env.sh"

# the local script really runs: a stand-in for the trainer records its arguments
# and environment, so the launch path itself is what is tested here
if command -v mpirun >/dev/null; then
    bin="$tmp/bin"; mkdir -p "$bin"
    cat > "$bin/benchd-allreduce" <<'SH'
#!/bin/bash
echo "rank ${OMPI_COMM_WORLD_RANK:-?} args $* env MY_VAR=${MY_VAR:-unset}"
SH
    chmod +x "$bin/benchd-allreduce"
    "$BENCHCTL" render --system local allreduce --runs 2 --run-id run1 \
        --set paths.logs="$tmp/logs" --set paths.bin="$bin" --set env.MY_VAR=hello -o "$tmp/local.sh"
    out=$(bash "$tmp/local.sh" 2>&1); rc=$?
    is "local allreduce script exits 0" "$rc" 0
    like "both trials reported" "$out" "trial 2/2 ended at [0-9]+ with exit status 0"
    check "trial 1 log" test -f "$tmp/logs/run1_1.log"
    check "trial 2 log" test -f "$tmp/logs/run1_2.log"
    log=$(cat "$tmp/logs/run1_1.log")
    is "2 ranks ran" "$(grep -c '^rank [01] args' <<<"$log")" 2
    like "the environment reached the ranks" "$log" "env MY_VAR=hello"
    is "one RESULT line in the trial log" "$(grep -Ec '^RESULT,ALLREDUCE,,[0-9]+,benchd,' <<<"$log")" 1
    like "timing markers" "$log" "^STARTING TIMING RUN AT .*"
    # a failing trial is counted and the script says so
    printf '#!/bin/sh\nexit 3\n' > "$bin/benchd-allreduce"
    out=$(bash "$tmp/local.sh" 2>&1); rc=$?
    is "failed trials make the script fail" "$rc" 1
    like "  and are reported" "$out" "0 of 2 trials succeeded"
else
    echo "# mpirun not found: local launch not exercised"
fi
done_testing
