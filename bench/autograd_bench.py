"""autograd_bench.py - the PyTorch side of bench/autograd.sh (same figures as autograd_bench.lua)."""
import time

import torch
from timing import Timer

torch.set_num_threads(1)
T = Timer(warmup=10, fmt="%.4f", clock=time.perf_counter)  # reps from argv[1]; wall time (perf_counter)


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


T.bench("add_plain", 200000, add_plain)
T.bench("add_grad", 200000, add_grad)
T.bench("add_backward", 50000, add_backward)
T.bench("add_inference", 200000, add_inference)
T.bench("chain1000", 20, chain1000)
T.report()
