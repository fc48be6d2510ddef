#!/usr/bin/python3
"""Golden values of whole Mask R-CNN training steps from torchvision's
MaskRCNN (Debian's torch 1.13 / torchvision 0.14, CPU), written at test time
for tests/helper/maskrcnn-golden.c (t0800-maskrcnn-golden.t).

    /usr/bin/python3 tests/maskrcnn-golden.py gen OUTDIR --mode mlperf|torchvision
            [--depth 18] [--width 1.0] [--fpn 64] [--classes 5] [--batch 2]
            [--seed 1] [--dtype float64|float32] [--threads 2] [--freeze-at 0]
            [--level-cap N] [--check-stock] [--pycoco PYTHON]

The model: torchvision.models.detection.MaskRCNN on a ResNet-18 FPN backbone
in the small configuration (shared/reference/maskrcnn.md section 7,
mrcnn_cfg_small): FPN --fpn channels on C2..C5 + P6, anchors 16..256 x (0.5,
1, 2), RPN pre-NMS 300 / post-NMS 200 (training), 128 sampled anchors, 64 RoIs
per image at 25 %, box head 256, mask head 2 x conv 64 + deconv, --classes K
(with the background).  Batch norm is FROZEN everywhere (running statistics
taken from one forward of the images, then weight and bias perturbed), so no
batch statistics enter the step; eps 0 in mlperf mode, 1e-5 in torchvision
mode.  --freeze-at as FREEZE_CONV_BODY_AT (0: the whole backbone trains,
2: stem and layer1 frozen).  ResNet-18 has no bottleneck: stride_in_1x1 does
not apply.  The RPN's logit and delta layers are re-drawn N(0, 0.1) and
N(0, 0.02) (the model's own N(0, 0.01) gives logits so close that float32
sigmoids tie and the proposals' order would be arbitrary); everything else
is the model's own initialisation.  The weights are float32 (weights.bdw,
torchvision's names) and both sides widen the same values.

The step is written out here with torchvision's modules (backbone, FPN, heads,
AnchorGenerator, BoxCoder, Matcher, filter_proposals, box_iou, roi_align) so
that precision is chosen per stage, as trainer/maskrcnn/mrcnn-net.h does:
  - the network (convolutions, FPN, heads, RoIAlign of the features, losses)
    in --dtype (float64: the truth);
  - the box bookkeeping in float32: the RPN's outputs rounded to float32,
    decoded, clipped, NMS, top-n; matching IoU, sampling, regression targets
    encoded in float32 (then widened for the losses); RoIs in float32 (the
    level mapper runs on them), widened for RoIAlign; mask targets float32.
In torchvision mode this is stock torchvision; --check-stock also runs the
stock model (model(images, targets), float32, the same injected samples) and
requires its five losses within 1e-5 (relative) of this path's float32 ones
and its gradients within relative L2 1e-5.  MG_DEBUG=1 prints why the float32
run's decisions differ from the float64 run's.

mlperf mode patches in the reference's rules (maskrcnn.md sections 1, 2):
+1 box coder (encode and decode), +1 box_iou, Detectron cell anchors
(generate_anchors of maskrcnn_benchmark), straddle 0 (anchors crossing the
unpadded image are ignored in the RPN loss), proposals per level: top-n by
objectness, +1 decode, clip to [0, W-1] x [0, H-1], min size 0 with +1
sizes, NMS suppressing IoU >= 0.7 with +1 areas, a per-level cap of
--level-cap (default the post-NMS top-n: POST_NMS_TOP_N_TRAIN), then the
post-NMS top-n over the whole batch; box head smooth L1 beta 1; the level
mapper with +1 areas (floor(4 + log2(sqrt(area) / 224 + 1e-6))); mask
targets: the matched GT polygons cropped to the RoI, scaled to 28 / w in
float32 and rasterised by pycocotools (frPyObjects, merge, decode); frozen
batch norm eps 0.  torchvision mode's mask target is roi_align of the
bitmask (pycocotools' rasterisation of the polygons at the unpadded image
size), 28 x 28, sampling -1, aligned false.

Sampler choices are injected: BalancedPositiveNegativeSampler draws
torch.randperm of the positives and negatives of each image (RPN, then RoI
heads) under torch.manual_seed; the heads of the permutations and the counts
are exported (struct det_perm).  Discrete decisions must not hang on
rounding: the generator requires every NMS IoU and matcher IoU to be 2e-5
clear of its threshold, the level mapper's argument 1e-5 clear of an
integer, every top-n cut between values 1e-5 apart (relative) and the kept proposals' float32 scores to be distinct, and
otherwise redraws the images and targets (attempt k uses seed + 1000 k; the
seed used is exported).

gen writes OUTDIR/weights.bdw (trainer/tools/convert-torchvision.py's
writer) and OUTDIR/golden.bin (tests/helper/golden-bin.h's format: "SSDGOLD1",
u32 count, per array u16 name length, name, u8 type (0 f32, 1 i32, 2 f64),
u8 ndim, i64 dims, little-endian values):

  config            f64: see CONFIG_KEYS (the helper builds its mrcnn_cfg from it)
  image             f32 (N, 3, H, W) padded batch, zeros beyond each image
  image_hw          i32 (N, 2) unpadded height, width
  gt_boxes:i        f32 (G, 4) x1 y1 x2 y2;  gt_labels:i  i32 (G)
  gt_nparts:i       i32 (G) polygons per object;  gt_plen:i  i32 coordinates per polygon
  gt_xy:i           f64 x y x y ... (float32 values)
  rpn_perm_pos:i, rpn_perm_neg:i, roi_perm_pos:i, roi_perm_neg:i   i32 heads of the permutations
  rpn_count, roi_count              i32 (N, 2) positives, negatives (candidates) per image
  losses            f64 (6) objectness, rpn_box, classifier, box_reg, mask, total
  sampled           i32 (4) rpn_pos, rpn_neg, roi_pos, roi_neg (sampled, batch)
  grad:<param>      f32 every trained parameter's gradient (--dtype's run)
  err32:<param>     f64 (1) relative L2 error of torchvision's float32 gradient
                    against the float64 one (0 when the float32 run's decisions
                    differ: see agree32)
  err32_losses      f64 (6) relative errors of the float32 run's losses
  agree32           i32 (1) 1 when the float32 run made the same discrete decisions
  props:i           f32 (P, 4) proposals of image i with the GT appended
  rois              f32 (R, 5) sampled RoIs, image by image in proposal order
                    (torchvision's and the reference's: torch.where(pos | neg))
  roi_labels        i32 (R)
"""
import argparse
import importlib.util
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.detection import MaskRCNN
from torchvision.models.detection import _utils as det_utils
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.image_list import ImageList
from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
from torchvision.models.detection.roi_heads import project_masks_on_boxes
from torchvision.models.detection.rpn import concat_box_prediction_layers
from torchvision.models.resnet import BasicBlock, ResNet
from torchvision.ops import boxes as box_ops
from torchvision.ops import roi_align
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool
from torchvision.ops.misc import FrozenBatchNorm2d

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from det_golden_common import clip_p1, decode_p1, iou_p1, nms_ge_p1  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG_KEYS = ["mode", "depth", "width_mult", "fpn_channels", "num_classes", "freeze_at", "anchor_size",
               "rpn_pre_nms_top_n_train", "rpn_post_nms_top_n_train", "level_cap", "rpn_batch",
               "rpn_positive_fraction", "roi_batch", "roi_positive_fraction", "box_rep", "mask_convs", "mask_dim",
               "frozen_bn_eps", "box_beta", "seed", "dtype_bits", "batch", "height", "width"]
