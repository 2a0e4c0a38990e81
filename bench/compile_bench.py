# compile_bench.py — the eager PyTorch 1.13 side of bench/compile.sh (Debian's PyTorch 1.13 has no
# torch.compile): the same figures as bench/compile_bench.lua's *_eager, printed "key microseconds"
import time, torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
import os
only = [k for k in os.environ.get("BENCH_ONLY", "").split(",") if k]
def bench(key, n, fn, reps=5):
    if only and key[:-len("_eager")] not in only: return
    fn(1)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); fn(n); ts.append((time.perf_counter() - t0) / n)
    ts.sort(); print("%s %.1f" % (key, ts[(len(ts) - 1) // 2] * 1e6))
N = 16 * 1024 * 1024
a, b, c = torch.randn(N), torch.randn(N), torch.randn(N)
bench("chain_eager", 3, lambda n: [a * torch.sigmoid(a) * b + c for _ in range(n)])
def inplace(x, y, z):
    h = x * 2; h.add_(y); h.relu_(); h.mul_(z); return h
bench("inplace_eager", 3, lambda n: [inplace(a, b, c) for _ in range(n)])
xa = torch.randn(N)
def inplace_arg(x, y, z):
    x.add_(y); x.relu_(); x.mul_(z); return x
bench("inplace_arg_eager", 3, lambda n: [inplace_arg(xa, b, c) for _ in range(n)])
xb, yb = torch.randn(2048, 2048), torch.randn(2048, 2048)
bb, cb, at = torch.randn(2048), torch.randn(2048, 1), torch.randn(2048, 2048).t()
with torch.no_grad():
    bench("bcast_eager", 5, lambda n: [xb * torch.sigmoid(xb + bb) * yb + cb for _ in range(n)])
    bench("transp_eager", 5, lambda n: [torch.tanh(at) * yb + 1 for _ in range(n)])
ln = nn.LayerNorm(1024); xl = torch.randn(4096, 1024)
with torch.no_grad():
    bench("lngelu_eager", 5, lambda n: [xl + F.gelu(ln(xl)) for _ in range(n)])
    mask = torch.randn(1024)
    bench("softmax_eager", 5, lambda n: [F.softmax(xl * 0.125 + mask, -1) for _ in range(n)])
xg, gyl = xl.clone().requires_grad_(True), torch.randn(4096, 1024)
bench("lngelu_train_eager", 3, lambda n: [(xg + F.gelu(ln(xg))).backward(gyl) for _ in range(n)])
bench("softmax_train_eager", 3, lambda n: [F.softmax(xg * 0.125 + mask, -1).backward(gyl) for _ in range(n)])
yl = torch.randn(4096, 1024)
with torch.no_grad():
    bench("rowmse_eager", 5, lambda n: [((xl - yl) * (xl - yl)).mean(-1) for _ in range(n)])
fc1, fc2 = nn.Linear(256, 1024), nn.Linear(1024, 256); xm = torch.randn(8192, 256)
def train(n):
    for _ in range(n):
        y = xm + fc2(F.gelu(fc1(xm))); y.square().mean().backward()
bench("mlp_train_eager", 3, train)

# the nanoGPT-style model of bench/gpt_model.lua (Karpathy's model.py without dropout, an
# additive causal mask): 4 layers, n_embd 256, 4 heads, block 128, vocab 512, batch 8
class Attention(nn.Module):
    def __init__(s, C, H, T):
        super().__init__()
        s.c_attn, s.c_proj, s.H = nn.Linear(C, 3 * C), nn.Linear(C, C), H
        s.register_buffer("mask", torch.full((T, T), float("-inf")).triu(1))
    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.c_attn(x).split(C, 2)
        q, k, v = [t.reshape(B, T, s.H, C // s.H).transpose(1, 2) for t in (q, k, v)]
        att = F.softmax(q @ k.transpose(-2, -1) * (1.0 / (C // s.H) ** 0.5) + s.mask[:T, :T], -1)
        return s.c_proj((att @ v).transpose(1, 2).reshape(B, T, C))
class Block(nn.Module):
    def __init__(s, C, H, T):
        super().__init__()
        s.ln_1, s.attn, s.ln_2 = nn.LayerNorm(C), Attention(C, H, T), nn.LayerNorm(C)
        s.c_fc, s.c_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
    def forward(s, x):
        x = x + s.attn(s.ln_1(x))
        return x + s.c_proj(F.gelu(s.c_fc(s.ln_2(x))))
class GPT(nn.Module):
    def __init__(s, L=4, H=4, C=256, T=128, V=512):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        s.h = nn.ModuleList([Block(C, H, T) for _ in range(L)])
        s.ln_f, s.lm_head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)
    def forward(s, idx, targets):
        x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1]))
        for b in s.h: x = b(x)
        logits = s.lm_head(s.ln_f(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
gpt = GPT()
idx, tgt = torch.randint(0, 512, (8, 128)), torch.randint(0, 512, (8, 128))
adamw = torch.optim.AdamW(gpt.parameters(), lr=1e-4)
def gpt_step(n):
    for _ in range(n):
        adamw.zero_grad(); gpt(idx, tgt).backward(); adamw.step()
bench("gpt_train_eager", 3, gpt_step)
xb = torch.randn(4 * 1024 * 1024)
def brk(x):
    h = torch.sigmoid(x * 1.5) * x + 0.25
    if h.sum().item() > 0: return torch.tanh(h) * 2 - h
    return torch.tanh(h) * 0.5 + h
bench("break_eager", 5, lambda n: [brk(xb) for _ in range(n)])
