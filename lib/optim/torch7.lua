-- Torch7's optim package on lutorch: the functional optimizers
--   x, fs = optim.sgd(feval, x, config, state)
-- (feval(x) returns f(x) and df/dx; x is updated in place; config holds Torch7's option names,
-- state, by default config itself, keeps the buffers between calls), the line search and its
-- interpolation, the gradient checker, optim.ConfusionMatrix and optim.Logger. One file of
-- optim/t7 per concept; optim/t7/check.lua has the option names and their checks. The
-- functions run in both modes: Torch7 mode's numbers and PyTorch mode's 0-d tensors are both
-- taken where f values come back, and the updates use the in-place methods common to both.
-- require "optim.sgd" (and the other file names of Torch7's optim) returns optim, as
-- Torch7's package layout allowed.
local T7_FILES = { "sgd", "cg", "asgd", "nag", "fista", "adagrad", "rprop", "adam", "adamax", "rmsprop",
  "adadelta", "cmaes", "de", "lswolfe", "polyinterp", "checkgrad", "ConfusionMatrix", "Logger" }

return function(optim)
  require "optim.t7.firstorder" (optim)
  require "optim.t7.polyinterp" (optim)
  require "optim.t7.lswolfe" (optim)
  require "optim.t7.lbfgs" (optim)
  require "optim.t7.cg" (optim)
  require "optim.t7.cmaes" (optim)
  require "optim.t7.de" (optim)
  require "optim.t7.fista" (optim)
  require "optim.t7.checkgrad" (optim)
  optim.ConfusionMatrix = require "optim.t7.ConfusionMatrix"
  optim.Logger = require "optim.t7.Logger"
  for _, f in ipairs(T7_FILES) do
    local name = "optim." .. f
    if package.loaded[name] == nil and package.preload[name] == nil then
      package.preload[name] = function() return optim end
    end
  end
end
