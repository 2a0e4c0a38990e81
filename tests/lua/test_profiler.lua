-- test_profiler.lua — torch.profiler: the events of a training step (ops, backward nodes,
-- record_function ranges, memory), the Chrome trace parsed back (well-formed JSON, nesting
-- per thread, self + children = total, flows from ops to their backward nodes, memory
-- counters back at their start), key_averages and its table, schedules and their
-- cycles, tensorboard_trace_handler's files, with_stack, DataLoader ranges, torch.profile,
-- and the errors of bad options.
local T = require "testing"
local nn, optim = require "nn", require "optim"
local data = require "data"
local profiler = torch.profiler

-- ---- a small JSON reader (the trace must be JSON any reader takes) ----
local function json_decode(s)
  local pos = 1
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local function err(what) error(("json: %s at byte %d"):format(what, pos), 0) end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      if c == "" then err("unterminated string") end
      if c == '"' then pos = pos + 1; break end
      if c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        local map = { n = "\n", t = "\t", r = "\r", b = "\b", f = "\f", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }
        if map[e] then out[#out + 1] = map[e]; pos = pos + 2
        elseif e == "u" then
          local hex = s:sub(pos + 2, pos + 5)
          if not hex:match("^%x%x%x%x$") then err("bad \\u escape") end
          out[#out + 1] = utf8.char(tonumber(hex, 16)); pos = pos + 6
        else err("bad escape") end
      else
        if c:byte() < 32 then err("control character in string") end
        out[#out + 1] = c; pos = pos + 1
      end
    end
    return table.concat(out)
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local o = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return o end
      while true do
        ws()
        if s:sub(pos, pos) ~= '"' then err("expected a key") end
        local k = str(); ws()
        if s:sub(pos, pos) ~= ":" then err("expected ':'") end
        pos = pos + 1
        o[k] = value(); ws()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == "}" then return o end
        if d ~= "," then err("expected ',' or '}'") end
      end
    elseif c == "[" then
      local a = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return a end
      while true do
        a[#a + 1] = value(); ws()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == "]" then return a end
        if d ~= "," then err("expected ',' or ']'") end
      end
    elseif c == '"' then return str()
    elseif s:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif s:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
    elseif s:sub(pos, pos + 3) == "null" then pos = pos + 4; return nil
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not num or num == "" then err("unexpected character '" .. c .. "'") end
      pos = pos + #num
      return tonumber(num) or err("bad number")
    end
  end
  local v = value(); ws()
  if pos <= #s then err("trailing characters") end
  return v
end

local S = T.scratch()

local function read_json(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return json_decode(s)
end

-- one training step: nn.Linear, a loss, backward, an optimizer step; every tensor it makes
-- is gone when it returns
local function train_step(model, opt)
  local x, t = torch.randn(8, 4), torch.randn(8, 3)
  opt:zero_grad()
  local loss = nn.MSELoss()(model(x), t)
  loss:backward()
  opt:step()
end

local function names_of(prof)
  local n = {}
  for _, r in ipairs(prof:key_averages().rows) do n[r.key] = r.count end
  return n
end

-- the slices of one thread, outermost first: each must lie inside the enclosing one
local function check_nesting(xs)
  table.sort(xs, function(a, b)
    if a.ts ~= b.ts then return a.ts < b.ts end
    return a.dur > b.dur
  end)
  local stack = {}
  local eps = 0.0015      -- µs: ts and dur are written to the nanosecond
  for _, e in ipairs(xs) do
    while #stack > 0 and e.ts >= stack[#stack].ts + stack[#stack].dur - eps do stack[#stack] = nil end
    local p = stack[#stack]
    if p then
      T.ok(e.ts + e.dur <= p.ts + p.dur + eps,
        ("'%s' [%g, %g] overlaps its parent '%s' [%g, %g]"):format(e.name, e.ts, e.ts + e.dur, p.name, p.ts, p.ts + p.dur))
      p.kids = (p.kids or 0) + e.dur
    end
    stack[#stack + 1] = e
  end
end

T.test("a training step: its ops, backward nodes and optimizer step, in the table", function()
  local model = nn.Linear(4, 3)
  local opt = optim.SGD(model:parameters(), 0.1)
  train_step(model, opt)
  local prof = profiler.profile({ activities = { profiler.ProfilerActivity.CPU }, record_shapes = true },
    function() train_step(model, opt) end)
  local n = names_of(prof)
  for _, name in ipairs({ "linear", "addmm", "mse_loss", "mean", "LinearBackward0", "MeanBackward0",
                          "AccumulateGrad", "mm", "_fused_sgd_" }) do
    T.ok(n[name], "the table has " .. name)
  end
  T.eq(n.AccumulateGrad, 2)    -- weight and bias
  local txt = prof:key_averages():table{ sort_by = "self_cpu_time_total", row_limit = 5 }
  T.ok(txt:find("Self CPU %", 1, true) and txt:find("# of Calls", 1, true), txt)
  T.ok(txt:find("Self CPU time total: ", 1, true), txt)
  local lines = 0
  for _ in txt:gmatch("\n") do lines = lines + 1 end
  T.eq(lines, 5 + 5)           -- 3 rules, the header, 5 rows, the total
  -- sorted: rows by self time, descending
  local rows = {}
  for l in txt:gmatch("[^\n]+") do rows[#rows + 1] = l end
  local prev = math.huge
  for i = 4, 8 do
    local v, unit = rows[i]:match("%s([%d.]+)(m?s?u?s)%s")
    local x = tonumber(v) * (unit == "ms" and 1000 or unit == "s" and 1e6 or 1)
    T.ok(x <= prev + 1e-9, "sorted by self time: " .. rows[i])
    prev = x
  end
  local by_count = prof:key_averages():table{ sort_by = "count", row_limit = 1 }
  T.ok(by_count:find("\n%s*mul%s") or by_count:find("\n%s*t%s") or by_count:find("\n%s*transpose%s"), by_count)
  -- shapes
  local g = prof:key_averages{ group_by_input_shape = true }
  local found = false
  for _, r in ipairs(g.rows) do
    if r.key == "addmm" then T.eq(r.input_shapes, "[[3], [8, 4], [4, 3]]"); found = true end
  end
  T.ok(found, "addmm grouped with its input shapes")
  T.ok(g:table():find("Input Shapes", 1, true))
end)

T.test("the Chrome trace: JSON, nesting per thread, self + children = total, flows", function()
  local model = nn.Linear(4, 3)
  local opt = optim.SGD(model:parameters(), 0.1)
  local prof = profiler.profile({ record_shapes = true }, function()
    local r <close> = profiler.record_function("train")
    train_step(model, opt)
  end)
  local path = prof:export_chrome_trace(S.path("step.json"))
  local tr = read_json(path)
  T.ok(type(tr.traceEvents) == "table" and #tr.traceEvents > 20, "traceEvents")
  local per_thread, xs, flows = {}, {}, {}
  for _, e in ipairs(tr.traceEvents) do
    T.ok(type(e.ph) == "string" and type(e.name) == "string" and e.pid, "ph, name, pid")
    if e.ph == "X" then
      T.ok(type(e.ts) == "number" and type(e.dur) == "number" and e.dur >= 0 and e.tid, "X: ts, dur, tid")
      local k = e.pid .. ":" .. e.tid
      per_thread[k] = per_thread[k] or {}
      table.insert(per_thread[k], e)
      xs[#xs + 1] = e
    elseif e.ph == "s" or e.ph == "f" then
      flows[e.id] = flows[e.id] or {}
      flows[e.id][e.ph] = e
    end
  end
  local total_top, total_self = 0, 0
  for _, list in pairs(per_thread) do
    check_nesting(list)
  end
  for _, e in ipairs(xs) do
    local self = e.dur - (e.kids or 0)
    T.ok(self >= -0.01, ("self time of %s is %g"):format(e.name, self))
    total_self = total_self + self
  end
  -- the top-level range holds everything: its total is the sum of every self time
  local top
  for _, e in ipairs(xs) do if e.name == "train" then top = e end end
  T.ok(top, "the record_function range is in the trace")
  total_top = top.dur
  T.ok(math.abs(total_top - total_self) <= 0.01 * total_top, ("total %g, sum of self times %g"):format(total_top, total_self))
  -- the events' own self times agree (per event: total = self + children within 1%)
  for _, e in ipairs(prof:events()) do
    if e.kind == "op" or e.kind == "backward" or e.kind == "user_annotation" then
      local kids = 0
      for _, c in ipairs(e.children) do kids = kids + c.dur end
      T.ok(math.abs(e.dur - (e.self_dur + kids)) <= 0.01 * e.dur + 1e-6, e.name)
    end
  end
  -- flows: every start has its end, the start inside a forward op and the end inside a node
  local nflows = 0
  local function inside(ts, tid, cat)
    for _, e in ipairs(xs) do
      if e.tid == tid and e.ts <= ts + 1e-6 and ts <= e.ts + e.dur + 1e-6 and (not cat or e.cat == cat) then return e end
    end
  end
  for id, f in pairs(flows) do
    T.ok(f.s and f.f, "flow " .. id .. " has both ends")
    T.eq(f.f.bp, "e")
    T.ok(inside(f.s.ts, f.s.tid, "cpu_op"), "flow start in an op")
    nflows = nflows + 1
  end
  T.ok(nflows >= 3, "flows from forward ops to backward nodes: " .. nflows)
  local linked = {}
  for _, e in ipairs(prof:events()) do
    if e.kind == "backward" and e.forward then linked[e.name] = e.forward.name end
  end
  T.eq(linked.MeanBackward0, "mean")
  T.eq(linked.LinearBackward0, "_linear")
end)

T.test("profile_memory: allocations and frees, memory counters back at the start", function()
  collectgarbage(); collectgarbage()
  local model = nn.Linear(4, 3)
  local opt = optim.SGD(model:parameters(), 0.1)
  train_step(model, opt)     -- the gradients exist before: the step frees and remakes them
  collectgarbage(); collectgarbage()
  local prof = profiler.profile({ profile_memory = true }, function()
    train_step(model, opt)
    collectgarbage(); collectgarbage()
  end)
  local allocs, frees, last = 0, 0, nil
  for _, e in ipairs(prof:events()) do
    if e.kind == "memory" then
      if e.bytes > 0 then allocs = allocs + 1 else frees = frees + 1 end
      T.eq(e.device_type, "cpu")
      last = e
    end
  end
  T.ok(allocs > 10 and frees > 10, ("allocations %d, frees %d"):format(allocs, frees))
  T.eq(last.total, 0)
  -- the trace's counter track ends where it started
  local tr = read_json(prof:export_chrome_trace(S.path("mem.json")))
  local counters = {}
  for _, e in ipairs(tr.traceEvents) do
    if e.ph == "C" then counters[#counters + 1] = e end
  end
  table.sort(counters, function(a, b) return a.ts < b.ts end)
  T.ok(#counters == allocs + frees, "one counter sample per allocation or free")
  T.eq(counters[#counters].args["Total Allocated"], 0)
  T.eq(counters[#counters].name, "Memory cpu:0")
  -- memory columns in the table; addmm's result is attributed to it
  local txt = prof:key_averages():table{ sort_by = "self_cpu_memory_usage" }
  T.ok(txt:find("Self CPU Mem", 1, true), txt)
  for _, r in ipairs(prof:key_averages().rows) do
    if r.key == "addmm" then T.eq(r.self_cpu_memory_usage, 8 * 3 * 4) end
  end
end)

T.test("schedule: wait, warmup, active, repeat, skip_first", function()
  local A = profiler.ProfilerAction
  local s = profiler.schedule{ wait = 1, warmup = 1, active = 2, ["repeat"] = 1, skip_first = 1 }
  local want = { A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE }
  for i, w in ipairs(want) do T.eq(s(i - 1), w, "step " .. (i - 1)) end
  local s2 = profiler.schedule{ 0, 0, 1 }       -- positional, repeat forever
  for i = 0, 4 do T.eq(s2(i), A.RECORD_AND_SAVE) end
  -- a profiler driven by it: two cycles of two active steps each; warmup's events are dropped
  local cycles = {}
  local x = torch.ones(2)
  do
    local prof <close> = profiler.profile{
      schedule = profiler.schedule{ wait = 1, warmup = 1, active = 2, repeats = 2 },
      on_trace_ready = function(p)
        local steps, adds = {}, 0
        for _, e in ipairs(p:events()) do
          if e.name:match("^ProfilerStep#") then steps[#steps + 1] = e.name end
          if e.name == "add" then adds = adds + 1 end
        end
        table.sort(steps)
        cycles[#cycles + 1] = { steps = table.concat(steps, ","), adds = adds }
      end }
    for _ = 1, 10 do
      local _ = x + 1
      prof:step()
    end
  end
  T.eq(#cycles, 2)
  T.eq(cycles[1].steps, "ProfilerStep#2,ProfilerStep#3")
  T.eq(cycles[2].steps, "ProfilerStep#6,ProfilerStep#7")
  T.eq(cycles[1].adds, 2)
  T.eq(cycles[2].adds, 2)
  -- closing in the middle of an active cycle saves what it has
  local saved = 0
  do
    local prof <close> = profiler.profile{ schedule = profiler.schedule{ active = 3 },
      on_trace_ready = function() saved = saved + 1 end }
    prof:step()
  end
  T.eq(saved, 1)
end)

T.test("tensorboard_trace_handler writes <dir>/<worker>.<ms>.pt.trace.json", function()
  local dir = S.path("tb/run1")
  local prof = profiler.profile({ on_trace_ready = profiler.tensorboard_trace_handler(dir, "w0") },
    function() local _ = torch.ones(3) * 2 end)
  T.ok(prof.trace_path:match("/tb/run1/w0%.%d+%.pt%.trace%.json$"), prof.trace_path)
  local tr = read_json(prof.trace_path)
  local found = false
  for _, e in ipairs(tr.traceEvents) do if e.name == "mul" then found = true end end
  T.ok(found, "the handler's file has the op")
  -- default worker name: host_pid; two cycles give two files
  local paths = {}
  do
    local p <close> = profiler.profile{ schedule = profiler.schedule{ active = 1 },
      on_trace_ready = function(pp)
        profiler.tensorboard_trace_handler(S.path("tb2"))(pp)
        paths[#paths + 1] = pp.trace_path
      end }
    for _ = 1, 2 do local _ = torch.ones(1) + 1; p:step() end
  end
  T.ok(#paths >= 2 and paths[1] ~= paths[2], "one file per cycle")
  T.ok(paths[1]:match("/tb2/[^/]+_%d+%.%d+%.pt%.trace%.json$"), paths[1])
end)

T.test("record_function: a <close> guard and a function form, ops nested inside", function()
  local prof = profiler.profile({}, function()
    do
      local r <close> = profiler.record_function("outer")
      local _ = torch.ones(2) + 1
      local a, b = profiler.record_function("inner", function(u, v) return u + v, "two" end, torch.ones(1), 1)
      T.eq(b, "two")
      T.tensor(a, { 2 })
    end
    T.raises(function() profiler.record_function("failing", function() error("boom") end) end, "boom")
  end)
  local by = {}
  for _, e in ipairs(prof:events()) do by[e.name] = by[e.name] or e end
  T.eq(by.outer.kind, "user_annotation")
  T.eq(by.inner.cpu_parent, by.outer)
  T.ok(by.failing and by.failing.t1 >= by.failing.t0, "a range closes when its function fails")
  local add_parent = {}
  for _, e in ipairs(prof:events()) do if e.name == "add" then add_parent[#add_parent + 1] = e.cpu_parent.name end end
  table.sort(add_parent)
  T.eq(table.concat(add_parent, ","), "inner,outer")
  -- with no profiler running: nothing recorded, fn still runs
  T.eq(profiler.record_function("x", function() return 7 end), 7)
  local g <close> = profiler.record_function("idle")
end)

T.test("with_stack: each op has the Lua frames that called it", function()
  local function make() return torch.zeros(2) end
  local prof = profiler.profile({ with_stack = true }, function() make() end)
  local st
  for _, e in ipairs(prof:events()) do if e.name == "zeros" then st = e.stack end end
  T.ok(st and #st >= 2, "frames")
  T.ok(st[1]:match("test_profiler%.lua:%d+ make$"), st[1])
  local tr = read_json(prof:export_chrome_trace(S.path("stack.json")))
  for _, e in ipairs(tr.traceEvents) do
    if e.name == "zeros" then T.ok(e.args["Call stack"]:find("test_profiler.lua", 1, true)) end
  end
end)

T.test("DataLoader: the main process's fetches and the workers' as ranges", function()
  local ds = data.TensorDataset(torch.arange(16):float())
  local prof = profiler.profile({}, function()
    for _ in data.DataLoader(ds, { batch_size = 4 }) do end
    for _ in data.DataLoader(ds, { batch_size = 4, num_workers = 2 }) do end
  end)
  local main, worker, pids = 0, 0, {}
  for _, e in ipairs(prof:events()) do
    if e.name:match("^enumerate%(DataLoader%)") then main = main + 1 end
    if e.name == "DataLoader worker fetch" then worker = worker + 1; pids[e.pid] = true end
  end
  T.ok(main >= 8, "a range per batch in the main process: " .. main)
  T.eq(worker, 4)
  local n = 0
  for p in pairs(pids) do n = n + 1; T.ok(p ~= torch._profiler.getpid()) end
  T.ok(n >= 1, "the workers' ranges carry their pids")
end)

T.test("torch.profile(fn) still counts op calls", function()
  local r = torch.profile(function()
    local a = torch.ones(3)
    local _ = (a + 1) * 2
  end)
  T.eq(r.add.calls, 1)
  T.eq(r.mul.calls, 1)
  T.ok(r.add.seconds >= 0)
  T.raises(function() torch.profile(function() error("inner failure") end) end, "inner failure")
  T.raises(function() torch.profile(1) end, "profile", "fn")
end)

T.test("bad options are errors naming the function and the argument", function()
  T.raises(function() profiler.profile{ record_shape = true } end, "profiler.profile", "record_shape")
  T.raises(function() profiler.profile{ activities = { "TPU" } } end, "profiler.profile", "activities", "TPU")
  T.raises(function() profiler.profile{ schedule = 3 } end, "profiler.profile", "schedule")
  T.raises(function() profiler.profile({}, 3) end, "profiler.profile", "fn")
  T.raises(function() profiler.profile{ with_flops = true } end, "profiler.profile", "with_flops", "not supported")
  T.raises(function() profiler.schedule{ wait = 1 } end, "profiler.schedule", "active")
  T.raises(function() profiler.schedule{ active = -1 } end, "profiler.schedule", "active")
  T.raises(function() profiler.schedule{ active = 1, wiat = 1 } end, "profiler.schedule", "wiat")
  T.raises(function() profiler.record_function(3) end, "record_function", "name")
  T.raises(function() profiler.tensorboard_trace_handler() end, "tensorboard_trace_handler", "dir_name")
  local prof = profiler.profile({}, function() local _ = torch.ones(1) + 1 end)
  T.raises(function() prof:key_averages():table{ sort_by = "speed" } end, "table", "sort_by", "speed")
  T.raises(function() prof:key_averages{ group_by_input_shape = true } end, "key_averages", "record_shapes")
  T.raises(function() prof:export_chrome_trace(S.path("no/such/dir/x.json")) end, "export_chrome_trace")
  -- one at a time
  profiler.profile({}, function()
    T.raises(function() profiler.profile{} end, "already running")
    T.raises(function() torch.profile(function() end) end, "already running")
  end)
  local running = profiler.profile{}
  T.raises(function() running:key_averages() end, "key_averages", "no results yet")
  running:stop()
  T.ok(#running:events() >= 0)
  -- off again: ops after stop are not recorded
  local before = #running:events()
  local _ = torch.ones(1) + 1
  T.eq(#running:events(), before)
end)

T.test("help: ? torch.profiler.profile reads man/profiler.md", function()
  local h = torch.help("torch.profiler.profile")
  T.ok(h:find("torch.profiler.profile(opts[, fn])", 1, true), h)
  T.ok(torch.help(torch.profiler.schedule):find("warmup", 1, true))
  T.ok(torch.help("torch.profiler.tensorboard_trace_handler"):find("pt.trace.json", 1, true))
end)

S.remove()
T.done()
