-- optim.lr_scheduler: lr sequences against PyTorch's, state_dict, errors.
-- lib/ beside the build is on the path already; this also covers BUILD=/elsewhere
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local P = require "pyref"
local optim = require "optim"
local S = optim.lr_scheduler

local N = 14
local metrics = { 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3 }

-- {lua maker, python maker, record momentum?}
local cases = {
  { function(o) return S.StepLR(o, 3, { gamma = 0.5 }) end, "L.StepLR(o, 3, gamma=0.5)" },
  { function(o) return S.MultiStepLR(o, { 2, 5, 5, 8 }, { gamma = 0.3 }) end, "L.MultiStepLR(o, [2, 5, 5, 8], gamma=0.3)" },
  { function(o) return S.ExponentialLR(o, 0.9) end, "L.ExponentialLR(o, 0.9)" },
  { function(o) return S.CosineAnnealingLR(o, 5, { eta_min = 0.001 }) end, "L.CosineAnnealingLR(o, 5, eta_min=0.001)" },
  { function(o) return S.CosineAnnealingWarmRestarts(o, 3, { T_mult = 2, eta_min = 0.001 }) end,
    "L.CosineAnnealingWarmRestarts(o, 3, T_mult=2, eta_min=0.001)" },
  { function(o) return S.CosineAnnealingWarmRestarts(o, 4) end, "L.CosineAnnealingWarmRestarts(o, 4)" },
  { function(o) return S.LinearLR(o, { start_factor = 0.25, total_iters = 4 }) end, "L.LinearLR(o, start_factor=0.25, total_iters=4)" },
  { function(o) return S.ConstantLR(o, { factor = 0.5, total_iters = 3 }) end, "L.ConstantLR(o, factor=0.5, total_iters=3)" },
  { function(o) return S.LambdaLR(o, function(e) return 0.95 ^ e end) end, "L.LambdaLR(o, lambda e: 0.95 ** e)" },
  { function(o) return S.LambdaLR(o, { function(e) return 1 / (e + 1) end, function(e) return e + 1 end }) end,
    "L.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: e + 1])" },
  { function(o) return S.OneCycleLR(o, 1.0, { total_steps = N }) end, "L.OneCycleLR(o, 1.0, total_steps=" .. N .. ")", true },
  { function(o) return S.OneCycleLR(o, { 1.0, 0.5 }, { total_steps = N, three_phase = true, anneal_strategy = "linear" }) end,
    "L.OneCycleLR(o, [1.0, 0.5], total_steps=" .. N .. ", three_phase=True, anneal_strategy='linear')", true },
  { function(o) return S.OneCycleLR(o, 0.3, { epochs = 2, steps_per_epoch = 7, pct_start = 0.25 }) end,
    "L.OneCycleLR(o, 0.3, epochs=2, steps_per_epoch=7, pct_start=0.25)", true, "Adam" },
  { function(o)
      return S.SequentialLR(o, { S.LinearLR(o, { start_factor = 0.1, total_iters = 3 }), S.ExponentialLR(o, 0.9) }, { 3 })
    end, "L.SequentialLR(o, [L.LinearLR(o, start_factor=0.1, total_iters=3), L.ExponentialLR(o, 0.9)], milestones=[3])" },
  { function(o)
      return S.SequentialLR(o, { S.ConstantLR(o, { factor = 0.5, total_iters = 2 }), S.CosineAnnealingLR(o, 4), S.StepLR(o, 2) }, { 4, 9 })
    end, "L.SequentialLR(o, [L.ConstantLR(o, factor=0.5, total_iters=2), L.CosineAnnealingLR(o, 4), L.StepLR(o, 2)], milestones=[4, 9])" },
  { function(o) return S.ReduceLROnPlateau(o, { factor = 0.5, patience = 2, cooldown = 1 }) end,
    "L.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1)", false, nil, true },
  { function(o) return S.ReduceLROnPlateau(o, { mode = "max", factor = 0.5, patience = 1, threshold_mode = "abs", threshold = 0.5, min_lr = 0.02 }) end,
    "L.ReduceLROnPlateau(o, mode='max', factor=0.5, patience=1, threshold_mode='abs', threshold=0.5, min_lr=0.02)", false, nil, true },
}

