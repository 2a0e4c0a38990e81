-- nn_misc.lua — linear, activations, embedding and attention, forward and forward+backward,
-- against bench/nn_misc.py (run both with bench/nn.sh misc). Prints "key microseconds".
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new()   -- reps from arg[1]; os.clock: pinned to one thread, CPU time

torch.manual_seed(0)
local function bench(key, n, fn) T:bench(key, n, fn) end

-- linear: N=64, 784 -> 256
local x = torch.randn(64, 784, { requires_grad = true })
local w = torch.randn(256, 784, { requires_grad = true })
local b = torch.randn(256, { requires_grad = true })
local gl = torch.randn(64, 256)
bench("linear_fwd", 200, function(n) torch.no_grad(function() for _ = 1, n do local y = torch.linear(x, w, b) end end) end)
bench("linear_fwd_bwd", 100, function(n)
  for _ = 1, n do
    x.grad = nil; w.grad = nil; b.grad = nil
    torch.linear(x, w, b):backward(gl)
  end
end)

-- activations on 1M floats
local a = torch.randn(1048576, { requires_grad = true })
local ga = torch.randn(1048576)
for _, name in ipairs({ "gelu", "silu", "mish", "hardswish" }) do
  local f = torch[name]
  bench(name .. "_fwd", 20, function(n) torch.no_grad(function() for _ = 1, n do local y = f(a) end end) end)
  bench(name .. "_fwd_bwd", 10, function(n)
    for _ = 1, n do a.grad = nil; f(a):backward(ga) end
  end)
end

-- embedding: 50k x 256 table, 4096 indices
local tbl = torch.randn(50000, 256, { requires_grad = true })
local idx = torch.randint(1, 50001, { 4096 })
local ge = torch.randn(4096, 256)
bench("embedding_fwd", 200, function(n) torch.no_grad(function() for _ = 1, n do local y = torch.embedding(tbl, idx) end end) end)
bench("embedding_fwd_bwd", 10, function(n)
  for _ = 1, n do tbl.grad = nil; torch.embedding(tbl, idx):backward(ge) end
end)

-- attention: B=8, H=8, L=128, D=64
local q = torch.randn(8, 8, 128, 64, { requires_grad = true })
local k = torch.randn(8, 8, 128, 64, { requires_grad = true })
local v = torch.randn(8, 8, 128, 64, { requires_grad = true })
local gs = torch.randn(8, 8, 128, 64)
local sdpa = torch.scaled_dot_product_attention
bench("sdpa_fwd", 10, function(n) torch.no_grad(function() for _ = 1, n do local y = sdpa(q, k, v) end end) end)
bench("sdpa_fwd_bwd", 5, function(n)
  for _ = 1, n do q.grad = nil; k.grad = nil; v.grad = nil; sdpa(q, k, v):backward(gs) end
end)
bench("sdpa_causal_fwd_bwd", 5, function(n)
  for _ = 1, n do q.grad = nil; k.grad = nil; v.grad = nil; sdpa(q, k, v, { is_causal = true }):backward(gs) end
end)

-- dropout on 1M floats
bench("dropout_fwd_bwd", 10, function(n)
  for _ = 1, n do a.grad = nil; torch.dropout(a, 0.5, true):backward(ga) end
end)

T:report()
