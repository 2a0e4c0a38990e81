-- torch.save / torch.load / torch.serialize / torch.deserialize: round trips of every kind
-- of value, tensors of every dtype and view, mmap loads, nn modules and optimizers, file
-- handles, registered classes, save errors.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"

local dir = os.getenv("TMPDIR") or "/tmp"
local base = ("%s/lt_serial_test_%d_%d"):format(dir, math.random(1, 1 << 30), os.time())
local files = {}
local function tmp(name)
  local p = base .. "_" .. name
  files[#files + 1] = p
  return p
end
local function cleanup() for _, p in ipairs(files) do os.remove(p) end end

local function rt(v) return torch.deserialize(torch.serialize(v)) end

local DTYPES = { "float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool" }

T.test("scalars: nil, booleans, integers stay integers, floats bit-exact", function()
  T.eq(rt(nil), nil)
  T.eq(rt(true), true)
  T.eq(rt(false), false)
  for _, i in ipairs({ 0, 1, -1, 127, 128, -129, math.maxinteger, math.mininteger, 1 << 40 }) do
    local r = rt(i)
    T.eq(math.type(r), "integer")
    T.eq(r, i)
  end
  for _, f in ipairs({ 0.5, -2.25, 1e300, 5e-324, math.huge, -math.huge, math.pi, 3.0 }) do
    local r = rt(f)
    T.eq(math.type(r), "float")
    T.eq(string.pack("<d", r), string.pack("<d", f))
  end
  local nz = rt(-0.0)
  T.eq(string.pack("<d", nz), string.pack("<d", -0.0))
  local nan = rt(0 / 0)
  T.ok(nan ~= nan)
  T.eq(string.pack("<d", nan), string.pack("<d", 0 / 0))
end)

T.test("strings are binary safe", function()
  local s = {}
  for i = 0, 255 do s[#s + 1] = string.char(i) end
  s = table.concat(s)
  T.eq(rt(s), s)
  T.eq(rt(""), "")
  local big = string.rep("ab\0", 100000)
  T.eq(rt(big), big)
end)

T.test("tables: nested, cycles, shared references, any key type", function()
  local shared = { 1, 2, 3 }
  local v = { a = shared, b = { shared, { deep = { deeper = "x" } } }, [1] = "one", [2.5] = "float key",
              [true] = "t", [false] = "f", [shared] = "table key" }
  v.self = v
  v.b.back = v
  local r = rt(v)
  T.eq(r.self, r)
  T.eq(r.b.back, r)
  T.eq(r.a, r.b[1])
  T.eq(r.a[3], 3)
  T.eq(r.b[2].deep.deeper, "x")
  T.eq(r[1], "one")
  T.eq(r[2.5], "float key")
  T.eq(r[true], "t")
  T.eq(r[false], "f")
  T.eq(r[r.a], "table key")
  local n = 0
  for _ in pairs(r) do n = n + 1 end
  T.eq(n, 8)
end)

T.test("deep nesting (100000 levels) saves and loads without recursion", function()
  local root = {}
  local t = root
  for i = 1, 100000 do t.next = { i = i }; t = t.next end
  local r = rt(root)
  local k = 0
  t = r
  while t.next do t = t.next; k = k + 1 end
  T.eq(k, 100000)
  T.eq(t.i, 100000)
end)

T.test("dtypes and devices load back as the same objects", function()
  local v = { dt = torch.float64, again = torch.float64, dev = torch.device("cpu"), all = {} }
  for _, name in ipairs({ "float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool" }) do
    v.all[#v.all + 1] = torch[name]
  end
  local w = torch.deserialize(torch.serialize(v))
  T.ok(w.dt == torch.float64 and w.again == torch.float64, "dtype identity")
  for i, d in ipairs(v.all) do T.ok(w.all[i] == d, tostring(d)) end
  T.eq(tostring(w.dev), "cpu")
  T.eq(torch.zeros(2, { dtype = w.dt }).dtype == torch.float64, true)
end)

T.test("tensors of every dtype, shapes, 0-d, empty", function()
  for _, dt in ipairs(DTYPES) do
    local x
    if dt == "bool" then x = torch.rand(5, 7):gt(0.5)
    elseif dt:match("^u?int") then x = (torch.rand(5, 7) * 100):to(dt)
    else x = torch.randn(5, 7):to(dt) end
    local y = rt(x)
    T.eq(y.dtype.name, dt)
    T.deq(y.shape, { 5, 7 })
    T.ok(y:equal(x), dt)
  end
  local s = torch.tensor(3.5)
  T.eq(rt(s):item(), 3.5)
  T.eq(rt(s):dim(), 0)
  local e = torch.zeros(0, 4)
  T.deq(rt(e).shape, { 0, 4 })
end)

T.test("float tensors bit-exact including nan, inf, -0", function()
  local x = torch.tensor({ 0 / 0, math.huge, -math.huge, -0.0, 1e-45, 3.4e38 }, { dtype = torch.float32 })
  local y = rt(x)
  T.eq(torch.serialize(y), torch.serialize(x))
  local d = torch.tensor({ 0 / 0, -0.0, 5e-324 }, { dtype = torch.float64 })
  T.eq(torch.serialize(rt(d)), torch.serialize(d))
end)

T.test("views: non-contiguous, offsets, two views of one storage stay one storage", function()
  local x = torch.randn(6, 8)
  local v = { full = x, t = x:t(), row = x[3], col = x:select(2, 5), nar = x:narrow(1, 2, 3):narrow(2, 3, 4),
              step = x:view(3, 16):narrow(2, 5, 4):t() }
  local r = rt(v)
  for k, t in pairs(v) do
    T.ok(r[k]:equal(t), k)
    T.deq(r[k]:stride(), t:stride(), k)
  end
  local base_ptr = r.full:storage_info().data
  for k in pairs(v) do T.eq(r[k]:storage_info().data, base_ptr, k) end
  r.row:fill_(42)
  T.eq(r.full[3][1], 42)
  T.eq(r.t[1][3], 42)
end)

T.test("a small view of a big storage saves only the bytes it needs", function()
  local big = torch.randn(1000, 1000)
  local row = big[500]
  local s = torch.serialize(row)
  T.ok(#s < 4000 + 400, "serialized size " .. #s)
  local r = torch.deserialize(s)
  T.ok(r:equal(row))
  T.eq(r:storage_info().nbytes, 4000)
  -- a view of int8 and a float view sharing a storage keep working
  local b = torch.arange(0, 100, { dtype = torch.int8 })
  local part = b:narrow(1, 11, 3)
  local r2 = rt({ part, b:narrow(1, 51, 5) })
  T.tensor(r2[1], { 10, 11, 12 })
  T.tensor(r2[2], { 50, 51, 52, 53, 54 })
  T.eq(r2[1]:storage_info().data, r2[2]:storage_info().data)
end)

T.test("requires_grad is kept; loaded tensors are leaves", function()
  local w = torch.randn(3, 3, { requires_grad = true })
  local h = w * 2
  local r = rt({ w = w, h = h, p = torch.ones(2) })
  T.eq(r.w.requires_grad, true)
  T.eq(r.w.is_leaf, true)
  T.eq(r.h.requires_grad, true)
  T.eq(r.h.is_leaf, true)
  T.eq(r.p.requires_grad, false)
  local l = (r.w * r.w):sum()
  l:backward()
  T.ok(r.w.grad:equal(r.w * 2))
end)

T.test("file paths, file handles (several objects in one file), strings", function()
  local p = tmp("a.lt")
  local v = { x = torch.randn(4, 4), n = 12, s = "str" }
  torch.save(p, v)
  local r = torch.load(p)
  T.ok(r.x:equal(v.x))
  T.eq(r.n, 12)
  local p2 = tmp("b.lt")
  local f = assert(io.open(p2, "wb"))
  torch.save(f, v)
  torch.save(f, { 1, 2, 3 })
  torch.save(f, "third")
  f:close()
  f = assert(io.open(p2, "rb"))
  local a, b, c = torch.load(f), torch.load(f), torch.load(f)
  f:close()
  T.ok(a.x:equal(v.x))
  T.deq(b, { 1, 2, 3 })
  T.eq(c, "third")
  -- string form equals the file's bytes
  f = assert(io.open(p, "rb"))
  local bytes = f:read("a")
  f:close()
  T.eq(bytes, torch.serialize(v):sub(1, 0) .. bytes)
  T.ok(torch.deserialize(bytes).x:equal(v.x))
  -- overwriting replaces
  torch.save(p, "new")
  T.eq(torch.load(p), "new")
end)

T.test("mmap loads map tensor data instead of reading it", function()
  local p = tmp("m.lt")
  local v = { a = torch.randn(256, 256), b = torch.arange(0, 1000), c = torch.randn(10):to("float16") }
  v.at = v.a:t()
  torch.save(p, v)
  local r = torch.load(p, { mmap = true })
  for k, t in pairs(v) do T.ok(r[k]:equal(t), k) end
  local info = r.a:storage_info()
  T.eq(info.mapped, true)
  T.eq(info.data % 64, 0)
  T.eq(r.at:storage_info().data, info.data)
  T.eq(r.b:storage_info().mapped, true)
  -- writes are private (copy on write): the file is unchanged
  r.a:fill_(7)
  T.eq(r.a[1][1], 7)
  local again = torch.load(p)
  T.ok(again.a:equal(v.a))
  -- verify = true checks data checksums on a mapped load too
  local r2 = torch.load(p, { mmap = true, verify = true })
  T.ok(r2.a:equal(v.a))
  -- a normal load is not mapped
  T.eq(again.a:storage_info().mapped, false)
  r, r2 = nil, nil
  collectgarbage()
end)

T.test("registered classes: rebuilt with their metatable; unknown names are errors", function()
  local Point = {}
  Point.__index = Point
  function Point.new(x, y) return setmetatable({ x = x, y = y }, Point) end
  function Point:norm2() return self.x * self.x + self.y * self.y end
  torch.serialization.register_class("test.Point", Point)
  local r = rt({ p = Point.new(3, 4), q = Point.new(1, 1) })
  T.eq(getmetatable(r.p), Point)
  T.eq(r.p:norm2(), 25)
  -- custom hooks
  local Cache = {}
  Cache.__index = Cache
  torch.serialization.register_class("test.Cache", Cache, {
    save = function(c) return { n = c.n }, "extra" end,
    load = function(c, extra) c.rebuilt = extra; c.memo = {}; setmetatable(c, Cache) end,
  })
  local c = rt(setmetatable({ n = 5, memo = { f = print } }, Cache))
  T.eq(c.n, 5)
  T.eq(c.rebuilt, "extra")
  T.eq(getmetatable(c), Cache)
  -- unregistered metatable: a save error naming where
  local Anon = { __name = "Anon" }
  T.raises(function() torch.serialize({ list = { setmetatable({}, Anon) } }) end,
    "torch.serialize: cannot save a table of class 'Anon'", "value.list[1]")
  -- a file naming an unknown class
  local s = torch.serialize(Point.new(1, 2))
  torch.serialization.unregister_class("test.Point")
  T.raises(function() torch.deserialize(s) end, "torch.deserialize", "test.Point", "not registered")
  torch.serialization.register_class("test.Point", Point)
  T.eq(torch.deserialize(s).y, 2)
end)

T.test("save errors name the value: function, userdata, coroutine", function()
  T.raises(function() torch.serialize({ model = { _forward_hooks = { print } } }) end,
    "cannot save a function (at value.model._forward_hooks[1])")
  T.raises(function() torch.serialize({ f = io.stdout }) end, "cannot save a userdata (at value.f)")
  T.raises(function() torch.serialize({ ["a key"] = { coroutine.create(print) } }) end,
    "cannot save a thread", "value[\"a key\"][1]")
  T.raises(function() torch.serialize(print) end, "cannot save a function (at value)")
  T.raises(function() torch.save(42, 1) end, "torch.save: argument 'path'")
  T.raises(function() torch.load({}) end, "torch.load: argument 'path'")
  T.raises(function() torch.load(base .. "_does_not_exist") end, "torch.load", "cannot open")
  T.raises(function() torch.save("/nonexistent_dir/x.lt", 1) end, "torch.save", "cannot create")
end)

T.test("nn: a trained model's state_dict reloads into a fresh model with identical outputs", function()
  local nn = require "nn"
  torch.manual_seed(3)
  local function make() return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Linear(16, 3)) end
  local model = make()
  local optim = require "optim"
  local opt = optim.Adam(model:parameters(), { lr = 0.01 })
  local x, y = torch.randn(32, 4), torch.randint(1, 4, { 32 })
  for _ = 1, 5 do
    opt:zero_grad()
    local loss = nn.functional.cross_entropy(model(x), y)
    loss:backward()
    opt:step()
  end
  model:eval()
  local p = tmp("sd.lt")
  torch.save(p, model:state_dict())
  local sd = torch.load(p)
  local keys = {}
  for k in pairs(sd) do keys[#keys + 1] = k end
  T.eq(keys[1], "1.weight")          -- ordered dict order kept
  local fresh = make()
  fresh:load_state_dict(sd)
  fresh:eval()
  T.ok(fresh(x):equal(model(x)))
end)

T.test("nn: whole modules round trip (class, parameters, buffers, training flag, hooks dropped)", function()
  local nn = require "nn"
  local model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
  model:register_forward_hook(function() end)
  model:eval()
  local r = rt({ model = model })
  local m = r.model
  T.eq(getmetatable(m), getmetatable(model))
  T.eq(m.training, false)
  local x = torch.randn(4, 3)
  T.ok(m(x):equal(model(x)))
  T.eq(#m:parameters(), 4)
  T.ok(nn.is_parameter(m[1].weight))
  T.eq(m[1].weight.requires_grad, true)
  T.eq(m._forward_hooks, nil)
  -- shared parameters stay shared
  local a = nn.Linear(2, 2)
  local tied = nn.Sequential(a, nn.ReLU(), a)
  local rt2 = rt(tied)
  T.eq(rt2[1], rt2[3])
end)

T.test("optim: optimizer state round trip continues training identically", function()
  local nn = require "nn"
  local optim = require "optim"
  torch.manual_seed(5)
  local model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
  local opt = optim.AdamW(model:parameters(), { lr = 0.01, weight_decay = 0.1 })
  local x, y = torch.randn(16, 3), torch.randn(16, 1)
  local function step(m, o)
    o:zero_grad()
    local loss = ((m(x) - y) ^ 2):mean()
    loss:backward()
    o:step()
    return loss:item()
  end
  for _ = 1, 3 do step(model, opt) end
  -- model and optimizer together: the optimizer's params are the model's tensors
  local p = tmp("ckpt.lt")
  torch.save(p, { model = model, opt = opt, epoch = 3 })
  local ck = torch.load(p)
  T.eq(ck.epoch, 3)
  T.eq(getmetatable(ck.opt), getmetatable(opt))
  T.eq(ck.opt.param_groups[1].params[1], ck.model[1].weight)
  for _ = 1, 3 do
    local a, b = step(model, opt), step(ck.model, ck.opt)
    T.eq(a, b)
  end
  T.ok(ck.model[3].weight:equal(model[3].weight))
  -- optimizer state_dict form
  local sd = rt(opt:state_dict())
  local opt2 = optim.AdamW(ck.model:parameters(), { lr = 0.01, weight_decay = 0.1 })
  opt2:load_state_dict(sd)
  T.eq(step(ck.model, opt2), step(model, opt))
end)

T.test("lazy registration: a file naming nn.Linear loads nn", function()
  -- another VM would be the real test; here the registry lookup path is exercised
  local nn = require "nn"
  local s = torch.serialize(nn.Linear(2, 2))
  local m = torch.deserialize(s)
  T.eq(getmetatable(m), nn.Linear)
end)

T.test("atomic overwrite leaves no temporary files", function()
  local p = tmp("atomic.lt")
  torch.save(p, 1)
  torch.save(p, 2)
  pcall(torch.save, p, { print })
  T.eq(torch.load(p), 2)
  local d = p:match("^(.*)/") or "."
  local name = p:match("[^/]+$")
  local ls = io.popen("ls -a '" .. d .. "'")
  for line in ls:lines() do
    T.ok(not (line:sub(1, #name) == name and line ~= name), "left behind: " .. line)
  end
  ls:close()
end)

T.test("Torch7 fallback only when torch.load_t7 exists and the file looks like Torch7", function()
  local p = tmp("x.t7")
  local f = assert(io.open(p, "wb"))
  f:write(string.pack("<i4", 1), string.pack("<d", 2.5))
  f:close()
  local saved = torch.load_t7
  local called
  torch.load_t7 = function(path) called = path; return "t7" end
  T.eq(torch.load(p), "t7")
  T.eq(called, p)
  torch.load_t7 = nil
  T.raises(function() torch.load(p) end, "torch.load", "bad magic")
  torch.load_t7 = saved
end)

cleanup()
T.done()
