-- nn/loss.lua — every loss as a module: loss = criterion(input, target).
-- Constructors take PyTorch's arguments, positional or by name in a trailing options table:
--   nn.CrossEntropyLoss({weight = w, ignore_index = 1, label_smoothing = 0.1, reduction = "sum"})
--   nn.NLLLoss(w), nn.NLLLoss(w, {ignore_index = 1})        -- weight is the first positional
-- PyTorch's deprecated size_average= and reduce= (booleans) are honoured as PyTorch does: when
-- either is given, they decide the reduction (both true or nil: "mean"; reduce alone: "sum";
-- reduce=false: "none"), which is also Torch7's sizeAverage.
local torch = require "torch"
local class = require "torch_class"
local base = require "nn.module"
local F = require "nn.functional"
local Module = base.Module

local Lo = {}

local REDUCTIONS = { mean = true, sum = true, none = true }
local LEGACY = { size_average = true, reduce = true, reduction = true }

-- the reduction of size_average and reduce (PyTorch's legacy rule), or nil when neither is given
local function legacy_reduction(name, a)
  local sa, r = a.size_average, a.reduce
  if sa == nil and r == nil then return nil end
  for k, v in pairs({ size_average = sa, reduce = r }) do
    if v ~= nil and type(v) ~= "boolean" then
      error(("%s: argument '%s' must be a boolean (PyTorch's deprecated %s=), got %s; the reduction is "
        .. "reduction = \"mean\" | \"sum\" | \"none\""):format(name, k, k, type(v) == "string" and ("\"" .. v .. "\"") or type(v)), 4)
    end
  end
  if r == false then return "none" end
  if sa == false then return "sum" end
  return "mean"
end

-- spec: the constructor's parameters in PyTorch's order; its names other than size_average,
-- reduce and reduction are the loss's fields, handed to fn by name with the reduction.
-- arity 3: forward(a, b, c) (the losses of two inputs and a target, or input, target, var)
local function loss_class(name, fn, spec, arity)
  local C = Module:extend(name)
  local SIG = class.signature("nn." .. name, spec)
  local fields = {}
  for _, p in ipairs(SIG.params) do
    if not LEGACY[p.name] then fields[#fields + 1] = p.name end
  end
  function C:__init(...)
    local a = SIG(...)
    local red = legacy_reduction(name, a) or a.reduction
    if not REDUCTIONS[red] and not (red == "batchmean" and name == "KLDivLoss") then
      error(("%s: reduction must be \"mean\", \"sum\" or \"none\", got \"%s\""):format(name, tostring(red)), 3)
    end
    self.reduction = red
    for _, k in ipairs(fields) do
      local v = a[k]
      if k == "weight" or k == "pos_weight" then
        if v ~= nil and not torch.is_tensor(v) then
          error(("%s: argument '%s' must be a tensor, got %s"):format(name, k, type(v)), 3)
        end
        if v ~= nil then self:register_buffer(k, v) end
      else
        self[k] = v
      end
    end
  end
  -- the options of fn: the reduction and the fields, all by name (weights read back as buffers)
  function C:_opts()
    local o = { reduction = self.reduction }
    for _, k in ipairs(fields) do
      if k == "weight" or k == "pos_weight" then o[k] = self._buffers.vals[k] else o[k] = self[k] end
    end
    return o
  end
  if arity == 3 then
    function C:forward(a, b, c) return fn(a, b, c, self:_opts()) end
  else
    function C:forward(input, target)
      if not torch.is_tensor(input) then error(("%s: expected a tensor input, got %s"):format(name, type(input)), 2) end
      if not torch.is_tensor(target) then error(("%s: expected a tensor target, got %s"):format(name, type(target)), 2) end
      return fn(input, target, self:_opts())
    end
  end
  Lo[name] = C
  return C
end

local MEAN = "size_average=nil, reduce=nil, reduction='mean'"
loss_class("L1Loss", F.l1_loss, MEAN)
loss_class("MSELoss", F.mse_loss, MEAN)
loss_class("SmoothL1Loss", F.smooth_l1_loss, MEAN .. ", beta=1.0")
loss_class("HuberLoss", F.huber_loss, "reduction='mean', delta=1.0")
loss_class("NLLLoss", F.nll_loss, "weight=nil, size_average=nil, ignore_index=-100, reduce=nil, reduction='mean'")
loss_class("CrossEntropyLoss", F.cross_entropy,
  "weight=nil, size_average=nil, ignore_index=-100, reduce=nil, reduction='mean', label_smoothing=0.0")
loss_class("BCELoss", F.binary_cross_entropy, "weight=nil, " .. MEAN)
loss_class("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits, "weight=nil, " .. MEAN .. ", pos_weight=nil")
loss_class("KLDivLoss", F.kl_div, MEAN .. ", log_target=false")
loss_class("SoftMarginLoss", F.soft_margin_loss, MEAN)
loss_class("HingeEmbeddingLoss", F.hinge_embedding_loss, "margin=1.0, " .. MEAN)
loss_class("PoissonNLLLoss", F.poisson_nll_loss,
  "log_input=true, full=false, size_average=nil, eps=1e-8, reduce=nil, reduction='mean'")
loss_class("MarginRankingLoss", F.margin_ranking_loss, "margin=0.0, " .. MEAN, 3)
loss_class("CosineEmbeddingLoss", F.cosine_embedding_loss, "margin=0.0, " .. MEAN, 3)
loss_class("TripletMarginLoss", F.triplet_margin_loss, "margin=1.0, p=2.0, eps=1e-6, swap=false, " .. MEAN, 3)
loss_class("GaussianNLLLoss", F.gaussian_nll_loss, "*, full=false, eps=1e-6, reduction='mean'", 3)

return Lo
