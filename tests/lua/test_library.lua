-- test_library.lua — torch.library: custom ops defined from Lua (schemas, kernels per
-- device, derivatives, fake kernels, mutation), called as torch.ops.NS.NAME through the
-- dispatcher (profiled, recorded by autograd), opcheck, and the errors of bad schemas
-- and bad arguments. The C extension API is tests/sh/test_extension.sh's.
local T = require "testing"
local nn = require "nn"
local lib = torch.library

local f64 = { dtype = torch.float64 }

-- tensors of one shape whose elements differ by at most tol
local function close(a, b, tol)
  T.ok(torch.is_tensor(a) and torch.is_tensor(b), "two tensors")
  T.eq(a.shape, b.shape)
  local d = a:numel() > 0 and (a:double() - b:double()):abs():max():item() or 0
  if d > (tol or 1e-6) then error(("tensors differ by %g:\n%s\n%s"):format(d, tostring(a), tostring(b)), 2) end
end

-- one op most tests use: mylib::scale(x, s) = x * s with its derivative and fake kernel
lib.define("mylib::scale(Tensor x, float s) -> Tensor")
lib.impl("mylib::scale", "cpu", function(x, s) return x * s end)
lib.register_fake("mylib::scale", function(x, s) return torch.empty_like(x) end)
lib.register_autograd("mylib::scale", function(ctx, g) return g * ctx.s, nil end,
  { setup_context = function(ctx, inputs, output) ctx.s = inputs[2] end })

T.test("define, impl and torch.ops call through the dispatcher", function()
  local x = torch.randn(3, 4)
  close(torch.ops.mylib.scale(x, 2), x * 2, 0)
  close(torch.ops.mylib.scale(x, 3), x * 3, 0)     -- an int where a float is declared
  close(torch.ops.mylib.scale(x, { s = 0.5 }), x * 0.5, 0)   -- by name
  T.ok(rawequal(torch.ops.mylib.scale, torch.ops.mylib.scale), "torch.ops caches the callable")
end)

T.test("gradcheck and gradient values", function()
  local x = torch.randn(5, f64):requires_grad_(true)
  T.ok(torch.autograd.gradcheck(function(a) return torch.ops.mylib.scale(a, 1.5) end, { x }))
  local y = torch.ops.mylib.scale(x, 3)
  T.ok(tostring(y.grad_fn):find("mylib::scaleBackward", 1, true), tostring(y.grad_fn))
  y:sum():backward()
  close(x.grad, torch.full({ 5 }, 3, f64), 0)
end)

T.test("save_for_backward and several inputs", function()
  lib.define("mylib::mulsin(Tensor a, Tensor b) -> Tensor")
  lib.impl("mylib::mulsin", "cpu", function(a, b) return a * torch.sin(b) end)
  lib.register_autograd("mylib::mulsin", function(ctx, g)
    local a, b = table.unpack(ctx.saved_tensors)
    local ga = ctx.needs_input_grad[1] and g * torch.sin(b) or nil
    local gb = ctx.needs_input_grad[2] and g * a * torch.cos(b) or nil
    return ga, gb
  end, { setup_context = function(ctx, inputs) ctx:save_for_backward(inputs[1], inputs[2]) end })
  local a = torch.randn(3, f64):requires_grad_(true)
  local b = torch.randn(3, f64):requires_grad_(true)
  T.ok(torch.autograd.gradcheck(torch.ops.mylib.mulsin, { a, b }))
  -- the backward is written with ops, so it is differentiable: double backward works
  T.ok(torch.autograd.gradgradcheck(torch.ops.mylib.mulsin, { a, b }))
  -- only one input wants a gradient
  local c = torch.randn(3, f64)
  torch.ops.mylib.mulsin(a, c):sum():backward()
  close(a.grad, torch.sin(c), 1e-12)
  -- a saved input changed in place before backward is caught
  local a2 = torch.randn(3, f64):requires_grad_(true)
  local b2 = torch.randn(3, f64)
  local y = torch.ops.mylib.mulsin(a2 * 1, b2)
  b2:add_(1)
  T.raises(function() y:sum():backward() end, "modified by an inplace operation")
end)

