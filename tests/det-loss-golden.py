#!/usr/bin/python3
# det-loss-golden.py: torchvision 0.14's Mask R-CNN losses on reproducible
# inputs, for tests/unit/test-det-losses.c (trainer/det/losses.[ch]).
#
#   /usr/bin/python3 tests/det-loss-golden.py > tests/unit/det-loss-golden.h
#
# Inputs are not recorded: both sides make them from the same integer hash
# (u() below and in the test), exact in double precision.  Recorded: the loss
# values and the gradients, computed in float64 by torchvision's own
# functions:
#   RegionProposalNetwork.compute_loss, with the sampler injected (the labels
#     say which anchors are sampled: 1 positive, 0 negative, -1 not);
#   roi_heads.fastrcnn_loss (beta 1/9); the MLPerf reference's box loss is the
#     same function with beta 1.0 (maskrcnn_benchmark's fastrcnn loss), so the
#     generator runs a copy of torchvision's with that one change;
#   roi_heads.maskrcnn_loss, with project_masks_on_boxes replaced by the
#     recorded targets (the mask targets have their own test).
import sys

import torch
import torch.nn.functional as F
from torchvision.models.detection import roi_heads, rpn

torch.set_default_dtype(torch.float64)


def u(i, seed):
    """uniform in [0, 1) from a 32-bit integer hash, exact in double: the test's u()"""
    x = ((i + 1) * 2654435761 + seed * 97531) % 4294967296
    x ^= x >> 15
    x = (x * 2246822519) % 4294967296
    x ^= x >> 13
    return x / 4294967296.0


def vals(n, seed, lo, hi):
    return torch.tensor([lo + (hi - lo) * u(i, seed) for i in range(n)])


def labels_from(n, seed, cuts):
    """label k for u in [cuts[k-1], cuts[k]): cuts is a list of (threshold, label)"""
    out = []
    for i in range(n):
        v = u(i, seed)
        for thr, lab in cuts:
            if v < thr:
                out.append(lab)
                break
    return torch.tensor(out, dtype=torch.int64)


def emit(name, t):
    flat = [float(v) for v in t.flatten().tolist()]
    print("static const double %s[%d] = {" % (name, max(len(flat), 1)))
    if not flat:
        print("        0,")
    for k in range(0, len(flat), 4):
        print("        " + ", ".join("%.17g" % v for v in flat[k:k + 4]) + ",")
    print("};")


class InjectedSampler:
    def __call__(self, labels):
        return [l == 1 for l in labels], [l == 0 for l in labels]


def rpn_case(tag, M, seed, cuts):
    obj = vals(M, seed, -4, 4).requires_grad_()
    deltas = vals(4 * M, seed + 1, -1, 1).reshape(M, 4).requires_grad_()
    tgt = vals(4 * M, seed + 2, -1, 1).reshape(M, 4)
    lab = labels_from(M, seed + 3, cuts)
    head = rpn.RegionProposalNetwork.__new__(rpn.RegionProposalNetwork)
    head.fg_bg_sampler = InjectedSampler()
    lo, lb = rpn.RegionProposalNetwork.compute_loss(head, obj, deltas, [lab.to(torch.float64)], [tgt])
    (lo + lb).backward()
    print("#define RPN_%s_M %d\n#define RPN_%s_SEED %d" % (tag, M, tag, seed))
    emit("rpn_%s_loss" % tag.lower(), torch.stack([lo.detach(), lb.detach()]))
    emit("rpn_%s_dobj" % tag.lower(), obj.grad)
    emit("rpn_%s_ddeltas" % tag.lower(), deltas.grad)


def fastrcnn_mlperf(class_logits, box_regression, labels, regression_targets):
    """torchvision's fastrcnn_loss with the reference's beta (1.0)"""
    labels = torch.cat(labels, dim=0)
    regression_targets = torch.cat(regression_targets, dim=0)
    classification_loss = F.cross_entropy(class_logits, labels)
    pos = torch.where(labels > 0)[0]
    N, _ = class_logits.shape
    box_regression = box_regression.reshape(N, box_regression.size(-1) // 4, 4)
    box_loss = F.smooth_l1_loss(box_regression[pos, labels[pos]], regression_targets[pos], beta=1.0,
                                reduction="sum") / labels.numel()
    return classification_loss, box_loss


def box_case(tag, R, K, seed, fn):
    cls = vals(R * K, seed, -3, 3).reshape(R, K).requires_grad_()
    box = vals(R * 4 * K, seed + 1, -1.5, 1.5).reshape(R, 4 * K).requires_grad_()
    tgt = vals(R * 4, seed + 2, -1.5, 1.5).reshape(R, 4)
    # a quarter positive, classes 1..K-1
    lab = torch.tensor([1 + int(u(i, seed + 3) * (K - 1)) if u(i, seed + 4) < 0.25 else 0 for i in range(R)])
    lc, lb = fn(cls, box, [lab], [tgt])
    (lc + lb).backward()
    print("#define BOX_%s_R %d\n#define BOX_%s_K %d\n#define BOX_%s_SEED %d" % (tag, R, tag, K, tag, seed))
    emit("box_%s_loss" % tag.lower(), torch.stack([lc.detach(), lb.detach()]))
    emit("box_%s_dcls" % tag.lower(), cls.grad)
    emit("box_%s_dbox" % tag.lower(), box.grad)


def mask_case(tag, P, K, M, seed):
    logits = vals(P * K * M * M, seed, -5, 5).reshape(P, K, M, M).requires_grad_()
    # soft targets (torchvision's RoIAlign rule) with some exact 0 and 1
    tgt = torch.tensor([min(max(1.4 * u(i, seed + 1) - 0.2, 0.0), 1.0) for i in range(P * M * M)]).reshape(P, M, M)
    lab = torch.tensor([1 + int(u(i, seed + 2) * (K - 1)) for i in range(P)])
    saved = roi_heads.project_masks_on_boxes
    roi_heads.project_masks_on_boxes = lambda gt_masks, boxes, matched_idxs, M_: tgt
    try:
        loss = roi_heads.maskrcnn_loss(logits, [None], [None], [lab], [torch.arange(P)])
    finally:
        roi_heads.project_masks_on_boxes = saved
    loss.backward()
    print("#define MASK_%s_P %d\n#define MASK_%s_K %d\n#define MASK_%s_M %d\n#define MASK_%s_SEED %d"
          % (tag, P, tag, K, tag, M, tag, seed))
    emit("mask_%s_loss" % tag.lower(), loss.detach().reshape(1))
    emit("mask_%s_dlogits" % tag.lower(), logits.grad)


print("/* det-loss-golden.h: generated by tests/det-loss-golden.py from torchvision %s; do not edit */"
      % __import__("torchvision").__version__)
# RPN: 70% not sampled, 25% negative, 5% positive; then everything sampled
rpn_case("A", 60, 11, [(0.70, -1), (0.95, 0), (1.0, 1)])
rpn_case("B", 24, 12, [(0.5, 0), (1.0, 1)])
box_case("TV", 24, 5, 21, roi_heads.fastrcnn_loss)
box_case("MP", 24, 5, 21, fastrcnn_mlperf)
mask_case("A", 3, 4, 6, 31)
sys.stdout.flush()
