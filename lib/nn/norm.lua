-- nn/norm.lua — BatchNorm1d/2d, LayerNorm, GroupNorm.
local torch = require "torch"
local base = require "nn.module"
local F = require "nn.functional"
local init = require "nn.initializers"
local Module, Parameter, pyval = base.Module, base.Parameter, base.pyval
local signature, factory_kwargs = require("torch_class").signature, base.factory_kwargs

local N = {}

------------------------------------------------------------------------------
-- BatchNorm1d/2d/3d(num_features, eps=1e-5, momentum=0.1, affine=true, track_running_stats=true,
-- *, device=nil, dtype=nil): buffers running_mean, running_var, num_batches_tracked (int64) as
-- PyTorch; PyTorch's momentum=None (the cumulative moving average) is momentum=false, as a nil
-- is the default here
------------------------------------------------------------------------------
local BATCHNORM_SPEC = "num_features, eps=1e-5, momentum=0.1, affine=true, track_running_stats=true, " ..
  "*, device=nil, dtype=nil"
local function batchnorm_class(name, dims)
  local BN = Module:extend(name)
  local SIG = signature("nn." .. name, BATCHNORM_SPEC)
  function BN:__init(...)
    local o = SIG(...)
    local num_features = o.num_features
    if math.type(num_features) ~= "integer" or num_features < 1 then
      error(("%s: argument 'num_features' must be a positive integer, got %s"):format(name, tostring(num_features)), 3)
    end
    self.num_features = num_features
    self.eps = o.eps
    if o.momentum == false then self.momentum = nil else self.momentum = o.momentum end
    self.affine = o.affine ~= false
    self.track_running_stats = o.track_running_stats ~= false
    local fo = factory_kwargs("nn." .. name, o)
    if self.affine then
      self.weight = Parameter(torch.ones(num_features, fo))
      self.bias = Parameter(torch.zeros(num_features, fo))
    end
    if self.track_running_stats then
      self:register_buffer("running_mean", torch.zeros(num_features, fo))
      self:register_buffer("running_var", torch.ones(num_features, fo))
      self:register_buffer("num_batches_tracked", torch.tensor(0, { dtype = torch.int64, device = fo.device }))
    end
  end

  function BN:reset_running_stats()
    if self.track_running_stats then
      torch.no_grad(function()
        self.running_mean:zero_(); self.running_var:fill_(1); self.num_batches_tracked:zero_()
      end)
    end
  end

  function BN:reset_parameters()
    self:reset_running_stats()
    if self.affine then init.ones_(self.weight); init.zeros_(self.bias) end
  end

  function BN:forward(x)
    if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(name, type(x)), 2) end
    local d = x:dim()
    if not dims[d] then
      error(("%s: expected %s input, got %d-D input"):format(name, dims.text, d), 2)
    end
    local cdim = (dims.unbatched == d) and 1 or 2
    if x:size(cdim) ~= self.num_features then
      error(("%s: expected input with %d features (dim %d), got %d"):format(name, self.num_features, cdim, x:size(cdim)), 2)
    end
    local eaf = self.momentum or 0.0
    if self.training and self.track_running_stats then
      torch.no_grad(function() self.num_batches_tracked:add_(1) end)
      if self.momentum == nil then eaf = 1.0 / self.num_batches_tracked:item() end
    end
    local bn_training = self.training or (self.running_mean == nil and self.running_var == nil)
    if bn_training and x:numel() // x:size(cdim) <= 1 then
      error(("%s: expected more than 1 value per channel when training, got input size %s"):format(name, tostring(x.shape)), 2)
    end
    local rm, rv
    if not self.training or self.track_running_stats then rm, rv = self.running_mean, self.running_var end
    if cdim == 1 then   -- unbatched [C, L]: a batch of one
      return F.batch_norm(x:unsqueeze(1), rm, rv, self.weight, self.bias, bn_training, eaf, self.eps):squeeze(1)
    end
    return F.batch_norm(x, rm, rv, self.weight, self.bias, bn_training, eaf, self.eps)
  end

  function BN:extra_repr()
    return ("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s"):format(self.num_features,
      pyval(self.eps + 0.0), self.momentum and pyval(self.momentum + 0.0) or "None", pyval(self.affine),
      pyval(self.track_running_stats))
  end

  N[name] = BN
  return BN
end
batchnorm_class("BatchNorm1d", { [2] = true, [3] = true, text = "2-D or 3-D" })
batchnorm_class("BatchNorm2d", { [4] = true, text = "4-D" })
batchnorm_class("BatchNorm3d", { [5] = true, text = "5-D" })

