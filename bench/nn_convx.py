"""nn_convx.py - the PyTorch side of bench/nn_convx.lua (same keys; run with bench/nn.sh convx)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from timing import Timer

torch.set_num_threads(1)
T = Timer()
torch.manual_seed(0)

cases = [
    ("conv_s2_1to16", F.conv2d, (64, 1, 28, 28), (16, 1, 3, 3), dict(stride=2, padding=1), 20),
    ("conv_s2_16to16", F.conv2d, (64, 16, 14, 14), (16, 16, 3, 3), dict(stride=2, padding=1), 20),
    ("conv_s2_16to10", F.conv2d, (64, 16, 7, 7), (10, 16, 3, 3), dict(stride=2, padding=1), 40),
    ("conv_1x1_256to64", F.conv2d, (8, 256, 28, 28), (64, 256, 1, 1), dict(), 4),
    ("conv_dw_128", F.conv2d, (8, 128, 56, 56), (128, 1, 3, 3), dict(padding=1, groups=128), 4),
    ("convt_64to32", F.conv_transpose2d, (8, 64, 28, 28), (64, 32, 4, 4), dict(stride=2, padding=1), 4),
    ("conv1d_64", F.conv1d, (32, 64, 1000), (64, 64, 5), dict(padding=2), 4),
    ("conv3d_16", F.conv3d, (4, 16, 16, 32, 32), (16, 16, 3, 3, 3), dict(padding=1), 2),
]
for key, op, xs, ws, opt, it in cases:
    x = torch.randn(xs, requires_grad=True)
    w = torch.randn(ws, requires_grad=True)
    b = torch.randn(ws[1] if op is F.conv_transpose2d else ws[0], requires_grad=True)
    with torch.no_grad():
        g = torch.randn(op(x, w, b, **opt).shape)

    def fwd(n, op=op, x=x, w=w, b=b, opt=opt):
        with torch.no_grad():
            for _ in range(n):
                op(x, w, b, **opt)

    def fwd_bwd(n, op=op, x=x, w=w, b=b, opt=opt, g=g):
        for _ in range(n):
            x.grad = None; w.grad = None; b.grad = None
            op(x, w, b, **opt).backward(g)

    T.bench(key + "_fwd", it * 2, fwd)
    T.bench(key + "_fwd_bwd", it, fwd_bwd)

model = nn.Sequential(
    nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(16, 10, 3, stride=2, padding=1), nn.ReLU(),
    nn.AvgPool2d(4), nn.Flatten())
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
xb = torch.rand(64, 1, 28, 28)
yb = torch.randint(0, 10, (64,))


def step(n):
    for _ in range(n):
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()


T.bench("tutorial_cnn_step", 20, step)
T.report()
