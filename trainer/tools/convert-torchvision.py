#!/usr/bin/python3
"""Convert a PyTorch / torchvision state dict into a benchd weights file.

    convert-torchvision.py STATE_DICT.pth OUT.bdw [--strip PREFIX] [--source TEXT]
    convert-torchvision.py --random resnet34 --seed 1 OUT.bdw

The weights file (format version 1, trainer/core/checkpoint.h) holds each
floating-point tensor under its PyTorch name ("layer1.0.conv1.weight"): the
trainers' parameter names are torchvision's, so tensors load by name, after
the trainer's own prefix ("backbone.").  Integer buffers (BatchNorm's
num_batches_tracked) are left out.  --random builds a torchvision model with
its default random initialisation (for tests on machines without network
access to the pretrained files).

Run with Debian's /usr/bin/python3 (python3-torch, python3-torchvision).
"""
import argparse
import struct
import sys
import zlib

MAGIC = b"BDWEIGHT"
END = b"BDWTEND\0"
VERSION = 1


def tensors_of(state):
    """(name, float32 contiguous tensor) for every floating-point entry."""
    import torch
    for name, t in state.items():
        if not torch.is_tensor(t) or not t.is_floating_point():
            continue
        yield name, t.detach().to(torch.float32).contiguous().cpu()


def write_weights(path, state, source="", strip=""):
    """Write state (a dict name -> tensor) to path atomically; returns the count."""
    import os
    body = bytearray()
    count = 0
    for name, t in tensors_of(state):
        if strip and name.startswith(strip):
            name = name[len(strip):]
        nb = name.encode("utf-8")
        if len(nb) >= 256:
            raise ValueError("tensor name too long: %s" % name)
        body += struct.pack("<H", len(nb)) + nb
        body += struct.pack("<BB", 0, t.dim())
        body += struct.pack("<%dq" % t.dim(), *t.shape)
        body += t.numpy().astype("<f4").tobytes()
        count += 1
    head = MAGIC + struct.pack("<II", VERSION, count) + source.encode("utf-8")[:63].ljust(64, b"\0")
    data = head + bytes(body)
    crc = zlib.crc32(data) & 0xFFFFFFFF
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
        f.write(struct.pack("<II", crc, 0) + END)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", nargs="?", help="state dict saved with torch.save (.pth)")
    ap.add_argument("output", help="weights file to write")
    ap.add_argument("--random", metavar="ARCH", help="a torchvision model with random weights instead (resnet18/34/50)")
    ap.add_argument("--seed", type=int, default=0, help="seed for --random (default 0)")
    ap.add_argument("--strip", default="", help="prefix removed from every name (e.g. 'module.')")
    ap.add_argument("--source", default=None, help="text stored in the header (default: the input's name)")
    a = ap.parse_args()
    try:
        import torch
        import torchvision
    except ImportError as e:
        sys.exit("convert-torchvision: needs python3-torch and python3-torchvision: %s" % e)
    if a.random:
        torch.manual_seed(a.seed)
        if not hasattr(torchvision.models, a.random):
            sys.exit("convert-torchvision: unknown torchvision model '%s'" % a.random)
        state = getattr(torchvision.models, a.random)().state_dict()
        source = a.source or "torchvision %s random seed %d" % (a.random, a.seed)
    elif a.input:
        try:
            state = torch.load(a.input, map_location="cpu")
        except Exception as e:  # noqa: BLE001 - any unreadable file
            sys.exit("convert-torchvision: cannot read '%s': %s" % (a.input, e))
        if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
            state = state["state_dict"]
        if isinstance(state, dict) and "model" in state and isinstance(state["model"], dict):
            state = state["model"]
        if not isinstance(state, dict):
            sys.exit("convert-torchvision: '%s' holds no state dict" % a.input)
        source = a.source or a.input.rsplit("/", 1)[-1]
    else:
        ap.error("give a state dict or --random ARCH")
    n = write_weights(a.output, state, source, a.strip)
    print("convert-torchvision: %d tensors written to %s" % (n, a.output))


if __name__ == "__main__":
    main()
