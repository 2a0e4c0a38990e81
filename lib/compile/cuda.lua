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
local SIXTEEN_NAMES = { ck_half = true, ck_bf16 = true }

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

local loaded = {}   -- source key .. device -> runner (this process)
local warned = {}   -- the reasons a fallback was reported for

-- ---- row and reduction kernels ----
--
-- The CPU's row kernels (fuse.row_source, softmax_source, reduce_source and their backward
-- ones) as CUDA kernels: a group of LT_G threads (a warp for rows of up to ROW_WARP elements,
-- else the whole block of 256) takes one item — a row, or a unit of rows — at a time, each
-- thread the columns c = t, t + LT_G, ...; the pointwise ops stay in registers. A row's
-- statistics (sums, the maximum) are taken in double by a group reduction: warp shuffles
-- (lane l adds lane l + o, o = 16, 8, 4, 2, 1), then, in a block, each warp's result through
-- shared memory into warp 0, which reduces them the same way: a fixed tree, so the result does
-- not depend on scheduling. Each thread reads back only the elements it wrote itself, so the
-- reductions are the only synchronization.
--
-- The kernel's code is written once with the macros LT_EACH (every thread of the group runs
-- the statement, t its index), LT_REDUCE (each thread's lt_acc reduced over the group) and
-- LT_ONE (thread 0): on the device, a thread runs its own part; in the host build (the fake
-- driver) they are loops over t, and the reduction goes through the same tree in the same
-- order, so both builds give the same sums.

-- row lengths up to this take a warp per row (8 rows per block of 256 threads)
M.ROW_WARP = 512
-- rows per unit of the layer_norm backward (each unit sums its rows' weight and bias
-- gradients into its own row of partial sums, added afterwards in order): at most NORM_UNIT,
-- fewer where that leaves under NORM_UNITS units to spread over the device (a warp or a
-- block each). A function of the shape alone, so the sums' order is fixed.
M.NORM_UNIT, M.NORM_UNITS = 32, 1024
function M.norm_unit(rows)
  return math.max(1, math.min(M.NORM_UNIT, (rows + M.NORM_UNITS - 1) // M.NORM_UNITS))
end
-- elements per unit of a sum over all elements (each unit's sum a partial result of its own)
M.REDUCE_UNIT = 8192

local ROWS = [[
LT_FN double lt_combine(bool mx, double a, double b) { return mx ? lt_max_double(a, b) : a + b; }
#if defined(__CUDACC__)
/* the group's values combined by a fixed tree (warp shuffles, then the warps' results in
   warp 0), returned to every thread of the group */
template<bool MX> __device__ double lt_group_reduce(double v, double *sh) {
  for (int o = 16; o > 0; o >>= 1) v = lt_combine(MX, v, __shfl_down_sync(0xffffffffu, v, o));
  if (LT_G == 32) return __shfl_sync(0xffffffffu, v, 0);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) sh[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < LT_G / 32 ? sh[lane] : (MX ? -(double)INFINITY : 0.0);
    for (int o = 16; o > 0; o >>= 1) v = lt_combine(MX, v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) sh[32] = v;
  }
  __syncthreads();
  return sh[32];
}
#define LT_EACH(...) { const int t = lt_t; __VA_ARGS__ }
#define LT_REDUCE(MX, dst, ...) { double lt_acc = (MX) ? -(double)INFINITY : 0.0; \
  { const int t = lt_t; __VA_ARGS__ } dst = lt_group_reduce<MX>(lt_acc, lt_sh); }
#define LT_ONE(...) if (lt_t == 0) { __VA_ARGS__ }
#else
/* the host build: the same tree over the group's values, in the same order */
template<bool MX> static double lt_group_reduce(double *v) {
  double w[32];
  for (int k = 0; k < 32; k++) w[k] = MX ? -(double)INFINITY : 0.0;
  for (int b = 0; b < LT_G / 32; b++) {
    double *a = v + 32 * b;
    for (int o = 16; o > 0; o >>= 1) for (int l = 0; l < o; l++) a[l] = lt_combine(MX, a[l], a[l + o]);
    w[b] = a[0];
  }
  if (LT_G == 32) return w[0];
  for (int o = 16; o > 0; o >>= 1) for (int l = 0; l < o; l++) w[l] = lt_combine(MX, w[l], w[l + o]);
  return w[0];
}
#define LT_EACH(...) for (int t = 0; t < LT_G; t++) { __VA_ARGS__ }
#define LT_REDUCE(MX, dst, ...) { double lt_v[LT_G]; for (int t = 0; t < LT_G; t++) { \
  double lt_acc = (MX) ? -(double)INFINITY : 0.0; { __VA_ARGS__ } lt_v[t] = lt_acc; } dst = lt_group_reduce<MX>(lt_v); }
#define LT_ONE(...) { __VA_ARGS__ }
#endif
#define LT_SUM(dst, ...) LT_REDUCE(false, dst, __VA_ARGS__)
#define LT_MAX(dst, ...) LT_REDUCE(true, dst, __VA_ARGS__)
]]

