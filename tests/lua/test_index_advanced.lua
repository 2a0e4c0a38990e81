-- Advanced indexing: index tensors, masks and booleans inside index tables (PyTorch's
-- x[:, idx], x[rows, cols], x[mask, j]) for reading and for assignment, with autograd;
-- {first, last} ranges that clamp at the ends as Python's slices do; bad input as errors
-- naming index and the entry. The expected values were computed with PyTorch 1.13 on the
-- same tensors, its 0-based indices shifted to lutorch's 1-based ones.
local T = require "testing"
local f64 = torch.float64

local function I(v) return torch.tensor(v, { dtype = torch.int64 }) end
local a = torch.arange(12):view(3, 4)
local b = torch.arange(24):view(2, 3, 4)
local c = torch.arange(120):view(2, 3, 4, 5)
local M23 = torch.tensor({ { true, false, true }, { false, true, false } })
local M4 = torch.tensor({ true, false, true, true })
local function A() return torch.arange(12, { dtype = f64 }):view(3, 4) end
local function B() return torch.arange(24, { dtype = f64 }):view(2, 3, 4) end

-- { Lua expression, its value, PyTorch's values, PyTorch's shape }
local reads = {
  { 'a[{":", I{1, 3}}]', function() return a[{":", I{1, 3}}] end, {{0, 2}, {4, 6}, {8, 10}}, {3, 2} },
  { 'a[{":", I{-1, 1, -2}}]', function() return a[{":", I{-1, 1, -2}}] end, {{3, 0, 2}, {7, 4, 6}, {11, 8, 10}}, {3, 3} },
  { 'a[{I{3, 1}, ":"}]', function() return a[{I{3, 1}, ":"}] end, {{8, 9, 10, 11}, {0, 1, 2, 3}}, {2, 4} },
  { 'a[{":", I{{1, 2}, {4, 3}}}]', function() return a[{":", I{{1, 2}, {4, 3}}}] end, {{{0, 1}, {3, 2}}, {{4, 5}, {7, 6}}, {{8, 9}, {11, 10}}}, {3, 2, 2} },
  { 'a[{I{1, 3}, I{2, 4}}]', function() return a[{I{1, 3}, I{2, 4}}] end, {1, 11}, {2} },
  { 'a[{I{{1}, {3}}, I{2, 4}}]', function() return a[{I{{1}, {3}}, I{2, 4}}] end, {{1, 3}, {9, 11}}, {2, 2} },
  { 'a[{I{1, 2, 3}, I{-1}}]', function() return a[{I{1, 2, 3}, I{-1}}] end, {3, 7, 11}, {3} },
  { 'a[{I{2}, I{{1, 2}, {3, 4}}}]', function() return a[{I{2}, I{{1, 2}, {3, 4}}}] end, {{4, 5}, {6, 7}}, {2, 2} },
  { 'b[{":", I{1, 3}, I{2, 4}}]', function() return b[{":", I{1, 3}, I{2, 4}}] end, {{1, 11}, {13, 23}}, {2, 2} },
  { 'b[{I{1, 2}, I{3, 1}, ":"}]', function() return b[{I{1, 2}, I{3, 1}, ":"}] end, {{8, 9, 10, 11}, {12, 13, 14, 15}}, {2, 4} },
  { 'b[{I{1, 2}, ":", I{2, 3}}]', function() return b[{I{1, 2}, ":", I{2, 3}}] end, {{1, 5, 9}, {14, 18, 22}}, {2, 3} },
  { 'b[{I{{1}, {2}}, ":", I{1, 2, 3}}]', function() return b[{I{{1}, {2}}, ":", I{1, 2, 3}}] end, {{{0, 4, 8}, {1, 5, 9}, {2, 6, 10}}, {{12, 16, 20}, {13, 17, 21}, {14, 18, 22}}}, {2, 3, 3} },
  { 'b[{I{1, 2}, 1, I{2, 3}}]', function() return b[{I{1, 2}, 1, I{2, 3}}] end, {1, 14}, {2} },
  { 'b[{1, ":", I{1, 2}}]', function() return b[{1, ":", I{1, 2}}] end, {{0, 1}, {4, 5}, {8, 9}}, {3, 2} },
  { 'b[{2, I{3, 1}}]', function() return b[{2, I{3, 1}}] end, {{20, 21, 22, 23}, {12, 13, 14, 15}}, {2, 4} },
  { 'b[{{1, 1}, I{1, 3}, {2, 3}}]', function() return b[{{1, 1}, I{1, 3}, {2, 3}}] end, {{{1, 2}, {9, 10}}}, {1, 2, 2} },
  { 'b[{{2, 2}, ":", I{4, 1}}]', function() return b[{{2, 2}, ":", I{4, 1}}] end, {{{15, 12}, {19, 16}, {23, 20}}}, {1, 3, 2} },
  { 'c[{":", I{1, 2}, ":", I{2, 3}}]', function() return c[{":", I{1, 2}, ":", I{2, 3}}] end, {{{1, 6, 11, 16}, {61, 66, 71, 76}}, {{22, 27, 32, 37}, {82, 87, 92, 97}}}, {2, 2, 4} },
  { 'c[{":", I{1, 3}, I{1, 4}, ":"}]', function() return c[{":", I{1, 3}, I{1, 4}, ":"}] end, {{{0, 1, 2, 3, 4}, {55, 56, 57, 58, 59}}, {{60, 61, 62, 63, 64}, {115, 116, 117, 118, 119}}}, {2, 2, 5} },
  { 'c[{I{2}, ":", I{3, 1}, I{5}}]', function() return c[{I{2}, ":", I{3, 1}, I{5}}] end, {{74, 94, 114}, {64, 84, 104}}, {2, 3} },
  { 'a[{":", I{2, 2, 1}}]', function() return a[{":", I{2, 2, 1}}] end, {{1, 1, 0}, {5, 5, 4}, {9, 9, 8}}, {3, 3} },
  { 'b[{M23}]', function() return b[{M23}] end, {{0, 1, 2, 3}, {8, 9, 10, 11}, {16, 17, 18, 19}}, {3, 4} },
  { 'b[{M23, I{1, 4, 2}}]', function() return b[{M23, I{1, 4, 2}}] end, {0, 11, 17}, {3} },
  { 'b[{":", ":", M4}]', function() return b[{":", ":", M4}] end, {{{0, 2, 3}, {4, 6, 7}, {8, 10, 11}}, {{12, 14, 15}, {16, 18, 19}, {20, 22, 23}}}, {2, 3, 3} },
  { 'b[{1, ":", M4}]', function() return b[{1, ":", M4}] end, {{0, 2, 3}, {4, 6, 7}, {8, 10, 11}}, {3, 3} },
  { 'b[{I{{2}, {1}}, ":", M4}]', function() return b[{I{{2}, {1}}, ":", M4}] end, {{{12, 16, 20}, {14, 18, 22}, {15, 19, 23}}, {{0, 4, 8}, {2, 6, 10}, {3, 7, 11}}}, {2, 3, 3} },
  { 'a[{torch.tensor({true, false, true}), I{2, 2}}]', function() return a[{torch.tensor({true, false, true}), I{2, 2}}] end, {1, 9}, {2} },
  { 'a[{":", torch.tensor({1, 0, 1, 1}, {dtype = "uint8"})}]', function() return a[{":", torch.tensor({1, 0, 1, 1}, {dtype = "uint8"})}] end, {{0, 2, 3}, {4, 6, 7}, {8, 10, 11}}, {3, 3} },
  { 'a[{":", torch.tensor({3, 1}, {dtype = "int32"})}]', function() return a[{":", torch.tensor({3, 1}, {dtype = "int32"})}] end, {{2, 0}, {6, 4}, {10, 8}}, {3, 2} },
  { 'a[{":", true}]', function() return a[{":", true}] end, {{{0, 1, 2, 3}}, {{4, 5, 6, 7}}, {{8, 9, 10, 11}}}, {3, 1, 4} },
  { 'a[{true, I{2, 3}}]', function() return a[{true, I{2, 3}}] end, {{4, 5, 6, 7}, {8, 9, 10, 11}}, {2, 4} },
  { 'a[{":", torch.tensor(true), I{1, 2}}]', function() return a[{":", torch.tensor(true), I{1, 2}}] end, {{0, 1}, {4, 5}, {8, 9}}, {3, 2} },
  { 'a[{I{1, 2}, true, I{2, 3}}]', function() return a[{I{1, 2}, true, I{2, 3}}] end, {1, 6}, {2} },
  { 'a[{I{1, 2}, ":", true}]', function() return a[{I{1, 2}, ":", true}] end, {{0, 1, 2, 3}, {4, 5, 6, 7}}, {2, 4} },
}

