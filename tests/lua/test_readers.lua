-- data readers: idx (raw and .gz), CSV, .npy; errors on truncated and corrupt files.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local data = require "data"

local S = T.scratch()
local dir, path, write, read = S.dir, S.path, S.write, S.read
local have_gzip = os.execute("command -v gzip >/dev/null 2>&1")
local function gzip(p) os.execute("gzip -kf " .. p); return p .. ".gz" end

-- an idx file: magic, dims, big-endian data
local function idx_bytes(code, fmt, dims, values)
  local parts = { string.char(0, 0, code, #dims) }
  for _, d in ipairs(dims) do parts[#parts + 1] = string.pack(">I4", d) end
  for _, v in ipairs(values) do parts[#parts + 1] = string.pack(fmt, v) end
  return table.concat(parts)
end

T.test("read_idx: uint8 images and labels, raw and gzipped", function()
  local vals = {}
  for i = 1, 2 * 3 * 4 do vals[i] = (i * 7) % 256 end
  local p = write("img-idx3-ubyte", idx_bytes(0x08, "B", { 2, 3, 4 }, vals))
  local t = data.read_idx(p)
  T.tensor(t, nil, { dtype = "uint8", shape = { 2, 3, 4 } })
  T.eq(t:reshape(24):totable(), vals)
  if have_gzip then
    local g = data.read_idx(gzip(p))
    T.eq(g:reshape(24):totable(), vals)
  else
    T.skip("read_idx .gz", "gzip is not installed")
  end
  local lab = data.read_idx(write("lab-idx1-ubyte", idx_bytes(0x08, "B", { 5 }, { 9, 0, 3, 1, 2 })))
  T.tensor(lab, { 9, 0, 3, 1, 2 }, { dtype = "uint8" })
end)

T.test("read_idx: other element types (big-endian)", function()
  T.tensor(data.read_idx(write("i32", idx_bytes(0x0C, ">i4", { 3 }, { -5, 70000, 1 }))), { -5, 70000, 1 }, { dtype = "int32" })
  T.tensor(data.read_idx(write("i16", idx_bytes(0x0B, ">i2", { 2 }, { -300, 2 }))), { -300, 2 }, { dtype = "int16" })
  T.tensor(data.read_idx(write("f32", idx_bytes(0x0D, ">f", { 2 }, { 1.5, -2.25 }))), { 1.5, -2.25 }, { dtype = "float32" })
  T.tensor(data.read_idx(write("f64", idx_bytes(0x0E, ">d", { 1, 2 }, { 0.1, 1e300 }))), { { 0.1, 1e300 } }, { dtype = "float64" })
  T.tensor(data.read_idx(write("i8", idx_bytes(0x09, "b", { 2 }, { -1, 5 }))), { -1, 5 }, { dtype = "int8" })
end)

T.test("read_idx: clear errors", function()
  local good = idx_bytes(0x08, "B", { 4, 4 }, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 })
  T.raises(function() data.read_idx(path("missing")) end, "read_idx", "cannot open", "missing")
  T.raises(function() data.read_idx(write("short", good:sub(1, 12))) end, "read_idx", "short", "truncated")
  T.raises(function() data.read_idx(write("hdr", good:sub(1, 6))) end, "read_idx", "truncated")
  T.raises(function() data.read_idx(write("magic", "PK" .. good:sub(3))) end, "read_idx", "magic", "not an idx file")
  T.raises(function() data.read_idx(write("type", string.char(0, 0, 0x42, 1) .. good:sub(5))) end, "read_idx", "element type")
  T.raises(function() data.read_idx(write("extra", good .. "xx")) end, "read_idx", "bytes after the data")
  -- dims whose product overflows, and dims far beyond the file: errors before any allocation
  local huge = string.char(0, 0, 0x0E, 3) .. string.pack(">I4>I4>I4", 0xFFFFFFFF, 0xFFFFFF01, 0xFFFFFFFF)
  T.raises(function() data.read_idx(write("overflow", huge)) end, "read_idx", "absurd size")
  local big = string.char(0, 0, 0x0E, 2) .. string.pack(">I4>I4", 1 << 15, 1 << 15) .. "12345678"
  T.raises(function() data.read_idx(write("big", big)) end, "read_idx", "big", "its dims need 8589934592 data bytes")
  if have_gzip then
    local gz = read(gzip(write("g-idx", good .. string.rep("\7", 5000))))  -- wrong: extra data, for size
    local p = write("good-idx", good)
    local gzg = read(gzip(p))
    T.raises(function() data.read_idx(write("trunc.gz", gzg:sub(1, #gzg - 12))) end, "read_idx", "trunc.gz")
    local bad = gzg:sub(1, 20) .. string.rep("\255", 8) .. gzg:sub(29)
    T.raises(function() data.read_idx(write("corrupt.gz", bad)) end, "read_idx", "corrupt.gz")
    local _ = gz
  end
end)

T.test("read_csv", function()
  local p = write("a.csv", "x, y ,label\n1,2.5,3\n-4,5e-1,6\r\n\n7,,9\n")
  local t, names = data.read_csv(p)
  T.eq(names, { "x", "y", "label" })
  T.tensor(t, nil, { dtype = "float32", shape = { 3, 3 } })
  T.eq(t[1]:totable(), { 1, 2.5, 3 })
  T.ok(t[3][2] ~= t[3][2], "an empty field is NaN")
  local t2, n2 = data.read_csv(write("b.tsv", "1\t2\n3\t4"), { header = false, delimiter = "\t", dtype = "float64" })
  T.tensor(t2, { { 1, 2 }, { 3, 4 } }, { dtype = "float64" })
  T.eq(n2, nil)
  local t3 = data.read_csv(write("c.csv", "a,b\n1,2\n"), { dtype = torch.int64 })
  T.tensor(t3, { { 1, 2 } }, { dtype = "int64" })
  T.raises(function() data.read_csv(write("d.csv", "a,b\n1,2\n3\n")) end, "read_csv", "d.csv", "line 3 has 1 fields, expected 2")
  T.raises(function() data.read_csv(write("e.csv", "a,b\n1,zz\n")) end, "read_csv", "e.csv", "line 2 field 2", "'zz' is not a number")
  T.raises(function() data.read_csv(write("f.csv", "")) end, "read_csv", "empty")
  T.raises(function() data.read_csv(path("nope.csv")) end, "read_csv", "cannot open")
end)

T.test("read_npy / write_npy round trips", function()
  local cases = {
    torch.randn(3, 4), torch.randn(2, 3, 2, { dtype = torch.float64 }), torch.arange(-5, 5),
    torch.tensor({ 1, 200, 3 }, { dtype = torch.uint8 }), torch.tensor({ true, false }), torch.zeros(0, 3),
    torch.tensor(3.5), torch.arange(6):reshape(2, 3):t(),
    torch.tensor({ -3, 4 }, { dtype = torch.int32 }), torch.tensor({ -3, 4 }, { dtype = torch.int16 }),
    torch.tensor({ -3, 4 }, { dtype = torch.int8 }), torch.tensor({ 1.5, -2 }, { dtype = torch.float16 }),
  }
  for k, x in ipairs(cases) do
    local p = path("r" .. k .. ".npy")
    data.write_npy(p, x)
    local y = data.read_npy(p)
    T.eq(y.dtype.name, x.dtype.name, "case " .. k)
    T.eq(y:size(), x:size(), "case " .. k)
    T.eq(y:totable(), x:totable(), "case " .. k)
  end
  T.raises(function() data.write_npy(path("bf.npy"), torch.ones(2, { dtype = torch.bfloat16 })) end, "write_npy", "bfloat16")
  local good = read(path("r1.npy"))
  T.raises(function() data.read_npy(write("t.npy", good:sub(1, #good - 4))) end, "read_npy", "t.npy", "truncated")
  T.raises(function() data.read_npy(write("m.npy", "NOTNUMPY" .. good:sub(9))) end, "read_npy", "bad magic")
  T.raises(function() data.read_npy(write("h.npy", good:sub(1, 30))) end, "read_npy", "h.npy")
end)

T.test("read_npy: files numpy wrote (Fortran order, big-endian)", function()
  local ok = os.execute("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1")
  if not ok then return T.skip("numpy npy files", "python3-numpy is not installed") end
  local script = ("import numpy as np\n" ..
    "np.save('%s', np.asfortranarray(np.arange(12, dtype='<f8').reshape(3, 4)))\n" ..
    "np.save('%s', np.arange(5, dtype='>i4'))\n" ..
    "x = np.load('%s')\nassert x.dtype == np.float32 and x.shape == (2, 3), (x.dtype, x.shape)\n" ..
    "print(repr(x.tolist()))\n"):format(path("f.npy"), path("be.npy"), path("ours.npy"))
  data.write_npy(path("ours.npy"), torch.arange(6):float():reshape(2, 3))
  write("mk.py", script)
  local pipe = io.popen("/usr/bin/python3 " .. path("mk.py") .. " 2>&1")
  local out = pipe:read("a")
  pipe:close()
  T.eq(out, "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]\n", "numpy reads what write_npy wrote")
  T.tensor(data.read_npy(path("f.npy")), torch.arange(12):double():reshape(3, 4):totable(), { dtype = "float64" })
  T.tensor(data.read_npy(path("be.npy")), { 0, 1, 2, 3, 4 }, { dtype = "int32" })
end)

T.test("MNIST-style dataset over idx files", function()
  local root = path("mn")
  os.execute("mkdir -p " .. root)
  local imgs = {}
  for i = 1, 3 * 28 * 28 do imgs[i] = i % 256 end
  write("mn/t10k-images-idx3-ubyte", idx_bytes(0x08, "B", { 3, 28, 28 }, imgs))
  write("mn/t10k-labels-idx1-ubyte", idx_bytes(0x08, "B", { 3 }, { 0, 9, 4 }))
  local ds = data.MNIST(root, { train = false })
  T.eq(#ds, 3)
  T.tensor(ds.targets, { 1, 10, 5 }, { dtype = "int64" })
  local s = ds[2]
  T.eq(s[1]:size(), { 28, 28 }); T.eq(s[2], 10)
  local l = data.DataLoader(ds, { batch_size = 2 })
  local n = 0
  for b in l do n = n + 1; T.eq(b[1].dtype.name, "uint8"); T.eq(b[2].dtype.name, "int64") end
  T.eq(n, 2)
  local dt = data.MNIST(root, { train = false, transform = data.transforms.ToFloat() })
  T.eq(dt[1][1].dtype.name, "float32")
  T.raises(function() data.MNIST(root, { train = true }) end, "MNIST", "train-images-idx3-ubyte", root)
end)

local fm = "/usr/share/datasets/fashion-mnist"
if io.open(fm .. "/t10k-labels-idx1-ubyte.gz") then
  T.test("Fashion-MNIST from Debian's dataset-fashion-mnist", function()
    local test = data.FashionMNIST(nil, { train = false })
    T.eq(#test, 10000)
    T.eq(test.data:size(), { 10000, 28, 28 }); T.eq(test.data.dtype.name, "uint8")
    T.eq(test.targets:min():item(), 1); T.eq(test.targets:max():item(), 10)
    T.eq(test.targets:eq(1):sum():item(), 1000, "1000 test images per class")
    local train = data.FashionMNIST(fm)
    T.eq(#train, 60000)
    T.eq(data.FashionMNIST.classes[train.targets[1]], "Ankle boot", "the first training image")
  end)
else
  T.skip("Fashion-MNIST", "dataset-fashion-mnist is not installed (" .. fm .. ")")
end

os.execute("rm -rf " .. dir)
T.done()
