-- data/progress.lua — a progress bar for loops:
--   for batch in data.progress(loader, {desc="train"}) do ... end   -- or progress(loader, "train")
--   local bar = data.progress(loader); for b in bar do ...; bar:set{loss=l} end
--   local bar = data.progress(100); for i in bar do ... end
-- On a terminal the line is redrawn in place with \r (at most 10 times a
-- second); otherwise a full line is written per update, at most every
-- `interval` seconds (default 5), plus the final one.
local torch = torch or require("torch")
local D = torch._data
local data_class = require("data.dataset").data_class
local M = {}

local Progress = data_class("data.Progress")
M.Progress = Progress

local function fmt_time(s)
  if s ~= s or s == math.huge then return "?" end
  s = math.floor(s + 0.5)
  if s >= 3600 then return ("%d:%02d:%02d"):format(s // 3600, s % 3600 // 60, s % 60) end
  return ("%02d:%02d"):format(s // 60, s % 60)
end

local function fmt_value(v)
  if torch.is_tensor(v) then v = v:item() end
  if math.type(v) == "float" then
    local a = math.abs(v)
    if a ~= 0 and (a < 1e-3 or a >= 1e5) then return ("%.3e"):format(v) end
    return ("%.4f"):format(v)
  end
  return tostring(v)
end

-- tqdm's order: progress(iterable, desc, total, {file=, tty=, interval=, width=})
local SIG = require("torch_class").signature("data.progress",
  "iterable, desc=nil, total=nil, *, file=nil, tty=nil, interval=nil, width=30")
function Progress:__init(...)
  local opts = require("data.dataset").parse(SIG, 1, ...)
  local src = opts.iterable
  if src == nil then error("data.progress: argument 'iterable' is required (a loader, a dataset, a list, a function or a count)", 3) end
  if opts.desc ~= nil and type(opts.desc) ~= "string" then
    error("data.progress: desc must be a string, got " .. type(opts.desc), 3)
  end
  if opts.total ~= nil and (type(opts.total) ~= "number" or opts.total < 0) then
    error("data.progress: total must be a non-negative number, got " .. tostring(opts.total), 3)
  end
  if math.type(opts.width) ~= "integer" or opts.width < 1 then
    error("data.progress: width must be a positive integer, got " .. tostring(opts.width), 3)
  end
  self.src = src
  self.desc = opts.desc
  self.total = opts.total
  if not self.total then
    if type(src) == "number" then self.total = src
    elseif type(src) == "table" then
      local ok, n = pcall(function() return #src end)
      if ok and type(n) == "number" and n > 0 then self.total = n end
    end
  end
  self.file = opts.file or io.stdout
  self.tty = opts.tty
  if self.tty == nil then self.tty = D.isatty(self.file) end
  self.interval = opts.interval or (self.tty and 0.1 or 5)
  self.width = opts.width
  self.metrics, self.keys = {}, {}
  self.n = 0
end

-- set{loss=..., acc=...}: metrics shown after the rate (also bar:set("loss", v))
function Progress:set(k, v)
  if type(k) == "table" then
    for kk, vv in pairs(k) do self:set(kk, vv) end
    return self
  end
  if self.metrics[k] == nil then self.keys[#self.keys + 1] = k end
  self.metrics[k] = v
  return self
end

function Progress:line()
  local now = D.now()
  local el = now - (self.start or now)
  -- no rate until there is something to measure it on (the first update of a
  -- bar driven by hand comes a moment after its clock starts)
  local rate = (el > 0.05 and self.n > 0) and self.n / el or 0
  local parts = {}
  if self.desc then parts[#parts + 1] = self.desc .. ":" end
  local ratestr = rate >= 1 and ("%.1fit/s"):format(rate) or (rate > 0 and ("%.2fs/it"):format(1 / rate) or "?it/s")
  local tail = ""
  for _, k in ipairs(self.keys) do tail = tail .. (", %s=%s"):format(k, fmt_value(self.metrics[k])) end
  if self.total and self.total > 0 then
    local frac = math.min(self.n / self.total, 1)
    local fill = math.floor(frac * self.width + 0.5)
    local bar = self.tty and (("█"):rep(fill) .. (" "):rep(self.width - fill)) or (("#"):rep(fill) .. ("."):rep(self.width - fill))
    local eta = rate > 0 and (self.total - self.n) / rate or math.huge
    parts[#parts + 1] = ("%3d%%|%s| %d/%d [%s<%s, %s%s]"):format(math.floor(frac * 100), bar, self.n, self.total,
      fmt_time(el), fmt_time(eta), ratestr, tail)
  else
    parts[#parts + 1] = ("%d [%s, %s%s]"):format(self.n, fmt_time(el), ratestr, tail)
  end
  return table.concat(parts, " ")
end

function Progress:draw(force, final)
  local now = D.now()
  if not force and self.last_draw and now - self.last_draw < self.interval then return end
  self.last_draw = now
  local l = self:line()
  if self.tty then
    local pad = (self.last_len or 0) - #l
    self.file:write("\r", l, pad > 0 and (" "):rep(pad) or "", final and "\n" or "")
    self.last_len = #l
  else
    self.file:write(l, "\n")
  end
  self.file:flush()
end

-- advance by k (default 1) when driving the bar by hand
function Progress:update(k)
  if not self.start then self.start = D.now() end
  self.n = self.n + (k or 1)
  self:draw(false)
end

function Progress:close()
  if self.closed then return end
  self.closed = true
  if self.inner_close then
    local c = self.inner_close
    self.inner_close = nil
    local mt = getmetatable(c)
    if mt and mt.__close then mt.__close(c) end
  end
  self:draw(true, true)
end
Progress.__close = function(self) self:close() end

-- the wrapped source as a step function returning all of the source's values (a loader with
-- unpack = true gives x, y), and what closes it
local function source_iter(src)
  if type(src) == "number" then
    local i = 0
    return function() if i < src then i = i + 1; return i end end
  end
  if type(src) == "function" then return src end
  if type(src) == "table" then
    if type(src.iter) == "function" then
      local f, s, c, closing = src:iter()
      return function()
        local r = table.pack(f(s, c))
        c = r[1]
        return table.unpack(r, 1, r.n)
      end, closing
    end
    if type(src.get) == "function" then   -- a map-style dataset: its samples in order
      local i, n = 0, src:len()
      return function() if i < n then i = i + 1; return src:get(i) end end
    end
    local mt = getmetatable(src)
    if mt and mt.__call then   -- a callable object stepped as a for loop steps it
      local c = nil
      return function()
        local r = table.pack(src(nil, c))
        c = r[1]
        return table.unpack(r, 1, r.n)
      end
    end
    local i = 0
    return function() i = i + 1; return src[i] end
  end
  error("data.progress: cannot iterate a " .. type(src), 3)
end

local WEAK_VALUES = { __mode = "v" }

-- for x in bar do: the first call of a loop (control nil) starts the source over; a bar is
-- one loop at a time, so a call that does not continue the loop the bar is on (a loop the
-- bar was restarted under, e.g. the same bar nested in itself) is an error, not a silent mix
function Progress:__call(_, control)
  if control == nil then
    if self.step then   -- a loop left by break: close its source and its line first
      self.step = nil
      self:close()
    end
    self.step, self.inner_close = source_iter(self.src)
    self.last = setmetatable({}, WEAK_VALUES)
    self.start = D.now()
    self.n = 0
    self.closed = false
    self:draw(true)
  else
    if not self.step or not rawequal(self.last[1], control) then
      error("data.progress: this bar was restarted by another loop; a bar follows one loop at a time " ..
        "(make one bar per loop)", 2)
    end
    self.n = self.n + 1
  end
  local r = table.pack(self.step())
  if r[1] == nil then
    self.step = nil
    self:close()
    return nil
  end
  self.last[1] = r[1]
  self:draw(false)
  return table.unpack(r, 1, r.n)
end

function M.progress(...) return Progress(...) end

return M
