-- data/transforms.lua — tensor transforms for a single sample ([C, H, W] or
-- [H, W]) or a batch ([N, C, H, W]). Random transforms draw per sample, also
-- inside a batch. Each is a callable object; Compose chains them.
local torch = torch or require("torch")
local data_class = require("data.dataset").data_class
local check_options = require("torch_class").check_options
-- options table for a generator argument: none at all when it is nil (an empty table is not taken as options)
local function G(g) if g ~= nil then return { generator = g } end end
local M = {}

-- the base of every transform: t(x) is t:forward(x)
local Transform = data_class("data.transforms.Transform")
function Transform.__call(self, x) return self:forward(x) end

local Compose = Transform:extend("Compose")
M.Compose = Compose
function Compose:__init(list) self.transforms = list end
function Compose:forward(x)
  for _, t in ipairs(self.transforms) do x = t(x) end
  return x
end

-- ToFloat(dtype=default float): uint8 -> float in [0, 1] (divided by 255);
-- other dtypes are converted without scaling. ToTensor is the same.
local ToFloat = Transform:extend("ToFloat")
M.ToFloat = ToFloat
M.ToTensor = ToFloat
function ToFloat:__init(dtype) self.dtype = dtype end
function ToFloat:forward(x)
  local dt = self.dtype or torch.get_default_dtype()
  if x.dtype == torch.uint8 then return x:to(dt):div_(255) end
  return x:to(dt)
end

-- Normalize(mean, std): (x - mean) / std per channel; numbers or lists
local Normalize = Transform:extend("Normalize")
M.Normalize = Normalize
function Normalize:__init(mean, std)
  if type(mean) == "number" then mean = { mean } end
  if type(std) == "number" then std = { std } end
  if #mean ~= #std then error("Normalize: mean and std must have the same length", 3) end
  for _, s in ipairs(std) do
    if s == 0 then error("Normalize: std evaluated to zero, leading to division by zero", 3) end
  end
  self.mean, self.std = mean, std
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
  return (x - m) / s
end

local function rand_uniform(gen) return torch.rand({ 1 }, { generator = gen, dtype = torch.float64 })[1] end
local function rand_int(lo, hi, gen) return torch.randint(lo, hi + 1, { 1 }, G(gen))[1] end

-- RandomHorizontalFlip(p=0.5): flip the last dim with probability p
local RandomHorizontalFlip = Transform:extend("RandomHorizontalFlip")
M.RandomHorizontalFlip = RandomHorizontalFlip
local FLIP_OPTS = { "generator" }
function RandomHorizontalFlip:__init(p, opts)
  opts = check_options("data.transforms.RandomHorizontalFlip", opts, FLIP_OPTS)
  self.p = p or 0.5
  self.generator = opts.generator
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

-- RandomCrop(size, {padding=0, fill=0, generator=}): a random size window of
-- the input padded by `padding` on each side; size a number or {h, w}
local RandomCrop = Transform:extend("RandomCrop")
M.RandomCrop = RandomCrop
local CROP_OPTS = { "padding", "fill", "generator" }
function RandomCrop:__init(size, opts)
  opts = check_options("data.transforms.RandomCrop", opts, CROP_OPTS)
  if type(size) == "number" then size = { size, size } end
  self.h, self.w = size[1], size[2]
  self.padding, self.fill, self.generator = opts.padding or 0, opts.fill or 0, opts.generator
end

local function pad_hw(x, p, fill)
  if p == 0 then return x end
  local shape = x:size()
  local nd = #shape
  shape[nd - 1], shape[nd] = shape[nd - 1] + 2 * p, shape[nd] + 2 * p
  local out = torch.full(shape, fill, { dtype = x.dtype })
  out:narrow(nd - 1, p + 1, x:size(nd - 1)):narrow(nd, p + 1, x:size(nd)):copy_(x)
  return out
end

function RandomCrop:forward(x)
  local nd = x:dim()
  if nd < 2 then error("RandomCrop: input must have at least 2 dims (H, W)", 2) end
  local xp = pad_hw(x, self.padding, self.fill)
  local H, W = xp:size(nd - 1), xp:size(nd)
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

return M
