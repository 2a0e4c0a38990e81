-- A small line-plot rasterizer for optim.Logger: curves over a frame with a grid, tick labels
-- in a 3x5 pixel font and a legend of colour swatches, drawn into a pixel buffer written as PNG
-- (optim/t7/png.lua). There is no gnuplot: this replaces Torch7's gnuplot calls.
--   plot.curves(path, series, opts): series = { {name=, y={...}, style='-'|'+'|'.'|'+-'}, ... };
--   opts.logscale (log10 of positive y), opts.width (640), opts.height (480)
local png = require "optim.t7.png"

local M = {}

local COLORS = { 0x1F77B4, 0xD62728, 0x2CA02C, 0xFF7F0E, 0x9467BD, 0x8C564B, 0xE377C2, 0x7F7F7F }
local GRID, AXIS, WHITE = 0xE0E0E0, 0x000000, 0xFFFFFF

-- 3x5 glyphs, one string of 15 bits per character, rows top to bottom
local FONT = {
  ["0"] = "111101101101111", ["1"] = "010110010010111", ["2"] = "111001111100111",
  ["3"] = "111001111001111", ["4"] = "101101111001001", ["5"] = "111100111001111",
  ["6"] = "111100111101111", ["7"] = "111001001001001", ["8"] = "111101111101111",
  ["9"] = "111101111001111", ["."] = "000000000000010", ["-"] = "000000111000000",
  ["+"] = "000010111010000", ["e"] = "000111101110011", [" "] = "000000000000000",
}

local Canvas = {}
Canvas.__index = Canvas

function M.canvas(w, h)
  local px = {}
  for i = 1, w * h do px[i] = WHITE end
  return setmetatable({ w = w, h = h, px = px }, Canvas)
end

function Canvas:set(x, y, c)
  x, y = math.floor(x + 0.5), math.floor(y + 0.5)
  if x >= 1 and x <= self.w and y >= 1 and y <= self.h then self.px[(y - 1) * self.w + x] = c end
end

function Canvas:line(x0, y0, x1, y1, c)
  local n = math.max(math.abs(x1 - x0), math.abs(y1 - y0), 1)
  n = math.min(math.ceil(n), 100000)
  for i = 0, n do self:set(x0 + (x1 - x0) * i / n, y0 + (y1 - y0) * i / n, c) end
end

function Canvas:rect(x0, y0, x1, y1, c)
  for y = y0, y1 do for x = x0, x1 do self:set(x, y, c) end end
end

-- text with its top-left corner at (x, y), 2 pixels per font pixel
function Canvas:text(x, y, s, c)
  for i = 1, #s do
    local g = FONT[s:sub(i, i)] or FONT[" "]
    for r = 0, 4 do
      for col = 0, 2 do
        if g:sub(r * 3 + col + 1, r * 3 + col + 1) == "1" then
          self:rect(x + col * 2, y + r * 2, x + col * 2 + 1, y + r * 2 + 1, c)
        end
      end
    end
    x = x + 8
  end
end

function Canvas:write(path) return png.write(path, self.w, self.h, self.px) end

local function label(v)
  if v == 0 then return "0" end
  local s = ("%.3g"):format(v)
  return s
end

function M.curves(path, series, opts)
  opts = opts or {}
  local W, H = opts.width or 640, opts.height or 480
  local cv = M.canvas(W, H)
  local left, right, top, bottom = 70, W - 20, 20, H - 40
  local ys = {}
  local xmax, ymin, ymax = 1, math.huge, -math.huge
  for k, s in ipairs(series) do
    ys[k] = {}
    for i, v in ipairs(s.y) do
      if type(v) == "number" and v == v and math.abs(v) ~= math.huge then
        if opts.logscale then v = v > 0 and math.log(v, 10) or nil end
      else v = nil end
      ys[k][i] = v
      if v then ymin = math.min(ymin, v); ymax = math.max(ymax, v) end
    end
    xmax = math.max(xmax, #s.y)
  end
  if ymin > ymax then ymin, ymax = 0, 1 end
  if ymin == ymax then ymin, ymax = ymin - 1, ymax + 1 end
  local pad = (ymax - ymin) * 0.05
  ymin, ymax = ymin - pad, ymax + pad
  local function X(i) return left + (i - 1) / math.max(xmax - 1, 1) * (right - left) end
  local function Y(v) return bottom - (v - ymin) / (ymax - ymin) * (bottom - top) end
  -- grid and tick labels: 5 divisions each way
  for k = 0, 5 do
    local v = ymin + (ymax - ymin) * k / 5
    local y = Y(v)
    cv:line(left, y, right, y, GRID)
    local s = label(opts.logscale and 10 ^ v or v)
    cv:text(math.max(2, left - 6 - 8 * #s), y - 5, s, AXIS)
    local i = 1 + (xmax - 1) * k / 5
    local x = X(i)
    cv:line(x, top, x, bottom, GRID)
    local xs = label(math.floor(i + 0.5))
    cv:text(x - 4 * #xs, bottom + 8, xs, AXIS)
  end
  cv:line(left, top, left, bottom, AXIS); cv:line(left, bottom, right, bottom, AXIS)
  cv:line(right, top, right, bottom, AXIS); cv:line(left, top, right, top, AXIS)
  -- the curves
  for k, s in ipairs(series) do
    local c = COLORS[(k - 1) % #COLORS + 1]
    local style = s.style or "+"
    local lines = style:find("-", 1, true) ~= nil
    local marks = style:find("+", 1, true) ~= nil
    local dots = style:find(".", 1, true) ~= nil or style == "|"
    local px, py
    for i = 1, #s.y do
      local v = ys[k][i]
      if v then
        local x, y = X(i), Y(v)
        if lines and px then cv:line(px, py, x, y, c) end
        if marks then cv:line(x - 3, y, x + 3, y, c); cv:line(x, y - 3, x, y + 3, c) end
        if dots or not (lines or marks) then cv:rect(x - 1, y - 1, x + 1, y + 1, c) end
        px, py = x, y
      else
        px, py = nil, nil
      end
    end
    -- legend: a swatch per series, top right
    cv:rect(right - 30, top + 8 + (k - 1) * 14, right - 10, top + 14 + (k - 1) * 14, c)
  end
  return cv:write(path)
end

return M
