-- test_optim.lua — the foreach and fused optimizer ops on CUDA tensors (src/cuda/optim.c over
-- the multi-tensor kernels of src/cuda/kernels/optim.cu): every torch.optim optimizer, with
-- its options, steps a model on cuda and on the CPU from the same start, and the parameters
-- agree after a few steps; the CUDA kernel ran (torch.cuda._kernel_counts: host launches under
-- the fake driver, device launches on a GPU) and the CPU fallback did not. Runs unchanged on a
-- real GPU (tools/gpu_check.sh).
local T = require "testing"
local c = torch.cuda
local optim = require "optim"

if not c.is_available() then
  T.skip("cuda optim", "torch.cuda is not available: " .. tostring(c.unavailable_reason()))
  T.done()
  return
end

local function launches(n) return n.host + n.device end

-- what we compare: shapes of a small model's parameters (a matrix, a bias, a 0-d, an empty
-- one, a big one past a launch's tensors), a non-contiguous one, a float64 one
local SHAPES = { { 7, 5 }, { 5 }, {}, { 0, 3 }, { 1025 }, { 3, 4 } }

local function params_pair(dtype, seed)
  torch.manual_seed(seed)
  local cpu, dev = {}, {}
  for i, s in ipairs(SHAPES) do
    local p = #s == 0 and torch.randn({}) or torch.randn(s)
    p = p:to(dtype)
    cpu[i] = p:clone():requires_grad_()
    dev[i] = p:cuda():requires_grad_()
  end
  -- a transposed (non-contiguous) parameter on both sides
  local base = torch.randn({ 4, 6 }):to(dtype)
  cpu[#cpu + 1] = base:t():clone():t():detach():requires_grad_()
  local db = base:cuda()
  dev[#dev + 1] = db:t():contiguous():t():detach():requires_grad_()
  return cpu, dev
end

-- gradients: the same numbers on both sides, new each step
local function set_grads(cpu, dev, k)
  torch.manual_seed(100 + k)
  for i, p in ipairs(cpu) do
    local g = torch.randn(p:size()):to(p.dtype)
    p.grad = g
    dev[i].grad = g:cuda()
  end
end

local function maxdiff(a, b)
  if a:numel() == 0 then return 0 end
  return ((a:cpu():double() - b:double()):abs() / (b:double():abs() + 1)):max():item()
end

local TOL = { [torch.float32] = 2e-5, [torch.float64] = 1e-12 }

local CASES = {
  { "SGD", { lr = 0.1 } },
  { "SGD", { lr = 0.1, momentum = 0.9 } },
  { "SGD", { lr = 0.1, momentum = 0.9, nesterov = true, weight_decay = 0.01 } },
  { "SGD", { lr = 0.1, momentum = 0.5, dampening = 0.3, maximize = true } },
  { "Adam", { lr = 0.01 } },
  { "Adam", { lr = 0.01, amsgrad = true, weight_decay = 0.1 } },
  { "Adam", { lr = 0.01, maximize = true } },
  { "Adam", { lr = 0.01, fused = true } },                 -- PyTorch's switches: every step here is fused
  { "SGD", { lr = 0.1, momentum = 0.9, foreach = true } },
  { "AdamW", { lr = 0.01 } },
  { "AdamW", { lr = 0.01, amsgrad = true, weight_decay = 0.05 } },
  { "Adamax", { lr = 0.01, weight_decay = 0.01 } },
  { "NAdam", { lr = 0.01 } },
  { "NAdam", { lr = 0.01, weight_decay = 0.1, decoupled_weight_decay = true } },
  { "RAdam", { lr = 0.01 } },
  { "RAdam", { lr = 0.01, weight_decay = 0.1, decoupled_weight_decay = true } },
  { "RMSprop", { lr = 0.01 } },
  { "RMSprop", { lr = 0.01, momentum = 0.9, centered = true, weight_decay = 0.01 } },
  { "RMSprop", { lr = 0.01, centered = true } },
  { "Adagrad", { lr = 0.1, lr_decay = 0.01 } },
  { "Adadelta", { lr = 1.0, weight_decay = 0.01, maximize = true } },
}

local function opts_str(o)
  local k = {}
  for n, v in pairs(o) do k[#k + 1] = n .. "=" .. tostring(v) end
  table.sort(k)
  return table.concat(k, ",")
end

-- RAdam's rectification switches on after 5 steps: step 8 times so both branches run
local STEPS = 8

for _, dtype in ipairs({ torch.float32, torch.float64 }) do
  for ci, case in ipairs(CASES) do
    local name, o = case[1], case[2]
    T.test(("%s(%s) %s on cuda = cpu"):format(name, opts_str(o), dtype.name), function()
      local cpu, dev = params_pair(dtype, ci)
      local oc, od = optim[name](cpu, o), optim[name](dev, o)
      c._kernel_counts(true)
      local n = { host = 0, device = 0, cpu = 0 }
      for k = 1, STEPS do
        set_grads(cpu, dev, k)
        oc:step()
        c._kernel_counts(true)
        od:step()
        local m = c._kernel_counts(true)
        n.host, n.device, n.cpu = n.host + m.host, n.device + m.device, n.cpu + m.cpu
      end
      for i = 1, #cpu do
        T.eq(tostring(dev[i].device):sub(1, 4), "cuda", "param " .. i .. " device")
        local d = maxdiff(dev[i]:detach(), cpu[i]:detach())
        T.ok(d <= TOL[dtype], ("param %d differs by %g"):format(i, d))
      end
      T.ok(launches(n) >= STEPS, "the CUDA optim kernel ran (" .. launches(n) .. " launches)")
      T.eq(n.cpu, 0, "no CPU fallback")
      -- the state (step counts) stayed on the device and counted the steps
      local st = od.state[dev[1]]
      if st and st.step then
        T.eq(tostring(st.step.device):sub(1, 4), "cuda", "step on the device")
        T.eq(st.step:item(), STEPS, "step count")
      end
    end)
  end
end

T.test("a float32 and a float64 parameter in one optimizer (two batches)", function()
  torch.manual_seed(3)
  local a, b = torch.randn({ 9 }), torch.randn({ 2, 2 }):double()
  local cpu = { a:clone():requires_grad_(), b:clone():requires_grad_() }
  local dev = { a:cuda():requires_grad_(), b:cuda():requires_grad_() }
  local oc, od = optim.Adam(cpu, { lr = 0.05 }), optim.Adam(dev, { lr = 0.05 })
  for k = 1, 3 do set_grads(cpu, dev, k); oc:step(); od:step() end
  for i = 1, 2 do T.ok(maxdiff(dev[i]:detach(), cpu[i]:detach()) <= 2e-5, "param " .. i) end
end)

T.test("more parameters than one launch takes (LT_CK_MT_MAX = 32)", function()
  torch.manual_seed(4)
  local cpu, dev = {}, {}
  for i = 1, 70 do
    local p = torch.randn({ i % 5 + 1, 3 })
    cpu[i] = p:clone():requires_grad_(); dev[i] = p:cuda():requires_grad_()
  end
  local oc, od = optim.NAdam(cpu, { lr = 0.05 }), optim.NAdam(dev, { lr = 0.05 })
  c._kernel_counts(true)
  for k = 1, 2 do set_grads(cpu, dev, k); oc:step(); od:step() end
  local n = c._kernel_counts(true)
  local worst = 0
  for i = 1, #cpu do worst = math.max(worst, maxdiff(dev[i]:detach(), cpu[i]:detach())) end
  T.ok(worst <= 2e-5, "max diff " .. worst)
  -- per step: 3 batches (32 + 32 + 6 tensors), each one kernel call (the update and its step bump)
  T.ok(launches(n) >= 6, "launches " .. launches(n))
  T.eq(n.cpu, 0, "no fallback")
end)

-- ---- foreach primitives ----

local function pair_list(dtype)
  torch.manual_seed(9)
  local cpu, dev = {}, {}
  for i, s in ipairs({ { 31 }, { 1025 }, {}, { 0 }, { 3, 5 } }) do
    local t = (#s == 0 and torch.randn({}) or torch.randn(s)):to(dtype)
    cpu[i] = t; dev[i] = t:cuda()
  end
  local base = torch.randn({ 5, 3 }):to(dtype)
  cpu[#cpu + 1] = base:t(); dev[#dev + 1] = base:cuda():t()   -- non-contiguous: written back
  return cpu, dev
end

for _, dtype in ipairs({ torch.float32, torch.float64 }) do
  T.test("_foreach_mul_ / _foreach_add_ / _foreach_zero_ " .. dtype.name, function()
    local cpu, dev = pair_list(dtype)
    local oc, od = pair_list(dtype)
    c._kernel_counts(true)
    torch._foreach_mul_(dev, 0.5); torch._foreach_mul_(cpu, 0.5)
    torch._foreach_add_(dev, od, { alpha = -2 }); torch._foreach_add_(cpu, oc, { alpha = -2 })
    local n = c._kernel_counts(true)
    for i = 1, #cpu do T.ok(maxdiff(dev[i], cpu[i]) <= TOL[dtype], "tensor " .. i) end
    T.ok(launches(n) >= 2, "kernels ran"); T.eq(n.cpu, 0, "no fallback")
    torch._foreach_zero_(dev)
    for i = 1, #cpu do T.eq(dev[i]:cpu():abs():sum():item(), 0, "zeroed " .. i) end
  end)

  for _, ord in ipairs({ 2, 1, 0, 3, 0.5, math.huge, -math.huge }) do
    T.test(("_foreach_norm ord %s %s"):format(tostring(ord), dtype.name), function()
      local cpu, dev = pair_list(dtype)
      cpu[#cpu + 1] = torch.randn({ 2 ^ 20 + 3 }):to(dtype); dev[#dev + 1] = cpu[#cpu]:cuda()
      local want = torch._foreach_norm(cpu, ord)
      c._kernel_counts(true)
      local got = torch._foreach_norm(dev, ord)
      local n = c._kernel_counts(true)
      T.eq(tostring(got.device):sub(1, 4), "cuda", "result on the device")
      T.eq(got.dtype, want.dtype, "dtype")
      local a, b = got:cpu():double(), want:double()
      local same_inf = torch.equal(a:isinf(), b:isinf())
      T.ok(same_inf, "infinities agree: " .. tostring(a) .. " vs " .. tostring(b))
      local d = ((a - b):abs() / (b:abs() + 1)):masked_fill(a:eq(b), 0):max():item()
      T.ok(d <= (dtype == torch.float32 and 1e-5 or 1e-12), "differs by " .. d)
      T.ok(launches(n) >= 1, "kernel ran"); T.eq(n.cpu, 0, "no fallback")
    end)
  end
end

T.test("_foreach_norm: mixed float32 and float64 give float64; NaN propagates for inf", function()
  local a, b = torch.tensor({ 3.0, 4.0 }):float(), torch.tensor({ 1.0, 0 / 0 }):double()
  local got = torch._foreach_norm({ a:cuda(), b:cuda() }, 2)
  T.eq(got.dtype, torch.float64)
  local h = got:cpu()
  T.near(h[1], 5, 1e-12)
  T.ok(h[2] ~= h[2], "NaN")
  local inf = torch._foreach_norm({ b:cuda() }, math.huge):cpu()[1]
  T.ok(inf ~= inf, "inf norm of a NaN is NaN")
end)

T.test("clip_grad_norm_ on cuda = cpu", function()
  local nn = require "nn"
  torch.manual_seed(5)
  local m = nn.Linear(6, 4)
  local md = nn.Linear(6, 4)
  md:load_state_dict(m:state_dict())
  md = md:cuda()
  local x = torch.randn({ 8, 6 })
  m(x):pow(2):sum():backward()
  md(x:cuda()):pow(2):sum():backward()
  local tc = nn.utils.clip_grad_norm_(m:parameters(), 0.1)
  local td = nn.utils.clip_grad_norm_(md:parameters(), 0.1)
  T.near(td:item(), tc:item(), 1e-4)
  for i, p in ipairs(m:parameters()) do
    T.ok(maxdiff(md:parameters()[i].grad, p.grad) <= 1e-5, "grad " .. i)
  end
end)

-- ---- bad input: the CPU's messages ----

local function err(f)
  local ok, e = pcall(f)
  T.ok(not ok, "expected an error")
  return tostring(e):match("(_[%w_]+: .*)$") or tostring(e)
end

T.test("bad lists give the CPU's errors", function()
  local a, b = torch.randn({ 3 }), torch.randn({ 4 })
  local ad, bd = a:cuda(), b:cuda()
  T.eq(err(function() torch._foreach_add_({ ad }, { bd }) end), err(function() torch._foreach_add_({ a }, { b }) end))
  T.eq(err(function() torch._foreach_add_({ ad, ad }, { ad }) end),
       err(function() torch._foreach_add_({ a, a }, { a }) end))
  local ai, aid = torch.ones({ 2 }, { dtype = torch.int32 }), torch.ones({ 2 }, { dtype = torch.int32 }):cuda()
  T.eq(err(function() torch._foreach_mul_({ aid }, 2) end), err(function() torch._foreach_mul_({ ai }, 2) end))
  T.eq(err(function() torch._foreach_norm({ aid }) end), err(function() torch._foreach_norm({ ai }) end))
  T.raises(function() torch._foreach_add_({ ad }, { a }) end, "device")
  T.eq(err(function()
    torch._fused_adam_({ ad }, { ad }, { ad }, { ad }, {}, {}, { lr = 0.1, beta1 = 0.9, beta2 = 0.99, eps = 1e-8 })
  end), err(function()
    torch._fused_adam_({ a }, { a }, { a }, { a }, {}, {}, { lr = 0.1, beta1 = 0.9, beta2 = 0.99, eps = 1e-8 })
  end))
end)

T.test("a float32 step count has no kernel: the CPU's under the fake, else an error", function()
  local p = torch.randn({ 4 }):cuda()
  local step = torch.zeros({}, { device = p.device })    -- float32, not the float64 lib/optim keeps
  local function go()
    torch._fused_adam_({ p }, { p:clone() }, { torch.zeros_like(p) }, { torch.zeros_like(p) }, {}, { step },
      { lr = 0.1, beta1 = 0.9, beta2 = 0.99, eps = 1e-8 })
  end
  if os.getenv("LUTORCH_CUDA_DRIVER") == "fake" then
    c._kernel_counts(true)
    go()
    T.ok(c._kernel_counts(true).cpu >= 1, "fell back")
    T.eq(step:item(), 1)
  else
    T.raises(go, "state_steps")
  end
  -- a step count on the CPU: the dispatcher's device check
  T.raises(function()
    torch._fused_adam_({ p }, { p:clone() }, { torch.zeros_like(p) }, { torch.zeros_like(p) }, {}, { torch.zeros({}) },
      { lr = 0.1, beta1 = 0.9, beta2 = 0.99, eps = 1e-8 })
  end, "same device")
end)

T.done()
