-- compile_dynamic.lua — torch.compile's dynamic shapes (bench/compile_dynamic.sh runs it, one
-- process per mode so that each starts with an empty kernel cache). Usage:
--   lutorch bench/compile_dynamic.lua sizes MODE WORKLOAD    -- MODE: eager, false, auto, true
--   lutorch bench/compile_dynamic.lua steady WORKLOAD
-- "sizes": WORKLOAD called with 20 new batch sizes in turn (each call the first of its size),
-- then the same 20 again; prints "new_ms X", the 20 first calls' total milliseconds, "again_ms
-- Y", the second pass's, and "kernels_compiled N".
-- "steady": the time per call at one large shape (4096 x 1024 elements for the row workloads,
-- a sequence of 256 for softmax) of the kernels made three ways: specialized
-- (dynamic = false), automatic dynamic (traced at another batch size first: only the batch
-- dim a parameter) and dynamic = true (every size a parameter); prints "KEY microseconds".
-- Workloads (float32; s is the size that changes, 20 values, none of them 1: a size of 1 changes
-- which dims broadcast, its own kernels, as PyTorch's 0/1 specialization does):
--   lngelu   x + gelu(layer_norm(x)), (16 s) x 1024, no_grad (a row kernel: the rows are not in
--            its source, so a specialized graph pays a trace per size but no C compile)
--   chain    x * sigmoid(x + b) * y + c, (16 s) x 1024, b a broadcast row, c a broadcast column
--   rowmse   ((x - y) * (x - y)):mean(-1), (16 s) x 1024, no_grad (a run fused into a mean:
--            the specialized kernel has the row count in its source)
--   softmax  softmax(q * 0.125 + mask[:s, :s], -1) on (8, 4, s, s) scores: a sequence length s
--   gpt      one training step (forward, backward) of bench/gpt_model.lua's model (2 layers,
--            n_embd 128, 4 heads, block 64, vocab 256) on (4, s) tokens: a sequence length s
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local nn = require "nn"
local F = nn.functional
local C = require "compile"
local median = require("timing").median

torch.manual_seed(0)
local what = arg[1]

local ROWS = { 7, 3, 12, 5, 20, 9, 14, 2, 17, 11, 6, 19, 4, 15, 10, 21, 8, 13, 16, 18 }
local SEQ = { 40, 17, 64, 23, 9, 51, 33, 12, 60, 28, 45, 5, 37, 19, 56, 30, 14, 48, 25, 62 }

-- fn, make(s) -> arguments, the sizes, no_grad?, step (wraps a training step), model
local function workload(name)
  if name == "lngelu" then
    local ln = nn.LayerNorm(1024)
    local fn = function(x) return x + F.gelu(ln(x)) end
    return fn, function(s) return { torch.randn(s * 16, 1024) } end, ROWS, true
  elseif name == "chain" then
    local b = torch.randn(1024)
    local fn = function(x, y, c) return x * torch.sigmoid(x + b) * y + c end
    return fn, function(s) return { torch.randn(s * 16, 1024), torch.randn(s * 16, 1024), torch.randn(s * 16, 1) } end,
      ROWS, true
  elseif name == "rowmse" then
    local fn = function(x, y) return ((x - y) * (x - y)):mean(-1) end
    return fn, function(s) return { torch.randn(s * 16, 1024), torch.randn(s * 16, 1024) } end, ROWS, true
  elseif name == "softmax" then
    local mask = torch.zeros(256, 256)
    for i = 1, 256 do for j = i + 1, 256 do mask[i][j] = -math.huge end end
    local fn = function(q)
      local L = q.shape[3]
      return F.softmax(q * 0.125 + mask:narrow(1, 1, L):narrow(2, 1, L), -1)
    end
    return fn, function(s) return { torch.randn(8, 4, s, s) } end, SEQ, true
  elseif name == "gpt" then
    local GPT = dofile((arg[0]:match("^(.*/)") or "./") .. "gpt_model.lua")
    local model = GPT({ vocab_size = 256, block_size = 64, n_layer = 2, n_head = 4, n_embd = 128 })
    local fn = function(idx, tgt) return model(idx, tgt) end
    local step = function(f)
      return function(idx, tgt)
        model:zero_grad()
        local loss = f(idx, tgt)
        loss:backward()
        return loss
      end
    end
    return fn, function(s)
      return { torch.randint(1, 257, { 4, s }, { dtype = torch.int64 }), torch.randint(1, 257, { 4, s }, { dtype = torch.int64 }) }
    end, SEQ, false, step, model
  end
  error("unknown workload " .. tostring(name))
end

local function call_all(f, make, sizes, nograd)
  local inputs = {}
  for i, s in ipairs(sizes) do inputs[i] = make(s) end
  local t0 = torch.time()
  for i in ipairs(sizes) do
    local a = inputs[i]
    if nograd then torch.no_grad(function() f(table.unpack(a)) end) else f(table.unpack(a)) end
  end
  return (torch.time() - t0) * 1e3
end

if what == "sizes" then
  local mode, name = arg[2], arg[3]
  local fn, make, sizes, nograd, step, model = workload(name)
  local f = fn
  if mode ~= "eager" then
    local dyn = ({ ["false"] = false, auto = nil, ["true"] = true })[mode]
    f = torch.compile(model or fn, { dynamic = dyn })
  end
  if step then f = step(f) end
  print(("new_ms %.1f"):format(call_all(f, make, sizes, nograd)))
  print(("again_ms %.1f"):format(call_all(f, make, sizes, nograd)))
  print(("kernels_compiled %d"):format(C.counters.kernels_compiled))
  print(("traces %d"):format(C.counters.traces))
elseif what == "steady" then
  local name = arg[2]
  local fn, make, sizes, nograd = workload(name)
  -- one large shape (4096 x 1024 rows; a sequence of 256), and another for the automatic one
  local big = sizes == ROWS and 256 or 256
  local args, other = make(big), make(sizes == ROWS and 200 or 200)
  local fs = torch.compile(fn, { dynamic = false })
  local fa = torch.compile(fn)
  local fd = torch.compile(fn, { dynamic = true })
  local function run(f, n)
    if nograd then torch.no_grad(function() for _ = 1, n do f(table.unpack(args)) end end)
    else for _ = 1, n do f(table.unpack(args)) end end
  end
  -- automatic: traced at another batch size first, so that the entry at B is the dynamic one
  torch.no_grad(function() fa(table.unpack(other)) end)
  local fns = { eager = fn, specialized = fs, auto = fa, dynamic = fd }
  local keys = { "eager", "specialized", "auto", "dynamic" }
  for _, k in ipairs(keys) do run(fns[k], 2) end
  local t = { eager = {}, specialized = {}, auto = {}, dynamic = {} }
  for r = 1, 9 do
    for i = 1, #keys do
      local k = keys[(i + r - 2) % #keys + 1]       -- which goes first rotates
      local t0 = torch.time()
      run(fns[k], 3)
      t[k][#t[k] + 1] = (torch.time() - t0) / 3
    end
  end
  for _, k in ipairs(keys) do print(("%s_%s %.1f"):format(name, k, median(t[k]) * 1e6)) end
else
  error("usage: compile_dynamic.lua sizes MODE WORKLOAD | steady WORKLOAD")
end
