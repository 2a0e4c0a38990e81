"""linalg.py - the PyTorch (LIB=torch, default) or numpy (LIB=numpy) side of
bench/linalg.lua (same keys): linalg.solve and inv, float64 and (keys c...) complex128."""
import os
import numpy as np
import torch
from timing import Timer

torch.set_num_threads(1)
lib = os.environ.get("LIB", "torch")
T = Timer(warmup=1000, reps=int(os.sys.argv[1]) if len(os.sys.argv) > 1 else 3)
torch.manual_seed(0)

f64, c128 = torch.float64, torch.complex128
for b, n, reps, dt, pre in ((None, 64, 200, f64, ""), (None, 512, 5, f64, ""), (None, 2048, 1, f64, ""),
                            (256, 32, 20, f64, ""), (None, 64, 100, c128, "c"), (None, 512, 2, c128, "c"),
                            (256, 32, 10, c128, "c")):
    s = (b, n, n) if b else (n, n)
    A = torch.randn(*s, dtype=dt) + torch.eye(n, dtype=dt) * n
    B = torch.randn(*((b, n, 1) if b else (n, 1)), dtype=dt)
    tag = "%dx%dx%d" % (b, n, n) if b else "%dx%d" % (n, n)
    if lib == "numpy":
        A, B = A.numpy(), B.numpy()
        solve, inv = np.linalg.solve, np.linalg.inv
    else:
        solve, inv = torch.linalg.solve, torch.linalg.inv

    def s_(k, A=A, B=B, solve=solve):
        for _ in range(k):
            solve(A, B)

    def i_(k, A=A, inv=inv):
        for _ in range(k):
            inv(A)

    T.bench(pre + "solve_" + tag, reps, s_)
    T.bench(pre + "inv_" + tag, reps, i_)
T.report()
