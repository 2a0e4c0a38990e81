-- test_print.lua — tostring(x) in PyTorch's layout; torch.set_printoptions.
-- Expected strings are PyTorch 1.13's repr, with True/False spelled the Lua way.
local T = require "testing"

local function S(x) return tostring(x) end
local nan, inf = 0 / 0, math.huge

-- a nested table of shape sizes holding start, start+step, ... (row-major)
local function seq(sizes, start, step)
  local v = start or 0
  step = step or 1
  local function build(d)
    local t = {}
    for i = 1, sizes[d] do
      if d == #sizes then t[i] = v; v = v + step else t[i] = build(d + 1) end
    end
    return t
  end
  return build(1)
end

local function reset() torch.set_printoptions{profile = "default"} end

T.test("float vector", function()
  T.eq(S(torch.tensor({1.0, 2.5, -3.0})), "tensor([ 1.0000,  2.5000, -3.0000])")
end)

T.test("float matrix: aligned columns with negatives", function()
  T.eq(S(torch.tensor({{1.0, 2.5}, {-3.0, 4.0}})),
       "tensor([[ 1.0000,  2.5000],\n        [-3.0000,  4.0000]])")
end)

T.test("whole-number floats print with a trailing point", function()
  T.eq(S(torch.tensor({1., 2., 3.})), "tensor([1., 2., 3.])")
  T.eq(S(torch.tensor({0., 0.})), "tensor([0., 0.])")
  T.eq(S(torch.tensor({-0.0, 1.})), "tensor([-0., 1.])")
  T.eq(S(torch.arange(1001.)), "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])")
end)

T.test("integers", function()
  T.eq(S(torch.tensor({1, 2, 3})), "tensor([1, 2, 3])")
  T.eq(S(torch.tensor({{1, -20}, {300, 4}})), "tensor([[  1, -20],\n        [300,   4]])")
  T.eq(S(torch.tensor({1, 2}, {dtype = "int32"})), "tensor([1, 2], dtype=torch.int32)")
  T.eq(S(torch.tensor({1, 2}, {dtype = "uint8"})), "tensor([1, 2], dtype=torch.uint8)")
end)

T.test("bools", function()
  T.eq(S(torch.tensor({true, false, true})), "tensor([ true, false,  true])")
  T.eq(S(torch.tensor({{true, false}, {false, true}})),
       "tensor([[ true, false],\n        [false,  true]])")
end)

T.test("0-d tensors", function()
  T.eq(S(torch.tensor(3.5)), "tensor(3.5000)")
  T.eq(S(torch.tensor(3.)), "tensor(3.)")
  T.eq(S(torch.tensor(7)), "tensor(7)")
  T.eq(S(torch.tensor(1e10)), "tensor(1.0000e+10)")
  T.eq(S(torch.tensor(true)), "tensor(true)")
end)

T.test("empty tensors", function()
  T.eq(S(torch.tensor({})), "tensor([])")
  T.eq(S(torch.zeros(0, 3)), "tensor([], size=(0, 3))")
  T.eq(S(torch.zeros(0, 3, {dtype = "int64"})), "tensor([], size=(0, 3), dtype=torch.int64)")
  T.eq(S(torch.zeros(0, {dtype = "int32"})), "tensor([], dtype=torch.int32)")
end)

T.test("dtype footer for non-default dtypes", function()
  T.eq(S(torch.tensor({1., 2.}, {dtype = "float64"})), "tensor([1., 2.], dtype=torch.float64)")
  T.eq(S(torch.tensor({1.5, 2}, {dtype = "float16"})), "tensor([1.5000, 2.0000], dtype=torch.float16)")
  T.eq(S(torch.tensor({1.5, 2}, {dtype = "bfloat16"})), "tensor([1.5000, 2.0000], dtype=torch.bfloat16)")
  T.eq(S(torch.tensor({{1e-5, 1.}, {2., 3.}}, {dtype = "float64"})),
       "tensor([[1.0000e-05, 1.0000e+00],\n        [2.0000e+00, 3.0000e+00]], dtype=torch.float64)")
end)

T.test("the default dtype follows set_default_dtype", function()
  local old = torch.get_default_dtype()
  torch.set_default_dtype(torch.float64)
  local ok, err = pcall(function()
    T.eq(S(torch.tensor({1.5, 2}, {dtype = "float64"})), "tensor([1.5000, 2.0000])")
    T.eq(S(torch.tensor({1.5, 2}, {dtype = "float32"})), "tensor([1.5000, 2.0000], dtype=torch.float32)")
  end)
  torch.set_default_dtype(old)
  assert(ok, err)
end)

