-- t7nn/hessian.lua — Torch7's diagonal-Hessian extension, loaded by nn.hessian.enable().
--
-- For a module with output y and a loss whose second derivatives with respect to y are
-- h_out (diagHessianOutput; the Gauss-Newton approximation: cross terms dropped), the
-- diagonal second derivatives with respect to the input and the parameters are
--   updateDiagHessianInput(input, h_out)    -> self.diagHessianInput
--   accDiagHessianParameters(input, h_out)  -> diagHessianWeight/diagHessianBias += ...
-- For a module linear in its input and weights these are the backward pass with the
-- weights (resp. the input) squared elementwise and h_out as gradOutput; for a pointwise
-- function f they are f'(x)^2 h_out. initDiagHessianParameters() makes the tensors.
-- Enabling also makes parameters() return a third list (the diagonal Hessians) and
-- getParameters() a third flat tensor, as Torch7's did.
local torch = require "torch"
local nn = require "t7nn.env"

local H = nn.hessian or {}
nn.hessian = H

-- a module's fields swapped pairwise: a[i] <-> b[i] (pairs whose first field is absent
-- are left alone)
local function swap_fields(module, a, b)
  for i = 1, #a do
    if module[a[i]] ~= nil then
      module[a[i]], module[b[i]] = module[b[i]], module[a[i]]
    end
  end
end

