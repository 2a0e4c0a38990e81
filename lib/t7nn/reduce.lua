-- t7nn/reduce.lua — modules that reduce along a dim (Sum, Mean, Max, Min) or combine a pair
-- of tensors into fewer numbers (MM, MV, DotProduct, CosineDistance, PairwiseDistance).
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local shape, check_tensor, fail = H.sizestr, H.check_tensor, H.failf

-- the 1-based dim reduced: a negative dim counts from the end; with nInputDims, an input of
-- one more dim is a batch and the dim moves one right
local function reduced_dim(self, input)
  local dim = self.dimension
  if dim < 0 then
    dim = input:dim() + dim + 1
  elseif self.nInputDims and input:dim() == self.nInputDims + 1 then
    dim = dim + 1
  end
  if dim < 1 or dim > input:dim() then
    error(("%s: dimension %d exceeds the input's dimensions (size %s)"):format(torch.type(self), self.dimension,
      shape(input)), 3)
  end
  return dim
end

local function check_dimension(cls, dimension)
  if math.type(dimension) ~= "integer" and not (type(dimension) == "number" and dimension == math.floor(dimension)) then
    error(("%s: dimension must be an integer, got %s"):format(cls, tostring(dimension)), 3)
  end
  return math.tointeger(dimension)
end

-- nn.Sum([dimension = 1, nInputDims, sizeAverage = false, squeeze = true]): the sum over
-- dimension (the mean with sizeAverage); the summed dim is removed (squeeze) unless the
-- input is 1-D or squeeze is false
local Sum, parent = torch.class("nn.Sum", "nn.Module")

function Sum:__init(dimension, nInputDims, sizeAverage, squeeze)
  parent.__init(self)
  local cls = torch.type(self)
  self.dimension = check_dimension(cls, dimension or 1)
  self.nInputDims = nInputDims
  self.sizeAverage = sizeAverage or false
  if squeeze ~= nil and type(squeeze) ~= "boolean" then
    error(cls .. ": squeeze has to be true/false", 2)
  end
  if squeeze == nil then squeeze = true end
  self.squeeze = squeeze
end

function Sum:_getPositiveDimension(input) return reduced_dim(self, input) end

function Sum:updateOutput(input)
  check_tensor(self, input)
  local dim = reduced_dim(self, input)
  if type(self.output) == "number" or torch.type(self.output) ~= torch.type(input) then self.output = input.new() end
  -- a new result each time (Torch7 mode's result-first sum refuses to resize an output that
  -- shares its storage, which the squeezed view does)
  local r = input:sum(dim)
  if self.sizeAverage then r:div(input:size(dim)) end
  if (self.squeeze == nil or self.squeeze) and r:dim() > 1 then r = r:select(dim, 1) end
  self.output:set(r)
  return self.output
end

-- every input element gets its sum's gradient (divided by the count with sizeAverage)
function Sum:updateGradInput(input, gradOutput)
  local dim = reduced_dim(self, input)
  local size = input:size():totable()
  size[dim] = 1
  local n = 1
  for _, s in ipairs(size) do n = n * s end
  if not torch.isTensor(gradOutput) or gradOutput:nElement() ~= n then
    error(("%s: gradOutput of %d elements expected (the output's), got %s"):format(torch.type(self), n, shape(gradOutput)), 2)
  end
  local g = gradOutput:contiguous():view(table.unpack(size))
  if torch.type(self.gradInput) ~= torch.type(input) then self.gradInput = input.new() end
  self.gradInput:resizeAs(input):copy(g:expandAs(input))
  if self.sizeAverage then self.gradInput:div(input:size(dim)) end
  return self.gradInput
end

function Sum:clearState()
  nn.utils.clear(self, "_gradOutput")
  return parent.clearState(self)
end

function Sum:__tostring__()
  return ("%s(%d)"):format(torch.type(self), self.dimension)
end

-- nn.Mean([dimension = 1, nInputDims]): Sum with sizeAverage, the mean over dimension
local Mean = torch.class("nn.Mean", "nn.Sum")

function Mean:__init(dimension, nInputDims)
  Sum.__init(self, dimension, nInputDims, true)
end

