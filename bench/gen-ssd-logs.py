#!/usr/bin/python3
"""bench/gen-ssd-logs.py: realistic SSD trial logs for the report benchmark.

Writes N trial logs of an 80-epoch SSD run in MLPerf v0.7 format: the
submission and hyperparameter keys, per-epoch start/stop with throughput and
progress lines in between, evaluation at the MLPerf SSD epochs, run_stop.
Deterministic for a seed.  Usage: gen-ssd-logs.py DIR [N] [SEED]
"""
import json
import os
import random
import sys

EVAL_EPOCHS = [40, 50, 55, 60, 65, 70, 75, 80]


def line(out, t, event, key, value=None, **meta):
    meta = dict({"file": "ssd/train.py", "lineno": 100}, **meta)
    out.write(":::MLLOG " + json.dumps({"namespace": "", "time_ms": int(t), "event_type": event,
                                         "key": key, "value": value, "metadata": meta}) + "\n")


def trial(path, rng, converge_at):
    t = 1.6e12 + rng.randint(0, 10**6)
    with open(path, "w") as out:
        out.write("STARTING TIMING RUN AT 2020-06-01 01:00:00 PM\n")
        for k, v in [("submission_benchmark", "ssd"), ("submission_org", "benchd"),
                     ("submission_division", "closed"), ("submission_status", "onprem"),
                     ("submission_platform", "4xC4140")]:
            line(out, t, "POINT_IN_TIME", k, v)
        line(out, t, "POINT_IN_TIME", "cache_clear", True)
        line(out, t, "INTERVAL_START", "init_start")
        for k, v in [("seed", rng.randint(0, 2**31)), ("global_batch_size", 896),
                     ("opt_base_learning_rate", 0.09), ("opt_weight_decay", 1.3e-4),
                     ("opt_learning_rate_warmup_steps", 654), ("opt_learning_rate_warmup_factor", 0),
                     ("opt_learning_rate_decay_boundary_epochs", [44, 55]),
                     ("train_samples", 117266), ("eval_samples", 5000), ("max_samples", 1),
                     ("model_bn_span", 56)]:
            line(out, t, "POINT_IN_TIME", k, v)
        t += 60000
        line(out, t, "INTERVAL_END", "init_stop")
        line(out, t, "INTERVAL_START", "run_start")
        acc = 0.0
        for e in range(1, 81):
            line(out, t, "INTERVAL_START", "epoch_start", epoch_num=e)
            for it in range(0, 131, 10):
                out.write("Epoch %d iteration %d loss %.4f lr %.5f %.1f img/s\n"
                          % (e, it, 8.0 / (1 + e / 10) + rng.random() * 0.1, 0.09, 8000 + rng.random() * 100))
            t += 117266 / (8053 + rng.gauss(0, 50)) * 1000
            line(out, t, "POINT_IN_TIME", "throughput", 8053 + rng.gauss(0, 50), epoch_num=e)
            line(out, t, "INTERVAL_END", "epoch_stop", epoch_num=e)
            if e in EVAL_EPOCHS:
                line(out, t, "INTERVAL_START", "eval_start", epoch_num=e)
                acc = 0.23 * min(1.0, e / converge_at) + (0.002 if e >= converge_at else 0)
                t += 15000
                line(out, t, "POINT_IN_TIME", "eval_accuracy", round(acc, 5), epoch_num=e)
                line(out, t, "INTERVAL_END", "eval_stop", epoch_num=e)
                if acc >= 0.23:
                    break
        line(out, t, "INTERVAL_END", "run_stop", status="success" if acc >= 0.23 else "aborted")
        out.write("ENDING TIMING RUN AT 2020-06-01 01:13:00 PM\n")
        out.write("RESULT,SINGLE_STAGE_DETECTOR,,746,benchd,2020-06-01 01:00:00 PM\n")


def main():
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        trial(os.path.join(d, "result_%d.txt" % i), rng, rng.choice([50, 55, 55, 60]))


if __name__ == "__main__":
    main()
