-- safetensors: round trips of every dtype, mmap loads, state_dict, the checks the format
-- requires, hostile and corrupted files, and files written/read by Python.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local nn = require "nn"

local S = T.scratch()
local dir, path, write, read = S.dir, S.path, S.write, S.read
-- a file from a header string and data bytes
local function st_file(name, header, data)
  return write(name, string.pack("<I8", #header) .. header .. (data or ""))
end

local function same(a, b, msg)
  T.eq(a.dtype.name, b.dtype.name, msg)
  T.eq(a:size(), b:size(), msg)
  T.eq(a:totable(), b:totable(), msg)
end

T.test("round trip of every dtype, 0-d, empty and non-contiguous tensors", function()
  local t = {
    f64 = torch.randn(3, 2, { dtype = torch.float64 }), f32 = torch.randn(4, 5), f16 = torch.randn(7):half(),
    bf16 = torch.randn(2, 3):to(torch.bfloat16), i64 = torch.arange(-5, 5), i32 = torch.tensor({ -1, 2 }, { dtype = torch.int32 }),
    i16 = torch.tensor({ -300, 300 }, { dtype = torch.int16 }), i8 = torch.tensor({ -128, 127 }, { dtype = torch.int8 }),
    u8 = torch.tensor({ 0, 255 }, { dtype = torch.uint8 }), bool = torch.tensor({ true, false, true }),
    scalar = torch.tensor(2.5), empty = torch.zeros(0, 4), transposed = torch.randn(3, 4):t(),
    strided = torch.arange(20):reshape(4, 5)[{ {}, { 2, 4 } }],
    ["unicode näme"] = torch.ones(1),
  }
  local p = path("all.safetensors")
  torch.save_safetensors(p, t)
  local r, meta = torch.load_safetensors(p)
  T.eq(meta, nil, "no metadata")
  local n = 0
  for k, v in pairs(t) do
    n = n + 1
    same(r[k], v, k)
    T.ok(r[k]:is_contiguous(), k .. " contiguous")
  end
  for _ in pairs(r) do n = n - 1 end
  T.eq(n, 0, "same number of entries")
end)

T.test("metadata is written and returned", function()
  local p = path("meta.safetensors")
  torch.save_safetensors(p, { w = torch.ones(2) }, { format = "pt", epoch = 3, ["ключ"] = "значение" })
  local r, meta = torch.load_safetensors(p)
  T.eq(meta.format, "pt")
  T.eq(meta.epoch, "3", "numbers are written as strings")
  T.eq(meta["ключ"], "значение")
  same(r.w, torch.ones(2))
  T.raises(function() torch.save_safetensors(p, { w = torch.ones(2) }, { x = {} }) end, "torch.save_safetensors", "metadata")
end)

T.test("the data buffer is aligned: every tensor starts at a multiple of its element size", function()
  local p = path("align.safetensors")
  torch.save_safetensors(p, { a = torch.ones(3, { dtype = torch.uint8 }), b = torch.ones(3, { dtype = torch.float64 }),
                             c = torch.ones(1, { dtype = torch.int16 }), d = torch.ones(5) })
  local s = read(p)
  local n = string.unpack("<I8", s)
  T.eq((8 + n) % 8, 0, "data starts 8-aligned")
  T.ok(s:sub(9, 8 + n):find("^{"), "header is JSON")
end)

T.test("mmap loads: equal values, copy-on-write, alive after the table is gone", function()
  local t = { a = torch.randn(64, 32), b = torch.arange(100), m = torch.tensor({ true, false }) }
  local p = path("mm.safetensors")
  torch.save_safetensors(p, t)
  local before = read(p)
  local r = torch.load_safetensors(p, { mmap = true })
  for k, v in pairs(t) do same(r[k], v, k) end
  r.a:add_(1)                 -- a private mapping: the file never changes
  T.eq(read(p), before, "file unchanged by writes to a mapped tensor")
  local keep = r.b
  r = nil
  collectgarbage(); collectgarbage()
  T.eq(keep:sum():item(), 4950, "mapped tensor outlives its table")
  -- a file with misaligned offsets still loads (those tensors are copied)
  local h = '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
  local q = st_file("mis.safetensors", h, string.pack("<ff", 1.5, -2))
  T.eq(torch.load_safetensors(q, { mmap = true }).x:totable(), { 1.5, -2 })
end)

T.test("views of one storage are written as separate entries", function()
  local x = torch.arange(12):float()
  local p = path("shared.safetensors")
  torch.save_safetensors(p, { whole = x, part = x:narrow(1, 3, 4), again = x })
  local r = torch.load_safetensors(p)
  T.eq(r.part:totable(), { 2, 3, 4, 5 })
  r.whole:fill_(0)
  T.eq(r.part:totable(), { 2, 3, 4, 5 }, "no storage shared after loading")
  T.eq(r.again:totable(), x:totable())
end)

T.test("model:load_state_dict(torch.load_safetensors(path)) gives identical outputs", function()
  torch.manual_seed(1)
  local function make()
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
  end
  local m = make()
  -- a few training steps so the running statistics and weights are not the initial ones
  local opt = require("optim").SGD(m:parameters(), { lr = 0.1 })
  for _ = 1, 3 do
    opt:zero_grad()
    local loss = m(torch.randn(16, 4)):pow(2):mean()
    loss:backward()
    opt:step()
  end
  m:eval()
  local p = path("model.safetensors")
  torch.save_safetensors(p, m:state_dict())
  local fresh = make()
  fresh:load_state_dict(torch.load_safetensors(p))
  fresh:eval()
  local x = torch.randn(5, 4)
  T.eq(fresh(x):totable(), m(x):totable(), "identical outputs")
  local sd = torch.load_safetensors(p)
  T.ok(sd["1.weight"] and sd["2.running_mean"] and sd["2.num_batches_tracked"], "nn's key names")
  T.eq(sd["2.num_batches_tracked"]:item(), 3)
end)

T.test("bad arguments to save_safetensors", function()
  local p = path("bad.safetensors")
  T.raises(function() torch.save_safetensors(p, { w = 3 }) end, "torch.save_safetensors", "'w' is not a tensor")
  T.raises(function() torch.save_safetensors(p, { torch.ones(1) }) end, "torch.save_safetensors", "string")
  T.raises(function() torch.save_safetensors(p, { __metadata__ = torch.ones(1) }) end, "torch.save_safetensors", "__metadata__")
  T.raises(function() torch.save_safetensors(p, { ["\xff\xfe"] = torch.ones(1) }) end, "torch.save_safetensors", "UTF-8")
  T.raises(function() torch.save_safetensors(p, "x") end, "torch.save_safetensors", "table")
  T.raises(function() torch.save_safetensors(dir .. "/no/such/dir/x.safetensors", { w = torch.ones(1) }) end,
    "torch.save_safetensors", "cannot create")
  T.raises(function() torch.load_safetensors(path("missing.safetensors")) end, "torch.load_safetensors", "missing.safetensors")
end)

T.test("writing is atomic: a failed save leaves the old file", function()
  local p = path("atomic.safetensors")
  torch.save_safetensors(p, { w = torch.ones(3) })
  local before = read(p)
  T.raises(function() torch.save_safetensors(p, { w = torch.ones(3), bad = "x" }) end, "torch.save_safetensors")
  T.eq(read(p), before)
  local leftovers = io.popen("ls " .. dir .. " | grep -c tmp"):read("a")
  T.eq(tonumber(leftovers), 0, "no temporary files left")
end)

T.test("the checks the format requires", function()
  local F32x2 = string.pack("<ff", 1, 2)
  local function bad(name, header, data, ...)
    local p = st_file(name, header, data)
    T.raises(function() torch.load_safetensors(p) end, "torch.load_safetensors", name, ...)
  end
  bad("notjson.st", "{not json}", "", "JSON")
  bad("array.st", "[1,2]", "", "not a JSON object")
  bad("dtype.st", '{"x":{"dtype":"X9","shape":[2],"data_offsets":[0,8]}}', F32x2, "unknown dtype 'X9'")
  bad("u16.st", '{"x":{"dtype":"U16","shape":[4],"data_offsets":[0,8]}}', F32x2, "U16")
  bad("f8.st", '{"x":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}}', F32x2, "F8_E4M3")
  bad("negshape.st", '{"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', F32x2, "shape")
  bad("floatshape.st", '{"x":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', F32x2, "shape")
  bad("nooffsets.st", '{"x":{"dtype":"F32","shape":[2]}}', F32x2, "data_offsets")
  bad("mismatch.st", '{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', F32x2, "does not match")
  bad("oob.st", '{"x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}', F32x2, "hole")
  bad("past.st", '{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}', F32x2, "truncated")
  bad("reversed.st", '{"x":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}', F32x2, "end before")
  bad("overlap.st", '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
    F32x2, "overlaps")
  bad("hole.st", '{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', F32x2, "hole")
  bad("extra.st", '{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', F32x2, "cover 4 bytes of a 8-byte")
  bad("dup.st", '{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
    F32x2, "duplicate")
  bad("overflow.st", '{"x":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}}', F32x2, "overflows")
  bad("dims.st", '{"x":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}}', F32x2, "dimensions")
  bad("meta.st", '{"__metadata__":{"a":1},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', F32x2, "__metadata__")
  bad("entry.st", '{"x":7}', "", "not an object")
  -- lengths in the 8-byte prefix
  local p = write("absurd.st", string.pack("<I8", 1 << 60) .. "{}")
  T.raises(function() torch.load_safetensors(p) end, "torch.load_safetensors", "absurd header length")
  p = write("long.st", string.pack("<I8", 1000) .. "{}")
  T.raises(function() torch.load_safetensors(p) end, "torch.load_safetensors", "truncated")
  p = write("short.st", "abc")
  T.raises(function() torch.load_safetensors(p) end, "torch.load_safetensors", "short.st", "truncated")
  -- an empty file of tensors is valid
  T.eq(next(torch.load_safetensors(st_file("none.st", "{}", ""))), nil)
end)

T.test("corrupted files: every truncation is an error, flipped bytes never crash", function()
  local p = path("small.safetensors")
  torch.save_safetensors(p, { a = torch.arange(6):float():reshape(2, 3), b = torch.tensor({ true, false }),
                             c = torch.tensor({ 7 }, { dtype = torch.int16 }) }, { k = "v" })
  local good = read(p)
  for cut = 0, #good - 1 do
    local q = write("cut.st", good:sub(1, cut))
    local ok, err = pcall(torch.load_safetensors, q)
    if ok then error("truncated at " .. cut .. " loaded") end
    T.ok(tostring(err):find("torch.load_safetensors: ", 1, true), err)
  end
  local errors = 0
  for i = 1, #good do
    local b = good:byte(i)
    for _, x in ipairs({ 0xff, 0x01, 0x80 }) do
      local q = write("flip.st", good:sub(1, i - 1) .. string.char(b ~ x) .. good:sub(i + 1))
      local ok, err = pcall(torch.load_safetensors, q, { mmap = (i % 2 == 0) })
      if not ok then
        errors = errors + 1
        T.ok(tostring(err):find("torch.load_safetensors: ", 1, true), err)
      end
    end
  end
  T.ok(errors > 0, "some flips are caught")
end)

local PY = "/usr/bin/python3"
local REF = "tests/ref/safetensors_ref.py"
local function py_ok(mod)
  return os.execute(PY .. " -c 'import " .. mod .. "' >/dev/null 2>&1") == true
end
local function run_py(args)
  local pipe = io.popen(PY .. " " .. REF .. " " .. args .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  if not ok then error("python failed: " .. out) end
  return out
end
local function check_expected(r, meta, exp, what)
  for name, e in pairs(exp.tensors) do
    local t = r[name]
    T.ok(t ~= nil, what .. ": " .. name .. " present")
    T.eq(t:size(), e.shape, what .. ": " .. name .. " shape")
    local got = t:reshape(-1):totable()
    T.eq(#got, #e.values, what .. ": " .. name .. " count")
    for i = 1, #got do
      if got[i] ~= e.values[i] then error(("%s: %s[%d] = %s, expected %s"):format(what, name, i, tostring(got[i]), tostring(e.values[i]))) end
    end
  end
  for k, v in pairs(exp.metadata) do T.eq(meta[k], v, what .. ": metadata " .. k) end
end
local DT = { float64 = "F64", float32 = "F32", float16 = "F16", bfloat16 = "BF16", int64 = "I64", int32 = "I32",
             int16 = "I16", int8 = "I8", uint8 = "U8", bool = "BOOL" }
local function check_read_back(out, t, what)
  local got = load(out)()
  T.ok(got.aligned ~= false, what .. ": offsets aligned")
  for name, x in pairs(t) do
    local e = got.tensors[name]
    T.ok(e ~= nil, what .. ": " .. name .. " present")
    T.eq(e.dtype, DT[x.dtype.name], what .. ": " .. name .. " dtype")
    T.eq(e.shape, x:size(), what .. ": " .. name .. " shape")
    T.eq(e.values, x:reshape(-1):totable(), what .. ": " .. name .. " values")
  end
  return got
end

T.test("files written by a reference writer (json + struct) read back equal; and the reverse", function()
  if not py_ok("json") then return T.skip("python safetensors interop", PY .. " is not available") end
  local p, e = path("ref.safetensors"), path("ref_expected.lua")
  run_py("write " .. p .. " " .. e)
  local exp = dofile(e)
  check_expected(torch.load_safetensors(p), select(2, torch.load_safetensors(p)), exp, "ref writer")
  local r, meta = torch.load_safetensors(p, { mmap = true })
  check_expected(r, meta, exp, "ref writer, mmap")
  -- lutorch writes, the reference reader checks the format and the values
  local t = { a = torch.randn(3, 4), b = torch.arange(5), c = torch.tensor({ true, false }), d = torch.randn(2):half(),
              e = torch.tensor({ 1.5, -2 }):to(torch.bfloat16), f = torch.randn(4, 3):t(), g = torch.tensor(7, { dtype = torch.int8 }) }
  local q = path("ours.safetensors")
  torch.save_safetensors(q, t, { who = "lutorch" })
  local got = check_read_back(run_py("read " .. q), t, "ref reader")
  T.eq(got.metadata.who, "lutorch")
end)

T.test("files written by the safetensors package read back equal; and the reverse", function()
  if not py_ok("safetensors") then
    return T.skip("safetensors package interop", "the Python package 'safetensors' is not importable (the reference reader/writer above covers the format)")
  end
  local p, e = path("pkg.safetensors"), path("pkg_expected.lua")
  run_py("write " .. p .. " " .. e .. " package")
  local r, meta = torch.load_safetensors(p)
  check_expected(r, meta, dofile(e), "package writer")
  local t = { a = torch.randn(3, 4), b = torch.arange(5), c = torch.tensor({ true, false }), d = torch.randn(2):half(),
              f = torch.randn(4, 3):t() }
  local q = path("ours_pkg.safetensors")
  torch.save_safetensors(q, t)
  check_read_back(run_py("read " .. q .. " package"), t, "package reader")
end)

os.execute("rm -rf " .. dir)
T.done()