for _, r in ipairs(reads) do
  T.test("read " .. r[1], function() T.tensor(r[2](), r[3], { shape = r[4] }) end)
end

-- { the assignment, x after it, PyTorch's x }
local writes = {
  { 'x = A(); x[{":", I{1, 3}}] = 5', function() local x; x = A(); x[{":", I{1, 3}}] = 5; return x end, {{5.0, 1.0, 5.0, 3.0}, {5.0, 5.0, 5.0, 7.0}, {5.0, 9.0, 5.0, 11.0}} },
  { 'x = A(); x[{I{3, 1}, ":"}] = -1', function() local x; x = A(); x[{I{3, 1}, ":"}] = -1; return x end, {{-1.0, -1.0, -1.0, -1.0}, {4.0, 5.0, 6.0, 7.0}, {-1.0, -1.0, -1.0, -1.0}} },
  { 'x = A(); x[{I{1, 3}, I{2, -1}}] = torch.tensor({7.0, 8.0})', function() local x; x = A(); x[{I{1, 3}, I{2, -1}}] = torch.tensor({7.0, 8.0}); return x end, {{0.0, 7.0, 2.0, 3.0}, {4.0, 5.0, 6.0, 7.0}, {8.0, 9.0, 10.0, 8.0}} },
  { 'x = A(); x[{I{{1}, {3}}, I{2, 4}}] = torch.tensor({{1.0, 2.0}, {3.0, 4.0}})', function() local x; x = A(); x[{I{{1}, {3}}, I{2, 4}}] = torch.tensor({{1.0, 2.0}, {3.0, 4.0}}); return x end, {{0.0, 1.0, 2.0, 2.0}, {4.0, 5.0, 6.0, 7.0}, {8.0, 3.0, 10.0, 4.0}} },
  { 'x = A(); x[{":", I{1, 3}}] = torch.tensor({{1.0}, {2.0}, {3.0}})', function() local x; x = A(); x[{":", I{1, 3}}] = torch.tensor({{1.0}, {2.0}, {3.0}}); return x end, {{1.0, 1.0, 1.0, 3.0}, {2.0, 5.0, 2.0, 7.0}, {3.0, 9.0, 3.0, 11.0}} },
  { 'x = A(); x[{":", I{1, 3}}] = torch.tensor({10.0, 20.0})', function() local x; x = A(); x[{":", I{1, 3}}] = torch.tensor({10.0, 20.0}); return x end, {{10.0, 1.0, 20.0, 3.0}, {10.0, 5.0, 20.0, 7.0}, {10.0, 9.0, 20.0, 11.0}} },
  { 'x = A(); x[{":", I{{1, 2}, {4, 3}}}] = torch.tensor({{1.0, 2.0}, {3.0, 4.0}})', function() local x; x = A(); x[{":", I{{1, 2}, {4, 3}}}] = torch.tensor({{1.0, 2.0}, {3.0, 4.0}}); return x end, {{1.0, 2.0, 4.0, 3.0}, {1.0, 2.0, 4.0, 3.0}, {1.0, 2.0, 4.0, 3.0}} },
  { 'x = B(); x[{I{1, 2}, ":", I{2, 3}}] = torch.tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})', function() local x; x = B(); x[{I{1, 2}, ":", I{2, 3}}] = torch.tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}); return x end, {{{0.0, 1.0, 2.0, 3.0}, {4.0, 2.0, 6.0, 7.0}, {8.0, 3.0, 10.0, 11.0}}, {{12.0, 13.0, 4.0, 15.0}, {16.0, 17.0, 5.0, 19.0}, {20.0, 21.0, 6.0, 23.0}}} },
  { 'x = B(); x[{":", I{1, 3}, I{2, 4}}] = torch.tensor({-1.0, -2.0})', function() local x; x = B(); x[{":", I{1, 3}, I{2, 4}}] = torch.tensor({-1.0, -2.0}); return x end, {{{0.0, -1.0, 2.0, 3.0}, {4.0, 5.0, 6.0, 7.0}, {8.0, 9.0, 10.0, -2.0}}, {{12.0, -1.0, 14.0, 15.0}, {16.0, 17.0, 18.0, 19.0}, {20.0, 21.0, 22.0, -2.0}}} },
  { 'x = B(); x[{2, ":", I{4, 1}}] = 0', function() local x; x = B(); x[{2, ":", I{4, 1}}] = 0; return x end, {{{0.0, 1.0, 2.0, 3.0}, {4.0, 5.0, 6.0, 7.0}, {8.0, 9.0, 10.0, 11.0}}, {{0.0, 13.0, 14.0, 0.0}, {0.0, 17.0, 18.0, 0.0}, {0.0, 21.0, 22.0, 0.0}}} },
  { 'x = B(); x[{{1, 1}, I{1, 3}, {2, 3}}] = 100', function() local x; x = B(); x[{{1, 1}, I{1, 3}, {2, 3}}] = 100; return x end, {{{0.0, 100.0, 100.0, 3.0}, {4.0, 5.0, 6.0, 7.0}, {8.0, 100.0, 100.0, 11.0}}, {{12.0, 13.0, 14.0, 15.0}, {16.0, 17.0, 18.0, 19.0}, {20.0, 21.0, 22.0, 23.0}}} },
  { 'x = B(); x[{M23, I{1, 4, 2}}] = torch.tensor({1.0, 2.0, 3.0})', function() local x; x = B(); x[{M23, I{1, 4, 2}}] = torch.tensor({1.0, 2.0, 3.0}); return x end, {{{1.0, 1.0, 2.0, 3.0}, {4.0, 5.0, 6.0, 7.0}, {8.0, 9.0, 10.0, 2.0}}, {{12.0, 13.0, 14.0, 15.0}, {16.0, 3.0, 18.0, 19.0}, {20.0, 21.0, 22.0, 23.0}}} },
  { 'x = B(); x[{":", ":", M4}] = 0', function() local x; x = B(); x[{":", ":", M4}] = 0; return x end, {{{0.0, 1.0, 0.0, 0.0}, {0.0, 5.0, 0.0, 0.0}, {0.0, 9.0, 0.0, 0.0}}, {{0.0, 13.0, 0.0, 0.0}, {0.0, 17.0, 0.0, 0.0}, {0.0, 21.0, 0.0, 0.0}}} },
  { 'x = B(); x[{M23}] = torch.tensor({1.0, 2.0, 3.0, 4.0})', function() local x; x = B(); x[{M23}] = torch.tensor({1.0, 2.0, 3.0, 4.0}); return x end, {{{1.0, 2.0, 3.0, 4.0}, {4.0, 5.0, 6.0, 7.0}, {1.0, 2.0, 3.0, 4.0}}, {{12.0, 13.0, 14.0, 15.0}, {1.0, 2.0, 3.0, 4.0}, {20.0, 21.0, 22.0, 23.0}}} },
  { 'x = A(); x[{":", true, I{2}}] = 9', function() local x; x = A(); x[{":", true, I{2}}] = 9; return x end, {{0.0, 9.0, 2.0, 3.0}, {4.0, 9.0, 6.0, 7.0}, {8.0, 9.0, 10.0, 11.0}} },
  { 'x = A(); x[{":", I{1, 3}}] = torch.tensor({{1, 2}, {3, 4}, {5, 6}})', function() local x; x = A(); x[{":", I{1, 3}}] = torch.tensor({{1, 2}, {3, 4}, {5, 6}}); return x end, {{1.0, 1.0, 2.0, 3.0}, {3.0, 5.0, 4.0, 7.0}, {5.0, 9.0, 6.0, 11.0}} },
}

