-- The nccl backend on 2+ ranks through the fake NCCL and the fake CUDA driver (run by
-- tests/sh/test_dist.sh under mpirun with LUTORCH_CUDA_DRIVER=fake LUTORCH_NCCL=fake): every
-- collective on cuda tensors, against the same collective on CPU tensors over an MPI group
-- of the same ranks (new_group{backend="mpi"}) in the same script.
local T = require "testing"
local dist = torch.distributed
dist.init_process_group { backend = "nccl", timeout = 30 }
local rank, world = dist.get_rank(), dist.get_world_size()
local cpu = dist.new_group(nil, { backend = "mpi" })
local f64 = torch.float64
local dev = "cuda:" .. torch.cuda.current_device()

-- rank r's data: small values (1..3) so sums and products are exact in every dtype
local function data(r, n, dt, salt)
  local x = (torch.arange(n, { dtype = f64 }) + r + (salt or 0)) % 3
  if dt == "bool" then return x:eq(0) end
  return (x + 1):to(dt)
end

-- the same tensor on the GPU (nccl) and on the CPU (mpi)
local function pair(r, n, dt, salt)
  local c = data(r, n, dt, salt)
  return c:to(dev), c
end

local function same(g, c, what)
  T.eq(g.device.type, "cuda", what .. ": the result left the GPU")
  T.eq(g:numel(), c:numel(), what .. ": sizes differ")
  local d = (g:cpu():to(f64):reshape(-1) - c:to(f64):reshape(-1)):abs()
  local m = d:numel() > 0 and d:max():item() or 0
  T.ok(m == 0, ("%s: nccl and mpi differ by %g"):format(what, m))
end

local DTYPES = { "float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool" }
local OPS = { "sum", "avg", "max", "min", "product" }

T.test("the groups", function()
  T.ok(world >= 2, "run me under mpirun -np 2")
  T.eq(dist.get_backend(), "nccl")
  T.eq(dist.get_backend(cpu), "mpi")
  T.eq(cpu.size, world)
  T.eq(torch.cuda.current_device(), rank % torch.cuda.device_count(), "the communicator's device is current")
  local ok, lib = dist.is_nccl_available()
  T.ok(ok and lib:match("fake"), "the fake NCCL: " .. tostring(lib))
  T.eq(dist._nccl_info().available, true)
end)

