-- test_meta.lua — the meta device (src/metadev, man/meta.md): tensors with
-- sizes, strides and dtype and no data. A sweep over the op table runs every
-- op on CPU inputs and on the same inputs on meta, in a set of argument
-- patterns, and wants the meta results' shapes, dtypes and strides equal to
-- the CPU's; it prints the coverage and the ops it could not cover, by
-- reason. Then: memory untouched, the errors of data access and of mixing
-- devices, nn.Module built on meta and materialised with to_empty, autograd.
local T = require "testing"
local nn = require "nn"

-- the inputs of one call, on dev: copies of one set made on the CPU from one
-- seed (the same sizes and dtypes on both devices; each call gets fresh ones,
-- as in-place ops write them)
local BASE
local function inputs(dev)
  if not BASE then
    torch.manual_seed(7)
    local m = torch.randn(3, 3)
    local LU, piv = torch.linalg.lu_factor(m)
    local qa, tau = torch.geqrf(m)
    BASE = {
      x = torch.randn(2, 3), v = torch.randn(3), m = m, b3 = torch.randn(2, 3, 3),
      x4 = torch.randn(1, 2, 4, 4), w4 = torch.randn(3, 2, 3, 3),
      i = torch.tensor({{1, 3, 2}, {2, 1, 3}}), iv = torch.tensor({3, 1, 2}),
      t = torch.tensor({1, 3}),
      mask = torch.tensor({{true, false, true}, {false, true, false}}),
      d = torch.randn(2, 3, {dtype = torch.float64}),
      y = torch.randn(2, 3), v2 = torch.randn(2), r1 = torch.randn(1, 3), r2 = torch.randn(3, 2),
      pr = torch.rand(2, 3) * 0.8 + 0.1, p4 = torch.randn(1, 4, 2, 2),
      c = torch.randn(2, 3, {dtype = torch.cfloat}), z3 = torch.zeros(3), o3 = torch.ones(3),
      spd = m:matmul(m:t()) + torch.eye(3) * 3, LU = LU, piv = piv, qa = qa, tau = tau,
      spec = torch.stft(torch.randn(16), 4, {return_complex = true}),
    }
  end
  local I = {}
  for k, t in pairs(BASE) do I[k] = dev == "cpu" and t:clone() or t:to(dev) end
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
  -- the ops the generic patterns miss: in-place with a source, views, linear algebra's own inputs
  function(f, I) return f(I.x, 2, 1) end,
  function(f, I) return f(I.v) end,
  function(f, I) return f(I.x, 2, I.i, I.y) end,
  function(f, I) return f(I.x, 2, I.iv, I.y) end,
  function(f, I) return f(I.x, I.mask, I.y) end,
  function(f, I) return f(I.v2, I.x, I.v) end,
  function(f, I) return f(I.d, 2) end,
  function(f, I) return f(I.r1, 2, 3) end,
  function(f, I) return f(I.r1, {2, 3}) end,
  function(f, I) return f(I.pr, 2) end,
  function(f, I) return f(I.pr, I.pr) end,
  function(f, I) return f(I.pr + 2, 2) end,
  function(f, I) return f(I.p4, 2) end,
  function(f, I) return f({I.v, I.v2}) end,
  function(f, I) return f(I.x, I.v, 1, 1) end,
  function(f, I) return f(I.c) end,
  function(f, I) return f(I.r2) end,
  function(f, I) return f(I.x, torch.float64) end,
  function(f, I) return f(I.x, nil, nil, I.z3, I.o3, true, 0.1, 1e-5) end,
  function(f, I) return f(I.x, {2, 3}, I.o3, I.z3, 1e-5) end,
  function(f, I) return f(I.x, {3}, I.o3, I.z3, 1e-5) end,
  function(f, I) return f(I.spd) end,
  function(f, I) return f(I.m, I.x:t(), {upper = true}) end,
  function(f, I) return f(I.spd, I.x, {upper = false, left = false}) end,
  function(f, I) return f(I.LU, I.piv) end,
  function(f, I) return f(I.LU, I.piv, I.x:t()) end,
  function(f, I) return f(I.x:t(), I.LU, I.piv) end,
  function(f, I) return f({I.x, I.m, I.m}) end,
  function(f, I) return f(I.qa, I.tau, I.m) end,
  function(f, I) return f(I.spec, 4) end,
}