SIZES = (16, 32, 64, 128, 256)
RATIOS = (0.5, 1.0, 2.0)


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---- the [R] rules (maskrcnn_benchmark), float32 ------------------------------------------

def detectron_cell_anchors(stride, size, ratios):
    """maskrcnn_benchmark generate_anchors(stride, (size,), ratios): _ratio_enum then _scale_enum"""
    def whctrs(a):
        w, h = a[2] - a[0] + 1, a[3] - a[1] + 1
        return w, h, a[0] + 0.5 * (w - 1), a[1] + 0.5 * (h - 1)

    def mk(ws, hs, xc, yc):
        return np.stack([xc - 0.5 * (ws - 1), yc - 0.5 * (hs - 1), xc + 0.5 * (ws - 1), yc + 0.5 * (hs - 1)], 1)

    base = np.array([1, 1, stride, stride], dtype=np.float64) - 1
    w, h, xc, yc = whctrs(base)
    sr = w * h / np.array(ratios, dtype=np.float64)
    ws = np.round(np.sqrt(sr))
    hs = np.round(ws * np.array(ratios, dtype=np.float64))
    out = []
    for a in mk(ws, hs, xc, yc):
        w, h, xc, yc = whctrs(a)
        scale = size / float(stride)
        out.append(mk(np.array([w * scale]), np.array([h * scale]), xc, yc)[0])
    return torch.tensor(np.array(out), dtype=torch.float32)


# the reference's table (maskrcnn.md section 1) for sizes 32..512: checks the generator above
R_TABLE_P2 = [(-22, -10, 25, 13), (-14, -14, 17, 17), (-10, -22, 13, 25)]
R_TABLE_P6 = [(-332, -152, 395, 215), (-224, -224, 287, 287), (-148, -328, 211, 391)]
assert detectron_cell_anchors(4, 32, RATIOS).tolist() == [list(map(float, r)) for r in R_TABLE_P2]
assert detectron_cell_anchors(64, 512, RATIOS).tolist() == [list(map(float, r)) for r in R_TABLE_P6]


def encode_p1(gt, props, weights):
    """maskrcnn_benchmark BoxCoder.encode (TO_REMOVE = 1)"""
    wx, wy, ww, wh = weights
    ew = props[:, 2] - props[:, 0] + 1
    eh = props[:, 3] - props[:, 1] + 1
    ex = props[:, 0] + 0.5 * ew
    ey = props[:, 1] + 0.5 * eh
    gw = gt[:, 2] - gt[:, 0] + 1
    gh = gt[:, 3] - gt[:, 1] + 1
    gx = gt[:, 0] + 0.5 * gw
    gy = gt[:, 1] + 0.5 * gh
    return torch.stack([wx * (gx - ex) / ew, wy * (gy - ey) / eh, ww * torch.log(gw / ew), wh * torch.log(gh / eh)], 1)


# ---- margins: a decision that hangs on rounding redraws the inputs -------------------------

class Near(Exception):
    pass


def clear_of(t, thrs, eps, what):
    t = t[~t.isnan()]
    for x in thrs:
        if bool(((t - x).abs() <= eps).any()):
            raise Near("%s within %g of %g" % (what, eps, x))


