-- Torch7's functional optimizers: x, fs = optim.sgd(feval, x, config, state).
-- feval(x) returns f(x) and df/dx; x (a flat tensor) is updated in place;
-- config holds Torch7's option names (learningRate, ...), state (default:
-- config itself) keeps the optimizer's buffers between calls. The updates
-- run through the same fused ops as the PyTorch-style optimizers.
--
-- config and state are not checked as the other options tables of the libraries are
-- (torch_class.check_options, signatures): as in Torch7, these functions write their buffers
-- into state (evalCounter, dfdx, m, v, t, ...), state defaults to config itself, and scripts
-- keep keys of their own there. No signature either: a trailing config table is Torch7's
-- config, not an options table. What is checked, because it would otherwise be silently
-- ignored and train with a default: a name near one of the function's options (a typo:
-- 'learningrate'), one of PyTorch's names ('lr' is 'learningRate' here), and a Torch7 option
-- this implementation does not have ('weightDecays'). Other keys pass.
local torch = require "torch"
local class = require "torch_class"

-- PyTorch's names of the Torch7 options
local PYTORCH_NAMES = { lr = "learningRate", lr_decay = "learningRateDecay", weight_decay = "weightDecay",
  eps = "epsilon", betas = "beta1 and beta2", max_iter = "maxIter", max_eval = "maxEval",
  tolerance_grad = "tolFun", tolerance_change = "tolX", history_size = "nCorrection",
  line_search_fn = "lineSearch" }

