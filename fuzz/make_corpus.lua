-- make_corpus.lua — writes the seed corpus of every fuzz target into fuzz/corpus/NAME/:
-- small valid files of each format (and a few near misses), so the fuzzers start inside the
-- formats instead of discovering their magic numbers. Run from the tree's root:
--   LUA_PATH="lib/?.lua;lib/?/init.lua;;" build/lutorch fuzz/make_corpus.lua   (make fuzz-corpus)
-- It runs itself again with --torch7 for the files only Torch7 mode writes. The files are
-- committed; running it again rewrites them (the random tensors come from a fixed seed).
local torch7 = arg[1] == "t7"
local nn = require "nn"
local root = "fuzz/corpus"
local LT = arg[-1] or "build/lutorch"

local function dir(name)
  os.execute("mkdir -p " .. root .. "/" .. name)
  return root .. "/" .. name .. "/"
end
local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end
local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

torch.manual_seed(1)

if torch7 then
  -- Torch7 files, binary and ascii, written by Torch7 mode's torch.save (fuzz_t7, fuzz_t7file)
  local d1, d2 = dir("t7"), dir("t7file")
  local values = {
    number = 3.5,
    tensor = torch.FloatTensor(2, 3):uniform(),
    table = { a = torch.LongTensor({ 1, 2, 3 }), b = "text", c = true, [1] = 7 },
    shared = (function() local t = torch.DoubleTensor(4):fill(2); return { t, t:narrow(1, 2, 2) } end)(),
    storage = torch.ByteStorage(5):fill(9),
    bytes = torch.ByteTensor(3, 2):fill(1),
  }
  for name, v in pairs(values) do
    for _, mode in ipairs({ "binary", "ascii" }) do
      local p = d1 .. name .. "-" .. mode .. ".t7"
      torch.save(p, v, mode)
      write(d2 .. name .. "-" .. mode .. ".t7", read(p))
    end
  end
  local m = nn.Sequential():add(nn.Linear(3, 2)):add(nn.Tanh())
  torch.save(d2 .. "module-binary.t7", m)
  write(d1 .. "module-binary.t7", read(d2 .. "module-binary.t7"))
  return
end

-- lutorch's own format (fuzz_serial): the value kinds of man/serialization.md
do
  local d = dir("serial")
  local t = torch.randn(3, 4)
  local values = {
    scalar = torch.tensor(1.5),
    tensors = { a = torch.randn(2, 3), b = torch.arange(6):reshape(2, 3), c = torch.tensor({ true, false }) },
    view = { base = t, col = t[{ {}, 2 }], tr = t:t() },
    dtypes = { torch.zeros(2, { dtype = torch.float16 }), torch.ones(2, { dtype = torch.bfloat16 }),
               torch.zeros(2, { dtype = torch.complex64 }), torch.float32, torch.int8 },
    plain = { 1, 2.5, "three", false, { nested = { deeper = "x" } } },
    empty = torch.zeros(0, 3),
    grad = torch.randn(2, { requires_grad = true }),
    state_dict = nn.Linear(3, 2):state_dict(),
  }
  for name, v in pairs(values) do write(d .. name, torch.serialize(v)) end
end

