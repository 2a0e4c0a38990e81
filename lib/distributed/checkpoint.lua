-- torch.distributed.checkpoint — checkpoints that every rank writes in parallel and that
-- any number of ranks loads back, each reading only the bytes it needs.
--
--   local dcp = torch.distributed.checkpoint       -- or require "distributed.checkpoint"
--   dcp.save({model = model:state_dict(), step = 100}, {checkpoint_id = "ck"})
--   local sd = {model = model:state_dict(), step = 0}
--   dcp.load(sd, {checkpoint_id = "ck"})            -- fills sd in place
--
-- A state dict is a nested table whose leaves are tensors, numbers, strings and booleans.
-- A tensor registered with dist.register_shard is a piece of a larger (global) tensor; any
-- other tensor is whole (replicated). A checkpoint is a directory:
--
--   dcp.metadata              what every global tensor is (dtype, shape) and where each of its
--                             ranges lies (file, byte offset, a checksum per block), plus the
--                             non-tensor leaves; written by rank 0 with torch.save
--   dcp-<id>-<rank>.bin       one rank's bytes: the ranges of the tensors it writes, back to
--                             back; <id> is new for every save
--
-- Atomicity: the data files of a save carry its own id, so they never touch the files the
-- previous metadata names. Rank 0 writes the metadata (to a temporary name, renamed over the
-- old one) only after every rank has reported its file complete and fsynced; the previous
-- save's files are removed after that rename. A save that fails or dies anywhere before the
-- rename leaves the previous checkpoint loadable; one that fails after it leaves the new one.
--
-- Loading is local to each rank (no collectives): for each tensor of the given state dict,
-- the saved ranges overlapping what it holds are read with positioned reads, in whole
-- checksummed blocks, straight into the tensor's memory (the C half is src/vm/ldcp.c).
local torch = require "torch"
local class = require "torch_class"
local dist = require "distributed"
local S = torch.serialization
local check_options = class.check_options

local dcp = {}

--- bytes per checksummed block of a chunk: a load reads whole blocks, so a range that
--- starts or ends inside one costs at most a block's worth of extra reading
dcp.block_bytes = 1 << 20

dcp.METADATA = "dcp.metadata"
local FORMAT, VERSION = "lutorch.distributed.checkpoint", 1
-- the checksum of each block: src/serial/crc32c.h (lane 0: the CRC-32C of the block's even
-- 8-byte words and its last size % 16 bytes; lane 1: of its odd words; lane0 | lane1 << 32)
local CHECKSUM = "crc32c-x2"
local NAME = "torch.distributed.checkpoint"
local OPTS = { "checkpoint_id", "process_group", "no_dist" }

local function fail(fn, fmt, ...) error(NAME .. "." .. fn .. ": " .. fmt:format(...), 0) end

-- ---- key paths ----

-- A leaf's key is its path written as Lua would index it: model.layers[1].weight,
-- model["0.weight"]. It is unambiguous (1 and "1" differ) and is what errors show.
local function key_part(k, first)
  if type(k) == "string" then
    if k:match("^[%a_][%w_]*$") then return first and k or "." .. k end
    return ("[%q]"):format(k)
  end
  return "[" .. k .. "]"
end

