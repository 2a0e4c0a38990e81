-- nn/torch7.lua — Torch7's spellings on top of autograd, so old scripts run:
--   out = model:forward(x); err = crit:forward(out, y)
--   model:zeroGradParameters(); model:backward(x, crit:backward(out, y)); model:updateParameters(lr)
--
-- module:forward(x) remembers its input and output (module.output); when x is a floating
-- tensor that doesn't require grad, forward runs on a leaf copy of it that does, so that
-- backward can return gradInput. module:backward(x, gradOutput) differentiates the last
-- output with respect to that input and the module's own parameters only (a graph boundary
-- per module, as Torch7's module-local backward), accumulates into the parameters' grads and
-- returns gradInput. A criterion's backward(input, target) is d loss / d input.
--
-- The Torch7 classes declare signatures with Torch7's parameter names (help prints them, and a
-- misspelt name in an options table is an error, as everywhere); Torch7 itself took positional
-- arguments only, so a Torch7 script calls them as it always did.
local torch = require "torch"
local class = require "torch_class"
local base = require "nn.module"
local Module, Parameter = base.Module, base.Parameter
local signature = class.signature

local T = {}

local function is_float_tensor(x) return torch.is_tensor(x) and x:is_floating_point() end

-- leaf copies that require grad, for inputs that don't (tables of tensors one level deep)
local function leafify(x)
  if torch.is_tensor(x) then
    if x:is_floating_point() and not x.requires_grad then return x:detach():requires_grad_(true) end
    return x
  end
  if type(x) == "table" and not base.is_module(x) then
    local out, changed = {}, false
    for i, v in ipairs(x) do
      out[i] = leafify(v)
      if not rawequal(out[i], v) then changed = true end
    end
    if changed then return out end
  end
  return x
end

base.forward_entry = function(self, impl, x, ...)
  local attrs = self._attrs
  if rawget(attrs, "_t7_nested") then return impl(self, x, ...) end
  if torch.is_grad_enabled() then x = leafify(x) end
  attrs._t7_nested = true
  local ok, out = pcall(impl, self, x, ...)
  attrs._t7_nested = nil
  if not ok then error(out, 0) end
  attrs._t7_input = x
  attrs.output = out
  return out
end

