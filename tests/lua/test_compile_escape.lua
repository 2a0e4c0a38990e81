-- torch.compile: tensors that escape the trace (stored into Lua tables: an optimizer's state,
-- a module's self.output, a cache), a .grad read at each call, guards on the Lua state a graph
-- depends on (upvalues, modules' modes and attributes), compiled optimizer steps, and
-- torch.compiler.disable / is_compiling.
local T = require "testing"
local nn = require "nn"
local optim = require "optim"
local C = require "compile"

local S = T.scratch()
C.cache_dir_override = S.dir .. "/cache"

local function max_diff(a, b) return (a - b):abs():max():item() end

T.test("a tensor stored into a table follows each call, as in eager", function()
  local cache = {}
  local fn = function(x)
    local y = torch.sigmoid(x) * 2
    cache.last = y + 1                 -- escapes
    return y * 3
  end
  local f = torch.compile(fn)
  local before = C.counters.escapes
  for i = 1, 4 do
    local x = torch.randn(50) * i
    local r = f(x)
    T.eq(cache.last.device.type, "cpu")
    T.ok(max_diff(cache.last, torch.sigmoid(x) * 2 + 1) < 1e-6, "cache.last at call " .. i)
    T.ok(max_diff(r, torch.sigmoid(x) * 6) < 1e-5, "result at call " .. i)
  end
  T.eq(C.counters.escapes, before + 1)    -- found once, at the first capture
end)

T.test("a result also stored away (a Torch7 module's self.output) is the returned tensor", function()
  local M = {}
  local fn = function(x) M.output = torch.tanh(x) * 2 + x; return M.output end
  local f = torch.compile(fn)
  for i = 1, 3 do
    local x = torch.randn(20, { dtype = torch.float64 })
    local r = f(x)
    T.ok(max_diff(r, torch.tanh(x) * 2 + x) < 1e-12)
    T.ok(max_diff(M.output, r) == 0, "self.output at call " .. i)
    r:add_(1)                          -- one tensor under two names, as in eager
    T.ok(max_diff(M.output, r) == 0)
  end
end)

T.test("an escaped tensor that requires grad carries its autograd history", function()
  local lin = nn.Linear(5, 3):to(torch.float64)
  local keep = {}
  local fn = function(x) keep.h = torch.tanh(lin(x)); return (keep.h * keep.h):sum() end
  local f = torch.compile(fn)
  for _ = 1, 3 do
    local x = torch.randn(4, 5, { dtype = torch.float64 })
    lin:zero_grad()
    f(x)
    keep.h:sum():backward()
    local gw = lin.weight.grad:clone()
    lin:zero_grad()
    fn(x)
    keep.h:sum():backward()
    T.ok(max_diff(gw, lin.weight.grad) < 1e-12)
  end
end)

T.test("no false escapes: plain functions and modules stay whole graphs", function()
  local seg = C.counters.segmented_calls
  local esc = C.counters.escapes
  local f = torch.compile(function(x) local y = x * 2; local z = y + 1; return z * 3, { a = y } end)
  for _ = 1, 3 do f(torch.randn(10)) end
  local mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
  local m = torch.compile(mlp)
  for _ = 1, 3 do m(torch.randn(2, 8)):sum():backward() end
  T.eq(C.counters.escapes, esc)
  T.eq(C.counters.segmented_calls, seg)
end)

T.test("fullgraph = true: an escape runs correctly without a graph break", function()
  local box = {}
  local f = torch.compile(function(x) box.v = x * 5; return box.v - 1 end, { fullgraph = true })
  for i = 1, 3 do
    local x = torch.randn(8)
    T.ok(max_diff(f(x), x * 5 - 1) < 1e-6)
    T.ok(max_diff(box.v, x * 5) < 1e-6, "call " .. i)
  end
  local g = torch.compile(function(x) return x:sum():item() end, { fullgraph = true })
  T.raises(function() g(torch.randn(3)) end, "fullgraph")
end)

T.test("a .grad read by the function is read again at each call (zero_grad makes a new one)", function()
  local p = torch.randn(6, { requires_grad = true })
  local f = torch.compile(function() return p.grad * 2 end)
  for i = 1, 3 do
    p.grad = nil
    ((p * i) ^ 2):sum():backward()
    T.ok(max_diff(f(), p.grad * 2) < 1e-6, "call " .. i)
  end
  p.grad = nil
  T.raises(function() f() end)          -- p.grad is nil now: retraced, and nil * 2 fails as in eager
end)

T.test("compiled optimizer steps equal eager's, their state real tensors", function()
  local cases = {
    { "SGD", { lr = 0.05, momentum = 0.9 } }, { "SGD", { lr = 0.05 } }, { "Adam", { lr = 0.01 } },
    { "AdamW", { lr = 0.01, weight_decay = 0.1 } }, { "RMSprop", { lr = 0.01, momentum = 0.5 } },
    { "Adagrad", { lr = 0.1 } }, { "Adamax", { lr = 0.01 } }, { "NAdam", { lr = 0.01 } },
    { "RAdam", { lr = 0.01 } }, { "Adadelta", { lr = 1.0 } },
  }
  for _, c in ipairs(cases) do
    local name, opts = c[1], c[2]
    torch.manual_seed(7)
    local m1 = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2)):to(torch.float64)
    local m2 = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2)):to(torch.float64)
    m2:load_state_dict(m1:state_dict())
    local o1, o2 = optim[name](m1:parameters(), opts), optim[name](m2:parameters(), opts)
    local step = torch.compile(function() o2:step() end)
    local x = torch.randn(7, 6, { dtype = torch.float64 })
    for _ = 1, 5 do
      o1:zero_grad(); m1(x):pow(2):sum():backward(); o1:step()
      o2:zero_grad(); m2(x):pow(2):sum():backward(); step()
    end
    local p1, p2 = m1:parameters(), m2:parameters()
    for i = 1, #p1 do T.ok(max_diff(p1[i], p2[i]) < 1e-12, name .. " parameter " .. i) end
    for _, st in pairs(o2.state) do
      for k, v in pairs(st) do
        if torch.is_tensor(v) then T.eq(v.device.type, "cpu", name .. " state " .. k) end
      end
    end
  end
