-- optim.polyinterp(points [, xminBound, xmaxBound]): the minimum of the polynomial that
-- interpolates N points given as (position, f, f') triples (an N x 3 tensor or a Lua list of
-- triples), searched between the bounds (default: the smallest and largest position). Two
-- points without bounds: the minimum of their cubic in closed form (Torch7's common case),
-- their mean when the cubic has no real minimum. Otherwise the polynomial of degree 2N-1 is
-- solved for, and the lowest of its values at the bounds, the points and the real critical
-- points inside the bounds is taken. Returns the position (and, in the general case, the
-- polynomial's value there).
local torch = require "torch"

-- the value at x of the polynomial c (highest power first)
local function polyval(c, x)
  local v = 0
  for i = 1, #c do v = v * x + c[i] end
  return v
end

-- solves the square system A y = b (Gaussian elimination, partial pivoting); nil if singular
local function solve(A, b)
  local n = #b
  local M = {}
  for i = 1, n do M[i] = { table.unpack(A[i]) }; M[i][n + 1] = b[i] end
  for k = 1, n do
    local p = k
    for i = k + 1, n do if math.abs(M[i][k]) > math.abs(M[p][k]) then p = i end end
    if M[p][k] == 0 then return nil end
    M[k], M[p] = M[p], M[k]
    for i = k + 1, n do
      local f = M[i][k] / M[k][k]
      for j = k, n + 1 do M[i][j] = M[i][j] - f * M[k][j] end
    end
  end
  local y = {}
  for i = n, 1, -1 do
    local s = M[i][n + 1]
    for j = i + 1, n do s = s - M[i][j] * y[j] end
    y[i] = s / M[i][i]
  end
  return y
end

-- the real roots of the polynomial c (highest power first)
local function real_roots(c)
  local k = 1
  while k <= #c and c[k] == 0 do k = k + 1 end
  local p = {}
  for i = k, #c do p[#p + 1] = c[i] / c[k] end   -- monic
  local n = #p - 1
  if n < 1 then return {} end
  if n == 1 then return { -p[2] } end
  if n == 2 then
    local disc = p[2] * p[2] - 4 * p[3]
    if disc < 0 then return {} end
    local s = math.sqrt(disc)
    return { (-p[2] + s) / 2, (-p[2] - s) / 2 }
  end
  -- Durand-Kerner on complex numbers {re, im}
  local zr, zi = {}, {}
  for i = 1, n do
    local a = 2 * math.pi * (i - 1) / n + 0.4
    zr[i], zi[i] = 0.9 * math.cos(a), 0.9 * math.sin(a)
  end
  for _ = 1, 500 do
    local moved = 0
    for i = 1, n do
      -- value of the polynomial at z_i (Horner, complex)
      local vr, vi = 1, 0
      for j = 2, #p do vr, vi = vr * zr[i] - vi * zi[i] + p[j], vr * zi[i] + vi * zr[i] end
      -- product of (z_i - z_j)
      local dr, di = 1, 0
      for j = 1, n do
        if j ~= i then
          local ar, ai = zr[i] - zr[j], zi[i] - zi[j]
          dr, di = dr * ar - di * ai, dr * ai + di * ar
        end
      end
      local den = dr * dr + di * di
      if den > 0 then
        local qr, qi = (vr * dr + vi * di) / den, (vi * dr - vr * di) / den
        zr[i], zi[i] = zr[i] - qr, zi[i] - qi
        moved = math.max(moved, math.abs(qr) + math.abs(qi))
      end
    end
    if moved < 1e-14 then break end
  end
  local out = {}
  for i = 1, n do
    if math.abs(zi[i]) <= 1e-9 * (1 + math.abs(zr[i])) then out[#out + 1] = zr[i] end
  end
  return out
end

-- the points as a Lua list of {position, f, f'}
local function triples(points)
  if torch.is_tensor(points) then
    if points:dim() ~= 2 or points:size(2) ~= 3 then
      error("optim.polyinterp: argument 'points' must be an N x 3 tensor of (x, f, f') triples", 0)
    end
    return points:totable()
  end
  if type(points) ~= "table" then
    error("optim.polyinterp: argument 'points' must be an N x 3 tensor or a list of triples", 0)
  end
  return points
end

return function(optim)
  function optim.polyinterp(points, xminBound, xmaxBound)
    local P = triples(points)
    local n = #P
    if n == 2 and not xminBound and not xmaxBound then
      -- lo: the point with the smaller position, hi: the other
      local lo, hi = P[1], P[2]
      if P[2][1] < P[1][1] then lo, hi = P[2], P[1] end
      local d1 = lo[3] + hi[3] - 3 * (lo[2] - hi[2]) / (lo[1] - hi[1])
      local d2sq = d1 * d1 - lo[3] * hi[3]
      if d2sq >= 0 then
        local d2 = math.sqrt(d2sq)
        local t = hi[1] - (hi[1] - lo[1]) * ((hi[3] + d2 - d1) / (hi[3] - lo[3] + 2 * d2))
        return math.min(math.max(t, lo[1]), hi[1])
      end
      return (lo[1] + hi[1]) / 2
    end
    local xmin, xmax = math.huge, -math.huge
    for i = 1, n do xmin = math.min(xmin, P[i][1]); xmax = math.max(xmax, P[i][1]) end
    xminBound = xminBound or xmin
    xmaxBound = xmaxBound or xmax
    -- the polynomial of degree 2n-1 through the values and the derivatives
    local order = 2 * n - 1
    local A, b = {}, {}
    for i = 1, n do
      local row, drow = {}, {}
      for j = 0, order do
        local pw = order - j
        row[j + 1] = P[i][1] ^ pw
        drow[j + 1] = pw > 0 and pw * P[i][1] ^ (pw - 1) or 0
      end
      A[i], b[i] = row, P[i][2]
      A[n + i], b[n + i] = drow, P[i][3]
    end
    local params = solve(A, b)
    local cands = { xminBound, xmaxBound }
    for i = 1, n do cands[#cands + 1] = P[i][1] end
    local minPos, fmin = (xminBound + xmaxBound) / 2, math.huge
    if params then
      local dparams, finite = {}, true
      for i = 1, order do
        if math.abs(params[i]) <= 1e-12 then params[i] = 0 end
        dparams[i] = params[i] * (order - i + 1)
        if dparams[i] ~= dparams[i] or math.abs(dparams[i]) == math.huge then finite = false end
      end
      if math.abs(params[order + 1]) <= 1e-12 then params[order + 1] = 0 end
      if finite then for _, r in ipairs(real_roots(dparams)) do cands[#cands + 1] = r end end
      for _, x in ipairs(cands) do
        if x >= xminBound and x <= xmaxBound then
          local f = polyval(params, x)
          if f < fmin then minPos, fmin = x, f end
        end
      end
    end
    return minPos, fmin
  end
end
