-- optim.Logger([filename [, timestamp]]): Torch7's training log. A tab-separated text file (or
-- stdout without a filename): a header of the symbols' names, then one row per add() with
-- numbers as %11.4e. setNames{...} fixes the columns (add then takes a list in that order, or
-- names); otherwise the first add{name = value, ...} does (names sorted: Torch7 took pairs()'s
-- order). style{name = '-' | '+' | '.' | '+-'} (or a list after setNames), setlogscale(bool),
-- display(bool) (kept; there is no window). plot([name, ...]) draws the symbols with more than
-- one value into FILENAME.png (a PNG written in Lua: optim/t7/plot.lua; Torch7 wrote an .eps
-- through gnuplot) and returns its path.
local plot = require "optim.t7.plot"

local Logger = {}
Logger.__index = Logger
Logger.__typename = "optim.Logger"
Logger.__name = "optim.Logger"

local function bad(fmt, ...) error("optim.Logger: " .. fmt:format(...), 3) end

local function dirname(p) return p:match("^(.*)/[^/]*$") end

local function new(_, filename, timestamp)
  local self = setmetatable({}, Logger)
  if filename ~= nil then
    if type(filename) ~= "string" then bad("argument 'filename' must be a string, got %s", type(filename)) end
    self.name = filename
    local dir = dirname(filename)
    if dir and dir ~= "" then os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'") end
    if timestamp then filename = filename .. "-" .. os.date("%Y_%m_%d_%X") end
    local f, err = io.open(filename, "w")
    if not f then bad("cannot open %s: %s", filename, tostring(err)) end
    self.file = f
    self.pngfile = self.name .. ".png"
  else
    self.file = io.stdout
    self.name = "stdout"
    print("<Logger> warning: no path provided, logging to std out")
  end
  self.empty = true
  self.symbols = {}   -- column key -> the values logged
  self.styles = {}    -- column key -> a list of styles
  self.names = {}     -- column key -> its name
  self.idx = {}       -- name -> column key
  self.order = {}     -- the column keys, in the file's order
  self.showPlot = true
  self.defaultStyle = "+"
  self.logscale = false
  return self
end
setmetatable(Logger, { __call = new, __tostring = function() return "optim.Logger" end })

function Logger:_header()
  local names = {}
  for i, k in ipairs(self.order) do names[i] = tostring(self.names[k]) end
  self.file:write(table.concat(names, "\t") .. "\t\n")
  self.file:flush()
end

function Logger:setNames(names)
  if type(names) ~= "table" then bad("setNames: argument 'names' must be a list of names") end
  self.names, self.idx, self.order, self.symbols, self.styles = {}, {}, {}, {}, {}
  for k, name in ipairs(names) do
    self.names[k], self.idx[name], self.order[k] = name, k, k
    self.symbols[k], self.styles[k] = {}, { self.defaultStyle }
  end
  self.empty = false
  self.nsymbols = #names
  self:_header()
  return self
end

function Logger:add(symbols)
  if type(symbols) ~= "table" then bad("add: argument 'symbols' must be a table") end
  if self.empty then
    -- the first row names the columns: a list by position, names sorted
    local keys = {}
    for k in pairs(symbols) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      if type(a) == type(b) then return a < b end
      return type(a) == "number"
    end)
    for i, k in ipairs(keys) do
      self.order[i], self.names[k], self.idx[k] = k, k, k
      self.symbols[k], self.styles[k] = {}, { self.defaultStyle }
    end
    self.empty = false
    self.nsymbols = #keys
    self:_header()
  end
  -- the values by column (a name after setNames is its column)
  local row = {}
  for k, v in pairs(symbols) do
    local key = self.symbols[k] and k or self.idx[k]
    if key == nil then bad("add: unknown symbol '%s'", tostring(k)) end
    if type(v) ~= "number" and type(v) ~= "string" then bad("add: can only log numbers and strings, got %s", type(v)) end
    row[key] = v
  end
  local cells = {}
  for i, k in ipairs(self.order) do
    local v = row[k]
    if type(v) == "number" then cells[i] = ("%11.4e"):format(v)
    elseif v ~= nil then cells[i] = v
    else cells[i] = "" end
    if v ~= nil then table.insert(self.symbols[k], v) end
  end
  self.file:write(table.concat(cells, "\t") .. "\t\n")
  self.file:flush()
  return self
end

function Logger:style(symbols)
  if type(symbols) ~= "table" then bad("style: argument must be a table") end
  for k, style in pairs(symbols) do
    local key = self.symbols[k] and k or self.idx[k] or k
    if type(style) == "string" then self.styles[key] = { style }
    elseif type(style) == "table" then self.styles[key] = style
    else bad("style should be a string or a table of strings") end
  end
  return self
end

function Logger:setlogscale(state) self.logscale = state end

function Logger:display(state) self.showPlot = state end

function Logger:plot(...)
  local keys = {}
  if select("#", ...) == 0 then
    for _, k in ipairs(self.order) do keys[#keys + 1] = k end
  else
    for _, name in ipairs({ ... }) do
      local k = self.idx[name]
      if k == nil then bad("plot: unknown symbol '%s'", tostring(name)) end
      keys[#keys + 1] = k
    end
  end
  local series = {}
  for _, k in ipairs(keys) do
    local ys = {}
    for i, v in ipairs(self.symbols[k]) do ys[i] = tonumber(v) or (0 / 0) end
    if #ys > 1 then
      for _, style in ipairs(self.styles[k] or { self.defaultStyle }) do
        series[#series + 1] = { name = tostring(self.names[k]), y = ys, style = style }
      end
    end
  end
  if #series == 0 or not self.pngfile then return nil end
  return plot.curves(self.pngfile, series, { logscale = self.logscale })
end

return Logger