T.test("a saved output does not keep its graph alive", function()
  lib.define("mylib::expo(Tensor x) -> Tensor")
  lib.impl("mylib::expo", "cpu", function(x) return torch.exp(x) end)
  lib.register_autograd("mylib::expo", function(ctx, g) return g * ctx.saved_tensors[1] end,
    { setup_context = function(ctx, inputs, output) ctx:save_for_backward(output) end })
  local x = torch.randn(4, f64):requires_grad_(true)
  T.ok(torch.autograd.gradcheck(torch.ops.mylib.expo, { x }))
  collectgarbage(); collectgarbage()
  local before = torch.autograd._live_nodes()
  for _ = 1, 20 do local y = torch.ops.mylib.expo(x); y = nil end
  collectgarbage(); collectgarbage()
  T.ok(torch.autograd._live_nodes() <= before + 1, "nodes freed: " .. before .. " -> " .. torch.autograd._live_nodes())
end)

T.test("inside an nn.Module, trained a step", function()
  local Scale = nn.Module:extend("LibScale")
  function Scale:__init(s) self.s = s end
  function Scale:forward(x) return torch.ops.mylib.scale(x, self.s) end
  torch.manual_seed(0)
  local net = nn.Sequential(nn.Linear(4, 3), Scale(2.0), nn.Tanh())
  local x, t = torch.randn(8, 4), torch.randn(8, 3)
  local loss = nn.functional.mse_loss(net(x), t)
  loss:backward()
  local w = net[1].weight
  T.ok(w.grad ~= nil and w.grad:abs():sum():item() > 0, "the Linear got a gradient through the custom op")
  -- the same net written with the built-in op gives the same gradient
  local g1 = w.grad:clone()
  w.grad = nil
  local ref = nn.functional.mse_loss(torch.tanh(nn.functional.linear(x, w, net[1].bias) * 2), t)
  ref:backward()
  close(w.grad, g1, 1e-6)
end)

T.test("torch.profile sees the custom op and what its kernel calls", function()
  local x = torch.randn(3)
  local p = torch.profile(function() torch.ops.mylib.scale(x, 2) end)
  T.eq(p["mylib::scale"] and p["mylib::scale"].calls, 1)
  T.eq(p.mul and p.mul.calls, 1)
end)

T.test("CompositeImplicitAutograd: autograd from the ops the kernel calls", function()
  lib.define("mylib::softplus2(Tensor x) -> Tensor")
  lib.impl("mylib::softplus2", "CompositeImplicitAutograd", function(x) return torch.log1p(torch.exp(x)) * 2 end)
  local x = torch.randn(4, f64):requires_grad_(true)
  T.ok(torch.autograd.gradcheck(torch.ops.mylib.softplus2, { x }))
  T.raises(function() lib.register_autograd("mylib::softplus2", function() end) end, "CompositeImplicitAutograd")
end)

