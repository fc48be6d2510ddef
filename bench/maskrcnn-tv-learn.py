#!/usr/bin/python3
"""maskrcnn-tv-learn.py: torchvision's MaskRCNN trained in the small
configuration of shared/reference/maskrcnn.md section 7 on a synthetic shapes
dataset (benchctl dataset synth), evaluated (bbox and segm AP, pycocotools)
on the validation split after every epoch.  The reference for the learning
test of benchd-maskrcnn and the torchvision side of "time for the learning
run vs torchvision" (bench/maskrcnn-learn.sh).

    maskrcnn-tv-learn.py DATA [--epochs 3] [--iters N] [--threads 2] [--batch 4]
                         [--seed 1] [--target AP] [--pycocotools SITE_PACKAGES]

Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14); pycocotools from
the build's venv (its site-packages appended to sys.path after torch and
numpy are imported: Debian's numpy stays the one in use).

The model (section 7): ResNet-18 from scratch with trained batch norm, FPN
64 channels on C2..C5 + P6 (max pool), anchors 16..256 x (0.5, 1, 2), RPN
pre-NMS 300/150 and post-NMS 200/100 (train/test), 128 sampled anchors, 64
RoIs at 25 % positive, box head 3136 -> 256 -> 256, mask head 2 x conv 64 +
deconv, min = max size 128, mean 0.5 std 0.25, 20 detections.  Everything
else is torchvision's default (its initialisation included: fc6, fc7,
cls_score and bbox_pred keep nn.Linear's default init, not the reference's
normal ones).  SGD lr 0.02 momentum 0.9 wd 1e-4 on every parameter, linear
warmup from 0.001x over 100 iterations, x0.1 at 80 % of the iterations
(3 epochs of batch 4 by default: 3 x 488 = 1464 on the default dataset),
no gradient clipping; horizontal flip p 0.5 (torchvision's references);
images without a non-crowd object are left out of training, crowd objects
are left out of the targets (as torchvision's references do).

Prints the loss every 20 iterations, per epoch the training time, mean
losses, evaluation time and the two APs, and last:
    final iterations N train_s T train_cpu_s C eval_s E bbox B segm S
(T: wall seconds of the training loops, C: their CPU seconds, all threads;
E: wall seconds of the evaluations)
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torchvision
from PIL import Image
from torch import nn
from torchvision.models.detection import MaskRCNN
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool

ap = argparse.ArgumentParser()
ap.add_argument("data")
ap.add_argument("--epochs", type=int, default=3)
ap.add_argument("--iters", type=int, default=0, help="stop after this many iterations (default: the epochs')")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--lr", type=float, default=0.02)
ap.add_argument("--log-every", type=int, default=20)
ap.add_argument("--target", type=float, default=0,
                help="stop after the first epoch whose bbox and segm AP are both at least this (MLPerf's rule)")
ap.add_argument("--pycocotools", default=None, help="a site-packages directory that holds pycocotools")
args = ap.parse_args()

if args.pycocotools:
    sys.path.append(args.pycocotools)
try:
    import pycocotools.mask as cocomask
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
except ImportError as e:
    sys.exit(f"maskrcnn-tv-learn.py: cannot import pycocotools ({e}): pass --pycocotools SITE_PACKAGES")

torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
random.seed(args.seed)
np.random.seed(args.seed)


def small_maskrcnn(num_classes):
    """Section 7's small configuration in torchvision's classes."""
    body = torchvision.models.resnet18(weights=None, norm_layer=nn.BatchNorm2d)
    backbone = BackboneWithFPN(body, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"},
                               [64, 128, 256, 512], 64, extra_blocks=LastLevelMaxPool())
    anchors = AnchorGenerator(sizes=((16,), (32,), (64,), (128,), (256,)), aspect_ratios=((0.5, 1.0, 2.0),) * 5)
    F = 64
    return MaskRCNN(backbone, num_classes=None, min_size=128, max_size=128,
                    image_mean=[0.5, 0.5, 0.5], image_std=[0.25, 0.25, 0.25],
                    rpn_anchor_generator=anchors,
                    rpn_pre_nms_top_n_train=300, rpn_pre_nms_top_n_test=150,
                    rpn_post_nms_top_n_train=200, rpn_post_nms_top_n_test=100,
                    rpn_batch_size_per_image=128,
                    box_batch_size_per_image=64, box_positive_fraction=0.25, box_detections_per_img=20,
                    box_head=TwoMLPHead(F * 7 * 7, 256), box_predictor=FastRCNNPredictor(256, num_classes),
                    mask_head=MaskRCNNHeads(F, (64, 64), 1), mask_predictor=MaskRCNNPredictor(64, 64, num_classes))


def load_split(split):
    """Images as float tensors in [0, 1] and their targets (polygons
    rasterised by pycocotools), kept in memory: 128-pixel JPEGs."""
    coco = COCO(os.path.join(args.data, "annotations", f"instances_{split}.json"))
    cats = sorted(coco.getCatIds())
    cat2label = {c: i + 1 for i, c in enumerate(cats)}
    items = []
    for img_id in sorted(coco.getImgIds()):
        info = coco.loadImgs(img_id)[0]
        with Image.open(os.path.join(args.data, split, info["file_name"])) as im:
            x = torch.from_numpy(np.asarray(im.convert("RGB")).copy()).permute(2, 0, 1).float().div_(255)
        anns = [a for a in coco.loadAnns(coco.getAnnIds(imgIds=img_id)) if not a["iscrowd"]]
        boxes = [[a["bbox"][0], a["bbox"][1], a["bbox"][0] + a["bbox"][2], a["bbox"][1] + a["bbox"][3]] for a in anns]
        t = {
            "boxes": torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
            "labels": torch.tensor([cat2label[a["category_id"]] for a in anns], dtype=torch.int64),
            "masks": torch.from_numpy(np.stack([coco.annToMask(a) for a in anns])) if anns
            else torch.zeros((0, info["height"], info["width"]), dtype=torch.uint8),
        }
        items.append((img_id, x, t))
    return coco, cats, items


def flip(x, t):
    W = x.shape[-1]
    b = t["boxes"].clone()
    b[:, [0, 2]] = W - t["boxes"][:, [2, 0]]
    return x.flip(-1), {"boxes": b, "labels": t["labels"], "masks": t["masks"].flip(-1)}


def evaluate(model, coco, cats, items):
    model.eval()
    res = []
    with torch.no_grad():
        for i in range(0, len(items), 8):
            chunk = items[i:i + 8]
            outs = model([x for _, x, _ in chunk])
            for (img_id, _, _), o in zip(chunk, outs):
                masks = (o["masks"][:, 0] > 0.5).numpy().astype(np.uint8)
                rles = cocomask.encode(np.asfortranarray(masks.transpose(1, 2, 0))) if len(masks) else []
                for k in range(len(o["scores"])):
                    x1, y1, x2, y2 = o["boxes"][k].tolist()
                    r = rles[k]
                    r["counts"] = r["counts"].decode("ascii")
                    res.append({"image_id": img_id, "category_id": cats[int(o["labels"][k]) - 1],
                                "bbox": [x1, y1, x2 - x1, y2 - y1], "score": float(o["scores"][k]),
                                "segmentation": r})
    model.train()
    if not res:
        return 0.0, 0.0
    dt = coco.loadRes(res)
    aps = []
    for iou_type in ("bbox", "segm"):
        E = COCOeval(coco, dt, iou_type)
        E.evaluate()
        E.accumulate()
        E.summarize()
        aps.append(E.stats[0])
    return aps[0], aps[1]


t0 = time.time()
_, _, train = load_split("train2017")
train = [it for it in train if len(it[2]["labels"])]
vcoco, vcats, val = load_split("val2017")
print(f"data: {len(train)} training images with objects, {len(val)} validation images "
      f"({time.time() - t0:.1f} s to load)", flush=True)

def blas():
    """The BLAS library torch's nn.Linear runs on: Debian's torch takes
    whatever libblas.so.3 is (the reference BLAS unless OpenBLAS is
    installed or put first on LD_LIBRARY_PATH: 20x slower matrix products)."""
    with open("/proc/self/maps") as f:
        libs = {ln.split()[-1] for ln in f if "blas" in ln}
    return ", ".join(sorted(os.path.basename(os.path.dirname(x)) + "/" + os.path.basename(x) for x in libs)) or "?"


model = small_maskrcnn(len(vcats) + 1)
model.train()
print(f"parameters: {sum(p.numel() for p in model.parameters())} "
      f"(trainable {sum(p.numel() for p in model.parameters() if p.requires_grad)}); "
      f"torch {torch.__version__} torchvision {torchvision.__version__}, {args.threads} threads, BLAS {blas()}, "
      f"OMP_WAIT_POLICY {os.environ.get('OMP_WAIT_POLICY', '(unset)')}", flush=True)
params = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
per_epoch = len(train) // args.batch
iters = args.iters or args.epochs * per_epoch
warmup, decay_at = 100, int(0.8 * iters)


def lr_at(it):
    """it: 0-based iteration; linear warmup from 0.001x (torchvision's LinearLR), x0.1 from 80 %."""
    f = 0.001 + (1 - 0.001) * it / warmup if it < warmup else 1.0
    return args.lr * f * (0.1 if it >= decay_at else 1.0)


epochs = math.ceil(iters / per_epoch)
names = ["loss_objectness", "loss_rpn_box_reg", "loss_classifier", "loss_box_reg", "loss_mask"]
it = 0
train_s = eval_s = train_cpu = 0.0
bbox = segm = 0.0
g = torch.Generator().manual_seed(args.seed)
for ep in range(epochs):
    order = torch.randperm(len(train), generator=g).tolist()
    sums = {k: 0.0 for k in names}
    n_ep = 0
    te, ce = time.time(), time.process_time()
    for b in range(per_epoch):
        if it >= iters:
            break
        xs, ts = [], []
        for j in order[b * args.batch:(b + 1) * args.batch]:
            _, x, t = train[j]
            if torch.rand(1, generator=g).item() < 0.5:
                x, t = flip(x, t)
            xs.append(x)
            ts.append(t)
        for pg in opt.param_groups:
            pg["lr"] = lr_at(it)
        losses = model(xs, ts)
        loss = sum(losses.values())
        if not math.isfinite(loss.item()):
            sys.exit(f"iteration {it + 1}: loss {loss.item()}")
        opt.zero_grad()
        loss.backward()
        opt.step()
        it += 1
        n_ep += 1
        for k in names:
            sums[k] += losses[k].item()
        if it % args.log_every == 0 or it == 1:
            print(f"it {it} lr {lr_at(it - 1):.5f} loss {loss.item():.4f} " +
                  " ".join(f"{k[5:]} {losses[k].item():.4f}" for k in names) +
                  f" ({time.time() - te:.1f} s into epoch {ep + 1})", flush=True)
    dt = time.time() - te
    train_s += dt
    train_cpu += time.process_time() - ce
    tv = time.time()
    bbox, segm = evaluate(model, vcoco, vcats, val)
    eval_s += time.time() - tv
    print(f"epoch {ep + 1}: {n_ep} iterations {dt:.1f} s ({dt / max(n_ep, 1):.3f} s/it), mean losses " +
          " ".join(f"{k[5:]} {sums[k] / max(n_ep, 1):.4f}" for k in names) +
          f"; eval {time.time() - tv:.1f} s bbox AP {bbox:.3f} segm AP {segm:.3f}", flush=True)
    if args.target > 0 and bbox >= args.target and segm >= args.target:
        print(f"target {args.target} reached after epoch {ep + 1}", flush=True)
        break
print(f"final iterations {it} train_s {train_s:.1f} train_cpu_s {train_cpu:.1f} eval_s {eval_s:.1f} bbox {bbox:.3f} segm {segm:.3f}")
print(json.dumps({"iterations": it, "train_s": round(train_s, 1), "train_cpu_s": round(train_cpu, 1), "eval_s": round(eval_s, 1),
                  "bbox": round(bbox, 4), "segm": round(segm, 4)}))
