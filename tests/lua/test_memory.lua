-- test_memory.lua — tensor memory stays bounded without collectgarbage (the binding reports
-- storage bytes to the Lua GC), `<close>` frees at once, and no tensor outlives its last
-- reference after a collection.
local T = require "testing"

-- VmRSS and VmHWM of this process in MiB (Linux /proc)
local function rss_mib()
  local f = io.open("/proc/self/status", "r")
  if not f then return nil end
  local s = f:read("a"); f:close()
  local rss = tonumber(s:match("VmRSS:%s*(%d+)"))
  local hwm = tonumber(s:match("VmHWM:%s*(%d+)"))
  return rss and rss / 1024, hwm and hwm / 1024
end

-- under AddressSanitizer freed blocks wait in a quarantine (256 MiB by default), so the
-- process's RSS says nothing about the collector there; the tensor byte counts still do
local function sanitized()
  local f = io.open("/proc/self/maps", "r")
  if not f then return false end
  local s = f:read("a"); f:close()
  return s:find("libasan", 1, true) ~= nil
end
local ASAN = sanitized()

local ok_add = torch.ones and pcall(function() return torch.ones(2) + 1 end)
if not ok_add then
  T.skip("memory", "torch.ones or tensor + number is not available yet")
  T.done()
end

local N = 1024 * 1024                 -- 1M float32 = 4 MiB a temporary
local MiB = 1024 * 1024

-- the runs below measure growth from here; settle what the earlier setup left behind
collectgarbage(); collectgarbage()

T.test("2000 temporaries of 4 MiB stay under 200 MiB RSS without collectgarbage", function()
  local rss0, hwm0 = rss_mib()
  local check_rss = rss0 ~= nil and not ASAN
  if check_rss then T.ok(hwm0 < 150, ("peak RSS is already %.0f MiB before the loop"):format(hwm0)) end
  local x = torch.ones(N)
  local peak_alloc = 0
  for i = 1, 2000 do
    local y = x + 1
    if i % 100 == 0 then
      local a = torch.cpu_memory_stats().allocated
      if a > peak_alloc then peak_alloc = a end
    end
  end
  local rss, hwm = rss_mib()
  if check_rss then
    T.ok(hwm < 200, ("peak RSS %.0f MiB (VmRSS now %.0f MiB, 8 GiB were allocated in total)"):format(hwm, rss))
  end
  T.ok(peak_alloc < 200 * MiB, ("tensor bytes reached %.0f MiB"):format(peak_alloc / MiB))
end)

T.test("temporaries of an expression chain stay bounded too", function()
  local x = torch.ones(N)
  local peak_alloc = 0
  for i = 1, 500 do
    local y = (x + 1) * 2 - x
    if i % 50 == 0 then
      local a = torch.cpu_memory_stats().allocated
      if a > peak_alloc then peak_alloc = a end
    end
  end
  local _, hwm = rss_mib()
  T.ok(peak_alloc < 200 * MiB, ("tensor bytes reached %.0f MiB"):format(peak_alloc / MiB))
  if hwm and not ASAN then T.ok(hwm < 200, ("peak RSS %.0f MiB"):format(hwm)) end
end)

T.test("<close> frees a tensor's storage at the end of its scope", function()
  local x = torch.ones(N)
  collectgarbage(); collectgarbage()
  local before = torch.cpu_memory_stats().allocated
  local escaped
  do
    local y <close> = x + 1
    local inside = torch.cpu_memory_stats().allocated
    T.ok(inside >= before + 4 * MiB, ("allocated grew by %d bytes only"):format(inside - before))
    escaped = y
  end
  local after = torch.cpu_memory_stats().allocated
  T.eq(after, before, "allocated bytes after the scope")
  -- a closed tensor is an error to use, never a crash
  T.raises(function() return escaped + 1 end, "add", "freed")
end)

T.test("<close> in a loop keeps allocated bytes flat", function()
  local x = torch.ones(N)
  collectgarbage(); collectgarbage()
  local before = torch.cpu_memory_stats().allocated
  for _ = 1, 200 do
    local y <close> = x + 1
  end
  T.eq(torch.cpu_memory_stats().allocated, before, "allocated bytes after 200 closed temporaries")
end)

T.test("no tensor outlives its references after one collectgarbage", function()
  local x = torch.ones(1000)
  collectgarbage(); collectgarbage()
  local live0 = torch._live_tensors()
  local alloc0 = torch.cpu_memory_stats().allocated
  for _ = 1, 1000 do
    local y = x + 1
    local z = y * 2
    local v = z:view(10, 100)
  end
  collectgarbage()
  T.eq(torch._live_tensors(), live0, "live tensors after the loop and a collection")
  T.eq(torch.cpu_memory_stats().allocated, alloc0, "allocated bytes after the loop and a collection")
end)

T.test("a tensor kept in a table stays alive; dropping the table frees it", function()
  collectgarbage(); collectgarbage()
  local live0 = torch._live_tensors()
  local keep = {}
  for i = 1, 10 do keep[i] = torch.ones(100) + i end
  collectgarbage()
  T.ok(torch._live_tensors() >= live0 + 10, "the kept tensors are live")
  T.eq(keep[10]:sum():item(), 1100, "a kept tensor still has its values")
  keep = nil
  collectgarbage()
  T.eq(torch._live_tensors(), live0, "live tensors after dropping the table")
end)

if ASAN then print("SKIP RSS bounds: AddressSanitizer's quarantine holds freed memory (tensor byte counts still checked)") end
T.done()
