-- compile/fuse.lua — the scheduler and the C code generator for pointwise ops.
--
-- A run of consecutive pointwise nodes over one iteration space (one output shape, one
-- floating dtype) becomes one kernel: a loop over the output's elements that loads each
-- input once (broadcast inputs through their strides, constant in the source), computes
-- every node's value in registers, and stores only the values that are used after the run
-- or returned. Row kernels fuse a run with the layer_norm before it or the softmax after it
-- (forward and backward), and a run with the sum or mean that takes its value. Everything
-- else (matrix products, convolutions, other reductions, views, in place ops) stays a call
-- of the op, between kernels. The loop's outer range is split over the
-- thread pool by torch._compiled_run; its body is what the compiler vectorizes.
local torch = require "torch"

local M = {}

-- ---- pointwise ops: C for one element; a, b are C expressions, T the C type ----
local function fn1(f) return function(a, T) return (T == "float" and f .. "f(" or f .. "(") .. a .. ")" end end

local UNARY = {
  neg = function(a) return "(-" .. a .. ")" end,
  abs = fn1("fabs"), exp = function(a, T) return T == "float" and "lt_exp_float(" .. a .. ")" or "exp(" .. a .. ")" end, log = fn1("log"), sqrt = fn1("sqrt"), sin = fn1("sin"), cos = fn1("cos"),
  tanh = fn1("tanh"), erf = fn1("erf"), expm1 = fn1("expm1"), log1p = fn1("log1p"), floor = fn1("floor"),
  ceil = fn1("ceil"), trunc = fn1("trunc"), tan = fn1("tan"), atan = fn1("atan"), log2 = fn1("log2"),
  exp2 = fn1("exp2"),
  sigmoid = function(a, T) return ("lt_sigmoid_%s(%s)"):format(T, a) end,
  silu = function(a, T) return ("((%s) * lt_sigmoid_%s(%s))"):format(a, T, a) end,
  relu = function(a, T) return ("lt_relu_%s(%s)"):format(T, a) end,
  gelu = function(a, T) return ("lt_gelu_%s(%s)"):format(T, a) end,
  gelu_tanh = function(a, T) return ("lt_gelu_tanh_%s(%s)"):format(T, a) end,
  rsqrt = function(a, T) return ("(1 / %s)"):format(fn1("sqrt")(a, T)) end,
  reciprocal = function(a) return "(1 / " .. a .. ")" end,
  square = function(a) return "((" .. a .. ") * (" .. a .. "))" end,
}
local BINARY = {
  add = function(a, b) return "(" .. a .. " + " .. b .. ")" end,
  sub = function(a, b) return "(" .. a .. " - " .. b .. ")" end,
  mul = function(a, b) return "(" .. a .. " * " .. b .. ")" end,
  div = function(a, b) return "(" .. a .. " / " .. b .. ")" end,
  maximum = function(a, b, T) return ("lt_max_%s(%s, %s)"):format(T, a, b) end,
  minimum = function(a, b, T) return ("lt_min_%s(%s, %s)"):format(T, a, b) end,
  pow = function(a, b, T) return (T == "float" and "powf(" or "pow(") .. a .. ", " .. b .. ")" end,
}
-- names under which the ops are reached (methods, torch functions, operators)
local ALIASES = { true_divide = "div", multiply = "mul", subtract = "sub", negative = "neg", absolute = "abs",
                  cmul = "mul", cdiv = "div" }      -- (Torch7's names)

local HELPERS = [[
#include <stdint.h>
#include <math.h>
/* the row kernels' loops with 512-bit vectors where the machine has them (-march=native):
   their transcendental functions (libmvec's, the float exp's polynomial) then do twice
   the work per instruction, as eager's 512-bit gelu loop does */
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define LT_WIDE __attribute__((target("prefer-vector-width=512")))
#else
#define LT_WIDE
#endif
#ifdef LT_MVEC
/* glibc's libmvec has vector versions of these: declared so, loops that call them vectorize */
#define LT_SIMD __attribute__((simd("notinbranch")))
LT_SIMD float logf(float); LT_SIMD float sinf(float); LT_SIMD float cosf(float); LT_SIMD float tanhf(float);
LT_SIMD float erff(float); LT_SIMD float expm1f(float); LT_SIMD float log1pf(float); LT_SIMD float atanf(float);
LT_SIMD float tanf(float); LT_SIMD float log2f(float); LT_SIMD float exp2f(float); LT_SIMD float powf(float, float);
LT_SIMD double exp(double); LT_SIMD double log(double); LT_SIMD double sin(double); LT_SIMD double cos(double);
LT_SIMD double tanh(double); LT_SIMD double erf(double); LT_SIMD double expm1(double); LT_SIMD double log1p(double);
LT_SIMD double atan(double); LT_SIMD double tan(double); LT_SIMD double log2(double); LT_SIMD double exp2(double);
LT_SIMD double pow(double, double);
#endif
/* exp for float without a call or a branch, so that loops using it vectorize: Cody-Waite
   range reduction x = n ln2 + r, a degree-6 polynomial for e^r on |r| <= ln2/2 (within
   2 ulp), and 2^n put into the exponent in two halves so that n down to -149 stays exact;
   the edges by selects: NaN stays NaN, overflow gives inf, underflow 0. A lane whose result
   is 0 (x below -103.97: a softmax's masked -inf) computes from 0 instead: from -104 its
   product would be subnormal, and each subnormal result costs a microcode assist, which made
   a masked attention softmax three times slower. */
static inline float lt_exp_float(float x) {
  float xc = x < -103.97207708f ? 0.0f : (x > 89.0f ? 89.0f : x);
  float n = __builtin_rintf(xc * 1.44269504088896341f);
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t ni = (int32_t)n;
  int32_t h = ni >> 1;
  union { int32_t i; float f; } s1 = { (h + 127) << 23 }, s2 = { (ni - h + 127) << 23 };
  float y = p * s1.f * s2.f;
  y = x > 88.72283935546875f ? __builtin_inff() : y;
  y = x < -103.97207708f ? 0.0f : y;
  return x != x ? x : y;
}
static inline float lt_sigmoid_float(float x) { return 1.0f / (1.0f + lt_exp_float(-x)); }
static inline double lt_sigmoid_double(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline float lt_relu_float(float x) { return x > 0.0f || x != x ? x : 0.0f; }
static inline double lt_relu_double(double x) { return x > 0.0 || x != x ? x : 0.0; }
static inline float lt_gelu_float(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
static inline double lt_gelu_double(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }
static inline float lt_gelu_tanh_float(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}
static inline double lt_gelu_tanh_double(double x) {
  return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}
static inline float lt_max_float(float a, float b) { return (a != a || a > b) ? a : b; }
static inline double lt_max_double(double a, double b) { return (a != a || a > b) ? a : b; }
static inline float lt_min_float(float a, float b) { return (a != a || a < b) ? a : b; }
static inline double lt_min_double(double a, double b) { return (a != a || a < b) ? a : b; }
]]

local function ctype(dtype)
  if dtype == torch.float32 then return "float" end
  if dtype == torch.float64 then return "double" end
end

-- the dtypes of a row or reduction step: float and double, and the 16-bit floats, which only
-- the CUDA generator takes (compile/cuda.lua; on the CPU those steps run as ops)
local function row_dtype(dtype)
  return ctype(dtype) ~= nil or dtype == torch.float16 or dtype == torch.bfloat16
end

local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function broadcastable(from, to)
  if #from > #to then return false end
  local off = #to - #from
  for i = 1, #from do
    if from[i] ~= 1 and from[i] ~= to[i + off] then return false end
  end
  return true
end

local function numel(shape)
  local n = 1
  for i = 1, #shape do n = n * shape[i] end
  return n
end

local function contiguous_strides(shape)
  local st, acc = {}, 1
  for i = #shape, 1, -1 do st[i] = acc; acc = acc * shape[i] end
  return st
end

-- node's pointwise form: {op =, kind = "unary"|"binary", a = arg, b = arg, alpha =} where an
-- arg is {ref = value} or {num = lua number}; nil when the node is not one the kernel does
function M.pointwise(node, value_meta)
  local name = ALIASES[node.name] or node.name
  if node.nres ~= 1 or not node.outs[1].ref or node.outs[1].alias then return nil end
  local out = value_meta[node.outs[1].ref]
  -- float16 and bfloat16 runs are planned too: the CUDA generator computes them in float
  -- (compile/cuda.lua); the C generator leaves them to the ops (init.lua's compile_group)
  if not ctype(out.dtype) and out.dtype ~= torch.float16 and out.dtype ~= torch.bfloat16 then return nil end
  local function arg(a)
    if a == nil then return nil end
    if a.ref then
      local m = value_meta[a.ref]
      if m.dtype ~= out.dtype or not broadcastable(m.shape, out.shape) then return nil end
      return { ref = a.ref }
    elseif a.const ~= nil and type(a.const) == "number" then
      return { num = a.const }
    end
    return nil
  end
  if UNARY[name] then
    if node.nargs == 2 and name == "gelu" then
      -- torch.gelu(x, {approximate = "none" | "tanh"})
      local o = node.args[2].const
      if type(o) ~= "table" then return nil end
      for k in pairs(o) do if k ~= "approximate" then return nil end end
      if o.approximate == "tanh" then name = "gelu_tanh"
      elseif o.approximate ~= nil and o.approximate ~= "none" then return nil end
    elseif node.nargs ~= 1 then
      return nil
    end
    local a = arg(node.args[1])
    if not a or not a.ref then return nil end
    return { op = name, kind = "unary", a = a, shape = out.shape, dtype = out.dtype }
  elseif BINARY[name] then
    local alpha
    if node.nargs == 3 then
      -- add/sub's options table {alpha = n}
      local o = node.args[3]
      if not (o.const and type(o.const) == "table") then return nil end
      for k, v in pairs(o.const) do
        if k ~= "alpha" or type(v) ~= "number" then return nil end
      end
      alpha = o.const.alpha
      if name ~= "add" and name ~= "sub" then return nil end
    elseif node.nargs ~= 2 then
      return nil
    end
    local a, b = arg(node.args[1]), arg(node.args[2])
    if not a or not b or (not a.ref and not b.ref) then return nil end
    return { op = name, kind = "binary", a = a, b = b, alpha = alpha, shape = out.shape, dtype = out.dtype }
  end
  return nil
end

-- node's row-normalization form, when it is a layer_norm over the last dimension of a
-- contiguous float tensor with 1-D contiguous weight and bias (or none):
-- {x =, w =, b =, eps =, D =, out =, node =, shape =, dtype =}; else nil
function M.rownorm(node, vm)
  if node.name ~= "layer_norm" or node.nres ~= 1 or node.nargs > 5 then return nil end
  local o = node.outs[1]
  local a = node.args
  if not o.ref or o.alias or not (a[1] and a[1].ref) then return nil end
  local xm = vm[a[1].ref]
  if not row_dtype(xm.dtype) or #xm.shape == 0 then return nil end
  local D = xm.shape[#xm.shape]
  if D == 0 then return nil end
  local ns = a[2] and a[2].const
  if type(ns) == "number" then ns = { ns } end
  if (type(ns) ~= "table" and type(ns) ~= "userdata") or #ns ~= 1 or ns[1] ~= D then return nil end
  local cs = contiguous_strides(xm.shape)
  for d = 1, #cs do if xm.shape[d] ~= 1 and xm.stride[d] ~= cs[d] then return nil end end
  -- weight and bias: nil when absent, false when not of the kernel's form
  local function vec(arg)
    if arg == nil or (arg.ref == nil and arg.const == nil and arg.tbl == nil) then return nil end
    if not arg.ref then return false end
    local m = vm[arg.ref]
    if m.dtype ~= xm.dtype or #m.shape ~= 1 or m.shape[1] ~= D or (D > 1 and m.stride[1] ~= 1) then return false end
    return arg.ref
  end
  local w, b = vec(a[3]), vec(a[4])
  if w == false or b == false then return nil end
  local eps = a[5] and a[5].const
  if eps == nil then eps = 1e-5 end
  if type(eps) ~= "number" then return nil end
  return { x = a[1].ref, w = w, b = b, eps = eps, D = D, out = o.ref, node = node,
           shape = xm.shape, dtype = xm.dtype }
end

-- node's row-softmax form, when it is softmax or log_softmax over the last dimension of a
-- float tensor with no dtype conversion: {log =, x =, out =, D =, node =}; else nil
function M.rowsoftmax(node, vm)
  if (node.name ~= "softmax" and node.name ~= "log_softmax") or node.nres ~= 1 or node.nargs > 3 then return nil end
  local o, a = node.outs[1], node.args
  if not o.ref or o.alias or not (a[1] and a[1].ref) then return nil end
  if a[3] and (a[3].ref or a[3].tbl or a[3].const ~= nil) then return nil end
  local xm = vm[a[1].ref]
  local nd = #xm.shape
  if not row_dtype(xm.dtype) or nd == 0 or vm[o.ref].dtype ~= xm.dtype then return nil end
  local dim = a[2] and a[2].const
  if dim ~= -1 and dim ~= nd then return nil end
  local D = xm.shape[nd]
  if D == 0 then return nil end
  return { log = node.name == "log_softmax", x = a[1].ref, out = o.ref, D = D, node = node }
end

-- node's reduction form, when it is a sum or mean of a float tensor over its last dimension
-- (keepdim or not) or over all its elements, with no dtype conversion:
-- {op = "sum"|"mean", all = bool, x =, out =, D =, node =}; else nil
function M.reduction(node, vm)
  if (node.name ~= "sum" and node.name ~= "mean") or node.nres ~= 1 or node.nargs > 3 then return nil end
  local o, a = node.outs[1], node.args
  if not o.ref or o.alias or not (a[1] and a[1].ref) then return nil end
  local xm = vm[a[1].ref]
  local nd = #xm.shape
  if not row_dtype(xm.dtype) or vm[o.ref].dtype ~= xm.dtype or numel(xm.shape) == 0 then return nil end
  local r = { op = node.name, x = a[1].ref, out = o.ref, node = node }
  if node.nargs == 1 then
    r.all = true
    return r
  end
  local dim = a[2].const
  if nd == 0 or (dim ~= -1 and dim ~= nd) then return nil end
  local opt = a[3]
  if opt then
    if opt.ref or opt.tbl then return nil end
    local c = opt.const
    if type(c) == "table" then
      for k, v in pairs(c) do if k ~= "keepdim" or type(v) ~= "boolean" then return nil end end
    elseif c ~= nil and type(c) ~= "boolean" then
      return nil
    end
  end
  r.D = xm.shape[nd]
  return r
end

-- ---- scheduling ----

--- plan(graph): the steps to run: {kind = "node", node =} or {kind = "kernel", ...}
function M.plan(graph, opts)
  local steps = {}
  local vm = graph.value_meta
  -- uses of each value after node i: outputs count as uses at the end
  local last_use = {}
  local function mark(tpl, i)
    if tpl.ref then last_use[tpl.ref] = math.max(last_use[tpl.ref] or 0, i)
    elseif tpl.tbl then for _, x in pairs(tpl.tbl) do mark(x, i) end end
  end
  for i, node in ipairs(graph.nodes) do
    for k = 1, node.nargs do mark(node.args[k], i) end
  end
  local END = #graph.nodes + 1
  for k = 1, graph.noutputs do mark(graph.outputs[k], END) end

  local group = nil
  local function close()
    if not group then return end
    -- (a group of one op is kept while a row op or a reduction may fuse with it; alone, it
    -- becomes its node again below)
    steps[#steps + 1] = { kind = "group", group = group }
    group = nil
  end
  for i, node in ipairs(graph.nodes) do
    local pw = M.pointwise(node, vm)
    if pw and group and (group.dtype ~= pw.dtype or not same_shape(group.shape, pw.shape)) then close() end
    if pw then
      group = group or { nodes = {}, shape = pw.shape, dtype = pw.dtype, first = i }
      pw.node, pw.index = node, i
      pw.out = node.outs[1].ref
      group.nodes[#group.nodes + 1] = pw
      group.last = i
    else
      close()
      steps[#steps + 1] = { kind = "node", node = node }
    end
  end
  close()
  -- each group: its inputs (values made before it), its outputs (values used after it)
  for _, s in ipairs(steps) do
    if s.kind == "group" then
      local g = s.group
      local made, inputs, seen = {}, {}, {}
      for _, pw in ipairs(g.nodes) do
        for _, a in ipairs({ pw.a, pw.b }) do
          if a and a.ref and not made[a.ref] and not seen[a.ref] then
            seen[a.ref] = true
            inputs[#inputs + 1] = a.ref
          end
        end
        made[pw.out] = true
      end
      local outputs = {}
      for _, pw in ipairs(g.nodes) do
        if (last_use[pw.out] or 0) > g.last then outputs[#outputs + 1] = pw.out end
      end
      g.inputs, g.outputs = inputs, outputs
    end
  end
  -- a layer_norm whose result feeds the pointwise group right after it: one kernel per row
  -- (the row's statistics, then the normalized values go straight into the group's ops)
  local merged = {}
  local i = 1
  while i <= #steps do
    local s, nxt = steps[i], steps[i + 1]
    local rn = s.kind == "node" and nxt and nxt.kind == "group" and M.rownorm(s.node, vm)
    local g = nxt and nxt.group
    local feeds = false
    if rn and g.dtype == rn.dtype and same_shape(g.shape, rn.shape) then
      for _, v in ipairs(g.inputs) do if v == rn.out then feeds = true end end
    end
    -- a pointwise group whose result (used by nothing else) goes into a softmax over rows:
    -- the group's values are stored in the softmax's output row, which is then normalized
    local sm = not feeds and s.kind == "group" and nxt and nxt.kind == "node" and M.rowsoftmax(nxt.node, vm)
    local into = false
    if sm and s.group.dtype == vm[sm.x].dtype and last_use[sm.x] == s.group.last + 1 then
      for _, v in ipairs(s.group.outputs) do if v == sm.x then into = true end end
    end
    if feeds then
      merged[#merged + 1] = { kind = "rowgroup", norm = rn, group = g,
                              keep_norm = (last_use[rn.out] or 0) > g.last }
      i = i + 2
    elseif into and graph.nodes[s.group.last + 1] == nxt.node then
      merged[#merged + 1] = { kind = "softmaxgroup", softmax = sm, group = s.group }
      i = i + 2
    else
      -- a pointwise group whose result (used by nothing else) goes into a sum or mean right
      -- after it: the values are summed as they are made, never stored
      local red = s.kind == "group" and nxt and nxt.kind == "node" and graph.nodes[s.group.last + 1] == nxt.node
        and M.reduction(nxt.node, vm)
      if red and last_use[red.x] == s.group.last + 1 and vm[red.x].dtype == s.group.dtype then
        local ok = false
        for _, v in ipairs(s.group.outputs) do if v == red.x then ok = true end end
        if ok and same_shape(vm[red.x].shape, s.group.shape) then
          merged[#merged + 1] = { kind = "reducegroup", reduce = red, group = s.group }
          i = i + 2
          goto continue
        end
      end
      if s.kind == "group" and #s.group.nodes == 1 then
        merged[#merged + 1] = { kind = "node", node = s.group.nodes[1].node }
      else
        merged[#merged + 1] = s
      end
      i = i + 1
    end
    ::continue::
  end
  return merged
end

-- ---- code generation ----

local function num_literal(x, T)
  if x == math.huge then return T == "float" and "INFINITY" or "((double)INFINITY)" end
  if x == -math.huge then return T == "float" and "(-INFINITY)" or "(-(double)INFINITY)" end
  if x ~= x then return "NAN" end
  local s = ("%.17g"):format(x)
  if not s:find("[%.eE]") then s = s .. ".0" end
  return T == "float" and "((float)" .. s .. ")" or s
end

-- ---- sizes as kernel parameters (dynamic shapes) ----
-- A kernel made for a dynamic graph (sz given to the generators below) reads the sizes and
-- strides that may change from call to call from an int64 array, its last pointer (loaded
-- into the locals z0, z1, ... at its top), instead of having them as constants: its source,
-- and so its cache key, is then the same for every size, and one compiled kernel serves them
-- all. What makes the code fast stays in the source as literals, so that a change of it
-- makes another kernel: sizes and strides of 0 and 1 (which dims are broadcast, whether the
-- innermost dim is contiguous), the rank, dtypes, the ops and their constants. sz.dyn(v,
-- what, d) says whether dim d of value v's sizes (what = "shape") or strides ("stride") may
-- change; the others are literals too, as in a specialized kernel. Without sz a generator
-- writes every size as a constant (a specialized graph's kernels).
local Sizes = {}
Sizes.__index = Sizes

--- sizes(dyn): the size parameters of one kernel being generated; after the generator ran,
--- sizes.values is the array the kernel takes as its last pointer (empty: it takes none)
function M.sizes(dyn) return setmetatable({ dyn = dyn, values = {}, slot = {} }, Sizes) end

-- the C expression of an integer: a parameter where dynamic (0 and 1 stay literal), named
-- by key within the kernel (one parameter per key), else a literal
function Sizes:num(key, value, dynamic)
  if not dynamic or value == 0 or value == 1 then return ("%d"):format(value) end
  local k = self.slot[key]
  if not k then
    self.values[#self.values + 1] = value
    k = #self.values - 1
    self.slot[key] = k
  end
  return "z" .. k
end

-- is any of dims lo .. hi of value v's sizes dynamic?
function Sizes:any(v, lo, hi)
  for d = lo, hi do if self.dyn(v, "shape", d) then return true end end
  return false
end

-- after generation: the parameters' pointer (slot nptr) and their loads put at the kernel's
-- top (lines[3], after the helpers and the function's first line), their extent appended
function Sizes:finish(lines, nptr, extents)
  if #self.values == 0 then return end
  local loads = {}
  for k = 0, #self.values - 1 do loads[#loads + 1] = ("z%d = sz[%d]"):format(k, k) end
  table.insert(lines, 3, ("  const int64_t *restrict sz = (const int64_t *)p[%d];\n  const int64_t %s;"):format(
    nptr, table.concat(loads, ", ")))
  extents[#extents + 1] = #self.values
end

-- a number of a row kernel's frame (D, R, ...): its literal, or with sz its parameter where dynamic
local function size_lit(sz, key, value, dynamic)
  if sz then return sz:num(key, value, dynamic) end
  return ("%d"):format(value)
end

-- the C offset expression of element i of the output in a tensor of this meta (broadcast
-- to out_shape): i itself when the layouts agree, else i decomposed by the output's sizes
-- (rows: in a row kernel, where i = r * D + c with D the last size, so the last dimension's
-- index is c and the others come from r, without a division per element). With sz (a
-- dynamic kernel; v the tensor's value, ov the output's), the sizes and strides marked
-- dynamic are parameters.
local function offset_expr(meta, out_shape, rows, sz, v, ov)
  local shape, stride = meta.shape, meta.stride
  local n = #out_shape
  local off = n - #shape
  -- strides per output dim (0 where broadcast)
  local st = {}
  for d = 1, n do
    local sd = d - off
    if sd < 1 or shape[sd] == 1 then st[d] = 0 else st[d] = stride[sd] end
  end
  local cs = contiguous_strides(out_shape)
  local same = true
  for d = 1, n do if out_shape[d] ~= 1 and st[d] ~= cs[d] then same = false end end
  if same then return "i" end
  local all0 = true
  for d = 1, n do if out_shape[d] ~= 1 and st[d] ~= 0 then all0 = false end end
  if all0 then return "0" end
  local terms = {}
  for d = 1, n do
    if out_shape[d] ~= 1 and st[d] ~= 0 then
      local inner = cs[d]
      local e
      if sz then
        -- the same terms, each number a parameter where it may change
        if rows and d == n then
          e = "c"
        else
          local idx, hi = rows and "r" or "i", rows and n - 1 or n
          if rows then inner = inner // out_shape[n] end
          local q = sz:num(("q%s%d"):format(idx, d), inner, sz:any(ov, d + 1, hi))
          e = q == "1" and idx or ("(%s / %s)"):format(idx, q)
          if d > 1 then e = ("(%s %% %s)"):format(e, sz:num("n" .. d, out_shape[d], sz.dyn(ov, "shape", d))) end
        end
        local sd = d - off
        local s = sz:num(("s%d.%d"):format(v, sd), st[d], sz.dyn(v, "stride", sd))
        terms[#terms + 1] = s == "1" and e or ("%s * %s"):format(e, s)
      else
        if rows and d == n then
          e = "c"
        elseif rows then
          inner = inner // out_shape[n]
          e = inner == 1 and "r" or ("(r / %d)"):format(inner)
          if d > 1 then e = ("(%s %% %d)"):format(e, out_shape[d]) end
        else
          e = inner == 1 and "i" or ("(i / %d)"):format(inner)
          if d > 1 then e = ("(%s %% %d)"):format(e, out_shape[d]) end
        end
        terms[#terms + 1] = st[d] == 1 and e or ("%s * %d"):format(e, st[d])
      end
    end
  end
  return table.concat(terms, " + ")
end

-- the elements from a tensor's first one to its last, +1 (0 when empty)
local function extent(m)
  local e = 1
  for d = 1, #m.shape do if m.shape[d] == 0 then return 0 end; e = e + (m.shape[d] - 1) * m.stride[d] end
  return e
end

-- the loop body's loads of the inputs and the group's nodes, each into a register v<id>;
-- returns the operand renderer and the registers
-- (shared by the forward kernel and the backward one, which recomputes the forward); sz:
-- the size parameters of a dynamic kernel
local function emit_forward_body(lines, g, vm, T, preset, rows, sz)
  local reg = {}
  local ov = sz and g.nodes[#g.nodes].out
  for k, v in ipairs(g.inputs) do
    if preset and preset[v] then
      reg[v] = preset[v]
    else
      lines[#lines + 1] = ("    const %s v%d = in%d[%s];"):format(T, v, k, offset_expr(vm[v], g.shape, rows, sz, v, ov))
      reg[v] = "v" .. v
    end
  end
  local function operand(a)
    if a.ref then return reg[a.ref] end
    return num_literal(a.num, T)
  end
  for _, pw in ipairs(g.nodes) do
    local e
    if pw.kind == "unary" then
      e = UNARY[pw.op](operand(pw.a), T)
    else
      local b = operand(pw.b)
      if pw.alpha and pw.alpha ~= 1 then b = ("(%s * %s)"):format(num_literal(pw.alpha, T), b) end
      e = BINARY[pw.op](operand(pw.a), b, T)
    end
    lines[#lines + 1] = ("    const %s v%d = %s;"):format(T, pw.out, e)
    reg[pw.out] = "v" .. pw.out
  end
  return operand, reg
end

-- does a dynamic pointwise kernel over shape go by rows of the last dimension? Where an input
-- is indexed other than flat (broadcast, or another layout) and the sizes are parameters, a
-- division per element by a parameter would cost more than the work (and not vectorize): by
-- rows, the other dims' indices are computed once per row and the inner loop runs over the
-- columns c, as the row kernels do
local function by_rows(g, vm)
  local n = #g.shape
  if n < 2 or g.shape[n] == 1 then return false end
  for _, v in ipairs(g.inputs) do
    local e = offset_expr(vm[v], g.shape)
    if e ~= "i" and e ~= "0" then return true end
  end
  return false
end

-- a pointwise kernel's loop over elements begin .. end-1 around body (lines at 4 spaces,
-- element i): flat, or (rows) by rows of the last dimension, D its size (a C expression)
local function emit_elem_loop(lines, body, rows, D)
  if not rows then
    lines[#lines + 1] = "  for (int64_t i = begin; i < end; i++) {"
    for _, l in ipairs(body) do lines[#lines + 1] = l end
    lines[#lines + 1] = "  }"
    return
  end
  lines[#lines + 1] = ("  const int64_t D = %s;"):format(D)
  lines[#lines + 1] = "  int64_t r = begin / D, c0 = begin - r * D;"
  lines[#lines + 1] = "  for (int64_t i0 = begin; i0 < end; r++) {"
  lines[#lines + 1] = "    const int64_t ce = end - i0 + c0 < D ? end - i0 + c0 : D;"
  lines[#lines + 1] = "    #pragma GCC ivdep"
  lines[#lines + 1] = "    for (int64_t c = c0; c < ce; c++) {"
  lines[#lines + 1] = "      const int64_t i = r * D + c;"
  for _, l in ipairs(body) do lines[#lines + 1] = "  " .. l end
  lines[#lines + 1] = "    }"
  lines[#lines + 1] = "    i0 += ce - c0;"
  lines[#lines + 1] = "    c0 = 0;"
  lines[#lines + 1] = "  }"
end

-- the last size of a dynamic pointwise kernel's loop by rows (its parameter where dynamic)
local function last_size(g, sz)
  local n = #g.shape
  return sz:num("n" .. n, g.shape[n], sz.dyn(g.nodes[#g.nodes].out, "shape", n))
end

--- source(group, value_meta, name, sz): C source of the group's kernel and the tensor order it
--- takes (inputs, then outputs, then sz's parameters where it has some), with the elements each
--- tensor's pointer must reach; sz (optional, from sizes()): a dynamic kernel
function M.source(g, vm, name, sz)
  local T = ctype(g.dtype)
  local lines = { HELPERS, ("void %s(int64_t begin, int64_t end, char *const *p) {"):format(name) }
  local order, extents = {}, {}
  for k, v in ipairs(g.inputs) do
    lines[#lines + 1] = ("  const %s *restrict in%d = (const %s *)p[%d];"):format(T, k, T, k - 1)
    order[#order + 1] = v
    extents[#extents + 1] = extent(vm[v])
  end
  local nin = #g.inputs
  for k, v in ipairs(g.outputs) do
    lines[#lines + 1] = ("  %s *restrict out%d = (%s *)p[%d];"):format(T, k, T, nin + k - 1)
    order[#order + 1] = v
    extents[#extents + 1] = numel(g.shape)
  end
  if sz then
    local rows, body = by_rows(g, vm), {}
    emit_forward_body(body, g, vm, T, nil, rows, sz)
    for k, v in ipairs(g.outputs) do body[#body + 1] = ("    out%d[i] = v%d;"):format(k, v) end
    emit_elem_loop(lines, body, rows, rows and last_size(g, sz))
    lines[#lines + 1] = "}"
    sz:finish(lines, #order, extents)
    return table.concat(lines, "\n") .. "\n", order, extents
  end
  -- a broadcast or strided input: by rows and columns, its offset without a division per
  -- element (which GCC does not vectorize: x * sigmoid(x + b) * y + c with a broadcast row and
  -- column took 57 ms flat, 4.5 ms by rows); inputs laid out as the output: one flat loop
  local rows, body = by_rows(g, vm), {}
  emit_forward_body(body, g, vm, T, nil, rows)
  for k, v in ipairs(g.outputs) do body[#body + 1] = ("    out%d[i] = v%d;"):format(k, v) end
  emit_elem_loop(lines, body, rows, rows and tostring(g.shape[#g.shape]))
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n", order, extents
end


-- ---- backward ----

-- the contribution of node pw to the gradient of its operand `which` ("a" or "b"), given
-- g (the gradient of its result, a C expression), its operands' C expressions a, b and its
-- result y; nil when the op has no rule here
local SQRT1_2PI = "0.39894228040143267794"
local DERIV = {
  neg = function(g) return "(-" .. g .. ")" end,
  exp = function(g, a, b, y) return g .. " * " .. y end,
  log = function(g, a) return g .. " / " .. a end,
  sqrt = function(g, a, b, y, T) return ("%s / (%s * %s)"):format(g, T == "float" and "2.0f" or "2.0", y) end,
  sin = function(g, a, b, y, T) return ("%s * %s"):format(g, fn1("cos")(a, T)) end,
  cos = function(g, a, b, y, T) return ("-(%s * %s)"):format(g, fn1("sin")(a, T)) end,
  tan = function(g, a, b, y) return ("%s * (1 + %s * %s)"):format(g, y, y) end,
  tanh = function(g, a, b, y) return ("%s * (1 - %s * %s)"):format(g, y, y) end,
  sigmoid = function(g, a, b, y) return ("%s * %s * (1 - %s)"):format(g, y, y) end,
  silu = function(g, a, b, y, T)
    local sg = ("lt_sigmoid_%s(%s)"):format(T, a)
    return ("%s * (%s * (1 + %s * (1 - %s)))"):format(g, sg, a, sg)
  end,
  relu = function(g, a) return ("(%s > 0 ? %s : 0)"):format(a, g) end,
  gelu = function(g, a, b, y, T)
    local e = T == "float" and "lt_exp_float" or "exp"
    local erf = T == "float" and "erff" or "erf"
    return ("%s * (0.5 * (1 + %s(%s * 0.70710678118654752440)) + %s * %s * %s(-0.5 * %s * %s))"):format(
      g, erf, a, a, SQRT1_2PI, e, a, a)
  end,
  gelu_tanh = function(g, a, b, y, T)
    local th = T == "float" and "tanhf" or "tanh"
    local inner = ("0.79788456080286535588 * (%s + 0.044715 * %s * %s * %s)"):format(a, a, a, a)
    local t = ("%s(%s)"):format(th, inner)
    return ("%s * (0.5 * (1 + %s) + 0.5 * %s * (1 - %s * %s) * 0.79788456080286535588 * (1 + 0.134145 * %s * %s))"):format(
      g, t, a, t, t, a, a)
  end,
  erf = function(g, a, b, y, T)
    local e = T == "float" and "lt_exp_float" or "exp"
    return ("%s * 1.12837916709551257390 * %s(-(%s * %s))"):format(g, e, a, a)
  end,
  expm1 = function(g, a, b, y) return ("%s * (%s + 1)"):format(g, y) end,
  log1p = function(g, a) return ("%s / (1 + %s)"):format(g, a) end,
  atan = function(g, a) return ("%s / (1 + %s * %s)"):format(g, a, a) end,
  log2 = function(g, a) return ("%s / (%s * 0.69314718055994530942)"):format(g, a) end,
  exp2 = function(g, a, b, y) return ("%s * %s * 0.69314718055994530942"):format(g, y) end,
  abs = function(g, a) return ("(%s > 0 ? %s : (%s < 0 ? -%s : 0))"):format(a, g, a, g) end,
  floor = function() return "0" end, ceil = function() return "0" end, trunc = function() return "0" end,
  rsqrt = function(g, a, b, y) return ("(-0.5 * %s * %s * %s * %s)"):format(g, y, y, y) end,
  reciprocal = function(g, a, b, y) return ("(-%s * %s * %s)"):format(g, y, y) end,
  square = function(g, a) return ("2 * %s * %s"):format(a, g) end,
}
local DERIV2 = {
  add = function(which, g) return g end,
  sub = function(which, g) return which == "a" and g or "(-" .. g .. ")" end,
  mul = function(which, g, a, b) return which == "a" and (g .. " * " .. b) or (g .. " * " .. a) end,
  div = function(which, g, a, b) return which == "a" and (g .. " / " .. b) or ("-(%s * %s / (%s * %s))"):format(g, a, b, b) end,
  -- as eager's: where both are equal, each gets half
  maximum = function(which, g, a, b)
    local x, o = which == "a" and a or b, which == "a" and b or a
    return ("(%s > %s ? %s : (%s == %s ? 0.5 * %s : 0))"):format(x, o, g, x, o, g)
  end,
  minimum = function(which, g, a, b)
    local x, o = which == "a" and a or b, which == "a" and b or a
    return ("(%s < %s ? %s : (%s == %s ? 0.5 * %s : 0))"):format(x, o, g, x, o, g)
  end,
  -- a tensor to a number's power
  pow = function(which, g, a, b, T, bnum)
    if which ~= "a" or bnum == nil then return nil end
    return ("%s * %s * %s(%s, %s)"):format(g, b, T == "float" and "powf" or "pow", a, num_literal(bnum - 1, T))
  end,
}

--- grad_aliases(g, seeded): for each group input k whose gradient is exactly the incoming
--- gradient of one output (reached through `add`s and `sub`'s first operand only, the input
--- used once, as in a residual x + f(x)), that output's value; seeded[v] is true for the
--- outputs whose gradient comes in as a tensor. Such a gradient is that tensor (summed down
--- to the input's shape), as eager's add passes it on: the kernel need not write a copy.
function M.grad_aliases(g, seeded)
  local uses, is_out = {}, {}
  for _, v in ipairs(g.outputs) do is_out[v] = true end
  for _, pw in ipairs(g.nodes) do
    for _, which in ipairs({ "a", "b" }) do
      local a = pw[which]
      if a and a.ref then
        uses[a.ref] = uses[a.ref] or {}
        table.insert(uses[a.ref], { pw = pw, which = which })
      end
    end
  end
  local function alias(v)
    local u = uses[v] or {}
    if is_out[v] then return (#u == 0 and seeded[v]) and v or nil end
    if #u ~= 1 then return nil end
    local pw, which = u[1].pw, u[1].which
    if (pw.op == "add" and (which == "a" or pw.alpha == nil or pw.alpha == 1)) or (pw.op == "sub" and which == "a") then
      return alias(pw.out)
    end
    return nil
  end
  local res = {}
  for k, v in ipairs(g.inputs) do res[k] = alias(v) end
  return res
end

--- differentiable(g): can the group's backward be one generated kernel?
function M.differentiable(g)
  for _, pw in ipairs(g.nodes) do
    if pw.kind == "unary" then
      if not DERIV[pw.op] then return false end
    else
      if not DERIV2[pw.op] then return false end
      if pw.op == "pow" and (pw.b.ref or not pw.a.ref) then return false end
    end
  end
  return true
end

-- the loop body's adjoints: every input and node value v gets a register d<v>, starting at
-- seed[v] (a C expression: an output's incoming gradient) or 0, then each node's derivative
-- rules in reverse order (operand, reg: from emit_forward_body, which must come first)
local function emit_backward_body(lines, g, T, operand, reg, seed)
  local first = #lines + 1
  for _, v in ipairs(g.inputs) do lines[#lines + 1] = ("    %s d%d = %s;"):format(T, v, seed[v] or "0") end
  for _, pw in ipairs(g.nodes) do
    lines[#lines + 1] = ("    %s d%d = %s;"):format(T, pw.out, seed[pw.out] or "0")
  end
  for i = #g.nodes, 1, -1 do
    local pw = g.nodes[i]
    local gexpr, y = "d" .. pw.out, reg[pw.out]
    if pw.kind == "unary" then
      if pw.a.ref then
        lines[#lines + 1] = ("    d%d += %s;"):format(pw.a.ref, DERIV[pw.op](gexpr, operand(pw.a), nil, y, T))
      end
    else
      local a, b = operand(pw.a), operand(pw.b)
      local alpha = pw.alpha and pw.alpha ~= 1 and num_literal(pw.alpha, T) or nil
      local bscaled = alpha and ("(%s * %s)"):format(alpha, b) or b
      if pw.a.ref then
        lines[#lines + 1] = ("    d%d += %s;"):format(pw.a.ref, DERIV2[pw.op]("a", gexpr, a, bscaled, T, pw.b.num))
      end
      if pw.b.ref then
        local d = DERIV2[pw.op]("b", gexpr, a, bscaled, T, nil)
        if alpha then d = ("(%s * %s)"):format(alpha, d) end
        lines[#lines + 1] = ("    d%d += %s;"):format(pw.b.ref, d)
      end
    end
  end
  if T == "float" then
    -- the rules' decimal constants as float literals: no double arithmetic in a float loop
    for i = first, #lines do
      if lines[i]:find("^    d%d+ %+=") then lines[i] = lines[i]:gsub("(%f[%w%.]%d+%.%d+)(%f[^%w%.])", "%1f%2") end
    end
  end
end

--- backward_source(group, value_meta, name, need, frame): C source of the kernel that takes
--- the group's inputs and the gradients of its outputs and writes, at the output's shape, the
--- gradient of each input k with need[k]; it recomputes the forward values it needs.
--- frame (optional; compile/cuda.lua's) makes the kernel around the loop body instead:
--- frame(params, body) with params {name =, const =} in the pointers' order; sz (optional, from
--- sizes(); not with frame): a dynamic kernel, taking its parameters after the gradients
function M.backward_source(g, vm, name, need, frame, sz)
  local T = ctype(g.dtype) or "float"     -- float16 and bfloat16 (CUDA only) compute in float
  local lines = { HELPERS, ("void %s(int64_t begin, int64_t end, char *const *p) {"):format(name) }
  local extents, slot, params = {}, 0, {}
  for k, v in ipairs(g.inputs) do
    lines[#lines + 1] = ("  const %s *restrict in%d = (const %s *)p[%d];"):format(T, k, T, slot)
    slot = slot + 1
    extents[#extents + 1] = extent(vm[v])
    params[#params + 1] = { name = "in" .. k, const = true }
  end
  for k = 1, #g.outputs do
    lines[#lines + 1] = ("  const %s *restrict gout%d = (const %s *)p[%d];"):format(T, k, T, slot)
    slot = slot + 1
    extents[#extents + 1] = numel(g.shape)
    params[#params + 1] = { name = "gout" .. k, const = true }
  end
  for k in ipairs(g.inputs) do
    if need[k] then
      lines[#lines + 1] = ("  %s *restrict gin%d = (%s *)p[%d];"):format(T, k, T, slot)
      slot = slot + 1
      extents[#extents + 1] = numel(g.shape)
      params[#params + 1] = { name = "gin" .. k, const = false }
    end
  end
  if sz then
    local rows, body = by_rows(g, vm), {}
    local operand, reg = emit_forward_body(body, g, vm, T, nil, rows, sz)
    local seed = {}
    for k, v in ipairs(g.outputs) do seed[v] = ("gout%d[i]"):format(k) end
    emit_backward_body(body, g, T, operand, reg, seed)
    for k, v in ipairs(g.inputs) do
      if need[k] then body[#body + 1] = ("    gin%d[i] = d%d;"):format(k, v) end
    end
    emit_elem_loop(lines, body, rows, rows and last_size(g, sz))
    lines[#lines + 1] = "}"
    sz:finish(lines, slot, extents)
    return table.concat(lines, "\n") .. "\n", extents
  end
  -- (the CUDA generator's frame takes a flat body; the C kernel goes by rows where an input is
  -- broadcast or strided, as the forward kernel does)
  local rows = not frame and by_rows(g, vm)
  local body = {}
  local operand, reg = emit_forward_body(body, g, vm, T, nil, rows)
  local seed = {}
  for k, v in ipairs(g.outputs) do seed[v] = ("gout%d[i]"):format(k) end
  emit_backward_body(body, g, T, operand, reg, seed)
  for k, v in ipairs(g.inputs) do
    if need[k] then body[#body + 1] = ("    gin%d[i] = d%d;"):format(k, v) end
  end
  if frame then return frame(params, body), extents end
  emit_elem_loop(lines, body, rows, rows and tostring(g.shape[#g.shape]))
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n", extents
end

-- a row kernel's first lines, and ptr(decl, value, extent), which declares its next pointer
-- (decl has a %d for its slot) and records the value and the elements it must reach
local function kernel_head(name)
  local lines = { HELPERS, ("LT_WIDE void %s(int64_t begin, int64_t end, char *const *p) {"):format(name) }
  local order, extents = {}, {}
  local function ptr(decl, v, e)
    lines[#lines + 1] = (decl):format(#order)
    order[#order + 1] = v
    extents[#extents + 1] = e
  end
  return lines, order, extents, ptr
end

-- a row kernel's frame numbers for sz (nil: literals): D (the last size), R (the rows), N
-- (the elements), each its parameter where the sizes it comes from may change
-- (fields made when read: a parameter is taken only where the kernel uses it)
local function frame_sizes(sz, g)
  local nd, D = #g.shape, #g.shape > 0 and g.shape[#g.shape] or 1
  local n = numel(g.shape)
  if not sz then
    return { D = ("%d"):format(D), R = ("%d"):format(n // D), N = ("%d"):format(n), dynD = false }
  end
  local ov = g.nodes[#g.nodes].out
  local dynD = nd > 0 and sz.dyn(ov, "shape", nd)
  local make = {
    D = function() return sz:num("n" .. nd, D, dynD) end,
    R = function() return sz:num("R", n // D, sz:any(ov, 1, nd - 1)) end,
    N = function() return sz:num("N", n, sz:any(ov, 1, nd)) end,
  }
  return setmetatable({ dynD = dynD }, { __index = function(t, k) local v = make[k](); rawset(t, k, v); return v end })
end

-- body lines (emitted at 4 spaces) moved into a row kernel's inner loop (6 spaces)
local function append_indented(lines, body)
  for _, l in ipairs(body) do lines[#lines + 1] = "  " .. l end
end

-- the row xr's mean and 1/std into tm, trs (of type T): in double, in 8 independent lanes
-- (vectorizable without reassociation), two passes as the eager kernel does
local function emit_row_stats(lines, T, eps)
  lines[#lines + 1] = [[
    double s8[8] = {0}, q8[8] = {0}, s = 0, q = 0;
    int64_t j = 0;
    for (; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) s8[l] += (double)xr[j + l];
    for (; j < D; j++) s += (double)xr[j];
    for (int l = 0; l < 8; l++) s += s8[l];
    const double mean = s / (double)D;
    for (j = 0; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) { double d = (double)xr[j + l] - mean; q8[l] += d * d; }
    for (; j < D; j++) { double d = (double)xr[j] - mean; q += d * d; }
    for (int l = 0; l < 8; l++) q += q8[l];]]
  lines[#lines + 1] = ("    const %s tm = (%s)mean, trs = (%s)(1.0 / sqrt(q / (double)D + %s));"):format(
    T, T, T, num_literal(eps, "double"))
end

--- row_source(rowgroup, value_meta, name): C source of a layer_norm fused with the pointwise
--- group it feeds, over rows: the tensors it takes (the norm's input, weight and bias, the
--- group's other inputs, the group's outputs, then the norm's result where it is kept) and
--- the elements each pointer must reach (then sz's parameters: sz, optional, a dynamic kernel)
function M.row_source(rg, vm, name, sz)
  local rn, g = rg.norm, rg.group
  local T = ctype(g.dtype)
  local D, n = rn.D, numel(g.shape)
  local lines, order, extents, ptr = kernel_head(name)
  ptr("  const " .. T .. " *restrict nx = (const " .. T .. " *)p[%d];", rn.x, n)
  if rn.w then ptr("  const " .. T .. " *restrict nw = (const " .. T .. " *)p[%d];", rn.w, D) end
  if rn.b then ptr("  const " .. T .. " *restrict nb = (const " .. T .. " *)p[%d];", rn.b, D) end
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out then
      ptr(("  const %s *restrict in%d = (const %s *)p[%%d];"):format(T, k, T), v, extent(vm[v]))
    end
  end
  for k, v in ipairs(g.outputs) do
    ptr(("  %s *restrict out%d = (%s *)p[%%d];"):format(T, k, T), v, n)
  end
  if rg.keep_norm then ptr("  " .. T .. " *restrict nout = (" .. T .. " *)p[%d];", rn.out, n) end
  lines[#lines + 1] = ("  const int64_t D = %s;"):format(frame_sizes(sz, g).D)
  lines[#lines + 1] = "  for (int64_t r = begin; r < end; r++) {"
  lines[#lines + 1] = "    const " .. T .. " *restrict xr = nx + r * D;"
  emit_row_stats(lines, T, rn.eps)
  lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) {"
  lines[#lines + 1] = "      const int64_t i = r * D + c;"
  local e = "(xr[c] - tm) * trs"
  if rn.w then e = e .. " * nw[c]" end
  if rn.b then e = e .. " + nb[c]" end
  lines[#lines + 1] = ("      const %s vn = %s;"):format(T, e)
  if rg.keep_norm then lines[#lines + 1] = "      nout[i] = vn;" end
  local body = {}
  emit_forward_body(body, g, vm, T, { [rn.out] = "vn" }, true, sz)
  for _, l in ipairs(body) do lines[#lines + 1] = "  " .. l end
  for k, v in ipairs(g.outputs) do
    lines[#lines + 1] = ("      out%d[i] = v%d;"):format(k, v)
  end
  lines[#lines + 1] = "    }"
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  if sz then sz:finish(lines, #order, extents) end
  return table.concat(lines, "\n") .. "\n", order, extents
end

--- softmax_source(softmaxgroup, value_meta, name): C source of a pointwise group fused with
--- the softmax (or log_softmax) over rows of one of its results: the tensors it takes (the
--- group's inputs, its other outputs, the softmax's output) and the elements each must reach
--- (then sz's parameters: sz, optional, a dynamic kernel)
function M.softmax_source(sg, vm, name, sz)
  local sm, g = sg.softmax, sg.group
  local T = ctype(g.dtype)
  local D, n = sm.D, numel(g.shape)
  local lines, order, extents, ptr = kernel_head(name)
  for k, v in ipairs(g.inputs) do
    ptr(("  const %s *restrict in%d = (const %s *)p[%%d];"):format(T, k, T), v, extent(vm[v]))
  end
  for k, v in ipairs(g.outputs) do
    if v ~= sm.x then ptr(("  %s *restrict out%d = (%s *)p[%%d];"):format(T, k, T), v, n) end
  end
  ptr("  " .. T .. " *restrict sout = (" .. T .. " *)p[%d];", sm.out, n)
  local EXP = T == "float" and "lt_exp_float" or "exp"
  lines[#lines + 1] = ("  const int64_t D = %s;"):format(frame_sizes(sz, g).D)
  lines[#lines + 1] = "  for (int64_t r = begin; r < end; r++) {"
  lines[#lines + 1] = "    " .. T .. " *restrict so = sout + r * D;"
  lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) {"
  lines[#lines + 1] = "      const int64_t i = r * D + c;"
  local body = {}
  emit_forward_body(body, g, vm, T, nil, true, sz)
  for _, l in ipairs(body) do lines[#lines + 1] = "  " .. l end
  for k, v in ipairs(g.outputs) do
    if v ~= sm.x then lines[#lines + 1] = ("      out%d[i] = v%d;"):format(k, v) end
  end
  lines[#lines + 1] = ("      so[c] = v%d;"):format(sm.x)
  lines[#lines + 1] = "    }"
  -- the row's maximum and the sum of exponentials, each in 8 independent lanes (a NaN in
  -- the row makes the sum NaN, and so every result, as in eager)
  lines[#lines + 1] = ([[
    @T@ m8[8], m;
    int64_t j = 0;
    for (int l = 0; l < 8; l++) m8[l] = -INFINITY;
    for (; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) m8[l] = so[j + l] > m8[l] ? so[j + l] : m8[l];
    m = -INFINITY;
    for (int l = 0; l < 8; l++) m = m8[l] > m ? m8[l] : m;
    for (; j < D; j++) m = so[j] > m ? so[j] : m;
    double s8[8] = {0}, s = 0;]]):gsub("@T@", T)
  if sm.log then
    lines[#lines + 1] = ([[
    for (j = 0; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) s8[l] += (double)EXP(so[j + l] - m);
    for (; j < D; j++) s += (double)EXP(so[j] - m);
    for (int l = 0; l < 8; l++) s += s8[l];
    const @T@ lse = m + (@T@)log(s);
    for (j = 0; j < D; j++) so[j] = so[j] - lse;]]):gsub("EXP", EXP):gsub("@T@", T)
  else
    lines[#lines + 1] = ([[
    for (j = 0; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) { @T@ e = EXP(so[j + l] - m); so[j + l] = e; s8[l] += (double)e; }
    for (; j < D; j++) { @T@ e = EXP(so[j] - m); so[j] = e; s += (double)e; }
    for (int l = 0; l < 8; l++) s += s8[l];
    const @T@ inv = (@T@)(1.0 / s);
    for (j = 0; j < D; j++) so[j] *= inv;]]):gsub("EXP", EXP):gsub("@T@", T)
  end
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  if sz then sz:finish(lines, #order, extents) end
  return table.concat(lines, "\n") .. "\n", order, extents
end

-- elements per block of a sum over all elements: each block's sum (in double) is a partial
-- result of its own, so the total does not depend on how blocks are spread over threads
M.REDUCE_BLOCK = 8192

--- reduce_source(reducegroup, value_meta, name): C source of a pointwise group fused with the
--- sum (mean) that takes one of its results. The loop goes over rows of the last dimension
--- (so that broadcast inputs are indexed by row and column, without a division), summing
--- each value in 8 independent double lanes (vectorizable without reassociation). Over the
--- last dimension each row's sum (mean) is stored; over all elements, each block of rows
--- (about REDUCE_BLOCK elements) stores its sum as a double, the blocks' sums added by the
--- caller. It returns the source, the tensors it takes (the group's inputs, its other
--- outputs, then the result or the partial sums), the elements each must reach, the loop's
--- size (rows or blocks) and the elements per step of the loop. sz (optional): a dynamic
--- kernel, taking its parameters last
function M.reduce_source(rg, vm, name, sz)
  local red, g = rg.reduce, rg.group
  local T = ctype(g.dtype)
  local n = numel(g.shape)
  local D = #g.shape > 0 and g.shape[#g.shape] or 1
  local rows = n // D
  local lines, order, extents, ptr = kernel_head(name)
  for k, v in ipairs(g.inputs) do
    ptr(("  const %s *restrict in%d = (const %s *)p[%%d];"):format(T, k, T), v, extent(vm[v]))
  end
  for k, v in ipairs(g.outputs) do
    if v ~= red.x then ptr(("  %s *restrict out%d = (%s *)p[%%d];"):format(T, k, T), v, n) end
  end
  -- rows longer than a block (a 1-D tensor): blocks of elements, indexed flat
  local flat = red.all and D >= M.REDUCE_BLOCK
  local body = {}
  emit_forward_body(body, g, vm, T, nil, not flat, sz)
  for k, v in ipairs(g.outputs) do
    if v ~= red.x then body[#body + 1] = ("    out%d[i] = v%d;"):format(k, v) end
  end
  local fs = frame_sizes(sz, g)
  local function row(indent)
    lines[#lines + 1] = indent .. "for (j = 0; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) {"
    lines[#lines + 1] = indent .. "  const int64_t c = j + l, i = r * D + c;"
    for _, l in ipairs(body) do lines[#lines + 1] = indent .. l:sub(3) end
    lines[#lines + 1] = ("%s  s8[l] += (double)v%d;"):format(indent, red.x)
    lines[#lines + 1] = indent .. "}"
    lines[#lines + 1] = indent .. "for (; j < D; j++) {"
    lines[#lines + 1] = indent .. "  const int64_t c = j, i = r * D + c;"
    for _, l in ipairs(body) do lines[#lines + 1] = indent .. l:sub(3) end
    lines[#lines + 1] = ("%s  s += (double)v%d;"):format(indent, red.x)
    lines[#lines + 1] = indent .. "}"
  end
  lines[#lines + 1] = ("  const int64_t D = %s, R = %s;"):format(fs.D, fs.R)
  local size, per
  if flat then
    size, per = (n + M.REDUCE_BLOCK - 1) // M.REDUCE_BLOCK, M.REDUCE_BLOCK
    ptr("  double *restrict part = (double *)p[%d];", red.out, size)
    lines[#lines + 1] = ("  const int64_t N = %s, B = %d;"):format(fs.N, M.REDUCE_BLOCK)
    lines[#lines + 1] = "  for (int64_t blk = begin; blk < end; blk++) {"
    lines[#lines + 1] = "    const int64_t e = (blk + 1) * B < N ? (blk + 1) * B : N;"
    lines[#lines + 1] = "    double s8[8] = {0}, s = 0;"
    lines[#lines + 1] = "    int64_t j = blk * B;"
    lines[#lines + 1] = "    for (; j + 8 <= e; j += 8) for (int l = 0; l < 8; l++) {"
    lines[#lines + 1] = "      const int64_t i = j + l;"
    for _, l in ipairs(body) do lines[#lines + 1] = "    " .. l:sub(3) end
    lines[#lines + 1] = ("      s8[l] += (double)v%d;"):format(red.x)
    lines[#lines + 1] = "    }"
    lines[#lines + 1] = "    for (; j < e; j++) {"
    lines[#lines + 1] = "      const int64_t i = j;"
    for _, l in ipairs(body) do lines[#lines + 1] = "    " .. l:sub(3) end
    lines[#lines + 1] = ("      s += (double)v%d;"):format(red.x)
    lines[#lines + 1] = "    }"
    lines[#lines + 1] = "    for (int l = 0; l < 8; l++) s += s8[l];"
    lines[#lines + 1] = "    part[blk] = s;"
    lines[#lines + 1] = "  }"
  elseif red.all then
    local rb = math.max(1, M.REDUCE_BLOCK // D)
    size, per = (rows + rb - 1) // rb, rb * D
    ptr("  double *restrict part = (double *)p[%d];", red.out, size)
    lines[#lines + 1] = ("  const int64_t RB = %s;"):format(size_lit(sz, "RB", rb, fs.dynD))
    lines[#lines + 1] = "  for (int64_t blk = begin; blk < end; blk++) {"
    lines[#lines + 1] = "    const int64_t rend = (blk + 1) * RB < R ? (blk + 1) * RB : R;"
    lines[#lines + 1] = "    double s8[8] = {0}, s = 0;"
    lines[#lines + 1] = "    for (int64_t r = blk * RB; r < rend; r++) {"
    lines[#lines + 1] = "      int64_t j;"
    row("      ")
    lines[#lines + 1] = "    }"
    lines[#lines + 1] = "    for (int l = 0; l < 8; l++) s += s8[l];"
    lines[#lines + 1] = "    part[blk] = s;"
    lines[#lines + 1] = "  }"
  else
    size, per = rows, D
    ptr("  " .. T .. " *restrict res = (" .. T .. " *)p[%d];", red.out, size)
    lines[#lines + 1] = "  for (int64_t r = begin; r < end; r++) {"
    lines[#lines + 1] = "    double s8[8] = {0}, s = 0;"
    lines[#lines + 1] = "    int64_t j;"
    row("    ")
    lines[#lines + 1] = "    for (int l = 0; l < 8; l++) s += s8[l];"
    lines[#lines + 1] = ("    res[r] = (%s)(%s);"):format(T, red.op == "mean" and "s / (double)D" or "s")
    lines[#lines + 1] = "  }"
  end
  lines[#lines + 1] = "}"
  if sz then sz:finish(lines, #order, extents) end
  return table.concat(lines, "\n") .. "\n", order, extents, size, per
end

--- reduce_backward_source(reducegroup, value_meta, name, need): C source of the backward of
--- a pointwise group fused with a sum (mean): the gradient of the sum is broadcast back (a
--- row's to its row, divided by the count for a mean) as the seed of the reduced value's
--- adjoint. It takes the group's inputs, the gradients of its other outputs, the sum's
--- gradient gs (one per row, or one), then writes, at the group's shape, the gradient of each
--- input k with need[k]; and the loop's size and the elements per step. sz (optional): a
--- dynamic kernel, taking its parameters last
function M.reduce_backward_source(rg, vm, name, need, sz)
  local red, g = rg.reduce, rg.group
  local T = ctype(g.dtype)
  local n = numel(g.shape)
  local rows = red.all and 1 or n // red.D
  local lines, order, extents, ptr = kernel_head(name)
  for k, v in ipairs(g.inputs) do
    ptr(("  const %s *restrict in%d = (const %s *)p[%%d];"):format(T, k, T), v, extent(vm[v]))
  end
  local seed = {}
  for k, v in ipairs(g.outputs) do
    if v ~= red.x then
      ptr(("  const %s *restrict gout%d = (const %s *)p[%%d];"):format(T, k, T), v, n)
      seed[v] = ("gout%d[i]"):format(k)
    end
  end
  ptr("  const " .. T .. " *restrict gs = (const " .. T .. " *)p[%d];", red.out, rows)
  for k, v in ipairs(g.inputs) do
    if need[k] then ptr(("  %s *restrict gin%d = (%s *)p[%%d];"):format(T, k, T), v, n) end
  end
  local D = #g.shape > 0 and g.shape[#g.shape] or 1
  local scale = red.op == "mean" and (" / " .. num_literal(red.all and n or D, T)) or ""
  local fs = frame_sizes(sz, g)
  if sz and red.op == "mean" then
    -- the count a parameter where it may change (an integer below 2^53: exact in double;
    -- as num_literal's, in float rounded once)
    local c = red.all and fs.N or fs.D
    if c:sub(1, 1) == "z" then scale = (" / (%s)%s"):format(T, c) end
  end
  seed[red.x] = "gsr"
  -- as the forward: rows longer than a block (a 1-D tensor) go flat, in blocks of elements
  local flat = red.all and D >= M.REDUCE_BLOCK
  local body = {}
  local operand, reg = emit_forward_body(body, g, vm, T, nil, not flat, sz)
  emit_backward_body(body, g, T, operand, reg, seed)
  for k, v in ipairs(g.inputs) do
    if need[k] then body[#body + 1] = ("    gin%d[i] = d%d;"):format(k, v) end
  end
  if flat then
    lines[#lines + 1] = ("  const %s gsr = gs[0]%s;"):format(T, scale)
    lines[#lines + 1] = "  #pragma GCC ivdep"
    lines[#lines + 1] = "  for (int64_t i = begin; i < end; i++) {"
    for _, l in ipairs(body) do lines[#lines + 1] = l end
    lines[#lines + 1] = "  }"
    lines[#lines + 1] = "}"
    if sz then sz:finish(lines, #order, extents) end
    return table.concat(lines, "\n") .. "\n", order, extents, n, 1
  end
  lines[#lines + 1] = ("  const int64_t D = %s;"):format(fs.D)
  lines[#lines + 1] = "  for (int64_t r = begin; r < end; r++) {"
  lines[#lines + 1] = ("    const %s gsr = gs[%s]%s;"):format(T, red.all and "0" or "r", scale)
  lines[#lines + 1] = "    #pragma GCC ivdep"
  lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) {"
  lines[#lines + 1] = "      const int64_t i = r * D + c;"
  append_indented(lines, body)
  lines[#lines + 1] = "    }"
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  if sz then sz:finish(lines, #order, extents) end
  return table.concat(lines, "\n") .. "\n", order, extents, n // D, D
end

--- softmax_backward_source(softmaxgroup, value_meta, name, need): C source of the backward
--- of a pointwise group fused with a softmax (log_softmax) over rows. It takes the group's
--- inputs, the gradients of the group's other outputs, the softmax's output y and its
--- gradient gy, then writes, at the group's shape, the gradient of each input k with need[k].
--- Per row: s = sum(gy * y) (log_softmax: sum(gy)) in double, then per element the softmax
--- input's gradient y * (gy - s) (log_softmax: gy - exp(y) * s) seeds the group's adjoints.
--- sz (optional): a dynamic kernel, taking its parameters last
function M.softmax_backward_source(sg, vm, name, need, sz)
  local sm, g = sg.softmax, sg.group
  local T = ctype(g.dtype)
  local D, n = sm.D, numel(g.shape)
  local lines, order, extents, ptr = kernel_head(name)
  for k, v in ipairs(g.inputs) do
    ptr(("  const %s *restrict in%d = (const %s *)p[%%d];"):format(T, k, T), v, extent(vm[v]))
  end
  local seed = {}
  for k, v in ipairs(g.outputs) do
    if v ~= sm.x then
      ptr(("  const %s *restrict gout%d = (const %s *)p[%%d];"):format(T, k, T), v, n)
      seed[v] = ("gout%d[i]"):format(k)
    end
  end
  ptr("  const " .. T .. " *restrict y = (const " .. T .. " *)p[%d];", sm.out, n)
  ptr("  const " .. T .. " *restrict gy = (const " .. T .. " *)p[%d];", sm.out, n)
  for k, v in ipairs(g.inputs) do
    if need[k] then ptr(("  %s *restrict gin%d = (%s *)p[%%d];"):format(T, k, T), v, n) end
  end
  lines[#lines + 1] = ("  const int64_t D = %s;"):format(frame_sizes(sz, g).D)
  lines[#lines + 1] = "  for (int64_t r = begin; r < end; r++) {"
  lines[#lines + 1] = "    const " .. T .. " *restrict yr = y + r * D, *restrict gr = gy + r * D;"
  lines[#lines + 1] = "    double s8[8] = {0}, s = 0;"
  lines[#lines + 1] = "    int64_t j = 0;"
  local term = sm.log and "(double)gr[j + l]" or "(double)gr[j + l] * (double)yr[j + l]"
  lines[#lines + 1] = ("    for (; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) s8[l] += %s;"):format(term)
  lines[#lines + 1] = ("    for (; j < D; j++) s += %s;"):format((term:gsub(" %+ l%]", "]")))
  lines[#lines + 1] = "    for (int l = 0; l < 8; l++) s += s8[l];"
  lines[#lines + 1] = ("    const %s ts = (%s)s;"):format(T, T)
  lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) {"
  lines[#lines + 1] = "      const int64_t i = r * D + c;"
  if sm.log then
    seed[sm.x] = ("(gr[c] - %s(yr[c]) * ts)"):format(T == "float" and "lt_exp_float" or "exp")
  else
    seed[sm.x] = "(yr[c] * (gr[c] - ts))"
  end
  local body = {}
  local operand, reg = emit_forward_body(body, g, vm, T, nil, true, sz)
  emit_backward_body(body, g, T, operand, reg, seed)
  for k, v in ipairs(g.inputs) do
    if need[k] then body[#body + 1] = ("    gin%d[i] = d%d;"):format(k, v) end
  end
  append_indented(lines, body)
  lines[#lines + 1] = "    }"
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  if sz then sz:finish(lines, #order, extents) end
  return table.concat(lines, "\n") .. "\n", order, extents
end

-- rows per block of the layer_norm backward: each block sums its rows' weight and bias
-- gradients into its own row of partial sums, so the result does not depend on how the
-- blocks are spread over threads
M.NORM_BLOCK = 32

--- norm_backward_source(rowgroup, value_meta, name, need): C source of the backward of a
--- layer_norm fused with the pointwise group it feeds. It takes the norm's input x, weight
--- and bias, the group's other inputs, the gradients of the group's outputs (and of the
--- norm's result where it is kept); it writes the gradient of x where need.x, of each other
--- group input k with need[k] (at the group's shape), and the partial column sums (one row
--- of D per block of NORM_BLOCK rows, summed by the caller in double) of the weight's and
--- bias's gradients where need.w, need.b. Per row: the statistics as the forward takes them, the group's backward
--- into the normalized value dvn, then with dxh = dvn * w,
---   dx = rstd * (dxh - mean(dxh) - xhat * mean(dxh * xhat))   (the means in double)
--- sz (optional): a dynamic kernel, taking its parameters last
function M.norm_backward_source(rg, vm, name, need, sz)
  local rn, g = rg.norm, rg.group
  local T = ctype(g.dtype)
  local D, n = rn.D, numel(g.shape)
  local rows = n // D
  local nblocks = (rows + M.NORM_BLOCK - 1) // M.NORM_BLOCK
  local lines, order, extents, ptr = kernel_head(name)
  ptr("  const " .. T .. " *restrict nx = (const " .. T .. " *)p[%d];", rn.x, n)
  if rn.w then ptr("  const " .. T .. " *restrict nw = (const " .. T .. " *)p[%d];", rn.w, D) end
  if rn.b then ptr("  const " .. T .. " *restrict nb = (const " .. T .. " *)p[%d];", rn.b, D) end
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out then
      ptr(("  const %s *restrict in%d = (const %s *)p[%%d];"):format(T, k, T), v, extent(vm[v]))
    end
  end
  local seed = {}
  for k, v in ipairs(g.outputs) do
    ptr(("  const %s *restrict gout%d = (const %s *)p[%%d];"):format(T, k, T), v, n)
    seed[v] = ("gout%d[i]"):format(k)
  end
  if rg.keep_norm then
    ptr("  const " .. T .. " *restrict gnout = (const " .. T .. " *)p[%d];", rn.out, n)
    seed[rn.out] = "gnout[i]"
  end
  if need.x then ptr("  " .. T .. " *restrict gx = (" .. T .. " *)p[%d];", rn.x, n) end
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out and need[k] then ptr(("  %s *restrict gin%d = (%s *)p[%%d];"):format(T, k, T), v, n) end
  end
  if need.w then ptr("  " .. T .. " *restrict pgw = (" .. T .. " *)p[%d];", rn.w, nblocks * D) end
  if need.b then ptr("  " .. T .. " *restrict pgb = (" .. T .. " *)p[%d];", rn.b, nblocks * D) end
  local fs = frame_sizes(sz, g)
  lines[#lines + 1] = ("  const int64_t D = %s, R = %s, RB = %d;"):format(fs.D, fs.R, M.NORM_BLOCK)
  lines[#lines + 1] = "  for (int64_t blk = begin; blk < end; blk++) {"
  if need.w then lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) pgw[blk * D + c] = 0;" end
  if need.b then lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) pgb[blk * D + c] = 0;" end
  lines[#lines + 1] = "    const int64_t rend = (blk + 1) * RB < R ? (blk + 1) * RB : R;"
  lines[#lines + 1] = "    for (int64_t r = blk * RB; r < rend; r++) {"
  lines[#lines + 1] = "    const " .. T .. " *restrict xr = nx + r * D;"
  emit_row_stats(lines, T, rn.eps)
  -- the elements' work, in a loop with no dependence between iterations (ivdep: the
  -- pointers are distinct tensors, so the compiler need not version the loop for aliasing)
  lines[#lines + 1] = "    #pragma GCC ivdep"
  lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) {"
  lines[#lines + 1] = "      const int64_t i = r * D + c;"
  lines[#lines + 1] = ("      const %s xh = (xr[c] - tm) * trs;"):format(T)
  local e = "xh"
  if rn.w then e = e .. " * nw[c]" end
  if rn.b then e = e .. " + nb[c]" end
  lines[#lines + 1] = ("      const %s vn = %s;"):format(T, e)
  local body = {}
  local operand, reg = emit_forward_body(body, g, vm, T, { [rn.out] = "vn" }, true, sz)
  emit_backward_body(body, g, T, operand, reg, seed)
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out and need[k] then body[#body + 1] = ("    gin%d[i] = d%d;"):format(k, v) end
  end
  append_indented(lines, body)
  local dvn = "d" .. rn.out
  if need.w then lines[#lines + 1] = ("      pgw[blk * D + c] += %s * xh;"):format(dvn) end
  if need.b then lines[#lines + 1] = ("      pgb[blk * D + c] += %s;"):format(dvn) end
  if need.x then lines[#lines + 1] = ("      gx[i] = %s%s;"):format(dvn, rn.w and " * nw[c]" or "") end
  lines[#lines + 1] = "    }"
  if need.x then
    -- mean(dxh) and mean(dxh * xhat) in double, in 8 independent lanes
    lines[#lines + 1] = ([[
    const @T@ *restrict gr = gx + r * D;
    double a18[8] = {0}, a28[8] = {0}, a1 = 0, a2 = 0;
    for (j = 0; j + 8 <= D; j += 8) for (int l = 0; l < 8; l++) {
      const @T@ xh = (xr[j + l] - tm) * trs;
      a18[l] += (double)gr[j + l]; a28[l] += (double)gr[j + l] * (double)xh;
    }
    for (; j < D; j++) { const @T@ xh = (xr[j] - tm) * trs; a1 += (double)gr[j]; a2 += (double)gr[j] * (double)xh; }
    for (int l = 0; l < 8; l++) { a1 += a18[l]; a2 += a28[l]; }]]):gsub("@T@", T)
  end
  if need.x then
    lines[#lines + 1] = ("      const %s m1 = (%s)(a1 / (double)D), m2 = (%s)(a2 / (double)D);"):format(T, T, T)
    lines[#lines + 1] = "    for (int64_t c = 0; c < D; c++) {"
    lines[#lines + 1] = ("      const %s xh = (xr[c] - tm) * trs;"):format(T)
    lines[#lines + 1] = "      gx[r * D + c] = trs * (gx[r * D + c] - m1 - xh * m2);"
    lines[#lines + 1] = "    }"
  end
  lines[#lines + 1] = "    }"
  lines[#lines + 1] = "  }"
  lines[#lines + 1] = "}"
  if sz then sz:finish(lines, #order, extents) end
  return table.concat(lines, "\n") .. "\n", order, extents, nblocks
end

M.numel = numel
M.contiguous_strides = contiguous_strides
-- is meta laid out row-major (strides of dims of size 1 aside)?
function M.row_major(m)
  local c = contiguous_strides(m.shape)
  for d = 1, #m.shape do if m.shape[d] ~= 1 and m.stride[d] ~= c[d] then return false end end
  return true
end
M.ctype = ctype
-- for the CUDA generator (compile/cuda.lua), which writes the same loop body in its own kernel
M.emit_forward_body = emit_forward_body
M.emit_backward_body = emit_backward_body
M.num_literal = num_literal
M.extent = extent
return M