def clear_cut(sorted_desc, k, what, eps=1e-5):
    """the k-th and (k+1)-th values of a descending list apart by eps (relative)"""
    if 0 < k < sorted_desc.numel():
        a, b = float(sorted_desc[k - 1]), float(sorted_desc[k])
        if abs(a - b) <= eps * max(abs(a), abs(b), 1e-30):
            raise Near("%s: top-%d cut between %r and %r" % (what, k, a, b))


def distinct(scores, what):
    s = scores.sort(descending=True)[0]
    if s.numel() > 1 and bool(((s[:-1] - s[1:]) <= 0).any()):
        raise Near("%s: equal float32 scores" % what)


# ---- pycocotools (in another python: the venv) ---------------------------------------------

PYCOCO_SCRIPT = r"""
import json, sys
import numpy as np
import pycocotools.mask as M
out = []
for parts, h, w in json.load(sys.stdin):
    m = M.decode(M.merge(M.frPyObjects([np.array(p, dtype=np.double) for p in parts], h, w)))
    out.append("".join("1" if b else "0" for b in m.reshape(-1)))
json.dump(out, sys.stdout)
"""


def rasterise(py, reqs):
    """pycocotools' masks (h, w) uint8 of each request (parts, h, w): frPyObjects per part, merge, decode"""
    if not reqs:
        return []
    r = subprocess.run([py, "-c", PYCOCO_SCRIPT], input=json.dumps(reqs), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("maskrcnn-golden: pycocotools (%s) failed: %s" % (py, r.stderr.strip().splitlines()[-1:]))
    return [np.array([c == "1" for c in s], dtype=np.uint8).reshape(h, w)
            for s, (_, h, w) in zip(json.loads(r.stdout), reqs)]


def crop_scale(parts, box, M):
    """PolygonInstance.crop(box).resize((M, M)) in the reference's float32 arithmetic (masks.h)"""
    xmin, ymin, xmax, ymax = (float(v) for v in box)
    w, h = max(xmax - xmin, 1.0), max(ymax - ymin, 1.0)
    rw, rh = np.float32(M / w), np.float32(M / h)
    res = []
    for p in parts:
        if len(p) < 6:
            continue
        q = np.array(p, dtype=np.float32)
        q[0::2] = (q[0::2] - np.float32(xmin)) * rw
        q[1::2] = (q[1::2] - np.float32(ymin)) * rh
        res.append([float(v) for v in q])
    return res


# ---- the model ----------------------------------------------------------------------------

def make_body(width, norm):
    """torchvision's ResNet-18 with stem width `width` (64: the standard one)"""
    body = ResNet(BasicBlock, [2, 2, 2, 2], norm_layer=norm)
    if width != 64:
        body.inplanes = width
        body.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        body.bn1 = norm(width)
        for k in range(4):
            setattr(body, "layer%d" % (k + 1), body._make_layer(BasicBlock, width << k, 2, stride=1 if k == 0 else 2))
        for m in body.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
    del body.fc
    del body.avgpool
    return body


def build(a, images, eps):
    w = int(round(64 * a.width))
    if w != 64 * a.width or w < 8:
        sys.exit("maskrcnn-golden: --width must give an integer stem width (64 x width)")
    # running statistics of frozen batch norm: one forward of the images
    calib = make_body(w, lambda c: nn.BatchNorm2d(c, momentum=1.0))
    calib.train()
    with torch.no_grad():
        x = calib.maxpool(calib.relu(calib.bn1(calib.conv1(images))))
        for k in range(4):
            x = getattr(calib, "layer%d" % (k + 1))(x)
    state = {k: v for k, v in calib.state_dict().items() if not k.endswith("num_batches_tracked")}
    for k in state:
        if k.endswith(".weight") and state[k].dim() == 1:
            state[k] = state[k] * (0.8 + 0.4 * torch.rand(state[k].shape))
        if k.endswith(".bias") and state[k].dim() == 1:
            state[k] = 0.1 * torch.randn(state[k].shape)
    body = make_body(w, lambda c: FrozenBatchNorm2d(c, eps=eps))
    body.load_state_dict(state)
    trainable = ["layer4", "layer3", "layer2", "layer1", "conv1"][:5 - a.freeze_at]
    for name, p in body.named_parameters():
        if all(not name.startswith(t) for t in trainable):
            p.requires_grad_(False)
    backbone = BackboneWithFPN(body, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"},
                               [w, 2 * w, 4 * w, 8 * w], a.fpn, extra_blocks=LastLevelMaxPool())
    K, F_ = a.classes, a.fpn
    model = MaskRCNN(backbone, num_classes=None, min_size=128, max_size=128,
                     rpn_anchor_generator=AnchorGenerator(tuple((s,) for s in SIZES), (RATIOS,) * len(SIZES)),
                     rpn_pre_nms_top_n_train=300, rpn_pre_nms_top_n_test=150,
                     rpn_post_nms_top_n_train=200, rpn_post_nms_top_n_test=100,
                     rpn_batch_size_per_image=128, box_batch_size_per_image=64, box_positive_fraction=0.25,
                     box_head=TwoMLPHead(F_ * 7 * 7, 256), box_predictor=FastRCNNPredictor(256, K),
                     mask_head=MaskRCNNHeads(F_, (64, 64), 1), mask_predictor=MaskRCNNPredictor(64, 64, K),
                     box_detections_per_img=20)
    nn.init.normal_(model.rpn.head.cls_logits.weight, std=0.5)
    nn.init.normal_(model.rpn.head.bbox_pred.weight, std=0.02)
    return model


class PadOnly(nn.Module):
    """GeneralizedRCNNTransform without resizing or normalising: the images as given, in their padded batch"""
    def __init__(self, batch, sizes):
        super().__init__()
        self.batch, self.sizes = batch, sizes

    def forward(self, images, targets=None):
        return ImageList(self.batch.to(images[0].dtype), self.sizes), targets

    def postprocess(self, result, image_shapes, original_image_sizes):
        return result


class PermSampler(det_utils.BalancedPositiveNegativeSampler):
    """BalancedPositiveNegativeSampler that records its torch.randperm draws, or replays recorded ones"""
    def __init__(self, bs, frac, replay=None):
        super().__init__(bs, frac)
        self.replay = replay
        self.record = []

    def __call__(self, matched_idxs):
        pos_masks, neg_masks = [], []
        for i, m in enumerate(matched_idxs):
            positive = torch.where(m >= 1)[0]
            negative = torch.where(m == 0)[0]
            num_pos = min(positive.numel(), int(self.batch_size_per_image * self.positive_fraction))
            num_neg = min(negative.numel(), self.batch_size_per_image - num_pos)
            if self.replay is not None:
                r = self.replay[i]
                if r["npos"] != positive.numel() or r["nneg"] != negative.numel():
                    raise RuntimeError("replayed sampler: image %d has %d/%d candidates, recorded %d/%d" %
                                       (i, positive.numel(), negative.numel(), r["npos"], r["nneg"]))
                p1, p2 = r["pos"], r["neg"]
            else:
                p1 = torch.randperm(positive.numel())[:num_pos]
                p2 = torch.randperm(negative.numel())[:num_neg]
                self.record.append({"pos": p1, "npos": positive.numel(), "neg": p2, "nneg": negative.numel(),
                                    "pos_idx": positive[p1], "neg_idx": negative[p2]})
            pm = torch.zeros_like(m, dtype=torch.uint8)
            nm = torch.zeros_like(m, dtype=torch.uint8)
            pm[positive[p1]] = 1
            nm[negative[p2]] = 1
            pos_masks.append(pm)
            neg_masks.append(nm)
        return pos_masks, neg_masks


# ---- one training step --------------------------------------------------------------------

def anchors_of(mlperf, il, feats):
    if not mlperf:
        return AnchorGenerator(tuple((s,) for s in SIZES), (RATIOS,) * len(SIZES))(il, feats)[0].float()
    out = []
    H, W = il.tensors.shape[-2:]
    for f, size in zip(feats, SIZES):
        h, w = f.shape[-2:]
        sy, sx = H // h, W // w
        cell = detectron_cell_anchors(sx, size, RATIOS)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32) * sy, torch.arange(w, dtype=torch.float32) * sx,
                                indexing="ij")
        sh = torch.stack([xs.reshape(-1), ys.reshape(-1), xs.reshape(-1), ys.reshape(-1)], 1)
        out.append((sh[:, None, :] + cell[None]).reshape(-1, 4))
    return torch.cat(out)


