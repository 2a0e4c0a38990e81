-- gpu_compile_check.lua — tools/gpu_check.sh's "compile" stage: torch.compile's fused CUDA
-- kernels (lib/compile/cuda.lua) on the device, against the same functions run eagerly there:
-- forward in float32 and float64 (contiguous, broadcast, transposed inputs), the backward
-- kernel's gradients, the row and reduction kernels (layer_norm -> run, run -> softmax /
-- log_softmax, run -> sum / mean) forward and backward, an in-place chain and an argument
-- changed in place (functionalized), and the time of a fused chain and of the row kernels
-- against their eager ops at 16M elements.
-- Prints "compile: ..." lines and ends with "N passed, N failed" (the stage reads it).
--   lutorch tools/gpu_compile_check.lua [elements for the timing, default 16777216]
local c = torch.cuda
local passed, failed = 0, 0
local function check(ok, what)
  if ok then passed = passed + 1 else failed = failed + 1; print("FAIL " .. what) end
end
if not c.is_available() then
  print("compile: skipped: " .. tostring(c.unavailable_reason()))
  print("0 passed, 0 failed")
  return
end
local C = require "compile"
local cg = require "compile.cuda"
local v, path, inc = c._rtc_nvrtc()
local major, minor = c.get_device_capability()
print(("compile: driver %s, device %s, sm_%d%d, NVRTC %s (%s)%s"):format(
  c._rtc_host_memory() and "fake (host builds run)" or "real", c.get_device_name and c.get_device_name() or "?",
  major, minor, v or "none", v and path or tostring(path), inc and (", headers " .. inc) or ""))

local function rel(a, b)
  a, b = a:cpu():double(), b:cpu():double()
  return (a - b):abs():max():item() / math.max(b:abs():max():item(), 1e-30)
end
local TOL = { [torch.float64] = 1e-11, [torch.float32] = 1e-5 }

local fns = {
  { "silu chain", function(x, y, z) return x * torch.sigmoid(x) * y + z end },
  { "gelu tanh exp", function(x, y, z) return torch.tanh(torch.gelu(x) - torch.exp(y * 0.5)) * z end },
  { "max div pow", function(x, y, z) return torch.maximum(x, y) / (z:abs() + 1) + x:abs() ^ 1.5 end },
  -- in-place ops made functional (compile/functional.lua) fuse like the others
  { "in-place chain", function(x, y, z) local h = x * 2; h:add_(y); h:mul_(z); h:tanh_(); return h end },
}
for _, dt in ipairs({ torch.float32, torch.float64 }) do
  for _, p in ipairs(fns) do
    local name, fn = p[1], p[2]
    local f = torch.compile(fn)
    local x = torch.randn(300, 257, { dtype = dt }):cuda()
    local row = torch.randn(257, { dtype = dt }):cuda()
    local tr = torch.randn(257, 300, { dtype = dt }):cuda():t()
    local r = f(x, row, tr)
    c._kernel_counts(true)
    r = f(x, row, tr)
    local k = c._kernel_counts(true)
    local e = rel(r, fn(x, row, tr))
    check(e <= TOL[dt], ("%s %s: differs from eager by %g"):format(name, dt.name, e))
    check(f:graphs()[1].kernels >= 1 and k.cpu == 0, name .. ": fused, no CPU kernel")
    print(("compile: %-14s %-8s rel. error %.2e, %d launches (device %d, host %d)"):format(
      name, dt.name, e, k.device + k.host, k.device, k.host))
    -- the backward kernel
    local a = x:clone():requires_grad_()
    local b = row:clone():requires_grad_()
    f(a, b, tr):sum():backward()
    local ga, gb = a.grad, b.grad
    a.grad, b.grad = nil, nil
    fn(a, b, tr):sum():backward()
    local ge = math.max(rel(ga, a.grad), rel(gb, b.grad))
    check(ge <= TOL[dt] * 10, ("%s %s backward: differs from eager by %g"):format(name, dt.name, ge))
  end
end
-- an argument changed in place: fused, its new values written into it, its version as eager's
for _, dt in ipairs({ torch.float32, torch.float64 }) do
  local fn = function(x, y) x:mul_(y); x:add_(1); x:tanh_(); return x * 2 end
  local f = torch.compile(fn)
  local y = torch.randn(300, 257, { dtype = dt }):cuda()
  local x1 = torch.randn(300, 257, { dtype = dt }):cuda()
  local x2 = x1:clone()
  local v1, v2 = x1._version, x2._version
  local e = rel(f(x1, y), fn(x2, y))
  check(e <= TOL[dt] and rel(x1, x2) <= TOL[dt], ("in-place argument %s: differs from eager by %g"):format(dt.name, e))
  check(x1._version - v1 == x2._version - v2, "in-place argument: version as eager's")
  check(f:graphs()[1].kernels == 1, "in-place argument: one kernel")
  print(("compile: in-place arg  %-8s rel. error %.2e"):format(dt.name, e))