------------------------------------------------------------------------------
-- LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=true, bias=true, *, device=nil, dtype=nil)
------------------------------------------------------------------------------
local LayerNorm = Module:extend("LayerNorm")
N.LayerNorm = LayerNorm

local LAYERNORM = signature("nn.LayerNorm",
  "normalized_shape, eps=1e-5, elementwise_affine=true, bias=true, *, device=nil, dtype=nil")
function LayerNorm:__init(...)
  local o = LAYERNORM(...)
  local normalized_shape = o.normalized_shape
  if type(normalized_shape) == "number" then normalized_shape = { normalized_shape } end
  if type(normalized_shape) ~= "table" or #normalized_shape == 0 then
    error("LayerNorm: argument 'normalized_shape' must be a number or a non-empty list", 3)
  end
  local fo = factory_kwargs("nn.LayerNorm", o)
  local shape = {}
  for i, v in ipairs(normalized_shape) do shape[i] = v end   -- a copy: x.shape or the caller's list
  self.normalized_shape = shape
  self.eps = o.eps
  self.elementwise_affine = o.elementwise_affine ~= false
  if self.elementwise_affine then
    self.weight = Parameter(torch.ones(shape, fo))
    if o.bias ~= false then self.bias = Parameter(torch.zeros(shape, fo)) end
  end
end

function LayerNorm:reset_parameters()
  if self.weight ~= nil then init.ones_(self.weight) end
  if self.bias ~= nil then init.zeros_(self.bias) end
end

function LayerNorm:forward(x)
  if not torch.is_tensor(x) then error("LayerNorm: expected a tensor input, got " .. type(x), 2) end
  local ns, d = self.normalized_shape, x:dim()
  local ok = d >= #ns
  if ok then
    for i = 1, #ns do if x:size(d - #ns + i) ~= ns[i] then ok = false break end end
  end
  if not ok then
    error(("LayerNorm: expected input with trailing shape %s, got %s"):format(pyval(ns), tostring(x.shape)), 2)
  end
  return F.layer_norm(x, ns, self.weight, self.bias, self.eps)
end

function LayerNorm:extra_repr()
  return ("%s, eps=%s, elementwise_affine=%s"):format(pyval(self.normalized_shape), pyval(self.eps + 0.0),
    pyval(self.elementwise_affine))
end

------------------------------------------------------------------------------
-- GroupNorm(num_groups, num_channels, eps=1e-5, affine=true, *, device=nil, dtype=nil)
------------------------------------------------------------------------------
local GroupNorm = Module:extend("GroupNorm")
N.GroupNorm = GroupNorm

local GROUPNORM = signature("nn.GroupNorm", "num_groups, num_channels, eps=1e-5, affine=true, *, device=nil, dtype=nil")
function GroupNorm:__init(...)
  local o = GROUPNORM(...)
  local num_groups, num_channels = o.num_groups, o.num_channels
  if math.type(num_groups) ~= "integer" or num_groups < 1 then
    error(("GroupNorm: argument 'num_groups' must be a positive integer, got %s"):format(tostring(num_groups)), 3)
  end
  if math.type(num_channels) ~= "integer" or num_channels % num_groups ~= 0 then
    error(("GroupNorm: num_channels (%s) must be divisible by num_groups (%d)"):format(tostring(num_channels), num_groups), 3)
  end
  self.num_groups, self.num_channels = num_groups, num_channels
  local fo = factory_kwargs("nn.GroupNorm", o)
  self.eps, self.affine = o.eps, o.affine ~= false
  if self.affine then
    self.weight = Parameter(torch.ones(num_channels, fo))
    self.bias = Parameter(torch.zeros(num_channels, fo))
  end
end

function GroupNorm:reset_parameters()
  if self.affine then init.ones_(self.weight); init.zeros_(self.bias) end
end

function GroupNorm:forward(x)
  if not torch.is_tensor(x) then error("GroupNorm: expected a tensor input, got " .. type(x), 2) end
  if x:dim() < 2 or x:size(2) ~= self.num_channels then
    error(("GroupNorm: expected input with %d channels (dim 2), got %s"):format(self.num_channels,
      x:dim() < 2 and (x:dim() .. "-D input") or tostring(x:size(2))), 2)
  end
  return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)
end

function GroupNorm:extra_repr()
  return ("%d, %d, eps=%s, affine=%s"):format(self.num_groups, self.num_channels, pyval(self.eps + 0.0), pyval(self.affine))
end

return N