T.test("every rank bootstrapped with the same unique id", function()
  local h = dist._nccl_info().id_hash
  T.ok(h ~= nil and #h == 16, "an id hash")
  local v = torch.tensor({ tonumber(h:sub(1, 8), 16), tonumber(h:sub(9, 16), 16) }, { dtype = torch.int64 })
  local all = { torch.zeros(2, { dtype = torch.int64 }), torch.zeros(2, { dtype = torch.int64 }) }
  for r = 3, world do all[r] = torch.zeros(2, { dtype = torch.int64 }) end
  dist.all_gather(all, v, { group = cpu })
  for r = 2, world do T.ok(torch.equal(all[r], all[1]), "rank " .. (r - 1) .. " has another id") end
end)

T.test("all_reduce: every op and dtype, sync and async", function()
  for _, dt in ipairs(DTYPES) do
    for _, n in ipairs({ 1, 7, 1001 }) do
      for _, op in ipairs(OPS) do
        if op ~= "avg" or dt:match("float") then
          local g, c = pair(rank, n, dt)
          dist.all_reduce(g, { op = op })
          dist.all_reduce(c, { op = op, group = cpu })
          same(g, c, ("all_reduce %s %s n=%d"):format(op, dt, n))
        end
      end
    end
  end
  local g, c = pair(rank, 333, "float32")
  local w = dist.all_reduce(g, { op = "sum", async_op = true })
  dist.all_reduce(c, { group = cpu })
  w:wait()
  T.eq(w:is_completed(), true)
  same(g, c, "async all_reduce")
end)

T.test("all_reduce: non-contiguous cuda tensors are reduced in place", function()
  local base = data(rank, 24, "float32"):reshape(4, 6)
  local g = base:to(dev)
  local gt = g:t()
  T.ok(not gt:is_contiguous())
  dist.all_reduce(gt)
  local c = base:clone()
  dist.all_reduce(c, { group = cpu })
  same(g, c, "transposed")
end)

T.test("broadcast and reduce from every rank", function()
  for root = 0, world - 1 do
    for _, dt in ipairs({ "float32", "bfloat16", "int64", "int16", "bool" }) do
      local g, c = pair(rank, 513, dt, root)
      dist.broadcast(g, root)
      dist.broadcast(c, root, { group = cpu })
      same(g, c, ("broadcast %s from %d"):format(dt, root))
    end
    for _, op in ipairs(OPS) do
      local g, c = pair(rank, 99, "float64", root)
      dist.reduce(g, root, { op = op })
      dist.reduce(c, root, { op = op, group = cpu })
      if rank == root then same(g, c, ("reduce %s to %d"):format(op, root)) end
    end
  end
end)

T.test("all_gather, list and into one tensor", function()
  for _, dt in ipairs({ "float32", "int16", "bool" }) do
    local g, c = pair(rank, 37, dt)
    local gl, cl = {}, {}
    for r = 1, world do
      gl[r] = torch.zeros(37, { dtype = g.dtype, device = dev })
      cl[r] = torch.zeros(37, { dtype = c.dtype })
    end
    dist.all_gather(gl, g)
    dist.all_gather(cl, c, { group = cpu })
    for r = 1, world do same(gl[r], cl[r], ("all_gather %s [%d]"):format(dt, r)) end
    local go = torch.zeros(world * 37, { dtype = g.dtype, device = dev })
    local co = torch.zeros(world * 37, { dtype = c.dtype })
    dist.all_gather_into_tensor(go, g)
    dist.all_gather_into_tensor(co, c, { group = cpu })
    same(go, co, "all_gather_into_tensor " .. dt)
  end
end)

T.test("reduce_scatter: equal and unequal parts, and reduce_scatter_tensor", function()
  for _, op in ipairs(OPS) do
    local gl, cl = {}, {}
    for r = 1, world do gl[r], cl[r] = pair(rank, 10 + r, "float32", r) end   -- unequal parts
    local go = torch.zeros(10 + rank + 1, { device = dev })
    local co = torch.zeros(10 + rank + 1)
    dist.reduce_scatter(go, gl, { op = op })
    dist.reduce_scatter(co, cl, { op = op, group = cpu })
    same(go, co, "reduce_scatter unequal " .. op)
    local gi, ci = pair(rank, 8 * world, "float64")
    go, co = torch.zeros(8, { dtype = f64, device = dev }), torch.zeros(8, { dtype = f64 })
    dist.reduce_scatter_tensor(go, gi, { op = op })
    dist.reduce_scatter_tensor(co, ci, { op = op, group = cpu })
    same(go, co, "reduce_scatter_tensor " .. op)
  end
end)

T.test("all_to_all and all_to_all_single", function()
  -- rank r sends r + k + 1 elements to rank k
  local gi, ci, go, co = {}, {}, {}, {}
  for k = 1, world do
    gi[k], ci[k] = pair(rank, rank + k, "int32", k)
    go[k] = torch.zeros(k + rank, { dtype = torch.int32, device = dev })
    co[k] = torch.zeros(k + rank, { dtype = torch.int32 })
  end
  dist.all_to_all(go, gi)
  dist.all_to_all(co, ci, { group = cpu })
  for k = 1, world do same(go[k], co[k], "all_to_all [" .. k .. "]") end
  local g, c = pair(rank, 6 * world, "float32")
  local gout, cout = torch.zeros(6 * world, { device = dev }), torch.zeros(6 * world)
  dist.all_to_all_single(gout, g)
  dist.all_to_all_single(cout, c, { group = cpu })
  same(gout, cout, "all_to_all_single")
  -- with split sizes along dim 1: rank r sends r + 1 rows to each rank
  local rows = rank + 1
  local gx = data(rank, rows * world * 3, "float32"):reshape(rows * world, 3)
  local ins, outs, total = {}, {}, 0
  for k = 1, world do ins[k] = rows; outs[k] = k; total = total + k end
  local ga, ca = torch.zeros(total, 3, { device = dev }), torch.zeros(total, 3)
  dist.all_to_all_single(ga, gx:to(dev), { input_split_sizes = ins, output_split_sizes = outs })
  dist.all_to_all_single(ca, gx, { input_split_sizes = ins, output_split_sizes = outs, group = cpu })
  same(ga, ca, "all_to_all_single with splits")
end)

T.test("gather and scatter", function()
  for root = 0, world - 1 do
    local g, c = pair(rank, 21, "float32", root)
    local gl, cl
    if rank == root then
      gl, cl = {}, {}
      for r = 1, world do gl[r] = torch.zeros(21, { device = dev }); cl[r] = torch.zeros(21) end
    end
    dist.gather(g, gl, root)
    dist.gather(c, cl, root, { group = cpu })
    if rank == root then for r = 1, world do same(gl[r], cl[r], ("gather to %d [%d]"):format(root, r)) end end
    local gs, cs
    if rank == root then
      gs, cs = {}, {}
      for r = 1, world do gs[r], cs[r] = pair(r, 9, "int64", root) end
    end
    local go, co = torch.zeros(9, { dtype = torch.int64, device = dev }), torch.zeros(9, { dtype = torch.int64 })
    dist.scatter(go, gs, root)
    dist.scatter(co, cs, root, { group = cpu })
    same(go, co, "scatter from " .. root)
  end
end)

T.test("barrier, sync and async", function()
  dist.barrier()
  local w = dist.barrier({ async_op = true })
  w:wait()
  T.eq(w:is_completed(), true)
end)

T.test("send and recv, isend and irecv", function()
  local peer = (rank + 1) % world
  local from = (rank - 1 + world) % world
  local g, c = pair(rank, 1234, "float32")
  local gr, cr = torch.zeros(1234, { device = dev }), torch.zeros(1234)
  -- a ring: everyone posts its receive first, then sends
  local wr = dist.irecv(gr, from)
  local ws = dist.isend(g, peer)
  ws:wait()
  wr:wait()
  T.eq(wr.source(), from)
  local cwr = dist.irecv(cr, from, { group = cpu })
  dist.isend(c, peer, { group = cpu }):wait()
  cwr:wait()
  same(gr, cr, "isend/irecv ring")
  -- blocking pair between ranks 0 and 1 (a bool, which travels as bytes)
  if rank <= 1 then
    local gb = data(rank, 50, "bool"):to(dev)
    if rank == 0 then
      dist.send(gb, 1)
    else
      local got = torch.zeros(50, { dtype = torch.bool, device = dev })
      T.eq(dist.recv(got, 0), 0)
      same(got, data(0, 50, "bool"), "send/recv bool")
    end
  end
end)

T.test("a nccl subgroup of rank 0 alone, and a non-member", function()
  local sub = dist.new_group({ 0 })
  local g, c = pair(rank, 16, "float32")
  if rank == 0 then
    T.eq(dist.get_backend(sub), "nccl")
    T.eq(dist.get_world_size(sub), 1)
    dist.all_reduce(g, { group = sub })
    same(g, c, "all_reduce on one rank")
  else
    T.eq(dist.get_rank(sub), -1)
  end
  dist.barrier()
end)

T.test("errors name the function and the argument", function()
  T.raises(function() dist.all_reduce(torch.ones(3)) end, "all_reduce: argument 'tensor' is on the CPU: the nccl backend takes CUDA tensors")
  T.raises(function() dist.all_reduce(torch.ones(3, { device = dev }), { group = cpu }) end,
           "is not on the CPU: the mpi backend takes CPU tensors")
  local other = "cuda:" .. ((torch.cuda.current_device() + 1) % torch.cuda.device_count())
  if torch.cuda.device_count() > 1 then
    T.raises(function() dist.broadcast(torch.ones(3, { device = other }), 0) end, "is on " .. other .. "; this rank's nccl communicator is on " .. dev)
  end
  T.raises(function() dist.all_reduce(torch.ones(3, { dtype = torch.int16, device = dev })) end,
           "the nccl backend cannot reduce this int16 tensor")
  T.raises(function() dist.all_reduce(torch.ones(3, { dtype = torch.int64, device = dev }), { op = "avg" }) end, "avg needs a floating tensor")
  T.raises(function() dist.irecv(torch.ones(3, { device = dev })) end, "recv: the nccl backend needs src")
  T.raises(function() dist.isend(torch.ones(3, { device = dev }), (rank + 1) % world, { tag = 3 }) end, "no message tags")
  T.raises(function() dist.new_group({ 0 }, { backend = "nccl2" }) end, "new_group: backend 'nccl2'")
  T.raises(function() dist.new_group({ 0 }, { colour = 1 }) end, "colour")
  -- nothing above reached the communication thread: the job still works
  local g, c = pair(rank, 5, "float32")
  dist.all_reduce(g)
  dist.all_reduce(c, { group = cpu })
  same(g, c, "after the errors")
end)

T.test("async handles finish on their own (is_completed turns true without wait)", function()
  local g, c = pair(rank, 4096, "float32")
  local w = dist.all_reduce(g, { async_op = true })
  local t0 = dist.clock()
  while not w:is_completed() do
    T.ok(dist.clock() - t0 < 20, "is_completed never became true")
    if dist.clock() - t0 >= 20 then break end
  end
  dist.all_reduce(c, { group = cpu })
  same(g, c, "polled all_reduce")
end)

dist.destroy_process_group()
T.done()
