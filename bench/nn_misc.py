"""nn_misc.py - the PyTorch side of bench/nn_misc.lua (same keys; run with bench/nn.sh misc)."""
import math

import torch
import torch.nn.functional as F
from timing import Timer

torch.set_num_threads(1)
T = Timer()  # reps from argv[1]; process_time: pinned to one thread, CPU time, as os.clock on the Lua side
bench = T.bench
torch.manual_seed(0)


x = torch.randn(64, 784, requires_grad=True)
w = torch.randn(256, 784, requires_grad=True)
b = torch.randn(256, requires_grad=True)
gl = torch.randn(64, 256)


def linear_fwd(n):
    with torch.no_grad():
        for _ in range(n):
            F.linear(x, w, b)


def linear_fwd_bwd(n):
    for _ in range(n):
        x.grad = w.grad = b.grad = None
        F.linear(x, w, b).backward(gl)


bench("linear_fwd", 200, linear_fwd)
bench("linear_fwd_bwd", 100, linear_fwd_bwd)

a = torch.randn(1048576, requires_grad=True)
ga = torch.randn(1048576)
for name in ("gelu", "silu", "mish", "hardswish"):
    f = getattr(F, name)

    def fwd(n, f=f):
        with torch.no_grad():
            for _ in range(n):
                f(a)

    def fwd_bwd(n, f=f):
        for _ in range(n):
            a.grad = None
            f(a).backward(ga)

    bench(name + "_fwd", 20, fwd)
    bench(name + "_fwd_bwd", 10, fwd_bwd)

tbl = torch.randn(50000, 256, requires_grad=True)
idx = torch.randint(0, 50000, (4096,))
ge = torch.randn(4096, 256)


def emb_fwd(n):
    with torch.no_grad():
        for _ in range(n):
            F.embedding(idx, tbl)


def emb_fwd_bwd(n):
    for _ in range(n):
        tbl.grad = None
        F.embedding(idx, tbl).backward(ge)


bench("embedding_fwd", 200, emb_fwd)
bench("embedding_fwd_bwd", 10, emb_fwd_bwd)

def sdpa_math(q, k, v, is_causal=False):
    """PyTorch's math path, for a PyTorch older than F.scaled_dot_product_attention (2.0)"""
    a = (q * (1 / math.sqrt(q.size(-1)))) @ k.transpose(-2, -1)
    if is_causal:
        a = a.masked_fill(torch.ones(a.size(-2), a.size(-1), dtype=torch.bool).triu(1), float("-inf"))
    return a.softmax(-1) @ v


q = torch.randn(8, 8, 128, 64, requires_grad=True)
k = torch.randn(8, 8, 128, 64, requires_grad=True)
v = torch.randn(8, 8, 128, 64, requires_grad=True)
gs = torch.randn(8, 8, 128, 64)
sdpa = getattr(F, "scaled_dot_product_attention", sdpa_math)


def sdpa_fwd(n):
    with torch.no_grad():
        for _ in range(n):
            sdpa(q, k, v)


def sdpa_fwd_bwd(n, causal=False):
    for _ in range(n):
        q.grad = k.grad = v.grad = None
        sdpa(q, k, v, is_causal=causal).backward(gs)


bench("sdpa_fwd", 10, sdpa_fwd)
bench("sdpa_fwd_bwd", 5, sdpa_fwd_bwd)
bench("sdpa_causal_fwd_bwd", 5, lambda n: sdpa_fwd_bwd(n, True))


def dropout_fwd_bwd(n):
    for _ in range(n):
        a.grad = None
        F.dropout(a, 0.5, True).backward(ga)


bench("dropout_fwd_bwd", 10, dropout_fwd_bwd)

T.report()