-- tensors of a (possibly nested one level) table, in order
local function flat_tensors(x, out)
  out = out or {}
  if torch.is_tensor(x) then out[#out + 1] = x
  elseif type(x) == "table" then for _, v in ipairs(x) do flat_tensors(v, out) end end
  return out
end

-- differentiate the last output of self; wrt: "input", "params" or "both"
local function module_grads(self, input, gradOutput, wrt, scale)
  local attrs = self._attrs
  local out = attrs.output
  if out == nil then
    error(("%s: backward() called before forward()"):format(self:_get_name()), 3)
  end
  local x = attrs._t7_input
  if input ~= nil and x ~= nil and not rawequal(input, x) then
    -- the caller passes the original (non-leaf-copied) input: that's the one we copied
  end
  local outs = flat_tensors(out)
  local gos = flat_tensors(gradOutput)
  if #outs ~= #gos then
    error(("%s: backward(): gradOutput has %d tensors, the output %d"):format(self:_get_name(), #gos, #outs), 3)
  end
  local targets, kinds = {}, {}
  local inputs = flat_tensors(x)
  if wrt ~= "params" then
    for i, t in ipairs(inputs) do
      if t.requires_grad then targets[#targets + 1] = t; kinds[#targets] = { "input", i } end
    end
  end
  local params = {}
  if wrt ~= "input" then
    for _, p in ipairs(self:parameters()) do
      if p.requires_grad then targets[#targets + 1] = p; kinds[#targets] = { "param", p } end
    end
  end
  -- only outputs that carry history take part
  local o2, g2 = {}, {}
  for i, o in ipairs(outs) do
    if o.requires_grad then o2[#o2 + 1] = o; g2[#g2 + 1] = gos[i] end
  end
  local gradInputs = {}
  if #targets > 0 and #o2 > 0 then
    local grads = torch.autograd.grad(o2, targets, { grad_outputs = g2, allow_unused = true, retain_graph = true })
    torch.no_grad(function()
      for i, k in ipairs(kinds) do
        local g = grads[i]
        if k[1] == "input" then gradInputs[k[2]] = g
        elseif g ~= nil then
          local p = k[2]
          if scale and scale ~= 1 then g = g * scale end
          local pg = p.grad
          if pg == nil then p.grad = g:detach() else pg:add_(g) end
        end
      end
    end)
  end
  if wrt == "params" then return nil end
  -- gradInput: zeros where an input got no gradient; a table for table inputs
  local function fill(i, t) return gradInputs[i] or (is_float_tensor(t) and torch.zeros_like(t) or nil) end
  local gi
  if torch.is_tensor(x) then gi = fill(1, x)
  elseif type(x) == "table" then
    gi = {}
    for i, t in ipairs(inputs) do gi[i] = fill(i, t) end
  end
  attrs.gradInput = gi
  return gi
end

function Module:backward(input, gradOutput, scale)
  return module_grads(self, input, gradOutput, "both", scale)
end
function Module:updateOutput(input) return self:forward(input) end
-- updateGradInput computes gradInput only; accGradParameters accumulates the parameters' grads
function Module:updateGradInput(input, gradOutput) return module_grads(self, input, gradOutput, "input") end
function Module:accGradParameters(input, gradOutput, scale) module_grads(self, input, gradOutput, "params", scale) end

function Module:zeroGradParameters()
  torch.no_grad(function()
    for _, p in ipairs(self:parameters()) do
      local g = p.grad
      if g ~= nil then g:zero_() end
    end
  end)
end

function Module:updateParameters(lr)
  torch.no_grad(function()
    for _, p in ipairs(self:parameters()) do
      local g = p.grad
      if g ~= nil then p:add_(g, { alpha = -lr }) end
    end
  end)
end

-- Torch7's parameters(): two lists, the weights and their grads
function Module:parametersAndGrads()
  local ps, gs = {}, {}
  for i, p in ipairs(self:parameters()) do
    ps[i] = p
    if p.grad == nil then p.grad = torch.zeros_like(p) end
    gs[i] = p.grad
  end
  return ps, gs
end

-- getParameters(): one flat parameter tensor and one flat grad tensor; every parameter
-- becomes a view of a slice of the first (through `p.data = view`, so each parameter keeps
-- its identity and optimizers built before still hold it) and its grad a view of the same
-- slice of the second. Keep grads with zeroGradParameters() / zero_grad({set_to_none=false})
-- so they stay views.
function Module:getParameters()
  local params = self:parameters()
  if #params == 0 then return torch.empty(0), torch.empty(0) end
  local dtype = params[1].dtype
  local total = 0
  for _, p in ipairs(params) do
    if p.dtype ~= dtype then error(self:_get_name() .. ": getParameters() needs all parameters of one dtype", 2) end
    total = total + p:numel()
  end
  local flat = torch.empty(total, { dtype = dtype, device = params[1].device })
  local flat_grad = torch.zeros(total, { dtype = dtype, device = params[1].device })
  local off = 1
  torch.no_grad(function()
    for _, p in ipairs(params) do
      local n = p:numel()
      local shape = p.shape
      local v = flat:narrow(1, off, n):view(shape)
      v:copy_(p)
      p.data = v
      local g = flat_grad:narrow(1, off, n):view(shape)
      if p.grad ~= nil then g:copy_(p.grad) end
      p.grad = g
      off = off + n
    end
  end)
  self._attrs._flat_params = true
  return flat, flat_grad
end

-- Torch7's module:type('torch.DoubleTensor') (and :type() -> the tensor type name)
local TYPES = { ["torch.FloatTensor"] = "float32", ["torch.DoubleTensor"] = "float64",
                ["torch.HalfTensor"] = "float16", ["torch.CudaTensor"] = "cuda" }
function Module:type(t)
  if t == nil then
    local p = self:parameters()[1]
    local dt = p and p.dtype.name or "float32"
    for k, v in pairs(TYPES) do if v == dt then return k end end
    return "torch.FloatTensor"
  end
  local target = TYPES[t] or t
  return self:to(target)
end

function Module:evaluate() return self:eval() end
-- model:training() is the boolean field's __call (see module.lua)

function Module:clearState()
  self._attrs.output, self._attrs.gradInput, self._attrs._t7_input = nil, nil, nil
  for _, c in ipairs(self:children()) do c:clearState() end
  return self
end

-- zero_grad keeps flat grads (getParameters) in place
local plain_zero_grad = Module.zero_grad
function Module:zero_grad(opts)
  if self._attrs._flat_params and opts == nil then opts = { set_to_none = false } end
  return plain_zero_grad(self, opts)
end

------------------------------------------------------------------------------
-- criteria: backward(input, target) = d loss / d input
------------------------------------------------------------------------------
function T.install_criterion(C)
  function C:backward(input, target)
    local x = input:detach():requires_grad_(true)
    local loss = torch.enable_grad(function() return self:_forward_impl(x, target) end)
    if type(loss) == "number" then loss = self._attrs._t7_loss end
    local g = torch.autograd.grad(loss, x)
    self._attrs.gradInput = g
    return g
  end
  C.updateGradInput = C.backward
end

------------------------------------------------------------------------------
-- Torch7 class names
------------------------------------------------------------------------------
function T.install(nn)
  for _, name in ipairs({ "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
                          "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "SoftMarginLoss", "HingeEmbeddingLoss",
                          "PoissonNLLLoss" }) do
    if nn[name] then T.install_criterion(nn[name]) end
  end

  -- criteria whose forward returns a Lua number, as in Torch7; sizeAverage is the reduction
  -- (true: the mean, false: the sum), PyTorch's deprecated size_average
  local function criterion(name, parent, spec, make_opts)
    local C = parent:extend(name)
    local SIG = signature("nn." .. name, spec)
    function C:__init(...)
      parent.__init(self, make_opts(SIG(...)))
    end
    function C:forward(input, target)
      local l = parent._forward_impl(self, input, target)
      self._attrs._t7_loss = l
      self._attrs.output = l:item()
      return self._attrs.output
    end
    T.install_criterion(C)
    C.backward = function(self, input, target)
      local x = input:detach():requires_grad_(true)
      local loss = torch.enable_grad(function() return parent._forward_impl(self, x, target) end)
      local g = torch.autograd.grad(loss, x)
      self._attrs.gradInput = g
      return g
    end
    C.updateGradInput = C.backward
    nn[name] = C
    return C
  end
  local function weighted(a) return { weight = a.weights, size_average = a.sizeAverage, ignore_index = a.ignoreIndex } end
  local function plain(a) return { size_average = a.sizeAverage } end
  criterion("ClassNLLCriterion", nn.NLLLoss, "weights=nil, sizeAverage=true, ignoreIndex=-100", weighted)
  criterion("CrossEntropyCriterion", nn.CrossEntropyLoss, "weights=nil, sizeAverage=true", weighted)
  criterion("MSECriterion", nn.MSELoss, "sizeAverage=true", plain)
  criterion("AbsCriterion", nn.L1Loss, "sizeAverage=true", plain)
  criterion("SmoothL1Criterion", nn.SmoothL1Loss, "sizeAverage=true", plain)
  criterion("BCECriterion", nn.BCELoss, "weights=nil, sizeAverage=true", weighted)
  criterion("DistKLDivCriterion", nn.KLDivLoss, "sizeAverage=true", plain)

  -- LogSoftMax / SoftMax over the last dim (Torch7 took 1-D or 2-D [batch, classes] input)
  local function softmax_class(name, parent)
    local C = parent:extend(name)
    local SIG = signature("nn." .. name, "")
    function C:__init(...) SIG(...); parent.__init(self, -1) end
    nn[name] = C
  end
  softmax_class("LogSoftMax", nn.LogSoftmax)
  softmax_class("SoftMax", nn.Softmax)
  softmax_class("SoftMin", nn.Softmin)

  -- View(sizes...) / Reshape(sizes..., batchMode): a leading batch dim is kept when the input
  -- has more elements than the sizes describe
  local function sizes_of(...)
    local s = table.pack(...)
    if s.n == 1 and type(s[1]) == "table" then return s[1] end
    local out = {}
    for i = 1, s.n do if type(s[i]) == "number" then out[#out + 1] = s[i] end end
    return out
  end
  local function numel(sizes)
    local n = 1
    for _, v in ipairs(sizes) do if v > 0 then n = n * v end end
    return n
  end
  local View = Module:extend("View")
  local VIEW = base.varargs_signature("nn.View", "*sizes")
  function View:__init(...)
    local _, n = base.varargs_options(VIEW, ...)
    self.size = sizes_of(table.unpack({ ... }, 1, n)); self.numElements = numel(self.size)
  end
  function View:setNumInputDims(n) self.numInputDims = n; return self end
  function View:forward(x)
    local has_minus = false
    for _, v in ipairs(self.size) do if v == -1 then has_minus = true end end
    local batch = (self.numInputDims and x:dim() > self.numInputDims) or
      (not has_minus and x:numel() ~= self.numElements and x:dim() > 0 and x:numel() == x:size(1) * self.numElements)
    if batch then
      local s = { x:size(1) }
      for _, v in ipairs(self.size) do s[#s + 1] = v end
      return x:reshape(s)
    end
    return x:reshape(self.size)
  end
  function View:extra_repr() return table.concat((function() local t = {} for i, v in ipairs(self.size) do t[i] = tostring(v) end return t end)(), "x") end
  nn.View = View
  local Reshape = View:extend("Reshape")
  local RESHAPE = base.varargs_signature("nn.Reshape", "*sizes, batchMode=nil")
  function Reshape:__init(...)
    local _, n = base.varargs_options(RESHAPE, ...)
    local s = table.pack(...)
    s.n = n
    local batchMode
    if type(s[s.n]) == "boolean" then batchMode = s[s.n]; s.n = s.n - 1 end
    View.__init(self, table.unpack(s, 1, s.n))
    self.batchMode = batchMode
  end
  function Reshape:forward(x)
    if self.batchMode == true or (self.batchMode == nil and x:numel() ~= self.numElements) then
      local s = { x:size(1) }
      for _, v in ipairs(self.size) do s[#s + 1] = v end
      return x:reshape(s)
    end
    return x:reshape(self.size)
  end
  nn.Reshape = Reshape

  -- SpatialConvolution(nIn, nOut, kW, kH, dW=1, dH=1, padW=0, padH=padW): Torch7's width-first order
  local SpatialConvolution = nn.Conv2d:extend("SpatialConvolution")
  local SPATIALCONVOLUTION = signature("nn.SpatialConvolution",
    "nInputPlane, nOutputPlane, kW, kH=kW, dW=1, dH=1, padW=0, padH=padW")
  function SpatialConvolution:__init(...)
    local a = SPATIALCONVOLUTION(...)
    local nIn, nOut, kW, kH, dW, dH, padW, padH = a.nInputPlane, a.nOutputPlane, a.kW, a.kH, a.dW, a.dH, a.padW, a.padH
    kH = kH or kW
    nn.Conv2d.__init(self, nIn, nOut, { kH, kW }, { stride = { dH or 1, dW or 1 }, padding = { padH or padW or 0, padW or 0 } })
    self.kW, self.kH, self.dW, self.dH = kW, kH, dW or 1, dH or 1
    self.padW, self.padH = padW or 0, padH or padW or 0
  end
  nn.SpatialConvolution = SpatialConvolution

  -- SpatialMaxPooling(kW, kH, dW=kW, dH=kH, padW=0, padH=0), :ceil() / :floor()
  local SpatialMaxPooling = nn.MaxPool2d:extend("SpatialMaxPooling")
  local SPATIALMAXPOOLING = signature("nn.SpatialMaxPooling", "kW, kH=kW, dW=kW, dH=kH, padW=0, padH=0")
  function SpatialMaxPooling:__init(...)
    local a = SPATIALMAXPOOLING(...)
    local kW, kH, dW, dH, padW, padH = a.kW, a.kH, a.dW, a.dH, a.padW, a.padH
    kH = kH or kW
    nn.MaxPool2d.__init(self, { kH, kW }, { dH or kH, dW or kW }, { padH or 0, padW or 0 })
  end
  function SpatialMaxPooling:ceil() self.ceil_mode = true; return self end
  function SpatialMaxPooling:floor() self.ceil_mode = false; return self end
  nn.SpatialMaxPooling = SpatialMaxPooling

  local SpatialAveragePooling = nn.AvgPool2d:extend("SpatialAveragePooling")
  local SPATIALAVERAGEPOOLING = signature("nn.SpatialAveragePooling", "kW, kH=kW, dW=1, dH=1, padW=0, padH=0")
  function SpatialAveragePooling:__init(...)
    local a = SPATIALAVERAGEPOOLING(...)
    local kW, kH, dW, dH, padW, padH = a.kW, a.kH, a.dW, a.dH, a.padW, a.padH
    kH = kH or kW
    nn.AvgPool2d.__init(self, { kH, kW }, { dH or 1, dW or 1 }, { padH or 0, padW or 0 })
  end
  nn.SpatialAveragePooling = SpatialAveragePooling

  -- table containers and table layers
  local Container = nn.Sequential
  local function container(name)
    local C = Container:extend(name)
    nn[name] = C
    return C
  end

  -- Concat(dim): every child on the same input, outputs concatenated along dim
  local Concat = container("Concat")
  local CONCAT = signature("nn.Concat", "dimension")
  function Concat:__init(...)
    local dim = CONCAT(...).dimension
    if math.type(dim) ~= "integer" then
      error("Concat: argument 'dimension' must be an integer, got " .. tostring(dim), 3)
    end
    Container.__init(self)
    self.dimension = dim
  end
  function Concat:forward(x)
    local outs = {}
    for i, m in ipairs(self:children()) do outs[i] = m(x) end
    return torch.cat(outs, self.dimension)
  end
  function Concat:extra_repr() return "dim=" .. tostring(self.dimension) end

  -- ConcatTable: every child on the same input, a list of outputs
  local ConcatTable = container("ConcatTable")
  local CONCATTABLE = signature("nn.ConcatTable", "")
  function ConcatTable:__init(...) CONCATTABLE(...); Container.__init(self) end
  function ConcatTable:forward(x)
    local outs = {}
    for i, m in ipairs(self:children()) do outs[i] = m(x) end
    return outs
  end

  -- ParallelTable: child i on input i
  local ParallelTable = container("ParallelTable")
  local PARALLELTABLE = signature("nn.ParallelTable", "")
  function ParallelTable:__init(...) PARALLELTABLE(...); Container.__init(self) end
  function ParallelTable:forward(x)
    local outs = {}
    for i, m in ipairs(self:children()) do outs[i] = m(x[i]) end
    return outs
  end

  -- JoinTable(dim, nInputDims): concatenates a list of tensors along dim
  local JoinTable = Module:extend("JoinTable")
  local JOINTABLE = signature("nn.JoinTable", "dimension, nInputDims=nil")
  function JoinTable:__init(...)
    local a = JOINTABLE(...)
    self.dimension, self.nInputDims = a.dimension, a.nInputDims
  end
  function JoinTable:forward(xs)
    local dim = self.dimension
    if self.nInputDims and xs[1]:dim() == self.nInputDims + 1 and dim > 0 then dim = dim + 1 end
    return torch.cat(xs, dim)
  end
  nn.JoinTable = JoinTable

  -- CAddTable / CSubTable / CMulTable / CDivTable: elementwise over a list of tensors
  -- (CAddTable's Torch7 flag `ip`, in place, is accepted: the sum is the same)
  local function table_op(name, f)
    local C = Module:extend(name)
    local SIG = signature("nn." .. name, name == "CAddTable" and "inplace=false" or "")
    function C:__init(...) SIG(...) end
    function C:forward(xs)
      local acc = xs[1]
      for i = 2, #xs do acc = f(acc, xs[i]) end
      return acc
    end
    nn[name] = C
  end
  table_op("CAddTable", function(a, b) return a + b end)
  table_op("CMulTable", function(a, b) return a * b end)
  table_op("CSubTable", function(a, b) return a - b end)
  table_op("CDivTable", function(a, b) return a / b end)

  -- SelectTable(i), SplitTable(dim), Narrow, Squeeze, Transpose, Mean, Sum, MulConstant, AddConstant
  local SelectTable = Module:extend("SelectTable")
  local SELECTTABLE = signature("nn.SelectTable", "index")
  function SelectTable:__init(...) self.index = SELECTTABLE(...).index end
  function SelectTable:forward(xs) local i = self.index; if i < 0 then i = #xs + i + 1 end return xs[i] end
  nn.SelectTable = SelectTable

  -- SplitTable(dimension, nInputDims): with nInputDims, an input of one dim more is a batch and
  -- a positive dimension counts past the batch dim (as JoinTable)
  local SplitTable = Module:extend("SplitTable")
  local SPLITTABLE = signature("nn.SplitTable", "dimension, nInputDims=nil")
  function SplitTable:__init(...)
    local a = SPLITTABLE(...)
    self.dimension, self.nInputDims = a.dimension, a.nInputDims
  end
  function SplitTable:forward(x)
    local dim = self.dimension
    if self.nInputDims and x:dim() == self.nInputDims + 1 and dim > 0 then dim = dim + 1 end
    return x:unbind(dim)
  end
  nn.SplitTable = SplitTable

  -- MulConstant(constant_scalar, ip) / AddConstant: Torch7's in-place flag is accepted (the
  -- result is the same)
  local MulConstant = Module:extend("MulConstant")
  local MULCONSTANT = signature("nn.MulConstant", "constant_scalar, inplace=false")
  function MulConstant:__init(...) self.constant_scalar = MULCONSTANT(...).constant_scalar end
  function MulConstant:forward(x) return x * self.constant_scalar end
  nn.MulConstant = MulConstant

  local AddConstant = Module:extend("AddConstant")
  local ADDCONSTANT = signature("nn.AddConstant", "constant_scalar, inplace=false")
  function AddConstant:__init(...) self.constant_scalar = ADDCONSTANT(...).constant_scalar end
  function AddConstant:forward(x) return x + self.constant_scalar end
  nn.AddConstant = AddConstant

  -- Torch7's HardTanh spelling; LookupTable is Embedding
  nn.HardTanh = nn.HardTanh or nn.Hardtanh
  local LookupTable = nn.Embedding:extend("LookupTable")
  local LOOKUPTABLE = signature("nn.LookupTable", "nIndex, nOutput, paddingValue=nil, maxNorm=nil, normType=nil")
  function LookupTable:__init(...)
    local a = LOOKUPTABLE(...)
    local pad = a.paddingValue
    if pad == 0 then pad = nil end   -- Torch7's default: no padding index (indices start at 1)
    nn.Embedding.__init(self, a.nIndex, a.nOutput, { padding_idx = pad, max_norm = a.maxNorm,
      norm_type = a.normType })
  end
  nn.LookupTable = LookupTable
end

return T
