"""autograd_bench.py - the PyTorch side of bench/autograd.sh (same figures as autograd_bench.lua)."""
import sys
import time

import torch

torch.set_num_threads(1)
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def median(t):
    t = sorted(t)
    return t[(len(t) - 1) // 2]


def timeit(n, fn):
    fn(max(1, n // 10))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(n)
        ts.append((time.perf_counter() - t0) / n)
    return median(ts)


a, b = torch.tensor([1.0]), torch.tensor([2.0])
ag, bg = torch.tensor([1.0], requires_grad=True), torch.tensor([2.0], requires_grad=True)


def add_plain(n):
    for _ in range(n):
        c = a + b


def add_grad(n):
    for _ in range(n):
        c = ag + bg


def add_backward(n):
    for _ in range(n):
        c = ag + bg
        c.backward()


def add_inference(n):
    with torch.inference_mode():
        for _ in range(n):
            c = a + b


x = torch.randn(16, requires_grad=True)


def chain1000(n):
    for _ in range(n):
        y = x
        for _ in range(250):
            y = ((y * 1.0001).sin() + 0.5).tanh()
        y.sum().backward()


r = {
    "add_plain": timeit(200000, add_plain),
    "add_grad": timeit(200000, add_grad),
    "add_backward": timeit(50000, add_backward),
    "add_inference": timeit(200000, add_inference),
    "chain1000": timeit(20, chain1000),
}
for k in ("add_plain", "add_grad", "add_backward", "add_inference", "chain1000"):
    print("%s %.4f" % (k, r[k] * 1e6))
