-- t7nn/container.lua — nn.Container (modules holding modules), nn.Sequential, and the
-- containers that give one input to every module and concatenate their outputs: Concat,
-- DepthConcat, Parallel.
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local sizes_str = H.sizestr

local Container, parent = torch.class("nn.Container", "nn.Module")

function Container:__init(...)
  parent.__init(self, ...)
  self.modules = {}
end

function Container:add(module)
  self.modules[#self.modules + 1] = module
  return self
end

function Container:get(index) return self.modules[index] end
function Container:size() return #self.modules end

-- module[funcName](module, ...), an error in it prefixed with "In i module of Container:"
-- (each container on the way adds its line, outermost first)
function Container:rethrowErrors(module, index, funcName, ...)
  local results = table.pack(xpcall(module[funcName], function(err)
    if type(err) ~= "string" then return err end
    -- the first container to see the error keeps a traceback of where it happened
    if err:find("\n%[traceback%]") then
      err = err:gsub("^\n", "")   -- an inner container's message: one line per container
    else
      err = err .. "\n[traceback]" .. debug.traceback("", 2)
    end
    return ("\nIn %d module of %s:\n%s"):format(index, torch.type(self), err)
  end, module, ...))
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

function Container:applyToModules(func)
  for _, m in ipairs(self.modules) do func(m) end
end

function Container:zeroGradParameters() self:applyToModules(function(m) m:zeroGradParameters() end) end
function Container:updateParameters(lr) self:applyToModules(function(m) m:updateParameters(lr) end) end
function Container:training() self:applyToModules(function(m) m:training() end); parent.training(self) end
function Container:evaluate() self:applyToModules(function(m) m:evaluate() end); parent.evaluate(self) end
function Container:share(mlp, ...)
  for i, m in ipairs(self.modules) do m:share(mlp.modules[i], ...) end
  return self
end
function Container:reset(stdv) self:applyToModules(function(m) m:reset(stdv) end) end

function Container:parameters()
  local w, gw = {}, {}
  for _, m in ipairs(self.modules) do
    local mw, mgw = m:parameters()
    if mw then
      for i = 1, #mw do
        w[#w + 1] = mw[i]
        gw[#gw + 1] = mgw[i]
      end
    end
  end
  return w, gw
end

function Container:clearState()
  -- fields of the container itself (other than its modules) are cleared too
  if self.output ~= nil or self.gradInput ~= nil then parent.clearState(self) end
  for _, m in ipairs(self.modules) do m:clearState() end
  return self
end

local Sequential = torch.class("nn.Sequential", "nn.Container")

function Sequential:__len() return #self.modules end

function Sequential:add(module)
  if #self.modules == 0 then self.gradInput = module.gradInput end
  self.modules[#self.modules + 1] = module
  self.output = module.output
  return self
end

function Sequential:insert(module, index)
  index = index or (#self.modules + 1)
  if index > #self.modules + 1 or index < 1 then
    error(("nn.Sequential:insert: index %d out of range 1..%d"):format(index, #self.modules + 1), 2)
  end
  table.insert(self.modules, index, module)
  self.output = self.modules[#self.modules].output
  self.gradInput = self.modules[1].gradInput
  return self
end

function Sequential:remove(index)
  index = index or #self.modules
  if index > #self.modules or index < 1 then
    error(("nn.Sequential:remove: index %d out of range 1..%d"):format(index, #self.modules), 2)
  end
  table.remove(self.modules, index)
  if #self.modules > 0 then
    self.output = self.modules[#self.modules].output
    self.gradInput = self.modules[1].gradInput
  else
    self.output = torch.Tensor()
    self.gradInput = torch.Tensor()
  end
  return self
end

function Sequential:updateOutput(input)
  local x = input
  for i, m in ipairs(self.modules) do x = self:rethrowErrors(m, i, "updateOutput", x) end
  self.output = x
  return x
end

-- walks the modules backwards; module i's input was module i-1's output
local function walk_back(self, input, gradOutput, each)
  local g = gradOutput
  for i = #self.modules, 1, -1 do
    local below = i > 1 and self.modules[i - 1].output or input
    g = each(self.modules[i], i, below, g)
  end
  return g
end

function Sequential:updateGradInput(input, gradOutput)
  self.gradInput = walk_back(self, input, gradOutput, function(m, i, x, g)
    return self:rethrowErrors(m, i, "updateGradInput", x, g)
  end)
  return self.gradInput
end

function Sequential:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  walk_back(self, input, gradOutput, function(m, i, x, g)
    self:rethrowErrors(m, i, "accGradParameters", x, g, scale)
    return m.gradInput
  end)
end

function Sequential:backward(input, gradOutput, scale)
  scale = scale or 1
  self.gradInput = walk_back(self, input, gradOutput, function(m, i, x, g)
    return self:rethrowErrors(m, i, "backward", x, g, scale)
  end)
  return self.gradInput
end

function Sequential:accUpdateGradParameters(input, gradOutput, lr)
  walk_back(self, input, gradOutput, function(m, i, x, g)
    self:rethrowErrors(m, i, "accUpdateGradParameters", x, g, lr)
    return m.gradInput
  end)
end

function Sequential:__tostring__()
  local lines = { torch.type(self) .. " {", "  [input -> " }
  local chain = {}
  for i = 1, #self.modules do chain[i] = "(" .. i .. ")" end
  lines[2] = "  [input -> " .. table.concat(chain, " -> ") .. (#chain > 0 and " -> " or "") .. "output]"
  for i, m in ipairs(self.modules) do
    lines[#lines + 1] = ("  (%d): %s"):format(i, tostring(m):gsub("\n", "\n  "))
  end
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n")
end


-- the drawing of a container whose modules each see the input (Concat, ConcatTable, ...):
--   nn.Concat {
--     input
--       |`-> (1): nn.Linear(2 -> 5)
--        `-> (2): nn.Linear(2 -> 5)
--        ... -> output
--   }
function Container:_branchesString()
  local lines = { torch.type(self) .. " {", "  input" }
  local n = #self.modules
  for i, m in ipairs(self.modules) do
    local head = i < n and "  |`-> " or "   `-> "
    local cont = i < n and "  |    " or "       "
    lines[#lines + 1] = "  " .. head .. "(" .. i .. "): " .. tostring(m):gsub("\n", "\n  " .. cont)
  end
  lines[#lines + 1] = "     ... -> output"
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n")
end

-- grad accumulation into a (nested) table shaped as src: the first source is copied,
-- the others added; entries beyond src's are dropped
local function accumulate(dst, src, first)
  dst = (type(dst) == "table" and not torch.isTensor(dst)) and dst or {}
  for k, v in ipairs(src) do
    if torch.isTensor(v) then
      local d = dst[k]
      if first or not torch.isTensor(d) then
        d = (torch.isTensor(d) and torch.type(d) == torch.type(v)) and d or v.new()
        if not d:isSameSizeAs(v) then d:resizeAs(v) end
        d:copy_(v)
        dst[k] = d
      else
        d:add(v)
      end
    else
      dst[k] = accumulate(dst[k], v, first)
    end
  end
  for i = #dst, #src + 1, -1 do dst[i] = nil end
  return dst
end
Container._accumulateGrad = accumulate   -- for ConcatTable (table.lua)

-- nn.Concat(dim): every module gets the input; their outputs are concatenated along dim
-- (their other sizes must agree). gradInput is the sum of the modules' gradInputs.
local Concat, cparent = torch.class("nn.Concat", "nn.Container")

function Concat:__init(dimension)
  cparent.__init(self)
  if math.type(dimension) == nil then error("nn.Concat(dimension): dimension must be a number", 2) end
  self.outputSize = torch.LongStorage()
  self.dimension = dimension
end

-- the dim the outputs join on, for outputs of d dims (negative counts from the end)
function Concat:_dim(d)
  local dim = self.dimension
  if dim < 0 then dim = d + dim + 1 end
  if dim < 1 or dim > d then
    error(("%s: dimension %d out of range for outputs of %d dims"):format(torch.type(self), self.dimension, d), 3)
  end
  return dim
end

-- size of the joined output, or an error naming the output that does not fit
function Concat:_joinedSize(outs, dim, padded)
  local size = outs[1]:size():totable()
  for i = 2, #outs do
    local o = outs[i]
    if o:dim() ~= #size then
      error(("%s: output %d has %d dims, output 1 has %d"):format(torch.type(self), i, o:dim(), #size), 3)
    end
    for d = 1, #size do
      if d == dim then
        size[d] = size[d] + o:size(d)
      elseif padded then
        if o:size(d) > size[d] then size[d] = o:size(d) end
      elseif o:size(d) ~= size[d] then
        error(("%s: output %d is %s but output 1 is %s (they may only differ in dim %d)")
          :format(torch.type(self), i, sizes_str(o), sizes_str(outs[1]), dim), 3)
      end
    end
  end
  self.outputSize = torch.LongStorage(size)
  return size
end

function Concat:updateOutput(input)
  local outs = {}
  for i, m in ipairs(self.modules) do outs[i] = self:rethrowErrors(m, i, "updateOutput", input) end
  if #outs == 0 then return self.output end
  local dim = self:_dim(outs[1]:dim())
  local size = self:_joinedSize(outs, dim)
  self.output:resize(torch.LongStorage(size))
  local offset = 1
  for _, o in ipairs(outs) do
    local n = o:size(dim)
    self.output:narrow(dim, offset, n):copy(o)
    offset = offset + n
  end
  return self.output
end

-- each module's slice of gradOutput, in module order: fn(i, module, slice)
function Concat:_eachSlice(gradOutput, fn)
  local offset = 1
  local dim
  for i, m in ipairs(self.modules) do
    dim = dim or self:_dim(m.output:dim())
    local n = m.output:size(dim)
    fn(i, m, gradOutput:narrow(dim, offset, n))
    offset = offset + n
  end
end

-- updateGradInput or backward through every module, their gradInputs summed
local function concat_backward(self, method, input, gradOutput, scale)
  local first = true
  if torch.isTensor(input) then
    if not torch.isTensor(self.gradInput) then self.gradInput = input.new() end
    self:_eachSlice(gradOutput, function(i, m, g)
      local gi = self:rethrowErrors(m, i, method, input, g, scale)
      if gi then   -- a module may give no gradInput (nil): it adds nothing
        if first then self.gradInput:resizeAs(gi):copy(gi) else self.gradInput:add(gi) end
        first = false
      end
    end)
    if first then self.gradInput:resizeAs(input):zero() end
  else
    self:_eachSlice(gradOutput, function(i, m, g)
      local gi = self:rethrowErrors(m, i, method, input, g, scale)
      if type(gi) ~= "table" or torch.isTensor(gi) then
        error(("%s: module %d gave a gradInput that is not a table for a table input"):format(torch.type(self), i), 0)
      end
      self.gradInput = accumulate(self.gradInput, gi, first)
      first = false
    end)
  end
  return self.gradInput
end

function Concat:updateGradInput(input, gradOutput)
  return concat_backward(self, "updateGradInput", input, gradOutput)
end

function Concat:backward(input, gradOutput, scale)
  return concat_backward(self, "backward", input, gradOutput, scale or 1)
end

function Concat:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  self:_eachSlice(gradOutput, function(i, m, g) self:rethrowErrors(m, i, "accGradParameters", input, g, scale) end)
end

function Concat:accUpdateGradParameters(input, gradOutput, lr)
  self:_eachSlice(gradOutput, function(i, m, g) self:rethrowErrors(m, i, "accUpdateGradParameters", input, g, lr) end)
end

Concat.__tostring__ = Container._branchesString

-- nn.DepthConcat(dim): Concat whose outputs may differ in their other dims: the output
-- takes the largest size of each, and a smaller output is centred in it, zeros around
-- (GoogLeNet's inception blocks: convolutions of different kernel sizes side by side)
local DepthConcat = torch.class("nn.DepthConcat", "nn.Concat")

-- the window of t (the output or gradOutput) where an output o of that module lies
function DepthConcat:windowNarrow(t, o, offset)
  local dim = self:_dim(o:dim())
  local w = t:narrow(dim, offset, o:size(dim))
  for d = 1, o:dim() do
    local full, n = self.outputSize[d], o:size(d)
    if d ~= dim and full ~= n then
      w = w:narrow(d, math.floor((full - n) / 2) + 1, n)
    end
  end
  return w
end

function DepthConcat:updateOutput(input)
  local outs = {}
  for i, m in ipairs(self.modules) do outs[i] = self:rethrowErrors(m, i, "updateOutput", input) end
  if #outs == 0 then return self.output end
  local dim = self:_dim(outs[1]:dim())
  local size = self:_joinedSize(outs, dim, true)
  self.output:resize(torch.LongStorage(size)):zero()
  local offset = 1
  for _, o in ipairs(outs) do
    self:windowNarrow(self.output, o, offset):copy(o)
    offset = offset + o:size(dim)
  end
  return self.output
end

function DepthConcat:_eachSlice(gradOutput, fn)
  local offset = 1
  for i, m in ipairs(self.modules) do
    local dim = self:_dim(m.output:dim())
    fn(i, m, self:windowNarrow(gradOutput, m.output, offset))
    offset = offset + m.output:size(dim)
  end
end

-- nn.Parallel(inputDim, outputDim): module i gets slice i of the input along inputDim
-- (input:select); the outputs are concatenated along outputDim
local Parallel, pparent = torch.class("nn.Parallel", "nn.Container")

function Parallel:__init(inputDimension, outputDimension)
  pparent.__init(self)
  if math.type(inputDimension) == nil or math.type(outputDimension) == nil then
    error("nn.Parallel(inputDimension, outputDimension): both must be numbers", 2)
  end
  self.inputDimension = inputDimension
  self.outputDimension = outputDimension
end

local function parallel_slices(self, input)
  if not torch.isTensor(input) then error("nn.Parallel: the input must be a tensor", 3) end
  local d = self.inputDimension
  if d < 1 or d > input:dim() then
    error(("nn.Parallel: inputDimension %d out of range for an input of %d dims"):format(d, input:dim()), 3)
  end
  local n = input:size(d)
  if n > #self.modules then
    error(("nn.Parallel: the input has %d slices along dim %d but there are %d modules"):format(n, d, #self.modules), 3)
  end
  return n
end

function Parallel:updateOutput(input)
  local n = parallel_slices(self, input)
  local outs = {}
  for i = 1, n do
    outs[i] = self:rethrowErrors(self.modules[i], i, "updateOutput", input:select(self.inputDimension, i))
  end
  local dim = self.outputDimension
  if outs[1]:dim() < dim then
    error(("nn.Parallel: outputDimension %d out of range for outputs of %d dims"):format(dim, outs[1]:dim()), 2)
  end
  local size = Concat._joinedSize(self, outs, dim)
  self.totalOutputSize = self.outputSize
  self.output:resize(torch.LongStorage(size))
  local offset = 1
  for _, o in ipairs(outs) do
    local k = o:size(dim)
    self.output:narrow(dim, offset, k):copy(o)
    offset = offset + k
  end
  return self.output
end

-- fn(i, module, input slice, gradOutput slice) for each slice of the input
local function parallel_each(self, input, gradOutput, fn)
  local n = parallel_slices(self, input)
  local offset = 1
  for i = 1, n do
    local m = self.modules[i]
    local k = m.output:size(self.outputDimension)
    fn(i, m, input:select(self.inputDimension, i), gradOutput:narrow(self.outputDimension, offset, k))
    offset = offset + k
  end
end

function Parallel:updateGradInput(input, gradOutput)
  self.gradInput:resizeAs(input)
  parallel_each(self, input, gradOutput, function(i, m, x, g)
    local gi = self:rethrowErrors(m, i, "updateGradInput", x, g)
    self.gradInput:select(self.inputDimension, i):copy(gi)
  end)
  return self.gradInput
end

function Parallel:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  parallel_each(self, input, gradOutput, function(i, m, x, g)
    self:rethrowErrors(m, i, "accGradParameters", x, g, scale)
  end)
end

function Parallel:accUpdateGradParameters(input, gradOutput, lr)
  parallel_each(self, input, gradOutput, function(i, m, x, g)
    self:rethrowErrors(m, i, "accUpdateGradParameters", x, g, lr)
  end)
end

Parallel.__tostring__ = Container._branchesString

return Container
