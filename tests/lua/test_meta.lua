-- test_meta.lua — the meta device (src/metadev, man/meta.md): tensors with
-- sizes, strides and dtype and no data. A sweep over the op table runs every
-- op on CPU inputs and on the same inputs on meta, in a set of argument
-- patterns, and wants the meta results' shapes, dtypes and strides equal to
-- the CPU's; it prints the coverage and the ops it could not cover, by
-- reason. Then: memory untouched, the errors of data access and of mixing
-- devices, nn.Module built on meta and materialised with to_empty, autograd.
local T = require "testing"
local nn = require "nn"

-- the inputs of one call, on dev (made on the CPU from one seed, then moved:
-- the same sizes and dtypes on both devices)
local function inputs(dev)
  torch.manual_seed(7)
  local I = {
    x = torch.randn(2, 3), v = torch.randn(3), m = torch.randn(3, 3), b3 = torch.randn(2, 3, 3),
    x4 = torch.randn(1, 2, 4, 4), w4 = torch.randn(3, 2, 3, 3),
    i = torch.tensor({{1, 3, 2}, {2, 1, 3}}), iv = torch.tensor({3, 1, 2}),
    t = torch.tensor({1, 3}),
    mask = torch.tensor({{true, false, true}, {false, true, false}}),
    d = torch.randn(2, 3, {dtype = torch.float64}),
  }
  if dev ~= "cpu" then for k, t in pairs(I) do I[k] = t:to(dev) end end
  return I
end

-- argument patterns: each gets a fresh set of inputs
local PATTERNS = {
  function(f, I) return f(I.x) end,
  function(f, I) return f(I.x, I.x) end,
  function(f, I) return f(I.x, I.v) end,
  function(f, I) return f(I.x, 2) end,
  function(f, I) return f(I.x, 1, 1) end,
  function(f, I) return f(I.x, I.x, I.x) end,
  function(f, I) return f(I.x:t()) end,
  function(f, I) return f(I.x:t(), I.x:t()) end,
  function(f, I) return f(I.x, {dim = 2}) end,
  function(f, I) return f(I.x, 2, {keepdim = true}) end,
  function(f, I) return f(I.m) end,
  function(f, I) return f(I.m, I.m) end,
  function(f, I) return f(I.m, I.v) end,
  function(f, I) return f(I.v, I.v) end,
  function(f, I) return f(I.b3, I.b3) end,
  function(f, I) return f(I.x, I.m) end,
  function(f, I) return f(I.i) end,
  function(f, I) return f(I.i, I.i) end,
  function(f, I) return f(I.d) end,
  function(f, I) return f(I.x, I.d) end,
  function(f, I) return f(I.mask) end,
  function(f, I) return f(I.mask, I.x, I.x) end,
  function(f, I) return f(I.x, I.mask, 0) end,
  function(f, I) return f(I.x, I.mask) end,
  function(f, I) return f(I.x, I.mask, I.x) end,
  function(f, I) return f(I.x, I.x, I.m) end,
  function(f, I) return f(I.v:narrow(1, 1, 2), I.x, I.v) end,
  function(f, I) return f(I.x, I.v:narrow(1, 1, 2), I.v) end,
  function(f, I) return f(I.x, 2, I.i, I.x) end,
  function(f, I) return f(I.x, 2, I.iv, I.x) end,
  function(f, I) return f(I.x, 2, I.iv, 1.5) end,
  function(f, I) return f(I.b3, I.b3, I.b3) end,
  function(f, I) return f(I.m, I.b3, I.b3) end,
  function(f, I) return f(I.x, 2, I.i) end,
  function(f, I) return f(I.x, 1, I.iv:narrow(1, 1, 2)) end,
  function(f, I) return f(I.x4, I.w4) end,
  function(f, I) return f(I.x4, 2) end,
  function(f, I) return f(I.x4, {2, 2}) end,
  function(f, I) return f({I.x, I.x}) end,
  function(f, I) return f({I.x, I.x}, 2) end,
  function(f, I) return f(2, 3) end,
  function(f, I) return f({2, 3}) end,
  function(f, I) return f(5) end,
  function(f, I) return f(1, 4, 2) end,
  function(f, I) return f("ij,jk->ik", {I.x, I.m}) end,
  function(f, I) return f(I.x, 3, 2) end,
  function(f, I) return f(I.x, {3, 2}) end,
  function(f, I) return f(I.x, {3}) end,
  function(f, I) return f(I.x, I.t) end,
  function(f, I) return f(I.x, 0.5) end,
  function(f, I) return f(I.x, 2, 1, 2) end,
  function(f, I) return f(I.x4, 2, 2) end,
}