local function make_opt(kind)
  local p = torch.zeros(1, { requires_grad = true })
  local q = torch.zeros(1, { requires_grad = true })
  if kind == "Adam" then return optim.Adam({ { params = { p } }, { params = { q }, lr = 0.05 } }, { lr = 0.1 }) end
  return optim.SGD({ { params = { p } }, { params = { q }, lr = 0.05 } }, { lr = 0.1, momentum = 0.9 })
end

local function lua_seq(c)
  local o = make_opt(c[4])
  local s = c[1](o)
  local out = {}
  local function rec()
    for _, g in ipairs(o.param_groups) do
      out[#out + 1] = g.lr
      if c[3] then out[#out + 1] = g.betas and g.betas[1] or g.momentum end
    end
  end
  rec()
  for i = 1, N do
    o:step()
    if c[5] then s:step(metrics[i]) else s:step() end
    rec()
  end
  return out, s
end

if not P.available() then
  T.skip("scheduler sequences against PyTorch", P.why())
else
  T.test("lr sequences match PyTorch", function()
    local lines = {}
    for i, c in ipairs(cases) do
      lines[#lines + 1] = ("res.append(seq(lambda o: %s, %s, %s, %s))"):format(c[2], c[3] and "True" or "False",
        c[4] == "Adam" and "'Adam'" or "'SGD'", c[5] and "True" or "False")
    end
    local body = ([[
import torch.optim.lr_scheduler as L
import warnings
warnings.filterwarnings('ignore')
metrics = %s
def seq(make, mom, kind, plateau):
    p = torch.zeros(1, requires_grad=True); q = torch.zeros(1, requires_grad=True)
    cls = torch.optim.Adam if kind == 'Adam' else torch.optim.SGD
    kw = {} if kind == 'Adam' else dict(momentum=0.9)
    o = cls([{'params': [p]}, {'params': [q], 'lr': 0.05}], lr=0.1, **kw)
    s = make(o)
    out = []
    def rec():
        for g in o.param_groups:
            out.append(g['lr'])
            if mom: out.append(g['betas'][0] if 'betas' in g else g['momentum'])
    rec()
    for i in range(%d):
        o.step()
        if plateau: s.step(metrics[i])
        else: s.step()
        rec()
    return torch.tensor(out)
res = []
]]):format("[" .. table.concat(metrics, ",") .. "]", N) .. table.concat(lines, "\n")
    local r = P.run({}, body, { "res" })[1]
    for i, c in ipairs(cases) do
      local got = lua_seq(c)
      local want = r[i]:totable()
      T.near(got, want, 1e-12, c[2])
    end
  end)
end

T.test("get_last_lr, closed-form step(epoch), state_dict", function()
  local o = make_opt()
  local s = S.StepLR(o, 2, { gamma = 0.1 })
  T.near(s:get_last_lr(), { 0.1, 0.05 }, 1e-15)
  s:step(); s:step()
  T.near(s:get_last_lr(), { 0.01, 0.005 }, 1e-15)
  s:step(5)
  T.near(o.param_groups[1].lr, 0.1 * 0.1 ^ 2, 1e-15)
  local sd = s:state_dict()
  T.eq(sd.last_epoch, 5)
  T.eq(sd.optimizer, nil)
  local o2 = make_opt()
  local s2 = S.StepLR(o2, 2, { gamma = 0.1 })
  s2:load_state_dict(sd)
  o2:load_state_dict(o:state_dict())      -- the lrs live in the optimizer, as in PyTorch
  T.eq(s2.last_epoch, 5)
  s:step(); s2:step()
  T.near(s2:get_last_lr(), s:get_last_lr(), 1e-15)
end)

T.test("scheduler errors name the scheduler and the argument", function()
  local o = make_opt()
  T.raises(function() S.StepLR({}, 2) end, "StepLR", "'optimizer'")
  T.raises(function() S.StepLR(o, 0) end, "StepLR", "'step_size'")
  T.raises(function() S.OneCycleLR(o, 1) end, "OneCycleLR", "total_steps")
  T.raises(function() S.LambdaLR(o, { function() return 1 end }) end, "LambdaLR", "lr_lambda")
  T.raises(function() S.ReduceLROnPlateau(o, { mode = "up" }) end, "ReduceLROnPlateau", "'mode'")
  T.raises(function() S.LinearLR(o, { start_factor = 0 }) end, "LinearLR", "start_factor")
  local oc = S.OneCycleLR(make_opt(), 1, { total_steps = 2 })
  oc:step(); oc:step()
  T.raises(function() oc:step() end, "OneCycleLR", "total number of steps is 2")
end)

T.done()
