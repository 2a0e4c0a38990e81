-- gen_autocast.lua — the Autocast key's wrappers, generated (part of tools/gen.lua).
--
-- src/ops/autocast.lua names, per device type, the ops torch.autocast casts
-- and their policy. For each such op this writes `autocast_try_OP`, which,
-- when autocast is on for the device of the call and the op has a policy
-- there, casts the op's floating tensor arguments (src/amp/autocast.h) and
-- runs the op on them below the Autocast key, with Autocast excluded; it
-- returns false (nothing done) otherwise. A dispatched op gets
-- `autocast_OP` at the Autocast key of the op table, which tries and else
-- redispatches; a composite op (not dispatched) tries from its entry point.
--
--   local GA = dofile(dir .. "/gen_autocast.lua")
--   GA.assign(ops, by_name, lists, die)   sets op.autocast = { cpu = POLICY, cuda = POLICY }
--   GA.functions(h)                       the wrappers' C text, for lt_ops.c
--   GA.table(h)                           lt_autocast_ops[] (the lists, for the binding and the docs)
local M = {}

local POLICY = {
  lower = "LT_AC_LOWER", fp32 = "LT_AC_FP32", fp32_dtype = "LT_AC_FP32_OPT_DTYPE",
  promote = "LT_AC_PROMOTE", banned = "LT_AC_BANNED", keep = "LT_AC_KEEP",
}
local DEVICES = { "cpu", "cuda" }

local listed = {}       -- ops with a policy, in declaration order
local functional = {}   -- { device, policy, name } of the Lua functionals

