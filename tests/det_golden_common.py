"""det_golden_common.py: what the detection golden generators
(det-ops-golden.py, det-rpn-golden.py) share: the C header writer, random
boxes and the LCG their C tests reproduce."""
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
