-- t7nn/criteria.lua — the losses (nn.Criterion's subclasses), the criteria that combine
-- others (MultiCriterion, ParallelCriterion, ModuleCriterion), CriterionTable (a criterion
-- as a module) and nn.StochasticGradient, Torch7's trainer.
--
-- A criterion's forward(input, target) returns a number (self.output); backward(input,
-- target) returns d loss / d input in self.gradInput (a tensor, or a table of two for the
-- criteria over pairs). sizeAverage (true by default) divides the sum by the element count
-- (or the batch size, or the total weight, as each criterion says). Class targets are
-- 1-based; a target may be a number or a tensor of any type.
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local fail, sizestr, check_tensor = H.fail, H.sizestr, H.check_tensor

---------------------------------------------------------------------------------------------
-- helpers

-- a buffer tensor of self (created on first use), of like's type
local function buffer(self, name, like)
  local b = rawget(self, name)
  if b == nil or torch.type(b) ~= torch.type(like) then
    b = like.new()
    self[name] = b
  end
  return b
end

-- target as a tensor shaped and typed as input: Torch7's element-wise criteria pair the
-- elements of input and target in order, whatever their shapes
local function paired(self, input, target)
  check_tensor(self, input, "input")
  check_tensor(self, target, "target")
  if input:nElement() ~= target:nElement() then
    fail(self, ("input and target size mismatch (input %s, target %s)")
      :format(sizestr(input), sizestr(target)), 3)
  end
  if torch.type(target) ~= torch.type(input) then target = target:type(torch.type(input)) end
  if not target:isSameSizeAs(input) then target = target:contiguous():view(input:size()) end
  return target
end

local function norm_of(self, input)
  return self.sizeAverage and 1 / input:nElement() or 1
end

local function sizeAverageArg(v)
  if v == nil then return true end
  return v
end

-- a class target (number or 1-element tensor) as a number
local function class_number(self, target)
  if type(target) == "number" then return target end
  if torch.isTensor(target) and target:nElement() == 1 then
    return target:contiguous():view(1)[1]
  end
  fail(self, "target must be a class number (or a tensor of one element) for a 1-D input, got "
    .. sizestr(target), 3)
end

local function as_long(target)
  if torch.type(target) == "torch.LongTensor" then return target end
  return target:long()
end

local function check_weights(self, weights)
  if weights ~= nil and (not torch.isTensor(weights) or weights:dim() ~= 1) then
    fail(self, "weights input should be 1-D Tensor", 3)
  end
end

---------------------------------------------------------------------------------------------
-- nn.MSECriterion([sizeAverage = true]): sum of (input - target)^2, divided by the element
-- count when sizeAverage
local MSECriterion, MSEparent = torch.class("nn.MSECriterion", "nn.Criterion")

function MSECriterion:__init(sizeAverage)
  MSEparent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
end

-- the squared error of input and a target already shaped as input
local function mse_forward(self, input, target)
  local d = buffer(self, "_diff", input)
  d:resizeAs(input):copy(input):add(-1, target)
  local sum = d:dot(d)
  if self.sizeAverage then sum = sum / input:nElement() end
  self.output = sum
  return sum
end

local function mse_backward(self, input, target)
  self.gradInput:resizeAs(input):copy(input):add(-1, target):mul(2 * norm_of(self, input))
  return self.gradInput
end

function MSECriterion:updateOutput(input, target)
  return mse_forward(self, input, paired(self, input, target))
end

function MSECriterion:updateGradInput(input, target)
  return mse_backward(self, input, paired(self, input, target))
end

---------------------------------------------------------------------------------------------
-- nn.SpatialAutoCropMSECriterion([sizeAverage]): MSE of an input (C x H x W or N x C x H x
-- W) and the centre of a target at least as large in height and width
local AutoCrop, AutoCropParent = torch.class("nn.SpatialAutoCropMSECriterion", "nn.MSECriterion")

function AutoCrop:__init(sizeAverage)
  AutoCropParent.__init(self, sizeAverage)
end

local function centre_crop(self, input, target)
  check_tensor(self, input, "input")
  check_tensor(self, target, "target")
  local d = input:dim()
  if d ~= 3 and d ~= 4 then
    fail(self, "input and target must have 3 or 4 dimensions, got input " .. sizestr(input), 3)
  end
  if target:dim() ~= d then
    fail(self, ("input and target should have the same number of dimensions (input %s, target %s)")
      :format(sizestr(input), sizestr(target)), 3)
  end
  for i = 1, d - 2 do
    if input:size(i) ~= target:size(i) then
      fail(self, ("input and target must have the same %s (input %s, target %s)")
        :format((d == 4 and i == 1) and "batch size" or "number of channels",
          sizestr(input), sizestr(target)), 3)
    end
  end
  local h, w = input:size(d - 1), input:size(d)
  local th, tw = target:size(d - 1), target:size(d)
  if h > th or w > tw then
    fail(self, ("spatial resolution of input should be less than or equal to the target's (input %s, target %s)")
      :format(sizestr(input), sizestr(target)), 3)
  end
  local top = 1 + math.floor((th - h) / 2)
  local left = 1 + math.floor((tw - w) / 2)
  target = target:narrow(d - 1, top, h):narrow(d, left, w)
  if torch.type(target) ~= torch.type(input) then target = target:type(torch.type(input)) end
  return target
end

function AutoCrop:updateOutput(input, target)
  return mse_forward(self, input, centre_crop(self, input, target))
end

-- (Torch7's took a target of the input's size only; a larger one is cropped here too)
function AutoCrop:updateGradInput(input, target)
  return mse_backward(self, input, centre_crop(self, input, target))
end

---------------------------------------------------------------------------------------------
-- nn.WeightedMSECriterion(weight): MSE of input and target * weight (weight the shape of one
-- sample; a batch has one more leading dim)
local WeightedMSE, WeightedMSEParent = torch.class("nn.WeightedMSECriterion", "nn.MSECriterion")

function WeightedMSE:__init(w)
  WeightedMSEParent.__init(self)
  if not torch.isTensor(w) then fail(self, "weight tensor expected, got " .. torch.type(w), 2) end
  self.weight = w:clone()
end

local function weighted_target(self, input, target)
  check_tensor(self, input, "input")
  check_tensor(self, target, "target")
  local b = buffer(self, "buffer", input)
  if input:nElement() ~= target:nElement() then
    fail(self, ("input and target size mismatch (input %s, target %s)")
      :format(sizestr(input), sizestr(target)), 3)
  end
  b:resizeAs(input):copy(target)
  local w = self.weight
  if torch.type(w) ~= torch.type(input) then w = w:type(torch.type(input)) end
  if input:dim() - 1 == w:dim() and input:nElement() == input:size(1) * w:nElement() then
    b:view(input:size(1), w:nElement()):cmul(w:contiguous():view(1, -1):expand(input:size(1), w:nElement()))
  elseif w:nElement() == input:nElement() then
    b:cmul(w:contiguous():viewAs(b))
  else
    fail(self, ("weight %s does not fit input %s"):format(sizestr(w), sizestr(input)), 3)
  end
  return b
end

function WeightedMSE:updateOutput(input, target)
  return mse_forward(self, input, weighted_target(self, input, target))
end

function WeightedMSE:updateGradInput(input, target)
  return mse_backward(self, input, weighted_target(self, input, target))
end

---------------------------------------------------------------------------------------------
-- nn.ClassSimplexCriterion(nClasses): MSE of the input and the target class's vertex of a
-- regular simplex centred at 0 (unit vertices, embedded in nClasses dims)
local ClassSimplex, ClassSimplexParent = torch.class("nn.ClassSimplexCriterion", "nn.MSECriterion")

-- the n + 1 vertices (rows) of a regular simplex of unit vectors in n dims, centred at 0
local function simplex_vertices(n)
  local a = torch.zeros(n + 1, n)
  for k = 1, n do
    local akk
    if k == 1 then akk = 1
    else
      local s = a[k]:narrow(1, 1, k - 1)
      akk = math.sqrt(1 - s:dot(s))
    end
    a[k][k] = akk
    if k + 1 <= n + 1 then
      a:narrow(1, k + 1, n + 1 - k):select(2, k):fill((akk * akk - 1 - 1 / n) / akk)
    end
  end
  return a
