-- Collectives on 2+ ranks against local references (run by tests/sh/test_dist.sh under mpirun).
local T = require "testing"
local dist = torch.distributed
dist.init_process_group { backend = "mpi", timeout = 30 }
local rank, world = dist.get_rank(), dist.get_world_size()
local f64 = torch.float64

local DTYPES = { "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool" }
local SIZES = { 1, 7, 1001, 70001 }

-- rank r's data: small values (1..3) so sums and products are exact in every dtype
local function data(r, n, dt, salt)
  local x = (torch.arange(n, { dtype = f64 }) + r + (salt or 0)) % 3
  if dt == "bool" then return x:eq(0) end
  return (x + 1):to(dt)
end

local function vals(t) return t:to(f64) end

local function reference(n, dt, op)
  local acc
  for r = 0, world - 1 do
    local v = vals(data(r, n, dt))
    if not acc then acc = v
    elseif op == "sum" or op == "avg" then acc = acc + v
    elseif op == "product" then acc = acc * v
    elseif op == "max" then acc = torch.maximum(acc, v)
    else acc = torch.minimum(acc, v) end
  end
  if op == "avg" then acc = acc / world end
  if dt == "bool" then acc = acc:gt(0):to(f64) end
  return acc
end

local function same(a, b, what)
  T.ok(a:numel() == b:numel(), what .. ": sizes differ")
  local d = (vals(a):reshape(-1) - vals(b):reshape(-1)):abs()
  local m = d:numel() > 0 and d:max():item() or 0
  T.ok(m == 0, ("%s: differs by %g"):format(what, m))
end

T.test("rank and size", function()
  T.ok(world >= 2, "run me under mpirun -np 2")
  T.ok(rank >= 0 and rank < world)
  T.eq(dist.is_initialized(), true)
  T.eq(dist.get_backend(), "mpi")
end)

T.test("all_reduce: every op, dtype and size", function()
  for _, dt in ipairs(DTYPES) do
    for _, n in ipairs(SIZES) do
      for _, op in ipairs({ "sum", "avg", "max", "min", "product" }) do
        local float = dt:match("float") ~= nil
        if op ~= "avg" or float then
          local t = data(rank, n, dt)
          dist.all_reduce(t, { op = op })
          same(t, reference(n, dt, op), ("all_reduce %s %s n=%d"):format(op, dt, n))
        end
      end
    end
  end
end)

T.test("all_reduce: avg of an integer tensor is an error", function()
  T.raises(function() dist.all_reduce(torch.ones(3, { dtype = torch.int64 }), { op = "avg" }) end, "avg")
  T.raises(function() dist.all_reduce(torch.ones(3), { op = "mean" }) end, "unknown reduce op")
  T.raises(function() dist.all_reduce({}) end, "must be a tensor")
end)

T.test("all_reduce: non-contiguous tensors are reduced in place", function()
  local base = data(rank, 24, "float32"):reshape(4, 6)
  local t = base:t()
  T.ok(not t:is_contiguous())
  dist.all_reduce(t)
  same(base, reference(24, "float32", "sum"):reshape(4, 6), "transposed")
  local m = torch.zeros(4, 6)
  local col = m:narrow(2, 2, 1)
  col:copy_(torch.ones(4, 1) * (rank + 1))
  dist.all_reduce(col)
  T.eq(m:sum():item(), 4 * world * (world + 1) / 2)
end)

T.test("async all_reduce: handles, overlap with compute", function()
  local ts, ws = {}, {}
  for i = 1, 4 do
    ts[i] = data(rank, 100000, "float32", i)
    ws[i] = dist.all_reduce(ts[i], { async_op = true })
  end
  local x = torch.randn(200, 200)
  local y = x:mm(x)   -- computes while the reductions run
  T.ok(y:numel() == 40000)
  for i = 4, 1, -1 do T.eq(ws[i]:wait(), true) end
  for i = 1, 4 do
    T.eq(ws[i]:is_completed(), true)
    local ref = torch.zeros(100000, { dtype = f64 })
    for r = 0, world - 1 do ref = ref + vals(data(r, 100000, "float32", i)) end
    same(ts[i], ref, "async " .. i)
  end
  local q, s, e = ws[1]:timing()
  T.ok(q <= s and s <= e, "timing order")
  -- a non-contiguous tensor is written back by wait()
  local base = torch.zeros(3, 4)
  local w = dist.all_reduce(base:t(), { async_op = true })
  w:wait()
end)

