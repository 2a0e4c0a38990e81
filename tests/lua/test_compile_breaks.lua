-- torch.compile: resuming the capture after a graph break (segments, their cache, liveness,
-- loops, autograd, in-place ops, the debug log).
local T = require "testing"
local nn = require "nn"
local C = require "compile"

-- a cache of our own, so the kernels are compiled here
local S = T.scratch()
C.cache_dir_override = S.dir .. "/cache"

local f64 = { dtype = torch.float64 }

local function max_diff(a, b) return (a - b):abs():max():item() end
-- float64 results with transcendental functions (sigmoid, exp, tanh): within 1e-12 of eager's
-- (the same bits where the generated code and eager's kernels use the same functions, which
-- depends on the build); pure arithmetic is compared exactly
function T.near64(a, b, msg)
  local e = max_diff(a, b) / math.max(b:abs():max():item(), 1e-300)
  T.ok(e <= 1e-12, (msg and msg .. ": " or "") .. "relative error " .. e)
end

-- counters since a snapshot
local function since(snap)
  local d = {}
  for k, v in pairs(C.counters) do d[k] = v - (snap[k] or 0) end
  return d
end
local function snap()
  local s = {}
  for k, v in pairs(C.counters) do s[k] = v end
  return s
end

T.test("a break between two chains: both branches get their own segments, values are eager's", function()
  local fn = function(x)
    local y = torch.sigmoid(x * 2) + 1
    if y:sum():item() > x:numel() * 1.5 then return y * 3 - 1 end
    return y / 2 + x
  end
  local f = torch.compile(fn)
  local s0 = snap()
  local pos, neg = torch.randn(500, f64) + 3, torch.randn(500, f64) - 3
  T.near64(f(pos), fn(pos))
  local d = since(s0)
  T.eq(d.graph_breaks, 1)
  T.eq(d.segments, 2)                        -- the graph before the break, the branch taken
  T.near64(f(neg), fn(neg))       -- the other branch: one more segment
  T.eq(since(s0).segments, 3)
  local s1 = snap()
  for i = 1, 4 do
    local x = torch.randn(500, f64) + (i % 2 == 0 and 3 or -3)
    T.near64(f(x), fn(x), "call " .. i)
  end
  local d1 = since(s1)
  T.eq(d1.segments, 0)                       -- every segment from the cache
  T.eq(d1.kernels_compiled, 0)
  T.eq(d1.graph_breaks, 4)
  T.eq(d1.segment_hits, 8)
  T.eq(d1.segmented_calls, 4)
  local g = f:graphs()
  T.eq(#g, 3)
  T.eq(table.concat(g[1].ops, ","), "mul,sigmoid,add,sum")
  T.eq(g[1].segment, 1)
  T.eq(g[1].kernels, 1)
  local line = debug.getinfo(fn, "S").linedefined + 2       -- the line of the item() call
  T.ok(g[1].ends:find("test_compile_breaks.lua:" .. line .. " (item)", 1, true), g[1].ends)
  T.eq(g[1].keeps, 2)                        -- y and the sum: x * 2 and the sigmoid are dropped
  T.eq(g[2].ends, "return")
  T.eq(table.concat(g[2].ops, ","), "mul,sub")
  T.eq(table.concat(g[3].ops, ","), "div,add")
end)

T.test("float32 within 1e-5 and a different shape: segments of their own", function()
  local fn = function(x)
    local h = torch.tanh(x) * x + 0.5
    local m = h:mean():item()
    return torch.exp(h - m) * 2
  end
  local f = torch.compile(fn)
  for _, n in ipairs({ 1000, 37 }) do
    local x = torch.randn(n)
    local r, e = f(x), fn(x)
    T.ok(max_diff(r, e) / e:abs():max():item() < 1e-5)
  end
  T.eq(#f:graphs(), 4)
end)

T.test("a number read by item() used after the break: one segment for all its values", function()
  local fn = function(x)
    local h = torch.tanh(x) * x + 0.5
    local m = h:mean():item()
    return torch.exp(h - m) * 2 + 1
  end
  local f = torch.compile(fn)
  local s0 = snap()
  for i = 1, 6 do
    local x = torch.randn(300, f64)
    T.near64(f(x), fn(x), "call " .. i)
  end
  T.eq(since(s0).segments, 3)      -- before the break; after it for the first number; for any number
  local g = f:graphs()
  T.eq(g[3].varying, 1)
  T.eq(table.concat(g[3].ops, ","), "sub (varying),exp,mul,add")
  T.eq(g[3].kernels, 1)              -- exp, mul and add still fused
end)

T.test("a break in a loop: while x:norm():item() > 1 do x = x * 0.5 end", function()
  local fn = function(x)
    while x:norm():item() > 1 do x = x * 0.5 end
    return x + 0
  end
  local f = torch.compile(fn)
  local s0 = snap()
  for _, scale in ipairs({ 100, 3, 1000, 0.1 }) do
    local x = torch.randn(64, f64) * scale
    T.eq(max_diff(f(x), fn(x)), 0.0, "scale " .. scale)
  end
  local d = since(s0)
  T.eq(d.segments, 3)             -- norm; mul and norm (each iteration); the return
  T.ok(d.graph_breaks > 10)
end)

T.test("a loop with an in-place update and a value carried across iterations", function()
  local fn = function(x)
    local acc = x * 0
    local steps = 0
    while x:abs():max():item() > 0.5 and steps < 20 do
      acc:add_(x)
      x = x * 0.7
      steps = steps + 1
    end
    return acc, x, steps
  end
  local f = torch.compile(fn)
  for _, scale in ipairs({ 5, 0.1, 50 }) do
    local x = torch.randn(16, f64) * scale
    local a1, x1, n1 = f(x)
    local a2, x2, n2 = fn(x)
    T.eq(n1, n2)
    T.eq(max_diff(a1, a2), 0.0)
    T.eq(max_diff(x1, x2), 0.0)
  end
end)

T.test("in-place ops before and after the break change the arguments as eager does", function()
  local fn = function(x, buf)
    x:add_(1)
    local s = x:sum():item()
    buf:mul_(2)
    x:mul_(s > 0 and 3 or -3)
    return x * buf
  end
  local f = torch.compile(fn)
  for _, shift in ipairs({ 2, -4, 2 }) do
    local a, b = torch.randn(10, f64) + shift, torch.randn(10, f64)
    local a2, b2 = a:clone(), b:clone()
    local r1 = f(a, b)
    local r2 = fn(a2, b2)
    T.eq(max_diff(r1, r2), 0.0)
    T.eq(max_diff(a, a2), 0.0)
    T.eq(max_diff(b, b2), 0.0)
  end
end)

T.test("a view made before the break and changed in place after it changes its base", function()
  local fn = function(x)
    local y = torch.sigmoid(x * 2) + 1
    local z = y:view(-1)
    local s = y:sum():item()
    z:add_(s)
    return y, z
  end
  local f = torch.compile(fn)
  for _ = 1, 2 do
    local x = torch.randn(3, 4, f64)
    local y1, z1 = f(x)
    local y2, z2 = fn(x)
    T.near64(y1, y2)
    T.near64(z1, z2)
  end
end)

T.test("a tensor read from outside (lifted) and changed in place across calls", function()
  local w = torch.randn(8, f64)
  local fn = function(x)
    local y = x * w
    if y:sum():item() > 0 then w:add_(1) end
    return y + w
  end
  local f = torch.compile(fn)
  local w0 = w:clone()
  local xs = {}
  for i = 1, 4 do xs[i] = torch.randn(8, f64) end
  local got = {}
  for i = 1, 4 do got[i] = f(xs[i]) end
  local w1 = w:clone()
  w:copy_(w0)
  for i = 1, 4 do T.eq(max_diff(got[i], fn(xs[i])), 0.0, "call " .. i) end
  T.eq(max_diff(w, w1), 0.0)
end)

T.test("a new tensor read from outside at each call: one more segment, not one per tensor", function()
  local st = {}
  local fn = function(x) local y = x * st.w + 1; local s = y:sum():item(); return y * s end
  local f = torch.compile(fn)
  local s0 = snap()
  for i = 1, 6 do
    st.w = torch.randn(8, f64)
    local x = torch.randn(8, f64)
    T.eq(max_diff(f(x), fn(x)), 0.0, "call " .. i)
  end
  T.eq(since(s0).segments, 4)   -- each side of the break for the first tensor, then for any
  local g = f:graphs()
  T.eq(g[3].varying, 0)
  T.eq(g[4].varying, 1)         -- y * s: s changes at each call
end)

T.test("results: tensors from any segment, nested tables, other values", function()
  local fn = function(x)
    local early = torch.relu(x) * 2
    local n = early:sum():item()
    local late = early - n
    return { a = early, b = { late, x }, c = n }, "done"
  end
  local f = torch.compile(fn)
  for _ = 1, 2 do
    local x = torch.randn(12, f64)
    local r, s = f(x)
    local e = fn(x)
    T.eq(s, "done")
    T.eq(max_diff(r.a, e.a), 0.0)
    T.eq(max_diff(r.b[1], e.b[1]), 0.0)
    T.ok(rawequal(r.b[2], x))              -- an argument returned is the argument
    T.eq(r.c, e.c)
  end
end)

T.test("autograd through segments: eager's gradients, module parameters lifted", function()
  torch.manual_seed(3)
  local lin = nn.Linear(6, 4):to(torch.float64)
  local fn = function(x)
    local h = torch.tanh(lin(x)) * 2 + x:sum(-1, { keepdim = true })
    local loss
    if h:mean():item() > 0 then loss = (h * h + h):sum() else loss = (torch.sigmoid(h) * 3):sum() end
    return loss
  end
  local f = torch.compile(fn)
  for trial = 1, 4 do
    local x = (torch.randn(5, 6, f64) + (trial % 2 == 0 and 1 or -1)):requires_grad_(true)
    lin:zero_grad()
    local l1 = f(x)
    l1:backward()
    local gx, gw, gb = x.grad:clone(), lin.weight.grad:clone(), lin.bias.grad:clone()
    x.grad = nil
    lin:zero_grad()
    local l2 = fn(x)
    l2:backward()
    T.ok(math.abs(l1:item() - l2:item()) <= 1e-12 * math.max(1, math.abs(l2:item())))
    T.ok(max_diff(gx, x.grad) < 1e-12, "x grad " .. trial)
    T.ok(max_diff(gw, lin.weight.grad) < 1e-12, "weight grad " .. trial)
    T.ok(max_diff(gb, lin.bias.grad) < 1e-12, "bias grad " .. trial)
  end
  local p = torch.randn(3, 6, f64):requires_grad_(true)
  T.ok(torch.autograd.gradcheck(f, { p }))
end)

T.test("a training step with its accuracy read under torch.no_grad: eager's gradients", function()
  torch.manual_seed(5)
  local lin = nn.Linear(4, 3):to(torch.float64)
  local target = torch.tensor({ 1, 3, 2, 1, 2 }, { dtype = torch.int64 })
  local fn = function(x)
    local logits = lin(x) * 1.5
    local loss = nn.functional.cross_entropy(logits, target)
    local acc
    torch.no_grad(function()
      acc = logits:argmax(-1):eq(target):double():mean():item()
    end)
    return loss, acc
  end
  local f = torch.compile(fn)
  for trial = 1, 3 do
    local x = torch.randn(5, 4, f64)
    lin:zero_grad()
    local l1, a1 = f(x)
    l1:backward()
    local gw = lin.weight.grad:clone()
    lin:zero_grad()
    local l2, a2 = fn(x)
    l2:backward()
    T.eq(a1, a2)
    T.ok(math.abs(l1:item() - l2:item()) < 1e-12)
    T.ok(max_diff(gw, lin.weight.grad) < 1e-12, "weight grad " .. trial)
  end
end)

T.test("torch.no_grad inside the function without a break: its ops run without grad", function()
  local w = torch.randn(6, f64):requires_grad_(true)
  local fn = function(x)
    local t
    torch.no_grad(function() t = x * w * 2 end)      -- a target: no gradient through it
    return ((x * w - t) ^ 2):sum()
  end
  local f = torch.compile(fn)
  local x = torch.randn(6, f64)
  f(x):backward()
  local g1 = w.grad:clone()
  w.grad = nil
  fn(x):backward()
  T.ok(max_diff(g1, w.grad) < 1e-12)
end)

T.test("a value not kept by the liveness found on the first call is recomputed, then kept", function()
  local hold = false
  local fn = function(x)
    local a = x * 2 + 1
    local b = torch.exp(a) - 1
    local held = hold and a or nil       -- the Lua code keeps a only when hold is set
    a = nil
    local s = b:sum():item()
    if held then return held * s + b end
    return b * s
  end
  local f = torch.compile(fn)
  local x = torch.randn(20, f64)
  T.near64(f(x), fn(x))
  T.eq(f:graphs()[1].keeps, 2)           -- b and its sum: a was not reachable at the break
  hold = true
  local s0 = snap()
  T.near64(f(x), fn(x))       -- a is needed: recomputed from x
  T.eq(since(s0).liveness_misses, 1)
  local s1 = snap()
  T.near64(f(x), fn(x))
  local d = since(s1)
  T.eq(d.liveness_misses, 0)             -- kept now
  T.eq(d.segment_recompiles, 1)
  T.eq(f:graphs()[1].keeps, 3)
end)

T.test("a value not kept whose input changed in place since: an error, and the next call keeps it", function()
  local hold = false
  local fn = function(x)
    local a = x * 2
    local b = a + 1
    local held = hold and a or nil
    a = nil
    if b:sum():item() > 1e9 then return b end
    x:add_(1)
    if x:sum():item() > 1e9 then return b end      -- the segment that changes x has run
    if held then return held + b end
    return b
  end
  local f = torch.compile(fn)
  T.eq(max_diff(f(torch.ones(4, f64)), fn(torch.ones(4, f64))), 0.0)
  hold = true
  T.raises(function() f(torch.ones(4, f64)) end, "not kept", "changed in place", "test_compile_breaks.lua")
  local x1, x2 = torch.ones(4, f64), torch.ones(4, f64)
  T.eq(max_diff(f(x1), fn(x2)), 0.0)
  T.eq(max_diff(x1, x2), 0.0)
end)

T.test("other breaks: an element, tolist, printing, torch.equal, nonzero's data-dependent shape", function()
  local fn = function(x)
    local y = x * 3
    local list = y:tolist()
    local text = tostring(y)
    local same = torch.equal(y, x * 3)
    local idx = torch.nonzero(y:gt(0))
    return y[1] + #list, text, same, idx:sum() + 1
  end
  local f = torch.compile(fn)
  for _ = 1, 2 do
    local x = torch.randn(6, f64)
    local a1, t1, s1, i1 = f(x)
    local a2, t2, s2, i2 = fn(x)
    T.eq(a1, a2)                         -- y[1]: a number read from the data
    T.eq(t1, t2)
    T.eq(s1, s2)
    T.eq(i1:item(), i2:item())
  end
end)

T.test("fullgraph = true: a break is an error naming the line; printing too", function()
  local fn = function(x)
    local y = x * 2
    if y:sum():item() > 0 then return y end
    return -y
  end
  local g = torch.compile(fn, { fullgraph = true })
  local err = T.raises(function() g(torch.randn(4)) end, "torch.compile: graph break at", "(fullgraph = true)", "item()")
  T.ok(err:find("test_compile_breaks.lua:", 1, true), err)
  local p = torch.compile(function(x) local y = x + 1; local s = tostring(y); return y end, { fullgraph = true })
  T.raises(function() p(torch.randn(4)) end, "graph break", "printing")
end)

T.test("an error after a break is the function's own error", function()
  local fn = function(x)
    local y = x * 2
    if y:sum():item() > -1e9 then return y + torch.ones(3) end
    return y
  end
  local f = torch.compile(fn)
  local _, e1 = pcall(fn, torch.ones(4))
  T.raises(function() f(torch.ones(4)) end, (e1:gsub("^.-:%d+: ", "")))
end)

T.test("segment_limit: past it, segments run op by op with the same values", function()
  local old = C.config.segment_limit
  C.config.segment_limit = 1
  local fn = function(x)
    local y = x * 2 + 1
    local s = y:sum():item()
    return (y - s) * 0.5
  end
  local f = torch.compile(fn)
  local s0 = snap()
  for _ = 1, 3 do
    local x = torch.randn(30, f64)
    T.eq(max_diff(f(x), fn(x)), 0.0)
  end
  T.eq(since(s0).segments, 1)
  C.config.segment_limit = old
end)

T.test("backend = eager: segments keep every value, the same results", function()
  local fn = function(x)
    local y = x:cos() * 2
    if y:max():item() > 1.5 then return y + 1 end
    return y - 1
  end
  local f = torch.compile(fn, { backend = "eager" })
  local x = torch.randn(50, f64)
  T.eq(max_diff(f(x), fn(x)), 0.0)
  T.eq(f:graphs()[1].keeps, 3)
end)

T.test("torch.compiler.reset forgets the segments", function()
  local f = torch.compile(function(x) local y = x + 1; return y * y:sum():item() end)
  f(torch.ones(3))
  T.ok(#f:graphs() > 0)
  torch.compiler.reset()
  T.eq(#f:graphs(), 0)
  local s0 = snap()
  T.eq(f(torch.ones(3)):sum():item(), 36.0)
  T.eq(since(s0).segments, 2)
end)

T.test("LUTORCH_COMPILE_DEBUG=1 logs each break with its line and each segment compiled", function()
  local prog = arg and arg[-1] or "build/lutorch"
  local script = S.write("dbg.lua", table.concat({
    'local C = require "compile"',
    'C.cache_dir_override = ' .. ("%q"):format(S.dir .. "/cache"),
    'local f = torch.compile(function(x)',
    '  local y = x * 2 + 1',
    '  if y:sum():item() > 0 then return y * 3 end',
    '  return y',
    'end)',
    'f(torch.ones(8)); f(torch.ones(8))',
  }, "\n"))
  local p = io.popen("LUTORCH_COMPILE_DEBUG=1 " .. prog .. " " .. script .. " 2>&1")
  local out = p:read("a")
  p:close()
  local _, breaks = out:gsub("graph break at [^\n]*dbg%.lua:5: item%(%)", "")
  T.eq(breaks, 2, out)
  T.ok(out:find("segment 1 compiled, up to the break at [^\n]*dbg%.lua:5 %(item%): 3 ops"), out)
  T.ok(out:find("segment 2 compiled, up to the return: 1 ops"), out)
  T.ok(not out:find("segment 3 compiled"), out)
end)

S.remove()
T.done()
