-- The nccl backend with a world of one (no mpirun: MPI starts as a singleton). On a GPU machine
-- tools/gpu_check.sh runs it with the real libnccl.so.2 on the real GPU; here
-- tests/sh/test_dist.sh runs it through the fake NCCL on the fake CUDA driver. With one rank
-- every collective gives back its input (a sum of one, a gather of one...), so the expected
-- values are the inputs, kept on the CPU: what this checks is the plumbing (pointers, counts,
-- dtypes, offsets, streams, events), each op on data that a wrong count or type would spoil.
local T = require "testing"
local dist = torch.distributed
dist.init_process_group { backend = "nccl", timeout = 60 }

local function same(g, c, what)
  T.eq(g.device.type, "cuda", what .. ": the result left the GPU")
  T.eq(g:numel(), c:numel(), what .. ": sizes differ")
  local d = (g:cpu():to(torch.float64):reshape(-1) - c:to(torch.float64):reshape(-1)):abs()
  local m = d:numel() > 0 and d:max():item() or 0
  T.ok(m == 0, ("%s: differs by %g"):format(what, m))
end

local function input(n, dtype)
  local x = (torch.arange(n, { dtype = torch.float64 }) * 7 + 3) % 251
  if dtype == torch.bool then return x:gt(125) end
  return x:to(dtype)
end

T.test("one rank of the nccl backend", function()
  T.eq(dist.get_backend(), "nccl")
  T.eq(dist.get_world_size(), 1)
  T.eq(dist.get_rank(), 0)
  local ok, lib = dist.is_nccl_available()
  print("nccl library: " .. tostring(lib) .. ", version " .. tostring(dist._nccl_info().version))
  T.eq(ok, true)
end)

T.test("all_reduce: dtypes and ops", function()
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                        torch.uint8, torch.int8, torch.bool }) do
    for _, op in ipairs({ "sum", "max", "min", "product", "avg" }) do
      if op ~= "avg" or dt.is_floating_point then
        local c = input(4099, dt)
        local g = c:cuda()
        dist.all_reduce(g, { op = op })
        same(g, c, ("all_reduce %s %s"):format(op, tostring(dt)))
      end
    end
  end
end)

T.test("broadcast, all_gather, reduce_scatter, all_to_all_single", function()
  local c = input(1 << 20, torch.float32)
  local g = c:cuda()
  dist.broadcast(g, 0)
  same(g, c, "broadcast 1M floats")
  local out = torch.zeros(1 << 20, { device = "cuda" })
  dist.all_gather_into_tensor(out, g)
  same(out, c, "all_gather_into_tensor")
  local l = { torch.zeros(1 << 20, { device = "cuda" }) }
  dist.all_gather(l, g)
  same(l[1], c, "all_gather list")
  local i16 = input(999, torch.int16)
  local gi = i16:cuda()
  dist.broadcast(gi, 0)
  same(gi, i16, "broadcast int16 (as bytes)")
  local rs = torch.zeros(1 << 20, { device = "cuda" })
  dist.reduce_scatter_tensor(rs, g)
  same(rs, c, "reduce_scatter_tensor")
  local a2a = torch.zeros(1 << 20, { device = "cuda" })
  dist.all_to_all_single(a2a, g)
  same(a2a, c, "all_to_all_single (send and receive to itself)")
end)

T.test("async handles, barrier, a side stream", function()
  local c = input(12345, torch.float32)
  local g = c:cuda()
  local w = dist.all_reduce(g, { async_op = true })
  w:wait()
  T.eq(w:is_completed(), true)
  same(g, c, "async all_reduce")
  dist.barrier()
  dist.barrier({ async_op = true }):wait()
  -- on a stream of its own: the collective runs on the current stream
  local s = torch.cuda.Stream()
  local prev = torch.cuda.current_stream()
  torch.cuda.set_stream(s)
  local g2 = c:cuda()
  dist.all_reduce(g2, { op = "max" })
  s:synchronize()
  torch.cuda.set_stream(prev)
  same(g2, c, "all_reduce on a side stream")
end)

dist.destroy_process_group()
T.done()
