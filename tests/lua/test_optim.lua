-- optim: the foreach/fused ops, optimizer trajectories against PyTorch,
-- Rosenbrock, state_dict round trips, Torch7's functional forms, errors.
-- lib/ beside the build is on the path already; this also covers BUILD=/elsewhere
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local P = require "pyref"
local optim = require "optim"

local f64 = { dtype = torch.float64 }
torch.manual_seed(7)

---------------------------------------------------------------- foreach ops
T.test("_foreach_norm: 2, 1, inf, p, mixed dtypes, non-contiguous", function()
  local a = torch.randn(3, 4, f64)
  local b = torch.randn(50000, 3):t()         -- non-contiguous float32
  local c = torch.randn(70000, f64)
  local n = torch._foreach_norm({ a, b, c })
  T.tensor(n, nil, { dtype = "float64", shape = { 3 } })
  T.near(n[1], a:norm():item(), 1e-12)
  T.near(n[2], b:double():norm():item(), 1e-6)
  T.near(n[3], c:norm():item(), 1e-12)
  T.near(torch._foreach_norm({ a }, 1)[1], a:abs():sum():item(), 1e-12)
  T.near(torch._foreach_norm({ a }, math.huge)[1], a:abs():max():item(), 0)
  T.near(torch._foreach_norm({ a }, -math.huge)[1], a:abs():min():item(), 0)
  T.near(torch._foreach_norm({ a }, 3)[1], (a:abs() ^ 3):sum():item() ^ (1 / 3), 1e-12)
  T.tensor(torch._foreach_norm({ torch.ones(4) }), { 2 }, { dtype = "float32" })
end)

T.test("_foreach_mul_, _foreach_add_, _foreach_zero_ in place (incl. non-contiguous)", function()
  local a = torch.randn(3, 4, f64)
  local bt = torch.randn(4, 3, f64)
  local b = bt:t()
  local a0, b0 = a:clone(), b:clone()
  torch._foreach_mul_({ a, b }, 3)
  T.tensor(a, (a0 * 3):totable(), { tol = 1e-15 })
  T.tensor(b, (b0 * 3):totable(), { tol = 1e-15 })
  torch._foreach_mul_({ a }, torch.tensor(0.5, f64))
  T.tensor(a, (a0 * 1.5):totable(), { tol = 1e-15 })
  torch._foreach_add_({ a, b }, { a0, b0 }, { alpha = -1.5 })
  T.near(a:abs():max():item(), 0, 1e-14)
  T.tensor(bt, (b0 * 1.5):t():totable(), { tol = 1e-14 })
  torch._foreach_zero_({ a, b })
  T.eq(bt:abs():sum():item(), 0)
  local big = torch.randn(200000)
  local c = torch.randn(7, f64)
  local c0 = c:clone()
  torch._foreach_mul_({ big, c }, 0.5)               -- mixed float32 / float64, parallel
  T.tensor(c, (c0 * 0.5):totable())
  torch._foreach_mul_({ big }, 0)
  T.eq(big:abs():sum():item(), 0)
end)

T.test("foreach ops: errors name the op and argument", function()
  local a = torch.randn(3, f64)
  T.raises(function() torch._foreach_add_({ a }, { a, a }) end, "_foreach_add_", "'other'")
  T.raises(function() torch._foreach_add_({ a }, { torch.randn(3) }) end, "_foreach_add_", "dtype")
  T.raises(function() torch._foreach_add_({ a }, { torch.randn(4, f64) }) end, "_foreach_add_", "shape")
  T.raises(function() torch._foreach_mul_({ torch.ones(3, { dtype = torch.int64 }) }, 2) end, "_foreach_mul_", "float32 or float64")
  T.raises(function() torch._foreach_norm({}) end, "_foreach_norm")
  T.raises(function()
    torch._fused_adam_({ a }, { a }, { a }, {}, {}, {}, { lr = 1, beta1 = 0.9, beta2 = 0.9, eps = 1 })
  end, "_fused_adam_")
end)

