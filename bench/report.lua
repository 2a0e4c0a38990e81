-- report.lua — turns bench/run.sh's results ("side key value" lines, side = lt | pt | ref)
-- into the markdown table of bench/README.md: median over rounds, ratios, targets.
--   lua5.4 bench/report.lua RESULTS [ROUNDS]
local path, rounds = arg[1], arg[2] or "?"
local vals = {}
for line in io.lines(path) do
  local side, key, v = line:match("^(%S+)%s+(%S+)%s+(%S+)")
  v = tonumber(v)
  if v then
    local k = side .. ":" .. key
    vals[k] = vals[k] or {}
    table.insert(vals[k], v)
  end
end

local function median(t)
  if not t or #t == 0 then return nil end
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end
local med = {}
for k, t in pairs(vals) do med[k] = median(t) end
local function get(side, key) return med[side .. ":" .. key] end

local function num(v, unit)
  if v == nil then return "n/a" end
  local s = v >= 100 and ("%.0f"):format(v) or v >= 10 and ("%.1f"):format(v)
            or v >= 1 and ("%.2f"):format(v) or ("%.3f"):format(v)
  return unit and (s .. " " .. unit) or s
end
local function ratio(a, b) if a and b and b ~= 0 then return a / b end end
local function rtxt(r)
  if not r then return "n/a" end
  return (r < 0.1 and "%.3f×" or "%.2f×"):format(r)
end
local function yes(c) if c == nil then return "n/a" end return c and "yes" or "**no**" end

local rows = {}
local function row(t) rows[#rows + 1] = t end

-- 1-element add: absolute and relative to PyTorch (both pinned, 1 thread, loop included)
do
  local lt, pt = get("lt", "op1_add_us"), get("pt", "op1_add_us")
  local r = ratio(lt, pt)
  row { "1-element `c = a + b`, µs/op (1 thread, pinned)", num(lt), num(pt), rtxt(r), "",
        "≤ 0.35 µs and ≤ 0.35× PyTorch", yes(lt and r and lt <= 0.35 and r <= 0.35) }
  lt, pt = get("lt", "op1_add_out_us"), get("pt", "op1_add_out_us")
  row { "1-element `torch.add(a, b, {out=c})`, µs/op", num(lt), num(pt), rtxt(ratio(lt, pt)), "", "—", "" }
  lt, pt = get("lt", "op1_loop_us"), get("pt", "op1_loop_us")
  row { "empty loop iteration, µs (included above)", num(lt), num(pt), rtxt(ratio(lt, pt)), "", "—", "" }
end

-- 16M float32 add against STREAM's float32 add with plain stores on the same thread count
for _, t in ipairs { 2, 1 } do
  local s = get("ref", ("stream_add32_t%d_gbs"):format(t))
  local lt, pt = get("lt", ("add16_new_t%d_gbs"):format(t)), get("pt", ("add16_new_t%d_gbs"):format(t))
  row { ("16M float32 `c = a + b`, new output, GB/s (%d thr)"):format(t), num(lt), num(pt), rtxt(ratio(lt, pt)),
        ("STREAM f32 add %s (%s)"):format(num(s), rtxt(ratio(lt, s))),
        t == 2 and "≥ 40 GB/s (bounded by STREAM add)" or "—", t == 2 and yes(lt and lt >= 40) or "" }
  lt, pt = get("lt", ("add16_out_t%d_gbs"):format(t)), get("pt", ("add16_out_t%d_gbs"):format(t))
  local r = ratio(lt, s)
  row { ("16M float32 `torch.add(a, b, {out=c})`, GB/s (%d thr)"):format(t), num(lt), num(pt), rtxt(ratio(lt, pt)),
        ("STREAM f32 add %s (%s)"):format(num(s), rtxt(r)),
        t == 2 and "≥ 0.85× STREAM add" or "—", t == 2 and yes(r and r >= 0.85) or "" }
end

for _, t in ipairs { 1, 2 } do
  local g = get("ref", ("gemm2048_t%d_gflops"):format(t))
  local lt, pt = get("lt", ("mm2048_t%d_gflops"):format(t)), get("pt", ("mm2048_t%d_gflops"):format(t))
  local r = ratio(lt, g)
  row { ("`torch.mm` 2048² float32, GFLOP/s (%d thr%s)"):format(t, t == 1 and ", pinned" or ""),
        num(lt), num(pt), rtxt(ratio(lt, pt)), ("cblas_sgemm %s (%s)"):format(num(g), rtxt(r)),
        "≥ 0.95× cblas_sgemm", yes(r and r >= 0.95) }
end

for _, t in ipairs { 2, 1 } do
  local c = get("ref", ("stream_copy_t%d_gbs"):format(t))
  local lt, pt = get("lt", ("sum16_t%d_gbs"):format(t)), get("pt", ("sum16_t%d_gbs"):format(t))
  local r = ratio(lt, c)
  row { ("16M float32 `x:sum()`, GB/s read (%d thr)"):format(t), num(lt), num(pt), rtxt(ratio(lt, pt)),
        ("STREAM copy %s (%s)"):format(num(c), rtxt(r)), "≥ 0.8× STREAM copy", yes(r and r >= 0.8) }
  lt, pt = get("lt", ("tcopy4096_t%d_gbs"):format(t)), get("pt", ("tcopy4096_t%d_gbs"):format(t))
  r = ratio(lt, c)
  row { ("4096² `x:t():contiguous()`, GB/s r+w (%d thr)"):format(t), num(lt), num(pt), rtxt(ratio(lt, pt)),
        ("STREAM copy %s (%s)"):format(num(c), rtxt(r)), "≥ 0.8× STREAM copy", yes(r and r >= 0.8) }
end

do
  local lt, pt, lua = get("lt", "start_ms"), get("pt", "start_ms"), get("ref", "start_ms")
  row { "process start, wall ms (`lutorch -e ''` vs `import torch`)", num(lt), num(pt), rtxt(ratio(lt, pt)),
        ("`lua5.4 -e ''` %s"):format(num(lua)), "≤ 30 ms", yes(lt and lt <= 30) }
  lt, pt, lua = get("lt", "start_rss_mib"), get("pt", "start_rss_mib"), get("ref", "start_rss_mib")
  row { "process start, peak RSS MiB", num(lt), num(pt), rtxt(ratio(lt, pt)),
        ("`lua5.4 -e ''` %s"):format(num(lua)), "≤ 15 MiB", yes(lt and lt <= 15) }
end

do
  local l1, l2 = get("lt", "overs_t1_ms"), get("lt", "overs_t2_ms")
  local p1, p2 = get("pt", "overs_t1_ms"), get("pt", "overs_t2_ms")
  row { "1M add + 256² mm loop, ms/iter, 1 thread", num(l1), num(p1), rtxt(ratio(l1, p1)), "", "—", "" }
  row { "1M add + 256² mm loop, ms/iter, 2 threads", num(l2), num(p2), rtxt(ratio(l2, p2)), "", "—", "" }
  local rl, rp = ratio(l2, l1), ratio(p2, p1)
  row { "  oversubscription: 2-thread time / 1-thread time", rtxt(rl), rtxt(rp), "", "",
        "< 1 (2 threads help)", yes(rl and rl < 1) }
end

print(("Median over %s rounds (each round: lutorch, PyTorch, reference, alternating).\n"):format(rounds))
print("| figure | lutorch | PyTorch | lutorch/PyTorch | machine reference (lutorch/ref) | target | met? |")
print("|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do print("| " .. table.concat(r, " | ") .. " |") end
