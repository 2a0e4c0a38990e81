-- gen.lua — generates the op table, C entry points, the backends' kernel
-- tables, Lua bindings and the op reference from the declarations in
-- src/ops/*.lua.
--
--   lua5.4 tools/gen.lua OUTDIR src/ops/a.lua src/ops/b.lua ...
--   lua5.4 tools/gen.lua --check [--left cuda=FILE] src/ops/*.lua
--        which ops lack a kernel, per backend (with FILE: grouped by the reason
--        FILE gives, failing where one has none or a listed op has a kernel)
--
-- A declaration is a table whose first element is a PyTorch-style schema:
--   { "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
--     out = true, inplace = true, doc = "...", alias = {"cadd"} }
-- Fields (tools/decl.lua lists them; any other field is an error):
--   variants  "function,method" (default), "function" or "method"
--   lua       Lua name when it differs from the C name (overloads share one)
--   alias     further Lua names (Torch7 spellings)
--   out       the kernel takes a trailing `out` tensor (NULL when absent)
--   inplace   also declare NAME_ (in place on self); its kernels call the
--             out= kernel with out = self unless `inplace_kernel` names one
--   kernels   { cpu = "fn", cuda = "fn", any = "fn" }: the kernel of each
--             backend; `any` is device-neutral and goes into every backend's
--             table. Default { cpu = "lt_cpu_NAME" }; {} for no kernel at all
--   inplace_kernel  the same for NAME_ (default: the generated wrappers)
--   cross_device    dispatch on self's backend only (x:copy_(y) across devices)
--   composite C function implementing the op with other ops (not dispatched)
--   nondiff   the op has no derivative
--   derivatives, joint_derivative, node_name, view, overlap   see src/ops/README.md
--   doc       one line for the reference
-- Dims (`Dim`, `Dim?`, `Dim[]`) and indices (`Index`) are 1-based in Lua and
-- 0-based in C; the binding converts. Defaults are written as Lua sees them.
--
-- Output, in OUTDIR: lt_ops.h / lt_ops.c (ids, entry points, redispatch,
-- kernel typedefs, the op table with its Autograd and Profile kernels),
-- kernels_B.h / kernels_B.c for each backend B (B's kernel prototypes, the
-- default in-place kernels, lt_B_kernel_table), lua_ops.c, ops.md.

local D = dofile((arg[0]:match("^(.*)[/\\]") or ".") .. "/decl.lua")

local check_mode = arg[1] == "--check"
local outdir = arg[1]
if not outdir then
  io.stderr:write("usage: lua5.4 tools/gen.lua OUTDIR decl.lua... | --check decl.lua...\n")
  os.exit(2)
end

-- a declaration error names the file and the op, without a Lua traceback
local function die(msg)
  io.stderr:write("gen.lua: " .. msg .. "\n")
  os.exit(1)
end

local ops = {}        -- in declaration order, after expansion of inplace
local by_name = {}

------------------------------------------------------------------------------
-- schema parsing
------------------------------------------------------------------------------
local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

local function split_top(s)
  local parts, depth, cur = {}, 0, {}
  for c in s:gmatch(".") do
    if c == "(" or c == "[" then depth = depth + 1 end
    if c == ")" or c == "]" then depth = depth - 1 end
    if c == "," and depth == 0 then
      parts[#parts + 1] = trim(table.concat(cur)); cur = {}
    else cur[#cur + 1] = c end
  end
  local last = trim(table.concat(cur))
  if last ~= "" then parts[#parts + 1] = last end
  return parts
end

local KNOWN = {
  ["Tensor"] = true, ["Tensor?"] = true, ["Tensor[]"] = true,
  ["Scalar"] = true, ["Scalar?"] = true,
  ["int"] = true, ["int?"] = true, ["int[]"] = true, ["int[]?"] = true,
  ["Dim"] = true, ["Dim?"] = true, ["Dim[]"] = true, ["Dim[]?"] = true,
  ["Index"] = true, ["float"] = true, ["bool"] = true, ["bool?"] = true,
  ["str"] = true, ["str?"] = true, ["ScalarType"] = true, ["ScalarType?"] = true,
  ["Device?"] = true, ["Generator?"] = true,
}

local function parse_schema(s)
  local name, args, ret = s:match("^%s*([%w_]+)%s*(%b())%s*%->%s*(.-)%s*$")
  assert(name, "bad schema: " .. s)
  local sch = { name = name, args = {}, rets = {}, text = s }
  local kwonly = false
  for _, a in ipairs(split_top(args:sub(2, -2))) do
    if a == "*" then kwonly = true
    else
      local ty, nm, def = a:match("^([%w_%[%]%?]+%b())%s*([%w_]+)%s*=?%s*(.*)$")
      local alias
      if not ty then
        -- a mutable list: Tensor(a!)[] params
        local base, al, br
        base, al, br, nm, def = a:match("^([%w_]+)(%b())(%[%])%s*([%w_]+)%s*=?%s*(.*)$")
        if base then ty = base .. al .. br end
      end
      if ty then
        alias = ty:match("%((.-)%)")
        ty = ty:gsub("%b()", "")
      else
        ty, nm, def = a:match("^([%w_%[%]%?]+)%s+([%w_]+)%s*=?%s*(.*)$")
      end
      assert(ty and KNOWN[ty], ("bad argument '%s' in schema %s"):format(a, s))
      sch.args[#sch.args + 1] = {
        type = ty, name = nm, default = def ~= "" and def or nil,
        kwonly = kwonly, mutable = alias and alias:find("!") ~= nil, alias = alias,
      }
    end
  end
  ret = trim(ret)
  if ret == "()" then
    -- no result: the op works through its mutable arguments
  elseif ret:sub(1, 1) == "(" then
    for _, r in ipairs(split_top(ret:sub(2, -2))) do
      local ty, nm = r:match("^([%w_%[%]%?]+)%s*([%w_]*)$")
      sch.rets[#sch.rets + 1] = { type = ty, name = nm }
    end
  else
    local ty = ret:gsub("%b()", "")
    local nm = ty:match("%s+([%w_]+)$")
    ty = ty:gsub("%s+[%w_]+$", "")
    sch.rets[1] = { type = ty, name = nm, alias = ret:match("%((.-)%)") }
  end
  return sch
end

------------------------------------------------------------------------------
-- C types
------------------------------------------------------------------------------
local CTYPE = {
  ["Tensor"] = "lt_tensor *", ["Tensor?"] = "lt_tensor *",
  ["Scalar"] = "lt_scalar", ["Scalar?"] = "lt_scalar",
  ["int"] = "int64_t", ["int?"] = "int64_t", ["Dim"] = "int64_t", ["Dim?"] = "int64_t",
  ["Index"] = "int64_t",
  ["int[]"] = "lt_intlist", ["int[]?"] = "lt_intlist", ["Dim[]"] = "lt_intlist", ["Dim[]?"] = "lt_intlist",
  ["float"] = "double", ["bool"] = "bool", ["bool?"] = "int",
  ["str"] = "const char *", ["str?"] = "const char *",
  ["ScalarType"] = "int", ["ScalarType?"] = "int",
  ["Device?"] = "lt_device", ["Generator?"] = "struct lt_generator *",
}

-- C parameter list for the args (Tensor[] becomes a pointer and a count)
local function c_params(op, with_out)
  local ps = {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor[]" then
      ps[#ps + 1] = "lt_tensor *const *" .. a.name
      ps[#ps + 1] = "int " .. a.name .. "_n"
    else
      local ct = CTYPE[a.type]
      ps[#ps + 1] = ct .. (ct:sub(-1) == "*" and "" or " ") .. a.name
    end
  end
  if with_out then ps[#ps + 1] = "lt_tensor *out" end
  return ps
end

local function c_argnames(op, with_out)
  local ns = {}
  for _, a in ipairs(op.c_args) do
    ns[#ns + 1] = a.name
    if a.type == "Tensor[]" then ns[#ns + 1] = a.name .. "_n" end
  end
  if with_out then ns[#ns + 1] = "out" end
  return ns
end

-- return kind: "tensor", "multi" (n tensors through out-pointers), "list", "bool", "scalar"
local function ret_kind(sch)
  if #sch.rets == 0 then return "none" end
  if #sch.rets > 1 then return "multi" end
  local t = sch.rets[1].type
  if t == "Tensor" then return "tensor" end
  if t == "Tensor[]" then return "list" end
  if t == "bool" then return "bool" end
  if t == "Scalar" then return "scalar" end
  error("unsupported return type " .. t .. " in " .. sch.text)
end

local RET_CTYPE = { none = "int", tensor = "lt_tensor *", multi = "int", list = "lt_tensor_list", bool = "int", scalar = "lt_scalar" }

local function full_params(op, with_out)
  local ps = c_params(op, with_out)
  if op.rkind == "multi" then
    for i, r in ipairs(op.schema.rets) do
      ps[#ps + 1] = "lt_tensor **" .. (r.name ~= "" and r.name or ("r" .. i))
    end
  end
  return ps
end

local function full_args(op, with_out)
  local ns = c_argnames(op, with_out)
  if op.rkind == "multi" then
    for i, r in ipairs(op.schema.rets) do ns[#ns + 1] = (r.name ~= "" and r.name or ("r" .. i)) end
  end
  return ns
end

local function join(t, sep) return table.concat(t, sep or ", ") end
local function cat(a, b)
  local r = {}
  for _, x in ipairs(a) do r[#r + 1] = x end
  for _, x in ipairs(b) do r[#r + 1] = x end
  return r
end
local function plist(t) return #t > 0 and join(t) or "void" end

------------------------------------------------------------------------------
-- load declarations
------------------------------------------------------------------------------
local function add_op(decl, file)
  local sch = parse_schema(decl[1])
  local op = {
    name = sch.name, schema = sch, file = file, decl = decl,
    variants = decl.variants or "function,method",
    lua = decl.lua or sch.name, alias = decl.alias or {},
    out = decl.out and true or false, doc = decl.doc or "",
    composite = decl.composite, nondiff = decl.nondiff,
    inplace_self = false, complex = decl.complex,
  }
  if by_name[op.name] then error("op declared twice: " .. op.name, 0) end
  op.c_args = {}
  op.lua_only = {}
  for _, a in ipairs(sch.args) do
    -- requires_grad on creation ops is applied by the binding, not the kernel
    if a.name == "requires_grad" and a.type == "bool" then op.lua_only.requires_grad = a
    else op.c_args[#op.c_args + 1] = a end
  end
  op.rkind = ret_kind(sch)
  op.kernels = D.kernels(decl)
  op.defaults = {}
  op.cross_device = decl.cross_device
  if op.cross_device and not (op.c_args[1] and op.c_args[1].type == "Tensor") then
    error(("op %s: cross_device needs a Tensor first argument to dispatch on"):format(op.name), 0)
  end
  op.view = decl.view or (sch.rets[1] ~= nil and sch.rets[1].alias ~= nil and not sch.rets[1].alias:find("!"))
  op.mutates = sch.args[1] and sch.args[1].type == "Tensor" and sch.args[1].mutable
  ops[#ops + 1] = op
  by_name[op.name] = op
  if decl.inplace then
    local ip = {
      name = op.name .. "_", schema = sch, file = file, decl = decl,
      variants = "function,method", lua = op.lua .. "_", alias = {},
      out = false, doc = "In-place form of " .. op.name .. ": writes into self and returns it.",
      nondiff = decl.nondiff, c_args = op.c_args, lua_only = {}, rkind = "tensor",
      inplace_of = op, mutates = true, cross_device = op.cross_device,
      kernels = {}, defaults = {}, complex = decl.complex,
    }
    -- a namespaced alias (special.erf) names the function alone: torch.special has no in-place forms
    for _, a in ipairs(decl.alias or {}) do
      if not a:find(".", 1, true) then ip.alias[#ip.alias + 1] = a .. "_" end
    end
    -- each backend: the named in-place kernel, else a generated default that
    -- runs the backend's out= kernel with out = self (lt_B_NAME__default)
    local ik = decl.inplace_kernel or {}
    ip.kernels.any = ik.any
    for _, b in ipairs(D.BACKENDS) do
      if ik[b] then ip.kernels[b] = ik[b]
      elseif not ik.any and (op.kernels[b] or op.kernels.any) then
        if not op.out then error(("op %s: inplace without out = true needs inplace_kernel"):format(op.name), 0) end
        ip.defaults[b] = true
      end
    end
    if op.composite then ip.composite_inplace = true end
    if op.rkind ~= "tensor" then error("op " .. op.name .. ": inplace needs a Tensor result", 0) end
    ops[#ops + 1] = ip
    by_name[ip.name] = ip
  end
end

local files, left_files = {}, {}
do
  local i = 2
  while i <= #arg do
    if check_mode and arg[i] == "--left" then
      local b, f = (arg[i + 1] or ""):match("^(%w+)=(.+)$")
      if not b then die("--left wants BACKEND=FILE") end
      left_files[b] = f
      i = i + 2
    else
      files[#files + 1] = arg[i]; i = i + 1
    end
  end
end
table.sort(files)
-- A file's list may also have a field `complex_ops`: names of ops declared in
-- other files whose kernels take complex tensors (as `complex = true` would
-- say), so that the complex dtypes' support of existing ops is listed in one
-- place (src/ops/complex.lua); an op's in-place form follows it.
local complex_lists = {}
-- and fields `meta_rules`, `meta_kernels`: the meta device's kernels (tools/gen_meta.lua)
local meta_lists = {}
-- and a field `autocast`: the Autocast key's policies per device type (tools/gen_autocast.lua)
local autocast_lists = {}
local widen_lists = {}
for _, f in ipairs(files) do
  local okf, decls = pcall(dofile, f)
  if not okf then die(tostring(decls)) end
  if type(decls) ~= "table" then die(f .. ": must return a list of declarations") end
  for _, d in ipairs(decls) do
    local ok, err = pcall(function()
      if type(d) ~= "table" then error("a declaration must be a table", 0) end
      D.check(d)
      add_op(d, f)
    end)
    if not ok then die(f .. ": " .. tostring(err)) end
  end
  if decls.complex_ops then complex_lists[#complex_lists + 1] = { file = f, names = decls.complex_ops } end
  if decls.meta_rules or decls.meta_kernels then
    meta_lists[#meta_lists + 1] = { file = f, rules = decls.meta_rules, kernels = decls.meta_kernels }
  end
  if decls.complex_scalar_ops then complex_lists[#complex_lists + 1] = { file = f, scalar = decls.complex_scalar_ops } end
  if decls.autocast then autocast_lists[#autocast_lists + 1] = { file = f, autocast = decls.autocast } end
  -- `float32_kernels`: ops whose CPU and meta kernels take float16/bfloat16 through float32
  for b, names in pairs(decls.float32_kernels or {}) do
    for _, name in ipairs(names) do widen_lists[#widen_lists + 1] = { file = f, backend = b, name = name } end
  end
end
local GM = dofile((arg[0]:match("^(.*)[/\\]") or ".") .. "/gen_meta.lua")
GM.assign(ops, by_name, meta_lists, die)
local GA = dofile((arg[0]:match("^(.*)[/\\]") or ".") .. "/gen_autocast.lua")
GA.assign(ops, by_name, autocast_lists, die)
for _, w in ipairs(widen_lists) do
  local op = by_name[w.name]
  if not op then die(("%s: float32_kernels names %s, which is not an op"):format(w.file, w.name)) end
  if op.composite or op.composite_inplace or op.inplace_of then
    die(("%s: float32_kernels names %s, which has no kernel of its own"):format(w.file, w.name))
  end
  local known = false
  for _, b in ipairs(D.BACKENDS) do known = known or b == w.backend end
  if not known then die(("%s: float32_kernels: unknown backend %s"):format(w.file, w.backend)) end
  op.widen16 = op.widen16 or {}
  op.widen16[w.backend] = true
end
-- `complex_scalar_ops`: op name -> true (any Scalar argument may be complex) or a
-- list of tensor arguments of which one must be complex when a Scalar argument
-- is. Every other op refuses a complex Scalar in its entry point (scalar_guard).
for _, l in ipairs(complex_lists) do
  for name, need in pairs(l.scalar or {}) do
    local op = by_name[name]
    if not op then die(("%s: complex_scalar_ops names %s, which is not an op"):format(l.file, name)) end
    op.complex_scalar = need
    if by_name[name .. "_"] and by_name[name .. "_"].inplace_of == op then by_name[name .. "_"].complex_scalar = need end
  end
  for _, name in ipairs(l.names or {}) do
    local op = by_name[name]
    if not op then die(("%s: complex_ops names %s, which is not an op"):format(l.file, name)) end
    op.complex = true
    if by_name[name .. "_"] and by_name[name .. "_"].inplace_of == op then by_name[name .. "_"].complex = true end
  end
end

-- the function in backend b's table for op (nil: none), and whether it is the
-- op's own kernel for b (declared in kernels_b.h) rather than `any` or a default
local function kernel_of(op, b)
  if op.composite or op.composite_inplace then return nil end
  if op.defaults[b] then return ("lt_%s_%s_default"):format(b, op.name), "default" end
  if op.kernels[b] then return op.kernels[b], "own" end
  if op.kernels.any then return op.kernels.any, "any" end
  return nil
end

------------------------------------------------------------------------------
-- --check: per backend, the dispatched ops that have no kernel there
------------------------------------------------------------------------------
-- names joined by ", " into lines of at most width columns, each indented
local function wrap(names, indent, width)
  local lines, cur = {}, indent
  for i, n in ipairs(names) do
    local piece = n .. (i < #names and "," or "")
    if #cur > #indent and #cur + 1 + #piece > width then
      lines[#lines + 1] = cur; cur = indent .. piece
    else
      cur = cur .. (#cur > #indent and " " or "") .. piece
    end
  end
  if #cur > #indent then lines[#lines + 1] = cur end
  return lines
end

-- `--left B=FILE`: the ops backend B is known to lack, each under the reason
-- why (FILE returns a list of { why = "sentence", ops = { "name", ... } }).
-- With it, --check prints the missing ops grouped by reason and fails when one
-- has no reason or a listed op has a kernel after all, so the list stays true.
local function read_left(b, file)
  local ok, list = pcall(dofile, file)
  if not ok or type(list) ~= "table" then die(("%s: %s"):format(file, ok and "does not return a table" or list)) end
  local why_of = {}
  for _, group in ipairs(list) do
    if type(group.why) ~= "string" or type(group.ops) ~= "table" then
      die(file .. ": each entry is { why = \"...\", ops = { ... } }")
    end
    for _, name in ipairs(group.ops) do
      if why_of[name] then die(("%s: op %s is listed twice"):format(file, name)) end
      why_of[name] = group.why
    end
  end
  return list, why_of
end

if check_mode then
  local dispatched, n_any, failed = 0, 0, false
  for _, op in ipairs(ops) do
    if not op.composite and not op.composite_inplace then
      dispatched = dispatched + 1
      if op.kernels.any then n_any = n_any + 1 end
    end
  end
  print(("%d ops, %d dispatched (the others are composite)"):format(#ops, dispatched))
  for _, b in ipairs(D.BACKENDS) do
    local missing = {}
    for _, op in ipairs(ops) do
      if not op.composite and not op.composite_inplace and not kernel_of(op, b) then missing[#missing + 1] = op.name end
    end
    table.sort(missing)
    print(("%s: %d of %d ops lack a kernel%s"):format(b, #missing, dispatched, #missing > 0 and ":" or ""))
    if left_files[b] then
      local list, why_of = read_left(b, left_files[b])
      local is_missing, unexplained, stale = {}, {}, {}
      for _, n in ipairs(missing) do
        is_missing[n] = true
        if not why_of[n] then unexplained[#unexplained + 1] = n end
      end
      for _, group in ipairs(list) do
        local here = {}
        for _, n in ipairs(group.ops) do
          if is_missing[n] then here[#here + 1] = n
          elseif by_name[n] then stale[#stale + 1] = n
          else stale[#stale + 1] = n .. " (no such op)" end
        end
        if #here > 0 then
          table.sort(here)
          print(("  %d: %s"):format(#here, group.why))
          for _, line in ipairs(wrap(here, "    ", 78)) do print(line) end
        end
      end
      if #unexplained > 0 then
        print(("  %d with no reason in %s:"):format(#unexplained, left_files[b]))
        for _, line in ipairs(wrap(unexplained, "    ", 78)) do print(line) end
        failed = true
      end
      if #stale > 0 then
        print(("  %d listed in %s but not missing (remove them):"):format(#stale, left_files[b]))
        for _, line in ipairs(wrap(stale, "    ", 78)) do print(line) end
        failed = true
      end
    else
      for _, line in ipairs(wrap(missing, "  ", 78)) do print(line) end
    end
  end
  print(("any: %d ops have a device-neutral kernel (counted on every backend)"):format(n_any))
  os.exit(failed and 1 or 0)
end

------------------------------------------------------------------------------
-- lt_ops.h
------------------------------------------------------------------------------
local H = {}
local function h(s) H[#H + 1] = s end
h("/* generated by tools/gen.lua from the declarations in src/ops — do not edit */")
h("#ifndef LT_OPS_GEN_H\n#define LT_OPS_GEN_H\n")
h('#include "dispatch/dispatch.h"')
h("struct lt_generator;\n")
h("enum lt_op_id {")
for _, op in ipairs(ops) do h("  LT_OP_" .. op.name .. ",") end
h("  LT_NUM_OPS\n};\n")
for _, op in ipairs(ops) do
  local rt = RET_CTYPE[op.rkind]
  h(("/* %s */"):format(op.schema.text:gsub("%*/", "* /")))
  if op.inplace_of then
    h(("%s lt_%s(%s);"):format(rt, op.name, plist(full_params(op, false))))
  else
    h(("%s lt_%s(%s);"):format(rt, op.name, plist(full_params(op, false))))
    if op.out then h(("%s lt_%s_out(%s);"):format(rt, op.name, plist(full_params(op, true)))) end
  end
  local with_out = op.out
  if not op.composite and not op.composite_inplace then
    h(("%s lt_%s_redispatch(%s);"):format(rt, op.name, plist({ "lt_keyset ks", table.unpack(full_params(op, with_out)) })))
    h(("typedef %s (*lt_%s_backend_fn)(%s);"):format(rt, op.name, plist(full_params(op, with_out))))
    h(("typedef %s (*lt_%s_wrapper_fn)(%s);"):format(rt, op.name, plist({ "lt_keyset ks", table.unpack(full_params(op, with_out)) })))
  end
  if op.composite then
    h(("%s %s(%s);"):format(rt, op.composite, plist(full_params(op, with_out))))
  end
  h("")