def r_proposals(obj, deltas, anchors, A_L, sizes, pre, post, level_cap):
    """RPNPostProcessor with FPN, training: per image and level top-n, +1 decode, clip, NMS >=, cap; top-n over
    the batch (on the logits: the same set and order as on the sigmoid when these are distinct)"""
    per_image = []
    for i, (ih, iw) in enumerate(sizes):
        bl, sl = [], []
        off = 0
        for A in A_L:
            lg = obj[i, off:off + A]
            srt = lg.sort(descending=True)[0]
            k = min(pre, A)
            clear_cut(srt, k, "pre-NMS top-n")
            sc, idx = lg.topk(k, sorted=True)
            b = decode_p1(deltas[i, off:off + A][idx], anchors[off:off + A][idx])
            clip_p1(b, ih, iw)
            keep = ((b[:, 2] - b[:, 0] + 1 >= 0) & (b[:, 3] - b[:, 1] + 1 >= 0)).nonzero().squeeze(1)
            b, sc = b[keep], sc[keep]
            distinct(torch.sigmoid(sc), "RPN candidates' sigmoids")
            clear_of(iou_p1(b, b), (0.7,), 2e-5, "RPN NMS IoU")
            keep = nms_ge_p1(b, torch.sigmoid(sc), 0.7)
            clear_cut(sc[keep], level_cap, "per-level cap")
            keep = keep[:level_cap]
            bl.append(b[keep])
            sl.append(sc[keep])
            off += A
        per_image.append((torch.cat(bl), torch.cat(sl)))
    allsc = torch.cat([s for _, s in per_image])
    k = min(post, allsc.numel())
    clear_cut(allsc.sort(descending=True)[0], k, "post-NMS top-n over the batch")
    _, inds = torch.topk(allsc, k, sorted=True)
    mask = torch.zeros_like(allsc, dtype=torch.bool)
    mask[inds] = True
    masks = mask.split([s.numel() for _, s in per_image])
    return [b[m] for (b, _), m in zip(per_image, masks)]


def tv_proposals(rpn, obj, deltas, anchors, A_L, sizes):
    """RegionProposalNetwork.filter_proposals (stock), with the margin checks of its decisions"""
    N = obj.shape[0]
    props = rpn.box_coder.decode(deltas.reshape(-1, 4), [anchors] * N).view(N, -1, 4)
    for i, (ih, iw) in enumerate(sizes):
        off = 0
        for A in A_L:
            lg = obj[i, off:off + A]
            k = min(rpn.pre_nms_top_n(), A)
            clear_cut(lg.sort(descending=True)[0], k, "pre-NMS top-n")
            _, idx = lg.topk(k)
            b = box_ops.clip_boxes_to_image(props[i, off:off + A][idx], (ih, iw))
            distinct(torch.sigmoid(lg[idx]), "RPN candidates' sigmoids")
            clear_of(box_ops.box_iou(b, b), (0.7,), 2e-5, "RPN NMS IoU")
            off += A
    boxes, scores = rpn.filter_proposals(props, obj.reshape(-1, 1), sizes, A_L)
    for s in scores:
        distinct(s, "kept proposals' scores")
    return boxes