-- sizes as text, "2,3"
local function dims(t)
  local r = {}
  for i = 1, t:dim() do r[i] = t:size(i) end
  return table.concat(r, ",")
end

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

T.test("meta tensors: device, is_meta, printing, factories, x:to(\"meta\")", function()
  local x = torch.empty(2, 3, {device = "meta"})
  T.eq(x.device.type, "meta")
  T.eq(tostring(x.device), "meta")
  T.eq(x.device.index, nil)
  T.ok(x.is_meta)
  T.ok(not torch.ones(1).is_meta)
  T.eq(tostring(x), "tensor(..., device='meta', size=(2, 3))")
  T.eq(tostring(torch.zeros(4, {dtype = torch.int64, device = "meta"})), "tensor(..., device='meta', size=(4,), dtype=torch.int64)")
  T.eq(tostring(torch.device("meta")), "meta")
  for _, f in ipairs({ torch.zeros, torch.ones, torch.empty, torch.rand, torch.randn }) do
    local t = f(3, 4, {device = torch.device("meta")})
    T.ok(t.is_meta); T.eq(dims(t), "3,4")
  end
  T.eq(torch.randint(0, 5, {2, 2}, {device = "meta"}).dtype, torch.int64)
  T.eq(dims(torch.arange(10, {device = "meta"})), "10")
  local c = torch.randn(3, 4):t()
  local m = c:to("meta")
  T.ok(m.is_meta); T.eq(dims(m), dims(c)); T.eq(m.dtype, c.dtype)
  -- views keep their geometry on meta
  local v = torch.empty(4, 6, {device = "meta"}):t():narrow(1, 2, 3)
  local vc = torch.empty(4, 6):t():narrow(1, 2, 3)
  T.eq(dims(v), "3,4"); T.eq(v:stride(), vc:stride()); T.eq(v:storage_offset(), vc:storage_offset())
end)

T.test("complex tensors on meta", function()
  local z = torch.zeros(2, 3, {dtype = torch.cfloat, device = "meta"})
  local y = (z * z + 1):exp()
  T.ok(y.is_meta); T.eq(y.dtype, torch.cfloat); T.eq(dims(y), "2,3")
  T.eq((z:abs()).dtype, torch.float32)
  T.raises(function() return z:max() end, "no ordering")
end)

T.test("memory is untouched: a 10^12-element meta tensor costs nothing", function()
  collectgarbage(); collectgarbage()
  local before = torch.memory_allocated and torch.memory_allocated() or nil
  local big = torch.empty(1000000, 1000000, {device = "meta"})
  T.eq(big:numel(), 1000000000000)
  local y = (big * 2 + 1):sum(1)
  T.eq(dims(y), "1000000")
  local z = torch.randn(100000, 100000, {device = "meta"}):mm(torch.randn(100000, 100000, {device = "meta"}))
  T.eq(dims(z), "100000,100000")
  if before then T.eq(torch.memory_allocated(), before) end
end)

