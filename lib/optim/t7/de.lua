-- optim.de(opfunc, x, config): differential evolution (DE/best/1 with binomial crossover). Only
-- f(x) is used and x only gives the dimension and the type. config: popsize (10 * N),
-- scaleFactor (0.5), crossoverRate (0.9), maxFEs (required: the evaluations to make),
-- minRegion and maxRegion (-30, 30: the box the first population is drawn from). The draws come
-- from DE's own generator seeded with 1 (as in Torch7: runs repeat, the global generator is left
-- alone). Returns the best point found (a new tensor shaped as x) and a tensor of the maxFEs f
-- values in the order they were evaluated. Unlike Torch7's, the first best point is the best
-- of the first population (Torch7 took its worst).
local check = require "optim.t7.check"
local vec = require "optim.t7.vec"

return function(optim)
  function optim.de(opfunc, x, config)
    local state
    config, state = check.args("de", opfunc, x, config, nil)
    local D = x:numel()
    local popsize = config.popsize or 10 * D
    local F = config.scaleFactor or 0.5
    local CR = config.crossoverRate or 0.9
    local maxFEs = tonumber(config.maxFEs)
    if not maxFEs then error("optim.de: option 'maxFEs' (the number of evaluations) is required", 0) end
    local hi, lo = config.maxRegion or 30, config.minRegion or -30
    if popsize < 3 then error("optim.de: option 'popsize' must be at least 3", 0) end
    local gen = vec.generator(1)
    local fx = {}
    local function f(v)
      local y = vec.num((opfunc(vec.tensor(v, x))))
      fx[#fx + 1] = y
      return y
    end
    local pop, fit = {}, {}
    for i = 1, popsize do
      pop[i] = {}
      for j = 1, D do pop[i][j] = gen.uniform(lo, hi) end
    end
    for i = 1, popsize do
      if #fx >= maxFEs then break end
      fit[i] = f(pop[i])
    end
    local best = 1
    for i = 2, #fit do if fit[i] < fit[best] then best = i end end
    local best_f, best_x = fit[best], { table.unpack(pop[best]) }
    while #fx < maxFEs do
      local children, cfit = {}, {}
      for i = 1, popsize do
        if #fx >= maxFEs then break end
        local r1, r2
        repeat r1 = gen.random(1, popsize) until r1 ~= i
        repeat r2 = gen.random(1, popsize) until r2 ~= r1 and r2 ~= i
        local jrand = gen.random(1, D)
        local c = {}
        for j = 1, D do
          if gen.uniform() < CR or j == jrand then c[j] = best_x[j] + F * (pop[r1][j] - pop[r2][j])
          else c[j] = pop[i][j] end
        end
        children[i], cfit[i] = c, f(c)
      end
      for i, c in pairs(children) do
        if cfit[i] <= fit[i] then
          pop[i], fit[i] = c, cfit[i]
          if fit[i] < best_f then best_f, best_x = fit[i], { table.unpack(c) } end
        end
      end
    end
    local fxt = x:new_zeros({ #fx })
    for i = 1, #fx do fxt[i] = fx[i] end
    return vec.tensor(best_x, x), fxt
  end
end
