-- Torch7's first-order optimizers: x, {f(x)} = optim.NAME(opfunc, x, config, state), one
-- evaluation and one update of x in place per call (rprop: niter of them). The update rules
-- are Torch7's; sgd, adam, rmsprop and adagrad run through the fused ops of the PyTorch-style
-- optimizers, the others through in-place tensor methods that mean the same in both modes.
local torch = require "torch"
local check = require "optim.t7.check"

local args, eval = check.args, check.eval

-- a zero tensor shaped as x
local function zeros(x) return torch.zeros_like(x) end

return function(optim)
  local function steps(state, key)
    state[key] = state[key] or torch.zeros({}, { dtype = torch.float64 })
    return state[key]
  end

  -- SGD: learningRate (1e-3), learningRateDecay, weightDecay (or weightDecays, one per element),
  -- momentum, dampening (default: momentum), nesterov, learningRates (one per element)
  function optim.sgd(opfunc, x, config, state)
    config, state = args("sgd", opfunc, x, config, state)
    local lr = config.learningRate or 1e-3
    local lrd = config.learningRateDecay or 0
    local wd = config.weightDecay or 0
    local mom = config.momentum or 0
    local damp = config.dampening or mom
    local nesterov = config.nesterov or false
    local lrs, wds = config.learningRates, config.weightDecays
    if nesterov and (mom <= 0 or damp ~= 0) then error("optim.sgd: nesterov requires a momentum and zero dampening", 0) end
    state.evalCounter = state.evalCounter or 0
    local fx, dfdx = eval("sgd", opfunc, x)
    local clr = lr / (1 + state.evalCounter * lrd)
    torch.no_grad(function()
      if lrs == nil and (wds == nil or wd ~= 0) then
        if mom ~= 0 then
          local init = state.dfdx == nil
          if init then state.dfdx = zeros(x) end
          torch._fused_sgd_({ x }, { dfdx }, { state.dfdx }, { lr = clr, momentum = mom, dampening = damp,
            weight_decay = wd, nesterov = nesterov, momentum_init = init })
        else
          torch._fused_sgd_({ x }, { dfdx }, {}, { lr = clr, weight_decay = wd })
        end
        return
      end
      -- per-element learning rates or weight decays: Torch7's steps one by one
      local g = dfdx:clone()
      if wd ~= 0 then
        g:add_(x, { alpha = wd })
      elseif wds then
        state.decayParameters = (state.decayParameters or zeros(x)):copy_(wds:view(x.shape)):mul_(x)
        g:add_(state.decayParameters)
      end
      if mom ~= 0 then
        if state.dfdx == nil then state.dfdx = g:clone()
        else state.dfdx:mul_(mom):add_(g, { alpha = 1 - damp }) end
        if nesterov then g:add_(state.dfdx, { alpha = mom }) else g = state.dfdx end
      end
      if lrs then
        state.deltaParameters = (state.deltaParameters or zeros(x)):copy_(lrs:view(x.shape)):mul_(g)
        g = state.deltaParameters
      end
      x:add_(g, { alpha = -clr })
    end)
    state.evalCounter = state.evalCounter + 1
    return x, { fx }
  end

  -- ASGD (Bottou's averaged SGD): eta0 (1e-4), lambda (1e-4), alpha (0.75), t0 (1e6).
  -- x := (1 - lambda eta_t) x - eta_t df/dx; ax averages x from step t0 on. Returns x, {f},
  -- and the average ax. As in Torch7 the defaults are written into config.
  function optim.asgd(opfunc, x, config, state)
    config, state = args("asgd", opfunc, x, config, state)
    config.eta0 = config.eta0 or 1e-4
    config.lambda = config.lambda or 1e-4
    config.alpha = config.alpha or 0.75
    config.t0 = config.t0 or 1e6
    state.eta_t = state.eta_t or config.eta0
    state.mu_t = state.mu_t or 1
    state.t = state.t or 0
    local fx, dfdx = eval("asgd", opfunc, x)
    torch.no_grad(function()
      x:mul_(1 - config.lambda * state.eta_t):add_(dfdx, { alpha = -state.eta_t })
      state.ax = state.ax or zeros(x)
      state.tmp = state.tmp or zeros(x)
      if state.mu_t ~= 1 then
        state.tmp:copy_(x):sub_(state.ax):mul_(state.mu_t)
        state.ax:add_(state.tmp)
      else
        state.ax:copy_(x)
      end
    end)
    state.t = state.t + 1
    state.eta_t = config.eta0 / (1 + config.lambda * config.eta0 * state.t) ^ config.alpha
    state.mu_t = 1 / math.max(1, state.t - config.t0)
    return x, { fx }, state.ax
  end

  -- Nesterov's accelerated gradient (Sutskever et al. 2013): learningRate (1e-3),
  -- learningRateDecay, weightDecay, momentum (0.9, must be > 0), learningRates. x first moves
  -- by momentum * dfdx (the state's velocity), the gradient is taken there.
  function optim.nag(opfunc, x, config, state)
    config, state = args("nag", opfunc, x, config, state)
    local lr = config.learningRate or 1e-3
    local lrd = config.learningRateDecay or 0
    local wd = config.weightDecay or 0
    local mom = config.momentum or 0.9
    local lrs = config.learningRates
    if mom <= 0 then error("optim.nag: the momentum must be positive", 0) end
    state.evalCounter = state.evalCounter or 0
    if state.dfdx then torch.no_grad(function() x:add_(state.dfdx, { alpha = mom }) end) end
    local fx, dfdx = eval("nag", opfunc, x)
    local clr = lr / (1 + state.evalCounter * lrd)
    torch.no_grad(function()
      local g = dfdx
      if wd ~= 0 then g = dfdx:clone():add_(x, { alpha = wd }) end
      if state.dfdx == nil then state.dfdx = zeros(x) else state.dfdx:mul_(mom) end
      if lrs then
        state.deltaParameters = (state.deltaParameters or zeros(x)):copy_(lrs:view(x.shape)):mul_(g)
        g = state.deltaParameters
      end
      x:add_(g, { alpha = -clr })
      state.dfdx:add_(g, { alpha = -clr })
    end)
    state.evalCounter = state.evalCounter + 1
    return x, { fx }
  end

  -- Adagrad: learningRate (1e-3), learningRateDecay, weightDecay;
  -- x -= clr * g / (sqrt(sum of g^2) + 1e-10)
  function optim.adagrad(opfunc, x, config, state)
    config, state = args("adagrad", opfunc, x, config, state)
    local fx, dfdx = eval("adagrad", opfunc, x)
    state.paramVariance = state.paramVariance or zeros(x)
    local step = steps(state, "_step")
    torch.no_grad(function()
      torch._fused_adagrad_({ x }, { dfdx }, { state.paramVariance }, { step }, { lr = config.learningRate or 1e-3,
        lr_decay = config.learningRateDecay or 0, weight_decay = config.weightDecay or 0, eps = 1e-10 })
    end)
    state.evalCounter = (state.evalCounter or 0) + 1
    return x, { fx }
  end

  -- Adadelta (Zeiler 2012): rho (0.9), eps (1e-6), weightDecay.
  -- v = rho v + (1-rho) g^2; delta = sqrt(accDelta + eps) / sqrt(v + eps) * g; x -= delta;
  -- accDelta = rho accDelta + (1-rho) delta^2
  function optim.adadelta(opfunc, x, config, state)
    config, state = args("adadelta", opfunc, x, config, state)
    local rho = config.rho or 0.9
    local eps = config.eps or 1e-6
    local wd = config.weightDecay or 0
    state.evalCounter = state.evalCounter or 0
    local fx, dfdx = eval("adadelta", opfunc, x)
    torch.no_grad(function()
      local g = dfdx
      if wd ~= 0 then g = dfdx:clone():add_(x, { alpha = wd }) end
      if not state.paramVariance then
        state.paramVariance, state.paramStd = zeros(x), zeros(x)
        state.delta, state.accDelta = zeros(x), zeros(x)
      end
      state.paramVariance:mul_(rho):addcmul_(g, g, { value = 1 - rho })
      state.paramStd:copy_(state.paramVariance):add_(eps):sqrt_()
      state.delta:copy_(state.accDelta):add_(eps):sqrt_():div_(state.paramStd):mul_(g)
      x:sub_(state.delta)
      state.accDelta:mul_(rho):addcmul_(state.delta, state.delta, { value = 1 - rho })
    end)
    state.evalCounter = state.evalCounter + 1
    return x, { fx }
  end

  -- Adam: learningRate (1e-3), learningRateDecay, beta1 (0.9), beta2 (0.999), epsilon (1e-8),
  -- weightDecay. Torch7 adds epsilon to sqrt(v) before the bias correction of the second moment:
  -- x -= clr * sqrt(1-beta2^t) / (1-beta1^t) * m / (sqrt(v) + epsilon)
  function optim.adam(opfunc, x, config, state)
    config, state = args("adam", opfunc, x, config, state)
    local lr = config.learningRate or 1e-3
    local lrd = config.learningRateDecay or 0
    local b1, b2 = config.beta1 or 0.9, config.beta2 or 0.999
    local eps = config.epsilon or 1e-8
    local wd = config.weightDecay or 0
    local fx, dfdx = eval("adam", opfunc, x)
    state.t = state.t or 0
    state.m = state.m or zeros(x)
    state.v = state.v or zeros(x)
    local clr = lr / (1 + state.t * lrd)
    local t = state.t + 1
    local step = steps(state, "_step")
    torch.no_grad(function()
      torch._fused_adam_({ x }, { dfdx }, { state.m }, { state.v }, {}, { step },
        { lr = clr, beta1 = b1, beta2 = b2, eps = eps / math.sqrt(1 - b2 ^ t), weight_decay = wd })
    end)
    state.t = t
    return x, { fx }
  end

  -- AdaMax: learningRate (2e-3), beta1 (0.9), beta2 (0.999), epsilon (1e-38), weightDecay.
  -- m = beta1 m + (1-beta1) g; u = max(beta2 u, |g| + epsilon); x -= lr / (1-beta1^t) * m / u
  function optim.adamax(opfunc, x, config, state)
    config, state = args("adamax", opfunc, x, config, state)
    local lr = config.learningRate or 0.002
    local b1, b2 = config.beta1 or 0.9, config.beta2 or 0.999
    local eps = config.epsilon or 1e-38
    local wd = config.weightDecay or 0
    local fx, dfdx = eval("adamax", opfunc, x)
    state.t = (state.t or 0) + 1
    state.m = state.m or zeros(x)
    state.u = state.u or zeros(x)
    torch.no_grad(function()
      local g = dfdx
      if wd ~= 0 then g = dfdx:clone():add_(x, { alpha = wd }) end
      state.m:mul_(b1):add_(g, { alpha = 1 - b1 })
      local a = g:clone():abs_():add_(eps)
      state.u:mul_(b2)
      state.u:copy_(torch.maximum(state.u, a))
      x:addcdiv_(state.m, state.u, { value = -lr / (1 - b1 ^ state.t) })
    end)
    return x, { fx }
  end

  -- RMSprop: learningRate (1e-2), alpha (0.99), epsilon (1e-8), weightDecay, initialMean (0);
  -- m = alpha m + (1-alpha) g^2; x -= lr * g / (sqrt(m) + epsilon)
  function optim.rmsprop(opfunc, x, config, state)
    config, state = args("rmsprop", opfunc, x, config, state)
    local fx, dfdx = eval("rmsprop", opfunc, x)
    state.m = state.m or torch.full_like(x, config.initialMean or 0)
    torch.no_grad(function()
      torch._fused_rmsprop_({ x }, { dfdx }, { state.m }, {}, {}, { lr = config.learningRate or 1e-2,
        alpha = config.alpha or 0.99, eps = config.epsilon or 1e-8, weight_decay = config.weightDecay or 0 })
    end)
    return x, { fx }
  end

  -- Rprop: stepsize (0.1, the initial step of every element), etaplus (1.2), etaminus (0.5),
  -- stepsizemax (50), stepsizemin (1e-6), niter (1 evaluation and step per call). Where the
  -- gradient keeps its sign the element's step grows by etaplus, where it flips the step
  -- shrinks by etaminus and that element does not move (its gradient counts as 0 next time).
  -- Returns x and the f values of the niter evaluations.
  function optim.rprop(opfunc, x, config, state)
    config, state = args("rprop", opfunc, x, config, state)
    local etaplus, etaminus = config.etaplus or 1.2, config.etaminus or 0.5
    local smax, smin = config.stepsizemax or 50.0, config.stepsizemin or 1e-6
    local fs = {}
    for i = 1, config.niter or 1 do
      local fx, dfdx = eval("rprop", opfunc, x)
      torch.no_grad(function()
        if not torch.is_tensor(state.delta) then
          local s0 = config.stepsize
          state.delta = zeros(x)
          state.stepsize = torch.full_like(x, type(s0) == "number" and s0 or 0.1)
        end
        -- the sign of g * previous g: +1, -1 or 0 per element
        local sign = dfdx:clone():mul_(state.delta):sign_()
        local pos = sign:clone():clamp_(0, 1)
        local neg = sign:clone():neg_():clamp_(0, 1)
        -- factor: etaplus where pos, etaminus where neg, 1 elsewhere
        local factor = pos:clone():mul_(etaplus - 1):add_(neg, { alpha = etaminus - 1 }):add_(1)
        state.stepsize:mul_(factor):clamp_(smin, smax)
        local g = dfdx:clone():mul_(neg:neg_():add_(1))     -- 0 where the sign flipped
        state.sign = g:clone():sign_()
        x:addcmul_(state.sign, state.stepsize, { value = -1 })
        state.delta:copy_(g)
      end)
      fs[i] = fx
    end
    return x, fs
  end
end