local function callable(name)
  local f = torch
  for part in name:gmatch("[^.]+") do f = type(f) == "table" and f[part] or nil end
  if type(f) == "function" then return f end
  local x = torch.ones(1)
  local ok, m = pcall(function() return x[name] end)
  if ok and type(m) == "function" then return m end
end

-- the results of a call, flattened: tensors and other values in order
local function flat(out, ...)
  for i = 1, select("#", ...) do
    local r = select(i, ...)
    if torch.is_tensor(r) then out[#out + 1] = r
    elseif type(r) == "table" and getmetatable(r) == nil then flat(out, table.unpack(r))
    else out[#out + 1] = r end
  end
  return out
end

local function geometry(t)
  return ("%s %s %s"):format(tostring(t:size()), t.dtype.name, table.concat(t:stride(), ","))
end

-- nil when the meta results match the CPU's, else what differs
local function compare(cpu, meta)
  if #cpu ~= #meta then return ("%d results on cpu, %d on meta"):format(#cpu, #meta) end
  for k = 1, #cpu do
    local a, b = cpu[k], meta[k]
    if torch.is_tensor(a) then
      if not torch.is_tensor(b) then return "result " .. k .. " is not a tensor on meta" end
      if b.device.type == "cpu" and b:dim() == 0 then goto continue end   -- Lua numbers only: a number again
      if not b.is_meta then return "result " .. k .. " is on " .. tostring(b.device) end
      if geometry(a) ~= geometry(b) then return ("result %d: cpu %s, meta %s"):format(k, geometry(a), geometry(b)) end
    end
    ::continue::
  end
end

T.test("every op: the meta result's shape, dtype and strides are the CPU's", function()
  local total, covered, no_kernel, data_dep, not_swept, bad, cpu_inside = 0, 0, {}, {}, {}, {}, {}
  for _, op in ipairs(torch._ops()) do
    local name = op.name
    local f = callable(name)
    if f and not name:find("^_") and name ~= "manual_seed" and name ~= "seed" then
      total = total + 1
      local ran, matched, reason = false, false, nil
      for _, pat in ipairs(PATTERNS) do
        local okc, cpu = pcall(function() return flat({}, pat(f, inputs("cpu"))) end)
        if okc and #cpu > 0 then
          ran = true
          if os.getenv("META_TRACE") then io.stderr:write(name, " ", _, "\n") end
          -- factories follow the default device: meta for this call
          local okm, meta = pcall(torch.with_default_device, "meta", function() return flat({}, pat(f, inputs("meta"))) end)
          if okm then
            local diff = compare(cpu, meta)
            if diff then bad[#bad + 1] = name .. ": " .. diff else matched = true end
          elseif meta:find("not implemented for meta") then reason = reason or "no meta kernel"
          elseif meta:find("found tensors on cpu and meta") then reason = "cpu tensor inside"
          elseif meta:find("depends on the data") or meta:find("read from the data") or meta:find("meta tensors")
              or meta:find("copy out of meta") then reason = reason or "data"
          else bad[#bad + 1] = name .. ": meta raised " .. meta end
        end
        if matched then break end
      end
      if matched then covered = covered + 1
      elseif not ran then not_swept[#not_swept + 1] = name
      elseif reason == "data" then data_dep[#data_dep + 1] = name
      elseif reason == "cpu tensor inside" then cpu_inside[#cpu_inside + 1] = name
      else no_kernel[#no_kernel + 1] = name end
    end
  end
  print(("  meta sweep: %d of %d ops covered (same shape, dtype and strides as on the cpu)"):format(covered, total))
  print(("  not covered, the result depends on the data (%d): %s"):format(#data_dep, table.concat(data_dep, " ")))
  print(("  not covered, a composite makes a cpu tensor of its own inside (%d): %s"):format(#cpu_inside,
        table.concat(cpu_inside, " ")))
  print(("  not covered, no meta kernel yet (%d): %s"):format(#no_kernel, table.concat(no_kernel, " ")))
  print(("  not covered, no argument pattern runs it on the cpu (%d): %s"):format(#not_swept, table.concat(not_swept, " ")))
  for i = 1, math.min(#bad, 40) do print("  MISMATCH " .. bad[i]) end
  T.eq(#bad, 0)
  T.ok(covered > 300, "covered " .. covered)
end)

T.done()