T.test("broadcast and reduce from every root", function()
  for _, dt in ipairs(DTYPES) do
    for root = 0, world - 1 do
      local t = data(rank, 1001, dt)
      dist.broadcast(t, root)
      same(t, data(root, 1001, dt), ("broadcast %s from %d"):format(dt, root))
      t = data(rank, 1001, dt)
      dist.reduce(t, root, { op = "sum" })
      if rank == root then same(t, reference(1001, dt, "sum"), "reduce " .. dt) end
    end
  end
  local w = dist.broadcast(torch.zeros(5), 0, { async_op = true })
  w:wait()
  T.raises(function() dist.broadcast(torch.zeros(2), world) end, "not in the group")
end)

T.test("all_gather into a list and into one tensor", function()
  for _, dt in ipairs(DTYPES) do
    for _, n in ipairs({ 1, 7, 1001 }) do
      local mine = data(rank, n, dt):reshape(n, 1)
      local list = {}
      for r = 1, world do list[r] = torch.zeros(n, 1, { dtype = mine.dtype }) end
      dist.all_gather(list, mine)
      for r = 1, world do same(list[r], data(r - 1, n, dt), ("all_gather %s n=%d from %d"):format(dt, n, r - 1)) end
      local out = torch.zeros(world * n, { dtype = mine.dtype })
      dist.all_gather_into_tensor(out, mine)
      for r = 1, world do same(out:narrow(1, (r - 1) * n + 1, n), data(r - 1, n, dt), "into tensor") end
    end
  end
  local list = {}
  for r = 1, world do list[r] = torch.zeros(3) end
  local w = dist.all_gather(list, torch.ones(3) * rank, { async_op = true })
  w:wait()
  for r = 1, world do T.eq(list[r]:totable(), { r - 1, r - 1, r - 1 }) end
  T.raises(function() dist.all_gather({ torch.zeros(3) }, torch.zeros(3)) end, "list of " .. world)
end)

T.test("gather and scatter", function()
  for _, dt in ipairs({ "float32", "int64", "bool", "bfloat16" }) do
    for root = 0, world - 1 do
      local list
      if rank == root then
        list = {}
        for r = 1, world do list[r] = torch.zeros(7, { dtype = data(0, 1, dt).dtype }) end
      end
      dist.gather(data(rank, 7, dt), list, root)
      if rank == root then
        for r = 1, world do same(list[r], data(r - 1, 7, dt), "gather " .. dt) end
      end
      local out = torch.zeros(7, { dtype = data(0, 1, dt).dtype })
      local slist
      if rank == root then
        slist = {}
        for r = 1, world do slist[r] = data(r + 10, 7, dt) end
      end
      dist.scatter(out, slist, root)
      same(out, data(rank + 11, 7, dt), "scatter " .. dt)
    end
  end
end)

T.test("reduce_scatter: tensor form and list form with uneven sizes", function()
  for _, dt in ipairs({ "float32", "float64", "int32", "float16" }) do
    local n = 5
    local input = data(rank, n * world, dt)
    local out = torch.zeros(n, { dtype = input.dtype })
    dist.reduce_scatter_tensor(out, input)
    same(out, reference(n * world, dt, "sum"):narrow(1, rank * n + 1, n), "reduce_scatter_tensor " .. dt)
    -- uneven: rank r gets r + 2 elements
    local list, total = {}, 0
    for r = 1, world do list[r] = data(rank, r + 1, dt, r); total = total + r + 1 end
    local mine = torch.zeros(rank + 2, { dtype = input.dtype })
    dist.reduce_scatter(mine, list, { op = "max" })
    local ref
    for r = 0, world - 1 do
      local v = vals(data(r, rank + 2, dt, rank + 1))
      ref = ref and torch.maximum(ref, v) or v
    end
    same(mine, ref, "reduce_scatter list " .. dt)
  end
  T.raises(function() dist.reduce_scatter_tensor(torch.zeros(3), torch.zeros(3 * world + 1)) end, "elements")
end)

