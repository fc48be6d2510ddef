"""det_golden_common.py: what the detection golden generators
(det-ops-golden.py, det-rpn-golden.py, maskrcnn-golden.py) share: the C
header writer, random boxes, the LCG their C tests reproduce and the
reference's (maskrcnn_benchmark's) +1 box rules in float32 torch."""
import math

import torch

out = []


def emit(s):
    out.append(s)


def farr(name, t):
    v = t.reshape(-1).tolist()
    body = ", ".join("%.9g" % x for x in v)
    emit("static const float %s[%d] = { %s };" % (name, max(len(v), 1), body))


def iarr(name, v, ctype="int"):
    v = [int(x) for x in v]
    body = ", ".join(str(x) for x in v)
    emit("static const %s %s[%d] = { %s };" % (ctype, name, max(len(v), 1), body))


def rand_boxes(n, lo, hi, wlo, whi):
    xy = lo + (hi - lo) * torch.rand(n, 2)
    wh = wlo + (whi - wlo) * torch.rand(n, 2)
    return torch.cat([xy, xy + wh], 1).float()


class LCG:
    """the generator of lcg_next() in test-det-ops.c and lcg_u() in
    test-det-proposals.c"""
    def __init__(self, seed):
        self.s = seed

    def u(self, k):
        self.s = (self.s * 1103515245 + 12345) % (1 << 31)
        return (self.s >> 8) % k


def iou_p1(a, b):
    """maskrcnn_benchmark boxlist_iou (+1): (len(a), len(b))"""
    area1 = (a[:, 2] - a[:, 0] + 1) * (a[:, 3] - a[:, 1] + 1)
    area2 = (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1)
    lt = torch.max(a[:, None, :2], b[:, :2])
    rb = torch.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt + 1).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter)


def decode_p1(codes, boxes):
    """maskrcnn_benchmark BoxCoder.decode, weights (1, 1, 1, 1)"""
    w = boxes[:, 2] - boxes[:, 0] + 1
    h = boxes[:, 3] - boxes[:, 1] + 1
    cx = boxes[:, 0] + 0.5 * w
    cy = boxes[:, 1] + 0.5 * h
    dw = codes[:, 2].clamp(max=math.log(1000.0 / 16))
    dh = codes[:, 3].clamp(max=math.log(1000.0 / 16))
    pcx = codes[:, 0] * w + cx
    pcy = codes[:, 1] * h + cy
    pw = torch.exp(dw) * w
    ph = torch.exp(dh) * h
    return torch.stack([pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw - 1, pcy + 0.5 * ph - 1], 1)


def clip_p1(b, ih, iw):
    """BoxList.clip_to_image (+1): x into [0, iw - 1], y into [0, ih - 1], in place"""
    b[:, 0].clamp_(min=0, max=iw - 1)
    b[:, 1].clamp_(min=0, max=ih - 1)
    b[:, 2].clamp_(min=0, max=iw - 1)
    b[:, 3].clamp_(min=0, max=ih - 1)


def nms_ge_p1(boxes, scores, thr):
    """maskrcnn_benchmark nms_cpu: +1 areas, IoU >= thr suppresses (ties by index); the kept indices"""
    order = torch.sort(scores, descending=True, stable=True)[1]
    areas = (boxes[:, 2] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 1] + 1)
    sup = torch.zeros(boxes.shape[0], dtype=torch.bool)
    keep = []
    for a in range(order.numel()):
        i = int(order[a])
        if sup[i]:
            continue
        keep.append(i)
        rest = order[a + 1:]
        xx1 = torch.max(boxes[i, 0], boxes[rest, 0])
        yy1 = torch.max(boxes[i, 1], boxes[rest, 1])
        xx2 = torch.min(boxes[i, 2], boxes[rest, 2])
        yy2 = torch.min(boxes[i, 3], boxes[rest, 3])
        inter = (xx2 - xx1 + 1).clamp(min=0) * (yy2 - yy1 + 1).clamp(min=0)
        ovr = inter / (areas[i] + areas[rest] - inter)
        sup[rest[ovr >= thr]] = True
    return torch.tensor(keep, dtype=torch.int64)
