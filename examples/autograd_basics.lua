-- autograd_basics.lua — the first things to try with automatic differentiation, one at a
-- time, each printed under a comment that says what to expect:
-- requires_grad and .grad, backward of a scalar and of a vector, gradients that
-- accumulate, the graph (grad_fn, is_leaf), torch.no_grad and detach, torch.autograd.grad,
-- a custom torch.autograd.Function, gradcheck, and gradients of gradients.
--   lutorch examples/autograd_basics.lua
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local o = common.options(arg, "usage: lutorch examples/autograd_basics.lua\n\n"
  .. "Runs through the basics of torch.autograd and prints each result.", {})

local DEV = o.device          -- --device cuda: every tensor below on the GPU
local function section(title) print(("\n-- %s"):format(title)) end

section("1. a leaf that records what is done with it: requires_grad")
local x = torch.tensor({ 1.0, 2.0, 3.0 }, { requires_grad = true, device = DEV })
print("x =", x)
local y = (x * x):sum()                  -- y = x1^2 + x2^2 + x3^2
print("y = (x * x):sum() =", y)

section("2. backward() fills .grad of the leaves: dy/dx = 2x")
y:backward()
print("x.grad =", x.grad)                -- tensor([2., 4., 6.])

section("3. gradients accumulate: a second backward adds to .grad, so reset it")
y = (x * x):sum()
y:backward()
print("after another backward, x.grad =", x.grad)   -- tensor([4., 8., 12.])
x.grad:zero_()                           -- (an optimizer's zero_grad() does this)
print("after x.grad:zero_(), x.grad =", x.grad)

section("4. the graph: results remember the op that made them")
local z = x:exp() * 2
print("z.grad_fn:name() =", z.grad_fn:name(), "| z.is_leaf =", z.is_leaf, "| x.is_leaf =", x.is_leaf)
print("x.grad_fn =", x.grad_fn)          -- nil: x was made by the user, not by an op

section("5. backward of a non-scalar needs the gradient of what comes after it")
x.grad = nil
z:backward(torch.tensor({ 1.0, 0.0, 0.5 }, { device = DEV }))          -- a vector-Jacobian product
print("x.grad =", x.grad)                            -- 2 exp(x) * {1, 0, 0.5}

section("6. torch.no_grad: nothing inside is recorded (evaluation, parameter updates)")
local w = torch.no_grad(function() return x * 10 end)
print("inside no_grad: (x * 10).requires_grad =", w.requires_grad)
local d = x:detach()                                 -- same numbers, no history
print("x:detach().requires_grad =", d.requires_grad)

section("7. torch.autograd.grad: the gradient as a value, .grad left alone")
x.grad = nil
local s = (x ^ 3):sum()
local g = torch.autograd.grad(s, x)                  -- 3x^2
print("d/dx sum(x^3) =", g, "| x.grad =", x.grad)

section("8. a custom Function: forward computes, backward gives the gradient")
-- softplus(x) = log(1 + exp(x)); its derivative is sigmoid(x)
local Softplus = torch.autograd.Function{
  name = "MySoftplus",
  forward = function(ctx, t)
    ctx:save_for_backward(t)
    return (t:exp() + 1):log()
  end,
  backward = function(ctx, grad_out)
    local t = ctx.saved_tensors[1]
    return grad_out * t:sigmoid()
  end,
}
local a = torch.tensor({ -1.0, 0.0, 2.0 }, { requires_grad = true, device = DEV })
local sp = Softplus:apply(a)                         -- or Softplus(a)
print("softplus(a) =", sp, "| grad_fn:", sp.grad_fn:name())
sp:sum():backward()
print("a.grad = sigmoid(a) =", a.grad)

section("9. gradcheck: compare backward with finite differences (use float64)")
local a64 = torch.tensor({ -1.0, 0.0, 2.0 }, { dtype = "float64", requires_grad = true, device = DEV })
print("gradcheck(Softplus) =", torch.autograd.gradcheck(function(t) return Softplus(t) end, { a64 }))
local m = torch.randn(3, 4, { dtype = "float64", requires_grad = true, device = DEV })
local v = torch.randn(4, { dtype = "float64", requires_grad = true, device = DEV })
print("gradcheck(tanh(m @ v)) =", torch.autograd.gradcheck(function(mm, vv) return mm:mv(vv):tanh() end, { m, v }))
local Wrong = torch.autograd.Function{                -- a deliberately wrong derivative
  forward = function(ctx, t) return t * t end,
  backward = function(ctx, grad_out) return grad_out end,  -- should be 2 t grad_out
}
local ok, msg = torch.autograd.gradcheck(function(t) return Wrong(t) end, { a64 }, { raise_exception = false })
print("gradcheck(a wrong backward) =", ok, "--", (tostring(msg):gsub("\n.*", "")))

section("10. gradients of gradients: create_graph = true")
local u = torch.tensor({ 2.0 }, { requires_grad = true, device = DEV })
local f = u ^ 3                                      -- f = u^3
local df = torch.autograd.grad(f:sum(), u, { create_graph = true })   -- 3u^2 = 12, with its own graph
local d2f = torch.autograd.grad(df:sum(), u, { create_graph = true }) -- 6u = 12
local d3f = torch.autograd.grad(d2f:sum(), u)                          -- 6
print(("at u = 2: f = %g, f' = %g, f'' = %g, f''' = %g"):format(f:item(), df:item(), d2f:item(), d3f:item()))

section("11. a step of gradient descent by hand: minimise (p - 3)^2")
local p = torch.tensor({ 0.0 }, { requires_grad = true, device = DEV })
for _ = 1, 50 do
  local loss = ((p - 3) ^ 2):sum()
  loss:backward()
  torch.no_grad(function() p:sub_(p.grad * 0.1) end) -- the update is not part of the graph
  p.grad:zero_()
end
print(("after 50 steps p = %.4f (the minimum is at 3)"):format(p:item()))
