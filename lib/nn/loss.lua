-- nn/loss.lua — every loss as a module: loss = criterion(input, target).
-- Constructors take PyTorch's keyword arguments in an options table:
--   nn.CrossEntropyLoss({weight = w, ignore_index = 1, label_smoothing = 0.1, reduction = "sum"})
-- (a tensor as the first argument is the class weight: nn.NLLLoss(w)).
local torch = require "torch"
local base = require "nn.module"
local F = require "nn.functional"
local Module = base.Module
local check_options = require("torch_class").check_options

local Lo = {}

local REDUCTIONS = { mean = true, sum = true, none = true }
local LOSS_OPTS = { "reduction" }   -- and each loss's fields

local function loss_class(name, fn, fields, arity)
  local C = Module:extend(name)
  function C:__init(opts, o2)
    if torch.is_tensor(opts) then o2 = o2 or {}; o2.weight = opts; opts = o2 end
    opts = opts or {}
    if type(opts) ~= "table" then
      error(("%s: expected an options table ({reduction = \"mean\", ...}), got %s"):format(name, type(opts)), 3)
    end
    check_options("nn." .. name, opts, LOSS_OPTS, fields or LOSS_OPTS)
    local red = opts.reduction or "mean"
    if not REDUCTIONS[red] and not (red == "batchmean" and name == "KLDivLoss") then
      error(("%s: reduction must be \"mean\", \"sum\" or \"none\", got \"%s\""):format(name, tostring(red)), 3)
    end
    self.reduction = red
    for k, default in pairs(fields or {}) do
      local v = opts[k]
      if v == nil then v = default end
      if k == "weight" or k == "pos_weight" then
        if v ~= nil and v ~= false then self:register_buffer(k, v) end
      else
        self[k] = v
      end
    end
  end
  local keys = {}
  for k in pairs(fields or {}) do keys[#keys + 1] = k end
  function C:_opts()
    local o = { reduction = self.reduction }
    for _, k in ipairs(keys) do o[k] = self[k] end
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

local NONE = false   -- a field whose default is "absent"

loss_class("L1Loss", F.l1_loss)
loss_class("MSELoss", F.mse_loss)
loss_class("SmoothL1Loss", F.smooth_l1_loss, { beta = 1.0 })
loss_class("HuberLoss", F.huber_loss, { delta = 1.0 })
loss_class("NLLLoss", function(i, t, o) return F.nll_loss(i, t, o) end,
  { weight = NONE, ignore_index = -100 })
loss_class("CrossEntropyLoss", function(i, t, o) return F.cross_entropy(i, t, o) end,
  { weight = NONE, ignore_index = -100, label_smoothing = 0.0 })
loss_class("BCELoss", function(i, t, o) return F.binary_cross_entropy(i, t, o) end, { weight = NONE })
loss_class("BCEWithLogitsLoss", function(i, t, o)
  if o.pos_weight == false then o.pos_weight = nil end
  return F.binary_cross_entropy_with_logits(i, t, o)
end, { weight = NONE, pos_weight = NONE })
loss_class("KLDivLoss", F.kl_div, { log_target = false })
loss_class("SoftMarginLoss", F.soft_margin_loss)
loss_class("HingeEmbeddingLoss", F.hinge_embedding_loss, { margin = 1.0 })
loss_class("PoissonNLLLoss", F.poisson_nll_loss, { log_input = true, full = false, eps = 1e-8 })
loss_class("MarginRankingLoss", F.margin_ranking_loss, { margin = 0.0 }, 3)
loss_class("CosineEmbeddingLoss", F.cosine_embedding_loss, { margin = 0.0 }, 3)
loss_class("TripletMarginLoss", F.triplet_margin_loss, { margin = 1.0, p = 2.0, eps = 1e-6, swap = false }, 3)
loss_class("GaussianNLLLoss", F.gaussian_nll_loss, { full = false, eps = 1e-6 }, 3)

-- weight and pos_weight are read back as buffers (nil when absent)
for _, name in ipairs({ "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss" }) do
  local C = Lo[name]
  local plain = C._opts
  function C:_opts()
    local o = plain(self)
    o.weight = self._buffers.vals.weight
    o.pos_weight = self._buffers.vals.pos_weight
    return o
  end
end

return Lo
