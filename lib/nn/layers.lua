-- nn/layers.lua — the basic layers: Linear, Bilinear, Identity, Flatten, Unflatten, the
-- dropouts, Embedding, PixelShuffle/PixelUnshuffle, Upsample. Each takes PyTorch's
-- positional arguments and an options table last, and initialises its parameters as PyTorch.
local torch = require "torch"
local base = require "nn.module"
local F = require "nn.functional"
local init = require "nn.initializers"
local Module, Parameter, pyval = base.Module, base.Parameter, base.pyval
local check_options = require("torch_class").check_options

local L = {}

-- an options table where a positional argument may stand: a plain table that is not a list
local function is_opts(v) return type(v) == "table" and getmetatable(v) == nil and v[1] == nil end

-- shared argument checks: errors name the layer
local function check_int(who, name, v, min)
  if math.type(v) ~= "integer" or v < (min or 1) then
    error(("%s: argument '%s' must be an integer >= %d, got %s"):format(who, name, min or 1, tostring(v)), 4)
  end
end
L._check_int = check_int

local function check_input(who, x)
  if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(who, type(x)), 4) end
end
L._check_input = check_input

-- the dtype (and, later, device) a layer's factory options ask for
local function factory(opts)
  return { dtype = opts and opts.dtype or nil, requires_grad = false }
end
L._factory = factory

------------------------------------------------------------------------------
-- Identity
------------------------------------------------------------------------------
local Identity = Module:extend("Identity")
L.Identity = Identity
function Identity:forward(x) return x end

------------------------------------------------------------------------------
-- Linear(in_features, out_features, {bias=true, dtype=})
------------------------------------------------------------------------------
local Linear = Module:extend("Linear")
L.Linear = Linear

local LINEAR_OPTS = { "bias", "dtype" }
function Linear:__init(in_features, out_features, opts)
  opts = check_options("nn.Linear", opts, LINEAR_OPTS)
  check_int("Linear", "in_features", in_features, 0)
  check_int("Linear", "out_features", out_features, 0)
  self.in_features, self.out_features = in_features, out_features
  self.weight = Parameter(torch.empty(out_features, in_features, factory(opts)))
  if opts.bias ~= false then
    self.bias = Parameter(torch.empty(out_features, factory(opts)))
  end
  self:reset_parameters()
end

function Linear:reset_parameters()
  -- kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bias the same bound
  init.kaiming_uniform_(self.weight, math.sqrt(5))
  if self.bias ~= nil then
    local fan_in = self.in_features
    local bound = fan_in > 0 and 1 / math.sqrt(fan_in) or 0
    init.uniform_(self.bias, -bound, bound)
  end
end

function Linear:forward(x)
  if not torch.is_tensor(x) then error(("Linear: expected a tensor input, got %s"):format(type(x)), 2) end
  local d = x:dim()
  if d == 0 or x:size(d) ~= self.in_features then
    error(("Linear: expected input with last dimension %d, got %s"):format(self.in_features,
      d == 0 and "a 0-d tensor" or tostring(x:size(d))), 2)
  end
  return F.linear(x, self.weight, self.bias)
end

function Linear:extra_repr()
  return ("in_features=%d, out_features=%d, bias=%s"):format(self.in_features, self.out_features,
    pyval(self.bias ~= nil))
end

------------------------------------------------------------------------------
-- Bilinear(in1_features, in2_features, out_features, {bias=true})
------------------------------------------------------------------------------
local Bilinear = Module:extend("Bilinear")
L.Bilinear = Bilinear

function Bilinear:__init(in1, in2, out, opts)
  opts = check_options("nn.Bilinear", opts, LINEAR_OPTS)
  check_int("Bilinear", "in1_features", in1); check_int("Bilinear", "in2_features", in2)
  check_int("Bilinear", "out_features", out)
  self.in1_features, self.in2_features, self.out_features = in1, in2, out
  self.weight = Parameter(torch.empty(out, in1, in2, factory(opts)))
  if opts.bias ~= false then self.bias = Parameter(torch.empty(out, factory(opts))) end
  self:reset_parameters()
