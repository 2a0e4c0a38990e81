-- test_complex_sweep.lua — every op (torch._ops()) called with complex
-- inputs in a few argument patterns: each call must work or raise a clean
-- error (a Lua error with a message), never crash or read out of bounds (run
-- it under `make asan` for the latter). Complex values must also never reach
-- an op that was not written for them: the refusals must name the op.
local T = require "testing"
local C = torch.complex_number

local function inputs()
  local x = torch.tensor({{C(1, 2), C(-0.5, 3)}, {C(0, -1), C(2, 0)}})
  return x, x:to(torch.cdouble), torch.ones(2, 2)
end

local function callable(name)
  local f = torch
  for part in name:gmatch("[^.]+") do f = type(f) == "table" and f[part] or nil end
  if type(f) == "function" then return f end
  local x = inputs()
  local ok, m = pcall(function() return x[name] end)
  if ok and type(m) == "function" then return m end
  return nil
end

T.test("every op takes complex inputs or refuses them cleanly", function()
  local calls, refused, unnamed = 0, 0, {}
  for _, op in ipairs(torch._ops()) do
    local name = op.name
    local f = callable(name)
    if f and not name:find("^_") then
      local x, xd, r = inputs()
      local patterns = {
        function() return f(x) end,
        function() return f(x, x) end,
        function() return f(x, r) end,
        function() return f(r, x) end,
        function() return f(xd, 1) end,
        function() return f(x, 1, 1) end,
        function() return f({x, x}) end,
        function() return f(2, {dtype = torch.cfloat}) end,
      }
      for _, call in ipairs(patterns) do
        calls = calls + 1
        local ok, err = pcall(call)
        if not ok then
          refused = refused + 1
          T.eq(type(err), "string")
          if err:find("complex") and not err:find(name, 1, true) and #unnamed < 20 then
            unnamed[#unnamed + 1] = name .. ": " .. err
          end
        end
      end
    end
  end
  T.ok(calls > 1000, "swept " .. calls .. " calls")
  T.ok(refused > 0)
  -- a complex refusal not naming the op called names the op it went through ("type_as" says "to: ...")
  for _, u in ipairs(unnamed) do T.ok(u:find("[%w_]+: [^:]*complex"), u) end
end)

T.test("in-place and out= forms keep complex out of real kernels", function()
  local x = torch.tensor({C(1, 2), C(3, 4)})
  T.raises(function() return torch.zeros(2):add_(x) end, "")
  T.raises(function() return x:clamp_(0, 1) end, "no ordering")
  T.raises(function() return torch.exp(torch.ones(2), {out = x}) end, "")
  local o = torch.zeros(2, {dtype = torch.cfloat})
  torch.add(x, x, {out = o})
  T.eq(o[2], C(6, 8))
end)

T.done()
