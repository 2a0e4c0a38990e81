-- torch.profiler's CUDA activity (src/cuda/trace.c): kernels and copies timed by CUDA events
-- on the device's track, each linked to the op that launched it, CUDA columns in the table,
-- and the trace's GPU process with its "ac2g" flows. Runs under the fake driver
-- (tests/sh/test_cuda_fake.sh) and unchanged on a GPU (tools/gpu_check.sh).
local T = require "testing"
local c = torch.cuda
local P = torch.profiler

if not c.is_available() then
  T.skip("cuda profiler", "torch.cuda is not available")
  T.done()
end

local function run()
  return P.profile({ activities = { P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA } }, function()
    local a = torch.ones(1000):cuda()
    local b = (a * 2 + 1):sum()
    T.eq(b:item(), 3000)
  end)
end

T.test("kernels and copies: timed, on the device's track, linked to their ops", function()
  local prof = run()
  local kernels, copies = {}, {}
  for _, e in ipairs(prof:events()) do
    if e.kind == "kernel" then kernels[e.name] = e end
    if e.kind == "memcpy" then copies[#copies + 1] = e end
  end
  for _, op in ipairs({ "mul", "add", "sum" }) do
    local k = kernels[op .. " kernel"]
    T.ok(k, op .. "'s kernel is recorded")
    T.eq(k.launcher and k.launcher.name, op)
    T.ok(k.dur >= 0 and k.ts >= k.launcher.ts - 1, "the kernel runs after its launch")
    T.eq(k.device, 0)
  end
  local names = {}
  for _, e in ipairs(copies) do names[e.name] = e.bytes end
  T.eq(names["Memcpy HtoD"], 4000)
  T.eq(names["Memcpy DtoH"], 4)
  local txt = prof:key_averages():table{ sort_by = "cuda_time_total" }
  T.ok(txt:find("Self CUDA", 1, true) and txt:find("Self CUDA time total", 1, true), txt)
  local rows = {}
  for _, r in ipairs(prof:key_averages().rows) do rows[r.key] = r end
  T.ok(rows.mul.self_cuda_time_total > 0, "the op's row has its kernel's time")
  T.near(rows.mul.self_cuda_time_total, rows["mul kernel"].self_cuda_time_total, 1e-9)
end)

T.test("the trace: a CUDA device process and flows from ops to kernels", function()
  local prof = run()
  local S = T.scratch()
  local path = prof:export_chrome_trace(S.path("cuda.json"))
  local f = assert(io.open(path))
  local s = f:read("a")
  f:close()
  T.ok(s:find('"name": "CUDA device 0"', 1, true), "the device's process is named")
  T.ok(s:find('"cat": "kernel"', 1, true), "kernel events")
  T.ok(s:find('"cat": "gpu_memcpy"', 1, true), "copy events")
  local starts, ends = 0, 0
  for _ in s:gmatch('"cat": "ac2g"[^\n]*"ph": "s"') do starts = starts + 1 end
  for _ in s:gmatch('"cat": "ac2g"[^\n]*"ph": "f"') do ends = ends + 1 end
  T.ok(starts >= 3 and starts == ends, ("ac2g flows: %d starts, %d ends"):format(starts, ends))
  S.remove()
end)

T.test("CUDA only: the device's events alone", function()
  local prof = P.profile({ activities = { P.ProfilerActivity.CUDA } }, function() local _ = torch.ones(4):cuda() * 2 end)
  local n = 0
  for _, e in ipairs(prof:events()) do
    n = n + 1
    T.ok(e.kind == "kernel" or e.kind == "memcpy", e.kind .. " " .. e.name)
  end
  T.ok(n >= 2, "the copy and the kernel")
end)

T.test("CPU only: no CUDA events", function()
  local prof = P.profile({}, function() local _ = torch.ones(4):cuda() * 2 end)
  for _, e in ipairs(prof:events()) do T.ok(e.kind ~= "kernel" and e.kind ~= "memcpy", e.name) end
end)

T.done()
