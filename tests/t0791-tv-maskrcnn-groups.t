#!/bin/bash
# torchvision's Mask R-CNN (the workload torchvision-maskrcnn) in benchctl's
# groups of runs, as benchd's own trainers are: a throughput sweep of its
# batch size on 'local' (each cell's rate from the trainer's JSON result),
# and a suite that holds a target for it beside benchd-maskrcnn's, with a
# verdict.
. "${srcdir:-.}/tests/lib.sh"
TV="$top_builddir/benchd-tv-maskrcnn"
[ -x "$TV" ] || skip_all "benchd-tv-maskrcnn not built"
[ -x "$top_builddir/benchd-maskrcnn" ] || skip_all "benchd-maskrcnn not built"
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
    skip_all "no torch or torchvision for /usr/bin/python3 (python3-torch, python3-torchvision)"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
venv_module pycocotools.cocoeval pycocotools || skip_all "$venv_why"
mlperf_venv || skip_all "$mlperf_why"
own_runs
sites=("$top_builddir"/venv/lib/python3*/site-packages)
export BENCHD_PYTHONPATH=${sites[0]} OPENBLAS_NUM_THREADS=1
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 16 --val-images 8 --size 128 --classes 3 \
      --objects 3 --seed 3 -o "$tmp/ds"
common=(--system local --data "$tmp/ds" --logdir "$tmp/logs")

# 1. a sweep of its batch size: 1 and 2 images a rank, 3 timed steps
out=$(timeout 900 "$BENCHCTL" sweep "${common[@]}" torchvision-maskrcnn --set batch_size=1,2 --steps 3 \
      --warmup 1 2>&1); rc=$?
is "sweep of torchvision-maskrcnn's batch size: exit 0" "$rc" 0
printf '%s\n' "$out" | tail -4 | sed 's/^/#   /'
sw=$(sed -n 's/^sweep \(sw-[^:]*\):.*/\1/p' <<<"$out" | head -1)
"$BENCHCTL" report "$sw" --json > "$tmp/sweep.json"
is "  each cell's rate is its trainer's JSON result (the mean of its timed steps)" \
   "$(/usr/bin/python3 - "$tmp/sweep.json" "$tmp/logs" <<'PY'
import json, sys
bad = []
cells = json.load(open(sys.argv[1]))["cells"]
for c in cells:
    r = json.load(open("%s/%s_1.json" % (sys.argv[2], c["run"])))
    rates = [i / s for i, s in zip(r["observations_items"], r["observations_s"])]
    mean = sum(rates) / len(rates)
    if c["outcome"] != "completed" or abs(c["value"] - mean) > 1e-6 * mean or len(rates) != 3:
        bad.append((c["label"], c["value"], mean, len(rates)))
print(bad or len(cells))
PY
)" 2

# 2. a suite with a target for it and for ours, 2 runs each, 1 image a rank
cat > "$tmp/suite.json" <<'JSON'
{
  "description": "both Mask R-CNNs on local",
  "performance_tolerance": 0.5, "deviation_tolerance": 0.5,
  "benchmarks": {
    "tv-maskrcnn": { "workload": "torchvision-maskrcnn", "set": { "ims_per_batch": 2 },
                     "benchmark_steps": 3, "warmup_steps": 1, "targets": { "local": 0.01 } },
    "maskrcnn": { "workload": "maskrcnn", "set": { "ims_per_batch": 2 },
                  "benchmark_steps": 3, "warmup_steps": 1, "targets": { "local": 0.01 } }
  }
}
JSON
out=$(timeout 900 "$BENCHCTL" suite run "$tmp/suite.json" "${common[@]}" --repeat 2 2>&1); rc=$?
is "suite run with a torchvision-maskrcnn target: exit 0" "$rc" 0
printf '%s\n' "$out" | tail -6 | sed 's/^/#   /'
like "  its row against its target" "$out" "^tv-maskrcnn .*0\.01"
like "  a verdict" "$out" "verdict: PASS"
done_testing