-- safetensors (fuzz_safetensors)
do
  local d = dir("safetensors")
  torch.save_safetensors(d .. "two.safetensors", { w = torch.randn(2, 3), b = torch.arange(4, { dtype = torch.int32 }) })
  torch.save_safetensors(d .. "dtypes.safetensors", { h = torch.zeros(3, { dtype = torch.float16 }),
    bf = torch.zeros(2, 2, { dtype = torch.bfloat16 }), u = torch.zeros(2, { dtype = torch.uint8 }),
    bo = torch.tensor({ true }), d = torch.zeros(1, { dtype = torch.float64 }) }, { format = "pt", note = "seed" })
  torch.save_safetensors(d .. "empty.safetensors", { e = torch.zeros(0, 2) })
  local hdr = '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"a":"b"}}'
  write(d .. "hand.safetensors", string.pack("<I8", #hdr) .. hdr .. string.rep("\0", 8))
end

-- .npy (fuzz_npy): what save_npy writes, and the header forms NumPy writes that it does not
do
  local d = dir("npy")
  torch.save_npy(d .. "f32.npy", torch.randn(2, 3))
  torch.save_npy(d .. "i64.npy", torch.arange(5))
  torch.save_npy(d .. "bool.npy", torch.tensor({ true, false, true }))
  torch.save_npy(d .. "f16.npy", torch.zeros(2, 2, { dtype = torch.float16 }))
  torch.save_npy(d .. "scalar.npy", torch.tensor(2.0, { dtype = torch.float64 }))
  local function npy(ver, header, data)
    header = header .. string.rep(" ", (64 - (10 + #header + 1) % 64) % 64) .. "\n"
    local len = ver == 1 and string.pack("<I2", #header) or string.pack("<I4", #header)
    return "\147NUMPY" .. string.char(ver, 0) .. len .. header .. data
  end
  write(d .. "fortran.npy", npy(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", string.rep("\0", 48)))
  write(d .. "bigendian.npy", npy(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", string.pack(">i4>i4>i4", 1, 2, 3)))
  write(d .. "v2.npy", npy(2, "{'descr': '|u1', 'fortran_order': False, 'shape': (4, 1), }", "\1\2\3\4"))
  write(d .. "v3.npy", npy(3, "{'descr': '<c8', 'fortran_order': False, 'shape': (), }", string.rep("\0", 8)))
end

-- .npz (fuzz_npz): stored and deflated archives
do
  local d = dir("npz")
  torch.save_npz(d .. "stored.npz", { a = torch.arange(3), b = torch.ones(2, 2) })
  torch.save_npz(d .. "deflated.npz", { x = torch.zeros(4, { dtype = torch.int16 }) }, { compressed = true })
end

-- idx (fuzz_idx): the magic is 0 0 dtype rank, then rank big-endian uint32 sizes
do
  local d = dir("idx")
  local function idx(code, sizes, data)
    local s = string.char(0, 0, code, #sizes)
    for _, n in ipairs(sizes) do s = s .. string.pack(">I4", n) end
    return s .. data
  end
  write(d .. "images-ubyte.idx", idx(0x08, { 2, 3, 3 }, string.rep("\7", 18)))
  write(d .. "labels-ubyte.idx", idx(0x08, { 4 }, "\0\1\2\3"))
  write(d .. "sbyte.idx", idx(0x09, { 2 }, "\255\1"))
  write(d .. "short.idx", idx(0x0B, { 2 }, string.pack(">i2>i2", -2, 3)))
  write(d .. "int.idx", idx(0x0C, { 1, 2 }, string.pack(">i4>i4", 1, -1)))
  write(d .. "float.idx", idx(0x0D, { 2 }, string.pack(">f>f", 1.5, -2)))
  write(d .. "double.idx", idx(0x0E, { 1 }, string.pack(">d", 3.25)))
end

-- CSV (fuzz_csv)
do
  local d = dir("csv")
  write(d .. "header.csv", "a,b,c\n1,2,3\n4.5,,6e3\n")
  write(d .. "plain.csv", "1\t2\n3\t4\n")
  write(d .. "crlf.csv", "x,y\r\n-1,nan\r\n+inf,0x10\r\n")
  write(d .. "quoted.csv", "\"a\",\"b\"\n1, 2\n\n3 ,4\n")
end

-- the metadata of a distributed checkpoint (fuzz_dcp): the first byte picks the mode
-- (fuzz/fuzz_dcp.c); 0 = these bytes are the metadata file itself
do
  local d = dir("dcp")
  local tmp = os.tmpname()
  os.remove(tmp)
  local dcp = torch.distributed.checkpoint
  -- the state dict fuzz_dcp's template saves (the same seed: the same bytes, the same hashes)
  torch.manual_seed(0)
  local sd = { model = { w = torch.randn(2, 3), b = torch.arange(3), h = torch.randn(4):to(torch.float16) },
               step = 3, tag = "x" }
  dcp.save(sd, { checkpoint_id = tmp, no_dist = true })
  local m = dcp.metadata(tmp)
  -- the data file's name as fuzz_dcp also writes it
  local fixed = "dcp-0000000000000000-0.bin"
  m.id = "0000000000000000"
  m.files[1].name = fixed
  for _, t in pairs(m.tensors) do for _, c in ipairs(t.chunks) do c.file = fixed end end
  write(d .. "metadata", "\0" .. torch.serialize(m))
  os.execute("rm -rf " .. tmp)
  -- other modes: 1 = mutations of the template's metadata (a list of edits follows)
  write(d .. "edit-offset", "\1\3\0\7\255\255")
  write(d .. "edit-shape", "\1\5\2\1\0\0\0\2")
end

-- op calls (fuzz_ops): byte programs (fuzz/fuzz_ops.c decodes them)
do
  local d = dir("ops")
  math.randomseed(7)
  for k = 1, 24 do
    local n = 16 + 8 * (k % 6)
    local s = {}
    for i = 1, n do s[i] = string.char(math.random(0, 255)) end
    write(d .. ("prog%02d"):format(k), table.concat(s))
  end
end

-- and the Torch7 files, from Torch7 mode
assert(os.execute(LT .. " --torch7 fuzz/make_corpus.lua t7"), "the Torch7 corpus")
