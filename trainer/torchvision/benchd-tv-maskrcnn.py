#!/usr/bin/python3
"""benchd-tv-maskrcnn: torchvision's Mask R-CNN, trained as benchd-maskrcnn
trains ours: the same command line (where an option means something for
torchvision's model), the same progress, evaluation and summary lines, the
same MLPerf log lines (written with mlperf-logging's mllog), the same exit
statuses and throughput result; so benchctl runs, scores and reports either
program, and the two implementations can be put side by side.

    init      options (usage errors before anything is imported or started),
              the launcher's ranks, torch.distributed (gloo) over them, the
              datasets (train2017 and val2017 of --data, COCO layout), the
              model (--config reference or small, overridden by the options),
              DistributedDataParallel, SGD, an optional checkpoint
    per step  every rank takes its next ims-per-batch / ranks images of its
              stream, forward and the five losses (averaged over the ranks
              for the log and the NaN check), backward with DDP's gradient
              allreduce, clipping by global norm, SGD with warmup and decay
    per epoch len(train) // global batch + 1 steps (the reference's rule);
              evaluation (bbox and segm, pycocotools) of each rank's share
              of val2017 gathered on rank 0, at each epoch's end or at
              --eval-iters; stop when both targets are met

Debian's python3 runs it (torch 1.13 and torchvision 0.14 from
python3-torch and python3-torchvision, with Debian's numpy); pycocotools and
mlperf-logging come from PyPI, installed for that python or in site-packages
directories named by BENCHD_PYTHONPATH, which go after Debian's on sys.path
(so Debian's numpy stays the one in use).
"""
import contextlib
import ctypes
import ctypes.util
import io
import json
import logging
import math
import os
import re
import socket
import sys
import time

PROG = "benchd-tv-maskrcnn"
VERSION = "@PACKAGE_VERSION@"  # the build puts the package's version here


class UsageError(Exception):
    """A bad command line: one line, exit 2."""


class RunError(Exception):
    """A failure before or during the run: one line, exit 1."""


# ---- the command line ---------------------------------------------------------------------------

_INT = re.compile(r"[+-]?[0-9]+\Z")
_NUM = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


def _int(lo, hi, what=None):
    what = what or f"an integer from {lo} to {hi}"

    def parse(s):
        if not _INT.match(s) or not lo <= int(s) <= hi:
            raise ValueError(what)
        return int(s)
    return parse


def _num(lo, hi, what):
    def parse(s):
        if not _NUM.match(s) or not (math.isfinite(float(s)) and lo <= float(s) <= hi):
            raise ValueError(what)
        return float(s)
    return parse


def _choice(*values, what=None):
    what = what or " or ".join([", ".join(values[:-1]), values[-1]] if len(values) > 2 else values)

    def parse(s):
        if s not in values:
            raise ValueError(what)
        return s
    return parse


def _int_list(lo, hi, most, what):
    """"a,b,c": at most `most` increasing integers in [lo, hi]"""
    def parse(s):
        parts = s.split(",") if s else []
        if len(parts) > most or not all(_INT.match(p) and lo <= int(p) <= hi for p in parts):
            raise ValueError(what)
        v = [int(p) for p in parts]
        if any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(what)
        return v
    return parse


def _text(what):
    def parse(s):
        if not s:
            raise ValueError(what)
        return s
    return parse


