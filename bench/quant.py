"""quant.py - the PyTorch 1.13 side of bench/quant.lua (same keys, prefixed pt_): a float32
nn.Linear 4096x4096 and its dynamic int8 version (torch.ao.quantization.quantize_dynamic,
fbgemm, or onednn where the build lacks fbgemm) at batch 1, 8 and 64, hot (one layer) and at batch 1 cold (copies cycled,
at least 96 MB of weights); then the sizes of their saved state dicts."""
import io
import sys
import torch
import torch.nn as nn
from timing import Timer

torch.set_num_threads(1)
# fbgemm where this build has it (Debian's 1.13 does not: it has onednn and qnnpack)
ENGINE = next(e for e in ("fbgemm", "x86", "onednn", "qnnpack") if e in torch.backends.quantized.supported_engines)
torch.backends.quantized.engine = ENGINE
print("engine_" + ENGINE + " 0")
T = Timer(warmup=4, reps=int(sys.argv[1]) if len(sys.argv) > 1 else 5)
torch.manual_seed(0)
N = 4096
COPIES = {"f32": 2, "dyn8": 6}


def layer(kind):
    m = nn.Sequential(nn.Linear(N, N)).eval()
    if kind == "dyn8":
        m = torch.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    return m


cold = {k: [layer(k) for _ in range(c)] for k, c in COPIES.items()}
models = {k: v[0] for k, v in cold.items()}

with torch.inference_mode():
    for b in (1, 8, 64):
        x = torch.randn(b, N)
        n = 24 if b == 1 else 10 if b == 8 else 4
        for k in ("f32", "dyn8"):
            def run(r, m=models[k], x=x):
                for _ in range(r):
                    m(x)
            T.bench("pt_%s_b%d" % (k, b), n, run)
        if b == 1:
            for k in ("f32", "dyn8"):
                def run_cold(r, ms=cold[k], x=x):
                    for i in range(r):
                        ms[i % len(ms)](x)
                T.bench("pt_%s_b1_cold" % k, n, run_cold)
T.report()
for k, m in models.items():
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    print("size_pt_%s_file %d" % (k, buf.getbuffer().nbytes))