T.test("errors: reading data, copying out, mixing devices, data-dependent ops", function()
  local x = torch.ones(1, {device = "meta"})
  T.raises(function() return x:item() end, "item() cannot be called on meta tensors")
  T.raises(function() return x:to("cpu") end, "cannot copy out of meta tensor")
  T.raises(function() return x:tolist() end, "meta")
  T.raises(function() return torch.ones(2, 3, {device = "meta"}) + torch.ones(2, 3) end,
           "add: expected all tensors to be on the same device, but found tensors on cpu and meta")
  T.raises(function() return torch.mm(torch.ones(2, 2), torch.ones(2, 2, {device = "meta"})) end, "cpu and meta")
  T.raises(function() return torch.nonzero(torch.ones(3, {device = "meta"})) end, "nonzero: cannot run on meta tensors")
  T.raises(function() return torch.ones(3, {device = "meta"}):masked_select(torch.ones(3, {dtype = torch.bool, device = "meta"})) end,
           "depends on the data")
  T.raises(function() return torch.unique(torch.ones(3, {device = "meta"})) end, "unique")
  -- shape errors still come, with the CPU's words
  T.raises(function() return torch.ones(2, 3, {device = "meta"}) + torch.ones(4, {device = "meta"}) end, "add")
  T.raises(function() return torch.mm(torch.ones(2, 3, {device = "meta"}), torch.ones(2, 3, {device = "meta"})) end, "mm")
  local path = os.tmpname()
  T.raises(function() torch.save(torch.ones(2, {device = "meta"}), path) end, "meta")
  os.remove(path)
end)

T.test("the default device: guard and function forms, restored on error", function()
  T.eq(torch.get_default_device().type, "cpu")
  local cpu = torch.ones(2)
  do
    local _ <close> = torch.default_device("meta")
    T.ok(torch.zeros(2).is_meta)
    T.ok(torch.randn(2, 2).is_meta)
    T.ok(not torch.zeros_like(cpu).is_meta)   -- *_like follow their tensor
    -- data from Lua follows the default device too, as PyTorch's torch.tensor; a tensor's copy stays put
    local t = torch.tensor({{1, 2}, {3, 4}})
    T.ok(t.is_meta); T.eq(t.dtype, torch.int64); T.eq(dims(t), "2,2")
    T.ok(torch.tensor(1.5).is_meta)
    T.ok(torch.as_tensor({1, 2}).is_meta)
    T.ok(not torch.tensor({1}, {device = "cpu"}).is_meta)
    T.ok(not torch.tensor(cpu).is_meta)
    T.eq(torch.get_default_device().type, "meta")
  end
  T.ok(not torch.zeros(2).is_meta)
  T.raises(function() torch.with_default_device("meta", function() error("boom") end) end, "boom")
  T.ok(not torch.zeros(2).is_meta)
  local a, b = torch.with_default_device("meta", function(n) return torch.ones(n), 7 end, 3)
  T.ok(a.is_meta); T.eq(b, 7)
end)

T.test("nn.Module on meta, to_empty, load_state_dict", function()
  local make = function() return nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4)) end
  local big = torch.with_default_device("meta", function() return nn.Linear(4096, 4096) end)
  T.ok(big.weight.is_meta); T.eq(dims(big.weight), "4096,4096"); T.ok(big.weight.requires_grad)
  local m = torch.with_default_device("meta", make)
  for _, p in ipairs(m:parameters()) do T.ok(p.is_meta) end
  local y = m:forward(torch.randn(5, 16, {device = "meta"}))
  T.ok(y.is_meta); T.eq(dims(y), "5,4")
  local w = m:parameters()[1]
  T.eq(m:to_empty({device = "cpu"}), m)
  T.ok(rawequal(m:parameters()[1], w))   -- parameters keep their identity
  for _, p in ipairs(m:parameters()) do T.eq(p.device.type, "cpu"); T.ok(p.requires_grad) end
  local ref = make()
  m:load_state_dict(ref:state_dict())
  local x = torch.randn(3, 16)
  T.ok((m:forward(x) - ref:forward(x)):abs():max():item() < 1e-6)
  T.raises(function() m:to_empty() end, "to_empty")
  -- a CPU model moved to meta, and back through to_empty
  local c = make():to("meta")
  T.ok(c:parameters()[1].is_meta)
  c:to_empty({device = "cpu"})
  T.eq(c:parameters()[1].device.type, "cpu")
end)

