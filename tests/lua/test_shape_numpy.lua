-- The shape ops of src/ops/shape_numpy.lua (broadcast_to, hstack, tensor_split, rot90,
-- repeat_interleave, meshgrid, tril_indices, diag_embed, take_along_dim, select_scatter,
-- slice_scatter, diff, vander, numel, ...): values against PyTorch on several shapes,
-- non-contiguous, empty and 0-d inputs; views where PyTorch gives views; dtypes; errors.
local T = require "testing"
local P = require "pyref"

local f64 = torch.float64
local function ar(...) return torch.arange(1, select("#", ...) > 0 and (...) + 1 or 1) end
local function rnd(...) return torch.randn({ ... }, { dtype = f64 }) end
torch.manual_seed(5)

-- Inputs shared by the PyTorch comparisons: the same values go to Python.
local I = {
  a = rnd(3), b = rnd(2), c = rnd(4), a7 = ar(7), a8 = rnd(8),
  s = torch.tensor(2.5, { dtype = f64 }), s2 = torch.tensor(-1.0, { dtype = f64 }),
  e = torch.zeros(0, { dtype = f64 }), e23 = torch.zeros(0, 3, { dtype = f64 }),
  m = rnd(2, 3), m2 = rnd(2, 4), m45 = rnd(4, 5), m34 = rnd(3, 4),
  t3 = rnd(2, 3, 4), t226 = rnd(2, 2, 6), k = torch.tensor({ 3, 1, 2 }),
  ints = torch.tensor({ 1, 3, 6, 10, 15 }), bools = torch.tensor({ true, false, false, true }),
  i23 = torch.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }),
}
-- non-contiguous versions (Python gets their values, contiguous)
I.mt = I.m45:t()                 -- [5, 4]
I.t3p = I.t3:permute(3, 1, 2)    -- [4, 2, 3]
I.a8s = I.a8:unfold(1, 1, 2):select(2, 1)   -- stride 2, [4]