end
h("#endif")

------------------------------------------------------------------------------
-- lt_ops.c: table, entries, profile wrappers, default in-place kernels
------------------------------------------------------------------------------
local C = {}
local function c(s) C[#C + 1] = s end
c("/* generated by tools/gen.lua from the declarations in src/ops — do not edit */")
c('#include "lt_ops.h"')
c('#include "core/overlap.h"')
c('#include "amp/autocast.h"\n')

local function cstr(s)
  return '"' .. s:gsub("\\", "\\\\"):gsub('"', '\\"'):gsub("\n", "\\n") .. '"'
end

-- The keyset an entry point dispatches on: every tensor argument's keys, a
-- Device? argument's backend. A cross_device op takes its backend from its
-- first argument (self) alone; the other tensors add their non-backend keys
-- (Autograd), so an input that requires grad is still seen.
local function keyset_expr(op)
  local parts = {}
  for i, a in ipairs(op.c_args) do
    local other = op.cross_device and i > 1
    local function k(e) return other and ("(%s & ~LT_BACKEND_KEYS)"):format(e) or e end
    if a.type == "Tensor" then parts[#parts + 1] = k(a.name .. "->keys")
    elseif a.type == "Tensor?" then parts[#parts + 1] = k(("(%s ? %s->keys : 0)"):format(a.name, a.name))
    elseif a.type == "Tensor[]" then parts[#parts + 1] = k(("lt_tensors_keys(%s, %s_n)"):format(a.name, a.name))
    elseif a.type == "Device?" and not other then parts[#parts + 1] = ("lt_device_keys(%s)"):format(a.name)
    end
  end
  if op.out and not op.inplace_of then
    parts[#parts + 1] = op.cross_device and "(out ? out->keys & ~LT_BACKEND_KEYS : 0)" or "(out ? out->keys : 0)"
  end
  if #parts == 0 then return "LT_KEYBIT(LT_KEY_CPU)" end
  -- an op with tensors and a device (zeros_like(x, {device=})): the device, when given,
  -- names the backend; the tensors then add only their other keys
  local dev
  for _, a in ipairs(op.c_args) do if a.type == "Device?" then dev = a.name end end
  if dev and not op.cross_device then
    local tens = {}
    for _, p in ipairs(parts) do if p ~= ("lt_device_keys(%s)"):format(dev) then tens[#tens + 1] = p end end
    if #tens > 0 then
      local t = join(tens, " | ")
      return ("((%s) & ~LT_BACKEND_KEYS) | (%s.type >= 0 ? lt_device_keys(%s) : ((%s) & LT_BACKEND_KEYS))"):format(
        t, dev, dev, t)
    end
  end
  return join(parts, " | ")
end

local function fail_value(op)
  if op.rkind == "tensor" then return "NULL"
  elseif op.rkind == "list" then return "(lt_tensor_list){NULL, -1}"
  elseif op.rkind == "scalar" then return "lt_scalar_none()"
  else return "-1" end
end

-- The profiler hook's enter call (dispatch.h): the op's tensor arguments, so the
-- profiler can record their shapes (Tensor[] lists are not passed)
local function hook_enter(op)
  local ts = {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor" or a.type == "Tensor?" then ts[#ts + 1] = a.name end
  end
  if #ts == 0 then return ("lt_dispatch_call_hook(LT_OP_%s, 0, NULL, 0)"):format(op.name) end
  return ("lt_dispatch_call_hook(LT_OP_%s, 0, (const lt_tensor *const[]){ %s }, %d)"):format(op.name, join(ts), #ts)
end

c([[
static inline lt_keyset lt_tensors_keys(lt_tensor *const *ts, int n) {
  lt_keyset k = 0;
  for (int i = 0; i < n; i++) k |= ts[i]->keys;
  return k;
}
]])

for i, op in ipairs(ops) do
  if not op.composite and not op.composite_inplace then
    local rt = RET_CTYPE[op.rkind]
    local with_out = op.out
    local params = full_params(op, with_out)
    local args = full_args(op, with_out)
    -- redispatch
    c(("%s lt_%s_redispatch(%s) {"):format(rt, op.name, plist({ "lt_keyset ks", table.unpack(params) })))
    c(("  const lt_op_entry *lt__e = &lt_op_table[LT_OP_%s];"):format(op.name))
    -- `lt__k`, not `k`: an op argument may be called k (topk, kthvalue)
    c("  int lt__k = lt_dispatch_select(lt__e, ks);")
    c(("  if (lt__k < 0) { lt_dispatch_no_kernel(LT_OP_%s, ks); return %s; }"):format(op.name, fail_value(op)))
    c(("  if (lt__k >= LT_FIRST_WRAPPER_KEY) return ((lt_%s_wrapper_fn)lt__e->kernel[lt__k])(%s);"):format(op.name,
      join({ "ks & lt_keyset_below(lt__k)", table.unpack(args) })))
    c(("  return ((lt_%s_backend_fn)lt__e->kernel[lt__k])(%s);"):format(op.name, join(args)))
    c("}\n")
    -- profile wrapper
    c(("static %s profile_%s(%s) {"):format(rt, op.name, plist({ "lt_keyset ks", table.unpack(params) })))
    c(("  %s;"):format(hook_enter(op)))
    c(("  %s lt__r = lt_%s_redispatch(%s);"):format(rt, op.name, join({ "ks", table.unpack(args) })))
    c(("  lt_dispatch_call_hook(LT_OP_%s, 1, NULL, 0);"):format(op.name))
    c("  return lt__r;\n}\n")
  end
end

-- the Autocast key's wrappers (src/ops/autocast.lua)
for _, line in ipairs(GA.functions({ full_params = full_params, full_args = full_args, c_argnames = c_argnames,
  plist = plist, join = join, fail_value = fail_value, RET_CTYPE = RET_CTYPE })) do c(line) end

-- The overlap checks of an entry point (core/overlap.h), from the declaration:
-- the tensor it writes (out in the out= form, self in place, each element of a
-- Tensor(a!)[] argument) must not have two elements at one location, and no
-- input may overlap it partially (with overlap = "disjoint" or "update", at all). Checked
-- here, once per call, so every op that writes gets them from its declaration.
local function overlap_checks(op, with_out)
  local policy = op.decl.overlap
  if policy == "none" then return end
  local fail = fail_value(op)
  local name = cstr(op.lua)
  -- "update": the result starts as a copy of self, so self may be out itself
  local function disjoint_for(a)
    return (policy == "disjoint" or (policy == "update" and a ~= op.c_args[1])) and "true" or "false"
  end
  local dst, dst_arg
  if with_out then dst, dst_arg = "out", cstr("out")
  elseif op.inplace_of or op.mutates then dst, dst_arg = op.c_args[1].name, "NULL" end
  if dst then
    local body, lists = {}, {}
    -- a fill stores one value wherever its writes land: self may be expanded
    if not (policy == "fill" and not with_out) then
      body[#body + 1] = ("lt_check_overlap_dst(%s, %s, -1, %s) < 0"):format(name, dst_arg, dst)
    end
    for _, a in ipairs(op.c_args) do
      if a.name ~= dst then
        if a.type == "Tensor" then
          body[#body + 1] = ("lt_check_overlap_src(%s, %s, -1, %s, %s, %s) < 0"):format(name, cstr(a.name), a.name, dst, disjoint_for(a))
        elseif a.type == "Tensor?" then
          body[#body + 1] = ("(%s && lt_check_overlap_src(%s, %s, -1, %s, %s, %s) < 0)"):format(a.name, name, cstr(a.name), a.name, dst, disjoint_for(a))
        elseif a.type == "Tensor[]" and not a.mutable then
          lists[#lists + 1] = a
        end
      end
    end
    -- an out= entry point may be called with out NULL (the result is allocated)
    local guard = with_out and "out && " or ""
    if #body > 0 then
      local cond = join(body, " ||\n      ")
      if with_out then cond = "out && (" .. cond .. ")" end
      c(("  if (%s) return %s;"):format(cond, fail))
    end
    for _, a in ipairs(lists) do
      c(("  for (int lt__i = 0; %slt__i < %s_n; lt__i++)"):format(guard, a.name))
      c(("    if (lt_check_overlap_src(%s, %s, lt__i, %s[lt__i], %s, %s) < 0) return %s;"):format(
        name, cstr(a.name), a.name, dst, disjoint_for(a), fail))
    end
  end
  -- Tensor(a!)[] (the foreach and fused optimizer ops): each element is
  -- written, and read with the elements at its position in the other lists
  -- (two written lists are compared once: overlap is symmetric)
  for ia, a in ipairs(op.c_args) do
    if a.type == "Tensor[]" and a.mutable then
      c(("  for (int lt__i = 0; lt__i < %s_n; lt__i++) {"):format(a.name))
      c(("    if (lt_check_overlap_dst(%s, %s, lt__i, %s[lt__i]) < 0) return %s;"):format(name, cstr(a.name), a.name, fail))
      for ib, b in ipairs(op.c_args) do
        if b.type == "Tensor[]" and ib ~= ia and not (b.mutable and ib < ia) then
          c(("    if (lt__i < %s_n && lt_check_overlap_src(%s, %s, lt__i, %s[lt__i], %s[lt__i], %s) < 0) return %s;"):format(
            b.name, name, cstr(b.name), b.name, a.name, disjoint_for(b), fail))
        end
      end
      c("  }")
    end
  end
end

-- entry points
-- Two devices of one backend (cuda:0 and cuda:1) in a call are an error too: checked only
-- when a device backend's key is in the call (a CPU call pays nothing), over every tensor
-- argument, each list's elements and out.
local function same_device_check(op, with_out)
  local singles, lists = {}, {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor" or a.type == "Tensor?" then singles[#singles + 1] = a.name
    elseif a.type == "Tensor[]" then lists[#lists + 1] = a.name end
  end
  if with_out then singles[#singles + 1] = "out" end
  if #singles + #lists * 2 < 2 then return end
  local calls = {}
  if #singles > 0 then
    calls[#calls + 1] = ("lt_dispatch_same_device(LT_OP_%s, &lt__dev, (const lt_tensor *const[]){%s}, %d) < 0"):format(
      op.name, join(singles), #singles)
  end
  for _, l in ipairs(lists) do
    calls[#calls + 1] = ("lt_dispatch_same_device(LT_OP_%s, &lt__dev, (const lt_tensor *const *)%s, %s_n) < 0"):format(
      op.name, l, l)
  end
  c("  int lt__dev = -1;")
  c(("  if ((lt__ks & LT_BACKEND_KEYS & ~LT_KEYBIT(LT_KEY_CPU)) &&\n      (%s)) return %s;"):format(
    join(calls, " ||\n       "), fail_value(op)))
end

-- Complex tensors (or a complex dtype= argument) reach only the kernels of
-- ops declared `complex = true`; any other op refuses them here with an error
-- naming it (lt_dispatch_complex_refused decides, and also refuses complex on
-- a backend whose kernel for the op is its own rather than the `any` one).
local function complex_guard(op, with_out)
  local tests = {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor" then tests[#tests + 1] = ("LT_IS_COMPLEX_T(%s) ? %s->dtype"):format(a.name, a.name)
    elseif a.type == "Tensor?" then tests[#tests + 1] = ("%s && LT_IS_COMPLEX_T(%s) ? %s->dtype"):format(a.name, a.name, a.name)
    elseif a.type == "Tensor[]" then
      tests[#tests + 1] = ("lt_tensors_any_complex(%s, %s_n) ? lt_tensors_complex_dtype(%s, %s_n)"):format(a.name, a.name, a.name, a.name)
    elseif a.type == "ScalarType" or a.type == "ScalarType?" then
      tests[#tests + 1] = ("LT_IS_COMPLEX_DT(%s) ? %s"):format(a.name, a.name)
    end
  end
  if with_out then tests[#tests + 1] = "out && LT_IS_COMPLEX_T(out) ? out->dtype" end
  if #tests == 0 then return end
  c(("  int lt__cx = %s : -1;"):format(join(tests, " : ")))
  c(("  if (lt__cx >= 0 && lt_dispatch_complex_refused(LT_OP_%s, lt__ks, lt__cx) < 0) return %s;"):format(
    op.name, fail_value(op)))
end

-- A complex Scalar (LT_SCALAR_COMPLEX) reaches only the ops of
-- complex_scalar_ops, and those whose entry names tensors only with one of them
-- complex; the kernels of every other op read Scalars as real numbers.
local function scalar_guard(op)
  local need = op.complex_scalar
  for _, a in ipairs(op.c_args) do
    if a.type == "Scalar" or a.type == "Scalar?" then
      local why
      if not need then
        why = ("must be a real number, got a complex value")
        c(("  if (%s.type == LT_SCALAR_COMPLEX) { lt_error(\"%s: argument '%s' %s\"); return %s; }"):format(
          a.name, op.lua, a.name, why, fail_value(op)))
      elseif type(need) == "table" then
        local tests = {}
        for _, t in ipairs(need) do tests[#tests + 1] = ("!(%s && LT_IS_COMPLEX_T(%s))"):format(t, t) end
        c(("  if (%s.type == LT_SCALAR_COMPLEX && %s) { lt_error(\"%s: argument '%s' is complex, which needs a complex %s\"); return %s; }"):format(
          a.name, join(tests, " && "), op.lua, a.name, table.concat(need, " or "), fail_value(op)))
      end
    end
  end
end

for _, op in ipairs(ops) do
  local rt = RET_CTYPE[op.rkind]
  local function entry(name, with_out, pass_out)
    local params = full_params(op, with_out)
    c(("%s lt_%s(%s) {"):format(rt, name, plist(params)))
    overlap_checks(op, with_out)
    scalar_guard(op)
    if op.composite then
      local args = full_args(op, op.out)
      if op.out and not with_out then
        -- the out slot is NULL for the functional form
        for j, a in ipairs(args) do if a == "out" then args[j] = "NULL" end end
      end
      -- not dispatched, so no Autocast key: its cast and call below Autocast start here
      if GA.has(op) then
        c("  if (lt_autocast_active(lt_tls_included, lt_tls_excluded)) {")
        c(("    %s lt__ar;"):format(rt))
        c(("    if (autocast_try_%s(%s)) return lt__ar;"):format(op.name, join({ "&lt__ar", "0", table.unpack(args) })))
        c("  }")
      end
      -- not dispatched, so no Profile key: the profiler sees it from here
      c("  if (lt_tls_included & LT_KEYBIT(LT_KEY_PROFILE)) {")
      c(("    %s;"):format(hook_enter(op)))
      c(("    %s lt__r = %s(%s);"):format(rt, op.composite, join(args)))
      c(("    lt_dispatch_call_hook(LT_OP_%s, 1, NULL, 0);"):format(op.name))
      c("    return lt__r;")
      c("  }")
      c(("  return %s(%s);"):format(op.composite, join(args)))
    elseif op.composite_inplace then
      c("  lt_tls_inplace_op = true;")
      local args = c_argnames(op, false)
      args[#args + 1] = "self"
      c(("  lt_tensor *lt__r = lt_%s_out(%s);"):format(op.inplace_of.name, join(args)))
      c("  lt_tls_inplace_op = false;")
      c("  return lt__r;")
    else
      local args = full_args(op, op.out)
      if op.out and not with_out then
        for j, a in ipairs(args) do if a == "out" then args[j] = "NULL" end end
      end
      -- a NULL tensor is an earlier failure in the caller (a composite's chain of
      -- calls): its error stands; nothing here may read through it
      local req = {}
      for _, a in ipairs(op.c_args) do if a.type == "Tensor" then req[#req + 1] = "!" .. a.name end end
      if #req > 0 then
        c(("  if (%s) { lt_dispatch_null_arg(LT_OP_%s); return %s; }"):format(join(req, " || "), op.name, fail_value(op)))
      end
      local ks = keyset_expr(op)
      if op.out and not with_out then ks = ks:gsub(" | %(out %? out%->keys[^)]*%)", "") end
      c(("  lt_keyset lt__ks = %s;"):format(ks))
      complex_guard(op, with_out)
      if not op.cross_device then
        c(("  if (lt_keyset_mixed_backends(lt__ks)) { lt_dispatch_device_mismatch(LT_OP_%s, lt__ks); return %s; }"):format(op.name, fail_value(op)))
        same_device_check(op, with_out)
      end
      c(("  %s lt__r = lt_%s_redispatch(%s);"):format(rt, op.name, join({ "lt_dispatch_keys(lt__ks)", table.unpack(args) })))
      local okx = op.rkind == "tensor" and "lt__r" or (op.rkind == "list" and "lt__r.n >= 0" or "lt__r >= 0")
      if op.inplace_of or op.mutates then c(("  if (%s) lt_tensor_bump_version(self);"):format(okx)) end
      if with_out then c(("  if (%s) lt_tensor_bump_version(out);"):format(okx)) end
      for _, a in ipairs(op.schema.args) do
        if a.type == "Tensor[]" and a.mutable then
          c(("  if (%s) for (int lt__i = 0; lt__i < %s_n; lt__i++) lt_tensor_bump_version(%s[lt__i]);"):format(okx, a.name, a.name))
        end
      end
      c("  return lt__r;")
    end
    c("}\n")
  end
  entry(op.name, false)
  if op.out and not op.inplace_of then entry(op.name .. "_out", true) end
end


------------------------------------------------------------------------------
-- autograd kernels: for each op with `derivatives`, a node type (saved state,
-- backward formulas) and the Autograd-key kernel that records it
------------------------------------------------------------------------------
-- A formula is a C expression giving a new reference (or NULL on error): a
-- single call whose arguments are names: `grad` (gradient of output 1), the
-- op's argument names (tensors come from saved values, other arguments are
-- copied at record time), `result` / return names (saved outputs), and
-- NAME_meta (an input's shape and dtype, without keeping the input alive).
-- Anything longer belongs in a helper function in src/autograd/formulas.c.
local function ident_used(formula, name)
  return formula:find("%f[%w_]" .. name .. "%f[^%w_]") ~= nil
end

local CTX_FIELD = {
  ["Scalar"] = "lt_scalar %s;", ["Scalar?"] = "lt_scalar %s;",
  ["int"] = "int64_t %s;", ["int?"] = "int64_t %s;", ["Dim"] = "int64_t %s;", ["Dim?"] = "int64_t %s;",
  ["Index"] = "int64_t %s;", ["float"] = "double %s;", ["bool"] = "bool %s;", ["bool?"] = "int %s;",
  ["int[]"] = "int64_t %s_v[LT_MAX_DIMS]; int %s_n;", ["int[]?"] = "int64_t %s_v[LT_MAX_DIMS]; int %s_n;",
  ["Dim[]"] = "int64_t %s_v[LT_MAX_DIMS]; int %s_n;", ["Dim[]?"] = "int64_t %s_v[LT_MAX_DIMS]; int %s_n;",
  ["str"] = "char %s[32]; bool %s_set;", ["str?"] = "char %s[32]; bool %s_set;",
  ["ScalarType"] = "int %s;", ["ScalarType?"] = "int %s;",
}
local LIST_T = { ["int[]"] = true, ["int[]?"] = true, ["Dim[]"] = true, ["Dim[]?"] = true }
local STR_T = { ["str"] = true, ["str?"] = true }

local function autograd_kernel(op)
  local base = op.inplace_of or op
  local derivs = base.decl.derivatives
  local name = op.name
  local rets = base.schema.rets
  -- differentiable inputs, in schema order
  local inputs = {}
  for _, a in ipairs(op.c_args) do
    if (a.type == "Tensor" or a.type == "Tensor?") and derivs[a.name] then inputs[#inputs + 1] = a end
  end
  local all_formulas = {}
  for _, a in ipairs(inputs) do all_formulas[#all_formulas + 1] = derivs[a.name] end
  -- the joint formula (all the inputs' gradients in one call) may serve any input: what it
  -- names is saved for every one of them
  local joint = base.decl.joint_derivative
  if joint then all_formulas[#all_formulas + 1] = joint end
  local function used_by(nm)
    local idx = {}
    for i, a in ipairs(inputs) do
      if ident_used(derivs[a.name], nm) or (joint and ident_used(joint, nm)) then idx[#idx + 1] = i - 1 end
    end
    return idx
  end
  local saved_t, copied = {}, {}
  for _, a in ipairs(op.c_args) do
    local users = used_by(a.name)
    if #users > 0 then
      if a.type == "Tensor" or a.type == "Tensor?" then saved_t[#saved_t + 1] = { arg = a, users = users }
      elseif CTX_FIELD[a.type] then copied[#copied + 1] = a
      else error("formula of " .. name .. " uses argument " .. a.name .. " of unsupported type " .. a.type) end
    end
  end
  local out_names = {}
  for i, r in ipairs(rets) do
    local nm = (r.name and r.name ~= "") and r.name or ("result" .. (i > 1 and i or ""))
    out_names[i] = nm
  end
  local saved_out = {}
  for i, nm in ipairs(out_names) do
    local users = used_by(nm)
    if i == 1 and nm ~= "result" then for _, u in ipairs(used_by("result")) do users[#users + 1] = u end end
    if #users > 0 then saved_out[#saved_out + 1] = { idx = i, name = nm, users = users } end
  end
  local inplace = op.inplace_of ~= nil or op.mutates == true
  local multi = base.rkind == "multi"
  -- a multi-output op whose formulas name grad_NAME (NAME an output) differentiates
  -- through every output so named: each grad_NAME is that output's gradient or NULL
  local out_grads = {}
  if multi then
    for i, nm in ipairs(out_names) do
      if ident_used(table.concat(all_formulas, " "), "grad_" .. nm) then out_grads[#out_grads + 1] = { idx = i, name = nm } end
    end
  end

  -- context
  c(("typedef struct ctx_%s {"):format(name))
  for _, s in ipairs(saved_t) do c(("  lt_saved %s;"):format(s.arg.name)) end
  for _, s in ipairs(saved_out) do c(("  lt_saved out_%s;"):format(s.name)) end
  for _, a in ipairs(copied) do c("  " .. CTX_FIELD[a.type]:gsub("%%s", a.name)) end
  c("  int unused_;")
  c(("} ctx_%s;\n"):format(name))
  -- release
  c(("static void release_%s(lt_node *lt__n) {"):format(name))
  c(("  ctx_%s *lt__c = lt__n->ctx; (void)lt__c;"):format(name))
  for _, s in ipairs(saved_t) do c(("  lt_saved_release(&lt__c->%s);"):format(s.arg.name)) end
  for _, s in ipairs(saved_out) do c(("  lt_saved_release(&lt__c->out_%s);"):format(s.name)) end
  c("}\n")
  -- apply
  local nodename = base.decl.node_name or (base.name:gsub("^%l", string.upper):gsub("_(%l)", string.upper) .. "Backward0")
  c(("static int apply_%s(lt_node *lt__n, lt_tensor **lt__gin, lt_tensor **lt__gout) {"):format(name))
  c(("  ctx_%s *lt__c = lt__n->ctx; (void)lt__c;"):format(name))
  c("  lt_tensor *grad = lt__gin[0]; (void)grad;")
  c("  int lt__rc = -1;")
  if #out_grads > 0 then
    local any = {}
    for _, g in ipairs(out_grads) do
      c(("  lt_tensor *grad_%s = lt__gin[%d];"):format(g.name, g.idx - 1))
      any[#any + 1] = "grad_" .. g.name
    end
    c(("  if (!(%s)) return 0;"):format(join(any, " || ")))
  elseif multi then
    c("  if (!grad) return 0;   /* only the first output is differentiable */")
  else
    c("  if (!grad) return 0;")
  end
  for _, s in ipairs(saved_t) do c(("  lt_tensor *%s = NULL;"):format(s.arg.name)) end
  for _, s in ipairs(saved_out) do c(("  lt_tensor *%s = NULL;"):format(s.name)) end
  for _, a in ipairs(copied) do
    if LIST_T[a.type] then c(("  lt_intlist %s = {lt__c->%s_v, lt__c->%s_n};"):format(a.name, a.name, a.name))
    elseif STR_T[a.type] then c(("  const char *%s = lt__c->%s_set ? lt__c->%s : NULL;"):format(a.name, a.name, a.name))
    else c(("  %s %s = lt__c->%s;"):format(CTYPE[a.type], a.name, a.name)) end
  end
  for i, a in ipairs(inputs) do
    if ident_used(table.concat(all_formulas, " "), a.name .. "_meta") then
      c(("  const lt_input_meta *%s_meta = &lt__n->meta[%d];"):format(a.name, i - 1))
    end
  end
  if ident_used(table.concat(all_formulas, " "), "result") and out_names[1] ~= "result" then
    c(("  lt_tensor *result = NULL;"))
  end
  for _, s in ipairs(saved_t) do
    c(("  if (lt__c->%s.defined && !(%s = lt_unpack(lt__n, &lt__c->%s, %s))) goto lt__out;"):format(s.arg.name, s.arg.name, s.arg.name, cstr(s.arg.name)))
  end
  for _, s in ipairs(saved_out) do
    c(("  if (lt__c->out_%s.defined && !(%s = lt_unpack(lt__n, &lt__c->out_%s, %s))) goto lt__out;"):format(s.name, s.name, s.name, cstr(s.name)))
  end
  if ident_used(table.concat(all_formulas, " "), "result") and out_names[1] ~= "result" then
    c(("  result = %s;"):format(out_names[1]))
  end
  if joint then
    -- 1: it made the needed gradients (grads[i] for needs[i]); 0: it declined (the
    -- per-input formulas follow); -1: an error
    local needs = {}
    for i = 1, #inputs do needs[i] = ("lt__n->next[%d].fn != NULL"):format(i - 1) end
    c("  {")
    c(("    bool needs[%d] = {%s};"):format(#inputs, join(needs, ", ")))
    c(("    lt_tensor *grads[%d] = {0};"):format(#inputs))
    c(("    int lt__j = %s;"):format(joint))
    c("    if (lt__j < 0) goto lt__out;")
    c("    if (lt__j > 0) {")
    c(("      for (int i = 0; i < %d; i++) {"):format(#inputs))
    c("        if (!needs[i]) continue;")
    c("        lt__gout[i] = lt_grad_to_meta(grads[i], &lt__n->meta[i]);")
    c("        grads[i] = NULL;")
    c(("        if (!lt__gout[i]) { for (int k = i + 1; k < %d; k++) lt_tensor_release(grads[k]); goto lt__out; }"):format(#inputs))
    c("      }")
    c("      lt__rc = 0;")
    c("      goto lt__out;")
    c("    }")
    c("  }")
  end
  for i, a in ipairs(inputs) do
    c(("  if (lt__n->next[%d].fn) {"):format(i - 1))
    c(("    lt_tensor *lt__g = %s;"):format(derivs[a.name]))
    c("    if (!lt__g) goto lt__out;")
    c(("    lt__gout[%d] = lt_grad_to_meta(lt__g, &lt__n->meta[%d]);"):format(i - 1, i - 1))
    c(("    if (!lt__gout[%d]) goto lt__out;"):format(i - 1))
    c("  }")
  end
  c("  lt__rc = 0;")
  c("lt__out:")
  for _, s in ipairs(saved_t) do c(("  lt_tensor_release(%s);"):format(s.arg.name)) end
  for _, s in ipairs(saved_out) do c(("  lt_tensor_release(%s);"):format(s.name)) end
  c("  return lt__rc;")
  c("}\n")
  c(("static const lt_node_ops node_ops_%s = {%s, apply_%s, release_%s, NULL};\n"):format(
    name, cstr(inplace and (nodename:gsub("Backward0$", "_Backward0")) or nodename), name, name))

  -- the Autograd kernel
  local rt = RET_CTYPE[op.rkind]
  local with_out = op.out
  local params = full_params(op, with_out)
  local args = full_args(op, with_out)
  c(("static %s autograd_%s(%s) {"):format(rt, name, plist(cat({ "lt_keyset ks" }, params))))
  local req = {}
  for _, a in ipairs(inputs) do
    if a.type == "Tensor?" then req[#req + 1] = ("(%s && %s->requires_grad)"):format(a.name, a.name)
    else req[#req + 1] = a.name .. "->requires_grad" end
  end
  c(("  if (!lt_grad_enabled() || !(%s)) {"):format(join(req, " || ")))
  if base.view and not inplace and op.rkind == "tensor" then
    c(("    lt_tensor *lt__v = lt_%s_redispatch(%s);"):format(name, join(cat({ "ks" }, args))))
    c("    if (lt__v && lt_track_view(lt__v, self) < 0) { lt_tensor_release(lt__v); return NULL; }")
    c("    return lt__v;")
  else
    c(("    return lt_%s_redispatch(%s);"):format(name, join(cat({ "ks" }, args))))
  end
  c("  }")
  if with_out then
    c(("  if (out) { lt_error(%s); return %s; }"):format(
      cstr(base.lua .. ": out= arguments don't support automatic differentiation, but one of the arguments requires grad"),
      fail_value(op)))
  end
  if inplace then
    c(("  if (lt_check_inplace(%s, self) < 0) return NULL;"):format(cstr(op.lua)))
  end
  c(("  lt_node *lt__n = lt_node_new(&node_ops_%s, %d, %d, sizeof(ctx_%s));"):format(name, #inputs, #rets, name))
  c(("  if (!lt__n) return %s;"):format(fail_value(op)))
  c(("  ctx_%s *lt__c = lt__n->ctx; (void)lt__c;"):format(name))
  for i, a in ipairs(inputs) do c(("  lt_node_set_next(lt__n, %d, %s);"):format(i - 1, a.name)) end
  local function needed(users)
    local cs = {}
    for _, u in ipairs(users) do cs[#cs + 1] = ("lt__n->next[%d].fn"):format(u) end
    return join(cs, " || ")
  end
  for _, s in ipairs(saved_t) do
    local cond = needed(s.users)
    if s.arg.type == "Tensor?" then cond = s.arg.name .. " && (" .. cond .. ")" end
    if inplace and s.arg.name == "self" then
      -- the value before the op overwrites it
      c(("  if (%s) { lt_tensor *lt__o = lt_clone(self);   /* recorded: double backward reaches self's history */"):format(cond))
      c(("    if (!lt__o) { lt_node_release(lt__n); return NULL; }"))
      c(("    lt_save(&lt__c->self, lt__o, false, 0); lt_tensor_release(lt__o); }"))
    elseif inplace and s.arg.type:match("^Tensor") then
      -- the same tensor as self (x:mul_(x)) is the op's output once the op has run: saved as
      -- an output (without its grad_fn, which is this node: a cycle that leaked both)
      c(("  if (%s) lt_save(&lt__c->%s, %s, %s == self, 0);"):format(cond, s.arg.name, s.arg.name, s.arg.name))
    else
      c(("  if (%s) lt_save(&lt__c->%s, %s, false, 0);"):format(cond, s.arg.name, s.arg.name))
    end
  end
  for _, a in ipairs(copied) do
    if LIST_T[a.type] then
      c(("  lt__c->%s_n = %s.n; for (int i = 0; i < %s.n && i < LT_MAX_DIMS; i++) lt__c->%s_v[i] = %s.v[i];"):format(
        a.name, a.name, a.name, a.name, a.name))
    elseif STR_T[a.type] then
      c(("  if (%s) { snprintf(lt__c->%s, sizeof lt__c->%s, \"%%s\", %s); lt__c->%s_set = true; }"):format(a.name, a.name, a.name, a.name, a.name))
    else
      c(("  lt__c->%s = %s;"):format(a.name, a.name))
    end
  end
  c("  lt_keyset lt__ex = lt_tls_excluded;")
  c("  lt_tls_excluded |= LT_KEYBIT(LT_KEY_AUTOGRAD);")
  c(("  %s lt__r = lt_%s_redispatch(%s);"):format(rt, name, join(cat({ "ks" }, args))))
  c("  lt_tls_excluded = lt__ex;")
  if op.rkind == "tensor" then
    c("  if (!lt__r) { lt_node_release(lt__n); return NULL; }")
    for _, s in ipairs(saved_out) do
      c(("  if (%s) lt_save(&lt__c->out_%s, lt__r, true, 0);"):format(needed(s.users), s.name))
      -- in place: the entry point bumps self's version after this kernel returns
      if inplace then c(("  if (lt__c->out_%s.t) lt__c->out_%s.version++;"):format(s.name, s.name)) end
    end
    if base.view and not inplace then
      c("  if (lt_track_view(lt__r, self) < 0) { lt_node_release(lt__n); lt_tensor_release(lt__r); return NULL; }")
    end
    if inplace then
      c("  if (lt_rebase_history(self, lt__n) < 0) { lt_node_release(lt__n); lt_tensor_release(lt__r); return NULL; }")
    else
      c("  lt_set_history(lt__r, lt__n, 0);")
    end
  elseif op.rkind == "multi" then
    c("  if (lt__r < 0) { lt_node_release(lt__n); return lt__r; }")
    local rn = {}
    for i, r in ipairs(rets) do rn[i] = (r.name ~= "" and r.name or ("r" .. i)) end
    for _, s in ipairs(saved_out) do
      c(("  if (%s) lt_save(&lt__c->out_%s, *%s, true, %d);"):format(needed(s.users), s.name, rn[s.idx], s.idx - 1))
    end
    -- only floating outputs carry history: the first, or those whose grad_NAME a formula uses
    if #out_grads > 0 then
      for _, g in ipairs(out_grads) do c(("  lt_set_history(*%s, lt__n, %d);"):format(rn[g.idx], g.idx - 1)) end
    else
      c(("  lt_set_history(*%s, lt__n, 0);"):format(rn[1]))
    end
  else
    error("derivatives for return kind " .. op.rkind .. " not supported: " .. name)
  end
  c("  lt_node_release(lt__n);")
  c("  return lt__r;")
  c("}\n")
  op.autograd_kernel = "autograd_" .. name
end

-- an op that may get tensors requiring grad but has no formula: refuse rather than be wrong
local function autograd_refuse(op)
  local rt = RET_CTYPE[op.rkind]
  local params = full_params(op, op.out)
  local args = full_args(op, op.out)
  local req = {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor" then req[#req + 1] = a.name .. "->requires_grad"
    elseif a.type == "Tensor?" then req[#req + 1] = ("(%s && %s->requires_grad)"):format(a.name, a.name)
    elseif a.type == "Tensor[]" then req[#req + 1] = ("lt_any_requires_grad(%s, %s_n)"):format(a.name, a.name) end
  end
  if #req == 0 then return end
  c(("static %s autograd_%s(%s) {"):format(rt, op.name, plist(cat({ "lt_keyset ks" }, params))))
  c(("  if (lt_grad_enabled() && (%s)) {"):format(join(req, " || ")))
  c(("    lt_error(%s);"):format(cstr(op.lua .. ": the derivative of '" .. op.name .. "' is not implemented")))
  c(("    return %s;"):format(fail_value(op)))
  c("  }")
  c(("  return lt_%s_redispatch(%s);"):format(op.name, join(cat({ "ks" }, args))))
  c("}\n")
  op.autograd_kernel = "autograd_" .. op.name
end

c('#include <stdio.h>')
c('#include "autograd/formulas.h"\n')
for _, op in ipairs(ops) do
  if not op.composite and not op.composite_inplace then
    local base = op.inplace_of or op
    if base.decl.derivatives then autograd_kernel(op)
    elseif not op.nondiff then autograd_refuse(op) end
  end
end

-- the table
-- room after the generated ops for the ops defined at run time (src/dispatch/registry.h)
c("lt_op_entry lt_op_table[LT_NUM_OPS + LT_MAX_CUSTOM_OPS] = {")
for _, op in ipairs(ops) do
  local flags = {}
  if op.inplace_of or op.mutates then flags[#flags + 1] = "LT_OPF_INPLACE" end
  if op.view then flags[#flags + 1] = "LT_OPF_VIEW" end
  if op.out then flags[#flags + 1] = "LT_OPF_OUT" end
  if op.composite or op.composite_inplace then flags[#flags + 1] = "LT_OPF_COMPOSITE" end
  if op.nondiff then flags[#flags + 1] = "LT_OPF_NONDIFF" end
  if op.complex then
    flags[#flags + 1] = "LT_OPF_COMPLEX"
    -- the same kernel on every backend (views, copies): complex works on all of them
    if op.kernels.any and not op.kernels.cuda then flags[#flags + 1] = "LT_OPF_COMPLEX_ANY" end
  end
  -- backend kernels come from the backends' tables (lt_dispatch_register_backend)
  local kern = {}
  if op.autograd_kernel then kern[#kern + 1] = ("[LT_KEY_AUTOGRAD] = (void *)%s"):format(op.autograd_kernel) end
  if not op.composite and not op.composite_inplace then
    kern[#kern + 1] = ("[LT_KEY_PROFILE] = (void *)profile_%s"):format(op.name)
    if GA.has(op) then kern[#kern + 1] = ("[LT_KEY_AUTOCAST] = (void *)autocast_%s"):format(op.name) end
  end
  local schema = op.inplace_of and op.schema.text:gsub("^([%w_]+)", "%1_") or op.schema.text
  c(("  {%s, %s, %s, %s, {%s}},"):format(cstr(op.name), cstr(schema), cstr(op.doc),
    #flags > 0 and join(flags, " | ") or "0", join(kern)))
end
c("};")
c("const int lt_num_ops = LT_NUM_OPS;")
c("")
for _, line in ipairs(GA.table()) do c(line) end

------------------------------------------------------------------------------
-- kernels_B.h, kernels_B.c: each backend's kernels and its table
------------------------------------------------------------------------------
-- the hand-written headers declaring the `any` kernels (device-neutral, in src/core)
local ANY_HEADERS = { "core/views.h", "core/copy_ops.h", "core/shape_copies.h", "core/complex_views.h",
                      "composite/conv3d_generic.h" }

-- The float32 path of an op in float32_kernels (src/ops/lowp.lua) on backend b: a
-- kernel with the op's type that, when every floating tensor argument has one 16-bit
-- dtype, converts them to float32 (core conversions: kernels run below Autograd), runs
-- fn, and rounds the float32 results back to that dtype. Any other call goes to fn
-- untouched, so a mix (bfloat16 input, float32 weight) meets fn's own dtype checks.
local function widen_wrapper(op, b, fn, emit)
  local rt = RET_CTYPE[op.rkind]
  local name = ("lt_%s_%s_f32"):format(b, op.name)
  local tens = {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor" or a.type == "Tensor?" then tens[#tens + 1] = a.name
    elseif a.type == "Tensor[]" then die(op.name .. ": float32_kernels takes no Tensor[] argument") end
  end
  -- an out= form would need the result copied into out: no listed op has one yet
  if op.out then die(op.name .. ": float32_kernels takes ops without an out= form") end
  local fail = op.rkind == "tensor" and "NULL" or "-1"
  emit(("static %s %s(%s) {"):format(rt, name, plist(full_params(op, op.out))))
  -- lt__w: the one floating dtype of the tensor arguments, -2 for a mix
  emit("  int lt__w = -1;")
  for _, t in ipairs(tens) do
    emit(("  if (%s && lt_dtype_is_float((lt_dtype)%s->dtype)) lt__w = lt__w == -1 || lt__w == %s->dtype ? %s->dtype : -2;"):format(
      t, t, t, t))
  end
  emit(("  if (lt__w != LT_FLOAT16 && lt__w != LT_BFLOAT16) return %s(%s);"):format(fn, join(full_args(op, op.out))))
  local call = {}
  for _, a in ipairs(op.c_args) do
    if a.type == "Tensor" or a.type == "Tensor?" then
      emit(("  lt_tensor *lt__c_%s = %s && (%s->dtype == LT_FLOAT16 || %s->dtype == LT_BFLOAT16) ? lt_tensor_to_dtype_contig(%s, LT_FLOAT32) : %s;"):format(
        a.name, a.name, a.name, a.name, a.name, a.name))
      call[#call + 1] = "lt__c_" .. a.name
    else
      call[#call + 1] = a.name
    end
  end
  local cvt = {}
  for _, t in ipairs(tens) do cvt[#cvt + 1] = ("(lt__c_%s != %s && !lt__c_%s)"):format(t, t, t) end
  local function release()
    for _, t in ipairs(tens) do emit(("  if (lt__c_%s != %s) lt_tensor_release(lt__c_%s);"):format(t, t, t)) end
  end
  emit(("  if (%s) {"):format(join(cvt, " || ")))
  for _, t in ipairs(tens) do emit(("    if (lt__c_%s != %s) lt_tensor_release(lt__c_%s);"):format(t, t, t)) end
  emit(("    return %s;"):format(fail))
  emit("  }")
  local rets = {}
  if op.rkind == "multi" then
    for i, r in ipairs(op.schema.rets) do
      local rn = r.name ~= "" and r.name or ("r" .. i)
      rets[#rets + 1] = rn
      call[#call + 1] = rn
    end
  end
  emit(("  %s lt__r = %s(%s);"):format(rt, fn, join(call)))
  release()
  -- a float32 result back to the 16-bit dtype (integer results, indices, stay)
  emit("#define LT__NARROW(t) do { if ((t) && (t)->dtype == LT_FLOAT32) { \\")
  emit("    lt_tensor *lt__n = lt_tensor_to_dtype_contig((t), (lt_dtype)lt__w); lt_tensor_release(t); (t) = lt__n; } } while (0)")
  if op.rkind == "tensor" then
    emit("  LT__NARROW(lt__r);")
  elseif op.rkind == "multi" then
    emit("  if (lt__r >= 0) {")
    for _, rn in ipairs(rets) do emit(("    LT__NARROW(*%s);"):format(rn)) end
    local bad = {}
    for _, rn in ipairs(rets) do bad[#bad + 1] = "!*" .. rn end
    emit(("    if (%s) {"):format(join(bad, " || ")))
    for _, rn in ipairs(rets) do emit(("      lt_tensor_release(*%s); *%s = NULL;"):format(rn, rn)) end
    emit("      lt__r = -1;")
    emit("    }")
    emit("  }")
  else
    die(op.name .. ": float32_kernels takes ops returning tensors")
  end
  emit("#undef LT__NARROW")
  emit("  return lt__r;")
  emit("}\n")
  return name
end

local KERNEL_FILES = {}   -- name -> lines
for _, b in ipairs(D.BACKENDS) do
  local B = b:upper()
  local KH, KC = {}, {}
  local function kh(x) KH[#KH + 1] = x end
  local function kc(x) KC[#KC + 1] = x end
  kh("/* generated by tools/gen.lua from the declarations in src/ops — do not edit */")
  kh(("/* kernels_%s.h — the %s backend's kernels: the prototype of each kernel an op"):format(b, B))
  kh(("** declares for %s (its lt_NAME_backend_fn type), the generated default in-place"):format(b))
  kh(("** kernels, and the table the backend registers. Only src/%s includes it. */"):format(b))
  kh(("#ifndef LT_KERNELS_%s_H\n#define LT_KERNELS_%s_H\n"):format(B, B))
  kh('#include "lt_ops.h"\n')
  local declared = {}
  local function proto(op, fn)
    if declared[fn] then return end
    declared[fn] = true
    local rt = RET_CTYPE[op.rkind]
    kh(("%s%s%s(%s);"):format(rt, rt:sub(-1) == "*" and "" or " ", fn, plist(full_params(op, op.out))))
  end
  for _, op in ipairs(ops) do
    local fn, kind = kernel_of(op, b)
    if kind == "own" then proto(op, fn) end
  end
  kh("")
  kh("/* the default in-place kernels (NAME_ through NAME's out= kernel) */")
  for _, op in ipairs(ops) do
    local fn, kind = kernel_of(op, b)
    if kind == "default" then proto(op, fn) end
  end
  kh("")
  kh(("/* indexed by op id (LT_OP_*); NULL where %s has no kernel */"):format(b))
  kh(("extern void *const lt_%s_kernel_table[LT_NUM_OPS];\n"):format(b))
  kh("#endif")

  kc("/* generated by tools/gen.lua from the declarations in src/ops — do not edit */")
  kc(('#include "kernels_%s.h"'):format(b))
  for _, hdr in ipairs(ANY_HEADERS) do kc(('#include "%s"'):format(hdr)) end
  if b == "meta" then
    kc('#include "metadev/metadev.h"\n')
    kc("/* the meta kernels of the op families (src/ops/meta.lua, tools/gen_meta.lua) */")
    for _, line in ipairs(GM.bodies(function(op) return plist(full_params(op, op.out)) end)) do kc(line) end
  end
  kc("")
  kc("/* default in-place kernels: the out= kernel writing into self */")
  for _, op in ipairs(ops) do
    if op.defaults[b] then
      local base_fn = kernel_of(op.inplace_of, b)
      kc(("lt_tensor *lt_%s_%s_default(%s) {"):format(b, op.name, plist(full_params(op, false))))
      kc("  lt_tls_inplace_op = true;")
      kc(("  lt_tensor *lt__r = %s(%s);"):format(base_fn, join(cat(c_argnames(op, false), { "self" }))))
      kc("  lt_tls_inplace_op = false;")
      kc("  return lt__r;\n}\n")
    end
  end
  kc("/* each kernel has its op's kernel type: a prototype that differs is an")
  kc("** incompatible-pointer-types error (the Makefile makes it one) */")
  for _, op in ipairs(ops) do
    local fn = kernel_of(op, b)
    if fn then
      kc(("static const lt_%s_backend_fn lt__type_%s __attribute__((unused)) = %s;"):format(op.name, op.name, fn))
    end
  end
  kc("")
  -- float16/bfloat16 through float32 (src/ops/lowp.lua)
  local widened = {}
  kc("/* the kernels of src/ops/lowp.lua's float32_kernels: 16-bit floats through float32 */")
  for _, op in ipairs(ops) do
    local fn = kernel_of(op, b)
    if fn and op.widen16 and op.widen16[b] then widened[op.name] = widen_wrapper(op, b, fn, kc) end
  end
  kc(("void *const lt_%s_kernel_table[LT_NUM_OPS] = {"):format(b))
  for _, op in ipairs(ops) do
    local fn = kernel_of(op, b)
    if fn then kc(("  [LT_OP_%s] = (void *)%s,"):format(op.name, widened[op.name] or fn)) end
  end
  kc("};")
  KERNEL_FILES["kernels_" .. b .. ".h"] = KH
  KERNEL_FILES["kernels_" .. b .. ".c"] = KC
end

------------------------------------------------------------------------------
-- lua_ops.c: the Lua bindings
------------------------------------------------------------------------------
local LA = {
  ["Tensor"] = "LT_ARG_TENSOR", ["Tensor?"] = "LT_ARG_TENSOR_OPT", ["Tensor[]"] = "LT_ARG_TENSOR_LIST",
  ["Scalar"] = "LT_ARG_SCALAR", ["Scalar?"] = "LT_ARG_SCALAR_OPT",
  ["int"] = "LT_ARG_INT", ["int?"] = "LT_ARG_INT_OPT", ["Dim"] = "LT_ARG_DIM", ["Dim?"] = "LT_ARG_DIM_OPT",
  ["Index"] = "LT_ARG_INDEX",
  ["int[]"] = "LT_ARG_INTLIST", ["int[]?"] = "LT_ARG_INTLIST_OPT", ["Dim[]"] = "LT_ARG_DIMLIST", ["Dim[]?"] = "LT_ARG_DIMLIST_OPT",
  ["float"] = "LT_ARG_FLOAT", ["bool"] = "LT_ARG_BOOL", ["bool?"] = "LT_ARG_BOOL_OPT",
  ["str"] = "LT_ARG_STR", ["str?"] = "LT_ARG_STR_OPT",
  ["ScalarType"] = "LT_ARG_DTYPE", ["ScalarType?"] = "LT_ARG_DTYPE_OPT",
  ["Device?"] = "LT_ARG_DEVICE_OPT", ["Generator?"] = "LT_ARG_GENERATOR_OPT",
}
local VAL = {
  LT_ARG_TENSOR = "t", LT_ARG_TENSOR_OPT = "t", LT_ARG_SCALAR = "s", LT_ARG_SCALAR_OPT = "s",
  LT_ARG_INT = "i", LT_ARG_INT_OPT = "i", LT_ARG_DIM = "i", LT_ARG_DIM_OPT = "i", LT_ARG_INDEX = "i",
  LT_ARG_INTLIST = "l", LT_ARG_INTLIST_OPT = "l", LT_ARG_DIMLIST = "l", LT_ARG_DIMLIST_OPT = "l",
  LT_ARG_FLOAT = "f", LT_ARG_BOOL = "b", LT_ARG_BOOL_OPT = "i", LT_ARG_STR = "str", LT_ARG_STR_OPT = "str",
  LT_ARG_DTYPE = "i", LT_ARG_DTYPE_OPT = "i", LT_ARG_DEVICE_OPT = "dev", LT_ARG_GENERATOR_OPT = "gen",
}

local L = {}
local function l(s) L[#L + 1] = s end
l("/* generated by tools/gen.lua from the declarations in src/ops — do not edit */")
l('#include "lt_ops.h"')
l('#include "vm/largs.h"\n')

-- group by Lua name (overloads), keeping declaration order
local groups, order = {}, {}
-- a dotted Lua name ("linalg.solve", an alias "special.erf") is a function of the
-- namespace table torch.linalg, torch.special, ...: never a method (x:linalg.solve
-- is no Lua), so such a group has the function entry only
local function group_add(name, op, variants)
  if not groups[name] then groups[name] = { ops = {}, fn = false, method = false }; order[#order + 1] = name end
  local g = groups[name]
  g.ops[#g.ops + 1] = op
  if name:find(".", 1, true) then
    assert(variants:find("function"), op.name .. ": a namespaced Lua name (" .. name .. ") needs the function variant")
    g.fn = true
    return
  end
  if variants:find("function") then g.fn = true end
  if variants:find("method") then g.method = true end
end
-- the C identifier of a Lua name
local function cid(name) return (name:gsub("%.", "__")) end
for _, op in ipairs(ops) do
  group_add(op.lua, op, op.variants)
  for _, a in ipairs(op.alias) do group_add(a, op, op.variants) end
end

for _, op in ipairs(ops) do
  local specs = {}
  local all = {}
  for _, a in ipairs(op.schema.args) do all[#all + 1] = a end
  for _, a in ipairs(all) do
    local def = a.default and cstr(a.default) or "NULL"
    specs[#specs + 1] = ("  {%s, %s, %d, %s},"):format(cstr(a.name), LA[a.type], a.kwonly and 1 or 0, def)
  end
  if op.out then specs[#specs + 1] = '  {"out", LT_ARG_TENSOR_OPT, 1, "None"},' end
  l(("static const lt_argspec spec_%s_args[] = {"):format(op.name))
  for _, s in ipairs(specs) do l(s) end
  if #specs == 0 then l("  {NULL, 0, 0, NULL},") end
  l("};")
  l(("static const lt_opspec spec_%s = {%s, spec_%s_args, %d};\n"):format(op.name, cstr(op.lua), op.name, #specs))
end

-- a call of one overload: returns the number of results pushed
for _, op in ipairs(ops) do
  l(("static int call_%s(lua_State *L, lt_args *a) {"):format(op.name))
  -- C arguments from the parsed values, by position in the schema
  local cargs = {}
  local idx = {}
  for j, a in ipairs(op.schema.args) do idx[a.name] = j - 1 end
  for _, a in ipairs(op.c_args) do
    local j = idx[a.name]
    local f = VAL[LA[a.type]]
    if a.type == "Tensor[]" then
      cargs[#cargs + 1] = ("a->v[%d].list.v"):format(j)
      cargs[#cargs + 1] = ("a->v[%d].list.n"):format(j)
    else
      cargs[#cargs + 1] = ("a->v[%d].%s"):format(j, f)
    end
  end
  local nout = #op.schema.args   -- index of out in v
  local rg = op.lua_only.requires_grad and idx["requires_grad"]
  if op.rkind == "tensor" then
    if op.out then
      l(("  lt_tensor *r = a->v[%d].t ? lt_%s_out(%s) : lt_%s(%s);"):format(nout, op.name,
        join(cat(cargs, { ("a->v[%d].t"):format(nout) })), op.name, join(cargs)))
      l(("  if (r && a->v[%d].t) return lt_vm_return_arg(L, r, a, %d);"):format(nout, nout))
    else
      l(("  lt_tensor *r = lt_%s(%s);"):format(op.name, join(cargs)))
    end
    if op.inplace_of or op.mutates then
      l("  if (r) return lt_vm_return_arg(L, r, a, 0);")
    end
    if rg then
      l(("  if (r && a->v[%d].b && !lt_dtype_is_differentiable((lt_dtype)r->dtype)) {"):format(rg))
      l(("    lt_error(\"%s: argument 'requires_grad': only tensors of floating point dtype can require gradients (got %%s)\", lt_dtype_name((lt_dtype)r->dtype));"):format(op.name))
      l("    lt_tensor_release(r); r = NULL;")
      l("  }")
      l(("  if (r && a->v[%d].b) r->requires_grad = true;"):format(rg))
    end
    l("  return lt_vm_return_tensor(L, r, a);")
  elseif op.rkind == "multi" then
    local decls, ptrs = {}, {}
    for i = 1, #op.schema.rets do decls[#decls + 1] = ("r%d = NULL"):format(i); ptrs[#ptrs + 1] = "&r" .. i end
    l(("  lt_tensor *%s;"):format(join(decls, ", *")))
    l(("  int rc = lt_%s(%s);"):format(op.name, join(cat(cargs, ptrs))))
    local rs = {}
    for i = 1, #op.schema.rets do rs[#rs + 1] = "r" .. i end
    l(("  lt_tensor *rs[] = {%s};"):format(join(rs)))
    l(("  return lt_vm_return_tensors(L, rc, rs, %d, a);"):format(#op.schema.rets))
  elseif op.rkind == "list" then
    l(("  lt_tensor_list r = lt_%s(%s);"):format(op.name, join(cargs)))
    l("  return lt_vm_return_list(L, r, a);")
  elseif op.rkind == "none" then
    l(("  int r = lt_%s(%s);"):format(op.name, join(cargs)))
    l("  return lt_vm_return_none(L, r, a);")
  elseif op.rkind == "bool" then
    l(("  int r = lt_%s(%s);"):format(op.name, join(cargs)))
    l("  return lt_vm_return_bool(L, r, a);")
  elseif op.rkind == "scalar" then
    l(("  lt_scalar r = lt_%s(%s);"):format(op.name, join(cargs)))
    l("  return lt_vm_return_scalar(L, r, a);")
  end
  l("}\n")
end

for _, name in ipairs(order) do
  local g = groups[name]
  -- overloads of one Lua name that differ in variants (torch.where(cond, x, y)
  -- and x:where(cond, y)) get separate function and method entries
  local function emit(fname, want)
    fname = cid(fname)
    l(("static int %s(lua_State *L) {"):format(fname))
    l("  lt_args a;\n  lt_parse_error err;\n  err.score = -1;")
    for _, op in ipairs(g.ops) do
      if not want or op.variants:find(want) then
        l(("  if (lt_parse_args(L, &spec_%s, &a, &err) == 0) return call_%s(L, &a);"):format(op.name, op.name))
      end
    end
    l("  return lt_parse_raise(L, &err);")
    l("}\n")
  end
  for _, op in ipairs(g.ops) do
    if not (op.variants:find("function") and op.variants:find("method")) then g.split = true end
  end
  if name:find(".", 1, true) then g.split = true; g.method = false end
  if g.split then
    if g.fn then emit("lua_op_" .. name, "function") end
    if g.method then emit("lua_m_" .. name, "method") end
  else
    emit("lua_op_" .. name)
  end
end

l("const luaL_Reg lt_gen_functions[] = {")
-- a dotted name goes into its namespace table (src/vm/ltorch.c: register_functions)
for _, name in ipairs(order) do if groups[name].fn then l(("  {%s, lua_op_%s},"):format(cstr(name), cid(name))) end end
l("  {NULL, NULL}\n};\n")
l("const luaL_Reg lt_gen_methods[] = {")
for _, name in ipairs(order) do
  if groups[name].method then l(("  {%s, lua_%s_%s},"):format(cstr(name), groups[name].split and "m" or "op", cid(name))) end
end
l("  {NULL, NULL}\n};\n")

-- help text for `?` in the REPL: Lua name -> signature lines and doc
l("const lt_op_help lt_gen_help[] = {")
for _, name in ipairs(order) do
  for _, op in ipairs(groups[name].ops) do
    local sig = op.inplace_of and op.schema.text:gsub("^([%w_]+)", "%1_") or op.schema.text
    sig = sig:gsub("^[%w_]+", name)
    l(("  {%s, %s, %s, %d},"):format(cstr(name), cstr(sig), cstr(op.doc), op.nondiff and 0 or 1))
  end
end
l("  {NULL, NULL, NULL, 0}\n};")

------------------------------------------------------------------------------
-- ops.md: the op reference (manual source)
------------------------------------------------------------------------------
local M = {}
M[#M + 1] = "# lutorch op reference\n"
M[#M + 1] = "Generated from the op declarations in `src/ops/`. Dims and indices are 1-based;"
M[#M + 1] = "negative dims count from the end. `out=` is given in the trailing options table."
M[#M + 1] = "Under each op, its kernels: ✓ for a backend that has one (a device-neutral kernel counts"
M[#M + 1] = "for every backend), — for none yet; a composite op runs other ops, wherever they run.\n"

-- "kernels: cpu ✓, cuda —" or "kernels: composite"
local function kernels_line(op)
  if op.composite or op.composite_inplace then return "kernels: composite" end
  local ks = {}
  for _, b in ipairs(D.BACKENDS) do ks[#ks + 1] = b .. " " .. (kernel_of(op, b) and "✓" or "—") end
  return "kernels: " .. join(ks)
end
local byfile = {}
local fileorder = {}
for _, op in ipairs(ops) do
  if not byfile[op.file] then byfile[op.file] = {}; fileorder[#fileorder + 1] = op.file end
  table.insert(byfile[op.file], op)
end
for _, f in ipairs(fileorder) do
  M[#M + 1] = "## " .. f:match("([%w_]+)%.lua$") .. "\n"
  for _, op in ipairs(byfile[f]) do
    local sig = op.inplace_of and op.schema.text:gsub("^([%w_]+)", "%1_") or op.schema.text
    local forms = {}
    if op.variants:find("function") then forms[#forms + 1] = "torch." .. op.lua end
    if op.variants:find("method") and not op.lua:find(".", 1, true) then forms[#forms + 1] = "x:" .. op.lua end
    for _, a in ipairs(op.alias) do forms[#forms + 1] = a:find(".", 1, true) and "torch." .. a or a end
    M[#M + 1] = ("- `%s` — %s (%s%s%s)"):format(sig, op.doc, join(forms), op.out and "; out=" or "",
      op.nondiff and "; not differentiable" or "")
    M[#M + 1] = "  " .. kernels_line(op)
  end
  M[#M + 1] = ""
end

------------------------------------------------------------------------------
local function write(name, lines)
  local f = assert(io.open(outdir .. "/" .. name, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
end
write("lt_ops.h", H)
write("lt_ops.c", C)
for _, b in ipairs(D.BACKENDS) do
  write("kernels_" .. b .. ".h", KERNEL_FILES["kernels_" .. b .. ".h"])
  write("kernels_" .. b .. ".c", KERNEL_FILES["kernels_" .. b .. ".c"])
end
write("lua_ops.c", L)
-- the Torch7 mode's binding (tools/gen_t7.lua): the same ops, Torch7's call forms
write("lua_t7_ops.c", dofile((arg[0]:match("^(.*)[/\\]") or ".") .. "/gen_t7.lua")({
  ops = ops, parse_schema = parse_schema, LA = LA, VAL = VAL, cstr = cstr, join = join, cat = cat }))
write("ops.md", M)
