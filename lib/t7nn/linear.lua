-- t7nn/linear.lua — affine maps and lookups: Linear, LinearWeightNorm, Bilinear,
-- PartialLinear, SparseLinear, IndexLinear, LookupTable, and the distance layers
-- Euclidean, WeightedEuclidean, Cosine, Kmeans
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local fail, sizestr = H.fail, H.sizestr

-- nn.Linear(inputSize, outputSize [, bias = true]): y = W x + b for x of inputSize
-- elements or a batch (n x inputSize); weight is outputSize x inputSize
local Linear, parent = torch.class("nn.Linear", "nn.Module")

function Linear:__init(inputSize, outputSize, bias)
  parent.__init(self)
  if math.type(inputSize) == nil or math.type(outputSize) == nil then
    error("nn.Linear: inputSize and outputSize must be numbers", 2)
  end
  self.weight = torch.Tensor(outputSize, inputSize)
  self.gradWeight = torch.Tensor(outputSize, inputSize)
  if bias ~= false then
    self.bias = torch.Tensor(outputSize)
    self.gradBias = torch.Tensor(outputSize)
  end
  self:reset()
end

function Linear:noBias()
  self.bias, self.gradBias = nil, nil
  return self
end

-- uniform in +-1/sqrt(inputSize), or +-stdv*sqrt(3) (a uniform of standard deviation stdv)
function Linear:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(2))
  self.weight:uniform(-stdv, stdv)
  if self.bias then self.bias:uniform(-stdv, stdv) end
  return self
end

local function check_input(self, input)
  if not torch.isTensor(input) then
    error("nn.Linear: input must be a tensor, got " .. torch.type(input), 3)
  end
  local d = input:dim()
  if (d ~= 1 and d ~= 2) or input:size(d) ~= self.weight:size(2) then
    error(("nn.Linear: input must be a vector of %d elements or a batch n x %d (got size %s): size mismatch")
      :format(self.weight:size(2), self.weight:size(2), table.concat(input:size():totable(), "x")), 3)
  end
end

function Linear:updateOutput(input)
  check_input(self, input)
  if input:dim() == 1 then
    self.output:resize(self.weight:size(1))
    if self.bias then self.output:copy(self.bias) else self.output:zero() end
    self.output:addmv(1, self.weight, input)
  else
    local n = input:size(1)
    self.output:resize(n, self.weight:size(1))
    if self.bias then
      self.output:copy(self.bias:view(1, -1):expand(n, self.weight:size(1)))
    else
      self.output:zero()
    end
    self.output:addmm(1, input, self.weight:t())
  end
  return self.output
end

function Linear:updateGradInput(input, gradOutput)
  if self.gradInput then
    self.gradInput:resizeAs(input)
    if input:dim() == 1 then
      self.gradInput:addmv(0, 1, self.weight:t(), gradOutput)
    else
      self.gradInput:addmm(0, 1, gradOutput, self.weight)
    end
    return self.gradInput
  end
end

function Linear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  if input:dim() == 1 then
    self.gradWeight:addr(scale, gradOutput, input)
    if self.bias then self.gradBias:add(scale, gradOutput) end
  else
    self.gradWeight:addmm(scale, gradOutput:t(), input)
    if self.bias then self.gradBias:add(scale, gradOutput:sum(1):view(-1)) end
  end
end

function Linear:clearState()
  nn.utils.clear(self, "addBuffer")
  return parent.clearState(self)
end

function Linear:__tostring__()
  return ("%s(%d -> %d)%s"):format(torch.type(self), self.weight:size(2), self.weight:size(1),
    self.bias and "" or " without bias")
end

local function is_count(n) return math.type(n) == "integer" or (type(n) == "number" and n == math.floor(n)) end

-- nn.LinearWeightNorm(inputSize, outputSize [, bias = true] [, eps = 1e-16]): a Linear whose
-- weight is g * v / ||v|| row by row (g is outputSize x 1, the norms clamped below by eps);
-- the parameters are v, g and bias
local LinearWeightNorm, lwnParent = torch.class("nn.LinearWeightNorm", "nn.Linear")

function LinearWeightNorm:__init(inputSize, outputSize, bias, eps)
  nn.Module.__init(self)
  if not is_count(inputSize) or not is_count(outputSize) or inputSize < 1 or outputSize < 1 then
    fail("nn.LinearWeightNorm", "inputSize and outputSize must be positive integers", 2)
  end
  self.eps = eps or 1e-16
  self.inputSize, self.outputSize = inputSize, outputSize
  self.v = torch.Tensor(outputSize, inputSize)
  self.gradV = torch.Tensor(outputSize, inputSize)
  self.weight = torch.Tensor(outputSize, inputSize)
  self.g = torch.Tensor(outputSize, 1)
  self.gradG = torch.Tensor(outputSize, 1)
  self.norm = torch.Tensor(outputSize, 1)
  self.scale = torch.Tensor(outputSize, 1)
  if bias ~= false then
    self.bias = torch.Tensor(outputSize)
    self.gradBias = torch.Tensor(outputSize)
  end
  self:reset()
end

function LinearWeightNorm:initFromWeight(weight)
  weight = weight or self.weight
  self.g:norm(weight, 2, 2):clamp(self.eps, math.huge)
  self.v:copy(weight)
  return self
end

function LinearWeightNorm.fromLinear(linear)
  local m = nn.LinearWeightNorm(linear.weight:size(2), linear.weight:size(1), torch.isTensor(linear.bias))
  m.weight:copy(linear.weight)
  m:initFromWeight()
  if linear.bias then m.bias:copy(linear.bias) end
  return m
end

function LinearWeightNorm:toLinear()
  self:updateWeightMatrix()
  local m = nn.Linear(self.inputSize, self.outputSize, torch.isTensor(self.bias))
  m.weight:copy(self.weight)
  if self.bias then m.bias:copy(self.bias) end
  return m
end

function LinearWeightNorm:parameters()
  if self.bias then
    return { self.v, self.g, self.bias }, { self.gradV, self.gradG, self.gradBias }
  end
  return { self.v, self.g }, { self.gradV, self.gradG }
end

function LinearWeightNorm:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.inputSize)
  self.weight:resize(self.outputSize, self.inputSize):uniform(-stdv, stdv)
  self:initFromWeight()
  if self.bias then self.bias:uniform(-stdv, stdv) end
  return self
end

-- weight = v * (g / ||v||), the norms and scales kept for the backward pass
function LinearWeightNorm:updateWeightMatrix()
  self.norm:resizeAs(self.g):norm(self.v, 2, 2):clamp(self.eps, math.huge)
  self.scale:resizeAs(self.g):copy(self.g):cdiv(self.norm)
  self.weight:resizeAs(self.v):copy(self.v):cmul(self.scale:expandAs(self.v))
end

function LinearWeightNorm:evaluate()
  if self.train ~= false then self:updateWeightMatrix() end
  lwnParent.evaluate(self)
end

function LinearWeightNorm:updateOutput(input)
  if self.train ~= false or self.weight:nElement() ~= self.v:nElement() then
    self:updateWeightMatrix()
  end
  return lwnParent.updateOutput(self, input)
end

-- dL/dg = sum_j dW_j v_j / ||v||;  dL/dv = (g / ||v||) dW - (g dL/dg / ||v||^2) v
function LinearWeightNorm:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local dW = self._dW or self.v.new()
  self._dW = dW
  dW:resizeAs(self.v)
  if input:dim() == 1 then
    dW:zero():addr(scale, gradOutput, input)
    if self.bias then self.gradBias:add(scale, gradOutput) end
  else
    dW:addmm(0, scale, gradOutput:t(), input)
    if self.bias then self.gradBias:add(scale, gradOutput:sum(1):view(-1)) end
  end
  local norm = self.norm:expandAs(self.v)
  local tmp = self._tmp or self.v.new()
  self._tmp = tmp
  tmp:resizeAs(self.v):copy(dW):cmul(self.v):cdiv(norm)
  local dg = self._dg or self.g.new()
  self._dg = dg
  dg:resize(self.g:size(1), 1):sum(tmp, 2)
  -- the v gradient: scale * dW minus the component along v
  tmp:copy(self.v):cmul(self.scale:expandAs(self.v)):cdiv(norm):cmul(dg:expandAs(self.v))
  dW:cmul(self.scale:expandAs(self.v)):add(-1, tmp)
  self.gradV:add(dW)
  self.gradG:add(dg)
