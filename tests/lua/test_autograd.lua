-- test_autograd.lua — the engine and the autograd API: backward, grad,
-- graph lifetime, hooks, grad modes, custom Functions, anomaly mode.
local T = require "testing"

local function f64(t, rg) return torch.tensor(t, { dtype = torch.float64, requires_grad = rg }) end

T.test("backward accumulates into leaves", function()
  local x = f64({ 1, 2, 3 }, true)
  local y = f64({ 4, 5, 6 }, true)
  local z = (x * y + x):sum()
  T.ok(z.grad_fn ~= nil and not z.is_leaf and x.is_leaf)
  z:backward()
  T.tensor(x.grad, { 5, 6, 7 })
  T.tensor(y.grad, { 1, 2, 3 })
  -- a second backward of a new graph accumulates
  ;(x * 2):sum():backward()
  T.tensor(x.grad, { 7, 8, 9 })
  x.grad = nil
  T.eq(x.grad, nil)
end)

T.test("grad_fn names and next_functions", function()
  local x = f64({ 1, 2 }, true)
  local y = x * 3 + 1
  T.eq(y.grad_fn:name(), "AddBackward0")
  local nf = y.grad_fn.next_functions
  T.eq(nf[1][1]:name(), "MulBackward0")
  T.eq(nf[1][1].next_functions[1][1]:name(), "AccumulateGrad")
  T.eq(tostring(y.grad_fn), "<AddBackward0>")
end)

T.test("autograd.grad returns gradients without touching .grad", function()
  local x = f64({ 1, 2, 3 }, true)
  local y = (x * x):sum()
  local g = torch.autograd.grad(y, x)
  T.tensor(g, { 2, 4, 6 })
  T.eq(x.grad, nil)
  local a, b = f64({ 1 }, true), f64({ 2 }, true)
  local gs = torch.autograd.grad({ (a * b):sum() }, { a, b })
  T.tensor(gs[1], { 2 })
  T.tensor(gs[2], { 1 })
  T.raises(function() torch.autograd.grad((a * 2):sum(), { a, b }) end, "allow_unused")
  local r = torch.autograd.grad((a * 2):sum(), { a, b }, { allow_unused = true })
  T.tensor(r[1], { 2 })
  T.eq(r[2], nil)
end)

T.test("non-scalar backward needs a gradient", function()
  local x = f64({ 1, 2 }, true)
  local y = x * 2
  T.raises(function() y:backward() end, "backward", "scalar")
  y:backward(f64({ 1, 10 }))
  T.tensor(x.grad, { 2, 20 })
  T.raises(function() (x * 2):backward(f64({ 1, 2, 3 })) end, "backward", "shape")
end)

T.test("running a graph twice needs retain_graph", function()
  local x = f64({ 1, 2 }, true)
  local y = (x * x):sum()
  y:backward({ retain_graph = true })
  y:backward()
  T.tensor(x.grad, { 4, 8 })
  T.raises(function() y:backward() end, "second time", "retain_graph")
end)

T.test("backward on a tensor without grad is an error", function()
  local x = f64({ 1, 2 })
  T.raises(function() x:sum():backward() end, "does not require grad")
end)

T.test("diamond: shared subexpressions sum their gradients", function()
  local x = f64({ 2 }, true)
  local a = x * 3
  local b = a * a + a     -- d/dx = (2a + 1) * 3
  b:sum():backward()
  T.tensor(x.grad, { (2 * 6 + 1) * 3 })
end)

T.test("broadcasting reduces gradients to the input shape", function()
  local a = torch.ones(2, 3, { dtype = torch.float64, requires_grad = true })
  local b = torch.ones(3, { dtype = torch.float64, requires_grad = true })
  local c = torch.ones(2, 1, { dtype = torch.float64, requires_grad = true })
  ;(a * b + c):sum():backward()
  T.tensor(b.grad, { 2, 2, 2 })
  T.tensor(c.grad, { { 3 }, { 3 } })
end)

T.test("type promotion: gradients come back in the input dtype", function()
  local a = torch.ones(2, { dtype = torch.float32, requires_grad = true })
  local b = torch.ones(2, { dtype = torch.float64, requires_grad = true })
  ;(a * b):sum():backward()
  T.eq(a.grad.dtype, torch.float32)
  T.eq(b.grad.dtype, torch.float64)
end)

