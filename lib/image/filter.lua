-- image/filter.lua — Torch7's gaussian kernels and image.convolve.
local torch = torch or require("torch")
local class = require "torch_class"
local U = require "image.util"
local fail = U.fail
local to_dtype = U.to_dtype
local check_tensor = U.check_tensor
local check_image = U.check_image
local as_batch = U.as_batch
local positive_int = U.positive_int
local M = {}

local GAUSSIAN = class.signature("image.gaussian",
  "size=3, sigma=0.25, amplitude=1, normalize=false, width=nil, height=nil, sigma_horz=nil, sigma_vert=nil, " ..
  "mean_horz=0.5, mean_vert=0.5, *, dtype=nil")
-- image.gaussian(size=3, sigma=0.25, amplitude=1, normalize=false, width, height, sigma_horz,
-- sigma_vert, mean_horz=0.5, mean_vert=0.5) (Torch7): a [height, width] kernel; sigma and
-- the means are fractions of the size
function M.gaussian(...)
  local fname = "image.gaussian"
  local a = GAUSSIAN(...)
  local width, height = a.width or a.size, a.height or a.size
  if not (positive_int(width) and positive_int(height)) then
    fail(fname, "size (or width and height) must be positive integers, got %s x %s", tostring(width), tostring(height))
  end
  if width * height > (1 << 24) then fail(fname, "a %d x %d kernel is too large", width, height) end
  local sh, sv = a.sigma_horz or a.sigma, a.sigma_vert or a.sigma
  for _, v in ipairs { sh, sv, a.amplitude, a.mean_horz, a.mean_vert } do
    if type(v) ~= "number" then fail(fname, "sigma, amplitude and the means must be numbers") end
  end
  if sh <= 0 or sv <= 0 then fail(fname, "sigma must be positive, got %s", tostring(sh <= 0 and sh or sv)) end
  local dt = a.dtype and to_dtype(fname, a.dtype, "dtype") or torch.get_default_dtype()
  local cx, cy = a.mean_horz * width + 0.5, a.mean_vert * height + 0.5
  local j = torch.arange(1, width + 1, { dtype = torch.float64 }):reshape(1, width)
  local i = torch.arange(1, height + 1, { dtype = torch.float64 }):reshape(height, 1)
  local g = (((j - cx) / (sh * width)) ^ 2 / 2 + ((i - cy) / (sv * height)) ^ 2 / 2):neg():exp() * a.amplitude
  if a.normalize then g = g / g:sum() end
  return g:to(dt)
end

-- image.gaussian1D(size=3, sigma=0.25, amplitude=1, normalize=false, mean=0.5)
function M.gaussian1D(size, sigma, amplitude, normalize, mean)
  local g = M.gaussian { width = size or 3, height = 1, sigma = sigma or 0.25, amplitude = amplitude or 1,
    normalize = normalize or false, mean_horz = mean or 0.5 }
  return g:reshape(g:size(2))
end

-- image.convolve(src, kernel, mode='valid'): true 2-D convolution (the kernel flipped, as
-- Torch7's torch.conv2) of each channel of src with a 2-D kernel; 'full' ((H+kh-1) x
-- (W+kw-1)), 'valid' ((H-kh+1) x (W-kw+1)) or 'same' (H x W, the centre of 'full', as
-- scipy.signal.convolve2d)
function M.convolve(src, kernel, mode)
  local fname = "image.convolve"
  local x = check_image(fname, src, "src", true)
  check_tensor(fname, kernel, "kernel")
  if kernel:dim() ~= 2 then fail(fname, "argument 'kernel' must be 2-D [kh, kw], got shape %s", tostring(kernel.shape)) end
  mode = mode or "valid"   -- Torch7's default
  if mode ~= "full" and mode ~= "valid" and mode ~= "same" then
    fail(fname, "mode must be 'full', 'valid' or 'same', got %s", tostring(mode))
  end
  local kh, kw = kernel:size(1), kernel:size(2)
  local H, W = x:size(-2), x:size(-1)
  if mode == "valid" and (kh > H or kw > W) then
    fail(fname, "a %d x %d kernel is larger than the %d x %d image ('valid' needs kernel <= image)", kh, kw, H, W)
  end
  local b, back = as_batch(x)
  local N, Cn = b:size(1), b:size(2)
  local k = kernel:to(b.dtype):flip({ 1, 2 }):reshape(1, 1, kh, kw)
  local planes = b:reshape(N * Cn, 1, H, W)
  local y
  if mode == "valid" then y = torch.conv2d(planes, k)
  else
    y = torch.conv2d(planes, k, nil, 1, { kh - 1, kw - 1 })   -- full
    if mode == "same" then
      y = y:narrow(3, (kh - 1) // 2 + 1, H):narrow(4, (kw - 1) // 2 + 1, W)
    end
  end
  return back(y:reshape(N, Cn, y:size(3), y:size(4)))
end

return M
