-- test_optim7.lua — Torch7's optim package under `lutorch --torch7` (tests/sh/test_torch7_mode.sh):
-- each function's first steps against its update rule computed here element by element in
-- plain Lua, the state it keeps, convergence on Rosenbrock's function, the option checks,
-- ConfusionMatrix's numbers, Logger's file and its PNG plot.
local T = require "testing"
require "optim"

-- f(x) = 0.5 * sum a_i x_i^2 on two elements: the gradient is a_i x_i
local A = { 1, 4 }
local function quad(x)
  local v = x:totable()
  local f, g = 0, {}
  for i = 1, 2 do f = f + 0.5 * A[i] * v[i] ^ 2; g[i] = A[i] * v[i] end
  return f, torch.Tensor(g)
end
local X0 = { 1.5, -0.5 }

-- runs optimizer `name` n steps from X0 and the hand rule `rule(x, g, k)` (x, g: Lua lists;
-- k the step) alongside, comparing x after each step
local function against(name, config, n, rule, tol)
  local x = torch.Tensor(X0)
  local hx = { X0[1], X0[2] }
  local state = {}
  for k = 1, n do
    local _, fs = optim[name](quad, x, config, state)
    T.near(fs[1], 0.5 * (A[1] * hx[1] ^ 2 + A[2] * hx[2] ^ 2), 1e-12, name .. " f before the step")
    local g = { A[1] * hx[1], A[2] * hx[2] }
    hx = rule(hx, g, k)
    T.tensor(x, hx, { tol = tol or 1e-12 })
  end
  return state, x
end

local function rosenbrock(x)
  local a, b = x[1], x[2]
  local f = 100 * (b - a * a) ^ 2 + (1 - a) ^ 2
  return f, torch.Tensor({ -400 * a * (b - a * a) - 2 * (1 - a), 200 * (b - a * a) })
end

T.test("sgd: learning rate decay, weight decay, momentum, dampening, nesterov", function()
  local lr, lrd, wd, mom, damp = 0.1, 0.5, 0.01, 0.9, 0.3
  local v
  local state = against("sgd", { learningRate = lr, learningRateDecay = lrd, weightDecay = wd, momentum = mom,
    dampening = damp }, 3, function(x, g, k)
      local out = {}
      for i = 1, 2 do g[i] = g[i] + wd * x[i] end
      if not v then v = { g[1], g[2] } else for i = 1, 2 do v[i] = mom * v[i] + (1 - damp) * g[i] end end
      local clr = lr / (1 + (k - 1) * lrd)
      for i = 1, 2 do out[i] = x[i] - clr * v[i] end
      return out
    end)
  T.eq(state.evalCounter, 3)
  T.ok(torch.isTensor(state.dfdx))
  v = nil
  against("sgd", { learningRate = lr, momentum = mom, dampening = 0, nesterov = true }, 3, function(x, g)
    if not v then v = { g[1], g[2] } else for i = 1, 2 do v[i] = mom * v[i] + g[i] end end
    return { x[1] - lr * (g[1] + mom * v[1]), x[2] - lr * (g[2] + mom * v[2]) }
  end)
  -- per-element learning rates and weight decays
  local lrs, wds = { 1, 0.5 }, { 0.1, 0.2 }
  local st = against("sgd", { learningRate = lr, learningRates = torch.Tensor(lrs), weightDecays = torch.Tensor(wds) }, 2,
    function(x, g)
      return { x[1] - lr * lrs[1] * (g[1] + wds[1] * x[1]), x[2] - lr * lrs[2] * (g[2] + wds[2] * x[2]) }
    end)
  T.ok(torch.isTensor(st.deltaParameters) and torch.isTensor(st.decayParameters))
  T.raises(function() optim.sgd(quad, torch.Tensor(X0), { nesterov = true, momentum = 0.9 }) end, "optim.sgd", "nesterov")
end)