T.test("decorator form, Library objects, several results, lists and defaults", function()
  local L = lib.Library("mylib2", "DEF")
  L:define("split2(Tensor x, int n=2, *, bool flip=False) -> (Tensor, Tensor)")
  lib.impl("mylib2::split2", "cpu")(function(x, n, flip)
    local a, b = x:narrow(1, 1, n):clone(), x:narrow(1, n + 1, x:size(1) - n):clone()
    if flip then return b, a end
    return a, b
  end)
  local x = torch.arange(5)
  local a, b = torch.ops.mylib2.split2(x)
  T.tensor(a, { 0, 1 }); T.tensor(b, { 2, 3, 4 })
  a, b = torch.ops.mylib2.split2(x, 3, { flip = true })
  T.tensor(a, { 3, 4 }); T.tensor(b, { 0, 1, 2 })
  L:define("total(Tensor[] xs, int[] dims=[]) -> Tensor")
  L:impl("total", function(xs, dims)
    local s = xs[1]:sum()
    for i = 2, #xs do s = s + xs[i]:sum() end
    return s + #dims
  end, "cpu")
  close(torch.ops.mylib2.total({ torch.ones(2), torch.ones(3) }), torch.tensor(5.0), 0)
  close(torch.ops.mylib2.total({ torch.ones(2) }, { 1, 2 }), torch.tensor(4.0), 0)
  T.raises(function() lib.Library("mylib2", "DEF") end, "already has a DEF library")
  local F = lib.Library("mylib2", "FRAGMENT")
  F:define("one() -> Tensor")
  F:impl("one", function() return torch.ones(1) end, "cpu")
  T.tensor(torch.ops.mylib2.one(), { 1 })
  local I = lib.Library("mylib2", "IMPL")
  T.raises(function() I:define("two() -> Tensor") end, "IMPL library cannot define")
  T.raises(function() lib.Library("x", "BAD") end, "argument 'kind'")
end)

T.test("mutation: Tensor(a!) returns its input and bumps its version", function()
  lib.define("mylib::fill7_(Tensor(a!) x) -> Tensor(a!)")
  lib.impl("mylib::fill7_", "cpu", function(x) x:fill_(7); return x end)
  local x = torch.zeros(3)
  local v = torch.autograd._version(x)
  local r = torch.ops.mylib.fill7_(x)
  T.ok(rawequal(r, x), "the mutated input itself comes back")
  T.tensor(x, { 7, 7, 7 })
  T.ok(torch.autograd._version(x) > v, "version bumped")
  -- a kernel returning a new tensor for a Tensor(a!) result is an error
  lib.define("mylib::bad_(Tensor(a!) x) -> Tensor(a!)")
  lib.impl("mylib::bad_", "cpu", function(x) return x:clone() end)
  T.raises(function() torch.ops.mylib.bad_(torch.zeros(2)) end, "it must return argument 'x' itself")
  T.raises(function() lib.register_autograd("mylib::fill7_", function() end) end, "writes into an input")
  -- writing into a tensor that requires grad is refused under grad mode
  local leaf = torch.zeros(2):requires_grad_(true)
  T.raises(function() torch.ops.mylib.fill7_(leaf) end, "leaf Variable that requires grad")
  local nonleaf = leaf * 1
  T.raises(function() torch.ops.mylib.fill7_(nonleaf) end, "argument 'x' requires grad")
  torch.no_grad(function() torch.ops.mylib.fill7_(leaf) end)
  T.tensor(leaf:detach(), { 7, 7 })
  -- no result: the kernel may return nothing
  lib.define("mylib::zero_it(Tensor(a!) x) -> ()")
  lib.impl("mylib::zero_it", "cpu", function(x) x:zero_() end)
  local y = torch.ones(2)
  T.eq(select("#", torch.ops.mylib.zero_it(y)), 0)
  T.tensor(y, { 0, 0 })
end)