-- diagHessianInput: updateGradInput with each weight named in w replaced by its square
-- (kept in the field named by wsq) and diagHessianInput standing in for gradInput
function H.updateDiagHessianInput(module, input, diagHessianOutput, w, wsq)
  if #w ~= #wsq then
    error(torch.typename(module) .. ":updateDiagHessianInput: " .. #w .. " weights but " .. #wsq .. " squares", 2)
  end
  module.diagHessianInput = module.diagHessianInput or input.new()
  module.diagHessianInput:resizeAs(input):zero()
  for i = 1, #w do
    local v = module[w[i]]
    if v ~= nil then
      local sq = module[wsq[i]] or v.new()
      sq:resizeAs(v):copy(v):cmul(v)
      module[wsq[i]] = sq
    end
  end
  local gradInput = module.gradInput
  module.gradInput = module.diagHessianInput
  swap_fields(module, w, wsq)
  local ok, err = pcall(module.updateGradInput, module, input, diagHessianOutput)
  swap_fields(module, w, wsq)
  -- the module may have pointed gradInput at another tensor: that is the result
  module.diagHessianInput = module.gradInput
  module.gradInput = gradInput
  if not ok then error(err, 0) end
  return module.diagHessianInput
end

-- diagHessian parameters (fields hw) += accGradParameters of the input squared, with the
-- Hessian tensors standing in for the gradients (fields gw)
function H.accDiagHessianParameters(module, input, diagHessianOutput, gw, hw)
  if #gw ~= #hw then
    error(torch.typename(module) .. ":accDiagHessianParameters: " .. #gw .. " gradients but " .. #hw .. " Hessians", 2)
  end
  module.inputSq = module.inputSq or input.new()
  module.inputSq:resizeAs(input):copy(input):cmul(input)
  for i = 1, #gw do
    local g = module[gw[i]]
    if g ~= nil and module[hw[i]] == nil then module[hw[i]] = g.new():resizeAs(g):zero() end
  end
  swap_fields(module, gw, hw)
  local output = module.output
  module.output = output.new()
  local ok, err = pcall(function()
    module:forward(module.inputSq)
    module:accGradParameters(module.inputSq, diagHessianOutput, 1)
  end)
  module.output = output
  swap_fields(module, gw, hw)
  if not ok then error(err, 0) end
end

-- for a pointwise module: f'(x)^2 * diagHessianOutput, f'(x) from updateGradInput of ones
function H.updateDiagHessianInputPointWise(module, input, diagHessianOutput)
  local ones = diagHessianOutput.new():resizeAs(diagHessianOutput):fill(1)
  H.updateDiagHessianInput(module, input, ones, {}, {})
  module.diagHessianInput:cmul(module.diagHessianInput):cmul(diagHessianOutput)
  return module.diagHessianInput
end

function H.initDiagHessianParameters(module, gw, hw)
  module.diagHessianInput = module.diagHessianInput or module.gradInput.new()
  for i = 1, #gw do
    local g = module[gw[i]]
    if g ~= nil and module[hw[i]] == nil then module[hw[i]] = g.new():resizeAs(g):zero() end
  end
end

local GRADS, HESS = { "gradWeight", "gradBias" }, { "diagHessianWeight", "diagHessianBias" }

-- the methods of a module linear in its input and weights
local function linear_methods(cls, weights, squares)
  if not cls then return end
  function cls:updateDiagHessianInput(input, diagHessianOutput)
    return H.updateDiagHessianInput(self, input, diagHessianOutput, weights, squares)
  end
  function cls:accDiagHessianParameters(input, diagHessianOutput)
    H.accDiagHessianParameters(self, input, diagHessianOutput, GRADS, HESS)
  end
  function cls:initDiagHessianParameters()
    H.initDiagHessianParameters(self, GRADS, HESS)
  end
end

local function pointwise_method(cls)
  if not cls then return end
  function cls:updateDiagHessianInput(input, diagHessianOutput)
    return H.updateDiagHessianInputPointWise(self, input, diagHessianOutput)
  end
end

local enabled = false

function H.enable()
  if enabled then return end
  enabled = true
  local Module = nn.Module

  function Module:updateDiagHessianInput(input, diagHessianOutput)
    error(torch.typename(self) .. ":updateDiagHessianInput() is undefined", 2)
  end
  function Module:accDiagHessianParameters(input, diagHessianOutput) end
  function Module:initDiagHessianParameters() end

  -- Sequential: the diagonal Hessian goes back through the modules as the gradient does
  local Sequential = nn.Sequential
  function Sequential:initDiagHessianParameters()
    for _, m in ipairs(self.modules) do m:initDiagHessianParameters() end
  end
  function Sequential:updateDiagHessianInput(input, diagHessianOutput)
    local h = diagHessianOutput
    for i = #self.modules, 1, -1 do
      local below = i > 1 and self.modules[i - 1].output or input
      h = self.modules[i]:updateDiagHessianInput(below, h)
    end
    self.diagHessianInput = h
    return h
  end
  function Sequential:accDiagHessianParameters(input, diagHessianOutput)
    local h = diagHessianOutput
    for i = #self.modules, 1, -1 do
      local m = self.modules[i]
      local below = i > 1 and self.modules[i - 1].output or input
      m:accDiagHessianParameters(below, h)
      h = m.diagHessianInput
    end
  end

  -- criteria
  if nn.Criterion then
    function nn.Criterion:updateDiagHessianInput(input, target)
      error(torch.typename(self) .. ":updateDiagHessianInput() is undefined", 2)
    end
  end
  local function mse_hessian(self, input, target)
    self.diagHessianInput = self.diagHessianInput or input.new()
    local v = 2
    if self.sizeAverage then v = v / input:nElement() end
    self.diagHessianInput:resizeAs(input):fill(v)
    return self.diagHessianInput
  end
  if nn.MSECriterion then nn.MSECriterion.updateDiagHessianInput = mse_hessian end
  if nn.WeightedMSECriterion then nn.WeightedMSECriterion.updateDiagHessianInput = mse_hessian end
  if nn.L1Cost then
    -- sign(x)^2: 1 where x ~= 0, 0 at 0
    function nn.L1Cost:updateDiagHessianInput(input)
      self.diagHessianInput = self.diagHessianInput or input.new()
      self.diagHessianInput:resizeAs(input):copy(torch.ne(input, 0))
      return self.diagHessianInput
    end
  end

  -- modules linear in input and weights
  for _, name in ipairs({ "Linear", "SpatialConvolution", "SpatialConvolutionLocal",
                          "SpatialFullConvolution", "SpatialFullConvolutionMap" }) do
    linear_methods(nn[name], { "weight" }, { "weightSq" })
  end
  linear_methods(nn.SpatialConvolutionMap, { "weight", "bias" }, { "weightSq", "biasSq" })

  -- pointwise modules
  pointwise_method(nn.Tanh)
  pointwise_method(nn.Square)
  pointwise_method(nn.Sqrt)
  if nn.TanhShrink then
    -- x - tanh(x): its inner Tanh's Hessian plus the identity's
    function nn.TanhShrink:updateDiagHessianInput(input, diagHessianOutput)
      local t = H.updateDiagHessianInputPointWise(self.tanh, input, diagHessianOutput)
      self.diagHessianInput = self.diagHessianInput or input.new()
      self.diagHessianInput:resizeAs(input):copy(t):add(diagHessianOutput)
      return self.diagHessianInput
    end
  end
  if nn.Reshape then
    function nn.Reshape:updateDiagHessianInput(input, diagHessianOutput)
      self.diagHessianInput = self.diagHessianInput or input.new()
      self.diagHessianInput:set(diagHessianOutput:contiguous()):resizeAs(input)
      return self.diagHessianInput
    end
  end

  -- parameters() gains a third list, the diagonal Hessians; getParameters() a third tensor
  function Module:parameters()
    if self.weight and self.bias then
      return { self.weight, self.bias }, { self.gradWeight, self.gradBias },
             { self.diagHessianWeight, self.diagHessianBias }
    elseif self.weight then
      return { self.weight }, { self.gradWeight }, { self.diagHessianWeight }
    elseif self.bias then
      return { self.bias }, { self.gradBias }, { self.diagHessianBias }
    end
  end
  local getParameters = Module.getParameters
  function Module:getParameters()
    local p, g = getParameters(self)
    local _, _, h = self:parameters()
    if h and h[1] then return p, g, Module.flatten(h) end
    return p, g
  end
  local function append(to, from)
    if from then for i = 1, #from do to[#to + 1] = from[i] end end
  end
  function Sequential:parameters()
    local w, gw, hw = {}, {}, {}
    for _, m in ipairs(self.modules) do
      local mw, mgw, mhw = m:parameters()
      if mw then append(w, mw); append(gw, mgw); append(hw, mhw) end
    end
    return w, gw, hw
  end
end

return H