_POS = "an integer from 1 to 1000000"
# name, argument (None: a switch), parser, default, help ("\n" continues the help on the next line)
OPTIONS = [
    ("data", "DIR", str, None, "COCO 2017 tree: train2017/, val2017/, annotations/"),
    ("ims-per-batch", "N", _int(1, 65536), 16, "images per step over all ranks (default 16); a multiple of the ranks"),
    ("test-ims-per-batch", "N", _int(1, 65536), 8, "images per evaluation step over all ranks (default 8)"),
    ("lr", "LR", _num(1e-12, 100, "a number in (0, 100]"), 0.02, "base learning rate (default 0.02)"),
    ("warmup-factor", "F", _num(0, 1, "a number from 0 to 1"), 1 / 3,
     "linear: start at LR x F (default 1/3); mlperf_linear: F per iteration"),
    ("warmup-iters", "N", _int(0, 1000000000), 500, "warmup iterations (default 500)"),
    ("warmup-method", "M", _choice("linear", "mlperf_linear"), "linear",
     "linear (default: torchvision's LinearLR, maskrcnn-benchmark's rule) or\n"
     "mlperf_linear (the MLPerf reference's: LR - (N - i) F at iteration i)"),
    ("weight-decay", "WD", _num(0, 1, "a number from 0 to 1"), 1e-4,
     "weight decay (default 1e-4), on every parameter as torchvision's references"),
    ("max-iter", "N", _int(1, 1000000000), 90000, "iterations (default 90000); excludes --epochs"),
    ("epochs", "N", _int(1, 10000), 0, "epochs of len(train) // ims-per-batch + 1 iterations instead"),
    ("decay-steps", "S,S", _int_list(1, 1000000000, 8, "increasing iterations separated by commas (at most 8)"),
     [60000, 80000], "learning rate x0.1 at these iterations (default 60000,80000)"),
    ("decay-epochs", "E,E", _int_list(1, 10000, 8, "increasing epochs separated by commas (at most 8)"), [],
     "learning rate x0.1 at these epochs instead"),
    ("clip-gradient", "NORM", _num(0, 1e9, "a number >= 0"), 0.0,
     "clip the gradients to this global norm (default 0: no clipping)"),
    ("target-map-bbox", "MAP", _num(0, 1, "a number from 0 to 1"), 0.377, "bbox mAP target (default 0.377)"),
    ("target-map-segm", "MAP", _num(0, 1, "a number from 0 to 1"), 0.339,
     "segm mAP target (default 0.339); the run stops when both are met"),
    ("mode", "M", _choice("torchvision", what="torchvision (this program is torchvision's model; "
                          "benchd-maskrcnn has the mlperf mode)"), "torchvision", "torchvision (the only one)"),
    ("config", "C", _choice("reference", "small"), "reference",
     "model preset: reference (R50-FPN, torchvision's maskrcnn_resnet50_fpn,\n"
     "default) or small; the options below override its fields"),
    ("backbone", "NAME", _choice("resnet50", "resnet34", "resnet18"), None, "resnet50 (reference), resnet34 or resnet18"),
    ("frozen-bn", "0|1", _int(0, 1, "0 or 1"), None, "1: frozen batch norm (reference); 0: trained"),
    ("sync-bn", "0|1", _int(0, 1, "0 or 1"), 0,
     "0 (default): trained batch norm's statistics of each rank's own images;\n"
     "1 (synchronised batch norm) is refused: torch 1.13's SyncBatchNorm needs CUDA"),
    ("freeze-at", "N", _int(0, 5), None, "frozen backbone stages: 2 (stem and layer1, reference) or 0"),
    ("fpn-channels", "N", _int(1, 4096), None, "FPN width (reference 256)"),
    ("min-size", "S", _int(16, 4096), None, "shorter image side (reference 800)"),
    ("max-size", "S", _int(16, 8192), None, "longest image side (reference 1333)"),
    ("anchor-size", "S", _num(1, 4096, "a number from 1 to 4096"), None,
     "anchor size on P2, doubled per level (reference 32)"),
    ("rpn-pre-nms-top-n-train", "N", _int(1, 1000000), None, "RPN candidates per level in training (2000)"),
    ("fpn-post-nms-top-n-train", "N", _int(1, 1000000), None, "RPN proposals kept per image in training (2000)"),
    ("rpn-pre-nms-top-n-test", "N", _int(1, 1000000), None, "RPN candidates per level at test (1000)"),
    ("rpn-post-nms-top-n-test", "N", _int(1, 1000000), None, "RPN proposals per image at test (1000)"),
    ("rpn-batch", "N", _int(1, 65536), None, "anchors sampled per image (256)"),
    ("roi-batch", "N", _int(1, 65536), None, "RoIs sampled per image (512)"),
    ("box-head-dim", "N", _int(1, 65536), None, "box head width (1024)"),
    ("mask-convs", "N", _int(0, 8), None, "mask head convolutions (4)"),
    ("mask-dim", "N", _int(1, 65536), None, "mask head width (256)"),
    ("detections", "N", _int(1, 10000), None, "detections per image (100)"),
    ("eval-iters", "I,I,...", _int_list(1, 1000000000, 64, "increasing iterations separated by commas (at most 64)"),
     [], "evaluate after these iterations (default: at each epoch's end)"),
    ("checkpoint-interval", "N", _int(0, 1000000000, "an integer >= 0"), 0,
     "with --checkpoint: also every N iterations (default 0:\nat epoch ends only)"),
    ("threads", "N", _int(1, 1024), 0, "compute threads per rank (default: CPUs / ranks on the node)"),
    ("loader-workers", "N", _int(0, 256), 1, "data loader processes per rank (default 1; 0: in the training process)"),
    ("backend", "NAME", _choice("cpu", what="cpu (this program runs torch on the CPU)"), "cpu", "cpu (the only one)"),
    ("precision", "P", _choice("fp32", what="fp32 (this program runs torch on the CPU)"), "fp32", "fp32 (the only one)"),
    ("max-steps", "N", _int(0, 1000000000000, "an integer >= 0"), 0, "stop after N steps (0: no limit)"),
    ("pretrained", "FILE", str, None, "backbone weights: a torchvision ResNet's state dict (torch.save)"),
    ("platform", "NAME", _text("a name"), None, "MLPerf submission_platform (default: the host name)"),
    ("seed", "N", _int(0, 4294967295), None, "random seed (default: from the clock)"),
    ("checkpoint", "DIR", str, None, "save DIR/tv-maskrcnn.pt after every epoch and resume from it"),
    ("log-interval", "N", _int(1, 1000000, "an integer >= 1"), 20, "steps between progress lines (default 20)"),
    ("inject-nan", "STEP", _int(1, 1000000000000, "a step >= 1"), 0,
     "testing: NaN weights at step STEP on rank 0 (a diverged model)"),
    ("benchmark-steps", "N", _int(1, 1000000000, "an integer >= 1"), 0,
     "throughput mode: time N steps (after --warmup-steps), each\n"
     "on its own; no evaluation; images/s with count, mean, sd, min,\nmax and 95% interval"),
    ("warmup-steps", "W", _int(0, 1000000000, "an integer >= 0"), 5,
     "throughput mode: steps before the timed ones (default 5)"),
    ("result", "FILE", _text("a file name"), None, "write the run's result as JSON to FILE (throughput mode)"),
    ("help", None, None, False, "show this help"),
    ("version", None, None, False, "show the version"),
]
# benchd-maskrcnn's options that mean nothing for torchvision's model, and why
REFUSED = {
    "width-mult": "torchvision's ResNet has no channel width multiplier",
    "synthetic": "this program trains on a dataset: give --data (benchctl dataset synth makes one)",
    "masks": "it trains torchvision's MaskRCNN; Faster R-CNN is benchd-maskrcnn --masks 0 (the workload fasterrcnn)",
    "schedule": "it stops at its targets; a fixed schedule is benchd-maskrcnn's (--schedule fixed)",
    "trace": "step traces are benchd-maskrcnn's (--trace)",
    "trace-steps": "step traces are benchd-maskrcnn's (--trace)",
    "bucket-mb": "its gradients are summed by torch.distributed, not in benchd's buckets",
    "overlap": "its gradients are summed by torch.distributed, not in benchd's buckets",
}
# and one value of an option: (name, value) -> why
REFUSED_VALUES = {
    ("sync-bn", 1): "torch 1.13's SyncBatchNorm runs on CUDA only and this program runs torch on the CPU "
                    "(benchd-maskrcnn has it on both backends)",
}
_BY_NAME = {o[0]: o for o in OPTIONS}

INTRO = f"""usage: {PROG} --data DIR [OPTIONS]

Train torchvision's Mask R-CNN on COCO on the CPU, data-parallel over the ranks
of the launcher (mpirun, srun or torchrun: torch.distributed with gloo, the
rendezvous at $MASTER_ADDR:$MASTER_PORT, default 127.0.0.1:29500), evaluating
bbox and segm mAP at each epoch's end (or --eval-iters) until both targets are
met; MLPerf log lines from rank 0.  The options of benchd-maskrcnn, where they
mean something for torchvision's model.

"""


def usage_text():
    out = [INTRO]
    for name, arg, _, _, help_ in OPTIONS:
        lhs = f"--{name}" + (f" {arg}" if arg else "")
        # a long left side pushes its help to the next line (as benchd-maskrcnn's)
        out.append(f"  {lhs}\n  {'':24}" if len(lhs) > 24 else f"  {lhs:<24}")
        out.append(help_.replace("\n", f"\n  {'':24}") + "\n")
    return "".join(out)


