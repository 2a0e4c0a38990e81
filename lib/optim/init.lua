-- optim — PyTorch's torch.optim in Lua, Torch7's optim functions on top.
--
--   local optim = require "optim"
--   local opt = optim.AdamW(model:parameters(), {lr = 1e-3, weight_decay = 1e-2})
--   opt:zero_grad(); loss:backward(); opt:step()
--   local sched = optim.lr_scheduler.StepLR(opt, 10, {gamma = 0.5}); sched:step()
--   x, fs = optim.sgd(feval, x, {learningRate = 0.1})      -- Torch7's functional form
--
-- The per-parameter update loops run in C: every optimizer step calls one
-- fused op per parameter group (torch._fused_adam_, _fused_sgd_, ...), which
-- updates all parameters of the group in one pass over memory.
local torch = require "torch"
local class = require "torch_class"

local optim = {}

------------------------------------------------------------------------------
-- Optimizer: the base class (a class of the libraries' helper, torch_class.lua).
-- A subclass: `local MyOpt = optim.Optimizer:extend("MyOpt")`; MyOpt(params, opts)
-- makes an instance through MyOpt:__init(params, opts).
------------------------------------------------------------------------------
local Optimizer = class("optim.Optimizer")
optim.Optimizer = Optimizer
optim.classes = class.namespace("optim")   -- every optimizer class by name, for torch.load

function Optimizer:__tostring()
  local lines = { self.__name .. " (" }
  for i, g in ipairs(self.param_groups) do
    lines[#lines + 1] = ("Parameter Group %d"):format(i - 1)
    local keys = {}
    for k in pairs(g) do if k ~= "params" then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = g[k]
      if type(v) == "table" then
        local p = {}
        for j, x in ipairs(v) do p[j] = tostring(x) end
        v = "(" .. table.concat(p, ", ") .. ")"
      end
      lines[#lines + 1] = ("    %s: %s"):format(k, tostring(v))
    end
  end
  lines[#lines + 1] = ")"
  return table.concat(lines, "\n")
end

local function is_tensor(x) return torch.is_tensor(x) end

-- the parameter list of a group: a list of tensors (or one iterator function)
local function param_list(name, ps, what)
  if is_tensor(ps) then
    error(("%s: argument '%s' must be a list of tensors, got a single tensor (wrap it: {t})"):format(name, what), 0)
  end
  if type(ps) == "function" then
    local l = {}
    for p in ps do l[#l + 1] = p end
    ps = l
  end
  if type(ps) ~= "table" then
    error(("%s: argument '%s' must be a list of tensors or of param groups, got %s"):format(name, what, type(ps)), 0)
  end
  local out = {}
  for i, p in ipairs(ps) do
    if not is_tensor(p) then
      error(("%s: argument '%s' element %d must be a tensor, got %s"):format(name, what, i, type(p)), 0)
    end
    if not p.dtype.is_floating_point then
      error(("%s: argument '%s' element %d must be a floating point tensor, got %s"):format(name, what, i, p.dtype.name), 0)
    end
    out[i] = p
  end
  local n = 0
  for _ in pairs(ps) do n = n + 1 end
  if n ~= #ps then error(("%s: argument '%s' must be a list (a sequence), not a table with other keys"):format(name, what), 4) end
  return out
end

-- defaults: option -> default value; checks: list of functions(name, opts)
function Optimizer:__init(params, defaults)
  self.defaults = defaults
  self.state = {}           -- param tensor -> its state table
  self.param_groups = {}
  local name = self.__name
  if type(params) ~= "table" or is_tensor(params) then params = param_list(name, params, "params") end
  if #params == 0 then error(name .. ": optimizer got an empty parameter list", 0) end
  if is_tensor(params[1]) then params = { { params = params } } end
  for _, g in ipairs(params) do self:add_param_group(g) end
end

-- Check option values; subclasses extend (self:_check(group) errors naming the option).
function Optimizer:_check(g) end

-- A param group is {params = {...}, <option> = value, ...}. Its other keys are kept, not
-- checked (as in PyTorch): schedulers store initial_lr, max_lr, ... there, and scripts
-- label groups with keys of their own.
function Optimizer:add_param_group(group)
  local name = self.__name
  if type(group) ~= "table" or is_tensor(group) then
    error(("%s: add_param_group: a param group must be a table {params = {...}, ...}, got %s"):format(name, is_tensor(group) and "a tensor" or type(group)), 2)
  end
  if group.params == nil then
    error(("%s: argument 'params' must be a list of tensors or of param groups (tables with a 'params' field)"):format(name), 0)
  end
  local g = {}
  for k, v in pairs(group) do g[k] = v end
  g.params = param_list(name, group.params, "params")
  for k, v in pairs(self.defaults) do
    if g[k] == nil then
      if rawequal(v, optim.required) then error(("%s: parameter group didn't specify a value of required option '%s'"):format(name, k), 3) end
      if type(v) == "table" then local c = {} for i, x in ipairs(v) do c[i] = x end v = c end
      g[k] = v
    end
  end
  self:_check(g)
  local seen = {}
  for _, og in ipairs(self.param_groups) do for _, p in ipairs(og.params) do seen[p] = true end end
  for _, p in ipairs(g.params) do
    if seen[p] then error(("%s: some parameters appear in more than one parameter group"):format(name), 3) end
    seen[p] = true
  end
  self.param_groups[#self.param_groups + 1] = g
end

local ZERO_GRAD_OPTS = { "set_to_none" }
function Optimizer:zero_grad(opts)
  local set_to_none = true
  if type(opts) == "table" then
    class.check_options(self.__typename .. ":zero_grad", opts, ZERO_GRAD_OPTS)
    if opts.set_to_none ~= nil then set_to_none = opts.set_to_none end
  elseif type(opts) == "boolean" then set_to_none = opts end
  local grads = {}
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      if set_to_none then p.grad = nil
      else
        local gr = p.grad
        if gr ~= nil then
          if gr.grad_fn ~= nil then gr = gr:detach(); p.grad = gr end
          grads[#grads + 1] = gr
        end
      end
    end
  end
  if #grads > 0 then
    -- one call per dtype
    local by = {}
    for _, gr in ipairs(grads) do
      local k = gr.dtype.name
      by[k] = by[k] or {}
      table.insert(by[k], gr)
    end
    for _, l in pairs(by) do
      if l[1].dtype.is_floating_point and (l[1].dtype.name == "float32" or l[1].dtype.name == "float64") then
        torch._foreach_zero_(l)
      else for _, t in ipairs(l) do t:zero_() end end
    end
  end
end

-- step(closure): the closure re-evaluates the model and returns the loss; it
-- runs with grad enabled, the update under no_grad.
function Optimizer:step(closure)
  local loss
  if closure ~= nil then
    if type(closure) ~= "function" then error(self.__name .. ": step: argument 'closure' must be a function", 2) end
    loss = torch.enable_grad(closure)
  end
  torch.no_grad(function()
    for _, g in ipairs(self.param_groups) do self:_step_group(g) end
  end)
  return loss
end

-- the parameters of a group that have gradients, with their gradients,
-- grouped by dtype (a fused call takes one dtype); init(p, g) makes a new state
function Optimizer:_gather(group, init)
  local byd, order = {}, {}
  for _, p in ipairs(group.params) do
    local gr = p.grad
    if gr ~= nil then
      local st = self.state[p]
      if st == nil then st = init(p, group); self.state[p] = st end
      local k = p.dtype.name
      local b = byd[k]
      if not b then b = { params = {}, grads = {}, states = {} }; byd[k] = b; order[#order + 1] = b end
      local i = #b.params + 1
      b.params[i], b.grads[i], b.states[i] = p, gr, st
    end
  end
  return order
end

-- the list of state field `key` of a batch
local function field(b, key)
  local l = {}
  for i, st in ipairs(b.states) do l[i] = st[key] end
  return l
end
optim._field = field

local function zeros_like(p) return torch.zeros_like(p) end
optim._zeros_like = zeros_like
-- the step count beside its parameter (the fused update ops take every tensor on one device)
function optim._step_tensor(p) return torch.zeros({}, { dtype = torch.float64, device = p and p.device }) end

------------------------------------------------------------------------------
-- state_dict / load_state_dict: state by parameter index (1-based, across
-- groups in order), param groups with their options and those indices
------------------------------------------------------------------------------
local function copy_value(v, clone, like)
  if is_tensor(v) then
    if clone then
      if like and v:numel() == like:numel() and v.dtype ~= like.dtype and v:dim() > 0 then
        return v:to(like.dtype):clone()
      end
      return v:clone()
    end
    return v
  elseif type(v) == "table" then
    local c = {}
    for k, x in pairs(v) do c[k] = copy_value(x, clone, like) end
    return c
  end
  return v
end

function Optimizer:state_dict()
  local index, n = {}, 0
  local groups = {}
  for gi, g in ipairs(self.param_groups) do
    local pg = {}
    for k, v in pairs(g) do if k ~= "params" then pg[k] = copy_value(v, false) end end
    pg.params = {}
    for _, p in ipairs(g.params) do
      if not index[p] then n = n + 1; index[p] = n end
      pg.params[#pg.params + 1] = index[p]
    end
    groups[gi] = pg
  end
  local state = {}
  for p, st in pairs(self.state) do
    if index[p] then state[index[p]] = copy_value(st, false) end
  end
  return { state = state, param_groups = groups }
end

function Optimizer:load_state_dict(sd)
  local name = self.__name
  if type(sd) ~= "table" or type(sd.param_groups) ~= "table" or type(sd.state) ~= "table" then
    error(name .. ": load_state_dict: argument 'state_dict' must be a table with 'state' and 'param_groups'", 2)
  end
  if #sd.param_groups ~= #self.param_groups then
    error(("%s: load_state_dict: loaded state dict has %d parameter groups, the optimizer has %d"):format(
      name, #sd.param_groups, #self.param_groups), 2)
  end
  for gi, g in ipairs(self.param_groups) do
    if #sd.param_groups[gi].params ~= #g.params then
      error(("%s: load_state_dict: loaded state dict contains a parameter group (%d) that doesn't match the size of the optimizer's group"):format(name, gi), 2)
    end
  end
  local state = {}
  for gi, g in ipairs(self.param_groups) do
    local sg = sd.param_groups[gi]
    for j, p in ipairs(g.params) do
      local st = sd.state[sg.params[j]]
      if st ~= nil then state[p] = copy_value(st, true, p) end
    end
    for k, v in pairs(sg) do if k ~= "params" then g[k] = copy_value(v, true) end end
  end
  self.state = state
end

-- an option that has no default
optim.required = setmetatable({}, { __tostring = function() return "<required parameter>" end })

optim.bad = function(name, fmt, ...)
  error(name .. ": " .. fmt:format(...), 0)
end

require "optim.optimizers" (optim)
require "optim.lbfgs" (optim)
optim.lr_scheduler = require "optim.schedulers" (optim)
require "optim.torch7" (optim)

-- torch.save / torch.load (man/serialization.md): an optimizer is saved with its param
-- groups, defaults and state under the name "optim.<Class>"
if torch.serialization and torch.serialization.register_namespace then
  torch.serialization.register_namespace("optim", {
    name_of = function(mt)
      local n = rawget(mt, "__name")
      if type(n) == "string" and optim.classes[n] == mt then return n end
      return nil
    end,
    resolve = function(short) return optim.classes[short] end,
  })
end

if rawget(_G, "optim") == nil then rawset(_G, "optim", optim) end
return optim
