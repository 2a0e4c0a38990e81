"""nn_optim.py - the PyTorch side of bench/nn_optim.lua (same keys): one optimizer
step over 10M float32 parameters, default path and foreach=True. CPU time
(process_time), like os.clock on the lutorch side: the machine is shared."""
import torch
from timing import Timer

torch.set_num_threads(1)
T = Timer(warmup=lambda n: 1, fmt="%.1f")  # reps from argv[1]; warm up with fn(1); process_time
torch.manual_seed(0)
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
            T.bench("%s_%s%s" % (key, name, suffix), 5, run)
            del o
T.report()
