-- Torch7 optim's config tables: the option names each function reads, the state it keeps, and
-- the checks of its arguments (optim.torch7 and the files of optim/t7 use them).
--
-- config and state are not checked as the other options tables of the libraries are
-- (torch_class.check_options, signatures): as in Torch7, these functions write their buffers
-- into state (evalCounter, dfdx, m, v, t, ...), state defaults to config itself, and scripts
-- keep keys of their own there. What is checked, because it would otherwise be silently
-- ignored and train with a default: a name near one of the function's options (a typo:
-- 'learningrate'), one of PyTorch's names ('lr' is 'learningRate' here), and a Torch7 option
-- this implementation does not have. Other keys pass.
local torch = require "torch"
local class = require "torch_class"

local M = {}

-- PyTorch's names of the Torch7 options
local PYTORCH_NAMES = { lr = "learningRate", lr_decay = "learningRateDecay", weight_decay = "weightDecay",
  eps = "epsilon", betas = "beta1 and beta2", max_iter = "maxIter", max_eval = "maxEval",
  tolerance_grad = "tolFun", tolerance_change = "tolX", history_size = "nCorrection",
  line_search_fn = "lineSearch" }

-- per function: its options, the state it keeps (in state, which is config unless given), and
-- Torch7's options it does not implement
local CONFIG = {
  sgd = { options = { "learningRate", "learningRateDecay", "weightDecay", "momentum", "dampening", "nesterov",
                      "learningRates", "weightDecays" },
          state = { "evalCounter", "dfdx", "decayParameters", "deltaParameters" } },
  asgd = { options = { "eta0", "lambda", "alpha", "t0" }, state = { "eta_t", "mu_t", "t", "ax", "tmp" } },
  nag = { options = { "learningRate", "learningRateDecay", "weightDecay", "momentum", "dampening", "learningRates" },
          state = { "evalCounter", "dfdx", "deltaParameters" } },
  adagrad = { options = { "learningRate", "learningRateDecay", "weightDecay" },
              state = { "evalCounter", "paramVariance", "paramStd", "_step" } },
  adadelta = { options = { "rho", "eps", "weightDecay" },
               state = { "evalCounter", "paramVariance", "paramStd", "delta", "accDelta" } },
  adam = { options = { "learningRate", "learningRateDecay", "beta1", "beta2", "epsilon", "weightDecay" },
           state = { "t", "m", "v", "denom", "_step" } },
  adamax = { options = { "learningRate", "beta1", "beta2", "epsilon", "weightDecay" },
             state = { "t", "m", "u", "max" } },
  rmsprop = { options = { "learningRate", "alpha", "epsilon", "weightDecay", "initialMean" },
              state = { "m", "tmp" } },
  rprop = { options = { "stepsize", "etaplus", "etaminus", "stepsizemax", "stepsizemin", "niter" },
            state = { "delta", "stepsize", "sign" } },
  lbfgs = { options = { "maxIter", "maxEval", "tolFun", "tolX", "nCorrection", "learningRate", "lineSearch",
                        "lineSearchOptions", "verbose" },
            state = { "funcEval", "nIter", "d", "t", "old_dirs", "old_stps", "Hdiag", "g_old", "f_old", "tmp1" } },
  cg = { options = { "maxIter", "maxEval", "rho", "sig", "int", "ext", "ratio", "verbose" },
         state = { "df0", "df1", "df2", "df3", "x0", "s" } },
  lswolfe = { options = { "c1", "c2", "tolX", "maxIter", "verbose" }, state = {} },
  cmaes = { options = { "sigma", "maxEval", "ftarget", "popsize", "verb_disp", "min_iterations" }, state = {} },
  de = { options = { "popsize", "scaleFactor", "crossoverRate", "maxFEs", "maxRegion", "minRegion" }, state = {} },
  FistaLS = { options = { "L", "Lstep", "maxiter", "maxline", "errthres", "doFistaUpdate", "verbose" },
              state = { "xkm", "y", "ply" } },
}
local function set(list) local s = {} for _, k in ipairs(list) do s[k] = true end return s end
for _, c in pairs(CONFIG) do
  c.known = set(c.options)
  for _, k in ipairs(c.state) do c.known[k] = true end
  c.unsupported_set = set(c.unsupported or {})
end
M.CONFIG = CONFIG

-- raises on a misspelt option, a PyTorch name or an unsupported Torch7 option of function name
function M.options(name, config)
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

local function what(v) return torch.is_tensor(v) and "a tensor" or type(v) end

-- the arguments (opfunc, x, config, state) of function name: returns config and state
function M.args(name, opfunc, x, config, state)
  if type(opfunc) ~= "function" then error(("optim.%s: argument 'opfunc' must be a function"):format(name), 0) end
  if not torch.is_tensor(x) then error(("optim.%s: argument 'x' must be a tensor"):format(name), 0) end
  if config ~= nil and (type(config) ~= "table" or torch.is_tensor(config)) then
    error(("optim.%s: argument 'config' must be a table, got %s"):format(name, what(config)), 0)
  end
  if state ~= nil and (type(state) ~= "table" or torch.is_tensor(state)) then
    error(("optim.%s: argument 'state' must be a table, got %s"):format(name, what(state)), 0)
  end
  config = config or {}
  M.options(name, config)
  return config, state or config
end

-- a number from a number or a one-element tensor (PyTorch mode's reductions give tensors)
function M.num(v)
  if type(v) == "number" then return v end
  if torch.is_tensor(v) then return v:item() end
  return v
end

-- f(x) and df/dx from opfunc, df/dx shaped as x
function M.eval(name, opfunc, x)
  local fx, dfdx = opfunc(x)
  if not torch.is_tensor(dfdx) then error(("optim.%s: opfunc must return f(x) and df/dx (a tensor)"):format(name), 0) end
  if dfdx.dtype ~= x.dtype or dfdx:numel() ~= x:numel() then
    error(("optim.%s: df/dx must have x's dtype and number of elements"):format(name), 0)
  end
  return fx, dfdx:view(x.shape)
end

-- a dot product as a number, in either mode
function M.dot(a, b) return M.num(a:reshape(-1):dot(b:reshape(-1))) end

-- the sum of |v| as a number
function M.asum(v) return M.num(v:clone():abs_():sum()) end

return M
