-- t7nn/jacobian.lua — nn.Jacobian: a module's derivatives by backpropagation checked
-- against central finite differences, as Torch7's nn tests use it. Jacobians are
-- (elements of the variable) x (elements of the output): row i is d output / d x_i.
local torch = require "torch"
local nn = require "t7nn.env"

local J = {}

-- a 1-D view of t's elements (t must be contiguous: the perturbation writes through it)
local function flat(t, who)
  if not t:isContiguous() then error("nn.Jacobian." .. who .. ": the variable must be contiguous", 3) end
  return t:view(t:nElement())
end

local function fill_uniform(t, minval, maxval)
  t:copy(torch.rand(t:nElement()):mul(maxval - minval):add(minval))
end

-- by backpropagation: one backward pass per output element with a one-hot gradOutput;
-- the rows come from gradInput, or from dparam (the gradient of param) when given
function J.backward(module, input, param, dparam)
  module:forward(input)
  local out = module.output
  local n = out:nElement()
  local jac = torch.Tensor((param or input):nElement(), n):zero()
  local dout = out.new():resizeAs(out):zero()
  local dflat = dout:view(n)
  for i = 1, n do
    dflat:zero()
    dflat[i] = 1
    module:zeroGradParameters()
    local din = module:updateGradInput(input, dout)
    module:accGradParameters(input, dout)
    jac:select(2, i):copy(param and dparam or din)
  end
  return jac
end

-- the parameters after one accUpdateGradParameters step with lr 1 and a one-hot
-- gradOutput, per output element: p - d output_i / d p
function J.backwardUpdate(module, input, param)
  module:forward(input)
  local out = module.output
  local n = out:nElement()
  local jac = torch.Tensor(param:nElement(), n):zero()
  local params = module:parameters()
  local saved = {}
  for j, p in ipairs(params) do saved[j] = p:clone() end
  local dout = out.new():resizeAs(out):zero()
  local dflat = dout:view(n)
  for i = 1, n do
    for j, p in ipairs(params) do p:copy(saved[j]) end
    dflat:zero()
    dflat[i] = 1
    module:updateGradInput(input, dout)
    module:accUpdateGradParameters(input, dout, 1)
    jac:select(2, i):copy(param)
  end
  for j, p in ipairs(params) do p:copy(saved[j]) end
  return jac
end

-- by central differences of forward, perturbing param (default: the input)
function J.forward(module, input, param, perturbation)
  param = param or input
  perturbation = perturbation or 1e-6
  local x = flat(param, "forward")
  local n = module:forward(input):nElement()
  local jac = torch.Tensor(x:nElement(), n)
  local lo, hi = torch.Tensor(n), torch.Tensor(n)
  for i = 1, x:nElement() do
    local v = x[i]
    x[i] = v - perturbation
    lo:copy(module:forward(input))
    x[i] = v + perturbation
    hi:copy(module:forward(input))
    x[i] = v
    jac:select(1, i):copy(hi:add(-1, lo):div(2 * perturbation))
  end
  return jac
end

-- what backwardUpdate computes, by central differences: p - d output / d p
function J.forwardUpdate(module, input, param, perturbation)
  local jac = J.forward(module, input, param, perturbation)
  local x = flat(param, "forwardUpdate")
  for i = 1, x:nElement() do
    jac:select(1, i):mul(-1):add(x[i])
  end
  return jac
end

-- the largest difference between the two Jacobians with respect to the input, the
-- input drawn uniformly from [minval, maxval] (default [-2, 2])
function J.testJacobian(module, input, minval, maxval, perturbation)
  minval, maxval = minval or -2, maxval or 2
  fill_uniform(input, minval, maxval)
  local fd = J.forward(module, input, input, perturbation)
  local bp = J.backward(module, input)
  return (fd - bp):abs():max()
end

-- the same with respect to a parameter (dparam its gradient); param is redrawn too
function J.testJacobianParameters(module, input, param, dparam, minval, maxval, perturbation)
  minval, maxval = minval or -2, maxval or 2
  fill_uniform(input, minval, maxval)
  fill_uniform(param, minval, maxval)
  local bp = J.backward(module, input, param, dparam)
  local fd = J.forward(module, input, param, perturbation)
  return (fd - bp):abs():max()
end

-- accUpdateGradParameters checked against finite differences
function J.testJacobianUpdateParameters(module, input, param, minval, maxval, perturbation)
  minval, maxval = minval or -2, maxval or 2
  fill_uniform(input, minval, maxval)
  fill_uniform(param, minval, maxval)
  local bp = J.backwardUpdate(module, input, param)
  local fd = J.forwardUpdate(module, input, param, perturbation)
  return (fd - bp):abs():max()