for _, w in ipairs(writes) do
  T.test("write " .. w[1], function() T.tensor(w[2](), w[3]) end)
end

------------------------------------------------------------------------------
-- what the result is
------------------------------------------------------------------------------
T.test("empty index tensors and false give empty results", function()
  T.tensor(a[{ ":", I{} }], nil, { shape = { 3, 0 } })
  T.tensor(a[{ false }], nil, { shape = { 0, 3, 4 } })
  T.tensor(a[{ ":", false }], nil, { shape = { 3, 0, 4 } })
  local x = A()
  x[{ ":", I{} }] = 5
  T.tensor(x, A():totable())
end)

T.test("an index tensor in a table gives a copy; a range {i} keeps the dim like [i]", function()
  local x = A()
  local r = x[{ ":", I{ 1 } }]
  r[{ 1, 1 }] = 100
  T.eq(x[1][1], 0)
  T.tensor(x[{ ":", I{ -1 } }], x[{ ":", { -1 } }]:totable(), { shape = { 3, 1 } })
  T.tensor(x[{ I{ 2 }, I{ -1 } }], { 7 }, { shape = { 1 } })
end)

T.test("a 0-d integer tensor in a table selects, as a number does (PyTorch)", function()
  T.tensor(a[{ ":", torch.tensor(2) }], { 1, 5, 9 }, { shape = { 3 } })
  T.tensor(c[{ ":", I{ 1, 2 }, ":", torch.tensor(2) }], c[{ ":", I{ 1, 2 }, ":", 2 }]:totable(), { shape = { 2, 2, 4 } })
  local x = A()
  x[{ torch.tensor(-1), I{ 1, 4 } }] = 1
  T.tensor(x[3], { 1, 9, 10, 1 })
end)

