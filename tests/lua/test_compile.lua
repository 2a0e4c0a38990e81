-- torch.compile: captured graphs, fused C kernels, guards, graph breaks, the disk cache.
local T = require "testing"
local nn = require "nn"
local F = nn.functional
local C = require "compile"

-- a cache of our own, empty, so every run compiles its kernels at least once
local S = T.scratch()
C.cache_dir_override = S.dir .. "/cache"

local function rel_err(a, b)
  local d = (a - b):abs():max():item()
  local s = b:abs():max():item()
  return d / math.max(s, 1e-30)
end

T.test("torch.compile and torch.compiler exist", function()
  T.ok(type(torch.compile) == "function")
  T.ok(type(torch.compiler.reset) == "function")
end)

T.test("a pointwise chain: one fused kernel, the same values as eager", function()
  local fn = function(x, y, z) return x * torch.sigmoid(x) * y + z end
  local f = torch.compile(fn)
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local a, b, c = torch.randn(1000, { dtype = dt }), torch.randn(1000, { dtype = dt }), torch.randn(1000, { dtype = dt })
    local r = f(a, b, c)
    T.eq(r.dtype, dt)
    T.ok(rel_err(r, fn(a, b, c)) < (dt == torch.float32 and 1e-5 or 1e-12))
  end
  local g = f:graphs()
  T.eq(#g, 2)                         -- one per dtype
  T.eq(g[1].kernels, 1)
  T.eq(table.concat(g[1].ops, ","), "sigmoid,mul,mul,add")
end)

T.test("float64 arithmetic is exact: the same operations in the same order", function()
  local fn = function(x, y) return ((x + y) * 3 - y / 7) * x - 2.5 end
  local f = torch.compile(fn)
  local a, b = torch.randn(3000, { dtype = torch.float64 }), torch.randn(3000, { dtype = torch.float64 })
  T.eq((f(a, b) - fn(a, b)):abs():max():item(), 0.0)
end)

T.test("every fused pointwise op against eager (float32 within 1e-5, float64 within 1e-12)", function()
  local unary = { "neg", "abs", "exp", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "erf", "expm1", "log1p",
                  "floor", "ceil", "trunc", "rsqrt", "reciprocal", "square", "log", "atan", "exp2", "log2", "tan" }
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local x = torch.rand(4096, { dtype = dt }) * 3 + 0.1
    for _, name in ipairs(unary) do
      local fn = function(t) return torch[name](t * 1.5) end
      local f = torch.compile(fn)
      local e = rel_err(f(x), fn(x))
      T.ok(e < (dt == torch.float32 and 1e-5 or 1e-12), ("%s %s: relative error %g"):format(name, dt, e))
      T.eq(f:graphs()[1].kernels, 1, name)
      if dt == torch.float64 then
        local p = (torch.rand(6, { dtype = dt }) * 0.5 + 0.2):requires_grad_(true)
        T.ok(torch.autograd.gradcheck(f, { p }), name .. " gradcheck")
      end
    end
    for _, name in ipairs({ "add", "sub", "mul", "div", "maximum", "minimum", "pow" }) do
      local y = torch.rand(4096, { dtype = dt }) + 0.5
      local fn = function(a, b) return torch[name](a * 1.0, b) end
      local f = torch.compile(fn)
      local e = rel_err(f(x, y), fn(x, y))
      T.ok(e < (dt == torch.float32 and 1e-5 or 1e-12), ("%s %s: relative error %g"):format(name, dt, e))
      if dt == torch.float64 and name ~= "pow" then
        local p = (torch.rand(6, { dtype = dt }) + 0.2):requires_grad_(true)
        local q = (torch.rand(6, { dtype = dt }) + 0.5):requires_grad_(true)
        T.ok(torch.autograd.gradcheck(f, { p, q }), name .. " gradcheck")
      end
    end
    for _, name in ipairs({ "gelu", "silu", "relu", "gelu_tanh" }) do
      local fn = function(t) return F[name](t - 1.5) end
      if name == "gelu_tanh" then fn = function(t) return F.gelu(t - 1.5, { approximate = "tanh" }) end end
      local f = torch.compile(fn)
      local e = rel_err(f(x), fn(x))
      T.ok(e < (dt == torch.float32 and 1e-5 or 1e-12), ("F.%s %s: relative error %g"):format(name, dt, e))
      T.eq(f:graphs()[1].kernels, 1, "F." .. name .. " is fused")
      if dt == torch.float64 then
        T.ok(torch.autograd.gradcheck(f, { torch.randn(6, { dtype = dt, requires_grad = true }) }), name .. " gradcheck")
      end
    end
  end
end)

T.test("NaN and infinities pass through the fused kernel as through eager", function()
  local fn = function(x) return torch.relu(torch.exp(x) * 1) + torch.maximum(x, x * 0) end
  local x = torch.tensor({ 0 / 0, math.huge, -math.huge, 0, -200, 200, 1 })
  local r, e = torch.compile(fn)(x), fn(x)
  for i = 1, 7 do
    local a, b = r[i], e[i]
    T.ok((a ~= a and b ~= b) or a == b, ("element %d: %s vs %s"):format(i, tostring(a), tostring(b)))
  end
end)

T.test("float32 exp near underflow: subnormal results as eager's, zero below, a masked row's -inf", function()
  local xs = { -math.huge, -200, -104, -103.98, -103.96, -100, -90, -87.5, -87, -20, 0, 1, 88 }
  local x = torch.tensor(xs)
  local r, e = torch.compile(function(x) return torch.exp(x * 1) end)(x):tolist(), torch.exp(x):tolist()
  for i = 1, #xs do
    T.ok(math.abs(r[i] - e[i]) <= 2e-7 * math.abs(e[i]), ("exp(%g): %g vs %g"):format(xs[i], r[i], e[i]))
    T.ok((r[i] == 0) == (e[i] == 0), ("exp(%g) is zero on one side only"):format(xs[i]))
  end
  T.ok(r[6] > 0 and r[6] < 1.2e-38)          -- exp(-100) is subnormal, not flushed
end)

T.test("broadcasting and non-contiguous inputs", function()
  local fn = function(x, row, col, s) return (x + row) * col - s end
  local f = torch.compile(fn)
  local x, row, col, s = torch.randn(37, 53), torch.randn(53), torch.randn(37, 1), torch.tensor(0.5)
  T.ok(rel_err(f(x, row, col, s), fn(x, row, col, s)) < 1e-6)
  -- transposed and sliced inputs
  local xt = torch.randn(53, 37):t()
  local sl = torch.randn(37, 106):narrow(2, 3, 53)
  T.ok(rel_err(f(xt, row, col, s), fn(xt, row, col, s)) < 1e-6)
  T.ok(rel_err(f(sl, row, col, s), fn(sl, row, col, s)) < 1e-6)
  T.eq(#f:graphs(), 3)      -- strides are guarded: each layout its own kernel
end)

T.test("large broadcast and transposed inputs: values and gradients as eager's", function()
  -- broadcast rows and columns go by rows (no division per element); a transposed input of
  -- 4096 elements or more is read from a contiguous copy
  local f64 = { dtype = torch.float64, requires_grad = true }
  local x, y = torch.randn(120, 90, f64), torch.randn(90, 120, f64)
  local b, c = torch.randn(120, f64), torch.randn(90, 1, f64)
  local fn = function(x, y, b, c) return torch.tanh(x:t()) * y + torch.sigmoid(y + b) * c end
  local f = torch.compile(fn)
  local r1, r2 = f(x, y, b, c), fn(x, y, b, c)
  T.ok((r1 - r2):abs():max():item() < 1e-12)
  local go = torch.randn(90, 120, { dtype = torch.float64 })
  local g1 = torch.autograd.grad({ r1 }, { x, y, b, c }, { go })
  local g2 = torch.autograd.grad({ r2 }, { x, y, b, c }, { go })
  for i = 1, 4 do T.ok((g1[i] - g2[i]):abs():max():item() < 1e-12, "gradient " .. i) end
  T.eq(f:graphs()[1].kernels, 1)
  torch.no_grad(function()
    local a = torch.randn(256, 64):t()              -- float32, no grad
    local yy = torch.randn(64, 256)
    local h = function(a, y) return torch.exp(a) * y - 1 end
    T.ok(rel_err(torch.compile(h)(a, yy), h(a, yy)) < 1e-5)
  end)
end)

T.test("a kernel's output has eager's layout: later kernels, views and the caller see it", function()
  -- eager's tanh of a transposed tensor is transposed; the fused kernel writes row-major and
  -- its output is copied into eager's layout (the kernel after the mm read a row-major result
  -- through the recorded strides: wrong values)
  for _, n in ipairs({ 16, 96 }) do
    local a = torch.randn(8, n, { dtype = torch.float64, requires_grad = true })
    local w = torch.randn(8, 8, { dtype = torch.float64, requires_grad = true })
    local fn = function(a, w)
      local h = torch.tanh(a:t()) * 2
      local m = torch.mm(h, w)
      return torch.sigmoid(h) + m
    end
    local f = torch.compile(fn)
    local r1, r2 = f(a, w), fn(a, w)
    T.ok((r1 - r2):abs():max():item() < 1e-12, "forward, n = " .. n)
    local go = torch.randn(n, 8, { dtype = torch.float64 })
    local g1 = torch.autograd.grad({ r1 }, { a, w }, { go })
    local g2 = torch.autograd.grad({ r2 }, { a, w }, { go })
    T.ok((g1[1] - g2[1]):abs():max():item() < 1e-12, "grad a, n = " .. n)
    T.ok((g1[2] - g2[2]):abs():max():item() < 1e-12, "grad w, n = " .. n)
    T.ok(f:graphs()[1].kernels >= 2)
  end
  local a = torch.randn(8, 16)
  local fn = function(a) local h = torch.tanh(a:t()) * 2; return h:t() + 1, h end
  local r1, h1 = torch.compile(fn)(a)
  local r2, h2 = fn(a)
  T.ok((r1 - r2):abs():max():item() < 1e-6)
  T.eq(table.concat(h1:stride(), ","), table.concat(h2:stride(), ","))
end)

T.test("guards: a new shape or dtype recompiles, the same kinds reuse", function()
  local t0 = C.counters.traces
  local function n() return C.counters.traces - t0 end
  local f = torch.compile(function(x) return x * 2 + 1 end)
  f(torch.randn(10)); f(torch.randn(10)); f(torch.randn(10))
  T.eq(n(), 1)                             -- traced once, then the graph runs
  f(torch.randn(11))
  T.eq(n(), 2)
  f(torch.randn(11, { dtype = torch.float64 }))
  T.eq(n(), 3)
  f(torch.randn(10))
  T.eq(n(), 3)
  -- a number argument is specialized
  local g = torch.compile(function(x, k) return x * k + 1 end)
  local x = torch.randn(5)
  T.ok(rel_err(g(x, 2), x * 2 + 1) < 1e-6)
  T.ok(rel_err(g(x, 3), x * 3 + 1) < 1e-6)
  T.eq(#g:graphs(), 2)
end)

T.test("cache_size_limit: past it, eager (dynamic = false: every size specialized)", function()
  local old = C.config.cache_size_limit
  C.config.cache_size_limit = 2
  local f = torch.compile(function(x) return x + 1 end, { dynamic = false })
  for n = 1, 4 do T.eq(f(torch.zeros(n)):sum():item(), n) end
  T.eq(#f:graphs(), 2)
  C.config.cache_size_limit = old
end)

T.test("graph breaks: the function runs eagerly; under fullgraph an error naming the line", function()
  local fn = function(x)
    local y = x * 2
    if y:sum():item() > 0 then return y + 1 end      -- needs a value
    return y - 1
  end
  local f = torch.compile(fn)
  local x = torch.randn(20)
  T.ok(rel_err(f(x), fn(x)) == 0)
  T.ok(rel_err(f(-x:abs()), fn(-x:abs())) == 0)
  local g = torch.compile(fn, { fullgraph = true })
  T.raises(function() g(x) end, "graph break at")
  T.raises(function() g(x) end, "test_compile.lua")
end)

T.test("tensors read from outside: the current values, each call", function()
  local w = torch.randn(8)
  local f = torch.compile(function(x) return x * w + 1 end)
  local x = torch.randn(8)
  T.ok(rel_err(f(x), x * w + 1) < 1e-6)
  w:mul_(3)                               -- in place: the graph reads w itself
  T.ok(rel_err(f(x), x * w + 1) < 1e-6)
end)

T.test("in place ops on arguments take effect", function()
  local f = torch.compile(function(x) x:add_(1); return x * 2 end)
  local x = torch.zeros(4)
  local r = f(x)
  T.eq(x:sum():item(), 4.0)
  T.eq(r:sum():item(), 8.0)
end)

T.test("an nn.Module: inference fused, training through autograd with the same gradients", function()
  torch.manual_seed(1)
  local m = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 8), nn.Tanh())
  local cm = torch.compile(m)
  local x = torch.randn(5, 16)
  local e = m(x)
  local r = cm(x)
  T.ok(rel_err(r, e) < 1e-5)
  -- gradients
  local ge = {}
  m:zero_grad(); m(x):square():sum():backward()
  for i, p in ipairs(m:parameters()) do ge[i] = p.grad:clone() end
  m:zero_grad(); cm(x):square():sum():backward()
  for i, p in ipairs(m:parameters()) do T.ok(rel_err(p.grad, ge[i]) < 1e-5) end
  -- under no_grad the fused form runs, and sees updated weights
  torch.no_grad(function()
    for _, p in ipairs(m:parameters()) do p:mul_(0.5) end
    T.ok(rel_err(cm(x), m(x)) < 1e-5)
  end)
end)

T.test("training: a fused run is one autograd node whose backward is a generated kernel", function()
  local fn = function(x, y, b)
    return F.gelu(x * y + b) * torch.sigmoid(x) - torch.tanh(y) / 3 + torch.maximum(x, y) + F.silu(x + b) * 2
  end
  local f = torch.compile(fn)
  for _, dt in ipairs({ torch.float64, torch.float32 }) do
    local x = torch.randn(7, 5, { dtype = dt, requires_grad = true })
    local y = torch.randn(7, 5, { dtype = dt, requires_grad = true })
    local b = torch.randn(5, { dtype = dt, requires_grad = true })
    local r = f(x, y, b)
    T.ok(tostring(r.grad_fn):find("CompiledPointwise"), tostring(r.grad_fn))
    r:square():sum():backward()
    local gx, gy, gb = x.grad, y.grad, b.grad
    x.grad, y.grad, b.grad = nil, nil, nil
    local e = fn(x, y, b)
    e:square():sum():backward()
    local tol = dt == torch.float32 and 1e-5 or 1e-12
    T.ok(rel_err(r, e) < tol)
    T.ok(rel_err(gx, x.grad) < tol and rel_err(gy, y.grad) < tol and rel_err(gb, b.grad) < tol)
  end
  -- finite differences through the compiled function
  local c = torch.ones(4, { dtype = torch.float64 })
  T.ok(torch.autograd.gradcheck(function(a) return f(a, a * 2, c) end,
    { torch.randn(3, 4, { dtype = torch.float64, requires_grad = true }) }))
end)

T.test("layer norm + GELU + residual: one row kernel, the same values as eager", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local tol = dt == torch.float32 and 1e-5 or 1e-12
    local ln = nn.LayerNorm(67, { dtype = dt })
    torch.no_grad(function() ln.weight:uniform_(0.5, 1.5); ln.bias:uniform_(-0.5, 0.5) end)
    local fn = function(x, r) return x + F.gelu(ln(x)) * 0.5 + r end
    local f = torch.compile(fn)
    local x, r = torch.randn(3, 33, 67, { dtype = dt }), torch.randn(67, { dtype = dt })
    torch.no_grad(function()
      T.ok(rel_err(f(x, r), fn(x, r)) < tol, tostring(dt))
      T.eq(f:graphs()[1].kernels, 1, "layer_norm fused into the pointwise kernel")
    end)
    -- under autograd: the same gradients for the input, the weight and the bias
    local xg = x:clone():requires_grad_()
    f(xg, r):sum():backward()
    local gx, gw, gb = xg.grad:clone(), ln.weight.grad:clone(), ln.bias.grad:clone()
    xg.grad = nil; ln:zero_grad()
    fn(xg, r):sum():backward()
    T.ok(rel_err(gx, xg.grad) < tol and rel_err(gw, ln.weight.grad) < tol and rel_err(gb, ln.bias.grad) < tol,
         "gradients " .. tostring(dt))
  end
  -- no affine, the normalized values also returned, a row length under the 8 lanes, eps
  local g = torch.compile(function(x) local y = F.layer_norm(x, { 5 }, nil, nil, 1e-3); return torch.tanh(y) - x, y end)
  local x = torch.randn(7, 5, { dtype = torch.float64 })
  local a1, a2 = g(x)
  local y = F.layer_norm(x, { 5 }, nil, nil, 1e-3)
  T.ok(rel_err(a1, torch.tanh(y) - x) < 1e-12 and rel_err(a2, y) < 1e-12)
  -- a non-contiguous input and a norm over two dimensions are left to the eager layer_norm
  local h = torch.compile(function(x) return F.layer_norm(x, { 6 }) * 2 + 1 end)
  local xt = torch.randn(6, 4):t()
  T.ok(rel_err(h(xt), F.layer_norm(xt, { 6 }) * 2 + 1) < 1e-5)
  local k = torch.compile(function(x) return F.layer_norm(x, { 3, 4 }) + 1 end)
  local x3 = torch.randn(2, 3, 4)
  T.ok(rel_err(k(x3), F.layer_norm(x3, { 3, 4 }) + 1) < 1e-5)
end)

T.test("a pointwise run into softmax / log_softmax over the last dimension: one row kernel", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local tol = dt == torch.float32 and 1e-5 or 1e-12
    local fn = function(q, mask) return F.softmax(q * 0.125 + mask, -1) end
    local f = torch.compile(fn)
    local q, mask = torch.randn(2, 9, 37, { dtype = dt }) * 10, torch.randn(2, 1, 37, { dtype = dt })
    torch.no_grad(function()
      T.ok(rel_err(f(q, mask), fn(q, mask)) < tol, "softmax " .. tostring(dt))
      T.eq(f:graphs()[1].kernels, 1, "softmax fused into the pointwise kernel")
    end)
    -- log_softmax, with dim given as the last index, and a value of the run also returned
    local gn = function(x) local a = torch.tanh(x); return F.log_softmax(a * 3, 3), a end
    local g = torch.compile(gn)
    local a1, a2 = g(q)
    local b1, b2 = gn(q)
    T.ok(rel_err(a1, b1) < tol and rel_err(a2, b2) < tol, "log_softmax " .. tostring(dt))
    -- rows of -inf and NaN give what eager gives
    local bad = torch.randn(3, 6, { dtype = dt })
    bad[1]:fill_(-math.huge); bad[2][3] = 0 / 0
    local e, c = fn(bad, torch.zeros(6, { dtype = dt })), f(bad, torch.zeros(6, { dtype = dt }))
    T.ok(torch.equal(e:isnan(), c:isnan()), "NaN rows as eager")
    T.ok(rel_err(c[3], e[3]) < tol)
    -- under autograd: the same gradients
    local qg = q:clone():requires_grad_()
    f(qg, mask):pow(2):sum():backward()
    local gq = qg.grad:clone(); qg.grad = nil
    fn(qg, mask):pow(2):sum():backward()
    T.ok(rel_err(gq, qg.grad) < tol, "gradients " .. tostring(dt))
  end
  -- softmax over another dimension, or of a value used again, stays an op
  local h = torch.compile(function(x) local y = x * 2; return F.softmax(y, 1) + y end)
  local x = torch.randn(5, 4)
  T.ok(rel_err(h(x), F.softmax(x * 2, 1) + x * 2) < 1e-5)
end)

T.test("the disk cache: a reset process finds the kernel; a corrupt entry is rebuilt", function()
  local fn = function(x) return torch.tanh(x) * 3 + x end
  torch.compiler.reset()
  local f = torch.compile(fn)
  local x = torch.randn(100)
  f(x)
  local compiled = C.counters.kernels_compiled
  torch.compiler.reset()
  local g = torch.compile(fn)
  T.ok(rel_err(g(x), fn(x)) < 1e-6)
  T.eq(C.counters.kernels_compiled, 0)
  T.eq(C.counters.cache_hits, 1)
  -- corrupt every cached object: the checksum catches it, the kernel is compiled again
  local p = io.popen("ls '" .. C.cache_dir() .. "'/*.so")
  for path in p:lines() do
    local fh = io.open(path, "r+b"); fh:seek("set", 100); fh:write("garbage!"); fh:close()
  end
  p:close()
  torch.compiler.reset()
  local h = torch.compile(fn)
  T.ok(rel_err(h(x), fn(x)) < 1e-6)
  T.eq(C.counters.kernels_compiled, 1)
  T.ok(compiled >= 1)
end)

T.test("a kernel that does not compile: a warning, and eager results", function()
  local old = C.config.cc
  C.config.cc = "false"                    -- a compiler that always fails
  torch.compiler.reset()
  local fn = function(x) return x * 7 - 1 end
  local f = torch.compile(fn)
  local x = torch.randn(10)
  T.ok(rel_err(f(x), fn(x)) == 0)
  T.eq(f:graphs()[1].kernels, 0)
  C.config.cc = old
  torch.compiler.reset()
end)

T.test("bad options and arguments", function()
  T.raises(function() torch.compile(function() end, { fullgrph = true }) end, "fullgrph")
  T.raises(function() torch.compile(function() end, { mode = "fast" }) end, "unknown mode 'fast'")
  T.raises(function() torch.compile(function() end, { backend = "tvm" }) end, "unknown backend 'tvm'")
  T.raises(function() torch.compile(function() end, { dynamic = "yes" }) end, "torch.compile: 'dynamic' must be")
  T.raises(function() torch.compile(42) end, "must be a function or an nn.Module")
  T.raises(function() torch._compiled_run(nil, 1, 1, {}, {}) end, "torch._compiled_run: argument 'kernel'")
end)

T.test("backend = 'eager' runs the captured ops one by one", function()
  local fn = function(x) return x * 2 + 1 end
  local f = torch.compile(fn, { backend = "eager" })
  local x = torch.randn(9)
  T.eq((f(x) - fn(x)):abs():max():item(), 0.0)
  T.eq(f:graphs()[1].kernels, 0)
end)

T.test("temporaries stay bounded over many calls", function()
  local f = torch.compile(function(x, y) return x * y + x end)
  local x, y = torch.randn(10000), torch.randn(10000)
  f(x, y)
  local before = torch.cpu_memory_stats().allocated
  for _ = 1, 2000 do f(x, y) end
  -- 2000 results of 40 KB: 80 MB if nothing were freed along the way
  local grown = torch.cpu_memory_stats().allocated - before
  T.ok(grown < 16e6, ("%d bytes more after 2000 calls"):format(grown))
end)

T.test("unary minus (Lua's __unm, which passes its operand twice) is a fused neg", function()
  local f = torch.compile(function(x, y) return -(x * y) + torch.exp(-x) end)
  local x, y = torch.randn(1000, { dtype = torch.float64 }), torch.randn(1000, { dtype = torch.float64 })
  -- within 1e-12: exp is libmvec's in the kernel, the build's own in eager
  T.near((f(x, y) - (-(x * y) + torch.exp(-x))):abs():max():item(), 0, 1e-12)
  local g = f:graphs()[1]
  T.eq(g.kernels, 1)
  T.eq(#g.ops, 5)
  T.eq(g.steps, 1)   -- all five ops in the one kernel
  local xr, xe = x:clone():requires_grad_(), x:clone():requires_grad_()
  f(xr, y):sum():backward()
  ;(-(xe * y) + torch.exp(-xe)):sum():backward()
  T.near((xr.grad - xe.grad):abs():max():item(), 0, 1e-12)
end)

S.remove()
T.done()