end

-- a module written to a file and read back computes the same output and gradInput;
-- returns the largest differences of both
function J.testIO(module, input, minval, maxval)
  minval, maxval = minval or -2, maxval or 2
  local input2 = input:clone()
  module:forward(input)
  local go = module.output:clone()
  fill_uniform(go, minval, maxval)
  local go2 = go:clone()
  module:zeroGradParameters()
  module:updateGradInput(input, go)
  module:accGradParameters(input, go)
  local out, gin = module.output:clone(), module.gradInput:clone()

  local name = os.tmpname()
  if module:clearState() ~= module then error("nn.Jacobian.testIO: clearState did not return the module", 2) end
  local f = torch.DiskFile(name, "w"):binary()
  f:writeObject(module)
  f:close()
  local m = torch.DiskFile(name):binary():readObject()
  os.remove(name)
  m:forward(input2)
  m:zeroGradParameters()
  m:updateGradInput(input2, go2)
  m:accGradParameters(input2, go2)
  local errf = (out - m.output):abs():max()
  local errb = gin:nElement() == 0 and 0 or (gin - m.gradInput):abs():max()
  return errf, errb
end

-- the four ways of updating a parameter (accGradParameters + updateParameters,
-- accUpdateGradParameters, each alone and with the parameter shared between two clones)
-- agree; returns their errors by name
function J.testAllUpdate(module, input, weight, gradWeight)
  local lr = torch.uniform(0.1, 1)
  local errors = {}

  local ref = module:clone()
  local w0 = ref[weight]:clone()
  ref:forward(input)
  local gradOutput = torch.rand(ref.output:size())
  ref:zeroGradParameters()
  ref:updateGradInput(input, gradOutput)
  ref:accGradParameters(input, gradOutput)
  ref:updateParameters(lr)
  local step = ref[gradWeight] * lr
  errors["accGradParameters"] = (w0 - step - ref[weight]):norm()

  local m = module:clone()
  m:forward(input)
  m:updateGradInput(input, gradOutput)
  m:accUpdateGradParameters(input, gradOutput, lr)
  errors["accUpdateGradParameters"] = (m[weight] - ref[weight]):norm()

  local twice = w0 - ref[gradWeight] * (lr * 2)
  local a, b = module:clone(), module:clone()
  b:share(a, weight)
  a:forward(input); b:forward(input)
  a:zeroGradParameters(); b:zeroGradParameters()
  a:updateGradInput(input, gradOutput); b:updateGradInput(input, gradOutput)
  a:accGradParameters(input, gradOutput); b:accGradParameters(input, gradOutput)
  a:updateParameters(lr); b:updateParameters(lr)
  errors["accGradParameters [shared]"] = (twice - a[weight]):norm() + (twice - b[weight]):norm()

  a, b = module:clone(), module:clone()
  b:share(a, weight)
  a:forward(input); b:forward(input)
  a:updateGradInput(input, gradOutput); b:updateGradInput(input, gradOutput)
  a:accUpdateGradParameters(input, gradOutput, lr); b:accUpdateGradParameters(input, gradOutput, lr)
  errors["accUpdateGradParameters [shared]"] = (twice - a[weight]):norm() + (twice - b[weight]):norm()
  return errors
end

-- The diagonal Hessian (nn.hessian.enable()) of F = sum_k y_k^2 / 2 with respect to the
-- input or a parameter, y the module's output. By the module's own second-order pass: the
-- Hessian of F with respect to y is all ones.
function J.backwardDiagHessian(module, input, diagHessianParamName)
  module:forward(input)
  local ones = module.output.new():resizeAs(module.output):fill(1)
  if module.diagHessianWeight then module.diagHessianWeight:zero() end
  if module.diagHessianBias then module.diagHessianBias:zero() end
  module:updateDiagHessianInput(input, ones)
  module:accDiagHessianParameters(input, ones)
  return module[diagHessianParamName]
end

-- the same for a module linear in its input and parameters, from first derivatives:
-- d2F/dx_i^2 = sum_k (dy_k/dx_i)^2, one backward pass per output element
function J.linearModuleDiagHessian(module, input, gradParamName)
  local diag   -- sized at the first pass (gradInput is empty before a backward)
  module:forward(input)
  local dout = module.output.new():resizeAs(module.output)
  local dflat = dout:view(dout:nElement())
  for i = 1, dout:nElement() do
    dflat:zero()
    dflat[i] = 1
    module.gradWeight:zero()
    if module.bias then module.gradBias:zero() end
    module:updateGradInput(input, dout)
    module:accGradParameters(input, dout)
    local g = module[gradParamName]:contiguous():view(-1)
    diag = diag or g.new(g:nElement()):zero()
    diag:addcmul(g, g)
  end
  return diag
