#!/usr/bin/python3
"""Golden values of the SSD workload from a PyTorch implementation of the same
model, written at test time (t0650-ssd-golden.t, bench/ssd-step.sh).

    /usr/bin/python3 tests/ssd-golden.py gen OUTDIR [--depth 34] [--size 300]
            [--width 1.0] [--classes 81] [--batch 2] [--seed 1] [--threads N]
    /usr/bin/python3 tests/ssd-golden.py bench [--depth 34] [--size 300]
            [--batch 8] [--steps 5] [--threads N]

The model, the default boxes, the encoder, the loss and the decoder follow the
MLPerf reference (mlcommons/training single_stage_detector: ssd300.py,
base_model.py, utils.py): ResNet stem and layer1..3 with layer3 at stride 1,
five extra blocks, 3x3 heads viewed as (N, 4, -1) and (N, K, -1); default
boxes level by level, box size, row, column; matching with forced best
boxes; variances 0.1/0.2; smooth L1 plus cross-entropy with 3:1 hard negative
mining divided by the positives, mean over the batch; softmax, score > 0.05,
top 200 per class, NMS 0.5, best 200.  Extensions of trainer/ssd/ssd-net.h:
other image sizes (feature maps by layer arithmetic, pad-0 blocks pad 1 on
maps under 3x3, centres on the map's own grid), width multiplier, ResNet-18.

gen writes OUTDIR/weights.bdw (the model's float32 weights, benchd's weights
format) and OUTDIR/golden.bin: named float32/int32 arrays (format below).
The model runs twice from the same float32 weights and inputs: in float64
(the truth) and in float32 (PyTorch's rounding, the yardstick of errors).

  dboxes            (B, 4) cx, cy, w, h
  gt_boxes, gt_labels, gt_count    (N, G, 4), (N, G), (N) ground truth
  glabel, gloc      (N, B), (N, B, 4) the encoder's labels and the loss's offsets
  image             (N, 3, S, S)
  ploc64, plabel64, ploc32, plabel32    forward outputs as rows (N, B, 4), (N, B, K)
  r_loc, r_conf     the loss's gradient at ploc64, plabel64; the backward is of
                    sum(ploc r_loc) + sum(plabel r_conf)
  grad64:<param>, grad32:<param>        that backward's parameter gradients
  lloc, lconf       random outputs for the loss (std 2, no near ties at the mining cut)
  loss64            (1) the loss of (lloc, lconf) against (glabel, gloc), float64
  dlloc, dlconf     its gradients, float64
  det_count         (N) decode of (lloc, lconf): detections per image
  det_box, det_score, det_label   (N, 200, 4), (N, 200), (N, 200), best first

golden.bin: "SSDGOLD1", u32 count, then per array: u16 name length, name,
u8 type (0 f32, 1 i32), u8 ndim, i64 dims[ndim], little-endian values.

bench times full training steps (forward, loss, backward, SGD with momentum)
of the same model on random images with random boxes and prints
"images/s <value>".
"""
import argparse
import math
import os
import struct
import sys
import time
import zlib
from itertools import product

import torch
import torch.nn as nn
import torch.nn.functional as F