end

function ClassSimplex:__init(nClasses)
  ClassSimplexParent.__init(self)
  if math.type(nClasses) == nil or nClasses <= 1 or nClasses % 1 ~= 0 then
    fail(self, "Required positive integer argument nClasses > 1", 2)
  end
  nClasses = math.tointeger(nClasses)
  self.nClasses = nClasses
  local simp = simplex_vertices(nClasses - 1)
  self.simplex = torch.zeros(nClasses, nClasses)
  self.simplex:narrow(2, 1, nClasses - 1):copy(simp)
  self._target = torch.Tensor(nClasses)
end

local function simplex_target(self, input, target)
  check_tensor(self, input, "input")
  local simplex = self.simplex
  if torch.type(simplex) ~= torch.type(input) then simplex = simplex:type(torch.type(input)) end
  local tt = buffer(self, "_target", input)
  if type(target) == "number" then
    if target < 1 or target > self.nClasses or target % 1 ~= 0 then
      fail(self, ("target %s out of range [1, %d]"):format(tostring(target), self.nClasses), 3)
    end
    tt:resize(self.nClasses):copy(simplex[target])
  elseif torch.isTensor(target) then
    if target:dim() ~= 1 then fail(self, "target must be a number or a 1-D tensor, got " .. sizestr(target), 3) end
    local idx = as_long(target)
    if idx:nElement() > 0 and (idx:min() < 1 or idx:max() > self.nClasses) then
      fail(self, ("target out of range [1, %d]"):format(self.nClasses), 3)
    end
    tt:resize(idx:size(1), self.nClasses):index(simplex, 1, idx)
  else
    fail(self, "target must be a number or a 1-D tensor, got " .. torch.type(target), 3)
  end
  if input:nElement() ~= tt:nElement() then
    fail(self, ("input %s does not match the target's %s"):format(sizestr(input), sizestr(tt)), 3)
  end
  if not tt:isSameSizeAs(input) then return tt:view(input:size()) end
  return tt
end

function ClassSimplex:updateOutput(input, target)
  return mse_forward(self, input, simplex_target(self, input, target))
end

function ClassSimplex:updateGradInput(input, target)
  return mse_backward(self, input, simplex_target(self, input, target))
end

-- the dot products of the input (a vector or a batch) with every class's vertex
function ClassSimplex:getPredictions(input)
  if input:dim() == 1 then input = input:view(1, -1) end
  local simplex = self.simplex
  if torch.type(simplex) ~= torch.type(input) then simplex = simplex:type(torch.type(input)) end
  return torch.mm(input, simplex:t())
end

function ClassSimplex:getTopPrediction(input)
  local prod = self:getPredictions(input)
  local _, idx = prod:max(prod:dim())
  return idx:view(-1)
end

---------------------------------------------------------------------------------------------
-- nn.AbsCriterion([sizeAverage]): sum of |input - target|
local AbsCriterion, AbsParent = torch.class("nn.AbsCriterion", "nn.Criterion")

function AbsCriterion:__init(sizeAverage)
  AbsParent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
end

function AbsCriterion:updateOutput(input, target)
  target = paired(self, input, target)
  local d = buffer(self, "_diff", input)
  d:resizeAs(input):copy(input):add(-1, target):abs()
  self.output = d:sum() * norm_of(self, input)
  return self.output
end

-- +-1 (scaled): +1 where input >= target
function AbsCriterion:updateGradInput(input, target)
  target = paired(self, input, target)
  local mask = buffer(self, "_mask", torch.ByteTensor())
  mask:ge(input, target)
  local n = norm_of(self, input)
  self.gradInput:resizeAs(input):copy(mask):mul(2 * n):add(-n)
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.SmoothL1Criterion([sizeAverage]): 0.5 d^2 where |d| < 1, else |d| - 0.5 (d = input -
-- target), summed
local SmoothL1, SmoothL1Parent = torch.class("nn.SmoothL1Criterion", "nn.Criterion")

function SmoothL1:__init(sizeAverage)
  SmoothL1Parent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
end

function SmoothL1:updateOutput(input, target)
  target = paired(self, input, target)
  local a = buffer(self, "_diff", input)
  a:resizeAs(input):copy(input):add(-1, target):abs()
  local c = buffer(self, "_clamped", input)
  c:resizeAs(a):copy(a):clamp(0, 1)
  -- c (a - c/2) is a^2/2 below 1 and a - 1/2 above
  self.output = (c:dot(a) - 0.5 * c:dot(c)) * norm_of(self, input)
  return self.output
end

function SmoothL1:updateGradInput(input, target)
  target = paired(self, input, target)
  self.gradInput:resizeAs(input):copy(input):add(-1, target):clamp(-1, 1):mul(norm_of(self, input))
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.MarginCriterion([margin = 1]): sum of max(0, margin - input * target), targets +-1
local MarginCriterion, MarginParent = torch.class("nn.MarginCriterion", "nn.Criterion")

function MarginCriterion:__init(margin)
  MarginParent.__init(self)
  self.sizeAverage = true
  self.margin = margin or 1
end

function MarginCriterion:updateOutput(input, target)
  target = paired(self, input, target)
  local z = buffer(self, "_buffer", input)
  z:resizeAs(input):copy(input):cmul(target):mul(-1):add(self.margin):cmax(0)
  self.output = z:sum() * norm_of(self, input)
  return self.output
end

-- -target (scaled) where input * target < margin
function MarginCriterion:updateGradInput(input, target)
  target = paired(self, input, target)
  local p = buffer(self, "_buffer", input)
  p:resizeAs(input):copy(input):cmul(target)
  local mask = buffer(self, "_mask", torch.ByteTensor())
  mask:lt(p, self.margin)
  self.gradInput:resizeAs(input):copy(mask):cmul(target):mul(-norm_of(self, input))
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.SoftMarginCriterion(): sum of log(1 + exp(-input * target)), targets +-1
local SoftMargin, SoftMarginParent = torch.class("nn.SoftMarginCriterion", "nn.Criterion")

function SoftMargin:__init()
  SoftMarginParent.__init(self)
  self.sizeAverage = true
end

-- log(1 + exp(v)) = max(v, 0) + log(1 + exp(-|v|)), without overflow
local function softplus_sum(self, v)
  local a = buffer(self, "_abs", v)
  a:resizeAs(v):copy(v):abs():mul(-1):exp():log1p()
  local m = buffer(self, "_pos", v)
  m:resizeAs(v):copy(v):cmax(0)
  return a:sum() + m:sum()
end

function SoftMargin:updateOutput(input, target)
  target = paired(self, input, target)
  local v = buffer(self, "_buffer", input)
  v:resizeAs(input):copy(input):cmul(target):mul(-1)
  self.output = softplus_sum(self, v) * norm_of(self, input)
  return self.output
end

-- -target * sigmoid(-input * target) (scaled)
function SoftMargin:updateGradInput(input, target)
  target = paired(self, input, target)
  self.gradInput:resizeAs(input):copy(input):cmul(target):mul(-1):sigmoid()
    :cmul(target):mul(-norm_of(self, input))
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.DistKLDivCriterion(): the KL divergence of target from exp(input) (input holds
-- log-probabilities): sum of target (log target - input) over target > 0
local DistKLDiv, DistKLDivParent = torch.class("nn.DistKLDivCriterion", "nn.Criterion")

function DistKLDiv:__init(sizeAverage)
  DistKLDivParent.__init(self)
  -- Torch7's took no argument (sizeAverage is a field); a boolean sets it
  self.sizeAverage = sizeAverageArg(sizeAverage)
end

local function kl_pair(self, input, target)
  check_tensor(self, input, "input")
  check_tensor(self, target, "target")
  if input:dim() ~= target:dim() or not input:isSameSizeAs(target) then
    fail(self, ("input and target should have the same size (input %s, target %s)")
      :format(sizestr(input), sizestr(target)), 3)
  end
  if torch.type(target) ~= torch.type(input) then target = target:type(torch.type(input)) end
  local mask = buffer(self, "_mask", torch.ByteTensor())
  mask:gt(target, 0)
  return target, mask
