-- custom_op.lua REPS — the call cost of custom ops on a tiny tensor (4 floats), against
-- the built-in op doing the same work: a torch.library op whose Lua kernel calls the
-- built-in mul, and relu re-declared through the C extension API (tests/ext/relu_ext.c)
-- against the built-in relu. Prints "name ns_per_call" lines (median of REPS runs).
-- Run by bench/custom_op.sh, which builds the extensions and puts them on package.cpath.
local torch = require "torch"
require "swish_ext"
require "builtin_ext"
local reps = tonumber(arg and arg[1]) or 7
local N = 200000

torch.library.define("bench::scale(Tensor x, float s) -> Tensor")
torch.library.impl("bench::scale", "cpu", function(x, s) return torch.mul(x, s) end)

local x = torch.randn(4)
local function per_call(f)
  local runs = {}
  f(); f()
  for r = 1, reps do
    local t0 = torch.time()
    for _ = 1, N do f() end
    runs[r] = (torch.time() - t0) / N * 1e9
  end
  table.sort(runs)
  return runs[(reps + 1) // 2]
end

local mul, scale = torch.mul, torch.ops.bench.scale
local relu, crelu = torch.relu, torch.ops.builtin_ext.relu
local swish, sigmoid = torch.ops.swish_ext.swish, torch.sigmoid
local figs = {
  { "builtin_mul", function() return mul(x, 2.0) end },
  { "lua_op_scale", function() return scale(x, 2.0) end },
  { "builtin_relu", function() return relu(x) end },
  { "c_ext_relu", function() return crelu(x) end },
  { "unfused_swish", function() return x * sigmoid(x) end },
  { "c_ext_swish", function() return swish(x) end },
}
for _, f in ipairs(figs) do print(("%s %.1f"):format(f[1], per_call(f[2]))) end