-- per function: its options, the state it (or Torch7's version of it) keeps in state, and
-- Torch7's options it does not implement
local CONFIG = {
  sgd = { options = { "learningRate", "learningRateDecay", "weightDecay", "momentum", "dampening", "nesterov" },
          state = { "evalCounter", "dfdx", "decayParameters", "deltaParameters", "currentLearningRates" },
          unsupported = { "weightDecays", "learningRates" } },
  adam = { options = { "learningRate", "learningRateDecay", "beta1", "beta2", "epsilon", "weightDecay" },
           state = { "t", "m", "v", "denom", "_step" }, unsupported = {} },
  rmsprop = { options = { "learningRate", "alpha", "epsilon", "weightDecay", "initialMean" },
              state = { "m", "tmp" }, unsupported = {} },
  adagrad = { options = { "learningRate", "learningRateDecay", "weightDecay" },
              state = { "evalCounter", "paramVariance", "paramStd", "_step" }, unsupported = {} },
  lbfgs = { options = { "maxIter", "maxEval", "tolFun", "tolX", "nCorrection", "learningRate", "lineSearch", "verbose" },
            state = { "funcEval", "nIter", "d", "t", "old_dirs", "old_stps", "Hdiag", "g_old", "f_old",
                      "_lbfgs", "_lbfgs_x" },
            unsupported = { "lineSearchOptions" } },
  cg = { options = { "maxIter", "maxEval", "tolFun" },
         state = { "dir", "df0", "df1", "df2", "df3", "x0", "s", "t" },
         unsupported = { "rho", "sig", "int", "ext", "ratio" } },
}
local function set(list) local s = {} for _, k in ipairs(list) do s[k] = true end return s end
for _, c in pairs(CONFIG) do
  c.known = set(c.options)
  for _, k in ipairs(c.state) do c.known[k] = true end
  c.unsupported_set = set(c.unsupported)
end

local function check_config(name, config)
  local c = CONFIG[name]
  for k in next, config do
    if type(k) == "string" and not c.known[k] then
      local fname = "optim." .. name
      if c.unsupported_set[k] then
        error(("%s: Torch7's option '%s' is not supported"):format(fname, k), 0)
      end
      if PYTORCH_NAMES[k] then
        error(("%s: unknown option '%s' (the config of Torch7's optim.%s takes Torch7's names: %s)"):format(
          fname, k, name, PYTORCH_NAMES[k]), 0)
      end
      local near = class.closest(k, c.options)
      if near then error(("%s: unknown option '%s' (did you mean '%s'?)"):format(fname, k, near), 0) end
    end
  end
end

return function(optim)
  local function args(name, opfunc, x, config, state)
    if type(opfunc) ~= "function" then error(("optim.%s: argument 'opfunc' must be a function"):format(name), 0) end
    if not torch.is_tensor(x) then error(("optim.%s: argument 'x' must be a tensor"):format(name), 0) end
    if config ~= nil and (type(config) ~= "table" or torch.is_tensor(config)) then
      error(("optim.%s: argument 'config' must be a table, got %s"):format(name,
        torch.is_tensor(config) and "a tensor" or type(config)), 0)
    end
    if state ~= nil and (type(state) ~= "table" or torch.is_tensor(state)) then
      error(("optim.%s: argument 'state' must be a table, got %s"):format(name,
        torch.is_tensor(state) and "a tensor" or type(state)), 0)
    end
    config = config or {}
    check_config(name, config)
    return config, state or config
  end
  local function eval(name, opfunc, x)
    local fx, dfdx = opfunc(x)
    if not torch.is_tensor(dfdx) then error(("optim.%s: opfunc must return f(x) and df/dx (a tensor)"):format(name), 0) end
    if dfdx.dtype ~= x.dtype or dfdx:numel() ~= x:numel() then
      error(("optim.%s: df/dx must have x's dtype and number of elements"):format(name), 0)
    end
    return fx, dfdx:view(x.shape)
  end
  local function steps(state, key)
    state[key] = state[key] or torch.zeros({}, { dtype = torch.float64 })
    return state[key]
  end

  -- SGD with Torch7's options: learningRate, learningRateDecay, weightDecay,
  -- momentum, dampening (default: momentum), nesterov
  function optim.sgd(opfunc, x, config, state)
    config, state = args("sgd", opfunc, x, config, state)
    local lr = config.learningRate or 1e-3
    local lrd = config.learningRateDecay or 0
    local wd = config.weightDecay or 0
    local mom = config.momentum or 0
    local damp = config.dampening or mom
    local nesterov = config.nesterov or false
    if nesterov and (mom <= 0 or damp ~= 0) then error("optim.sgd: nesterov requires a momentum and zero dampening", 0) end
    state.evalCounter = state.evalCounter or 0
    local fx, dfdx = eval("sgd", opfunc, x)
    local clr = lr / (1 + state.evalCounter * lrd)
    torch.no_grad(function()
      if mom ~= 0 then
        local init = state.dfdx == nil
        if init then state.dfdx = torch.zeros_like(x) end
        torch._fused_sgd_({ x }, { dfdx }, { state.dfdx }, { lr = clr, momentum = mom, dampening = damp,
          weight_decay = wd, nesterov = nesterov, momentum_init = init })
      else
        torch._fused_sgd_({ x }, { dfdx }, {}, { lr = clr, weight_decay = wd })
      end
    end)
    state.evalCounter = state.evalCounter + 1
    return x, { fx }
  end

  -- Adam (Torch7 puts epsilon before the bias correction of the second moment)
  function optim.adam(opfunc, x, config, state)
    config, state = args("adam", opfunc, x, config, state)
    local lr = config.learningRate or 1e-3
    local lrd = config.learningRateDecay or 0
    local b1, b2 = config.beta1 or 0.9, config.beta2 or 0.999
    local eps = config.epsilon or 1e-8
    local wd = config.weightDecay or 0
    local fx, dfdx = eval("adam", opfunc, x)
    state.t = state.t or 0
    state.m = state.m or torch.zeros_like(x)
    state.v = state.v or torch.zeros_like(x)
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

  -- RMSprop: learningRate (1e-2), alpha (0.99), epsilon (1e-8), weightDecay
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

  -- Adagrad: learningRate (1e-3), learningRateDecay, weightDecay
  function optim.adagrad(opfunc, x, config, state)
    config, state = args("adagrad", opfunc, x, config, state)
    local fx, dfdx = eval("adagrad", opfunc, x)
    state.paramVariance = state.paramVariance or torch.zeros_like(x)
    local step = steps(state, "_step")
    torch.no_grad(function()
      torch._fused_adagrad_({ x }, { dfdx }, { state.paramVariance }, { step }, { lr = config.learningRate or 1e-3,
        lr_decay = config.learningRateDecay or 0, weight_decay = config.weightDecay or 0, eps = 1e-10 })
    end)
    state.evalCounter = (state.evalCounter or 0) + 1
    return x, { fx }
  end

  -- L-BFGS: maxIter (20), maxEval, tolFun (1e-5), tolX (1e-9), nCorrection
  -- (100), learningRate (1), lineSearch (optim.lswolfe or true: strong Wolfe).
  -- Returns x, the f values seen (first and after each iteration), and the
  -- number of evaluations.
  function optim.lbfgs(opfunc, x, config, state)
    config, state = args("lbfgs", opfunc, x, config, state)
    local fhist = {}
    local p = state._lbfgs_x
    if p == nil or not rawequal(p, x) then
      state._lbfgs_x = x
      state._lbfgs = optim.LBFGS({ x }, { lr = config.learningRate or 1, max_iter = config.maxIter or 20,
        max_eval = config.maxEval or math.floor((config.maxIter or 20) * 1.25),
        tolerance_grad = config.tolFun or 1e-5, tolerance_change = config.tolX or 1e-9,
        history_size = config.nCorrection or 100,
        line_search_fn = config.lineSearch and "strong_wolfe" or nil })
    end
    local opt = state._lbfgs
    local closure = function()
      local fx, dfdx = eval("lbfgs", opfunc, x)
      x.grad = dfdx:clone()
      fhist[#fhist + 1] = type(fx) == "number" and fx or fx:item()
      return fx
    end
    local before = opt.state[x] and opt.state[x].func_evals or 0
    opt:step(closure)
    x.grad = nil
    local st = opt.state[x]
    state.funcEval = st.func_evals
    state.nIter = st.n_iter
    return x, fhist, st.func_evals - before
  end
  optim.lswolfe = true

  -- Nonlinear conjugate gradient (Polak-Ribiere+, strong-Wolfe line search):
  -- maxIter (20), maxEval, tolFun (1e-8 on the change of f), tolX.
  -- Returns x, the f values after each iteration (the first is f(x0)), and
  -- the number of evaluations.
  function optim.cg(opfunc, x, config, state)
    config, state = args("cg", opfunc, x, config, state)
    local max_iter = config.maxIter or 20
    local max_eval = config.maxEval or max_iter * 25
    local tol = config.tolFun or 1e-8
    local flat = x:view(-1)
    local function fg(xx)
      local f, g = eval("cg", opfunc, xx)
      return type(f) == "number" and f or f:item(), g:reshape(-1):clone()
    end
    local f, g = fg(x)
    local evals = 1
    local fhist = { f }
    local d = state.dir
    if d == nil or d:numel() ~= flat:numel() or (state.df0 or 0) == 0 then d = -g end
    torch.no_grad(function()
      for _ = 1, max_iter do
        local gtd = g:dot(d):item()
        if gtd >= 0 then d = -g; gtd = g:dot(d):item() end
        if gtd == 0 then break end
        local x0 = x:clone()
        local function obj(xs, t, dd)
          x:copy_(xs[1] + dd:view(x.shape) * t)
          local fx, gx = fg(x)
          x:copy_(xs[1])
          return fx, gx
        end
        local t0 = state.t or math.min(1, 1 / g:abs():sum():item())
        local fn, gn, t, ne = optim._strong_wolfe(obj, { x0 }, t0, d, f, g, gtd, 1e-4, 0.1)
        evals = evals + ne
        x:copy_(x0 + d:view(x.shape) * t)
        local y = gn - g
        local beta = math.max(0, gn:dot(y):item() / g:dot(g):item())
        d = -gn + d * beta
        local df = f - fn
        f, g = fn, gn
        fhist[#fhist + 1] = f
        state.t = t
        if math.abs(df) < tol or evals >= max_eval then break end
      end
    end)
    state.dir = d
    state.df0 = 1
    return x, fhist, evals
  end
end
