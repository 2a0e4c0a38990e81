# compile_bench.py — the eager PyTorch 1.13 side of bench/compile.sh (Debian's PyTorch 1.13 has no
# torch.compile): the same figures as bench/compile_bench.lua's *_eager, printed "key microseconds"
import time, torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
def bench(key, n, fn, reps=5):
    fn(1)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); fn(n); ts.append((time.perf_counter() - t0) / n)
    ts.sort(); print("%s %.1f" % (key, ts[(len(ts) - 1) // 2] * 1e6))
N = 16 * 1024 * 1024
a, b, c = torch.randn(N), torch.randn(N), torch.randn(N)
bench("chain_eager", 3, lambda n: [a * torch.sigmoid(a) * b + c for _ in range(n)])
ln = nn.LayerNorm(1024); xl = torch.randn(4096, 1024)
with torch.no_grad():
    bench("lngelu_eager", 5, lambda n: [xl + F.gelu(ln(xl)) for _ in range(n)])
    mask = torch.randn(1024)
    bench("softmax_eager", 5, lambda n: [F.softmax(xl * 0.125 + mask, -1) for _ in range(n)])
fc1, fc2 = nn.Linear(256, 1024), nn.Linear(1024, 256); xm = torch.randn(8192, 256)
def train(n):
    for _ in range(n):
        y = xm + fc2(F.gelu(fc1(xm))); y.square().mean().backward()
bench("mlp_train_eager", 3, train)
xb = torch.randn(4 * 1024 * 1024)
def brk(x):
    h = torch.sigmoid(x * 1.5) * x + 0.25
    if h.sum().item() > 0: return torch.tanh(h) * 2 - h
    return torch.tanh(h) * 0.5 + h
bench("break_eager", 5, lambda n: [brk(xb) for _ in range(n)])