def msroi(feats, boxes, out, mlperf, dtype):
    """MultiScaleRoIAlign over P2..P5 (sampling 2, aligned false); levels from the float32 RoIs"""
    rois = torch.cat([torch.cat([torch.full((b.shape[0], 1), float(i)), b], 1) for i, b in enumerate(boxes)])
    b = rois[:, 1:]
    if mlperf:
        s = torch.sqrt((b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1))
        arg = 4 + torch.log2(s / 224 + 1e-6)
    else:
        s = torch.sqrt(box_ops.box_area(b))
        arg = 4 + torch.log2(s / 224) + torch.tensor(1e-6, dtype=s.dtype)
    inside = (arg > 2) & (arg < 6)
    clear_of(arg[inside] - torch.floor(arg[inside]), (0.0, 1.0), 1e-5, "level mapper argument's fraction")
    lv = torch.floor(arg).clamp(min=2, max=5).to(torch.int64) - 2
    res = torch.zeros((rois.shape[0], feats[0].shape[1], out, out), dtype=dtype)
    for k in range(4):
        idx = torch.where(lv == k)[0]
        res[idx] = roi_align(feats[k], rois[idx].to(dtype), (out, out), spatial_scale=1.0 / 2 ** (k + 2),
                             sampling_ratio=2, aligned=False)
    return res


def step(model, batch, sizes, tgt, mlperf, dtype, a, py, rpn_sampler, roi_sampler, level_cap):
    """one training step's five losses (float32 bookkeeping, network in dtype); debug values in dbg"""
    dbg = {}
    N = batch.shape[0]
    x = batch.to(dtype)
    feats = list(model.backbone(x).values())
    il = ImageList(x, sizes)
    rpn = model.rpn
    ob_l, de_l = rpn.head(feats)
    A_L = [o[0].numel() for o in ob_l]
    objectness, pred_deltas = concat_box_prediction_layers(ob_l, de_l)
    anchors = anchors_of(mlperf, il, feats)
    ob32 = objectness.detach().float().reshape(N, -1)
    de32 = pred_deltas.detach().float().reshape(N, -1, 4)
    if mlperf:
        props = r_proposals(ob32, de32, anchors, A_L, sizes, 300, 200, level_cap)
    else:
        props = tv_proposals(rpn, ob32, de32, anchors, A_L, sizes)

    # RPN targets and loss
    labels, rtargets = [], []
    for i in range(N):
        gt = tgt[i]["boxes"]
        iou = iou_p1(gt, anchors) if mlperf else box_ops.box_iou(gt, anchors)
        clear_of(iou, (0.3, 0.7), 2e-5, "RPN matcher IoU")
        for r in range(iou.shape[0]):  # low-quality ties: exactly equal or clearly apart
            mx = float(iou[r].max())
            near = (iou[r] - mx).abs() <= 1e-5 * mx
            if bool((near & (iou[r] != mx)).any()):
                raise Near("RPN matcher: a near tie for a GT's best anchor")
        m = rpn.proposal_matcher(iou)
        lab = (m >= 0).to(torch.float32)
        lab[m == -1] = 0.0
        lab[m == -2] = -1.0
        if mlperf:
            ih, iw = sizes[i]
            vis = (anchors[:, 0] >= 0) & (anchors[:, 1] >= 0) & (anchors[:, 2] < iw) & (anchors[:, 3] < ih)
            lab[~vis] = -1.0
            rtargets.append(encode_p1(gt[m.clamp(min=0)], anchors, (1.0, 1.0, 1.0, 1.0)))
        else:
            rtargets.append(rpn.box_coder.encode_single(gt[m.clamp(min=0)], anchors))
        labels.append(lab)
    rpn.fg_bg_sampler = rpn_sampler
    loss_obj, loss_rpn_box = rpn.compute_loss(objectness, pred_deltas, [l.to(dtype) for l in labels],
                                              [t.to(dtype) for t in rtargets])

    # RoI targets
    heads = model.roi_heads
    props = [torch.cat([p, t["boxes"]]) for p, t in zip(props, tgt)]
    dbg["props"] = props
    matched, rlabels = [], []
    for i in range(N):
        gt = tgt[i]["boxes"]
        iou = iou_p1(gt, props[i]) if mlperf else box_ops.box_iou(gt, props[i])
        clear_of(iou, (0.5,), 2e-5, "RoI matcher IoU")
        m = heads.proposal_matcher(iou)
        lab = tgt[i]["labels"][m.clamp(min=0)].clone()
        lab[m == -1] = 0
        lab[m == -2] = -1
        matched.append(m.clamp(min=0))
        rlabels.append(lab)
    pos_m, neg_m = roi_sampler(rlabels)
    sprops, slabels, smatched, stargets = [], [], [], []
    for i in range(N):
        inds = torch.where(pos_m[i] | neg_m[i])[0]
        p = props[i][inds]
        g = tgt[i]["boxes"][matched[i][inds]]
        sprops.append(p)
        slabels.append(rlabels[i][inds])
        smatched.append(matched[i][inds])
        stargets.append(encode_p1(g, p, (10.0, 10.0, 5.0, 5.0)) if mlperf else heads.box_coder.encode_single(g, p))
    # the sampled RoIs in the order of the box head: image by image, by proposal index (torch.where(pos | neg),
    # as maskrcnn_benchmark's subsample too)
    dbg["rois"] = torch.cat([torch.cat([torch.full((p.shape[0], 1), float(i)), p], 1) for i, p in enumerate(sprops)])
    dbg["roi_labels"] = torch.cat(slabels)

    # box head and its loss
    bf = heads.box_head(msroi(feats[:4], sprops, 7, mlperf, dtype))
    cls, box = heads.box_predictor(bf)
    lab = torch.cat(slabels)
    tg = torch.cat(stargets).to(dtype)
    loss_cls = F.cross_entropy(cls, lab)
    pos = torch.where(lab > 0)[0]
    box = box.reshape(box.shape[0], -1, 4)
    loss_box = F.smooth_l1_loss(box[pos, lab[pos]], tg[pos], beta=1.0 if mlperf else 1.0 / 9,
                                reduction="sum") / lab.numel()

    # mask head and its loss
    mprops, mmatched, mlab = [], [], []
    for i in range(N):
        p = torch.where(slabels[i] > 0)[0]
        mprops.append(sprops[i][p])
        mmatched.append(smatched[i][p])
        mlab.append(slabels[i][p])
    logits = heads.mask_predictor(heads.mask_head(msroi(feats[:4], mprops, 14, mlperf, dtype)))
    M = logits.shape[-1]
    mt = []
    if mlperf:
        reqs = []
        for i in range(N):
            for b, g in zip(mprops[i], mmatched[i]):
                reqs.append((crop_scale(tgt[i]["parts"][int(g)], b.tolist(), M), M, M))
        mt = [torch.from_numpy(r).float() for r in rasterise(py, reqs)]
        mt = torch.stack(mt) if mt else torch.zeros(0, M, M)
    else:
        mt = torch.cat([project_masks_on_boxes(tgt[i]["masks"], mprops[i], mmatched[i], M) for i in range(N)])
    ml = torch.cat(mlab)
    loss_mask = F.binary_cross_entropy_with_logits(logits[torch.arange(ml.numel()), ml], mt.to(dtype))
    counts = [sum(int(r["pos"].numel()) for r in rpn_sampler.record or rpn_sampler.replay),
              sum(int(r["neg"].numel()) for r in rpn_sampler.record or rpn_sampler.replay),
              int(pos.numel()), int(lab.numel() - pos.numel())]
    losses = [loss_obj, loss_rpn_box, loss_cls, loss_box, loss_mask]
    return losses, counts, dbg


