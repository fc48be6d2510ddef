#!/bin/bash
# Learning for real (the one long test, about 10-15 minutes on 2 cores): SSD
# on the CPU backend learns the generated shapes dataset to a bbox mAP of at
# least 0.30 on its held-out split, through the real flow:
#
#   benchctl dataset synth --images 1200 --val-images 200 --seed 1 -o DIR
#   benchctl submit --system local ssd --data DIR --wait
#   benchctl report last
#
# with the settings of systems/local.json's ssd section.  The report must show
# a converged trial with its time to train, epochs, final mAP and throughput;
# the trial log must pass the MLPerf compliance checker for ssd (rulesets
# 1.0.0 and 0.7.0; mlperf-logging from PyPI in $top_builddir/venv, skipped
# without network).  SSD_LEARN=0 skips the whole test.
. "${srcdir:-.}/tests/lib.sh"
[ "${SSD_LEARN:-1}" = 0 ] && skip_all "SSD_LEARN=0"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
own_runs

check "the shapes dataset" "$BENCHCTL" dataset synth --images 1200 --val-images 200 --seed 1 -o "$tmp/coco-synth"
start=$(date +%s)
out=$(timeout 2400 "$BENCHCTL" submit --system local ssd --runs 1 --data "$tmp/coco-synth" --logdir "$tmp/logs" \
      --wait 2>&1); rc=$?
echo "# submit --wait took $(( $(date +%s) - start )) s"
is "submit --system local ssd --wait exits 0" "$rc" 0
printf '%s\n' "$out" | tail -5 | sed 's/^/#   /'
report=$("$BENCHCTL" report last 2>&1)
printf '%s\n' "$report" | sed 's/^/#   /'
like "report: the trial converged with time, epochs, accuracy and throughput" "$report" \
     "^  1 +success +[0-9.]+ +[0-9.]+ +[0-9]+ +0\.[0-9]+ +0\.300 +yes +[0-9.]+"
json=$("$BENCHCTL" report last --json)
is "report --json: mAP >= 0.30, time to train, epochs and throughput known" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
ok = t["status"] == "success" and t["converged"] and t["accuracy"] >= 0.30 and t["time_to_train_s"] > 0 \
     and t["epochs"] > 0 and t["throughput"] > 0
print("ok" if ok else t)')" ok
printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
print("# time to train %.1f min, %d epochs, bbox mAP %.4f, %.1f images/s" %
      (t["time_to_train_min"], t["epochs"], t["accuracy"], t["throughput"]))'

# the MLPerf compliance checker on the trial log
logs=("$tmp"/logs/*_1.log)
log=${logs[0]}
mlperf_venv
for rs in 1.0.0 0.7.0; do
    if [ -n "$mlperf_why" ]; then
        _t_result 0 "compliance checker, ruleset $rs # SKIP $mlperf_why"
        continue
    fi
    like "compliance checker for ssd, ruleset $rs: SUCCESS" "$(mlperf_check "$rs" "$log")" "SUCCESS"
done
done_testing
