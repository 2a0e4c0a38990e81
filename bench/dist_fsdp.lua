-- dist_fsdp.lua — one AdamW training step of an MLP whose optimizer state dominates memory
-- (LAYERS Linear(WIDTH, WIDTH) layers, batch B per rank), under DDP or under nn.fully_shard
-- (one unit per layer); prints on rank 0 "MODE ms_per_step peak_rss_mb" with the largest
-- peak RSS (VmHWM) over the ranks. Run by bench/dist.sh:
--   mpirun -np 2 build/lutorch bench/dist_fsdp.lua fsdp|ddp [steps] [B] [WIDTH] [LAYERS]
local nn = require "nn"
local optim = require "optim"
local dist = torch.distributed
dist.init_process_group()
local mode = arg[1] or "fsdp"
local steps = tonumber(arg[2]) or 20
local B = tonumber(arg[3]) or 32
local W = tonumber(arg[4]) or 1024
local L = tonumber(arg[5]) or 8
local raf = (arg[6] or "true") == "true"
torch.manual_seed(0)
local layers = {}
for i = 1, L do layers[#layers + 1] = nn.Linear(W, W); if i < L then layers[#layers + 1] = nn.ReLU() end end
local model = nn.Sequential(table.unpack(layers))
local run
if mode == "fsdp" then
  for i = 1, #layers, 2 do nn.fully_shard(model[i], { reshard_after_forward = raf }) end
  nn.fully_shard(model, { reshard_after_forward = raf })
  run = model
elseif mode == "ddp" then
  run = nn.DistributedDataParallel(model)
else
  error("dist_fsdp.lua: mode must be fsdp or ddp, got " .. tostring(mode))
end
layers = nil
collectgarbage()
local opt = optim.AdamW(run:parameters(), { lr = 1e-4 })
local x = torch.randn(B, W)
local function step()
  opt:zero_grad()
  run(x):square():mean():backward()
  opt:step()
end
for _ = 1, 3 do step() end
-- the peak RSS of training, not of building the full model first: Linux restarts VmHWM
-- from the current RSS when 5 is written to clear_refs
local f = io.open("/proc/self/clear_refs", "w")
if f then f:write("5"); f:close() end
torch.cpu_reset_peak_memory_stats()
dist.barrier()
local t0 = dist.clock()
for _ = 1, steps do step() end
local dt = dist.clock() - t0
local function hwm()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s*(%d+)")
    if kb then return tonumber(kb) / 1024 end
  end
end
local ms = torch.cpu_memory_stats()
if os.getenv("VERBOSE") then
  io.stderr:write(("rank %d: allocated %.1f MB, cached %.1f MB, peak %.1f MB\n"):format(dist.get_rank(),
    ms.allocated / 2^20, ms.cached / 2^20, ms.peak / 2^20))
end
local t = torch.tensor({ dt, hwm() })
dist.all_reduce(t, "max")
if dist.get_rank() == 0 then print(("%s %.3f %.1f"):format(mode, 1e3 * t[1] / steps, t[2])) end
dist.destroy_process_group()
