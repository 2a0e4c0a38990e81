-- nn/utils.lua — nn.utils: gradient clipping and flat parameter vectors.
local torch = require "torch"
local class = require "torch_class"
local base = require "nn.module"

local U = {}

-- a parameter list from a tensor, a list of tensors or a module; `given` says the argument
-- was there: an empty list {} in the last place reads as an empty options table, so an
-- absent list there is an empty one (a model without parameters)
local function param_list(params, who, given)
  if params == nil and given then return {} end
  if torch.is_tensor(params) then return { params } end
  if base.is_module(params) then return params:parameters() end
  if type(params) ~= "table" then
    error(("nn.utils.%s: expected a tensor, a list of tensors or a module, got %s"):format(who, type(params)), 3)
  end
  -- a list of param groups ({params = {...}}) flattens too
  local out = {}
  for i, p in ipairs(params) do
    if torch.is_tensor(p) then out[#out + 1] = p
    elseif type(p) == "table" and p.params then
      for _, q in ipairs(p.params) do out[#out + 1] = q end
    else
      error(("nn.utils.%s: argument 'parameters' element %d must be a tensor or a param group, got %s"):format(
        who, i, type(p)), 3)
    end
  end
  return out
end

-- clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=false, foreach=nil)
-- -> total norm (0-d tensor). The total norm is the norm of all grads as one vector: the norm
-- of the per-tensor norms (torch._foreach_norm computes those in one call when the grads
-- share a dtype); foreach is PyTorch's implementation switch, accepted and ignored.
local CLIP_GRAD_NORM = class.signature("nn.utils.clip_grad_norm_",
  "parameters, max_norm, norm_type=2.0, error_if_nonfinite=false, foreach=nil")
function U.clip_grad_norm_(...)
  local a = CLIP_GRAD_NORM(...)
  local parameters, max_norm, norm_type, error_if_nonfinite = a.parameters, a.max_norm, a.norm_type, a.error_if_nonfinite
  if norm_type == "inf" then norm_type = math.huge end
  if type(max_norm) ~= "number" then
    error("nn.utils.clip_grad_norm_: argument 'max_norm' must be a number, got " .. type(max_norm), 2)
  end
  if type(norm_type) ~= "number" then
    error("nn.utils.clip_grad_norm_: argument 'norm_type' must be a number or \"inf\", got " .. tostring(norm_type), 2)
  end
  local grads = {}
  for _, p in ipairs(param_list(parameters, "clip_grad_norm_")) do
    local g = p.grad
    if g ~= nil then grads[#grads + 1] = g end
  end
  if #grads == 0 then return torch.tensor(0.0) end
  return torch.no_grad(function()
    local dtype = grads[1].dtype
    local same = true
    for _, g in ipairs(grads) do if g.dtype ~= dtype then same = false break end end
    local stacked
    if same then
      stacked = torch._foreach_norm(grads, norm_type)   -- a 1-D tensor of per-grad norms
    else
      local norms = {}
      for i, g in ipairs(grads) do norms[i] = g:norm(norm_type):to(torch.float64) end
      stacked = torch.stack(norms)
    end
    local total
    if norm_type == math.huge then total = stacked:max()
    elseif norm_type == -math.huge then total = stacked:min()
    else total = stacked:norm(norm_type) end
    local tv = total:item()
    if error_if_nonfinite and (tv ~= tv or tv == math.huge or tv == -math.huge) then
      error(("nn.utils.clip_grad_norm_: the total norm of order %s for gradients from `parameters` is non-finite, "
        .. "so it cannot be clipped"):format(tostring(norm_type)), 2)
    end
    local coef = max_norm / (tv + 1e-6)
    if coef < 1 then
      torch._foreach_mul_(grads, coef)
    end
    return total
  end)
end
U.clip_grad_norm = U.clip_grad_norm_

-- clip_grad_value_(parameters, clip_value, foreach=nil): every grad clamped to [-clip_value, clip_value]
local CLIP_GRAD_VALUE = class.signature("nn.utils.clip_grad_value_", "parameters, clip_value, foreach=nil")
function U.clip_grad_value_(...)
  local a = CLIP_GRAD_VALUE(...)
  local parameters, clip_value = a.parameters, a.clip_value
  if type(clip_value) ~= "number" then error("nn.utils.clip_grad_value_: clip_value must be a number", 2) end
  torch.no_grad(function()
    for _, p in ipairs(param_list(parameters, "clip_grad_value_")) do
      local g = p.grad
      if g ~= nil then g:clamp_(-clip_value, clip_value) end
    end
  end)
end
U.clip_grad_value = U.clip_grad_value_

-- parameters_to_vector(parameters): one 1-D tensor of all parameters (a copy, differentiable)
local PARAMETERS_TO_VECTOR = class.signature("nn.utils.parameters_to_vector", "parameters")
function U.parameters_to_vector(...)
  local parameters = PARAMETERS_TO_VECTOR(...).parameters
  local parts = {}
  for i, p in ipairs(param_list(parameters, "parameters_to_vector", select("#", ...) > 0)) do parts[i] = p:reshape(-1) end
  if #parts == 0 then return torch.empty(0) end
  return torch.cat(parts)
end

-- vector_to_parameters(vec, parameters): copies slices of vec into the parameters, in place
local VECTOR_TO_PARAMETERS = class.signature("nn.utils.vector_to_parameters", "vec, parameters")
function U.vector_to_parameters(...)
  local a = VECTOR_TO_PARAMETERS(...)
  local vec, parameters = a.vec, a.parameters
  if not torch.is_tensor(vec) or vec:dim() ~= 1 then
    error("nn.utils.vector_to_parameters: expected a 1-D tensor as 'vec'", 2)
  end
  local params = param_list(parameters, "vector_to_parameters", select("#", ...) > 1)
  local total = 0
  for _, p in ipairs(params) do total = total + p:numel() end
  if total ~= vec:numel() then
    error(("nn.utils.vector_to_parameters: vec has %d elements, the parameters %d"):format(vec:numel(), total), 2)
  end
  torch.no_grad(function()
    local off = 1
    for _, p in ipairs(params) do
      local n = p:numel()
      p:copy_(vec:narrow(1, off, n):view(p.shape))
      off = off + n
    end
  end)
end

U.rnn = require "nn.rnn_utils"   -- nn.utils.rnn: pad_sequence, pack_padded_sequence, PackedSequence, ...

U.keys = base.keys
U.ordered_dict = base.ordered_dict

return U
