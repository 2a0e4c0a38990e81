-- image/color.lua — rgb2y, rgb_to_grayscale, rgb2hsv, hsv2rgb.
local torch = torch or require("torch")
local U = require "image.util"
local fail, check_image = U.fail, U.check_image
local M = {}

local function rgb_of(fname, src)
  local x = check_image(fname, src, "input")
  if x:dim() ~= 3 or x:size(1) < 3 or x:size(1) > 4 then
    fail(fname, "argument 'input' must be an RGB image [3, H, W], got shape %s", tostring(x.shape))
  end
  if not x.dtype.is_floating_point then x = x:to(torch.float32):div(255) end
  return x:narrow(1, 1, 3)
end

-- image.rgb2y(img) -> [1, H, W]: luma 0.299 R + 0.587 G + 0.114 B (ITU-R 601)
function M.rgb2y(src)
  local x = rgb_of("image.rgb2y", src)
  return (x[1] * 0.299 + x[2] * 0.587 + x[3] * 0.114):unsqueeze(1)
end
-- torchvision's rgb_to_grayscale(img, num_output_channels=1)
function M.rgb_to_grayscale(img, n)
  n = n or 1
  if n ~= 1 and n ~= 3 then fail("image.rgb_to_grayscale", "num_output_channels must be 1 or 3, got %s", tostring(n)) end
  local y = M.rgb2y(img)
  if n == 3 then y = y:expand(3, y:size(2), y:size(3)):contiguous() end
  if torch.is_tensor(img) and img.dtype == torch.uint8 then y = y:mul(255):round():clamp(0, 255):to(torch.uint8) end
  return y
end

-- image.rgb2hsv(img) -> [3, H, W] with hue, saturation and value in [0, 1]
function M.rgb2hsv(src)
  local x = rgb_of("image.rgb2hsv", src)
  local r, g, b = x[1], x[2], x[3]
  local maxc = torch.maximum(torch.maximum(r, g), b)
  local minc = torch.minimum(torch.minimum(r, g), b)
  local delta = maxc - minc
  local gray = delta:eq(0)
  local safe_delta = torch.where(gray, torch.ones_like(delta), delta)
  local safe_max = torch.where(maxc:eq(0), torch.ones_like(maxc), maxc)
  local s = torch.where(maxc:eq(0), torch.zeros_like(maxc), delta / safe_max)
  local rc, gc, bc = (maxc - r) / safe_delta, (maxc - g) / safe_delta, (maxc - b) / safe_delta
  local h = torch.where(maxc:eq(r), bc - gc, torch.where(maxc:eq(g), 2.0 + rc - bc, 4.0 + gc - rc))
  h = (h / 6.0):remainder(1.0)
  h = torch.where(gray, torch.zeros_like(h), h)
  return torch.stack({ h, s, maxc })
end

-- image.hsv2rgb(img) -> [3, H, W]
function M.hsv2rgb(src)
  local fname = "image.hsv2rgb"
  local x = check_image(fname, src, "input")
  if x:dim() ~= 3 or x:size(1) ~= 3 then
    fail(fname, "argument 'input' must be an HSV image [3, H, W], got shape %s", tostring(x.shape))
  end
  if not x.dtype.is_floating_point then fail(fname, "argument 'input' must be floating (h, s, v in [0, 1])") end
  local h, s, v = x[1], x[2], x[3]
  local h6 = (h:remainder(1.0)) * 6
  local i = h6:floor()
  local f = h6 - i
  local p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
  i = i:remainder(6)
  local function pick(...)
    local opts = { ... }
    local out = opts[6]
    for k = 5, 1, -1 do out = torch.where(i:eq(k - 1), opts[k], out) end
    return out
  end
  return torch.stack({ pick(v, q, p, p, t, v), pick(t, v, v, q, p, p), pick(p, p, t, v, v, q) })
end

return M
