-- t7nn/activation.lua — transfer functions, elementwise or along one dim: Tanh, Sigmoid,
-- the ReLU family (Threshold, ReLU, ReLU6, LeakyReLU, PReLU, RReLU, ELU, CReLU), HardTanh,
-- Clamp, the shrinks, SoftMax, LogSoftMax, SoftMin (and their Spatial forms), SoftPlus,
-- SoftSign, LogSigmoid, Exp, Log, Abs, Power, Square, Sqrt, GatedLinearUnit.
--
-- Forward passes write into the module's output through the ops' result-first forms;
-- backward passes use the ops' fused backward kernels (torch._activation_backward,
-- torch.softmax_backward, ...) or a few whole-tensor ops. The in-place variants (the `ip`
-- flags) overwrite the input in forward and the gradOutput in backward, as Torch7's did.
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local sizestr, fail, grad_like, out = H.sizestr, H.failf, H.grad_like, H.sized
local function check_input(self, input) H.check_tensor(self, input) end


local function flag(cls, v, what)
  if v ~= nil and type(v) ~= "boolean" then error(cls .. ": the " .. (what or "in-place") .. " flag must be a boolean", 3) end
  return v or false
end

local function number_arg(cls, v, default, what)
  if v == nil then return default end
  if type(v) ~= "number" then error(("%s: %s must be a number, got %s"):format(cls, what, torch.type(v)), 3) end
  return v
end