T.test("detach, detach_, requires_grad_ and .data", function()
  local x = f64({ 1, 2 }, true)
  local y = x * 2
  local d = y:detach()
  T.ok(not d.requires_grad and d.grad_fn == nil)
  d[1] = 100          -- shares storage
  T.eq(y[1]:item(), 100)
  local z = x * 2
  z:detach_()
  T.ok(not z.requires_grad and z.is_leaf)
  T.raises(function() y:requires_grad_(false) end, "requires_grad_")
  local w = torch.tensor({ 1, 2 })
  T.raises(function() w:requires_grad_() end, "floating point")
  T.ok(not x.data.requires_grad)
end)

T.test("retain_grad keeps a non-leaf gradient", function()
  local x = f64({ 1, 2 }, true)
  local y = x * 3
  y:retain_grad()
  ;(y * y):sum():backward()
  T.tensor(y.grad, { 6, 12 })
  T.tensor(x.grad, { 18, 36 })
end)

T.test("hooks see and may replace gradients, in order", function()
  local x = f64({ 1, 2 }, true)
  local seen = {}
  x:register_hook(function(g) seen[#seen + 1] = "leaf" ; return g * 10 end)
  local y = x * 2
  y:register_hook(function(g) seen[#seen + 1] = "first" end)
  y:register_hook(function(g) seen[#seen + 1] = "second"; return g + 1 end)
  y:sum():backward()
  T.tensor(x.grad, { 40, 40 })
  T.eq(#seen, 3)
  T.eq(seen[3], "leaf")
  T.raises(function()
    local z = f64({ 1 }, true) * 2
    z:register_hook(function() error("boom") end)
    z:sum():backward()
  end, "boom")
end)

T.test("grad modes: no_grad, enable_grad, set_grad_enabled, <close>", function()
  local x = f64({ 1 }, true)
  local y = torch.no_grad(function() return x * 2 end)
  T.ok(not y.requires_grad)
  T.ok(torch.is_grad_enabled())
  do
    local _ <close> = torch.no_grad()
    T.ok(not torch.is_grad_enabled())
    T.ok(not (x * 2).requires_grad)
    local z = torch.enable_grad(function() return x * 2 end)
    T.ok(z.requires_grad)
  end
  T.ok(torch.is_grad_enabled())
  torch.set_grad_enabled(false)
  T.ok(not (x * 2).requires_grad)
  torch.set_grad_enabled(true)
  T.ok((x * 2).requires_grad)
  -- an error inside the function restores the mode
  pcall(torch.no_grad, function() error("x") end)
  T.ok(torch.is_grad_enabled())
end)

T.test("inference_mode: tensors carry no autograd key", function()
  local x = f64({ 1 }, true)
  local y = torch.inference_mode(function() return x * 2 end)
  T.ok(not y.requires_grad)
  T.ok(y:is_inference())
  T.ok(not x:is_inference())
  do
    local _ <close> = torch.inference_mode()
    T.ok(torch.is_inference_mode_enabled())
    T.ok(torch.zeros(2):is_inference())
  end
  T.ok(not torch.is_inference_mode_enabled())
end)

T.test("in-place on a leaf that requires grad is an error", function()
  local x = f64({ 1, 2 }, true)
  T.raises(function() x:add_(1) end, "add_", "leaf")
  torch.no_grad(function() x:add_(1) end)     -- allowed without grad
  T.tensor(x, { 2, 3 })
end)

T.test("saved tensors modified in place: version counter error", function()
  local x = f64({ 1, 2 }, true)
  local y = x * 1
  local z = y * y          -- saves y
  y:add_(1)
  T.raises(function() z:sum():backward() end, "modified by an inplace operation", "MulBackward0")
end)

T.test("in-place on a non-leaf rewrites its history", function()
  local x = f64({ 1, 2 }, true)
  local y = x * 2
  y:mul_(3)
  y:sum():backward()
  T.tensor(x.grad, { 6, 6 })
end)

T.test("graphs are freed when backward ends", function()
  collectgarbage()
  local before = torch.autograd._live_nodes()
  local x = f64({ 1, 2 }, true)
  for _ = 1, 100 do
    local y = (x * 2 + 1) * x
    y:sum():backward()
  end
  collectgarbage()
  -- only x's AccumulateGrad remains
  T.eq(torch.autograd._live_nodes(), before + 1)
end)

T.test("10,000 training-style iterations keep memory flat", function()
  local w = torch.randn(16, 16, { requires_grad = true })
  local x = torch.randn(8, 16)
  local function step()
    local loss = (x:matmul(w):tanh() * 0.5):sum()
    loss:backward()
    torch.no_grad(function() w:sub_(w.grad * 0.001) end)
    w.grad = nil
  end
  for _ = 1, 1000 do step() end
  collectgarbage()
  local nodes0, tensors0 = torch.autograd._live_nodes(), torch._live_tensors()
  for _ = 1, 10000 do step() end
  collectgarbage()
  T.ok(torch.autograd._live_nodes() <= nodes0 + 1, "nodes grew")
  T.ok(torch._live_tensors() <= tensors0 + 4, "tensors grew")
end)

-- a million nodes (a tenth under the sanitizers, which are ~10x slower)
local CHAIN = os.getenv("LUTORCH_SANITIZE") and 100000 or 1000000
T.test("a chain of a million ops backpropagates without recursion", function()
  local x = torch.tensor({ 1.0 }, { requires_grad = true })
  local y = x
  for _ = 1, CHAIN do y = y * 1.0 end
  y:sum():backward()
  T.tensor(x.grad, { 1 })
  y = nil
  collectgarbage()
end)

T.test("custom Function", function()
  local Cube = torch.autograd.Function{
    forward = function(ctx, x)
      ctx:save_for_backward(x)
      return x * x * x
    end,
    backward = function(ctx, g)
      local x = ctx.saved_tensors[1]
      return g * 3 * x * x
    end,
  }
  local x = f64({ 1, 2 }, true)
  local y = Cube:apply(x)
  T.eq(y.grad_fn:name(), "FunctionBackward")
  y:sum():backward()
  T.tensor(x.grad, { 3, 12 })
  T.ok(torch.autograd.gradcheck(function(a) return Cube(a) end, { f64({ 0.5, -1.5 }, true) }))
  -- needs_input_grad and errors from backward with a traceback
  local Bad = torch.autograd.Function{
    forward = function(ctx, a, b) ctx.ng = ctx.needs_input_grad; return a * b end,
    backward = function(ctx, g) error("bad backward") end,
  }
  local a, b = f64({ 1 }, true), f64({ 2 })
  local r = Bad(a, b)
  T.raises(function() r:sum():backward() end, "bad backward", "traceback")
end)

T.test("anomaly mode names the op and the forward traceback", function()
  torch.autograd.set_detect_anomaly(true)
  local x = f64({ 0 }, true)
  local y = x:sqrt() * 0    -- d sqrt at 0 is inf; inf * 0 = nan
  local err = T.raises(function() y:sum():backward() end, "nan", "SqrtBackward0")
  T.ok(err:find("test_autograd.lua", 1, true), "forward traceback missing")
  torch.autograd.set_detect_anomaly(false)
end)

T.test("gradcheck catches a wrong derivative", function()
  local Wrong = torch.autograd.Function{
    forward = function(ctx, x) return x * x end,
    backward = function(ctx, g) return g end,
  }
  local ok, msg = torch.autograd.gradcheck(function(a) return Wrong(a) end, { f64({ 1.5 }, true) },
    { raise_exception = false })
  T.ok(not ok and msg:find("mismatch"))
end)

T.test("higher order: grad of grad", function()
  local x = f64({ 2 }, true)
  local y = (x * x * x):sum()
  local g = torch.autograd.grad(y, x, { create_graph = true })   -- 3x^2
  T.tensor(g, { 12 })
  local g2 = torch.autograd.grad(g:sum(), x)                       -- 6x
  T.tensor(g2, { 12 })
end)

T.test("custom Function outputs and saved outputs are freed (no cycle through the node)", function()
  local Double = torch.autograd.Function{
    forward = function(ctx, x) local y = x * 2; ctx:save_for_backward(y); return y end,
    backward = function(ctx, g) local _ = ctx.saved_tensors[1]; return g * 2 end }
  local x = torch.randn(100, { requires_grad = true })
  collectgarbage()
  local base = torch._live_tensors()
  for i = 1, 200 do
    local y = Double(x)
    if i % 20 == 0 then y:sum():backward() end
  end
  x.grad = nil
  collectgarbage()
  collectgarbage()
  T.ok(torch._live_tensors() <= base + 2, "live tensors " .. torch._live_tensors() .. " vs " .. base)
end)

T.test("an in-place op whose other operand is self (x:add_(x)): gradients, no cycle", function()
  -- the node saves the operand, which is its own output once the op has run: saved as an
  -- output (a strong reference to itself through grad_fn leaked the node; make asan checks)
  local x = torch.randn(4, { requires_grad = true, dtype = torch.float64 })
  local y = x * 3
  y:add_(y)
  y:sum():backward()
  T.ok((x.grad - torch.full({ 4 }, 6, { dtype = torch.float64 })):abs():max():item() == 0)
  local z = x * 1
  z:mul_(z)                                -- needs the operand before the op: eager's error
  T.raises(function() z:sum():backward() end, "modified by an inplace operation")
  for _ = 1, 200 do local t = x * 1; t:mul_(t); t:div_(t) end
end)

T.done()
