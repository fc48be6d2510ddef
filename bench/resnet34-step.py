#!/usr/bin/python3
"""ResNet-34 training step in PyTorch, the counterpart of bench/resnet34-step.c.

    /usr/bin/python3 bench/resnet34-step.py [--batch 8] [--size 300] [--threads T]
                                            [--iters 5] [--warmup 2] [--layers] [--no-step]

Same network (torchvision resnet34, 1000 classes, training mode), same loss
and optimiser (SGD momentum 0.9, weight decay 1e-4), same timing (median of
--iters after --warmup), same output lines ("step MS images/s X loss L cpu-ms C", "conv NAME
COUNT MS").  Default NCHW tensors, as a PyTorch user would run it.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--size", type=int, default=300)
ap.add_argument("--threads", type=int, default=0)
ap.add_argument("--iters", type=int, default=5)
ap.add_argument("--warmup", type=int, default=2)
ap.add_argument("--layers", action="store_true")
ap.add_argument("--no-step", action="store_true")
a = ap.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
print("# pytorch %s: batch %d x 3 x %d x %d, %d threads" % (torch.__version__, a.batch, a.size, a.size,
                                                           torch.get_num_threads()))
torch.manual_seed(1)

if not a.no_step:
    model = torchvision.models.resnet34()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    x = torch.randn(a.batch, 3, a.size, a.size)
    labels = torch.randint(0, 1000, (a.batch,))
    times, cpu = [], []
    for it in range(a.warmup + a.iters):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        if it >= a.warmup:
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    med = statistics.median(times)
    print("step %.1f images/s %.3f loss %.4f cpu-ms %.1f" % (1e3 * med, a.batch / med, loss.item(),
                                                             1e3 * statistics.median(cpu)), flush=True)

if a.layers:
    S = a.size
    h0 = (S + 6 - 7) // 2 + 1
    h1 = (h0 + 2 - 3) // 2 + 1
    h2 = (h1 - 1) // 2 + 1
    h3 = (h2 - 1) // 2 + 1
    shapes = [("stem-7x7-3-64-s2", 1, 3, 64, 7, 2, 3, S, False),
              ("layer1-3x3-64", 6, 64, 64, 3, 1, 1, h1, True),
              ("layer2-3x3-64-128-s2", 1, 64, 128, 3, 2, 1, h1, True),
              ("layer2-1x1-64-128-s2", 1, 64, 128, 1, 2, 0, h1, True),
              ("layer2-3x3-128", 7, 128, 128, 3, 1, 1, h2, True),
              ("layer3-3x3-128-256-s2", 1, 128, 256, 3, 2, 1, h2, True),
              ("layer3-1x1-128-256-s2", 1, 128, 256, 1, 2, 0, h2, True),
              ("layer3-3x3-256", 11, 256, 256, 3, 1, 1, h3, True),
              ("layer4-3x3-256-512-s2", 1, 256, 512, 3, 2, 1, h3, True),
              ("layer4-1x1-256-512-s2", 1, 256, 512, 1, 2, 0, h3, True),
              ("layer4-3x3-512", 5, 512, 512, 3, 1, 1, (h3 - 1) // 2 + 1, True)]
    for name, count, cin, cout, k, s, p, h, need_dx in shapes:
        conv = torch.nn.Conv2d(cin, cout, k, s, p, bias=False)
        x = torch.randn(a.batch, cin, h, h, requires_grad=need_dx)
        times = []
        for it in range(a.warmup + a.iters):
            t0 = time.perf_counter()
            conv.weight.grad = None
            y = conv(x)
            y.backward(torch.full_like(y, 0.01))
            if it >= a.warmup:
                times.append(time.perf_counter() - t0)
            x.grad = None
        print("conv %s %d %.3f" % (name, count, 1e3 * statistics.median(times)), flush=True)
