#!/usr/bin/python3
"""Golden values of every trainer operation from PyTorch: tests/golden/ops.bin.

    /usr/bin/python3 tests/golden/gen-ops.py tests/golden/ops.bin

Each case draws float32 inputs from a fixed seed, runs the PyTorch operation
forward and backward in float64 (on exactly those float32 values) and stores
inputs, outputs and gradients as float32.  The gradient of every output is a
stored random tensor "dy" (the backward of sum(y * dy)); losses use dy = 1.
test-trainer-golden.c replays the cases on the CPU backend.

File: "BDGOLD01", u32 cases; per case: str name, str params ("k=3 s=1 ..."),
u32 tensors, per tensor: str name, u32 ndim, i64 dims[ndim], f32 values.
str: u16 length + bytes.  Feature maps are NCHW.
"""
import struct
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(20240601)
cases = []


def rnd(*shape, lo=-1.0, hi=1.0):
    return (torch.rand(*shape, dtype=torch.float32) * (hi - lo) + lo).double()


def leaf(t):
    return t.clone().requires_grad_(True)


def add(name, params, tensors):
    cases.append((name, params, tensors))


def conv_case(name, N, C, H, W, O, k, s, p, d, g, bias):
    x, w = leaf(rnd(N, C, H, W)), leaf(rnd(O, C // g, k, k))
    b = leaf(rnd(O)) if bias else None
    y = F.conv2d(x, w, b, stride=s, padding=p, dilation=d, groups=g)
    dy = rnd(*y.shape)
    (y * dy).sum().backward()
    t = [("x", x), ("w", w)] + ([("b", b)] if bias else []) + [("y", y), ("dy", dy), ("dx", x.grad), ("dw", w.grad)]
    if bias:
        t.append(("db", b.grad))
    add(name, "op=conv k=%d s=%d p=%d d=%d g=%d bias=%d" % (k, s, p, d, g, bias), t)


def deconv_case(name, N, C, H, W, O, k, s, p, g, bias):
    x, w = leaf(rnd(N, C, H, W)), leaf(rnd(C, O // g, k, k))
    b = leaf(rnd(O)) if bias else None
    y = F.conv_transpose2d(x, w, b, stride=s, padding=p, groups=g)
    dy = rnd(*y.shape)
    (y * dy).sum().backward()
    t = [("x", x), ("w", w)] + ([("b", b)] if bias else []) + [("y", y), ("dy", dy), ("dx", x.grad), ("dw", w.grad)]
    if bias:
        t.append(("db", b.grad))
    add(name, "op=deconv k=%d s=%d p=%d d=1 g=%d bias=%d" % (k, s, p, g, bias), t)


conv_case("conv 3x3 s1 p1 bias", 2, 16, 9, 8, 24, 3, 1, 1, 1, 1, 1)
conv_case("conv 3x3 s2 p1", 2, 16, 9, 9, 32, 3, 2, 1, 1, 1, 0)
conv_case("conv 1x1 s2 (downsample)", 2, 16, 9, 9, 32, 1, 2, 0, 1, 1, 0)
conv_case("conv 7x7 s2 p3 (stem)", 2, 3, 20, 18, 16, 7, 2, 3, 1, 1, 0)
conv_case("conv 3x3 dilation 2", 2, 8, 10, 10, 8, 3, 1, 2, 2, 1, 1)
conv_case("conv 3x3 groups 2", 2, 16, 7, 7, 16, 3, 1, 1, 1, 2, 1)
conv_case("conv 3x3 s1 p0 (SSD extra)", 2, 16, 5, 5, 16, 3, 1, 0, 1, 1, 1)
conv_case("conv 3x3 head 16->12 bias", 2, 16, 6, 6, 12, 3, 1, 1, 1, 1, 1)
deconv_case("transposed conv 2x2 s2 bias", 2, 16, 5, 6, 8, 2, 2, 0, 1, 1)
deconv_case("transposed conv 3x3 s2 p1", 2, 8, 4, 4, 8, 3, 2, 1, 1, 0)

# batch norm, training: batch statistics, running statistics updated (momentum 0.1)
for relu in (0, 1):
    x, g, b = leaf(rnd(4, 16, 5, 6)), leaf(rnd(16, lo=0.5, hi=1.5)), leaf(rnd(16, lo=-0.5, hi=0.5))
    rm, rv = rnd(16, lo=-0.2, hi=0.2), rnd(16, lo=0.5, hi=1.5)
    rm1, rv1 = rm.clone(), rv.clone()
    y = F.batch_norm(x, rm1, rv1, g, b, training=True, momentum=0.1, eps=1e-5)
    if relu:
        y = F.relu(y)
    dy = rnd(*y.shape)
    (y * dy).sum().backward()
    add("batch norm training%s" % (" + relu" if relu else ""), "op=bn_train relu=%d" % relu,
        [("x", x), ("gamma", g), ("beta", b), ("rmean", rm), ("rvar", rv), ("y", y), ("dy", dy), ("dx", x.grad),
         ("dgamma", g.grad), ("dbeta", b.grad), ("rmean_after", rm1), ("rvar_after", rv1)])

# batch norm with running statistics (inference / frozen): an affine map
x = leaf(rnd(2, 8, 4, 4))
g, b, rm, rv = rnd(8, lo=0.5, hi=1.5), rnd(8), rnd(8), rnd(8, lo=0.5, hi=1.5)
y = F.relu(F.batch_norm(x, rm, rv, g, b, training=False, eps=1e-5))
dy = rnd(*y.shape)
(y * dy).sum().backward()
add("batch norm frozen + relu", "op=bn_frozen relu=1",
    [("x", x), ("gamma", g), ("beta", b), ("rmean", rm), ("rvar", rv), ("y", y), ("dy", dy), ("dx", x.grad)])

x = leaf(rnd(2, 8, 5, 5))
y = F.relu(x)
dy = rnd(*y.shape)
(y * dy).sum().backward()
add("relu", "op=relu", [("x", x), ("y", y), ("dy", dy), ("dx", x.grad)])

for k, s, p, H in ((3, 2, 1, 15), (1, 2, 0, 7), (2, 2, 0, 8)):
    x = leaf(rnd(2, 8, H, H))
    y = F.max_pool2d(x, k, s, p)
    dy = rnd(*y.shape)
    (y * dy).sum().backward()
    add("max pool %dx%d s%d p%d" % (k, k, s, p), "op=maxpool k=%d s=%d p=%d" % (k, s, p),
        [("x", x), ("y", y), ("dy", dy), ("dx", x.grad)])

x = leaf(rnd(2, 8, 3, 5))
y = F.interpolate(x, scale_factor=2, mode="nearest")
dy = rnd(*y.shape)
(y * dy).sum().backward()
add("nearest upsample x2", "op=upsample", [("x", x), ("y", y), ("dy", dy), ("dx", x.grad)])

x, w, b = leaf(rnd(5, 40)), leaf(rnd(12, 40)), leaf(rnd(12))
y = F.linear(x, w, b)
dy = rnd(*y.shape)
(y * dy).sum().backward()
add("fully connected", "op=fc bias=1", [("x", x), ("w", w), ("b", b), ("y", y), ("dy", dy), ("dx", x.grad),
                                          ("dw", w.grad), ("db", b.grad)])

x, z = leaf(rnd(2, 8, 4, 4)), leaf(rnd(2, 8, 4, 4))
y = F.relu(x + z)
dy = rnd(*y.shape)
(y * dy).sum().backward()
add("add + relu", "op=add relu=1", [("x", x), ("x2", z), ("y", y), ("dy", dy), ("dx", x.grad), ("dx2", z.grad)])

a, b2 = leaf(rnd(2, 8, 3, 4)), leaf(rnd(2, 16, 3, 4))
y = torch.cat([a, b2], 1)
dy = rnd(*y.shape)
(y * dy).sum().backward()
add("concat channels", "op=concat", [("x", a), ("x2", b2), ("y", y), ("dy", dy), ("dx", a.grad), ("dx2", b2.grad)])

x = rnd(2, 12, 3, 5)
add("permute (0, 2, 3, 1)", "op=permute p0=0 p1=2 p2=3 p3=1", [("x", x), ("y", x.permute(0, 2, 3, 1).contiguous())])

x = leaf(rnd(2, 8, 5, 3))
y = F.adaptive_avg_pool2d(x, 1).flatten(1)
dy = rnd(*y.shape)
(y * dy).sum().backward()
add("global average pool", "op=avgpool", [("x", x), ("y", y), ("dy", dy), ("dx", x.grad)])

# losses: per-element (per-row) losses, gradient of their sum
x = leaf(rnd(10, 7, lo=-3, hi=3))
lab = torch.randint(0, 7, (10,))
lab[4] = -1
w = rnd(10, lo=0.2, hi=2)
loss = F.cross_entropy(x, lab, reduction="none", ignore_index=-1) * w
loss.sum().backward()
add("softmax cross-entropy weighted, one ignored", "op=softmax_ce weighted=1",
    [("x", x), ("label", lab.double()), ("w", w), ("loss", loss), ("dx", x.grad)])

x, t = leaf(rnd(6, 5, lo=-4, hi=4)), rnd(6, 5, lo=0, hi=1)
loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
loss.sum().backward()
add("sigmoid binary cross-entropy", "op=bce", [("x", x), ("t", t), ("loss", loss), ("dx", x.grad)])

for beta in (1.0, 1.0 / 9):
    t = rnd(8, 4, lo=-1, hi=1)
    x = leaf(t + rnd(8, 4, lo=-2, hi=2))
    loss = F.smooth_l1_loss(x, t, reduction="none", beta=beta)
    loss.sum().backward()
    add("smooth L1 beta %.4g" % beta, "op=smooth_l1 beta=%.17g" % beta, [("x", x), ("t", t), ("loss", loss), ("dx", x.grad)])

# one SGD step with momentum and weight decay, from a non-zero momentum buffer
p, g, v = rnd(50), rnd(50), rnd(50)
pp = p.clone().requires_grad_(True)
opt = torch.optim.SGD([pp], lr=0.1, momentum=0.9, weight_decay=1e-3)
opt.state[pp]["momentum_buffer"] = v.clone()
pp.grad = g.clone()
opt.step()
add("sgd step", "op=sgd lr=0.1 momentum=0.9 wd=0.001",
    [("p", p), ("g", g), ("v", v), ("p_after", pp.detach()), ("v_after", opt.state[pp]["momentum_buffer"])])


def pstr(b, s):
    e = s.encode()
    b += struct.pack("<H", len(e)) + e


out = bytearray(b"BDGOLD01" + struct.pack("<I", len(cases)))
for name, params, tensors in cases:
    pstr(out, name)
    pstr(out, params)
    out += struct.pack("<I", len(tensors))
    for tn, t in tensors:
        t = t.detach().float().contiguous()
        pstr(out, tn)
        out += struct.pack("<I", t.dim()) + struct.pack("<%dq" % t.dim(), *t.shape)
        out += t.numpy().astype("<f4").tobytes()
with open(sys.argv[1], "wb") as f:
    f.write(out)
print("gen-ops: %d cases, %d bytes" % (len(cases), len(out)))
