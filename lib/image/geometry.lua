-- image/geometry.lua — crop, center_crop, hflip, vflip, translate, rotate.
local torch = torch or require("torch")
local U = require "image.util"
local fail, check_image, as_batch, positive_int = U.fail, U.check_image, U.as_batch, U.positive_int
local M = {}

local CROP_FORMATS = { c = true, tl = true, tr = true, bl = true, br = true }

-- image.crop(src, x1, y1, x2, y2): the window between pixel edges x1..x2, y1..y2, counted from
-- the image's top-left corner (0, 0), so x2 - x1 pixels wide (Torch7's convention; x1, y1 alone:
-- to the bottom-right). image.crop(src, 'c' | 'tl' | 'tr' | 'bl' | 'br', width, height)
function M.crop(src, a1, a2, a3, a4)
  local fname = "image.crop"
  local x = check_image(fname, src, "src", true)
  local H, W = x:size(-2), x:size(-1)
  local x1, y1, x2, y2
  if type(a1) == "string" then
    if not CROP_FORMATS[a1] then fail(fname, "format must be 'c', 'tl', 'tr', 'bl' or 'br', got '%s'", a1) end
    local w, h = a2, a3
    if not (positive_int(w) and positive_int(h)) then
      fail(fname, "width and height must be positive integers, got %s and %s", tostring(w), tostring(h))
    end
    if w > W or h > H then fail(fname, "a %d x %d crop does not fit in a %d x %d image", w, h, W, H) end
    if a1 == "c" then x1, y1 = (W - w) // 2, (H - h) // 2
    else
      y1 = a1:sub(1, 1) == "t" and 0 or H - h
      x1 = a1:sub(2, 2) == "l" and 0 or W - w
    end
    x2, y2 = x1 + w, y1 + h
  else
    x1, y1, x2, y2 = a1, a2, a3 == nil and W or a3, a4 == nil and H or a4
    for _, v in ipairs { x1, y1, x2, y2 } do
      if math.type(v) ~= "integer" then
        fail(fname, "x1, y1, x2, y2 must be integers (pixel edges from 0), got %s, %s, %s, %s", tostring(x1),
          tostring(y1), tostring(x2), tostring(y2))
      end
    end
    if not (0 <= x1 and x1 < x2 and x2 <= W and 0 <= y1 and y1 < y2 and y2 <= H) then
      fail(fname, "the window x %d..%d, y %d..%d is empty or outside the %d x %d image (0 <= x1 < x2 <= width)",
        x1, x2, y1, y2, W, H)
    end
  end
  local d = x:dim()
  return x:narrow(d - 1, y1 + 1, y2 - y1):narrow(d, x1 + 1, x2 - x1):contiguous()
end

-- torchvision's center_crop(img, size): size a number or {h, w}
function M.center_crop(img, size)
  local fname = "image.center_crop"
  check_image(fname, img, "img", true)
  local h, w
  if type(size) == "number" then h, w = size, size
  elseif type(size) == "table" then h, w = size[1], size[2] if w == nil then w = h end end
  if not (positive_int(h) and positive_int(w)) then
    fail(fname, "argument 'size' must be a positive integer or {h, w}, got %s", tostring(size))
  end
  local H, W = img:size(-2), img:size(-1)
  if h > H or w > W then fail(fname, "a %d x %d crop does not fit in a %d x %d image (h x w)", h, w, H, W) end
  -- torchvision rounds the offset: int(round((H - h) / 2))
  local function off(a, b)
    local v = (a - b) / 2
    local r = math.floor(v + 0.5)
    if v - math.floor(v) == 0.5 and r % 2 == 1 then r = r - 1 end   -- Python's round: half to even
    return r
  end
  local t, l = off(H, h), off(W, w)
  local d = img:dim()
  return img:narrow(d - 1, t + 1, h):narrow(d, l + 1, w):contiguous()
end