# ---- inputs -------------------------------------------------------------------------------

def shape_parts(g, cx, cy, r, kind):
    """a polygon (float32 vertices) around (cx, cy): a star-like convex-ish shape"""
    k = int(torch.randint(5, 12, (1,), generator=g))
    ang = torch.sort(torch.rand(k, generator=g) * 2 * math.pi)[0]
    rr = r * (0.55 + 0.45 * torch.rand(k, generator=g))
    if kind == 1:   # a rectangle-ish quad
        ang = torch.tensor([0.25, 0.75, 1.25, 1.75]) * math.pi + 0.2 * torch.rand(4, generator=g)
        rr = r * (0.8 + 0.2 * torch.rand(4, generator=g))
    xy = torch.stack([cx + rr * torch.cos(ang), cy + rr * torch.sin(ang)], 1).reshape(-1)
    return [float(np.float32(v)) for v in xy]


def make_inputs(a, seed, H, W, sizes):
    g = torch.Generator().manual_seed(seed)
    N = len(sizes)
    batch = torch.zeros(N, 3, H, W)
    tgt = []
    for i, (h, w) in enumerate(sizes):
        img = 0.3 * torch.randn(3, h, w, generator=g)
        G = 3 + (i % 2)
        boxes, labels, parts_all = [], [], []
        for j in range(G):
            r = 10 + 18 * float(torch.rand(1, generator=g))
            cx = r + (w - 2 * r) * float(torch.rand(1, generator=g))
            cy = r + (h - 2 * r) * float(torch.rand(1, generator=g))
            parts = [shape_parts(g, cx, cy, r, j % 2)]
            if j == 1:   # a second part: the object is their union
                parts.append(shape_parts(g, cx + 0.8 * r, cy - 0.3 * r, 0.5 * r, 0))
            xy = np.concatenate([np.array(p).reshape(-1, 2) for p in parts])
            x1, y1 = np.clip(xy.min(0), 0, None)
            x2, y2 = np.minimum(xy.max(0), [w - 1, h - 1])
            boxes.append([float(np.float32(v)) for v in (x1, y1, x2, y2)])
            labels.append(1 + int(torch.randint(0, a.classes - 1, (1,), generator=g)))
            parts_all.append(parts)
            # paint the object so that the features see it
            yy, xx = torch.meshgrid(torch.arange(h).float(), torch.arange(w).float(), indexing="ij")
            inside = ((xx - cx) ** 2 + (yy - cy) ** 2) < (0.7 * r) ** 2
            img[:, inside] += torch.randn(3, 1, generator=g)
        batch[i, :, :h, :w] = img
        tgt.append({"boxes": torch.tensor(boxes, dtype=torch.float32), "labels": torch.tensor(labels),
                    "parts": parts_all})
    return batch, tgt


# ---- output -------------------------------------------------------------------------------