end

function DistKLDiv:updateOutput(input, target)
  local mask
  target, mask = kl_pair(self, input, target)
  -- log of target where positive (1 elsewhere, where the term is 0)
  local lt = buffer(self, "_log", input)
  lt:resizeAs(target):copy(target):maskedFill(torch.eq(mask, 0), 1):log():add(-1, input)
  local tm = buffer(self, "_tpos", input)
  tm:resizeAs(target):copy(mask):cmul(target)
  self.output = tm:dot(lt) * norm_of(self, input)
  return self.output
end

function DistKLDiv:updateGradInput(input, target)
  local mask
  target, mask = kl_pair(self, input, target)
  self.gradInput:resizeAs(input):copy(mask):cmul(target):mul(-norm_of(self, input))
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.L1Cost(): sum of |input| (the target is not used)
local L1Cost, L1CostParent = torch.class("nn.L1Cost", "nn.Criterion")

function L1Cost:__init()
  L1CostParent.__init(self)
end

function L1Cost:updateOutput(input)
  check_tensor(self, input, "input")
  self.output = input:norm(1)
  return self.output
end

function L1Cost:updateGradInput(input)
  check_tensor(self, input, "input")
  self.gradInput:resizeAs(input):copy(input):sign()
  return self.gradInput
end

function L1Cost:clearState()
  if self.output_tensor then self.output_tensor:set() end
  return nn.utils.clear(self, "gradInput")
end

---------------------------------------------------------------------------------------------
-- nn.BCECriterion([weights] [, sizeAverage]): -sum w (t log(x + eps) + (1 - t) log(1 - x +
-- eps)), eps = 1e-12, inputs probabilities in [0, 1]; weights over the last dim (one per
-- element of a sample)
local BCECriterion, BCEParent = torch.class("nn.BCECriterion", "nn.Criterion")

local BCE_EPS = 1e-12

function BCECriterion:__init(weights, sizeAverage)
  BCEParent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
  check_weights(self, weights)
  self.weights = weights
end

function BCECriterion:__len()
  return self.weights and self.weights:nElement() or 0
end

local function bce_weights(self, input, target)
  local w = self.weights
  if w == nil then return nil end
  if torch.type(w) ~= torch.type(input) then w = w:type(torch.type(input)) end
  if target:dim() ~= 1 then
    if target:size(target:dim()) ~= w:nElement() then
      fail(self, ("weights %s do not fit target %s"):format(sizestr(w), sizestr(target)), 3)
    end
    w = w:view(1, w:nElement()):expand(input:nElement() / w:nElement(), w:nElement())
  elseif w:nElement() ~= input:nElement() then
    fail(self, ("weights %s do not fit input %s"):format(sizestr(w), sizestr(input)), 3)
  end
  return w:contiguous():view(input:size())
end

function BCECriterion:updateOutput(input, target)
  local t = paired(self, input, target)
  if input:nElement() > 0 and (input:min() < 0 or input:max() > 1) then
    fail(self, "input value should be between 0~1", 2)
  end
  local w = bce_weights(self, input, target)
  local lx = buffer(self, "_logx", input)
  local l1x = buffer(self, "_log1mx", input)
  lx:resizeAs(input):copy(input):add(BCE_EPS):log():cmul(t)
  -- (1 - t) log(1 - x + eps)
  l1x:resizeAs(input):copy(input):mul(-1):add(1 + BCE_EPS):log()
  local omt = buffer(self, "_omt", input)
  omt:resizeAs(t):copy(t):mul(-1):add(1)
  l1x:cmul(omt):add(lx)
  local sum = w and -l1x:dot(w) or -l1x:sum()
  self.output = sum * norm_of(self, input)
  return self.output
end

-- -(t - x) / ((1 - x + eps)(x + eps)), scaled and weighted
function BCECriterion:updateGradInput(input, target)
  local t = paired(self, input, target)
  local w = bce_weights(self, input, target)
  local den = buffer(self, "_den", input)
  den:resizeAs(input):copy(input):mul(-1):add(1 + BCE_EPS)
  local xe = buffer(self, "_xe", input)
  xe:resizeAs(input):copy(input):add(BCE_EPS)
  den:cmul(xe)
  self.gradInput:resizeAs(input):copy(input):add(-1, t):cdiv(den):mul(norm_of(self, input))
  if w then self.gradInput:cmul(w) end
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.ClassNLLCriterion([weights] [, sizeAverage = true] [, ignoreIndex = -100]): -weights[t]
-- * input[t] for log-probabilities input (n_classes, or batch x n_classes) and 1-based class
-- targets t; sizeAverage divides by the total weight of the targets; targets equal to
-- ignoreIndex count for nothing
local ClassNLL, ClassNLLParent = torch.class("nn.ClassNLLCriterion", "nn.Criterion")

function ClassNLL:__init(weights, sizeAverage, ignoreIndex)
  ClassNLLParent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
  self.ignoreIndex = ignoreIndex or -100
  check_weights(self, weights)
  self.weights = weights
  self.output_tensor = torch.zeros(1)
  self.total_weight_tensor = torch.ones(1)
  self.target = torch.zeros(1):long()
end

function ClassNLL:__len()
  return self.weights and self.weights:nElement() or 0
end

