-- .npy and .npz: round trips, files numpy writes (every dtype, both byte orders, Fortran
-- order, header versions 1-3), files numpy reads, data.read_npy sharing the parser,
-- hostile and corrupted files.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local data = require "data"

local S = T.scratch()
local dir, path, write, read = S.dir, S.path, S.write, S.read
local function same(a, b, msg)
  T.eq(a.dtype.name, b.dtype.name, msg)
  T.eq(a:size(), b:size(), msg)
  T.eq(a:totable(), b:totable(), msg)
end

local PY = "/usr/bin/python3"
local have_numpy = os.execute(PY .. " -c 'import numpy' >/dev/null 2>&1") == true
-- run a python script (numpy imported as np, D = the test directory); returns its stdout
local function py(script)
  local f = write("script.py", "import numpy as np, sys, os\nD = " .. ("%q"):format(dir) .. "\n" .. script)
  local pipe = io.popen(PY .. " " .. f .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  if not ok then error("python failed:\n" .. out) end
  return out
end

local cases = function()
  return {
    f64 = torch.randn(3, 4, { dtype = torch.float64 }), f32 = torch.randn(2, 3, 2), f16 = torch.randn(5):half(),
    i64 = torch.arange(-5, 5), i32 = torch.tensor({ -3, 4 }, { dtype = torch.int32 }),
    i16 = torch.tensor({ -300, 300 }, { dtype = torch.int16 }), i8 = torch.tensor({ -128, 127 }, { dtype = torch.int8 }),
    u8 = torch.tensor({ 0, 200, 255 }, { dtype = torch.uint8 }), b = torch.tensor({ true, false, true }),
    scalar = torch.tensor(3.5), empty = torch.zeros(0, 3), fortran = torch.arange(12):reshape(3, 4):t(),
    strided = torch.arange(30):reshape(5, 6):narrow(2, 2, 3),
  }
end

T.test("save_npy / load_npy round trip every dtype", function()
  for k, x in pairs(cases()) do
    local p = path(k .. ".npy")
    torch.save_npy(p, x)
    same(torch.load_npy(p), x, k)
    T.ok(torch.load_npy(p):is_contiguous(), k .. " loads contiguous")
    same(data.read_npy(p), x, "data.read_npy " .. k)
  end
  T.raises(function() torch.save_npy(path("bf.npy"), torch.ones(2):to(torch.bfloat16)) end, "torch.save_npy", "bfloat16")
  T.raises(function() torch.save_npy(path("x.npy"), 3) end, "torch.save_npy", "tensor")
  T.raises(function() torch.load_npy(path("missing.npy")) end, "torch.load_npy", "missing.npy")
end)

T.test("a transposed tensor is written in Fortran order without a copy, headers are 64-aligned", function()
  local x = torch.arange(6):reshape(2, 3):t()
  local p = path("f.npy")
  torch.save_npy(p, x)
  local s = read(p)
  T.ok(s:find("'fortran_order': True", 1, true), "fortran_order True")
  local hl = string.unpack("<I2", s, 9)
  T.eq((10 + hl) % 64, 0, "data starts at a multiple of 64")
  T.eq(s:sub(10 + hl, 10 + hl), "\n", "header ends in a newline")
end)

T.test("npz round trips: stored and deflated", function()
  local t = cases()
  for _, compressed in ipairs({ false, true }) do
    local p = path(compressed and "c.npz" or "s.npz")
    torch.save_npz(p, t, { compressed = compressed })
    local r = torch.load_npz(p)
    for k, x in pairs(t) do same(r[k], x, k) end
  end
  local e = path("empty.npz")
  torch.save_npz(e, {})
  T.eq(next(torch.load_npz(e)), nil, "empty archive")
  T.raises(function() torch.save_npz(path("b.npz"), { w = torch.ones(1):to(torch.bfloat16) }) end, "torch.save_npz", "bfloat16")
  T.raises(function() torch.save_npz(path("b.npz"), { w = 1 }) end, "torch.save_npz", "'w' is not a tensor")
  T.eq(io.popen("ls " .. dir .. " | grep -c tmp"):read("a"), "0\n", "no temporary files left")
end)

T.test("hostile .npy files", function()
  local function npy(name, header, body, major)
    major = major or 1
    local pre = major == 1 and ("\x93NUMPY\x01\x00" .. string.pack("<I2", #header))
      or ("\x93NUMPY" .. string.char(major, 0) .. string.pack("<I4", #header))
    return write(name, pre .. header .. (body or ""))
  end
  local function bad(p, ...)
    local name = p:match("[^/]+$")
    T.raises(function() torch.load_npy(p) end, "torch.load_npy", name, ...)
    T.raises(function() data.read_npy(p) end, "read_npy", name)
  end
  local F = string.pack("<ff", 1, 2)
  bad(write("magic.npy", "NOTNUMPY\x01\x00"), "bad magic")
  bad(write("tiny.npy", "\x93NU"), "bad magic")
  bad(write("ver.npy", "\x93NUMPY\x09\x00\x10\x00"), "version 9")
  bad(npy("hlen.npy", "{'descr': '<f4'"), "malformed")
  bad(write("absurd.npy", "\x93NUMPY\x02\x00\xff\xff\xff\x7f{"), "absurd header length")
  bad(write("longhdr.npy", "\x93NUMPY\x01\x00\xff\x00{}"), "truncated")
  bad(npy("keys.npy", "{'descr': '<f4', 'shape': (2,), }", F), "descr, fortran_order and shape")
  bad(npy("extra.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", F), "unexpected header key 'x'")
  bad(npy("complex.npy", "{'descr': '<c4', 'fortran_order': False, 'shape': (1,), }", F), "'<c4'", "complex")
  bad(npy("object.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", F), "'|O'")
  bad(npy("struct.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", F), "structured")
  bad(npy("shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", F), "shape")
  bad(npy("dims.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,), }", F),
    "more than 16 dimensions")
  bad(npy("overflow.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", F), "overflows")
  bad(npy("huge.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", F), "truncated")
  bad(npy("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", F), "truncated")
  bad(npy("fo.npy", "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", F), "fortran_order")
  bad(npy("after.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", F), "after the dict")
  -- the same in the zip container
  T.raises(function() torch.load_npz(write("notzip.npz", "PK\3\4 this is not a zip")) end, "torch.load_npz", "notzip.npz")
  T.raises(function() torch.load_npz(path("missing.npz")) end, "torch.load_npz", "missing.npz")
end)

T.test("corrupted files: every truncation is an error, flipped bytes never crash", function()
  local p = path("small.npy")
  torch.save_npy(p, torch.arange(6):float():reshape(2, 3))
  local good = read(p)
  for cut = 0, #good - 1 do
    local q = write("cut.npy", good:sub(1, cut))
    local ok, err = pcall(torch.load_npy, q)
    if ok then error("truncated at " .. cut .. " loaded") end
    T.ok(tostring(err):find("torch.load_npy: ", 1, true), err)
    ok, err = pcall(data.read_npy, q)
    if ok then error("read_npy: truncated at " .. cut .. " loaded") end
  end
  for i = 1, #good do
    local q = write("flip.npy", good:sub(1, i - 1) .. string.char(good:byte(i) ~ 0xff) .. good:sub(i + 1))
    local ok, err = pcall(torch.load_npy, q)
    if not ok then T.ok(tostring(err):find("torch.load_npy: ", 1, true), err) end
  end
  -- a zip: cut it and flip it
  local z = path("small.npz")
  torch.save_npz(z, { a = torch.arange(6):float(), b = torch.tensor({ true }) }, { compressed = true })
  local zg = read(z)
  for cut = 0, #zg - 1, 3 do
    local q = write("cut.npz", zg:sub(1, cut))
    local ok, err = pcall(torch.load_npz, q)
    if ok then error("npz truncated at " .. cut .. " loaded") end
    T.ok(tostring(err):find("torch.load_npz: ", 1, true), err)
  end
  for i = 1, #zg do
    local q = write("flip.npz", zg:sub(1, i - 1) .. string.char(zg:byte(i) ~ 0x55) .. zg:sub(i + 1))
    local ok, err = pcall(torch.load_npz, q)
    if not ok then T.ok(tostring(err):find("torch.load_npz: ", 1, true), err) end
  end
end)

T.test("files numpy writes read back equal (dtypes, byte orders, Fortran order, versions 1-3, npz)", function()
  if not have_numpy then return T.skip("numpy interop", PY .. " cannot import numpy") end
  local out = py([[
from numpy.lib import format as fmt
cases = {
  'f8': np.arange(6, dtype='<f8').reshape(2, 3) / 4, 'f4be': np.arange(6, dtype='>f4').reshape(3, 2) - 2.5,
  'f2': np.array([1, -0.5, 2048], dtype='<f2'), 'i8be': np.array([-2**62, 5, 7], dtype='>i8'),
  'i4': np.array([-7, 2**30], dtype='<i4'), 'i2be': np.array([-300, 2], dtype='>i2'), 'i1': np.array([-128, 127], dtype='i1'),
  'u1': np.array([0, 255], dtype='u1'), 'u2': np.array([0, 65535], dtype='>u2'), 'u4': np.array([1, 2**32 - 1], dtype='<u4'),
  'u8': np.array([3, 2**63 - 1], dtype='<u8'), 'b': np.array([True, False, True]),
  'fortran': np.asfortranarray(np.arange(24, dtype='<f8').reshape(2, 3, 4)), 'scalar': np.array(2.5),
  'empty': np.zeros((0, 3), dtype='<f4'),
}
lines = []
for k, a in cases.items():
    np.save(os.path.join(D, 'np_' + k + '.npy'), a)
    lines.append('[%r] = {shape = {%s}, values = {%s}}' % (k, ','.join(map(str, a.shape)),
                 ','.join(repr(float(x)) if a.dtype.kind == 'f' else ('true' if x is np.True_ else 'false' if x is np.False_ else str(int(x))) for x in a.reshape(-1))))
for v in ((2, 0), (3, 0)):
    with open(os.path.join(D, 'np_v%d.npy' % v[0]), 'wb') as f:
        fmt.write_array(f, np.arange(4, dtype='<i4'), version=v)
np.savez(os.path.join(D, 'np_stored.npz'), w=np.arange(6, dtype='<f4').reshape(2, 3), b=np.array([True, False]))
np.savez_compressed(os.path.join(D, 'np_deflated.npz'), w=np.arange(6, dtype='<f4').reshape(2, 3), b=np.array([True, False]))
np.save(os.path.join(D, 'np_complex.npy'), np.array([1 + 2j]))
np.save(os.path.join(D, 'np_object.npy'), np.array([{}], dtype=object), allow_pickle=True)
import gzip
with gzip.open(os.path.join(D, 'np_gz.npy.gz'), 'wb') as f:
    np.save(f, np.arange(5, dtype='<i2'))
print('return {' + ', '.join(lines) + '}')
]])
  local exp = load(out)()
  local dts = { f8 = "float64", f4be = "float32", f2 = "float16", i8be = "int64", i4 = "int32", i2be = "int16", i1 = "int8",
                u1 = "uint8", u2 = "int32", u4 = "int64", u8 = "int64", b = "bool", fortran = "float64", scalar = "float64", empty = "float32" }
  for k, e in pairs(exp) do
    local p = path("np_" .. k .. ".npy")
    for _, loader in ipairs({ torch.load_npy, data.read_npy }) do
      local x = loader(p)
      T.eq(x.dtype.name, dts[k], k .. " dtype")
      T.eq(x:size(), e.shape, k .. " shape")
      T.eq(x:reshape(-1):totable(), e.values, k .. " values")
    end
  end
  T.eq(torch.load_npy(path("np_v2.npy")):totable(), { 0, 1, 2, 3 }, "version 2.0")
  T.eq(torch.load_npy(path("np_v3.npy")):totable(), { 0, 1, 2, 3 }, "version 3.0")
  T.eq(data.read_npy(path("np_gz.npy.gz")):totable(), { 0, 1, 2, 3, 4 }, "gzipped")
  for _, n in ipairs({ "np_stored.npz", "np_deflated.npz" }) do
    local z = torch.load_npz(path(n))
    T.eq(z.w:totable(), { { 0, 1, 2 }, { 3, 4, 5 } }, n)
    T.eq(z.b:totable(), { true, false }, n)
  end
  local c = torch.load_npy(path("np_complex.npy"))   -- complex128 (man/complex.md)
  T.eq(c.dtype, torch.complex128)
  T.eq(c[1], torch.complex_number(1, 2))
  T.raises(function() torch.load_npy(path("np_object.npy")) end, "torch.load_npy", "np_object.npy", "Python objects")
end)

T.test("files lutorch writes are read by numpy", function()
  if not have_numpy then return T.skip("numpy reads lutorch files", PY .. " cannot import numpy") end
  local t = cases()
  local lines = {}
  for k, x in pairs(t) do
    torch.save_npy(path("ours_" .. k .. ".npy"), x)
    lines[#lines + 1] = k
  end
  torch.save_npz(path("ours.npz"), t)
  torch.save_npz(path("ours_c.npz"), t, { compressed = true })
  local out = py([[
names = sys.argv[1:] if len(sys.argv) > 1 else ]] .. ("%q"):format(table.concat(lines, " ")) .. [[.split()
z, zc = np.load(os.path.join(D, 'ours.npz')), np.load(os.path.join(D, 'ours_c.npz'))
assert sorted(z.files) == sorted(names) == sorted(zc.files), (z.files, names)
res = []
for k in names:
    a = np.load(os.path.join(D, 'ours_' + k + '.npy'))
    assert np.array_equal(a, z[k]) and np.array_equal(a, zc[k]) and a.dtype == z[k].dtype, k
    vals = ','.join(repr(float(x)) if a.dtype.kind == 'f' else ('true' if x is np.True_ else 'false' if x is np.False_ else str(int(x))) for x in a.reshape(-1))
    res.append('[%r] = {dtype = %r, shape = {%s}, values = {%s}}' % (k, a.dtype.str, ','.join(map(str, a.shape)), vals))
print('return {' + ', '.join(res) + '}')
]])
  local got = load(out)()
  local descr = { float64 = "<f8", float32 = "<f4", float16 = "<f2", int64 = "<i8", int32 = "<i4", int16 = "<i2",
                  int8 = "|i1", uint8 = "|u1", bool = "|b1" }
  for k, x in pairs(t) do
    T.eq(got[k].dtype, descr[x.dtype.name], k .. " dtype")
    T.eq(got[k].shape, x:size(), k .. " shape")
    T.eq(got[k].values, x:reshape(-1):totable(), k .. " values")
  end
end)

T.test("a zip member that claims more than deflate can produce is refused before allocating", function()
  if not have_numpy then return T.skip("npz bomb", PY .. " cannot import numpy") end
  py([[
import zipfile, io, struct
buf = io.BytesIO()
np.save(buf, np.zeros(1000, dtype='<f8'))
raw = buf.getvalue()
with zipfile.ZipFile(os.path.join(D, 'bomb.npz'), 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('w.npy', raw)
b = bytearray(open(os.path.join(D, 'bomb.npz'), 'rb').read())
# claim 2**31 uncompressed bytes in both the local and the central header
i = b.find(b'PK\x03\x04'); struct.pack_into('<I', b, i + 22, 2**31)
j = b.find(b'PK\x01\x02'); struct.pack_into('<I', b, j + 24, 2**31)
open(os.path.join(D, 'bomb.npz'), 'wb').write(b)
]])
  local err = T.raises(function() torch.load_npz(path("bomb.npz")) end, "torch.load_npz", "bomb.npz")
  T.ok(err:find("deflate", 1, true) or err:find("inconsistent", 1, true) or err:find("truncated", 1, true) or err:find("corrupt", 1, true), err)
end)

os.execute("rm -rf " .. dir)
T.done()