end

function LinearWeightNorm:accUpdateGradParameters(input, gradOutput, lr)
  local gv, gg, gb = self.gradV, self.gradG, self.gradBias
  self.gradV, self.gradG, self.gradBias = self.v, self.g, self.bias
  local ok, err = pcall(self.accGradParameters, self, input, gradOutput, -lr)
  self.gradV, self.gradG, self.gradBias = gv, gg, gb
  if not ok then error(err, 0) end
end

function LinearWeightNorm:clearState()
  nn.utils.clear(self, "weight", "norm", "scale", "_dW", "_tmp", "_dg")
  return lwnParent.clearState(self)
end

function LinearWeightNorm:__tostring__()
  return ("%s(%d -> %d)%s"):format(torch.type(self), self.inputSize, self.outputSize,
    self.bias and "" or " without bias")
end

-- nn.Bilinear(inputSize1, inputSize2, outputSize [, bias = true]): for a table {x1, x2} of
-- two n-row matrices, y[i][k] = x1[i]^T W[k] x2[i] + b[k]; weight is outputSize x inputSize1
-- x inputSize2
local Bilinear, bilParent = torch.class("nn.Bilinear", "nn.Module")

function Bilinear:__init(inputSize1, inputSize2, outputSize, bias)
  bilParent.__init(self)
  for _, n in ipairs({ inputSize1 or false, inputSize2 or false, outputSize or false }) do
    if not is_count(n) or n < 1 then
      fail("nn.Bilinear", "inputSize1, inputSize2 and outputSize must be positive integers", 2)
    end
  end
  self.weight = torch.Tensor(outputSize, inputSize1, inputSize2)
  self.gradWeight = torch.Tensor(outputSize, inputSize1, inputSize2)
  if bias ~= false then
    self.bias = torch.Tensor(outputSize)
    self.gradBias = torch.Tensor(outputSize)
  end
  self.gradInput = { torch.Tensor(), torch.Tensor() }
  self:reset()
end

function Bilinear:reset(stdv)
  if stdv ~= nil and (type(stdv) ~= "number" or stdv <= 0) then
    fail("nn.Bilinear", "reset: the standard deviation must be a positive number", 2)
  end
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(2))
  self.weight:uniform(-stdv, stdv)
  if self.bias then self.bias:uniform(-stdv, stdv) end
  return self
end

function Bilinear:__assertInput(input)
  if type(input) ~= "table" or #input ~= 2 or not torch.isTensor(input[1]) or not torch.isTensor(input[2]) then
    fail("nn.Bilinear", "input should be a table containing two data Tensors", 3)
  end
  local a, b = input[1], input[2]
  if a:dim() ~= 2 or b:dim() ~= 2 then fail("nn.Bilinear", "input Tensors should be two-dimensional", 3) end
  if a:size(1) ~= b:size(1) then
    fail("nn.Bilinear", "input Tensors should have the same number of rows (instances)", 3)
  end
  if a:size(2) ~= self.weight:size(2) then
    fail("nn.Bilinear", ("dimensionality of first input is erroneous (%d, expected %d)"):format(a:size(2), self.weight:size(2)), 3)
  end
  if b:size(2) ~= self.weight:size(3) then
    fail("nn.Bilinear", ("dimensionality of second input is erroneous (%d, expected %d)"):format(b:size(2), self.weight:size(3)), 3)
  end
end

function Bilinear:__assertInputGradOutput(input, gradOutput)
  if gradOutput:dim() ~= 2 or input[1]:size(1) ~= gradOutput:size(1) or gradOutput:size(2) ~= self.weight:size(1) then
    fail("nn.Bilinear", "gradOutput must be " .. input[1]:size(1) .. "x" .. self.weight:size(1) ..
      " (got " .. sizestr(gradOutput) .. ")", 3)
  end
end

-- x1 W: n x K x D2 (row i, slice k: x1[i]^T W[k])
local function x1W(self, x1)
  local K, D1, D2 = self.weight:size(1), self.weight:size(2), self.weight:size(3)
  local wt = self._wt or self.weight.new()
  self._wt = wt
  wt:resize(D1, K, D2):copy(self.weight:transpose(1, 2))
  local t = self._x1w or self.weight.new()
  self._x1w = t
  t:resize(x1:size(1), K * D2):mm(x1, wt:view(D1, K * D2))
  return t:view(x1:size(1), K, D2)
end

function Bilinear:updateOutput(input)
  self:__assertInput(input)
  local x1, x2 = input[1], input[2]
  local n, K, D2 = x1:size(1), self.weight:size(1), self.weight:size(3)
  local t = x1W(self, x1)
  t:cmul(x2:contiguous():view(n, 1, D2):expand(n, K, D2))
  -- (result tensors are sized exactly first: Torch7 mode will not resize one a view shares)
  self.output:resize(n, K, 1):sum(t, 3)
  self.output:resize(n, K)
  if self.bias then self.output:add(self.bias:view(1, K):expand(n, K)) end
  return self.output
end

function Bilinear:updateGradInput(input, gradOutput)
  if not self.gradInput then return end
  self:__assertInput(input)
  self:__assertInputGradOutput(input, gradOutput)
  if #self.gradInput == 0 then self.gradInput = { input[1].new(), input[2].new() } end
  local x1, x2 = input[1], input[2]
  local n, K, D1, D2 = x1:size(1), self.weight:size(1), self.weight:size(2), self.weight:size(3)
  local g = gradOutput:contiguous():view(n, K, 1)
  -- d/dx1[i] = sum_k g[i][k] W[k] x2[i]
  local u = self._x2w or self.weight.new()
  self._x2w = u
  u:resize(n, K * D1):mm(x2, self.weight:view(K * D1, D2):t())
  local u3 = u:view(n, K, D1):cmul(g:expand(n, K, D1))
  self.gradInput[1]:resize(n, 1, D1):sum(u3, 2)
  self.gradInput[1]:resize(n, D1)
  -- d/dx2[i] = sum_k g[i][k] W[k]^T x1[i]
  local t = x1W(self, x1):cmul(g:expand(n, K, D2))
  self.gradInput[2]:resize(n, 1, D2):sum(t, 2)
  self.gradInput[2]:resize(n, D2)
  return self.gradInput
end

function Bilinear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  self:__assertInput(input)
  self:__assertInputGradOutput(input, gradOutput)
  local x1, x2 = input[1], input[2]
  local n, K, D1, D2 = x1:size(1), self.weight:size(1), self.weight:size(2), self.weight:size(3)
  -- gradWeight[k] += scale * sum_i g[i][k] x1[i] x2[i]^T
  local a = self._gx1 or self.weight.new()
  self._gx1 = a
  a:resize(n, K, D1):copy(x1:contiguous():view(n, 1, D1):expand(n, K, D1))
  a:cmul(gradOutput:contiguous():view(n, K, 1):expand(n, K, D1))
  self.gradWeight:view(K * D1, D2):addmm(scale, a:view(n, K * D1):t(), x2)
  if self.bias then self.gradBias:add(scale, gradOutput:sum(1):view(K)) end
end

