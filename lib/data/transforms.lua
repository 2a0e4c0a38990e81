-- data/transforms.lua — tensor transforms for a single sample ([C, H, W] or
-- [H, W]) or a batch ([N, C, H, W]). Random transforms draw per sample, also
-- inside a batch. Each is a callable object; Compose chains them. Resize, CenterCrop and
-- ColorJitter use lib/image.
local torch = torch or require("torch")
local data_class = require("data.dataset").data_class
local class = require "torch_class"
-- options table for a generator argument: none at all when it is nil (an empty table is not taken as options)
local function G(g) if g ~= nil then return { generator = g } end end
local M = {}

-- the base of every transform: t(x) is t:forward(x)
local Transform = data_class("data.transforms.Transform")
function Transform.__call(self, x) return self:forward(x) end

local Compose = Transform:extend("Compose")
M.Compose = Compose
local COMPOSE = class.signature("data.transforms.Compose", "transforms")
function Compose:__init(...)
  local list = COMPOSE(...).transforms
  if type(list) ~= "table" then
    error("data.transforms.Compose: argument 'transforms' must be a list of transforms, got " .. type(list), 3)
  end
  for k, t in ipairs(list) do
    local mt = getmetatable(t)
    if type(t) ~= "function" and not (mt and mt.__call) then
      error(("data.transforms.Compose: transforms[%d] is not callable (a %s)"):format(k, type(t)), 3)
    end
  end
  self.transforms = list
end
function Compose:forward(x)
  for _, t in ipairs(self.transforms) do x = t(x) end
  return x
end

-- ToFloat(dtype=default float): uint8 -> float in [0, 1] (divided by 255);
-- other dtypes are converted without scaling. ToTensor is the same.
local ToFloat = Transform:extend("ToFloat")
M.ToFloat = ToFloat
M.ToTensor = ToFloat
local TOFLOAT = class.signature("data.transforms.ToFloat", "dtype=nil")
function ToFloat:__init(...)
  local dt = TOFLOAT(...).dtype
  if type(dt) == "string" then dt = torch[dt] end
  if dt ~= nil and not (type(dt) == "table" and dt.is_floating_point ~= nil) then
    error("data.transforms.ToFloat: argument 'dtype' must be a dtype, got " .. tostring(dt), 3)
  end
  self.dtype = dt
end
function ToFloat:forward(x)
  local dt = self.dtype or torch.get_default_dtype()
  if x.dtype == torch.uint8 then return x:to(dt):div_(255) end
  return x:to(dt)
end

-- Normalize(mean, std, inplace=false): (x - mean) / std per channel; numbers or lists
local Normalize = Transform:extend("Normalize")
M.Normalize = Normalize
local NORMALIZE = class.signature("data.transforms.Normalize", "mean, std, inplace=false")
function Normalize:__init(...)
  local a = NORMALIZE(...)
  local mean, std = a.mean, a.std
  if type(mean) == "number" then mean = { mean } end
  if type(std) == "number" then std = { std } end
  if type(mean) ~= "table" or type(std) ~= "table" then
    error("data.transforms.Normalize: mean and std must be numbers or lists of numbers", 3)
  end
  if #mean ~= #std then error("data.transforms.Normalize: mean and std must have the same length", 3) end
  for _, s in ipairs(std) do
    if s == 0 then error("data.transforms.Normalize: std evaluated to zero, leading to division by zero", 3) end
  end
  self.mean, self.std, self.inplace = mean, std, a.inplace
end
function Normalize:forward(x)
  local c = #self.mean
  if not x.dtype.is_floating_point then error("Normalize: input should be a float tensor (use ToFloat first), got " .. x.dtype.name, 2) end
  local m = torch.tensor(self.mean, { dtype = x.dtype })
  local s = torch.tensor(self.std, { dtype = x.dtype })
  if c > 1 then
    local cdim = x:dim() == 4 and 2 or 1
    if x:dim() < 3 or x:size(cdim) ~= c then
      error(("Normalize: %d channel means for an input of shape %s"):format(c, tostring(x.shape)), 2)
    end
    m, s = m:reshape(c, 1, 1), s:reshape(c, 1, 1)
  end
  if self.inplace then return x:sub_(m):div_(s) end
  return (x - m) / s