-- the weights as the kernel takes them (of the input's type), checked against n classes
local function nll_weights(self, input, nClasses)
  local w = self.weights
  if w == nil then return nil end
  if w:nElement() ~= nClasses then
    fail(self, ("weight tensor should be defined either for all %d classes or no classes but got weight tensor of shape: %s")
      :format(nClasses, sizestr(w)), 3)
  end
  if torch.type(w) ~= torch.type(input) then
    local c = rawget(self, "_weights_cast")
    if not c or torch.type(c) ~= torch.type(input) or c:nElement() ~= w:nElement() then
      c = w:type(torch.type(input))
      self._weights_cast = c
    else
      c:copy(w)
    end
    w = c
  end
  return w
end

-- the 0-d gradient of a sum, by dtype
local ones = {}
local function one_of(t)
  local k = torch.type(t)
  local o = ones[k]
  if not o then o = t.new(1):fill(1):view(torch.LongStorage({})); ones[k] = o end
  return o
end

-- 1-D input: one class, computed here; returns the loss and the target's weight
local function nll_single(self, input, target)
  local t = class_number(self, target)
  if t == self.ignoreIndex then return 0, 0 end
  local n = input:size(1)
  if t < 1 or t > n or t % 1 ~= 0 then
    fail(self, ("target %s out of range [1, %d]"):format(tostring(t), n), 3)
  end
  local w = self.weights and self.weights[t] or 1
  return t, w
end

function ClassNLL:updateOutput(input, target)
  check_tensor(self, input, "input")
  local d = input:dim()
  if d == 1 then
    nll_weights(self, input, input:size(1))
    local t, w = nll_single(self, input, target)
    local out = 0
    if w ~= 0 then
      out = -input[t] * w
      if self.sizeAverage then out = out / w end
    end
    self.output_tensor[1] = out
    self.total_weight_tensor[1] = w
    self.output = out
    return out, w
  elseif d ~= 2 then
    fail(self, "input tensor should be 1D or 2D, got " .. sizestr(input), 2)
  end
  if type(target) == "number" then
    target = torch.LongTensor({ target })
  elseif not torch.isTensor(target) then
    fail(self, "target must be a number or a tensor, got " .. torch.type(target), 2)
  end
  if target:dim() > 1 then
    if target:nElement() == target:size(1) then target = target:view(-1)
    else fail(self, "multi-target not supported (target " .. sizestr(target) .. ")", 2) end
  end
  if target:size(1) ~= input:size(1) then
    fail(self, ("batch size mismatch: input %s, target %s"):format(sizestr(input), sizestr(target)), 2)
  end
  target = as_long(target)
  self.target = target
  local w = nll_weights(self, input, input:size(2))
  local ok, out, tw = pcall(torch.nll_loss_forward, input, target, w, "sum", self.ignoreIndex)
  if not ok then fail(self, tostring(out), 2) end
  self._total_weight = tw
  local total = tw:item()
  out = out:item()
  if self.sizeAverage and total ~= 0 then out = out / total end
  self.output_tensor[1] = out
  self.total_weight_tensor[1] = total
  self.output = out
  return out, total
end

function ClassNLL:updateGradInput(input, target)
  check_tensor(self, input, "input")
  local d = input:dim()
  if d == 1 then
    self.gradInput:resizeAs(input):zero()
    nll_weights(self, input, input:size(1))
    local t, w = nll_single(self, input, target)
    if w ~= 0 and self.total_weight_tensor[1] > 0 then
      self.gradInput[t] = (not self.sizeAverage and self.weights) and -w or -1
    end
    return self.gradInput
  elseif d ~= 2 then
    fail(self, "input tensor should be 1D or 2D, got " .. sizestr(input), 2)
  end
  if type(target) == "number" then target = torch.LongTensor({ target }) end
  check_tensor(self, target, "target")
  if target:dim() > 1 and target:nElement() == target:size(1) then target = target:view(-1) end
  if target:dim() ~= 1 or target:size(1) ~= input:size(1) then
    fail(self, ("batch size mismatch: input %s, target %s"):format(sizestr(input), sizestr(target)), 2)
  end
  target = as_long(target)
  local total = self.total_weight_tensor[1]
  if not (total > 0) then
    self.gradInput:resizeAs(input):zero()
    return self.gradInput
  end
  local tw = rawget(self, "_total_weight")
  if tw == nil or torch.type(tw) ~= torch.type(input) then
    tw = input.new(1):fill(total):view(torch.LongStorage({}))
  end
  local w = nll_weights(self, input, input:size(2))
  local ok, g = pcall(torch.nll_loss_backward, one_of(input), input, target, w,
    self.sizeAverage and "mean" or "sum", self.ignoreIndex, tw)
  if not ok then fail(self, tostring(g), 2) end
  if torch.type(self.gradInput) == torch.type(g) then self.gradInput:set(g) else self.gradInput = g end
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.SpatialClassNLLCriterion([weights] [, sizeAverage]): ClassNLLCriterion at every pixel:
-- input N x C x H x W log-probabilities, target N x H x W classes; sizeAverage divides by
-- the total weight
local SpatialNLL, SpatialNLLParent = torch.class("nn.SpatialClassNLLCriterion", "nn.Criterion")

function SpatialNLL:__init(weights, sizeAverage)
  SpatialNLLParent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
  check_weights(self, weights)
  self.weights = weights
  self.output_tensor = torch.zeros(1)
  self.total_weight_tensor = torch.ones(1)
  self.target = torch.zeros(1):long()
end

function SpatialNLL:__len()
  return self.weights and self.weights:nElement() or 0
end

local function spatial_check(self, input, target)
  check_tensor(self, input, "input")
  check_tensor(self, target, "target")
  if input:dim() ~= 4 then
    fail(self, "only batches of spatial inputs supported (4D tensors), but got input of size " .. sizestr(input), 3)
  end
  if target:dim() ~= 3 then
    fail(self, "only batches of spatial targets supported (3D tensors) but got targets of size " .. sizestr(target), 3)
  end
  if input:size(1) ~= target:size(1) or input:size(3) ~= target:size(2) or input:size(4) ~= target:size(3) then
    fail(self, ("size mismatch (got input: %s, target: %s)"):format(sizestr(input), sizestr(target)), 3)
  end
  self.target = as_long(target)
  return self.target, nll_weights(self, input, input:size(2))
end

function SpatialNLL:updateOutput(input, target)
  local t, w = spatial_check(self, input, target)
  local ok, out, tw = pcall(torch.nll_loss_forward, input, t, w, "sum", -100)
  if not ok then fail(self, tostring(out), 2) end
  self._total_weight = tw
  local total = tw:item()
  out = out:item()
  if self.sizeAverage and total ~= 0 then out = out / total end
  self.output_tensor[1] = out
  self.total_weight_tensor[1] = total
  self.output = out
  return out, total
end

function SpatialNLL:updateGradInput(input, target)
  local t, w = spatial_check(self, input, target)
  local total = self.total_weight_tensor[1]
  if not (total > 0) then
    self.gradInput:resizeAs(input):zero()
    return self.gradInput
  end
  local tw = rawget(self, "_total_weight")
  if tw == nil or torch.type(tw) ~= torch.type(input) then
    tw = input.new(1):fill(total):view(torch.LongStorage({}))
  end
  local ok, g = pcall(torch.nll_loss_backward, one_of(input), input, t, w,
    self.sizeAverage and "mean" or "sum", -100, tw)
  if not ok then fail(self, tostring(g), 2) end
  if torch.type(self.gradInput) == torch.type(g) then self.gradInput:set(g) else self.gradInput = g end
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.CrossEntropyCriterion([weights] [, sizeAverage]): ClassNLLCriterion of the input's
-- log-softmax (over the classes); singleton dims of input and target are squeezed first
local CrossEntropy, CrossEntropyParent = torch.class("nn.CrossEntropyCriterion", "nn.Criterion")

function CrossEntropy:__init(weights, sizeAverage)
  CrossEntropyParent.__init(self)
  self.nll = nn.ClassNLLCriterion(weights, sizeAverage)
  self.sizeAverage = self.nll.sizeAverage
  self.oldSizeAverage = self.sizeAverage
end

-- input with its size-1 dims dropped (never below 1 dim), and target to match
local function ce_squeeze(self, input, target)
  check_tensor(self, input, "input")
  if input:dim() > 1 then
    local keep = {}
    for i = 1, input:dim() do
      if input:size(i) ~= 1 then keep[#keep + 1] = input:size(i) end
    end
    if #keep == 0 then keep[1] = 1 end
    if #keep ~= input:dim() then input = input:view(table.unpack(keep)) end
  end
  if input:dim() > 2 then
    fail(self, "input must be a vector or a batch of vectors (after squeezing), got " .. sizestr(input), 3)
  end
  if torch.isTensor(target) then
    if input:dim() == 1 then
      if target:nElement() ~= 1 then
        fail(self, ("input %s takes one class target, got %s"):format(sizestr(input), sizestr(target)), 3)
      end
    elseif target:dim() ~= 1 then
      target = target:contiguous():view(-1)
    end
  elseif type(target) ~= "number" then
    fail(self, "target must be a number or a tensor, got " .. torch.type(target), 3)
  end
  return input, target
end

-- sizeAverage set on the criterion goes to its ClassNLLCriterion when it changed (a
-- script may set nll.sizeAverage itself)
local function ce_propagate(self)
  if self.sizeAverage ~= self.oldSizeAverage then self.nll.sizeAverage = self.sizeAverage end
end

function CrossEntropy:updateOutput(input, target)
  input, target = ce_squeeze(self, input, target)
  ce_propagate(self)
  local lp = torch.log_softmax(input, input:dim())
  local buf = buffer(self, "_logProbs", lp)
  buf:set(lp)
  self.nll:updateOutput(buf, target)
  self.output = self.nll.output
  self.oldSizeAverage = self.sizeAverage
  return self.output
end

function CrossEntropy:updateGradInput(input, target)
  local size = input:size()
  local x
  x, target = ce_squeeze(self, input, target)
  ce_propagate(self)
  local lp = rawget(self, "_logProbs")
  if lp == nil or not lp:isSameSizeAs(x) then
    lp = torch.log_softmax(x, x:dim())
  end
  local g = self.nll:updateGradInput(lp, target)
  local gi = torch.log_softmax_backward(g, lp, x:dim())
  if torch.type(self.gradInput) ~= torch.type(gi) then self.gradInput = gi.new() end
  self.gradInput:set(gi:view(size))
  self.oldSizeAverage = self.sizeAverage
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.MultiLabelSoftMarginCriterion([weights] [, sizeAverage]): the binary cross-entropy of
-- sigmoid(input) and 0/1 targets, computed stably; weights over the last dim
local MLSoftMargin, MLSoftMarginParent = torch.class("nn.MultiLabelSoftMarginCriterion", "nn.Criterion")

function MLSoftMargin:__init(weights, sizeAverage)
  MLSoftMarginParent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
  check_weights(self, weights)
  self.weights = weights
end

function MLSoftMargin:updateOutput(input, target)
  local t = paired(self, input, target)
  local w = bce_weights(self, input, target)
  -- log(1 + exp(-|x|)) + max(x, 0) - x t
  local a = buffer(self, "_buffer1", input)
  a:resizeAs(input):copy(input):abs():mul(-1):exp():log1p()
  local b = buffer(self, "_buffer2", input)
  b:resizeAs(input):copy(input):cmax(0):add(a):addcmul(-1, input, t)
  local sum = w and b:dot(w) or b:sum()
  self.output = sum * norm_of(self, input)
  return self.output
end

-- (sigmoid(x) - t), weighted and scaled
function MLSoftMargin:updateGradInput(input, target)
  local t = paired(self, input, target)
  local w = bce_weights(self, input, target)
  self.gradInput:resizeAs(input):copy(input):sigmoid():add(-1, t)
  if w then self.gradInput:cmul(w) end
  self.gradInput:mul(norm_of(self, input))
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.MultiMarginCriterion([p = 1] [, weights] [, margin = 1]): the multi-class hinge loss:
-- per sample, sum over classes d ~= t of max(0, margin - x[t] + x[d])^p (times weights[t]),
-- divided by the number of classes (and by the batch size when sizeAverage)
local MultiMargin, MultiMarginParent = torch.class("nn.MultiMarginCriterion", "nn.Criterion")

function MultiMargin:__init(p, weights, margin)
  MultiMarginParent.__init(self)
  if p ~= nil and p ~= 1 and p ~= 2 then fail(self, "only p=1 and p=2 supported", 2) end
  self.p = p or 1
  self.margin = margin or 1.0
  self.sizeAverage = true
  check_weights(self, weights)
  self.weights = weights
end

-- input as a batch (n x dim), targets as an n x 1 LongTensor; the hinge terms z (0 at the
-- targets) and the per-sample weight (n x 1, or nil)
local function mm_terms(self, input, target)
  check_tensor(self, input, "input")
  local d = input:dim()
  if d ~= 1 and d ~= 2 then fail(self, "vector or matrix expected, got input " .. sizestr(input), 3) end
  local x = d == 1 and input:view(1, -1) or input
  local n, dim = x:size(1), x:size(2)
  local t
  if type(target) == "number" then
    t = torch.LongTensor({ target })
  elseif torch.isTensor(target) then
    t = as_long(target)
  else
    fail(self, "target must be a number or a tensor, got " .. torch.type(target), 3)
  end
  if t:nElement() ~= n or (d == 2 and t:dim() ~= 1) then
    fail(self, ("inconsistent target size: input %s, target %s"):format(sizestr(input), sizestr(t)), 3)
  end
  t = t:contiguous():view(n, 1)
  if t:min() < 1 or t:max() > dim then fail(self, ("target out of range [1, %d]"):format(dim), 3) end
  local xt = x:gather(2, t)
  local z = buffer(self, "_z", input)
  z:resizeAs(x):copy(x):add(-1, xt:expand(n, dim)):add(self.margin):cmax(0)
  z:scatter(2, t, 0)
  local w
  if self.weights then
    local ww = self.weights
    if ww:nElement() ~= dim then
      fail(self, ("weights %s do not fit %d classes"):format(sizestr(ww), dim), 3)
    end
    if torch.type(ww) ~= torch.type(input) then ww = ww:type(torch.type(input)) end
    w = ww:index(1, t:view(-1)):view(n, 1)
  end
  return x, t, z, w, n, dim
end

function MultiMargin:updateOutput(input, target)
  local _, _, z, w, n, dim = mm_terms(self, input, target)
  local h = z
  if self.p == 2 then
    h = buffer(self, "_h", z)
    h:resizeAs(z):copy(z):cmul(z)
  end
  local sum
  if w then sum = h:sum(2):cmul(w):sum() else sum = h:sum() end
  sum = sum / dim
  if self.sizeAverage then sum = sum / n end
  self.output = sum
  return sum
end

function MultiMargin:updateGradInput(input, target)
  local _, t, z, w, n, dim = mm_terms(self, input, target)
  local g = self.sizeAverage and 1 / (n * dim) or 1 / dim
  local gi = self.gradInput
  if self.p == 1 then
    local mask = buffer(self, "_mask", torch.ByteTensor())
    mask:gt(z, 0)
    gi:resize(n, dim):copy(mask):mul(g)
  else
    gi:resize(n, dim):copy(z):mul(2 * g)
  end
  if w then gi:cmul(w:expand(n, dim)) end
  local s = gi:sum(2):mul(-1)
  gi:scatter(2, t, s)
  gi:resizeAs(input)
  return gi
end

---------------------------------------------------------------------------------------------
-- nn.MultiLabelMarginCriterion(): the multi-label hinge loss: target rows hold 1-based
-- class numbers ended by the first 0; per sample, sum over its classes j and the classes d
-- not among them of max(0, 1 - x[j] + x[d]), divided by the number of classes (and the
-- batch size when sizeAverage). isTarget marks each sample's classes.
local MLMargin, MLMarginParent = torch.class("nn.MultiLabelMarginCriterion", "nn.Criterion")

function MLMargin:__init()
  MLMarginParent.__init(self)
  self.sizeAverage = true
  self.isTarget = torch.Tensor()
end

-- the batch view of input, the hinge terms z (n x dim(j) x dim(d), 0 where j is past the
-- list or d is a target), the clamped class indices (n x dim) and n, dim
local function mlm_terms(self, input, target)
  check_tensor(self, input, "input")
  check_tensor(self, target, "target")
  local d = input:dim()
  if d ~= 1 and d ~= 2 then fail(self, "vector or matrix expected, got input " .. sizestr(input), 3) end
  if target:dim() ~= d or not target:isSameSizeAs(input) then
    fail(self, ("inconsistent target size: input %s, target %s"):format(sizestr(input), sizestr(target)), 3)
  end
  local x = d == 1 and input:view(1, -1) or input
  local n, dim = x:size(1), x:size(2)
  local t = as_long(target):contiguous():view(n, dim)
  if t:nElement() > 0 and (t:min() < 0 or t:max() > dim) then
    fail(self, ("target out of range [0, %d]"):format(dim), 3)
  end
  -- the classes before each row's first 0
  local valid = torch.gt(t, 0):long():cumprod(2):typeAs(x)
  local idx = t:clone():cmax(1)
  local isT = buffer(self, "isTarget", x)
  isT:resize(n, dim):zero():scatterAdd(2, idx, valid):clamp(0, 1)
  if d == 1 then self.isTarget = isT:view(dim) end
  local xt = x:gather(2, idx)
  local z = buffer(self, "_z", x)
  z:resize(n, dim, dim):copy(x:view(n, 1, dim):expand(n, dim, dim))
  z:add(-1, xt:view(n, dim, 1):expand(n, dim, dim)):add(1):cmax(0)
  z:cmul(valid:view(n, dim, 1):expand(n, dim, dim))
  local notT = isT:clone():mul(-1):add(1)
  z:cmul(notT:view(n, 1, dim):expand(n, dim, dim))
  return x, z, idx, n, dim
end

function MLMargin:updateOutput(input, target)
  local _, z, _, n, dim = mlm_terms(self, input, target)
  local sum = z:sum() / dim
  if self.sizeAverage then sum = sum / n end
  self.output = sum
  return sum
end

function MLMargin:updateGradInput(input, target)
  local _, z, idx, n, dim = mlm_terms(self, input, target)
  local g = self.sizeAverage and 1 / (n * dim) or 1 / dim
  local m = buffer(self, "_m", z)
  m:resizeAs(z):copy(torch.gt(z, 0)):mul(g)
  local gi = self.gradInput
  gi:resize(n, dim):copy(m:sum(2):view(n, dim))
  gi:scatterAdd(2, idx, m:sum(3):view(n, dim):mul(-1))
  gi:resizeAs(input)
  return gi
end

---------------------------------------------------------------------------------------------
-- nn.HingeEmbeddingCriterion([margin = 1]): for distances x and labels y = +-1: x where y =
-- 1, max(0, margin - x) where y = -1, summed (averaged when sizeAverage)
local HingeEmbedding, HingeEmbeddingParent = torch.class("nn.HingeEmbeddingCriterion", "nn.Criterion")

function HingeEmbedding:__init(margin)
  HingeEmbeddingParent.__init(self)
  self.margin = margin or 1
  self.sizeAverage = true
end

local function hinge_y(self, input, y)
  check_tensor(self, input, "input")
  if type(y) == "number" then
    local ty = buffer(self, "ty", input)
    ty:resize(1):fill(y)
    y = ty
  end
  return paired(self, input, y)
end

function HingeEmbedding:updateOutput(input, y)
  y = hinge_y(self, input, y)
  local pos = buffer(self, "_pos", input)
  pos:resizeAs(y):copy(torch.eq(y, 1))
  local neg = buffer(self, "_neg", input)
  neg:resizeAs(y):copy(torch.eq(y, -1))
  local b = buffer(self, "buffer", input)
  b:resizeAs(input):copy(input):mul(-1):add(self.margin):cmax(0)
  -- x counts for every label but -1, the hinge for every label but 1
  local sum = input:sum() - input:dot(neg) + b:sum() - b:dot(pos)
  if self.sizeAverage == nil or self.sizeAverage then sum = sum / input:nElement() end
  self.output = sum
  return sum
end

-- y, but 0 where y = -1 and x > margin
function HingeEmbedding:updateGradInput(input, y)
  y = hinge_y(self, input, y)
  local zero = torch.eq(y, -1):cmul(torch.gt(input, self.margin))
  self.gradInput:resizeAs(input):copy(y):maskedFill(zero, 0)
  if self.sizeAverage == nil or self.sizeAverage then self.gradInput:mul(1 / input:nElement()) end
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.L1HingeEmbeddingCriterion([margin = 1]): input {x1, x2}, y = +-1: ||x1 - x2||_1 for y
-- = 1, max(0, margin - ||x1 - x2||_1) for y = -1
local L1HingeEmbedding, L1HingeEmbeddingParent = torch.class("nn.L1HingeEmbeddingCriterion", "nn.Criterion")

function L1HingeEmbedding:__init(margin)
  L1HingeEmbeddingParent.__init(self)
  self.margin = margin or 1
  self.gradInput = { torch.Tensor(), torch.Tensor() }
end

local function pair_table(self, input)
  if type(input) ~= "table" or not torch.isTensor(input[1]) or not torch.isTensor(input[2]) then
    fail(self, "input must be a table of two tensors", 3)
  end
  if input[1]:nElement() ~= input[2]:nElement() then
    fail(self, ("the two inputs differ in size (%s and %s)"):format(sizestr(input[1]), sizestr(input[2])), 3)
  end
  return input[1], input[2]
end

local function pm_one(self, y)
  if y ~= 1 and y ~= -1 then fail(self, "y must be 1 or -1, got " .. tostring(y), 3) end
  return y
end

function L1HingeEmbedding:updateOutput(input, y)
  local a, b = pair_table(self, input)
  pm_one(self, y)
  local d = buffer(self, "_diff", a)
  local dist = d:resizeAs(a):copy(a):add(-1, b:viewAs(a)):abs():sum()
  if y == -1 then dist = math.max(0, self.margin - dist) end
  self.output = dist
  return dist
end

-- sign(x1 - x2) (a random sign where equal), negated for y = -1 inside the margin, 0
-- outside it; x2's is the opposite
function L1HingeEmbedding:updateGradInput(input, y)
  local a, b = pair_table(self, input)
  pm_one(self, y)
  local g1, g2 = self.gradInput[1], self.gradInput[2]
  g1:resizeAs(a):copy(a):add(-1, b:viewAs(a))
  local dist = g1:norm(1)
  g1:sign()
  local zeros = torch.eq(g1, 0)
  if zeros:sum() > 0 then
    g1:maskedCopy(zeros, g1.new(zeros:sum()):bernoulli(0.5):mul(2):add(-1))
  end
  if y == -1 then
    if dist > self.margin then g1:zero() else g1:mul(-1) end
  end
  g2:resizeAs(b):copy(g1:viewAs(b)):mul(-1)
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.CosineEmbeddingCriterion([margin = 0]): input {x1, x2} (vectors, or batches n x d), y
-- = +-1 (a number, or n of them): 1 - cos(x1, x2) for y = 1, max(0, cos(x1, x2) - margin)
-- for y = -1; averaged over the batch when sizeAverage
local CosineEmbedding, CosineEmbeddingParent = torch.class("nn.CosineEmbeddingCriterion", "nn.Criterion")

function CosineEmbedding:__init(margin)
  CosineEmbeddingParent.__init(self)
  self.margin = margin or 0
  self.gradInput = { torch.Tensor(), torch.Tensor() }
  self.sizeAverage = true
end

local COS_EPS = 1e-12

local function cos_args(self, input, y)
  local a, b = pair_table(self, input)
  if not a:isSameSizeAs(b) or (a:dim() ~= 1 and a:dim() ~= 2) then
    fail(self, ("inputs must be two vectors or two batches of one size (got %s and %s)")
      :format(sizestr(a), sizestr(b)), 3)
  end
  if a:dim() == 1 then a, b = a:view(1, -1), b:view(1, -1) end
  if type(y) == "number" then
    local ty = buffer(self, "_y", a)
    ty:resize(1):fill(y)
    y = ty
  elseif not torch.isTensor(y) then
    fail(self, "y must be a number or a tensor, got " .. torch.type(y), 3)
  end
  if y:nElement() ~= a:size(1) then
    fail(self, ("%d labels for a batch of %d"):format(y:nElement(), a:size(1)), 3)
  end
  if torch.type(y) ~= torch.type(a) then y = y:type(torch.type(a)) end
  return a, b, y:contiguous():view(-1)
end

function CosineEmbedding:updateOutput(input, y)
  local a, b
  a, b, y = cos_args(self, input, y)
  local n = a:size(1)
  local buf = buffer(self, "buffer", a)
  self.w1 = buffer(self, "w1", a):sum(buf:cmul(a, b), 2)
  self.w22 = buffer(self, "w22", a):sum(buf:cmul(a, a), 2):add(COS_EPS):pow(-1)
  self.w32 = buffer(self, "w32", a):sum(buf:cmul(b, b), 2):add(COS_EPS):pow(-1)
  self.w = buffer(self, "w", a):resizeAs(self.w22):copy(self.w22):cmul(self.w32):sqrt()
  local cos = torch.cmul(self.w1, self.w):view(n)
  -- per sample: cos, replaced by max(0, cos - margin) for y = -1 and 1 - cos for y = 1
  local out = buffer(self, "_outputs", a)
  out:resize(n):copy(cos)
  local neg, pos = torch.eq(y, -1), torch.eq(y, 1)
  local hinge = cos:clone():add(-self.margin):cmax(0)
  out:maskedCopy(neg, hinge:maskedSelect(neg))
  local one_minus = cos:clone():mul(-1):add(1)
  out:maskedCopy(pos, one_minus:maskedSelect(pos))
  local sum = out:sum()
  if self.sizeAverage then sum = sum / n end
  self.output = sum
  return sum
end

function CosineEmbedding:updateGradInput(input, y)
  local a, b
  local not_batch = input[1] and torch.isTensor(input[1]) and input[1]:dim() == 1
  a, b, y = cos_args(self, input, y)
  local n, d = a:size(1), a:size(2)
  if not rawget(self, "w") or self.w:nElement() ~= n then
    self:updateOutput(input, y)
  end
  local gw1, gw2 = self.gradInput[1], self.gradInput[2]
  if torch.type(gw1) ~= torch.type(a) then
    gw1, gw2 = a.new(), a.new()
    self.gradInput = { gw1, gw2 }
  end
  -- d cos / d x1 = (x2 - (x1.x2 / |x1|^2) x1) / (|x1| |x2|); likewise for x2 (new
  -- tensors expanded: a buffer with live views cannot be resized later)
  local w = self.w:clone():expand(n, d)
  gw1:resizeAs(a):copy(b):addcmul(-1, torch.cmul(self.w1, self.w22):expand(n, d), a):cmul(w)
  gw2:resizeAs(a):copy(a):addcmul(-1, torch.cmul(self.w1, self.w32):expand(n, d), b):cmul(w)
  -- 0 where the sample's loss is 0, negated for y = 1
  local scale = self._outputs.new(n):fill(1)
  scale:maskedFill(torch.eq(y, 1), -1)
  scale:maskedFill(torch.le(self._outputs, 0), 0)
  if self.sizeAverage then scale:div(n) end
  gw1:cmul(scale:view(n, 1):expand(n, d))
  gw2:cmul(scale:view(n, 1):expand(n, d))
  if not_batch then
    gw1:resize(d)
    gw2:resize(d)
  end
  return self.gradInput
end

function CosineEmbedding:type(typename, tensorCache)
  self._idx = nil
  return CosineEmbeddingParent.type(self, typename, tensorCache)
end

---------------------------------------------------------------------------------------------
-- nn.MarginRankingCriterion([margin = 1]): input {x1, x2}, y = +-1 (which should rank
-- higher): max(0, -y (x1 - x2) + margin); y a number for one pair (1-element inputs), a
-- tensor for a batch (averaged when sizeAverage)
local MarginRanking, MarginRankingParent = torch.class("nn.MarginRankingCriterion", "nn.Criterion")

function MarginRanking:__init(margin)
  MarginRankingParent.__init(self)
  self.margin = margin or 1
  self.gradInput = { torch.Tensor(1), torch.Tensor(1) }
  self.sizeAverage = true
end

local function first(self, x)
  if x:nElement() < 1 then fail(self, "empty input", 3) end
  return x:contiguous():view(-1)[1]
end

function MarginRanking:updateOutput(input, y)
  local a, b = pair_table(self, input)
  if type(y) == "number" then
    self.output = math.max(0, -y * (first(self, a) - first(self, b)) + self.margin)
    return self.output
  end
  check_tensor(self, y, "y")
  if y:nElement() ~= a:nElement() then
    fail(self, ("%d labels for %d pairs"):format(y:nElement(), a:nElement()), 2)
  end
  if torch.type(y) ~= torch.type(a) then y = y:type(torch.type(a)) end
  local o = buffer(self, "_output", a)
  o:resizeAs(a):copy(a):add(-1, b:viewAs(a)):mul(-1):cmul(y:viewAs(a)):add(self.margin):cmax(0)
  local sum = o:sum()
  if self.sizeAverage then sum = sum / y:size(1) end
  self.output = sum
  return sum
end

function MarginRanking:updateGradInput(input, y)
  local a, b = pair_table(self, input)
  local g1, g2 = self.gradInput[1], self.gradInput[2]
  if type(y) == "number" then
    local dist = -y * (first(self, a) - first(self, b)) + self.margin
    g1:resize(1); g2:resize(1)
    if dist < 0 then
      g1[1], g2[1] = 0, 0
    else
      g1[1], g2[1] = -y, y
    end
    return self.gradInput
  end
  check_tensor(self, y, "y")
  if torch.type(y) ~= torch.type(a) then y = y:type(torch.type(a)) end
  local dist = buffer(self, "dist", a)
  dist:resizeAs(a):copy(a):add(-1, b:viewAs(a)):mul(-1):cmul(y:viewAs(a)):add(self.margin)
  local mask = buffer(self, "mask", a)
  mask:resizeAs(dist):copy(torch.ge(dist, 0))
  g1:resizeAs(dist):copy(mask):mul(-1):cmul(y:viewAs(a))
  g2:resizeAs(dist):copy(mask):cmul(y:viewAs(a))
  if self.sizeAverage then
    g1:div(y:size(1))
    g2:div(y:size(1))
  end
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.DistanceRatioCriterion([sizeAverage]): input {X, Y}, distances of similar and of
-- dissimilar pairs: X + log(exp(-X) + exp(-Y)), summed (divided by the batch size when
-- sizeAverage)
local DistanceRatio, DistanceRatioParent = torch.class("nn.DistanceRatioCriterion", "nn.Criterion")

function DistanceRatio:__init(sizeAverage)
  DistanceRatioParent.__init(self)
  self.sizeAverage = sizeAverageArg(sizeAverage)
end

local function ratio_args(self, input)
  if type(input) ~= "table" or #input ~= 2 then fail(self, "Invalid number of inputs (a table {X, Y} expected)", 3) end
  local X, Y = pair_table(self, input)
  if X:dim() == 0 or Y:dim() == 0 or X:size(1) ~= Y:size(1) then
    fail(self, ("Invalid distances' size (%s and %s)"):format(sizestr(X), sizestr(Y)), 3)
  end
  return X, Y
end

function DistanceRatio:updateOutput(input)
  local X, Y = ratio_args(self, input)
  local ex = buffer(self, "_expMinusX", X)
  local ey = buffer(self, "_expMinusY", X)
  ex:resizeAs(X):copy(X):mul(-1):exp()
  ey:resizeAs(X):copy(Y:viewAs(X)):mul(-1):exp()
  local s = buffer(self, "_sumExpMinusXY", X)
  s:resizeAs(ex):copy(ex):add(ey)
  local l = buffer(self, "_logSumExpMinusXY", X)
  l:resizeAs(s):copy(s):log()
  local loss = buffer(self, "loss", X)
  loss:resizeAs(X):copy(X):add(l)
  local sum = loss:sum()
  if self.sizeAverage then sum = sum / X:size(1) end
  self.output = sum
  return sum
end

-- dX = 1 - exp(-X) / (exp(-X) + exp(-Y)), dY = -exp(-Y) / (exp(-X) + exp(-Y))
function DistanceRatio:updateGradInput(input)
  local X, Y = ratio_args(self, input)
  if not rawget(self, "_sumExpMinusXY") or not self._sumExpMinusXY:isSameSizeAs(X) then
    self:updateOutput(input)
  end
  local dX = buffer(self, "dX", X)
  dX:resizeAs(X):copy(self._expMinusX):cdiv(self._sumExpMinusXY):mul(-1):add(1)
  local dY = buffer(self, "dY", Y)
  dY:resizeAs(Y):copy(self._expMinusY):cdiv(self._sumExpMinusXY):mul(-1)
  if self.sizeAverage then
    dX:div(X:size(1))
    dY:div(X:size(1))
  end
  self.gradInput = { dX, dY }
  return self.gradInput
end

function DistanceRatio:type(typename, tensorCache)
  if typename then
    for _, k in ipairs({ "_expMinusX", "_expMinusY", "_sumExpMinusXY", "_logSumExpMinusXY",
                         "loss", "dX", "dY" }) do
      self[k] = nil
    end
  end
  return DistanceRatioParent.type(self, typename, tensorCache)
end

---------------------------------------------------------------------------------------------
-- nn.MultiCriterion(): a weighted sum of criteria, each given the same input and target;
-- add(criterion [, weight = 1])
local MultiCriterion, MultiCriterionParent = torch.class("nn.MultiCriterion", "nn.Criterion")

function MultiCriterion:__init()
  MultiCriterionParent.__init(self)
  self.criterions = {}
  self.weights = torch.DoubleStorage()
end

function MultiCriterion:add(criterion, weight)
  if criterion == nil then fail(self, "no criterion provided", 2) end
  weight = weight or 1
  self.criterions[#self.criterions + 1] = criterion
  self.weights:resize(#self.criterions, true)
  self.weights[#self.criterions] = weight
  return self
end

function MultiCriterion:updateOutput(input, target)
  local sum = 0
  for i, c in ipairs(self.criterions) do
    sum = sum + self.weights[i] * c:updateOutput(input, target)
  end
  self.output = sum
  return sum
end

function MultiCriterion:updateGradInput(input, target)
  self.gradInput = nn.utils.recursiveResizeAs(self.gradInput, input)
  nn.utils.recursiveFill(self.gradInput, 0)
  for i, c in ipairs(self.criterions) do
    nn.utils.recursiveAdd(self.gradInput, self.weights[i], c:updateGradInput(input, target))
  end
  return self.gradInput
end

function MultiCriterion:type(typename, tensorCache)
  for _, c in ipairs(self.criterions) do c:type(typename, tensorCache) end
  return MultiCriterionParent.type(self, typename, tensorCache)
end

---------------------------------------------------------------------------------------------
-- nn.ParallelCriterion([repeatTarget]): a weighted sum of criteria, the i-th given input[i]
-- and target[i] (or the whole target when repeatTarget); add(criterion [, weight = 1])
local ParallelCriterion, ParallelCriterionParent = torch.class("nn.ParallelCriterion", "nn.Criterion")

function ParallelCriterion:__init(repeatTarget)
  ParallelCriterionParent.__init(self)
  self.criterions = {}
  self.weights = {}
  self.gradInput = {}
  self.repeatTarget = repeatTarget
end

function ParallelCriterion:add(criterion, weight)
  if criterion == nil then fail(self, "no criterion provided", 2) end
  self.criterions[#self.criterions + 1] = criterion
  self.weights[#self.weights + 1] = weight or 1
  return self
end

local function parallel_check(self, input, target)
  if type(input) ~= "table" or torch.isTensor(input) then
    fail(self, "input must be a table (one entry per criterion), got " .. torch.type(input), 3)
  end
  if not self.repeatTarget and (type(target) ~= "table" or torch.isTensor(target)) then
    fail(self, "target must be a table (one entry per criterion), got " .. torch.type(target), 3)
  end
end

function ParallelCriterion:updateOutput(input, target)
  parallel_check(self, input, target)
  local sum = 0
  for i, c in ipairs(self.criterions) do
    local t = self.repeatTarget and target or target[i]
    sum = sum + self.weights[i] * c:updateOutput(input[i], t)
  end
  self.output = sum
  return sum
end

function ParallelCriterion:updateGradInput(input, target)
  parallel_check(self, input, target)
  self.gradInput = nn.utils.recursiveResizeAs(self.gradInput, input)
  nn.utils.recursiveFill(self.gradInput, 0)
  for i, c in ipairs(self.criterions) do
    local t = self.repeatTarget and target or target[i]
    nn.utils.recursiveAdd(self.gradInput[i], self.weights[i], c:updateGradInput(input[i], t))
  end
  return self.gradInput
end

function ParallelCriterion:type(typename, tensorCache)
  self.gradInput = {}
  return ParallelCriterionParent.type(self, typename, tensorCache)
end

---------------------------------------------------------------------------------------------
-- nn.ModuleCriterion(criterion [, inputModule] [, targetModule] [, castTarget = true]): the
-- criterion of inputModule(input) and targetModule(target); the gradient goes back through
-- inputModule (whose parameters are not updated)
local ModuleCriterion, ModuleCriterionParent = torch.class("nn.ModuleCriterion", "nn.Criterion")

function ModuleCriterion:__init(criterion, inputModule, targetModule, castTarget)
  ModuleCriterionParent.__init(self)
  if criterion == nil or not torch.isTypeOf(criterion, "nn.Criterion") then
    fail(self, "a criterion expected as the first argument, got " .. torch.type(criterion), 2)
  end
  self.inputModule = inputModule
  self.targetModule = targetModule
  if castTarget == nil then castTarget = true end
  self.castTarget = castTarget
  if inputModule then
    local params = inputModule:parameters()
    if params and #params > 0 then
      print("Warning: nn.ModuleCriterion doesn't support parameter updates")
    end
  end
  self.criterion = criterion
end

function ModuleCriterion:updateOutput(input, target)
  if self.inputModule then self.input = self.inputModule:forward(input) end
  if self.targetModule then self.target = self.targetModule:forward(target) end
  self.output = self.criterion:forward(self.input or input, self.target or target)
  return self.output
end

function ModuleCriterion:updateGradInput(input, target)
  self.gradInput = self.criterion:backward(self.input or input, self.target or target)
  if self.inputModule then
    self.gradInput = self.inputModule:backward(input, self.gradInput)
  end
  return self.gradInput
end

function ModuleCriterion:type(typename, tensorCache)
  if self.inputModule then self.inputModule:type(typename, tensorCache) end
  if self.castTarget and self.targetModule then self.targetModule:type(typename, tensorCache) end
  self.criterion:type(typename, tensorCache)
  return ModuleCriterionParent.type(self, typename, tensorCache)
end

---------------------------------------------------------------------------------------------
-- nn.CriterionTable(criterion): a module whose input is the table {input, target} of the
-- criterion; its output is the loss and its gradInput {criterion.gradInput}
local CriterionTable, CriterionTableParent = torch.class("nn.CriterionTable", "nn.Module")

function CriterionTable:__init(criterion)
  CriterionTableParent.__init(self)
  if criterion == nil or not torch.isTypeOf(criterion, "nn.Criterion") then
    fail(self, "a criterion expected, got " .. torch.type(criterion), 2)
  end
  self.criterion = criterion
  self.gradInput = { criterion.gradInput }
end

local function ct_check(self, input)
  if type(input) ~= "table" or torch.isTensor(input) then
    fail(self, "input must be the table {input, target}, got " .. torch.type(input), 3)
  end
end

function CriterionTable:updateOutput(input)
  ct_check(self, input)
  self.output = self.criterion:updateOutput(table.unpack(input))
  return self.output
end

function CriterionTable:updateGradInput(input, gradOutput)
  ct_check(self, input)
  local g = self.criterion:updateGradInput(table.unpack(input))
  self.gradInput[1] = g
  return self.gradInput
end

---------------------------------------------------------------------------------------------
-- nn.StochasticGradient(module, criterion): Torch7's plain SGD trainer. train(dataset) runs
-- maxIteration passes (0: forever) over dataset[1..dataset:size()] ({input, target} each),
-- moving the parameters after every example by -learningRate * gradient (the rate decaying
-- as learningRate / (1 + iteration * learningRateDecay)); shuffleIndices visits the
-- examples in a random order; hookExample(self, example) and hookIteration(self, iteration,
-- currentError) are called after each example and each pass; verbose prints the errors.
local SG = torch.class("nn.StochasticGradient")

function SG:__init(module, criterion)
  self.learningRate = 0.01
  self.learningRateDecay = 0
  self.maxIteration = 25
  self.shuffleIndices = true
  self.module = module
  self.criterion = criterion
  self.verbose = true
end

function SG:train(dataset)
  if dataset == nil or (type(dataset) ~= "table" and type(dataset) ~= "userdata") or dataset.size == nil then
    error("nn.StochasticGradient: train(dataset) takes a dataset with size() and dataset[i] = {input, target}", 2)
  end
  local module, criterion = self.module, self.criterion
  local n = dataset:size()
  local rate = self.learningRate
  local order = torch.randperm(n):long()
  if not self.shuffleIndices then
    for t = 1, n do order[t] = t end
  end
  print("# StochasticGradient: training")
  local iteration = 1
  while true do
    local currentError = 0
    for t = 1, n do
      local example = dataset[order[t]]
      local input, target = example[1], example[2]
      currentError = currentError + criterion:forward(module:forward(input), target)
      module:updateGradInput(input, criterion:updateGradInput(module.output, target))
      module:accUpdateGradParameters(input, criterion.gradInput, rate)
      if self.hookExample then self.hookExample(self, example) end
    end
    currentError = currentError / n
    if self.hookIteration then self.hookIteration(self, iteration, currentError) end
    if self.verbose then print("# current error = " .. currentError) end
    iteration = iteration + 1
    rate = self.learningRate / (1 + iteration * self.learningRateDecay)
    if self.maxIteration > 0 and iteration > self.maxIteration then
      print("# StochasticGradient: you have reached the maximum number of iterations")
      print("# training error = " .. currentError)
      break
    end
  end
end

return nn