-- nn.Max / nn.Min([dimension = 1, nInputDims]): the largest (smallest) element along
-- dimension, the dim removed for inputs of more than one dim; the gradient goes to the
-- element chosen (the first one of ties)
local function extremum(name, op)
  local M, mparent = torch.class(name, "nn.Module")

  function M:__init(dimension, nInputDims)
    mparent.__init(self)
    self.dimension = check_dimension(name, dimension or 1)
    self.nInputDims = nInputDims
  end

  function M:_getPositiveDimension(input) return reduced_dim(self, input) end

  function M:_lazyInit()
    self._output = self._output or self.output.new()
    if torch.type(self._indices) ~= "torch.LongTensor" then self._indices = torch.LongTensor() end
  end

  function M:updateOutput(input)
    check_tensor(self, input)
    self:_lazyInit()
    if torch.type(self._output) ~= torch.type(input) then self._output = input.new() end
    if torch.type(self.output) ~= torch.type(input) then self.output = input.new() end
    local dim = reduced_dim(self, input)
    local v, i = op(input, dim)
    self._output:set(v)
    self._indices:set(i)
    if input:dim() > 1 then
      self.output:set(self._output:select(dim, 1))
    else
      self.output:set(self._output)
    end
    return self.output
  end

  function M:updateGradInput(input, gradOutput)
    self:_lazyInit()
    local dim = reduced_dim(self, input)
    if not torch.isTensor(gradOutput) or gradOutput:nElement() ~= self._indices:nElement() then
      error(("%s: gradOutput of %d elements expected (the output's), got %s"):format(name,
        self._indices:nElement(), shape(gradOutput)), 2)
    end
    local g = gradOutput:contiguous():viewAs(self._indices)
    if torch.type(self.gradInput) ~= torch.type(input) then self.gradInput = input.new() end
    self.gradInput:resizeAs(input):zero():scatter(dim, self._indices, g)
    return self.gradInput
  end

  function M:type(typename, tensorCache)
    self._indices = nil
    mparent.type(self, typename, tensorCache)
    return self
  end

  function M:clearState()
    nn.utils.clear(self, "_indices", "_output")
    return mparent.clearState(self)
  end

  function M:__tostring__()
    return ("%s(%d)"):format(torch.type(self), self.dimension)
  end
  return M
end

extremum("nn.Max", torch.max)
extremum("nn.Min", torch.min)

-- the pair {a, b} a module of two inputs takes
local function pair(self, input)
  if type(input) ~= "table" or torch.isTensor(input) or #input ~= 2
    or not torch.isTensor(input[1]) or not torch.isTensor(input[2]) then
    error(torch.type(self) .. ": input must be a table of two tensors", 3)
  end
  return input[1], input[2]
end

local function grad_pair(self, proto1, proto2)
  if type(self.gradInput) ~= "table" then self.gradInput = {} end
  local g = self.gradInput
  if torch.type(g[1]) ~= torch.type(proto1) then g[1] = proto1.new() end
  if torch.type(g[2]) ~= torch.type(proto2) then g[2] = proto2.new() end
  for i = #g, 3, -1 do g[i] = nil end
  return g[1], g[2]
end

-- nn.MM([transA = false, transB = false]): {A, B} -> A * B, of matrices or of batches
-- (b x n x m) of them; transA / transB transpose A / B first
local MM, parent_mm = torch.class("nn.MM", "nn.Module")

function MM:__init(transA, transB)
  parent_mm.__init(self)
  self.transA = transA or false
  self.transB = transB or false
  self.gradInput = { torch.Tensor(), torch.Tensor() }
end

function MM:updateOutput(input)
  local a, b = pair(self, input)
  local d = a:dim()
  if d ~= 2 and d ~= 3 then fail(self, "input tensors must be 2D or 3D, got %s", shape(a)) end
  if b:dim() ~= d then fail(self, "the second input must be %dD like the first, got %s", d, shape(b)) end
  if d == 3 and a:size(1) ~= b:size(1) then
    fail(self, "inputs must contain the same number of minibatches (%d and %d)", a:size(1), b:size(1))
  end
  if self.transA then a = a:transpose(d - 1, d) end
  if self.transB then b = b:transpose(d - 1, d) end
  if a:size(d) ~= b:size(d - 1) then fail(self, "matrix sizes do not match (%s times %s)", shape(a), shape(b)) end
  if torch.type(self.output) ~= torch.type(a) then self.output = a.new() end
  if d == 2 then
    self.output:resize(a:size(1), b:size(2)):mm(a, b)
  else
    self.output:resize(a:size(1), a:size(2), b:size(3)):bmm(a, b)
  end
  return self.output
end