def check_options(o):
    """The rules between options (benchd-maskrcnn's), and the values refused."""
    for (name, value), why in REFUSED_VALUES.items():
        if getattr(o, name.replace("-", "_")) == value:
            raise UsageError(f"--{name} {value}: not available here: {why}")
    if o.given("max-iter") and o.given("epochs"):
        raise UsageError("--max-iter and --epochs exclude each other")
    if o.given("decay-steps") and o.given("decay-epochs"):
        raise UsageError("--decay-steps and --decay-epochs exclude each other")
    if o.given("epochs"):
        o.max_iter = 0
    if o.given("decay-epochs"):
        o.decay_steps = []
    for e in o.decay_epochs:
        if o.epochs and e > o.epochs:
            raise UsageError(f"--decay-epochs: epoch {e} is beyond --epochs {o.epochs}")
    if o.decay_epochs and not o.epochs:
        raise UsageError("--decay-epochs needs --epochs (or give --decay-steps)")
    for i in o.eval_iters:
        if o.max_iter and i > o.max_iter:
            raise UsageError(f"--eval-iters: iteration {i} is beyond --max-iter {o.max_iter}")
    if o.warmup_method == "mlperf_linear" and o.warmup_iters * o.warmup_factor > o.lr * (1 + 1e-9):
        raise UsageError(f"--warmup-method mlperf_linear: --warmup-iters x --warmup-factor "
                         f"({o.warmup_iters * o.warmup_factor:g}) exceeds --lr ({o.lr:g}): "
                         f"the learning rate would start negative")
    if o.min_size and o.max_size and o.min_size > o.max_size:
        raise UsageError(f"--min-size {o.min_size} is larger than --max-size {o.max_size}")
    if not o.data:
        raise UsageError("--data DIR is required")


class Options:
    """The parsed command line: an attribute per option (dashes as
    underscores), and which options were given."""

    def __init__(self, argv):
        self.argv = argv
        self._given = set()
        for name, _, _, default, _ in OPTIONS:
            setattr(self, name.replace("-", "_"), list(default) if isinstance(default, list) else default)
        i = 0
        while i < len(argv):
            a = argv[i]
            i += 1
            if not a.startswith("--") or a == "--":
                raise UsageError(f"unexpected argument '{a}'")
            name, eq, value = a[2:].partition("=")
            if name in REFUSED:
                raise UsageError(f"--{name}: not available here: {REFUSED[name]}")
            opt = _BY_NAME.get(name)
            if not opt:
                raise UsageError(f"unknown option '{a}' (see --help)")
            if opt[1] is None:
                if eq:
                    raise UsageError(f"option '--{name}' takes no argument")
                setattr(self, name, True)
                if name in ("help", "version"):
                    return
                continue
            if not eq:
                if i == len(argv):
                    raise UsageError(f"option '{a}' needs an argument")
                value = argv[i]
                i += 1
            try:
                setattr(self, name.replace("-", "_"), opt[2](value))
            except ValueError as e:
                raise UsageError(f"--{name}: expected {e}, got '{value}'") from None
            self._given.add(name)
        check_options(self)

    def given(self, name):
        return name in self._given


# ---- ranks --------------------------------------------------------------------------------------

