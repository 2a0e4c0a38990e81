-- nn_rnn.lua — LSTM against bench/nn_rnn.py (run both with bench/nn.sh rnn): one LSTM step
-- (batch 64, 256 -> 512) forward, and a whole sequence (32 steps) forward and
-- forward+backward. Prints "key microseconds".
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path   -- nn from the source tree
local nn = require "nn"
local T = require("timing").new()   -- reps from arg[1]; os.clock: pinned to one thread, CPU time

torch.manual_seed(0)
local function bench(key, n, fn) T:bench(key, n, fn) end

local B, I, H, L = 64, 256, 512, 32
local cell = nn.LSTMCell(I, H)
local xs = torch.randn(B, I)
local h, c = torch.randn(B, H), torch.randn(B, H)
bench("lstm_step_fwd", 100, function(n)
  torch.no_grad(function() for _ = 1, n do local h1, c1 = cell(xs, { h, c }) end end)
end)
bench("lstm_step_fwd_grad", 100, function(n)
  for _ = 1, n do local h1, c1 = cell(xs, { h, c }) end
end)

local lstm = nn.LSTM(I, H)
local x = torch.randn(L, B, I, { requires_grad = true })
local go = torch.randn(L, B, H)
bench("lstm_seq32_fwd", 5, function(n)
  torch.no_grad(function() for _ = 1, n do local y = lstm(x) end end)
end)
bench("lstm_seq32_fwd_bwd", 3, function(n)
  for _ = 1, n do
    lstm:zero_grad(); x.grad = nil
    local y = lstm(x)
    y:backward(go)
  end
end)

T:report()