-- with C = A B: dA = dC B^T, dB = A^T dC (through the transposes where given)
function MM:updateGradInput(input, gradOutput)
  local a, b = pair(self, input)
  local d = a:dim()
  check_tensor(self, gradOutput, "gradOutput")
  if gradOutput:dim() ~= d or b:dim() ~= d then
    fail(self, "gradOutput and the inputs must be all 2D or all 3D (%s, %s, %s)", shape(gradOutput), shape(a), shape(b))
  end
  local ga, gb = grad_pair(self, a, b)
  ga:resizeAs(a)
  gb:resizeAs(b)
  local f = d == 2 and "mm" or "bmm"
  local function T(x) return x:transpose(d - 1, d) end
  local g = gradOutput
  if self.transA then
    -- A^T used: dA = (dC B'^T)^T = B' dC^T with B' the B used
    ga[f](ga, self.transB and T(b) or b, T(g))
  else
    ga[f](ga, g, self.transB and b or T(b))
  end
  if self.transB then
    -- B^T used: dB = (A'^T dC)^T = dC^T A'
    gb[f](gb, T(g), self.transA and T(a) or a)
  else
    gb[f](gb, self.transA and a or T(a), g)
  end
  return self.gradInput
end

function MM:__tostring__()
  return ("%s(%s, %s)"):format(torch.type(self), tostring(self.transA), tostring(self.transB))
end

-- nn.MV([trans = false]): {M, v} -> M * v, of a matrix and a vector or of batches
-- (b x n x m and b x m); trans multiplies by M^T
local MV, parent_mv = torch.class("nn.MV", "nn.Module")

function MV:__init(trans)
  parent_mv.__init(self)
  self.trans = trans or false
  if type(self.trans) ~= "boolean" then
    error("nn.MV: the argument must be a boolean (transpose the matrix before the multiplication)", 2)
  end
  self.gradInput = { torch.Tensor(), torch.Tensor() }
end

function MV:updateOutput(input)
  local M, v = pair(self, input)
  if M:dim() ~= 2 and M:dim() ~= 3 then fail(self, "input matrix must be 2D or 3D, got %s", shape(M)) end
  if torch.type(self.output) ~= torch.type(M) then self.output = M.new() end
  if M:dim() == 2 then
    if v:dim() ~= 1 then fail(self, "vector must be 1D, got %s", shape(v)) end
    if self.trans then M = M:t() end
    if M:size(2) ~= v:size(1) then fail(self, "matrix row count and vector length do not match (%s, %s)", shape(M), shape(v)) end
    self.output:resize(M:size(1)):mv(M, v)
  else
    if v:dim() ~= 2 then fail(self, "vector must be 2D (batch dimension), got %s", shape(v)) end
    if M:size(1) ~= v:size(1) then
      fail(self, "inputs must contain the same number of minibatches (%d and %d)", M:size(1), v:size(1))
    end
    if self.trans then M = M:transpose(2, 3) end
    if M:size(3) ~= v:size(2) then fail(self, "matrix row count and vector length do not match (%s, %s)", shape(M), shape(v)) end
    local r = torch.bmm(M, v:contiguous():view(v:size(1), v:size(2), 1))
    self.output:resize(M:size(1), M:size(2)):copy(r:view(M:size(1), M:size(2)))
  end
  return self.output
end

-- y = M v: dM = dy v^T, dv = M^T dy (transposed for trans)
function MV:updateGradInput(input, gradOutput)
  local M, v = pair(self, input)
  check_tensor(self, gradOutput, "gradOutput")
  local gM, gv = grad_pair(self, M, v)
  gM:resizeAs(M)
  gv:resizeAs(v)
  if gradOutput:dim() == 2 then
    if M:dim() ~= 3 or v:dim() ~= 2 then fail(self, "a 2D gradOutput needs a batched (3D) matrix and 2D vector") end
    local b, n, m = M:size(1), M:size(2), M:size(3)
    local g = gradOutput:contiguous()
    local vv = v:contiguous()
    if self.trans then
      gM:bmm(vv:view(b, n, 1), g:view(b, 1, m))
      gv:copy(torch.bmm(M, g:view(b, m, 1)):view(b, n))
    else
      gM:bmm(g:view(b, n, 1), vv:view(b, 1, m))
      gv:copy(torch.bmm(M:transpose(2, 3), g:view(b, n, 1)):view(b, m))
    end
  elseif gradOutput:dim() == 1 then
    if M:dim() ~= 2 or v:dim() ~= 1 then fail(self, "a 1D gradOutput needs a 2D matrix and 1D vector") end
    if self.trans then
      gM:ger(v, gradOutput)
      gv:mv(M, gradOutput)
    else
      gM:ger(gradOutput, v)
      gv:mv(M:t(), gradOutput)
    end
  else
    fail(self, "gradOutput must be a 1D or 2D tensor, got %s", shape(gradOutput))
  end
  return self.gradInput
end

function MV:__tostring__()
  return ("%s(%s)"):format(torch.type(self), tostring(self.trans))
end

-- the pair as batches (n x d): vectors become one row; also says whether they were vectors
local function rows(self, a, b)
  if a:dim() ~= b:dim() or a:nElement() ~= b:nElement() or (a:dim() ~= 1 and a:dim() ~= 2) then
    fail(self, "inputs must be two vectors or two matrices (n x d) of the same size, got %s and %s", shape(a), shape(b))
  end
  if a:dim() == 1 then return a:view(1, -1), b:view(1, -1), true end
  return a, b, false
end

-- nn.DotProduct(): {a, b} -> a . b, of vectors (a 1-element output) or of the rows of two
-- matrices (one per row)
local DotProduct, parent_dot = torch.class("nn.DotProduct", "nn.Module")

function DotProduct:__init()
  parent_dot.__init(self)
  self.gradInput = { torch.Tensor(), torch.Tensor() }
end

function DotProduct:updateOutput(input)
  local a, b = pair(self, input)
  a, b = rows(self, a, b)
  if torch.type(self.output) ~= torch.type(a) then self.output = a.new() end
  self.buffer = (torch.type(self.buffer) == torch.type(a)) and self.buffer or a.new()
  self.buffer:cmul(a, b)
  self.output:resize(a:size(1)):copy(self.buffer:sum(2))
  return self.output
end

-- d(a.b)/da = b, d(a.b)/db = a, times the row's gradOutput
function DotProduct:updateGradInput(input, gradOutput)
  local a0, b0 = pair(self, input)
  local a, b, single = rows(self, a0, b0)
  check_tensor(self, gradOutput, "gradOutput")
  if gradOutput:nElement() ~= a:size(1) then
    fail(self, "gradOutput of %d elements expected, got %s", a:size(1), shape(gradOutput))
  end
  local ga, gb = grad_pair(self, a0, b0)
  local go = gradOutput:contiguous():view(-1, 1):expandAs(a)
  ga:resizeAs(a):copy(b):cmul(go)
  gb:resizeAs(b):copy(a):cmul(go)
  if single then
    ga:set(ga:select(1, 1))
    gb:set(gb:select(1, 1))
  end
  return self.gradInput
end

function DotProduct:clearState()
  if self.buffer then self.buffer:set() end
  return parent_dot.clearState(self)
end

-- nn.CosineDistance(): {a, b} -> a.b / (|a| |b|) of vectors or per row of matrices (the
-- squared norms get 1e-12 added, as Torch7's did)
local CosineDistance, parent_cos = torch.class("nn.CosineDistance", "nn.Module")

local COS_EPS = 1e-12

function CosineDistance:__init()
  parent_cos.__init(self)
  self.gradInput = { torch.Tensor(), torch.Tensor() }
end

function CosineDistance:updateOutput(input)
  local a, b = pair(self, input)
  a, b = rows(self, a, b)
  if torch.type(self.output) ~= torch.type(a) then self.output = a.new() end
  -- w1 = a.b, w22 = 1/(|a|^2 + eps), w32 = 1/(|b|^2 + eps), w = sqrt(w22 w32)
  self.w1 = torch.cmul(a, b):sum(2)
  self.w22 = torch.cmul(a, a):sum(2):add(COS_EPS)
  self.w22:cinv()
  self.w32 = torch.cmul(b, b):sum(2):add(COS_EPS)
  self.w32:cinv()
  self.w = torch.cmul(self.w22, self.w32):sqrt()
  self.output:resize(a:size(1)):copy(torch.cmul(self.w1, self.w))
  return self.output
end

-- d cos / da = (b - a.b a / |a|^2) / (|a| |b|), and symmetrically for b
function CosineDistance:updateGradInput(input, gradOutput)
  local a0, b0 = pair(self, input)
  local a, b, single = rows(self, a0, b0)
  check_tensor(self, gradOutput, "gradOutput")
  if gradOutput:nElement() ~= a:size(1) then
    fail(self, "gradOutput of %d elements expected, got %s", a:size(1), shape(gradOutput))
  end
  if not self.w or self.w:size(1) ~= a:size(1) then self:updateOutput(input) end
  local ga, gb = grad_pair(self, a0, b0)
  local w = self.w:expandAs(a)
  local go = gradOutput:contiguous():view(-1, 1):expandAs(a)
  ga:resizeAs(a):copy(b):addcmul(-1, torch.cmul(self.w1, self.w22):expandAs(a), a):cmul(w):cmul(go)
  gb:resizeAs(b):copy(a):addcmul(-1, torch.cmul(self.w1, self.w32):expandAs(a), b):cmul(w):cmul(go)
  if single then
    ga:resize(a:size(2))
    gb:resize(b:size(2))
  end
  return self.gradInput
end

function CosineDistance:clearState()
  nn.utils.clear(self, "buffer", "w1", "w22", "w", "w32", "ones")
  return parent_cos.clearState(self)
end

-- nn.PairwiseDistance([p = 2]): {a, b} -> |a - b|_p of vectors (a 1-element output) or per
-- row of matrices
local PairwiseDistance, parent_pd = torch.class("nn.PairwiseDistance", "nn.Module")

function PairwiseDistance:__init(p)
  parent_pd.__init(self)
  p = p or 2
  if type(p) ~= "number" or p <= 0 then error("nn.PairwiseDistance: p must be a positive number, got " .. tostring(p), 2) end
  self.gradInput = {}
  self.diff = torch.Tensor()
  self.norm = p
end

function PairwiseDistance:updateOutput(input)
  local a0, b0 = pair(self, input)
  local a, b = rows(self, a0, b0)
  if torch.type(self.output) ~= torch.type(a) then self.output = a.new() end
  if torch.type(self.diff) ~= torch.type(a) then self.diff = a.new() end
  local p = self.norm
  local d = self.diff:resizeAs(a):copy(a):add(-1, b):abs()
  local s = (p == 1 and d:sum(2)) or (p == 2 and torch.cmul(d, d):sum(2)) or torch.pow(d, p):sum(2)
  self.output:resize(a:size(1)):copy(p == 1 and s or torch.pow(s, 1 / p))
  return self.output
end

-- d|x|_p/dx = x |x|^(p-2) / |x|_p^(p-1) (Torch7 left out |x|^(p-2) for p < 2) (1e-6 added to the norm, as Torch7); for p = 1 the
-- sign, and a random sign where x is 0 (Torch7's choice)
function PairwiseDistance:updateGradInput(input, gradOutput)
  local a0, b0 = pair(self, input)
  local a, b = rows(self, a0, b0)
  check_tensor(self, gradOutput, "gradOutput")
  if gradOutput:nElement() ~= a:size(1) then
    fail(self, "gradOutput of %d elements expected, got %s", a:size(1), shape(gradOutput))
  end
  if self.output:nElement() ~= a:size(1) then self:updateOutput(input) end
  local p = self.norm
  local g1, g2 = grad_pair(self, a0, b0)
  local x = torch.add(a, -1, b)
  local gi
  if p == 1 then
    gi = torch.sign(x)
    local zeros = x:eq(0)
    if zeros:sum() > 0 then
      local coin = x.new():resizeAs(x):bernoulli(0.5):mul(2):add(-1)
      gi:maskedCopy(zeros, coin:maskedSelect(zeros))
    end
  else
    -- x |x|^(p-2) as sign(x) |x|^(p-1): no 0 * inf at x = 0 for p < 2
    gi = p == 2 and x or torch.cmul(torch.sign(x), torch.pow(torch.abs(x), p - 1))
    local scale = torch.pow(self.output:clone():add(1e-6), -(p - 1)):view(-1, 1)
    gi:cmul(scale:expandAs(gi))
  end
  gi:cmul(gradOutput:contiguous():view(-1, 1):expandAs(gi))
  g1:resizeAs(gi):copy(gi)
  g2:resizeAs(gi):copy(gi):mul(-1)
  if a0:dim() == 1 then
    g1:resize(a0:size(1))
    g2:resize(a0:size(1))
  end
  return self.gradInput
end

function PairwiseDistance:clearState()
  nn.utils.clear(self, "diff", "outExpand", "grad", "ones")
  return parent_pd.clearState(self)
end

function PairwiseDistance:__tostring__()
  return ("%s(%s)"):format(torch.type(self), tostring(self.norm))
end

return nn
