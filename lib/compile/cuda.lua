-- compile/cuda.lua — torch.compile's fused pointwise kernels for CUDA tensors.
--
-- A pointwise group (compile/fuse.lua's plan) whose inputs are all on one CUDA device becomes
-- a CUDA C kernel: a grid-stride loop over the output's elements whose body is the one the C
-- generator writes for the CPU (fuse.emit_forward_body: each input loaded through its
-- strides, every node's value in a register, the group's outputs stored). The source is
-- compiled at run time by NVRTC (torch.cuda._rtc_*, src/cuda/rtc.c) into a cubin for the
-- device's compute capability, cached on disk beside the CPU kernels (keyed by the source,
-- the NVRTC version, the architecture and the options), loaded with cuModuleLoadData and
-- launched on the device's current stream.
--
-- Under the fake driver (LUTORCH_CUDA_DRIVER=fake) the device is host memory and launches are
-- not supported: the same source is also built by the host C++ compiler, as the kernels of
-- src/cuda/kernels are in their host build (ck_host.h), into a cached shared object that runs
-- the same grid thread by thread over the fake device's memory. The NVRTC image is still
-- made and loaded there (where libnvrtc is found), so the fake checks both builds.
--
-- Where the kernel cannot be had (no NVRTC under a real driver, a compile that fails) the
-- group's ops run eagerly on the device, with a warning. A group whose inputs are on
-- different devices, or whose devices the trace cannot tell, also runs its ops eagerly: it
-- never reaches the CPU's kernels.
local torch = require "torch"
local fuse = require "compile.fuse"

local M = {}
M.config = { cxx = os.getenv("CXX") or "c++", nvrtc_options = {} }
M.counters = { nvrtc_compiled = 0, nvrtc_cache_hits = 0, host_compiled = 0, host_cache_hits = 0, fallbacks = 0 }

-- ---- devices of a graph's values ----

-- ops that put their result on another device than their arguments'
local MOVES = { to = true, cuda = true, cpu = true, type = true, copy_ = true, to_device = true,
                new_tensor = true, new_empty = true, new_zeros = true, new_ones = true, new_full = true }

--- value_devices(graph): value -> "cpu", "cuda:N", or false where the trace cannot tell (a
--- result of an op over values of different or unknown devices, or of an op that moves data)
function M.value_devices(graph)
  local vm, dev = graph.value_meta, {}
  local function known(m) if m.device and m.device.type ~= "meta" then return tostring(m.device) end end
  for _, inp in ipairs(graph.inputs) do dev[inp.value] = known(vm[inp.value]) or false end
  for _, node in ipairs(graph.nodes) do
    local d, ok = nil, not MOVES[node.name]
    local function scan(tpl)
      if tpl.ref then
        local x = dev[tpl.ref]
        if not x then ok = false elseif d == nil then d = x elseif d ~= x then ok = false end
      elseif tpl.tbl then
        for _, t in pairs(tpl.tbl) do scan(t) end
      elseif type(tpl.const) == "table" and tpl.const.device ~= nil then
        ok = false
      end
    end
    for k = 1, node.nargs do scan(node.args[k]) end
    local function set(tpl)
      if tpl.ref then
        if not tpl.alias then dev[tpl.ref] = known(vm[tpl.ref]) or (ok and d) or false end
      elseif tpl.tbl then
        for _, t in pairs(tpl.tbl) do set(t) end
      end
    end
    for k = 1, node.nres do set(node.outs[k]) end
  end
  return dev
end

--- common_device(devs, values): the device of every value in the list, or false when they
--- differ or one is unknown
function M.common_device(devs, values)
  local d
  for _, v in ipairs(values) do
    local x = devs[v]
    if not x or (d and d ~= x) then return false end
    d = x
  end
  return d or false
end

