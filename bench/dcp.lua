-- bench/dcp.lua — torch.distributed.checkpoint's save and load of a large float32 tensor
-- against dd writing and reading the same number of bytes.
--
--   mpirun -np 2 build/lutorch bench/dcp.lua [MiB per rank = 512] [dir = /tmp/lutorch-dcp-bench] [rounds = 3]
--   build/lutorch bench/dcp.lua 1024                  # one process, 1 GiB
--
-- Each rank holds a shard (MiB per rank) of one global float32 tensor. A round: dd writes
-- the total with conv=fsync over its previous file; dcp.save (with its fsyncs, the metadata's
-- rename and the removal of the previous checkpoint's files); dd reads its file back;
-- dcp.load fills an existing (already touched) tensor; last, dd writes the total into a new
-- file and then removes the previous one — what an atomic replacement does (the old data
-- stays until the new is complete), and what the save does. On a disk where blocks freed a
-- moment ago are written faster than others (this VM's), the writes right after a removal
-- gain; this order puts neither the save nor that dd right after one. Reads are warm (from
-- the page cache: the files were just written); dropping the cache needs root. Timed on rank 0
-- between barriers; files are removed at the end.
local dist = torch.distributed
local dcp = dist.checkpoint
dist.init_process_group { backend = "mpi", timeout = 600 }
local rank, world = dist.get_rank(), dist.get_world_size()
local mib = tonumber(arg[1]) or 512
local dir = arg[2] or "/tmp/lutorch-dcp-bench"
local rounds = tonumber(arg[3]) or 3
local n = mib * (1 << 20) // 4
local total_bytes = n * 4 * world

local function sh(cmd)
  local ok = os.execute(cmd)
  if not ok then error("failed: " .. cmd) end
end
local function now() return dist.clock() end
local function timed(fn)
  dist.barrier()
  local t0 = now()
  fn()
  dist.barrier()
  return now() - t0
end

torch.manual_seed(rank)
local shard = dist.register_shard(torch.randn(n), { n * world }, rank * n)
local dest = dist.register_shard(torch.zeros(n), { n * world }, rank * n)
if rank == 0 then sh("mkdir -p " .. dir) end
local ddfile = dir .. "/dd.bin"
local ckdir = dir .. "/ck"
local count = total_bytes // (16 << 20)

local res = { ddw = {}, ddn = {}, save = {}, ddr = {}, load = {} }
for r = 1, rounds do
  res.ddw[r] = timed(function()
    if rank == 0 then sh(("dd if=/dev/zero of=%s bs=16M count=%d conv=fsync 2>/dev/null"):format(ddfile, count)) end
  end)
  res.save[r] = timed(function() dcp.save({ w = shard }, { checkpoint_id = ckdir }) end)
  res.ddr[r] = timed(function()
    if rank == 0 then sh(("dd if=%s of=/dev/null bs=16M 2>/dev/null"):format(ddfile)) end
  end)
  dest:zero()
  res.load[r] = timed(function() dcp.load({ w = dest }, { checkpoint_id = ckdir }) end)
  if not torch.equal(dest, shard) then error("rank " .. rank .. ": the loaded tensor differs") end
  res.ddn[r] = timed(function()
    if rank == 0 then
      sh(("dd if=/dev/zero of=%s.%d bs=16M count=%d conv=fsync 2>/dev/null"):format(ddfile, r, count))
      os.remove(("%s.%d"):format(ddfile, r - 1))
    end
  end)
end

if rank == 0 then
  local cpu = "?"
  local f = io.open("/proc/cpuinfo")
  if f then
    for line in f:lines() do
      local m = line:match("^model name%s*:%s*(.+)$")
      if m then cpu = m; break end
    end
    f:close()
  end
  local function best(l) local b = math.huge; for _, x in ipairs(l) do b = math.min(b, x) end; return b end
  local function median(l)
    local s = { table.unpack(l) }
    table.sort(s)
    return s[(#s + 1) // 2]
  end
  local gb = total_bytes / 1e9
  print(("%s; %d rank(s) x %d MiB = %.2f GB float32, %d threads per rank, %d rounds"):format(
    cpu, world, mib, gb, torch.get_num_threads(), rounds))
  local function row(what, l)
    print(("%-28s median %7.3f s (%5.2f GB/s)  best %7.3f s   [%s]"):format(what, median(l), gb / median(l), best(l),
      table.concat((function() local o = {}; for i, x in ipairs(l) do o[i] = ("%.3f"):format(x) end; return o end)(), " ")))
  end
  row("dd write (conv=fsync)", res.ddw)
  row("dd write new, rm old", res.ddn)
  row("dcp.save", res.save)
  row("dd read (warm)", res.ddr)
  row("dcp.load (warm)", res.load)
  print(("bandwidth ratios (median, best): save / dd write %.2f, %.2f; save / dd write new + rm old %.2f, %.2f; " ..
    "load / dd read %.2f, %.2f"):format(
    median(res.ddw) / median(res.save), best(res.ddw) / best(res.save),
    median(res.ddn) / median(res.save), best(res.ddn) / best(res.save),
    median(res.ddr) / median(res.load), best(res.ddr) / best(res.load)))
  sh("rm -rf " .. dir)
end
dist.barrier()