T.test("assigning part of x into x through indices reads the old values (a swap)", function()
  local x = A()
  x[{ ":", I{ 2, 1 } }] = x[{ ":", { 1, 2 } }]
  T.tensor(x, { { 1, 0, 2, 3 }, { 5, 4, 6, 7 }, { 9, 8, 10, 11 } })
  local y = A()
  y[{ I{ 1, 2 }, I{ 1, 2 } }] = y[{ I{ 2, 1 }, I{ 2, 1 } }]
  T.tensor(y[{ { 1, 2 }, { 1, 2 } }], { { 5, 1 }, { 4, 0 } })
end)

T.test("assignment through a view with index tensors writes into the base", function()
  local x = A()
  local v = x:t()
  v[{ I{ 4, 1 }, 2 }] = -1
  T.tensor(x[2], { -1, 5, 6, -1 })
end)

------------------------------------------------------------------------------
-- ranges clamp at the ends, as Python's slices do
------------------------------------------------------------------------------
T.test("ranges clamp: the last partial batch, a range past the end is empty", function()
  local z = torch.arange(124):view(62, 2)
  T.tensor(z[{ { 61, 64 } }], { { 120, 121 }, { 122, 123 } })
  T.tensor(z[{ { 70, 80 } }], nil, { shape = { 0, 2 } })
  T.tensor(z[{ { 63 } }], nil, { shape = { 0, 2 } })
  T.tensor(z[{ { -100, 2 } }], { { 0, 1 }, { 2, 3 } })
  T.tensor(z[{ { 1, -100 } }], nil, { shape = { 0, 2 } })
  T.tensor(z[{ { 61, 64 }, { 2, 5 } }], { { 121 }, { 123 } })
  T.tensor(z[{ { 61, 64 }, I{ 2 } }], { { 121 }, { 123 } })
end)