---------------------------------------------------------------- trajectories vs PyTorch
local N = 6
local shapes = { { 3, 4 }, { 5 } }
local init, grads = {}, {}
for i, s in ipairs(shapes) do
  init[i] = torch.randn(s, f64)
  grads[i] = torch.randn({ N, table.unpack(s) }, f64)
end

-- {class, options}; the second parameter has no gradient on step 3 (skipped)
local configs = {
  { "SGD", { lr = 0.1 } },
  { "SGD", { lr = 0.1, momentum = 0.9 } },
  { "SGD", { lr = 0.05, momentum = 0.9, dampening = 0.3, weight_decay = 0.1, maximize = true } },
  { "SGD", { lr = 0.1, momentum = 0.8, nesterov = true, weight_decay = 0.01 } },
  { "Adam", { lr = 0.1 } },
  { "Adam", { lr = 0.05, betas = { 0.8, 0.95 }, eps = 1e-6, weight_decay = 0.1, amsgrad = true } },
  { "Adam", { lr = 0.05, maximize = true } },
  { "AdamW", { lr = 0.1 } },
  { "AdamW", { lr = 0.1, weight_decay = 0.3, amsgrad = true, maximize = true } },
  { "Adamax", { lr = 0.1, weight_decay = 0.1 } },
  { "Adamax", { lr = 0.1, maximize = true } },
  -- PyTorch 1.13's single-tensor NAdam counts mu twice in mu_product_next
  -- (fixed in 2.0); its foreach path has the published formula, as here
  { "NAdam", { lr = 0.1, foreach = true } },
  { "NAdam", { lr = 0.05, weight_decay = 0.1, momentum_decay = 0.01, foreach = true } },
  { "RAdam", { lr = 0.1 } },
  { "RAdam", { lr = 0.1, betas = { 0.9, 0.5 }, weight_decay = 0.1 } },   -- rectified from step 3 on
  { "RMSprop", { lr = 0.01 } },
  { "RMSprop", { lr = 0.01, momentum = 0.9, centered = true, weight_decay = 0.1 } },
  { "RMSprop", { lr = 0.01, alpha = 0.9, centered = true, maximize = true } },
  { "Adagrad", { lr = 0.1 } },
  { "Adagrad", { lr = 0.1, lr_decay = 0.1, weight_decay = 0.1, initial_accumulator_value = 0.5, maximize = true } },
  { "Adadelta", { lr = 1.0 } },
  { "Adadelta", { lr = 0.5, rho = 0.8, eps = 1e-4, weight_decay = 0.1, maximize = true } },
}

