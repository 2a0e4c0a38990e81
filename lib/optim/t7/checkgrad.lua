-- optim.checkgrad(opfunc, x [, eps]): compares the gradient opfunc returns at x with central
-- differences (f(x + eps e_i) - f(x - eps e_i)) / 2 eps, eps 1e-7 by default. x is restored.
-- Returns the relative error |dC - dC_est| / |dC + dC_est|, the gradient and the estimate.
local torch = require "torch"
local check = require "optim.t7.check"

local num = check.num

return function(optim)
  function optim.checkgrad(opfunc, x, eps)
    if type(opfunc) ~= "function" then error("optim.checkgrad: argument 'opfunc' must be a function", 0) end
    if not torch.is_tensor(x) then error("optim.checkgrad: argument 'x' must be a tensor", 0) end
    eps = eps or 1e-7
    local _, dC = opfunc(x)
    if not torch.is_tensor(dC) or dC:numel() ~= x:numel() then
      error("optim.checkgrad: opfunc must return f(x) and df/dx (a tensor of x's size)", 0)
    end
    dC = dC:reshape(x.shape):clone()
    local est = torch.zeros_like(dC)
    local flat, eflat = x:view(-1), est:view(-1)
    for i = 1, flat:numel() do
      local v = flat[i]
      flat[i] = v + eps
      local c1 = num((opfunc(x)))
      flat[i] = v - eps
      local c2 = num((opfunc(x)))
      flat[i] = v
      eflat[i] = (c1 - c2) / (2 * eps)
    end
    local diff = num((dC - est):norm()) / num((dC + est):norm())
    return diff, dC, est
  end
end
