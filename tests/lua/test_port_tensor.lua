-- test_port_tensor.lua — PyTorch code that ports as written, and no silent wrong answers, at the
-- tensor and autograd layer: backward/grad options, == on tensors, unknown fields, torch.cuda and
-- devices, custom autograd Functions (Fn.apply, the class form, Variable).
local T = require "testing"
local class = require "torch_class"

local f64 = torch.float64

------------------------------------------------------------------------------
-- 1. autograd options
------------------------------------------------------------------------------
T.test("backward takes the gradient by name: loss:backward({gradient = g})", function()
  local x = torch.tensor({ 1.0, 2.0, 3.0 }, { requires_grad = true })
  local y = x * 2
  y:backward({ gradient = torch.tensor({ 1.0, 10.0, 100.0 }) })
  T.tensor(x.grad, { 2, 20, 200 })
end)

T.test("backward(nil, {retain_graph = true}) reads its options", function()
  local x = torch.tensor({ 1.0, 2.0 }, { requires_grad = true })
  local y = (x * x):sum()
  y:backward(nil, { retain_graph = true })
  y:backward()                                  -- the graph was kept for a second pass
  T.tensor(x.grad, { 4, 8 })
end)

T.test("backward and grad take PyTorch's positional arguments", function()
  local x = torch.tensor({ 1.0, 2.0 }, { requires_grad = true })
  local y = x * x
  y:backward(torch.ones(2), true)               -- y.backward(g, True): retain_graph
  y:backward(torch.ones(2))
  T.tensor(x.grad, { 4, 8 })
  -- torch.autograd.grad(outputs, inputs, grad_outputs)
  local g = torch.autograd.grad(x * x, x, torch.tensor({ 1.0, 10.0 }))
  T.tensor(g, { 2, 40 })
  -- options after a gradient given by position
  local z = (x * 3):sum()
  T.tensor(torch.autograd.grad(z, { x }, nil, { retain_graph = true })[1], { 3, 3 })
  T.tensor(torch.autograd.grad(z, x, { grad_outputs = torch.tensor(2.0) }), { 6, 6 })
  -- torch.autograd.backward(tensors, grad_tensors, retain_graph, ...) and inputs=
  local a = torch.tensor({ 1.0 }, { requires_grad = true })
  local b = torch.tensor({ 1.0 }, { requires_grad = true })
  torch.autograd.backward({ (a * b * 5):sum() }, nil, { inputs = { a } })
  T.tensor(a.grad, { 5 }); T.eq(b.grad, nil)
  -- a value of the wrong kind is an error, not a truthy option
  T.raises(function() (x * 1):sum():backward(nil, 1) end, "backward: argument 'retain_graph' must be a boolean")
  T.raises(function() (x * 1):sum():backward(7) end, "backward: argument 'gradient' must be a tensor")
end)

T.test("options of backward and grad reject unknown names, with the nearest one", function()
  local x = torch.tensor({ 1.0, 2.0 }, { requires_grad = true })
  local y = (x * x):sum()
  local msg = T.raises(function() y:backward({ retain_grap = true }) end, "backward")
  T.eq(msg:match("backward: .*$"), "backward: unknown option 'retain_grap' (did you mean 'retain_graph'?)")
  T.raises(function() torch.autograd.grad(y, x, { grad_output = torch.tensor(2.0) }) end,
    "torch.autograd.grad: unknown option 'grad_output' (did you mean 'grad_outputs'?)")
  T.raises(function() torch.autograd.backward({ y }, { retian_graph = true }) end,
    "torch.autograd.backward: unknown option 'retian_graph' (did you mean 'retain_graph'?)")
  T.raises(function() y:backward({ graident = torch.tensor(1.0) }) end, "did you mean 'gradient'?")
  T.raises(function() y:backward(torch.tensor(1.0), { gradient = torch.tensor(1.0) }) end,
    "backward: argument 'gradient' given twice")
  T.raises(function() torch.autograd.grad(y, x, { allow_unused = true, is_grads_batched = true }) end,
    "is_grads_batched", "not supported")
  -- the other option tables of the binding
  T.raises(function() torch.tensor({ 1 }, { dtyp = f64 }) end, "tensor: unknown option 'dtyp' (did you mean 'dtype'?)")
  T.raises(function() torch.set_printoptions({ precison = 2 }) end,
    "set_printoptions: unknown option 'precison' (did you mean 'precision'?)")
  T.raises(function() torch.autograd.gradcheck(function(a) return a * 2 end,
    { torch.randn(2, { dtype = f64, requires_grad = true }) }, { atoll = 1e-3 }) end,
    "torch.autograd.gradcheck: unknown option 'atoll' (did you mean 'atol'?)")
end)

