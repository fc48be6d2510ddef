#!/usr/bin/python3
"""maskrcnn-step.py: time a Mask R-CNN training step of torchvision 0.14's
MaskRCNN on the CPU: forward with the five losses, backward, SGD update.

    maskrcnn-step.py [--config reference|small] [--threads T] [--iters K] [--warmup W] [--no-masks]

--no-masks: torchvision's FasterRCNN, the same model without the mask head
(targets without masks, four losses), against maskrcnn-step --masks 0.

  reference  R50-FPN as MLPerf trains it: frozen batch norm, stem and layer1
             frozen (trainable_backbone_layers 3), 81 classes, RPN pre/post-
             NMS top-n 2000/2000, 256 anchors, 512 RoIs per image; 2 images
             of 800 x 1333 (min_size 800, max_size 1333: kept as they are,
             padded to 800 x 1344)
  small      maskrcnn.md section 7 (as bench/maskrcnn-tv-learn.py builds it),
             4 images of 128 x 128, 4 classes

The objects (5 per image by default: boxes and 16-vertex polygons inscribed
in them, labels) come from the LCG bench/maskrcnn-step.c draws them from, so
both sides train on the same targets; the polygons are rasterised here into
the bitmasks torchvision takes.  The pixels are random (each side its own).
Prints "step MS images/s X loss L cpu-ms C main-ms M" (medians of K steps after W) and
"losses ..." of the last step, as bench/maskrcnn-step.c does.
"""
import argparse
import math
import time

import torch
import torchvision
from PIL import Image, ImageDraw
from torch import nn
from torchvision.models.detection import FasterRCNN, MaskRCNN
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import BackboneWithFPN, _resnet_fpn_extractor
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
from torchvision.ops import misc as misc_nn_ops
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool

ap = argparse.ArgumentParser()
ap.add_argument("--config", choices=["reference", "small"], default="reference")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--iters", type=int, default=3)
ap.add_argument("--warmup", type=int, default=1)
ap.add_argument("--objects", type=int, default=5)
ap.add_argument("--device", default="cpu", help="cpu or cuda")
ap.add_argument("--amp", action="store_true", help="float16 autocast (cuda)")
ap.add_argument("--no-tf32", action="store_true", help="cuDNN without TF32 (PyTorch allows it by default)")
ap.add_argument("--no-masks", action="store_true", help="Faster R-CNN: no mask head")
args = ap.parse_args()
dev = torch.device(args.device)
torch.backends.cudnn.allow_tf32 = not args.no_tf32
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
torch.set_num_threads(args.threads)
torch.manual_seed(1)

if args.config == "reference":
    N, H, W, K, smin, smax = 2, 800, 1333, 81, 32.0, 400.0
    body = torchvision.models.resnet50(weights=None, norm_layer=misc_nn_ops.FrozenBatchNorm2d)
    backbone = _resnet_fpn_extractor(body, 3)
    model = (FasterRCNN if args.no_masks else MaskRCNN)(backbone, num_classes=K, min_size=800, max_size=1333)
else:
    N, H, W, K, smin, smax = 4, 128, 128, 4, 16.0, 56.0
    body = torchvision.models.resnet18(weights=None, norm_layer=nn.BatchNorm2d)
    backbone = BackboneWithFPN(body, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"},
                               [64, 128, 256, 512], 64, extra_blocks=LastLevelMaxPool())
    anchors = AnchorGenerator(sizes=((16,), (32,), (64,), (128,), (256,)), aspect_ratios=((0.5, 1.0, 2.0),) * 5)
    small = dict(num_classes=None, min_size=128, max_size=128,
                 image_mean=[0.5, 0.5, 0.5], image_std=[0.25, 0.25, 0.25], rpn_anchor_generator=anchors,
                 rpn_pre_nms_top_n_train=300, rpn_pre_nms_top_n_test=150,
                 rpn_post_nms_top_n_train=200, rpn_post_nms_top_n_test=100, rpn_batch_size_per_image=128,
                 box_batch_size_per_image=64, box_positive_fraction=0.25, box_detections_per_img=20,
                 box_head=TwoMLPHead(64 * 7 * 7, 256), box_predictor=FastRCNNPredictor(256, K))
    if args.no_masks:
        model = FasterRCNN(backbone, **small)
    else:
        model = MaskRCNN(backbone, mask_head=MaskRCNNHeads(64, (64, 64), 1),
                         mask_predictor=MaskRCNNPredictor(64, 64, K), **small)
