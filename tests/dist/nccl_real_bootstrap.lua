-- The nccl backend's bootstrap with the real libnccl.so.2 (run by tests/sh/test_dist.sh under
-- mpirun with NCCL_SOCKET_IFNAME=lo and neither LUTORCH_NCCL nor LUTORCH_CUDA_DRIVER set).
-- On a machine without a GPU: rank 0's ncclGetUniqueId works (it needs a network interface,
-- not a GPU), the id reaches every rank unchanged (its hash compared over MPI afterwards), and
-- ncclCommInitRank fails with a Lua error naming it and NCCL's own message, on every rank,
-- without a crash or a hang. With a GPU, the communicator must come up and reduce.
local T = require "testing"
local dist = torch.distributed
local has_gpu = torch.cuda.is_available()

-- NCCL's ncclGetErrorString texts (nccl.h's ncclResult_t, 2.x)
local NCCL_ERRORS = { "unhandled cuda error", "unhandled system error", "internal error", "invalid argument",
                      "invalid usage", "remote process exited or there was a network error" }

-- the id hash nccl.c reports: FNV-1a (64-bit) over the 128 bytes, here of an all-zero id
local function fnv_zero_id()
  local h = -3750763034362895579            -- 0xcbf29ce484222325
  for _ = 1, 128 do h = h * 1099511628211 end   -- h ~ 0 is h; Lua integers wrap mod 2^64
  return ("%016x"):format(h)
end

T.test("the real library is the one in use", function()
  local ok, lib = dist.is_nccl_available()
  T.eq(ok, true, "libnccl.so.2 did not open: " .. tostring(lib))
  T.ok(lib:match("libnccl"), "library: " .. tostring(lib))
  T.ok(dist._nccl_info().version >= 20000, "ncclGetVersion: " .. tostring(dist._nccl_info().version))
end)

local init_ok, init_err = pcall(dist.init_process_group, { backend = "nccl", timeout = 30 })

if not has_gpu then
  T.test("without a GPU, ncclCommInitRank fails with a clean Lua error", function()
    T.eq(init_ok, false, "init_process_group{backend='nccl'} succeeded without a GPU")
    T.ok(tostring(init_err):find("init_process_group: backend nccl: ncclCommInitRank failed: ", 1, true), tostring(init_err))
    local named = false
    for _, s in ipairs(NCCL_ERRORS) do named = named or tostring(init_err):find(s, 1, true) ~= nil end
    T.ok(named, "NCCL's message is not in: " .. tostring(init_err))
    T.eq(dist.is_initialized(), false)
  end)
  T.test("the unique id reached every rank unchanged", function()
    -- MPI's world is still up: the mpi backend compares what every rank bootstrapped with
    dist.init_process_group { backend = "mpi", timeout = 30 }
    local h = dist._nccl_info().id_hash
    T.ok(h ~= nil and #h == 16, "no id hash")
    T.ok(h ~= fnv_zero_id(), "the id is all zeros: ncclGetUniqueId filled nothing, or the broadcast did not arrive")
    local v = torch.tensor({ tonumber(h:sub(1, 8), 16), tonumber(h:sub(9, 16), 16) }, { dtype = torch.int64 })
    local all = {}
    for r = 1, dist.get_world_size() do all[r] = torch.zeros(2, { dtype = torch.int64 }) end
    dist.all_gather(all, v)
    for r = 2, #all do T.ok(torch.equal(all[r], all[1]), ("rank %d has another id than rank 0"):format(r - 1)) end
  end)
else
  T.test("with a GPU, the communicator comes up and reduces", function()
    T.eq(init_ok, true, tostring(init_err))
    local t = torch.ones(1000, { device = "cuda" }) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    local n = dist.get_world_size()
    T.eq(t:cpu()[1]:item(), n * (n + 1) / 2)
  end)
end

dist.destroy_process_group()
T.done()
