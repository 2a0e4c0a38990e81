-- profiler.lua — torch.profiler (PyTorch's API) and torch.profile(fn), over the
-- primitives of src/vm/lprofiler.c (torch._profiler): sessions, schedules and
-- their steps, record_function ranges, the events of a finished cycle with
-- their self times and flows, key_averages and its table, the Chrome trace
-- (Trace Event Format) and tensorboard_trace_handler's output directories.
local torch = ...
local P = torch._profiler

local profiler = {}
torch.profiler = profiler

profiler.ProfilerActivity = { CPU = "CPU", CUDA = "CUDA" }
local Action = { NONE = "NONE", WARMUP = "WARMUP", RECORD = "RECORD", RECORD_AND_SAVE = "RECORD_AND_SAVE" }
profiler.ProfilerAction = Action

local function argerr(fn, msg, level) error(("%s: %s"):format(fn, msg), level or 3) end

local function count_arg(fn, t, name, default)
  local v = t[name]
  if v == nil then return default end
  if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
    argerr(fn, ("argument '%s' must be an integer, got %s"):format(name, type(v)), 4)
  end
  v = math.tointeger(v)
  if v < 0 then argerr(fn, ("argument '%s' must be >= 0, got %d"):format(name, v), 4) end
  return v
end

-- schedule{wait=, warmup=, active=, ["repeat"]=, skip_first=} (or positionally in that
-- order): a function(step) -> ProfilerAction, as PyTorch's. `repeat` is a Lua keyword:
-- write ["repeat"] = n, or repeats = n.
function profiler.schedule(opts)
  local fn = "profiler.schedule"
  if type(opts) ~= "table" then argerr(fn, "expected a table {wait=, warmup=, active=, repeat=, skip_first=}") end
  local o = {}
  local order = { "wait", "warmup", "active", "repeat", "skip_first" }
  for k, v in pairs(opts) do
    if math.type(k) == "integer" and order[k] then o[order[k]] = v
    elseif k == "repeats" then o["repeat"] = v
    elseif type(k) == "string" then o[k] = v
    else argerr(fn, "unexpected positional argument " .. tostring(k)) end
  end
  torch._check_options(fn, o, { "wait", "warmup", "active", "repeat", "skip_first" })
  local wait, warmup = count_arg(fn, o, "wait", 0), count_arg(fn, o, "warmup", 0)
  local active, rep = count_arg(fn, o, "active", 0), count_arg(fn, o, "repeat", 0)
  local skip = count_arg(fn, o, "skip_first", 0)
  if active < 1 then argerr(fn, "argument 'active' must be >= 1 (a schedule records at least one step)") end
  local cycle = wait + warmup + active
  return function(step)
    if step < skip then return Action.NONE end
    step = step - skip
    if rep > 0 and step // cycle >= rep then return Action.NONE end
    local m = step % cycle
    if m < wait then return Action.NONE
    elseif m < wait + warmup then return Action.WARMUP
    elseif m < cycle - 1 then return Action.RECORD
    else return Action.RECORD_AND_SAVE end
  end
end

local function always_record() return Action.RECORD end

-- ---- the events of one cycle ------------------------------------------------------

local timed = { op = true, backward = true, user_annotation = true }

-- raw events of torch._profiler.collect -> sorted events with ts/dur in µs from t_base,
-- self times, total memory, children and the forward op of each backward node
local function finish(raw, t_base)
  table.sort(raw, function(a, b)
    if a.t0 ~= b.t0 then return a.t0 < b.t0 end
    return a.id < b.id
  end)
  local by_id = {}
  for _, e in ipairs(raw) do
    by_id[e.id] = e
    e.ts = (e.t0 - t_base) / 1000
    e.dur = (e.t1 - e.t0) / 1000
    e.children = {}
    e.child_ns = 0
    if e.input_shapes then e.shapes_key = e.input_shapes end
  end
  for _, e in ipairs(raw) do
    local p = e.parent >= 0 and by_id[e.parent]
    if p and timed[e.kind] then
      p.children[#p.children + 1] = e
      p.child_ns = p.child_ns + (e.t1 - e.t0)
    end
  end
  for _, e in ipairs(raw) do
    if timed[e.kind] then
      e.self_dur = ((e.t1 - e.t0) - e.child_ns) / 1000
      e.cpu_parent = e.parent >= 0 and by_id[e.parent] or nil
    end
  end
  -- the op that launched each kernel or copy: the innermost op open on the launching thread
  -- when it was queued (the latest-started op holding that time)
  local ops_of = {}
  for _, e in ipairs(raw) do
    if e.kind == "op" then
      local l = ops_of[e.tid] or {}
      ops_of[e.tid] = l
      l[#l + 1] = e
    end
  end
  for _, e in ipairs(raw) do
    if e.launch_ns then
      local l = ops_of[e.launch_tid] or {}
      local lo, hi = 1, #l        -- the last op started at or before the launch
      while lo <= hi do
        local mid = (lo + hi) // 2
        if l[mid].t0 <= e.launch_ns then lo = mid + 1 else hi = mid - 1 end
      end
      for i = hi, 1, -1 do
        if l[i].t1 >= e.launch_ns then
          e.launcher = l[i]
          l[i].cuda_time = (l[i].cuda_time or 0) + e.dur
          break
        end
      end
    end
  end
  -- totals of memory and device time: an event's own and its descendants' (children come
  -- later in t0 order, so a backward walk sees them first)
  for i = #raw, 1, -1 do
    local e = raw[i]
    if timed[e.kind] then
      local m, c = e.self_mem or 0, e.cuda_time or 0
      for _, k in ipairs(e.children) do
        m = m + (k.total_mem or 0)
        c = c + (k.total_cuda or 0)
      end
      e.total_mem, e.total_cuda = m, c
    end
  end
  -- which op made each backward node: the innermost op whose seq range holds the node's seq
  local maker = {}
  for _, e in ipairs(raw) do
    if e.kind == "op" and e.seq1 > e.seq0 then
      for s = e.seq0, e.seq1 - 1 do
        local m = maker[s]
        if not m or e.depth > m.depth then maker[s] = e end
      end
    end
  end
  for _, e in ipairs(raw) do
    if e.kind == "backward" then
      local m = maker[e.seq]
      if m then e.forward = m; m.backward = m.backward or e end
    end
  end
  return raw
end

-- ---- the profile object -------------------------------------------------------------

local Profile = {}
Profile.__index = Profile
Profile.__name = "torch.profiler.profile"

local PROFILE_OPTIONS = { "activities", "schedule", "on_trace_ready", "record_shapes", "profile_memory",
  "with_stack", "with_flops", "with_modules", "experimental_config", "use_cuda" }

local function recording_action(a) return a == Action.RECORD or a == Action.RECORD_AND_SAVE end

function Profile:_session_start()
  if self._running then return end
  self._t_start = P.start{ record_shapes = self.record_shapes, profile_memory = self.profile_memory,
    with_stack = self.with_stack }
  self._running = true
  if self._cuda_on then self._cuda_on(self) end
end

function Profile:_session_stop()
  if not self._running then return end
  if self._step_open then P.range_pop(); self._step_open = false end
  if self._cuda_off then self._cuda_off(self) end
  P.stop()
  self._running = false
end

-- the events recorded so far become this cycle's results; on_trace_ready sees them
function Profile:_save()
  if self._step_open then P.range_pop(); self._step_open = false end
  local raw = P.collect()
  if self._cuda_collect then self._cuda_collect(self, raw) end
  for _, e in ipairs(raw) do
    if e.kind == "kernel" or e.kind == "memcpy" then self._has_cuda_events = true; break end
  end
  local evs = finish(raw, self._t_start)
  if not self.cpu then
    -- CUDA alone: the host's events were needed to find each kernel's launcher, no more
    local kept = {}
    for _, e in ipairs(evs) do
      if e.gpu then e.launcher = nil; kept[#kept + 1] = e end
    end
    evs = kept
  end
  self._events = evs
  self._saved = true
  if self.on_trace_ready then self.on_trace_ready(self) end
end

-- ProfilerStep#N ranges, one per step, when a schedule was given (as PyTorch's)
function Profile:_open_step()
  if self._running and self._record_steps and not self._step_open then
    P.range_push("ProfilerStep#" .. self.step_num)
    self._step_open = true
  end
end

function Profile:_enter(action)
  if action == Action.NONE then return end
  self:_session_start()
  if action == Action.WARMUP then self._warming = true end
  self:_open_step()
end

-- from the action of the step that ended to the action of the one starting
function Profile:_transition(prev, cur)
  if prev == Action.RECORD_AND_SAVE or (prev == Action.RECORD and not recording_action(cur)) then
    self:_save()
  end
  if cur == Action.NONE then
    self:_session_stop()
    P.clear()
    return
  end
  self:_session_start()
  if recording_action(cur) and prev == Action.WARMUP then
    if self._step_open then P.range_pop(); self._step_open = false end
    P.clear()                  -- warmup's events are not kept
  end
  self:_open_step()
end

-- PyTorch's __enter__: starts recording (or the schedule's first step)
function Profile:start()
  if self._started then error("profiler.profile: already started", 2) end
  if P.recording() then error("profiler.profile: a profiler is already running", 2) end
  self._started = true
  self.step_num = 0
  self.current_action = self.schedule(0)
  self:_enter(self.current_action)
  return self
end

-- the end of a step (a training iteration): the schedule moves on
function Profile:step()
  if not self._started or self._stopped then error("profiler.profile: step() on a profiler that is not running", 2) end
  if self._step_open then P.range_pop(); self._step_open = false end
  local prev = self.current_action
  self.step_num = self.step_num + 1
  self.current_action = self.schedule(self.step_num)
  self:_transition(prev, self.current_action)
end

-- PyTorch's __exit__: a cycle still recording is saved (and handed to on_trace_ready)
function Profile:stop()
  if not self._started or self._stopped then return end
  self._stopped = true
  if recording_action(self.current_action) then self:_save() end
  self:_session_stop()
  P.clear()
end
Profile.__close = function(self) self:stop() end

function Profile:__tostring()
  return ("torch.profiler.profile(%s, %d events)"):format(self._stopped and "stopped" or "running",
    self._events and #self._events or 0)
end

local function check_saved(self, fn)
  if not self._events then
    error(("profile:%s: no results yet (the profiler has not finished a recording cycle)"):format(fn), 3)
  end
end

-- the events of the last cycle: {name, kind ("op", "backward", "user_annotation", "memory",
-- "external", "kernel", "memcpy"), ts, dur, self_dur (µs), tid, pid, id, parent,
-- input_shapes, input_dtypes (strings, with record_shapes), stack (a list, with_stack),
-- self_mem, total_mem, bytes/total (memory events), forward/backward (the op <-> node)}
function Profile:events()
  check_saved(self, "events")
  return self._events
end

-- ---- key_averages and its table --------------------------------------------------

local Averages = {}
Averages.__index = Averages
Averages.__name = "torch.profiler.EventList"

function Profile:key_averages(opts)
  check_saved(self, "key_averages")
  opts = opts or {}
  if type(opts) ~= "table" then error("profile:key_averages: expected a table {group_by_input_shape=}", 2) end
  torch._check_options("profile:key_averages", opts, { "group_by_input_shape", "group_by_stack_n" })
  local by_shape = opts.group_by_input_shape
  if by_shape and not self.record_shapes then
    error("profile:key_averages: group_by_input_shape needs the profiler made with record_shapes = true", 2)
  end
  local stack_n = opts.group_by_stack_n or 0
  local groups, order = {}, {}
  for _, e in ipairs(self._events) do
    if timed[e.kind] or e.kind == "kernel" or e.kind == "memcpy" then
      local key = e.name
      local shapes = by_shape and (e.input_shapes or "[]") or nil
      if shapes then key = key .. "\0" .. shapes end
      local stack
      if stack_n > 0 and e.stack then
        local fr = {}
        for i = 1, math.min(stack_n, #e.stack) do fr[i] = e.stack[i] end
        stack = fr
        key = key .. "\0" .. table.concat(fr, "\n")
      end
      local g = groups[key]
      if not g then
        g = { key = e.name, count = 0, cpu_time_total = 0, self_cpu_time_total = 0, cpu_memory_usage = 0,
              self_cpu_memory_usage = 0, cuda_time_total = 0, self_cuda_time_total = 0,
              input_shapes = shapes, stack = stack, kind = e.kind }
        groups[key] = g
        order[#order + 1] = g
      end
      g.count = g.count + 1
      if timed[e.kind] then
        g.cpu_time_total = g.cpu_time_total + e.dur
        g.self_cpu_time_total = g.self_cpu_time_total + e.self_dur
        g.cpu_memory_usage = g.cpu_memory_usage + (e.total_mem or 0)
        g.self_cpu_memory_usage = g.self_cpu_memory_usage + (e.self_mem or 0)
        g.cuda_time_total = g.cuda_time_total + (e.total_cuda or 0)
        g.self_cuda_time_total = g.self_cuda_time_total + (e.cuda_time or 0)
      else   -- device work: its time is device time
        g.cuda_time_total = g.cuda_time_total + e.dur
        g.self_cuda_time_total = g.self_cuda_time_total + e.dur
      end
    end
  end
  for _, g in ipairs(order) do
    g.cpu_time = g.cpu_time_total / g.count
    g.self_cpu_time = g.self_cpu_time_total / g.count
    g.cuda_time = g.cuda_time_total / g.count
  end
  return setmetatable({ rows = order, memory = self.profile_memory, by_shape = by_shape,
    cuda = self._has_cuda_events }, Averages)
end

function Averages:__len() return #self.rows end
function Averages:__index(k)
  if math.type(k) == "integer" then return rawget(self, "rows")[k] end
  return Averages[k]
end
function Averages:__pairs() return ipairs(self.rows) end

local function fmt_time(us)
  if math.abs(us) >= 1e6 then return ("%.3fs"):format(us / 1e6) end
  if math.abs(us) >= 1e3 then return ("%.3fms"):format(us / 1e3) end
  return ("%.3fus"):format(us)
end
local function fmt_mem(b)
  local KB, MB, GB = 1024, 1024 * 1024, 1024 * 1024 * 1024
  if math.abs(b) >= GB then return ("%.2f Gb"):format(b / GB) end
  if math.abs(b) >= MB then return ("%.2f Mb"):format(b / MB) end
  if math.abs(b) >= KB then return ("%.2f Kb"):format(b / KB) end
  return ("%d b"):format(math.tointeger(b) or b)
end
local function pct(x, total) return ("%.2f%%"):format(total > 0 and 100 * x / total or 0) end

local SORT_KEYS = { self_cpu_time_total = true, cpu_time_total = true, count = true, self_cpu_memory_usage = true,
  cpu_memory_usage = true, cpu_time = true, self_cpu_time = true, cuda_time_total = true, self_cuda_time_total = true,
  cuda_time = true }

-- :table{sort_by=, row_limit=, max_name_column_width=}: PyTorch's text table
function Averages:table(opts)
  opts = opts or {}
  torch._check_options("key_averages:table", opts, { "sort_by", "row_limit", "max_name_column_width", "header",
    "top_level_events_only" })
  local sort_by = opts.sort_by
  if sort_by ~= nil and not SORT_KEYS[sort_by] then
    local names = {}
    for k in pairs(SORT_KEYS) do names[#names + 1] = k end
    table.sort(names)
    error(("key_averages:table: argument 'sort_by' must be one of %s (got '%s')"):format(
      table.concat(names, ", "), tostring(sort_by)), 2)
  end
  local limit = opts.row_limit or 100
  if math.type(limit) ~= "integer" then error("key_averages:table: argument 'row_limit' must be an integer", 2) end
  local rows = {}
  for i, r in ipairs(self.rows) do rows[i] = r end
  if sort_by then
    table.sort(rows, function(a, b)
      if a[sort_by] ~= b[sort_by] then return a[sort_by] > b[sort_by] end
      return a.key < b.key
    end)
  end
  local self_total, cuda_total = 0, 0
  for _, r in ipairs(self.rows) do
    if r.kind ~= "kernel" and r.kind ~= "memcpy" then self_total = self_total + r.self_cpu_time_total end
    cuda_total = cuda_total + (r.kind ~= "op" and r.kind ~= "backward" and r.kind ~= "user_annotation"
      and r.self_cuda_time_total or 0)
  end
  local maxw = opts.max_name_column_width or 55
  local namew = 4
  local shown = {}
  for i, r in ipairs(rows) do
    if limit >= 0 and i > limit then break end
    shown[#shown + 1] = r
    namew = math.max(namew, math.min(#r.key, maxw))
  end
  local cols = { { "Name", namew } }
  local function col(h) cols[#cols + 1] = { h, math.max(12, #h) } end
  for _, h in ipairs({ "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg" }) do col(h) end
  if self.cuda then for _, h in ipairs({ "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg" }) do col(h) end end
  if self.memory then col("CPU Mem"); col("Self CPU Mem") end
  col("# of Calls")
  local shapew = 12
  if self.by_shape then
    for _, r in ipairs(shown) do shapew = math.max(shapew, math.min(#r.input_shapes, 80)) end
    cols[#cols + 1] = { "Input Shapes", shapew, left = true }
  end
  local out = {}
  local function line(cells)
    local parts = {}
    for i, c in ipairs(cols) do
      local s = cells[i]
      if #s > c[2] then s = s:sub(1, c[2] - 3) .. "..." end
      parts[i] = c.left and (s .. (" "):rep(c[2] - #s)) or ((" "):rep(c[2] - #s) .. s)
    end
    out[#out + 1] = table.concat(parts, "  ") .. "  "
  end
  local sep = {}
  for i, c in ipairs(cols) do sep[i] = ("-"):rep(c[2]) end
  local sepline = table.concat(sep, "  ") .. "  "
  local heads = {}
  for i, c in ipairs(cols) do heads[i] = c[1] end
  if opts.header then out[#out + 1] = ("="):rep(#sepline); out[#out + 1] = opts.header; out[#out + 1] = ("="):rep(#sepline) end
  out[#out + 1] = sepline
  line(heads)
  out[#out + 1] = sepline
  for _, r in ipairs(shown) do
    local cells = { r.key, pct(r.self_cpu_time_total, self_total), fmt_time(r.self_cpu_time_total),
      pct(r.cpu_time_total, self_total), fmt_time(r.cpu_time_total), fmt_time(r.cpu_time) }
    if self.cuda then
      cells[#cells + 1] = fmt_time(r.self_cuda_time_total)
      cells[#cells + 1] = pct(r.self_cuda_time_total, cuda_total)
      cells[#cells + 1] = fmt_time(r.cuda_time_total)
      cells[#cells + 1] = fmt_time(r.cuda_time)
    end
    if self.memory then
      cells[#cells + 1] = fmt_mem(r.cpu_memory_usage)
      cells[#cells + 1] = fmt_mem(r.self_cpu_memory_usage)
    end
    cells[#cells + 1] = tostring(r.count)
    if self.by_shape then cells[#cells + 1] = r.input_shapes end
    line(cells)
  end
  out[#out + 1] = sepline
  out[#out + 1] = "Self CPU time total: " .. fmt_time(self_total)
  if self.cuda then out[#out + 1] = "Self CUDA time total: " .. fmt_time(cuda_total) end
  return table.concat(out, "\n") .. "\n"
end
Averages.__tostring = function(self) return self:table() end

-- ---- the Chrome trace ----------------------------------------------------------------

local function json_string(s)
  return '"' .. tostring(s):gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' elseif c == "\\" then return "\\\\"
    elseif c == "\n" then return "\\n" elseif c == "\t" then return "\\t" end
    return ("\\u%04x"):format(c:byte())
  end) .. '"'
end

local function json_value(v)
  local t = type(v)
  if t == "string" then return json_string(v)
  elseif t == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    local short = ("%.15g"):format(v)      -- the shortest text that reads back the same
    return tonumber(short) == v and short or ("%.17g"):format(v)
  elseif t == "boolean" then return tostring(v)
  elseif t == "table" then
    if v[1] ~= nil or next(v) == nil then
      local parts = {}
      for i, x in ipairs(v) do parts[i] = json_value(x) end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = json_string(k) .. ": " .. json_value(v[k]) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return "null"
end
profiler._json = json_value

-- "[[2, 3], []]" -> {{2, 3}, {}}
local function parse_shapes(s)
  local r = {}
  for inner in s:sub(2, -2):gmatch("%[([^%]]*)%]") do
    local dims = {}
    for d in inner:gmatch("%-?%d+") do dims[#dims + 1] = math.tointeger(d) end
    r[#r + 1] = dims
  end
  return r
end
local function parse_list(s)
  local r = {}
  for x in s:sub(2, -2):gmatch("[^,%s]+") do r[#r + 1] = x end
  return r
end
profiler._parse_shapes = parse_shapes

local CATEGORY = { op = "cpu_op", backward = "cpu_op", user_annotation = "user_annotation",
  external = "dataloader", kernel = "kernel", memcpy = "gpu_memcpy" }

local function us(x) return tonumber(("%.3f"):format(x)) end

-- the trace as a Lua table (what export_chrome_trace writes)
function Profile:_trace()
  local evs = {}
  local pid = P.getpid()
  local tids, pids = {}, { [pid] = true }
  local flow = 0
  for _, e in ipairs(self._events) do
    pids[e.pid] = true
    tids[e.pid .. ":" .. e.tid] = { e.pid, e.tid, e.gpu }
    if e.kind == "memory" then
      evs[#evs + 1] = { ph = "i", s = "t", cat = "cpu_instant_event", name = "[memory]", pid = e.pid, tid = e.tid,
        ts = us(e.ts), args = { ["Addr"] = e.addr, ["Bytes"] = e.bytes, ["Total Allocated"] = e.total,
          ["Device Type"] = e.device_type, ["Device Id"] = e.device_index } }
      evs[#evs + 1] = { ph = "C", name = ("Memory %s:%d"):format(e.device_type, e.device_index), pid = e.pid,
        ts = us(e.ts), args = { ["Total Allocated"] = e.total } }
    else
      local args = { ["External id"] = e.id }
      if e.input_shapes then
        args["Input Dims"] = parse_shapes(e.input_shapes)
        args["Input type"] = parse_list(e.input_dtypes)
      end
      if e.stack then args["Call stack"] = table.concat(e.stack, ";\n") end
      if e.kind == "backward" then args["Sequence number"] = e.seq end
      if e.kind == "op" and e.backward then args["Sequence number"] = e.backward.seq end
      if e.device then args.device = e.device; args.stream = e.stream end
      if e.bytes and e.kind == "memcpy" then args.bytes = e.bytes end
      evs[#evs + 1] = { ph = "X", cat = CATEGORY[e.kind] or e.kind, name = e.name, pid = e.pid, tid = e.tid,
        ts = us(e.ts), dur = us(e.dur), args = args }
      -- flows: from a forward op to its backward node (fwdbwd), from an op to the kernel or
      -- copy it launched (ac2g); the start binds to the source's slice, the end ("bp": "e")
      -- to this one's
      local from, cat = e.forward, "fwdbwd"
      if e.launcher then from, cat = e.launcher, "ac2g" end
      if from and (e.kind == "backward" or cat == "ac2g") then
        flow = flow + 1
        evs[#evs + 1] = { ph = "s", id = flow, cat = cat, name = cat, pid = from.pid, tid = from.tid, ts = us(from.ts) }
        evs[#evs + 1] = { ph = "f", bp = "e", id = flow, cat = cat, name = cat, pid = e.pid, tid = e.tid, ts = us(e.ts) }
      end
    end
  end
  local gpu = {}
  for _, e in ipairs(self._events) do if e.gpu then gpu[e.pid] = true end end
  for p in pairs(pids) do
    local name = gpu[p] and ("CUDA device " .. p) or p == pid and "lutorch" or ("lutorch worker " .. p)
    evs[#evs + 1] = { ph = "M", name = "process_name", pid = p, tid = 0, args = { name = name } }
  end
  for _, pt in pairs(tids) do
    evs[#evs + 1] = { ph = "M", name = "thread_name", pid = pt[1], tid = pt[2],
      args = { name = (pt[3] and "stream " or "thread ") .. pt[2] } }
  end
  return { schemaVersion = 1, displayTimeUnit = "ms", traceEvents = evs,
    otherData = { profiler = "lutorch", version = torch.__version__ } }
end

-- write the trace in the Trace Event Format (chrome://tracing, ui.perfetto.dev)
function Profile:export_chrome_trace(path)
  check_saved(self, "export_chrome_trace")
  if type(path) ~= "string" then error("profile:export_chrome_trace: argument 'path' must be a string", 2) end
  local t = self:_trace()
  local f, err = io.open(path, "w")
  if not f then error("profile:export_chrome_trace: " .. tostring(err), 2) end
  -- one event a line: readable, and cheap to write
  f:write('{"schemaVersion": 1, "displayTimeUnit": "ms", "otherData": ', json_value(t.otherData), ',\n"traceEvents": [\n')
  for i, e in ipairs(t.traceEvents) do
    f:write(json_value(e), i < #t.traceEvents and ",\n" or "\n")
  end
  f:write("]}\n")
  f:close()
  return path
end

-- tensorboard_trace_handler(dir, worker_name): an on_trace_ready that writes each cycle to
-- dir/<worker_name>.<ms>.pt.trace.json (worker_name: host_pid), as PyTorch's
function profiler.tensorboard_trace_handler(dir, worker_name, use_gzip)
  if type(dir) ~= "string" or dir == "" then
    error("profiler.tensorboard_trace_handler: argument 'dir_name' must be a directory name", 2)
  end
  if worker_name ~= nil and type(worker_name) ~= "string" then
    error("profiler.tensorboard_trace_handler: argument 'worker_name' must be a string", 2)
  end
  if use_gzip then error("profiler.tensorboard_trace_handler: use_gzip is not supported (no zlib)", 2) end
  return function(prof)
    local ok, err = P.mkdir(dir)
    if not ok then error("tensorboard_trace_handler: cannot make " .. dir .. ": " .. err, 2) end
    local worker = worker_name or (P.hostname() .. "_" .. P.getpid())
    local ms = P.wall_ms()
    local path
    repeat      -- two cycles within a millisecond get two files
      path = ("%s/%s.%d.pt.trace.json"):format(dir, worker, ms)
      local f = io.open(path, "r")
      if f then f:close(); ms = ms + 1 end
    until not f
    prof:export_chrome_trace(path)
    prof.trace_path = path
  end
end

-- profile(opts[, fn]): with fn, runs fn(prof) under the profiler and returns prof, stopped;
-- without, returns it started, for `local prof <close> = torch.profiler.profile{...}`
function profiler.profile(opts, fn)
  if opts == nil then opts = {} end
  if type(opts) == "function" and fn == nil then opts, fn = {}, opts end
  if type(opts) ~= "table" then error("profiler.profile: expected an options table", 2) end
  torch._check_options("profiler.profile", opts, PROFILE_OPTIONS)
  if fn ~= nil and type(fn) ~= "function" then error("profiler.profile: argument 'fn' must be a function", 2) end
  local acts = opts.activities or { "CPU" }
  if type(acts) ~= "table" then error("profiler.profile: argument 'activities' must be a list of ProfilerActivity", 2) end
  local self = setmetatable({}, Profile)
  for _, a in ipairs(acts) do
    if a ~= "CPU" and a ~= "CUDA" then
      error(("profiler.profile: activities: unknown activity %s (ProfilerActivity.CPU or .CUDA)"):format(tostring(a)), 2)
    end
    if a == "CUDA" then self.cuda = true else self.cpu = true end
  end
  if not self.cuda then self.cpu = true end      -- an empty list: the default, CPU
  if opts.use_cuda then self.cuda = true end      -- the older spelling: CPU and CUDA
  for _, k in ipairs({ "with_flops", "with_modules", "experimental_config" }) do
    if opts[k] then error(("profiler.profile: argument '%s' is not supported"):format(k), 2) end
  end
  if opts.schedule ~= nil and type(opts.schedule) ~= "function" then
    error("profiler.profile: argument 'schedule' must be a function (torch.profiler.schedule{...})", 2)
  end
  if opts.on_trace_ready ~= nil and type(opts.on_trace_ready) ~= "function" then
    error("profiler.profile: argument 'on_trace_ready' must be a function", 2)
  end
  self.schedule = opts.schedule or always_record
  self._record_steps = opts.schedule ~= nil
  self.on_trace_ready = opts.on_trace_ready
  self.record_shapes = opts.record_shapes and true or false
  self.profile_memory = opts.profile_memory and true or false
  self.with_stack = opts.with_stack and true or false
  if self.cuda and profiler._cuda_attach then profiler._cuda_attach(self) end
  self:start()
  if fn then
    local ok, err = pcall(fn, self)
    self:stop()
    if not ok then error(err, 0) end
  end
  return self
end

-- ProfilerActivity.CUDA: the CUDA backend's events around its launches and copies
-- (torch.cuda._trace, src/cuda/trace.c), on one track per device and stream
function profiler._cuda_attach(self)
  local ok, avail = pcall(function() return torch.cuda.is_available() end)
  if not ok or not avail then
    self.cuda_unavailable = torch.cuda.unavailable_reason and torch.cuda.unavailable_reason() or "not available"
    return
  end
  local trace, collect = torch.cuda._trace, torch.cuda._trace_collect
  if not trace then return end
  self._cuda_on = function() trace(true) end
  self._cuda_off = function() trace(false) end
  self._cuda_collect = function(_, raw)
    local n = 0
    for _, k in ipairs(collect()) do
      n = n + 1
      raw[#raw + 1] = { name = k.name, kind = k.kind, t0 = k.t0, t1 = k.t1, id = -n, parent = -1, depth = 0,
        pid = k.device, tid = k.stream, launch_ns = k.launch_ns, launch_tid = k.tid, device = k.device,
        stream = k.stream, bytes = k.kind == "memcpy" and k.bytes or nil, gpu = true }
    end
  end
end

-- record_function(name): a range on the profiler's timeline, as a guard
-- (local r <close> = record_function("x")) or around a function
-- (record_function("x", fn, ...) returns fn's results)
local Range = {}
Range.__index = Range
Range.__name = "torch.profiler.record_function"
function Range:__close() if self.open then self.open = false; P.range_pop() end end
Range.__exit = Range.__close
function Range:exit() self:__close() end
function profiler.record_function(name, fn, ...)
  if type(name) ~= "string" then error("profiler.record_function: argument 'name' must be a string", 2) end
  if fn ~= nil and type(fn) ~= "function" then error("profiler.record_function: argument 'fn' must be a function", 2) end
  local on = P.recording()
  if fn == nil then
    if on then P.range_push(name) end
    return setmetatable({ name = name, open = on }, Range)
  end
  if not on then return fn(...) end
  P.range_push(name)
  local r = table.pack(pcall(fn, ...))
  P.range_pop()
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

-- torch.profile(fn): fn's op calls, per op {calls =, seconds =} (seconds of the calls
-- not made inside another op)
function torch.profile(fn)
  if type(fn) ~= "function" then error("profile: argument 'fn' must be a function", 2) end
  if P.recording() then error("profile: a profiler is already running", 2) end
  P.start{}
  local ok, err = pcall(fn)
  P.stop()
  local raw = P.collect()
  if not ok then error(err, 0) end
  local by_id = {}
  for _, e in ipairs(raw) do by_id[e.id] = e end
  local r = {}
  for _, e in ipairs(raw) do
    if e.kind == "op" then
      local s = r[e.name] or { calls = 0, seconds = 0 }
      r[e.name] = s
      s.calls = s.calls + 1
      local p, nested = by_id[e.parent], false
      while p do
        if p.kind == "op" then nested = true; break end
        p = by_id[p.parent]
      end
      if not nested then s.seconds = s.seconds + (e.t1 - e.t0) * 1e-9 end
    end
  end
  return r
end

return profiler
