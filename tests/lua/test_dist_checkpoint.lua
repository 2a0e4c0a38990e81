-- torch.distributed.checkpoint in one process (a world of one, no mpirun): round trips,
-- loading into registered shards, the errors, and the atomicity of a failed save.
-- The multi-rank cases are tests/dist/checkpoint*.lua, run by tests/sh/test_dist.sh.
local T = require "testing"
local dcp = torch.distributed.checkpoint
local dist = torch.distributed
local LT = arg and arg[-1] or "build/lutorch"

local S = T.scratch()
local n_dirs = 0
local function new_dir()
  n_dirs = n_dirs + 1
  return S.path("ck" .. n_dirs)
end

-- the state dict every test saves: made from a seed, so a test recomputes it independently
local function sample(seed)
  torch.manual_seed(seed)
  return {
    model = {
      weight = torch.randn(4, 3),
      bias = torch.randn(4),
      ["0.weight"] = torch.randn(2, 5, { dtype = torch.float64 }),
      emb = torch.randn(5, 2):to(torch.bfloat16),
      idx = torch.randint(0, 1000, { 6 }),
      mask = torch.tensor({ true, false, true }),
      empty = torch.zeros(0, 3),
      scale = torch.tensor(2.5, { dtype = torch.float64 }),
    },
    optim = {
      state = { [1] = { step = 3, exp_avg = torch.randn(4, 3) }, [2] = { step = 3, exp_avg = torch.randn(4) } },
      param_groups = { { lr = 0.01, name = "group 1", nesterov = false, params = { 1, 2 } } },
    },
    epoch = 7, tag = "run-1", done = true, ratio = seed + 0.25,
  }
end

-- a state dict of the same structure with every value different (tensors zero)
local function blank(sd)
  local out = {}
  for k, v in pairs(sd) do
    if torch.is_tensor(v) then out[k] = torch.zeros(v.shape, { dtype = v.dtype })
    elseif type(v) == "table" then out[k] = blank(v)
    elseif type(v) == "number" then out[k] = -1
    elseif type(v) == "string" then out[k] = "?"
    else out[k] = not v end
  end
  return out
end

-- a and b hold the same keys, tensors of the same dtype, shape and values, and equal values
local function same(a, b, where)
  where = where or "state_dict"
  for k, v in pairs(b) do
    local x = a[k]
    local w = where .. "." .. tostring(k)
    if torch.is_tensor(v) then
      T.ok(torch.is_tensor(x), w .. ": not a tensor")
      T.eq(x.dtype.name, v.dtype.name, w .. " dtype")
      T.eq(x:size(), v:size(), w .. " shape")
      T.ok(torch.equal(x, v), w .. ": values differ")
    elseif type(v) == "table" then
      T.eq(type(x), "table", w)
      same(x, v, w)
    else
      T.eq(math.type(x) or type(x), math.type(v) or type(v), w .. " type")
      T.eq(x, v, w)
    end
  end
  for k in pairs(a) do T.ok(b[k] ~= nil, where .. "." .. tostring(k) .. ": unexpected") end
end

local function files_of(dir)
  local l = torch.serialization._dcp_listdir(dir)
  table.sort(l)
  return l
end

