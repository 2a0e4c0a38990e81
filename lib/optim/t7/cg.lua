-- optim.cg(opfunc, x, config, state): nonlinear conjugate gradients (Polak-Ribiere) with
-- Rasmussen's line search of minimize.m: quadratic/cubic extrapolation and interpolation under
-- the Wolfe-Powell conditions. config: maxEval (maxIter * 1.25, the limit that counts), maxIter
-- (20, also the evaluations one line search may make), rho (0.01) and sig (0.5) the Wolfe-Powell
-- constants, int (0.1) the closest an interpolation may come to the bracket's ends, ext (3.0)
-- the largest extrapolation, ratio (100) the largest slope ratio. As in minimize.m, two line
-- searches failing in a row end the search. Returns x, the f values (f(x) before, then after
-- each successful line search) and the number of evaluations.
local torch = require "torch"
local check = require "optim.t7.check"

local num, dot = check.num, check.dot

return function(optim)
  function optim.cg(opfunc, x, config, state)
    config, state = check.args("cg", opfunc, x, config, state)
    local rho, sig = config.rho or 0.01, config.sig or 0.5
    local int, ext = config.int or 0.1, config.ext or 3.0
    local maxIter = config.maxIter or 20
    local ratio = config.ratio or 100
    local maxEval = config.maxEval or maxIter * 1.25
    local xs = x.shape
    local function fg()
      local f, g = check.eval("cg", opfunc, x)
      return num(f), g:reshape(-1):clone()
    end
    local i = 0
    local fx = {}
    local ls_failed = false
    local f1, df1 = fg()
    i = i + 1
    fx[1] = f1
    local s = df1:clone():neg_()                 -- search direction
    local d1 = -dot(s, s)                        -- slope
    local z1 = 1 / (1 - d1)                      -- initial step
    local x0, f0, df0
    local df2
    torch.no_grad(function()
      while i < math.abs(maxEval) do
        x0, f0, df0 = x:clone(), f1, df1:clone()
        x:add_(s:view(xs), { alpha = z1 })
        local f2
        f2, df2 = fg()
        i = i + 1
        local d2 = dot(df2, s)
        local f3, d3, z3 = f1, d1, -z1           -- point 3 starts as point 1
        local m = math.min(maxIter, maxEval - i)
        local success, limit = false, -1
        while true do
          while (f2 > f1 + z1 * rho * d1 or d2 > -sig * d1) and m > 0 do
            limit = z1                           -- tighten the bracket
            local z2
            if f2 > f1 then
              z2 = z3 - (0.5 * d3 * z3 * z3) / (d3 * z3 + f2 - f3)     -- quadratic fit
            else
              local A = 6 * (f2 - f3) / z3 + 3 * (d2 + d3)           -- cubic fit
              local B = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
              z2 = (math.sqrt(B * B - A * d2 * z3 * z3) - B) / A
            end
            if z2 ~= z2 or math.abs(z2) == math.huge then z2 = z3 / 2 end
            z2 = math.max(math.min(z2, int * z3), (1 - int) * z3)
            z1 = z1 + z2
            x:add_(s:view(xs), { alpha = z2 })
            f2, df2 = fg()
            i = i + 1
            m = m - 1
            d2 = dot(df2, s)
            z3 = z3 - z2
          end
          if f2 > f1 + z1 * rho * d1 or d2 > -sig * d1 then break          -- failure
          elseif d2 > sig * d1 then success = true; break                  -- success
          elseif m == 0 then break end                                     -- out of evaluations
          -- extrapolate by a cubic
          local A = 6 * (f2 - f3) / z3 + 3 * (d2 + d3)
          local B = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
          local z2 = -d2 * z3 * z3 / (B + math.sqrt(B * B - A * d2 * z3 * z3))
          if z2 ~= z2 or math.abs(z2) == math.huge or z2 < 0 then
            if limit < -0.5 then z2 = z1 * (ext - 1) else z2 = (limit - z1) / 2 end
          elseif limit > -0.5 and z2 + z1 > limit then
            z2 = (limit - z1) / 2
          elseif limit < -0.5 and z2 + z1 > z1 * ext then
            z2 = z1 * (ext - 1)
          elseif z2 < -z3 * int then
            z2 = -z3 * int
          elseif limit > -0.5 and z2 < (limit - z1) * (1 - int) then
            z2 = (limit - z1) * (1 - int)
          end
          f3, d3, z3 = f2, d2, -z2
          z1 = z1 + z2
          x:add_(s:view(xs), { alpha = z2 })
          f2, df2 = fg()
          i = i + 1
          m = m - 1
          d2 = dot(df2, s)
        end
        if success then
          f1 = f2
          fx[#fx + 1] = f1
          -- Polak-Ribiere direction
          local beta = (dot(df2, df2) - dot(df2, df1)) / dot(df1, df1)
          s:mul_(beta):sub_(df2)
          df1, df2 = df2, df1
          d2 = dot(df1, s)
          if d2 > 0 then                         -- not downhill: steepest descent
            s:copy_(df1):neg_()
            d2 = -dot(s, s)
          end
          z1 = z1 * math.min(ratio, d1 / (d2 - 1e-320))
          d1 = d2
          ls_failed = false
        else
          -- back to the point before the failed line search
          x:copy_(x0)
          f1, df1 = f0, df0
          if ls_failed or i > maxEval then break end
          df1, df2 = df2, df1
          s:copy_(df1):neg_()
          d1 = -dot(s, s)
          z1 = 1 / (1 - d1)
          ls_failed = true
        end
      end
    end)
    state.df0, state.df1, state.df2, state.x0, state.s = df0, df1, df2, x0, s
    return x, fx, i
  end
end
