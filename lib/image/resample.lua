-- image/resample.lua — scale and resize: PyTorch's F.interpolate pixels (align_corners=False;
-- bilinear and nearest through its kernels, bicubic and the antialiased filters here).
local torch = torch or require("torch")
local class = require "torch_class"
local U = require "image.util"
local fail, check_image, as_batch, positive_int = U.fail, U.check_image, U.as_batch, U.positive_int
local M = {}

-- PyTorch's cubic convolution weights (A = -0.75) for the four taps around t in [0, 1)
local CUBIC_A = -0.75
local function cubic_weights(t)
  local A = CUBIC_A
  local function near(x) return ((A + 2) * x - (A + 3)) * x * x + 1 end          -- |x| <= 1
  local function far(x) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A end      -- 1 < |x| < 2
  return far(t + 1), near(t), near(1 - t), far(2 - t)
end

-- filters for antialiased resampling (PyTorch's _upsample_*_aa): support and weight
local AA = {
  bilinear = { support = 1, f = function(x) x = math.abs(x); return x < 1 and 1 - x or 0 end },
  bicubic = { support = 2, f = function(x)
    x = math.abs(x)
    local A = -0.5
    if x < 1 then return ((A + 2) * x - (A + 3)) * x * x + 1 end
    if x < 2 then return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A end
    return 0
  end },
}

-- the taps that resample one axis of n_in samples to n_out: for each output o, the inputs
-- it reads and their weights, as two [n_out, T] lists (0-based input indices; unused taps
-- have weight 0)
local function resample_taps(n_in, n_out, mode, antialias)
  local scale = n_in / n_out
  local idx, wts, T = {}, {}, 0
  for o = 1, n_out do
    local ii, ww = {}, {}
    if antialias then
      -- PyTorch's _upsample_*_aa: the filter widened by the scale when shrinking, the weights
      -- normalised over the taps inside the input
      local flt = AA[mode]
      local sc = math.max(scale, 1)
      local support = flt.support * sc
      local center = scale * (o - 1 + 0.5)
      local xmin = math.max(math.floor(center - support + 0.5), 0)
      local xmax = math.min(math.floor(center + support + 0.5), n_in)
      local total = 0
      for j = xmin, xmax - 1 do
        local v = flt.f((j - center + 0.5) / sc)
        ii[#ii + 1], ww[#ww + 1] = j, v
        total = total + v
      end
      if total ~= 0 then for k = 1, #ww do ww[k] = ww[k] / total end end
    elseif mode == "bicubic" then
      -- PyTorch's upsample_bicubic2d: four taps around the source position, clamped at the edges
      local real = scale * (o - 1 + 0.5) - 0.5
      local i0 = math.floor(real)
      local w4 = { cubic_weights(real - i0) }
      for k = 0, 3 do ii[k + 1], ww[k + 1] = math.min(math.max(i0 - 1 + k, 0), n_in - 1), w4[k + 1] end
    else   -- bilinear
      local real = math.max(scale * (o - 1 + 0.5) - 0.5, 0)
      local i0 = math.floor(real)
      local l1 = real - i0
      ii[1], ww[1] = i0, 1 - l1
      ii[2], ww[2] = i0 < n_in - 1 and i0 + 1 or i0, l1
    end
    idx[o], wts[o] = ii, ww
    if #ii > T then T = #ii end
  end
  return idx, wts, T
end

-- b ([N, C, H, W]) resampled along dim d (3 or 4) to n_out samples: a weighted sum of T
-- index_selects, so the cost is the output's size times the taps
local function resample_axis(b, d, n_out, mode, antialias)
  local idx, wts, T = resample_taps(b:size(d), n_out, mode, antialias)
  local y
  for t = 1, T do
    local it, wt = {}, {}
    for o = 1, n_out do
      it[o] = (idx[o][t] or idx[o][1]) + 1   -- 1-based
      wt[o] = wts[o][t] or 0
    end
    local shape = { 1, 1, 1, 1 }
    shape[d] = n_out
    local term = b:index_select(d, torch.tensor(it, { dtype = torch.int64 })) *
      torch.tensor(wt, { dtype = b.dtype }):reshape(shape)
    y = y and y:add_(term) or term
  end
  return y
end

local MODES = { bilinear = "bilinear", bicubic = "bicubic", simple = "nearest", nearest = "nearest" }
-- the largest output the resamplers make: as the decoders' limits (serial/image.h)
local MAX_SIDE, MAX_PIXELS = 65535, 1 << 28

-- resample x ([H, W], [C, H, W] or [N, C, H, W]) to oh x ow
local function resample(fname, x, oh, ow, mode, antialias)
  local m = MODES[mode]
  if not m then
    fail(fname, "mode must be 'bilinear', 'bicubic', 'simple' or 'nearest', got %s", tostring(mode))
  end
  if not (positive_int(oh) and positive_int(ow)) or oh > MAX_SIDE or ow > MAX_SIDE then
    fail(fname, "the output size must be positive integers up to %d, got %s x %s (width x height)", MAX_SIDE,
      tostring(ow), tostring(oh))
  end
  if oh * ow > MAX_PIXELS then
    fail(fname, "a %d x %d output is more than %d pixels (width x height)", ow, oh, MAX_PIXELS)
  end
  local b, back = as_batch(x)
  local H, W = b:size(3), b:size(4)
  if antialias and m == "nearest" then fail(fname, "antialias applies to 'bilinear' and 'bicubic' only") end
  local y
  if m == "nearest" then
    y = torch.upsample_nearest2d(b, { oh, ow })
  elseif m == "bilinear" and not antialias then
    y = torch.upsample_bilinear2d(b, { oh, ow }, false)
  else
    -- separable: rows, then columns
    y = resample_axis(resample_axis(b, 3, oh, m, antialias), 4, ow, m, antialias)
  end
  return back(y)
end

-- Torch7's size argument: a number is the longer side; '^N' the shorter side; '*f' a factor
local function scaled_size(fname, H, W, size)
  if type(size) == "number" then
    if not positive_int(size) then fail(fname, "argument 'size' must be a positive integer, got %s", tostring(size)) end
    if W >= H then return math.max(1, math.floor(H * size / W + 0.5)), size end
    return size, math.max(1, math.floor(W * size / H + 0.5))
  elseif type(size) == "string" then
    local op, num = size:match("^([%^%*]?)([%d%.]+)$")
    num = tonumber(num)
    if op == "^" and num and num > 0 then
      local s = num / math.min(H, W)
      return math.max(1, math.floor(H * s + 0.5)), math.max(1, math.floor(W * s + 0.5))
    elseif op == "*" and num and num > 0 then
      return math.max(1, math.floor(H * num + 0.5)), math.max(1, math.floor(W * num + 0.5))
    elseif op == "" and num and math.tointeger(num) then
      return scaled_size(fname, H, W, math.tointeger(num))
    end
  end
  fail(fname, "argument 'size' must be a number (the longer side), '^N' (the shorter side) or '*f' (a factor), got %s",
    tostring(size))
end

local SCALE = class.signature("image.scale", "src, width, height=nil, mode='bilinear', *, antialias=false")
-- image.scale(src, width, height, mode='bilinear') or image.scale(src, size, mode) (Torch7)
function M.scale(...)
  local fname = "image.scale"
  local a = SCALE(...)
  local x = check_image(fname, a.src, "src", true)
  local H, W = x:size(-2), x:size(-1)
  local oh, ow, mode = a.height, a.width, a.mode
  if type(oh) == "string" and MODES[oh] then oh, mode = nil, oh end
  if oh == nil then
    oh, ow = scaled_size(fname, H, W, a.width)
  elseif not (positive_int(ow) and positive_int(oh)) then
    fail(fname, "width and height must be positive integers, got %s and %s", tostring(ow), tostring(oh))
  end
  return resample(fname, x, oh, ow, mode, a.antialias)
end

local RESIZE = class.signature("image.resize",
  "img, size, interpolation='bilinear', max_size=nil, antialias=false, *, mode=nil")
-- image.resize(img, size, interpolation='bilinear', max_size, antialias) — torchvision's:
-- size {h, w}, or a number that the shorter side becomes (the longer keeps the aspect ratio)
function M.resize(...)
  local fname = "image.resize"
  local a = RESIZE(...)
  local x = check_image(fname, a.img, "img", true)
  local H, W = x:size(-2), x:size(-1)
  local size, oh, ow = a.size
  if type(size) == "table" and #size == 1 then size = size[1] end
  if type(size) == "number" then
    if not positive_int(size) then fail(fname, "argument 'size' must be a positive integer, got %s", tostring(size)) end
    local short, long = math.min(H, W), math.max(H, W)
    local new_short, new_long = size, math.floor(size * long / short)
    if a.max_size ~= nil then
      if not positive_int(a.max_size) or a.max_size <= size then
        fail(fname, "max_size must be an integer greater than size (%d), got %s", size, tostring(a.max_size))
      end
      if new_long > a.max_size then new_short, new_long = math.floor(a.max_size * new_short / new_long), a.max_size end
    end
    if W <= H then ow, oh = new_short, new_long else oh, ow = new_short, new_long end
  elseif type(size) == "table" and #size == 2 then
    if a.max_size ~= nil then fail(fname, "max_size is only meaningful when size is a number") end
    oh, ow = size[1], size[2]
  else
    fail(fname, "argument 'size' must be a number or {h, w}, got %s", tostring(size))
  end
  local mode = a.mode or a.interpolation
  return resample(fname, x, oh, ow, mode, a.antialias)
end

M._resample = resample   -- for image.display's zoom and preview

return M
