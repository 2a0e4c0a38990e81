-- autograd_bench.lua — autograd overheads on the lutorch side (see autograd.sh).
--   lutorch bench/autograd_bench.lua REPS
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new{ warmup = 10, fmt = "%.4f" }   -- reps from arg[1]; os.clock: one thread, CPU time

local a, b = torch.tensor({ 1.0 }), torch.tensor({ 2.0 })
local ag, bg = torch.tensor({ 1.0 }, { requires_grad = true }), torch.tensor({ 2.0 }, { requires_grad = true })
T:bench("add_plain", 200000, function(n) for _ = 1, n do local c = a + b end end)
T:bench("add_grad", 200000, function(n) for _ = 1, n do local c = ag + bg end end)
T:bench("add_backward", 50000, function(n) for _ = 1, n do local c = ag + bg; c:backward() end end)
T:bench("add_inference", 200000, function(n)
  torch.inference_mode(function() for _ = 1, n do local c = a + b end end)
end)
local x = torch.randn(16, { requires_grad = true })
T:bench("chain1000", 20, function(n)
  for _ = 1, n do
    local y = x
    for _ = 1, 250 do y = ((y * 1.0001):sin() + 0.5):tanh() end
    y:sum():backward()
  end
end)
T:report()