class GoldenBin:
    def __init__(self):
        self.parts = []

    def add(self, name, t, ty=None):
        t = torch.as_tensor(t).detach().contiguous()
        if ty is None:
            ty = 1 if t.dtype in (torch.int64, torch.int32, torch.bool, torch.uint8) else (
                2 if t.dtype == torch.float64 else 0)
        dt, np_t = {0: (torch.float32, "<f4"), 1: (torch.int32, "<i4"), 2: (torch.float64, "<f8")}[ty]
        raw = t.to(dt).numpy().astype(np_t).tobytes()
        nb = name.encode()
        self.parts.append(struct.pack("<H", len(nb)) + nb + struct.pack("<BB", ty, t.dim()) +
                          struct.pack("<%dq" % t.dim(), *t.shape) + raw)

    def write(self, path):
        data = b"SSDGOLD1" + struct.pack("<I", len(self.parts)) + b"".join(self.parts)
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)


def run_step(model, batch, sizes, tgt, mlperf, dtype, a, py, replay, level_cap):
    m = model.to(dtype)
    m.zero_grad()
    rs = PermSampler(128, 0.5, replay and replay[0])
    qs = PermSampler(64, 0.25, replay and replay[1])
    if replay is None:
        torch.manual_seed(a.seed + 7)
    losses, counts, dbg = step(m, batch, sizes, tgt, mlperf, dtype, a, py, rs, qs, level_cap)
    total = sum(losses)
    total.backward()
    grads = {n: p.grad.detach().clone() for n, p in m.named_parameters() if p.requires_grad}
    return [float(l) for l in losses] + [float(total)], counts, dbg, grads, (rs.record, qs.record)