-- the gradient does not depend on the weight: shared modules may update it directly
function Bilinear:sharedAccUpdateGradParameters(input, gradOutput, lr)
  nn.Module.accUpdateGradParameters(self, input, gradOutput, lr)
end

function Bilinear:__tostring__()
  return ("%s(%dx%d -> %d)%s"):format(torch.type(self), self.weight:size(2), self.weight:size(3),
    self.weight:size(1), self.bias and "" or " without bias")
end

function Bilinear:clearState()
  nn.utils.clear(self, "_wt", "_x1w", "_x2w", "_gx1")
  return bilParent.clearState(self)
end

-- nn.LookupTable(nIndex, size [, paddingValue = 0] [, maxNorm] [, normType = 2]): rows of a
-- nIndex x size weight picked by 1-based indices: a vector of n indices gives n x size, a
-- matrix b x n gives b x n x size. Rows of index paddingValue get no gradient; with maxNorm,
-- the rows looked up are scaled down to that norm first (the weight changes); with
-- scaleGradByFreq(), a row's gradient is divided by its index's count in the batch.
local LookupTable, ltParent = torch.class("nn.LookupTable", "nn.Module")
LookupTable.__version = 4

function LookupTable:__init(nIndex, nOutput, paddingValue, maxNorm, normType)
  ltParent.__init(self)
  if not is_count(nIndex) or not is_count(nOutput) or nIndex < 1 or nOutput < 1 then
    fail("nn.LookupTable", "nIndex and nOutput must be positive integers", 2)
  end
  self.weight = torch.Tensor(nIndex, nOutput)
  self.gradWeight = torch.Tensor(nIndex, nOutput):zero()
  self.paddingValue = paddingValue or 0
  self.maxNorm = maxNorm
  self.normType = normType
  self._count = torch.IntTensor()
  self._input = torch.LongTensor()
  self.shouldScaleGradByFreq = false
  self:reset()
end

function LookupTable:backCompatibility()
  self._count = self._count or torch.IntTensor()
  self._input = self._input or torch.LongTensor()
  if not self.shouldScaleGradByFreq then self.shouldScaleGradByFreq = false end
end

function LookupTable:accUpdateOnly() self.gradWeight = nil; return self end
function LookupTable:setPadding(v) self.paddingValue = v; return self end
function LookupTable:setMaxNorm(v) self.maxNorm = v; return self end
function LookupTable:setNormType(v) self.normType = v; return self end
function LookupTable:scaleGradByFreq() self.shouldScaleGradByFreq = true; return self end

function LookupTable:reset(stdv)
  self.weight:normal(0, stdv or 1)
  return self
end

-- the input's indices as a contiguous 1-D LongTensor, checked against the table's size
function LookupTable:_indices(input, level)
  if not torch.isTensor(input) then
    fail("nn.LookupTable", "input must be a tensor of indices (got " .. torch.type(input) .. ")", level + 1)
  end
  local d = input:dim()
  if d ~= 1 and d ~= 2 then
    fail("nn.LookupTable", "input must be a vector or matrix of indices (got " .. sizestr(input) .. ")", level + 1)
  end
  local idx
  if torch.type(input) == "torch.LongTensor" and input:isContiguous() then
    idx = input:view(input:nElement())
  else
    self._input = self._input or torch.LongTensor()
    if torch.type(self._input) ~= "torch.LongTensor" then self._input = torch.LongTensor() end
    self._input:resize(input:size()):copy(input)
    idx = self._input:view(input:nElement())
  end
  if idx:nElement() > 0 then
    local lo, hi = idx:min(), idx:max()
    if lo < 1 or hi > self.weight:size(1) then
      fail("nn.LookupTable", ("index out of range: indices %d..%d for a table of %d rows")
        :format(lo, hi, self.weight:size(1)), level + 1)
    end
  end
  return idx
end

-- rows about to be looked up with a norm above maxNorm are scaled to maxNorm
function LookupTable:renorm(input)
  if not self.maxNorm then return end
  local idx = torch.isTensor(input) and input:dim() == 1 and torch.type(input) == "torch.LongTensor"
    and input:isContiguous() and input or self:_indices(input, 2)
  if idx:nElement() == 0 then return end
  local p = self.normType or 2
  local rows = self.weight:index(1, idx)
  local norms = rows:norm(p, 2)
  if norms:max() <= self.maxNorm then return end
  local factor = norms:clone():add(1e-7):pow(-1):mul(self.maxNorm)
  factor:maskedFill(torch.le(norms, self.maxNorm), 1)
  rows:cmul(factor:expandAs(rows))
  self.weight:indexCopy(1, idx, rows)
end

function LookupTable:updateOutput(input)
  local idx = self:_indices(input, 2)
  if self.maxNorm then self:renorm(idx) end
  self.output:resize(idx:nElement(), self.weight:size(2)):index(self.weight, 1, idx)
  if input:dim() == 2 then
    self.output:resize(input:size(1), input:size(2), self.weight:size(2))
  end
  return self.output
end

-- indices have no gradient: zeros of the input's size and type
function LookupTable:updateGradInput(input, gradOutput)
  if torch.type(self.gradInput) ~= torch.type(input) then self.gradInput = input.new() end
  if not self.gradInput:isSameSizeAs(input) then self.gradInput:resizeAs(input):zero() end
  return self.gradInput
end

function LookupTable:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local idx = self:_indices(input, 2)
  local n, m = idx:nElement(), self.weight:size(2)
  if n == 0 then return end
  if gradOutput:nElement() ~= n * m then
    fail("nn.LookupTable", ("gradOutput must have %d x %d elements (got %s)"):format(n, m, sizestr(gradOutput)), 2)
  end
  local go = gradOutput:contiguous():view(n, m)
  local pad = self.paddingValue or 0
  local padded = pad >= 1 and pad <= self.weight:size(1)
  if scale == 1 and not padded and not self.shouldScaleGradByFreq then
    self.gradWeight:indexAdd(1, idx, go)
    return
  end
  -- one factor per looked-up row: scale, 0 for padding, / count with scaleGradByFreq
  local w = self._rowScale or self.gradWeight.new()
  self._rowScale = w
  w:resize(n):fill(scale)
  if padded then w:maskedFill(torch.eq(idx, pad), 0) end
  if self.shouldScaleGradByFreq then
    local count = self._freq or self.gradWeight.new()
    self._freq = count
    count:resize(self.weight:size(1)):zero():indexAdd(1, idx, w.new(n):fill(1))
    w:cdiv(count:index(1, idx))
  end
  local buf = self._gradBuf or self.gradWeight.new()
  self._gradBuf = buf
  buf:resize(n, m):copy(go):cmul(w:view(n, 1):expand(n, m))
  self.gradWeight:indexAdd(1, idx, buf)
end

-- the gradient does not depend on the weight: shared tables update it directly
function LookupTable:sharedAccUpdateGradParameters(input, gradOutput, lr)
  nn.Module.accUpdateGradParameters(self, input, gradOutput, lr)
end

function LookupTable:type(typename, tensorCache)
  ltParent.type(self, typename, tensorCache)
  if typename then
    self._count = torch.IntTensor()
    self._input = torch.LongTensor()
  end
  return self
end

function LookupTable:clearState()
  nn.utils.clear(self, "_count", "_input", "_rowScale", "_freq", "_gradBuf")
  return ltParent.clearState(self)
end

function LookupTable:__tostring__()
  return ("%s(%d -> %d)"):format(torch.type(self), self.weight:size(1), self.weight:size(2))
end

-- nn.PartialLinear(inputSize, outputSize [, bias = true]): a Linear computing only the
-- outputs of a partition (setPartition(indices), resetPartition() for all). The weight is
-- a LookupTable's (rows are outputs), reached as network:get(1):get(2) as in Torch7.
local PartialLinear, plParent = torch.class("nn.PartialLinear", "nn.Module")