function M.assign(ops, by_name, lists, die)
  for _, l in ipairs(lists) do
    for dev, pols in pairs(l.autocast) do
      local known = false
      for _, d in ipairs(DEVICES) do known = known or d == dev end
      if not known then die(("%s: autocast: unknown device type %s"):format(l.file, dev)) end
      for pol, names in pairs(pols) do
        if pol == "functional" then
          for fpol, fnames in pairs(names) do
            if not POLICY[fpol] then die(("%s: autocast.%s.functional: unknown policy %s"):format(l.file, dev, fpol)) end
            for _, n in ipairs(fnames) do functional[#functional + 1] = { dev, fpol, n } end
          end
        else
          if not POLICY[pol] then die(("%s: autocast.%s: unknown policy %s"):format(l.file, dev, pol)) end
          for _, name in ipairs(names) do
            local op = by_name[name]
            if not op then die(("%s: autocast.%s.%s names %s, which is not an op"):format(l.file, dev, pol, name)) end
            if op.inplace_of or op.composite_inplace then
              die(("%s: autocast.%s.%s names %s, which works in place (only out-of-place ops are cast)"):format(l.file, dev, pol, name))
            end
            op.autocast = op.autocast or {}
            if op.autocast[dev] then die(("%s: autocast.%s lists %s twice"):format(l.file, dev, name)) end
            if pol == "fp32_dtype" then
              local has
              for _, a in ipairs(op.c_args) do has = has or (a.name == "dtype" and a.type == "ScalarType?") end
              if not has then die(("%s: autocast.%s.fp32_dtype: %s has no `ScalarType? dtype` argument"):format(l.file, dev, name)) end
            end
            op.autocast[dev] = pol
          end
        end
      end
    end
  end
  for _, op in ipairs(ops) do if op.autocast then listed[#listed + 1] = op end end
  table.sort(functional, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    if a[2] ~= b[2] then return a[2] < b[2] end
    return a[3] < b[3]
  end)
end

local function pol_c(op, dev) return op.autocast[dev] and POLICY[op.autocast[dev]] or "LT_AC_NONE" end

-- h: gen.lua's helpers { full_params, full_args, c_argnames, plist, join, fail_value, RET_CTYPE }
function M.functions(h)
  local L = {}
  local function c(s) L[#L + 1] = s end
  for _, op in ipairs(listed) do
    local rt = h.RET_CTYPE[op.rkind]
    local dispatched = not op.composite
    local params = h.full_params(op, op.out)
    local args = h.full_args(op, op.out)
    local fail = h.fail_value(op)
    -- the backend keys of the call, from its tensor arguments
    local keys, tens = {}, {}
    for _, a in ipairs(op.c_args) do
      if a.type == "Tensor" then keys[#keys + 1] = a.name .. "->keys"; tens[#tens + 1] = a
      elseif a.type == "Tensor?" then keys[#keys + 1] = ("(%s ? %s->keys : 0)"):format(a.name, a.name); tens[#tens + 1] = a
      elseif a.type == "Tensor[]" then
        keys[#keys + 1] = ("lt_tensors_keys(%s, %s_n)"):format(a.name, a.name); tens[#tens + 1] = a
      end
    end
    local first_tensor = tens[1]
    c(("/* autocast: %s (cpu: %s, cuda: %s) */"):format(op.name, op.autocast.cpu or "-", op.autocast.cuda or "-"))
    c(("static bool autocast_try_%s(%s) {"):format(op.name, h.plist({ rt .. " *lt__res", "lt_keyset ks", table.unpack(params) })))
    if op.out then c("  if (out) return false;   /* out= forms are never cast */") end
    -- a NULL required tensor is an earlier failure: the op's own path reports it
    local req = {}
    for _, a in ipairs(op.c_args) do if a.type == "Tensor" then req[#req + 1] = "!" .. a.name end end
    if #req > 0 then c(("  if (%s) return false;"):format(h.join(req, " || "))) end
    c("  lt_autocast_ctx lt__c;")
    c(("  int lt__pol = lt_autocast_policy(&lt__c, (%s) & LT_BACKEND_KEYS, %s, %s);"):format(
      #keys > 0 and h.join(keys, " | ") or "LT_KEYBIT(LT_KEY_CPU)", pol_c(op, "cpu"), pol_c(op, "cuda")))
    c("  if (lt__pol == LT_AC_NONE) return false;")
    -- the steps only the op's policies need (a device's policy decides at run time)
    local function any(pol) return op.autocast.cpu == pol or op.autocast.cuda == pol end
    if any("banned") then
      c(("  if (lt__pol == LT_AC_BANNED) { lt_autocast_banned(\"%s\"); *lt__res = %s; return true; }"):format(op.lua, fail))
    end
    -- the arguments of the call below Autocast: cast tensors, the dtype= of fp32_dtype
    local call = {}
    local has_dtype = false
    for _, a in ipairs(op.c_args) do
      if a.type == "Tensor" or a.type == "Tensor?" then call[#call + 1] = "lt__c_" .. a.name
      elseif a.type == "Tensor[]" then call[#call + 1] = "lt__c_" .. a.name; call[#call + 1] = a.name .. "_n"
      elseif a.name == "dtype" and a.type == "ScalarType?" then call[#call + 1] = "lt__dtype"; has_dtype = true
      else call[#call + 1] = a.name end
    end
    if has_dtype then
      local fa = first_tensor and first_tensor.type ~= "Tensor[]" and first_tensor.name
      -- PyTorch: the first argument decides; a given dtype wins
      c(("  int lt__dtype = lt__pol == LT_AC_FP32_OPT_DTYPE && dtype < 0 && %s ? LT_FLOAT32 : dtype;"):format(
        fa and ("lt_autocast_eligible(&lt__c, " .. fa .. ")") or "false"))
    end
    if any("promote") then
      c("  if (lt__pol == LT_AC_PROMOTE) {")
      for _, a in ipairs(tens) do
        if a.type == "Tensor[]" then
          c(("    for (int lt__i = 0; lt__i < %s_n; lt__i++) lt_autocast_promote(&lt__c, \"%s\", %s[lt__i]);"):format(a.name, op.lua, a.name))
        else
          c(("    lt_autocast_promote(&lt__c, \"%s\", %s);"):format(op.lua, a.name))
        end
      end
      c("  }")
    end
    -- fp32_dtype and keep leave the tensors as they are; the others cast them
    c("  bool lt__cast = lt__pol != LT_AC_FP32_OPT_DTYPE && lt__pol != LT_AC_KEEP;")
    for _, a in ipairs(tens) do
      if a.type == "Tensor[]" then
        c(("  lt_tensor *const *lt__c_%s = lt__cast ? lt_autocast_cast_list(&lt__c, %s, %s_n) : %s;"):format(a.name, a.name, a.name, a.name))
      else
        c(("  lt_tensor *lt__c_%s = lt__cast ? lt_autocast_cast(&lt__c, %s) : %s;"):format(a.name, a.name, a.name))
      end
    end
    c(("  if (lt__c.failed) { lt_autocast_end(&lt__c); *lt__res = %s; return true; }"):format(fail))
    c("  lt_autocast_begin_call(&lt__c);")
    if op.rkind == "multi" then
      for i, r in ipairs(op.schema.rets) do call[#call + 1] = (r.name ~= "" and r.name or ("r" .. i)) end
    end
    if dispatched then
      -- below Autocast on the same keys: a cast keeps each tensor's device and autograd key
      local cargs = {}
      for _, x in ipairs(call) do cargs[#cargs + 1] = x end
      if op.out then
        -- the kernel's out slot follows the op's arguments (before multi results)
        local n = #h.c_argnames(op, false)
        table.insert(cargs, n + 1, "NULL")
      end
      c(("  *lt__res = lt_%s_redispatch(%s);"):format(op.name, h.join({ "ks & lt_keyset_below(LT_KEY_AUTOCAST)", table.unpack(cargs) })))
    else
      c(("  *lt__res = lt_%s(%s);"):format(op.name, h.join(call)))
    end
    c("  lt_autocast_end(&lt__c);")
    c("  return true;")
    c("}\n")
    if dispatched then
      c(("static %s autocast_%s(%s) {"):format(rt, op.name, h.plist({ "lt_keyset ks", table.unpack(params) })))
      c(("  %s lt__r;"):format(rt))
      c(("  if (autocast_try_%s(%s)) return lt__r;"):format(op.name, h.join({ "&lt__r", "ks", table.unpack(args) })))
      c(("  return lt_%s_redispatch(%s);"):format(op.name, h.join({ "ks", table.unpack(args) })))
      c("}\n")
    end
  end
  return L
end

-- lt_autocast_ops[]: every listed op and functional with its policy per device
function M.table(h)
  local L = {}
  local function c(s) L[#L + 1] = s end
  c("const lt_autocast_entry lt_autocast_ops[] = {")
  for _, op in ipairs(listed) do
    c(("  { \"%s\", \"%s\", %s, %s, false },"):format(op.name, op.lua, pol_c(op, "cpu"), pol_c(op, "cuda")))
  end
  for _, f in ipairs(functional) do
    local cpu = f[1] == "cpu" and POLICY[f[2]] or "LT_AC_NONE"
    local cuda = f[1] == "cuda" and POLICY[f[2]] or "LT_AC_NONE"
    c(("  { \"%s\", \"%s\", %s, %s, true },"):format(f[3], f[3], cpu, cuda))
  end
  c("  { NULL, NULL, 0, 0, false }")
  c("};")
  return L
end

-- whether op has a try function (composite entry points call it)
function M.has(op) return op.autocast ~= nil end

return M
