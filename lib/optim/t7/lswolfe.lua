-- optim.lswolfe(opfunc, x, t, d, f, g, gtd [, options]): Torch7's line search along d from x
-- for a step satisfying the strong Wolfe conditions (after minFunc): bracketing by cubic
-- extrapolation, then zooming by cubic interpolation (optim.polyinterp). options: c1 (1e-4,
-- sufficient decrease), c2 (0.9, curvature), tolX (1e-9, smallest bracket), maxIter (20),
-- verbose. x is left at x + t d. Returns f and g there, x, the step t and the number of
-- evaluations — the form optim.lbfgs's lineSearch option calls.
local torch = require "torch"
local check = require "optim.t7.check"

local num, dot = check.num, check.dot

return function(optim)
  function optim.lswolfe(opfunc, x, t, d, f, g, gtd, options)
    options = options or {}
    if type(options) ~= "table" then error("optim.lswolfe: argument 'options' must be a table", 0) end
    check.options("lswolfe", options)
    local c1, c2 = options.c1 or 1e-4, options.c2 or 0.9
    local tolX = options.tolX or 1e-9
    local maxIter = options.maxIter or 20
    local verbose = options.verbose and function(...) print("<optim.lswolfe> ", ...) end or function() end
    f, gtd = num(f), num(gtd)
    local dd = d:view(x.shape)
    local x_init = x:clone()
    local function at(step)
      torch.no_grad(function() x:copy_(x_init):add_(dd, { alpha = step }) end)
      local fv, gv = opfunc(x)
      gv = gv:clone()
      return num(fv), gv, dot(gv, dd)
    end
    local f_new, g_new, gtd_new = at(t)
    local nEval = 1
    local LSiter, t_prev, done = 0, 0, false
    local f_prev, g_prev, gtd_prev = f, g:clone(), gtd
    -- bracket: positions, values and gradients of one or two points
    local bt, bf, bg
    while LSiter < maxIter do
      if f_new > f + c1 * t * gtd or (LSiter > 1 and f_new >= f_prev) then
        bt, bf, bg = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new }
        break
      elseif math.abs(gtd_new) <= -c2 * gtd then
        bt, bf, bg = { t }, { f_new }, { g_new }
        done = true
        break
      elseif gtd_new >= 0 then
        bt, bf, bg = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new }
        break
      end
      -- extrapolate: the cubic's minimum between t + 0.01 (t - t_prev) and 10 t
      local tmp = t_prev
      t_prev = t
      t = optim.polyinterp({ { tmp, f_prev, gtd_prev }, { t, f_new, gtd_new } }, t + 0.01 * (t - tmp), t * 10)
      f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
      f_new, g_new, gtd_new = at(t)
      nEval = nEval + 1
      LSiter = LSiter + 1
    end
    if LSiter == maxIter then
      bt, bf, bg = { 0, t }, { f, f_new }, { g, g_new }
    end
    -- zoom
    local insufProgress = false
    while not done and LSiter < maxIter do
      local LO = bf[2] < bf[1] and 2 or 1
      local HI = 3 - LO
      t = optim.polyinterp({ { bt[1], bf[1], dot(bg[1], dd) }, { bt[2], bf[2], dot(bg[2], dd) } })
      local bmax, bmin = math.max(bt[1], bt[2]), math.min(bt[1], bt[2])
      if math.min(bmax - t, t - bmin) / (bmax - bmin) < 0.1 then
        if insufProgress or t >= bmax or t <= bmin then
          if math.abs(t - bmax) < math.abs(t - bmin) then t = bmax - 0.1 * (bmax - bmin)
          else t = bmin + 0.1 * (bmax - bmin) end
          insufProgress = false
        else
          insufProgress = true
        end
      else
        insufProgress = false
      end
      f_new, g_new, gtd_new = at(t)
      nEval = nEval + 1
      LSiter = LSiter + 1
      if f_new > f + c1 * t * gtd or f_new >= bf[LO] then
        bt[HI], bf[HI], bg[HI] = t, f_new, g_new
      else
        if math.abs(gtd_new) <= -c2 * gtd then
          done = true
        elseif gtd_new * (bt[HI] - bt[LO]) >= 0 then
          bt[HI], bf[HI], bg[HI] = bt[LO], bf[LO], bg[LO]
        end
        bt[LO], bf[LO], bg[LO] = t, f_new, g_new
      end
      if not done and math.abs((bt[1] - bt[2]) * gtd_new) < tolX then break end
    end
    if LSiter == maxIter then verbose("reached max number of iterations") end
    local LO = (bf[2] ~= nil and bf[2] < bf[1]) and 2 or 1
    t = bt[LO]
    torch.no_grad(function() x:copy_(x_init):add_(dd, { alpha = t }) end)
    return bf[LO], bg[LO], x, t, nEval
  end
end
