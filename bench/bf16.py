"""bf16.py - the PyTorch 1.13 twin of bf16.lua (same keys; float16 mm and exp are not
implemented on PyTorch 1.13's CPU and are left out)."""
import sys
import torch
import torch.nn.functional as F
sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
from timing import Timer

torch.set_num_threads(1)
T = Timer(warmup=1, reps=int(sys.argv[1]) if len(sys.argv) > 1 else 3)
torch.manual_seed(0)
dts = [("f32", torch.float32), ("bf16", torch.bfloat16)]
for m, k, n, r in [(2048, 2048, 2048, 1), (64, 784, 512, 30), (64, 512, 256, 60), (64, 256, 10, 400),
                   (784, 64, 512, 30)]:
    for name, dt in dts:
        a, b = torch.randn(m, k).to(dt), torch.randn(k, n).to(dt)
        T.bench("mm_%dx%dx%d_%s" % (m, k, n, name), r, lambda q: [torch.mm(a, b) for _ in range(q)])
N = 16 * 1024 * 1024
for name, dt in dts:
    a, b = torch.randn(N).to(dt), torch.randn(N).to(dt)
    T.bench("add16M_" + name, 3, lambda q: [a + b for _ in range(q)])
    T.bench("sum16M_" + name, 3, lambda q: [a.sum() for _ in range(q)])
    T.bench("exp16M_" + name, 3, lambda q: [a.exp() for _ in range(q)])
    T.bench("relu16M_" + name, 3, lambda q: [torch.relu(a) for _ in range(q)])
for key, xs, ws, pad, r in [("conv_lenet2", (64, 6, 12, 12), (16, 6, 5, 5), 0, 20),
                            ("conv_resnet64", (8, 64, 28, 28), (64, 64, 3, 3), 1, 3)]:
    for name, dt in dts:
        x, w = torch.randn(xs).to(dt), (torch.randn(ws) * 0.1).to(dt)
        T.bench(key + "_" + name, r, lambda q: [F.conv2d(x, w, None, padding=pad) for _ in range(q)])
T.report()
