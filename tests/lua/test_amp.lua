-- test_amp.lua — torch.amp.GradScaler: the scale's growth and backoff on a
-- scripted sequence of clean and overflowing steps (expected values worked out
-- from PyTorch's rules: back off on any inf/NaN, grow after growth_interval
-- clean steps), skipped steps, unscaled gradients, state_dict, the errors of
-- each call out of order, and a training run that a scaler does not change.
local T = require "testing"
local amp = torch.amp

local function param(values)
  return torch.tensor(values, { dtype = torch.float32, requires_grad = true })
end

T.test("torch.amp is require 'amp'", function()
  T.ok(amp == require "amp")
  T.ok(amp.GradScaler ~= nil)
end)

T.test("scale multiplies a tensor and every tensor of a nested table", function()
  local s = amp.GradScaler { init_scale = 8 }
  T.tensor(s:scale(torch.tensor({ 1.0, -2.0 })), { 8, -16 })
  local out = s:scale({ torch.tensor({ 1.0 }), { b = torch.tensor({ 3.0 }) } })
  T.tensor(out[1], { 8 }); T.tensor(out[2].b, { 24 })
  T.eq(s:get_scale(), 8.0)
end)

T.test("a scripted sequence: growth, backoff on inf and NaN, skipped steps", function()
  local w = param({ 1, 2 })
  local opt = torch.optim.SGD({ w }, { lr = 1 })
  local s = amp.GradScaler { init_scale = 4, growth_factor = 2, backoff_factor = 0.5, growth_interval = 2 }
  local function iteration(grad)
    w.grad = torch.tensor(grad, { dtype = torch.float32 })
    local r = s:step(opt)
    s:update()
    return r
  end
  -- 1: clean; the gradient 4*{1, 2} is unscaled to {1, 2} before the step
  iteration({ 4, 8 })
  T.tensor(w, { 0, 0 }); T.tensor(w.grad, { 1, 2 })
  T.eq(s:get_scale(), 4.0); T.eq(s:_get_growth_tracker(), 1)
  -- 2: clean again: growth_interval reached, the scale doubles
  iteration({ 4, 4 })
  T.tensor(w, { -1, -1 }); T.eq(s:get_scale(), 8.0); T.eq(s:_get_growth_tracker(), 0)
  -- 3: an inf: the step is skipped, the scale backs off
  iteration({ math.huge, 8 })
  T.tensor(w, { -1, -1 }); T.eq(s:get_scale(), 4.0); T.eq(s:_get_growth_tracker(), 0)
  -- 4: a NaN: skipped again
  iteration({ 0 / 0, 1 })
  T.tensor(w, { -1, -1 }); T.eq(s:get_scale(), 2.0)
  -- 5, 6: clean: steps with the gradient / 2, then growth
  iteration({ 2, 2 }); T.tensor(w, { -2, -2 }); T.eq(s:_get_growth_tracker(), 1)
  iteration({ 2, 4 }); T.tensor(w, { -3, -4 }); T.eq(s:get_scale(), 4.0)
end)

T.test("unscale_ before step: clipping sees the true gradients, step does not unscale twice", function()
  local w = param({ 0, 0 })
  local opt = torch.optim.SGD({ w }, { lr = 1 })
  local s = amp.GradScaler { init_scale = 16 }
  w.grad = torch.tensor({ 48.0, 64.0 })
  s:unscale_(opt)
  T.tensor(w.grad, { 3, 4 })
  torch.nn.utils.clip_grad_norm_({ w }, 1.0)
  s:step(opt)
  T.ok(torch.allclose(w, torch.tensor({ -0.6, -0.8 }), 1e-5, 1e-6))
  s:update()
end)

T.test("every optimizer is checked; an inf in any of them skips that one only", function()
  local a, b = param({ 1 }), param({ 1 })
  local oa, ob = torch.optim.SGD({ a }, { lr = 1 }), torch.optim.SGD({ b }, { lr = 1 })
  local s = amp.GradScaler { init_scale = 2, growth_interval = 1 }
  a.grad = torch.tensor({ 2.0 }); b.grad = torch.tensor({ math.huge })
  s:step(oa); s:step(ob); s:update()
  T.tensor(a, { 0 }); T.tensor(b, { 1 })
  T.eq(s:get_scale(), 1.0)   -- one inf backs the shared scale off
end)

T.test("a parameter without a gradient is skipped; none at all is an error", function()
  local w, v = param({ 1 }), param({ 5 })
  local opt = torch.optim.SGD({ w, v }, { lr = 1 })
  local s = amp.GradScaler { init_scale = 2 }
  w.grad = torch.tensor({ 2.0 })
  s:step(opt); s:update()
  T.tensor(w, { 0 }); T.tensor(v, { 5 })
  local opt2 = torch.optim.SGD({ param({ 1 }) }, { lr = 1 })
  T.raises(function() s:step(opt2) end, "no inf checks were recorded for this optimizer")
end)

T.test("the calls out of order are errors", function()
  local w = param({ 1 })
  local opt = torch.optim.SGD({ w }, { lr = 1 })
  local s = amp.GradScaler()
  T.raises(function() s:update() end, "no inf checks were recorded prior to update")
  w.grad = torch.tensor({ 1.0 })
  s:unscale_(opt)
  T.raises(function() s:unscale_(opt) end, "unscale_() has already been called on this optimizer")
  s:step(opt)
  T.raises(function() s:unscale_(opt) end, "unscale_() is being called after step()")
  T.raises(function() s:step(opt) end, "step() has already been called since the last update()")
  s:update()
  w.grad = torch.tensor({ 1.0 })
  T.raises(function() s:step(opt, function() return 0 end) end, "closure use is not supported")
  T.raises(function() s:step(torch.zeros(1)) end, "argument 'optimizer' must be an optimizer")
  T.raises(function() s:unscale_(42) end, "argument 'optimizer' must be an optimizer")
end)