T.test("autograd through meta tensors gives meta gradients", function()
  local w = torch.randn(3, 4, {device = "meta", requires_grad = true})
  local b = torch.zeros(3, {device = "meta", requires_grad = true})
  local x = torch.randn(5, 4, {device = "meta"})
  local loss = (x:matmul(w:t()) + b):tanh():pow(2):mean()
  T.ok(loss.is_meta); T.eq(loss:dim(), 0)
  loss:backward()
  T.ok(w.grad.is_meta); T.eq(dims(w.grad), dims(w))
  T.ok(b.grad.is_meta); T.eq(dims(b.grad), dims(b))
  -- a model's training step on meta
  local m = torch.with_default_device("meta", function() return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)) end)
  local out = m:forward(torch.randn(6, 4, {device = "meta"}))
  local l = nn.functional.cross_entropy(out, torch.zeros(6, {dtype = torch.int64, device = "meta"}))
  l:backward()
  for _, p in ipairs(m:parameters()) do T.ok(p.grad.is_meta); T.eq(dims(p.grad), dims(p)) end
end)

T.test("layers: forward, backward and an optimizer step on meta give the CPU's shapes", function()
  local optim = require "optim"
  local function build()
    torch.manual_seed(3)
    return nn.Sequential(
      nn.Conv2d(3, 4, 3, {padding = 1}), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
      nn.Upsample({scale_factor = 2}), nn.AdaptiveAvgPool2d({2, 2}), nn.Flatten(), nn.LayerNorm(16),
      nn.Dropout(0.5), nn.Linear(16, 5))
  end
  local function step(dev)
    local m = dev == "meta" and torch.with_default_device("meta", build) or build()
    m:train()
    local opt = optim.Adam(m:parameters(), {lr = 1e-3})
    local x = torch.randn(2, 3, 8, 8):to(dev)
    local y = m:forward(x)
    local loss = nn.functional.cross_entropy(y, torch.tensor({1, 4}):to(dev))
    opt:zero_grad()
    loss:backward()
    opt:step()
    local shapes = { dims(y), y.dtype.name }
    for _, p in ipairs(m:parameters()) do shapes[#shapes + 1] = dims(p.grad) .. "/" .. p.grad.device.type end
    return table.concat(shapes, " ")
  end
  T.eq(step("meta"), (step("cpu"):gsub("/cpu", "/meta")))
  -- embeddings: forward and backward
  local e = torch.with_default_device("meta", function() return nn.Embedding(10, 3) end)
  local out = e:forward(torch.tensor({{1, 2}, {3, 4}}):to("meta"))
  T.eq(dims(out), "2,2,3")
  out:sum():backward()
  T.ok(e.weight.grad.is_meta); T.eq(dims(e.weight.grad), "10,3")
end)

-- calls run on CPU tensors and on meta copies of them (contiguous: a strided input is made
-- inside fn): each result's geometry must match
local function same_on_meta(label, fn, ...)
  local args = { ... }
  local margs = {}
  for k, a in ipairs(args) do margs[k] = torch.is_tensor(a) and a:to("meta") or a end
  local cpu = flat({}, fn(table.unpack(args)))
  local meta = flat({}, fn(table.unpack(margs)))
  local diff = compare(cpu, meta)
  T.ok(diff == nil, label .. ": " .. tostring(diff))
end

T.test("linear algebra on meta: batched, complex, tall and wide, every mode", function()
  torch.manual_seed(3)
  local L = torch.linalg
  local function spd(t) return t:matmul(t.mT:conj()) + torch.eye(t:size(-1), {dtype = t.dtype}) * 4 end
  for _, dt in ipairs({ torch.float64, torch.cfloat }) do
    local A, Ab = torch.randn(3, 3, {dtype = dt}), torch.randn(2, 3, 3, {dtype = dt})
    local tall, wide = torch.randn(2, 5, 3, {dtype = dt}), torch.randn(3, 5, {dtype = dt})
    local B, b = torch.randn(3, 2, {dtype = dt}), torch.randn(3, {dtype = dt})
    local n = dt.name
    same_on_meta(n .. " solve", L.solve, Ab, B)
    same_on_meta(n .. " solve vector", L.solve, Ab, b)
    same_on_meta(n .. " solve right", function(a, x) return L.solve(a, x, {left = false}) end, Ab, B.mT)
    same_on_meta(n .. " solve_ex", L.solve_ex, A, B)
    same_on_meta(n .. " inv, det, slogdet", function(a) return L.inv(a), L.det(a), L.slogdet(a), L.inv_ex(a) end, Ab)
    same_on_meta(n .. " cholesky", function(a) return L.cholesky(a), L.cholesky(a, {upper = true}), L.cholesky_ex(a) end, spd(Ab))
    same_on_meta(n .. " cholesky_solve, inverse", function(a, x)
      local f = L.cholesky(a)
      return torch.cholesky_solve(x, f), torch.cholesky_inverse(f)
    end, spd(A), B)
    same_on_meta(n .. " lu", function(a) return L.lu_factor(a), L.lu_factor_ex(a), L.lu(a), torch.lu(a) end, tall)
    same_on_meta(n .. " lu_solve", function(a, x)
      local LU, piv = L.lu_factor(a)
      return L.lu_solve(LU, piv, x), L.lu_solve(LU, piv, x.mT, {left = false}),
             L.lu_solve(LU, piv, x, {adjoint = true}), torch.lu_unpack(LU, piv)
    end, Ab, B)
    same_on_meta(n .. " solve_triangular", function(a, x)
      return L.solve_triangular(a, x, {upper = true}), L.solve_triangular(a, x.mT, {upper = false, left = false}),
             torch.triangular_solve(x, a)
    end, Ab, B)
    for _, drv in ipairs({ "gels", "gelsy", "gelsd", "gelss" }) do
      same_on_meta(n .. " lstsq " .. drv, function(a, x) return L.lstsq(a, x, {driver = drv}) end, tall, torch.randn(2, 5, 2, {dtype = dt}))
    end
    same_on_meta(n .. " lstsq wide", L.lstsq, wide, torch.randn(3, 2, {dtype = dt}))
    for _, mode in ipairs({ "reduced", "complete", "r" }) do
      same_on_meta(n .. " qr " .. mode, function(a, w) return L.qr(a, {mode = mode}), L.qr(w, {mode = mode}) end, tall, wide)
    end
    same_on_meta(n .. " geqrf, householder, ormqr", function(a, c)
      local h, tau = torch.geqrf(a)
      return h, tau, L.householder_product(h, tau), torch.ormqr(h, tau, c), torch.ormqr(h, tau, c.mT, false, true)
    end, tall, torch.randn(2, 5, 4, {dtype = dt}))
    same_on_meta(n .. " eigh", function(a) return L.eigh(a), L.eigvalsh(a), L.eigh(a, {UPLO = "U"}) end, spd(Ab))
    same_on_meta(n .. " eig", function(a) return L.eig(a), L.eigvals(a) end, Ab)
    same_on_meta(n .. " svd", function(a, w)
      return L.svd(a), L.svd(a, {full_matrices = false}), L.svdvals(w), torch.svd(a)
    end, tall, wide)
    if dt == torch.float64 then
      same_on_meta("Torch7's pstrf and eig", function(a, s)
        return torch._pstrf(s), torch._eig_real(a, true), torch._eig_real(a)
      end, A, spd(A))
    end
    same_on_meta(n .. " pinv, rank, cond", function(a, s) return L.pinv(a), L.matrix_rank(a), L.cond(s) end, tall, Ab)
  end
end)

T.test("FFT, stft and the complex constructors on meta", function()
  torch.manual_seed(4)
  local F = torch.fft
  local r, c = torch.randn(2, 6, 5), torch.randn(2, 6, 5, {dtype = torch.cdouble})
  same_on_meta("fft", function(x, z)
    return F.fft(x), F.fft(z, 8, 2), F.ifft(z, {norm = "ortho"}), F.rfft(x), F.irfft(z), F.irfft(z, 7),
           F.hfft(z), F.ihfft(x), F.fft2(z), F.ifft2(x), F.rfft2(x), F.irfft2(z), F.fftn(z), F.ifftn(z, {3, 4}),
           F.rfftn(x), F.irfftn(z, {4, 4})
  end, r, c)
  same_on_meta("stft", function(s)
    local w = torch.hann_window(8, {device = s.device})
    local spec = torch.stft(s, 8, {hop_length = 2, window = w, return_complex = true})
    return spec, torch.istft(spec, 8, {hop_length = 2, window = w})
  end, torch.randn(2, 40))
  same_on_meta("complex, polar, angle", function(a, b, z)
    return torch.complex(a, b), torch.polar(a:abs(), b), torch.angle(z:t()), torch.angle(a), torch.angle(torch.ones(3, {dtype = torch.int64, device = a.device}))
  end, torch.randn(2, 3), torch.randn(3), torch.randn(4, 3, {dtype = torch.cfloat}))
end)

T.test("bad input on meta: the CPU's errors, by op and argument", function()
  local function both(fn, ...)
    local args, margs = { ... }, {}
    for k, a in ipairs(args) do margs[k] = torch.is_tensor(a) and a:to("meta") or a end
    local e1 = T.raises(function() return fn(table.unpack(args)) end)
    local e2 = T.raises(function() return fn(table.unpack(margs)) end)
    T.eq(e2:gsub("^.-:%d+: ", ""), e1:gsub("^.-:%d+: ", ""))
  end
  local L = torch.linalg
  both(L.solve, torch.randn(3, 4), torch.randn(3))
  both(L.inv, torch.randint(0, 5, {3, 3}))
  both(function(a, b) return L.lstsq(a, b, {driver = "gelsq"}) end, torch.randn(3, 2), torch.randn(3, 1))
  both(L.lstsq, torch.randn(3, 2), torch.randn(4, 1))
  both(function(a) return L.qr(a, {mode = "full"}) end, torch.randn(3, 2))
  both(function(a) return L.eigh(a, {UPLO = "X"}) end, torch.randn(3, 3))
  both(L.eig, torch.randn(2, 3))
  both(L.lu_solve, torch.randn(3, 3), torch.ones(3), torch.randn(3, 1))
  both(function(a) return torch.fft.fft(a, nil, 3) end, torch.randn(4, 4))
  both(function(a) return torch.fft.irfft(a, 0) end, torch.randn(4, {dtype = torch.cfloat}))
  both(torch.complex, torch.randn(3), torch.randn(3, {dtype = torch.float64}))
  both(function(p) return torch.multinomial(p, 5) end, torch.rand(2, 3))
  -- what the data decides is not checked on meta: a singular matrix solves
  T.ok(L.solve(torch.zeros(3, 3, {device = "meta"}), torch.zeros(3, {device = "meta"})).is_meta)
  T.ok(L.cholesky(torch.zeros(2, 3, 3, {device = "meta"})).is_meta)
end)

T.test("meta kernels release what they make (no live tensor left)", function()
  local function run()
    local x = torch.randn(5, 4, {device = "meta", requires_grad = true})
    local outs = { x:max(2), x:sort(2), x:topk(2, 2), x:var_mean(2), torch.pdist(x), torch.diag_embed(x),
                   x:cumsum(2), x:mm(x:t()), x:softmax(2), x:amax(2) }
    x:amax(2):sum():backward()
    pcall(function() return x:nonzero() end)
    pcall(function() return torch.unique(x) end)
    pcall(function() return x:item() end)
    local a = torch.randn(2, 4, 4, {device = "meta"})
    outs[#outs + 1] = { torch.linalg.svd(a), torch.linalg.qr(a), torch.linalg.lstsq(a, a), torch.linalg.lu(a),
                        torch.linalg.eig(a), torch.fft.rfft2(a), torch.linalg.solve(a, a) }
    pcall(function() return torch.linalg.qr(a, {mode = "bad"}) end)
    return #outs
  end
  run(); collectgarbage(); collectgarbage()
  local before = torch._live_tensors()
  for _ = 1, 3 do run() end
  collectgarbage(); collectgarbage()
  T.eq(torch._live_tensors(), before)
end)

T.done()
