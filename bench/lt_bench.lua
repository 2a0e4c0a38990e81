-- lt_bench.lua — the lutorch side of the side-by-side benchmarks (bench/pt_bench.py is the
-- PyTorch side: same sections, same sizes, same output lines).
--   lutorch bench/lt_bench.lua SECTION THREADS [REPS]
-- SECTION: op1 (1-element add overhead), add16 (16M float32 add), mm (2048 sgemm),
--          red (16M sum, 4096x4096 transpose copy), overs (elementwise + mm loop).
-- Prints one "R key value" line per figure (median over REPS in-process repetitions);
-- bench/run.sh runs this and the PyTorch side alternately and takes the median over runs.
-- Needs the lclock module (bench/lclock.c), which run.sh builds into $BUILD/bench/.
package.cpath = (os.getenv("BUILD") or "build") .. "/bench/?.so;" .. package.cpath
local clock = require "lclock"
local now = clock.now

local section = arg[1] or "op1"
local threads = tonumber(arg[2] or "1")
local REPS = tonumber(arg[3] or "0")
torch.set_num_threads(threads)

local function median(ts)
  table.sort(ts)
  local n = #ts
  return n % 2 == 1 and ts[(n + 1) // 2] or (ts[n // 2] + ts[n // 2 + 1]) / 2
end

-- median seconds of fn() over reps calls, after one untimed warm-up call
local function bench(fn, reps)
  fn()
  local ts = {}
  for r = 1, reps do
    local t0 = now(); fn(); ts[r] = now() - t0
  end
  return median(ts)
end

local function emit(key, v) print(("R %s %.6g"):format(key, v)) end

local function rand(...)
  if torch.rand then return torch.rand(...) end
  if torch.ones then return torch.ones(...) end
  error("lt_bench: no tensor constructor (torch.rand / torch.ones) yet")
end

local sections = {}

function sections.op1()
  local N = 200000
  local a, b = rand(1), rand(1)
  local c = rand(1)
  local reps = REPS > 0 and REPS or 7
  local t = bench(function() for _ = 1, N do end end, reps)
  emit("op1_loop_us", 1e6 * t / N)
  t = bench(function()
    local x, y = a, b
    for _ = 1, N do local z = x + y end
  end, reps)
  emit("op1_add_us", 1e6 * t / N)
  t = bench(function()
    local x, y, opt = a, b, { out = c }
    for _ = 1, N do torch.add(x, y, opt) end
  end, reps)
  emit("op1_add_out_us", 1e6 * t / N)
end

function sections.add16()
  local M = 16 * 1024 * 1024
  local a, b, c = rand(M), rand(M), rand(M)
  local bytes = 3 * 4 * M
  local reps = REPS > 0 and REPS or 15
  local t = bench(function() local z = a + b end, reps)
  emit(("add16_new_t%d_gbs"):format(threads), bytes / t / 1e9)
  local opt = { out = c }
  t = bench(function() torch.add(a, b, opt) end, reps)
  emit(("add16_out_t%d_gbs"):format(threads), bytes / t / 1e9)
end

function sections.mm()
  local n = 2048
  local A, B = rand(n, n), rand(n, n)
  local t = bench(function() local C = torch.mm(A, B) end, REPS > 0 and REPS or 5)
  emit(("mm2048_t%d_gflops"):format(threads), 2 * n ^ 3 / t / 1e9)
end

function sections.red()
  local M = 16 * 1024 * 1024
  local reps = REPS > 0 and REPS or 11
  local x = rand(M)
  local t = bench(function() local s = x:sum() end, reps)
  emit(("sum16_t%d_gbs"):format(threads), 4 * M / t / 1e9)
  x = nil
  collectgarbage()
  local n = 4096
  local X = rand(n, n)
  t = bench(function() local y = X:t():contiguous() end, reps)
  emit(("tcopy4096_t%d_gbs"):format(threads), 2 * 4 * n * n / t / 1e9)
end

-- an elementwise op followed by a matrix product, as in a layer's forward: with two
-- thread pools (the op's and OpenBLAS's) spinning at once, 2 threads can be slower than 1
function sections.overs()
  local a, b = rand(1024 * 1024), rand(1024 * 1024)
  local A, B = rand(256, 256), rand(256, 256)
  local K = 200
  local t = bench(function()
    for _ = 1, K do
      local c = a + b
      local D = torch.mm(A, B)
    end
  end, REPS > 0 and REPS or 7)
  emit(("overs_t%d_ms"):format(threads), 1e3 * t / K)
end

local fn = sections[section] or error("lt_bench: unknown section '" .. section .. "'")
fn()