T.test("assignment through a clamped range", function()
  local x = A()
  x[{ { 2, 9 }, { 4, 5 } }] = -1
  T.tensor(x, { { 0, 1, 2, 3 }, { 4, 5, 6, -1 }, { 8, 9, 10, -1 } })
  x[{ { 5, 9 } }] = 100   -- empty: nothing written
  T.eq(x:max():item(), 10)
end)

------------------------------------------------------------------------------
-- bad input: errors naming index and the entry
------------------------------------------------------------------------------
T.test("error: a table of 3 or more numbers is not a list of indices", function()
  T.raises(function() return a[{ ":", { 1, 2, 3 } }] end, "index: entry 2 is a table of 3 values",
    "{first, last} range", "torch.tensor{...}")
  T.raises(function() a[{ { 1, 2, 3 } }] = 0 end, "index: entry 1 is a table of 3 values")
  T.raises(function() return a[{ ":", { 1, 2.5 } }] end, "index: entry 2", "integers")
  T.raises(function() return a[{ ":", { 0, 2 } }] end, "index: entry 2", "1-based")
end)

T.test("error: an index out of range names the entry and the dim", function()
  T.raises(function() return a[{ ":", I{ 1, 5 } }] end, "index: entry 2: index 5 is out of range for dim 2 with size 4")
  T.raises(function() return a[{ I{ -4 }, ":" }] end, "index: entry 1: index -4 is out of range for dim 1 with size 3")
  T.raises(function() return b[{ 1, ":", I{ 0 } }] end, "index: entry 3: index 0", "1-based")
  local x = A()
  T.raises(function() x[{ I{ 1 }, I{ 9 } }] = 1 end, "index: entry 2: index 9 is out of range for dim 2 with size 4")
  T.tensor(x, A():totable())   -- nothing written
end)

