-- optim.lbfgs(opfunc, x, config, state): Torch7's L-BFGS (after minFunc). Each call runs up to
-- maxIter iterations: the two-loop recursion over the last nCorrection steps gives the
-- direction, lineSearch (a function such as optim.lswolfe, called with lineSearchOptions) or a
-- fixed step of learningRate (the first iteration: min(1, 1/|g|_1) * learningRate) moves x.
-- The history stays in state, so calls with maxIter = 1 make a stochastic L-BFGS.
-- Returns x, the f values (f(x) before, then after each iteration) and the evaluations made.
local torch = require "torch"
local check = require "optim.t7.check"

local num, dot, asum = check.num, check.dot, check.asum

return function(optim)
  function optim.lbfgs(opfunc, x, config, state)
    config, state = check.args("lbfgs", opfunc, x, config, state)
    local maxIter = tonumber(config.maxIter) or 20
    local maxEval = tonumber(config.maxEval) or maxIter * 1.25
    local tolFun = config.tolFun or 1e-5
    local tolX = config.tolX or 1e-9
    local nCorrection = config.nCorrection or 100
    local lineSearch = config.lineSearch
    local lsOptions = config.lineSearchOptions
    local lr = config.learningRate or 1
    local verbose = config.verbose and function(...) print("<optim.lbfgs> ", ...) end or function() end
    if lineSearch ~= nil and type(lineSearch) ~= "function" then
      error("optim.lbfgs: option 'lineSearch' must be a function (optim.lswolfe)", 0)
    end
    state.funcEval = state.funcEval or 0
    state.nIter = state.nIter or 0

    -- f and the flat gradient (a copy: opfunc may return one buffer each time)
    local function fg()
      local f, g = check.eval("lbfgs", opfunc, x)
      return num(f), g:reshape(-1):clone()
    end
    local f, g = fg()
    local f_hist = { f }
    local nEval = 1
    state.funcEval = state.funcEval + 1
    if asum(g) <= tolFun then
      verbose("optimality condition below tolFun")
      return x, f_hist, nEval
    end

    local d, t = state.d, state.t
    local old_dirs, old_stps, Hdiag = state.old_dirs, state.old_stps, state.Hdiag
    local g_old, f_old = state.g_old, state.f_old
    local nIter = 0
    torch.no_grad(function()
      while nIter < maxIter do
        nIter = nIter + 1
        state.nIter = state.nIter + 1
        if state.nIter == 1 then
          d = g:clone():neg_()
          old_dirs, old_stps, Hdiag = {}, {}, 1
        else
          -- the new pair: y = g - g_old, s = t d
          local y = g - g_old
          local s = d * t
          local ys = dot(y, s)
          if ys > 1e-10 then
            if #old_dirs == nCorrection then
              table.remove(old_dirs, 1); table.remove(old_stps, 1)
            end
            old_dirs[#old_dirs + 1] = s
            old_stps[#old_stps + 1] = y
            Hdiag = ys / dot(y, y)
          end
          -- two-loop recursion: d = -H g
          local k = #old_dirs
          local ro, al = {}, {}
          for i = 1, k do ro[i] = 1 / dot(old_stps[i], old_dirs[i]) end
          local q = g:clone():neg_()
          for i = k, 1, -1 do
            al[i] = dot(old_dirs[i], q) * ro[i]
            q:add_(old_stps[i], { alpha = -al[i] })
          end
          d = q:mul_(Hdiag)
          for i = 1, k do
            local be = dot(old_stps[i], d) * ro[i]
            d:add_(old_dirs[i], { alpha = al[i] - be })
          end
        end
        g_old = g:clone()
        f_old = f

        local gtd = dot(g, d)
        if gtd > -tolX then break end       -- no descent along d
        if state.nIter == 1 then t = math.min(1, 1 / asum(g)) * lr else t = lr end

        local lsEval = 0
        if lineSearch then
          local gx, _
          f, gx, _, t, lsEval = lineSearch(opfunc, x, t, d:view(x.shape), f, g:view(x.shape), gtd, lsOptions)
          f, g = num(f), gx:reshape(-1):clone()
          f_hist[#f_hist + 1] = f
        else
          x:add_(d:view(x.shape), { alpha = t })
          if nIter ~= maxIter then
            -- (no evaluation after the last iteration: a stochastic caller evaluates next call)
            f, g = fg()
            lsEval = 1
            f_hist[#f_hist + 1] = f
          end
        end
        nEval = nEval + lsEval
        state.funcEval = state.funcEval + lsEval

        if nIter == maxIter then verbose("reached max number of iterations"); break end
        if nEval >= maxEval then verbose("max nb of function evals"); break end
        if asum(g) <= tolFun then verbose("optimality condition below tolFun"); break end
        if asum(d) * math.abs(t) <= tolX then verbose("step size below tolX"); break end
        if math.abs(f - f_old) < tolX then verbose("function value changing less than tolX"); break end
      end
    end)
    state.d, state.t = d, t
    state.old_dirs, state.old_stps, state.Hdiag = old_dirs, old_stps, Hdiag
    state.g_old, state.f_old = g_old, f_old
    return x, f_hist, nEval
  end
end
