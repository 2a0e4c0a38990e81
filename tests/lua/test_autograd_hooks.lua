-- Post-accumulate-grad hooks and end-of-backward callbacks (what DDP builds on).
local T = require "testing"

T.test("post accumulate grad hook sees the accumulated grad", function()
  local w = torch.tensor({1.0, 2.0, 3.0}, {requires_grad = true})
  local seen = {}
  w:register_post_accumulate_grad_hook(function(p)
    T.ok(rawequal(p, p))
    seen[#seen + 1] = p.grad:sum():item()
  end);
  (w * 2):sum():backward();
  (w * 3):sum():backward()
  T.eq(seen, {6.0, 15.0})          -- second call sees 2 + 3 per element accumulated
end)

T.test("hooks run in reverse order of use, callbacks after all of them", function()
  local a = torch.randn(2, {requires_grad = true})
  local b = torch.randn(2, {requires_grad = true})
  local ev = {}
  a:register_post_accumulate_grad_hook(function() ev[#ev + 1] = "a" end)
  b:register_post_accumulate_grad_hook(function()
    ev[#ev + 1] = "b"
    torch.autograd.queue_callback(function()
      ev[#ev + 1] = "end"
      torch.autograd.queue_callback(function() ev[#ev + 1] = "end2" end)
    end)
  end)
  local h = (a * 2):sum()
  local y = (h * b):sum()
  y:backward()
  T.eq(ev, {"b", "a", "end", "end2"})
end)

T.test("two hooks on one leaf run in registration order", function()
  local a = torch.randn(2, {requires_grad = true})
  local ev = {}
  a:register_post_accumulate_grad_hook(function() ev[#ev + 1] = 1 end)
  a:register_post_accumulate_grad_hook(function() ev[#ev + 1] = 2 end)
  a:sum():backward()
  T.eq(ev, {1, 2})
end)

T.test("errors", function()
  local a = torch.randn(2, {requires_grad = true})
  T.raises(function() (a * 2):register_post_accumulate_grad_hook(function() end) end, "leaf")
  T.raises(function() torch.randn(2):register_post_accumulate_grad_hook(function() end) end, "leaf")
  T.raises(function() a:register_post_accumulate_grad_hook(5) end)
  T.raises(function() torch.autograd.queue_callback(function() end) end, "no backward is running")
  a:register_post_accumulate_grad_hook(function() error("boom") end)
  T.raises(function() a:sum():backward() end, "boom")
  local b = torch.randn(2, {requires_grad = true})
  b:register_post_accumulate_grad_hook(function() torch.autograd.queue_callback(function() error("late") end) end)
  T.raises(function() b:sum():backward() end, "late")
  -- a failed backward drops its callbacks: the next one runs clean
  local c = torch.randn(2, {requires_grad = true})
  local n = 0
  c:register_post_accumulate_grad_hook(function() torch.autograd.queue_callback(function() n = n + 1 end) end)
  c:sum():backward()
  T.eq(n, 1)
end)

T.test("autograd.grad does not accumulate, so no post hooks", function()
  local a = torch.randn(2, {requires_grad = true})
  local n = 0
  a:register_post_accumulate_grad_hook(function() n = n + 1 end)
  torch.autograd.grad({a:sum()}, {a})
  T.eq(n, 0)
end)

T.test("a leaf's gradient is accumulated as soon as it is ready, in every backward", function()
  -- the leaf's AccumulateGrad is made in the first forward and kept; in later backwards it must
  -- still run before nodes made after it (DDP and FSDP start communication from its hook)
  local w = torch.randn(3, {requires_grad = true})
  local b = torch.randn(3, {requires_grad = true})
  local log
  w:register_post_accumulate_grad_hook(function() log[#log + 1] = "w" end)
  for it = 1, 3 do
    log = {}
    local c1 = b * 2
    c1:register_hook(function() log[#log + 1] = "chain" end)
    local c = c1
    for _ = 1, 5 do c = (c * 1.5):tanh() end
    local loss = c:sum() + (b * w):sum()          -- w's branch is made last: its backward runs first
    loss:backward()
    T.eq(log[1], "w", "iteration " .. it .. ": " .. table.concat(log, ","))
  end
end)

T.done()
