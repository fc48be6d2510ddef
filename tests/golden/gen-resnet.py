#!/usr/bin/python3
"""Golden values of ResNet training steps from PyTorch, written at test time.

    /usr/bin/python3 tests/golden/gen-resnet.py OUTDIR [--arch resnet34] [--steps 3]
                     [--batch 8] [--size 96] [--lr 0.002] [--threads N]

A torchvision ResNet with its default random initialisation (seed 7) in
training mode on a random batch with random labels, cross-entropy averaged
over the batch, SGD with momentum 0.9 and weight decay 1e-4 on convolution
and fc weights only (not on biases or batch norm), --steps steps on the same
batch.  The same run is made twice: in float64 (the truth: the float32 inputs
and weights computed exactly) and in float32 (PyTorch's own rounding, the
yardstick for ours).  Writes into OUTDIR:

  init.bdw          the initial weights (convert-torchvision.py's format)
  input.f32         the batch (N, 3, S, S), labels.i32 (N)
  logits.f32        logits of the first forward, float64 run
  grads.bdw         gradients of the first backward, float64 run; grads32.bdw float32 run
  final.bdw         weights and running statistics after the steps, float64; final32.bdw float32
  losses.txt        the loss of each step, float64; losses32.txt float32
"""
import argparse
import copy
import importlib.util
import os

import torch
import torch.nn.functional as F
import torchvision

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "convert_torchvision", os.path.join(here, "..", "..", "trainer", "tools", "convert-torchvision.py"))
conv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conv)

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--arch", default="resnet34")
ap.add_argument("--steps", type=int, default=3)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--size", type=int, default=96)
ap.add_argument("--lr", type=float, default=0.002)
ap.add_argument("--threads", type=int, default=0)
a = ap.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
os.makedirs(a.out, exist_ok=True)
out = lambda name: os.path.join(a.out, name)  # noqa: E731

torch.manual_seed(7)
model0 = getattr(torchvision.models, a.arch)()
model0.train()
conv.write_weights(out("init.bdw"), model0.state_dict(), "torchvision %s random seed 7" % a.arch)
x0 = torch.randn(a.batch, 3, a.size, a.size)
labels = torch.randint(0, 1000, (a.batch,), dtype=torch.int32).long()
x0.numpy().astype("<f4").tofile(out("input.f32"))
labels.numpy().astype("<i4").tofile(out("labels.i32"))

for suffix, dtype in (("", torch.float64), ("32", torch.float32)):
    model = copy.deepcopy(model0).to(dtype)
    x = x0.to(dtype)
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and p.dim() > 1]
    no_decay = [p for n, p in model.named_parameters() if not (n.endswith("weight") and p.dim() > 1)]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 1e-4}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=a.lr, momentum=0.9)
    losses = []
    for step in range(a.steps):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        if step == 0:
            if not suffix:
                logits.detach().numpy().astype("<f4").tofile(out("logits.f32"))
            conv.write_weights(out("grads%s.bdw" % suffix), {n: p.grad for n, p in model.named_parameters()},
                               "gradients")
        losses.append(loss.item())
        opt.step()
    conv.write_weights(out("final%s.bdw" % suffix), model.state_dict(), "after %d steps" % a.steps)
    with open(out("losses%s.txt" % suffix), "w") as f:
        f.write("".join("%.17g\n" % v for v in losses))
