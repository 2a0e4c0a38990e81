-- Ops declared with a dotted Lua name (or alias) live in torch's namespace
-- tables: torch.special.logsumexp is the logsumexp op, not a method.
local T = require "testing"

T.test("a dotted alias puts the op in its namespace table", function()
  T.eq(type(torch.special), "table")
  local x = torch.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = torch.float64 })
  T.tensor(torch.special.logsumexp(x, 2), torch.logsumexp(x, 2):totable())
  T.eq(torch["special.logsumexp"], nil)
end)

T.test("a namespaced name is not a method", function()
  local x = torch.ones(2)
  T.raises(function() return x["special.logsumexp"](x, 1) end, "special.logsumexp")
end)

T.test("a namespaced op's errors name it", function()
  T.raises(function() torch.special.logsumexp("x", 1) end, "logsumexp")
end)

T.test("help finds a namespaced op", function()
  T.ok(torch.help("torch.special.logsumexp"):find("log%(sum%(exp"))
  T.ok(torch.help(torch.special.logsumexp):find("log%(sum%(exp"))
end)

T.done()
