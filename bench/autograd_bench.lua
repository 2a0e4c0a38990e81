-- autograd_bench.lua — autograd overheads on the lutorch side (see autograd.sh).
--   lutorch bench/autograd_bench.lua REPS
local reps = tonumber(arg[1]) or 5
local clock = os.clock   -- one thread: CPU time is wall time here

local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local function time(n, fn)
  fn(math.max(1, n // 10))                 -- warm up
  local ts = {}
  for _ = 1, reps do
    local t0 = clock()
    fn(n)
    ts[#ts + 1] = (clock() - t0) / n
  end
  return median(ts)
end

local a, b = torch.tensor({ 1.0 }), torch.tensor({ 2.0 })
local ag, bg = torch.tensor({ 1.0 }, { requires_grad = true }), torch.tensor({ 2.0 }, { requires_grad = true })
local r = {}
r.add_plain = time(200000, function(n) for _ = 1, n do local c = a + b end end)
r.add_grad = time(200000, function(n) for _ = 1, n do local c = ag + bg end end)
r.add_backward = time(50000, function(n) for _ = 1, n do local c = ag + bg; c:backward() end end)
r.add_inference = time(200000, function(n)
  torch.inference_mode(function() for _ = 1, n do local c = a + b end end)
end)
local x = torch.randn(16, { requires_grad = true })
r.chain1000 = time(20, function(n)
  for _ = 1, n do
    local y = x
    for _ = 1, 250 do y = ((y * 1.0001):sin() + 0.5):tanh() end
    y:sum():backward()
  end
end)
for _, k in ipairs({ "add_plain", "add_grad", "add_backward", "add_inference", "chain1000" }) do
  print(("%s %.4f"):format(k, r[k] * 1e6))
end