T.test("opcheck passes a correct op and catches what is wrong", function()
  local r = lib.opcheck("mylib::scale", { torch.randn(3, f64), 2.0 })
  T.eq(r.test_schema, "SUCCESS"); T.eq(r.test_faketensor, "SUCCESS"); T.eq(r.test_gradcheck, "SUCCESS")
  T.eq(lib.opcheck(torch.ops.mylib.scale, { torch.randn(2), 1.0 }).test_schema, "SUCCESS")
  -- a kernel that writes into an input the schema does not announce
  lib.define("mylib::sneaky(Tensor x) -> Tensor")
  lib.impl("mylib::sneaky", "cpu", function(x) x:add_(1); return x * 1 end)
  T.raises(function() lib.opcheck("mylib::sneaky", { torch.zeros(2) }, { test_utils = "test_schema" }) end,
    "argument 'x' was modified")
  -- a fake kernel with the wrong shape
  lib.define("mylib::twice(Tensor x) -> Tensor")
  lib.impl("mylib::twice", "cpu", function(x) return torch.cat({ x, x }) end)
  lib.register_fake("mylib::twice", function(x) return torch.empty_like(x) end)
  T.raises(function() lib.opcheck("mylib::twice", { torch.zeros(3) }, { test_utils = { "test_faketensor" } }) end,
    "the fake kernel")
  -- a wrong derivative
  lib.define("mylib::cube(Tensor x) -> Tensor")
  lib.impl("mylib::cube", "cpu", function(x) return x * x * x end)
  lib.register_fake("mylib::cube", function(x) return torch.empty_like(x) end)
  lib.register_autograd("mylib::cube", function(ctx, g) return g * 2 end)
  T.raises(function() lib.opcheck("mylib::cube", { torch.randn(3, f64) }) end, "test_gradcheck")
  -- a differentiable op without a derivative
  T.raises(function() lib.opcheck("mylib::twice", { torch.zeros(3) }) end, "no derivative")
  -- a result sharing memory with an input, undeclared
  lib.define("mylib::same(Tensor x) -> Tensor")
  lib.impl("mylib::same", "cpu", function(x) return x:view(-1) end)
  T.raises(function() lib.opcheck("mylib::same", { torch.zeros(3) }, { test_utils = "test_schema" }) end,
    "shares memory")
  lib.define("mylib::view1(Tensor(a) x) -> Tensor(a)")
  lib.impl("mylib::view1", "cpu", function(x) return x:view(-1) end)
  T.eq(lib.opcheck("mylib::view1", { torch.zeros(3) }, { test_utils = "test_schema" }).test_schema, "SUCCESS")
end)