end

function Bilinear:reset_parameters()
  local bound = 1 / math.sqrt(self.weight:size(2))
  init.uniform_(self.weight, -bound, bound)
  if self.bias ~= nil then init.uniform_(self.bias, -bound, bound) end
end

function Bilinear:forward(x1, x2)
  check_input("Bilinear", x1); check_input("Bilinear", x2)
  if x1:size(x1:dim()) ~= self.in1_features then
    error(("Bilinear: expected input1 with last dimension %d, got %d"):format(self.in1_features, x1:size(x1:dim())), 2)
  end
  if x2:size(x2:dim()) ~= self.in2_features then
    error(("Bilinear: expected input2 with last dimension %d, got %d"):format(self.in2_features, x2:size(x2:dim())), 2)
  end
  return F.bilinear(x1, x2, self.weight, self.bias)
end

function Bilinear:extra_repr()
  return ("in1_features=%d, in2_features=%d, out_features=%d, bias=%s"):format(
    self.in1_features, self.in2_features, self.out_features, pyval(self.bias ~= nil))
end

------------------------------------------------------------------------------
-- Flatten(start_dim=2, end_dim=-1) (PyTorch's start_dim=1, 1-based), Unflatten(dim, sizes)
------------------------------------------------------------------------------
local Flatten = Module:extend("Flatten")
L.Flatten = Flatten
local FLATTEN_OPTS = { "start_dim", "end_dim" }
function Flatten:__init(start_dim, end_dim)
  if type(start_dim) == "table" then
    check_options("nn.Flatten", start_dim, FLATTEN_OPTS)
    start_dim, end_dim = start_dim.start_dim, start_dim.end_dim
  end
  self.start_dim, self.end_dim = start_dim or 2, end_dim or -1
end
function Flatten:forward(x)
  check_input("Flatten", x)
  return x:flatten(self.start_dim, self.end_dim)
end
function Flatten:extra_repr() return ("start_dim=%d, end_dim=%d"):format(self.start_dim, self.end_dim) end

local Unflatten = Module:extend("Unflatten")
L.Unflatten = Unflatten
function Unflatten:__init(dim, unflattened_size)
  if type(unflattened_size) ~= "table" then
    error("Unflatten: argument 'unflattened_size' must be a list of sizes", 3)
  end
  self.dim, self.unflattened_size = dim, unflattened_size
end
function Unflatten:forward(x)
  check_input("Unflatten", x)
  return x:unflatten(self.dim, self.unflattened_size)
end
function Unflatten:extra_repr()
  return ("dim=%d, unflattened_size=%s"):format(self.dim, pyval(self.unflattened_size))
end

------------------------------------------------------------------------------
-- dropouts: active in training mode only
------------------------------------------------------------------------------
local DROPOUT_OPTS = { "p", "inplace" }
local function dropout_class(name, fn)
  local D = Module:extend(name)
  function D:__init(p, inplace)
    if type(p) == "table" then
      check_options("nn." .. name, p, DROPOUT_OPTS)
      p, inplace = p.p, p.inplace
    end
    if p == nil then p = 0.5 end
    if type(p) ~= "number" or p < 0 or p > 1 then
      error(("%s: dropout probability has to be between 0 and 1, but got %s"):format(name, tostring(p)), 3)
    end
    self.p, self.inplace = p, inplace and true or false
  end
  function D:forward(x)
    check_input(name, x)
    return fn(x, self.p, self.training, self.inplace)
  end
  function D:extra_repr() return ("p=%s, inplace=%s"):format(pyval(self.p + 0.0), pyval(self.inplace)) end
  L[name] = D
  return D
end
dropout_class("Dropout", F.dropout)
dropout_class("Dropout1d", F.dropout1d)
dropout_class("Dropout2d", F.dropout2d)
dropout_class("Dropout3d", F.dropout3d)
dropout_class("AlphaDropout", function(x, p, t) return F.alpha_dropout(x, p, t) end)

------------------------------------------------------------------------------
-- Embedding(num_embeddings, embedding_dim, {padding_idx=, max_norm=, norm_type=, _weight=})
-- padding_idx is 1-based (negative counts from the end); its row starts at zero and gets no gradient
------------------------------------------------------------------------------
local Embedding = Module:extend("Embedding")
L.Embedding = Embedding

local EMBEDDING_OPTS = { "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse", "dtype",
  "_weight", "_freeze" }
function Embedding:__init(num_embeddings, embedding_dim, opts)
  opts = check_options("nn.Embedding", opts, EMBEDDING_OPTS)
  check_int("Embedding", "num_embeddings", num_embeddings)
  check_int("Embedding", "embedding_dim", embedding_dim)
  self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
  local pi = opts.padding_idx
  if pi ~= nil then
    if pi < 0 then pi = num_embeddings + pi + 1 end
    if pi < 1 or pi > num_embeddings then
      error(("Embedding: padding_idx must be within num_embeddings (1..%d), got %d"):format(num_embeddings, opts.padding_idx), 3)
    end
  end
  self.padding_idx = pi
  self.max_norm, self.norm_type = opts.max_norm, opts.norm_type or 2.0
  self.scale_grad_by_freq, self.sparse = opts.scale_grad_by_freq or false, opts.sparse or false
  if opts._weight ~= nil then
    local w = opts._weight
    if w:dim() ~= 2 or w:size(1) ~= num_embeddings or w:size(2) ~= embedding_dim then
      error("Embedding: shape of _weight does not match num_embeddings and embedding_dim", 3)
    end
    self.weight = Parameter(w, opts._freeze ~= true)
  else
    self.weight = Parameter(torch.empty(num_embeddings, embedding_dim, factory(opts)))
    self:reset_parameters()
  end
end

function Embedding:reset_parameters()
  init.normal_(self.weight)
  if self.padding_idx ~= nil then
    torch.no_grad(function() self.weight[self.padding_idx]:zero_() end)
  end
end

function Embedding:forward(input)
  check_input("Embedding", input)
  if input:is_floating_point() then
    error(("Embedding: expected an integer tensor of indices, got %s"):format(input.dtype.name), 2)
  end
  return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type)
