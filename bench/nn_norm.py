"""nn_norm.py - the PyTorch side of bench/nn_norm.lua (same keys)."""
import torch
import torch.nn.functional as F
from timing import Timer

torch.set_num_threads(1)
# reps from argv[1]; CPU time of this process (process_time), like os.clock on the lutorch
# side: on one thread it is the wall time of an idle machine, and other processes' load does not count
T = Timer(warmup=10)
fig = T.bench
torch.manual_seed(0)


def leaf(*s):
    return torch.randn(*s, requires_grad=True)


x, w, b = leaf(64, 64, 28, 28), leaf(64), leaf(64)
rm, rv = torch.zeros(64), torch.ones(64)
g = torch.randn(64, 64, 28, 28)


def bn(n):
    for _ in range(n):
        F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5).backward(g)


fig("bn_train_64x64x28x28", 5, bn)

x1, w1, b1 = leaf(256, 1024), leaf(1024), leaf(1024)
rm1, rv1 = torch.zeros(1024), torch.ones(1024)
g1 = torch.randn(256, 1024)


def bn1d(n):
    for _ in range(n):
        F.batch_norm(x1, rm1, rv1, w1, b1, True, 0.1, 1e-5).backward(g1)


fig("bn1d_train_256x1024", 50, bn1d)

for s in ((256, 1000), (64, 10)):
    xs = leaf(*s)
    t = torch.randint(0, s[1], (s[0],))

    def lsm(n, xs=xs, t=t):
        for _ in range(n):
            F.nll_loss(F.log_softmax(xs, 1), t).backward()

    fig("lsm_nll_%dx%d" % s, 2000 if s[1] == 10 else 100, lsm)

xl, wl, bl = leaf(64, 128, 512), leaf(512), leaf(512)
gl = torch.randn(64, 128, 512)


def ln(n):
    for _ in range(n):
        F.layer_norm(xl, [512], wl, bl).backward(gl)


fig("ln_64x128x512", 5, ln)

xs = torch.randn(256, 1000)


def sm(n):
    for _ in range(n):
        F.softmax(xs, 1)


fig("softmax_fwd_256x1000", 200, sm)
T.report()