T.test("float16 gradients are refused, as PyTorch's unscale_ does", function()
  local w = torch.zeros({ 2 }, { dtype = torch.float16, requires_grad = true })
  local opt = torch.optim.SGD({ w }, { lr = 1 })
  w.grad = torch.ones({ 2 }, { dtype = torch.float16 })
  T.raises(function() amp.GradScaler():step(opt) end, "attempting to unscale float16 gradients")
end)

T.test("bad options name the argument", function()
  T.raises(function() amp.GradScaler { init_scael = 2 } end, "init_scale")
  T.raises(function() amp.GradScaler { growth_factor = 1 } end, "'growth_factor' must be > 1.0")
  T.raises(function() amp.GradScaler { backoff_factor = 1.5 } end, "'backoff_factor' must be in (0, 1)")
  T.raises(function() amp.GradScaler { growth_interval = 0 } end, "'growth_interval' must be positive")
  T.raises(function() amp.GradScaler { growth_interval = 2.5 } end, "'growth_interval' must be an integer")
  T.raises(function() amp.GradScaler { init_scale = -1 } end, "'init_scale' must be positive")
  T.raises(function() amp.GradScaler { init_scale = "big" } end, "'init_scale' must be a number")
  T.raises(function() amp.GradScaler("tpu") end, "'device' must be \"cpu\" or \"cuda\"")
  T.raises(function() amp.GradScaler { enabled = 1 } end, "'enabled' must be a boolean")
  local s = amp.GradScaler()
  T.raises(function() s:set_growth_factor(0.5) end, "must be > 1.0")
  T.raises(function() s:update(torch.ones(2)) end, "one-element tensor")
  T.raises(function() s:scale("loss") end, "'outputs' must be a tensor")
end)

T.test("update(new_scale) sets the scale; the setters and getters", function()
  local s = amp.GradScaler()
  s:update(1024); T.eq(s:get_scale(), 1024.0)
  s:update(torch.tensor({ 0.1 })); T.near(s:get_scale(), 0.1, 1e-7)
  T.ok(s:get_scale() ~= 0.1)   -- held at float32 precision, as PyTorch's scale tensor
  s:set_growth_factor(4); s:set_backoff_factor(0.25); s:set_growth_interval(10)
  T.eq(s:get_growth_factor(), 4); T.eq(s:get_backoff_factor(), 0.25); T.eq(s:get_growth_interval(), 10)
end)

T.test("state_dict round trip, and an empty one is refused", function()
  local w = param({ 1 })
  local opt = torch.optim.SGD({ w }, { lr = 1 })
  local s = amp.GradScaler { init_scale = 32, growth_interval = 3 }
  w.grad = torch.tensor({ 1.0 }); s:step(opt); s:update()
  local sd = s:state_dict()
  T.eq(sd.scale, 32.0); T.eq(sd._growth_tracker, 1); T.eq(sd.growth_interval, 3)
  T.eq(sd.growth_factor, 2.0); T.eq(sd.backoff_factor, 0.5)
  local path = os.tmpname()
  torch.save(path, sd)
  local r = amp.GradScaler()
  r:load_state_dict(torch.load(path))
  os.remove(path)
  T.eq(r:get_scale(), 32.0); T.eq(r:_get_growth_tracker(), 1); T.eq(r:get_growth_interval(), 3)
  T.raises(function() r:load_state_dict({}) end, "state dict is empty")
  T.raises(function() r:load_state_dict({ scale = 1, sclae = 2 }) end, "unknown option 'sclae'")
  T.eq(next(amp.GradScaler { enabled = false }:state_dict()), nil)
end)

T.test("disabled: scale is the identity and step is the optimizer's", function()
  local w = param({ 1 })
  local opt = torch.optim.SGD({ w }, { lr = 1 })
  local s = amp.GradScaler { enabled = false }
  local loss = torch.tensor({ 3.0 })
  T.ok(s:scale(loss) == loss)
  w.grad = torch.tensor({ math.huge })
  s:step(opt); s:update()
  T.ok(w[1]:item() == -math.huge)   -- no check: the optimizer stepped
  T.eq(s:get_scale(), 1.0); T.eq(s:is_enabled(), false)
end)

T.test("a cuda scaler without CUDA disables itself", function()
  if torch.cuda and torch.cuda.is_available and torch.cuda.is_available() then
    return T.skip("CUDA is available")
  end
  T.eq(amp.GradScaler("cuda"):is_enabled(), false)
end)

T.test("training with a scaler gives the unscaled run's weights (power-of-two scales are exact)", function()
  local function run(use_scaler)
    torch.manual_seed(3)
    local model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    local opt = torch.optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })   -- not scale-invariant, as Adam nearly is
    local s = amp.GradScaler { init_scale = 2 ^ 10, growth_interval = 2, enabled = use_scaler }
    local x, y = torch.randn(16, 4), torch.randn(16, 1)
    for _ = 1, 6 do
      opt:zero_grad()
      local loss = torch.nn.functional.mse_loss(model(x), y)
      s:scale(loss):backward()
      s:step(opt)
      s:update()
    end
    return model:parameters(), s:get_scale()
  end
  local plain = run(false)
  local scaled, scale = run(true)
  T.eq(scale, 2 ^ 13)   -- grew three times in six clean steps
  for i = 1, #plain do T.ok(torch.allclose(scaled[i], plain[i], 1e-5, 1e-6), "parameter " .. i) end
end)

T.done()
