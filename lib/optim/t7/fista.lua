-- optim.FistaLS(f, g, pl, xinit [, params]): FISTA with a backtracking line search (Beck and
-- Teboulle 2009) for min f(x) + g(x), f smooth, g not. f(x, 'dx') returns f(x) and its gradient,
-- f(x) the value; g(x) the value; pl(x, L) solves the proximal step argmin_x Q(x, y) in place
-- (for an L1 g: shrinkage by lambda / L). params: L (0.1, 1 / the step), Lstep (1.5, the
-- factor L grows by in the line search), maxiter (50), maxline (20, line search steps),
-- errthres (1e-4, the change of f + g that ends it), doFistaUpdate (true: FISTA; false: ISTA),
-- verbose (print each step; keep xk and y in the history). params.L keeps the last L and
-- params.xkm, y, ply the buffers for the next call. xinit gets the solution. Returns it and
-- the history: per iteration {nline, L, F = f + g, Fply, Gply, Q}.
local torch = require "torch"
local check = require "optim.t7.check"

local num, dot = check.num, check.dot

return function(optim)
  function optim.FistaLS(f, g, pl, xinit, params)
    for i, fn in ipairs({ f, g, pl }) do
      if type(fn) ~= "function" then
        error(("optim.FistaLS: argument '%s' must be a function"):format(({ "f", "g", "pl" })[i]), 0)
      end
    end
    if not torch.is_tensor(xinit) then error("optim.FistaLS: argument 'xinit' must be a tensor", 0) end
    params = params or {}
    check.options("FistaLS", params)
    local L = params.L or 0.1
    local Lstep = params.Lstep or 1.5
    local maxiter = params.maxiter or 50
    local maxline = params.maxline or 20
    local errthres = params.errthres or 1e-4
    local doFista = params.doFistaUpdate
    local verbose = params.verbose
    local function buffer(k)
      local b = params[k]
      if not (torch.is_tensor(b) and b:numel() == xinit:numel() and b.dtype == xinit.dtype) then
        b = torch.zeros_like(xinit)
      end
      params[k] = b:view(xinit.shape):zero_()
      return params[k]
    end
    local xkm, y, ply = buffer("xkm"), buffer("y"), buffer("ply")
    local xk = xinit
    local history = {}
    local niter = 0
    local tk, tkp = 1, 0
    local fval = math.huge
    while niter < maxiter do
      local fy, gfy = f(y, "dx")
      fy = num(fy)
      local fply, gply, Q = 0, 0, 0
      local nline = 0
      local searching = true
      while searching do
        -- a gradient step of the smooth part, then the proximal step
        ply:copy_(y):add_(gfy, { alpha = -1 / L })
        pl(ply, L)
        xk:copy_(ply)
        fply = num((f(ply)))
        ply:sub_(y)
        local Q2 = dot(gfy, ply)
        local Q3 = L / 2 * dot(ply, ply)
        Q = fy + Q2 + Q3
        if verbose then
          print(("nline=%d L=%g fply=%g Q=%g fy=%g Q2=%g Q3=%g"):format(nline, L, fply, Q, fy, Q2, Q3))
        end
        if fply <= Q then
          searching = false
        elseif nline >= maxline then
          searching = false
          xk:copy_(xkm)          -- no better point: keep the previous one
        else
          L = L * Lstep
        end
        nline = nline + 1
      end
      if doFista then
        tkp = (1 + math.sqrt(1 + 4 * tk * tk)) / 2
        xkm:sub_(xk)
        y:copy_(xk):add_(xkm, { alpha = (1 - tk) / tkp })
        xkm:copy_(xk)
      else
        y:copy_(xk)
      end
      tk = tkp
      fply = num((f(y)))
      gply = num((g(y)))
      if verbose then print(("iter=%d eold=%g enew=%g"):format(niter, fval, fply + gply)) end
      niter = niter + 1
      fval = fply + gply
      history[niter] = { nline = nline, L = L, F = fval, Fply = fply, Gply = gply, Q = Q }
      if verbose then history[niter].xk = xk:clone(); history[niter].y = y:clone() end
      params.L = L
      if (niter > 1 and math.abs(history[niter].F - history[niter - 1].F) <= errthres) or niter >= maxiter then
        xinit:copy_(y)
        return y, history
      end
    end
    return y, history
  end
end