T.test("a nested state dict round trips (float64/32, bfloat16, int64, bool, 0-d, empty, values)", function()
  local dir = new_dir()
  dcp.save(sample(1), { checkpoint_id = dir })
  local sd = blank(sample(1))
  T.ok(rawequal(dcp.load(sd, { checkpoint_id = dir }), sd))
  same(sd, sample(1))
  T.eq(math.type(sd.epoch), "integer")
  T.eq(math.type(sd.ratio), "float")
  -- the directory: the metadata and one data file
  local l = files_of(dir)
  T.eq(#l, 2)
  T.ok(l[1]:match("^dcp%-%x+%-0%.bin$"), l[1])
  T.eq(l[2], "dcp.metadata")
end)

T.test("the module is reachable as torch.distributed.checkpoint and require 'distributed.checkpoint'", function()
  T.ok(rawequal(dcp, require "distributed.checkpoint"))
  T.ok(rawequal(dist.checkpoint, dcp))
end)

T.test("metadata: dtypes, global shapes, chunks with checksums, values", function()
  local dir = new_dir()
  dcp.save(sample(2), { checkpoint_id = dir, no_dist = true })
  local m = dcp.metadata(dir)
  T.eq(m.world_size, 1)
  local w = m.tensors["model.weight"]
  T.eq(w.dtype, "float32")
  T.eq(w.shape, { 4, 3 })
  T.eq(#w.chunks, 1)
  T.eq(w.chunks[1].offset, 0)
  T.eq(w.chunks[1].numel, 12)
  T.eq(#w.chunks[1].hashes, 1)
  T.eq(math.type(w.chunks[1].hashes[1]), "integer")
  T.ok(m.tensors['model["0.weight"]'], "a key with a dot is quoted")
  T.eq(m.tensors["optim.state[1].exp_avg"].shape, { 4, 3 })
  T.eq(m.tensors["model.empty"].shape, { 0, 3 })
  T.eq(#m.tensors["model.empty"].chunks, 0)
  T.eq(m.tensors["model.scale"].shape, {})
  T.eq(m.values["optim.param_groups[1].lr"].value, 0.01)
  T.eq(m.values["tag"].value, "run-1")
  T.eq(m.values["optim.param_groups[1].params[2]"].value, 2)
  T.eq(#m.files, 1)
  local total = 0
  for _, t in pairs(m.tensors) do for _, c in ipairs(t.chunks) do total = total + c.numel * t.elsize end end
  T.eq(m.files[1].bytes, total)
end)

-- CRC-32C bit by bit, and the two-lane block checksum the metadata documents (man/distributed.md)
local function crc32c(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do
    c = c ~ s:byte(i)
    for _ = 1, 8 do c = (c & 1 == 1) and ((c >> 1) ~ 0x82F63B78) or (c >> 1) end
  end
  return c ~ 0xFFFFFFFF
end
local function crc32c_x2(s)
  local full = #s - #s % 16
  local lanes = { {}, {} }
  for w = 0, full // 8 - 1 do table.insert(lanes[w % 2 + 1], s:sub(8 * w + 1, 8 * w + 8)) end
  table.insert(lanes[1], s:sub(full + 1))
  return crc32c(table.concat(lanes[1])) | (crc32c(table.concat(lanes[2])) << 32)
end

T.test("the block checksums are the documented two-lane CRC-32C of the file's bytes", function()
  T.eq(crc32c("123456789"), 0xE3069283)
  local dir = new_dir()
  torch.manual_seed(4)
  dcp.block_bytes = 20                      -- blocks of 20 bytes: lanes, tails and a short last block
  dcp.save({ b = torch.randint(0, 256, { 45 }):to(torch.uint8), f = torch.randn(7), e = torch.randn(40) },
    { checkpoint_id = dir })
  dcp.block_bytes = 1 << 20
  local m = dcp.metadata(dir)
  T.eq(m.checksum, "crc32c-x2")
  local bytes = S.read(dir .. "/" .. m.files[1].name)
  local n = 0
  for _, key in ipairs({ "b", "e", "f" }) do
    local t = m.tensors[key]
    local c = t.chunks[1]
    local size = c.numel * t.elsize
    T.eq(#c.hashes, (size + 19) // 20)
    for i, h in ipairs(c.hashes) do
      local lo = c.pos + (i - 1) * 20
      T.eq(h, crc32c_x2(bytes:sub(lo + 1, math.min(lo + 20, c.pos + size))), key .. " block " .. i)
      n = n + 1
    end
  end
  T.eq(n, 3 + 8 + 2)
end)

T.test("non-contiguous tensors save and load (through a contiguous copy)", function()
  local dir = new_dir()
  torch.manual_seed(5)
  local src = torch.randn(3, 4)
  dcp.save({ t = src:t() }, { checkpoint_id = dir })
  local dst = torch.zeros(3, 4)
  local sd = { t = dst:t() }          -- a transposed view: written through
  dcp.load(sd, { checkpoint_id = dir })
  T.ok(torch.equal(dst, src))
end)

T.test("a registered shard reads exactly its range, for every range and block size", function()
  torch.manual_seed(6)
  local g = torch.randn(4, 3)
  local flat = g:reshape(-1)
  for _, block in ipairs({ 8, 10, 48, 1 << 20 }) do
    local dir = new_dir()
    dcp.block_bytes = block
    dcp.save({ w = g, n = 1 }, { checkpoint_id = dir })
    dcp.block_bytes = 1 << 20
    T.eq(#dcp.metadata(dir).tensors.w.chunks[1].hashes, (48 + block - 1) // block)
    for a = 0, 11 do
      for b = a + 1, 12 do
        local piece = dist.register_shard(torch.full({ b - a }, -7.0), { 4, 3 }, a)
        dcp.load({ w = piece }, { checkpoint_id = dir })
        T.ok(torch.equal(piece, flat:narrow(1, a + 1, b - a)), ("block %d, elements %d..%d"):format(block, a, b - 1))
      end
    end
  end
end)

T.test("a shard load reads only the blocks it needs: a corrupt block elsewhere goes unnoticed", function()
  local dir = new_dir()
  torch.manual_seed(7)
  local g = torch.randn(64)                 -- 256 bytes: blocks of 64 bytes (16 elements)
  dcp.block_bytes = 64
  dcp.save({ w = g }, { checkpoint_id = dir })
  dcp.block_bytes = 1 << 20
  local m = dcp.metadata(dir)
  local file = dir .. "/" .. m.tensors.w.chunks[1].file
  local bytes = S.read(file)
  local pos = m.tensors.w.chunks[1].pos + 200          -- in the 4th block (elements 48..63)
  local f = assert(io.open(file, "wb"))
  f:write(bytes:sub(1, pos) .. string.char((bytes:byte(pos + 1) + 1) % 256) .. bytes:sub(pos + 2))
  f:close()
  local piece = dist.register_shard(torch.zeros(40), { 64 }, 4)   -- elements 4..43: blocks 1..3
  dcp.load({ w = piece }, { checkpoint_id = dir })
  T.ok(torch.equal(piece, g:narrow(1, 5, 40)))
  local err = T.raises(function() dcp.load({ w = torch.zeros(64) }, { checkpoint_id = dir }) end,
    "torch.distributed.checkpoint.load", "checksum mismatch", file, "tensor w", "bytes 192..255")
  T.ok(err)
end)

T.test("a shard of a registered tensor saved in one process (it covers the whole tensor)", function()
  local dir = new_dir()
  torch.manual_seed(8)
  local g = torch.randn(2, 3)
  local whole = dist.register_shard(g:reshape(-1):clone(), { 2, 3 }, 0)
  dcp.save({ w = whole }, { checkpoint_id = dir })
  T.eq(dcp.metadata(dir).tensors.w.shape, { 2, 3 })
  local full = torch.zeros(2, 3)
  dcp.load({ w = full }, { checkpoint_id = dir })
  T.ok(torch.equal(full, g))
  -- a shard that leaves a gap cannot be saved: the checkpoint would lack elements
  local half = dist.register_shard(torch.ones(3), { 2, 3 }, 0)
  T.raises(function() dcp.save({ w = half }, { checkpoint_id = new_dir() }) end,
    "torch.distributed.checkpoint.save", "tensor w", "3 of its 6 elements")
end)

T.test("load errors: missing directory, keys, dtype and shape mismatches", function()
  local dir = new_dir()
  dcp.save(sample(3), { checkpoint_id = dir })
  T.raises(function() dcp.load(blank(sample(3)), { checkpoint_id = S.path("nowhere") }) end,
    "torch.distributed.checkpoint.load", "no checkpoint in", "nowhere")
  local sd = blank(sample(3))
  sd.model.extra = torch.zeros(2)
  T.raises(function() dcp.load(sd, { checkpoint_id = dir }) end, "tensor model.extra is not in the checkpoint", dir)
  sd = blank(sample(3))
  sd.optim.param_groups[1].momentum = 0.9
  T.raises(function() dcp.load(sd, { checkpoint_id = dir }) end, "optim.param_groups[1].momentum is not in the checkpoint")
  sd = blank(sample(3))
  sd.model.weight = torch.zeros(3, 4)
  T.raises(function() dcp.load(sd, { checkpoint_id = dir }) end, "tensor model.weight has shape [4, 3] in the checkpoint",
    "[3, 4] in the state dict")
  sd = blank(sample(3))
  sd.model.weight = torch.zeros(4, 3, { dtype = torch.float64 })
  T.raises(function() dcp.load(sd, { checkpoint_id = dir }) end, "tensor model.weight is float32 in the checkpoint",
    "float64 in the state dict")
  sd = blank(sample(3))
  sd.model.bias = dist.register_shard(torch.zeros(2), { 5 }, 0)
  T.raises(function() dcp.load(sd, { checkpoint_id = dir }) end, "tensor model.bias has shape [4] in the checkpoint",
    "a tensor of shape [5]")
  sd = blank(sample(3))
  sd.epoch = torch.zeros(1)
  T.raises(function() dcp.load(sd, { checkpoint_id = dir }) end, "epoch is a tensor in the state dict but a number")
  sd = blank(sample(3))
  sd.model.bias = 0
  T.raises(function() dcp.load(sd, { checkpoint_id = dir }) end, "model.bias is a number in the state dict but a tensor")
end)

T.test("load errors: damaged metadata is refused before it is used, naming the field", function()
  -- each case edits the metadata table of a good checkpoint and writes it back (fuzz_dcp's edits)
  local cases = {
    { function(m) m.files[1] = 7 end, "files[1] is a number, not a table" },
    { function(m) m.files[1].name = "../elsewhere.bin" end, "files[1] is named ../elsewhere.bin" },
    { function(m) m.block_bytes = 0 end, "block_bytes is 0" },
    { function(m) m.block_bytes = 1 << 40 end, "block_bytes is" },
    { function(m) m.tensors["model.weight"].elsize = 8 end, "tensor model.weight's elsize is 8" },
    { function(m) m.tensors["model.weight"].dtype = "float99" end, "tensor model.weight has dtype float99" },
    { function(m) m.tensors["model.weight"].shape = { 4, -3 } end, "tensor model.weight's shape[2] is -3" },
    { function(m) m.tensors["model.weight"].shape = { 1 << 40, 1 << 40 } end, "is too large" },
    { function(m) m.tensors["model.weight"].chunks[1].offset = 5 end, "tensor model.weight's chunk 1 offset is 5" },
    { function(m) m.tensors["model.weight"].chunks[1].pos = 1 << 50 end, "chunk 1 position is" },
    { function(m) m.tensors["model.weight"].chunks[1].file = "other.bin" end, "is in file other.bin" },
    { function(m) m.tensors["model.weight"].chunks[1].hashes = {} end, "has 0 checksums for 1 blocks" },
    { function(m) m.tensors["model.weight"].chunks = "x" end, "chunks is a string, not a table" },
    { function(m) m.values.epoch = 3 end, "value epoch is a number, not a table" },
  }
  for _, c in ipairs(cases) do
    local dir = new_dir()
    dcp.save(sample(5), { checkpoint_id = dir })
    local m = dcp.metadata(dir)
    c[1](m)
    torch.save(dir .. "/dcp.metadata", m)
    T.raises(function() dcp.load(blank(sample(5)), { checkpoint_id = dir }) end,
      "torch.distributed.checkpoint.load", "dcp.metadata is damaged", c[2])
  end
end)

T.test("load errors: a missing data file, a truncated one, a flipped byte", function()
  local function fresh()
    local dir = new_dir()
    dcp.save(sample(4), { checkpoint_id = dir })
    local m = dcp.metadata(dir)
    return dir, dir .. "/" .. m.files[1].name, m
  end
  local dir, file = fresh()
  os.remove(file)
  T.raises(function() dcp.load(blank(sample(4)), { checkpoint_id = dir }) end,
    "torch.distributed.checkpoint.load", file, "cannot be opened", "holding tensor model")

  dir, file = fresh()
  local bytes = S.read(file)
  local f = assert(io.open(file, "wb")); f:write(bytes:sub(1, #bytes - 10)); f:close()
  T.raises(function() dcp.load(blank(sample(4)), { checkpoint_id = dir }) end,
    file, "truncated", ("has %d bytes, the checkpoint wrote %d"):format(#bytes - 10, #bytes), "tensor model")

  local m
  dir, file, m = fresh()
  bytes = S.read(file)
  local c = m.tensors["optim.state[2].exp_avg"].chunks[1]
  local p = c.pos + 5
  f = assert(io.open(file, "wb"))
  f:write(bytes:sub(1, p) .. string.char(bytes:byte(p + 1) ~ 0x10) .. bytes:sub(p + 2))
  f:close()
  T.raises(function() dcp.load(blank(sample(4)), { checkpoint_id = dir }) end,
    file, "checksum mismatch", "tensor optim.state[2].exp_avg")
  -- the other tensors still load
  local sd = blank(sample(4))
  sd.optim = nil
  dcp.load(sd, { checkpoint_id = dir })
  local want = sample(4)
  want.optim = nil
  same(sd, want)

  -- metadata that is not a checkpoint's
  dir = new_dir()
  torch.serialization._dcp_mkdir(dir)
  torch.save(dir .. "/dcp.metadata", { hello = 1 })
  T.raises(function() dcp.load({}, { checkpoint_id = dir }) end, "not the metadata of a distributed checkpoint")
  f = assert(io.open(dir .. "/dcp.metadata", "wb")); f:write("garbage"); f:close()
  T.raises(function() dcp.load({}, { checkpoint_id = dir }) end, "cannot read", "dcp.metadata")
end)

T.test("argument and option errors name the function", function()
  local dir = new_dir()
  T.raises(function() dcp.save({}, { chekpoint_id = dir }) end,
    "torch.distributed.checkpoint.save", "unknown option 'chekpoint_id'", "checkpoint_id")
  T.raises(function() dcp.load({}, { checkpoint_id = dir, nodist = true }) end,
    "torch.distributed.checkpoint.load", "unknown option 'nodist'")
  T.raises(function() dcp.save({}, {}) end, "torch.distributed.checkpoint.save", "option 'checkpoint_id'")
  T.raises(function() dcp.save({}, { checkpoint_id = 3 }) end, "option 'checkpoint_id'")
  T.raises(function() dcp.save(torch.ones(2), { checkpoint_id = dir }) end, "argument 'state_dict' must be a table")
  T.raises(function() dcp.save({ a = { f = print } }, { checkpoint_id = dir }) end,
    "torch.distributed.checkpoint.save", "state_dict a.f: a function is not a state dict value")
  T.raises(function() dcp.save({ [1.5] = 1 }, { checkpoint_id = dir }) end, "key 1.5", "strings or integers")
  local loop = {}
  loop.self = loop
  T.raises(function() dcp.save({ a = loop }, { checkpoint_id = dir }) end, "state_dict a.self", "contains itself")
  T.raises(function() dcp.save({}, { checkpoint_id = dir, process_group = {} }) end,
    "process_group", "not initialized")
  -- a path under a regular file cannot be made a directory
  local file = S.write("plain", "x")
  T.raises(function() dcp.save({ a = torch.ones(2) }, { checkpoint_id = file .. "/ck" }) end,
    "torch.distributed.checkpoint.save", "checkpoint_id", file)
  T.raises(function() dcp.metadata(nil) end, "torch.distributed.checkpoint.metadata")
end)

-- the atomicity guarantee: a save that fails leaves the previous checkpoint loadable
T.test("a save that fails before writing leaves the previous checkpoint (bad leaf after tensors)", function()
  local dir = new_dir()
  dcp.save(sample(10), { checkpoint_id = dir })
  local before = files_of(dir)
  local bad = sample(11)
  bad.zz = { after = function() end }      -- after every tensor in key order
  T.raises(function() dcp.save(bad, { checkpoint_id = dir }) end, "state_dict zz.after")
  T.eq(files_of(dir), before)
  local sd = blank(sample(10))
  dcp.load(sd, { checkpoint_id = dir })
  same(sd, sample(10))
end)

T.test("a save that fails midway through its data file leaves the previous checkpoint", function()
  local dir = new_dir()
  dcp.save(sample(12), { checkpoint_id = dir })
  local before = files_of(dir)
  dcp._test_fail_after_bytes = 100
  local ok, err = pcall(dcp.save, sample(13), { checkpoint_id = dir })
  dcp._test_fail_after_bytes = nil
  T.ok(not ok)
  T.ok(tostring(err):find("test hook: failing after 100 bytes", 1, true), err)
  T.eq(files_of(dir), before)             -- the partial file was removed
  local sd = blank(sample(12))
  dcp.load(sd, { checkpoint_id = dir })
  same(sd, sample(12))
end)

T.test("a process killed midway through a save leaves the previous checkpoint; the next save cleans up", function()
  local dir = new_dir()
  dcp.save(sample(14), { checkpoint_id = dir })
  local id = dcp.metadata(dir).id
  local script = S.write("kill_save.lua", ([[
    local function sample(seed) %s end
    torch.distributed.checkpoint.save(sample(15), {checkpoint_id = %q})
    print("UNREACHABLE")
  ]]):format("torch.manual_seed(seed); return {w = torch.randn(100), v = torch.randn(50)}", dir))
  local ok, how, code = os.execute(("LUTORCH_DCP_TEST_DIE_AFTER_BYTES=120 %s %s >%s 2>&1"):format(
    LT, script, S.path("kill.out")))
  -- (through sh -c, a child killed by signal 9 shows as exit status 137)
  T.ok(not ok and ((how == "signal" and code == 9) or (how == "exit" and code == 137)),
    ("the saving process was killed: %s %s %s"):format(ok, how, code))
  T.ok(S.read(S.path("kill.out")):find("test hook: killing this process mid-save", 1, true))
  -- its partial file is there, named by no metadata
  local partial
  for _, n in ipairs(files_of(dir)) do
    local other = n:match("^dcp%-(%x+)%-0%.bin$")
    if other and other ~= id then partial = n end
  end
  T.ok(partial, "the killed save's file")
  T.eq(#S.read(dir .. "/" .. partial), 120)
  T.eq(dcp.metadata(dir).id, id)
  local sd = blank(sample(14))
  dcp.load(sd, { checkpoint_id = dir })
  same(sd, sample(14))
  -- a later save removes the old checkpoint's files and the dead save's
  dcp.save(sample(16), { checkpoint_id = dir })
  local l = files_of(dir)
  T.eq(#l, 2)
  T.ok(l[1]:match("^dcp%-" .. dcp.metadata(dir).id .. "%-0%.bin$"), l[1])
  sd = blank(sample(16))
  dcp.load(sd, { checkpoint_id = dir })
  same(sd, sample(16))
end)

T.test("a second save replaces the first completely", function()
  local dir = new_dir()
  dcp.save(sample(20), { checkpoint_id = dir })
  local first = dcp.metadata(dir).id
  dcp.save(sample(21), { checkpoint_id = dir .. "/" })     -- a trailing slash names the same directory
  local m = dcp.metadata(dir)
  T.ok(m.id ~= first)
  T.eq(#files_of(dir), 2)
  local sd = blank(sample(21))
  dcp.load(sd, { checkpoint_id = dir })
  same(sd, sample(21))
end)

T.test("a larger tensor over many blocks round trips and loads into shards", function()
  local dir = new_dir()
  torch.manual_seed(30)
  local g = torch.randn(1000, 700)                  -- 2.8 MB: three 1 MiB blocks
  dcp.save({ g = g }, { checkpoint_id = dir })
  local full = torch.zeros(1000, 700)
  dcp.load({ g = full }, { checkpoint_id = dir })
  T.ok(torch.equal(full, g))
  local flat = g:reshape(-1)
  for _, r in ipairs({ { 0, 1 }, { 262143, 262146 }, { 100000, 600000 }, { 699999, 700000 } }) do
    local piece = dist.register_shard(torch.zeros(r[2] - r[1]), { 1000, 700 }, r[1])
    dcp.load({ g = piece }, { checkpoint_id = dir })
    T.ok(torch.equal(piece, flat:narrow(1, r[1] + 1, r[2] - r[1])), r[1] .. ".." .. r[2])
  end
end)

T.test("the C helpers: short reads, bad ranges and missing paths are errors, not crashes", function()
  local C = torch.serialization
  local path = S.write("short.bin", ("\1"):rep(10))
  local f = assert(io.open(path, "rb"))
  local t = torch.zeros(8)                                     -- 32 bytes
  local h, msg = C._dcp_pread(f, 0, 32, 8, t, 0)
  T.eq(h, nil)
  T.ok(msg:find("truncated", 1, true), msg)
  h, msg = C._dcp_pread_part(f, 4, 16, t, 0, 2, 4)
  T.eq(h, nil)
  T.ok(msg:find("truncated", 1, true), msg)
  h = C._dcp_pread_part(f, 0, 10, t, 4, 2, 4)                  -- bytes 2..5 of the file into bytes 4..7
  T.eq(math.type(h), "integer")
  T.raises(function() C._dcp_pread(f, 0, 8, 8, t, 30) end, "outside the tensor")
  T.raises(function() C._dcp_pread_part(f, 0, 8, t, 0, 6, 4) end, "outside the block")
  T.raises(function() C._dcp_pread(f, 0, 8, 0, t, 0) end, "block size")
  T.raises(function() C._dcp_pread(f, -1, 8, 8, t, 0) end, "'pos' must be >= 0")
  T.raises(function() C._dcp_pwrite(f, 0, torch.zeros(2, 3):t(), 0, 4, 8) end, "contiguous")
  T.raises(function() C._dcp_pread(f, 0, 8, 8, "x", 0) end, "tensor")
  local w, werr = C._dcp_pwrite(f, 0, t, 0, 8, 8)                -- a read-only file: the write fails
  T.eq(w, nil)
  T.ok(werr:find("write at byte 0", 1, true), werr)
  f:close()
  T.raises(function() C._dcp_pread(f, 0, 8, 8, t, 0) end, "closed")
  local ok, e = C._dcp_listdir(S.path("none"))
  T.ok(not ok and e:find("cannot list", 1, true))
  ok, e = C._dcp_fsync(S.path("none"))
  T.ok(not ok and e:find("cannot open", 1, true))
  ok, e = C._dcp_mkdir(path .. "/sub")
  T.ok(not ok and e:find("short.bin", 1, true), e)
  T.ok(C._dcp_mkdir(S.path("a/b/c")))
  T.eq(C._dcp_listdir(S.path("a")), { "b" })
end)

S.remove()
T.done()