--- split(group, devs): the group as one group per device, in the order of their first nodes
--- (the plan groups consecutive pointwise ops of one shape and dtype whatever their devices;
--- no value flows between devices inside a group, since only ops that move data do that);
--- each {device = "cpu" | "cuda:N" | false, group =}
function M.split(g, devs)
  local by, order = {}, {}
  for _, pw in ipairs(g.nodes) do
    local d = devs[pw.out] or false
    local key = tostring(d)
    if not by[key] then
      by[key] = { device = d, group = { nodes = {}, shape = g.shape, dtype = g.dtype, first = pw.index } }
      order[#order + 1] = by[key]
    end
    local sg = by[key].group
    sg.nodes[#sg.nodes + 1] = pw
    sg.last = pw.index
  end
  for _, part in ipairs(order) do
    local sg, made, seen = part.group, {}, {}
    sg.inputs, sg.outputs = {}, {}
    for _, pw in ipairs(sg.nodes) do
      for _, a in ipairs({ pw.a, pw.b }) do
        if a and a.ref and not made[a.ref] and not seen[a.ref] then
          seen[a.ref] = true
          sg.inputs[#sg.inputs + 1] = a.ref
        end
      end
      made[pw.out] = true
    end
    for _, v in ipairs(g.outputs) do if made[v] then sg.outputs[#sg.outputs + 1] = v end end
  end
  return order
end

-- ---- the source ----

-- what every kernel starts with: ck_math.h (the 16-bit floats, the build's namespace), and
-- the helpers the C generator's expressions call, as __host__ __device__ functions
local PRELUDE = [[
#include "cuda/kernels/ck_math.h"
using namespace CK_NS;
#if defined(__CUDACC_RTC__)
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#endif
/* not static: NVRTC warns of a static function never referenced */
#define LT_FN __host__ __device__ __forceinline__
LT_FN float lt_exp_float(float x) { return expf(x); }
LT_FN float lt_sigmoid_float(float x) { return 1.0f / (1.0f + expf(-x)); }
LT_FN double lt_sigmoid_double(double x) { return 1.0 / (1.0 + exp(-x)); }
LT_FN float lt_relu_float(float x) { return x > 0.0f || x != x ? x : 0.0f; }
LT_FN double lt_relu_double(double x) { return x > 0.0 || x != x ? x : 0.0; }
LT_FN float lt_gelu_float(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
LT_FN double lt_gelu_double(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }
LT_FN float lt_gelu_tanh_float(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}
LT_FN double lt_gelu_tanh_double(double x) {
  return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}
LT_FN float lt_max_float(float a, float b) { return (a != a || a > b) ? a : b; }
LT_FN double lt_max_double(double a, double b) { return (a != a || a > b) ? a : b; }
LT_FN float lt_min_float(float a, float b) { return (a != a || a < b) ? a : b; }
LT_FN double lt_min_double(double a, double b) { return (a != a || a < b) ? a : b; }
/* float16 and bfloat16 tensors: read as float and written rounded (ck_math.h), so the
   generator's body, written for float, indexes them as it does float pointers */
template<class S> struct lt_in { const S *p; LT_FN float operator[](int64_t i) const { return ck_load(p[i]); } };
template<class S> struct lt_ref { S *q; LT_FN void operator=(float v) const { *q = ck_store<S>(v); } };
template<class S> struct lt_out { S *p; LT_FN lt_ref<S> operator[](int64_t i) const { return lt_ref<S>{p + i}; } };
]]

-- the kernel around a loop body: params, a list of param()s; body, the lines of element i
local function frame(params, body)
  local decls, raws, casts, names = {}, {}, {}, {}
  for k, p in ipairs(params) do
    decls[k], raws[k] = p.decl, p.raw
    casts[k] = p.wrap(("(%s)p[%d]"):format(p.type, k - 1))
    names[k] = p.wrap(p.name)
  end
  local lines = { PRELUDE,
    "LT_FN void lt_body(int64_t tid, int64_t nthreads, int64_t n, " .. table.concat(decls, ", ") .. ") {",
    "  for (int64_t i = tid; i < n; i += nthreads) {" }
  for _, l in ipairs(body) do lines[#lines + 1] = l end
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  lines[#lines + 1] = "#if defined(__CUDACC__)"
  lines[#lines + 1] = "extern \"C\" __global__ void __launch_bounds__(256) lt_kernel(int64_t n, " ..
                      table.concat(raws, ", ") .. ") {"
  lines[#lines + 1] = "  lt_body((int64_t)blockIdx.x * blockDim.x + threadIdx.x, (int64_t)gridDim.x * blockDim.x, n, " ..
                      table.concat(names, ", ") .. ");"
  lines[#lines + 1] = "}"
  lines[#lines + 1] = "#else"
  lines[#lines + 1] = "/* the host build: every thread of the launch's grid in turn */"
  lines[#lines + 1] = "extern \"C\" void lt_kernel_host(int64_t nthreads, int64_t n, void *const *p) {"
  lines[#lines + 1] = "  for (int64_t t = 0; t < nthreads; t++) lt_body(t, nthreads, n, " .. table.concat(casts, ", ") .. ");"
  lines[#lines + 1] = "}"
  lines[#lines + 1] = "#endif"
  return table.concat(lines, "\n") .. "\n"
end

-- the storage type of a dtype in the kernels (compute types are fuse.ctype's; the 16-bit
-- floats compute in float)
local STORAGE = { [torch.float32] = "float", [torch.float64] = "double" }
local SIXTEEN = { [torch.float16] = "ck_half", [torch.bfloat16] = "ck_bf16" }

-- a kernel parameter: decl (in the body's function), raw (in the entry), type (the pointer's,
-- for the host build's cast), wrap(expr): the body's argument made of the pointer expr
local function param(dtype, name, const)
  local S = STORAGE[dtype] or SIXTEEN[dtype]
  local ty = (const and "const " or "") .. S .. " *"
  local raw = ty .. "__restrict__ " .. name
  if STORAGE[dtype] then return { decl = raw, raw = raw, type = ty, name = name, wrap = function(e) return e end } end
  local acc = (const and "lt_in<" or "lt_out<") .. S .. ">"
  return { decl = acc .. " " .. name, raw = raw, type = ty, name = name,
           wrap = function(e) return acc .. "{" .. e .. "}" end }
end

-- the type the generator computes a group's values in
local function compute_type(dtype) return fuse.ctype(dtype) or (SIXTEEN[dtype] and "float") end

--- source(group, value_meta): CUDA C source of the group's forward kernel, and the elements
--- each of its tensors (inputs, then outputs) must reach
function M.source(g, vm)
  local T = compute_type(g.dtype)
  local params, extents, body = {}, {}, {}
  for k, v in ipairs(g.inputs) do
    params[#params + 1] = param(g.dtype, "in" .. k, true)
    extents[#extents + 1] = fuse.extent(vm[v])
  end
  for k = 1, #g.outputs do
    params[#params + 1] = param(g.dtype, "out" .. k, false)
    extents[#extents + 1] = fuse.numel(g.shape)
  end
  fuse.emit_forward_body(body, g, vm, T)
  for k, v in ipairs(g.outputs) do body[#body + 1] = ("    out%d[i] = v%d;"):format(k, v) end
  return frame(params, body), extents
end

--- backward_source(group, value_meta, need): CUDA C source of the group's backward kernel
--- (compile/fuse.lua's rules, in this file's frame) and the elements each tensor must reach
function M.backward_source(g, vm, need)
  return fuse.backward_source(g, vm, "lt_kernel", need, function(ps, body)
    local params = {}
    for k, p in ipairs(ps) do params[k] = param(g.dtype, p.name, p.const) end
    return frame(params, body)
  end)
end

-- ---- building: NVRTC, the host compiler, the disk cache ----

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local headers_text     -- the embedded headers, concatenated (part of every key)
local function headers()
  if not headers_text then
    local h, names = torch.cuda._rtc_headers(), {}
    for name in pairs(h) do names[#names + 1] = name end
    table.sort(names)
    local parts = {}
    for _, name in ipairs(names) do parts[#parts + 1] = name .. "\0" .. h[name] end
    headers_text = table.concat(parts, "\0")
    M.header_files = h
  end
  return headers_text
end

local nvrtc_info   -- {version =, path =, include =} or {why =}
local function nvrtc()
  if not nvrtc_info then
    local v, path, inc = torch.cuda._rtc_nvrtc()
    nvrtc_info = v and { version = v, path = path, include = inc } or { why = path }
  end
  return nvrtc_info
end

local function arch_of(dev)
  local major, minor = torch.cuda.get_device_capability(dev)
  return ("sm_%d%d"):format(major, minor)
end

local function nvrtc_options()
  local o = { "-std=c++17", "--fmad=false" }
  for _, x in ipairs(M.config.nvrtc_options) do o[#o + 1] = x end
  return o
end

-- a cached file's bytes, when its checksum matches
local function cached(C, path)
  local bytes = C.read_all(path)
  if bytes and C.read_all(path .. ".sum") == C.hash(bytes) then return bytes end
  if bytes then C.log("cache entry %s is corrupt (its checksum does not match): rebuilding it", path) end
  return nil
end

local function store(C, dir, path, bytes)
  C.mkdir_p(dir)
  local tmp = ("%s.%d.%d"):format(path, os.time(), math.random(1, 1e9))
  if C.write_all(tmp, bytes) then
    C.write_all(path .. ".sum", C.hash(bytes))
    os.rename(tmp, path)
  end
end

--- image(src, dev, C): the NVRTC image (cubin) of src for device dev, from the disk cache or
--- NVRTC; nil + why
function M.image(src, dev, C)
  local nv = nvrtc()
  if nv.why then return nil, nv.why end
  local arch, opts = arch_of(dev), nvrtc_options()
  local key = C.hash(src .. "\0" .. headers() .. "\0nvrtc " .. nv.version .. "\0" .. arch .. "\0" .. table.concat(opts, " "))
  local dir = C.cache_dir()
  local path = ("%s/%s.%s.cubin"):format(dir, key, arch)
  local img = cached(C, path)
  if img then
    M.counters.nvrtc_cache_hits = M.counters.nvrtc_cache_hits + 1
    return img
  end
  local t0 = torch.time()
  local log
  img, log = torch.cuda._rtc_compile(src, arch, opts)
  if not img then return nil, log end
  M.counters.nvrtc_compiled = M.counters.nvrtc_compiled + 1
  C.log("NVRTC %s compiled %s for %s in %.2f s%s", nv.version, key, arch, torch.time() - t0,
    log ~= "" and (": " .. log) or "")
  store(C, dir, path, img)
  return img
end

local cxx_id
local function cxx_version()
  if not cxx_id then
    local p = io.popen(M.config.cxx .. " --version 2>/dev/null")
    cxx_id = p and p:read("l") or "unknown"
    if p then p:close() end
  end
  return cxx_id or "unknown"
end

local HOST_FLAGS = "-x c++ -std=gnu++17 -O2 -fPIC -shared -fno-exceptions -fno-rtti -fno-strict-aliasing " ..
                   "-ffp-contract=off -fno-math-errno"

--- host_library(src, C): the path of the host build of src (a shared object), from the disk
--- cache or the host C++ compiler; nil + why
function M.host_library(src, C)
  local hkey = C.hash(headers())
  local key = C.hash(src .. "\0" .. hkey .. "\0" .. cxx_version() .. "\0" .. HOST_FLAGS)
  local dir = C.cache_dir()
  local so = ("%s/%s.host.so"):format(dir, key)
  if cached(C, so) then
    M.counters.host_cache_hits = M.counters.host_cache_hits + 1
    return so
  end
  -- the headers, written once per version of them
  local inc = ("%s/rtc-include-%s"):format(dir, hkey)
  for name, text in pairs(M.header_files) do
    local path = inc .. "/" .. name
    if C.read_all(path) ~= text then
      C.mkdir_p(path:match("^(.*)/[^/]*$"))
      C.write_all(path, text)
    end
  end
  C.mkdir_p(dir)
  local tmp = ("%s/%s.%d.%d"):format(dir, key, os.time(), math.random(1, 1e9))
  local ok, err = C.write_all(tmp .. ".cu", src)
  if not ok then return nil, "cannot write " .. tmp .. ".cu: " .. tostring(err) end
  local cmd = ("%s %s -I%s -o %s %s -lm 2>%s"):format(M.config.cxx, HOST_FLAGS, q(inc), q(tmp .. ".so"),
    q(tmp .. ".cu"), q(tmp .. ".err"))
  local t0 = torch.time()
  local rc = os.execute(cmd)
  local msg = C.read_all(tmp .. ".err") or ""
  os.remove(tmp .. ".cu"); os.remove(tmp .. ".err")
  if not rc then
    os.remove(tmp .. ".so")
    return nil, "the host C++ compiler failed: " .. cmd .. "\n" .. msg
  end
  M.counters.host_compiled = M.counters.host_compiled + 1
  C.log("host build of %s in %.2f s", key, torch.time() - t0)
  local b = C.read_all(tmp .. ".so")
  C.write_all(so .. ".sum", C.hash(b or ""))
  os.rename(tmp .. ".so", so)
  return so
end

local loaded = {}   -- source key .. device -> runner (this process)
local warned = {}   -- the reasons a fallback was reported for

--- runner(src, dev, C): function(n, tensors, extents) running the kernel of src on cuda:dev
--- (the NVRTC build launched, or its host build under the fake driver); nil + why
function M.runner(src, dev, C)
  local lkey = C.hash(src) .. ":" .. dev
  if loaded[lkey] then return loaded[lkey] end
  local c = torch.cuda
  local host = c._rtc_host_memory()
  local img, why = M.image(src, dev, C)
  local kernel
  if img then
    kernel, why = c._rtc_load(img, "lt_kernel", dev)
    if not kernel then return nil, why end
  elseif not (host and nvrtc().why) then
    -- NVRTC failed on this source, or there is none for a real device
    return nil, why
  else
    C.log("no NVRTC (%s): the fake device runs the host build alone", why)
  end
  local run
  if host then
    local so, err = M.host_library(src, C)
    if not so then return nil, err end
    local hk, lerr = c._rtc_host_load(so, "lt_kernel_host")
    if not hk then return nil, lerr end
    run = function(n, ts, extents) c._rtc_host_run(hk, n, ts, extents) end
  else
    run = function(n, ts, extents) c._rtc_launch(kernel, n, ts, extents) end
  end
  loaded[lkey] = run
  return run
end

function M.reset()
  loaded, warned = {}, {}
  for k in pairs(M.counters) do M.counters[k] = 0 end
end

--- backward(step, value_meta, need, C): the backward kernel of a compiled CUDA step for the
--- inputs with need[k], {run =, extents =}; nil + why
function M.backward(step, vm, need, C)
  local src, extents = M.backward_source(step.group, vm, need)
  if C.debug_on() then C.log("CUDA backward kernel (%d ops) for %s:\n%s", #step.group.nodes, step.device, src) end
  local run, err = M.runner(src, step.dev, C)
  if not run then return nil, err end
  return { run = run, extents = extents }
end

-- ---- the group as a compiled step ----

--- compile_group(group, value_meta, out, device, C): the group's step on device ("cuda:N")
--- appended to out: its kernel, or its nodes (with a warning) where the kernel cannot be had.
--- C is compile/init.lua's module (its cache, hash and log).
function M.compile_group(g, vm, out, device, C)
  local dev = tonumber(device:match("^cuda:(%d+)$"))
  local src, extents = M.source(g, vm)
  local run, err
  if dev then run, err = M.runner(src, dev, C) else err = "not a cuda device: " .. device end
  if C.debug_on() then C.log("CUDA kernel (%d ops) for %s:\n%s", #g.nodes, device, src) end
  if run then
    -- under autograd, an autograd Function whose backward is M.backward's kernel (init.lua)
    out[#out + 1] = { kind = "group", group = g, run = run, extents = extents, numel = fuse.numel(g.shape),
                      device = device, dev = dev }
  else
    M.counters.fallbacks = M.counters.fallbacks + 1
    -- once per reason: without NVRTC every group would say the same
    if not warned[err] then
      warned[err] = true
      io.stderr:write("torch.compile: warning: a fused CUDA kernel could not be had; its ops run eagerly on ",
        device, ": ", err, "\n")
    end
    for _, pw in ipairs(g.nodes) do out[#out + 1] = { kind = "node", node = pw.node } end
  end
end

return M