end

local function rand_uniform(gen) return torch.rand({ 1 }, { generator = gen, dtype = torch.float64 })[1] end
local function rand_int(lo, hi, gen) return torch.randint(lo, hi + 1, { 1 }, G(gen))[1] end

-- RandomHorizontalFlip(p=0.5, {generator=}): flip the last dim with probability p
local RandomHorizontalFlip = Transform:extend("RandomHorizontalFlip")
M.RandomHorizontalFlip = RandomHorizontalFlip
local FLIP = class.signature("data.transforms.RandomHorizontalFlip", "p=0.5, *, generator=nil")
function RandomHorizontalFlip:__init(...)
  local a = FLIP(...)
  if type(a.p) ~= "number" or a.p < 0 or a.p > 1 then
    error("data.transforms.RandomHorizontalFlip: p must be a probability in [0, 1], got " .. tostring(a.p), 3)
  end
  self.p = a.p
  self.generator = a.generator
end
function RandomHorizontalFlip:forward(x)
  if x:dim() == 4 then
    local n = x:size(1)
    local mask = torch.rand({ n }, { generator = self.generator, dtype = torch.float64 }):lt(self.p)
    return torch.where(mask:reshape(n, 1, 1, 1), x:flip({ -1 }), x)
  end
  if rand_uniform(self.generator) < self.p then return x:flip({ -1 }) end
  return x
end