end)

T.test("train() / eval() of a module the function calls is a guard: eval recompiles", function()
  torch.manual_seed(5)
  local net = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3))
  local direct = torch.compile(net)
  local closing = torch.compile(function(x) return net(x) * 2 end)
  local x = torch.randn(16, 6)
  net:train(); direct(x); closing(x)
  local traces = C.counters.traces
  net:eval()
  local e = net(x)
  T.ok(max_diff(direct(x), e) < 1e-5)
  T.ok(max_diff(closing(x), e * 2) < 1e-5)
  -- (BatchNorm's training step updates its running statistics under no_grad: segments)
  local drop = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.5), nn.Linear(8, 3))
  local d = torch.compile(drop)
  drop:train(); d(x); d(x)
  traces = C.counters.traces
  drop:eval()
  T.ok(max_diff(d(x), drop(x)) < 1e-5)
  T.eq(C.counters.traces, traces + 1)
  drop:train(); d(x)                      -- the training graph is still there
  T.eq(C.counters.traces, traces + 1)
end)

T.test("a parameter, buffer or attribute changed in a module the function calls recompiles", function()
  local lin = nn.Linear(4, 3)
  local f = torch.compile(function(x) return lin(x) * 2 end)
  local x = torch.randn(5, 4)
  T.ok(max_diff(f(x), lin(x) * 2) < 1e-6)
  lin.weight = nn.Parameter(torch.randn(3, 4))
  T.ok(max_diff(f(x), lin(x) * 2) < 1e-6)
  lin.bias = nil
  T.ok(max_diff(f(x), lin(x) * 2) < 1e-6)
  local bn = nn.BatchNorm1d(4)
  bn:eval()
  local g = torch.compile(function(x) return bn(x) + 1 end)
  T.ok(max_diff(g(x), bn(x) + 1) < 1e-6)
  bn.running_mean = torch.randn(4)
  T.ok(max_diff(g(x), bn(x) + 1) < 1e-6)
  local ln = nn.LayerNorm(4)             -- an attribute (a number) of a module it calls
  local h = torch.compile(function(x) return ln(x) * 2 end)
  T.ok(max_diff(h(x), ln(x) * 2) < 1e-6)
  ln.eps = 10
  T.ok(max_diff(h(x), ln(x) * 2) < 1e-6)
end)

T.test("upvalues: a changed one recompiles; one the function assigns runs its Lua code each call", function()
  local w, k = torch.ones(3), 2
  local f = torch.compile(function(x) return x * w * k end)
  local x = torch.randn(3)
  T.ok(max_diff(f(x), x * w * k) < 1e-6)
  w = torch.ones(3) * 5                  -- another tensor under the name
  T.ok(max_diff(f(x), x * w * k) < 1e-6)
  k = 7                                  -- another number
  T.ok(max_diff(f(x), x * w * k) < 1e-6)
  local calls, acc = 0, torch.zeros(3)
  local g = torch.compile(function(x) calls = calls + 1; acc = acc + x; return acc * 2 end)
  for i = 1, 4 do
    local r = g(torch.ones(3))
    T.eq(calls, i)
    T.ok(max_diff(acc, torch.full({ 3 }, i)) == 0, "acc after call " .. i)
    T.ok(max_diff(r, torch.full({ 3 }, 2 * i)) == 0)
  end
end)

