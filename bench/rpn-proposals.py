#!/usr/bin/python3
"""rpn-proposals.py: the inputs of bench/rpn-proposals.sh, and torchvision's
time on them.

  rpn-proposals.py DIR REPS THREADS     (Debian's torch 1.13 / torchvision 0.14, CPU)

Two images of 800 x 1344 and 800 x 1199 padded to 800 x 1344, P2..P6 feature
maps of 200x336, 100x168, 50x84, 25x42, 13x21, 3 anchors per location:
268,569 anchors per image.  Writes into DIR (once; later runs reuse it):
  logits.f32    (2, 268569) objectness logits, standard normal
  deltas.f32    (2, 268569, 4) box deltas, normal sd 0.2
  out.f32       torchvision's proposals: per image the count, then count x 5
                (x1, y1, x2, y2, score)
Then times, REPS times after a warm-up with torch.set_num_threads(THREADS),
what the RPN does after its head: AnchorGenerator, box_coder.decode and
filter_proposals in training mode (pre-NMS top 2000 per level, NMS 0.7 per
level, top 2000 per image), and prints "torchvision rpn SECONDS" (the median).
"""
import os
import statistics
import sys
import time

import numpy as np
import torch
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.image_list import ImageList
from torchvision.models.detection.rpn import RegionProposalNetwork

FM = [(200, 336), (100, 168), (50, 84), (25, 42), (13, 21)]
SIZES = [(800, 1344), (800, 1199)]
N = len(SIZES)
A_L = [h * w * 3 for h, w in FM]
TOT = sum(A_L)


def main():
    d, reps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    os.makedirs(d, exist_ok=True)
    lp, dp = os.path.join(d, "logits.f32"), os.path.join(d, "deltas.f32")
    if not os.path.exists(lp):
        g = torch.Generator().manual_seed(22)
        torch.randn(N, TOT, generator=g).numpy().tofile(lp)
        (0.2 * torch.randn(N, TOT, 4, generator=g)).numpy().tofile(dp)
    logits = torch.from_numpy(np.fromfile(lp, dtype=np.float32).reshape(N, TOT))
    deltas = torch.from_numpy(np.fromfile(dp, dtype=np.float32).reshape(N * TOT, 4))
    gen = AnchorGenerator(tuple((s,) for s in (32, 64, 128, 256, 512)), ((0.5, 1.0, 2.0),) * 5)
    rpn = RegionProposalNetwork(gen, None, 0.7, 0.3, 256, 0.5, dict(training=2000, testing=1000),
                                dict(training=2000, testing=1000), 0.7)
    rpn.train()
    images = ImageList(torch.zeros(N, 3, 800, 1344), SIZES)
    feats = [torch.zeros(N, 1, h, w) for h, w in FM]

    def run():
        with torch.no_grad():
            anchors = rpn.anchor_generator(images, feats)
            props = rpn.box_coder.decode(deltas, anchors).view(N, -1, 4)
            return rpn.filter_proposals(props, logits, images.image_sizes, A_L)

    boxes, scores = run()
    op = os.path.join(d, "out.f32")
    if not os.path.exists(op):
        rows = []
        for b, s in zip(boxes, scores):
            rows.append(torch.tensor([float(b.shape[0])]))
            rows.append(torch.cat([b, s[:, None]], 1).reshape(-1))
        torch.cat(rows).float().numpy().tofile(op)
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        t.append(time.perf_counter() - t0)
    print("torchvision rpn %.9f" % statistics.median(t))


main()