end

-- the largest difference of the two, the input drawn from [minval, maxval]
function J.testDiagHessian(module, input, gradParamName, diagHessianParamName, minval, maxval)
  minval, maxval = minval or -2, maxval or 2
  fill_uniform(input, minval, maxval)
  module:initDiagHessianParameters()
  local bp = J.backwardDiagHessian(module, input, diagHessianParamName)
  local lin = J.linearModuleDiagHessian(module, input, gradParamName)
  return (bp - lin):abs():max()
end

function J.testDiagHessianInput(module, input, minval, maxval)
  return J.testDiagHessian(module, input, "gradInput", "diagHessianInput", minval, maxval)
end
function J.testDiagHessianWeight(module, input, minval, maxval)
  return J.testDiagHessian(module, input, "gradWeight", "diagHessianWeight", minval, maxval)
end
function J.testDiagHessianBias(module, input, minval, maxval)
  return J.testDiagHessian(module, input, "gradBias", "diagHessianBias", minval, maxval)
end

-- nn.hessian.enable() loads the diagonal-Hessian methods (t7nn/hessian.lua) on first use
nn.hessian = nn.hessian or {}
if not nn.hessian.enable then
  function nn.hessian.enable() return require("t7nn.hessian").enable() end
end

-- nn.SparseJacobian: the same checks for modules whose input is sparse, k x 2 rows of
-- (index, value): the variable with respect to the input is its value column,
-- input:select(2, 2) (gradInput comes in the same form)
local SJ = {}

local function sparse_values(input) return input:select(2, 2) end

function SJ.backward(module, input, param, dparam)
  module:forward(input)
  local out = module.output
  local n = out:nElement()
  local jac = torch.Tensor(param and param:nElement() or input:size(1), n):zero()
  local dout = out.new():resizeAs(out):zero()
  local dflat = dout:view(n)
  for i = 1, n do
    dflat:zero()
    dflat[i] = 1
    module:zeroGradParameters()
    local din = module:updateGradInput(input, dout)
    module:accGradParameters(input, dout)
    jac:select(2, i):copy(param and dparam or din:select(2, 2))
  end
  return jac
end

function SJ.backwardUpdate(module, input, param)
  return J.backwardUpdate(module, input, param)
end

-- central differences; the variable need not be contiguous (elements set one by one)
local function sparse_forward(module, input, param, perturbation, update)
  perturbation = perturbation or 1e-6
  local x = param and flat(param, "SparseJacobian.forward") or sparse_values(input)
  local n = module:forward(input):nElement()
  local jac = torch.Tensor(x:nElement(), n)
  local lo, hi = torch.Tensor(n), torch.Tensor(n)
  for i = 1, x:nElement() do
    local v = x[i]
    x[i] = v - perturbation
    lo:copy(module:forward(input))
    x[i] = v + perturbation
    hi:copy(module:forward(input))
    x[i] = v
    local row = jac:select(1, i):copy(hi:add(-1, lo):div(2 * perturbation))
    if update then row:mul(-1):add(v) end
  end
  return jac
end

function SJ.forward(module, input, param, perturbation)
  return sparse_forward(module, input, param, perturbation, false)
end

function SJ.forwardUpdate(module, input, param, perturbation)
  return sparse_forward(module, input, param, perturbation, true)
end

local function fill_values(input, minval, maxval)
  local v = sparse_values(input)
  v:copy(torch.rand(v:nElement()):mul(maxval - minval):add(minval))
end

function SJ.testJacobian(module, input, minval, maxval)
  minval, maxval = minval or -2, maxval or 2
  fill_values(input, minval, maxval)
  local fd = SJ.forward(module, input)
  local bp = SJ.backward(module, input)
  return (fd - bp):abs():max()
end

function SJ.testJacobianParameters(module, input, param, dparam, minval, maxval)
  minval, maxval = minval or -2, maxval or 2
  fill_values(input, minval, maxval)
  fill_uniform(param, minval, maxval)
  local bp = SJ.backward(module, input, param, dparam)
  local fd = SJ.forward(module, input, param)
  return (fd - bp):abs():max()
end

function SJ.testJacobianUpdateParameters(module, input, param, minval, maxval)
  minval, maxval = minval or -2, maxval or 2
  fill_values(input, minval, maxval)
  fill_uniform(param, minval, maxval)
  local bp = SJ.backwardUpdate(module, input, param)
  local fd = SJ.forwardUpdate(module, input, param)
  return (fd - bp):abs():max()
end

SJ.testIO = J.testIO
SJ.testAllUpdate = J.testAllUpdate

nn.SparseJacobian = SJ

nn.Jacobian = J
return J