function PartialLinear:__init(inputsize, outputsize, bias)
  plParent.__init(self)
  if not is_count(inputsize) or not is_count(outputsize) or inputsize < 1 or outputsize < 1 then
    fail("nn.PartialLinear", "inputsize and outputsize must be positive integers", 2)
  end
  local lookup = nn.LookupTable(outputsize, inputsize)
  -- Torch7's network: {input, partition} -> {input, rows} -> input * rows^T; the module
  -- computes the same product itself
  local pair = nn.ParallelTable and nn.ParallelTable() or nn.Container()
  pair:add(nn.Identity()):add(lookup)
  self.network = nn.Sequential():add(pair)
  if nn.MM then self.network:add(nn.MM(false, true)) end
  if bias ~= false then
    self.bias = torch.Tensor(1, outputsize):zero()
    self.gradBias = torch.Tensor(1, outputsize):zero()
  end
  self.inputsize, self.outputsize = inputsize, outputsize
  self.allcolumns = torch.range(1, outputsize)
  self:resetPartition()
end

function PartialLinear:_lookup() return self.network:get(1):get(2) end

function PartialLinear:setPartition(indices)
  if not torch.isTensor(indices) or indices:dim() ~= 1 then
    fail("nn.PartialLinear", "setPartition: indices must be a vector", 2)
  end
  if indices:nElement() > 0 and (indices:min() < 1 or indices:max() > self.outputsize) then
    fail("nn.PartialLinear", "setPartition: indices must be in 1.." .. self.outputsize, 2)
  end
  self.partition = indices:type(self.allcolumns:type())
  return self
end

function PartialLinear:resetPartition() self.partition = self.allcolumns; return self end

function PartialLinear:parameters()
  local l = self:_lookup()
  return { l.weight, self.bias }, { l.gradWeight, self.gradBias }
end

local function partition_long(self)
  self._part = self._part or torch.LongTensor()
  self._part:resize(self.partition:size()):copy(self.partition)
  return self._part
end

function PartialLinear:updateOutput(input)
  if not torch.isTensor(input) or input:dim() ~= 2 or input:size(2) ~= self.inputsize then
    fail("nn.PartialLinear", ("input must be n x %d (got %s)"):format(self.inputsize, sizestr(input)), 2)
  end
  local part = partition_long(self)
  local rows = self:_lookup():forward(part)   -- k x inputsize
  self.output:resize(input:size(1), part:size(1)):mm(input, rows:t())
  if self.bias then
    self.output:add(self.bias:index(2, part):expandAs(self.output))
  end
  return self.output
end

function PartialLinear:updateGradInput(input, gradOutput)
  if self.gradInput then
    local rows = self:_lookup().output
    self.gradInput:resizeAs(input):mm(gradOutput, rows)
  end
  return self.gradInput
end

function PartialLinear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local part = partition_long(self)
  local l = self:_lookup()
  -- d rows = gradOutput^T input, accumulated into the table's rows
  local drows = self._drows or input.new()
  self._drows = drows
  drows:resize(part:size(1), self.inputsize):mm(gradOutput:t(), input)
  l:accGradParameters(part, drows, scale)
  if self.bias then
    self.gradBias:indexAdd(2, part, gradOutput:sum(1):mul(scale))
  end
end

function PartialLinear:accUpdateGradParameters(input, gradOutput, lr)
  local l = self:_lookup()
  local gw, gb = l.gradWeight, self.gradBias
  l.gradWeight, self.gradBias = l.weight, self.bias
  local ok, err = pcall(self.accGradParameters, self, input, gradOutput, -lr)
  l.gradWeight, self.gradBias = gw, gb
  if not ok then error(err, 0) end
end

function PartialLinear:sharedAccUpdateGradParameters(input, gradOutput, lr)
  PartialLinear.accUpdateGradParameters(self, input, gradOutput, lr)
end

function PartialLinear:zeroGradParameters()
  self:_lookup():zeroGradParameters()
  if self.gradBias then self.gradBias:zero() end
end

function PartialLinear:updateParameters(lr)
  self:_lookup():updateParameters(lr)
  if self.bias then self.bias:add(-lr, self.gradBias) end
end

function PartialLinear:__tostring__()
  return ("%s(%d -> %d)%s"):format(torch.type(self), self.inputsize, self.outputsize,
    self.bias and "" or " without bias")
end

-- nn.SparseLinear(inputSize, outputSize [, doGradInput = false]): a Linear over sparse
-- inputs: a k x 2 tensor of (1-based index, value) rows, a table of such tensors (a batch),
-- or a b x k x 2 tensor (the legacy batch). gradInput (with doGradInput) is dense, in the
-- same (index, value) form. After one backward, updateParameters and zeroGradParameters
-- touch only the columns the last input used.
local SparseLinear, slParent = torch.class("nn.SparseLinear", "nn.Module")

function SparseLinear:__init(inputSize, outputSize, doGradInput)
  slParent.__init(self)
  if not is_count(inputSize) or not is_count(outputSize) or inputSize < 1 or outputSize < 1 then
    fail("nn.SparseLinear", "inputSize and outputSize must be positive integers", 2)
  end
  if doGradInput ~= nil and type(doGradInput) ~= "boolean" then
    fail("nn.SparseLinear", "doGradInput must be a boolean", 2)
  end
  self.weightDecay = 0
  self.doGradInput = doGradInput or false
  self.weight = torch.Tensor(outputSize, inputSize):zero()
  self.bias = torch.Tensor(outputSize):zero()
  self.gradWeight = torch.Tensor(outputSize, inputSize):zero()
  self.gradBias = torch.Tensor(outputSize):zero()
  self.sparseUpdate = 0   -- 0: no last input, 1: one backward since zeroing, 2: several
  self.gradInput = {}
  self.output:resize(outputSize)
  self:reset()
end

function SparseLinear:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(2))
  self.weight:uniform(-stdv, stdv)
  self.bias:uniform(-stdv, stdv):mul(0.000001)
  return self
end

-- rows (batch entry), cols (input index) and values of all the nonzeros; batch size; the
-- input's form
function SparseLinear:_format(input)
  local list, batch, legacy
  if type(input) == "table" then
    list, batch, legacy = input, true, false
  elseif torch.isTensor(input) and input:dim() == 2 then
    list, batch, legacy = { input }, false, false
  elseif torch.isTensor(input) and input:dim() == 3 then
    list, batch, legacy = {}, true, true
    for i = 1, input:size(1) do list[i] = input[i] end
  else
    fail("nn.SparseLinear", "input must be a k x 2 tensor of (index, value) rows, a table of them, or b x k x 2 (got "
      .. sizestr(input) .. ")", 3)
  end
  local total = 0
  for i, t in ipairs(list) do
    if not torch.isTensor(t) or t:dim() ~= 2 or t:size(2) ~= 2 then
      fail("nn.SparseLinear", ("input %d must be a k x 2 tensor of (index, value) rows (got %s)"):format(i, sizestr(t)), 3)
    end
    total = total + t:size(1)
  end
  local rows = self._rows or torch.LongTensor()
  local cols = self._cols or torch.LongTensor()
  local vals = self._vals or self.weight.new()
  self._rows, self._cols, self._vals = rows, cols, vals
  rows:resize(total); cols:resize(total); vals:resize(total)
  local at = 1
  for i, t in ipairs(list) do
    local k = t:size(1)
    if k > 0 then
      rows:narrow(1, at, k):fill(i)
      cols:narrow(1, at, k):copy(t:select(2, 1))
      vals:narrow(1, at, k):copy(t:select(2, 2))
      at = at + k
    end
  end
  if total > 0 and (cols:min() < 1 or cols:max() > self.weight:size(2)) then
    fail("nn.SparseLinear", ("index out of range: indices %d..%d for %d inputs"):format(cols:min(), cols:max(), self.weight:size(2)), 3)
  end
  self.legacyMode = legacy
  return rows, cols, vals, #list, batch