T.test("asgd: decay, step and average, the third result", function()
  local eta0, lambda, alpha, t0 = 0.1, 0.05, 0.75, 1
  local eta, mu, ax = eta0, 1, nil
  local x = torch.Tensor(X0)
  local hx = { X0[1], X0[2] }
  local config = { eta0 = eta0, lambda = lambda, alpha = alpha, t0 = t0 }
  for t = 1, 4 do
    local _, _, avg = optim.asgd(quad, x, config)
    local g = { A[1] * hx[1], A[2] * hx[2] }
    for i = 1, 2 do hx[i] = (1 - lambda * eta) * hx[i] - eta * g[i] end
    if mu ~= 1 then for i = 1, 2 do ax[i] = ax[i] + mu * (hx[i] - ax[i]) end else ax = { hx[1], hx[2] } end
    eta = eta0 / (1 + lambda * eta0 * t) ^ alpha
    mu = 1 / math.max(1, t - t0)
    T.tensor(x, hx, { tol = 1e-12 }); T.tensor(avg, ax, { tol = 1e-12 })
    T.near(config.eta_t, eta, 1e-15); T.near(config.mu_t, mu, 1e-15); T.eq(config.t, t)
  end
end)

T.test("nag: the look-ahead step and the velocity", function()
  local lr, mom = 0.05, 0.8
  local v
  local x = torch.Tensor(X0)
  local hx = { X0[1], X0[2] }
  local state = {}
  for _ = 1, 4 do
    optim.nag(quad, x, { learningRate = lr, momentum = mom }, state)
    if v then for i = 1, 2 do hx[i] = hx[i] + mom * v[i] end end
    local g = { A[1] * hx[1], A[2] * hx[2] }
    if not v then v = { 0, 0 } else for i = 1, 2 do v[i] = mom * v[i] end end
    for i = 1, 2 do hx[i] = hx[i] - lr * g[i]; v[i] = v[i] - lr * g[i] end
    T.tensor(x, hx, { tol = 1e-12 }); T.tensor(state.dfdx, v, { tol = 1e-12 })
  end
  T.raises(function() optim.nag(quad, x, { momentum = 0 }) end, "optim.nag", "momentum")
end)

T.test("adagrad, adadelta, adam, adamax, rmsprop: the rules", function()
  local s = { 0, 0 }
  local st = against("adagrad", { learningRate = 0.1, learningRateDecay = 0.2 }, 3, function(x, g, k)
    local clr = 0.1 / (1 + (k - 1) * 0.2)
    local out = {}
    for i = 1, 2 do s[i] = s[i] + g[i] ^ 2; out[i] = x[i] - clr * g[i] / (math.sqrt(s[i]) + 1e-10) end
    return out
  end, 1e-10)
  T.tensor(st.paramVariance, s, { tol = 1e-12 }); T.eq(st.evalCounter, 3)

  local rho, eps = 0.9, 1e-6
  local v, acc = { 0, 0 }, { 0, 0 }
  st = against("adadelta", { rho = rho, eps = eps }, 3, function(x, g)
    local out = {}
    for i = 1, 2 do
      v[i] = rho * v[i] + (1 - rho) * g[i] ^ 2
      local d = math.sqrt(acc[i] + eps) / math.sqrt(v[i] + eps) * g[i]
      out[i] = x[i] - d
      acc[i] = rho * acc[i] + (1 - rho) * d * d
    end
    return out
  end, 1e-12)
  T.tensor(st.accDelta, acc, { tol = 1e-15 }); T.tensor(st.paramVariance, v, { tol = 1e-12 })

  local b1, b2, e = 0.9, 0.999, 1e-8
  local m, vv = { 0, 0 }, { 0, 0 }
  st = against("adam", { learningRate = 0.01 }, 3, function(x, g, t)
    local out = {}
    for i = 1, 2 do
      m[i] = b1 * m[i] + (1 - b1) * g[i]; vv[i] = b2 * vv[i] + (1 - b2) * g[i] ^ 2
      out[i] = x[i] - 0.01 * math.sqrt(1 - b2 ^ t) / (1 - b1 ^ t) * m[i] / (math.sqrt(vv[i]) + e)
    end
    return out
  end, 1e-12)
  T.eq(st.t, 3); T.tensor(st.m, m, { tol = 1e-12 }); T.tensor(st.v, vv, { tol = 1e-12 })

  local u = { 0, 0 }
  m = { 0, 0 }
  st = against("adamax", {}, 3, function(x, g, t)
    local out = {}
    for i = 1, 2 do
      m[i] = b1 * m[i] + (1 - b1) * g[i]; u[i] = math.max(b2 * u[i], math.abs(g[i]) + 1e-38)
      out[i] = x[i] - 0.002 / (1 - b1 ^ t) * m[i] / u[i]
    end
    return out
  end, 1e-12)
  T.tensor(st.u, u, { tol = 1e-12 }); T.eq(st.t, 3)

  local ms = { 0, 0 }
  against("rmsprop", { learningRate = 0.01, alpha = 0.9 }, 3, function(x, g)
    local out = {}
    for i = 1, 2 do ms[i] = 0.9 * ms[i] + 0.1 * g[i] ^ 2; out[i] = x[i] - 0.01 * g[i] / (math.sqrt(ms[i]) + 1e-8) end
    return out
  end, 1e-10)
end)

