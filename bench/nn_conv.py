"""nn_conv.py - the PyTorch side of bench/nn_conv.lua (same keys; run with bench/nn.sh conv)."""
import torch
import torch.nn.functional as F
from timing import Timer

torch.set_num_threads(1)
T = Timer()  # reps from argv[1]; process_time: pinned to one thread, CPU time, as os.clock on the Lua side
bench = T.bench
torch.manual_seed(0)

convs = [
    ("conv_lenet1", 64, 1, 28, 6, 5, 0, 20),
    ("conv_lenet2", 64, 6, 12, 16, 5, 0, 20),
    ("conv_resnet", 8, 64, 56, 64, 3, 1, 2),
]
for name, N, C, H, O, k, p, it in convs:
    x = torch.randn(N, C, H, H, requires_grad=True)
    w = torch.randn(O, C, k, k, requires_grad=True)
    b = torch.randn(O, requires_grad=True)
    with torch.no_grad():
        g = torch.randn(F.conv2d(x, w, b, padding=p).shape)

    def fwd(n, x=x, w=w, b=b, p=p):
        with torch.no_grad():
            for _ in range(n):
                F.conv2d(x, w, b, padding=p)

    def fwd_bwd(n, x=x, w=w, b=b, p=p, g=g):
        for _ in range(n):
            x.grad = None; w.grad = None; b.grad = None
            F.conv2d(x, w, b, padding=p).backward(g)

    bench(name + "_fwd", it * 2, fwd)
    bench(name + "_fwd_bwd", it, fwd_bwd)

xp = torch.randn(64, 6, 24, 24, requires_grad=True)
gp = torch.randn(64, 6, 12, 12)


def pool_fwd(n):
    with torch.no_grad():
        for _ in range(n):
            F.max_pool2d(xp, 2)


def pool_fwd_bwd(n):
    for _ in range(n):
        xp.grad = None
        F.max_pool2d(xp, 2).backward(gp)


bench("maxpool_fwd", 100, pool_fwd)
bench("maxpool_fwd_bwd", 50, pool_fwd_bwd)

T.report()
