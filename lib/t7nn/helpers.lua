-- t7nn/helpers.lua — what the class files share: error messages that name the class,
-- argument checks, and how a module keeps its output tensors. Not a class, not public.
local torch = require "torch"

local H = {}

-- "2x3x4" for a tensor, "empty" for one without dims, the type for anything else
function H.sizestr(t)
  if not torch.isTensor(t) then return torch.type(t) end
  return t:dim() == 0 and "empty" or table.concat(t:size():totable(), "x")
end

-- an error naming the class (who: a module or a class name); level 1 is the function
-- that calls fail, 2 its caller, ...
function H.fail(who, msg, level)
  local name = type(who) == "string" and who or torch.type(who)
  error(name .. ": " .. msg, (level or 1) + 1)
end

-- the same with a format, reported at the caller of the method that failed
function H.failf(self, fmt, ...)
  error(torch.type(self) .. ": " .. fmt:format(...), 3)
end

function H.check_tensor(self, x, what)
  if not torch.isTensor(x) then
    error(("%s: %s must be a tensor, got %s"):format(torch.type(self), what or "input", torch.type(x)), 3)
  end
end

-- gradOutput in the input's shape: the same tensor, or a view when only the shapes
-- differ (Torch7 took any gradOutput of the input's element count)
function H.grad_like(self, input, gradOutput)
  if not torch.isTensor(gradOutput) then
    error(("%s: gradOutput must be a tensor, got %s"):format(torch.type(self), torch.type(gradOutput)), 3)
  end
  if gradOutput:isSameSizeAs(input) then return gradOutput end
  if gradOutput:nElement() ~= input:nElement() then
    error(("%s: gradOutput of size %s does not match the input's size %s")
      :format(torch.type(self), H.sizestr(gradOutput), H.sizestr(input)), 3)
  end
  return gradOutput:contiguous():view(input:size())
end

-- t sized as like, for the result-first forms (torch.add(res, a, b)) that write into it
function H.sized(t, like)
  t:resizeAs(like)
  return t
end

-- the module's field (output, gradInput, indices, ...) made to hold result: the field's
-- tensor is pointed at it when the types agree (the module keeps its tensor), else replaced
function H.own(self, field, result)
  local t = self[field]
  if torch.isTensor(t) and torch.type(t) == torch.type(result) then
    t:set(result)
  else
    self[field] = result
  end
  return self[field]
end

-- an op called with the module's name on its errors
function H.call(self, f, ...)
  local ok, a, b = pcall(f, ...)
  if not ok then
    local msg = tostring(a):gsub("^[^:]*:%d+: ", "")
    error(torch.type(self) .. ": " .. msg, 3)
  end
  return a, b
end

-- the gradient of the size-giving target of a {input, target} input (the full convolutions'
-- table form): zeros of its shape, one stored zero expanded
function H.size_target_grad(self, target)
  self.zeroScalar = self.zeroScalar or target.new(1):zero()
  local ones = {}
  for i = 1, target:dim() do ones[i] = 1 end
  return self.zeroScalar:view(table.unpack(ones)):expandAs(target)
end

return H