-- a row kernel's pointers, in order: add(type, name, const, value, extent)
local function pointers()
  local ps = { order = {}, extents = {} }
  -- wrap: a 16-bit input the generator's loop body reads (fuse.emit_forward_body), which
  -- indexes it as a float pointer: an lt_in over the raw pointer
  function ps.add(ty, name, const, v, e, wrap)
    ps[#ps + 1] = { type = (const and "const " or "") .. ty .. " *", name = name,
                    wrap = wrap and SIXTEEN_NAMES[ty] and ("const lt_in<%s> %s{%s_p};"):format(ty, name, name) }
    ps.order[#ps.order + 1] = v
    ps.extents[#ps.extents + 1] = e
  end
  return ps
end

-- the kernel around a row kernel's code (core: lines run for item u by a group of G threads,
-- nu items); returns the source and the n to launch (and run) it with
local function row_frame(G, nu, ps, core)
  local raws, casts, wraps = {}, {}, {}
  for k, p in ipairs(ps) do
    local name = p.wrap and p.name .. "_p" or p.name
    raws[k] = p.type .. "__restrict__ " .. name
    casts[k] = ("  %s__restrict__ %s = (%s)p[%d];"):format(p.type, name, p.type, k - 1)
    if p.wrap then wraps[#wraps + 1] = "  " .. p.wrap end
  end
  for _, l in ipairs(wraps) do casts[#casts + 1] = l end
  local per = 256 // G
  local lines = { PRELUDE, ("#define LT_G %d"):format(G), ROWS,
    ("#define LT_NU %dLL"):format(nu),
    "#if defined(__CUDACC__)",
    "extern \"C\" __global__ void __launch_bounds__(256) lt_kernel(int64_t n, " .. table.concat(raws, ", ") .. ") {",
    "  __shared__ double lt_sh[33];",
    "  (void)lt_sh;",
    "  const int lt_t = threadIdx.x % LT_G;",
    table.concat(wraps, "\n"),
    ("  for (int64_t u = (int64_t)blockIdx.x * %d + threadIdx.x / LT_G; u < LT_NU; u += (int64_t)gridDim.x * %d) {"):format(per, per) }
  for _, l in ipairs(core) do lines[#lines + 1] = l end
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  lines[#lines + 1] = "#else"
  lines[#lines + 1] = "/* the host build: each item's group in turn */"
  lines[#lines + 1] = "extern \"C\" void lt_kernel_host(int64_t nthreads, int64_t n, void *const *p) {"
  for _, l in ipairs(casts) do lines[#lines + 1] = l end
  lines[#lines + 1] = "  for (int64_t u = 0; u < LT_NU; u++) {"
  for _, l in ipairs(core) do lines[#lines + 1] = l end
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  lines[#lines + 1] = "#endif"
  return table.concat(lines, "\n") .. "\n", (nu + per - 1) // per * 256
end

local function group_size(D) return D <= M.ROW_WARP and 32 or 256 end

-- a row kernel's types for dtype: T (compute), S (storage), ld(e) (a stored value as T), st(e)
-- (a T value as stored); float and double are read and written as they are
function M.row_types(dtype)
  local S = STORAGE[dtype] or SIXTEEN[dtype]
  if not S then return nil end
  local T = compute_type(dtype)
  if STORAGE[dtype] then return T, S, function(e) return e end, function(e) return e end end
  return T, S, function(e) return "ck_load(" .. e .. ")" end, function(e) return ("ck_store<%s>(%s)"):format(S, e) end
end

-- the column loop of a row: its lines (body, at 4 spaces) inside, i the element
local function columns(out, body, extra)
  out[#out + 1] = "    for (int64_t c = t; c < D; c += LT_G) {"
  out[#out + 1] = "      const int64_t i = r * D + c;"
  for _, l in ipairs(extra or {}) do out[#out + 1] = l end
  for _, l in ipairs(body) do out[#out + 1] = "  " .. l end
  out[#out + 1] = "    }"
end

-- the row xr's mean and 1/std into tm, trs (two passes, in double, as the CPU kernel)
local function row_stats(out, T, ld, eps)
  local x = ld("xr[c]")
  out[#out + 1] = "    double s, q;"
  out[#out + 1] = ("    LT_SUM(s, for (int64_t c = t; c < D; c += LT_G) lt_acc += (double)%s;)"):format(x)
  out[#out + 1] = "    const double mean = s / (double)D;"
  out[#out + 1] = ("    LT_SUM(q, for (int64_t c = t; c < D; c += LT_G) { const double d = (double)%s - mean; lt_acc += d * d; })"):format(x)
  out[#out + 1] = ("    const %s tm = (%s)mean, trs = (%s)(1.0 / sqrt(q / (double)D + %s));"):format(
    T, T, T, fuse.num_literal(eps, "double"))
end

-- each kind's source: src, order, extents, launch n (and, for some, more)
local ROW_SOURCES = {}

-- a row kernel's run: pointers to its inputs (but skip_in) and its n-element outputs (but
-- skip_out), in the C generator's order
local function run_pointers(ps, g, vm, S, n, skip_in, skip_out)
  for k, v in ipairs(g.inputs) do
    if v ~= skip_in then ps.add(S, "in" .. k, true, v, fuse.extent(vm[v]), true) end
  end
  for k, v in ipairs(g.outputs) do
    if v ~= skip_out then ps.add(S, "out" .. k, false, v, n) end
  end
end

-- the run's loop body (rows: indexed by row and column) with the stores of its outputs (but skip)
local function run_body(g, vm, T, st, preset, rows, skip)
  local body = {}
  fuse.emit_forward_body(body, g, vm, T, preset, rows)
  for k, v in ipairs(g.outputs) do
    if v ~= skip then body[#body + 1] = ("    out%d[i] = %s;"):format(k, st("v" .. v)) end
  end
  return body
end

--- layer_norm -> run: fuse.row_source's pointers and results
function ROW_SOURCES.rowgroup(rg, vm)
  local rn, g = rg.norm, rg.group
  local T, S, ld, st = M.row_types(g.dtype)
  local D, n = rn.D, fuse.numel(g.shape)
  local ps = pointers()
  ps.add(S, "nx", true, rn.x, n)
  if rn.w then ps.add(S, "nw", true, rn.w, D) end
  if rn.b then ps.add(S, "nb", true, rn.b, D) end
  run_pointers(ps, g, vm, S, n, rn.out, nil)
  if rg.keep_norm then ps.add(S, "nout", false, rn.out, n) end
  local core = { ("    const int64_t D = %d, r = u;"):format(D), "    const " .. S .. " *xr = nx + r * D;" }
  row_stats(core, T, ld, rn.eps)
  local e = ("(%s - tm) * trs"):format(ld("xr[c]"))
  if rn.w then e = e .. " * " .. ld("nw[c]") end
  if rn.b then e = e .. " + " .. ld("nb[c]") end
  local body = run_body(g, vm, T, st, { [rn.out] = "vn" }, true, nil)
  core[#core + 1] = "    LT_EACH("
  local extra = { ("      const %s vn = %s;"):format(T, e) }
  if rg.keep_norm then extra[#extra + 1] = ("      nout[i] = %s;"):format(st("vn")) end
  columns(core, body, extra)
  core[#core + 1] = "    )"
  local src, launch = row_frame(group_size(D), n // D, ps, core)
  return src, ps.order, ps.extents, launch
end

--- run -> softmax / log_softmax: fuse.softmax_source's pointers and results
function ROW_SOURCES.softmaxgroup(sg, vm)
  local sm, g = sg.softmax, sg.group
  local T, S, ld, st = M.row_types(g.dtype)
  local D, n = sm.D, fuse.numel(g.shape)
  local ps = pointers()
  run_pointers(ps, g, vm, S, n, nil, sm.x)
  ps.add(S, "sout", false, sm.out, n)
  local EXP = T == "float" and "lt_exp_float" or "exp"
  local body = run_body(g, vm, T, st, nil, true, sm.x)
  -- the run's value is stored in the output row (as eager's softmax would read it), and the
  -- thread reads it back from there
  body[#body + 1] = ("    so[c] = %s;"):format(st("v" .. sm.x))
  body[#body + 1] = ("    lt_acc = lt_max_double(lt_acc, (double)%s);"):format(ld("so[c]"))
  local core = { ("    const int64_t D = %d, r = u;"):format(D), "    " .. S .. " *so = sout + r * D;",
                 "    double m, s;", "    LT_MAX(m," }
  columns(core, body)
  core[#core + 1] = "    )"
  core[#core + 1] = ("    const %s tmx = (%s)m;"):format(T, T)
  local x = ld("so[c]")
  core[#core + 1] = ("    LT_SUM(s, for (int64_t c = t; c < D; c += LT_G) lt_acc += (double)%s(%s - tmx);)"):format(EXP, x)
  if sm.log then
    core[#core + 1] = ("    const %s lse = tmx + (%s)log(s);"):format(T, T)
    core[#core + 1] = ("    LT_EACH(for (int64_t c = t; c < D; c += LT_G) so[c] = %s;)"):format(st(x .. " - lse"))
  else
    -- the exponentials again rather than stored and read back: the same values, one store
    core[#core + 1] = ("    const %s inv = (%s)(1.0 / s);"):format(T, T)
    core[#core + 1] = ("    LT_EACH(for (int64_t c = t; c < D; c += LT_G) so[c] = %s;)"):format(
      st(("%s(%s - tmx) * inv"):format(EXP, x)))
  end
  local src, launch = row_frame(group_size(D), n // D, ps, core)
  return src, ps.order, ps.extents, launch
end

--- run -> sum / mean: fuse.reduce_source's pointers; over all elements, one partial sum
--- (double) per unit of REDUCE_UNIT elements, indexed flat; returns also the partial sums'
--- count
function ROW_SOURCES.reducegroup(rg, vm)
  local red, g = rg.reduce, rg.group
  local T, S, ld, st = M.row_types(g.dtype)
  local n = fuse.numel(g.shape)
  local D = #g.shape > 0 and g.shape[#g.shape] or 1
  local ps = pointers()
  run_pointers(ps, g, vm, S, n, nil, red.x)
  local body = run_body(g, vm, T, st, nil, not red.all, red.x)
  body[#body + 1] = ("    lt_acc += (double)v%d;"):format(red.x)
  local core = { "    double s;" }
  local src, launch, size
  if red.all then
    size = (n + M.REDUCE_UNIT - 1) // M.REDUCE_UNIT
    ps.add("double", "part", false, red.out, size)
    core[#core + 1] = ("    const int64_t N = %d, B = %d, e = (u + 1) * B < N ? (u + 1) * B : N;"):format(n, M.REDUCE_UNIT)
    core[#core + 1] = "    LT_SUM(s,"
    core[#core + 1] = "    for (int64_t i = u * B + t; i < e; i += LT_G) {"
    for _, l in ipairs(body) do core[#core + 1] = "  " .. l end
    core[#core + 1] = "    }"
    core[#core + 1] = "    )"
    core[#core + 1] = "    LT_ONE(part[u] = s;)"
    src, launch = row_frame(256, size, ps, core)
  else
    size = n // D
    ps.add(S, "res", false, red.out, size)
    core[#core + 1] = ("    const int64_t D = %d, r = u;"):format(D)
    core[#core + 1] = "    LT_SUM(s,"
    columns(core, body)
    core[#core + 1] = "    )"
    core[#core + 1] = ("    LT_ONE(res[r] = %s;)"):format(st(("(%s)(%s)"):format(T, red.op == "mean" and "s / (double)D" or "s")))
    src, launch = row_frame(group_size(D), size, ps, core)
  end
  return src, ps.order, ps.extents, launch, size
end

--- the backward of run -> sum / mean (fuse.reduce_backward_source's pointers): no reduction,
--- so the pointwise frame's grid-stride loop over the elements, each finding its row
local function reduce_backward_source(rg, vm, need)
  local red, g = rg.reduce, rg.group
  local T, S = M.row_types(g.dtype)
  local n = fuse.numel(g.shape)
  local rows = red.all and 1 or n // red.D
  local ps = pointers()
  for k, v in ipairs(g.inputs) do ps.add(S, "in" .. k, true, v, fuse.extent(vm[v])) end
  local seed = {}
  for k, v in ipairs(g.outputs) do
    if v ~= red.x then
      ps.add(S, "gout" .. k, true, v, n)
      seed[v] = ("gout%d[i]"):format(k)
    end
  end
  ps.add(S, "gs", true, red.out, rows)
  for k, v in ipairs(g.inputs) do
    if need[k] then ps.add(S, "gin" .. k, false, v, n) end
  end
  local D = #g.shape > 0 and g.shape[#g.shape] or 1
  local scale = red.op == "mean" and (" / " .. fuse.num_literal(red.all and n or D, T)) or ""
  seed[red.x] = "gsr"
  local body = { ("    const int64_t r = i / %d, c = i - r * %d;"):format(D, D),
                 ("    const %s gsr = gs[%s]%s;"):format(T, red.all and "0" or "r", scale),
                 "    (void)c;" }
  local operand, reg = fuse.emit_forward_body(body, g, vm, T, nil, true)
  fuse.emit_backward_body(body, g, T, operand, reg, seed)
  for k, v in ipairs(g.inputs) do
    if need[k] then body[#body + 1] = ("    gin%d[i] = d%d;"):format(k, v) end
  end
  -- (the pointwise frame's parameters read and write 16-bit tensors as float)
  local params = {}
  for k, p in ipairs(ps) do params[k] = param(g.dtype, p.name, p.type:find("^const") ~= nil) end
  return frame(params, body), ps.order, ps.extents, n
end

--- the backward of run -> softmax (fuse.softmax_backward_source's pointers)
local function softmax_backward_source(sg, vm, need)
  local sm, g = sg.softmax, sg.group
  local T, S, ld, st = M.row_types(g.dtype)
  local D, n = sm.D, fuse.numel(g.shape)
  local ps = pointers()
  for k, v in ipairs(g.inputs) do ps.add(S, "in" .. k, true, v, fuse.extent(vm[v]), true) end
  local seed = {}
  for k, v in ipairs(g.outputs) do
    if v ~= sm.x then
      ps.add(S, "gout" .. k, true, v, n)
      seed[v] = ld(("gout%d[i]"):format(k))
    end
  end
  ps.add(S, "y", true, sm.out, n)
  ps.add(S, "gy", true, sm.out, n)
  for k, v in ipairs(g.inputs) do
    if need[k] then ps.add(S, "gin" .. k, false, v, n) end
  end
  local core = { ("    const int64_t D = %d, r = u;"):format(D),
                 "    const " .. S .. " *yr = y + r * D, *gr = gy + r * D;", "    double s;" }
  local yc, gc = ld("yr[c]"), ld("gr[c]")
  local term = sm.log and ("(double)" .. gc) or ("(double)%s * (double)%s"):format(gc, yc)
  core[#core + 1] = ("    LT_SUM(s, for (int64_t c = t; c < D; c += LT_G) lt_acc += %s;)"):format(term)
  core[#core + 1] = ("    const %s ts = (%s)s;"):format(T, T)
  if sm.log then
    seed[sm.x] = ("(%s - %s(%s) * ts)"):format(gc, T == "float" and "lt_exp_float" or "exp", yc)
  else
    seed[sm.x] = ("(%s * (%s - ts))"):format(yc, gc)
  end
  local body = {}
  local operand, reg = fuse.emit_forward_body(body, g, vm, T, nil, true)
  fuse.emit_backward_body(body, g, T, operand, reg, seed)
  for k, v in ipairs(g.inputs) do
    if need[k] then body[#body + 1] = ("    gin%d[i] = %s;"):format(k, st("d" .. v)) end
  end
  core[#core + 1] = "    LT_EACH("
  columns(core, body)
  core[#core + 1] = "    )"
  local src, launch = row_frame(group_size(D), n // D, ps, core)
  return src, ps.order, ps.extents, launch
end

--- the backward of layer_norm -> run (fuse.norm_backward_source's pointers, but the weight's
--- and bias's partial sums in double): units of norm_unit(rows) rows, each unit's group adding its
--- rows' dvn * xhat and dvn into its own row of partial sums (each thread its own columns, so
--- the order of the additions is fixed); the units' rows are added afterwards (init.lua)
local function norm_backward_source(rg, vm, need)
  local rn, g = rg.norm, rg.group
  local T, S, ld, st = M.row_types(g.dtype)
  local D, n = rn.D, fuse.numel(g.shape)
  local rows = n // D
  local rb = M.norm_unit(rows)
  local units = (rows + rb - 1) // rb
  local ps = pointers()
  ps.add(S, "nx", true, rn.x, n)
  if rn.w then ps.add(S, "nw", true, rn.w, D) end
  if rn.b then ps.add(S, "nb", true, rn.b, D) end
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out then ps.add(S, "in" .. k, true, v, fuse.extent(vm[v]), true) end
  end
  local seed = {}
  for k, v in ipairs(g.outputs) do
    ps.add(S, "gout" .. k, true, v, n)
    seed[v] = ld(("gout%d[i]"):format(k))
  end
  if rg.keep_norm then
    ps.add(S, "gnout", true, rn.out, n)
    seed[rn.out] = ld("gnout[i]")
  end
  if need.x then ps.add(S, "gx", false, rn.x, n) end
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out and need[k] then ps.add(S, "gin" .. k, false, v, n) end
  end
  if need.w then ps.add("double", "pgw", false, rn.w, units * D) end
  if need.b then ps.add("double", "pgb", false, rn.b, units * D) end
  local core = { ("    const int64_t D = %d, R = %d, RB = %d;"):format(D, rows, rb) }
  if need.w or need.b then
    core[#core + 1] = ("    LT_EACH(for (int64_t c = t; c < D; c += LT_G) { %s%s })"):format(
      need.w and "pgw[u * D + c] = 0; " or "", need.b and "pgb[u * D + c] = 0; " or "")
  end
  core[#core + 1] = "    const int64_t rend = (u + 1) * RB < R ? (u + 1) * RB : R;"
  core[#core + 1] = "    for (int64_t r = u * RB; r < rend; r++) {"
  core[#core + 1] = "    const " .. S .. " *xr = nx + r * D;"
  row_stats(core, T, ld, rn.eps)
  local xh = ("(%s - tm) * trs"):format(ld("xr[c]"))
  local e = "xh"
  if rn.w then e = e .. " * " .. ld("nw[c]") end
  if rn.b then e = e .. " + " .. ld("nb[c]") end
  local extra = { ("      const %s xh = %s;"):format(T, xh), ("      const %s vn = %s;"):format(T, e) }
  local body = {}
  local operand, reg = fuse.emit_forward_body(body, g, vm, T, { [rn.out] = "vn" }, true)
  fuse.emit_backward_body(body, g, T, operand, reg, seed)
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out and need[k] then body[#body + 1] = ("    gin%d[i] = %s;"):format(k, st("d" .. v)) end
  end
  local dvn = "d" .. rn.out
  if need.w then body[#body + 1] = ("    pgw[u * D + c] += (double)(%s * xh);"):format(dvn) end
  if need.b then body[#body + 1] = ("    pgb[u * D + c] += (double)%s;"):format(dvn) end
  if need.x then body[#body + 1] = ("    gx[i] = %s;"):format(st(dvn .. (rn.w and (" * " .. ld("nw[c]")) or ""))) end
  core[#core + 1] = "    LT_EACH("
  columns(core, body, extra)
  core[#core + 1] = "    )"
  if need.x then
    -- mean(dxh) and mean(dxh * xhat) in double, over the values this thread wrote
    local gc = ld("grx[c]")
    core[#core + 1] = "    const " .. S .. " *grx = gx + r * D;"
    core[#core + 1] = "    double a1, a2;"
    core[#core + 1] = ("    LT_SUM(a1, for (int64_t c = t; c < D; c += LT_G) lt_acc += (double)%s;)"):format(gc)
    core[#core + 1] = ("    LT_SUM(a2, for (int64_t c = t; c < D; c += LT_G) { const %s xh = %s; lt_acc += (double)%s * (double)xh; })"):format(T, xh, gc)
    core[#core + 1] = ("    const %s m1 = (%s)(a1 / (double)D), m2 = (%s)(a2 / (double)D);"):format(T, T, T)
    core[#core + 1] = ("    LT_EACH(for (int64_t c = t; c < D; c += LT_G) { const %s xh = %s; gx[r * D + c] = %s; })"):format(
      T, xh, st(("trs * (%s - m1 - xh * m2)"):format(ld("gx[r * D + c]"))))
  end
  core[#core + 1] = "    }"
  local src, launch = row_frame(group_size(D), units, ps, core)
  return src, ps.order, ps.extents, launch, units
end

--- row_source(step, value_meta): the CUDA C source of a row step's forward kernel (a
--- "rowgroup", "softmaxgroup" or "reducegroup" of fuse.plan), the tensors it takes (as the
--- C kernel's: the same order), the elements each must reach, the n to launch it with, and,
--- for a sum over all elements, the number of partial sums
function M.row_source(s, vm)
  return ROW_SOURCES[s.kind](s, vm)
end

--- row_backward_source(step, value_meta, need): the same for the step's backward kernel
--- (need as init.lua gives it to the C generator); and, for a layer_norm, the units (rows of
--- partial sums of the weight's and bias's gradients, in double)
function M.row_backward_source(s, vm, need)
  if s.kind == "rowgroup" then return norm_backward_source(s, vm, need) end
  if s.kind == "softmaxgroup" then return softmax_backward_source(s, vm, need) end
  return reduce_backward_source(s, vm, need)
end

--- row_step(step, value_meta, device, C): the step's forward kernel on device ("cuda:N"):
--- true with s.run, s.launch (n), s.order, s.extents, s.device, s.dev set; nil + why where it
--- cannot be had (the caller then runs the ops as they are)
function M.row_step(s, vm, device, C)
  local dev = tonumber(device:match("^cuda:(%d+)$"))
  if not dev then return nil, "not a cuda device: " .. device end
  if not M.row_types(s.group.dtype) then return nil, "a row kernel of " .. tostring(s.group.dtype) end
  local src, order, extents, launch, size = M.row_source(s, vm)
  if C.debug_on() then C.log("CUDA row kernel (%s, %d ops) for %s:\n%s", s.kind, #s.group.nodes, device, src) end
  local run, err = M.runner(src, dev, C)
  if not run then
    M.counters.fallbacks = M.counters.fallbacks + 1
    if not warned[err] then
      warned[err] = true
      io.stderr:write("torch.compile: warning: a fused CUDA row kernel could not be had; its ops run eagerly on ",
        device, ": ", err, "\n")
    end
    return nil, err
  end
  s.run, s.launch, s.order, s.extents, s.size, s.device, s.dev = run, launch, order, extents, size, device, dev
  return true
end

--- row_backward(step, value_meta, need, C): the step's backward kernel on its device for the
--- inputs with need: {run =, extents =, launch =, blocks =}; nil + why
function M.row_backward(s, vm, need, C)
  local src, _, extents, launch, units = M.row_backward_source(s, vm, need)
  if C.debug_on() then C.log("CUDA row backward kernel (%s, %d ops) for %s:\n%s", s.kind, #s.group.nodes, s.device, src) end
  local run, err = M.runner(src, s.dev, C)
  if not run then return nil, err end
  return { run = run, extents = extents, launch = launch, blocks = units }
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