# (rank, size, local rank, local size) of each launcher, the first that is set
LAUNCHERS = [
    ("torchrun", ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")),
    ("Open MPI", ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                  "OMPI_COMM_WORLD_LOCAL_SIZE")),
    ("Slurm", ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE")),
]


def launch_ranks(env=os.environ):
    """This process's (rank, world size, local rank, ranks on the node)
    from the launcher's environment; (0, 1, 0, 1) when none is set."""
    def num(name, default):
        v = env.get(name, "")
        return int(v) if v.isdigit() else default
    for _, (r, n, lr, ls) in LAUNCHERS:
        if env.get(r, "").isdigit() and env.get(n, "").isdigit():
            rank, size = int(env[r]), int(env[n])
            if 0 <= rank < size:
                return rank, size, num(lr, 0), max(num(ls, 1), 1)
    return 0, 1, 0, 1


# ---- what needs more than the standard library --------------------------------------------------

np = torch = dist = torchvision = mllog = C = None  # bound by import_packages()


def import_packages():
    """torch, torchvision and numpy from Debian's python; then pycocotools
    and mlperf-logging, from that python's own paths or the directories of
    BENCHD_PYTHONPATH (appended: Debian's numpy stays first).  The names
    above are bound here: --help and usage errors import nothing."""
    global np, torch, dist, torchvision, mllog, C
    try:
        import numpy as np
        import torch
        import torch.distributed as dist
        import torchvision
    except ImportError as e:
        raise RunError(f"cannot import {e.name or e} (install python3-torch and python3-torchvision)") from None
    sys.path.extend(p for p in os.environ.get("BENCHD_PYTHONPATH", "").split(":") if p)
    for module, package in (("pycocotools.cocoeval", "pycocotools"), ("mlperf_logging.mllog", "mlperf-logging")):
        try:
            __import__(module)
        except ImportError as e:
            raise RunError(f"cannot import {module} ({e}): pip install {package} for {sys.executable}, or name "
                           f"the site-packages directory that has it in BENCHD_PYTHONPATH") from None
    from mlperf_logging import mllog
    from mlperf_logging.mllog import constants as C


# ---- the model ----------------------------------------------------------------------------------

PRESETS = {
    # torchvision's maskrcnn_resnet50_fpn (the reference's R50-FPN), from scratch
    "reference": dict(depth=50, frozen_bn=1, freeze_at=2, fpn_channels=256, min_size=800, max_size=1333,
                      anchor_size=32, rpn_pre_nms_top_n_train=2000, fpn_post_nms_top_n_train=2000,
                      rpn_pre_nms_top_n_test=1000, rpn_post_nms_top_n_test=1000, rpn_batch=256, roi_batch=512,
                      box_head_dim=1024, mask_convs=4, mask_dim=256, detections=100,
                      mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    # shared/reference/maskrcnn.md section 7: learns 128-pixel shapes on 2 cores
    "small": dict(depth=18, frozen_bn=0, freeze_at=0, fpn_channels=64, min_size=128, max_size=128,
                  anchor_size=16, rpn_pre_nms_top_n_train=300, fpn_post_nms_top_n_train=200,
                  rpn_pre_nms_top_n_test=150, rpn_post_nms_top_n_test=100, rpn_batch=128, roi_batch=64,
                  box_head_dim=256, mask_convs=2, mask_dim=64, detections=20,
                  mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25]),
}


def model_config(o):
    """The preset of --config with the model options given over it."""
    c = dict(PRESETS[o.config])
    if o.backbone:
        c["depth"] = int(o.backbone[len("resnet"):])
    for k in c:
        if getattr(o, k, None) is not None:
            c[k] = getattr(o, k)
    # a preset's max size below a given min size follows it (benchd-maskrcnn's rule)
    c["max_size"] = max(c["max_size"], c["min_size"])
    return c


def build_model(c, num_classes):
    """torchvision's MaskRCNN of configuration c."""
    from torchvision.models.detection import MaskRCNN
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.models.detection.backbone_utils import BackboneWithFPN
    from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
    from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
    from torchvision.ops.feature_pyramid_network import LastLevelMaxPool
    from torchvision.ops.misc import FrozenBatchNorm2d

    norm = FrozenBatchNorm2d if c["frozen_bn"] else torch.nn.BatchNorm2d
    body = getattr(torchvision.models, f"resnet{c['depth']}")(weights=None, norm_layer=norm)
    for stage in [("conv1", "bn1"), ("layer1",), ("layer2",), ("layer3",), ("layer4",)][:c["freeze_at"]]:
        for name in stage:
            getattr(body, name).requires_grad_(False)
    widths = [64, 128, 256, 512] if c["depth"] < 50 else [256, 512, 1024, 2048]
    F = c["fpn_channels"]
    backbone = BackboneWithFPN(body, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"}, widths, F,
                               extra_blocks=LastLevelMaxPool())
    a = c["anchor_size"]
    anchors = AnchorGenerator(sizes=tuple((a * 2 ** i,) for i in range(5)), aspect_ratios=((0.5, 1.0, 2.0),) * 5)
    return MaskRCNN(backbone, num_classes=None, min_size=c["min_size"], max_size=c["max_size"],
                    image_mean=c["mean"], image_std=c["std"], rpn_anchor_generator=anchors,
                    rpn_pre_nms_top_n_train=c["rpn_pre_nms_top_n_train"],
                    rpn_pre_nms_top_n_test=c["rpn_pre_nms_top_n_test"],
                    rpn_post_nms_top_n_train=c["fpn_post_nms_top_n_train"],
                    rpn_post_nms_top_n_test=c["rpn_post_nms_top_n_test"],
                    rpn_batch_size_per_image=c["rpn_batch"], box_batch_size_per_image=c["roi_batch"],
                    box_detections_per_img=c["detections"],
                    box_head=TwoMLPHead(F * 7 * 7, c["box_head_dim"]),
                    box_predictor=FastRCNNPredictor(c["box_head_dim"], num_classes),
                    mask_head=MaskRCNNHeads(F, (c["mask_dim"],) * c["mask_convs"], 1),
                    mask_predictor=MaskRCNNPredictor(c["mask_dim"] if c["mask_convs"] else F, c["mask_dim"],
                                                     num_classes))


def load_pretrained(model, path):
    """A torchvision ResNet's state dict into the backbone (its classifier
    fc.* not used; every other backbone tensor must be there).  Returns the
    tensors loaded and those not used."""
    try:
        sd = torch.load(path, map_location="cpu")
    except Exception as e:  # noqa: BLE001: an unreadable file, whatever the reason
        raise RunError(f"pretrained '{path}': {one_line(e)}") from None
    if isinstance(sd, dict):
        sd = sd.get("state_dict", sd.get("model", sd))
    if not isinstance(sd, dict):
        raise RunError(f"pretrained '{path}': not a state dict")
    body = {k: v for k, v in sd.items() if not k.startswith("fc.")}
    want = model.backbone.body.state_dict()
    # frozen batch norm has no num_batches_tracked (it drops the file's)
    extra = [k for k in body if k not in want and not k.endswith(".num_batches_tracked")]
    missing = [k for k in want if k not in body]
    shape = [k for k in want if k in body and getattr(body[k], "shape", None) != want[k].shape]
    if extra or missing or shape:
        what = [f"{len(v)} {kind} ({v[0]}{', ...' if len(v) > 1 else ''})"
                for kind, v in (("missing", missing), ("not in the backbone", extra), ("of another shape", shape))
                if v]
        raise RunError(f"pretrained '{path}': not this backbone's tensors: {', '.join(what)}")
    model.backbone.body.load_state_dict(body)
    return len(body), len(sd) - len(body)


# ---- the data -----------------------------------------------------------------------------------

def read_coco(path):
    from pycocotools.coco import COCO
    if not os.path.isfile(path):
        raise RunError(f"{path}: no such file")
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # COCO() talks
            return COCO(path)
    except Exception as e:  # noqa: BLE001: a broken file, whatever broke
        raise RunError(f"{path}: {one_line(e)}") from None


class Split:
    """One split of a COCO tree: the images that have a file, in id order
    (training: those with a box wider and taller than 1 pixel, crowd ones
    included, as torchvision's references and maskrcnn-benchmark keep).
    Item i, or (i, flip): (image id, the image as floats in [0, 1], its
    target: the non-crowd objects' boxes x1, y1, x2, y2 clipped to the
    image and kept when not empty, their labels 1..K in the order of the
    category ids, their masks rasterised by pycocotools)."""

    def __init__(self, data, split, train, warn):
        self.coco = read_coco(os.path.join(data, "annotations", f"instances_{split}.json"))
        self.dir = os.path.join(data, split)
        self.cats = sorted(self.coco.getCatIds())
        self.label = {c: i + 1 for i, c in enumerate(self.cats)}
        missing = empty = 0
        self.ids = []
        for img_id in sorted(self.coco.getImgIds()):
            anns = self.coco.imgToAnns.get(img_id, [])
            if train and not any(a["bbox"][2] > 1 and a["bbox"][3] > 1 for a in anns):
                empty += 1
            elif not os.path.isfile(os.path.join(self.dir, self.coco.imgs[img_id]["file_name"])):
                missing += 1
            else:
                self.ids.append(img_id)
        if missing:
            warn(f"{split}: {missing} images without a file, left out")
        if empty:
            warn(f"{split}: {empty} images without a usable annotation, left out")

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, key):
        from PIL import Image
        i, flip = key if isinstance(key, tuple) else (key, False)
        img_id = self.ids[i]
        path = os.path.join(self.dir, self.coco.imgs[img_id]["file_name"])
        try:
            with Image.open(path) as im:
                x = torch.from_numpy(np.asarray(im.convert("RGB")).copy())
        except OSError as e:
            raise RunError(f"{path}: {e}") from None
        x = x.permute(2, 0, 1).float().div_(255)
        H, W = x.shape[1:]
        boxes, labels, masks = [], [], []
        for a in self.coco.imgToAnns.get(img_id, []):
            if a.get("iscrowd"):
                continue
            bx, by, bw, bh = a["bbox"]
            x1, y1 = min(max(bx, 0), W), min(max(by, 0), H)
            x2, y2 = min(max(bx + bw, 0), W), min(max(by + bh, 0), H)
            if x2 > x1 and y2 > y1:
                boxes.append([W - x2, y1, W - x1, y2] if flip else [x1, y1, x2, y2])
                labels.append(self.label[a["category_id"]])
                masks.append(self.coco.annToMask(a))
        m = torch.from_numpy(np.stack(masks)) if masks else torch.zeros((0, H, W), dtype=torch.uint8)
        if flip:
            x, m = x.flip(-1), m.flip(-1)
        return img_id, x, {"boxes": torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
                           "labels": torch.tensor(labels, dtype=torch.int64), "masks": m}


