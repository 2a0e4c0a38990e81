-- decl.lua — what an op declaration in src/ops/*.lua may say, and which backends
-- implement it. Shared by tools/gen.lua (the generated C, Lua bindings and
-- ops.md) and tools/man.lua (lutorch-ops(7)), so both read a declaration the
-- same way:
--
--   local D = dofile(dir .. "/decl.lua")
--   D.check(decl)             raises "op NAME: ..." naming the offending field
--   D.kernels(decl)           { cpu = "fn", cuda = "fn", any = "fn" }, the default
--                             applied ({} for a composite)
--   D.status(decl, backend)   "kernel", "any", "composite" or nil (no kernel there)
local M = {}

-- the backends, in dispatch-key order (LT_KEY_CPU, LT_KEY_CUDA, LT_KEY_META); `any` is a
-- device-neutral kernel that every backend's table holds
M.BACKENDS = { "cpu", "cuda", "meta" }
M.KERNEL_KEYS = { cpu = true, cuda = true, meta = true, any = true }

-- every field a declaration may have, with the Lua type of its value; the
-- schema is element [1]. Anything else is a typo and an error.
M.FIELDS = {
  variants = "string", lua = "string", alias = "table", doc = "string",
  out = "boolean", inplace = "boolean", view = "boolean", nondiff = "boolean",
  kernels = "table", inplace_kernel = "table", composite = "string",
  cross_device = "boolean", derivatives = "table", joint_derivative = "string", node_name = "string",
  overlap = "string",
  complex = "boolean", -- its kernels take complex tensors (else the entry point refuses them)
  t7 = "table",      -- the Torch7 mode's call forms (tools/gen_t7.lua)
}

-- the keys of the `t7` field, with the Lua type of each
M.T7_FIELDS = { method = "string", reduce = "boolean", dtype = "string", mask = "string", forms = "table", alias = "table",
                 number = "boolean", numel = "string", trunc = "string" }

-- `overlap`: how an op that writes into a tensor it was given (in place, out=,
-- a Tensor(a!) argument) treats memory shared with that tensor. Without the
-- field the written-to tensor must not have two elements at one location
-- (an expanded tensor) and no input may overlap it other than as the same
-- view (core/overlap.h).
M.OVERLAP = {
  fill = "every element gets one value, so the written-to self may be expanded (fill_, zero_)",
  disjoint = "the kernel reads inputs after writing some output: no input may share memory with it at all",
  update = "disjoint, except that self may be the written-to tensor (the result starts as self: scatter, index_add)",
  none = "writes no elements (set_): no check",
}

local function op_name(decl)
  return type(decl[1]) == "string" and decl[1]:match("^%s*([%w_]+)") or "?"
end
M.op_name = op_name

local function known_keys()
  local ks = {}
  for _, b in ipairs(M.BACKENDS) do ks[#ks + 1] = b end
  ks[#ks + 1] = "any"
  return table.concat(ks, ", ")
end

-- a kernels-style table: backend name -> C function name
local function check_kernels(name, field, t)
  for k, v in pairs(t) do
    if type(k) ~= "string" or not M.KERNEL_KEYS[k] then
      error(("op %s: field '%s': unknown backend '%s' (known: %s)"):format(name, field, tostring(k), known_keys()), 0)
    end
    if type(v) ~= "string" or not v:find("^[%a_][%w_]*$") then
      error(("op %s: field '%s': %s must name a C function, not %s"):format(name, field, k, tostring(v)), 0)
    end
  end
end

function M.check(decl)
  local name = op_name(decl)
  if type(decl[1]) ~= "string" then error(("op %s: element 1 must be the schema string"):format(name), 0) end
  for k, v in pairs(decl) do
    if type(k) == "number" then
      if k ~= 1 then error(("op %s: unexpected positional element %d (fields are name = value)"):format(name, k), 0) end
    elseif k == "cpu" then
      error(("op %s: field 'cpu' is now kernels = {cpu = ...}"):format(name), 0)
    elseif not M.FIELDS[k] then
      error(("op %s: unknown field '%s'"):format(name, tostring(k)), 0)
    elseif type(v) ~= M.FIELDS[k] then
      error(("op %s: field '%s' must be a %s, not a %s"):format(name, k, M.FIELDS[k], type(v)), 0)
    end
  end
  if decl.kernels then check_kernels(name, "kernels", decl.kernels) end
  if decl.t7 then
    for k, v in pairs(decl.t7) do
      if not M.T7_FIELDS[k] then error(("op %s: field 't7': unknown key '%s'"):format(name, tostring(k)), 0) end
      local ok = type(v) == M.T7_FIELDS[k] or (k == "numel" and type(v) == "table")   -- numel: a name or a list
      if not ok then
        error(("op %s: field 't7': '%s' must be a %s, not a %s"):format(name, k, M.T7_FIELDS[k], type(v)), 0)
      end
    end
  end
  if decl.inplace_kernel then
    check_kernels(name, "inplace_kernel", decl.inplace_kernel)
    if not decl.inplace then error(("op %s: field 'inplace_kernel' needs inplace = true"):format(name), 0) end
  end
  if decl.overlap then
    if not M.OVERLAP[decl.overlap] then
      local ks = {}
      for k in pairs(M.OVERLAP) do ks[#ks + 1] = k end
      table.sort(ks)
      error(("op %s: field 'overlap': unknown value '%s' (known: %s)"):format(name, decl.overlap, table.concat(ks, ", ")), 0)
    end
    if not (decl.inplace or decl.out or decl[1]:find("!%)")) then
      error(("op %s: field 'overlap': the op writes into no tensor it is given"):format(name), 0)
    end
  end
  if decl.composite then
    for _, f in ipairs({ "kernels", "inplace_kernel", "cross_device" }) do
      if decl[f] ~= nil then
        error(("op %s: field '%s': a composite op is not dispatched (it runs other ops' entry points)"):format(name, f), 0)
      end
    end
  end
end

function M.kernels(decl)
  if decl.composite then return {} end
  if decl.kernels then return decl.kernels end
  return { cpu = "lt_cpu_" .. op_name(decl) }
end

function M.status(decl, backend)
  if decl.composite then return "composite" end
  local k = M.kernels(decl)
  if k[backend] then return "kernel" end
  if k.any then return "any" end
  return nil
end

return M
