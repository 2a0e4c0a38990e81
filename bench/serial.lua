-- serial.lua — one lutorch side of bench/serial.sh: save, load and mmap-load a state dict of
-- N float32 tensors of M elements each. Usage: WHAT=save,load,mmap lutorch bench/serial.lua DIR N M
-- WHAT picks the steps (default all three); bench/serial.sh runs each load in a fresh process,
-- so that every load, like PyTorch's, gets fresh memory from the system.
local dir, n, m = arg[1], tonumber(arg[2]), tonumber(arg[3])
local path = dir .. "/sd.lt"
local what = os.getenv("WHAT") or "save,load,mmap"
local label = os.getenv("LABEL") or "load"
local function time(f) local t0 = torch.time(); local r = f(); return torch.time() - t0, r end
if what:find("save") then
  local sd = {}
  torch.manual_seed(1)
  for i = 1, n do sd[("layer%02d.weight"):format(i)] = torch.randn(m) end
  local t = time(function() torch.save(path, sd) end)
  print(("lutorch save %.3f s"):format(t))
  sd = nil
  collectgarbage()
end
if what:find("load") then
  local t, r = time(function() return torch.load(path) end)
  local count = 0
  for _ in pairs(r) do count = count + 1 end
  assert(count == n, "loaded " .. count .. " tensors, expected " .. n)
  print(("lutorch %s %.3f s"):format(label, t))
  r = nil
  collectgarbage()
end
if what:find("mmap") then
  local t, r = time(function() return torch.load(path, { mmap = true }) end)
  print(("lutorch mmap_load %.4f s"):format(t))
  local t2 = time(function() local s = 0; for _, v in pairs(r) do s = s + v[1] end; return s end)
  print(("lutorch mmap_touch_first %.4f s"):format(t2))
end