class Stream:
    """A rank's training batches, step after step: each loader epoch e a
    permutation of the n images from (seed, e) with a flip for each
    position (probability 0.5), padded to a multiple of the ranks by
    repeating its start, rank r taking the r-th contiguous share; the
    shares of successive epochs follow each other and every step takes the
    next `batch` of them (so no step runs short, and a run resumed at a
    step takes the batches of a run never stopped)."""

    def __init__(self, n, batch, rank, world, seed, first_step):
        self.n, self.batch, self.rank, self.world, self.seed, self.first = n, batch, rank, world, seed, first_step
        self.share = -(-n // world)
        self.epoch, self.perm, self.flips = -1, None, None

    def _at(self, pos):
        e, off = divmod(pos, self.share)
        if e != self.epoch:
            g = torch.Generator().manual_seed(self.seed * 1000003 + e)
            self.epoch = e
            self.perm = torch.randperm(self.n, generator=g).tolist()
            self.flips = (torch.rand(self.share * self.world, generator=g) < 0.5).tolist()
        p = self.rank * self.share + off
        return self.perm[p % self.n], self.flips[p]

    def __iter__(self):
        step = self.first
        while True:
            yield [self._at(step * self.batch + k) for k in range(self.batch)]
            step += 1


def collate(items):
    return tuple(zip(*items))


def loader(ds, workers, **kw):
    return torch.utils.data.DataLoader(ds, num_workers=workers, collate_fn=collate, **kw)


# ---- the run ------------------------------------------------------------------------------------

LOSSES = ["loss_objectness", "loss_rpn_box_reg", "loss_classifier", "loss_box_reg", "loss_mask"]


def rate_text(v):
    return f"{v:.{3 if v < 10 else 2 if v < 100 else 1}f}"


class Run:
    """One training run on this rank (benchd-maskrcnn's struct train and
    its steps): init() then train(), each failure a RunError."""

    def __init__(self, o, ranks):
        self.o = o
        self.rank, self.world, _, self.local_size = ranks
        self.host = socket.gethostname()
        self.bench = o.benchmark_steps > 0
        self.secs, self.items = [], []      # throughput mode's observations
        self.last_loss = math.nan
        self.ml = self._mllogger()

    def say(self, line):
        """A line on stdout, from rank 0."""
        if self.rank == 0:
            print(line, flush=True)

    def warn(self, msg):
        if self.rank == 0:
            print(f"{PROG}: warning: {msg}", file=sys.stderr, flush=True)

    def _mllogger(self):
        """mllog's logger, writing on rank 0 only; the metadata's file is
        the program's name, as benchd-maskrcnn's are its source files' (mllog
        strips root_dir, a regular expression, from the path the program
        was started by)."""
        logger = logging.getLogger(PROG)
        logger.propagate = False
        logger.setLevel(logging.INFO if self.rank == 0 else logging.CRITICAL)
        if self.rank == 0:
            logger.addHandler(logging.StreamHandler(sys.stdout))
        mllog.config(logger=logger, root_dir=re.escape(os.path.dirname(Run.__init__.__code__.co_filename)))
        return mllog.get_mllogger()

    def agree(self, err):
        """Raises err (or, where this rank is fine, a silent RunError) on
        every rank when any rank failed."""
        if self.world > 1:
            t = torch.tensor([0 if err else 1], dtype=torch.int32)
            dist.all_reduce(t, op=dist.ReduceOp.MIN)
            if not t.item():
                raise err or RunError(None)
        elif err:
            raise err

    # -- init --

    def init(self):
        o, ml = self.o, self.ml
        if self.world > 1:
            addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
            port = os.environ.get("MASTER_PORT", "29500")
            try:
                dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=self.rank,
                                        world_size=self.world)
            except Exception as e:  # noqa: BLE001: the rendezvous failed, however
                raise RunError(f"torch.distributed (gloo) at {addr}:{port}: {one_line(e)}") from None
        if o.seed is None:          # rank 0's
            s = torch.tensor([int(time.time()) ^ (os.getpid() << 16)], dtype=torch.int64)
            if self.world > 1:
                dist.broadcast(s, 0)
            o.seed = int(s.item()) & 0xffffffff
        self.threads = o.threads or max(1, len(os.sched_getaffinity(0)) // self.local_size)
        torch.set_num_threads(self.threads)
        if self.bench:
            o.max_steps = o.warmup_steps + o.benchmark_steps
        ml.event(C.CACHE_CLEAR, os.environ.get("BENCHD_CACHE_CLEARED") == "1")
        ml.start(C.INIT_START)
        ml.event(C.SUBMISSION_BENCHMARK, C.MASKRCNN)
        ml.event(C.SUBMISSION_ORG, "benchd")
        ml.event(C.SUBMISSION_DIVISION, "closed")
        ml.event(C.SUBMISSION_STATUS, "onprem")
        ml.event(C.SUBMISSION_PLATFORM, o.platform or self.host)
        # each step's failure on any rank stops all of them
        for step in (self._open_data, self._build_model, self._resume):
            err = None
            try:
                step()
            except RunError as e:
                err = e
            self.agree(err)
        # the weights and buffers of rank 0 on every rank, the gradients averaged
        self.net = torch.nn.parallel.DistributedDataParallel(self.model) if self.world > 1 else self.model
        self.model.train()
        self._log_header()
        self._log_config()
        ml.end(C.INIT_STOP)
        if self.world > 1:
            dist.barrier()
        ml.start(C.RUN_START)

    def _open_data(self):
        o = self.o
        self.train_set = Split(o.data, "train2017", True, self.warn)
        self.val = None if self.bench else Split(o.data, "val2017", False, self.warn)
        if self.val and self.val.cats != self.train_set.cats:
            raise RunError(f"{o.data}: the categories of val2017 and train2017 differ")
        if not len(self.train_set):
            raise RunError(f"{o.data}: no usable training image in train2017")
        self.global_batch = o.ims_per_batch
        self.local_batch = o.ims_per_batch // self.world
        # the reference's rule (len(dataset) // GBS + 1)
        self.ipe = len(self.train_set) // self.global_batch + 1
        self.max_iter = o.max_steps if self.bench else o.max_iter or o.epochs * self.ipe
        self.milestones = [e * self.ipe for e in o.decay_epochs] or o.decay_steps
        self.classes = len(self.train_set.cats) + 1

    def _build_model(self):
        o = self.o
        self.cfg = c = model_config(o)
        torch.manual_seed(o.seed)
        self.model = build_model(c, self.classes)
        if o.pretrained:
            n, unused = load_pretrained(self.model, o.pretrained)
            self.say(f"# pretrained backbone: {n} tensors from '{o.pretrained}', {unused} not used")
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.opt = torch.optim.SGD(self.params, lr=o.lr, momentum=0.9, weight_decay=o.weight_decay)
        self.model_name = (f"tv-maskrcnn-r{c['depth']}-f{c['fpn_channels']}-bn{c['frozen_bn']}-k{self.classes}"
                           f"-d{c['box_head_dim']}-m{c['mask_convs']}x{c['mask_dim']}")

    def _resume(self):
        o = self.o
        self.first = 0
        self.ckpt = os.path.join(o.checkpoint, "tv-maskrcnn.pt") if o.checkpoint else None
        if not self.ckpt:
            return
        try:
            os.makedirs(o.checkpoint, exist_ok=True)
            if not os.path.exists(self.ckpt):
                return
            state = torch.load(self.ckpt, map_location="cpu")
            if state.get("model_name") != self.model_name:
                raise RunError(f"checkpoint '{self.ckpt}' holds {state.get('model_name')}, this run trains "
                               f"{self.model_name}")
            self.model.load_state_dict(state["model"])
            self.opt.load_state_dict(state["optimizer"])
            self.first = int(state["step"])
        except (OSError, RuntimeError, KeyError, AttributeError, ValueError) as e:
            raise RunError(f"checkpoint '{self.ckpt}': {one_line(e)}") from None
        if not 0 <= self.first <= self.max_iter:
            raise RunError(f"checkpoint '{self.ckpt}' is at step {self.first}, beyond the {self.max_iter} iterations")
        self.say(f"# resumed from '{self.ckpt}' at step {self.first} (epoch {self.first // self.ipe + 1})")

    def _log_header(self):
        o, c = self.o, self.cfg
        ntrain = sum(p.numel() for p in self.params)
        self.say(f"# {PROG} {VERSION}: {self.world} ranks x {self.local_batch} images, cpu backend ({self.threads} "
                 f"threads), fp32, torchvision mode, resnet{c['depth']} (width 1), FPN {c['fpn_channels']}, "
                 f"{c['min_size']}x{c['min_size']}..{c['max_size']}, {self.classes} classes, {ntrain} parameters; "
                 f"torch {torch.__version__}, torchvision {torchvision.__version__}, BLAS {blas_library()}")
        self.say(f"# {len(self.train_set)} training images, {self.ipe} iterations per epoch (len // "
                 f"{self.global_batch} + 1), {self.max_iter} iterations, lr {o.lr:g}, {o.warmup_iters} warmup "
                 f"iterations, seed {o.seed}")

    def _log_config(self):
        o, ml = self.o, self.ml
        ml.event(C.SEED, o.seed)
        ml.event(C.GLOBAL_BATCH_SIZE, self.global_batch)
        ml.event(C.TRAIN_SAMPLES, len(self.train_set))
        ml.event(C.EVAL_SAMPLES, len(self.val) if self.val else 0)
        ml.event(C.GRADIENT_ACCUMULATION_STEPS, 1)
        ml.event(C.NUM_IMAGE_CANDIDATES, self.cfg["fpn_post_nms_top_n_train"])
        ml.event(C.MIN_IMAGE_SIZE, self.cfg["min_size"])
        ml.event(C.MAX_IMAGE_SIZE, self.cfg["max_size"])
        ml.event(C.OPT_BASE_LR, o.lr)
        ml.event(C.OPT_WEIGHT_DECAY, o.weight_decay)
        ml.event(C.OPT_LR_WARMUP_STEPS, o.warmup_iters)
        ml.event(C.OPT_LR_WARMUP_FACTOR, o.warmup_factor)
        ml.event(C.OPT_LR_DECAY_FACTOR, 0.1)
        ml.event(C.OPT_LR_DECAY_STEPS, self.milestones)

    # -- the run proper --

    def lr_at(self, it):
        """benchd-maskrcnn's scheduler: step s uses iteration s."""
        o = self.o
        f = 0.1 ** sum(1 for m in self.milestones if it >= m)
        if it < o.warmup_iters:
            if o.warmup_method == "mlperf_linear":
                return (o.lr - (o.warmup_iters - it) * o.warmup_factor) * f
            a = it / o.warmup_iters
            f *= o.warmup_factor * (1 - a) + a
        return o.lr * f

    def train_step(self, step, xs, ts):
        """One step: the five losses and their total averaged over the
        ranks, the learning rate, and why the run diverged (None: it did
        not; then nothing was updated)."""
        lr = self.lr_at(step)
        for g in self.opt.param_groups:
            g["lr"] = lr
        if self.o.inject_nan == step and self.rank == 0:
            with torch.no_grad():
                self.model.rpn.head.cls_logits.bias.fill_(math.nan)
        losses = self.net(list(xs), list(ts))
        total = sum(losses[k] for k in LOSSES)
        L = torch.stack([losses[k].detach() for k in LOSSES] + [total.detach()]).double()
        if self.world > 1:
            dist.all_reduce(L)
            L /= self.world
        loss = float(L[5])
        if not math.isfinite(loss):
            return L.tolist(), lr, "NaN" if math.isnan(loss) else "infinite"
        self.opt.zero_grad(set_to_none=True)
        total.backward()
        # the averaged gradients are the same on every rank: so is this decision
        clip = self.o.clip_gradient if self.o.clip_gradient > 0 else math.inf
        if not math.isfinite(float(torch.nn.utils.clip_grad_norm_(self.params, clip))):
            return L.tolist(), lr, "finite but the gradients are not"
        self.opt.step()
        return L.tolist(), lr, None

    def train(self):
        """The run between run_start and run_stop: "reached", "not reached",
        "diverged" or "failed" (self.failure: why)."""
        self.failure = None
        batches = iter(loader(self.train_set, self.o.loader_workers,
                              batch_sampler=Stream(len(self.train_set), self.local_batch, self.rank, self.world,
                                                   self.o.seed, self.first)))
        try:
            return self._train_loop(batches)
        except Exception as e:  # noqa: BLE001: any failure of a step ends the run with its one line
            self.failure = e
            return "failed"
        finally:
            del batches

    def _train_loop(self, batches):
        """Steps first + 1 .. max_iter in epochs of ipe steps, one block each."""
        o, ml, ipe = self.o, self.ml, self.ipe
        step, reached = self.first, False
        t0 = tlog = time.monotonic()
        imgs = imgs_log = 0
        while step < self.max_iter and not reached:
            epoch = step // ipe + 1
            epoch_last = epoch * ipe
            if step % ipe == 0 or step == self.first:
                ml.start(C.BLOCK_START, metadata={"first_epoch_num": epoch, "epoch_count": 1})
                ml.start(C.EPOCH_START, metadata={"epoch_num": epoch})
                t0, imgs = time.monotonic(), 0
            _, xs, ts = next(batches)
            step += 1
            ts0 = time.monotonic()
            v, lr, why = self.train_step(step, xs, ts)
            self.last_loss = v[5]
            if why:
                if self.rank == 0:
                    print(f"{PROG}: the loss is {why} at epoch {epoch}, step {step}: stopping (run_stop status "
                          f"aborted)", file=sys.stderr, flush=True)
                return "diverged"
            if self.bench and step > o.warmup_steps:
                self.secs.append(time.monotonic() - ts0)
                self.items.append(self.global_batch)
            imgs += self.global_batch
            imgs_log += self.global_batch
            end_epoch = step == epoch_last or step == self.max_iter or (o.max_steps and step >= o.max_steps)
            if step % o.log_interval == 0 or end_epoch:
                tn = time.monotonic()
                self.say(f"epoch {epoch} step {step}/{self.max_iter}: loss {v[5]:.5f} (objectness {v[0]:.5f}, "
                         f"rpn_box {v[1]:.5f}, classifier {v[2]:.5f}, box_reg {v[3]:.5f}, mask {v[4]:.5f}), lr "
                         f"{lr:.6g}, {rate_text(imgs_log / (tn - tlog))} images/s")
                tlog, imgs_log = tn, 0
            if self.ckpt and self.rank == 0 and (step == epoch_last or
                                                 (o.checkpoint_interval and step % o.checkpoint_interval == 0)):
                self.save_checkpoint(step)
            if end_epoch:
                dt = time.monotonic() - t0
                ml.end(C.EPOCH_STOP, metadata={"epoch_num": epoch})
                ml.event("throughput", imgs / dt, metadata={"epoch_num": epoch})
                ml.end(C.BLOCK_STOP, metadata={"first_epoch_num": epoch})
                self.say(f"epoch {epoch}: {dt:.1f} s, {rate_text(imgs / dt)} images/s")
            eval_now = step in o.eval_iters if o.eval_iters else step == epoch_last or step == self.max_iter
            if self.val and eval_now:
                te = time.monotonic()
                reached = self.evaluate(step, epoch)
                # training rates leave the evaluation out
                t0 += time.monotonic() - te
                tlog = time.monotonic()
            if o.max_steps and step >= o.max_steps:
                break
        return "reached" if reached else "not reached"

    def save_checkpoint(self, step):
        try:
            torch.save({"model_name": self.model_name, "step": step, "model": self.model.state_dict(),
                        "optimizer": self.opt.state_dict()}, self.ckpt + ".tmp")
            os.replace(self.ckpt + ".tmp", self.ckpt)
        except OSError as e:  # a warning: the run goes on
            print(f"{PROG}: checkpoint '{self.ckpt}': {e.strerror}, continuing without it", file=sys.stderr,
                  flush=True)

    def evaluate(self, step, epoch):
        """The evaluation after step (of epoch), logged; whether both
        targets are met."""
        o, ml = self.o, self.ml
        te = time.monotonic()
        ml.start(C.EVAL_START, metadata={"epoch_num": epoch})
        bbox, segm = self._coco_eval()
        ml.event(C.EVAL_ACCURACY, {"BBOX": bbox[0], "SEGM": segm[0]}, metadata={"epoch_num": epoch})
        ml.end(C.EVAL_STOP, metadata={"epoch_num": epoch})
        self.say(f"step {step} (epoch {epoch}): bbox mAP {bbox[0]:.4f} (AP50 {bbox[1]:.4f}, AP75 {bbox[2]:.4f}), "
                 f"segm mAP {segm[0]:.4f} (AP50 {segm[1]:.4f}, AP75 {segm[2]:.4f}), targets "
                 f"{o.target_map_bbox:.4f} and {o.target_map_segm:.4f}, evaluation {time.monotonic() - te:.1f} s")
        return bbox[0] >= o.target_map_bbox and segm[0] >= o.target_map_segm

    def _coco_eval(self):
        """bbox and segm [AP, AP50, AP75] over val2017: each rank infers its
        contiguous share, rank 0 evaluates what every rank found (the
        reference's two results lists: boxes with their areas, masks with
        theirs); every rank gets the numbers."""
        from pycocotools import mask as cocomask
        from pycocotools.cocoeval import COCOeval
        val, rank, world = self.val, self.rank, self.world
        n = len(val)
        mine = torch.utils.data.Subset(val, range(rank * n // world, (rank + 1) * n // world))
        boxes, segms = [], []
        self.model.eval()
        with torch.no_grad():
            for ids, xs, _ in loader(mine, self.o.loader_workers,
                                     batch_size=max(1, self.o.test_ims_per_batch // world)):
                for img_id, out in zip(ids, self.model(list(xs))):
                    m = (out["masks"][:, 0] > 0.5).numpy().astype(np.uint8)
                    rles = cocomask.encode(np.asfortranarray(m.transpose(1, 2, 0))) if len(m) else []
                    for k in range(len(out["scores"])):
                        x1, y1, x2, y2 = out["boxes"][k].tolist()
                        cat, score = val.cats[int(out["labels"][k]) - 1], float(out["scores"][k])
                        boxes.append({"image_id": img_id, "category_id": cat, "bbox": [x1, y1, x2 - x1, y2 - y1],
                                      "score": score})
                        rle = rles[k]
                        rle["counts"] = rle["counts"].decode("ascii")
                        segms.append({"image_id": img_id, "category_id": cat, "segmentation": rle, "score": score})
        self.model.train()
        if world > 1:
            every = [None] * world if rank == 0 else None
            dist.gather_object((boxes, segms), every, dst=0)
            if rank == 0:
                boxes = [d for b, _ in every for d in b]
                segms = [d for _, s in every for d in s]
        stats = torch.zeros(6, dtype=torch.float64)
        for j, (kind, dets) in enumerate((("bbox", boxes), ("segm", segms))):
            if rank != 0 or not dets:
                continue
            with contextlib.redirect_stdout(io.StringIO()):  # pycocotools talks
                E = COCOeval(val.coco, val.coco.loadRes(dets), kind)
                E.params.imgIds = val.ids
                E.evaluate()
                E.accumulate()
                E.summarize()
            stats[3 * j:3 * j + 3] = torch.tensor([max(float(v), 0.0) for v in E.stats[:3]])
        if world > 1:
            dist.broadcast(stats, 0)
        return stats[:3].tolist(), stats[3:].tolist()

    def finish(self, ended):
        """Throughput mode's result, run_stop and the summary line; the exit
        status (a failure raises its RunError on this rank)."""
        o = self.o
        if self.bench:
            outcome = {"diverged": "nan", "failed": "oom" if isinstance(self.failure, MemoryError) else "failed"}
            success = ended not in outcome and len(self.secs) == o.benchmark_steps
            bench_result(o, self.ml, self.rank == 0, self.secs, self.items,
                         "completed" if success else outcome.get(ended, "failed"), self.last_loss, self.world,
                         self.host)
        else:
            success = ended == "reached"
        self.ml.end(C.RUN_STOP, metadata={"status": "success" if success else "aborted"})
        if self.failure:
            # an error on some rank: the others may be anywhere (MPI_Abort's role)
            raise RunError(one_line(self.failure))
        if not self.bench and ended != "diverged":
            self.say(f"# targets {'reached' if ended == 'reached' else 'not reached'}: bbox mAP >= "
                     f"{o.target_map_bbox:.4f} and segm mAP >= {o.target_map_segm:.4f}")
        if self.world > 1:
            dist.destroy_process_group()
        return 1 if ended == "diverged" else 0


# ---- throughput mode's result ---------------------------------------------------------------------

def t_quantile(p, df):
    """Student's t quantile: bisection on the CDF, through the regularised
    incomplete beta function (lib/stats.c's method, for the same numbers)."""
    def beta_cf(a, b, x):
        tiny, eps = 1e-300, 1e-15
        c, d = 1.0, 1 - (a + b) * x / (a + 1)
        d = 1 / (tiny if abs(d) < tiny else d)
        h = d
        for m in range(1, 301):
            for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                       -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
                d = 1 + aa * d
                c = 1 + aa / c
                d = 1 / (tiny if abs(d) < tiny else d)
                c = tiny if abs(c) < tiny else c
                h *= d * c
            if abs(d * c - 1) < eps:
                break
        return h

    def beta_inc(a, b, x):
        if x <= 0:
            return 0.0
        if x >= 1:
            return 1.0
        lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
        if x < (a + 1) / (a + b + 2):
            return math.exp(lbt) * beta_cf(a, b, x) / a
        return 1 - math.exp(lbt) * beta_cf(b, a, 1 - x) / b

    def cdf(t):
        tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t))
        return 1 - tail if t > 0 else tail
    lo, hi = -1.0, 1.0
    while cdf(lo) > p:
        lo *= 2
    while cdf(hi) < p:
        hi *= 2
    for _ in range(200):
        if hi - lo <= 1e-12 * max(1, abs(lo)):
            break
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def summary(v):
    """mean, min, max, sd (n - 1) and the 95% interval of the mean"""
    n = len(v)
    mean = sum(v) / n if n else 0.0
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    h = t_quantile(0.975, n - 1) * sd / math.sqrt(n) if n > 1 else 0.0
    return {"avg": mean, "min": min(v) if v else 0.0, "max": max(v) if v else 0.0, "sd": sd, "count": n,
            "ci95_lo": mean - h, "ci95_hi": mean + h}


def unique_id(argv):
    """XXH3-128 of the arguments but --result FILE, NUL-separated, in hex
    (benchd-maskrcnn's rule, through libxxhash); BLAKE2b-128 where there is
    no libxxhash."""
    data = b""
    skip = False
    for a in argv:
        if skip or a.startswith("--result="):
            skip = False
            continue
        if a == "--result":
            skip = True
            continue
        data += a.encode() + b"\0"

    class XXH128(ctypes.Structure):
        _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]
    name = ctypes.util.find_library("xxhash")
    if name:
        try:
            lib = ctypes.CDLL(name)
            lib.XXH3_128bits.restype = XXH128
            lib.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            h = lib.XXH3_128bits(data, len(data))
            return f"{h.high64:016x}{h.low64:016x}"
        except (OSError, AttributeError):
            pass
    import hashlib
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def blas_library():
    """The BLAS library this process loaded (Debian's torch does its matrix
    products in whatever libblas.so.3 is: the reference BLAS, 20x slower
    than OpenBLAS, unless libopenblas0 is installed or put first on
    LD_LIBRARY_PATH)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {ln.split()[-1] for ln in f if "blas" in ln.rsplit("/", 1)[-1]}
    except OSError:
        return "?"
    return ", ".join(sorted(os.path.join(os.path.basename(os.path.dirname(x)), os.path.basename(x))
                            for x in libs)) or "?"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def bench_result(o, ml, rank0, secs, items, outcome, loss, world, host):
    """Throughput mode's line, MLPerf throughput event and --result file
    (benchd-maskrcnn's fields, trainer/common/tbench.h)."""
    if not rank0:
        return
    rates = [i / s for i, s in zip(items, secs)]
    st, si = summary(secs), summary(rates)
    if outcome == "completed":
        def f(v):
            return f"{v:.{3 if si['avg'] < 10 else 2 if si['avg'] < 100 else 1}f}"
        print(f"# throughput: {len(secs)} steps after {o.warmup_steps}: {f(si['avg'])} images/s (sd {f(si['sd'])}, "
              f"min {f(si['min'])}, max {f(si['max'])}, 95% interval {f(si['ci95_lo'])} .. {f(si['ci95_hi'])}), "
              f"{st['avg']:.4f} s a step", flush=True)
        ml.event("throughput", si["avg"], metadata={"unit": "images/s", "count": si["count"],
                                                     "warmup_steps": o.warmup_steps, "sd": si["sd"], "min": si["min"],
                                                     "max": si["max"], "ci95_lo": si["ci95_lo"],
                                                     "ci95_hi": si["ci95_hi"]})
    else:
        print(f"# throughput: none ({outcome} after {len(secs)} of {o.benchmark_steps} timed steps)", flush=True)
        ml.event("throughput", None, metadata={"unit": "images/s", "outcome": outcome})
    if not o.result:
        return
    done = outcome == "completed"
    res = {"program": PROG, "benchmark": "maskrcnn", "arguments": o.argv, "version": VERSION,
           "unique_id": unique_id(o.argv), "hostname": host, "device": cpu_model(), "ranks": world,
           "batch": o.ims_per_batch, "precision": "fp32", "warmup_steps": o.warmup_steps,
           "benchmark_steps": o.benchmark_steps, "time": int(time.time()), "outcome": outcome, "completed": done,
           "batch_loss": loss if math.isfinite(loss) else None, "observations_s": secs, "observations_items": items,
           "train": {k: st[k] for k in ("avg", "min", "max", "sd", "count")} | {"unit": "s"} if done else None,
           "train_item": si | {"unit": "images/s"} if done else None}
    tmp = f"{o.result}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w") as f:
            json.dump(res, f, indent=2)
            f.write("\n")
        os.replace(tmp, o.result)
    except OSError as e:
        print(f"{PROG}: --result: {o.result}: {e.strerror}", file=sys.stderr, flush=True)


def one_line(e):
    """An exception's message in one line: the last line of the message
    (a data loader worker's error comes with its traceback), without the
    exception's name."""
    lines = [ln for ln in str(e).splitlines() if ln.strip()] or [type(e).__name__]
    return re.sub(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)): ", "", lines[-1].strip())


def main(argv):
    ranks = launch_ranks()
    rank0 = ranks[0] == 0
    try:
        o = Options(argv)
    except UsageError as e:
        # usage errors before anything starts, from rank 0 only
        if rank0:
            print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if o.help:
        if rank0:
            sys.stdout.write(usage_text())
        return 0
    if o.version:
        if rank0:
            print(f"{PROG} {VERSION}")
        return 0
    if o.ims_per_batch % ranks[1]:
        if rank0:
            print(f"{PROG}: --ims-per-batch {o.ims_per_batch} is not a multiple of the {ranks[1]} ranks",
                  file=sys.stderr)
        return 2
    try:
        import_packages()
        run = Run(o, ranks)
        run.init()
        return run.finish(run.train())
    except Exception as e:  # noqa: BLE001: whatever failed, one line
        if not isinstance(e, RunError) or e.args[0] is not None:  # None: another rank failed and said why
            print(f"{PROG}: " + (f"rank {ranks[0]}: " if ranks[1] > 1 else "") + one_line(e), file=sys.stderr,
                  flush=True)
        sys.stdout.flush()
        os._exit(1)  # other ranks may be anywhere, the loader's workers too


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
