"""nn_optim.py - the PyTorch side of bench/nn_optim.lua (same keys): one optimizer
step over 10M float32 parameters, default path and foreach=True. CPU time
(process_time), like os.clock on the lutorch side: the machine is shared."""
import sys
import time

import torch

torch.set_num_threads(1)
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def median(t):
    t = sorted(t)
    return t[(len(t) - 1) // 2]


def timeit(n, fn):
    fn(1)
    ts = []
    for _ in range(reps):
        t0 = time.process_time()
        fn(n)
        ts.append((time.process_time() - t0) / n)
    return median(ts)


torch.manual_seed(0)
out = []
for count, size, name in ((10, 1000000, "10x1M"), (100, 100000, "100x100k")):
    ps = []
    for _ in range(count):
        p = torch.randn(size, requires_grad=True)
        p.grad = torch.randn(size)
        ps.append(p)
    for key, cls, kw in (("adamw", torch.optim.AdamW, dict(lr=1e-3)),
                         ("sgd_mom", torch.optim.SGD, dict(lr=1e-3, momentum=0.9))):
        for suffix, fe in (("", None), ("_foreach", True)):
            o = cls(ps, foreach=fe, **kw)

            def run(n, o=o):
                for _ in range(n):
                    o.step()
            out.append(("%s_%s%s" % (key, name, suffix), timeit(5, run)))
            del o
for k, v in out:
    print("%s %.1f" % (k, v * 1e6))