T.test("rprop: steps grow while the sign stays, shrink when it flips", function()
  local step, prev = { 0.1, 0.1 }, { 0, 0 }
  local x = torch.Tensor(X0)
  local hx = { X0[1], X0[2] }
  local state = {}
  for _ = 1, 6 do
    local _, fs = optim.rprop(quad, x, { stepsize = 0.1, etaplus = 1.2, etaminus = 0.5, stepsizemax = 0.3 }, state)
    T.eq(#fs, 1)
    local g = { A[1] * hx[1], A[2] * hx[2] }
    for i = 1, 2 do
      local s = g[i] * prev[i]
      if s > 0 then step[i] = math.min(step[i] * 1.2, 0.3) elseif s < 0 then step[i] = math.max(step[i] * 0.5, 1e-6) end
      if s < 0 then g[i] = 0 end
      local sg = g[i] > 0 and 1 or (g[i] < 0 and -1 or 0)
      hx[i] = hx[i] - sg * step[i]
      prev[i] = g[i]
    end
    T.tensor(x, hx, { tol = 1e-12 }); T.tensor(state.stepsize, step, { tol = 1e-12 })
  end
  local _, fs = optim.rprop(quad, torch.Tensor(X0), { niter = 3 })
  T.eq(#fs, 3)
end)

T.test("lbfgs, lbfgs with lswolfe, cg reach Rosenbrock's minimum (1, 1)", function()
  local x, fs, n = optim.lbfgs(rosenbrock, torch.Tensor(2):fill(0), { maxIter = 100, lineSearch = optim.lswolfe })
  T.tensor(x, { 1, 1 }, { tol = 1e-6 }); T.ok(fs[#fs] < 1e-10 and fs[1] == 1); T.ok(n > 10 and n < 100)
  local state = {}
  x = optim.lbfgs(rosenbrock, torch.Tensor(2):fill(0), { maxIter = 100, learningRate = 0.1 }, state)
  T.tensor(x, { 1, 1 }, { tol = 1e-2 })
  T.eq(state.nIter, 100); T.ok(#state.old_dirs > 0 and state.Hdiag > 0)
  -- the stochastic form: one iteration, no evaluation after the step
  local cfg = { learningRate = 0.1, maxIter = 1 }
  local _, f1, e1 = optim.lbfgs(rosenbrock, torch.Tensor(2):fill(0), cfg)
  T.eq(#f1, 1); T.eq(e1, 1)
  -- the first fixed step is min(1, 1/|g|_1) * learningRate along -g: g(0,0) = (-2, 0)
  local y = torch.Tensor(2):fill(0)
  optim.lbfgs(rosenbrock, y, { maxIter = 1, learningRate = 0.1 })
  T.tensor(y, { 0.5 * 0.1 * 2, 0 }, { tol = 1e-15 })
  local xc, fc, nc = optim.cg(rosenbrock, torch.Tensor(2):fill(0), { maxIter = 50 })
  T.tensor(xc, { 1, 1 }, { tol = 1e-6 }); T.eq(fc[1], 1); T.ok(nc <= 70, "evaluations " .. nc)
end)

T.test("polyinterp and lswolfe", function()
  -- two points of f = (t - 2)^2: the cubic through them is f itself, minimum at 2
  T.near(optim.polyinterp(torch.Tensor({ { 0, 4, -4 }, { 3, 1, 2 } })), 2, 1e-12)
  T.near(optim.polyinterp({ { 3, 1, 2 }, { 0, 4, -4 } }), 2, 1e-12)
  -- with bounds: the general route, clipped to the interval
  T.near(optim.polyinterp({ { 0, 4, -4 }, { 3, 1, 2 } }, 0, 1.5), 1.5, 1e-9)
  -- three points of (t - 1)^2 (t + 2): its local minimum at 1
  local function p(t) return (t - 1) ^ 2 * (t + 2), 2 * (t - 1) * (t + 2) + (t - 1) ^ 2 end
  local pts = {}
  for i, t in ipairs({ 0, 0.5, 2 }) do local f, g = p(t); pts[i] = { t, f, g } end
  local pos, fmin = optim.polyinterp(pts, 0, 2)
  T.near(pos, 1, 1e-8); T.near(fmin, 0, 1e-8)
  -- lswolfe from 0 along -g of Rosenbrock: the strong Wolfe conditions hold at the step it takes
  local x = torch.Tensor(2):fill(0)
  local f0, g0 = rosenbrock(x)
  local d = g0:clone():mul(-1)
  local gtd = g0:dot(d)
  local f, g, x2, t, n = optim.lswolfe(rosenbrock, x, 1, d, f0, g0, gtd)
  T.ok(rawequal(x2, x)); T.ok(n >= 1)
  T.tensor(x, { 2 * t, 0 }, { tol = 1e-12 })
  T.ok(f <= f0 + 1e-4 * t * gtd, "sufficient decrease")
  T.ok(math.abs(g:dot(d)) <= 0.9 * math.abs(gtd), "curvature")
  T.raises(function() optim.lswolfe(rosenbrock, x, 1, d, f0, g0, gtd, { c1 = 1e-4, maxiter = 3 }) end,
    "optim.lswolfe: unknown option 'maxiter' (did you mean 'maxIter'?)")
end)

T.test("checkgrad, cmaes, de, FistaLS", function()
  local diff, dC, est = optim.checkgrad(rosenbrock, torch.Tensor({ 0.3, -0.2 }), 1e-6)
  T.ok(diff < 1e-8, "diff " .. diff); T.tensor(est, dC:totable(), { tol = 1e-5 })
  local bad = function(x) local f, g = rosenbrock(x) return f, g * 2 end
  T.ok(optim.checkgrad(bad, torch.Tensor({ 0.3, -0.2 })) > 0.1)
  torch.manualSeed(1)
  local x0 = torch.Tensor(3):fill(0)
  local best, fh, n = optim.cmaes(rosenbrock3 or function(x)
    local v = x:totable(); local f = 0
    for i = 1, 2 do f = f + 100 * (v[i + 1] - v[i] ^ 2) ^ 2 + (1 - v[i]) ^ 2 end
    return f
  end, x0, { sigma = 0.5, maxEval = 5000 })
  T.tensor(best, { 1, 1, 1 }, { tol = 1e-3 }); T.tensor(x0, { 0, 0, 0 })
  T.eq(fh[1], 2); T.ok(fh[#fh] < 1e-8 and n <= 5000)
  T.raises(function() optim.cmaes(rosenbrock, x0, { maxEval = 10 }) end, "optim.cmaes", "sigma")
  local bx, fx = optim.de(rosenbrock, torch.Tensor(2), { popsize = 30, scaleFactor = 0.5, crossoverRate = 0.9, maxFEs = 3000 })
  T.tensor(bx, { 1, 1 }, { tol = 0.1 }); T.eq(fx:size(1), 3000)
  T.ok(fx:min() < 0.01 and fx:min() < fx[1])
  local bx2 = optim.de(rosenbrock, torch.Tensor(2), { popsize = 30, scaleFactor = 0.5, crossoverRate = 0.9, maxFEs = 3000 })
  T.tensor(bx2, bx:totable())                 -- its own seeded generator: the same run
  -- min |x - c|^2 + 0.5 |x|_1: x_i = sign(c_i) max(|c_i| - 0.25, 0)
  local c = torch.Tensor({ 1, -0.1, -2 })
  local function f(x, mode)
    local r = x - c
    if mode then return r:dot(r), r * 2 end
    return r:dot(r)
  end
  local function g(x) return 0.5 * x:norm(1) end
  local function pl(x, L)
    local s = x:clone():sign()
    x:abs():add(-0.5 / L):clamp(0, math.huge):cmul(s)
  end
  local xi = torch.Tensor(3):zero()
  local params = { maxiter = 200, errthres = 1e-12, doFistaUpdate = true }
  local sol, hist = optim.FistaLS(f, g, pl, xi, params)
  T.tensor(sol, { 0.75, 0, -1.75 }, { tol = 1e-5 }); T.tensor(xi, sol:totable())
  T.ok(#hist > 1 and hist[#hist].F <= hist[1].F and params.L > 0)
end)

T.test("options: misspelt, PyTorch's names, wrong arguments", function()
  local x = torch.Tensor(X0)
  T.raises(function() optim.adamax(quad, x, { learningrate = 1 }) end, "optim.adamax: unknown option 'learningrate' (did you mean 'learningRate'?)")
  T.raises(function() optim.adadelta(quad, x, { rh = 0.9 }) end, "optim.adadelta: unknown option 'rh' (did you mean 'rho'?)")
  T.raises(function() optim.rprop(quad, x, { etaplus = 1.2, etaMinus = 0.5 }) end, "optim.rprop", "'etaMinus'", "etaminus")
  T.raises(function() optim.asgd(quad, x, { eta = 1 }) end, "optim.asgd", "'eta'", "eta0")
  T.raises(function() optim.lbfgs(quad, x, { maxiter = 3 }) end, "optim.lbfgs: unknown option 'maxiter' (did you mean 'maxIter'?)")
  T.raises(function() optim.cg(quad, x, { maxEvals = 3 }) end, "optim.cg", "'maxEvals'", "maxEval")
  T.raises(function() optim.nag(quad, x, { lr = 0.1 }) end, "optim.nag: unknown option 'lr'", "learningRate")
  T.raises(function() optim.de(quad, x, { popsize = 5, scalefactor = 0.5, maxFEs = 10 }) end, "optim.de", "scaleFactor")
  T.raises(function() optim.cmaes(quad, x, { sigma = 1, maxEvals = 10 }) end, "optim.cmaes", "maxEval")
  T.raises(function() optim.FistaLS(quad, quad, quad, x, { maxIter = 3 }) end, "optim.FistaLS", "maxiter")
  T.raises(function() optim.adam(quad, x, 0.1) end, "optim.adam: argument 'config' must be a table")
  T.raises(function() optim.adamax(1, x) end, "optim.adamax: argument 'opfunc' must be a function")
  T.raises(function() optim.lbfgs(quad, x, { lineSearch = true }) end, "optim.lbfgs", "lineSearch")
  T.tensor(x, X0)                                -- nothing moved
  local cfg = { learningRate = 0.1, myKey = "kept" }
  optim.adamax(quad, x, cfg)
  T.eq(cfg.myKey, "kept"); T.eq(cfg.t, 1)
end)

T.test("require 'optim.sgd' and x.new", function()
  T.eq(require "optim.sgd", optim); T.eq(require "optim.ConfusionMatrix", optim)
  local x = torch.Tensor(3):fill(1)
  T.eq(x.new(2):size(1), 2); T.eq(x.new():dim(), 0); T.eq(x:new():dim(), 1)   -- x:new() views x (luaT)
  T.eq(x.new({ 1, 2 }):totable(), { 1, 2 }); T.eq(torch.type(x.new(1)), "torch.DoubleTensor")
  T.eq(torch.type(torch.FloatTensor(2).new(3)), "torch.FloatTensor")
end)

T.test("ConfusionMatrix: add, batchAdd, updateValids, farFrr, tostring", function()
  local cm = optim.ConfusionMatrix({ "a", "b", "c" })
  T.eq(cm.nclasses, 3)
  cm:add(1, 1); cm:add(2, 1); cm:add(torch.Tensor({ 0.1, 0.2, 0.7 }), 3)
  cm:add(torch.Tensor({ 0.9, 0.05, 0.05 }), torch.Tensor({ 0, 1, 0 }))   -- predicted 1, target 2
  cm:add(3, 0)                                                        -- ignored
  cm:batchAdd(torch.Tensor({ { 0, 1, 0 }, { 0, 0, 1 }, { 1, 0, 0 } }), torch.Tensor({ 2, 3, -1 }))
  cm:batchAdd(torch.Tensor({ 3, 3 }), torch.Tensor({ 3, 1 }))
  -- rows: targets, columns: predictions
  T.eq(cm.mat:totable(), { { 1, 1, 1 }, { 1, 1, 0 }, { 0, 0, 3 } })
  cm:updateValids()
  T.tensor(cm.valids, { 1 / 3, 1 / 2, 1 }, { tol = 1e-6 })
  T.tensor(cm.unionvalids, { 1 / 4, 1 / 3, 3 / 4 }, { tol = 1e-6 })
  T.near(cm.totalValid, 5 / 8, 1e-12)
  T.near(cm.averageValid, (1 / 3 + 1 / 2 + 1) / 3, 1e-7)
  T.near(cm.averageUnionValid, (1 / 4 + 1 / 3 + 3 / 4) / 3, 1e-7)
  local s = tostring(cm)
  T.ok(s:find("ConfusionMatrix:\n[[       1       1       1]   33.333% \t[class: a]\n", 1, true), s)
  T.ok(s:find(" [       0       0       3]]  100.000% \t[class: c]\n", 1, true), s)
  T.ok(s:find(" + global correct: 62.5%", 1, true), s)
  local frr, far, frrs, fars = cm:farFrr()
  T.tensor(frr, { 2 / 3, 1 / 2, 0 }, { tol = 1e-12 })
  T.tensor(far, { (1 / 2 + 0) / 2, (1 / 3 + 0) / 2, (1 / 3 + 0) / 2 }, { tol = 1e-12 })
  T.eq(frrs:size(1), 3); T.eq(fars:size(1), 3)
  cm:zero()
  T.eq(cm.mat:sum(), 0); T.eq(cm.totalValid, 0)
  local c2 = optim.ConfusionMatrix(2)
  c2:add(1, 1)
  c2:updateValids()
  T.eq(c2.averageValid, 1)                      -- the class never seen does not count
  T.raises(function() c2:add(3, 1) end, "optim.ConfusionMatrix", "out of range")
end)

-- the chunks of a PNG file: {type, data} after checking each CRC
local png = require "optim.t7.png"
local function chunks(bytes)
  local out, pos = {}, 9
  while pos <= #bytes do
    local len = string.unpack(">I4", bytes, pos)
    local kind = bytes:sub(pos + 4, pos + 7)
    local data = bytes:sub(pos + 8, pos + 7 + len)
    local crc = string.unpack(">I4", bytes, pos + 8 + len)
    T.eq(crc, png.crc32(kind .. data), "CRC of " .. kind)
    out[#out + 1] = { kind, data }
    pos = pos + 12 + len
  end
  return out
end

T.test("Logger: the file, and plot() writes a PNG", function()
  local S = T.scratch()
  local dir = S.dir
  local path = dir .. "/sub/train.log"
  local log = optim.Logger(path)
  log:setNames({ "train", "test" })
  for i = 1, 5 do log:add({ 1 / i, 2 * i }) end
  log:add({ test = 11, train = 0.125 })
  log:style({ "-", "+" })
  local f = io.open(path)
  local text = f:read("a"); f:close()
  T.eq(text, "train\ttest\t\n 1.0000e+00\t 2.0000e+00\t\n 5.0000e-01\t 4.0000e+00\t\n 3.3333e-01\t 6.0000e+00\t\n"
    .. " 2.5000e-01\t 8.0000e+00\t\n 2.0000e-01\t 1.0000e+01\t\n 1.2500e-01\t 1.1000e+01\t\n")
  T.eq(#log.symbols[1], 6)
  local out = log:plot()
  T.eq(out, path .. ".png")
  f = io.open(out, "rb")
  local bytes = f:read("a"); f:close()
  T.eq(bytes:sub(1, 8), "\x89PNG\r\n\x1a\n")
  local cs = chunks(bytes)
  T.eq(cs[1][1], "IHDR"); T.eq(cs[#cs][1], "IEND")
  local w, h, depth, ctype = string.unpack(">I4>I4BB", cs[1][2])
  T.eq({ w, h, depth, ctype }, { 640, 480, 8, 2 })
  -- the stored deflate blocks hold one filter byte and w RGB pixels per row; Adler-32 at the end
  local z = cs[2][2]
  T.eq(cs[2][1], "IDAT")
  local raw, pos = {}, 3
  repeat
    local final = z:byte(pos) & 1
    local len, nlen = string.unpack("<I2<I2", z, pos + 1)
    T.eq(len ~ 0xFFFF, nlen)
    raw[#raw + 1] = z:sub(pos + 5, pos + 4 + len)
    pos = pos + 5 + len
  until final == 1
  raw = table.concat(raw)
  T.eq(#raw, h * (1 + 3 * w))
  T.eq(string.unpack(">I4", z, pos), png.adler32(raw))
  -- not blank: some pixels are neither white nor black nor grid grey
  local coloured = 0
  for i = 2, #raw - 2, 3 do
    local r, g, b = raw:byte(i, i + 2)
    if not (r == g and g == b) then coloured = coloured + 1; if coloured > 100 then break end end
  end
  T.ok(coloured > 100, "curves drawn")
  -- a keyed first row names the columns (sorted); plot by name; log scale
  local l2 = optim.Logger(dir .. "/k.log")
  l2:add({ loss = 1, acc = 0.5 }); l2:add({ loss = 0.5, acc = 0.75 })
  f = io.open(dir .. "/k.log"); text = f:read("a"); f:close()
  T.eq(text, "acc\tloss\t\n 5.0000e-01\t 1.0000e+00\t\n 7.5000e-01\t 5.0000e-01\t\n")
  l2:setlogscale(true)
  T.eq(l2:plot("loss"), dir .. "/k.log.png")
  T.raises(function() l2:plot("nope") end, "optim.Logger", "nope")
  T.raises(function() l2:add({ loss = {} }) end, "optim.Logger", "numbers and strings")
  S.remove()
end)

T.done()