local function sorted_keys(t, fn, name)
  local keys = {}
  for k in next, t do
    if type(k) ~= "string" and math.type(k) ~= "integer" then
      fail(fn, "state_dict%s: key %s: keys must be strings or integers", name == "" and "" or " " .. name, tostring(k))
    end
    keys[#keys + 1] = k
  end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  return keys
end

-- visit(parent, k, value, key, path) for every leaf of sd, in a fixed order
local function walk(sd, fn, visit)
  local open = {}
  local function rec(t, name, path)
    if open[t] then fail(fn, "state_dict%s: the table contains itself", name == "" and "" or " " .. name) end
    open[t] = true
    for _, k in ipairs(sorted_keys(t, fn, name)) do
      local v = rawget(t, k)
      local key = name .. key_part(k, name == "")
      local p = table.move(path, 1, #path, 1, {})
      p[#p + 1] = k
      local tv = type(v)
      if torch.is_tensor(v) or tv == "number" or tv == "string" or tv == "boolean" then
        visit(t, k, v, key, p)
      elseif tv == "table" then
        rec(v, key, p)
      else
        fail(fn, "state_dict %s: a %s is not a state dict value (tensors, numbers, strings, booleans and tables of them)",
          key, tv)
      end
    end
    open[t] = nil
  end
  rec(sd, "", {})
end

-- ---- options, groups ----

local function parse(fn, state_dict, opts)
  opts = check_options(NAME .. "." .. fn, opts, OPTS)
  if type(state_dict) ~= "table" then fail(fn, "argument 'state_dict' must be a table, got %s", type(state_dict)) end
  local dir = opts.checkpoint_id
  if type(dir) ~= "string" or dir == "" then
    fail(fn, "option 'checkpoint_id' must name a directory, got %s", tostring(dir))
  end
  dir = dir:gsub("(.)/+$", "%1")
  local g
  if not opts.no_dist and dist.is_initialized() then
    g = opts.process_group or dist.group_world()
    if getmetatable(g) ~= getmetatable(dist.group_world()) then
      fail(fn, "option 'process_group' must be a process group, got %s", type(g))
    end
    if not g.pg then fail(fn, "this rank is not a member of 'process_group'") end
  elseif opts.process_group ~= nil and not opts.no_dist then
    fail(fn, "option 'process_group' given, but the default process group is not initialized")
  end
  return dir, g
end

-- strings through the collectives of group g (nil: a world of one)
local CH = 4096
local function to_tensor(s, n)
  local t = torch.zeros({ math.max(n, 1) }, { dtype = torch.uint8 })
  for i = 1, #s, CH do
    local j = math.min(i + CH - 1, #s)
    t:narrow(1, i, j - i + 1):copy_(torch.tensor({ s:byte(i, j) }, { dtype = torch.uint8 }))
  end
  return t
end
local function from_tensor(t, n)
  local parts = {}
  for i = 1, n, CH do
    local j = math.min(i + CH - 1, n)
    parts[#parts + 1] = string.char(table.unpack(t:narrow(1, i, j - i + 1):tolist()))
  end
  return table.concat(parts)
end

local function comm_of(g)
  if not g then
    return { rank = 0, size = 1, all_gather = function(s) return { s } end,
             gather = function(s) return { s } end, bcast = function(s) return s end }
  end
  local o = { group = g }
  local c = { rank = g.rank, size = g.size }
  local function lengths(s)
    local l = {}
    for r = 1, g.size do l[r] = torch.zeros({ 1 }, { dtype = torch.int64 }) end
    dist.all_gather(l, torch.tensor({ #s }, { dtype = torch.int64 }), o)
    local n, max = {}, 0
    for r = 1, g.size do n[r] = l[r]:item(); max = math.max(max, n[r]) end
    return n, max
  end
  local function unpack_all(bufs, n)
    local out = {}
    for r = 1, g.size do out[r] = from_tensor(bufs[r], n[r]) end
    return out
  end
  -- every rank's string, on every rank
  function c.all_gather(s)
    local n, max = lengths(s)
    local bufs = {}
    for r = 1, g.size do bufs[r] = torch.empty({ math.max(max, 1) }, { dtype = torch.uint8 }) end
    dist.all_gather(bufs, to_tensor(s, max), o)
    return unpack_all(bufs, n)
  end
  -- every rank's string, on the group's first rank (nil elsewhere)
  function c.gather(s)
    local n, max = lengths(s)
    local bufs
    if g.rank == 0 then
      bufs = {}
      for r = 1, g.size do bufs[r] = torch.empty({ math.max(max, 1) }, { dtype = torch.uint8 }) end
    end
    dist.gather(to_tensor(s, max), bufs, g.ranks[1], o)
    return bufs and unpack_all(bufs, n)
  end
  -- the group's first rank's string, everywhere
  function c.bcast(s)
    local len = torch.tensor({ s and #s or 0 }, { dtype = torch.int64 })
    dist.broadcast(len, g.ranks[1], o)
    local n = len:item()
    local t = g.rank == 0 and to_tensor(s, n) or torch.empty({ math.max(n, 1) }, { dtype = torch.uint8 })
    dist.broadcast(t, g.ranks[1], o)
    return from_tensor(t, n)
  end
  return c
end

-- ---- save ----

local function shape_of(t)
  local s = {}
  for i = 1, t:dim() do s[i] = t:size(i) end
  return s
end
local function numel_of(shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return n
end
local function shape_str(s) return "[" .. table.concat(s, ", ") .. "]" end
local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- what this rank holds: tensors (whole, or registered shards) and the other leaves
local function local_plan(sd)
  local tensors, values, by_key = {}, {}, {}
  walk(sd, "save", function(_, _, v, key, path)
    if torch.is_tensor(v) then
      if v.device.type == "meta" then fail("save", "tensor %s is on the meta device (it has no data)", key) end
      local info = dist.shard_info(v)
      local e = { key = key, path = path, dtype = v.dtype.name, elsize = v:element_size() }
      if info then
        e.shape, e.offset, e.numel = info.global_shape, info.offset, v:numel()
      else
        e.shape, e.offset, e.numel, e.full = shape_of(v), 0, v:numel(), true
      end
      tensors[#tensors + 1] = e
      by_key[key] = v
    else
      values[#values + 1] = { key = key, path = path, value = v }
    end
  end)
  return tensors, values, by_key
end

-- [a, b) minus the sorted, disjoint intervals of covered: the uncovered pieces
local function uncovered(a, b, covered)
  local out, at = {}, a
  for _, c in ipairs(covered) do
    if c[2] > at and c[1] < b then
      if c[1] > at then out[#out + 1] = { at, c[1] } end
      at = math.max(at, c[2])
    end
  end
  if at < b then out[#out + 1] = { at, b } end
  return out
end
local function cover(covered, a, b)
  covered[#covered + 1] = { a, b }
  table.sort(covered, function(x, y) return x[1] < y[1] end)
  local m = {}
  for _, c in ipairs(covered) do
    local last = m[#m]
    if last and c[1] <= last[2] then last[2] = math.max(last[2], c[2]) else m[#m + 1] = { c[1], c[2] } end
  end
  return m
end

-- From every rank's plan, the same on every rank: each global tensor's chunks, and who
-- writes which. A whole tensor is written by the lowest rank holding it whole; a sharded one
-- by each rank for the part of its range no lower rank holds. Chunks land in each writer's
-- file in key order, back to back, so every rank knows every byte offset.
local function assign(plans, id)
  local keys, entries = {}, {}
  for r, p in ipairs(plans) do
    for _, e in ipairs(p.tensors) do
      local l = entries[e.key]
      if not l then l = {}; entries[e.key] = l; keys[#keys + 1] = e.key end
      l[#l + 1] = { rank = r - 1, e = e }
    end
  end
  table.sort(keys)
  local tensors, pos, writes = {}, {}, {}
  for r = 1, #plans do pos[r] = 0; writes[r] = {} end
  local function chunk(key, e, rank, lo, hi)
    local c = { offset = lo, numel = hi - lo, file = ("dcp-%s-%d.bin"):format(id, rank), pos = pos[rank + 1] }
    pos[rank + 1] = pos[rank + 1] + (hi - lo) * e.elsize
    local w = writes[rank + 1]
    w[#w + 1] = { key = key, chunk = c }
    return c
  end
  for _, key in ipairs(keys) do
    local l = entries[key]
    local first = l[1]
    for _, x in ipairs(l) do
      if x.e.dtype ~= first.e.dtype or not same_shape(x.e.shape, first.e.shape) then
        fail("save", "tensor %s is %s %s on rank %d but %s %s on rank %d", key, first.e.dtype,
          shape_str(first.e.shape), first.rank, x.e.dtype, shape_str(x.e.shape), x.rank)
      end
    end
    local n = numel_of(first.e.shape)
    local t = { path = first.e.path, dtype = first.e.dtype, shape = first.e.shape, elsize = first.e.elsize,
                chunks = {} }
    local whole
    for _, x in ipairs(l) do if x.e.full then whole = x; break end end
    if n > 0 and whole then
      t.chunks[1] = chunk(key, whole.e, whole.rank, 0, n)
    elseif n > 0 then
      local covered = {}
      for _, x in ipairs(l) do
        local a, b = x.e.offset, x.e.offset + x.e.numel
        for _, piece in ipairs(uncovered(a, b, covered)) do
          t.chunks[#t.chunks + 1] = chunk(key, x.e, x.rank, piece[1], piece[2])
        end
        covered = cover(covered, a, b)
      end
      local have = 0
      for _, c in ipairs(covered) do have = have + c[2] - c[1] end
      if have ~= n then
        fail("save", "tensor %s: its shards hold %d of its %d elements (register_shard ranges leave gaps)",
          key, have, n)
      end
      table.sort(t.chunks, function(a, b) return a.offset < b.offset end)
    end
    tensors[key] = t
  end
  return tensors, writes, pos
end

-- a new save's id: hex, unique per directory (time, process and a counter)
local saves = 0
local function new_id(dir)
  saves = saves + 1
  local pid = torch._data and torch._data.getpid() or 0
  local names = S._dcp_listdir(dir) or {}
  local taken = {}
  for _, n in ipairs(names) do
    local id = n:match("^dcp%-(%x+)%-%d+%.bin$")
    if id then taken[id] = true end
  end
  while true do
    local id = ("%08x%06x%02x"):format(os.time() & 0xffffffff, pid & 0xffffff, saves & 0xff)
    if not taken[id] then return id end
    saves = saves + 1
  end
end

-- The test hook of tests/sh/test_dist.sh: LUTORCH_DCP_TEST_DIE_AFTER_BYTES=N kills this
-- process (SIGKILL, as a crash would) once it has written N bytes of its data file;
-- LUTORCH_DCP_TEST_DIE_RANK=r limits that to rank r.
-- dcp._test_fail_after_bytes = N (set from Lua) raises an error there instead.
local function die_after()
  local n = tonumber(os.getenv("LUTORCH_DCP_TEST_DIE_AFTER_BYTES") or "")
  return n and math.tointeger(n)
end
local function die_now()
  io.stdout:flush()
  io.stderr:write("torch.distributed.checkpoint: test hook: killing this process mid-save\n")
  torch._data.kill(torch._data.getpid(), 9)
  os.exit(137)
end

-- write this rank's chunks; returns the list of block hashes of each, in order
local function write_file(dir, writes, by_key, plans_mine, rank)
  if #writes == 0 then return {} end
  local name = writes[1].chunk.file
  local path = dir .. "/" .. name
  local f, err = io.open(path, "wb")
  if not f then error(("cannot create %s: %s"):format(path, err), 0) end
  local ok, res = pcall(function()
    local by_entry = {}
    for _, e in ipairs(plans_mine) do by_entry[e.key] = e end
    local limit, kill = die_after(), true
    local drank = tonumber(os.getenv("LUTORCH_DCP_TEST_DIE_RANK") or "")
    if drank and drank ~= rank then limit = nil end
    if dcp._test_fail_after_bytes then limit, kill = dcp._test_fail_after_bytes, false end
    local hashes, written = {}, 0
    for i, w in ipairs(writes) do
      local e, c = by_entry[w.key], w.chunk
      local t = by_key[w.key]
      if t.device.type ~= "cpu" then t = t:cpu() end
      if not t:is_contiguous() then t = t:contiguous() end
      local off, n = (c.offset - e.offset) * e.elsize, c.numel * e.elsize
      if limit and written + n > limit then
        S._dcp_pwrite(f, c.pos, t, off, limit - written, dcp.block_bytes)
        S._dcp_fsync(f)
        if kill then die_now() end
        error(("test hook: failing after %d bytes"):format(limit), 0)
      end
      local h, msg = S._dcp_pwrite(f, c.pos, t, off, n, dcp.block_bytes)
      if not h then error(("writing %s (tensor %s): %s"):format(path, w.key, msg), 0) end
      hashes[i] = h
      written = written + n
    end
    local s, msg = S._dcp_fsync(f)
    if not s then error(("writing %s: %s"):format(path, msg), 0) end
    return hashes
  end)
  f:close()
  if not ok then os.remove(path); error(res, 0) end
  return res
end

-- an error message without this module's "torch.distributed.checkpoint.save: " (it is added back once)
local function strip(msg)
  return (tostring(msg):gsub("^torch%.distributed%.checkpoint%.save: ", ""))
end

--- save(state_dict, {checkpoint_id = dir, process_group = g, no_dist = false}): every rank
--- of the group calls it; see the top of this file
function dcp.save(state_dict, opts)
  local dir, g = parse("save", state_dict, opts)
  local comm = comm_of(g)
  local rank = comm.rank

  -- 1. every rank's plan, everywhere (a rank's local error travels with it, so all raise)
  local mine = { }
  local ok, tensors, values, by_key = pcall(local_plan, state_dict)
  if not ok then mine.err = strip(tensors); tensors, values, by_key = {}, {}, {} end
  mine.tensors = {}
  for i, e in ipairs(tensors) do
    mine.tensors[i] = { key = e.key, path = e.path, dtype = e.dtype, elsize = e.elsize, shape = e.shape,
                        offset = e.offset, numel = e.numel, full = e.full }
  end
  if rank == 0 and not mine.err then
    local made, err = S._dcp_mkdir(dir)
    if not made then mine.err = ("checkpoint_id: %s"):format(err)
    else mine.id = new_id(dir) end
  end
  local plans = {}
  for r, s in ipairs(comm.all_gather(torch.serialize(mine))) do plans[r] = torch.deserialize(s) end
  for r, p in ipairs(plans) do
    if p.err then fail("save", "%s%s", comm.size > 1 and ("rank %d: "):format(r - 1) or "", p.err) end
  end
  local id = plans[1].id
  local meta_tensors, writes, sizes = assign(plans, id)

  -- 2. each rank writes its file; rank 0 learns every rank's hashes (or error) and values
  local ok2, hashes = pcall(write_file, dir, writes[rank + 1], by_key, mine.tensors, rank)
  local report = { err = not ok2 and strip(hashes) or nil, hashes = ok2 and hashes or nil, values = values }
  local reports = comm.gather(torch.serialize(report))

  -- 3. rank 0 commits (the metadata, renamed over the old one); every rank learns the outcome
  local result = ""
  if rank == 0 then
    local ok3, err = pcall(function()
      local meta = { format = FORMAT, version = VERSION, id = id, world_size = comm.size, checksum = CHECKSUM,
                     block_bytes = dcp.block_bytes, tensors = meta_tensors, values = {}, files = {} }
      local rs = {}
      for r, s in ipairs(reports) do
        rs[r] = torch.deserialize(s)
        if rs[r].err then error(("%s%s"):format(comm.size > 1 and ("rank %d: "):format(r - 1) or "", rs[r].err), 0) end
      end
      for r, w in ipairs(writes) do
        for i, x in ipairs(w) do x.chunk.hashes = rs[r].hashes[i] end
        if #w > 0 then meta.files[#meta.files + 1] = { name = w[1].chunk.file, rank = r - 1, bytes = sizes[r] } end
      end
      for r = #rs, 1, -1 do   -- the lowest rank's value wins
        for _, v in ipairs(rs[r].values) do
          if meta_tensors[v.key] then error(("%s is a tensor on one rank and a %s on rank %d"):format(
            v.key, type(v.value), r - 1), 0) end
          meta.values[v.key] = { path = v.path, value = v.value }
        end
      end
      local s, e = S._dcp_fsync(dir)   -- the new files' names are durable before the metadata names them
      if not s then error(e, 0) end
      torch.save(dir .. "/" .. dcp.METADATA, meta)
    end)
    if not ok3 then result = tostring(err) end
  end
  result = comm.bcast(result)
  if result ~= "" then
    if ok2 and #writes[rank + 1] > 0 then os.remove(dir .. "/" .. writes[rank + 1][1].chunk.file) end
    fail("save", "%s", result)
  end
  -- Committed: the previous saves' files (and those of saves that died) are named by nothing
  -- now. Each rank removes those of its rank number (modulo the world), in parallel: freeing
  -- a large file's pages takes a while.
  for _, n in ipairs(S._dcp_listdir(dir) or {}) do
    local other, r = n:match("^dcp%-(%x+)%-(%d+)%.bin$")
    if (other and other ~= id and tonumber(r) % comm.size == rank)
       or (rank == 0 and n:match("^" .. dcp.METADATA:gsub("%.", "%%.") .. "%.tmp%.")) then
      os.remove(dir .. "/" .. n)
    end
  end
end

-- ---- load ----

-- Everything load takes from the metadata, checked before any of it is used: a damaged or
-- hostile file gets an error naming it and the field, never an error from inside load, a
-- read outside the checkpoint's directory, a read past a tensor or a giant buffer.
local MAX_BLOCK = 1 << 30
local function check_meta(fn, path, meta)
  local function bad(fmt, ...) fail(fn, "%s is damaged: " .. fmt, path, ...) end
  local function tbl(v, what)
    if type(v) ~= "table" then bad("%s is a %s, not a table", what, type(v)) end
    return v
  end
  local function int(v, lo, hi, what)
    if math.type(v) ~= "integer" or v < lo or v > hi then bad("%s is %s", what, tostring(v)) end
    return v
  end
  local MAXI = math.maxinteger
  local block = int(meta.block_bytes, 1, MAX_BLOCK, "block_bytes")
  local sizes = {}
  for i, f in ipairs(tbl(meta.files, "files")) do
    tbl(f, ("files[%d]"):format(i))
    -- a plain name in the checkpoint's directory
    if type(f.name) ~= "string" or not f.name:match("^[%w_][%w_.%-]*$") then
      bad("files[%d] is named %s", i, tostring(f.name))
    end
    sizes[f.name] = int(f.bytes, 0, MAXI, ("files[%d].bytes"):format(i))
  end
  for key, m in pairs(tbl(meta.tensors, "tensors")) do
    local w = "tensor " .. tostring(key)
    if type(key) ~= "string" then bad("%s has a key that is not a string", w) end
    tbl(m, w)
    local dt = type(m.dtype) == "string" and torch[m.dtype]
    if type(dt) ~= "table" or dt.itemsize == nil or dt.name ~= m.dtype then bad("%s has dtype %s", w, tostring(m.dtype)) end
    local es = int(m.elsize, dt.itemsize, dt.itemsize, w .. "'s elsize")
    local numel = 1
    for i, n in ipairs(tbl(m.shape, w .. "'s shape")) do
      int(n, 0, MAXI, ("%s's shape[%d]"):format(w, i))
      if n > 0 and numel > (MAXI // es) // n then bad("%s's shape %s is too large", w, shape_str(m.shape)) end
      numel = numel * n
    end
    for i, c in ipairs(tbl(m.chunks, w .. "'s chunks")) do
      local cw = ("%s's chunk %d"):format(w, i)
      tbl(c, cw)
      local cn = int(c.numel, 0, numel, cw .. " numel")
      int(c.offset, 0, numel - cn, cw .. " offset")
      if type(c.file) ~= "string" or sizes[c.file] == nil then bad("%s is in file %s, not one of the checkpoint's", cw, tostring(c.file)) end
      int(c.pos, 0, sizes[c.file] - cn * es, cw .. " position")
      local nh = (cn * es + block - 1) // block
      if #tbl(c.hashes, cw .. " hashes") ~= nh then bad("%s has %d checksums for %d blocks", cw, #c.hashes, nh) end
      for k = 1, nh do int(c.hashes[k], math.mininteger, MAXI, cw .. " checksum") end
    end
  end
  for key, v in pairs(tbl(meta.values, "values")) do tbl(v, "value " .. tostring(key)) end
end

local function read_meta(fn, dir)
  local path = dir .. "/" .. dcp.METADATA
  local f, err = io.open(path, "rb")
  if not f then fail(fn, "no checkpoint in '%s' (%s)", dir, err) end
  f:close()
  local ok, meta = pcall(torch.load, path)
  if not ok then fail(fn, "cannot read %s: %s", path, tostring(meta)) end
  if type(meta) ~= "table" or meta.format ~= FORMAT then
    fail(fn, "%s is not the metadata of a distributed checkpoint", path)
  end
  if meta.version ~= VERSION then
    fail(fn, "%s is format version %s; this lutorch reads version %d", path, tostring(meta.version), VERSION)
  end
  if meta.checksum ~= CHECKSUM then
    fail(fn, "%s: unknown checksum '%s' (this lutorch checks %s)", path, tostring(meta.checksum), CHECKSUM)
  end
  check_meta(fn, path, meta)
  return meta
end

--- metadata(dir): the parsed metadata of the checkpoint in dir (for inspection)
function dcp.metadata(dir)
  if type(dir) ~= "string" then fail("metadata", "argument 'checkpoint_id' must be a directory name, got %s", type(dir)) end
  return read_meta("metadata", dir)
end

-- the open data files of one load, closed when it ends (error or not)
local function file_cache(dir, meta)
  local sizes = {}
  for _, f in ipairs(meta.files) do sizes[f.name] = f.bytes end
  local open = {}
  return setmetatable({}, {
    __index = function(self, name) return function(key)
      local f = open[name]
      if f then return f end
      local path = dir .. "/" .. name
      local err
      f, err = io.open(path, "rb")
      if not f then fail("load", "%s (holding tensor %s) cannot be opened: %s", path, key, err) end
      local size = f:seek("end")
      if size ~= sizes[name] then
        f:close()
        fail("load", "%s (holding tensor %s) has %d bytes, the checkpoint wrote %d%s", path, key, size,
          sizes[name] or -1, size < (sizes[name] or 0) and " (truncated)" or "")
      end
      open[name] = f
      return f
    end end,
    __close = function() for _, f in pairs(open) do f:close() end end,
  })
end

-- read elements [a, b) of the global tensor (entry m) into dst (CPU, contiguous) from byte 0
local function read_range(dir, files, key, m, block, dst, a, b)
  local es = m.elsize
  local got = 0
  for _, c in ipairs(m.chunks) do
    local s, e = math.max(a, c.offset), math.min(b, c.offset + c.numel)
    if s < e then
      local f = files[c.file](key)
      local total = c.numel * es
      local bs, be = (s - c.offset) * es, (e - c.offset) * es
      local base = (s - a) * es - bs        -- dst byte of chunk byte 0
      local function bad(lo, hi, msg)
        fail("load", "%s, bytes %d..%d (tensor %s): %s", dir .. "/" .. c.file, c.pos + lo, c.pos + hi - 1, key, msg)
      end
      local i, last = bs // block, (be - 1) // block
      while i <= last do
        local lo, hi = i * block, math.min((i + 1) * block, total)
        if lo >= bs and hi <= be then
          -- a run of blocks wanted whole: one call, read straight into dst
          local j = i
          while j < last and math.min((j + 2) * block, total) <= be do j = j + 1 end
          local rhi = math.min((j + 1) * block, total)
          local h, msg = S._dcp_pread(f, c.pos + lo, rhi - lo, block, dst, base + lo)
          if not h then bad(lo, rhi, msg) end
          for k = 1, #h do
            if h[k] ~= c.hashes[i + k] then
              bad(lo + (k - 1) * block, math.min(lo + k * block, total), "checksum mismatch (the file is corrupt)")
            end
          end
          i = j + 1
        else
          -- a block wanted in part: read and checked whole, the wanted part copied
          local from, to = math.max(lo, bs), math.min(hi, be)
          local h, msg = S._dcp_pread_part(f, c.pos + lo, hi - lo, dst, base + from, from - lo, to - from)
          if not h then bad(lo, hi, msg) end
          if h ~= c.hashes[i + 1] then bad(lo, hi, "checksum mismatch (the file is corrupt)") end
          i = i + 1
        end
      end
      got = got + (e - s)
    end
  end
  if got ~= b - a then
    fail("load", "tensor %s: the checkpoint holds %d of its elements %d..%d", key, got, a, b - 1)
  end
end

--- load(state_dict, {checkpoint_id = dir, process_group = g, no_dist = false}): fills the
--- tensors of state_dict in place (each rank what it holds) and replaces its other leaves
function dcp.load(state_dict, opts)
  local dir = parse("load", state_dict, opts)
  local meta = read_meta("load", dir)
  local files <close> = file_cache(dir, meta)
  walk(state_dict, "load", function(parent, k, v, key)
    local m, val = meta.tensors[key], meta.values[key]
    if torch.is_tensor(v) then
      if not m then
        if val then fail("load", "%s is a tensor in the state dict but a %s in the checkpoint %s", key, type(val.value), dir) end
        fail("load", "tensor %s is not in the checkpoint %s", key, dir)
      end
      if v.dtype.name ~= m.dtype then
        fail("load", "tensor %s is %s in the checkpoint %s, %s in the state dict", key, m.dtype, dir, v.dtype.name)
      end
      local info = dist.shard_info(v)
      local a, b
      if info then
        if not same_shape(info.global_shape, m.shape) then
          fail("load", "tensor %s has shape %s in the checkpoint %s; the state dict's shard is of a tensor of shape %s",
            key, shape_str(m.shape), dir, shape_str(info.global_shape))
        end
        a, b = info.offset, info.offset + v:numel()
      else
        local shape = shape_of(v)
        if not same_shape(shape, m.shape) then
          fail("load", "tensor %s has shape %s in the checkpoint %s, %s in the state dict", key, shape_str(m.shape),
            dir, shape_str(shape))
        end
        a, b = 0, v:numel()
      end
      if a == b then return end
      local direct = v.device.type == "cpu" and v:is_contiguous()
      local dst = direct and v or torch.empty({ b - a }, { dtype = v.dtype })
      read_range(dir, files, key, m, meta.block_bytes, dst, a, b)
      if not direct then torch.no_grad(function() v:copy_(dst:view(v.shape)) end) end
    else
      if not val then
        if m then fail("load", "%s is a %s in the state dict but a tensor in the checkpoint %s", key, type(v), dir) end
        fail("load", "%s is not in the checkpoint %s", key, dir)
      end
      parent[k] = val.value
    end
  end)
  return state_dict
end

return dcp
