# pt_cuda_bench.py — PyTorch's side of the GPU benchmarks (tools/gpu_check.sh), the same
# work as lt_cuda_bench.lua on the same GPU, plus:
#   alloc_ns   torch.cuda.caching_allocator_alloc + caching_allocator_delete of a cached
#              1 MiB block: ns per pair (lutorch's figure: build/bench/cuda_alloc_bench)
# Usage: python3 bench/cuda/pt_cuda_bench.py [MIB [N [STEPS]]]; prints "key value unit".
# Without a GPU it runs on the CPU and says so (the dry run of tools/gpu_check.sh).
import sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 256
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 200
cuda = torch.cuda.is_available()
dev = "cuda" if cuda else "cpu"
sync = torch.cuda.synchronize if cuda else (lambda: None)

def timed(fn, iters, reps=3):
    fn(); fn(); sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best

def bench(key, unit, f):
    try:
        print("%s %.4g %s" % (key, f(), unit))
    except Exception as e:  # one failure must not hide the rest
        print("%s n/a (%s)" % (key, str(e).splitlines()[0] if str(e) else type(e).__name__))
    sys.stdout.flush()

print("device %s | PyTorch %s, %d MiB, mm %d, %d MLP steps" % (
    torch.cuda.get_device_name() if cuda else "cpu (no GPU: figures are not comparable)", torch.__version__,
    MIB, N, STEPS))
n = MIB * 1024 * 1024 // 4

def add():
    a, b = torch.ones(n, device=dev), torch.ones(n, device=dev)
    c = torch.empty(n, device=dev)
    return 3 * n * 4 / timed(lambda: torch.add(a, b, out=c), 20) / 1e9
bench("add_gbps", "GB/s", add)

def red():
    a = torch.ones(n, device=dev)
    return n * 4 / timed(lambda: a.sum(), 20) / 1e9
bench("sum_gbps", "GB/s", red)

def mm():
    a = torch.randn(N, N, device=dev, dtype=torch.bfloat16)
    b = torch.randn(N, N, device=dev, dtype=torch.bfloat16)
    return 2 * N ** 3 / timed(lambda: a @ b, 5) / 1e12
bench("mm_tflops", "TFLOP/s", mm)

def mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.rand(64, 784, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return timed(step, STEPS, 1) * 1e3
bench("mlp_ms", "ms", mlp)

def alloc():
    if not cuda:
        raise RuntimeError("no GPU")
    p = torch.cuda.caching_allocator_alloc(1 << 20)
    torch.cuda.caching_allocator_delete(p)       # now cached
    k = 100000
    t0 = time.perf_counter()
    for _ in range(k):
        p = torch.cuda.caching_allocator_alloc(1 << 20)
        torch.cuda.caching_allocator_delete(p)
    return (time.perf_counter() - t0) / k * 1e9
bench("alloc_ns", "ns", alloc)
