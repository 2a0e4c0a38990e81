-- test_compile_cuda.lua — torch.compile on CUDA tensors (lib/compile/cuda.lua, src/cuda/rtc.c):
-- fused pointwise runs become CUDA kernels compiled by NVRTC; under the fake driver the same
-- source's host build runs them. Results against eager (the ops one by one on the device):
-- float64 to 1e-12, float32 to 1e-5 relative; broadcast, transposed and sliced inputs;
-- several outputs; graphs that mix devices (never the CPU's kernel for a CUDA tensor); the
-- NVRTC compile of each generated source (SKIP where libnvrtc is not found); the disk cache;
-- the fall back to eager ops, with a warning, where a kernel cannot be had; autograd; errors.
-- Runs unchanged on a real GPU (tools/gpu_check.sh), where the NVRTC build is launched.
local T = require "testing"
local c = torch.cuda

if not c.is_available() then
  T.skip("compile cuda", "torch.cuda is not available: " .. tostring(c.unavailable_reason()))
  T.done()
  return
end

local C = require "compile"
local cg = require "compile.cuda"
local S = T.scratch()
C.cache_dir_override = S.dir .. "/cache"
local host = c._rtc_host_memory()
local nvrtc_version, nvrtc_why = c._rtc_nvrtc()
local TOL = { [torch.float64] = 1e-12, [torch.float32] = 1e-5 }

local function rel_err(a, b)
  a, b = a:cpu():double(), b:cpu():double()
  if b:numel() == 0 then return a:numel() == 0 and 0 or math.huge end
  local nan = torch.isnan(b)
  T.ok(torch.equal(torch.isnan(a), nan), "NaNs in the same places")
  local d = (a - b):abs():masked_fill(nan, 0):max():item()
  return d / math.max(b:abs():masked_fill(nan, 0):max():item(), 1e-30)
end

-- f compiled and eager on args: the same results, on the same device; where kernels is given,
-- the graph has that many fused kernels and the call ran no CPU kernel (the fake's fallback)
local function same(what, fn, args, kernels)
  local f = torch.compile(fn)
  local want = table.pack(fn(table.unpack(args, 1, args.n or #args)))
  f(table.unpack(args, 1, args.n or #args))        -- the first call traces and compiles
  c._kernel_counts(true)
  local got = table.pack(f(table.unpack(args, 1, args.n or #args)))
  local k = c._kernel_counts(true)
  T.eq(got.n, want.n, what .. ": results")
  for i = 1, want.n do
    T.eq(tostring(got[i].device), tostring(want[i].device), what .. ": device")
    T.eq(got[i].dtype, want[i].dtype, what .. ": dtype")
    T.eq(tostring(got[i].shape), tostring(want[i].shape), what .. ": shape")
    local e = rel_err(got[i], want[i])
    T.ok(e <= TOL[want[i].dtype], ("%s: result %d differs from eager by %g"):format(what, i, e))
  end
  if kernels then
    T.eq(f:graphs()[1].kernels, kernels, what .. ": fused kernels")
    T.ok(k.host + k.device >= kernels, what .. ": launches")
    T.eq(k.cpu, 0, what .. ": CPU kernels run for cuda tensors")
  end
  return f
end

local function randn(shape, dt) return torch.randn(shape, { dtype = dt }):cuda() end

T.test("the issue's example: a chain on a cuda tensor runs one fused kernel", function()
  local x = torch.randn(1000):cuda()
  local f = torch.compile(function(a) return a * torch.sigmoid(a) + 1 end)
  local r = f(x)
  T.eq(tostring(r.device), "cuda:0")
  T.ok(rel_err(r, x * torch.sigmoid(x) + 1) < 1e-6)
  local g = f:graphs()
  T.eq(#g, 1)
  T.eq(g[1].kernels, 1)
end)

T.test("pointwise chains match eager in float32 and float64", function()
  local fns = {
    { "silu chain", function(x, y, z) return x * torch.sigmoid(x) * y + z end },
    { "gelu tanh exp", function(x, y) return torch.tanh(torch.gelu(x) - torch.exp(y * 0.5)) end },
    { "max min pow div", function(x, y) return torch.maximum(x, y) / (torch.minimum(x, y):abs() + 1) + x:abs() ^ 1.5 end },
    { "alpha, neg, relu", function(x, y) return torch.relu(torch.add(x, y, { alpha = 2.5 })) - torch.sub(torch.neg(y), x, { alpha = 0.5 }) end },
    { "log sqrt erf", function(x) return torch.log(x:abs() + 1) + torch.sqrt(x * x + 2) * torch.erf(x) end },
  }
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    for _, p in ipairs(fns) do
      same(p[1] .. " " .. dt.name, p[2], { randn({ 37, 29 }, dt), randn({ 37, 29 }, dt), randn({ 37, 29 }, dt) }, 1)
    end
  end
end)

T.test("float64: the same arithmetic gives eager's values exactly", function()
  local fn = function(x, y) return (x * y + x) / (y - 3) end
  local f = torch.compile(fn)
  local a, b = randn({ 1000 }, torch.float64), randn({ 1000 }, torch.float64)
  T.ok(torch.equal(f(a, b):cpu(), fn(a, b):cpu()))
end)

T.test("broadcast inputs: a row, a column and a scalar tensor", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local fn = function(x, r, col, s) return torch.tanh(x * r + col) * s end
    same("broadcast " .. dt.name, fn, { randn({ 6, 7, 9 }, dt), randn({ 9 }, dt), randn({ 7, 1 }, dt), randn({}, dt) }, 1)
  end
end)

T.test("non-contiguous inputs: transposed, sliced, expanded", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local a = randn({ 40, 30 }, dt)
    local b = randn({ 60, 40 }, dt)
    local fn = function(x, y, z) return torch.sigmoid(x) * y - z end
    same("transposed and sliced " .. dt.name, fn, { a:t(), b:narrow(1, 11, 30):narrow(2, 1, 40), randn({ 40 }, dt):expand(30, 40) }, 1)
    -- a strided view with a step
    local big = randn({ 30, 81 }, dt)
    same("every other column " .. dt.name, function(x) return x * x + 1 end, { big:narrow(2, 2, 80):view(30, 40, 2):select(3, 1) }, 1)
  end
end)

T.test("several outputs, and an intermediate used after the run", function()
  local fn = function(x, y)
    local h = x * y
    local u = torch.exp(h) + 1
    return u, h, torch.matmul(h, u:t())
  end
  same("outputs", fn, { randn({ 16, 8 }, torch.float64), randn({ 16, 8 }, torch.float64) })
end)

T.test("empty and odd sizes: 0, 1 and more elements than one launch's threads", function()
  for _, n in ipairs({ 0, 1, 255, 257 }) do
    same("size " .. n, function(x) return x * 2 + 1 end, { randn({ n }, torch.float32) }, n > 0 and 1 or nil)
  end
  -- more elements than LT_RTC_MAX_BLOCKS * 256 threads: the grid-stride loop goes round
  same("grid-stride", function(x) return torch.sigmoid(x) * 3 end, { randn({ 65536 * 256 + 1000 }, torch.float32) }, 1)
end)

T.test("graphs that mix devices: each run on its own device, none on the wrong one", function()
  local fn = function(a, b) return a * 2 + torch.sigmoid(a), b * 3 - torch.tanh(b) end
  local ca, hb = randn({ 100 }, torch.float32), torch.randn(100)
  local f = same("a cuda and a cpu argument", fn, { ca, hb })
  local r1, r2 = f(ca, hb)
  T.eq(tostring(r1.device), "cuda:0")
  T.eq(r2.device.type, "cpu")
  -- a value moved between devices inside the function: its ops run eagerly there
  local g = function(a, b) return (a * 2 + 1):cpu() * b + 1 end
  same("moved to the cpu", g, { ca, hb })
  if c.device_count() > 1 then
    local d1 = torch.randn(100):to("cuda:1")
    local h = function(a, b) return torch.sigmoid(a) * 2, torch.sigmoid(b) * 2 end
    local f2 = same("two devices", h, { ca, d1 }, 2)
    local x, y = f2(ca, d1)
    T.eq(tostring(x.device), "cuda:0")
    T.eq(tostring(y.device), "cuda:1")
  end
end)

T.test("layer_norm, softmax and sum beside a run: fused on cuda too", function()
  -- row and reduction kernels, as on the CPU (test_compile_cuda_rows.lua checks them fully)
  local nn = require "nn"
  local F = nn.functional
  local w, b = randn({ 16 }, torch.float32), randn({ 16 }, torch.float32)
  local mask = randn({ 16 }, torch.float32)
  local fns = {
    { "layer_norm -> run", function(x) return torch.gelu(F.layer_norm(x, { 16 }, w, b)) * 2 + x end },
    { "run -> softmax", function(x) return torch.softmax(x * 0.25 + mask, -1) end },
    { "run -> sum", function(x) return (torch.sigmoid(x) * x + 1):sum(-1) end },
  }
  for _, p in ipairs(fns) do
    local f = same(p[1], p[2], { randn({ 8, 16 }, torch.float32) })
    T.ok(f:graphs()[1].kernels >= 1, p[1] .. ": the run is a kernel")
    local x = randn({ 8, 16 }, torch.float64):requires_grad_()
    T.ok(torch.autograd.gradcheck(torch.compile(p[2]), { x }), p[1] .. ": gradcheck")
  end
end)

T.test("autograd: the fused run's backward kernel on cuda, against eager and gradcheck", function()
  local fn = function(x, y, z) return torch.tanh(x * torch.sigmoid(y) + x * x) - torch.gelu(z) * y end
  local f = torch.compile(fn)
  local function args(dt, rg)
    return { torch.randn(6, 5, { dtype = dt }):cuda():requires_grad_(rg[1]),
             torch.randn(1, 5, { dtype = dt }):cuda():requires_grad_(rg[2]),      -- broadcast
             torch.randn(5, 6, { dtype = dt }):cuda():t():requires_grad_(rg[3]) }  -- transposed
  end
  for _, dt in ipairs({ torch.float64, torch.float32 }) do
    for _, rg in ipairs({ { true, true, true }, { true, false, true }, { false, true, false } }) do
      local a = args(dt, rg)
      local r = f(a[1], a[2], a[3])
      T.eq(r.grad_fn and r.grad_fn:name(), "CompiledPointwiseBackward", "the run is one autograd Function")
      local w = torch.randn(6, 5, { dtype = dt }):cuda()
      r:backward(w)
      local got = {}
      for i = 1, 3 do got[i] = a[i].grad; a[i].grad = nil end
      fn(a[1], a[2], a[3]):backward(w)
      for i = 1, 3 do
        if rg[i] then
          T.eq(tostring(got[i].device), "cuda:0")
          T.eq(tostring(got[i].shape), tostring(a[i].shape), "gradient shape")
          T.ok(rel_err(got[i], a[i].grad) < TOL[dt], ("gradient %d, %s"):format(i, dt.name))
        else
          T.ok(got[i] == nil, "no gradient where none is asked for")
        end
      end
    end
  end
  local a = args(torch.float64, { true, true, true })
  T.ok(torch.autograd.gradcheck(f, a), "gradcheck through the compiled CUDA run")
end)

T.test("float16 and bfloat16: computed in float, rounded once at the store", function()
  -- eager rounds after every op; the kernel after the last, so it equals the float32 result
  -- rounded (to a unit in the last place) and eager's within a few units
  local ULP = { [torch.float16] = 1e-3, [torch.bfloat16] = 8e-3 }
  local fn = function(x, y) return torch.tanh(x * torch.sigmoid(y) + x * 0.5) - y end
  for _, dt in ipairs({ torch.float16, torch.bfloat16 }) do
    local f = torch.compile(fn)
    local a, b = randn({ 40, 33 }, dt), randn({ 33 }, dt)
    local r = f(a, b)
    T.eq(r.dtype, dt)
    T.eq(f:graphs()[1].kernels, 1, dt.name .. ": one fused kernel")
    local ref = fn(a:float(), b:float()):to(dt)
    T.ok(rel_err(r, ref) <= ULP[dt], dt.name .. ": the float32 result rounded")
    T.ok(rel_err(r, fn(a, b)) <= 4 * ULP[dt], dt.name .. ": eager's within a few units")
    -- the transposed input and the backward kernel
    local at = randn({ 33, 40 }, dt):t():requires_grad_()
    local bg = b:clone():requires_grad_()
    local out = f(at, bg)
    T.eq(out.grad_fn and out.grad_fn:name(), "CompiledPointwiseBackward")
    out:sum():backward()
    local g1, g2 = at.grad:float(), bg.grad:float()
    T.eq(at.grad.dtype, dt)
    at.grad, bg.grad = nil, nil
    local af, bf = at:detach():float():requires_grad_(), bg:detach():float():requires_grad_()
    fn(af, bf):sum():backward()
    T.ok(rel_err(g1, af.grad) <= 4 * ULP[dt] and rel_err(g2, bf.grad) <= 4 * ULP[dt], dt.name .. ": gradients")
  end
end)

T.test("the disk cache: a new process (reset) loads the kernels it compiled", function()
  local fn = function(x) return torch.cos(x) * 0.25 + x end
  local x = randn({ 333 }, torch.float32)
  torch.compiler.reset()
  torch.compile(fn)(x)
  local k0 = { nv = cg.counters.nvrtc_compiled, host = cg.counters.host_compiled }
  T.ok(k0.nv + k0.host >= 1, "compiled the first time")
  torch.compiler.reset()
  local r = torch.compile(fn)(x)
  T.eq(cg.counters.nvrtc_compiled + cg.counters.host_compiled, 0, "nothing compiled the second time")
  if nvrtc_version then T.eq(cg.counters.nvrtc_cache_hits, 1, "the NVRTC image from the cache") end
  if host then T.eq(cg.counters.host_cache_hits, 1, "the host build from the cache") end
  T.ok(rel_err(r, fn(x)) < 1e-6)
  -- a corrupt entry is rebuilt
  torch.compiler.reset()
  for f in io.popen("ls " .. C.cache_dir_override):lines() do
    -- replaced, not written over: the process still maps the shared objects it loaded
    if f:match("%.so$") or f:match("%.cubin$") then os.rename(S.write("garbage", "garbage"), S.path("cache/" .. f)) end
  end
  r = torch.compile(fn)(x)
  T.eq(cg.counters.nvrtc_cache_hits + cg.counters.host_cache_hits, 0, "corrupt entries not used")
  T.ok(rel_err(r, fn(x)) < 1e-6)
end)

-- every generated source compiles with NVRTC for sm_90 and to PTX naming the kernel
T.test("NVRTC compiles the generated sources", function()
  if not nvrtc_version then
    T.skip("NVRTC compiles the generated sources", "libnvrtc not found: " .. tostring(nvrtc_why))
    return
  end
  local seen = 0
  local fn = function(x, y) return torch.gelu(x, { approximate = "tanh" }) * torch.log1p(y:abs()) - torch.atan(x) + torch.floor(y) end
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16, torch.bfloat16 }) do
    local trace = require "compile.trace"
    local fuse = require "compile.fuse"
    local graph = trace.trace(fn, table.pack(randn({ 8, 4 }, dt), randn({ 4 }, dt)))
    for _, s in ipairs(fuse.plan(graph)) do
      if s.kind == "group" then
        local src = cg.source(s.group, graph.value_meta)
        local ptx, log = c._rtc_compile(src, "compute_90", { "-std=c++17" })
        T.ok(ptx and ptx:find(".entry lt_kernel", 1, true), "PTX of " .. dt.name .. ": " .. tostring(log))
        local cubin = c._rtc_compile(src, "sm_90", { "-std=c++17" })
        T.ok(cubin and cubin:sub(1, 4) == "\127ELF", "a cubin")
        T.ok(c._rtc_load(cubin, "lt_kernel", 0) ~= nil, "the image loads")
        local need = {}
        for k = 1, #s.group.inputs do need[k] = k % 2 == 1 end
        local bsrc = cg.backward_source(s.group, graph.value_meta, need)
        local bptx, blog = c._rtc_compile(bsrc, "compute_90", { "-std=c++17" })
        T.ok(bptx and bptx:find(".entry lt_kernel", 1, true), "backward PTX of " .. dt.name .. ": " .. tostring(blog))
        seen = seen + 1
      end
    end
  end
  T.ok(seen >= 4, "a group per dtype at least")
end)

T.test("a kernel that cannot be had: a warning, the ops run eagerly on the device", function()
  local fn = function(x) return torch.sin(x) * 3 - x end
  local x = randn({ 50 }, torch.float64)
  local function check_fallback(what)
    torch.compiler.reset()
    local f = torch.compile(fn)
    c._kernel_counts(true)
    local r = f(x)
    T.eq(cg.counters.fallbacks, 1, what .. ": fell back")
    T.eq(tostring(r.device), "cuda:0")
    T.ok(torch.equal(r:cpu(), fn(x):cpu()), what .. ": eager's values")
    T.eq(f:graphs()[1].kernels, 0, what .. ": no kernel")
  end
  local saved_dir = C.cache_dir_override
  C.cache_dir_override = S.dir .. "/cache-fallback"
  if nvrtc_version then
    cg.config.nvrtc_options = { "--no-such-option" }
    check_fallback("NVRTC fails")
    cg.config.nvrtc_options = {}
  end
  if host then
    local cxx = cg.config.cxx
    cg.config.cxx = "false"
    check_fallback("the host compiler fails")
    cg.config.cxx = cxx
  end
  C.cache_dir_override = saved_dir
  torch.compiler.reset()
end)

T.test("without NVRTC (LUTORCH_NVRTC=none): the fake runs the host build; a real driver falls back", function()
  local prog = arg and arg[-1]
  if not host or not prog then T.skip("LUTORCH_NVRTC=none", "needs the fake driver and the program's path"); return end
  local script = S.write("none.lua", [[
    local C = require "compile"
    C.cache_dir_override = ]] .. ("%q"):format(S.dir .. "/cache-none") .. [[
    local cg = require "compile.cuda"
    local x = torch.randn(64):cuda()
    local r = torch.compile(function(a) return a * 2 + 1 end)(x)
    local v, why = torch.cuda._rtc_nvrtc()
    print(v, why, cg.counters.host_compiled, cg.counters.fallbacks,
          torch.equal(r:cpu(), (x * 2 + 1):cpu()))
  ]])
  local p = io.popen(("LUTORCH_NVRTC=none LUTORCH_CUDA_DRIVER=fake LUA_PATH=%q %q %q 2>&1"):format(
    package.path, prog, script))
  local out = p:read("a")
  p:close()
  T.ok(out:find("nil\tNVRTC turned off (LUTORCH_NVRTC=none)\t1\t0\ttrue", 1, true), out)
end)

T.test("the rtc functions check their arguments", function()
  T.raises(function() c._rtc_compile("x", "gfx90a") end, "_rtc_compile", "arch")
  local x = randn({ 4 }, torch.float32)
  if host then
    T.raises(function() c._rtc_host_run(nil, 4, { x }, { 4 }) end, "_rtc_host_run", "kernel")
  end
  T.raises(function() c._rtc_launch({}, 4, { x }, { 4 }) end, "_rtc_launch", "kernel")
  if nvrtc_version then
    local src = cg.source({ inputs = { 1 }, outputs = { 2 }, nodes = { { op = "neg", kind = "unary", a = { ref = 1 }, out = 2 } },
                           shape = { 4 }, dtype = torch.float32 },
                         { [1] = { shape = { 4 }, stride = { 1 }, dtype = torch.float32 } })
    local k = c._rtc_load(assert(c._rtc_compile(src, "sm_90")), "lt_kernel", 0)
    T.raises(function() c._rtc_launch(k, 4, { x, x }, { 4, 5 }) end, "tensor 2", "reaches 5 elements")
    T.raises(function() c._rtc_launch(k, 4, { x, torch.zeros(4) }, { 4, 4 }) end, "tensor 2 is not on a cuda device")
    local missing, why = c._rtc_load(assert(c._rtc_compile(src, "sm_90")), "no_such_kernel", 0)
    T.ok(missing == nil and why:find("cuModuleGetFunction", 1, true), why)
  end
end)

S.remove()
T.done()
