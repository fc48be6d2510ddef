#!/usr/bin/env python3
"""rle-ops.py: the inputs of bench/rle-ops.sh, and pycocotools' time on them.

  rle-ops.py DIR [ROUNDS]     (numpy + pycocotools)

Writes into DIR (once; later runs reuse it):
  masks.bin     100 masks of 480 x 640, Mask R-CNN-like (a 28 x 28 soft mask
                pasted into a box), each column-major, one after the other
  inputs.json   {"h", "w", "n_masks", "encode": [their strings],
                 "iou": 50 images of 100 detections x 20 ground truths
                   [{"dt": [strings], "gt": [strings], "iscrowd", "iou": d * n + g}],
                 "poly": 2,000 objects of 1-3 polygons of 10-60 vertices
                   [{"polys": [[x, y, ...]], "string"}]}
Then times, ROUNDS times each, only pycocotools' calls:
  encode   mask.encode of the 100 masks as one H x W x N Fortran array
           (its fastest form: one call)
  encode-rows  the same masks given as rows (N x H x W, C order, as a
           model's output is): np.asfortranarray + mask.encode
  iou      mask.iou(dt, gt, iscrowd) per image, the RLEs as dicts of
           compressed strings (what COCOeval.computeIoU hands it)
  poly     mask.merge(mask.frPyObjects(polys, h, w)) per object (annToRLE)
and prints "pycocotools OP SECONDS" (the median round) for each.
"""
import gc
import importlib.util
import json
import os
import random
import statistics
import sys
import time

import numpy as np
import pycocotools.mask as M

H, W = 480, 640


def gen_segm():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen-segm.py")
    spec = importlib.util.spec_from_file_location("gen_segm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generate(d):
    g = gen_segm()
    rnd = random.Random(11)
    rng = np.random.RandomState(11)

    def pasted(boxes):
        masks = np.zeros((H, W, len(boxes)), dtype=np.uint8, order="F")
        for i, box in enumerate(boxes):
            g.paste(g.soft_mask(rng), box, H, W, masks[:, :, i])
        return masks

    masks = pasted([g.object_box(rnd, H, W) for _ in range(100)])
    with open(os.path.join(d, "masks.bin"), "wb") as f:
        f.write(masks.tobytes(order="F"))
    inputs = {"h": H, "w": W, "n_masks": masks.shape[2],
              "encode": [r["counts"].decode() for r in M.encode(masks)], "iou": [], "poly": []}
    for _ in range(50):
        objs = [g.object_box(rnd, H, W) for _ in range(20)]
        gt = [M.merge(M.frPyObjects(g.object_polygons(rnd, b), H, W)) for b in objs]
        near = [[b[0] + rnd.gauss(0, 0.1 * b[2]), b[1] + rnd.gauss(0, 0.1 * b[3]),
                 b[2] * (1 + rnd.gauss(0, 0.1)), b[3] * (1 + rnd.gauss(0, 0.1))] for b in objs for _ in range(3)]
        near = [[min(max(x, 0), W - 2), min(max(y, 0), H - 2), max(bw, 2), max(bh, 2)] for x, y, bw, bh in near]
        boxes = near + [g.object_box(rnd, H, W) for _ in range(100 - len(near))]
        dt = M.encode(pasted(boxes))
        inputs["iou"].append({"dt": [r["counts"].decode() for r in dt], "gt": [r["counts"].decode() for r in gt],
                              "iscrowd": [1 if i == 0 else 0 for i in range(len(gt))]})
    for _ in range(2000):
        inputs["poly"].append({"polys": g.object_polygons(rnd, g.object_box(rnd, H, W))})
    return masks, inputs


def median_time(rounds, fn):
    times = []
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        gc.enable()
    return statistics.median(times)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    path = os.path.join(d, "inputs.json")
    if os.path.exists(path):
        inputs = json.load(open(path))
        raw = np.fromfile(os.path.join(d, "masks.bin"), dtype=np.uint8)
        masks = raw.reshape((H, W, inputs["n_masks"]), order="F")
    else:
        os.makedirs(d, exist_ok=True)
        masks, inputs = generate(d)
    size = [H, W]
    iou_sets = [([{"size": size, "counts": s} for s in im["dt"]], [{"size": size, "counts": s} for s in im["gt"]],
                 im["iscrowd"]) for im in inputs["iou"]]
    objs = [o["polys"] for o in inputs["poly"]]
    # the answers, for the C side to check its own
    out = M.encode(masks)
    assert [r["counts"].decode() for r in out] == inputs["encode"]
    for im, (dt, gt, crowd) in zip(inputs["iou"], iou_sets):
        im["iou"] = [float(v) for v in np.asarray(M.iou(dt, gt, crowd)).flatten()]
    for o, polys in zip(inputs["poly"], objs):
        o["string"] = M.merge(M.frPyObjects(polys, H, W))["counts"].decode()
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            json.dump(inputs, f)
        os.rename(path + ".tmp", path)

    def run_encode():
        M.encode(masks)

    rows = np.ascontiguousarray(masks.transpose(2, 0, 1))     # N x H x W, rows: how masks come

    def run_encode_rows():
        M.encode(np.asfortranarray(rows.transpose(1, 2, 0)))

    def run_iou():
        for dt, gt, crowd in iou_sets:
            M.iou(dt, gt, crowd)

    def run_poly():
        for polys in objs:
            M.merge(M.frPyObjects(polys, H, W))

    print("pycocotools encode %.6f" % median_time(rounds, run_encode))
    print("pycocotools encode-rows %.6f" % median_time(rounds, run_encode_rows))
    print("pycocotools iou %.6f" % median_time(rounds, run_iou))
    print("pycocotools poly %.6f" % median_time(rounds, run_poly))


if __name__ == "__main__":
    main()
