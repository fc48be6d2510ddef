#!/usr/bin/python3
"""nms.py: the inputs of bench/nms.sh, and torchvision.ops.nms's time on them.

  nms.py DIR REPS THREADS     (Debian's torch 1.13 / torchvision 0.14, CPU)

Writes into DIR (once; later runs reuse it), for N = 2,000 and 20,000:
  boxes-N.f32   N boxes (x1, y1, x2, y2) float32, detection-like: N / 40
                objects of 16-400 pixels in an 800 x 1344 image, 40 boxes
                jittered about each (centre sd 10% of the side, sides
                log-normal sd 0.2), clipped to the image
  scores-N.f32  N scores, uniform in [0, 1)
  keep-N.i64    torchvision.ops.nms(boxes, scores, 0.5), int64
Then times torchvision.ops.nms on each, REPS times after a warm-up, with
torch.set_num_threads(THREADS), and prints "torchvision nms-N SECONDS" (the
median).
"""
import os
import statistics
import sys
import time

import numpy as np
import torch
import torchvision

THR = 0.5
H, W = 800, 1344


def generate(n, g):
    k = n // 40
    ctr = torch.rand(k, 2, generator=g) * torch.tensor([W, H])
    side = 16 + 384 * torch.rand(k, 2, generator=g)
    obj = torch.arange(n) % k
    c = ctr[obj] + 0.1 * side[obj] * torch.randn(n, 2, generator=g)
    s = side[obj] * torch.exp(0.2 * torch.randn(n, 2, generator=g))
    b = torch.cat([c - s / 2, c + s / 2], 1)
    b[:, 0::2] = b[:, 0::2].clamp(0, W)
    b[:, 1::2] = b[:, 1::2].clamp(0, H)
    return b.float().contiguous(), torch.rand(n, generator=g).float()


def main():
    d, reps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    os.makedirs(d, exist_ok=True)
    g = torch.Generator().manual_seed(22)
    for n in (2000, 20000):
        path = os.path.join(d, "boxes-%d.f32" % n)
        b, s = generate(n, g)
        if not os.path.exists(path):
            b.numpy().tofile(path)
            s.numpy().tofile(os.path.join(d, "scores-%d.f32" % n))
            torchvision.ops.nms(b, s, THR).numpy().tofile(os.path.join(d, "keep-%d.i64" % n))
        b = torch.from_numpy(np.fromfile(path, dtype=np.float32).reshape(n, 4))
        s = torch.from_numpy(np.fromfile(os.path.join(d, "scores-%d.f32" % n), dtype=np.float32))
        torchvision.ops.nms(b, s, THR)
        t = []
        for _ in range(reps):
            t0 = time.perf_counter()
            torchvision.ops.nms(b, s, THR)
            t.append(time.perf_counter() - t0)
        print("torchvision nms-%d %.9f" % (n, statistics.median(t)))


main()