end

function SparseLinear:updateOutput(input)
  if self.sparseUpdate == 1 then self.sparseUpdate = 2 end
  local rows, cols, vals, nb, batch = self:_format(input)
  local out = self._out or self.weight.new()
  self._out = out
  out:resize(nb, self.weight:size(1)):copy(self.bias:view(1, -1):expand(nb, self.weight:size(1)))
  if rows:nElement() > 0 then
    -- out[row] += value * weight[:, col] for each nonzero
    local contrib = self.weight:index(2, cols)       -- outputSize x nnz
    contrib:cmul(vals:view(1, -1):expandAs(contrib))
    out:indexAdd(1, rows, contrib:t())
  end
  if batch then self.output:set(out) else self.output:set(out[1]) end
  if nb == 0 then self.output:resize(self.bias:size(1)):copy(self.bias) end
  return self.output
end

function SparseLinear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local rows, cols, vals, nb = self:_format(input)
  local go = gradOutput:contiguous():view(nb, self.weight:size(1))
  if self.sparseUpdate == 0 then
    self.lastInput = self.lastInput or torch.LongTensor()
    self.lastInput:resize(cols:size()):copy(cols)
    self.sparseUpdate = 1
  elseif self.sparseUpdate == 1 then
    self.sparseUpdate = 2
  end
  if rows:nElement() > 0 then
    -- gradWeight[:, col] += scale * value * gradOutput[row]
    local g = go:index(1, rows)                        -- nnz x outputSize
    g:cmul(vals:view(-1, 1):expandAs(g)):mul(scale)
    self.gradWeight:indexAdd(2, cols, g:t())
  end
  self.gradBias:add(scale, go:sum(1):view(-1))
  if (self.weightDecay or 0) ~= 0 then self.gradWeight:add(self.weightDecay, self.weight) end
end

function SparseLinear:updateGradInput(input, gradOutput)
  local ini = self.weight:size(2)
  if self.legacyMode then
    if torch.type(self.gradInput) ~= torch.type(gradOutput) then self.gradInput = gradOutput.new() end
    self.gradInput:resizeAs(input)
  else
    self.gradInput = {}
  end
  if self.doGradInput then
    local batch = gradOutput:dim() == 2
    local gi = batch and torch.mm(gradOutput, self.weight) or torch.mv(self.weight:t(), gradOutput):view(1, ini)
    local idx = torch.range(1, ini):typeAs(gi)
    if self.legacyMode then
      self.gradInput:resize(gi:size(1), ini, 2)
      self.gradInput:select(3, 1):copy(idx:view(1, ini):expand(gi:size(1), ini))
      self.gradInput:select(3, 2):copy(gi)
    else
      for i = 1, gi:size(1) do
        local t = gradOutput.new(ini, 2)
        t:select(2, 1):copy(idx)
        t:select(2, 2):copy(gi[i])
        self.gradInput[i] = t
      end
    end
  end
  return self.gradInput
end

-- the columns the last input used (each once)
local function touched_columns(self)
  local c = self.lastInput
  if c:nElement() == 0 then return c end
  local mark = torch.ByteTensor(self.weight:size(2)):zero()
  mark:indexFill(1, c, 1)
  return torch.range(1, self.weight:size(2)):long()[mark]
end

function SparseLinear:updateParameters(lr)
  if self.lastInput and self.sparseUpdate == 1 then
    local c = touched_columns(self)
    if c:nElement() > 0 then
      local w = self.weight:index(2, c):add(-lr, self.gradWeight:index(2, c))
      self.weight:indexCopy(2, c, w)
    end
    self.bias:add(-lr, self.gradBias)
  else
    slParent.updateParameters(self, lr)
  end
end

function SparseLinear:zeroGradParameters()
  if self.lastInput and self.sparseUpdate == 1 then
    local c = touched_columns(self)
    if c:nElement() > 0 then self.gradWeight:indexFill(2, c, 0) end
    self.gradBias:zero()
  else
    slParent.zeroGradParameters(self)
  end
  self.sparseUpdate = 0
end

function SparseLinear:clearState()
  if self.lastInput then self.lastInput:set() end
  nn.utils.clear(self, "_rows", "_cols", "_vals", "_out")
  return slParent.clearState(self)
end

function SparseLinear:__tostring__()
  return ("%s(%d -> %d)"):format(torch.type(self), self.weight:size(2), self.weight:size(1))
end

-- nn.IndexLinear(inputSize, outputSize [, doGradInput] [, keysOffset] [, weight] [, bias]):
-- a Linear over sparse inputs {keys, values} (1-D, one sample), {{keys...}, {values...}}
-- (a batch) or {flatKeys, flatValues, sizes}; weight is inputSize x outputSize (rows are
-- features: key k uses row k + keysOffset - 1). gradWeight is kept per key (running) and
-- applied to the rows used by updateParameters. The normalized mode of Torch7 (argument 7)
-- is not provided.
local IndexLinear, ilParent = torch.class("nn.IndexLinear", "nn.Module")

function IndexLinear:__init(inputSize, outputSize, doGradInput, keysOffset, weight, bias, normalize)
  ilParent.__init(self)
  if normalize then fail("nn.IndexLinear", "the normalized mode (argument 7) is not supported", 2) end
  if not weight and (not is_count(inputSize) or not is_count(outputSize) or inputSize < 1 or outputSize < 1) then
    fail("nn.IndexLinear", "inputSize and outputSize must be positive integers", 2)
  end
  self.normalize = 0
  self.weight = weight or torch.Tensor(inputSize, outputSize):zero()
  self.bias = bias or torch.Tensor(self.weight:size(2)):zero()
  self.inputSize, self.outputSize = self.weight:size(1), self.weight:size(2)
  self.gradWeight = torch.Tensor()
  self.gradBias = torch.Tensor(self.outputSize):zero()
  self.running = { keys = {}, values = {}, gradOutput = {}, scale = {}, counter = 1 }
  self.weightDecay = 0
  self.doGradInput = doGradInput or false
  self.offset = keysOffset and keysOffset - 1 or -1
end

function IndexLinear:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(2))
  self.weight:uniform(-stdv, stdv)
  self.bias:uniform(-stdv, stdv):mul(0.000001)
  return self
end