end

function Embedding:extra_repr()
  local s = ("%d, %d"):format(self.num_embeddings, self.embedding_dim)
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  if self.max_norm ~= nil then s = s .. ", max_norm=" .. pyval(self.max_norm + 0.0) end
  return s
end

-- Embedding.from_pretrained(embeddings, {freeze=true, padding_idx=, max_norm=, norm_type=,
-- scale_grad_by_freq=, sparse=})
local PRETRAINED_OPTS = { "freeze", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse" }
function Embedding.from_pretrained(embeddings, opts)
  if Embedding == embeddings then
    error("Embedding.from_pretrained: call it with a dot: nn.Embedding.from_pretrained(t)", 2)
  end
  opts = check_options("nn.Embedding.from_pretrained", opts, PRETRAINED_OPTS)
  if not torch.is_tensor(embeddings) or embeddings:dim() ~= 2 then
    error("Embedding.from_pretrained: embeddings must be a 2-D tensor", 2)
  end
  return Embedding(embeddings:size(1), embeddings:size(2), {
    _weight = embeddings:detach():clone(), _freeze = opts.freeze ~= false, padding_idx = opts.padding_idx,
    max_norm = opts.max_norm, norm_type = opts.norm_type, scale_grad_by_freq = opts.scale_grad_by_freq,
    sparse = opts.sparse })
end

------------------------------------------------------------------------------
-- PixelShuffle / PixelUnshuffle / Upsample
------------------------------------------------------------------------------
local PixelShuffle = Module:extend("PixelShuffle")
L.PixelShuffle = PixelShuffle
function PixelShuffle:__init(r) check_int("PixelShuffle", "upscale_factor", r); self.upscale_factor = r end
function PixelShuffle:forward(x) check_input("PixelShuffle", x); return F.pixel_shuffle(x, self.upscale_factor) end
function PixelShuffle:extra_repr() return "upscale_factor=" .. self.upscale_factor end

local PixelUnshuffle = Module:extend("PixelUnshuffle")
L.PixelUnshuffle = PixelUnshuffle
function PixelUnshuffle:__init(r) check_int("PixelUnshuffle", "downscale_factor", r); self.downscale_factor = r end
function PixelUnshuffle:forward(x) check_input("PixelUnshuffle", x); return F.pixel_unshuffle(x, self.downscale_factor) end
function PixelUnshuffle:extra_repr() return "downscale_factor=" .. self.downscale_factor end

-- Upsample({size=, scale_factor=, mode="nearest", align_corners=, recompute_scale_factor=})
-- or Upsample(size, scale_factor, mode, align_corners, recompute_scale_factor)
local Upsample = Module:extend("Upsample")
L.Upsample = Upsample
local UPSAMPLE_OPTS = { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor" }
function Upsample:__init(size, scale_factor, mode, align_corners, recompute_scale_factor)
  if is_opts(size) then
    local o = check_options("nn.Upsample", size, UPSAMPLE_OPTS)
    size, scale_factor, mode, align_corners, recompute_scale_factor =
      o.size, o.scale_factor, o.mode, o.align_corners, o.recompute_scale_factor
  end
  self.size, self.scale_factor, self.mode, self.align_corners = size, scale_factor, mode or "nearest", align_corners
  self.recompute_scale_factor = recompute_scale_factor
end
function Upsample:forward(x)
  check_input("Upsample", x)
  return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor)
end
function Upsample:extra_repr()
  local s
  if self.scale_factor ~= nil then s = "scale_factor=" .. pyval(type(self.scale_factor) == "number" and self.scale_factor + 0.0 or self.scale_factor)
  else s = "size=" .. pyval(self.size) end
  return s .. ", mode=" .. self.mode
end

local UpsamplingNearest2d = Upsample:extend("UpsamplingNearest2d")
L.UpsamplingNearest2d = UpsamplingNearest2d
local UPSAMPLING_OPTS = { "size", "scale_factor" }
function UpsamplingNearest2d:__init(size, scale_factor)
  if is_opts(size) then
    check_options("nn.UpsamplingNearest2d", size, UPSAMPLING_OPTS)
    size, scale_factor = size.size, size.scale_factor
  end
  Upsample.__init(self, size, scale_factor, "nearest")
end
local UpsamplingBilinear2d = Upsample:extend("UpsamplingBilinear2d")
L.UpsamplingBilinear2d = UpsamplingBilinear2d
function UpsamplingBilinear2d:__init(size, scale_factor)
  if is_opts(size) then
    check_options("nn.UpsamplingBilinear2d", size, UPSAMPLING_OPTS)
    size, scale_factor = size.size, size.scale_factor
  end
  Upsample.__init(self, size, scale_factor, "bilinear", true)
end

------------------------------------------------------------------------------
-- distances
------------------------------------------------------------------------------
local CosineSimilarity = Module:extend("CosineSimilarity")
L.CosineSimilarity = CosineSimilarity
local COSINE_OPTS = { "dim", "eps" }
function CosineSimilarity:__init(dim, eps)
  if type(dim) == "table" then
    check_options("nn.CosineSimilarity", dim, COSINE_OPTS)
    dim, eps = dim.dim, dim.eps
  end
  self.dim, self.eps = dim or 2, eps or 1e-8
end
function CosineSimilarity:forward(a, b) return F.cosine_similarity(a, b, self.dim, self.eps) end

local PairwiseDistance = Module:extend("PairwiseDistance")
L.PairwiseDistance = PairwiseDistance
local PAIRWISE_OPTS = { "p", "eps", "keepdim" }
function PairwiseDistance:__init(p, eps, keepdim)
  if type(p) == "table" then
    check_options("nn.PairwiseDistance", p, PAIRWISE_OPTS)
    p, eps, keepdim = p.p, p.eps, p.keepdim
  end
  self.norm, self.eps, self.keepdim = p or 2, eps or 1e-6, keepdim or false
end
function PairwiseDistance:forward(a, b) return F.pairwise_distance(a, b, self.norm, self.eps, self.keepdim) end

return L