T.test("op bindings suggest the nearest option name", function()
  T.raises(function() torch.zeros(2, 3, { dtpye = f64 }) end, "zeros: unknown option 'dtpye' (did you mean 'dtype'?)")
  T.raises(function() torch.randn(2):sum(1, { keep_dim = true }) end, "unknown option 'keep_dim' (did you mean 'keepdim'?)")
  -- nothing near: no suggestion
  local msg = T.raises(function() torch.zeros(2, { colour = 1 }) end, "zeros: unknown option 'colour'")
  T.ok(not msg:find("did you mean", 1, true), msg)
end)

T.test("the C 'did you mean' picks what lib/torch_class.lua's closest() picks", function()
  local cands = { "retain_graph", "create_graph", "inputs", "gradient", "dtype", "device", "requires_grad",
    "keepdim", "dim", "out", "is_causal", "grad_outputs", "allow_unused", "lr", "momentum", "a", "ab" }
  local names = { "retain_grap", "RETAIN_GRAPH", "creat_graph", "inptus", "graident", "dtpye", "Dtype",
    "devcie", "requires_grd", "keep_dim", "dimm", "ot", "is_casual", "grad_output", "allow_unsued", "l",
    "lr_", "momentun", "xyz", "b", "abc", "qq", "inputss", "gradientt", "requiresgrad", "ba", "x" }
  local seen = 0
  for _, n in ipairs(names) do
    local want = class.closest(n, cands)
    local ok, err = pcall(torch._check_options, "f", { [n] = 1 }, cands)
    T.ok(not ok, n)
    local got = err:match("did you mean '([^']+)'")
    T.eq(got, want, n)
    if want then seen = seen + 1 end
  end
  T.ok(seen > 10 and seen < #names, "some names have a suggestion and some do not")
end)

------------------------------------------------------------------------------
-- 2. == on two tensors
------------------------------------------------------------------------------
T.test("a == b on two tensors is an error pointing to x:eq(y) and torch.equal", function()
  local a = torch.tensor({ 1, 2, 3 })
  local b = torch.tensor({ 1, 2, 3 })
  T.raises(function() return a == b end, "x:eq(y)", "torch.equal(x, y)")
  T.raises(function() return a ~= b end, "x:eq(y)")
  -- the PyTorch lines this catches: (preds == yb) and 9*a^2 == a.grad
  local w = torch.tensor({ 1.0, 2.0 }, { requires_grad = true })
  ;(w ^ 3):sum():backward()
  T.raises(function() return 3 * w:detach() ^ 2 == w.grad end, "x:eq(y)")
  -- what still works: the same tensor, nil, numbers, rawequal, the elementwise and whole forms
  T.ok(a == a); T.ok(not (a ~= a))
  T.ok(a ~= nil); T.ok(not (a == 1))
  T.ok(not rawequal(a, b)); T.ok(rawequal(a, a))
  T.ok(torch.equal(a, b)); T.tensor(a:eq(b), { true, true, true })
  -- <, <= and friends say what to write too
  T.raises(function() return a < b end, "x:lt(y)")
  T.raises(function() return a:sum() > 1 end, "x:item()")
end)

------------------------------------------------------------------------------
-- 3. unknown fields
------------------------------------------------------------------------------
T.test("an unknown field of a tensor is an error, with the nearest name", function()
  local x = torch.randn(2, 3)
  T.raises(function() return x:max(2).values end, "tensor has no field or method 'values'", "local values, indices")
  T.raises(function() return x.shap end, "tensor has no field or method 'shap' (did you mean 'shape'?)")
  T.raises(function() return x.requires_gard end, "(did you mean 'requires_grad'?)")
  T.raises(function() return x.grad_fun end, "(did you mean 'grad_fn'?)")
  local msg = T.raises(function() return x.zzzzzzzzzz end, "tensor has no field or method 'zzzzzzzzzz'")
  T.ok(not msg:find("did you mean", 1, true), msg)
end)

T.test("every field and method of a tensor still reads", function()
  local x = torch.randn(2, 3, { requires_grad = true })
  local y = x * 2
  T.eq(x.shape, { 2, 3 }); T.eq(x.dtype, torch.float32); T.eq(tostring(x.device), "cpu")
  T.eq(x.ndim, 2); T.eq(x.requires_grad, true); T.eq(x.is_leaf, true); T.eq(y.is_leaf, false)
  T.eq(x.grad, nil); T.eq(x.grad_fn, nil); T.eq(y.grad_fn:name(), "MulBackward0")
  T.eq(x.T.shape, { 3, 2 }); T.eq(x.mT.shape, { 3, 2 }); T.eq(x.data.requires_grad, false)
  T.eq(x.is_cuda, false); T.eq(x.is_cpu, true)
  T.eq(x.is_sparse, false); T.eq(x.is_quantized, false); T.eq(x.is_meta, false)
  T.eq(x.itemsize, 4); T.eq(x.nbytes, 24)
  y:retain_grad(); T.eq(y.retains_grad, true); T.eq(x.retains_grad, false)
  local v = x._version; x.data:add_(1); T.eq(x._version, v + 1)
  y:sum():backward()
  T.tensor(x.grad, { { 2, 2, 2 }, { 2, 2, 2 } })
  for _, m in ipairs({ "size", "dim", "sum", "add_", "backward", "view", "item", "type", "free" }) do
    T.eq(type(x[m]), "function", m)
  end
  -- a freed tensor says so for fields, and still rejects unknown ones
  local f = torch.zeros(2); f:free()
  T.raises(function() return f.shape end, "the tensor has been freed")
  T.raises(function() return f.grad end, "the tensor has been freed")
  T.raises(function() return f.shap end, "no field or method 'shap'")
end)

------------------------------------------------------------------------------
-- 4. devices
------------------------------------------------------------------------------
T.test("torch.cuda exists without a CUDA backend", function()
  local c = torch.cuda
  T.eq(type(c), "table")
  T.eq(c.is_available(), false); T.eq(c.device_count(), 0)
  T.eq(c.memory_allocated(), 0); T.eq(c.max_memory_allocated(), 0); T.eq(c.memory_reserved(), 0)
  T.eq(next(c.memory_stats()), nil)
  c.empty_cache(); c.reset_peak_memory_stats()
  -- seeding is ignored (PyTorch does the same), so scripts that seed every device run
  torch.manual_seed(7); local a = torch.rand(3)
  torch.manual_seed(7); c.manual_seed(1); c.manual_seed_all(2); local b = torch.rand(3)
  T.ok(torch.equal(a, b), "cuda seeding left the cpu generator alone")
  T.raises(c.current_device, "torch.cuda.current_device: no CUDA device is present")
  T.raises(c.synchronize, "torch.cuda.synchronize: no CUDA device is present")
  T.raises(function() c.memory_allocated("cpu") end, "expected a cuda device, got cpu")
  T.raises(function() c.manual_seed("x") end, "torch.cuda.manual_seed: argument 'seed' must be an integer")
end)

T.test("to(device), to(device, dtype), cpu() as PyTorch writes them; cuda() without CUDA says so", function()
  local x = torch.tensor({ 1.5, 2.5 })
  -- already there: x itself (the same storage; the Lua value is a second reference to it)
  x:to("cpu")[1] = 3; T.eq(x[1], 3)
  x:to(torch.device("cpu"))[1] = 4; T.eq(x[1], 4)
  x:cpu()[1] = 1.5; T.eq(x[1], 1.5)
  T.eq(tostring(x:to(torch.device("cpu")).device), "cpu")
  local d = x:to("cpu", torch.float64)
  T.eq(d.dtype, f64); T.tensor(d, { 1.5, 2.5 })
  T.eq(x:to(torch.device("cpu"), "float64").dtype, f64)
  T.eq(x:to("cpu", { dtype = f64 }).dtype, f64)
  T.eq(x:to({ device = "cpu", dtype = f64 }).dtype, f64)
  -- without CUDA, cuda() and to("cuda") name the op and say no device is present
  T.raises(function() return x:cuda() end, "cuda: no CUDA device is present")
  T.raises(function() return x:to("cuda") end, "to: argument 'device': no CUDA device is present")
  T.raises(function() return x:to("cuda:1", f64) end, "to: argument 'device': no CUDA device is present")
  T.raises(function() return x:to(torch.device("cuda")) end, "to: argument 'device': no CUDA device is present")
  T.raises(function() return torch.zeros(2, { device = "cuda" }) end, "zeros: argument 'device': no CUDA device")
  T.raises(function() return torch.tensor({ 1 }, { device = "cuda" }) end, "tensor: argument 'device': no CUDA device")
end)

------------------------------------------------------------------------------
-- 5. custom autograd Functions
------------------------------------------------------------------------------
T.test("the class form: Function:extend(name), static forward/backward, Fn.apply(x)", function()
  -- PyTorch's custom-Function tutorial: P3(x) = (5x^3 - 3x) / 2
  local LegendrePolynomial3 = torch.autograd.Function:extend("LegendrePolynomial3")
  function LegendrePolynomial3.forward(ctx, input)
    ctx.save_for_backward(input)                -- PyTorch's dot call
    return 0.5 * (5 * input ^ 3 - 3 * input)
  end
  function LegendrePolynomial3.backward(ctx, grad_output)
    local input = table.unpack(ctx.saved_tensors)
    return grad_output * 1.5 * (5 * input ^ 2 - 1)
  end
  local x = torch.linspace(-1, 1, 7, { dtype = f64, requires_grad = true })
  local P3 = LegendrePolynomial3.apply
  local y = P3(x)
  T.eq(y.grad_fn:name(), "LegendrePolynomial3Backward")
  T.near(y:detach():totable(), (0.5 * (5 * x:detach() ^ 3 - 3 * x:detach())):totable(), 1e-12)
  T.ok(torch.autograd.gradcheck(P3, { x }))
  T.ok(torch.autograd.gradcheck(function(t) return LegendrePolynomial3:apply(t) end, { x }))
  T.ok(torch.autograd.gradcheck(function(t) return LegendrePolynomial3(t) end, { x }))
  -- the tutorial's training step: y = a + b * P3(c + d * x)
  local a = torch.tensor(0.1, { dtype = f64, requires_grad = true })
  local d = torch.tensor(0.3, { dtype = f64, requires_grad = true })
  local loss = (a + P3(d * x:detach())):pow(2):sum()
  loss:backward()
  T.ok(a.grad ~= nil and d.grad ~= nil)
  -- a subclass inherits forward and backward
  local Sub = LegendrePolynomial3:extend("Sub")
  T.eq(Sub.apply(x).grad_fn:name(), "SubBackward")
  -- a class without forward says what to define
  local Empty = torch.autograd.Function:extend("Empty")
  T.raises(function() Empty.apply(x) end, "Empty.apply", "forward(ctx, ...)")
  T.raises(function() torch.autograd.Function.apply(x) end, "call apply on a Function")
end)

T.test("Fn.apply(x) works for the table form too, alongside Fn:apply(x) and Fn(x)", function()
  local Square = torch.autograd.Function {
    name = "Square",
    forward = function(ctx, x) ctx:save_for_backward(x); return x * x end,
    backward = function(ctx, g) return 2 * g * ctx.saved_tensors[1] end,
  }
  local x = torch.tensor({ 1.0, -2.0, 3.0 }, { dtype = f64, requires_grad = true })
  for _, y in ipairs({ Square.apply(x), Square:apply(x), Square(x) }) do
    T.eq(y.grad_fn:name(), "SquareBackward")
    T.tensor(y:detach(), { 1, 4, 9 })
  end
  T.ok(torch.autograd.gradcheck(Square.apply, { x }))
end)

T.test("torch.autograd.Variable gives a tensor, as in PyTorch", function()
  local Variable = torch.autograd.Variable
  local t = torch.tensor({ 1.0, 2.0 })
  local v = Variable(t)
  T.eq(v.requires_grad, false); T.tensor(v, { 1, 2 })
  v[1] = 5                                      -- it shares t's storage
  T.eq(t[1], 5)
  local w = Variable(t, { requires_grad = true })
  T.eq(w.requires_grad, true); T.eq(w.is_leaf, true)
  T.eq(t.requires_grad, false, "t itself is left as it was")
  T.eq(Variable(t, true).requires_grad, true)
  ;(w * 3):sum():backward()
  T.tensor(w.grad, { 3, 3 })
  -- a tensor with history becomes a leaf without it
  T.eq(Variable(w * 2).grad_fn, nil)
  T.raises(function() Variable(t, { requires_grd = true }) end,
    "torch.autograd.Variable: unknown option 'requires_grd' (did you mean 'requires_grad'?)")
  T.raises(function() Variable(t, { volatile = true }) end, "torch.no_grad()")
  T.raises(function() Variable({ 1, 2 }) end, "argument 'data' must be a tensor")
end)

------------------------------------------------------------------------------
-- 4 (cont.). torch.cuda against the fake "cuda" backend: last, as loading it lasts
------------------------------------------------------------------------------
local build = os.getenv("BUILD") or "build"
package.cpath = build .. "/tests/?.so;" .. package.cpath
local ok_load, fake = pcall(require, "fake_cuda")

T.test("torch.cuda with a cuda backend (the fake one of tests/fake)", function()
  if not ok_load then error(fake) end
  local c = torch.cuda
  T.eq(c.is_available(), true); T.eq(c.device_count(), 2); T.eq(c.current_device(), 0)
  c.synchronize(); c.synchronize(1); c.synchronize("cuda:1")
  c.empty_cache(); c.reset_peak_memory_stats()
  local before = c.memory_allocated()
  local x = torch.zeros(256, { device = "cuda" })   -- 1 KiB
  T.eq(c.memory_allocated() - before, 1024)
  T.ok(c.max_memory_allocated() >= c.memory_allocated())
  T.ok(c.memory_reserved() >= c.memory_allocated())
  local s = c.memory_stats()
  T.eq(s["allocated_bytes.all.current"], c.memory_allocated()); T.eq(s.allocated, c.memory_allocated())
  T.raises(function() c.memory_allocated(5) end, "cuda:5 does not exist")
  -- seeding cuda seeds each device's generator; this test backend runs the CPU's kernels,
  -- which draw from the CPU's, and torch.manual_seed seeds both
  c.manual_seed(3); T.eq(c.initial_seed(), 3)
  c.manual_seed_all(4); T.eq(c.initial_seed(1), 4)
  torch.manual_seed(3); local a = torch.randn(4, { device = "cuda" })
  torch.manual_seed(3); local b = torch.randn(4, { device = "cuda" })
  T.ok(torch.equal(a, b)); T.eq(c.initial_seed(), 3)
  -- moves, with a dtype too
  T.eq(tostring(x:cpu():cuda().device), "cuda:0")
  local y = torch.tensor({ 1.5 }):to("cuda:1", f64)
  T.eq(tostring(y.device), "cuda:1"); T.eq(y.dtype, f64)
  T.eq(tostring(y:to(torch.device("cpu")).device), "cpu")
  T.raises(function() return y:to("cuda:3") end, "to: argument 'device'", "cuda:3 does not exist")
end)

T.done()
