-- Reductions and scans: values, dtypes, keepdim shapes, negative and multiple
-- dims, 1-based indices, NaN, empty tensors, non-contiguous inputs, errors.
local T = require "testing"
local nan, inf = 0 / 0, math.huge

local function tt(v, dt) return torch.tensor(v, dt and { dtype = dt } or nil) end
local x23 = function() return tt({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32") end
-- a transposed view, when the view ops exist
local function transposed(x)
  if x.t then return x:t() end
  if x.transpose then return x:transpose(1, 2) end
  return nil
end

T.test("sum: all, dims, keepdim, negative dims", function()
  local x = x23()
  T.tensor(x:sum(), 21, { dtype = "float32", shape = {} })
  T.tensor(x:sum(1), { 5, 7, 9 }, { shape = { 3 } })
  T.tensor(x:sum(2), { 6, 15 })
  T.tensor(x:sum(-1), { 6, 15 })
  T.tensor(x:sum(-2), { 5, 7, 9 })
  T.tensor(x:sum(1, true), { { 5, 7, 9 } }, { shape = { 1, 3 } })
  T.tensor(x:sum({ 1, 2 }), 21, { shape = {} })
  T.tensor(x:sum({ 1, 2 }, true), { { 21 } }, { shape = { 1, 1 } })
  T.tensor(torch.sum(x, { dim = 2, keepdim = true }), { { 6 }, { 15 } })
  T.tensor(x:sum({}), 21)
end)

T.test("sum: 3-d over non-adjacent dims and middle dim", function()
  local v = {}
  for i = 1, 2 do v[i] = {} for j = 1, 3 do v[i][j] = {} for k = 1, 4 do v[i][j][k] = (i - 1) * 12 + (j - 1) * 4 + k end end end
  local x = tt(v, "float64")
  -- over dims 1 and 3
  local e13 = {}
  for j = 1, 3 do local s = 0 for i = 1, 2 do for k = 1, 4 do s = s + v[i][j][k] end end e13[j] = s end
  T.tensor(x:sum({ 1, 3 }), e13)
  T.tensor(x:sum({ 3, 1 }, true), { { { e13[1] }, { e13[2] }, { e13[3] } } }, { shape = { 1, 3, 1 } })
  -- over the middle dim
  local e2 = {}
  for i = 1, 2 do e2[i] = {} for k = 1, 4 do local s = 0 for j = 1, 3 do s = s + v[i][j][k] end e2[i][k] = s end end
  T.tensor(x:sum(2), e2)
  T.tensor(x:sum(-2), e2)
end)

T.test("sum: integer and bool inputs give int64; dtype= converts", function()
  T.tensor(tt({ 1, 2, 3 }, "int32"):sum(), 6, { dtype = "int64" })
  T.tensor(tt({ 100, 100 }, "int8"):sum(), 200, { dtype = "int64" })
  T.tensor(tt({ true, true, false }):sum(), 2, { dtype = "int64" })
  T.tensor(tt({ 1, 2 }, "int32"):sum({ dtype = "float64" }), 3, { dtype = "float64" })
  T.tensor(tt({ 1.5, 2.5 }, "float16"):sum(), 4, { dtype = "float16" })
  T.tensor(tt({ 1.5, 2.5 }, "bfloat16"):sum(), 4, { dtype = "bfloat16" })
  local big = tt({ 1 << 62, (1 << 62) - 1 }, "int64")
  T.eq(big:sum():item(), math.maxinteger)
end)

T.test("sum: empty tensors give 0; out=", function()
  T.tensor(torch.zeros(0):sum(), 0, { shape = {} })
  T.tensor(torch.zeros(0, 3):sum(1), { 0, 0, 0 })
  T.tensor(torch.zeros(3, 0):sum(1), {}, { shape = { 0 } })
  local o = torch.zeros(1)
  local r = torch.sum(x23(), 1, { out = o })
  T.tensor(o, { 5, 7, 9 }, { shape = { 3 } })
  T.tensor(r, { 5, 7, 9 })
  local oi = torch.zeros(2, 2)   -- out= converts to its own dtype
  torch.sum(tt({ { 1, 2 }, { 3, 4 } }), 2, { out = oi })
  T.tensor(oi, { 3, 7 }, { dtype = "float32" })
end)

T.test("sum: large float32 is accurate (pairwise)", function()
  local n = 1 << 22
  local x = torch.ones(n) * 0.1
  T.near(x:sum():item(), n * 0.1, 1e-5)
  local y = torch.ones(4096, 1024)
  T.tensor(y:sum(1):sum(), 4096 * 1024)
  T.eq(y:sum(2):totable()[1], 1024)
  T.eq(y:sum(1):totable()[1024], 4096)
  local z = torch.ones(3, 100000, 2)   -- outer reduction split over rows
  T.tensor(z:sum(2), { { 100000, 100000 }, { 100000, 100000 }, { 100000, 100000 } })
end)

T.test("sum/mean/max over a transposed view", function()
  local xt = transposed(x23())
  if not xt then return T.skip("transposed", "no t()/transpose yet") end
  T.tensor(xt:sum(1), { 6, 15 })
  T.tensor(xt:sum(2), { 5, 7, 9 })
  T.tensor(xt:mean(2), { 2.5, 3.5, 4.5 })
  local v, i = xt:max(1)
  T.tensor(v, { 3, 6 }); T.tensor(i, { 3, 3 })
  T.tensor(xt:argmax(), 6)   -- flat row-major index of xt: [[1,4],[2,5],[3,6]]
  T.tensor(xt:cumsum(1), { { 1, 4 }, { 3, 9 }, { 6, 15 } })
end)

T.test("nansum, mean, nanmean", function()
  local x = tt({ 1, nan, 3 }, "float32")
  T.tensor(x:nansum(), 4)
  T.tensor(x:nanmean(), 2)
  T.ok(x:sum():item() ~= x:sum():item(), "sum propagates NaN")
  T.tensor(x23():mean(), 3.5, { dtype = "float32" })
  T.tensor(x23():mean(1), { 2.5, 3.5, 4.5 })
  T.tensor(x23():mean(-1, true), { { 2 }, { 5 } })
  T.tensor(tt({ 1, 2 }, "int64"):mean({ dtype = "float64" }), 1.5, { dtype = "float64" })
  T.ok(torch.zeros(0):mean():item() ~= torch.zeros(0):mean():item(), "mean of empty is NaN")
end)

T.test("mean of an integer tensor is an error naming the op", function()
  T.raises(function() tt({ 1, 2 }):mean() end, "mean", "int64")
end)

T.test("prod", function()
  T.tensor(x23():prod(), 720)
  T.tensor(x23():prod(2), { 6, 120 })
  T.tensor(x23():prod(1, true), { { 4, 10, 18 } })
  T.tensor(tt({ 2, 3 }, "int32"):prod(), 6, { dtype = "int64" })
  T.tensor(torch.zeros(0):prod(), 1)
end)

T.test("max/min: full, with dim (values and 1-based indices)", function()
  local x = tt({ { 3, 7, 7 }, { 9, 1, 2 } }, "float32")
  T.tensor(x:max(), 9, { shape = {} })
  T.tensor(x:min(), 1)
  local v, i = x:max(2)
  T.tensor(v, { 7, 9 }); T.tensor(i, { 2, 1 }, { dtype = "int64" })   -- first occurrence
  v, i = x:min(1)
  T.tensor(v, { 3, 1, 2 }); T.tensor(i, { 1, 2, 2 })
  v, i = x:max(-1, true)
  T.tensor(v, { { 7 }, { 9 } }, { shape = { 2, 1 } }); T.tensor(i, { { 2 }, { 1 } })
  v, i = torch.max(x, { dim = 1 })
  T.tensor(i, { 2, 1, 1 })
  T.tensor(tt({ 5, -3 }, "int32"):max(), 5, { dtype = "int32" })
  T.tensor(tt({ true, false }):min(), false, { dtype = "bool" })
end)

T.test("max/min: NaN propagates", function()
  local x = tt({ 1, nan, 3, nan }, "float32")
  T.ok(x:max():item() ~= x:max():item())
  T.ok(x:min():item() ~= x:min():item())
  local v, i = x:max(1)
  T.eq(i:item(), 2)
  T.tensor(x:argmax(), 2)
  T.tensor(x:argmin(), 2)
  local y = tt({ { 1, 5 }, { nan, 2 } }, "float64")
  T.tensor(y:amax(1), { nan, 5 })
end)

T.test("max over long lines and outer dims (parallel blocks)", function()
  local n = 300000
  local t = {}
  for k = 1, n do t[k] = 0 end
  t[n - 5] = 7
  t[12345] = 7
  local x = torch.tensor(t, { dtype = "float32" })
  local v, i = x:max(1)
  T.eq(v:item(), 7); T.eq(i:item(), 12345)
  T.tensor(x:argmax(), 12345)
  local rows = {}
  for r = 1, 1000 do local row = {} for c = 1, 600 do row[c] = 0 end rows[r] = row end
  rows[999][300] = 4
  local vv, ii = torch.tensor(rows, { dtype = "float32" }):max(1)
  vv, ii = vv:totable(), ii:totable()
  T.eq(vv[300], 4); T.eq(ii[300], 999); T.eq(ii[1], 1)
end)

T.test("max of an empty tensor is an error naming the op", function()
  T.raises(function() torch.zeros(0):max() end, "max", "empty")
  T.raises(function() torch.zeros(0):min() end, "min")
  T.raises(function() torch.zeros(0, 2):max(1) end, "max", "dim")
  T.raises(function() torch.zeros(0):argmax() end, "argmax")
  local v, i = torch.zeros(0, 2):max(2)   -- nothing to reduce: empty result
  T.tensor(v, {}, { shape = { 0 } })
end)

T.test("amax/amin with dim lists", function()
  local x = tt({ { { 1, 8 }, { 3, 4 } }, { { 5, 2 }, { 7, 0 } } }, "float32")
  T.tensor(x:amax(), 8)
  T.tensor(x:amax({ 1, 3 }), { 8, 7 })
  T.tensor(x:amin({ 1, 2 }, true), { { { 1, 0 } } }, { shape = { 1, 1, 2 } })
  T.tensor(x:amax(-1), { { 8, 4 }, { 5, 7 } })
end)

T.test("argmax/argmin", function()
  local x = tt({ { 3, 7, 7 }, { 9, 1, 2 } }, "float32")
  T.tensor(x:argmax(), 4, { dtype = "int64", shape = {} })
  T.tensor(x:argmin(), 5)
  T.tensor(x:argmax(2), { 2, 1 })
  T.tensor(x:argmax(1, true), { { 2, 1, 1 } })
  T.tensor(x:argmin(-1), { 1, 2 })
end)

T.test("all, any, count_nonzero", function()
  local x = tt({ { 1, 0, 2 }, { 3, 4, 5 } }, "float32")
  T.tensor(x:all(), false, { dtype = "bool" })
  T.tensor(x:any(), true)
  T.tensor(x:all(2), { false, true })
  T.tensor(x:any(1, true), { { true, true, true } })
  T.tensor(x:count_nonzero(), 5, { dtype = "int64" })
  T.tensor(x:count_nonzero(1), { 2, 1, 2 })
  T.tensor(torch.zeros(0):all(), true)
  T.tensor(torch.zeros(0):any(), false)
  T.tensor(tt({ 0, 3 }, "uint8"):any(), 1, { dtype = "uint8" })
  T.tensor(tt({ nan }, "float32"):all(), true)
end)

T.test("var/std: correction, unbiased, keepdim", function()
  local x = tt({ { 1, 2, 3, 4 }, { 2, 4, 6, 8 } }, "float64")
  T.near(x:var():item(), 37.5 / 7, 1e-12)
  T.tensor(x:var(2), { 5 / 3, 20 / 3 }, { tol = 1e-12 })
  T.tensor(x:var(2, { correction = 0 }), { 1.25, 5 }, { tol = 1e-12 })
  T.tensor(x:var(2, false), { 1.25, 5 }, { tol = 1e-12 })
  T.tensor(x:var(2, { unbiased = false }), { 1.25, 5 }, { tol = 1e-12 })
  T.tensor(x:std(2, { keepdim = true }), { { math.sqrt(5 / 3) }, { math.sqrt(20 / 3) } }, { tol = 1e-12, shape = { 2, 1 } })
  T.tensor(x:var(1), { 0.5, 2, 4.5, 8 }, { tol = 1e-12 })
  local v, m = torch.var_mean(x, 2)
  T.tensor(v, { 5 / 3, 20 / 3 }, { tol = 1e-12 }); T.tensor(m, { 2.5, 5 })
  local s, m2 = torch.std_mean(x)
  T.near(s:item(), math.sqrt(37.5 / 7), 1e-12); T.near(m2:item(), 3.75, 1e-12)
  T.tensor(tt({ 1, 2, 3 }, "float32"):var(), 1, { dtype = "float32" })
  T.ok(tt({ 1 }, "float32"):var():item() ~= tt({ 1 }, "float32"):var():item(), "var of one element is NaN")
  T.raises(function() tt({ 1, 2 }):var() end, "var", "int64")
  T.raises(function() x:var(1, true, { correction = 1 }) end, "var", "unbiased", "correction")
end)

T.test("var: float32 accuracy with a large offset", function()
  local t = {}
  for k = 1, 10000 do t[k] = 1e4 end
  t[1], t[2] = 1e4 + 1, 1e4 - 1
  local x = torch.tensor(t, { dtype = "float32" })
  T.near(x:var():item(), 2 / 9999, 1e-4)
end)

T.test("norm: p = 2, 1, 0, inf, -inf, 3, fro", function()
  local x = tt({ { 3, -4 }, { 0, 12 } }, "float32")
  T.near(x:norm():item(), 13, 1e-6)
  T.near(x:norm(1):item(), 19, 1e-6)
  T.near(x:norm(0):item(), 3, 1e-6)
  T.near(x:norm(inf):item(), 12, 1e-6)
  T.near(x:norm(-inf):item(), 0, 1e-6)
  T.near(x:norm(3):item(), (27 + 64 + 1728) ^ (1 / 3), 1e-5)
  T.near(x:norm("fro"):item(), 13, 1e-6)
  T.tensor(x:norm(2, 2), { 5, 12 }, { tol = 1e-6 })
  T.tensor(x:norm(2, 1, true), { { 3, math.sqrt(16 + 144) } }, { tol = 1e-6, shape = { 1, 2 } })
  T.tensor(x:norm(2, -1), { 5, 12 }, { tol = 1e-6, dtype = "float32" })
  T.raises(function() tt({ 1, 2 }):norm() end, "norm", "int64")
  T.raises(function() x:norm("nuc") end, "norm", "p")
end)

T.test("logsumexp is stable", function()
  local x = tt({ { 1000, 1000 }, { -1000, -1000 } }, "float64")
  T.tensor(x:logsumexp(2), { 1000 + math.log(2), -1000 + math.log(2) }, { tol = 1e-12 })
  T.tensor(x:logsumexp(1, true), { { 1000, 1000 } }, { tol = 1e-12, shape = { 1, 2 } })
  T.tensor(tt({ -inf, -inf }, "float32"):logsumexp(1), -inf)
  T.tensor(tt({ inf, 1 }, "float32"):logsumexp(1), inf)
  T.tensor(tt({ 0, 0 }):logsumexp(1), math.log(2), { dtype = "float32", tol = 1e-6 })
end)

T.test("cumsum/cumprod", function()
  local x = x23()
  T.tensor(x:cumsum(2), { { 1, 3, 6 }, { 4, 9, 15 } })
  T.tensor(x:cumsum(1), { { 1, 2, 3 }, { 5, 7, 9 } })
  T.tensor(x:cumsum(-1), { { 1, 3, 6 }, { 4, 9, 15 } })
  T.tensor(x:cumprod(2), { { 1, 2, 6 }, { 4, 20, 120 } })
  T.tensor(tt({ 1, 2, 3 }, "int32"):cumsum(1), { 1, 3, 6 }, { dtype = "int64" })
  T.tensor(tt({ 1, 2, 3 }, "int32"):cumsum(1, { dtype = "float32" }), { 1, 3, 6 }, { dtype = "float32" })
  T.tensor(tt({ true, true }):cumsum(1), { 1, 2 }, { dtype = "int64" })
  T.tensor(torch.zeros(0):cumsum(1), {}, { shape = { 0 } })
  local o = torch.zeros(1)
  torch.cumsum(x, 2, { out = o })
  T.tensor(o, { { 1, 3, 6 }, { 4, 9, 15 } })
end)

T.test("cummax/cummin with 1-based indices", function()
  local v, i = tt({ 1, 3, 2, 3, 5 }, "float32"):cummax(1)
  T.tensor(v, { 1, 3, 3, 3, 5 }); T.tensor(i, { 1, 2, 2, 4, 5 }, { dtype = "int64" })
  v, i = tt({ { 3, 1 }, { 2, 4 } }, "float32"):cummin(1)
  T.tensor(v, { { 3, 1 }, { 2, 1 } }); T.tensor(i, { { 1, 1 }, { 2, 1 } })
end)

T.test("bad dims are errors naming the op and the dim", function()
  T.raises(function() x23():sum(3) end, "sum", "dim 3 out of range")
  T.raises(function() x23():sum(-3) end, "sum", "out of range")
  T.raises(function() x23():sum(0) end, "sum", "dim")
  T.raises(function() x23():sum({ 1, 1 }) end, "sum", "more than once")
  T.raises(function() x23():max(5) end, "max", "dim 5 out of range")
  T.raises(function() x23():argmax(3) end, "argmax", "out of range")
  T.raises(function() x23():cumsum(3) end, "cumsum", "out of range")
  T.raises(function() x23():var(4) end, "var", "out of range")
  T.raises(function() x23():logsumexp(9) end, "logsumexp", "out of range")
end)

T.test("0-d tensors reduce over dim 1 / -1", function()
  local s = torch.tensor(5.0)
  T.tensor(s:sum(), 5, { shape = {} })
  T.tensor(s:sum(1), 5, { shape = {} })
  T.tensor(s:max(), 5)
  local v, i = s:max(-1)
  T.tensor(i, 1)
  T.tensor(s:cumsum(1), 5, { shape = {} })
end)

T.done()