-- keys (weight rows), values and the batch entry of each nonzero
function IndexLinear:_flatten(input)
  if type(input) ~= "table" or (#input ~= 2 and #input ~= 3) then
    fail("nn.IndexLinear", "input must be {keys, values}, {{keys...}, {values...}} or {keys, values, sizes}", 3)
  end
  local keys, values, sizes
  if #input == 3 then
    keys, values = input[1], input[2]
    sizes = torch.isTensor(input[3]) and input[3]:long() or torch.LongTensor({ input[3] })
    self.isFlat, self.noBatch = true, false
  elseif torch.isTensor(input[1]) and torch.isTensor(input[2]) then
    keys, values = input[1], input[2]
    sizes = torch.LongTensor({ keys:nElement() })
    self.isFlat, self.noBatch = false, true
  elseif type(input[1]) == "table" and type(input[2]) == "table" then
    if #input[1] ~= #input[2] then fail("nn.IndexLinear", "as many key tensors as value tensors are needed", 3) end
    local s = {}
    for i = 1, #input[1] do s[i] = input[1][i]:nElement() end
    sizes = torch.LongTensor(s)
    keys = #input[1] > 0 and torch.cat(input[1], 1) or torch.LongTensor()
    values = #input[2] > 0 and torch.cat(input[2], 1) or self.weight.new()
    self.isFlat, self.noBatch = false, false
  else
    fail("nn.IndexLinear", "wrong input format", 3)
  end
  if not torch.isTensor(keys) or not torch.isTensor(values) or keys:nElement() ~= values:nElement()
     or (keys:nElement() > 0 and (keys:dim() ~= 1 or values:dim() ~= 1)) then
    fail("nn.IndexLinear", "keys and values should be 1-D and of the same size", 3)
  end
  if sizes:sum() ~= keys:nElement() then fail("nn.IndexLinear", "the sizes do not add up to the number of keys", 3) end
  local rows = torch.LongTensor(keys:nElement()):copy(keys):add(self.offset + 1)
  if rows:nElement() > 0 and (rows:min() < 1 or rows:max() > self.inputSize) then
    fail("nn.IndexLinear", ("key out of range (rows %d..%d of %d)"):format(rows:min(), rows:max(), self.inputSize), 3)
  end
  local batchOf = torch.LongTensor(keys:nElement())
  local at = 1
  for i = 1, sizes:size(1) do
    local k = sizes[i]
    if k > 0 then batchOf:narrow(1, at, k):fill(i); at = at + k end
  end
  self.keys, self.values, self.sizes, self.batchOf = rows, values:typeAs(self.weight), sizes, batchOf
  return rows, self.values, batchOf, sizes:size(1)
end

function IndexLinear:updateOutput(input)
  local rows, vals, batchOf, nb = self:_flatten(input)
  self.output:resize(nb, self.outputSize):copy(self.bias:view(1, -1):expand(nb, self.outputSize))
  if rows:nElement() > 0 then
    local contrib = self.weight:index(1, rows)        -- nnz x outputSize
    contrib:cmul(vals:view(-1, 1):expandAs(contrib))
    self.output:indexAdd(1, batchOf, contrib)
  end
  if self.noBatch then self.output:resize(self.outputSize) end
  return self.output
end

-- per nonzero: value * gradOutput of its batch entry
local function key_gradients(self, gradOutput)
  local go = gradOutput:contiguous():view(-1, self.outputSize)
  local g = go:index(1, self.batchOf)
  g:cmul(self.values:view(-1, 1):expandAs(g))
  return g, go
end

function IndexLinear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local g, go = key_gradients(self, gradOutput)
  local c = self.running.counter
  self.running.keys[c] = self.keys
  self.running.gradWeight = self.running.gradWeight or {}
  self.running.gradWeight[c] = g:mul(scale)
  self.gradBias:add(scale, go:sum(1):view(-1))
  self.running.counter = c + 1
end

function IndexLinear:accUpdateGradParameters(input, gradOutput, lr)
  lr = lr or 1
  local g, go = key_gradients(self, gradOutput)
  if (self.weightDecay or 0) ~= 0 then
    self.weight:indexAdd(1, self.keys, self.weight:index(1, self.keys):mul(-self.weightDecay))
  end
  self.weight:indexAdd(1, self.keys, g:mul(-lr))
  self.bias:add(-lr, go:sum(1):view(-1))
end

function IndexLinear:updateGradInput(input, gradOutput)
  self.gradInput = {}
  local ini = self.weight:size(1)
  if self.doGradInput then
    local gi = gradOutput:dim() == 1 and torch.mv(self.weight, gradOutput):view(1, ini)
      or torch.mm(gradOutput, self.weight:t())
    local indices = torch.range(1, ini):long()
    if self.isFlat then
      self.gradInput[1] = indices:view(1, ini):expand(gi:size(1), ini):clone()
      self.gradInput[2] = gi
    else
      self.gradInput[1], self.gradInput[2] = {}, {}
      for i = 1, gi:size(1) do
        self.gradInput[1][i] = indices:clone()
        self.gradInput[2][i] = gi[i]:clone()
      end
    end
    if self.noBatch then
      if self.isFlat then
        self.gradInput = { self.gradInput[1]:view(ini), self.gradInput[2]:view(ini) }
      else
        self.gradInput = { self.gradInput[1][1], self.gradInput[2][1] }
      end
    end
  end
  return self.gradInput
end

function IndexLinear:updateParameters(lr)
  if not lr then fail("nn.IndexLinear", "updateParameters: a learning rate is needed", 2) end
  self.bias:add(-lr, self.gradBias)
  for i = 1, self.running.counter - 1 do
    local keys, g = self.running.keys[i], self.running.gradWeight[i]
    if keys:nElement() > 0 then
      if (self.weightDecay or 0) ~= 0 then
        self.weight:indexAdd(1, keys, self.weight:index(1, keys):mul(-self.weightDecay))
      end
      self.weight:indexAdd(1, keys, g * -lr)
    end
  end
end

function IndexLinear:zeroGradParameters()
  self.gradBias:zero()
  self.running.keys, self.running.gradWeight, self.running.counter = {}, {}, 1
end

function IndexLinear:parameters()
  return { self.weight, self.bias }, { self.running, self.gradBias }
end

function IndexLinear:clearState()
  self.running.keys, self.running.gradWeight = {}, {}
  self.keys, self.values, self.sizes, self.batchOf = nil, nil, nil, nil
  return ilParent.clearState(self)
end

function IndexLinear:__tostring__()
  return ("%s(%d -> %d)"):format(torch.type(self), self.inputSize, self.outputSize)
end

-- the rows of a batch (or the vector) of inputs, as n x inputSize
local function as_batch(cls, input, inputSize, level)
  if not torch.isTensor(input) or (input:dim() ~= 1 and input:dim() ~= 2) or input:size(input:dim()) ~= inputSize then
    fail(cls, ("input must be a vector of %d elements or a batch n x %d (got %s)"):format(inputSize, inputSize, sizestr(input)), level + 1)
  end
  return input:dim() == 1 and input:view(1, inputSize) or input
end

-- nn.Euclidean(inputSize, outputSize): y[j] = || x - w_j ||, w_j the columns of the
-- inputSize x outputSize weight
local Euclidean, euParent = torch.class("nn.Euclidean", "nn.Module")

function Euclidean:__init(inputSize, outputSize)
  euParent.__init(self)
  if not is_count(inputSize) or not is_count(outputSize) or inputSize < 1 or outputSize < 1 then
    fail("nn.Euclidean", "inputSize and outputSize must be positive integers", 2)
  end
  self.weight = torch.Tensor(inputSize, outputSize)
  self.gradWeight = torch.Tensor(inputSize, outputSize)
  self.gradInput:resize(inputSize)
  self.output:resize(outputSize)
  self.fastBackward = true
  self:reset()
end

function Euclidean:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(1))
  self.weight:uniform(-stdv, stdv)
  return self
end

-- x - w_j for every row and column: n x inputSize x outputSize
local function differences(self, x)
  local n, d, m = x:size(1), self.weight:size(1), self.weight:size(2)
  local diff = self._diff or self.weight.new()
  self._diff = diff
  diff:resize(n, d, m):copy(x:view(n, d, 1):expand(n, d, m))
  diff:add(-1, self.weight:view(1, d, m):expand(n, d, m))
  return diff
end

-- gradOutput / output, 0 where the output is 0
local function safe_ratio(self, gradOutput, output)
  local r = self._ratio or output.new()
  self._ratio = r
  r:resizeAs(output):copy(gradOutput:viewAs(output))
  local zero = torch.eq(output, 0)
  local z = output:clone():maskedFill(zero, 1)
  r:cdiv(z):maskedFill(zero, 0)
  return r
end

function Euclidean:updateOutput(input)
  local x = as_batch("nn.Euclidean", input, self.weight:size(1), 2)
  local n, m = x:size(1), self.weight:size(2)
  local diff = differences(self, x)
  local out = self._out or self.weight.new()
  self._out = out
  out:resize(n, 1, m):norm(diff, 2, 2)
  if input:dim() == 1 then self.output:resize(m):copy(out:view(m))
  else self.output:resize(n, m):copy(out:view(n, m)) end
  return self.output
end