end
-- the row and reduction kernels (a warp per row at 96, a block at 1000), forward and backward
local F = require("nn").functional
for _, dt in ipairs({ torch.float32, torch.float64 }) do
  for _, D in ipairs({ 96, 1000 }) do
    local w, b, mask = torch.randn(D, { dtype = dt }):cuda(), torch.randn(D, { dtype = dt }):cuda(), torch.randn(D, { dtype = dt }):cuda()
    local rows = {
      { "layer_norm->run", function(x) return torch.gelu(F.layer_norm(x, { D }, w, b)) + x end, { w, b } },
      { "run->softmax", function(x) return torch.softmax(x * 0.125 + mask, -1) end, { mask } },
      { "run->log_softmax", function(x) return torch.log_softmax(torch.tanh(x) * 4, -1) end, {} },
      { "run->sum(-1)", function(x) return (torch.sigmoid(x) * x - mask):sum(-1) end, { mask } },
      { "run->mean()", function(x) return (x * x + mask):mean() end, { mask } },
    }
    for _, p in ipairs(rows) do
      local name, fn, params = p[1], p[2], p[3]
      local f = torch.compile(fn)
      local x = torch.randn(300, D, { dtype = dt }):cuda()
      f(x)
      c._kernel_counts(true)
      local r = f(x)
      local k = c._kernel_counts(true)
      local e = rel(r, fn(x))
      local g = f:graphs()[1]
      check(e <= TOL[dt], ("%s %s D=%d: differs from eager by %g"):format(name, dt.name, D, e))
      check(g.steps == 1 and k.cpu == 0, ("%s D=%d: one row kernel (%d steps), no CPU kernel"):format(name, D, g.steps))
      -- backward: the input's gradient and the closed-over tensors'
      local xg = x:clone():requires_grad_()
      for _, t in ipairs(params) do t:requires_grad_() end
      local wy = torch.randn(r.shape, { dtype = dt }):cuda()
      local y = f(xg)
      local gname = y.grad_fn and y.grad_fn:name() or "none"
      y:backward(wy)
      local got = { xg.grad }
      for i, t in ipairs(params) do got[i + 1] = t.grad; t.grad = nil end
      xg.grad = nil
      fn(xg):backward(wy)
      local ge = rel(got[1], xg.grad)
      for i, t in ipairs(params) do ge = math.max(ge, rel(got[i + 1], t.grad)); t.grad = nil; t:requires_grad_(false) end
      check(gname:find("^Compiled") ~= nil, name .. ": one compiled autograd node, got " .. gname)
      check(ge <= TOL[dt] * 10, ("%s %s D=%d backward: differs from eager by %g"):format(name, dt.name, D, ge))
      print(("compile: %-16s %-8s D=%-4d rel. error %.2e, gradients %.2e (%s)"):format(name, dt.name, D, e, ge, gname))
    end
  end
end

print(("compile: NVRTC compiles %d, cache hits %d; host builds %d; fallbacks %d"):format(cg.counters.nvrtc_compiled,
  cg.counters.nvrtc_cache_hits, cg.counters.host_compiled, cg.counters.fallbacks))
check(cg.counters.fallbacks == 0, "no fallback to eager")

-- time: the silu chain fused against its four eager ops
local n = tonumber(arg and arg[1]) or 16777216
local fn = fns[1][2]
local f = torch.compile(fn)
local x, y, z = torch.randn(n):cuda(), torch.randn(n):cuda(), torch.randn(n):cuda()
local function time(g)
  g(x, y, z); c.synchronize()
  local t0, reps = torch.time(), 0
  repeat g(x, y, z); reps = reps + 1 until reps >= 20 and torch.time() - t0 > 0.2
  c.synchronize()
  return (torch.time() - t0) / reps * 1e3
end
local te, tc = time(fn), time(f)
print(("compile: silu chain over %d float32: eager %.3f ms, compiled %.3f ms (%.2fx)%s"):format(n, te, tc, te / tc,
  c._rtc_host_memory() and " (FAKE: host memory, not a GPU)" or ""))
-- the row kernels' time against their eager ops: rows of 4096 float32 (n elements in all)
local D = 4096
local R = math.max(1, n // D)
local xr, mask, w, b = torch.randn(R, D):cuda(), torch.randn(D):cuda(), torch.randn(D):cuda(), torch.randn(D):cuda()
for _, p in ipairs({
  { "run->softmax", function(a) return torch.softmax(a * 0.125 + mask, -1) end },
  { "layer_norm->run", function(a) return torch.gelu(F.layer_norm(a, { D }, w, b)) + a end },
  { "run->sum(-1)", function(a) return (torch.sigmoid(a) * a):sum(-1) end },
}) do
  local g = torch.compile(p[2])
  local function time1(h)
    h(xr); c.synchronize()
    local t0, reps = torch.time(), 0
    repeat h(xr); reps = reps + 1 until reps >= 20 and torch.time() - t0 > 0.2
    c.synchronize()
    return (torch.time() - t0) / reps * 1e3
  end
  local e1, c1 = time1(p[2]), time1(g)
  print(("compile: %s over %dx%d float32: eager %.3f ms, compiled %.3f ms (%.2fx)%s"):format(p[1], R, D, e1, c1,
    e1 / c1, c._rtc_host_memory() and " (FAKE: host memory, not a GPU)" or ""))
end
print(("%d passed, %d failed"):format(passed, failed))
