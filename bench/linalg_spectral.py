"""linalg_spectral.py - the PyTorch (argv[2] == "torch") or numpy (argv[2] == "numpy") side
of bench/linalg_spectral.lua (same keys): svd, eigh, qr and eig in float64."""
import os
import sys
import time
import numpy as np
import torch
from timing import Timer

torch.set_num_threads(1)
lib = sys.argv[2] if len(sys.argv) > 2 else "torch"
T = Timer(warmup=2)
big = os.environ.get("BENCH_BIG", "1") != "0"
rng = np.random.default_rng(0)

cases = [("64", (64, 64), 20), ("512", (512, 512), 1), ("256x32", (256, 32, 32), 5)]
if big:
    cases.append(("2048", (2048, 2048), 0))

for key, shape, n in cases:
    a = rng.standard_normal(shape)
    s = a + np.swapaxes(a, -2, -1)
    if lib == "torch":
        a, s = torch.from_numpy(a), torch.from_numpy(s)
        work = {"svd": lambda: torch.linalg.svd(a, full_matrices=False),
                "eigh": lambda: torch.linalg.eigh(s),
                "qr": lambda: torch.linalg.qr(a),
                "eig": lambda: torch.linalg.eig(a)}
    else:
        work = {"svd": lambda: np.linalg.svd(a, full_matrices=False),
                "eigh": lambda: np.linalg.eigh(s),
                "qr": lambda: np.linalg.qr(a),
                "eig": lambda: np.linalg.eig(a)}
    for op in ("svd", "eigh", "qr") if n == 0 else ("svd", "eigh", "qr", "eig"):
        f = work[op]
        if n == 0:
            t0 = time.process_time()
            f()
            T.set(op + "_" + key, time.process_time() - t0)
        else:
            T.bench(op + "_" + key, n, lambda k, f=f: [f() for _ in range(k)])
T.report()