-- dy_j/dx = (x - w_j) / y_j
function Euclidean:updateGradInput(input, gradOutput)
  if not self.gradInput then return end
  local x = as_batch("nn.Euclidean", input, self.weight:size(1), 2)
  local n, d, m = x:size(1), self.weight:size(1), self.weight:size(2)
  if not self.fastBackward or not self._diff or self._diff:size(1) ~= n then self:updateOutput(input) end
  local r = safe_ratio(self, gradOutput, self.output):view(n, 1, m)
  local t = self._t or self.weight.new()
  self._t = t
  t:resizeAs(self._diff):copy(self._diff):cmul(r:expand(n, d, m))
  self.gradInput:resize(n, d, 1):sum(t, 3)
  self.gradInput:resizeAs(input)
  return self.gradInput
end

-- dy_j/dw_j = (w_j - x) / y_j
function Euclidean:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x = as_batch("nn.Euclidean", input, self.weight:size(1), 2)
  local n, d, m = x:size(1), self.weight:size(1), self.weight:size(2)
  if not self._diff or self._diff:size(1) ~= n then self:updateOutput(input) end
  local r = safe_ratio(self, gradOutput, self.output):view(n, 1, m)
  local t = self._t or self.weight.new()
  self._t = t
  t:resizeAs(self._diff):copy(self._diff):cmul(r:expand(n, d, m))
  local s = self._s or self.weight.new()
  self._s = s
  s:resize(1, d, m):sum(t, 1)
  self.gradWeight:add(-scale, s:view(d, m))
end

function Euclidean:clearState()
  nn.utils.clear(self, "_diff", "_out", "_ratio", "_t", "_s")
  return euParent.clearState(self)
end

function Euclidean:__tostring__()
  return ("%s(%d -> %d)"):format(torch.type(self), self.weight:size(1), self.weight:size(2))
end

-- nn.WeightedEuclidean(inputSize, outputSize): y[j] = || c_j .* (x - w_j) ||, with a
-- diagonal weighting diagCov (inputSize x outputSize, initially ones) per column
local WeightedEuclidean, weParent = torch.class("nn.WeightedEuclidean", "nn.Module")

function WeightedEuclidean:__init(inputSize, outputSize)
  weParent.__init(self)
  if not is_count(inputSize) or not is_count(outputSize) or inputSize < 1 or outputSize < 1 then
    fail("nn.WeightedEuclidean", "inputSize and outputSize must be positive integers", 2)
  end
  self.weight = torch.Tensor(inputSize, outputSize)
  self.gradWeight = torch.Tensor(inputSize, outputSize)
  self.diagCov = torch.Tensor(inputSize, outputSize)
  self.gradDiagCov = torch.Tensor(inputSize, outputSize)
  self.gradInput:resize(inputSize)
  self.output:resize(outputSize)
  self.fastBackward = true
  self:reset()
end

function WeightedEuclidean:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(1))
  self.weight:uniform(-stdv, stdv)
  self.diagCov:fill(1)
  return self
end

function WeightedEuclidean:parameters()
  return { self.weight, self.diagCov }, { self.gradWeight, self.gradDiagCov }
end

function WeightedEuclidean:updateOutput(input)
  local x = as_batch("nn.WeightedEuclidean", input, self.weight:size(1), 2)
  local n, d, m = x:size(1), self.weight:size(1), self.weight:size(2)
  local diff = differences(self, x)
  local wd = self._wdiff or self.weight.new()
  self._wdiff = wd
  wd:resizeAs(diff):copy(diff):cmul(self.diagCov:view(1, d, m):expand(n, d, m))
  local out = self._out or self.weight.new()
  self._out = out
  out:resize(n, 1, m):norm(wd, 2, 2)
  if input:dim() == 1 then self.output:resize(m):copy(out:view(m))
  else self.output:resize(n, m):copy(out:view(n, m)) end
  return self.output
end

-- dy_j/dx = c_j^2 .* (x - w_j) / y_j
function WeightedEuclidean:updateGradInput(input, gradOutput)
  if not self.gradInput then return end
  local x = as_batch("nn.WeightedEuclidean", input, self.weight:size(1), 2)
  local n, d, m = x:size(1), self.weight:size(1), self.weight:size(2)
  if not self.fastBackward or not self._wdiff or self._wdiff:size(1) ~= n then self:updateOutput(input) end
  local r = safe_ratio(self, gradOutput, self.output):view(n, 1, m)
  local t = self._t or self.weight.new()
  self._t = t
  t:resizeAs(self._wdiff):copy(self._wdiff):cmul(self.diagCov:view(1, d, m):expand(n, d, m)):cmul(r:expand(n, d, m))
  self.gradInput:resize(n, d, 1):sum(t, 3)
  self.gradInput:resizeAs(input)
  return self.gradInput
end

-- dy_j/dw_j = -c_j^2 .* (x - w_j) / y_j;  dy_j/dc_j = c_j .* (x - w_j)^2 / y_j
function WeightedEuclidean:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x = as_batch("nn.WeightedEuclidean", input, self.weight:size(1), 2)
  local n, d, m = x:size(1), self.weight:size(1), self.weight:size(2)
  if not self._wdiff or self._wdiff:size(1) ~= n then self:updateOutput(input) end
  local r = safe_ratio(self, gradOutput, self.output):view(n, 1, m):expand(n, d, m)
  local c = self.diagCov:view(1, d, m):expand(n, d, m)
  local t = self._t or self.weight.new()
  self._t = t
  local s = self._s or self.weight.new()
  self._s = s
  t:resizeAs(self._wdiff):copy(self._wdiff):cmul(c):cmul(r)
  s:resize(1, d, m):sum(t, 1)
  self.gradWeight:add(-scale, s:view(d, m))
  t:copy(self._wdiff):cmul(self._diff):cmul(r)
  s:sum(t, 1)
  self.gradDiagCov:add(scale, s:view(d, m))
end

function WeightedEuclidean:accUpdateGradParameters(input, gradOutput, lr)
  local gw, gc = self.gradWeight, self.gradDiagCov
  self.gradWeight, self.gradDiagCov = self.weight, self.diagCov
  local ok, err = pcall(self.accGradParameters, self, input, gradOutput, -lr)
  self.gradWeight, self.gradDiagCov = gw, gc
  if not ok then error(err, 0) end
end

function WeightedEuclidean:clearState()
  nn.utils.clear(self, "_diff", "_wdiff", "_out", "_ratio", "_t", "_s")
  return weParent.clearState(self)
end

function WeightedEuclidean:__tostring__()
  return ("%s(%d -> %d)"):format(torch.type(self), self.weight:size(1), self.weight:size(2))
end

-- nn.Cosine(inputSize, outputSize): y[j] = w_j . x / (||w_j|| ||x||), w_j the rows of
-- the outputSize x inputSize weight (each norm plus 1e-12)
local Cosine, cosParent = torch.class("nn.Cosine", "nn.Module")

function Cosine:__init(inputSize, outputSize)
  cosParent.__init(self)
  if not is_count(inputSize) or not is_count(outputSize) or inputSize < 1 or outputSize < 1 then
    fail("nn.Cosine", "inputSize and outputSize must be positive integers", 2)
  end
  self.weight = torch.Tensor(outputSize, inputSize)
  self.gradWeight = torch.Tensor(outputSize, inputSize)
  self:reset()
end

function Cosine:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(1))
  self.weight:uniform(-stdv, stdv)
  return self
end

-- the norms of the rows of w (plus 1e-12) as a column
local function row_norms(buf, w)
  return buf:resize(w:size(1), 1):norm(w, 2, 2):add(1e-12)
end

