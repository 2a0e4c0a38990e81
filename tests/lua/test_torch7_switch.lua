-- The Torch7 mode switch seen from PyTorch mode (the default): nothing of Torch7
-- mode shows, and once a tensor exists the switch is refused, naming why.
-- Torch7 mode itself: tests/lua/torch7/test_torch7_mode.lua (tests/sh/test_torch7_mode.sh).
local T = require "testing"

T.test("PyTorch mode is the default and unchanged", function()
  T.eq(torch.compat(), "pytorch")
  T.eq(torch.compat("pytorch"), "pytorch")
  local x, y = torch.tensor({ 1.0, 2.0 }), torch.tensor({ 10.0, 20.0 })
  local r = x:add(y)
  T.tensor(x, { 1, 2 }); T.tensor(r, { 11, 22 }); T.ok(not rawequal(r, x))
  T.ok(torch.is_tensor(x:sum())); T.eq(x:sum():dim(), 0)
  T.tensor(torch.tensor({ { 1.0, 2.0 }, { 3.0, 4.0 } }):sum(1), { 4, 6 })
  T.raises(function() return x == y end, "==")
  T.raises(function() torch.add(torch.empty(2), x, y) end, "too many arguments")
  T.eq(torch.get_default_dtype().name, "float32")
  T.eq(x:gt(1).dtype.name, "bool")
  T.tensor(x * y, { 10, 40 })
  T.eq(rawget(torch, "class"), nil)
  T.eq(rawget(torch, "Tester"), nil)
end)

T.test("switching after the first tensor is an error that says why", function()
  local _ = torch.zeros(1)
  T.raises(function() torch.compat("torch7") end, "compat", "before any tensor")
  T.raises(function() torch.compat("tf") end, "compat: argument 'mode'")
  T.eq(torch.compat(), "pytorch")
end)

T.done()