model.train()
model.to(dev)

# the scene: bench/maskrcnn-step.c's LCG and drawing order
lcg = 2022


def lcg_u():
    global lcg
    lcg = (lcg * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return (lcg >> 11) / 9007199254740992.0


images, targets = [], []
for i in range(N):
    boxes, labels, masks = [], [], []
    for k in range(args.objects):
        s = smin * math.pow(smax / smin, lcg_u())
        ar = math.pow(2.0, 2.0 * lcg_u() - 1.0)
        w, h = min(s * math.sqrt(ar), W - 2.0), min(s / math.sqrt(ar), H - 2.0)
        x1, y1 = (W - w) * lcg_u(), (H - h) * lcg_u()
        label = 1 + int((K - 1) * lcg_u())
        if label > K - 1:
            label = K - 1
        poly = [(x1 + w / 2 + w / 2 * math.cos(2 * math.pi * v / 16), y1 + h / 2 + h / 2 * math.sin(2 * math.pi * v / 16))
                for v in range(16)]
        im = Image.new("L", (W, H), 0)
        ImageDraw.Draw(im).polygon(poly, fill=1)
        boxes.append([x1, y1, x1 + w, y1 + h])
        labels.append(label)
        masks.append(torch.frombuffer(bytearray(im.tobytes()), dtype=torch.uint8).reshape(H, W))
    images.append(torch.rand(3, H, W))
    targets.append({"boxes": torch.tensor(boxes, dtype=torch.float32), "labels": torch.tensor(labels)})
    if not args.no_masks:
        targets[-1]["masks"] = torch.stack(masks)

images = [im.to(dev) for im in images]
targets = [{k: v.to(dev) for k, v in tg.items()} for tg in targets]
params = [p for p in model.parameters() if p.requires_grad]
scaler = torch.cuda.amp.GradScaler() if args.amp else None
opt = torch.optim.SGD(params, lr=0.001, momentum=0.9, weight_decay=1e-4)
print(f"# maskrcnn-step.py: {'Faster R-CNN, ' if args.no_masks else ''}{args.config}, {N} x 3 x {H} x {W}, {K} classes, "
      f"{sum(p.numel() for p in params)} trained parameters, torch {torch.__version__} "
      f"torchvision {torchvision.__version__}, {args.device}{' amp' if args.amp else ''}, {args.threads} threads",
      flush=True)
t, ct, mt = [], [], []
for it in range(-args.warmup, args.iters):
    sync()
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    opt.zero_grad()
    if scaler:
        with torch.autocast("cuda", dtype=torch.float16):
            losses = model(images, targets)
        loss = sum(losses.values())
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    else:
        losses = model(images, targets)
        loss = sum(losses.values())
        loss.backward()
        opt.step()
    sync()
    if it >= 0:
        t.append(time.perf_counter() - t0)
        ct.append(time.process_time() - c0)
        mt.append(time.thread_time() - m0)
t.sort()
ct.sort()
mt.sort()
med, cmed, mmed = t[len(t) // 2], ct[len(ct) // 2], mt[len(mt) // 2]
print(f"step {1e3 * med:.1f} images/s {N / med:.3f} loss {loss.item():.4f} cpu-ms {1e3 * cmed:.1f} "
      f"main-ms {1e3 * mmed:.1f}")
print("losses " + " ".join(f"{k[5:]} {v.item():.4f}" for k, v in losses.items()))
