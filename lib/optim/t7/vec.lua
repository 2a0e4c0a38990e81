-- Small helpers of optim/t7 between tensors and Lua lists of numbers, alike in both modes.
local torch = require "torch"

local M = {}

-- the elements of tensor t as a flat Lua list
function M.list(t) return t:reshape(-1):totable() end

-- a new tensor shaped and typed as `like`, holding the numbers of the flat Lua list v
function M.tensor(v, like)
  local t = torch.zeros_like(like)
  local flat = t:view(-1)
  if #v ~= flat:numel() then error(("optim: %d values for a tensor of %d elements"):format(#v, flat:numel()), 2) end
  for i = 1, #v do flat[i] = v[i] end
  return t
end

-- a number from a number or a one-element tensor
function M.num(v)
  if torch.is_tensor(v) then return v:item() end
  return v
end

-- a private generator of uniform doubles in [0, 1) (xorshift64*): DE draws from its own
-- seeded stream, as Torch7's did, and leaves the global generator alone
function M.generator(seed)
  local s = seed ~= 0 and seed or 0x9E3779B97F4A7C15
  local g = {}
  function g.uniform(a, b)
    s = s ~ (s >> 12); s = s ~ (s << 25); s = s ~ (s >> 27)
    local r = ((s * 0x2545F4914F6CDD1D) >> 11) * 2.0 ^ -53
    if a then return a + (b - a) * r end
    return r
  end
  -- an integer in a..b
  function g.random(a, b) return a + math.floor(g.uniform() * (b - a + 1)) end
  return g
end

return M