-- RandomCrop(size, padding=nil, pad_if_needed=false, fill=0, padding_mode='constant',
-- {generator=}): a random size window of the input padded by `padding` (a number for every
-- side, {left/right, top/bottom} or {left, top, right, bottom}, torchvision's order); size
-- a number or {h, w}. pad_if_needed pads an input smaller than the crop as torchvision does
-- (by the shortfall on both sides of that dim).
local RandomCrop = Transform:extend("RandomCrop")
M.RandomCrop = RandomCrop
local CROP = class.signature("data.transforms.RandomCrop",
  "size, padding=nil, pad_if_needed=false, fill=0, padding_mode='constant', *, generator=nil")
local function positive_int(v) return math.type(v) == "integer" and v > 0 end
function RandomCrop:__init(...)
  local a = CROP(...)
  local fname = "data.transforms.RandomCrop"
  local size = a.size
  if type(size) == "number" then size = { size, size } end
  if type(size) ~= "table" or #size ~= 2 or not positive_int(size[1]) or not positive_int(size[2]) then
    error(fname .. ": size must be a positive integer or {h, w}, got " .. tostring(a.size), 3)
  end
  local p = a.padding or 0
  if type(p) == "number" then p = { p, p, p, p }
  elseif type(p) == "table" and #p == 2 then p = { p[1], p[2], p[1], p[2] }
  elseif not (type(p) == "table" and #p == 4) then
    error(fname .. ": padding must be a number, {left/right, top/bottom} or {left, top, right, bottom}", 3)
  end
  for _, v in ipairs(p) do
    if math.type(v) ~= "integer" or v < 0 then error(fname .. ": padding must be non-negative integers", 3) end
  end
  if a.padding_mode ~= "constant" then
    error(("%s: padding_mode '%s' is not supported (only 'constant')"):format(fname, tostring(a.padding_mode)), 3)
  end
  if type(a.fill) ~= "number" then error(fname .. ": fill must be a number, got " .. tostring(a.fill), 3) end
  self.h, self.w = size[1], size[2]
  self.pad = p   -- left, top, right, bottom
  self.pad_if_needed = a.pad_if_needed
  self.fill, self.generator = a.fill, a.generator
  self.padding = a.padding or 0
end

-- x padded on its last two dims: left, top, right, bottom
local function pad_hw(x, p, fill)
  local l, t, r, b = p[1], p[2], p[3], p[4]
  if l + t + r + b == 0 then return x end
  local shape = x:size()
  local nd = #shape
  shape[nd - 1], shape[nd] = shape[nd - 1] + t + b, shape[nd] + l + r
  local out = torch.full(shape, fill, { dtype = x.dtype })
  out:narrow(nd - 1, t + 1, x:size(nd - 1)):narrow(nd, l + 1, x:size(nd)):copy_(x)
  return out
end

function RandomCrop:forward(x)
  local nd = x:dim()
  if nd < 2 then error("RandomCrop: input must have at least 2 dims (H, W)", 2) end
  local xp = pad_hw(x, self.pad, self.fill)
  local H, W = xp:size(nd - 1), xp:size(nd)
  if self.pad_if_needed and (H < self.h or W < self.w) then
    local dw, dh = math.max(0, self.w - W), math.max(0, self.h - H)
    xp = pad_hw(xp, { dw, dh, dw, dh }, self.fill)
    H, W = xp:size(nd - 1), xp:size(nd)
  end
  if H < self.h or W < self.w then
    error(("RandomCrop: crop size (%d, %d) is larger than the padded input (%d, %d)"):format(self.h, self.w, H, W), 2)
  end
  local function crop(t)
    local i, j = rand_int(1, H - self.h + 1, self.generator), rand_int(1, W - self.w + 1, self.generator)
    return t:narrow(t:dim() - 1, i, self.h):narrow(t:dim(), j, self.w)
  end
  if nd == 4 then
    local shape = xp:size()
    shape[3], shape[4] = self.h, self.w
    local out = torch.empty(shape, { dtype = x.dtype })
    for n = 1, xp:size(1) do out[n]:copy_(crop(xp[n])) end
    return out
  end
  return crop(xp):contiguous()
end

-- the image library, loaded when an image transform is first made
local function image_lib() return require "image" end

-- Resize(size, interpolation='bilinear', max_size=nil, antialias=false): torchvision's,
-- through image.resize: size {h, w}, or a number the shorter side becomes; interpolation
-- 'bilinear', 'bicubic' or 'nearest'. uint8 images stay uint8 (rounded).
local Resize = Transform:extend("Resize")
M.Resize = Resize
local RESIZE = class.signature("data.transforms.Resize", "size, interpolation='bilinear', max_size=nil, antialias=false")
function Resize:__init(...)
  local a = RESIZE(...)
  local fname = "data.transforms.Resize"
  local size = a.size
  local ok = positive_int(size) or (type(size) == "table" and (#size == 1 or #size == 2) and positive_int(size[1])
    and (size[2] == nil or positive_int(size[2])))
  if not ok then error(fname .. ": size must be a positive integer or {h, w}, got " .. tostring(size), 3) end
  local modes = { bilinear = true, bicubic = true, nearest = true }
  if not modes[a.interpolation] then
    error(fname .. ": interpolation must be 'bilinear', 'bicubic' or 'nearest', got " .. tostring(a.interpolation), 3)
  end
  self.size, self.interpolation, self.max_size, self.antialias = size, a.interpolation, a.max_size, a.antialias
end
function Resize:forward(x)
  return image_lib().resize(x, self.size, self.interpolation, self.max_size, self.antialias)
end

-- CenterCrop(size): the centre size x size (or {h, w}) window, torchvision's rounding
local CenterCrop = Transform:extend("CenterCrop")
M.CenterCrop = CenterCrop
local CENTERCROP = class.signature("data.transforms.CenterCrop", "size")
function CenterCrop:__init(...)
  local size = CENTERCROP(...).size
  local ok = positive_int(size) or (type(size) == "table" and (#size == 1 or #size == 2) and positive_int(size[1])
    and (size[2] == nil or positive_int(size[2])))
  if not ok then
    error("data.transforms.CenterCrop: size must be a positive integer or {h, w}, got " .. tostring(size), 3)
  end
  self.size = size
end
function CenterCrop:forward(x) return image_lib().center_crop(x, self.size) end

-- ColorJitter(brightness=0, contrast=0, saturation=0, hue=0, {generator=}): torchvision's:
-- each a number b (a factor drawn from [max(0, 1 - b), 1 + b]; hue: a shift from [-h, h],
-- h <= 0.5) or a range {lo, hi}; the four adjustments in a random order. Images are RGB
-- [3, H, W] (or a batch, drawn per sample), floating in [0, 1] or uint8 (rounded back).
local ColorJitter = Transform:extend("ColorJitter")
M.ColorJitter = ColorJitter
local JITTER = class.signature("data.transforms.ColorJitter",
  "brightness=0, contrast=0, saturation=0, hue=0, *, generator=nil")
function ColorJitter:__init(...)
  local a = JITTER(...)
  local fname = "data.transforms.ColorJitter"
  local function range(name, v, center, bound, clip)
    if type(v) == "number" then
      if v < 0 then error(("%s: %s must be non-negative, got %s"):format(fname, name, tostring(v)), 4) end
      if v == 0 then return nil end
      local lo, hi = center - v, center + v
      if clip then lo = math.max(lo, 0) end
      v = { lo, hi }
    end
    if type(v) ~= "table" or type(v[1]) ~= "number" or type(v[2]) ~= "number" or v[1] > v[2]
      or v[1] < bound[1] or v[2] > bound[2] then
      error(("%s: %s must be a number or a range {lo, hi} within [%s, %s], got %s"):format(fname, name,
        tostring(bound[1]), tostring(bound[2]), type(v) == "table" and ("{%s, %s}"):format(tostring(v[1]),
        tostring(v[2])) or tostring(v)), 4)
    end
    if v[1] == center and v[2] == center then return nil end
    return v
  end
  self.brightness = range("brightness", a.brightness, 1, { 0, math.huge }, true)
  self.contrast = range("contrast", a.contrast, 1, { 0, math.huge }, true)
  self.saturation = range("saturation", a.saturation, 1, { 0, math.huge }, true)
  self.hue = range("hue", a.hue, 0, { -0.5, 0.5 }, false)
  self.generator = a.generator
end

local function blend(x, y, r) return (x * r + y * (1 - r)):clamp(0, 1) end

function ColorJitter:jitter(x)
  local image = image_lib()
  local gen = self.generator
  local order = torch.randperm(4, G(gen)):totable()
  local function draw(r) return r[1] + (r[2] - r[1]) * rand_uniform(gen) end
  local f = {}
  if self.brightness then f[1] = draw(self.brightness) end
  if self.contrast then f[2] = draw(self.contrast) end
  if self.saturation then f[3] = draw(self.saturation) end
  if self.hue then f[4] = draw(self.hue) end
  for _, k in ipairs(order) do
    k = math.tointeger(k) + 1
    if f[k] then
      if k == 1 then x = blend(x, torch.zeros_like(x), f[1])
      elseif k == 2 then x = blend(x, torch.full_like(x, image.rgb2y(x):mean():item()), f[2])
      elseif k == 3 then x = blend(x, image.rgb2y(x):expand(3, x:size(2), x:size(3)), f[3])
      else
        local hsv = image.rgb2hsv(x)
        hsv[1] = (hsv[1] + f[4]):remainder(1.0)
        x = image.hsv2rgb(hsv):to(x.dtype)
      end
    end
  end
  return x
end

function ColorJitter:forward(x)
  local fname = "ColorJitter"
  local c = x:dim() == 4 and 2 or 1
  if (x:dim() ~= 3 and x:dim() ~= 4) or x:size(c) ~= 3 then
    error(("%s: input must be an RGB image [3, H, W] or a batch [N, 3, H, W], got shape %s"):format(fname,
      tostring(x.shape)), 2)
  end
  local dt = x.dtype
  local f = dt.is_floating_point and x or x:to(torch.float32):div(255)
  local out
  if x:dim() == 4 then
    out = torch.empty_like(f)
    for i = 1, f:size(1) do out[i]:copy_(self:jitter(f[i])) end
  else
    out = self:jitter(f)
  end
  if dt.is_floating_point then return out end
  return out:mul(255):round():clamp(0, 255):to(dt)
end

return M