-- a module class computing y = f(x) elementwise: fwd(output, input) writes f(input) into
-- output, bwd(self, input, gradOutput) returns the gradient (a new tensor or self's)
local function elementwise(name, fwd, bwd)
  local M, parent = torch.class(name, "nn.Module")
  function M:updateOutput(input)
    check_input(self, input)
    fwd(out(self.output, input), input, self)
    return self.output
  end
  function M:updateGradInput(input, gradOutput)
    check_input(self, input)
    gradOutput = grad_like(self, input, gradOutput)
    local g = bwd(self, input, gradOutput)
    if not rawequal(g, self.gradInput) then self.gradInput:set(g) end
    return self.gradInput
  end
  return M, parent
end

local act_backward = torch._activation_backward

-- nn.Tanh: y = tanh(x); dy/dx = 1 - y^2
elementwise("nn.Tanh", function(o, x) torch.tanh(o, x) end, function(self, input, go)
  local gi, y = out(self.gradInput, input), self.output
  torch.cmul(gi, go, y)               -- go * y
  torch.addcmul(gi, go, -1, gi, y)    -- go - go * y * y
  return gi
end)

-- nn.Sigmoid: y = 1 / (1 + exp(-x)); dy/dx = y (1 - y)
elementwise("nn.Sigmoid", function(o, x) torch.sigmoid(o, x) end, function(self, input, go)
  local gi, y = out(self.gradInput, input), self.output
  torch.cmul(gi, go, y)               -- go * y
  torch.addcmul(gi, gi, -1, gi, y)    -- go * y - go * y * y
  return gi
end)

-- nn.Exp: y = exp(x)
elementwise("nn.Exp", function(o, x) torch.exp(o, x) end, function(self, input, go)
  return torch.cmul(out(self.gradInput, input), self.output, go)
end)

-- nn.Log: y = log(x); dy/dx = 1 / x
elementwise("nn.Log", function(o, x) torch.log(o, x) end, function(self, input, go)
  return torch.cdiv(out(self.gradInput, input), go, input)
end)

-- nn.Abs: y = |x|; the gradient's sign is + at 0, as Torch7's
elementwise("nn.Abs", function(o, x) torch.abs(o, x) end, function(self, input, go)
  local gi = out(self.gradInput, input)
  gi:ge(input, 0)                     -- 1 where x >= 0, else 0
  return gi:mul(2):add(-1):cmul(go)
end)

-- nn.Square: y = x^2
elementwise("nn.Square", function(o, x) torch.cmul(o, x, x) end, function(self, input, go)
  return torch.cmul(out(self.gradInput, input), input, go):mul(2)
end)

-- nn.Sqrt([eps]): y = sqrt(x); the gradient is 0 where y is 0 (eps is kept for
-- compatibility and unused, as in Torch7)
local Sqrt, SqrtParent = elementwise("nn.Sqrt", function(o, x) torch.sqrt(o, x) end, function(self, input, go)
  local gi, y = out(self.gradInput, input), self.output
  torch.cdiv(gi, go, y):mul(0.5)
  self._zero = self._zero or torch.ByteTensor()
  out(self._zero, y):eq(y, 0)
  if self._zero:max() > 0 then gi:maskedFill(self._zero, 0) end
  return gi
end)
function Sqrt:__init(b)
  SqrtParent.__init(self)
  self.eps = b or 0
end
function Sqrt:clearState()
  nn.utils.clear(self, "_zero")
  return SqrtParent.clearState(self)
end

-- nn.Power(p): y = x^p
local Power, PowerParent = elementwise("nn.Power", function(o, x, self) torch.pow(o, x, self.pow) end,
  function(self, input, go)
    local gi = out(self.gradInput, input)
    torch.pow(gi, input, self.pow - 1)
    return gi:cmul(go):mul(self.pow)
  end)
function Power:__init(p)
  PowerParent.__init(self)
  if type(p) ~= "number" then error("nn.Power: the power must be a number: nn.Power(power)", 2) end
  self.pow = p
end
function Power:__tostring__() return ("%s(%g)"):format(torch.type(self), self.pow) end

-- nn.LogSigmoid: y = log(1 / (1 + exp(-x))), without overflow
local LogSigmoid, LogSigmoidParent = elementwise("nn.LogSigmoid", function(o, x) torch.logsigmoid(o, x) end,
  function(self, input, go) return act_backward(go, input, "logsigmoid") end)
function LogSigmoid:clearState()
  if self.buffer then self.buffer:set() end
  return LogSigmoidParent.clearState(self)
end

-- nn.SoftPlus([beta = 1]): y = log(1 + exp(beta x)) / beta; y = x where beta x > 20
local SoftPlus, SoftPlusParent = elementwise("nn.SoftPlus",
  function(o, x, self) torch.softplus(o, x, self.beta, self.threshold) end,
  function(self, input, go) return act_backward(go, input, "softplus", self.beta, self.threshold) end)
function SoftPlus:__init(beta)
  SoftPlusParent.__init(self)
  self.beta = number_arg("nn.SoftPlus", beta, 1, "beta")
  self.threshold = 20
end
function SoftPlus:__tostring__() return ("%s(%g)"):format(torch.type(self), self.beta) end

-- nn.SoftSign: y = x / (1 + |x|)
local SoftSign, SoftSignParent = elementwise("nn.SoftSign", function(o, x) torch.softsign(o, x) end,
  function(self, input, go) return act_backward(go, input, "softsign") end)
function SoftSign:clearState()
  nn.utils.clear(self, "temp", "tempgrad")
  return SoftSignParent.clearState(self)
end

-- nn.TanhShrink: y = x - tanh(x)
local TanhShrink, TanhShrinkParent = elementwise("nn.TanhShrink", function(o, x) torch.tanhshrink(o, x) end,
  function(self, input, go) return act_backward(go, input, "tanhshrink") end)

-- nn.HardShrink([lambda = 0.5]): y = x where |x| > lambda, else 0
local HardShrink, HardShrinkParent = elementwise("nn.HardShrink",
  function(o, x, self) torch.hardshrink(o, x, self.lambda) end,
  function(self, input, go) return act_backward(go, input, "hardshrink", self.lambda) end)
function HardShrink:__init(lam)
  HardShrinkParent.__init(self)
  self.lambda = number_arg("nn.HardShrink", lam, 0.5, "lambda")
  if self.lambda < 0 then error("nn.HardShrink: lambda must be >= 0", 2) end
end
function HardShrink:__tostring__() return ("%s(%g)"):format(torch.type(self), self.lambda) end

-- nn.SoftShrink([lambda = 0.5]): y = x - lambda above lambda, x + lambda below -lambda,
-- else 0
local SoftShrink, SoftShrinkParent = elementwise("nn.SoftShrink",
  function(o, x, self) torch.softshrink(o, x, self.lambda) end,
  function(self, input, go) return act_backward(go, input, "softshrink", self.lambda) end)
function SoftShrink:__init(lam)
  SoftShrinkParent.__init(self)
  self.lambda = number_arg("nn.SoftShrink", lam, 0.5, "lambda")
  if self.lambda < 0 then error("nn.SoftShrink: lambda must be >= 0", 2) end
end
function SoftShrink:__tostring__() return ("%s(%g)"):format(torch.type(self), self.lambda) end

-- clamps to [lo, hi] (in place: the input itself); the gradient passes where lo < x < hi
local function hardtanh_forward(self, input, lo, hi, inplace)
  check_input(self, input)
  if inplace then
    torch.clamp(input, input, lo, hi)
    self.output:set(input)
  else
    torch.clamp(out(self.output, input), input, lo, hi)
  end
  return self.output
end

local function hardtanh_backward(self, input, gradOutput, lo, hi, inplace)
  check_input(self, input)
  gradOutput = grad_like(self, input, gradOutput)
  local g
  if inplace then
    g = gradOutput
  else
    g = out(self.gradInput, input):copy(gradOutput)
  end
  self._mask = self._mask or torch.ByteTensor()
  out(self._mask, input):le(input, lo)
  g:maskedFill(self._mask, 0)
  self._mask:ge(input, hi)
  g:maskedFill(self._mask, 0)
  if inplace then self.gradInput:set(g) end
  return self.gradInput
end

-- nn.HardTanh([min = -1, max = 1, inplace]): y = x clamped to [min, max]
local HardTanh, HardTanhParent = torch.class("nn.HardTanh", "nn.Module")

function HardTanh:__init(min_value, max_value, inplace)
  HardTanhParent.__init(self)
  local cls = torch.type(self)
  self.min_val = number_arg(cls, min_value, -1, "min_value")
  self.max_val = number_arg(cls, max_value, 1, "max_value")
  self.inplace = flag(cls, inplace)
  if not (self.max_val > self.min_val) then error(cls .. ": max_value must be larger than min_value", 2) end
end

function HardTanh:updateOutput(input)
  return hardtanh_forward(self, input, self.min_val or -1, self.max_val or 1, self.inplace)
end

function HardTanh:updateGradInput(input, gradOutput)
  return hardtanh_backward(self, input, gradOutput, self.min_val or -1, self.max_val or 1, self.inplace)
end

function HardTanh:clearState()
  nn.utils.clear(self, "_mask")
  return HardTanhParent.clearState(self)
end

function HardTanh:__tostring__()
  return ("%s(%g, %g)"):format(torch.type(self), self.min_val, self.max_val)
end

-- nn.Clamp(min, max): HardTanh with the bounds given
local Clamp, ClampParent = torch.class("nn.Clamp", "nn.HardTanh")

function Clamp:__init(min_value, max_value)
  if type(min_value) ~= "number" or type(max_value) ~= "number" then
    error("nn.Clamp: min_value and max_value must be numbers: nn.Clamp(min, max)", 2)
  end
  ClampParent.__init(self, min_value, max_value)
end

-- nn.ReLU6([inplace]): y = x clamped to [0, 6]
local ReLU6, ReLU6Parent = torch.class("nn.ReLU6", "nn.Module")

function ReLU6:__init(inplace)
  ReLU6Parent.__init(self)
  self.inplace = flag("nn.ReLU6", inplace)
end

function ReLU6:updateOutput(input) return hardtanh_forward(self, input, 0, 6, self.inplace) end
function ReLU6:updateGradInput(input, gradOutput)
  return hardtanh_backward(self, input, gradOutput, 0, 6, self.inplace)
end
function ReLU6:clearState()
  nn.utils.clear(self, "_mask")
  return ReLU6Parent.clearState(self)
end

-- nn.Threshold([th = 1e-6, v = 0, inplace]): y = x where x > th, else v. In place, v
-- must not exceed th (backward tells the kept elements by the overwritten input).
local Threshold, ThresholdParent = torch.class("nn.Threshold", "nn.Module")

function Threshold:__init(th, v, ip)
  ThresholdParent.__init(self)
  local cls = torch.type(self)
  if (th ~= nil and type(th) ~= "number") or (v ~= nil and type(v) ~= "number") then
    error(cls .. ": threshold and value must be numbers: nn.Threshold(threshold, value)", 2)
  end
  self.threshold = th or 1e-6
  self.val = v or 0
  self.inplace = flag(cls, ip)
  if self.inplace and self.val > self.threshold then
    error(("%s: in-place processing requires value (%g) not exceed threshold (%g)"):format(cls, self.val, self.threshold), 2)
  end
end

function Threshold:validateParameters()
  self.inplace = self.inplace or false
  if self.inplace and self.val > self.threshold then
    error(("%s: in-place processing requires value (%g) not exceed threshold (%g)")
      :format(torch.type(self), self.val, self.threshold), 3)
  end
end

function Threshold:updateOutput(input)
  check_input(self, input)
  self:validateParameters()
  if self.inplace then
    torch.threshold(input, input, self.threshold, self.val)
    self.output:set(input)
  else
    torch.threshold(out(self.output, input), input, self.threshold, self.val)
  end
  return self.output
end

function Threshold:updateGradInput(input, gradOutput)
  check_input(self, input)
  self:validateParameters()
  gradOutput = grad_like(self, input, gradOutput)
  local g = act_backward(gradOutput, input, "threshold", self.threshold)
  if self.inplace then
    gradOutput:copy(g)
    self.gradInput:set(gradOutput)
  else
    self.gradInput:set(g)
  end
  return self.gradInput
end

function Threshold:__tostring__()
  return ("%s(%g, %g)"):format(torch.type(self), self.threshold, self.val)
end

-- nn.ReLU([inplace]): y = max(x, 0) (Threshold(0, 0))
local ReLU, ReLUParent = torch.class("nn.ReLU", "nn.Threshold")

function ReLU:__init(p)
  ReLUParent.__init(self, 0, 0, p)
end

function ReLU:__tostring__() return torch.type(self) .. "()" end

-- nn.LeakyReLU([negval = 0.01, inplace]): y = x where x > 0, else negval * x (a boolean
-- alone is the in-place flag; a negative negval rules out in place)
local LeakyReLU, LeakyReLUParent = torch.class("nn.LeakyReLU", "nn.Module")

function LeakyReLU:__init(negval, ip)
  LeakyReLUParent.__init(self)
  if type(negval) == "boolean" then
    ip, negval = negval, nil
  end
  self.negval = number_arg("nn.LeakyReLU", negval, 1 / 100, "negval")
  self.inplace = flag("nn.LeakyReLU", ip)
  if self.negval < 0 then self.inplace = false end
end

function LeakyReLU:updateOutput(input)
  check_input(self, input)
  if self.inplace then
    torch.leaky_relu(input, input, self.negval)
    self.output:set(input)
  else
    torch.leaky_relu(out(self.output, input), input, self.negval)
  end
  return self.output
end

-- go * (x > 0 ? 1 : negval) = negval * go + (1 - negval) * go * [x > 0]
function LeakyReLU:updateGradInput(input, gradOutput)
  check_input(self, input)
  gradOutput = grad_like(self, input, gradOutput)
  local pos = act_backward(gradOutput, input, "threshold", 0)
  pos:mul(1 - self.negval)
  if self.inplace then
    gradOutput:mul(self.negval):add(pos)
    self.gradInput:set(gradOutput)
  else
    torch.add(out(self.gradInput, input), pos, self.negval, gradOutput)
  end
  return self.gradInput
end

function LeakyReLU:__tostring__()
  return torch.type(self) .. ("(%g)"):format(self.negval)
end

-- nn.ELU([alpha = 1, inplace]): y = x where x > 0, else alpha (exp(x) - 1); the gradient
-- is taken from the output (y + alpha below 0), so it holds in place too
local ELU, ELUParent = torch.class("nn.ELU", "nn.Module")

function ELU:__init(alpha, inplace)
  ELUParent.__init(self)
  self.alpha = number_arg("nn.ELU", alpha, 1, "alpha")
  self.inplace = flag("nn.ELU", inplace)
end

function ELU:updateOutput(input)
  check_input(self, input)
  if self.inplace then
    torch.elu(input, input, self.alpha)
    self.output:set(input)
  else
    torch.elu(out(self.output, input), input, self.alpha)
  end
  return self.output
end

function ELU:updateGradInput(input, gradOutput)
  check_input(self, input)
  gradOutput = grad_like(self, input, gradOutput)
  local y = self.output
  if not y:isSameSizeAs(input) then fail(self, "backward before forward (or of another size)") end
  -- factor = y + alpha where y <= 0, 1 elsewhere
  self._factor = self._factor or y.new()
  self._mask = self._mask or torch.ByteTensor()
  torch.add(out(self._factor, y), y, self.alpha)
  out(self._mask, y):gt(y, 0)
  self._factor:maskedFill(self._mask, 1)
  if self.inplace then
    gradOutput:cmul(self._factor)
    self.gradInput:set(gradOutput)
  else
    torch.cmul(out(self.gradInput, input), gradOutput, self._factor)
  end
  return self.gradInput
end

function ELU:clearState()
  nn.utils.clear(self, "_factor", "_mask")
  return ELUParent.clearState(self)
end

function ELU:__tostring__()
  return ("%s (alpha:%f)"):format(torch.type(self), self.alpha)
end

-- nn.PReLU([nOutputPlane = 0]): y = x where x > 0, else w x with learnt slopes w (weight,
-- 0.25 at first): one shared slope when nOutputPlane is 0, else one per plane (dim 2 of
-- a batch, dim 1 of a single sample)
local PReLU, PReLUParent = torch.class("nn.PReLU", "nn.Module")

function PReLU:__init(nOutputPlane)
  PReLUParent.__init(self)
  if nOutputPlane ~= nil and (math.type(nOutputPlane) == nil or nOutputPlane < 0) then
    error("nn.PReLU: nOutputPlane must be a number >= 0", 2)
  end
  self.nOutputPlane = nOutputPlane or 0
  local n = (nOutputPlane and nOutputPlane > 0) and nOutputPlane or 1
  self.weight = torch.Tensor(n):fill(0.25)
  self.gradWeight = torch.Tensor(n):zero()
end

-- the slopes shaped to broadcast against input: a number (shared), or n viewed along the
-- plane dim
local function prelu_slopes(self, input)
  local n = self.nOutputPlane
  if n == 0 then return self.weight[1] end
  local d = input:dim()
  local pd = d > 1 and 2 or 1
  if d == 0 or input:size(pd) ~= n then
    error(("%s: wrong number of input planes: expected %d but got %s (input of size %s)")
      :format(torch.type(self), n, d == 0 and "none" or tostring(input:size(pd)), sizestr(input)), 4)
  end
  local s = {}
  for i = 1, d do s[i] = 1 end
  s[pd] = n
  return self.weight:view(table.unpack(s)):expandAs(input)
end

function PReLU:updateOutput(input)
  check_input(self, input)
  local w = prelu_slopes(self, input)
  local o = out(self.output, input)
  if type(w) == "number" then
    torch.leaky_relu(o, input, w)
  else
    -- x where x > 0, else w x: w x + (1 - w) relu(x)... written as w * min(x, 0) + max(x, 0)
    self._neg = self._neg or input.new()
    torch.clamp(out(self._neg, input), input, -math.huge, 0)
    torch.clamp(o, input, 0, math.huge)
    o:addcmul(1, self._neg, w)
  end
  return self.output
end

-- go where x > 0, w go elsewhere: pos + w (go - pos) with pos = go [x > 0]
function PReLU:updateGradInput(input, gradOutput)
  check_input(self, input)
  gradOutput = grad_like(self, input, gradOutput)
  local w = prelu_slopes(self, input)
  local pos = act_backward(gradOutput, input, "threshold", 0)
  local gi = out(self.gradInput, input)
  torch.add(gi, gradOutput, -1, pos)
  if type(w) == "number" then gi:mul(w) else gi:cmul(w) end
  gi:add(pos)
  return self.gradInput
end

-- dL/dw = sum of x go over the elements with x <= 0 (per plane)
function PReLU:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  check_input(self, input)
  gradOutput = grad_like(self, input, gradOutput)
  self._neg = self._neg or input.new()
  torch.clamp(out(self._neg, input), input, -math.huge, 0)
  self._neg:cmul(gradOutput)
  local n = self.nOutputPlane
  if n == 0 then
    self.gradWeight[1] = self.gradWeight[1] + scale * self._neg:sum()
  elseif input:dim() == 1 then
    prelu_slopes(self, input)
    self.gradWeight:add(scale, self._neg)
  else
    prelu_slopes(self, input)
    local t = self._neg:view(input:size(1), n, -1)
    self.gradWeight:add(scale, t:sum(1):sum(3):view(n))
  end
  return self.gradWeight
end

function PReLU:clearState()
  nn.utils.clear(self, "gradWeightBuf", "gradWeightBuf2", "_neg")
  return PReLUParent.clearState(self)
end

function PReLU:__tostring__()
  return ("%s(%d)"):format(torch.type(self), self.nOutputPlane)
end

-- nn.RReLU([lower = 1/8, upper = 1/3, inplace]): in training, y = x where x > 0, else
-- a x with a drawn uniformly from [lower, upper] per element (kept in noise); in
-- evaluation the slope is (lower + upper) / 2
local RReLU, RReLUParent = torch.class("nn.RReLU", "nn.Module")

function RReLU:__init(l, u, ip)
  RReLUParent.__init(self)
  self.lower = number_arg("nn.RReLU", l, 1 / 8, "lower")
  self.upper = number_arg("nn.RReLU", u, 1 / 3, "upper")
  if not (self.lower <= self.upper and self.lower >= 0) then
    error("nn.RReLU: the bounds must satisfy 0 <= lower <= upper", 2)
  end
  self.noise = torch.Tensor()
  self.train = true
  self.inplace = flag("nn.RReLU", ip)
end

function RReLU:updateOutput(input)
  check_input(self, input)
  local o = self.inplace and input or out(self.output, input)
  if self.train then
    self._mask = self._mask or torch.ByteTensor()
    out(self.noise, input):uniform(self.lower, self.upper)
    out(self._mask, input):gt(input, 0)
    self.noise:maskedFill(self._mask, 1)
    torch.cmul(o, input, self.noise)
  else
    torch.leaky_relu(o, input, (self.lower + self.upper) / 2)
  end
  if self.inplace then self.output:set(input) end
  return self.output
end

function RReLU:updateGradInput(input, gradOutput)
  check_input(self, input)
  gradOutput = grad_like(self, input, gradOutput)
  local g = self.inplace and gradOutput or out(self.gradInput, input)
  if self.train and self.upper - self.lower > 1e-6 then
    if not self.noise:isSameSizeAs(input) then fail(self, "backward before forward (or of another size)") end
    torch.cmul(g, gradOutput, self.noise)
  else
    -- go where x > 0, slope * go elsewhere
    local slope = (self.lower + self.upper) / 2
    local pos = act_backward(gradOutput, input, "threshold", 0)
    pos:mul(1 - slope)
    torch.add(g, pos, slope, gradOutput)
  end
  if self.inplace then self.gradInput:set(g) end
  return self.gradInput
end

function RReLU:__tostring__()
  return ("%s (l:%f, u:%f)"):format(torch.type(self), self.lower, self.upper)
end

function RReLU:clearState()
  if self.noise then self.noise:set() end
  nn.utils.clear(self, "_mask")
  return RReLUParent.clearState(self)
end

-- nn.CReLU(nInputDims [, inplace]): the rectified input and the rectified negated input
-- concatenated along the features: an input of nInputDims dims (C x ...) gives 2C x ...,
-- a batch (N x C x ...) N x 2C x ...
local CReLU, CReLUParent = torch.class("nn.CReLU", "nn.Module")

function CReLU:__init(nInputDims, inplace)
  CReLUParent.__init(self)
  if math.type(nInputDims) == nil or nInputDims < 1 then
    error("nn.CReLU: nInputDims must be a positive number", 2)
  end
  self.nInputDims = nInputDims
  self.inplace = inplace or false
end

-- the input as n x features, and whether it is a batch
local function crelu_rows(self, t, input)
  check_input(self, input)
  local d = input:dim()
  if d ~= self.nInputDims and d ~= self.nInputDims + 1 then
    fail(self, "input must have %d dims (or %d for a batch), got size %s", self.nInputDims,
      self.nInputDims + 1, sizestr(input))
  end
  local batched = d == self.nInputDims + 1
  local n = batched and input:size(1) or 1
  return t:contiguous():view(n, -1), batched
end

function CReLU:updateOutput(input)
  local x, batched = crelu_rows(self, input, input)
  local n, f = x:size(1), x:size(2)
  local osize = input:size():totable()
  local cd = batched and 2 or 1
  osize[cd] = osize[cd] * 2
  self.output:resize(table.unpack(osize))
  local o = self.output:view(n, 2 * f)
  torch.clamp(o:narrow(2, 1, f), x, 0, math.huge)
  torch.clamp(o:narrow(2, f + 1, f), x, -math.huge, 0):mul(-1)
  return self.output
end

function CReLU:updateGradInput(input, gradOutput)
  local x = crelu_rows(self, input, input)
  local n, f = x:size(1), x:size(2)
  if gradOutput:nElement() ~= 2 * n * f then
    fail(self, "gradOutput of size %s does not match the output's size %s", sizestr(gradOutput), sizestr(self.output))
  end
  local g = gradOutput:contiguous():view(n, 2 * f)
  -- go_first [x > 0] - go_second [x < 0]
  local pos = act_backward(g:narrow(2, 1, f), x, "threshold", 0)
  self._negx = self._negx or x.new()
  torch.mul(out(self._negx, x), x, -1)
  local neg = act_backward(g:narrow(2, f + 1, f), self._negx, "threshold", 0)
  self.gradInput:resizeAs(input)
  torch.add(self.gradInput:view(n, f), pos, -1, neg)
  return self.gradInput
end

function CReLU:clearState()
  nn.utils.clear(self, "_negx")
  return CReLUParent.clearState(self)
end

function CReLU:__tostring__() return "CReLU()" end

-- the dim (1-based) that SoftMax and friends normalise over, as Torch7's: the last of a
-- 1-D or 2-D input, the first of a 3-D one (C x H x W), the second of a 4-D one
local function softmax_dim(self, input)
  check_input(self, input)
  local d = input:dim()
  if d == 1 or d == 3 then return 1 end
  if d == 2 or d == 4 then return 2 end
  error(("%s: 1D, 2D, 3D or 4D tensor expected, got size %s"):format(torch.type(self), sizestr(input)), 3)
end

local function softmax_class(name, log, negate)
  local M, parent = torch.class(name, "nn.Module")
  function M:updateOutput(input)
    local dim = softmax_dim(self, input)
    local x = input
    if negate then
      self.mininput = self.mininput or input.new()
      x = torch.mul(out(self.mininput, input), input, -1)
    end
    if log then
      torch.log_softmax(out(self.output, input), x, dim)
    else
      torch.softmax(out(self.output, input), x, dim)
    end
    return self.output
  end
  function M:updateGradInput(input, gradOutput)
    local dim = softmax_dim(self, input)
    gradOutput = grad_like(self, input, gradOutput)
    if not self.output:isSameSizeAs(input) then fail(self, "backward before forward (or of another size)") end
    local g
    if log then
      g = torch.log_softmax_backward(gradOutput, self.output, dim)
    else
      g = torch.softmax_backward(gradOutput, self.output, dim)
    end
    if negate then g:mul(-1) end
    self.gradInput:set(g)
    return self.gradInput
  end
  function M:clearState()
    if self.mininput then self.mininput:set() end
    return parent.clearState(self)
  end
  return M
end

-- nn.SoftMax: y = exp(x) / sum exp(x) along the features (softmax_dim)
softmax_class("nn.SoftMax", false, false)
-- nn.LogSoftMax: y = x - log(sum exp(x)) along the features
softmax_class("nn.LogSoftMax", true, false)
-- nn.SoftMin: SoftMax of -x
softmax_class("nn.SoftMin", false, true)
-- nn.SpatialSoftMax: SoftMax over the planes at each position of a C x H x W input or a
-- batch of them (the same dims as SoftMax)
softmax_class("nn.SpatialSoftMax", false, false)
-- nn.SpatialLogSoftMax: LogSoftMax over the planes at each position
softmax_class("nn.SpatialLogSoftMax", true, false)

-- nn.GatedLinearUnit([dim = the last]): the input's two halves a, b along dim give
-- y = a * sigmoid(b)
local GatedLinearUnit, GatedLinearUnitParent = torch.class("nn.GatedLinearUnit", "nn.Module")

function GatedLinearUnit:__init(dim)
  GatedLinearUnitParent.__init(self)
  if dim ~= nil and (math.type(dim) == nil or dim < 1) then error("nn.GatedLinearUnit: dim must be a positive number", 2) end
  self.dim = dim
end

local function glu_halves(self, input)
  check_input(self, input)
  local dim = self.dim or input:dim()
  if dim < 1 or dim > input:dim() then
    fail(self, "dim %d out of range for an input of size %s", dim, sizestr(input))
  end
  local n = input:size(dim)
  if n % 2 ~= 0 then fail(self, "halving dimension must be even: dim %d is size %d", dim, n) end
  local h = n // 2
  return dim, h, input:narrow(dim, 1, h), input:narrow(dim, h + 1, h)
end

function GatedLinearUnit:updateOutput(input)
  local _, _, a, b = glu_halves(self, input)
  local o = out(self.output, a)
  torch.sigmoid(o, b)
  o:cmul(a)
  return self.output
end

-- d/da = sigmoid(b) go; d/db = a s (1 - s) go
function GatedLinearUnit:updateGradInput(input, gradOutput)
  local dim, h, a, b = glu_halves(self, input)
  if not torch.isTensor(gradOutput) or gradOutput:nElement() ~= a:nElement() then
    fail(self, "gradOutput must have the size of the output (%s)", sizestr(a))
  end
  if not gradOutput:isSameSizeAs(a) then gradOutput = gradOutput:contiguous():view(a:size()) end
  local gi = out(self.gradInput, input)
  local ga, gb = gi:narrow(dim, 1, h), gi:narrow(dim, h + 1, h)
  torch.sigmoid(ga, b)
  torch.cmul(gb, ga, ga)
  torch.add(gb, ga, -1, gb)         -- s (1 - s)
  gb:cmul(a):cmul(gradOutput)
  ga:cmul(gradOutput)
  return self.gradInput
end

return nn
