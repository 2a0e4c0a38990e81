-- The first-order optimizers: SGD, Adam, AdamW, Adamax, NAdam, RAdam,
-- RMSprop, Adagrad, Adadelta. Each step gathers a group's parameters that
-- have gradients (by dtype) and makes one fused call (src/ops/optim.lua);
-- the math is PyTorch's (torch.optim, single-tensor form).
local torch = require "torch"
local class = require "torch_class"

-- PyTorch's implementation switches: accepted and ignored (every step here is one fused call);
-- keyword-only here, whatever their place in PyTorch's signatures
local IMPL = "foreach=nil, fused=nil, capturable=false, differentiable=false"

return function(optim)
  local Optimizer, field, zeros_like, step_tensor = optim.Optimizer, optim._field, optim._zeros_like, optim._step_tensor

  -- option checks: each errors naming the optimizer and the option
  local function number(name, g, key)
    local v = g[key]
    if type(v) ~= "number" then
      error(("%s: option '%s' must be a number, got %s"):format(name, key, type(v)), 0)
    end
    return v
  end
  local function nonneg(name, g, key, what)
    local v = number(name, g, key)
    if not (v >= 0) then error(("%s: invalid %s (option '%s'): %s"):format(name, what, key, tostring(v)), 0) end
  end
  local function unit(name, g, key, what)       -- 0 <= v <= 1
    local v = number(name, g, key)
    if not (v >= 0 and v <= 1) then error(("%s: invalid %s (option '%s'): %s, must be in [0, 1]"):format(name, what, key, tostring(v)), 0) end
  end
  local function betas(name, g)
    local b = g.betas
    if type(b) ~= "table" or type(b[1]) ~= "number" or type(b[2]) ~= "number" then
      error(("%s: option 'betas' must be a pair of numbers {beta1, beta2}"):format(name), 0)
    end
    for i = 1, 2 do
      if not (b[i] >= 0 and b[i] < 1) then
        error(("%s: invalid beta parameter at index %d (option 'betas'): %s, must be in [0, 1)"):format(name, i, tostring(b[i])), 0)
      end
    end
  end
  local function flags(name, g, ...)
    for _, k in ipairs({ ... }) do
      if type(g[k]) ~= "boolean" then error(("%s: option '%s' must be a boolean, got %s"):format(name, k, type(g[k])), 0) end
    end
  end
  -- an optimizer's constructor arguments: `spec` is its signature after `params` (PyTorch's
  -- parameters and order; the implementation switches keyword-only), d its defaults (option
  -- -> value; a default the signature cannot spell, such as betas, comes from here).
  -- Returns the parser: (...) -> params, the group defaults. optim.SGD(params, 0.1,
  -- {momentum = 0.9}) is PyTorch's SGD(params, lr=0.1, momentum=0.9).
  local function constructor(name, spec, d)
    local SIG = class.signature("optim." .. name, "params, " .. spec .. ", " .. IMPL)
    return function(...)
      local a = SIG(...)
      local r = {}
      for k, v in pairs(d) do
        if a[k] ~= nil then r[k] = a[k] else r[k] = v end
      end
      -- an empty list {} in the last place reads as an empty options table
      return a.params or {}, r
    end
  end
  optim._constructor = constructor

  ---------------------------------------------------------------- SGD
  local SGD = Optimizer:extend("SGD")
  optim.SGD = SGD
  local SGD_ARGS = constructor("SGD", "lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=false, " ..
    "*, maximize=false", { lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false })
  function SGD:__init(...) Optimizer.__init(self, SGD_ARGS(...)) end
  function SGD:_check(g)
    nonneg("SGD", g, "lr", "learning rate"); nonneg("SGD", g, "momentum", "momentum value")
    nonneg("SGD", g, "weight_decay", "weight_decay value"); number("SGD", g, "dampening")
    flags("SGD", g, "nesterov", "maximize")
    if g.nesterov and (g.momentum <= 0 or g.dampening ~= 0) then
      error("SGD: option 'nesterov' requires a momentum and zero dampening", 0)
    end
  end
  local function new_state() return {} end
  function SGD:_step_group(g)
    for _, b in ipairs(self:_gather(g, new_state)) do
      if g.momentum == 0 then
        torch._fused_sgd_(b.params, b.grads, {}, { lr = g.lr, weight_decay = g.weight_decay, maximize = g.maximize })
      else
        -- new buffers take the gradient itself (PyTorch's first step), old ones the momentum update
        local new, old = { p = {}, g = {}, b = {} }, { p = {}, g = {}, b = {} }
        for i, st in ipairs(b.states) do
          local l = old
          if st.momentum_buffer == nil then st.momentum_buffer = zeros_like(b.params[i]); l = new end
          l.p[#l.p + 1], l.g[#l.g + 1], l.b[#l.b + 1] = b.params[i], b.grads[i], st.momentum_buffer
        end
        for _, l in ipairs({ new, old }) do
          if #l.p > 0 then
            torch._fused_sgd_(l.p, l.g, l.b, { lr = g.lr, momentum = g.momentum, dampening = g.dampening,
              weight_decay = g.weight_decay, nesterov = g.nesterov, maximize = g.maximize, momentum_init = l == new })
          end
        end
      end
    end
  end

  ---------------------------------------------------------------- Adam, AdamW
  local function adam_check(name)
    return function(self, g)
      nonneg(name, g, "lr", "learning rate"); nonneg(name, g, "eps", "epsilon value")
      betas(name, g); nonneg(name, g, "weight_decay", "weight_decay value")
      flags(name, g, "amsgrad", "maximize")
    end
  end
  local function adam_state(p, g)
    local st = { step = step_tensor(p), exp_avg = zeros_like(p), exp_avg_sq = zeros_like(p) }
    if g.amsgrad then st.max_exp_avg_sq = zeros_like(p) end
    return st
  end
  local function adam_step(self, g, decoupled)
    for _, b in ipairs(self:_gather(g, adam_state)) do
      local maxs = {}
      if g.amsgrad then
        for i, st in ipairs(b.states) do
          st.max_exp_avg_sq = st.max_exp_avg_sq or zeros_like(b.params[i])
          maxs[i] = st.max_exp_avg_sq
        end
      end
      torch._fused_adam_(b.params, b.grads, field(b, "exp_avg"), field(b, "exp_avg_sq"), maxs, field(b, "step"),
        { lr = g.lr, beta1 = g.betas[1], beta2 = g.betas[2], eps = g.eps, weight_decay = g.weight_decay,
          amsgrad = g.amsgrad, maximize = g.maximize, decoupled = decoupled })
    end
  end

  local Adam = Optimizer:extend("Adam")
  optim.Adam = Adam
  local ADAM = "lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=%s, amsgrad=false, *, maximize=false"
  local ADAM_ARGS = constructor("Adam", ADAM:format("0"), { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
    weight_decay = 0, amsgrad = false, maximize = false })
  function Adam:__init(...) Optimizer.__init(self, ADAM_ARGS(...)) end
  Adam._check = adam_check("Adam")
  function Adam:_step_group(g) adam_step(self, g, false) end

  local AdamW = Optimizer:extend("AdamW")
  optim.AdamW = AdamW
  local ADAMW_ARGS = constructor("AdamW", ADAM:format("1e-2"), { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
    weight_decay = 1e-2, amsgrad = false, maximize = false })
  function AdamW:__init(...) Optimizer.__init(self, ADAMW_ARGS(...)) end
  AdamW._check = adam_check("AdamW")
  function AdamW:_step_group(g) adam_step(self, g, true) end

  ---------------------------------------------------------------- Adamax
  local Adamax = Optimizer:extend("Adamax")
  optim.Adamax = Adamax
  local ADAMAX_ARGS = constructor("Adamax", "lr=2e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, *, maximize=false",
    { lr = 2e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, maximize = false })
  function Adamax:__init(...) Optimizer.__init(self, ADAMAX_ARGS(...)) end
  function Adamax:_check(g)
    nonneg("Adamax", g, "lr", "learning rate"); nonneg("Adamax", g, "eps", "epsilon value")
    betas("Adamax", g); nonneg("Adamax", g, "weight_decay", "weight_decay value"); flags("Adamax", g, "maximize")
  end
  local function adamax_state(p) return { step = step_tensor(p), exp_avg = zeros_like(p), exp_inf = zeros_like(p) } end
  function Adamax:_step_group(g)
    for _, b in ipairs(self:_gather(g, adamax_state)) do
      torch._fused_adamax_(b.params, b.grads, field(b, "exp_avg"), field(b, "exp_inf"), field(b, "step"),
        { lr = g.lr, beta1 = g.betas[1], beta2 = g.betas[2], eps = g.eps, weight_decay = g.weight_decay,
          maximize = g.maximize })
    end
  end

  ---------------------------------------------------------------- NAdam
  local NAdam = Optimizer:extend("NAdam")
  optim.NAdam = NAdam
  local NADAM_ARGS = constructor("NAdam", "lr=2e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, " ..
    "momentum_decay=4e-3, decoupled_weight_decay=false, *, maximize=false", { lr = 2e-3, betas = { 0.9, 0.999 },
    eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3, decoupled_weight_decay = false, maximize = false })
  function NAdam:__init(...) Optimizer.__init(self, NADAM_ARGS(...)) end
  function NAdam:_check(g)
    nonneg("NAdam", g, "lr", "learning rate"); nonneg("NAdam", g, "eps", "epsilon value")
    betas("NAdam", g); nonneg("NAdam", g, "weight_decay", "weight_decay value")
    nonneg("NAdam", g, "momentum_decay", "momentum_decay value")
    flags("NAdam", g, "maximize", "decoupled_weight_decay")
  end
  local function nadam_state(p)
    return { step = step_tensor(p), mu_product = torch.ones({}, { dtype = torch.float64, device = p.device }),
             exp_avg = zeros_like(p), exp_avg_sq = zeros_like(p) }
  end
  function NAdam:_step_group(g)
    for _, b in ipairs(self:_gather(g, nadam_state)) do
      torch._fused_nadam_(b.params, b.grads, field(b, "exp_avg"), field(b, "exp_avg_sq"), field(b, "mu_product"),
        field(b, "step"), { lr = g.lr, beta1 = g.betas[1], beta2 = g.betas[2], eps = g.eps,
          weight_decay = g.weight_decay, momentum_decay = g.momentum_decay, maximize = g.maximize,
          decoupled = g.decoupled_weight_decay })
    end
  end

  ---------------------------------------------------------------- RAdam
  local RAdam = Optimizer:extend("RAdam")
  optim.RAdam = RAdam
  local RADAM_ARGS = constructor("RAdam", "lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, " ..
    "decoupled_weight_decay=false, *, maximize=false", { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
    weight_decay = 0, decoupled_weight_decay = false, maximize = false })
  function RAdam:__init(...) Optimizer.__init(self, RADAM_ARGS(...)) end
  function RAdam:_check(g)
    nonneg("RAdam", g, "lr", "learning rate"); nonneg("RAdam", g, "eps", "epsilon value")
    betas("RAdam", g); nonneg("RAdam", g, "weight_decay", "weight_decay value")
    flags("RAdam", g, "maximize", "decoupled_weight_decay")
  end
  local function radam_state(p) return { step = step_tensor(p), exp_avg = zeros_like(p), exp_avg_sq = zeros_like(p) } end
  function RAdam:_step_group(g)
    for _, b in ipairs(self:_gather(g, radam_state)) do
      torch._fused_radam_(b.params, b.grads, field(b, "exp_avg"), field(b, "exp_avg_sq"), field(b, "step"),
        { lr = g.lr, beta1 = g.betas[1], beta2 = g.betas[2], eps = g.eps, weight_decay = g.weight_decay,
          maximize = g.maximize, decoupled = g.decoupled_weight_decay })
    end
  end

  ---------------------------------------------------------------- RMSprop
  local RMSprop = Optimizer:extend("RMSprop")
  optim.RMSprop = RMSprop
  local RMSPROP_ARGS = constructor("RMSprop", "lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, " ..
    "centered=false, *, maximize=false", { lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0,
    centered = false, maximize = false })
  function RMSprop:__init(...) Optimizer.__init(self, RMSPROP_ARGS(...)) end
  function RMSprop:_check(g)
    nonneg("RMSprop", g, "lr", "learning rate"); nonneg("RMSprop", g, "eps", "epsilon value")
    nonneg("RMSprop", g, "momentum", "momentum value"); nonneg("RMSprop", g, "weight_decay", "weight_decay value")
    nonneg("RMSprop", g, "alpha", "alpha value"); flags("RMSprop", g, "centered", "maximize")
  end
  local function rmsprop_state(p) return { step = step_tensor(p), square_avg = zeros_like(p) } end
  function RMSprop:_step_group(g)
    for _, b in ipairs(self:_gather(g, rmsprop_state)) do
      local bufs, gavgs = {}, {}
      for i, st in ipairs(b.states) do
        st.step:add_(1)
        if g.momentum > 0 then st.momentum_buffer = st.momentum_buffer or zeros_like(b.params[i]); bufs[i] = st.momentum_buffer end
        if g.centered then st.grad_avg = st.grad_avg or zeros_like(b.params[i]); gavgs[i] = st.grad_avg end
      end
      torch._fused_rmsprop_(b.params, b.grads, field(b, "square_avg"), bufs, gavgs,
        { lr = g.lr, alpha = g.alpha, eps = g.eps, weight_decay = g.weight_decay, momentum = g.momentum,
          centered = g.centered, maximize = g.maximize })
    end
  end

  ---------------------------------------------------------------- Adagrad
  local Adagrad = Optimizer:extend("Adagrad")
  optim.Adagrad = Adagrad
  local ADAGRAD_ARGS = constructor("Adagrad", "lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, " ..
    "eps=1e-10, *, maximize=false", { lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0,
    eps = 1e-10, maximize = false })
  function Adagrad:__init(...)
    Optimizer.__init(self, ADAGRAD_ARGS(...))
    -- PyTorch makes the state at construction
    for _, g in ipairs(self.param_groups) do
      for _, p in ipairs(g.params) do
        self.state[p] = { step = step_tensor(p), sum = torch.full_like(p, g.initial_accumulator_value) }
      end
    end
  end
  function Adagrad:_check(g)
    nonneg("Adagrad", g, "lr", "learning rate"); nonneg("Adagrad", g, "lr_decay", "lr_decay value")
    nonneg("Adagrad", g, "weight_decay", "weight_decay value"); nonneg("Adagrad", g, "eps", "epsilon value")
    nonneg("Adagrad", g, "initial_accumulator_value", "initial_accumulator_value"); flags("Adagrad", g, "maximize")
  end
  function Adagrad:_step_group(g)
    local init = function(p) return { step = step_tensor(p), sum = torch.full_like(p, g.initial_accumulator_value) } end
    for _, b in ipairs(self:_gather(g, init)) do
      torch._fused_adagrad_(b.params, b.grads, field(b, "sum"), field(b, "step"),
        { lr = g.lr, lr_decay = g.lr_decay, weight_decay = g.weight_decay, eps = g.eps, maximize = g.maximize })
    end
  end

  ---------------------------------------------------------------- Adadelta
  local Adadelta = Optimizer:extend("Adadelta")
  optim.Adadelta = Adadelta
  local ADADELTA_ARGS = constructor("Adadelta", "lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=false",
    { lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0, maximize = false })
  function Adadelta:__init(...) Optimizer.__init(self, ADADELTA_ARGS(...)) end
  function Adadelta:_check(g)
    nonneg("Adadelta", g, "lr", "learning rate"); unit("Adadelta", g, "rho", "rho value")
    nonneg("Adadelta", g, "eps", "epsilon value"); nonneg("Adadelta", g, "weight_decay", "weight_decay value")
    flags("Adadelta", g, "maximize")
  end
  local function adadelta_state(p) return { step = step_tensor(p), square_avg = zeros_like(p), acc_delta = zeros_like(p) } end
  function Adadelta:_step_group(g)
    for _, b in ipairs(self:_gather(g, adadelta_state)) do
      for _, st in ipairs(b.states) do st.step:add_(1) end
      torch._fused_adadelta_(b.params, b.grads, field(b, "square_avg"), field(b, "acc_delta"),
        { lr = g.lr, rho = g.rho, eps = g.eps, weight_decay = g.weight_decay, maximize = g.maximize })
    end
  end
end
