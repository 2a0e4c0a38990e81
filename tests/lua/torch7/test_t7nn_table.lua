-- test_t7nn_table.lua — Torch7 mode's nn (lib/t7nn): the table modules (table.lua), the
-- shape modules (shape.lua) and the containers Concat, DepthConcat, Parallel
-- (container.lua), under `lutorch --torch7`. Forward values are checked against plain Lua
-- arithmetic on the elements; backward passes against central finite differences
-- (nn.Jacobian for tensor modules, a directional check below for tables), in float64;
-- bad input must raise a Lua error naming the class.
local T = require "testing"
require "nn"

torch.manualSeed(7)
local jac = nn.Jacobian
local PREC = 1e-5

local function is_table(x) return type(x) == "table" and not torch.isTensor(x) end

-- largest |a - b| over two tensors of one element count (or nested tables of them)
local function maxdiff(a, b)
  if is_table(a) then
    T.ok(is_table(b), "expected a table, got " .. torch.type(b))
    T.eq(#a, #b, "table lengths")
    local m = 0
    for k, v in pairs(a) do m = math.max(m, maxdiff(v, b[k])) end
    return m
  end
  T.ok(torch.isTensor(a) and torch.isTensor(b), "expected tensors")
  T.eq(a:nElement(), b:nElement(), "element counts")
  if a:nElement() == 0 then return 0 end
  return (a:contiguous():view(-1):double() - b:contiguous():view(-1):double()):abs():max()
end

local function close(a, b, tol, msg)
  local d = maxdiff(a, b)
  if d > (tol or 1e-12) then error((msg or "values") .. ": differ by " .. d, 2) end
end

local function sizes(t) return t:size():totable() end

-- a tensor from a Lua function of its 1-based indices
local function build(sz, f)
  local t = torch.Tensor(table.unpack(sz))
  local n = t:nElement()
  local flat = t:view(n)
  local idx = {}
  for lin = 0, n - 1 do
    local r = lin
    for d = #sz, 1, -1 do idx[d] = r % sz[d] + 1; r = r // sz[d] end
    flat[lin + 1] = f(table.unpack(idx))
  end
  return t
end

-- element (i, j, ...) of t as a number
local function at(t, ...)
  local v = t
  for _, i in ipairs({ ... }) do v = v[i] end
  return v
end

-- the tensors of a nested table, in order
local function leaves(x, out)
  out = out or {}
  if torch.isTensor(x) then out[#out + 1] = x
  elseif is_table(x) then for _, v in ipairs(x) do leaves(v, out) end end
  return out
end

-- a nested copy of x with random tensors of the same sizes
local function random_like(x)
  if torch.isTensor(x) then return torch.randn(x:size()) end
  local t = {}
  for i, v in ipairs(x) do t[i] = random_like(v) end
  return t
end

local function deep_clone(x)
  if torch.isTensor(x) then return x:clone() end
  local t = {}
  for i, v in ipairs(x) do t[i] = deep_clone(v) end
  return t
end

-- the gradient of sum(output . gradOutput) with respect to every input element, by
-- central differences, against module:backward (input and output may be nested tables)
local function check_backward(module, input, tol, eps)
  eps = eps or 1e-6
  local out = module:forward(input)
  local go = random_like(out)
  local gi = deep_clone(module:backward(input, deep_clone(go)))
  local goleaves = leaves(go)
  local function loss()
    local o = leaves(module:forward(input))
    local s = 0
    for i, t in ipairs(o) do s = s + t:dot(goleaves[i]) end
    return s
  end
  local ins, gis = leaves(input), leaves(gi)
  T.eq(#gis, #ins, "gradInput has the input's tensors")
  local worst = 0
  for k, x in ipairs(ins) do
    local flat = x:view(x:nElement())
    local g = gis[k]:contiguous():view(-1)
    for i = 1, x:nElement() do
      local v = flat[i]
      flat[i] = v + eps; local lp = loss()
      flat[i] = v - eps; local lm = loss()
      flat[i] = v
      worst = math.max(worst, math.abs((lp - lm) / (2 * eps) - g[i]))
    end
  end
  if worst > (tol or PREC) then error(torch.type(module) .. ": gradInput off by " .. worst, 2) end
end

local function jacobian(module, input, msg)
  local err = jac.testJacobian(module, input)
  if err > PREC then error((msg or torch.type(module)) .. ": Jacobian error " .. err, 2) end
end

------------------------------------------------------------------------------------------
-- element-wise table arithmetic

T.test("CAddTable, CSubTable, CMulTable, CDivTable: values and gradients", function()
  local a = build({ 2, 3 }, function(i, j) return i + 0.5 * j end)
  local b = build({ 2, 3 }, function(i, j) return 2 - i * j end)
  local c = build({ 2, 3 }, function(i, j) return 0.25 * (i - j) + 3 end)
  local cases = {
    { nn.CAddTable(), { a, b, c }, function(i, j) return at(a, i, j) + at(b, i, j) + at(c, i, j) end },
    { nn.CSubTable(), { a, b }, function(i, j) return at(a, i, j) - at(b, i, j) end },
    { nn.CMulTable(), { a, b, c }, function(i, j) return at(a, i, j) * at(b, i, j) * at(c, i, j) end },
    { nn.CDivTable(), { a, c }, function(i, j) return at(a, i, j) / at(c, i, j) end },
  }
  for _, case in ipairs(cases) do
    local m, input, f = case[1], case[2], case[3]
    close(m:forward(input), build({ 2, 3 }, f), 1e-12, torch.type(m) .. " forward")
    check_backward(m, deep_clone(input))
  end
  -- CMulTable's gradient holds where an input is zero (no division)
  local m = nn.CMulTable()
  local z = a:clone(); z[1][2] = 0
  m:forward({ z, b })
  local gi = m:backward({ z, b }, torch.ones(2, 3))
  T.eq(gi[2][1][2], 0)
  T.eq(gi[1][1][2], b[1][2])
  -- one input: CAddTable and CMulTable copy it
  close(nn.CAddTable():forward({ a }), a)
  close(nn.CMulTable():forward({ a }), a)
end)

T.test("CAddTable(true) writes into input[1]; gradInputs share gradOutput", function()
  local a, b = torch.randn(3), torch.randn(3)
  local sum = a + b
  local m = nn.CAddTable(true)
  local out = m:forward({ a, b })
  close(out, sum)
  close(a, sum, 1e-12, "input[1] holds the sum")
  local go = torch.randn(3)
  local gi = m:backward({ a, b }, go)
  close(gi[1], go); close(gi[2], go)
end)

T.test("CAddTable and friends: the gradInput table shrinks with the input", function()
  local m = nn.CAddTable()
  local x = { torch.randn(4), torch.randn(4), torch.randn(4) }
  m:forward(x); T.eq(#m:backward(x, torch.randn(4)), 3)
  local y = { x[1], x[2] }
  m:forward(y); T.eq(#m:backward(y, torch.randn(4)), 2)
  -- a gradOutput of the same element count in another shape is taken
  local p = nn.CMulTable()
  local u, v = torch.randn(2, 2), torch.randn(2, 2)
  p:forward({ u, v })
  local gi = p:backward({ u, v }, torch.Tensor({ 1, 2, 3, 4 }))
  close(gi[1], torch.cmul(v, torch.Tensor({ { 1, 2 }, { 3, 4 } })))
end)

T.test("element-wise table modules: bad input names the class", function()
  for _, name in ipairs({ "CAddTable", "CSubTable", "CMulTable", "CDivTable", "CMaxTable", "CMinTable" }) do
    T.raises(function() nn[name]():forward({ torch.randn(2, 3), torch.randn(3, 2) }) end, "nn." .. name, "2x3")
    T.raises(function() nn[name]():forward(torch.randn(2)) end, "nn." .. name, "table")
    T.raises(function() nn[name]():forward({ torch.randn(2), "x" }) end, "nn." .. name)
  end
  T.raises(function() nn.CSubTable():forward({ torch.randn(2) }) end, "nn.CSubTable", "at least 2")
  T.raises(function() nn.CMulTable():backward({ torch.randn(2), torch.randn(2) }, torch.randn(3)) end,
    "nn.CMulTable", "gradOutput")
end)

T.test("CMaxTable, CMinTable: values, gradient to the input that won (the first on ties)", function()
  local a = torch.Tensor({ { 1, 3 }, { 2, 4 } })
  local b = torch.Tensor({ { 4, 2 }, { 3, 1 } })
  local c = torch.Tensor({ { 0, 5 }, { 2, 0 } })
  local mx = nn.CMaxTable()
  close(mx:forward({ a, b, c }), torch.Tensor({ { 4, 5 }, { 3, 4 } }))
  local g = mx:backward({ a, b, c }, torch.Tensor({ { 5, 6 }, { 7, 8 } }))
  close(g[1], torch.Tensor({ { 0, 0 }, { 0, 8 } }))
  close(g[2], torch.Tensor({ { 5, 0 }, { 7, 0 } }))
  close(g[3], torch.Tensor({ { 0, 6 }, { 0, 0 } }))
  local mn = nn.CMinTable()
  close(mn:forward({ a, b, c }), torch.Tensor({ { 0, 2 }, { 2, 0 } }))
  g = mn:backward({ a, b, c }, torch.Tensor({ { 5, 6 }, { 7, 8 } }))
  close(g[1], torch.Tensor({ { 0, 0 }, { 7, 0 } }))   -- 2 == 2: the first input keeps it
  close(g[2], torch.Tensor({ { 0, 6 }, { 0, 0 } }))
  close(g[3], torch.Tensor({ { 5, 0 }, { 0, 8 } }))
  check_backward(nn.CMaxTable(), { torch.randn(3, 2), torch.randn(3, 2), torch.randn(3, 2) })
  check_backward(nn.CMinTable(), { torch.randn(4), torch.randn(4) })
  -- type conversion keeps working
  local f = nn.CMaxTable():float()
  close(f:forward({ a:float(), b:float() }), torch.Tensor({ { 4, 3 }, { 3, 4 } }))
  T.eq(torch.type(f:backward({ a:float(), b:float() }, torch.ones(2, 2):float())[1]), "torch.FloatTensor")
end)

T.test("CAddTensorTable: {v, {a, b}} -> {v + a, v + b}", function()
  local v = torch.randn(3)
  local list = { torch.randn(3), torch.randn(3), torch.randn(3) }
  local m = nn.CAddTensorTable()
  local out = m:forward({ v, list })
  T.eq(#out, 3)
  for i = 1, 3 do close(out[i], build({ 3 }, function(k) return v[k] + list[i][k] end)) end
  check_backward(m, { v:clone(), deep_clone(list) })
  T.raises(function() m:forward({ v, { torch.randn(4) } }) end, "nn.CAddTensorTable")
  T.raises(function() m:forward({ v, v }) end, "nn.CAddTensorTable")
end)

------------------------------------------------------------------------------------------
-- table plumbing

T.test("SplitTable: slices, negative dims, nInputDims (batch)", function()
  local x = torch.randn(3, 4, 5)
  for d = 1, 3 do
    local out = nn.SplitTable(d):forward(x)
    T.eq(#out, x:size(d))
    for i = 1, x:size(d) do close(out[i], x:select(d, i)) end
  end
  T.eq(#nn.SplitTable(-1):forward(x), 5)
  -- nInputDims: a 3-D input to SplitTable(1, 2) is a batch of 2-D examples
  for d = 1, 2 do
    local m = nn.SplitTable(d, 2)
    local out = m:forward(x)
    T.eq(#out, x:size(d + 1), "batch, dim " .. d)
    for i = 1, #out do close(out[i], x:select(d + 1, i)) end
    T.eq(#m:forward(x[1]), x[1]:size(d), "single example, dim " .. d)
  end
  T.eq(#nn.SplitTable(-3):forward(torch.randn(2, 3, 4, 5)), 3)
  local s = nn.Sequential():add(nn.SplitTable(2, 2)):add(nn.JoinTable(1, 1))
  jacobian(s, torch.randn(2, 3, 4), "SplitTable(2, 2) + JoinTable(1, 1)")
  jacobian(nn.Sequential():add(nn.SplitTable(1)):add(nn.JoinTable(1)), torch.randn(3, 2), "SplitTable + JoinTable")
  T.raises(function() nn.SplitTable(4):forward(x) end, "nn.SplitTable", "out of range")
  T.raises(function() nn.SplitTable(1):forward({}) end, "nn.SplitTable", "tensor")
  T.raises(function() nn.SplitTable() end, "nn.SplitTable")
end)

T.test("SplitTable: gradients of other shapes fall back to copies", function()
  local x = torch.randn(2, 3)
  local m = nn.SplitTable(2)
  m:forward(x)
  local g = m:backward(x, { torch.ones(2), torch.ones(1, 2):mul(2), torch.ones(2):mul(3) })
  close(g, torch.Tensor({ { 1, 2, 3 }, { 1, 2, 3 } }))
  T.raises(function() m:backward(x, { torch.ones(2) }) end, "nn.SplitTable", "gradOutput")
end)

T.test("JoinTable: values, nInputDims, negative dims, gradients, size errors", function()
  local a = build({ 2, 3 }, function(i, j) return 10 * i + j end)
  local b = build({ 2, 2 }, function(i, j) return -10 * i - j end)
  local out = nn.JoinTable(2):forward({ a, b })
  T.eq(sizes(out), { 2, 5 })
  close(out, build({ 2, 5 }, function(i, j) return j <= 3 and at(a, i, j) or at(b, i, j - 3) end))
  close(nn.JoinTable(-1):forward({ a, b }), out)
  -- nInputDims 1: 2-D inputs are batches of vectors, dim 1 is the vectors' dim
  close(nn.JoinTable(1, 1):forward({ a, b }), out)
  T.eq(sizes(nn.JoinTable(1, 1):forward({ a[1], b[1] })), { 5 })
  local x = torch.rand(3, 4, 5)
  for d = 1, 3 do T.eq(nn.JoinTable(d):forward({ x, x }):size(d), 2 * x:size(d)) end
  check_backward(nn.JoinTable(2), { a:clone(), b:clone() })
  check_backward(nn.JoinTable(1), { torch.randn(2, 3), torch.randn(1, 3), torch.randn(4, 3) })
  T.raises(function() nn.JoinTable(2):forward({ a, torch.randn(3, 2) }) end, "nn.JoinTable", "3x2", "2x3")
  T.raises(function() nn.JoinTable(3):forward({ a, a }) end, "nn.JoinTable", "out of range")
  T.raises(function() nn.JoinTable(1):forward({}) end, "nn.JoinTable")
  T.raises(function() nn.JoinTable(1):forward({ a, 3 }) end, "nn.JoinTable", "input[2]")
  -- the gradInput table follows the input's length
  local m = nn.JoinTable(1)
  m:forward({ a, a, a }); T.eq(#m:backward({ a, a, a }, torch.randn(6, 3)), 3)
  m:forward({ a, a }); T.eq(#m:backward({ a, a }, torch.randn(4, 3)), 2)
end)

T.test("SelectTable: output, nested zero gradInput of the input's shape, negative index", function()
  local input = { torch.randn(2), { torch.randn(3), { torch.randn(1) } }, torch.randn(2, 2) }
  local m = nn.SelectTable(2)
  T.ok(rawequal(m:forward(input), input[2]))
  local go = { torch.randn(3), { torch.randn(1) } }
  local gi = m:backward(input, go)
  T.eq(#gi, 3)
  close(gi[1], torch.zeros(2)); close(gi[3], torch.zeros(2, 2))
  T.eq(sizes(gi[3]), { 2, 2 })
  close(gi[2], go)
  T.ok(not rawequal(gi[2][1], go[1]), "the selected gradient is a copy")
  local last = nn.SelectTable(-1)
  T.ok(rawequal(last:forward(input), input[3]))
  gi = last:backward(input, torch.ones(2, 2))
  close(gi[2], { torch.zeros(3), { torch.zeros(1) } })
  close(gi[3], torch.ones(2, 2))
  -- shorter input afterwards: the gradInput shrinks
  local short = { input[1], input[3] }
  last:forward(short)
  T.eq(#last:backward(short, torch.ones(2, 2)), 2)
  T.raises(function() nn.SelectTable(5):forward(input) end, "nn.SelectTable", "index 5")
  T.raises(function() nn.SelectTable(1):forward(torch.randn(2)) end, "nn.SelectTable", "table")
  T.eq(tostring(nn.SelectTable(2)), "nn.SelectTable(2)")
end)

T.test("NarrowTable: the entries offset..offset+length-1; zeros for the others", function()
  local input = { torch.randn(2), torch.randn(3), torch.randn(4), { torch.randn(1) } }
  local m = nn.NarrowTable(2, 2)
  local out = m:forward(input)
  T.eq(#out, 2)
  T.ok(rawequal(out[1], input[2]) and rawequal(out[2], input[3]))
  local go = { torch.randn(3), torch.randn(4) }
  local gi = m:backward(input, go)
  T.eq(#gi, 4)
  close(gi[1], torch.zeros(2)); close(gi[4], { torch.zeros(1) })
  T.ok(rawequal(gi[2], go[1]) and rawequal(gi[3], go[2]))
  T.eq(#nn.NarrowTable(3):forward(input), 1)
  check_backward(nn.Sequential():add(nn.NarrowTable(1, 2)):add(nn.JoinTable(1)),
    { torch.randn(2), torch.randn(3), torch.randn(1) })
  T.raises(function() m:forward({ torch.randn(1), torch.randn(1) }) end, "nn.NarrowTable", "out of range")
  T.raises(function() nn.NarrowTable() end, "nn.NarrowTable")
end)

T.test("FlattenTable: depth-first flat table, gradInput back in the input's shape", function()
  local input = { torch.rand(1), { torch.rand(2), { torch.rand(3) } }, torch.rand(4) }
  local m = nn.FlattenTable()
  local out = m:forward(input)
  T.eq(#out, 4)
  T.ok(rawequal(out[1], input[1]) and rawequal(out[2], input[2][1]) and rawequal(out[3], input[2][2][1])
    and rawequal(out[4], input[3]))
  local go = { torch.rand(1), torch.rand(2), torch.rand(3), torch.rand(4) }
  local gi = m:backward(input, go)
  T.ok(rawequal(gi[1], go[1]) and rawequal(gi[2][1], go[2]) and rawequal(gi[2][2][1], go[3])
    and rawequal(gi[3], go[4]))
  -- the same input keeps the output table; a changed one rebuilds it
  local before = m.output
  m:forward(input); T.ok(rawequal(before, m.output))
  input[2][3] = torch.rand(5)
  m:forward(input); T.ok(not rawequal(before, m.output)); T.eq(#m.output, 5)
  local s = nn.Sequential():add(nn.SplitTable(1))
    :add(nn.ParallelTable():add(nn.SplitTable(1)):add(nn.SplitTable(1)))
    :add(nn.FlattenTable()):add(nn.JoinTable(1))
  jacobian(s, torch.randn(2, 2, 2), "FlattenTable in a chain")
  T.raises(function() m:forward(torch.randn(2)) end, "nn.FlattenTable", "table")
end)

T.test("ZipTable and ZipTableOneToMany", function()
  local a1, a2, b1, b2 = torch.randn(2), torch.randn(2), torch.randn(2), torch.randn(2)
  local z = nn.ZipTable()
  local out = z:forward({ { a1, a2 }, { b1, b2 } })
  T.eq(#out, 2)
  T.ok(rawequal(out[1][1], a1) and rawequal(out[1][2], b1) and rawequal(out[2][1], a2) and rawequal(out[2][2], b2))
  local gi = z:backward({ { a1, a2 }, { b1, b2 } }, { { 1, 2 }, { 3, 4 } })
  T.eq(gi, { { 1, 3 }, { 2, 4 } })
  T.raises(function() z:forward({ a1 }) end, "nn.ZipTable")
  local v = torch.randn(3)
  local list = { torch.randn(4), torch.randn(4), torch.randn(4) }
  local zo = nn.ZipTableOneToMany()
  out = zo:forward({ v, list })
  T.eq(#out, 3)
  for i = 1, 3 do T.ok(rawequal(out[i][1], v) and rawequal(out[i][2], list[i])) end
  local go = { { torch.ones(3), list[1] }, { torch.ones(3):mul(2), list[2] }, { torch.ones(3):mul(4), list[3] } }
  gi = zo:backward({ v, list }, go)
  close(gi[1], torch.ones(3):mul(7))
  T.ok(rawequal(gi[2][2], list[2]))
  T.raises(function() zo:forward({ v }) end, "nn.ZipTableOneToMany")
end)

T.test("MixtureTable: table and tensor experts, batch and single example", function()
  local B, n, k = 3, 4, 2
  local gater = torch.rand(B, n)
  local experts = {}
  for i = 1, n do experts[i] = torch.randn(B, k) end
  local want = build({ B, k }, function(b, j)
    local s = 0
    for i = 1, n do s = s + gater[b][i] * experts[i][b][j] end
    return s
  end)
  local m = nn.MixtureTable()
  close(m:forward({ gater, experts }), want, 1e-12, "table experts")
  check_backward(nn.MixtureTable(), { gater:clone(), deep_clone(experts) })
  -- the experts as one tensor, along dim 2
  local stacked = torch.Tensor(B, n, k)
  for i = 1, n do stacked:select(2, i):copy(experts[i]) end
  close(nn.MixtureTable(2):forward({ gater, stacked }), want, 1e-12, "tensor experts")
  check_backward(nn.MixtureTable(2), { gater:clone(), stacked:clone() })
  -- 3-D experts, expert dim 3
  local e3 = torch.randn(B, 5, n, k)
  local m3 = nn.MixtureTable(3)
  local want3 = build({ B, 5, k }, function(b, r, j)
    local s = 0
    for i = 1, n do s = s + gater[b][i] * e3[b][r][i][j] end
    return s
  end)
  close(m3:forward({ gater, e3 }), want3, 1e-12, "3-D tensor experts")
  check_backward(nn.MixtureTable(3), { gater:clone(), e3:clone() })
  -- a single example: 1-D gater
  local g1 = torch.rand(n)
  local ex1 = {}
  for i = 1, n do ex1[i] = torch.randn(k) end
  local want1 = build({ k }, function(j)
    local s = 0
    for i = 1, n do s = s + g1[i] * ex1[i][j] end
    return s
  end)
  close(nn.MixtureTable():forward({ g1, ex1 }), want1, 1e-12, "1-D gater")
  check_backward(nn.MixtureTable(), { g1:clone(), deep_clone(ex1) })
  check_backward(nn.MixtureTable(1), { g1:clone(), torch.randn(n, k) })
  T.raises(function() nn.MixtureTable():forward({ gater, { experts[1] } }) end, "nn.MixtureTable", "one gater output per expert")
  T.raises(function() nn.MixtureTable():forward(gater) end, "nn.MixtureTable")
  T.raises(function() nn.MixtureTable(2):forward({ gater, torch.randn(B, n + 1, k) }) end, "nn.MixtureTable")
end)

------------------------------------------------------------------------------------------
-- containers over tables

T.test("ParallelTable: module i on input[i]; parameters' gradients", function()
  local lin = nn.Linear(3, 2)
  local p = nn.ParallelTable():add(lin):add(nn.Identity())
  local x, y = torch.randn(4, 3), torch.randn(5)
  local out = p:forward({ x, y })
  close(out[1], torch.mm(x, lin.weight:t()) + lin.bias:view(1, 2):expand(4, 2))
  T.ok(rawequal(out[2], y))
  check_backward(nn.ParallelTable():add(nn.Linear(3, 2)):add(nn.CMulTable()),
    { torch.randn(4, 3), { torch.randn(2), torch.randn(2) } })
  -- accGradParameters: the Linear's gradient as if alone
  p:zeroGradParameters()
  local go = { torch.randn(4, 2), torch.randn(5) }
  p:backward({ x, y }, go)
  local ref = lin:clone()
  ref:zeroGradParameters()
  ref:forward(x); ref:backward(x, go[1])
  close(lin.gradWeight, ref.gradWeight)
  T.raises(function() p:forward({ x }) end, "nn.ParallelTable", "2 modules")
  local err = T.raises(function() p:forward({ torch.randn(4, 7), y }) end, "In 1 module of nn.ParallelTable", "nn.Linear")
  T.ok(err:find("size mismatch", 1, true))
end)

T.test("ConcatTable: tensor and table inputs, summed gradInputs, printing", function()
  local l1, l2 = nn.Linear(3, 2), nn.Linear(3, 4)
  local c = nn.ConcatTable():add(l1):add(l2)
  local x = torch.randn(3)
  local out = c:forward(x)
  T.eq(#out, 2)
  close(out[1], l1:forward(x)); close(out[2], l2:forward(x))
  check_backward(nn.ConcatTable():add(nn.Linear(3, 2)):add(nn.Linear(3, 4)):add(nn.Identity()), torch.randn(3))
  -- table input: gradInput sums nested tables
  local t = nn.ConcatTable():add(nn.Identity()):add(nn.Identity())
  local input = { torch.randn(2), { torch.randn(3) } }
  t:forward(input)
  local g1 = { torch.randn(2), { torch.randn(3) } }
  local g2 = { torch.randn(2), { torch.randn(3) } }
  local gi = t:backward(input, { g1, g2 })
  close(gi, { g1[1] + g2[1], { g1[2][1] + g2[2][1] } })
  check_backward(nn.ConcatTable():add(nn.CAddTable()):add(nn.CMulTable()), { torch.randn(3), torch.randn(3) })
  -- variable-length table inputs
  local v = nn.ConcatTable():add(nn.Identity()):add(nn.Identity())
  local a = { torch.randn(5), torch.randn(5) }
  v:forward(a); T.eq(#v:backward(a, { a, a }), 2)
  local b = { torch.randn(5) }
  T.eq(#v:forward(b), 2); T.eq(#v:backward(b, { b, b }), 1)
  T.eq(tostring(nn.ConcatTable():add(nn.Identity()):add(nn.Identity())),
    "nn.ConcatTable {\n  input\n    |`-> (1): nn.Identity\n     `-> (2): nn.Identity\n     ... -> output\n}")
  T.raises(function() c:backward(x, torch.randn(2)) end, "nn.ConcatTable", "gradOutput")
  T.raises(function() c:forward(torch.randn(5)) end, "In 1 module of nn.ConcatTable")
end)

T.test("MapTable: one module over every entry, clones sharing its parameters", function()
  local lin = nn.Linear(4, 3)
  local map = nn.MapTable(lin)
  local input = { torch.randn(4), torch.randn(4), torch.randn(4) }
  local out = map:forward(input)
  T.eq(#out, 3); T.eq(map:size(), 3)
  for i = 1, 3 do close(out[i], torch.mv(lin.weight, input[i]) + lin.bias) end
  -- shared parameters: the gradients of the clones add up in the module's gradWeight
  map:zeroGradParameters()
  local go = { torch.randn(3), torch.randn(3), torch.randn(3) }
  map:backward(input, go)
  local want = torch.zeros(3, 4)
  for i = 1, 3 do want:addr(1, go[i], input[i]) end
  close(lin.gradWeight, want, 1e-12, "gradWeight summed over the entries")
  check_backward(nn.MapTable(nn.Linear(2, 2)), { torch.randn(2), torch.randn(2) })
  T.eq(#map:forward({ input[1] }), 1)
  map:resize(5); T.eq(map:size(), 5)
  map:resize(2); T.eq(map:size(), 2)
  T.eq(torch._t7storage_id(map:get(2).weight), torch._t7storage_id(map:get(1).weight))
  map:clearState(); T.eq(map:size(), 1)
  -- unshared clones have their own parameters
  local own = nn.MapTable(nn.Linear(4, 3), false)
  own:forward(input)
  T.ok(torch._t7storage_id(own:get(2).weight) ~= torch._t7storage_id(own:get(1).weight))
  T.raises(function() map:add(nn.Identity()) end, "nn.MapTable", "single module")
  T.raises(function() map:forward(torch.randn(4)) end, "nn.MapTable", "table")
  T.raises(function() map:forward({ torch.randn(5) }) end, "In 1 module of nn.MapTable")
end)

------------------------------------------------------------------------------------------
-- shape modules

T.test("View: sizes, -1, batches, setNumInputDims, errors", function()
  local x = torch.randn(10)
  T.eq(sizes(nn.View(5, 2):forward(x)), { 5, 2 })
  T.eq(sizes(nn.View(torch.LongStorage({ 2, 5 })):forward(x)), { 2, 5 })
  T.eq(sizes(nn.View(-1, 2):forward(x)), { 5, 2 })
  T.eq(sizes(nn.View(5, 2):forward(torch.randn(3, 10))), { 3, 5, 2 })
  T.eq(sizes(nn.View(6):forward(torch.randn(5, 2, 6))), { 10, 6 })
  T.eq(sizes(nn.View(-1):setNumInputDims(1):forward(torch.randn(5, 10))), { 5, 10 })
  T.eq(sizes(nn.View(-1):setNumInputDims(2):forward(torch.randn(5, 4, 10))), { 5, 40 })
  T.eq(sizes(nn.View(4, -1):setNumInputDims(2):forward(torch.randn(2, 5, 4, 10))), { 10, 4, 10 })
  local m = nn.View(5, 2)
  close(m:forward(x), x)
  T.ok(rawequal(m.output, m:forward(x)), "the output tensor is the module's")
  -- a non-contiguous input is copied when its strides allow no view
  local nc = torch.randn(2, 5):t()
  close(nn.View(10):forward(nc), nc:contiguous())
  jacobian(nn.View(3, 2), torch.randn(6))
  jacobian(nn.View(-1):setNumInputDims(2), torch.randn(2, 3, 2))
  T.raises(function() nn.View(3):forward(torch.randn(10)) end, "nn.View", "do not match")
  T.raises(function() nn.View(-1, -1) end, "nn.View", "-1")
  T.raises(function() nn.View(-2) end, "nn.View")
  T.eq(tostring(nn.View(5, 2)), "nn.View(5, 2)")
end)

T.test("Reshape: first dim of 1 is a batch, batchMode", function()
  T.eq(sizes(nn.Reshape(5, 2):forward(torch.randn(10))), { 5, 2 })
  T.eq(sizes(nn.Reshape(10):forward(torch.randn(1, 2, 5))), { 1, 10 })
  T.eq(sizes(nn.Reshape(10, false):forward(torch.randn(1, 2, 5))), { 10 })
  T.eq(sizes(nn.Reshape(5, 2):forward(torch.randn(3, 10))), { 3, 5, 2 })
  T.eq(sizes(nn.Reshape(2, 2, true):forward(torch.randn(4, 4))), { 4, 2, 2 })
  jacobian(nn.Reshape(3, 2), torch.randn(2, 6))
  T.raises(function() nn.Reshape(3):forward(torch.randn(10)) end, "nn.Reshape")
end)

T.test("Collapse: the example dims as one", function()
  local x = torch.randn(4, 2, 3)
  local c = nn.Collapse(2)
  close(c:forward(x), x:view(4, 6)); T.eq(sizes(c.output), { 4, 6 })
  T.eq(sizes(c:forward(x[1])), { 6 })
  local nc = x:transpose(1, 3)
  close(c:forward(nc), nc:contiguous():view(3, 8))
  local gi = c:backward(nc, c.output)
  T.eq(sizes(gi), sizes(nc)); close(gi, nc:contiguous())
  jacobian(nn.Collapse(2), torch.randn(2, 3, 2))
  T.raises(function() nn.Collapse() end, "nn.Collapse")
end)

T.test("Squeeze and Unsqueeze, with and without batch dims", function()
  local x = torch.randn(2, 1, 3)
  T.eq(sizes(nn.Squeeze():forward(x)), { 2, 3 })
  T.eq(sizes(nn.Squeeze(2):forward(torch.randn(2, 1, 1, 3))), { 2, 1, 3 })
  T.eq(sizes(nn.Squeeze(2, 3):forward(torch.randn(2, 1, 1, 3))), { 2, 1, 3 })
  T.eq(sizes(nn.Squeeze(nil, 2):forward(torch.randn(1, 1, 3))), { 1, 3 })
  local s = nn.Squeeze()
  s:forward(x)
  T.eq(sizes(s:backward(x, torch.randn(2, 3))), { 2, 1, 3 })
  jacobian(nn.Squeeze(), torch.randn(3, 1, 2))
  T.raises(function() s:backward(x, torch.randn(5)) end, "nn.Squeeze", "elements")
  T.raises(function() nn.Squeeze(4):forward(x) end, "nn.Squeeze", "out of range")
  T.eq(sizes(nn.Unsqueeze(1):forward(torch.randn(2, 3))), { 1, 2, 3 })
  T.eq(sizes(nn.Unsqueeze(3):forward(torch.randn(2, 3))), { 2, 3, 1 })
  T.eq(sizes(nn.Unsqueeze(2, 2):forward(torch.randn(5, 2, 3))), { 5, 2, 1, 3 })
  jacobian(nn.Unsqueeze(2), torch.randn(3, 2))
  T.raises(function() nn.Unsqueeze(5):forward(torch.randn(2, 3)) end, "nn.Unsqueeze", "position")
  T.raises(function() nn.Unsqueeze(1, 3):forward(torch.randn(2, 3)) end, "nn.Unsqueeze", "numInputDims")
  T.raises(function() nn.Unsqueeze() end, "nn.Unsqueeze")
  T.eq(tostring(nn.Unsqueeze(2)), "nn.Unsqueeze(dim 2)")
end)

T.test("Transpose: pairs of dims, setNumInputDims", function()
  local x = torch.randn(2, 3, 4)
  local t = nn.Transpose({ 1, 3 }, { 1, 2 })
  local out = t:forward(x)
  T.eq(sizes(out), { 3, 4, 2 })
  close(out, build({ 3, 4, 2 }, function(i, j, k) return x[k][i][j] end))
  T.ok(out:isContiguous())
  jacobian(nn.Transpose({ 1, 2 }, { 2, 3 }), torch.randn(2, 3, 2))
  T.eq(sizes(nn.Transpose({ 1, 2 }):setNumInputDims(2):forward(x)), { 2, 4, 3 })
  T.raises(function() nn.Transpose({ 1, 4 }):forward(x) end, "nn.Transpose", "swap")
  T.raises(function() nn.Transpose(1, 2) end, "nn.Transpose")
end)

T.test("Replicate: copies along a new dim, batch mode, summed gradient", function()
  local v = torch.randn(3)
  local r1 = nn.Replicate(2, 1):forward(v)
  close(r1, build({ 2, 3 }, function(_, j) return v[j] end))
  local r2 = nn.Replicate(2, 2):forward(v)
  close(r2, build({ 3, 2 }, function(i) return v[i] end))
  local b = torch.randn(4, 3)
  close(nn.Replicate(2, 1, 1):forward(b), build({ 4, 2, 3 }, function(i, _, k) return b[i][k] end))
  jacobian(nn.Replicate(3, 2), torch.randn(2, 2))
  jacobian(nn.Replicate(2, 1, 1), torch.randn(3, 2))
  T.raises(function() nn.Replicate(2, 4):forward(v) end, "nn.Replicate", "not enough")
  T.raises(function() nn.Replicate(2, 0) end, "nn.Replicate")
  -- converting a module whose output is an expanded view
  local m = nn.Replicate(2)
  m:forward(v)
  m:float()
  T.eq(torch.type(m:forward(v:float())), "torch.FloatTensor")
end)

T.test("Select and Narrow: negative dims and indices, zero gradients elsewhere", function()
  local x = torch.Tensor({ { 4, 6, 7 }, { 8, 0, 1 } })
  close(nn.Select(1, -1):forward(x), torch.Tensor({ 8, 0, 1 }))
  close(nn.Select(-1, -1):forward(x), torch.Tensor({ 7, 1 }))
  close(nn.Select(2, 2):forward(x), torch.Tensor({ 6, 0 }))
  jacobian(nn.Select(2, 2), torch.randn(3, 4))
  T.raises(function() nn.Select(1, 3):forward(x) end, "nn.Select", "out of range")
  T.raises(function() nn.Select(3, 1):forward(x) end, "nn.Select", "out of range")
  T.raises(function() nn.Select(1, 1):forward(torch.randn(3)) end, "nn.Select", "2 dims")
  local y = torch.randn(9, 4)
  close(nn.Narrow(1, 3, 5):forward(y), y:narrow(1, 3, 5))
  close(nn.Narrow(1, 3, -3):forward(y), y:narrow(1, 3, 5))   -- up to 2 before the end
  close(nn.Narrow(1, -1, 7):forward(y), y:narrow(1, 1, 2))   -- the first 9 - 7
  close(nn.Narrow(-1, 2, 2):forward(y), y:narrow(2, 2, 2))
  local n = nn.Narrow(1, 3, 2)
  n:forward(y)
  local gi = n:backward(y, torch.ones(2, 4))
  close(gi:narrow(1, 3, 2), torch.ones(2, 4)); T.eq(gi:sum(), 8)
  jacobian(nn.Narrow(2, 2, 2), torch.randn(2, 4))
  T.raises(function() nn.Narrow(1, 8, 5):forward(y) end, "nn.Narrow", "out of range")
  T.raises(function() nn.Narrow(1) end, "nn.Narrow")
end)

T.test("Index: entries at indices, gradient accumulated with repeats", function()
  local m = nn.Index(1)
  local out = m:forward({ torch.Tensor({ 10, 20, 30 }), torch.LongTensor({ 1, 2, 2, 3 }) })
  close(out, torch.Tensor({ 10, 20, 20, 30 }))
  local gi = m:backward({ torch.Tensor({ 10, 20, 30 }), torch.LongTensor({ 1, 2, 2, 3 }) }, torch.Tensor({ 1, 1, 1, 3 }))
  close(gi[1], torch.Tensor({ 1, 2, 3 }))
  close(gi[2], torch.zeros(4))
  local x = torch.randn(3, 4)
  local idx = torch.LongTensor({ 3, 1, 3 })
  close(nn.Index(2):forward({ x, idx }), build({ 3, 3 }, function(i, j) return x[i][idx[j]] end))
  -- the gradient through {x, constant indices}
  local Const, cparent = torch.class("nn.TestConstantIndices", "nn.Module")
  function Const:__init(v) cparent.__init(self); self.v = v end
  function Const:updateOutput() self.output = self.v; return self.output end
  function Const:updateGradInput(input) self.gradInput:resizeAs(input):zero(); return self.gradInput end
  jacobian(nn.Sequential():add(nn.ConcatTable():add(nn.Identity()):add(nn.TestConstantIndices(idx))):add(nn.Index(2)),
    torch.randn(3, 4), "Index")
  T.raises(function() m:forward({ x, torch.LongTensor({ 4 }) }) end, "nn.Index", "out of range")
  T.raises(function() m:forward(x) end, "nn.Index", "table")
  T.raises(function() nn.Index() end, "nn.Index")
end)

T.test("MaskedSelect: the masked elements; gradient scattered back", function()
  local x = torch.Tensor({ { 10, 20 }, { 30, 40 } })
  local mask = torch.ByteTensor({ { 1, 0 }, { 0, 1 } })
  local m = nn.MaskedSelect()
  close(m:forward({ x, mask }), torch.Tensor({ 10, 40 }))
  local gi = m:backward({ x, mask }, torch.Tensor({ 20, 80 }))
  close(gi[1], torch.Tensor({ { 20, 0 }, { 0, 80 } }))
  T.eq(torch.type(gi[2]), "torch.ByteTensor"); T.eq(gi[2]:sum(), 0)
  T.raises(function() m:forward({ x, torch.ByteTensor(3):fill(1) }) end, "nn.MaskedSelect", "size")
  T.raises(function() m:forward(x) end, "nn.MaskedSelect", "table")
end)

T.test("Padding: before or after an index, batch dims, value", function()
  local x = build({ 2, 3 }, function(i, j) return 10 * i + j end)
  -- pad < 0: 2 entries before entry 1 of dim 2
  close(nn.Padding(2, -2, 2, 9):forward(x), torch.Tensor({ { 9, 9, 11, 12, 13 }, { 9, 9, 21, 22, 23 } }))
  -- pad > 0: after the end (index 1 counts from the right)
  close(nn.Padding(2, 1, 2, 0):forward(x), torch.Tensor({ { 11, 12, 13, 0 }, { 21, 22, 23, 0 } }))
  -- pad < 0 with index 2: between entries 1 and 2
  close(nn.Padding(2, -1, 2, -1, 2):forward(x), torch.Tensor({ { 11, -1, 12, 13 }, { 21, -1, 22, 23 } }))
  -- nInputDim 1 with a 2-D input: dim 1 is the vectors' dim
  close(nn.Padding(1, 1, 1, 5):forward(x), torch.Tensor({ { 11, 12, 13, 5 }, { 21, 22, 23, 5 } }))
  jacobian(nn.Padding(1, -2, 2, 0, 2), torch.randn(3, 2))
  jacobian(nn.Padding(2, 3, 2), torch.randn(2, 2))
  T.raises(function() nn.Padding(2, -1, 2, 0, 5):forward(x) end, "nn.Padding", "out of range")
  T.raises(function() nn.Padding(3, 1):forward(x) end, "nn.Padding", "out of range")
  T.raises(function() nn.Padding() end, "nn.Padding")
end)

T.test("Convert: transpositions, bf, single examples, tensor types", function()
  local x = torch.randn(4, 3, 2, 2)
  local c = nn.Convert("bchw", "chwb")
  close(c:forward(x), x:permute(2, 3, 4, 1):contiguous())
  close(c:backward(x, c.output), x)
  local f = nn.Convert("bchw", "bf")
  close(f:forward(x), x:view(4, 12)); T.eq(sizes(f.output), { 4, 12 })
  f:float()
  T.eq(torch.type(f:forward(x)), "torch.FloatTensor")
  close(f.output, x:view(4, 12), 1e-6)
  local y = torch.randn(3, 2, 2)
  local s = nn.Convert("chw", "hwc")
  close(s:forward(y), y:permute(2, 3, 1):contiguous())
  close(s:backward(y, s.output), y)
  T.eq(sizes(nn.Convert("chw", "f"):forward(y)), { 12 })
  jacobian(nn.Convert("bchw", "bhwc"), torch.randn(2, 3, 2, 2))
  T.raises(function() nn.Convert(nil, "bf") end, "nn.Convert")
  T.raises(function() nn.Convert("b*", "bf") end, "nn.Convert", "b*")
  T.raises(function() nn.Convert("bchw", "bq"):forward(x) end, "nn.Convert", "bq")
end)

------------------------------------------------------------------------------------------
-- Concat, DepthConcat, Parallel

T.test("Concat: outputs joined along dim; gradInput summed; parameters", function()
  local x = torch.randn(4, 2)
  local m = nn.Concat(2)
  local lins = { nn.Linear(2, 3), nn.Linear(2, 1), nn.Linear(2, 2) }
  for _, l in ipairs(lins) do m:add(l) end
  T.eq(m:size(), 3)
  local out = m:forward(x)
  T.eq(sizes(out), { 4, 6 })
  close(out:narrow(2, 1, 3), lins[1]:forward(x)); close(out:narrow(2, 4, 1), lins[2]:forward(x))
  close(out:narrow(2, 5, 2), lins[3]:forward(x))
  jacobian(m, torch.randn(4, 2))
  local err = jac.testJacobianParameters(m, torch.randn(4, 2), lins[2].weight, lins[2].gradWeight)
  T.ok(err < PREC, "weight Jacobian " .. err)
  err = jac.testJacobianParameters(m, torch.randn(4, 2), lins[3].bias, lins[3].gradBias)
  T.ok(err < PREC, "bias Jacobian " .. err)
  local c1 = nn.Concat(1):add(nn.Identity()):add(nn.Identity())
  close(c1:forward(torch.Tensor({ 1, 2 })), torch.Tensor({ 1, 2, 1, 2 }))
  close(c1:backward(torch.Tensor({ 1, 2 }), torch.Tensor({ 1, 2, 3, 4 })), torch.Tensor({ 4, 6 }))
  T.raises(function() nn.Concat(1):add(nn.Linear(2, 3)):add(nn.Linear(2, 1)):forward(x) end, "nn.Concat", "4x1", "4x3")
  T.raises(function() nn.Concat() end, "nn.Concat")
  T.eq(tostring(nn.Concat(1):add(nn.Identity())), "nn.Concat {\n  input\n     `-> (1): nn.Identity\n     ... -> output\n}")
end)

T.test("Concat over a table input: nested gradInputs add up", function()
  local c = nn.Concat(1):add(nn.SelectTable(1)):add(nn.SelectTable(2))
  local input = { torch.randn(2), torch.randn(3) }
  close(c:forward(input), torch.cat(input[1], input[2], 1))
  check_backward(nn.Concat(1):add(nn.CAddTable()):add(nn.CMulTable()), { torch.randn(3), torch.randn(3) })
end)

T.test("DepthConcat: smaller outputs centred, zero padding", function()
  local x = torch.randn(2, 3, 5)
  local d = nn.DepthConcat(2):add(nn.Identity()):add(nn.Narrow(3, 2, 3)):add(nn.Narrow(3, 1, 2))
  local out = d:forward(x)
  T.eq(sizes(out), { 2, 9, 5 })
  close(out:narrow(2, 1, 3), x)
  close(out:narrow(2, 4, 3):narrow(3, 2, 3), x:narrow(3, 2, 3))    -- (5 - 3) / 2 + 1 = 2
  T.eq(out:narrow(2, 4, 3):narrow(3, 1, 1):abs():sum(), 0)
  close(out:narrow(2, 7, 3):narrow(3, 2, 2), x:narrow(3, 1, 2))    -- floor(3 / 2) + 1 = 2
  jacobian(nn.DepthConcat(2):add(nn.Identity()):add(nn.Narrow(3, 2, 3)), torch.randn(2, 2, 5))
  local lin = nn.DepthConcat(1):add(nn.Linear(3, 2)):add(nn.Linear(3, 4))
  local err = jac.testJacobianParameters(lin, torch.randn(3), lin:get(1).weight, lin:get(1).gradWeight)
  T.ok(err < PREC, "weight Jacobian " .. err)
end)

T.test("Parallel: slice i of the input to module i, outputs joined", function()
  local x = torch.randn(3, 4, 5)
  local m = nn.Parallel(1, 3)
  for _ = 1, 3 do m:add(nn.View(4, 5, 1)) end
  local out = m:forward(x)
  close(out, x:transpose(1, 3):transpose(1, 2))
  close(m:backward(x, out), x)
  local p = nn.Parallel(2, 1):add(nn.Linear(3, 2)):add(nn.Linear(3, 1))
  local y = torch.randn(3, 2)
  close(p:forward(y), torch.cat(p:get(1):forward(y:select(2, 1)), p:get(2):forward(y:select(2, 2)), 1))
  jacobian(p, torch.randn(3, 2))
  local err = jac.testJacobianParameters(p, torch.randn(3, 2), p:get(2).weight, p:get(2).gradWeight)
  T.ok(err < PREC, "weight Jacobian " .. err)
  T.raises(function() p:forward(torch.randn(3, 5)) end, "nn.Parallel", "slices")
  T.raises(function() p:forward(torch.randn(3)) end, "nn.Parallel")
  T.raises(function() nn.Parallel(1) end, "nn.Parallel")
end)

T.test("errors inside containers say where, outermost first", function()
  local l = nn.Linear(1, 1)
  local p = nn.Parallel(1, 1):add(l)
  local c = nn.Concat(1):add(p)
  local model = nn.Sequential():add(nn.Identity()):add(c):add(nn.Identity())
  local err = T.raises(function() model:forward(torch.randn(1, 2, 2)) end,
    "In 2 module of nn.Sequential:\nIn 1 module of nn.Concat:\nIn 1 module of nn.Parallel:\n", "size mismatch")
  T.ok(err:find("nn.Linear", 1, true))
  local t = nn.ConcatTable():add(nn.ParallelTable():add(nn.Linear(2, 2)))
  T.raises(function() t:forward({ torch.randn(3) }) end,
    "In 1 module of nn.ConcatTable:\nIn 1 module of nn.ParallelTable:\n", "size mismatch")
end)

T.test("an LSTM-style cell: gates from SplitTable/JoinTable/CMulTable/CAddTable", function()
  -- i, f, o, g from one Linear over [x, h]; c' = f * c + i * g; h' = o * c'
  local nx, nh = 3, 2
  local xh = nn.JoinTable(2)
  local gates = nn.Sequential():add(nn.NarrowTable(1, 2)):add(xh):add(nn.Linear(nx + nh, 4 * nh))
    :add(nn.View(4, nh)):add(nn.SplitTable(2))
  local cell = nn.Sequential()
    :add(nn.ConcatTable():add(gates):add(nn.SelectTable(3)))      -- {{i, f, o, g}, c}
    :add(nn.FlattenTable())                                         -- {i, f, o, g, c}
    :add(nn.ConcatTable()
      :add(nn.Sequential():add(nn.ConcatTable()
        :add(nn.Sequential():add(nn.ConcatTable():add(nn.SelectTable(2)):add(nn.SelectTable(5))):add(nn.CMulTable()))
        :add(nn.Sequential():add(nn.NarrowTable(1, 4)):add(nn.ConcatTable():add(nn.SelectTable(1)):add(nn.SelectTable(4))):add(nn.CMulTable())))
        :add(nn.CAddTable()))
      :add(nn.SelectTable(3)))                                      -- {c', o}
    :add(nn.ConcatTable():add(nn.SelectTable(1)):add(nn.CMulTable()))  -- {c', o * c'}
  local B = 2
  local input = { torch.randn(B, nx), torch.randn(B, nh), torch.randn(B, nh) }
  local out = cell:forward(input)
  -- independently: the gates from the Linear's parameters
  local lin = gates:get(3)
  local z = torch.cat(input[1], input[2], 2) * lin.weight:t() + lin.bias:view(1, -1):expand(B, 4 * nh)
  local zi, zf, zo, zg = z:narrow(2, 1, nh), z:narrow(2, nh + 1, nh), z:narrow(2, 2 * nh + 1, nh), z:narrow(2, 3 * nh + 1, nh)
  local c2 = torch.cmul(zf, input[3]) + torch.cmul(zi, zg)
  close(out[1], c2, 1e-12, "cell state")
  close(out[2], torch.cmul(zo, c2), 1e-12, "output")
  check_backward(cell, input)
end)

T.test("type conversion of table modules and containers", function()
  local m = nn.Sequential():add(nn.SplitTable(1)):add(nn.NarrowTable(1, 2)):add(nn.JoinTable(1)):add(nn.Reshape(2, 3))
  local x = torch.randn(3, 3)
  m:forward(x)
  m:float()
  local out = m:forward(x:float())
  T.eq(torch.type(out), "torch.FloatTensor")
  close(out, x:narrow(1, 1, 2), 1e-6)
  T.eq(torch.type(m:backward(x:float(), torch.ones(2, 3):float())), "torch.FloatTensor")
  local c = nn.ConcatTable():add(nn.Identity()):add(nn.Identity())
  c:forward({ torch.randn(2) })
  c:float()
  T.eq(torch.type(c:forward(torch.randn(2):float())[1]), "torch.FloatTensor")
  local s = nn.SelectTable(1):float()
  s:forward({ torch.randn(2):float() })
  T.eq(torch.type(s:backward({ torch.randn(2):float() }, torch.randn(2):float())[1]), "torch.FloatTensor")
end)

T.test("saved and loaded: the modules survive serialization", function()
  local m = nn.Sequential():add(nn.ConcatTable():add(nn.Linear(3, 2)):add(nn.Linear(3, 2)))
    :add(nn.CAddTable()):add(nn.Replicate(2)):add(nn.View(-1))
  local x = torch.randn(3)
  local out = m:forward(x):clone()
  local f = torch.MemoryFile("rw"):binary()
  f:writeObject(m:clearState())
  f:seek(1)
  local m2 = f:readObject()
  f:close()
  close(m2:forward(x), out)
  local ferr, berr = jac.testIO(nn.Sequential():add(nn.Concat(1):add(nn.Linear(3, 2)):add(nn.Linear(3, 1)))
    :add(nn.Padding(1, 2)), torch.randn(3))
  T.eq(ferr, 0); T.eq(berr, 0)
end)

T.done()
