#!/usr/bin/python3
"""Makes the PyTorch-profiler fixture of `pipesim import-torch`.

Runs a tiny Transformer encoder block (embed, attention, layer norm, feed-forward,
layer norm, head, loss) forward and backward under torch.profiler on the CPU and
writes two files:

  <out>.json         torch.profiler's own export_chrome_trace output, untouched
  <out>.layers.csv   per-layer sizes the trace cannot carry: name, kind, params,
                     out_bytes and stash_bytes per sample, at_batch

Conventions pipesim import-torch reads (any script can follow them):
  - every layer's forward runs inside record_function("layer:<name>");
  - its backward runs inside a range of the same name, opened when the gradient
    of the layer's output arrives and closed when the gradient of its input has
    been produced (a zero-cost autograd Function at each layer boundary does
    this; the first layer's range closes when backward() returns, so it never
    computes a gradient for the model input);
  - each step's forward and backward are wrapped in "pipesim:forward" and
    "pipesim:backward" (used by the tests to check the per-layer sums).
Backward ranges are needed because Debian's python3-torch (1.13.1) is built
without Kineto: its profiler is the legacy autograd profiler, whose Chrome
export carries names, threads and times only (no sequence numbers, no shapes).
With a Kineto build, import-torch can instead attribute backward functions by
their "Sequence number" to the forward ops inside each layer range.

stash_bytes is measured, not estimated: saved_tensors_hooks count the bytes
autograd keeps from each layer's forward for its backward (parameters and
tensors saved twice excluded). out_bytes is the layer output's size.

Usage: /usr/bin/python3 scripts/make_torch_trace.py [--out tests/fixtures/torch/tinyformer]
       [--batch 8] [--steps 3] [--seed 1]
"""
import argparse
import csv
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.graph import saved_tensors_hooks
from torch.profiler import ProfilerActivity, profile, record_function

SEQ, D_IN, D_MODEL, HEADS, D_FF, CLASSES = 64, 64, 128, 2, 512, 10


class Attention(nn.Module):
    """Multi-head self-attention with a residual. Written out rather than
    nn.MultiheadAttention: CPU bmm logs a select per matrix, and few heads
    keep the trace small."""

    def __init__(self):
        super().__init__()
        self.qkv, self.out = nn.Linear(D_MODEL, 3 * D_MODEL), nn.Linear(D_MODEL, D_MODEL)

    def forward(self, h):
        b, s, d = h.shape
        q, k, v = (t.reshape(b, s, HEADS, d // HEADS).transpose(1, 2)
                   for t in self.qkv(h).chunk(3, dim=-1))
        a = torch.softmax(q @ k.transpose(-2, -1) / (d // HEADS) ** 0.5, dim=-1)
        return h + self.out((a @ v).transpose(1, 2).reshape(b, s, d))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(D_MODEL, D_FF), nn.Linear(D_FF, D_MODEL)

    def forward(self, h):
        return h + self.down(F.relu(self.up(h)))


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D_MODEL, CLASSES)

    def forward(self, h):
        return self.fc(h.mean(dim=1))


LAYERS = [  # (name, kind, module)
    ("embed", "dense", lambda: nn.Linear(D_IN, D_MODEL)),
    ("attn", "attention", Attention),
    ("ln1", "norm", lambda: nn.LayerNorm(D_MODEL)),
    ("ffn", "dense", FeedForward),
    ("ln2", "norm", lambda: nn.LayerNorm(D_MODEL)),
    ("head", "dense", Head),
]

_open = {}  # layer name -> its open backward record_function


def _open_range(name):
    r = record_function("layer:" + name)
    r.__enter__()
    _open[name] = r


def _close_range(name):
    _open.pop(name).__exit__(None, None, None)


class Boundary(torch.autograd.Function):
    """Identity; in backward it closes the range of the layer after the
    boundary (its input gradient is done) and opens the one before it."""

    @staticmethod
    def forward(ctx, x, before, after):
        ctx.before, ctx.after = before, after
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        if ctx.after:
            _close_range(ctx.after)
        if ctx.before:
            _open_range(ctx.before)
        return g, None, None


def step(mods, x, y, sizes=None):
    names = [n for n, _, _ in LAYERS] + ["loss"]
    with record_function("pipesim:forward"):
        h = x
        for i, (name, _, _) in enumerate(LAYERS):
            if i > 0:
                h = Boundary.apply(h, names[i - 1], name)
            saved = {}
            with record_function("layer:" + name), saved_tensors_hooks(
                    lambda t: _count(saved, t, mods), lambda t: t):
                h = mods[name](h)
            if sizes is not None:
                sizes[name] = (h.numel() * h.element_size(),
                               sum(saved.values()))
        h = Boundary.apply(h, names[-2], "loss")
        saved = {}
        with record_function("layer:loss"), saved_tensors_hooks(
                lambda t: _count(saved, t, mods), lambda t: t):
            loss = F.cross_entropy(h, y)
        if sizes is not None:
            sizes["loss"] = (loss.numel() * loss.element_size(), sum(saved.values()))
        loss = Boundary.apply(loss, "loss", None)
    with record_function("pipesim:backward"):
        loss.backward()
        _close_range(names[0])
    return loss


def _count(saved, t, mods):
    """pack hook: adds t's storage once, unless it is a parameter."""
    params = {p.data_ptr() for p in mods.parameters()}
    ptr = t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") \
        else t.storage().data_ptr()
    if t.data_ptr() not in params and ptr not in saved:
        saved[ptr] = t.numel() * t.element_size()
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tests/fixtures/torch/tinyformer")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    mods = nn.ModuleDict({n: make() for n, _, make in LAYERS})
    x = torch.randn(a.batch, SEQ, D_IN)
    y = torch.randint(0, CLASSES, (a.batch,))
    sizes = {}
    for _ in range(5):  # warm-up: allocator, kernels, and the sizes
        step(mods, x, y, sizes)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(a.steps):
            step(mods, x, y)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    prof.export_chrome_trace(a.out + ".json")
    with open(a.out + ".layers.csv", "w", newline="") as f:
        f.write("# sizes of the layers of %s.json (torch %s, batch %d, %d steps, seed %d); "
                "bytes per sample\n" % (os.path.basename(a.out), torch.__version__,
                                       a.batch, a.steps, a.seed))
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["name", "kind", "params", "out_bytes", "stash_bytes", "at_batch"])
        kinds = {n: k for n, k, _ in LAYERS}
        kinds["loss"] = "loss"
        for name in [n for n, _, _ in LAYERS] + ["loss"]:
            p = sum(q.numel() for q in mods[name].parameters()) if name in mods else 0
            out_b, stash_b = sizes[name]
            w.writerow([name, kinds[name], p, out_b / a.batch, stash_b / a.batch, a.batch])
    print("wrote %s.json (%d bytes) and %s.layers.csv" %
          (a.out, os.path.getsize(a.out + ".json"), a.out), file=sys.stderr)


if __name__ == "__main__":
    main()