-- Each case: { label, function giving a lutorch tensor or list of tensors, Python expression }.
-- Every case of the file runs in one Python process (starting one takes seconds), at the end;
-- a Python expression that raises gives None, which fails its own case only.
local GROUPS = {}
local function against_torch(name, cases) GROUPS[#GROUPS + 1] = { name = name, cases = cases } end

local function run_against_torch()
  if not P.available() then return end
  local body = { "def _len(x): return -1 if x is None else len(x)",
    "def _at(x, i): return None if x is None or i >= len(x) else x[i]" }
  local outs, n = {}, 0
  for _, g in ipairs(GROUPS) do
    for _, c in ipairs(g.cases) do
      n = n + 1
      c.id = n
      local ok, r = pcall(c[2])
      c.got, c.err = ok and r or nil, not ok and tostring(r) or nil
      body[#body + 1] = ("try:\n  _r%d = %s\nexcept Exception:\n  _r%d = None"):format(n, c[3], n)
      c.out = #outs + 1
      if ok and not torch.is_tensor(r) then
        outs[#outs + 1] = ("_len(_r%d)"):format(n)
        for j = 1, #r do outs[#outs + 1] = ("_at(_r%d, %d)"):format(n, j - 1) end
      else
        outs[#outs + 1] = ("_r%d"):format(n)
      end
    end
  end
  local ok, res = pcall(P.run, I, table.concat(body, "\n"), outs)
  for _, g in ipairs(GROUPS) do
    T.test(g.name .. " matches PyTorch", function()
      if not ok then error(res, 0) end
      for _, c in ipairs(g.cases) do
        if c.err then error(c[1] .. ": " .. c.err, 0) end
        local function cmp(t, want, label)
          if want == nil then error(label .. ": PyTorch raised an error for " .. c[3], 0) end
          T.eq(t:size(), want:size(), label .. ": shape")
          T.near(t:to(f64):totable(), want:totable(), 1e-12, label)
        end
        if torch.is_tensor(c.got) then cmp(c.got, res[c.out], c[1])
        else
          T.eq(#c.got, res[c.out], c[1] .. ": number of pieces")
          for j = 1, #c.got do cmp(c.got[j], res[c.out + j], c[1] .. " [" .. j .. "]") end
        end
      end
    end)
  end
end

------------------------------------------------------------------------------
-- broadcast_to, broadcast_tensors
------------------------------------------------------------------------------
against_torch("broadcast_to, broadcast_tensors", {
  { "broadcast_to [3] -> [2, 3]", function() return torch.broadcast_to(I.a, { 2, 3 }) end, "torch.broadcast_to(a, (2, 3))" },
  { "method, non-contiguous", function() return I.mt:broadcast_to(2, 5, 4) end, "torch.broadcast_to(mt, (2, 5, 4))" },
  { "0-d", function() return torch.broadcast_to(I.s, { 2, 2 }) end, "torch.broadcast_to(s, (2, 2))" },
  { "empty", function() return torch.broadcast_to(I.e23, { 2, 0, 3 }) end, "torch.broadcast_to(e23, (2, 0, 3))" },
  { "-1 keeps", function() return torch.broadcast_to(I.a, { 2, -1 }) end, "torch.broadcast_to(a, (2, -1))" },
  { "tensors [3], [2, 1]", function() return torch.broadcast_tensors({ I.a, I.b:view(2, 1) }) end,
    "torch.broadcast_tensors(a, b.view(2, 1))" },
  { "tensors 0-d and [2, 3]", function() return torch.broadcast_tensors({ I.s, I.m, I.a }) end,
    "torch.broadcast_tensors(s, m, a)" },
  { "tensors empty", function() return torch.broadcast_tensors({ I.e, I.s }) end, "torch.broadcast_tensors(e, s)" },
  { "one tensor", function() return torch.broadcast_tensors({ I.mt }) end, "torch.broadcast_tensors(mt)" },
})

T.test("broadcast_to and broadcast_tensors give views; dtypes kept", function()
  local x = torch.zeros(3)
  local v = torch.broadcast_to(x, { 2, 3 })
  T.eq(v:stride(), { 0, 1 })
  x[2] = 5
  T.eq(v[2][2], 5.0)
  local r = torch.broadcast_tensors({ torch.ones(3, { dtype = torch.int64 }), torch.zeros(2, 1) })
  T.eq(r[1].dtype.name, "int64"); T.eq(r[2].dtype.name, "float32")
  T.eq(r[1]:size(), { 2, 3 }); T.eq(r[2]:stride(), { 1, 0 })
  T.eq(#torch.broadcast_tensors({}), 0)
end)

T.test("broadcast_to and broadcast_tensors errors", function()
  T.raises(function() torch.broadcast_to(torch.ones(3), { 2, 4 }) end, "broadcast_to", "3")
  T.raises(function() torch.broadcast_to(torch.ones(2, 3), { 3 }) end, "broadcast_to", "size")
  T.raises(function() torch.broadcast_to(torch.ones(3), { -1, 3 }) end, "broadcast_to")
  T.raises(function() torch.broadcast_to(torch.ones(3), "x") end, "broadcast_to", "size")
  T.raises(function() torch.broadcast_tensors({ torch.ones(3), torch.ones(2) }) end, "broadcast_tensors", "entry 2",
    "[2]", "[3]")
  T.raises(function() torch.broadcast_tensors({ torch.ones(3), 4 }) end, "broadcast_tensors", "entry 2")
  T.raises(function() torch.broadcast_tensors(torch.ones(3)) end, "broadcast_tensors", "tensors")
end)

------------------------------------------------------------------------------
-- hstack, vstack, row_stack, dstack, column_stack
------------------------------------------------------------------------------
against_torch("hstack, vstack, dstack, column_stack", {
  { "hstack 1-D", function() return torch.hstack({ I.a, I.b }) end, "torch.hstack([a, b])" },
  { "hstack 2-D non-contiguous", function() return torch.hstack({ I.mt, I.mt:narrow(2, 1, 2) }) end,
    "torch.hstack([mt, mt[:, 0:2]])" },
  { "hstack 0-d", function() return torch.hstack({ I.s, I.s2, I.a }) end, "torch.hstack([s, s2, a])" },
  { "hstack empty", function() return torch.hstack({ I.e, I.a }) end, "torch.hstack([e, a])" },
  { "vstack 1-D", function() return torch.vstack({ I.a, I.a }) end, "torch.vstack([a, a])" },
  { "vstack mixed", function() return torch.vstack({ I.m, I.a, I.e23 }) end, "torch.vstack([m, a, e23])" },
  { "row_stack 0-d", function() return torch.row_stack({ I.s, I.s2 }) end, "torch.row_stack([s, s2])" },
  { "dstack 1-D", function() return torch.dstack({ I.a, I.a }) end, "torch.dstack([a, a])" },
  { "dstack 2-D", function() return torch.dstack({ I.m, I.m }) end, "torch.dstack([m, m])" },
  { "dstack 3-D and 2-D", function() return torch.dstack({ I.t3, I.t3p:permute(2, 3, 1), I.t3:select(3, 1) }) end,
    "torch.dstack([t3, t3, t3[:, :, 0]])" },
  { "dstack 0-d", function() return torch.dstack({ I.s, I.s2 }) end, "torch.dstack([s, s2])" },
  { "column_stack", function() return torch.column_stack({ I.a8s:narrow(1, 1, 3), I.m45:narrow(1, 1, 3), I.a }) end,
    "torch.column_stack([a8[0:6:2], m45[0:3], a])" },
  { "column_stack 0-d", function() return torch.column_stack({ I.s, I.s2 }) end, "torch.column_stack([s, s2])" },
  { "column_stack empty", function() return torch.column_stack({ I.e, I.e }) end, "torch.column_stack([e, e])" },
})

T.test("stacking: dtypes promote, out= works, results are copies", function()
  local h = torch.hstack({ torch.tensor({ 1, 2 }), torch.tensor({ 0.5 }) })
  T.tensor(h, { 1, 2, 0.5 }, { dtype = "float32" })
  local o = torch.zeros(1)
  local r = torch.vstack({ torch.ones(2), torch.zeros(2) }, { out = o })
  T.tensor(o, { { 1, 1 }, { 0, 0 } }); T.tensor(r, { { 1, 1 }, { 0, 0 } })
  T.tensor(torch.hstack({ torch.tensor({ 1 }), torch.tensor({ 2 }) }, { out = torch.zeros(0, { dtype = torch.int64 }) }),
    { 1, 2 }, { dtype = "int64" })
  T.tensor(torch.dstack({ torch.tensor({ true }), torch.tensor({ false }) }), { { { true, false } } }, { dtype = "bool" })
  local x = torch.ones(2)
  local v = torch.hstack({ x })
  v[1] = 7
  T.eq(x[1], 1.0)
end)

T.test("stacking errors", function()
  -- row_stack is an alias: its errors say vstack
  for f, name in pairs({ hstack = "hstack", vstack = "vstack", row_stack = "vstack", dstack = "dstack",
    column_stack = "column_stack" }) do
    T.raises(function() torch[f]({}) end, name, "tensors", "non-empty")
    T.raises(function() torch[f](torch.ones(2)) end, name, "tensors")
    T.raises(function() torch[f]({ torch.ones(2), "x" }) end, name, "entry 2")
  end
  T.raises(function() torch.hstack({ torch.ones(3), torch.ones(3, 2) }) end, "hstack", "entry 2")
  T.raises(function() torch.hstack({ torch.ones(3, 2), torch.ones(2, 2) }) end, "hstack", "entry 2")
  T.raises(function() torch.vstack({ torch.ones(3), torch.ones(2) }) end, "vstack", "entry 2")
  T.raises(function() torch.dstack({ torch.ones(1), torch.ones(2) }) end, "dstack", "entry 2")
  T.raises(function() torch.column_stack({ torch.ones(3), torch.ones(2, 2) }) end, "column_stack", "entry 2")
  T.raises(function() torch.hstack({ torch.ones(2) }, { out = torch.zeros(2, { dtype = torch.int64 }) }) end, "hstack", "out")
end)

------------------------------------------------------------------------------
-- tensor_split, hsplit, vsplit, dsplit
------------------------------------------------------------------------------
against_torch("tensor_split, hsplit, vsplit, dsplit", {
  { "sections", function() return torch.tensor_split(I.a7, 3) end, "torch.tensor_split(a7, 3)" },
  { "more sections than elements", function() return I.a7:tensor_split(10) end, "torch.tensor_split(a7, 10)" },
  { "sections along dim 2, non-contiguous", function() return I.mt:tensor_split(3, 2) end, "torch.tensor_split(mt, 3, 1)" },
  { "sections along dim -2", function() return I.t3:tensor_split(2, -2) end, "torch.tensor_split(t3, 2, -2)" },
  { "sections of empty", function() return I.e:tensor_split(3) end, "torch.tensor_split(e, 3)" },
  { "positions", function() return I.a7:tensor_split({ 2, 5 }) end, "torch.tensor_split(a7, [1, 4])" },
  { "positions out of order", function() return I.a7:tensor_split({ 4, 2 }) end, "torch.tensor_split(a7, [3, 1])" },
  { "negative positions", function() return I.a7:tensor_split({ -2, 6 }) end, "torch.tensor_split(a7, [-2, 5])" },
  { "positions past the end", function() return I.a7:tensor_split({ 11, 13 }) end, "torch.tensor_split(a7, [10, 12])" },
  { "no positions", function() return I.a7:tensor_split({}) end, "torch.tensor_split(a7, [])" },
  { "positions dim 2", function() return torch.tensor_split(I.m45, { 1, 3 }, 2) end, "torch.tensor_split(m45, [0, 2], 1)" },
  { "tensor sections", function() return I.a7:tensor_split(torch.tensor(3)) end, "torch.tensor_split(a7, torch.tensor(3))" },
  { "tensor positions", function() return I.mt:tensor_split(torch.tensor({ 2, 4 }), 1) end,
    "torch.tensor_split(mt, torch.tensor([1, 3]), 0)" },
  { "hsplit 1-D", function() return I.a8:hsplit(4) end, "torch.hsplit(a8, 4)" },
  { "hsplit 2-D", function() return I.m2:hsplit(2) end, "torch.hsplit(m2, 2)" },
  { "hsplit positions", function() return torch.hsplit(I.mt, { 2 }) end, "torch.hsplit(mt, [1])" },
  { "vsplit", function() return I.m45:vsplit(2) end, "torch.vsplit(m45, 2)" },
  { "vsplit positions", function() return I.m45:vsplit({ 2, 4 }) end, "torch.vsplit(m45, [1, 3])" },
  { "dsplit", function() return I.t226:dsplit(3) end, "torch.dsplit(t226, 3)" },
  { "dsplit positions", function() return torch.dsplit(I.t226, { 2, 5 }) end, "torch.dsplit(t226, [1, 4])" },
})

T.test("tensor_split gives views (of the same storage)", function()
  local x = torch.arange(1, 8)
  local p = x:tensor_split(3)
  p[2][1] = 40
  T.eq(x[4], 40)
  local q = x:tensor_split({ 5, 2 })   -- overlapping pieces are views too
  q[3][1] = 20
  T.eq(x[2], 20)
  T.eq(#torch.vsplit(torch.zeros(0, 2), 3), 3)
  T.eq(x:hsplit(7)[7]:size(), { 1 })
end)

T.test("splitting errors", function()
  local x = torch.arange(7)
  T.raises(function() torch.tensor_split(torch.tensor(1), 2) end, "tensor_split", "0-d")
  T.raises(function() x:tensor_split(0) end, "tensor_split", "sections", "positive")
  T.raises(function() x:tensor_split(-2) end, "tensor_split", "sections")
  T.raises(function() x:tensor_split(2, 2) end, "tensor_split", "dim 2")
  T.raises(function() x:tensor_split({ 0, 2 }) end, "tensor_split", "indices", "1-based")
  T.raises(function() x:tensor_split(torch.tensor({ { 1 } })) end, "tensor_split", "tensor_indices_or_sections", "2 dims")
  T.raises(function() x:tensor_split(torch.tensor({ 1.5 })) end, "tensor_split", "tensor_indices_or_sections", "float32")
  T.raises(function() x:tensor_split(2.5) end, "tensor_split", "tensor_indices_or_sections")
  T.raises(function() x:tensor_split("a") end, "tensor_split")
  T.raises(function() torch.arange(5):hsplit(2) end, "hsplit", "sections", "divide")
  T.raises(function() torch.tensor(1):hsplit(1) end, "hsplit", "at least 1 dim")
  T.raises(function() torch.ones(2, 3):hsplit(0) end, "hsplit", "sections", "positive")
  T.raises(function() torch.ones(3):vsplit(1) end, "vsplit", "at least 2 dims", "got 1")
  T.raises(function() torch.ones(3, 4):dsplit(1) end, "dsplit", "at least 3 dims")
  T.raises(function() torch.ones(3, 4):vsplit({ 0 }) end, "vsplit", "indices")
  T.raises(function() torch.ones(2, 2, 4):dsplit(3) end, "dsplit", "dim 3", "size 4")
end)

------------------------------------------------------------------------------
-- rot90, fliplr, flipud, ravel
------------------------------------------------------------------------------
against_torch("rot90, fliplr, flipud, ravel", {
  { "rot90", function() return I.m:rot90() end, "torch.rot90(m)" },
  { "rot90 k=2", function() return torch.rot90(I.m, 2) end, "torch.rot90(m, 2)" },
  { "rot90 k=3", function() return torch.rot90(I.m, 3) end, "torch.rot90(m, 3)" },
  { "rot90 k=0", function() return torch.rot90(I.m, 0) end, "torch.rot90(m, 0)" },
  { "rot90 k=-1", function() return torch.rot90(I.m, -1) end, "torch.rot90(m, -1)" },
  { "rot90 k=5", function() return torch.rot90(I.m, 5) end, "torch.rot90(m, 5)" },
  { "rot90 dims {2, 1}", function() return torch.rot90(I.m, 1, { 2, 1 }) end, "torch.rot90(m, 1, [1, 0])" },
  { "rot90 3-D dims {1, 3}", function() return I.t3:rot90(1, { 1, 3 }) end, "torch.rot90(t3, 1, [0, 2])" },
  { "rot90 3-D dims {-1, 2}, non-contiguous", function() return I.t3p:rot90(3, { -1, 2 }) end,
    "torch.rot90(t3p, 3, [-1, 1])" },
  { "rot90 empty", function() return I.e23:rot90() end, "torch.rot90(e23)" },
  { "fliplr", function() return I.m:fliplr() end, "torch.fliplr(m)" },
  { "fliplr 3-D non-contiguous", function() return torch.fliplr(I.t3p) end, "torch.fliplr(t3p)" },
  { "fliplr empty", function() return I.e23:fliplr() end, "torch.fliplr(e23)" },
  { "flipud 1-D", function() return I.a:flipud() end, "torch.flipud(a)" },
  { "flipud 2-D non-contiguous", function() return torch.flipud(I.mt) end, "torch.flipud(mt)" },
  { "flipud empty", function() return I.e:flipud() end, "torch.flipud(e)" },
  { "ravel", function() return I.t3:ravel() end, "torch.ravel(t3)" },
  { "ravel non-contiguous", function() return torch.ravel(I.t3p) end, "torch.ravel(t3p)" },
  { "ravel 0-d", function() return I.s:ravel() end, "torch.ravel(s)" },
  { "ravel empty", function() return I.e23:ravel() end, "torch.ravel(e23)" },
})

T.test("rot90 keeps dtype; flips copy; ravel views a contiguous tensor", function()
  local i = torch.tensor({ { 1, 2 }, { 3, 4 } })
  T.tensor(i:rot90(), { { 2, 4 }, { 1, 3 } }, { dtype = "int64" })
  T.tensor(torch.tensor({ { true, false } }):fliplr(), { { false, true } }, { dtype = "bool" })
  local x = torch.zeros(2, 3)
  local r = x:ravel()
  r[1] = 5
  T.eq(x[1][1], 5.0)
  local f = x:flipud()
  f[1][1] = 9
  T.eq(x[2][1], 0.0)
  local z = x:rot90(0)
  z[1][1] = 8
  T.eq(x[1][1], 5.0)
end)

T.test("rot90, fliplr, flipud errors", function()
  local m = torch.ones(2, 3)
  T.raises(function() m:rot90(1, { 1, 1 }) end, "rot90", "dims", "different")
  T.raises(function() m:rot90(1, { 1 }) end, "rot90", "dims", "2 entries")
  T.raises(function() m:rot90(1, { 1, 2, 1 }) end, "rot90", "dims")
  T.raises(function() torch.ones(3):rot90() end, "rot90", "at least 2 dims")
  T.raises(function() m:rot90(1, { 1, 3 }) end, "rot90", "dim 3")
  T.raises(function() m:rot90(1.5) end, "rot90", "k")
  T.raises(function() torch.ones(3):fliplr() end, "fliplr", "at least 2 dims")
  T.raises(function() torch.tensor(1):flipud() end, "flipud", "0-d")
  T.raises(function() torch.ravel(3) end, "ravel", "self")
end)

------------------------------------------------------------------------------
-- repeat_interleave
------------------------------------------------------------------------------
against_torch("repeat_interleave", {
  { "int, flattened", function() return I.m:repeat_interleave(2) end, "torch.repeat_interleave(m, 2)" },
  { "int along dim 1", function() return torch.repeat_interleave(I.m, 3, 1) end, "torch.repeat_interleave(m, 3, 0)" },
  { "int along dim -1, non-contiguous", function() return I.mt:repeat_interleave(2, -1) end,
    "torch.repeat_interleave(mt, 2, -1)" },
  { "int 0 times", function() return I.m:repeat_interleave(0, 2) end, "torch.repeat_interleave(m, 0, 1)" },
  { "int 1 time", function() return I.m:repeat_interleave(1, 2) end, "torch.repeat_interleave(m, 1, 1)" },
  { "0-d", function() return I.s:repeat_interleave(3) end, "torch.repeat_interleave(s, 3)" },
  { "empty", function() return I.e23:repeat_interleave(2, 2) end, "torch.repeat_interleave(e23, 2, 1)" },
  { "tensor along dim 1", function() return I.m:repeat_interleave(torch.tensor({ 1, 2 }), 1) end,
    "torch.repeat_interleave(m, torch.tensor([1, 2]), 0)" },
  { "tensor with zeros, non-contiguous", function() return I.mt:repeat_interleave(torch.tensor({ 0, 2, 1, 3 }), 2) end,
    "torch.repeat_interleave(mt, torch.tensor([0, 2, 1, 3]), 1)" },
  { "tensor one count", function() return I.t3:repeat_interleave(torch.tensor({ 2 }), 3) end,
    "torch.repeat_interleave(t3, torch.tensor([2]), 2)" },
  { "tensor 0-d count, flattened", function() return I.m:repeat_interleave(torch.tensor(2)) end,
    "torch.repeat_interleave(m, torch.tensor(2))" },
  { "tensor flattened", function() return I.b:repeat_interleave(torch.tensor({ 3, 1 })) end,
    "torch.repeat_interleave(b, torch.tensor([3, 1]))" },
  { "tensor int32 counts", function() return I.a:repeat_interleave(torch.tensor({ 1, 0, 2 }, { dtype = torch.int32 })) end,
    "torch.repeat_interleave(a, torch.tensor([1, 0, 2]))" },
  { "indices (1-based)", function() return torch.repeat_interleave(torch.tensor({ 2, 0, 1, 3 })) end,
    "torch.repeat_interleave(torch.tensor([2, 0, 1, 3])) + 1" },
  { "indices of nothing", function() return torch.repeat_interleave(torch.tensor({}, { dtype = torch.int64 })) end,
    "torch.repeat_interleave(torch.tensor([], dtype=torch.int64)) + 1" },
})

T.test("repeat_interleave: dtypes, output_size, fresh results", function()
  T.tensor(torch.tensor({ 1, 2 }):repeat_interleave(2), { 1, 1, 2, 2 }, { dtype = "int64" })
  T.tensor(torch.repeat_interleave(torch.tensor({ 2, 1 })), { 1, 1, 2 }, { dtype = "int64" })
  T.tensor(torch.tensor({ 1, 2, 3 }):repeat_interleave(torch.tensor({ 1, 0, 2 }), 1, { output_size = 3 }), { 1, 3, 3 })
  T.tensor(torch.tensor({ { 1, 2 }, { 3, 4 } }):repeat_interleave(2, 2, { output_size = 4 }), { { 1, 1, 2, 2 }, { 3, 3, 4, 4 } })
  T.tensor(torch.repeat_interleave(torch.tensor({ 1, 2 }), { output_size = 3 }), { 1, 2, 2 })
  local x = torch.zeros(3)
  local r = x:repeat_interleave(1)
  r[1] = 4
  T.eq(x[1], 0.0)
end)

T.test("repeat_interleave errors", function()
  local x = torch.tensor({ 1, 2, 3 })
  T.raises(function() x:repeat_interleave(-1) end, "repeat_interleave", "repeats", "non-negative")
  T.raises(function() x:repeat_interleave(torch.tensor({ 1, -1, 0 })) end, "repeat_interleave", "repeats", "negative")
  T.raises(function() x:repeat_interleave(torch.tensor({ 1, 2 })) end, "repeat_interleave", "repeats", "2 entries", "size 3")
  T.raises(function() x:repeat_interleave(torch.tensor({ 1.0, 2, 3 })) end, "repeat_interleave", "repeats", "float32")
  T.raises(function() x:repeat_interleave(torch.tensor({ true })) end, "repeat_interleave", "repeats", "bool")
  T.raises(function() x:repeat_interleave(torch.ones(1, 3, { dtype = torch.int64 })) end, "repeat_interleave", "repeats", "2 dims")
  T.raises(function() x:repeat_interleave(2, 2) end, "repeat_interleave", "dim 2")
  T.raises(function() torch.tensor(5):repeat_interleave(3, 1) end, "repeat_interleave", "0-d")
  T.raises(function() x:repeat_interleave(2, 1, { output_size = 5 }) end, "repeat_interleave", "output_size", "6")
  T.raises(function() x:repeat_interleave(torch.tensor({ 1, 0, 2 }), 1, { output_size = 2 }) end,
    "repeat_interleave", "output_size")
  T.raises(function() torch.repeat_interleave(torch.tensor({ { 2 } })) end, "repeat_interleave", "repeats", "1-D")
  T.raises(function() torch.repeat_interleave(torch.tensor({ 1.5 })) end, "repeat_interleave", "repeats", "float32")
  T.raises(function() torch.repeat_interleave(torch.tensor({ 2 }), { output_size = 1 }) end, "repeat_interleave", "output_size")
  T.raises(function() x:repeat_interleave(2, 1, { size = 3 }) end, "repeat_interleave", "size")
end)

------------------------------------------------------------------------------
-- meshgrid, cartesian_prod
------------------------------------------------------------------------------
against_torch("meshgrid, cartesian_prod", {
  { "meshgrid ij", function() return torch.meshgrid({ I.a, I.b }) end, "torch.meshgrid(a, b, indexing='ij')" },
  { "meshgrid xy", function() return torch.meshgrid({ I.a, I.b }, { indexing = "xy" }) end,
    "torch.meshgrid(a, b, indexing='xy')" },
  { "meshgrid 3 ij, non-contiguous", function() return torch.meshgrid({ I.a, I.a8s, I.b }, { indexing = "ij" }) end,
    "torch.meshgrid(a, a8[0::2], b, indexing='ij')" },
  { "meshgrid 3 xy", function() return torch.meshgrid({ I.a, I.c, I.b }, { indexing = "xy" }) end,
    "torch.meshgrid(a, c, b, indexing='xy')" },
  { "meshgrid 0-d", function() return torch.meshgrid({ I.s, I.a }, { indexing = "xy" }) end,
    "torch.meshgrid(s, a, indexing='xy')" },
  { "meshgrid empty", function() return torch.meshgrid({ I.e, I.a }) end, "torch.meshgrid(e, a, indexing='ij')" },
  { "meshgrid one", function() return torch.meshgrid({ I.c }, { indexing = "xy" }) end, "torch.meshgrid(c, indexing='xy')" },
  { "cartesian_prod 2", function() return torch.cartesian_prod({ I.a, I.b }) end, "torch.cartesian_prod(a, b)" },
  { "cartesian_prod 3", function() return torch.cartesian_prod({ I.b, I.a8s, I.b }) end,
    "torch.cartesian_prod(b, a8[0::2], b)" },
  { "cartesian_prod 1", function() return torch.cartesian_prod({ I.c }) end, "torch.cartesian_prod(c)" },
  { "cartesian_prod empty", function() return torch.cartesian_prod({ I.e, I.a }) end, "torch.cartesian_prod(e, a)" },
})

T.test("meshgrid gives views; cartesian_prod keeps dtype", function()
  local x, y = torch.zeros(2), torch.zeros(3)
  local g = torch.meshgrid({ x, y })
  T.eq(g[1]:size(), { 2, 3 }); T.eq(g[1]:stride(), { 1, 0 }); T.eq(g[2]:stride(), { 0, 1 })
  x[2] = 4
  T.eq(g[1][2][3], 4.0)
  local h = torch.meshgrid({ x, y }, { indexing = "xy" })
  T.eq(h[1]:size(), { 3, 2 }); T.eq(h[1]:stride(), { 0, 1 })
  T.tensor(torch.cartesian_prod({ torch.tensor({ 1, 2 }), torch.tensor({ 3 }) }), { { 1, 3 }, { 2, 3 } }, { dtype = "int64" })
  T.eq(torch.cartesian_prod({ torch.zeros(0), torch.zeros(2) }):size(), { 0, 2 })
end)

T.test("meshgrid and cartesian_prod errors", function()
  T.raises(function() torch.meshgrid({}) end, "meshgrid", "tensors", "non-empty")
  T.raises(function() torch.meshgrid({ torch.ones(2, 2) }) end, "meshgrid", "entry 1", "2 dims")
  T.raises(function() torch.meshgrid({ torch.ones(2), torch.ones(2, { dtype = torch.int64 }) }) end, "meshgrid", "entry 2",
    "int64", "float32")
  T.raises(function() torch.meshgrid({ torch.ones(2) }, { indexing = "foo" }) end, "meshgrid", "indexing", "foo")
  T.raises(function() torch.meshgrid({ torch.ones(2) }, { indexing = 1 }) end, "meshgrid", "indexing")
  T.raises(function() torch.meshgrid(torch.ones(2), torch.ones(2)) end, "meshgrid")
  T.raises(function() torch.cartesian_prod({}) end, "cartesian_prod", "tensors", "non-empty")
  T.raises(function() torch.cartesian_prod({ torch.ones(2), torch.tensor(1.0) }) end, "cartesian_prod", "entry 2", "1-D")
  T.raises(function() torch.cartesian_prod({ torch.ones(2, 2) }) end, "cartesian_prod", "entry 1", "1-D")
  T.raises(function() torch.cartesian_prod({ torch.ones(2), torch.ones(2, { dtype = torch.int32 }) }) end,
    "cartesian_prod", "dtype")
end)

------------------------------------------------------------------------------
-- tril_indices, triu_indices
------------------------------------------------------------------------------
local tri = {}
for _, f in ipairs({ "tril_indices", "triu_indices" }) do
  for _, a in ipairs({ { 3, 4, 1 }, { 4, 3, -1 }, { 3, 3, 0 }, { 0, 0, 0 }, { 3, 3, -5 }, { 3, 3, 5 }, { 1, 5, 0 },
    { 5, 1, -2 }, { 4, 0, 0 } }) do
    tri[#tri + 1] = { ("%s(%d, %d, %d)"):format(f, a[1], a[2], a[3]), function() return torch[f](a[1], a[2], a[3]) end,
      ("torch.%s(%d, %d, %d) + 1"):format(f, a[1], a[2], a[3]) }
  end
end
tri[#tri + 1] = { "tril_indices default offset", function() return torch.tril_indices(4, 4) end, "torch.tril_indices(4, 4) + 1" }
against_torch("tril_indices, triu_indices", tri)

T.test("tril_indices, triu_indices: dtype, values, sizes", function()
  T.tensor(torch.tril_indices(2, 2), { { 1, 2, 2 }, { 1, 1, 2 } }, { dtype = "int64" })
  T.tensor(torch.triu_indices(2, 3, 1, { dtype = torch.int32 }), { { 1, 1, 2 }, { 2, 3, 3 } }, { dtype = "int32" })
  T.tensor(torch.tril_indices(3, 3, { dtype = "int16" }), nil, { dtype = "int16", shape = { 2, 6 } })
  T.eq(torch.tril_indices(0, 5):size(), { 2, 0 })
  T.eq(torch.triu_indices(2000, 3, 0):size(), { 2, 6 })
  -- many rows and nothing kept: answered without walking the rows
  T.eq(torch.tril_indices(1 << 40, 0):size(), { 2, 0 })
  T.eq(torch.triu_indices(1 << 40, 2, 1):size(), { 2, 1 })
  -- indexes a matrix's triangle directly
  local m = torch.arange(1, 10):view(3, 3)
  local ix = torch.tril_indices(3, 3)
  T.tensor(m:take((ix[1] - 1) * 3 + ix[2]), { 1, 4, 5, 7, 8, 9 })
end)

T.test("tril_indices, triu_indices errors", function()
  T.raises(function() torch.tril_indices(-1, 3) end, "tril_indices", "row", "non-negative")
  T.raises(function() torch.triu_indices(3, -2) end, "triu_indices", "col", "non-negative")
  T.raises(function() torch.tril_indices(3, 3, 0, { dtype = torch.float32 }) end, "tril_indices", "dtype", "float32")
  T.raises(function() torch.triu_indices(3, 3, 0, { dtype = torch.bool }) end, "triu_indices", "dtype", "bool")
  T.raises(function() torch.tril_indices(3, 3, 0, { dtype = "nope" }) end, "tril_indices", "dtype")
  T.raises(function() torch.tril_indices(3.5, 3) end, "tril_indices", "row")
  T.raises(function() torch.triu_indices(3) end, "triu_indices", "col")
  T.raises(function() torch.tril_indices(1 << 30, 1 << 30) end, "tril_indices", "too large")
end)

------------------------------------------------------------------------------
-- diag_embed, diagflat
------------------------------------------------------------------------------
against_torch("diag_embed, diagflat", {
  { "diag_embed 1-D", function() return I.a:diag_embed() end, "torch.diag_embed(a)" },
  { "diag_embed offset 1", function() return I.a:diag_embed(1) end, "torch.diag_embed(a, 1)" },
  { "diag_embed offset -2", function() return torch.diag_embed(I.a, -2) end, "torch.diag_embed(a, -2)" },
  { "diag_embed batch", function() return I.m:diag_embed() end, "torch.diag_embed(m)" },
  { "diag_embed dims 1, 3", function() return I.m:diag_embed(0, 1, 3) end, "torch.diag_embed(m, 0, 0, 2)" },
  { "diag_embed dims -1, 2, non-contiguous", function() return I.t3p:diag_embed(-1, -1, 2) end,
    "torch.diag_embed(t3p, -1, -1, 1)" },
  { "diag_embed dims 3, 1", function() return I.m:diag_embed(1, 3, 1) end, "torch.diag_embed(m, 1, 2, 0)" },
  { "diag_embed empty", function() return I.e23:diag_embed() end, "torch.diag_embed(e23)" },
  { "diag_embed empty last dim", function() return I.e:diag_embed(2) end, "torch.diag_embed(e, 2)" },
  { "diagflat 1-D", function() return I.a:diagflat() end, "torch.diagflat(a)" },
  { "diagflat 2-D offset -1, non-contiguous", function() return torch.diagflat(I.mt:narrow(1, 1, 2), -1) end,
    "torch.diagflat(mt[0:2], -1)" },
  { "diagflat 0-d", function() return I.s:diagflat() end, "torch.diagflat(s)" },
  { "diagflat empty", function() return I.e:diagflat(1) end, "torch.diagflat(e, 1)" },
})

T.test("diag_embed, diagflat: dtypes and errors", function()
  T.tensor(torch.tensor({ 1, 2 }):diag_embed(), { { 1, 0 }, { 0, 2 } }, { dtype = "int64" })
  T.tensor(torch.tensor({ true }):diagflat(1), { { false, true }, { false, false } }, { dtype = "bool" })
  T.raises(function() torch.tensor(1.0):diag_embed() end, "diag_embed", "0-d")
  T.raises(function() torch.ones(2, 3):diag_embed(0, 1, 1) end, "diag_embed", "dim1", "dim2", "differ")
  T.raises(function() torch.ones(2, 3):diag_embed(0, 1, 4) end, "diag_embed", "dim 4")
  T.raises(function() torch.ones(2, 3):diag_embed(0, 0, 1) end, "diag_embed", "dim")
  T.raises(function() torch.ones(2):diag_embed(0.5) end, "diag_embed", "offset")
  T.raises(function() torch.ones(2):diagflat("x") end, "diagflat", "offset")
  T.raises(function() torch.diagflat() end, "diagflat", "self")
end)

------------------------------------------------------------------------------
-- take_along_dim
------------------------------------------------------------------------------
I.ix21 = torch.tensor({ { 3 }, { 1 } })
I.ix12 = torch.tensor({ { 2, 2 } })
I.ixf = torch.tensor({ 6, 1, 4 })
I.ix3 = torch.tensor({ { { 2, 1, 3, 4 } } })
I.ixm = torch.tensor({ { 5, 1 }, { 2, 2 }, { 4, 3 }, { 1, 5 } })   -- used as ixm:t(), [2, 4]
against_torch("take_along_dim", {
  { "dim 2", function() return torch.take_along_dim(I.m, I.ix21, 2) end, "torch.take_along_dim(m, ix21 - 1, 1)" },
  { "dim 2 broadcast", function() return I.m:take_along_dim(I.ix12, 2) end, "torch.take_along_dim(m, ix12 - 1, 1)" },
  { "dim 1 broadcast", function() return I.m:narrow(1, 1, 1):take_along_dim(torch.tensor({ { 1 }, { 1 } }), 1) end,
    "torch.take_along_dim(m[0:1], torch.tensor([[0], [0]]), 0)" },
  { "dim -1 broadcast both", function() return I.t3:narrow(2, 1, 1):take_along_dim(I.ix3, -1) end,
    "torch.take_along_dim(t3[:, 0:1], ix3 - 1, -1)" },
  { "flattened", function() return I.m:take_along_dim(I.ixf) end, "torch.take_along_dim(m, ixf - 1)" },
  { "non-contiguous self and indices", function() return I.mt:take_along_dim(I.ixm:t(), 1) end,
    "torch.take_along_dim(mt, ixm.t() - 1, 0)" },
  { "negative indices", function() return I.a:take_along_dim(torch.tensor({ -1, 1 }), 1) end,
    "torch.take_along_dim(a, torch.tensor([2, 0]), 0)" },
  { "empty indices", function() return I.m:take_along_dim(torch.zeros(2, 0, { dtype = torch.int64 }), 2) end,
    "torch.take_along_dim(m, torch.zeros(2, 0, dtype=torch.long), 1)" },
})

T.test("take_along_dim: with argsort, dtype, errors", function()
  local x = torch.tensor({ { 10, 30, 20 }, { 60, 40, 50 } })
  local s = x:argsort(2)
  T.tensor(torch.take_along_dim(x, s, 2), { { 10, 20, 30 }, { 40, 50, 60 } }, { dtype = "int64" })
  T.tensor(x:take_along_dim(x:argmax(2, true), 2), { { 30 }, { 60 } })
  T.tensor(x:take_along_dim(torch.tensor({ 1, 6 }, { dtype = torch.int32 })), { 10, 50 })
  T.raises(function() x:take_along_dim(torch.tensor({ 1.0 })) end, "take_along_dim", "indices", "float32")
  T.raises(function() x:take_along_dim(torch.tensor({ 1 }), 1) end, "take_along_dim", "indices", "dims")
  T.raises(function() x:take_along_dim(torch.tensor({ { 1 }, { 1 }, { 1 } }), 2) end, "take_along_dim", "indices", "broadcast")
  T.raises(function() x:take_along_dim(torch.tensor({ { 7 } }), 2) end, "take_along_dim")
  T.raises(function() x:take_along_dim(torch.tensor({ { 1 } }), 3) end, "take_along_dim", "dim 3")
  T.raises(function() x:take_along_dim("a") end, "take_along_dim", "indices")
end)

------------------------------------------------------------------------------
-- select_scatter, slice_scatter
------------------------------------------------------------------------------
-- (PyTorch 1.13's slice_scatter miscounts the slice unless step is passed: the expressions pass it)
I.src3 = rnd(3)
I.src2 = rnd(2)
I.src24 = rnd(2, 4)
I.src52 = rnd(5, 2)
against_torch("select_scatter, slice_scatter", {
  { "select_scatter dim 1", function() return I.m:select_scatter(I.src3, 1, 2) end, "torch.select_scatter(m, src3, 0, 1)" },
  { "select_scatter dim 2, index -1", function() return torch.select_scatter(I.m, I.src2, 2, -1) end,
    "torch.select_scatter(m, src2, 1, -1)" },
  { "select_scatter 3-D, non-contiguous", function() return I.t3p:select_scatter(I.src24:t():contiguous():t():t(), 3, 1) end,
    "torch.select_scatter(t3p, src24.t(), 2, 0)" },
  { "select_scatter 1-D with 0-d", function() return I.a:select_scatter(I.s, 1, 3) end, "torch.select_scatter(a, s, 0, 2)" },
  { "select_scatter empty slice", function() return I.e23:select_scatter(torch.zeros(0, { dtype = f64 }), 2, 1) end,
    "torch.select_scatter(e23, torch.zeros(0), 1, 0)" },
  { "slice_scatter step 3", function() return I.a8:slice_scatter(I.src3, 1, 2, nil, 3) end,
    "torch.slice_scatter(a8, src3, 0, start=1, step=3)" },
  { "slice_scatter negative range", function() return torch.slice_scatter(I.a8, I.src2, 1, -3, -2) end,
    "torch.slice_scatter(a8, src2, 0, start=5, end=7, step=1)" },
  { "slice_scatter whole dim", function() return I.m:slice_scatter(I.m * 2, 2) end, "torch.slice_scatter(m, m * 2, 1, step=1)" },
  { "slice_scatter dim 2, non-contiguous", function() return I.mt:slice_scatter(I.src52, 2, 2, 4, 2) end,
    "torch.slice_scatter(mt, src52, 1, start=1, end=4, step=2)" },
  { "slice_scatter end past the size", function() return I.a8:slice_scatter(I.src3, 1, 6, 20) end,
    "torch.slice_scatter(a8, src3, 0, start=5, end=20, step=1)" },
  { "slice_scatter empty slice", function() return I.a8:slice_scatter(torch.zeros(0, { dtype = f64 }), 1, 6, 3) end,
    "torch.slice_scatter(a8, torch.zeros(0), 0, start=5, end=3, step=1)" },
  { "slice_scatter default dim, start only", function() return I.m45:slice_scatter(I.m45:narrow(1, 1, 2) * 3, 1, 3) end,
    "torch.slice_scatter(m45, m45[0:2] * 3, 0, start=2, step=1)" },
})

T.test("select_scatter, slice_scatter: copies, dtype, errors", function()
  local x = torch.zeros(2, 3)
  local r = x:select_scatter(torch.tensor({ 1, 2, 3 }), 1, 1)
  T.tensor(r, { { 1, 2, 3 }, { 0, 0, 0 } }, { dtype = "float32" })
  T.tensor(x, { { 0, 0, 0 }, { 0, 0, 0 } })
  T.tensor(torch.zeros(4, { dtype = torch.int64 }):slice_scatter(torch.tensor({ 7, 8 }), 1, 1, 4, 3), { 7, 0, 0, 8 },
    { dtype = "int64" })
  T.raises(function() x:select_scatter(torch.ones(2), 1, 1) end, "select_scatter", "src", "[2]", "[3]")
  T.raises(function() x:select_scatter(torch.ones(3), 1, 3) end, "select_scatter", "index", "3", "out of range")
  T.raises(function() x:select_scatter(torch.ones(3), 3, 1) end, "select_scatter", "dim 3")
  T.raises(function() x:select_scatter(torch.ones(1), 1, 1) end, "select_scatter", "src")
  T.raises(function() torch.tensor(1.0):select_scatter(torch.tensor(2.0), 1, 1) end, "select_scatter", "0-d")
  T.raises(function() x:select_scatter(torch.ones(3), 1, 0) end, "select_scatter", "index")
  T.raises(function() x:slice_scatter(torch.ones(2, 2), 2) end, "slice_scatter", "src", "[2, 2]", "[2, 3]")
  T.raises(function() x:slice_scatter(torch.ones(2, 1), 2, 1, 3, 0) end, "slice_scatter", "step", "positive")
  T.raises(function() x:slice_scatter(torch.ones(2, 1), 2, 1, 3, -1) end, "slice_scatter", "step")
  T.raises(function() x:slice_scatter(torch.ones(2, 1), 2, 0) end, "slice_scatter", "start", "1-based")
  T.raises(function() x:slice_scatter(torch.ones(2, 1), 2, 1, 0) end, "slice_scatter", "end", "1-based")
  T.raises(function() x:slice_scatter(torch.ones(2, 1), 3) end, "slice_scatter", "dim 3")
  T.raises(function() torch.tensor(1.0):slice_scatter(torch.tensor(2.0)) end, "slice_scatter", "0-d")
end)

------------------------------------------------------------------------------
-- diff, vander
------------------------------------------------------------------------------
I.pre = rnd(2, 1)
I.app = rnd(2, 2)
I.vi = torch.tensor({ 1, 2, 3, -1 })
against_torch("diff, vander", {
  { "diff", function() return I.a8:diff() end, "torch.diff(a8)" },
  { "diff n=2", function() return torch.diff(I.a8, 2) end, "torch.diff(a8, 2)" },
  { "diff n past the size", function() return I.a:diff(5) end, "torch.diff(a, 5)" },
  { "diff n=0", function() return I.a:diff(0) end, "torch.diff(a, 0)" },
  { "diff dim 1", function() return I.m45:diff(1, 1) end, "torch.diff(m45, 1, 0)" },
  { "diff non-contiguous", function() return I.mt:diff(2, -1) end, "torch.diff(mt, 2, -1)" },
  { "diff prepend, append", function() return I.m:diff(1, 2, I.pre, I.app) end,
    "torch.diff(m, 1, 1, prepend=pre, append=app)" },
  { "diff append only, options", function() return I.m:diff(3, -1, { append = I.app }) end,
    "torch.diff(m, 3, -1, append=app)" },
  { "diff ints", function() return I.ints:diff() end, "torch.diff(ints)" },
  { "diff bools", function() return I.bools:diff() end, "torch.diff(bools)" },
  { "diff empty", function() return I.e23:diff(1, 1) end, "torch.diff(e23, 1, 0)" },
  { "vander", function() return torch.vander(I.a) end, "torch.vander(a)" },
  { "vander N=2", function() return torch.vander(I.a, 2) end, "torch.vander(a, 2)" },
  { "vander N=5 increasing", function() return torch.vander(I.b, 5, true) end, "torch.vander(b, 5, True)" },
  { "vander N=1", function() return torch.vander(I.a, 1) end, "torch.vander(a, 1)" },
  { "vander N=0", function() return torch.vander(I.a, 0) end, "torch.vander(a, 0)" },
  { "vander ints", function() return torch.vander(I.vi) end, "torch.vander(vi)" },
  { "vander non-contiguous", function() return torch.vander(I.a8s, 3, true) end, "torch.vander(a8[0::2], 3, True)" },
  { "vander empty", function() return torch.vander(I.e) end, "torch.vander(e)" },
})

T.test("diff, vander: dtypes, copies, errors", function()
  T.tensor(torch.tensor({ 1, 3, 6 }):diff(), { 2, 3 }, { dtype = "int64" })
  T.tensor(torch.tensor({ true, false, false }):diff(), { true, false }, { dtype = "bool" })
  T.tensor(torch.tensor({ 1, 2, 4 }):diff(1, 1, torch.tensor({ 1.5 })), { -0.5, 1, 2 }, { dtype = "float32" })
  local x = torch.zeros(3)
  local d = x:diff(0)
  d[1] = 5
  T.eq(x[1], 0.0)
  T.tensor(torch.vander(torch.tensor({ 2, 3 }, { dtype = torch.int32 })), { { 2, 1 }, { 3, 1 } }, { dtype = "int64" })
  T.tensor(torch.vander(torch.tensor({ true, false }), 3), { { 1, 1, 1 }, { 0, 0, 1 } }, { dtype = "int64" })
  T.tensor(torch.vander(torch.tensor({ 2.0 }), 3), { { 4, 2, 1 } }, { dtype = "float32" })
  T.raises(function() torch.tensor(1.0):diff() end, "diff", "0-d")
  T.raises(function() torch.ones(3):diff(-1) end, "diff", "'n'", "non-negative")
  T.raises(function() torch.ones(3):diff(1, 2) end, "diff", "dim 2")
  T.raises(function() torch.ones(3, 4):diff(1, 1, nil, torch.ones(4)) end, "diff", "append", "dims")
  T.raises(function() torch.ones(3, 4):diff(1, 1, torch.ones(1, 3)) end, "diff", "prepend", "[1, 3]")
  T.raises(function() torch.ones(3):diff(1, 1, 2) end, "diff", "prepend")
  T.raises(function() torch.ones(3):diff(1, 1, nil, "x") end, "diff", "append")
  T.raises(function() torch.vander(torch.ones(2, 2)) end, "vander", "'x'", "1-D")
  T.raises(function() torch.vander(torch.tensor(2.0)) end, "vander", "1-D")
  T.raises(function() torch.vander(torch.ones(2), -1) end, "vander", "'N'", "non-negative")
  T.raises(function() torch.vander(torch.ones(2), 2, 1) end, "vander", "increasing")
end)

------------------------------------------------------------------------------
-- numel
------------------------------------------------------------------------------
T.test("torch.numel", function()
  T.eq(torch.numel(torch.ones(2, 3)), 6)
  T.eq(math.type(torch.numel(torch.ones(2, 3))), "integer")
  T.eq(torch.numel(torch.tensor(1.0)), 1)
  T.eq(torch.numel(torch.zeros(3, 0)), 0)
  T.eq(torch.numel(torch.ones(4, 5):t()), 20)
  T.eq(torch.numel(torch.ones(2, 3)), torch.ones(2, 3):numel())
  T.raises(function() torch.numel(3) end, "numel", "self")
  T.raises(function() torch.numel() end, "numel", "self")
end)

T.test("every new function has help and its method where PyTorch has one", function()
  local fns = { "broadcast_to", "broadcast_tensors", "hstack", "vstack", "row_stack", "dstack", "column_stack",
    "tensor_split", "hsplit", "vsplit", "dsplit", "rot90", "fliplr", "flipud", "ravel", "repeat_interleave", "meshgrid",
    "cartesian_prod", "tril_indices", "triu_indices", "diag_embed", "diagflat", "take_along_dim", "select_scatter",
    "slice_scatter", "diff", "vander", "numel" }
  for _, f in ipairs(fns) do
    T.ok(type(torch[f]) == "function", "torch." .. f)
    local h = torch.help(f)
    T.ok(type(h) == "string" and h:find(f, 1, true) and not h:find("no help", 1, true), "help for " .. f)
  end
  local x = torch.ones(2, 2)
  for _, m in ipairs({ "broadcast_to", "tensor_split", "hsplit", "vsplit", "dsplit", "rot90", "fliplr", "flipud", "ravel",
    "repeat_interleave", "diag_embed", "diagflat", "take_along_dim", "select_scatter", "slice_scatter", "diff", "numel" }) do
    T.ok(type(x[m]) == "function", "x:" .. m)
  end
  T.ok(torch.help("hstack"):find("horizontally", 1, true))
end)

T.test("no tensor is leaked by the new ops, whether they succeed or fail", function()
  local calls = {
    function(x) return torch.broadcast_to(x, { 2, 3, 4 }) end, function(x) return torch.broadcast_to(x, { 5 }) end,
    function(x) return torch.broadcast_tensors({ x, x:sum(1) }) end, function(x) return torch.broadcast_tensors({ x, x:t() }) end,
    function(x) return torch.hstack({ x, x }) end, function(x) return torch.hstack({ x, x:sum(1) }) end,
    function(x) return torch.vstack({ x:sum(2), x:sum(2) }) end, function(x) return torch.vstack({ x, x:t() }) end,
    function(x) return torch.dstack({ x, x }) end, function(x) return torch.dstack({ x, x:t() }) end,
    function(x) return torch.column_stack({ x, x:sum(2) }) end, function(x) return torch.column_stack({ x, x:sum(1) }) end,
    function(x) return torch.hstack({ x }, { out = torch.zeros(1) }) end,
    function(x) return x:tensor_split(3, 2) end, function(x) return x:tensor_split({ 3, 2 }, 2) end,
    function(x) return x:tensor_split(torch.tensor({ 2 })) end, function(x) return x:tensor_split({ 0 }) end,
    function(x) return x:tensor_split(torch.tensor({ 1.5 })) end, function(x) return x:hsplit(2) end,
    function(x) return x:hsplit(3) end, function(x) return x:vsplit({ 2 }) end, function(x) return x:dsplit(1) end,
    function(x) return x:rot90(1) end, function(x) return x:rot90(3, { 2, 1 }) end, function(x) return x:rot90(1, { 1, 1 }) end,
    function(x) return x:fliplr() end, function(x) return x:flipud() end, function(x) return x:t():ravel() end,
    function(x) return x:repeat_interleave(2, 1) end, function(x) return x:repeat_interleave(1) end,
    function(x) return x:repeat_interleave(torch.tensor({ 1, 2, 0, 1 }), 2) end,
    function(x) return x:repeat_interleave(torch.tensor({ 1, -2, 0, 1 }), 2) end,
    function(x) return x:repeat_interleave(torch.tensor({ 1, 2 }), 2) end,
    function(x) return x:repeat_interleave(2, 1, { output_size = 3 }) end,
    function(x) return torch.repeat_interleave(torch.tensor({ 2, 1 })) end,
    function(x) return torch.meshgrid({ x:sum(1), x:sum(2) }, { indexing = "xy" }) end,
    function(x) return torch.meshgrid({ x:sum(1), x }) end,
    function(x) return torch.cartesian_prod({ x:sum(1), x:sum(2), x:sum(1) }) end,
    function(x) return torch.tril_indices(4, 5, 1, { dtype = torch.int32 }) end,
    function(x) return torch.triu_indices(4, 5, -1) end, function(x) return torch.tril_indices(3, 3, 0, { dtype = torch.float32 }) end,
    function(x) return x:diag_embed(1, 1, 3) end, function(x) return x:diag_embed(0, 1, 1) end,
    function(x) return x:diagflat(-1) end,
    function(x) return x:take_along_dim(torch.tensor({ { 1 }, { 2 }, { 3 } }), 2) end,
    function(x) return x:take_along_dim(torch.tensor({ { 9 } }), 2) end, function(x) return x:take_along_dim(torch.tensor({ 2, 12 })) end,
    function(x) return x:select_scatter(x[1] * 2, 1, 1) end, function(x) return x:select_scatter(x, 1, 1) end,
    function(x) return x:slice_scatter(x:narrow(2, 1, 2), 2, 1, 4, 2) end, function(x) return x:slice_scatter(x, 2, 2) end,
    function(x) return x:diff(2, 2, x:narrow(2, 1, 1), x) end, function(x) return x:diff(1, 1, x:sum(1)) end,
    function(x) return x:diff(1, 1) end, function(x) return torch.vander(x:sum(2), 4) end, function(x) return torch.vander(x) end,
  }
  local x = torch.randn(3, 4, { dtype = f64, requires_grad = true })
  local function all()
    for _, f in ipairs(calls) do
      local ok, r = pcall(f, x)
      if ok then
        local y = torch.is_tensor(r) and r or (r[1] or x)
        if y.requires_grad then (y * 1):sum():backward() end
      end
    end
  end
  all()   -- first: anything cached once is made now
  x.grad = nil
  collectgarbage(); collectgarbage()
  local live0 = torch._live_tensors()
  all()
  x.grad = nil
  collectgarbage(); collectgarbage()
  T.eq(torch._live_tensors(), live0, "live tensors after every call and a collection")
end)

run_against_torch()
if not P.available() then T.skip("comparisons with PyTorch", P.why()) end
T.done()