T.test("scientific notation", function()
  T.eq(S(torch.tensor({1e5, 1.0, 2.0})), "tensor([1.0000e+05, 1.0000e+00, 2.0000e+00])")
  T.eq(S(torch.tensor({1e-5, 1.0})), "tensor([1.0000e-05, 1.0000e+00])")
  T.eq(S(torch.tensor({1e9, 1.0})), "tensor([1.0000e+09, 1.0000e+00])")
  T.eq(S(torch.tensor({123456789.0, 1.5})), "tensor([1.2346e+08, 1.5000e+00])")
  T.eq(S(torch.tensor({-1e-5})), "tensor([-1.0000e-05])")
  T.eq(S(torch.tensor({0.5, 1e-3})), "tensor([0.5000, 0.0010])")
end)

T.test("nan and inf", function()
  T.eq(S(torch.tensor({nan, 1.0, inf, -inf})), "tensor([nan, 1., inf, -inf])")
  T.eq(S(torch.tensor({nan, 1.5})), "tensor([   nan, 1.5000])")
  T.eq(S(torch.tensor({-nan})), "tensor([nan])")
end)

T.test("long vectors wrap at linewidth", function()
  T.eq(S(torch.arange(30.)),
       "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n" ..
       "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n" ..
       "        28., 29.])")
end)

T.test("3-d tensors: blank line between matrices", function()
  T.eq(S(torch.tensor(seq({2, 3, 4}))),
       "tensor([[[ 0,  1,  2,  3],\n" ..
       "         [ 4,  5,  6,  7],\n" ..
       "         [ 8,  9, 10, 11]],\n\n" ..
       "        [[12, 13, 14, 15],\n" ..
       "         [16, 17, 18, 19],\n" ..
       "         [20, 21, 22, 23]]])")
end)

T.test("summarised vector (2000 elements)", function()
  T.eq(S(torch.arange(2000.)),
       "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n" ..
       "        1.9990e+03])")
  T.eq(S(torch.arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])")
end)

T.test("summarised 100x100 matrix", function()
  T.eq(S(torch.tensor(seq({100, 100}))),
       "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n" ..
       "        [ 100,  101,  102,  ...,  197,  198,  199],\n" ..
       "        [ 200,  201,  202,  ...,  297,  298,  299],\n" ..
       "        ...,\n" ..
       "        [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n" ..
       "        [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n" ..
       "        [9900, 9901, 9902,  ..., 9997, 9998, 9999]])")
  local s = S(torch.tensor(seq({100, 100}, 0.0)))
  T.eq(s:match("^[^\n]*"), "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.7000e+01, 9.8000e+01,")
  T.ok(s:find("\n        ...,\n", 1, true), "rows elided")
  T.eq(s:match("[^\n]*$"), "         9.9990e+03]])")
end)

T.test("summarised with a short dim keeps all its rows", function()
  T.eq(S(torch.zeros(3, 400)),
       "tensor([[0., 0., 0.,  ..., 0., 0., 0.],\n" ..
       "        [0., 0., 0.,  ..., 0., 0., 0.],\n" ..
       "        [0., 0., 0.,  ..., 0., 0., 0.]])")
  T.eq(S(torch.ones(2000, 1)),
       "tensor([[1.],\n        [1.],\n        [1.],\n        ...,\n        [1.],\n        [1.],\n        [1.]])")
end)

T.test("a big tensor prints summarised", function()
  local s = S(torch.zeros(1000, 1000))
  local _, lines = s:gsub("\n", "")
  T.eq(lines, 6)
  T.ok(s:find("...,", 1, true))
  s = S(torch.zeros(100, 100, 100))
  T.ok(s:find("\n\n        ...,\n\n", 1, true), "matrices elided with blank lines")
end)

T.test("non-contiguous views print through strides", function()
  local x = torch.tensor(seq({2, 3}, 0.0))
  if not x.t then return T.skip("transposed view", "x:t() not available") end
  T.eq(S(x:t()), "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])")
  if x.narrow then
    local y = torch.tensor(seq({3, 4}, 0.0)):narrow(2, 2, 2)
    T.eq(S(y), "tensor([[ 1.,  2.],\n        [ 5.,  6.],\n        [ 9., 10.]])")
  end
end)

T.test("precision option", function()
  torch.set_printoptions{precision = 2}
  local ok, err = pcall(function()
    T.eq(S(torch.tensor({1.23456, 2.})), "tensor([1.23, 2.00])")
    T.eq(torch.get_printoptions().precision, 2)
  end)
  reset()
  assert(ok, err)
  T.eq(S(torch.tensor({1.23456, 2.})), "tensor([1.2346, 2.0000])")
end)

