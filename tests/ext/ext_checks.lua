-- ext_checks.lua — the C extensions of tests/sh/test_extension.sh, checked from whichever
-- host runs this file (build/lutorch, or lua5.4 with torch.so): values, gradcheck,
-- opcheck, nn.Module use, the profiler, errors, and relu re-declared through the C API
-- against the built-in relu.
local torch = require "torch"
local T = require "testing"
local nn = require "nn"
require "swish_ext"
require "builtin_ext"
local Swish = require "swish_nn"
local f64 = { dtype = torch.float64 }

local function maxdiff(a, b) return (a:double() - b:double()):abs():max():item() end

T.test("swish values, float32 and float64, non-contiguous input", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local x = torch.randn(4, 5, { dtype = dt })
    T.ok(maxdiff(torch.ops.swish_ext.swish(x), x * torch.sigmoid(x)) < 1e-6)
    local xt = x:t()
    T.eq(torch.ops.swish_ext.swish(xt).shape, { 5, 4 })
    T.ok(maxdiff(torch.ops.swish_ext.swish(xt), xt * torch.sigmoid(xt)) < 1e-6)
  end
end)

T.test("swish gradcheck and opcheck", function()
  local x = torch.randn(3, 4, f64):requires_grad_(true)
  T.ok(torch.autograd.gradcheck(torch.ops.swish_ext.swish, { x }))
  local y = torch.ops.swish_ext.swish(x)
  T.ok(tostring(y.grad_fn):find("swish_ext::swishBackward", 1, true), tostring(y.grad_fn))
  local r = torch.library.opcheck("swish_ext::swish", { torch.randn(2, 3, f64) })
  T.eq(r.test_faketensor, "SUCCESS"); T.eq(r.test_gradcheck, "SUCCESS")
end)

T.test("swish inside an nn.Module", function()
  torch.manual_seed(1)
  local net = nn.Sequential(nn.Linear(4, 3), Swish())
  local x = torch.randn(6, 4)
  local out = net(x)
  local lin = net[1]
  local ref = nn.functional.linear(x, lin.weight, lin.bias)
  T.ok(maxdiff(out, ref * torch.sigmoid(ref)) < 1e-6)
  out:sum():backward()
  local g = lin.weight.grad:clone()
  lin.weight.grad = nil
  local r2 = nn.functional.linear(x, lin.weight, lin.bias)
  local s2 = r2 * torch.sigmoid(r2)
  s2:sum():backward()
  T.ok(maxdiff(g, lin.weight.grad) < 1e-5)
end)

T.test("the profiler sees the extension's op", function()
  local x = torch.randn(3)
  local p = torch.profile(function() torch.ops.swish_ext.swish(x) end)
  T.eq(p["swish_ext::swish"] and p["swish_ext::swish"].calls, 1)
end)

T.test("errors name the op and the argument", function()
  T.raises(function() torch.ops.swish_ext.swish(torch.ones(2, { dtype = torch.int64 })) end,
    "swish_ext::swish: expected a float32 or float64 tensor, got int64")
  T.raises(function() torch.ops.swish_ext.swish("x") end, "swish_ext::swish: argument 'x' must be Tensor, got string")
end)

T.test("relu through the C extension API equals the built-in relu", function()
  local x = torch.randn(5, 6, f64)
  local a, b = torch.ops.builtin_ext.relu(x), torch.relu(x)
  T.eq(maxdiff(a, b), 0)
  local x1 = x:clone():requires_grad_(true)
  local x2 = x:clone():requires_grad_(true)
  local g = torch.randn(5, 6, f64)
  torch.ops.builtin_ext.relu(x1):backward(g)
  torch.relu(x2):backward(g)
  T.eq(maxdiff(x1.grad, x2.grad), 0)
  local xs = (torch.rand(4, f64) + 0.1) * torch.tensor({ 1, -1, 1, -1 }, f64)   -- away from the kink
  xs:requires_grad_(true)
  T.ok(torch.autograd.gradcheck(torch.ops.builtin_ext.relu, { xs }))
  T.ok(torch.autograd.gradgradcheck(torch.ops.builtin_ext.relu, { xs }))
  local r = torch.library.opcheck("builtin_ext::relu", { torch.randn(3, f64) })
  T.eq(r.test_schema, "SUCCESS"); T.eq(r.test_faketensor, "SUCCESS")
end)

T.test("requiring an extension twice is harmless", function()
  package.loaded.swish_ext = nil
  require "swish_ext"
  T.ok(torch.ops.swish_ext.swish(torch.zeros(1)):item() == 0)
end)

T.done()