local function pykw(opts)
  local parts = {}
  for k, v in pairs(opts) do
    local s
    if type(v) == "table" then s = ("(%s, %s)"):format(v[1], v[2])
    elseif type(v) == "boolean" then s = v and "True" or "False"
    else s = ("%.17g"):format(v) end
    parts[#parts + 1] = k .. "=" .. s
  end
  return "dict(" .. table.concat(parts, ", ") .. ")"
end

local function run_lua(cls, opts, dtype)
  local ps = {}
  for i = 1, #init do ps[i] = init[i]:to(dtype):clone():requires_grad_() end
  local o = optim[cls](ps, opts)
  for s = 1, N do
    for i, p in ipairs(ps) do
      if i == 2 and s == 3 then p.grad = nil else p.grad = grads[i][s]:to(dtype):clone() end
    end
    o:step()
  end
  local flat = {}
  for i, p in ipairs(ps) do flat[i] = p:detach():reshape(-1):double() end
  return torch.cat(flat)
end

local LBFGS_X0 = torch.tensor({ -1.2, 1.0, 0.5 }, f64)
local LBFGS_PY = [[
def go(ls):
    x = x0.clone().requires_grad_()
    o = torch.optim.LBFGS([x], lr=1, max_iter=8, history_size=4, line_search_fn=ls)
    def closure():
        o.zero_grad()
        a, b, c = x[0], x[1], x[2]
        loss = (1 - a) ** 2 + 100 * (b - a * a) ** 2 + (c - b) ** 2
        loss.backward()
        return loss
    for _ in range(3): o.step(closure)
    return x.detach()
xa = go(None); xb = go("strong_wolfe")
]]
local lbfgs_ref

if not P.available() then
  T.skip("optimizer trajectories against PyTorch", P.why())
else
  T.test("optimizer trajectories match PyTorch (float64 and float32)", function()
    local lines = { "res = []" }
    for _, c in ipairs(configs) do
      lines[#lines + 1] = ("res.append(run(torch.optim.%s, %s))"):format(c[1], pykw(c[2]))
    end
    local body = ([[
def run(cls, kw):
    ps = [p1.clone().requires_grad_(), p2.clone().requires_grad_()]
    gs = [g1, g2]
    o = cls(ps, **kw)
    for s in range(%d):
        for i, p in enumerate(ps):
            p.grad = None if (i == 1 and s == 2) else gs[i][s].clone()
        o.step()
    return torch.cat([p.detach().reshape(-1) for p in ps])
]]):format(N) .. table.concat(lines, "\n") .. "\nout = torch.stack(res)"
    -- one Python run also computes the LBFGS reference of the next test
    body = body .. "\n" .. LBFGS_PY
    local all = P.run({ p1 = init[1], p2 = init[2], g1 = grads[1], g2 = grads[2], x0 = LBFGS_X0 }, body, { "out", "xa", "xb" })
    local r = all[1]
    lbfgs_ref = { all[2], all[3] }
    for i, c in ipairs(configs) do
      local got = run_lua(c[1], c[2], torch.float64)
      local want = r[i]
      local err = (got - want):abs():max():item()
      T.ok(err < 1e-12, ("%s %s: max error %g"):format(c[1], pykw(c[2]), err))
      local got32 = run_lua(c[1], c[2], torch.float32)
      local err32 = (got32 - want):abs():max():item()
      T.ok(err32 < 2e-4 * (1 + want:abs():max():item()), ("%s %s float32: max error %g"):format(c[1], pykw(c[2]), err32))
    end
  end)

  T.test("LBFGS trajectory matches PyTorch (plain and strong_wolfe)", function()
    local x0 = LBFGS_X0
    local function lua_run(ls)
      local x = x0:clone():requires_grad_()
      local o = optim.LBFGS({ x }, { lr = 1, max_iter = 8, history_size = 4, line_search_fn = ls })
      local losses = {}
      for _ = 1, 3 do
        local l = o:step(function()
          o:zero_grad()
          local a, b, c = x[1], x[2], x[3]
          local loss = (1 - a) ^ 2 + 100 * (b - a * a) ^ 2 + (c - b) ^ 2
          loss:backward()
          return loss
        end)
        losses[#losses + 1] = l:item()
      end
      return x:detach(), losses
    end
    local r = lbfgs_ref

    local xa = lua_run(nil)
    local xb = lua_run("strong_wolfe")
    T.ok((xa - r[1]):abs():max():item() < 1e-9, "plain LBFGS: " .. tostring(xa) .. " vs " .. tostring(r[1]))
    T.ok((xb - r[2]):abs():max():item() < 1e-9, "strong_wolfe LBFGS: " .. tostring(xb) .. " vs " .. tostring(r[2]))
  end)
end

---------------------------------------------------------------- Rosenbrock
local function rosen(x) return (1 - x[1]) ^ 2 + 100 * (x[2] - x[1] ^ 2) ^ 2 end

local rosen_cases = {   -- {optimizer, options, steps, distance to (1, 1) reached}
  { "SGD", { lr = 1e-3, momentum = 0.9 }, 2000, 1e-2 },
  { "Adam", { lr = 0.02 }, 3000, 1e-2 },
  { "AdamW", { lr = 0.02, weight_decay = 0 }, 3000, 1e-2 },
  { "Adamax", { lr = 0.05 }, 3500, 1e-2 },
  { "NAdam", { lr = 0.01, betas = { 0.9, 0.99 } }, 3000, 2e-2 },
  { "RAdam", { lr = 0.01, betas = { 0.9, 0.99 } }, 2000, 1e-2 },
  { "RMSprop", { lr = 1e-3, momentum = 0.9 }, 1500, 1e-2 },
  { "Adagrad", { lr = 1 }, 3000, 0.3 },        -- slow on this valley, but on its way
  { "Adadelta", { lr = 1 }, 3000, 0.7 },
}
T.test("Rosenbrock minimised by each optimizer", function()
  for _, c in ipairs(rosen_cases) do
    local x = torch.tensor({ -1.5, 2.0 }, f64):requires_grad_()
    local o = optim[c[1]]({ x }, c[2])
    for _ = 1, c[3] do
      o:zero_grad()
      rosen(x):backward()
      o:step()
    end
    local d = (x:detach() - torch.ones(2, f64)):norm():item()
    T.ok(d < c[4], ("%s: distance to the minimum %g after %d steps"):format(c[1], d, c[3]))
  end
  local x = torch.tensor({ -1.5, 2.0 }, f64):requires_grad_()
  local o = optim.LBFGS({ x }, { line_search_fn = "strong_wolfe", max_iter = 100 })
  o:step(function() o:zero_grad(); local l = rosen(x); l:backward(); return l end)
  T.ok((x:detach() - torch.ones(2, f64)):norm():item() < 1e-5, "LBFGS strong_wolfe reaches the minimum")
  T.ok(o.state[x].n_iter < 60, "LBFGS iterations: " .. o.state[x].n_iter)
end)

---------------------------------------------------------------- API
T.test("param groups, lr writable, skipped params, zero_grad", function()
  local a = torch.ones(2, f64):requires_grad_()
  local b = torch.ones(2, f64):requires_grad_()
  local c = torch.ones(2, f64):requires_grad_()
  local o = optim.SGD({ { params = { a } }, { params = { b }, lr = 1 } }, { lr = 0.1 })
  o:add_param_group({ params = { c }, lr = 0.5 })
  T.eq(#o.param_groups, 3)
  T.eq(o.param_groups[3].momentum, 0)
  a.grad = torch.ones(2, f64); b.grad = torch.ones(2, f64)
  o.param_groups[1].lr = 0.25
  o:step()
  T.tensor(a, { 0.75, 0.75 }); T.tensor(b, { 0, 0 }); T.tensor(c, { 1, 1 })
  o:zero_grad({ set_to_none = false })
  T.tensor(a.grad, { 0, 0 })
  o:zero_grad()
  T.eq(a.grad, nil)
  T.raises(function() o:add_param_group({ params = { a } }) end, "SGD", "more than one parameter group")
  -- step(closure) returns the loss and runs it with grad enabled
  local l = torch.no_grad(function()
    return o:step(function() T.ok(torch.is_grad_enabled()); o:zero_grad(); local y = (a * a):sum(); y:backward(); return y end)
  end)
  T.near(l:item(), 2 * 0.75 ^ 2, 1e-12)
  -- float32 and float64 parameters in one group: one fused call per dtype
  local h = torch.ones(3):requires_grad_()
  local d = torch.ones(2, f64):requires_grad_()
  local oa = optim.Adam({ h, d }, { lr = 0.5 })
  h.grad = torch.ones(3); d.grad = torch.ones(2, f64)
  oa:step()
  T.tensor(h, { 0.5, 0.5, 0.5 }, { tol = 1e-7 }); T.tensor(d, { 0.5, 0.5 }, { tol = 1e-7 })
end)

T.test("state_dict round trip continues identically", function()
  for _, cls in ipairs({ "SGD", "Adam", "NAdam", "RMSprop", "Adagrad", "Adadelta" }) do
    local opts = cls == "SGD" and { lr = 0.1, momentum = 0.9 } or (cls == "RMSprop" and { centered = true, momentum = 0.5 } or {})
    local p1 = { init[1]:clone():requires_grad_(), init[2]:clone():requires_grad_() }
    local o1 = optim[cls](p1, opts)
    local function feed(ps, s) for i, p in ipairs(ps) do p.grad = grads[i][s]:clone() end end
    for s = 1, 3 do feed(p1, s); o1:step() end
    local sd = o1:state_dict()
    T.eq(#sd.param_groups, 1)
    T.eq(sd.param_groups[1].params, { 1, 2 })
    T.ok(sd.state[1] ~= nil, cls .. " state saved by index")
    local p2 = { p1[1]:detach():clone():requires_grad_(), p1[2]:detach():clone():requires_grad_() }
    local o2 = optim[cls](p2, { lr = 123 })
    o2:load_state_dict(sd)
    T.eq(o2.param_groups[1].lr, o1.param_groups[1].lr)
    for s = 4, 6 do feed(p1, s); o1:step(); feed(p2, s); o2:step() end
    for i = 1, 2 do T.eq((p1[i] - p2[i]):abs():max():item(), 0, cls) end
  end
end)

T.test("fused Adam on large (chunked, parallel) and non-contiguous parameters", function()
  local big = torch.randn(150001, f64):requires_grad_()
  local nc = torch.randn(40, 30, f64):t():detach():requires_grad_()   -- a non-contiguous leaf
  T.ok(not nc:is_contiguous())
  local ref = { big:detach():clone(), nc:detach():clone() }
  local m, v = { torch.zeros_like(ref[1]), torch.zeros_like(ref[2]) }, { torch.zeros_like(ref[1]), torch.zeros_like(ref[2]) }
  local o = optim.Adam({ big, nc }, { lr = 0.01, weight_decay = 0.1 })
  for s = 1, 2 do
    local gs = { torch.randn(150001, f64), torch.randn(30, 40, f64) }
    big.grad, nc.grad = gs[1], gs[2]
    o:step()
    for i = 1, 2 do
      local g = gs[i] + ref[i] * 0.1
      m[i] = m[i] * 0.9 + g * 0.1
      v[i] = v[i] * 0.999 + g * g * 0.001
      local denom = (v[i] / (1 - 0.999 ^ s)):sqrt() + 1e-8
      ref[i] = ref[i] - m[i] / denom * (0.01 / (1 - 0.9 ^ s))
    end
  end
  T.ok((big:detach() - ref[1]):abs():max():item() < 1e-12, "large parameter")
  T.ok((nc:detach() - ref[2]):abs():max():item() < 1e-12, "non-contiguous parameter")
  T.ok(not nc:is_contiguous(), "the parameter keeps its layout")
end)

---------------------------------------------------------------- Torch7 functional forms
T.test("Torch7 optim.sgd/adam/rmsprop/adagrad/lbfgs/cg minimise a quadratic", function()
  local A = torch.tensor({ { 3, 1, 0 }, { 1, 4, 1 }, { 0, 1, 2 } }, f64)
  local bv = torch.tensor({ 1, -2, 3 }, f64)
  local xstar = torch.tensor({ 14, -23, 40 }, f64) / 19    -- A \ b
  local nev = 0
  local function feval(x)
    nev = nev + 1
    local Ax = A:mv(x)
    return (0.5 * x:dot(Ax) - bv:dot(x)):item(), Ax - bv
  end
  -- one sgd step is x - lr * grad
  local x = torch.zeros(3, f64)
  local _, fs = optim.sgd(feval, x, { learningRate = 0.1 })
  T.eq(fs[1], 0)
  T.tensor(x, (bv * 0.1):totable(), { tol = 1e-15 })
  local cases = {
    { optim.sgd, { learningRate = 0.1, momentum = 0.5 }, 300 },
    { optim.adam, { learningRate = 0.05 }, 2000 },
    { optim.rmsprop, { learningRate = 0.01 }, 2000 },
    { optim.adagrad, { learningRate = 0.5 }, 2000 },
  }
  for k, c in ipairs(cases) do
    local xk = torch.zeros(3, f64)
    local state = {}
    for _ = 1, c[3] do c[1](feval, xk, c[2], state) end
    T.ok((xk - xstar):abs():max():item() < 1e-2, ("case %d: %s"):format(k, tostring(xk)))
  end
  local xl = torch.zeros(3, f64)
  local _, fh = optim.lbfgs(feval, xl, { maxIter = 50, tolFun = 1e-12, tolX = 1e-15 })
  T.ok((xl - xstar):abs():max():item() < 1e-6, "lbfgs " .. tostring(xl))
  T.ok(fh[#fh] < fh[1])
  local xw = torch.zeros(3, f64)
  optim.lbfgs(feval, xw, { maxIter = 50, tolFun = 1e-12, tolX = 1e-15, lineSearch = optim.lswolfe })
  T.ok((xw - xstar):abs():max():item() < 1e-6, "lbfgs wolfe " .. tostring(xw))
  local xc = torch.zeros(3, f64)
  -- Rasmussen's line search is inexact: 25 evaluations (maxIter 20) come within 1e-3, 50 converge
  local _, fc = optim.cg(feval, xc, { maxIter = 40 })
  T.ok((xc - xstar):abs():max():item() < 1e-5, "cg " .. tostring(xc))
  T.ok(fc[#fc] <= fc[1])
end)

---------------------------------------------------------------- errors
T.test("errors name the optimizer and the option", function()
  local p = torch.zeros(2, { requires_grad = true })
  T.raises(function() optim.SGD({ p }, { lr = -1 }) end, "SGD", "learning rate", "'lr'")
  T.raises(function() optim.Adam({ p }, { betas = { 1.5, 0.9 } }) end, "Adam", "beta", "index 1")
  T.raises(function() optim.AdamW({ p }, { betas = { 0.9, 1 } }) end, "AdamW", "index 2")
  T.raises(function() optim.Adam({ p }, { eps = -1 }) end, "Adam", "'eps'")
  T.raises(function() optim.RMSprop({ p }, { momentum = -0.1 }) end, "RMSprop", "'momentum'")
  T.raises(function() optim.SGD({ p }, { nesterov = true }) end, "SGD", "nesterov")
  T.raises(function() optim.Adam({ p }, { lrr = 1 }) end, "Adam", "unknown option 'lrr'")
  T.raises(function() optim.Adam(p) end, "Adam", "'params'", "single tensor")
  T.raises(function() optim.Adam({ p, 3 }) end, "Adam", "'params'", "element 2")
  T.raises(function() optim.Adam({}) end, "Adam", "empty")
  T.raises(function() optim.Adam({ torch.zeros(2, { dtype = torch.int64 }) }) end, "Adam", "floating point")
  T.raises(function() optim.Adadelta({ p }, { rho = 2 }) end, "Adadelta", "'rho'")
  T.raises(function() optim.LBFGS({ p }):step() end, "LBFGS", "closure")
  T.raises(function() optim.LBFGS({ p }, { line_search_fn = "armijo" }) end, "LBFGS", "line_search_fn")
  T.raises(function() optim.sgd(1, p) end, "optim.sgd", "opfunc")
end)

T.test("require 'optim' sets the global", function()
  T.eq(rawget(_G, "optim"), optim)
  T.ok(optim.lr_scheduler.StepLR ~= nil)
end)

T.done()