T.test("error: float index tensors", function()
  T.raises(function() return a[{ ":", torch.tensor({ 1.0, 2.0 }) }] end, "index: entry 2", "int64", "bool", "float32")
  T.raises(function() a[{ ":", torch.tensor({ 1.0 }) }] = 0 end, "index: entry 2", "float32")
end)

T.test("error: a mask whose shape does not match the dims it covers", function()
  T.raises(function() return a[{ ":", torch.tensor({ true, false }) }] end,
    "index: entry 2 is a mask of shape [2], which does not match the sizes [4] of dim 2")
  T.raises(function() return b[{ torch.tensor({ { true, false } }) }] end, "index: entry 1", "mask of shape [1, 2]",
    "[2, 3] of dims 1..2")
end)

T.test("error: too many indices, index tensors that do not broadcast", function()
  T.raises(function() return a[{ ":", ":", I{ 1 } }] end, "index: too many indices", "3 dims", "has 2")
  T.raises(function() return a[{ M23, I{ 1 }, 1 }] end, "index: too many indices")
  T.raises(function() return a[{ I{ 1, 2 }, I{ 1, 2, 3 } }] end, "index: shape mismatch", "entry 2", "[3]", "[2]")
  T.raises(function() return a[{ ":", "x", I{ 1 } }] end, "index")
  T.raises(function() return a[{ "x", I{ 1 } }] end, "index: entry 1", "got string")
end)

T.test("error: a value that does not broadcast to the indexed elements", function()
  local x = A()
  T.raises(function() x[{ ":", I{ 1, 2 } }] = torch.ones(3, 3) end, "index: a tensor of shape [3, 3]", "shape [3, 2]")
  T.raises(function() x[{ ":", I{ 1, 2 } }] = "s" end, "index", "string")
  T.tensor(x, A():totable())
end)

------------------------------------------------------------------------------
-- autograd
------------------------------------------------------------------------------
local gc = torch.autograd.gradcheck
torch.manual_seed(7)
local function leaf(...) return torch.randn({ ... }, { dtype = f64, requires_grad = true }) end

T.test("autograd: reads through index tensors pass gradcheck", function()
  local x, y = leaf(3, 4), leaf(2, 3, 4)
  T.ok(gc(function(x) return x[{ ":", I{ 1, 3 } }] end, { x }))
  T.ok(gc(function(x) return x[{ I{ 3, 1 }, I{ -1, 2 } }] end, { x }))
  T.ok(gc(function(x) return x[{ I{ { 1 }, { 3 } }, I{ 2, 4 } }] end, { x }))
  T.ok(gc(function(y) return y[{ I{ 1, 2 }, ":", I{ 2, 3 } }] end, { y }))
  T.ok(gc(function(y) return y:transpose(1, 3)[{ ":", I{ 2, 1 }, I{ 1, 2 } }] end, { y }))
  T.ok(gc(function(y) return y[{ M23, I{ 1, 4, 2 } }] end, { y }))
  T.ok(gc(function(y) return y[{ 2, ":", M4 }] end, { y }))
end)