T.test("bad schemas are errors naming what is wrong", function()
  T.raises(function() lib.define("scale(Tensor x) -> Tensor") end, "qualified with its namespace")
  T.raises(function() lib.define("bad::a(Tensor x, Tensor x) -> Tensor") end, "argument name 'x' appears twice")
  T.raises(function() lib.define("bad::b(Tensr x) -> Tensor") end, "unknown type 'Tensr'")
  T.raises(function() lib.define("bad::c(Tensor x) -> Tensor(a)") end, "names no argument")
  T.raises(function() lib.define("bad::d(Tensor(a) x) -> Tensor(a!)") end, "must match argument 'x'")
  T.raises(function() lib.define("bad::e(Tensor(a!) x, Tensor(a!) y) -> ()") end, "used by two arguments")
  T.raises(function() lib.define("bad::f(int(a) n) -> Tensor") end, "only a Tensor may carry")
  T.raises(function() lib.define("bad::g(int n=1.5) -> Tensor") end, "an int's default is an integer")
  T.raises(function() lib.define("bad::h(Tensor x=None) -> Tensor") end, "not optional")
  T.raises(function() lib.define("bad::i(Tensor x) Tensor") end, "expected '->'")
  T.raises(function() lib.define("bad::j(Tensor x, int n=1, float y) -> Tensor") end, "has no default")
  T.raises(function() lib.define("mylib::scale(Tensor x) -> Tensor") end, "already defined")
  T.raises(function() lib.define(3) end, "argument 'qualname' must be a string")
  -- the accepted forms
  lib.define("ok::two", "(Tensor x, Tensor? y=None, *, Scalar alpha=1, str mode='sum', float[] w=[0.5, 1]) -> Tensor[]")
  local s = lib._schema("ok::two")
  T.eq(#s.args, 5); T.eq(s.args[2].type, "Tensor?"); T.ok(s.args[3].kwonly); T.eq(s.args[4].default, "sum")
  T.eq(s.rets[1].type, "Tensor[]")
end)

T.test("bad arguments are errors naming the op and the argument", function()
  local x = torch.randn(2)
  T.raises(function() torch.ops.mylib.scale(x, "a") end, "mylib::scale: argument 's' must be float, got string")
  T.raises(function() torch.ops.mylib.scale(1, 2) end, "argument 'x' must be Tensor, got int")
  T.raises(function() torch.ops.mylib.scale(x) end, "missing argument 's'")
  T.raises(function() torch.ops.mylib.scale(x, 1, 2) end, "at most 2 positional")
  T.raises(function() torch.ops.mylib.scale(x, { t = 1 }) end, "unexpected argument 't'")
  T.raises(function() torch.ops.mylib2.split2(x, 1.5) end, "argument 'n' must be int, got float")
  T.raises(function() torch.ops.mylib2.split2(x, 1, { flip = 1 }) end, "argument 'flip' must be bool")
  T.raises(function() torch.ops.mylib2.total({ x, 3 }) end, "argument 'xs' must be Tensor[]")
  T.raises(function() return torch.ops.mylib.nope end, "torch.ops.mylib.nope: no such op")
  -- a kernel that fails or returns the wrong thing
  lib.define("mylib::oops(Tensor x) -> Tensor")
  T.raises(function() torch.ops.mylib.oops(x) end, "no kernel for cpu tensors")
  lib.impl("mylib::oops", "cpu", function(x) return "no" end)
  T.raises(function() torch.ops.mylib.oops(x) end, "returned string for result 1, expected Tensor")
  lib.impl("mylib::oops", "cpu", function(x) error("boom") end)
  T.raises(function() torch.ops.mylib.oops(x) end, "boom")
  T.raises(function() lib.impl("mylib::oops", "tpu", function() end) end, "unknown device or dispatch key 'tpu'")
  T.raises(function() lib.impl("mylib::missing", "cpu", function() end) end, "no op named mylib::missing")
  T.raises(function() lib.register_autograd("mylib::scale", 5) end, "argument 'backward' must be a function")
  -- a backward returning the wrong kind of value
  lib.define("mylib::badgrad(Tensor x) -> Tensor")
  lib.impl("mylib::badgrad", "cpu", function(x) return x * 1 end)
  lib.register_autograd("mylib::badgrad", function(ctx, g) return "g" end)
  local y = torch.ops.mylib.badgrad(torch.randn(2):requires_grad_(true))
  T.raises(function() y:sum():backward() end, "backward returned string for argument 'x'")
end)

T.test("a kernel registered for cuda only is not run for cpu tensors", function()
  lib.define("mylib::gpuonly(Tensor x) -> Tensor")
  lib.impl("mylib::gpuonly", "cuda", function(x) return x end)
  T.raises(function() torch.ops.mylib.gpuonly(torch.zeros(1)) end, "no kernel for cpu tensors")
end)

T.test("torch.ops.aten reaches the built-in ops", function()
  local x = torch.randn(3)
  close(torch.ops.aten.relu(x), torch.relu(x), 0)
end)

T.test("on meta tensors the fake kernel runs (register_fake is the meta device's kernel)", function()
  local m = torch.ops.mylib.scale(torch.empty(3, 4, { device = "meta" }), 2)
  T.eq(tostring(m.device), "meta"); T.eq(m.shape, { 3, 4 })
  -- autograd through the custom op on meta: the derivative runs on meta tensors too
  local x = torch.empty(5, { device = "meta", requires_grad = true })
  torch.ops.mylib.scale(x, 3):sum():backward()
  T.eq(tostring(x.grad.device), "meta"); T.eq(x.grad.shape, { 5 })
  lib.define("mylib::nofake(Tensor x) -> Tensor")
  lib.impl("mylib::nofake", "cpu", function(a) return a + 1 end)
  T.raises(function() torch.ops.mylib.nofake(torch.empty(2, { device = "meta" })) end,
    "mylib::nofake: no kernel for meta tensors", "register_fake")
  lib.define("mylib::two(Tensor a, Tensor b) -> Tensor")
  lib.impl("mylib::two", "cpu", function(a, b) return a + b end)
  T.raises(function() torch.ops.mylib.two(torch.empty(2, { device = "meta" }), torch.zeros(2)) end,
    "mylib::two: expected all tensors to be on the same device, but found tensors on cpu and meta")
end)

T.done()