T.test("globals the function reads are guards; one it assigns runs its Lua code each call", function()
  _G.CE_W, _G.CE_K = torch.ones(3), 2
  local x = torch.randn(3)
  local f = torch.compile(function(x) return x * CE_W * CE_K end)
  T.ok(max_diff(f(x), x * CE_W * CE_K) < 1e-6)
  CE_W = torch.ones(3) * 5
  T.ok(max_diff(f(x), x * CE_W * CE_K) < 1e-6)
  CE_K = 7
  T.ok(max_diff(f(x), x * CE_W * CE_K) < 1e-5)
  T.ok(max_diff(f(x), x * 35) < 1e-4)
  local function helper(t) return t * CE_K end    -- a function it closes over reads one too
  local g = torch.compile(function(x) return helper(x) + 1 end)
  T.ok(max_diff(g(x), x * 7 + 1) < 1e-6)
  CE_K = 3
  T.ok(max_diff(g(x), x * 3 + 1) < 1e-6)
  _G.CE_COUNT = 0
  local h = torch.compile(function(x) CE_COUNT = CE_COUNT + 1; return x + 1 end)
  for i = 1, 3 do h(x); T.eq(CE_COUNT, i) end
  _G.CE_W, _G.CE_K, _G.CE_COUNT = nil, nil, nil
end)

T.test("torch.compiler.disable: a graph break, the function on real tensors; is_compiling", function()
  local devices, flags = {}, {}
  local helper = torch.compiler.disable(function(t)
    devices[#devices + 1] = t.device.type
    flags[#flags + 1] = torch.compiler.is_compiling()
    return t:sum():item() > 0 and t * 2 or t * -3
  end)
  local fn = function(x) local y = torch.sigmoid(x) - 0.5; return helper(y) + 1 end
  local f = torch.compile(fn)
  for i = 1, 3 do
    local x = torch.randn(20) + (i % 2 == 0 and 2 or -2)
    T.ok(max_diff(f(x), fn(x)) < 1e-6, "call " .. i)
  end
  for i = 1, #devices do T.eq(devices[i], "cpu"); T.eq(flags[i], false) end
  local seen
  local g = torch.compile(function(x) seen = torch.compiler.is_compiling(); return x + 1 end)
  g(torch.ones(2))
  T.eq(seen, true)
  T.eq(torch.compiler.is_compiling(), false)
  T.raises(function() torch.compile(function(x) return helper(x) end, { fullgraph = true })(torch.ones(2)) end,
    "disable'd function")
  T.raises(function() torch.compiler.disable(3) end, "argument 'fn' must be a function")
  T.raises(function() torch.compiler.disable(print, { recursiv = true }) end, "unknown option 'recursiv'")
end)

T.test("random ops: a compiled call draws what eager's draws (the capture's draws are given back)", function()
  local fn = function(x) return x * torch.randn(5) + torch.rand(5) end
  local f = torch.compile(fn)
  for _ = 1, 3 do
    torch.manual_seed(11); local a, a2 = f(torch.ones(5)), f(torch.ones(5))
    torch.manual_seed(11); local b, b2 = fn(torch.ones(5)), fn(torch.ones(5))
    T.ok(max_diff(a, b) == 0 and max_diff(a2, b2) == 0)
  end
  local g = torch.compile(function(x) local n = torch.randn(3); if n:sum():item() > 0 then return x + n end return x - n end)
  torch.manual_seed(5); local c = g(torch.zeros(3))
  torch.manual_seed(5); local n = torch.randn(3)
  T.ok(max_diff(c, n:sum():item() > 0 and n or -n) == 0)
end)

T.test("torch.utils.swap_tensors exchanges two tensors; bad arguments are errors", function()
  local a, b = torch.ones(2), torch.zeros(3, { dtype = torch.float64 })
  local a0 = a
  torch.utils.swap_tensors(a, b)
  T.ok(rawequal(a, a0))
  T.eq(a.shape[1], 3); T.eq(a.dtype, torch.float64); T.eq(b.shape[1], 2); T.eq(b:sum():item(), 2)
  T.raises(function() torch.utils.swap_tensors(a, 1) end, "argument 't2' must be a tensor")
  T.raises(function() torch.utils.swap_tensors("x", a) end, "argument 't1' must be a tensor")
end)

T.done()