T.test("autograd: duplicated indices accumulate in the gradient", function()
  local x = torch.zeros(3, 4, { dtype = f64, requires_grad = true })
  x[{ I{ 1, 1, 3 }, I{ 2, 2, 4 } }]:sum():backward()
  T.tensor(x.grad, { { 0, 2, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 1 } })
  local y = leaf(3, 4)
  T.ok(gc(function(y) return y[{ ":", I{ 2, 2, 1 } }] end, { y }))
  local g = torch.autograd.grad({ y[{ ":", I{ 2, 2, 1 } }] }, { y },
    { grad_outputs = { torch.tensor({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, { dtype = f64 }) } })[1]
  T.tensor(g, { { 3, 3, 0, 0 }, { 6, 9, 0, 0 }, { 9, 15, 0, 0 } })
end)

T.test("autograd: assignment into a non-leaf is recorded (index_put_)", function()
  local x, w, u = leaf(3, 4), leaf(3, 2), leaf(2)
  T.ok(gc(function(x, w) local y = x * 1; y[{ ":", I{ 1, 3 } }] = w; return y end, { x, w }))
  T.ok(gc(function(x, u) local y = x * 1; y[{ ":", I{ 1, 3 } }] = u; return y end, { x, u }))
  T.ok(gc(function(x) local y = x * 1; y[{ I{ 1, 3 }, I{ 2, 4 } }] = 0; return y end, { x }))
  T.ok(gc(function(x, u) local y = x * 1; y[{ I{ 1, 3 }, I{ 2, 4 } }] = u; return y end, { x, u }))
  local y = x * 1
  y[{ ":", I{ 2 } }] = u[{ { 1 } }] * 3
  T.ok(y.grad_fn ~= nil)
  y:sum():backward()
  T.tensor(x.grad, { { 1, 0, 1, 1 }, { 1, 0, 1, 1 }, { 1, 0, 1, 1 } })
  T.tensor(u.grad, { 9, 0 })
end)

T.test("autograd: into a leaf that requires grad raises; a value with grad gives a plain tensor history", function()
  local x = leaf(3, 4)
  T.raises(function() x[{ ":", I{ 1 } }] = 0 end, "leaf Variable")
  T.raises(function() x[{ I{ 1 }, I{ 2 } }] = torch.ones(1, { dtype = f64 }) end, "leaf Variable")
  torch.no_grad(function() x[{ ":", I{ 1 } }] = 0 end)   -- allowed without grad mode
  T.tensor(x[{ ":", 1 }]:detach(), { 0, 0, 0 })
  local w = leaf(2)
  T.ok(gc(function(w) local p = torch.zeros(3, 4, { dtype = f64 }); p[{ I{ 1, 3 }, I{ 2, 4 } }] = w; return p end, { w }))
  local p = torch.zeros(3, 4, { dtype = f64 })
  p[{ ":", I{ 1, 4 } }] = w * 2
  T.ok(p.requires_grad)
  p:sum():backward()
  T.tensor(w.grad, { 6, 6 })
  local q = torch.zeros(2, 2)
  q[{ ":", I{ 2 } }] = 1
  T.ok(not q.requires_grad and q.grad_fn == nil)
end)

------------------------------------------------------------------------------
-- device tensors (the fake "cuda" backend of tests/fake): index values are read on the host
------------------------------------------------------------------------------
local build = os.getenv("BUILD") or "build"
package.cpath = build .. "/tests/?.so;" .. package.cpath
local ok_load = pcall(require, "fake_cuda")
if ok_load then
  T.test("device tensors: reads and writes with index tensors on either device", function()
    local x = A():to("cuda")
    local r = x[{ ":", I{ 3, 1 } }]
    T.eq(tostring(r.device), "cuda:0")
    T.tensor(r:cpu(), { { 2, 0 }, { 6, 4 }, { 10, 8 } })
    T.tensor(x[{ I{ 3 }:to("cuda"), M4:to("cuda") }]:cpu(), { 8, 10, 11 })
    x[{ I{ 1, 3 }, I{ 2, 4 } }] = torch.tensor({ 7.0, 8.0 }, { dtype = f64, device = "cuda" })
    T.tensor(x:cpu()[{ I{ 1, 3 }, I{ 2, 4 } }], { 7, 8 })
  end)
else
  T.skip("device tensors", "build/tests/fake_cuda.so is not built (make test builds it)")
end

T.done()
