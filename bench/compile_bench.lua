-- compile_bench.lua — torch.compile against eager lutorch (bench/compile.sh runs it beside
-- bench/compile_bench.py, PyTorch 1.13 eager); prints "key microseconds" for each figure:
--   chain_*       x * sigmoid(x) * y + z on 16M float32 (4 ops; eager reads and writes 16M
--                 floats per op, the fused kernel once)
--   lngelu_*      x + gelu(layer_norm(x)) on 4096 x 1024 float32, no_grad
--   softmax_*     softmax(s * 0.125 + mask, -1) on 4096 x 1024 float32 (attention's scores with
--                 a broadcast mask), no_grad
--   mlp_train_*   forward + backward of a GELU MLP block with residual (x + W2 gelu(W1 x + b1)),
--                 8192 x 256 -> 1024 -> 256, float32
--   lngelu_train_*, softmax_train_*  the same two under training: forward + backward with the
--                 input requiring grad (the row kernels' generated backward)
--   rowmse_*      ((x - y) * (x - y)):mean(-1) on 4096 x 1024 float32, no_grad (a run fused
--                 into a mean over rows: its values never stored)
--   gpt_train_*   one training step (forward, backward, AdamW) of a nanoGPT-style model
--                 (bench/gpt_model.lua: 4 layers, n_embd 256, 4 heads, block 128, vocab 512,
--                 batch 8), float32
--   break_*       a graph break between two pointwise chains on 4M float32: chain (4 ops),
--                 h:sum():item() and a branch on it, chain (3 ops); compiled: two segments, each
--                 one kernel, the Lua function traced again on meta tensors at each call
--   bcast_*       x * sigmoid(x + b) * y + c on 2048 x 2048 float32, b a row and c a column
--                 broadcast, no_grad (the kernel goes by rows: no division per element)
--   transp_*      tanh(a) * y + 1 with a transposed, 2048 x 2048 float32, no_grad (a read from a
--                 contiguous copy; the output copied into eager's transposed layout)
--   inplace_*     h = x * 2; h:add_(y); h:relu_(); h:mul_(z) on 16M float32: an in-place chain on
--                 a value the function made (functionalized: one kernel, eager 4 passes)
--   inplace_arg_* x:add_(y); x:relu_(); x:mul_(z) on a 16M float32 argument, changed in place
--                 (compiled: one kernel into a temporary, then one copy into x)
--   first_compile a new graph's first call (trace + cc), cached_start its first call in a
--                 fresh process state with the kernel in the disk cache
-- BENCH_ONLY=key,key (figure names, as inplace,chain) times those figures only.
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local T = require("timing").new { warmup = 2, fmt = "%.1f", clock = torch.time }
local nn = require "nn"
local F = nn.functional
local C = require "compile"
local median = require("timing").median

-- key_eager and key_compiled: fe(n) and fc(n) timed in turn, 8 times each (other work on the
-- machine then weighs on both alike), which goes first swapped each time (the one after the
-- other pays for freeing the other's tensors), the median time per call of each
local only = os.getenv("BENCH_ONLY")
local function pair(key, n, fe, fc)
  if only and only ~= "" and not ("," .. only .. ","):find("," .. key .. ",", 1, true) then return end
  fe(1); fc(1)
  local te, tc = {}, {}
  local function time(f, into) local t0 = torch.time(); f(n); into[#into + 1] = (torch.time() - t0) / n end
  for i = 1, 8 do
    if i % 2 == 1 then time(fe, te); time(fc, tc) else time(fc, tc); time(fe, te) end
  end
  T:set(key .. "_eager", median(te))
  T:set(key .. "_compiled", median(tc))
end
torch.manual_seed(0)

local N = 16 * 1024 * 1024
local a, b, c = torch.randn(N), torch.randn(N), torch.randn(N)
local chain = function(x, y, z) return x * torch.sigmoid(x) * y + z end
local chain_c = torch.compile(chain)
pair("chain", 3, function(n) for _ = 1, n do chain(a, b, c) end end,

  function(n) for _ = 1, n do chain_c(a, b, c) end end)

local inplace = function(x, y, z)
  local h = x * 2
  h:add_(y)
  h:relu_()
  h:mul_(z)
  return h
end
local inplace_c = torch.compile(inplace)
pair("inplace", 3, function(n) for _ = 1, n do inplace(a, b, c) end end,
  function(n) for _ = 1, n do inplace_c(a, b, c) end end)
local inplace_arg = function(x, y, z) x:add_(y); x:relu_(); x:mul_(z); return x end
local inplace_arg_c = torch.compile(inplace_arg)
local xa, xc = torch.randn(N), torch.randn(N)
pair("inplace_arg", 3, function(n) for _ = 1, n do inplace_arg(xa, b, c) end end,
  function(n) for _ = 1, n do inplace_arg_c(xc, b, c) end end)

-- inputs broadcast along rows and columns, and a transposed input (the kernels go by rows;
-- the transposed one is read from a contiguous copy), 2048 x 2048, no_grad
local xb, yb = torch.randn(2048, 2048), torch.randn(2048, 2048)
local bb, cb, at = torch.randn(2048), torch.randn(2048, 1), torch.randn(2048, 2048):t()
local bcast = function(x, y, b2, c2) return x * torch.sigmoid(x + b2) * y + c2 end
local bcast_c = torch.compile(bcast)
local transp = function(a2, y) return torch.tanh(a2) * y + 1 end
local transp_c = torch.compile(transp)
torch.no_grad(function()
  pair("bcast", 5, function(n) for _ = 1, n do bcast(xb, yb, bb, cb) end end,
    function(n) for _ = 1, n do bcast_c(xb, yb, bb, cb) end end)
  pair("transp", 5, function(n) for _ = 1, n do transp(at, yb) end end,
    function(n) for _ = 1, n do transp_c(at, yb) end end)
end)

local ln = nn.LayerNorm(1024)
local xl = torch.randn(4096, 1024)
local lngelu = function(x) return x + F.gelu(ln(x)) end
local lngelu_c = torch.compile(lngelu)
torch.no_grad(function()
  pair("lngelu", 5, function(n) for _ = 1, n do lngelu(xl) end end,

    function(n) for _ = 1, n do lngelu_c(xl) end end)
end)

local mask = torch.randn(1024)
local attn = function(s) return F.softmax(s * 0.125 + mask, -1) end
local attn_c = torch.compile(attn)
torch.no_grad(function()
  pair("softmax", 5, function(n) for _ = 1, n do attn(xl) end end,

    function(n) for _ = 1, n do attn_c(xl) end end)
end)

local xg, gyl = xl:clone():requires_grad_(true), torch.randn(4096, 1024)
pair("lngelu_train", 3, function(n) for _ = 1, n do lngelu(xg):backward(gyl) end end,

  function(n) for _ = 1, n do lngelu_c(xg):backward(gyl) end end)
pair("softmax_train", 3, function(n) for _ = 1, n do attn(xg):backward(gyl) end end,
  function(n) for _ = 1, n do attn_c(xg):backward(gyl) end end)

local yl = torch.randn(4096, 1024)
local rowmse = function(x, y) return ((x - y) * (x - y)):mean(-1) end
local rowmse_c = torch.compile(rowmse)
torch.no_grad(function()
  pair("rowmse", 5, function(n) for _ = 1, n do rowmse(xl, yl) end end,

    function(n) for _ = 1, n do rowmse_c(xl, yl) end end)
end)

local fc1, fc2 = nn.Linear(256, 1024), nn.Linear(1024, 256)
local block = function(x) return x + fc2(F.gelu(fc1(x))) end
local block_c = torch.compile(block)
local xm = torch.randn(8192, 256)
local function train(f) return function(n)
  for _ = 1, n do
    local y = f(xm)
    y:square():mean():backward()
  end
end end
pair("mlp_train", 3, train(block),

  train(block_c))

local GPT = require "gpt_model"
local optim = require "optim"
local cfg = { n_layer = 4, n_head = 4, n_embd = 256, block_size = 128, vocab_size = 512 }
local gpt = GPT(cfg)
local gpt_c = torch.compile(gpt)
local idx, tgt = torch.randint(1, 513, { 8, 128 }), torch.randint(1, 513, { 8, 128 })
local adamw = optim.AdamW(gpt:parameters(), { lr = 1e-4 })
local function gpt_step(m) return function(n)
  for _ = 1, n do
    adamw:zero_grad()
    m(idx, tgt):backward()
    adamw:step()
  end
end end
pair("gpt_train", 1, gpt_step(gpt), gpt_step(gpt_c))

local xb = torch.randn(4 * 1024 * 1024)
local brk = function(x)
  local h = torch.sigmoid(x * 1.5) * x + 0.25
  if h:sum():item() > 0 then return torch.tanh(h) * 2 - h end
  return torch.tanh(h) * 0.5 + h
end
local brk_c = torch.compile(brk)
pair("break", 5, function(n) for _ = 1, n do brk(xb) end end, function(n) for _ = 1, n do brk_c(xb) end end)

-- compile times: a graph never seen (a fresh constant in its source), then the same graph
-- after torch.compiler.reset() (the kernel comes from the disk cache)
local k = os.time() + math.random(1, 1e6)
local fresh = function(x) return (x * k + 1):tanh() * 2 end
local small = torch.randn(1000)
if only and only ~= "" then T:report() return end
local t0 = torch.time(); torch.compile(fresh)(small); local first = torch.time() - t0
torch.compiler.reset()
t0 = torch.time(); torch.compile(fresh)(small); local cached = torch.time() - t0
print(("first_compile %.1f"):format(first * 1e6))
print(("cached_start %.1f"):format(cached * 1e6))
T:report()