function Cosine:updateOutput(input)
  local x = as_batch("nn.Cosine", input, self.weight:size(2), 2)
  local n, m = x:size(1), self.weight:size(1)
  self._weightNorm = row_norms(self._weightNorm or self.weight.new(), self.weight)
  self._inputNorm = row_norms(self._inputNorm or self.weight.new(), x)
  local out = self._out or self.weight.new()
  self._out = out
  out:resize(n, m):mm(x, self.weight:t())
  out:cdiv(self._weightNorm:view(1, m):expand(n, m)):cdiv(self._inputNorm:expand(n, m))
  if input:dim() == 1 then self.output:resize(m):copy(out:view(m)) else self.output:resize(n, m):copy(out) end
  return self.output
end

-- dy_j/dx = w_j / (||w_j|| ||x||) - y_j x / ||x||^2
function Cosine:updateGradInput(input, gradOutput)
  if not self.gradInput then return end
  local x = as_batch("nn.Cosine", input, self.weight:size(2), 2)
  local n, m, d = x:size(1), self.weight:size(1), self.weight:size(2)
  local g = gradOutput:contiguous():view(n, m)
  local gw = self._gw or self.weight.new()
  self._gw = gw
  gw:resize(n, m):copy(g):cdiv(self._weightNorm:view(1, m):expand(n, m))
  local gi = self._gi or self.weight.new()
  self._gi = gi
  gi:resize(n, d):mm(gw, self.weight):cdiv(self._inputNorm:expand(n, d))
  -- minus x * sum_j g_j y_j / ||x||^2
  local yg = self._yg or self.weight.new()
  self._yg = yg
  yg:resize(n, 1):sum(torch.cmul(self._out, g), 2)
  yg:cdiv(self._inputNorm):cdiv(self._inputNorm)
  gi:add(-1, torch.cmul(x, yg:expand(n, d)))
  self.gradInput:resizeAs(input):copy(gi:viewAs(input))
  return self.gradInput
end

-- dy_j/dw_j = x / (||w_j|| ||x||) - y_j w_j / ||w_j||^2
function Cosine:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x = as_batch("nn.Cosine", input, self.weight:size(2), 2)
  local n, m, d = x:size(1), self.weight:size(1), self.weight:size(2)
  local g = gradOutput:contiguous():view(n, m)
  local xs = torch.cdiv(x, self._inputNorm:expand(n, d))
  local dw = torch.mm(g:t(), xs)
  local yg = torch.cmul(self._out, g):sum(1):view(m, 1)
  dw:add(-1, torch.cmul(self.weight, torch.cdiv(yg, self._weightNorm):expand(m, d)))
  dw:cdiv(self._weightNorm:expand(m, d))
  self.gradWeight:add(scale, dw)
end

function Cosine:clearState()
  nn.utils.clear(self, "_weightNorm", "_inputNorm", "_out", "_gw", "_gi", "_yg")
  return cosParent.clearState(self)
end

function Cosine:__tostring__()
  return ("%s(%d -> %d)"):format(torch.type(self), self.weight:size(2), self.weight:size(1))
end

-- nn.Kmeans(k, dim [, scale]): online hard k-means. forward gives each row's nearest
-- center (1-based) and sets loss (the sum of squared distances to it); accGradParameters
-- accumulates -scale / n_c * sum (x - c) per center c (n_c its rows), so that
-- weight:add(-lr, gradWeight) moves the centers toward their rows' means.
local Kmeans, kmParent = torch.class("nn.Kmeans", "nn.Module")

function Kmeans:__init(k, dim, scale)
  kmParent.__init(self)
  if not is_count(k) or k < 1 then fail("nn.Kmeans", "Clusters cannot be 0 or negative.", 2) end
  if not is_count(dim) or dim < 1 then fail("nn.Kmeans", "Dimensionality cannot be 0 or negative.", 2) end
  self.k, self.dim, self.scale = k, dim, scale
  self.weight = torch.Tensor(k, dim)
  self.gradWeight = torch.Tensor(k, dim)
  self.loss = 0
  self.clusterSampleCount = torch.Tensor(k)
  self:reset()
end

function Kmeans:reset(stdev)
  stdev = stdev or 1
  self.weight:uniform(-stdev, stdev)
  return self
end

local function check_samples(self, input, level)
  if not torch.isTensor(input) or input:dim() ~= 2 then
    fail("nn.Kmeans", "Incorrect input dimensionality. Expecting 2D (got " .. sizestr(input) .. ").", level + 1)
  end
  if input:size(2) ~= self.dim then
    fail("nn.Kmeans", ("Dimensionality of input and weight don't match (%d vs %d)."):format(input:size(2), self.dim), level + 1)
  end
end

-- centers drawn among the rows
function Kmeans:initRandom(input)
  check_samples(self, input, 2)
  local n = input:size(1)
  if n < self.k then fail("nn.Kmeans", "Need atleast k samples for initialization.", 2) end
  local pick = torch.LongTensor(self.k):random(1, n)
  self.weight:index(input, 1, pick)
end

-- squared distances of every row to every center: k x n
local function sq_distances(self, input)
  local n = input:size(1)
  local xx = torch.cmul(input, input):sum(2):view(1, n)
  local cc = torch.cmul(self.weight, self.weight):sum(2)
  local d = torch.mm(self.weight, input:t()):mul(-2)
  d:add(cc:expand(self.k, n)):add(xx:expand(self.k, n))
  return d:clamp(0, math.huge)
end

-- k-means++: the first center a random row, each next one drawn among the (1-p) fraction
-- of rows farthest from the centers so far
function Kmeans:initKmeansPlus(input, p)
  self.p = p or self.p or 0.95
  if self.p < 0 or self.p > 1 then fail("nn.Kmeans", "P value should be between 0-1.", 2) end
  check_samples(self, input, 2)
  local n = input:size(1)
  local pcount = math.max(1, math.ceil((1 - self.p) * n))
  self.weight[1]:copy(input[torch.random(n)])
  local best = torch.Tensor(n):fill(math.huge)
  for c = 2, self.k do
    local prev = self.weight:narrow(1, c - 1, 1)
    local d = torch.cmul(input - prev:expand(n, self.dim), input - prev:expand(n, self.dim)):sum(2):view(n)
    best:cmin(d)
    local _, order = best:sort(true)
    self.weight[c]:copy(input[order[torch.random(pcount)]])
  end
end

function Kmeans:updateOutput(input)
  check_samples(self, input, 2)
  local d = sq_distances(self, input)
  local score, idx = d:min(1)
  self._minIndx = idx:view(input:size(1)):long()
  self.output:resize(input:size(1)):copy(self._minIndx)
  self.loss = score:sum()
  return self.output
end

-- the centers are the module's own loss's: no gradient goes to the input
function Kmeans:updateGradInput(input, gradOutput)
  self.gradInput:resize(input:size()):zero()
  return self.gradInput
end

function Kmeans:accGradParameters(input, gradOutput, scale)
  scale = self.scale or scale or 1
  if scale <= 0 then fail("nn.Kmeans", "Scale has to be positive.", 2) end
  if not self._minIndx then fail("nn.Kmeans", "accGradParameters before forward", 2) end
  local n = input:size(1)
  self.clusterSampleCount:zero():indexAdd(1, self._minIndx, self.weight.new(n):fill(1))
  -- -scale * (x - c) summed per center, divided by the center's count
  local diff = self.weight:index(1, self._minIndx):mul(-1):add(input):mul(-scale)
  local acc = self.gradWeight.new():resizeAs(self.gradWeight):zero():indexAdd(1, self._minIndx, diff)
  local counts = self.clusterSampleCount:clone():add(0.0000001)
  acc:cdiv(counts:view(self.k, 1):expandAs(acc))
  self.gradWeight:add(acc)
end

function Kmeans:clearState()
  self._minIndx = nil
  return kmParent.clearState(self)
end

function Kmeans:type(typename, tensorCache)
  self:clearState()
  return kmParent.type(self, typename, tensorCache)
end

return nn