T.test("all_to_all: lists with uneven sizes, and all_to_all_single", function()
  -- rank s sends rank d a tensor of s + d + 1 elements filled with 100 s + d
  local ins, outs = {}, {}
  for d = 0, world - 1 do
    ins[d + 1] = torch.full({ rank + d + 1 }, 100 * rank + d)
    outs[d + 1] = torch.zeros(d + rank + 1, { dtype = torch.int64 })
  end
  dist.all_to_all(outs, ins)
  for s = 0, world - 1 do
    T.eq(outs[s + 1]:totable(), torch.full({ s + rank + 1 }, 100 * s + rank):totable())
  end
  local input = torch.arange(world * 3, { dtype = torch.int64 }):reshape(world * 3, 1) + 1000 * rank
  local output = torch.zeros(world * 3, 1, { dtype = torch.int64 })
  dist.all_to_all_single(output, input)
  for s = 0, world - 1 do
    for k = 1, 3 do T.eq(output[s * 3 + k][1], 1000 * s + rank * 3 + k - 1) end
  end
end)

T.test("barrier, send/recv and isend/irecv", function()
  dist.barrier()
  local w = dist.barrier { async_op = true }
  w:wait()
  local peer = (rank + 1) % world
  local from = (rank - 1) % world
  -- everyone sends before receiving: point to point must not deadlock on big messages
  local big = torch.full({ 1000000 }, rank * 1.0)
  local got = torch.zeros(1000000)
  local s = dist.isend(big, peer, { tag = 7 })
  local r = dist.irecv(got, from, { tag = 7 })
  r:wait(); s:wait()
  T.eq(got[1], from)
  T.eq(got[1000000], from)
  T.eq(r.source(), from)
  if rank == 0 then
    dist.send(torch.tensor({ 1, 2, 3 }), 1)
  elseif rank == 1 then
    local t = torch.zeros(3, { dtype = torch.int64 })
    T.eq(dist.recv(t), 0)       -- from any rank
    T.eq(t:totable(), { 1, 2, 3 })
  end
  T.raises(function() dist.send(torch.zeros(1), rank) end, "is this rank")
  -- a message bigger than the receiving tensor is an error naming the op
  if rank == 0 then dist.send(torch.zeros(4), 1, { tag = 9 })
  elseif rank == 1 then T.raises(function() dist.recv(torch.zeros(2), 0, { tag = 9 }) end, "recv from rank 0") end
end)

T.test("new_group: a subgroup's collectives", function()
  local g = dist.new_group({ 0, 1 })
  T.eq(dist.get_world_size(g), 2)
  if rank <= 1 then
    T.eq(dist.get_rank(g), rank)
    local t = torch.tensor({ rank + 1.0 })
    dist.all_reduce(t, { group = g })
    T.eq(t:item(), 3.0)
    local b = torch.tensor({ rank * 1.0 })
    dist.broadcast(b, 1, { group = g })
    T.eq(b:item(), 1.0)
  end
  local solo = dist.new_group({ world - 1 })
  if rank == world - 1 then
    T.eq(dist.get_world_size(solo), 1)
    local t = torch.tensor({ 5.0 })
    dist.all_reduce(t, { group = solo })
    T.eq(t:item(), 5.0)
  else
    T.eq(dist.get_rank(solo), -1)
    T.raises(function() dist.all_reduce(torch.zeros(1), { group = solo }) end, "not a member")
  end
  dist.destroy_process_group(g)
end)

T.test("print0 and helpers", function()
  T.eq(dist.is_main_process(), rank == 0)
  T.ok(dist.clock() > 0)
  T.eq(dist.broken(), nil)
end)

dist.barrier()
dist.destroy_process_group()
T.eq(dist.is_initialized(), false)
T.done()