REF_FSIZE = [38, 19, 10, 5, 3, 1]
STEPS = [8, 16, 32, 64, 100, 300]
SCALES = [21, 45, 99, 153, 207, 261, 315]
RATIOS = [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
CHAN = [256, 512, 512, 256, 256, 256]
MID = [256, 256, 128, 128, 128]


def width(c, mult):
    return max(8, int(round(c * mult / 8.0)) * 8)


# ---- the network ---------------------------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or cin != planes:
            self.downsample = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        s = x if self.downsample is None else self.downsample(x)
        return F.relu(y + s)


class Backbone(nn.Module):
    """torchvision's ResNet-18/34 up to layer3 (its names), layer3 at stride 1."""

    def __init__(self, depth, w):
        super().__init__()
        blocks = {18: [2, 2, 2], 34: [3, 4, 6]}[depth]
        self.conv1 = nn.Conv2d(3, w, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(w)
        cin = w
        for s, (nb, stride) in enumerate(zip(blocks, [1, 2, 1])):
            planes = w << s
            layer = [BasicBlock(cin if j == 0 else planes, planes, stride if j == 0 else 1) for j in range(nb)]
            setattr(self, "layer%d" % (s + 1), nn.Sequential(*layer))
            cin = planes
        self.out_channels = cin
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        return self.layer3(self.layer2(self.layer1(x)))


def feature_sizes(size):
    o = (size - 1) // 2 + 1
    o = (o - 1) // 2 + 1
    o = (o - 1) // 2 + 1
    fs, pads = [o], []
    for e in range(5):
        if e < 3:
            pads.append(1)
            o = (o - 1) // 2 + 1
        else:
            pads.append(0 if o >= 3 else 1)
            o = o - 2 if o >= 3 else o
        fs.append(o)
    return fs, pads


class SSD(nn.Module):
    def __init__(self, depth=34, size=300, mult=1.0, classes=81):
        super().__init__()
        self.label_num = classes
        self.backbone = Backbone(depth, width(64, mult))
        self.fsize, pads = feature_sizes(size)
        chan = [self.backbone.out_channels] + [width(c, mult) for c in CHAN[1:]]
        blocks = []
        for e in range(5):
            mid = width(MID[e], mult)
            blocks.append(nn.Sequential(
                nn.Conv2d(chan[e], mid, 1), nn.ReLU(inplace=True),
                nn.Conv2d(mid, chan[e + 1], 3, 2 if e < 3 else 1, pads[e]), nn.ReLU(inplace=True)))
        self.additional_blocks = nn.ModuleList(blocks)
        self.num_defaults = [4, 6, 6, 6, 4, 4]
        self.loc = nn.ModuleList([nn.Conv2d(c, a * 4, 3, padding=1) for a, c in zip(self.num_defaults, chan)])
        self.conf = nn.ModuleList([nn.Conv2d(c, a * classes, 3, padding=1)
                                   for a, c in zip(self.num_defaults, chan)])
        for layer in [*self.additional_blocks, *self.loc, *self.conf]:
            for p in layer.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

    def forward(self, x):
        src = [self.backbone(x)]
        for b in self.additional_blocks:
            src.append(b(src[-1]))
        locs = [l(s).view(s.size(0), 4, -1) for s, l in zip(src, self.loc)]
        confs = [c(s).view(s.size(0), self.label_num, -1) for s, c in zip(src, self.conf)]
        return torch.cat(locs, 2).contiguous(), torch.cat(confs, 2).contiguous()


# ---- boxes, encoder, loss, decoder ---------------------------------------------------

def default_boxes(size, fsize):
    ref = fsize == REF_FSIZE
    boxes = []
    for k, f in enumerate(fsize):
        g = 300.0 / STEPS[k] if ref else float(f)
        sk1, sk2 = SCALES[k] / 300.0, SCALES[k + 1] / 300.0
        sk3 = math.sqrt(sk1 * sk2)
        sizes = [(sk1, sk1), (sk3, sk3)]
        for a in RATIOS[k]:
            w, h = sk1 * math.sqrt(a), sk1 / math.sqrt(a)
            sizes += [(w, h), (h, w)]
        for w, h in sizes:
            for i, j in product(range(f), repeat=2):
                boxes.append(((j + 0.5) / g, (i + 0.5) / g, w, h))
    xywh = torch.tensor(boxes, dtype=torch.float32).clamp_(0, 1)
    ltrb = xywh.clone()
    ltrb[:, 0] = xywh[:, 0] - 0.5 * xywh[:, 2]
    ltrb[:, 1] = xywh[:, 1] - 0.5 * xywh[:, 3]
    ltrb[:, 2] = xywh[:, 0] + 0.5 * xywh[:, 2]
    ltrb[:, 3] = xywh[:, 1] + 0.5 * xywh[:, 3]
    return xywh, ltrb


def calc_iou(b1, b2):
    N, M = b1.size(0), b2.size(0)
    be1 = b1.unsqueeze(1).expand(-1, M, -1)
    be2 = b2.unsqueeze(0).expand(N, -1, -1)
    lt = torch.max(be1[:, :, :2], be2[:, :, :2])
    rb = torch.min(be1[:, :, 2:], be2[:, :, 2:])
    delta = rb - lt
    delta[delta < 0] = 0
    inter = delta[:, :, 0] * delta[:, :, 1]
    d1 = be1[:, :, 2:] - be1[:, :, :2]
    d2 = be2[:, :, 2:] - be2[:, :, :2]
    return inter / (d1[:, :, 0] * d1[:, :, 1] + d2[:, :, 0] * d2[:, :, 1] - inter)


def encode(ltrb, boxes, labels):
    """Encoder.encode: (B, 4) matched boxes as cx, cy, w, h and (B) labels."""
    nb = ltrb.size(0)
    ious = calc_iou(boxes, ltrb)
    best_dbox_ious, best_dbox_idx = ious.max(dim=0)
    best_bbox_ious, best_bbox_idx = ious.max(dim=1)
    best_dbox_ious.index_fill_(0, best_bbox_idx, 2.0)
    for idx in range(best_bbox_idx.size(0)):
        best_dbox_idx[best_bbox_idx[idx]] = idx
    masks = best_dbox_ious > 0.5
    labels_out = torch.zeros(nb, dtype=torch.long)
    labels_out[masks] = labels[best_dbox_idx[masks]]
    out = ltrb.clone()
    out[masks, :] = boxes[best_dbox_idx[masks], :]
    x, y = 0.5 * (out[:, 0] + out[:, 2]), 0.5 * (out[:, 1] + out[:, 3])
    w, h = -out[:, 0] + out[:, 2], -out[:, 1] + out[:, 3]
    return torch.stack([x, y, w, h], 1), labels_out


def loc_vec(gloc, xywh):
    """Loss._loc_vec on (N, 4, B) boxes."""
    d = xywh.t().unsqueeze(0)
    gxy = 10.0 * (gloc[:, :2, :] - d[:, :2, :]) / d[:, 2:, :]
    gwh = 5.0 * (gloc[:, 2:, :] / d[:, 2:, :]).log()
    return torch.cat((gxy, gwh), dim=1).contiguous()


def ssd_loss(ploc, plabel, vec_gd, glabel):
    """The reference Loss.forward with the offsets already encoded."""
    mask = glabel > 0
    pos_num = mask.sum(dim=1)
    sl1 = F.smooth_l1_loss(ploc, vec_gd, reduction="none").sum(dim=1)
    sl1 = (mask.to(sl1.dtype) * sl1).sum(dim=1)
    con = F.cross_entropy(plabel, glabel, reduction="none")
    con_neg = con.clone()
    con_neg[mask] = 0
    _, con_idx = con_neg.sort(dim=1, descending=True)
    _, con_rank = con_idx.sort(dim=1)
    neg_num = torch.clamp(3 * pos_num, max=mask.size(1)).unsqueeze(-1)
    neg_mask = con_rank < neg_num
    closs = (con * (mask.to(con.dtype) + neg_mask.to(con.dtype))).sum(dim=1)
    total = sl1 + closs
    num_mask = (pos_num > 0).to(con.dtype)
    pos_num = pos_num.to(con.dtype).clamp(min=1e-6)
    return (total * num_mask / pos_num).mean(dim=0)


def decode_single(boxes, scores, criteria=0.5, max_output=200, max_num=200):
    """Encoder.decode_single on (B, 4) corners and (B, K) probabilities."""
    bout, sout, lout = [], [], []
    for i, score in enumerate(scores.split(1, 1)):
        if i == 0:
            continue
        score = score.squeeze(1)
        mask = score > 0.05
        bb, score = boxes[mask, :], score[mask]
        if score.size(0) == 0:
            continue
        _, idx_sorted = score.sort(dim=0, stable=True)
        idx_sorted = idx_sorted[-max_num:]
        cand = []
        while idx_sorted.numel() > 0:
            idx = idx_sorted[-1].item()
            iou = calc_iou(bb[idx_sorted, :], bb[idx, :].unsqueeze(0)).squeeze(1)
            idx_sorted = idx_sorted[iou < criteria]
            cand.append(idx)
        bout.append(bb[cand, :])
        sout.append(score[cand])
        lout.extend([i] * len(cand))
    if not bout:
        return torch.zeros(0, 4), torch.zeros(0), torch.zeros(0, dtype=torch.long)
    bout, sout, lout = torch.cat(bout, 0), torch.cat(sout, 0), torch.tensor(lout, dtype=torch.long)
    _, ids = sout.sort(dim=0, stable=True)
    ids = ids[-max_output:].flip(0)
    return bout[ids, :], sout[ids], lout[ids]


def scale_back(ploc, plabel, xywh):
    """scale_back_batch for one image: (4, B), (K, B) -> corners (B, 4), probabilities (B, K)."""
    b = ploc.t().clone()
    d = xywh
    b[:, :2] = 0.1 * b[:, :2]
    b[:, 2:] = 0.2 * b[:, 2:]
    b[:, :2] = b[:, :2] * d[:, 2:] + d[:, :2]
    b[:, 2:] = b[:, 2:].exp() * d[:, 2:]
    out = torch.stack([b[:, 0] - 0.5 * b[:, 2], b[:, 1] - 0.5 * b[:, 3],
                       b[:, 0] + 0.5 * b[:, 2], b[:, 1] + 0.5 * b[:, 3]], 1)
    return out, F.softmax(plabel.t(), dim=-1)


# ---- output ------------------------------------------------------------------------

def write_atomic(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_weights(path, state, source):
    """benchd's weights format (trainer/core/checkpoint.h), float tensors only."""
    body = bytearray()
    count = 0
    for name, t in state.items():
        if not t.is_floating_point():
            continue
        t = t.detach().to(torch.float32).contiguous()
        nb = name.encode()
        body += struct.pack("<H", len(nb)) + nb + struct.pack("<BB", 0, t.dim())
        body += struct.pack("<%dq" % t.dim(), *t.shape) + t.numpy().astype("<f4").tobytes()
        count += 1
    data = b"BDWEIGHT" + struct.pack("<II", 1, count) + source.encode()[:63].ljust(64, b"\0") + bytes(body)
    write_atomic(path, data + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, 0) + b"BDWTEND\0")


class Golden:
    def __init__(self):
        self.parts = []

    def add(self, name, t):
        t = t.detach().contiguous()
        if t.dtype in (torch.int64, torch.int32, torch.bool):
            ty, raw = 1, t.to(torch.int32).numpy().astype("<i4").tobytes()
        else:
            ty, raw = 0, t.to(torch.float32).numpy().astype("<f4").tobytes()
        nb = name.encode()
        self.parts.append(struct.pack("<H", len(nb)) + nb + struct.pack("<BB", ty, t.dim()) +
                          struct.pack("<%dq" % t.dim(), *t.shape) + raw)

    def write(self, path):
        write_atomic(path, b"SSDGOLD1" + struct.pack("<I", len(self.parts)) + b"".join(self.parts))


def random_gt(gen, n, G):
    """G boxes per image, corners in [0, 1], sizes 0.05..0.7."""
    wh = 0.05 + 0.65 * torch.rand(n, G, 2, generator=gen)
    lt = torch.rand(n, G, 2, generator=gen) * (1 - wh)
    return torch.cat([lt, lt + wh], 2)


def gen(a):
    torch.manual_seed(a.seed)
    gen_ = torch.Generator().manual_seed(a.seed + 100)
    model = SSD(a.depth, a.size, a.width, a.classes)
    model.train()
    os.makedirs(a.out, exist_ok=True)
    write_weights(os.path.join(a.out, "weights.bdw"), model.state_dict(),
                  "ssd-golden.py seed %d" % a.seed)
    g = Golden()
    xywh, ltrb = default_boxes(a.size, model.fsize)
    B, N, K = xywh.size(0), a.batch, a.classes
    g.add("dboxes", xywh)

    # ground truth, encoded targets
    G = 5
    gt = random_gt(gen_, N, G)
    counts = torch.tensor([G - (i % 3) for i in range(N)], dtype=torch.int32)
    labels = torch.randint(1, K, (N, G), generator=gen_)
    glabel, gxywh = [], []
    for i in range(N):
        c = int(counts[i])
        bx, lb = encode(ltrb, gt[i, :c], labels[i, :c])
        gxywh.append(bx)
        glabel.append(lb)
    glabel = torch.stack(glabel)
    gloc = loc_vec(torch.stack(gxywh).transpose(1, 2), xywh)     # (N, 4, B)
    g.add("gt_boxes", gt)
    g.add("gt_labels", labels)
    g.add("gt_count", counts)
    g.add("glabel", glabel)
    g.add("gloc", gloc.transpose(1, 2))

    # forward and backward of the network, float64 and float32
    x = torch.randn(N, 3, a.size, a.size, generator=gen_)
    g.add("image", x)
    # the backward is of sum(ploc r_loc) + sum(plabel r_conf) with r the
    # gradient of the SSD loss at the float64 outputs: the gradients of a
    # real training step, without the mining's dependence on rounding
    import copy
    m64 = copy.deepcopy(model).double()
    with torch.no_grad():
        ploc, plabel = m64(x.double())
    pl = ploc.clone().requires_grad_()
    pc = plabel.clone().requires_grad_()
    ssd_loss(pl, pc, gloc.double(), glabel).backward()
    r_loc, r_conf = pl.grad.transpose(1, 2).float(), pc.grad.transpose(1, 2).float()
    g.add("r_loc", r_loc)
    g.add("r_conf", r_conf)
    for tag, dt in (("64", torch.float64), ("32", torch.float32)):
        m = copy.deepcopy(model).to(dt)
        m.zero_grad()
        ploc, plabel = m(x.to(dt))
        ploc, plabel = ploc.transpose(1, 2), plabel.transpose(1, 2)
        g.add("ploc" + tag, ploc)
        g.add("plabel" + tag, plabel)
        ((ploc * r_loc.to(dt)).sum() + (plabel * r_conf.to(dt)).sum()).backward()
        for name, p in m.named_parameters():
            g.add("grad%s:%s" % (tag, name), p.grad)

    # the loss on random outputs, without near ties where the mining cuts
    for attempt in range(100):
        lloc = 2 * torch.randn(N, B, 4, generator=gen_)
        lconf = 2 * torch.randn(N, B, K, generator=gen_)
        con = F.cross_entropy(lconf.transpose(1, 2).double(), glabel, reduction="none")
        ok = True
        for i in range(N):
            neg = con[i][glabel[i] == 0].sort(descending=True).values
            k = min(3 * int((glabel[i] > 0).sum()), B)
            if 0 < k < neg.numel() and (neg[k - 1] - neg[k]).abs() < 1e-4:
                ok = False
        if ok:
            break
    g.add("lloc", lloc)
    g.add("lconf", lconf)
    pl = lloc.double().transpose(1, 2).requires_grad_()
    pc = lconf.double().transpose(1, 2).requires_grad_()
    loss = ssd_loss(pl, pc, gloc.double(), glabel)
    loss.backward()
    g.add("loss64", loss.reshape(1))
    g.add("dlloc", pl.grad.transpose(1, 2))
    g.add("dlconf", pc.grad.transpose(1, 2))

    # decoding and NMS of the same outputs
    dets = torch.zeros(N, 200, 4)
    dscore = torch.zeros(N, 200)
    dlabel = torch.zeros(N, 200, dtype=torch.int32)
    dcount = torch.zeros(N, dtype=torch.int32)
    for i in range(N):
        boxes, probs = scale_back(lloc[i].t(), lconf[i].t(), xywh)
        b, s, lb = decode_single(boxes, probs)
        n = b.size(0)
        dcount[i] = n
        dets[i, :n] = b
        dscore[i, :n] = s
        dlabel[i, :n] = lb.to(torch.int32)
    g.add("det_count", dcount)
    g.add("det_box", dets)
    g.add("det_score", dscore)
    g.add("det_label", dlabel)
    g.write(os.path.join(a.out, "golden.bin"))
    print("ssd-golden: %d default boxes, %d parameters, loss %.6f, %s detections" %
          (B, sum(p.numel() for p in model.parameters()), loss.item(), dcount.tolist()))


def bench(a):
    torch.manual_seed(a.seed)
    gen_ = torch.Generator().manual_seed(a.seed)
    dev = torch.device(a.device)
    torch.backends.cudnn.allow_tf32 = not a.no_tf32
    torch.backends.cudnn.benchmark = dev.type == "cuda"
    model = SSD(a.depth, a.size, a.width, a.classes)
    model.train()
    xywh, ltrb = default_boxes(a.size, model.fsize)
    model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, weight_decay=5e-4)
    x = torch.randn(a.batch, 3, a.size, a.size, generator=gen_).to(dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    scaler = torch.cuda.amp.GradScaler() if a.amp else None
    gt = random_gt(gen_, a.batch, 4)
    labels = torch.randint(1, a.classes, (a.batch, 4), generator=gen_)

    def step():
        # targets are encoded per step, as a training loop does for each batch
        enc = [encode(ltrb, gt[i], labels[i]) for i in range(a.batch)]
        gloc = loc_vec(torch.stack([e[0] for e in enc]).transpose(1, 2), xywh).to(dev)
        glabel = torch.stack([e[1] for e in enc]).to(dev)
        opt.zero_grad()
        if scaler:
            with torch.autocast("cuda", dtype=torch.float16):
                ploc, plabel = model(x)
            loss = ssd_loss(ploc.float(), plabel.float(), gloc, glabel)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            ploc, plabel = model(x)
            loss = ssd_loss(ploc, plabel, gloc, glabel)
            loss.backward()
            opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    sync()
    t0 = time.perf_counter()
    for k in range(a.steps):
        ts = time.perf_counter()
        step()
        sync()
        print("step %d %.4f s" % (a.warmup + k + 1, time.perf_counter() - ts))
    dt = time.perf_counter() - t0
    print("pytorch %s, %s%s, %d threads, batch %d, %dx%d: %.3f s/step" %
          (torch.__version__, a.device, " amp" if a.amp else "", torch.get_num_threads(), a.batch, a.size, a.size,
           dt / a.steps))
    print("images/s %.4f" % (a.batch * a.steps / dt))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("gen", "bench"):
        p = sub.add_parser(name)
        if name == "gen":
            p.add_argument("out")
        p.add_argument("--depth", type=int, default=34)
        p.add_argument("--size", type=int, default=300)
        p.add_argument("--width", type=float, default=1.0)
        p.add_argument("--classes", type=int, default=81)
        p.add_argument("--batch", type=int, default=2 if name == "gen" else 8)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--threads", type=int, default=0)
        if name == "bench":
            p.add_argument("--steps", type=int, default=5)
            p.add_argument("--warmup", type=int, default=1)
            p.add_argument("--device", default="cpu", help="cpu or cuda")
            p.add_argument("--amp", action="store_true", help="float16 autocast (cuda)")
            p.add_argument("--no-tf32", action="store_true", help="cuDNN without TF32 (PyTorch allows it by default)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    {"gen": gen, "bench": bench}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
