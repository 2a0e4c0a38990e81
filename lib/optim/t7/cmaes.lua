-- optim.cmaes(opfunc, x, config, state): CMA-ES, the covariance matrix adaptation evolution
-- strategy (Hansen's barecmaes2, as Torch7 ported it). Only f(x) is used. config (or state, as
-- Torch7 read it): sigma (required: the initial step size in each coordinate), maxEval
-- (1e3 * N^2), ftarget (stop when f <= ftarget), popsize (4 + floor(3 ln N)), verb_disp (print
-- every verb_disp iterations; 0, the default: quiet), min_iterations (1). Candidates are drawn
-- from the global generator (torch.randn). x itself is not changed. Returns the best point seen
-- (a new tensor shaped as x), the f values (f(x), the best of each iteration, the best seen) and
-- the number of evaluations. The N x N algebra runs in Lua (Jacobi's eigendecomposition): for
-- the small problems CMA-ES is meant for.
local torch = require "torch"
local check = require "optim.t7.check"
local vec = require "optim.t7.vec"

-- eigenvalues and eigenvectors (columns of V) of the symmetric matrix A (Lua lists), Jacobi
local function eigh(A, n)
  local a, V = {}, {}
  for i = 1, n do
    a[i], V[i] = {}, {}
    for j = 1, n do a[i][j] = A[i][j]; V[i][j] = i == j and 1 or 0 end
  end
  for _ = 1, 100 do
    local off = 0
    for i = 1, n do for j = i + 1, n do off = off + a[i][j] * a[i][j] end end
    if off < 1e-30 then break end
    for p = 1, n - 1 do
      for q = p + 1, n do
        if math.abs(a[p][q]) > 1e-300 then
          local theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
          local t = (theta >= 0 and 1 or -1) / (math.abs(theta) + math.sqrt(theta * theta + 1))
          local c = 1 / math.sqrt(t * t + 1)
          local s = t * c
          for k = 1, n do
            local akp, akq = a[k][p], a[k][q]
            a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
          end
          for k = 1, n do
            local apk, aqk = a[p][k], a[q][k]
            a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
          end
          for k = 1, n do
            local vkp, vkq = V[k][p], V[k][q]
            V[k][p], V[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
          end
        end
      end
    end
  end
  local w = {}
  for i = 1, n do w[i] = a[i][i] end
  return w, V
end

return function(optim)
  function optim.cmaes(opfunc, x, config, state)
    config, state = check.args("cmaes", opfunc, x, config, state)
    local function opt(k) if config[k] ~= nil then return config[k] end return state[k] end
    local xmean = vec.list(x)
    local N = #xmean
    local sigma = opt("sigma")
    if type(sigma) ~= "number" then error("optim.cmaes: option 'sigma' (the initial step size) is required", 0) end
    local ftarget = opt("ftarget")
    local maxEval = tonumber(opt("maxEval")) or 1e3 * N ^ 2
    local verb_disp = opt("verb_disp") or 0
    local min_iterations = opt("min_iterations") or 1
    local lambda = opt("popsize") or 4 + math.floor(3 * math.log(N))
    local mu = lambda / 2
    local nmu = math.floor(mu)
    local w, wsum = {}, 0
    for i = 1, nmu do w[i] = math.log(mu + 0.5) - math.log(i); wsum = wsum + w[i] end
    local w2 = 0
    for i = 1, nmu do w[i] = w[i] / wsum; w2 = w2 + w[i] * w[i] end
    local mueff = 1 / w2
    local cc = (4 + mueff / N) / (N + 4 + 2 * mueff / N)
    local cs = (mueff + 2) / (N + mueff + 5)
    local c1 = 2 / ((N + 1.3) ^ 2 + mueff)
    local cmu = math.min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((N + 2) ^ 2 + mueff))
    local damps = 2 * mueff / lambda + 0.3 + cs

    local pc, ps, D = {}, {}, {}
    local B, C, invsqrtC = {}, {}, {}
    for i = 1, N do
      pc[i], ps[i], D[i] = 0, 0, 1
      B[i], C[i], invsqrtC[i] = {}, {}, {}
      for j = 1, N do local e = i == j and 1 or 0; B[i][j], C[i][j], invsqrtC[i][j] = e, e, e end
    end
    local eigeneval, counteval, iteration = 0, 0, 0
    local f_hist = { vec.num((opfunc(x))) }
    local fitvals = {}
    local best_x, best_f, best_at
    local function maxD() local m = -math.huge for i = 1, N do m = math.max(m, D[i]) end return m end
    local function minD() local m = math.huge for i = 1, N do m = math.min(m, D[i]) end return m end

    local function stop()
      local res = {}
      if counteval > 0 then
        if counteval >= maxEval then res.evals = maxEval end
        if ftarget ~= nil and fitvals[1] <= ftarget then res.ftarget = ftarget end
        if maxD() > 1e7 * minD() then res.condition = 1e7 end
        if #fitvals > 1 and fitvals[#fitvals] - fitvals[1] < 1e-12 then res.tolfun = 1e-12 end
        if sigma * maxD() < 1e-11 then res.tolx = 1e-11 end
      end
      return res
    end

    while next(stop()) == nil or iteration < min_iterations do
      iteration = iteration + 1
      -- ask: lambda candidates xmean + sigma * B * (D .* normal)
      if counteval - eigeneval > lambda / (c1 + cmu) / N / 10 then
        eigeneval = counteval
        for i = 1, N do for j = i + 1, N do C[j][i] = C[i][j] end end
        local ev
        ev, B = eigh(C, N)
        for i = 1, N do D[i] = math.sqrt(math.max(ev[i], 0)) end
        for i = 1, N do
          for j = 1, N do
            local s = 0
            for k = 1, N do s = s + B[i][k] * B[j][k] / D[k] end
            invsqrtC[i][j] = s
          end
        end
      end
      local cands, fits = {}, {}
      for k = 1, lambda do
        local z = torch.randn(N):totable()
        local c = {}
        for i = 1, N do
          local s = 0
          for j = 1, N do s = s + B[i][j] * D[j] * z[j] end
          c[i] = xmean[i] + sigma * s
        end
        cands[k] = c
        fits[k] = vec.num((opfunc(vec.tensor(c, x))))
      end
      -- tell: sort, recombine, update the paths, C and sigma
      counteval = counteval + lambda
      local order = {}
      for k = 1, lambda do order[k] = k end
      table.sort(order, function(a, b) if fits[a] ~= fits[b] then return fits[a] < fits[b] end return a < b end)
      fitvals = {}
      for k = 1, lambda do fitvals[k] = fits[order[k]] end
      f_hist[#f_hist + 1] = fitvals[1]
      if best_f == nil or fitvals[1] < best_f then
        best_x, best_f, best_at = cands[order[1]], fitvals[1], counteval
      end
      local xold = xmean
      xmean = {}
      for i = 1, N do
        local s = 0
        for k = 1, nmu do s = s + w[k] * cands[order[k]][i] end
        xmean[i] = s
      end
      local y, z = {}, {}
      for i = 1, N do y[i] = xmean[i] - xold[i] end
      for i = 1, N do
        local s = 0
        for j = 1, N do s = s + invsqrtC[i][j] * y[j] end
        z[i] = s
      end
      local c = math.sqrt(cs * (2 - cs) * mueff) / sigma
      local ps2 = 0
      for i = 1, N do ps[i] = (1 - cs) * ps[i] + c * z[i]; ps2 = ps2 + ps[i] * ps[i] end
      local hsig = (ps2 / (1 - (1 - cs) ^ (2 * counteval / lambda)) / N < 2 + 4 / (N + 1)) and 1 or 0
      c = math.sqrt(cc * (2 - cc) * mueff) / sigma
      for i = 1, N do pc[i] = (1 - cc) * pc[i] + c * hsig * y[i] end
      local c1a = c1 - (1 - hsig * hsig) * c1 * cc * (2 - cc)
      for i = 1, N do
        for j = 1, N do
          local cmuij = 0
          for k = 1, nmu do
            local a = cands[order[k]]
            cmuij = cmuij + w[k] * (a[i] - xold[i]) * (a[j] - xold[j])
          end
          cmuij = cmuij / sigma ^ 2
          C[i][j] = C[i][j] + (-c1a - cmu) * C[i][j] + c1 * pc[i] * pc[j] + cmu * cmuij
        end
      end
      sigma = sigma * math.exp(math.min(0.6, (cs / damps) * (ps2 / N - 1) / 2))
      if verb_disp > 0 then
        local it = counteval / lambda
        if it == 1 or it % (10 * verb_disp) == 0 then print("evals:\t ax-ratio max(std)   f-value") end
        if it <= 2 or it % verb_disp == 0 then
          local mc = -math.huge
          for i = 1, N do mc = math.max(mc, C[i][i]) end
          print(("%d:  %6.1f %8.1e %s"):format(counteval, maxD() / minD(), sigma * math.sqrt(mc), tostring(fitvals[1])))
        end
      end
    end
    if verb_disp > 0 then
      for k, v in pairs(stop()) do print("termination by", k, "=", v) end
      print("best f-value =", best_f)
      print("best found at iteration: ", best_at / lambda, " , total iterations: ", iteration)
    end
    f_hist[#f_hist + 1] = best_f
    return vec.tensor(best_x, x), f_hist, counteval
  end
end