T.test("sci_mode option", function()
  torch.set_printoptions{sci_mode = true}
  local ok, err = pcall(function()
    T.eq(S(torch.tensor({1.5, 2.})), "tensor([1.5000e+00, 2.0000e+00])")
    T.eq(S(torch.tensor({1., 2.})), "tensor([1.0000e+00, 2.0000e+00])")
    T.eq(torch.get_printoptions().sci_mode, true)
    torch.set_printoptions{sci_mode = false}
    -- PyTorch keeps the column width of the automatic choice
    T.eq(S(torch.tensor({1e-5, 1.})), "tensor([    0.0000,     1.0000])")
    T.eq(S(torch.tensor({1e9, 1.})), "tensor([1000000000.,         1.])")
  end)
  reset()
  assert(ok, err)
  T.eq(torch.get_printoptions().sci_mode, nil)
end)

T.test("threshold, edgeitems and linewidth options", function()
  torch.set_printoptions{threshold = 5, edgeitems = 2}
  local ok, err = pcall(function()
    T.eq(S(torch.arange(10)), "tensor([0, 1,  ..., 8, 9])")
    torch.set_printoptions{profile = "default", linewidth = 30}
    T.eq(S(torch.tensor({1., 2., 3.}, {dtype = "float64"})), "tensor([1., 2., 3.],\n       dtype=torch.float64)")
    T.eq(S(torch.tensor({0, 1 / 3, 2 / 3, 1, 4 / 3, 5 / 3})),
         "tensor([0.0000, 0.3333,\n        0.6667, 1.0000,\n        1.3333, 1.6667])")
    torch.set_printoptions{profile = "full"}
    T.ok(not S(torch.arange(2000)):find("...", 1, true), "full profile never summarises")
    torch.set_printoptions{profile = "short"}
    T.eq(S(torch.tensor({1.23456, 2.})), "tensor([1.23, 2.00])")
  end)
  reset()
  assert(ok, err)
  local o = torch.get_printoptions()
  T.eq({o.precision, o.threshold, o.edgeitems, o.linewidth}, {4, 1000, 3, 80})
end)

T.test("set_printoptions rejects bad arguments", function()
  T.raises(function() torch.set_printoptions{precision = -1} end, "set_printoptions", "precision")
  T.raises(function() torch.set_printoptions{precision = 1.5} end, "set_printoptions", "precision")
  T.raises(function() torch.set_printoptions{linewidth = 0} end, "set_printoptions", "linewidth")
  T.raises(function() torch.set_printoptions{edgeitems = "x"} end, "set_printoptions", "edgeitems")
  T.raises(function() torch.set_printoptions{threshold = "x"} end, "set_printoptions", "threshold")
  T.raises(function() torch.set_printoptions{sci_mode = 1} end, "set_printoptions", "sci_mode")
  T.raises(function() torch.set_printoptions{profile = "huge"} end, "set_printoptions", "profile")
  T.raises(function() torch.set_printoptions(5) end, "set_printoptions", "opts")
  -- a failed call changes nothing
  T.eq(torch.get_printoptions().precision, 4)
  T.eq(S(torch.tensor({1.5})), "tensor([1.5000])")
end)

T.test("requires_grad and grad_fn footers", function()
  local x = torch.tensor({1., 2.})
  x.requires_grad = true
  T.eq(S(x), "tensor([1., 2.], requires_grad=True)")
  local d = torch.tensor({1., 2.}, {dtype = "float64"})
  d.requires_grad = true
  T.eq(S(d), "tensor([1., 2.], dtype=torch.float64, requires_grad=True)")
  local ok, y = pcall(function() return x * 2 end)
  if not ok or y.grad_fn == nil then return T.skip("grad_fn footer", "autograd records no grad_fn yet") end
  T.eq(S(y), "tensor([2., 4.], grad_fn=<MulBackward0>)")
end)

T.test("__tostring method, print, sizes, dtypes, devices", function()
  local x = torch.tensor({{1.5, 2}, {3, 4}})
  T.eq(x:__tostring(), S(x))
  T.eq(S(x.shape), "torch.Size([2, 2])")
  T.eq(S(x:size()), "torch.Size([2, 2])")
  T.eq(S(x.dtype), "torch.float32")
  T.eq(S(torch.int64), "torch.int64")
  T.eq(S(x.device), "cpu")
end)

T.test("a freed tensor prints as freed", function()
  local x = torch.tensor({1., 2.})
  if not x.free then return T.skip("freed tensor", "x:free() not available") end
  x:free()
  T.eq(S(x), "tensor (freed)")
end)

T.done()
