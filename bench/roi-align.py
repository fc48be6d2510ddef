#!/usr/bin/python3
"""roi-align.py: torchvision.ops.MultiScaleRoIAlign forward + autograd
backward, the twin of bench/roi-align.c (same maps' shapes, same RoIs from
the same generator, same thread count); prints the median of the rounds:

    step <ms> fwd <ms> bwd <ms>

    /usr/bin/python3 bench/roi-align.py [--threads T] [--out 7|14] [--rounds R] [--warmup W]
"""
import argparse
import math
import time
from collections import OrderedDict

import torch
from torchvision.ops import MultiScaleRoIAlign

NIMG, PER_IMG, IMG_H, IMG_W = 2, 512, 800, 1344


class LCG:
    """the generator of roi-align.c"""
    def __init__(self, seed):
        self.s = seed

    def u(self):
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.s >> 11) / 9007199254740992.0


def make_boxes():
    g = LCG(2022)
    boxes = [[] for _ in range(NIMG)]
    for i in range(NIMG * PER_IMG):
        s = 16.0 * 2.0 ** (5.5 * g.u())
        ar = 2.0 ** (2.0 * g.u() - 1.0)
        w, h = s * math.sqrt(ar), s / math.sqrt(ar)
        cx, cy = IMG_W * g.u(), IMG_H * g.u()
        boxes[i // PER_IMG].append([max(cx - w / 2, 0), max(cy - h / 2, 0), min(cx + w / 2, IMG_W),
                                    min(cy + h / 2, IMG_H)])
    return [torch.tensor(b, dtype=torch.float32) for b in boxes]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    feats = OrderedDict()
    for l in range(4):
        s = 4 << l
        feats["p%d" % (l + 2)] = (torch.rand(NIMG, 256, (IMG_H + s - 1) // s, (IMG_W + s - 1) // s) - 0.5
                                  ).requires_grad_(True)
    boxes = make_boxes()
    pool = MultiScaleRoIAlign(["p2", "p3", "p4", "p5"], a.out, 2)
    sizes = [(IMG_H, IMG_W)] * NIMG
    dy = torch.rand(NIMG * PER_IMG, 256, a.out, a.out) - 0.5
    tf, tb, ts = [], [], []
    for i in range(a.warmup + a.rounds):
        for f in feats.values():
            f.grad = None
        t0 = time.perf_counter()
        y = pool(feats, boxes, sizes)
        t1 = time.perf_counter()
        y.backward(dy)
        t2 = time.perf_counter()
        if i >= a.warmup:
            tf.append((t1 - t0) * 1e3)
            tb.append((t2 - t1) * 1e3)
            ts.append((t2 - t0) * 1e3)
    med = lambda v: sorted(v)[len(v) // 2] if len(v) % 2 else sum(sorted(v)[len(v) // 2 - 1:len(v) // 2 + 1]) / 2
    print("step %.3f fwd %.3f bwd %.3f" % (med(ts), med(tf), med(tb)))


if __name__ == "__main__":
    main()
