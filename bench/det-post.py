#!/usr/bin/python3
"""det-post.py: Mask R-CNN's inference postprocessing of one image in
torchvision 0.14, the counterpart of bench/det-post.c (same inputs from the
same LCG, same timing: medians of --iters after --warmup, same output lines).

    /usr/bin/python3 bench/det-post.py [--iters 20] [--warmup 3] [--threads T]

  detect  RoIHeads.postprocess_detections + transform.resize_boxes
  paste   maskrcnn_inference (sigmoid, the label's channel) +
          paste_masks_in_image + (> 0.5)
"""
import argparse
import statistics
import time

import numpy as np
import torch
from torchvision.models.detection.roi_heads import RoIHeads, maskrcnn_inference, paste_masks_in_image
from torchvision.models.detection.transform import resize_boxes

ap = argparse.ArgumentParser()
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--warmup", type=int, default=3)
ap.add_argument("--threads", type=int, default=0)
a = ap.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
N, K, M, H, W, OH, OW = 1000, 81, 28, 800, 1066, 480, 640


def lcg(seed, n, k):
    """n draws of the LCG of det-post.c (numpy: the recurrence is sequential, so in Python)"""
    out = np.empty(n, dtype=np.int64)
    s = seed
    for i in range(n):
        s = (s * 1103515245 + 12345) % (1 << 31)
        out[i] = (s >> 8) % k
    return out, s


class G:
    s = 22

    def u(self, k, n=1):
        v, self.s = lcg(self.s, n, k)
        return v


g = G()
logits = torch.tensor((g.u(2049, N * K) - 1024) / 256.0, dtype=torch.float32).reshape(N, K)
deltas = torch.tensor((g.u(1025, N * K * 4) - 512) / 2048.0, dtype=torch.float32).reshape(N, 4 * K)
props = []
for i in range(N):
    x1 = g.u(W * 4)[0] / 4.0
    y1 = g.u(H * 4)[0] / 4.0
    w = 8 + g.u(300 * 4)[0] / 4.0
    h = 8 + g.u(300 * 4)[0] / 4.0
    props.append([x1, y1, min(x1 + w, W), min(y1 + h, H)])
props = torch.tensor(props, dtype=torch.float32)
# the mask head's output: random values of the same range (the LCG is too slow in Python for 6M draws;
# paste's work depends on the boxes, which are the C side's)
mlog = (torch.randint(0, 2049, (100, K, M, M)).float() - 1024) / 256.0
heads = RoIHeads(None, None, None, 0.5, 0.5, 512, 0.25, None, 0.05, 0.5, 100)
td, tp = [], []
for it in range(a.warmup + a.iters):
    t0 = time.perf_counter()
    with torch.no_grad():
        b, s, l = heads.postprocess_detections(logits, deltas, [props], [(H, W)])
        boxes = resize_boxes(b[0], (H, W), (OH, OW))
        t1 = time.perf_counter()
        n = len(boxes)
        probs = maskrcnn_inference(mlog[:n], [l[0]])[0]
        masks = paste_masks_in_image(probs, boxes, (OH, OW)) > 0.5
    t2 = time.perf_counter()
    if it >= a.warmup:
        td.append((t1 - t0) * 1e3)
        tp.append((t2 - t1) * 1e3)
print("detect %.3f\npaste %.3f\ndetections %d" % (statistics.median(td), statistics.median(tp), n))
