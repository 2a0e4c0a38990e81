-- gen_meta.lua — the meta device's kernels, generated (part of tools/gen.lua).
--
-- The meta device (src/metadev) runs an op's shape function and makes a
-- result with sizes, strides and dtype but no data. Most ops fall into a few
-- families whose shape function is one C function with the op's tensors and
-- options as arguments (src/metadev/metadev.h): pointwise ops broadcast their
-- tensor arguments, reductions drop or keep the dims they reduce, factories
-- make their size. src/ops/meta.lua names the ops of each family
-- (`meta_rules`) and the ops whose meta kernel is hand-written in src/metadev
-- (`meta_kernels`); this file writes, for each op of a family, the kernel
-- with the op's exact kernel type that calls the family's function.
--
--   local GM = dofile(dir .. "/gen_meta.lua")
--   GM.assign(ops, by_name, lists, die)  sets op.kernels.meta (and the in-place forms' defaults)
--   GM.bodies()                          the generated kernels' C text, for kernels_meta.c
local M = {}

-- family -> how its kernel calls the family's C function; each gets the op
-- (its c_args, rkind) and returns the body's lines, or nil and why not
local RULES = {}
local bodies = {}

local function find(op, pred)
  for _, a in ipairs(op.c_args) do if pred(a) then return a end end
end
local function tensors(op)
  local ts = {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor" or a.type == "Tensor?" then ts[#ts + 1] = a.name end
  end
  return ts
end
local function dtype_arg(op)
  local a = find(op, function(a) return a.name == "dtype" and a.type:find("^ScalarType") end)
  return a and a.name or "-1"
end
local function outarg(op) return op.out and "out" or "NULL" end
-- the dims argument as an lt_intlist expression (a single Dim becomes a list of one)
local function dims_expr(op, pre)
  local a = find(op, function(a) return a.type:find("^Dim") end)
  if not a then return "lt_intlist_none()" end
  if a.type == "Dim[]" or a.type == "Dim[]?" then return a.name end
  pre[#pre + 1] = ("  int64_t lt__d[1] = { %s };"):format(a.name)
  if a.type == "Dim?" then return ("(%s == LT_NOINT ? lt_intlist_none() : lt_intlist_make(lt__d, 1))"):format(a.name) end
  return "lt_intlist_make(lt__d, 1)"
end
local function keepdim(op)
  local a = find(op, function(a) return a.name == "keepdim" end)
  return a and a.name or "false"
end
local function tensor_array(op, pre)
  local ts = tensors(op)
  pre[#pre + 1] = ("  lt_tensor *lt__ts[] = { %s };"):format(table.concat(ts, ", "))
  return #ts
end

local function pointwise(mode)
  return function(op)
    if op.rkind ~= "tensor" then return nil, "not one tensor result" end
    local pre = {}
    local n = tensor_array(op, pre)
    pre[#pre + 1] = ("  return lt_metadev_pointwise(%q, lt__ts, %d, %s, %s, %s);"):format(op.name, n, mode, dtype_arg(op), outarg(op))
    return pre
  end
end
RULES.pointwise_promote = pointwise("LT_MD_PROMOTE")
RULES.pointwise_float = pointwise("LT_MD_FLOAT")
RULES.pointwise_bool = pointwise("LT_MD_BOOL")
RULES.pointwise_self = pointwise("LT_MD_SELF")

-- self's shape, the dtype= argument's dtype or self's
function RULES.like(op)
  if op.rkind ~= "tensor" then return nil, "not one tensor result" end
  local t = tensors(op)[1]
  return { ("  return lt_metadev_like(%q, %s, %s, %s);"):format(op.name, t, dtype_arg(op), outarg(op)) }
end

-- the tensor it writes, returned as it is (random fills, in-place updates)
function RULES.returns_self(op)
  if op.rkind ~= "tensor" then return nil, "not one tensor result" end
  return { ("  return lt_metadev_same(%q, %s);"):format(op.name, op.c_args[1].name) }
end

-- in-place updates with no result (foreach lists, fused optimizer steps): on meta there is
-- nothing to write, and the lists' values are not read
function RULES.updates(op)
  if op.rkind ~= "none" then return nil, "has a result" end
  local pre = {}
  for _, a in ipairs(op.c_args) do
    pre[#pre + 1] = ("  (void)%s;"):format(a.name)
    if a.type:find("%[%]$") then pre[#pre + 1] = ("  (void)%s_n;"):format(a.name) end
  end
  pre[#pre + 1] = "  return 0;"
  return pre
end

local function reduce(mode)
  return function(op)
    local pre = {}
    local dims = dims_expr(op, pre)
    if op.rkind == "tensor" then
      pre[#pre + 1] = ("  return lt_metadev_reduce(%q, self, %s, %s, %s, %s, %s);"):format(op.name, dims, keepdim(op), mode,
                      dtype_arg(op), outarg(op))
    elseif op.rkind == "multi" and #op.schema.rets == 2 then
      local r1, r2 = op.schema.rets[1].name, op.schema.rets[2].name
      pre[#pre + 1] = ("  return lt_metadev_reduce2(%q, self, %s, %s, %s, %s, %s);"):format(op.name, dims, keepdim(op), mode, r1, r2)
    else
      return nil, "not one or two tensor results"
    end
    return pre
  end
end
RULES.reduce_sum = reduce("LT_MD_SUM")          -- sum, prod: integers become int64
RULES.reduce_mean = reduce("LT_MD_MEAN")        -- mean: floating point only
RULES.reduce_self = reduce("LT_MD_SELF")        -- amax, max: self's dtype
RULES.reduce_index = reduce("LT_MD_INDEX")      -- argmax, count_nonzero: int64
RULES.reduce_bool = reduce("LT_MD_BOOL")        -- all, any: bool (uint8 stays uint8)
RULES.reduce_float = reduce("LT_MD_FLOAT")      -- var, std, norm: floating point only
RULES.reduce_values_indices = reduce("LT_MD_SELF")   -- max_dim: values in self's dtype, indices int64
RULES.reduce_float_pair = reduce("LT_MD_FLOAT")      -- var_mean: two floating point results

-- along a dim, the result of self's shape (scans, sorts): two results, values and int64 indices
function RULES.scan_values_indices(op)
  if op.rkind ~= "multi" then return nil, "not two tensor results" end
  local r1, r2 = op.schema.rets[1].name, op.schema.rets[2].name
  local d = find(op, function(a) return a.type == "Dim" end)
  return { ("  return lt_metadev_scan2(%q, self, %s, %s, %s);"):format(op.name, d and d.name or "-1", r1, r2) }
end

-- a factory: `size`, dtype= (default: the default float dtype, or int64 for
-- the integer ones), device=
local function factory(dflt)
  return function(op)
    local size = find(op, function(a) return a.name == "size" end)
    local dev = find(op, function(a) return a.type == "Device?" end)
    if not size or not dev or op.rkind ~= "tensor" then return nil, "no size or device argument" end
    -- full: without dtype= the fill value's type (an integer gives int64)
    local d = find(op, function(a) return a.name == "fill_value" end) and "(int)lt_scalar_dtype(fill_value)" or dflt
    return { ("  return lt_metadev_factory(%q, %s, %s, %s, %s);"):format(op.name, size.name, dtype_arg(op), d, dev.name) }
  end
end
RULES.factory = factory("-1")
RULES.factory_int = factory("LT_INT64")

-- the factories after another tensor (zeros_like, new_zeros): its dtype, the size given or its own
function RULES.factory_like(op)
  local size = find(op, function(a) return a.name == "size" end)
  local dev = find(op, function(a) return a.type == "Device?" end)
  if not dev or op.rkind ~= "tensor" then return nil, "no device argument" end
  return { ("  return lt_metadev_factory_like(%q, self, %s, %s, %s);"):format(op.name, size and size.name or "lt_intlist_none()",
           dtype_arg(op), dev.name) }
end

function M.assign(ops, by_name, lists, die)
  for _, l in ipairs(lists) do
    for family, names in pairs(l.rules or {}) do
      local rule = RULES[family]
      if not rule then die(("%s: meta_rules: no family '%s'"):format(l.file, family)) end
      for _, name in ipairs(names) do
        local op = by_name[name]
        if not op then die(("%s: meta_rules.%s names %s, which is not an op"):format(l.file, family, name)) end
        if op.composite then die(("%s: meta_rules.%s: %s is composite (it runs other ops on meta)"):format(l.file, family, name)) end
        if op.kernels.meta then die(("%s: %s has two meta kernels"):format(l.file, name)) end
        local body, why = rule(op)
        if not body then die(("%s: meta_rules.%s: %s: %s"):format(l.file, family, name, why)) end
        local fn = "lt_meta_k_" .. name
        op.kernels.meta = fn
        bodies[#bodies + 1] = { op = op, fn = fn, body = body }
      end
    end
    for name, fn in pairs(l.kernels or {}) do
      local op = by_name[name]
      if not op then die(("%s: meta_kernels names %s, which is not an op"):format(l.file, name)) end
      if op.kernels.meta then die(("%s: %s has two meta kernels"):format(l.file, name)) end
      op.kernels.meta = fn
    end
  end
  table.sort(bodies, function(a, b) return a.fn < b.fn end)
  -- an in-place form runs its op's meta kernel with out = self, as on every backend
  for _, op in ipairs(ops) do
    local base = op.inplace_of
    if base and base.kernels.meta and not op.kernels.meta and not op.kernels.any and base.out then
      op.defaults.meta = true
    end
  end
end

-- the generated kernels, given the C parameter list of an op's kernel
function M.bodies(params)
  local out = {}
  for _, b in ipairs(bodies) do
    out[#out + 1] = ("lt_tensor *%s(%s) {"):format(b.fn, params(b.op))
    if b.op.rkind ~= "tensor" then out[#out] = ("int %s(%s) {"):format(b.fn, params(b.op)) end
    for _, line in ipairs(b.body) do out[#out + 1] = line end
    out[#out + 1] = "}\n"
  end
  return out
end

return M