function M.hflip(src)
  local x = check_image("image.hflip", src, "src", true)
  return x:flip({ -1 })
end
function M.vflip(src)
  local x = check_image("image.vflip", src, "src", true)
  return x:flip({ -2 })
end

-- image.translate(src, x, y): shifted right by x and down by y whole pixels; uncovered pixels 0
function M.translate(src, dx, dy)
  local fname = "image.translate"
  local x = check_image(fname, src, "src", true)
  if math.type(dx) ~= "integer" or math.type(dy) ~= "integer" then
    fail(fname, "x and y must be whole pixels (integers), got %s and %s", tostring(dx), tostring(dy))
  end
  local d = x:dim()
  local H, W = x:size(d - 1), x:size(d)
  local out = torch.zeros_like(x)
  local w, h = W - math.abs(dx), H - math.abs(dy)
  if w <= 0 or h <= 0 then return out end
  local src_view = x:narrow(d - 1, math.max(-dy, 0) + 1, h):narrow(d, math.max(-dx, 0) + 1, w)
  out:narrow(d - 1, math.max(dy, 0) + 1, h):narrow(d, math.max(dx, 0) + 1, w):copy_(src_view)
  return out
end

-- image.rotate(src, theta, mode='simple'): rotated by theta radians about the centre (Torch7's
-- sense: output pixel (x, y) takes the input at the centre + R(theta) (x - xc, y - yc)), pixels
-- from outside the input 0; mode 'simple' (nearest) or 'bilinear'
function M.rotate(src, theta, mode)
  local fname = "image.rotate"
  local x = check_image(fname, src, "src", true)
  if type(theta) ~= "number" or theta ~= theta or math.abs(theta) == math.huge then
    fail(fname, "argument 'theta' must be a finite number (radians), got %s", tostring(theta))
  end
  mode = mode or "simple"
  if mode ~= "simple" and mode ~= "nearest" and mode ~= "bilinear" then
    fail(fname, "mode must be 'simple' (nearest) or 'bilinear', got %s", tostring(mode))
  end
  local b, back = as_batch(x)
  local N, Cn, H, W = b:size(1), b:size(2), b:size(3), b:size(4)
  local xc, yc = (W - 1) / 2, (H - 1) / 2
  local c, s = math.cos(theta), math.sin(theta)
  local xs = torch.arange(0, W, { dtype = torch.float64 }):reshape(1, W):expand(H, W) - xc
  local ys = torch.arange(0, H, { dtype = torch.float64 }):reshape(H, 1):expand(H, W) - yc
  local sx = xs * c - ys * s + xc     -- source coordinates of each output pixel
  local sy = xs * s + ys * c + yc
  local flat = b:reshape(N * Cn, H * W)
  local function tap(ix, iy, weight)
    local inside = ix:ge(0):logical_and(ix:le(W - 1)):logical_and(iy:ge(0)):logical_and(iy:le(H - 1))
    local idx = (iy:clamp(0, H - 1) * W + ix:clamp(0, W - 1) + 1):to(torch.int64):reshape(1, H * W)   -- 1-based
    local v = flat:gather(2, idx:expand(N * Cn, H * W))
    local wgt = inside:to(b.dtype):reshape(1, H * W)
    if weight then wgt = wgt * weight:to(b.dtype):reshape(1, H * W) end
    return v * wgt
  end
  local out
  if mode == "bilinear" then
    local x0, y0 = sx:floor(), sy:floor()
    local fx, fy = sx - x0, sy - y0
    out = tap(x0, y0, (1 - fx) * (1 - fy)) + tap(x0 + 1, y0, fx * (1 - fy)) + tap(x0, y0 + 1, (1 - fx) * fy) +
      tap(x0 + 1, y0 + 1, fx * fy)
  else
    out = tap((sx + 0.5):floor(), (sy + 0.5):floor())
  end
  return back(out:reshape(N, Cn, H, W))
end

return M