def gen(a):
    mlperf = a.mode == "mlperf"
    H = W = 128
    sizes = [(96, 128), (128, 96), (128, 128), (64, 96)][:a.batch]
    if a.batch > 4:
        sys.exit("maskrcnn-golden: --batch is 1..4")
    py = a.pycoco or os.environ.get("PYCOCO")
    if not py:
        sys.exit("maskrcnn-golden: give --pycoco (or PYCOCO) a python with pycocotools")
    eps = 0.0 if mlperf else 1e-5
    level_cap = a.level_cap if a.level_cap else 200
    dtype = torch.float64 if a.dtype == "float64" else torch.float32
    why = []
    for attempt in range(30):
        seed = a.seed + 1000 * attempt
        torch.manual_seed(seed)
        batch, tgt = make_inputs(a, seed + 1, H, W, sizes)
        model = build(a, batch, eps)
        model.train()
        for p in model.parameters():   # float32 values: both sides widen the same numbers
            p.data = p.data.float()
        w32 = {k: v.clone() for k, v in model.state_dict().items()}
        if not mlperf:
            bits = rasterise(py, [(parts, h, w) for t, (h, w) in zip(tgt, sizes) for parts in t["parts"]])
            k = 0
            for t in tgt:
                n = len(t["parts"])
                t["masks"] = torch.from_numpy(np.stack(bits[k:k + n])).to(torch.uint8)
                k += n
        try:
            losses, counts, dbg, grads, rec = run_step(model, batch, sizes, tgt, mlperf, dtype, a, py, None,
                                                      level_cap)
            break
        except Near as e:
            why.append(str(e))
    else:
        sys.exit("maskrcnn-golden: no inputs clear of the thresholds in 30 attempts: %s" % why[-3:])

    # the float32 run: PyTorch's own rounding error, the yardstick of a float32 model
    m32 = build(a, batch, eps)
    m32.load_state_dict(w32)
    m32.train()
    agree, err_l, err_g = 0, [0.0] * 6, {}
    if dtype == torch.float64:
        try:
            l32, c32, d32, g32, _ = run_step(m32, batch, sizes, tgt, mlperf, torch.float32, a, py, rec, level_cap)
            # the same decisions: the same sampled counts and proposals (a different box is pixels away)
            agree = int(c32 == counts and all(p.shape == q.shape and float((p - q).abs().max()) < 0.05
                                              for p, q in zip(d32["props"], dbg["props"])))
            if os.environ.get("MG_DEBUG"):
                print("float32 run:", c32, counts, [(p.shape, q.shape) for p, q in zip(d32["props"], dbg["props"])],
                      [float((p - q).abs().max()) for p, q in zip(d32["props"], dbg["props"]) if p.shape == q.shape],
                      file=sys.stderr)
        except (Near, RuntimeError) as e:
            if os.environ.get("MG_DEBUG"):
                print("float32 run:", e, file=sys.stderr)
            agree = 0
        if agree:
            err_l = [abs(x - y) / max(abs(y), 1e-30) for x, y in zip(l32, losses)]
            for n, g in grads.items():
                d = float((g32[n].double() - g).norm())
                err_g[n] = d / max(float(g.norm()), 1e-300)

    if a.check_stock:
        if mlperf:
            sys.exit("maskrcnn-golden: --check-stock is for --mode torchvision")
        stock = build(a, batch, eps)
        stock.load_state_dict(w32)
        stock.train()
        l_ours, _, _, g_ours, _ = run_step(stock, batch, sizes, tgt, False, torch.float32, a, py, rec, level_cap)
        stock.transform = PadOnly(batch, sizes)
        stock.rpn.fg_bg_sampler = PermSampler(128, 0.5, rec[0])
        stock.roi_heads.fg_bg_sampler = PermSampler(64, 0.25, rec[1])
        stock.zero_grad()
        imgs = [batch[i, :, :h, :w] for i, (h, w) in enumerate(sizes)]
        ld = stock(imgs, [{"boxes": t["boxes"], "labels": t["labels"], "masks": t["masks"]} for t in tgt])
        st = [float(ld[k]) for k in ("loss_objectness", "loss_rpn_box_reg", "loss_classifier", "loss_box_reg",
                                     "loss_mask")]
        sum(ld.values()).backward()
        gerr = max(float((p.grad - g_ours[n]).norm()) / max(float(p.grad.norm()), 1e-30)
                   for n, p in stock.named_parameters() if p.requires_grad)
        print("stock torchvision float32 gradients: largest relative L2 difference from this path's %.2g" % gerr)
        rel = [abs(x - y) / max(abs(y), 1e-30) for x, y in zip(l_ours, st)]
        rel64 = [abs(x - y) / max(abs(y), 1e-30) for x, y in zip(losses, st)]
        print("stock torchvision float32 losses %s\n  this path float32 rel %s\n  this path %s rel %s" %
              (["%.9g" % v for v in st], ["%.2g" % v for v in rel], a.dtype, ["%.2g" % v for v in rel64]))
        if max(rel) > 1e-5 or gerr > 1e-5:
            sys.exit("maskrcnn-golden: this path differs from stock torchvision (float32) by %g" % max(rel))

    os.makedirs(a.out, exist_ok=True)
    conv = load_module("convert_torchvision", os.path.join(HERE, "..", "trainer", "tools", "convert-torchvision.py"))
    conv.write_weights(os.path.join(a.out, "weights.bdw"), w32, "maskrcnn-golden.py %s seed %d" % (a.mode, seed))
    g = GoldenBin()
    cfg = {"mode": 0 if mlperf else 1, "depth": 18, "width_mult": a.width, "fpn_channels": a.fpn,
           "num_classes": a.classes, "freeze_at": a.freeze_at, "anchor_size": SIZES[0],
           "rpn_pre_nms_top_n_train": 300, "rpn_post_nms_top_n_train": 200, "level_cap": level_cap,
           "rpn_batch": 128, "rpn_positive_fraction": 0.5, "roi_batch": 64, "roi_positive_fraction": 0.25,
           "box_rep": 256, "mask_convs": 2, "mask_dim": 64, "frozen_bn_eps": eps,
           "box_beta": 1.0 if mlperf else 1.0 / 9, "seed": seed, "dtype_bits": 64 if dtype == torch.float64 else 32,
           "batch": a.batch, "height": H, "width": W}
    g.add("config", torch.tensor([float(cfg[k]) for k in CONFIG_KEYS], dtype=torch.float64))
    g.add("image", batch)
    g.add("image_hw", torch.tensor(sizes, dtype=torch.int32))
    for i, t in enumerate(tgt):
        g.add("gt_boxes:%d" % i, t["boxes"])
        g.add("gt_labels:%d" % i, t["labels"])
        g.add("gt_nparts:%d" % i, torch.tensor([len(p) for p in t["parts"]]))
        g.add("gt_plen:%d" % i, torch.tensor([len(q) for p in t["parts"] for q in p]))
        g.add("gt_xy:%d" % i, torch.tensor([v for p in t["parts"] for q in p for v in q], dtype=torch.float64))
    for tag, r in zip(("rpn", "roi"), rec):
        for i, x in enumerate(r):
            g.add("%s_perm_pos:%d" % (tag, i), x["pos"])
            g.add("%s_perm_neg:%d" % (tag, i), x["neg"])
        g.add("%s_count" % tag, torch.tensor([[x["npos"], x["nneg"]] for x in r]))
    g.add("losses", torch.tensor(losses, dtype=torch.float64))
    g.add("sampled", torch.tensor(counts))
    for n, v in grads.items():
        g.add("grad:" + n, v, 0)
        g.add("err32:" + n, torch.tensor([err_g.get(n, 0.0)], dtype=torch.float64))
    g.add("err32_losses", torch.tensor(err_l, dtype=torch.float64))
    g.add("agree32", torch.tensor([agree]))
    for i, p in enumerate(dbg["props"]):
        g.add("props:%d" % i, p)
    g.add("rois", dbg["rois"])
    g.add("roi_labels", dbg["roi_labels"])
    g.write(os.path.join(a.out, "golden.bin"))
    print("maskrcnn-golden: %s, %s, seed %d (%d redraws%s), %d parameters (%d trained), losses %s, sampled %s, "
          "float32 run %s" % (a.mode, a.dtype, seed, len(why), (": " + why[-1]) if why else "",
                              sum(p.numel() for p in model.parameters()), len(grads),
                              " ".join("%.6g" % v for v in losses), counts,
                              ("agrees, loss errors " + " ".join("%.2g" % v for v in err_l[:5]) +
                               ", largest gradient error %.2g" % max(err_g.values())) if agree else "differs"))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("gen")
    p.add_argument("out")
    p.add_argument("--mode", choices=("mlperf", "torchvision"), required=True)
    p.add_argument("--depth", type=int, default=18, choices=(18,))
    p.add_argument("--width", type=float, default=1.0)
    p.add_argument("--fpn", type=int, default=64)
    p.add_argument("--classes", type=int, default=5)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--freeze-at", type=int, default=0, choices=(0, 1, 2, 3, 4, 5))
    p.add_argument("--level-cap", type=int, default=0)
    p.add_argument("--check-stock", action="store_true")
    p.add_argument("--pycoco", default=None)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    gen(a)


if __name__ == "__main__":
    sys.exit(main())
