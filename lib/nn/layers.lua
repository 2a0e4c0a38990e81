-- nn/layers.lua — the basic layers: Linear, Bilinear, Identity, Flatten, Unflatten, the
-- dropouts, Embedding, PixelShuffle/PixelUnshuffle, Upsample. Each takes PyTorch's
-- positional arguments, any of them by name in an options table last (its signature, declared
-- once with class.signature), and initialises its parameters as PyTorch.
local torch = require "torch"
local class = require "torch_class"
local base = require "nn.module"
local F = require "nn.functional"
local init = require "nn.initializers"
local Module, Parameter, pyval = base.Module, base.Parameter, base.pyval
local signature, factory_kwargs = class.signature, base.factory_kwargs

local L = {}

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

-- the dtype and device a layer's parameters are made with (checked, naming the layer)
L._factory = factory_kwargs

------------------------------------------------------------------------------
-- Identity
------------------------------------------------------------------------------
local Identity = Module:extend("Identity")
L.Identity = Identity
-- PyTorch's Identity takes any arguments and ignores them; here positional ones are ignored
-- too, and a misspelt options table is still an error
local IDENTITY = base.varargs_signature("nn.Identity", "*args")
function Identity:__init(...) base.varargs_options(IDENTITY, ...) end
function Identity:forward(x) return x end

------------------------------------------------------------------------------
-- Linear(in_features, out_features, bias=true, *, device=nil, dtype=nil)
------------------------------------------------------------------------------
local Linear = Module:extend("Linear")
L.Linear = Linear

local LINEAR = signature("nn.Linear", "in_features, out_features, bias=true, *, device=nil, dtype=nil")
function Linear:__init(...)
  local a = LINEAR(...)
  local in_features, out_features = a.in_features, a.out_features
  check_int("Linear", "in_features", in_features, 0)
  check_int("Linear", "out_features", out_features, 0)
  local fo = factory_kwargs("nn.Linear", a)
  self.in_features, self.out_features = in_features, out_features
  self.weight = Parameter(torch.empty(out_features, in_features, fo))
  if a.bias ~= false then
    self.bias = Parameter(torch.empty(out_features, fo))
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
-- Bilinear(in1_features, in2_features, out_features, bias=true, *, device=nil, dtype=nil)
------------------------------------------------------------------------------
local Bilinear = Module:extend("Bilinear")
L.Bilinear = Bilinear

local BILINEAR = signature("nn.Bilinear",
  "in1_features, in2_features, out_features, bias=true, *, device=nil, dtype=nil")
function Bilinear:__init(...)
  local a = BILINEAR(...)
  local in1, in2, out = a.in1_features, a.in2_features, a.out_features
  check_int("Bilinear", "in1_features", in1); check_int("Bilinear", "in2_features", in2)
  check_int("Bilinear", "out_features", out)
  local fo = factory_kwargs("nn.Bilinear", a)
  self.in1_features, self.in2_features, self.out_features = in1, in2, out
  self.weight = Parameter(torch.empty(out, in1, in2, fo))
  if a.bias ~= false then self.bias = Parameter(torch.empty(out, fo)) end
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
local FLATTEN = signature("nn.Flatten", "start_dim=2, end_dim=-1")
function Flatten:__init(...)
  local a = FLATTEN(...)
  self.start_dim, self.end_dim = a.start_dim, a.end_dim
end
function Flatten:forward(x)
  check_input("Flatten", x)
  return x:flatten(self.start_dim, self.end_dim)
end
function Flatten:extra_repr() return ("start_dim=%d, end_dim=%d"):format(self.start_dim, self.end_dim) end

local Unflatten = Module:extend("Unflatten")
L.Unflatten = Unflatten
local UNFLATTEN = signature("nn.Unflatten", "dim, unflattened_size")
function Unflatten:__init(...)
  local a = UNFLATTEN(...)
  local dim, unflattened_size = a.dim, a.unflattened_size
  if math.type(dim) ~= "integer" then
    error(("Unflatten: argument 'dim' must be an integer, got %s"):format(tostring(dim)), 3)
  end
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
local function dropout_class(name, fn)
  local D = Module:extend(name)
  local SIG = signature("nn." .. name, "p=0.5, inplace=false")
  function D:__init(...)
    local a = SIG(...)
    local p, inplace = a.p, a.inplace
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
-- Embedding(num_embeddings, embedding_dim, padding_idx=nil, max_norm=nil, norm_type=2.0,
-- scale_grad_by_freq=false, sparse=false, _weight=nil, _freeze=false, *, device=nil, dtype=nil)
-- padding_idx is 1-based (negative counts from the end); its row starts at zero and gets no gradient
------------------------------------------------------------------------------
local Embedding = Module:extend("Embedding")
L.Embedding = Embedding

local EMBEDDING = signature("nn.Embedding", "num_embeddings, embedding_dim, padding_idx=nil, max_norm=nil, " ..
  "norm_type=2.0, scale_grad_by_freq=false, sparse=false, _weight=nil, _freeze=false, *, device=nil, dtype=nil")
function Embedding:__init(...)
  local a = EMBEDDING(...)
  local num_embeddings, embedding_dim = a.num_embeddings, a.embedding_dim
  check_int("Embedding", "num_embeddings", num_embeddings)
  check_int("Embedding", "embedding_dim", embedding_dim)
  local fo = factory_kwargs("nn.Embedding", a)
  self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
  local pi = a.padding_idx
  if pi ~= nil then
    if not math.tointeger(pi) then
      error(("Embedding: argument 'padding_idx' must be an integer, got %s"):format(tostring(pi)), 3)
    end
    pi = math.tointeger(pi)
    if pi < 0 then pi = num_embeddings + pi + 1 end
    if pi < 1 or pi > num_embeddings then
      error(("Embedding: padding_idx must be within num_embeddings (1..%d), got %d"):format(num_embeddings, a.padding_idx), 3)
    end
  end
  -- scaling the gradient by word frequency is not done by F.embedding: refuse it rather than
  -- train with unscaled gradients (sparse=true is accepted; the gradient is dense, same values)
  if a.scale_grad_by_freq then
    error("Embedding: scale_grad_by_freq=true is not supported", 3)
  end
  self.padding_idx = pi
  self.max_norm, self.norm_type = a.max_norm, a.norm_type
  self.scale_grad_by_freq, self.sparse = a.scale_grad_by_freq, a.sparse
  if a._weight ~= nil then
    local w = a._weight
    if not torch.is_tensor(w) or w:dim() ~= 2 or w:size(1) ~= num_embeddings or w:size(2) ~= embedding_dim then
      error("Embedding: shape of _weight does not match num_embeddings and embedding_dim", 3)
    end
    self.weight = Parameter(w, a._freeze ~= true)
  else
    self.weight = Parameter(torch.empty(num_embeddings, embedding_dim, fo))
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

-- Embedding.from_pretrained(embeddings, freeze=true, padding_idx=nil, max_norm=nil,
-- norm_type=2.0, scale_grad_by_freq=false, sparse=false)
local FROM_PRETRAINED = signature("nn.Embedding.from_pretrained", "embeddings, freeze=true, padding_idx=nil, " ..
  "max_norm=nil, norm_type=2.0, scale_grad_by_freq=false, sparse=false")
function Embedding.from_pretrained(...)
  local a = FROM_PRETRAINED(...)
  local embeddings = a.embeddings
  if rawequal(Embedding, embeddings) then
    error("Embedding.from_pretrained: call it with a dot: nn.Embedding.from_pretrained(t)", 2)
  end
  if not torch.is_tensor(embeddings) or embeddings:dim() ~= 2 then
    error("Embedding.from_pretrained: embeddings must be a 2-D tensor", 2)
  end
  return Embedding(embeddings:size(1), embeddings:size(2), {
    _weight = embeddings:detach():clone(), _freeze = a.freeze ~= false, padding_idx = a.padding_idx,
    max_norm = a.max_norm, norm_type = a.norm_type, scale_grad_by_freq = a.scale_grad_by_freq,
    sparse = a.sparse })
end

------------------------------------------------------------------------------
-- PixelShuffle / PixelUnshuffle / Upsample
------------------------------------------------------------------------------
local PixelShuffle = Module:extend("PixelShuffle")
L.PixelShuffle = PixelShuffle
local PIXELSHUFFLE = signature("nn.PixelShuffle", "upscale_factor")
function PixelShuffle:__init(...)
  local r = PIXELSHUFFLE(...).upscale_factor
  check_int("PixelShuffle", "upscale_factor", r); self.upscale_factor = r
end
function PixelShuffle:forward(x) check_input("PixelShuffle", x); return F.pixel_shuffle(x, self.upscale_factor) end
function PixelShuffle:extra_repr() return "upscale_factor=" .. self.upscale_factor end

local PixelUnshuffle = Module:extend("PixelUnshuffle")
L.PixelUnshuffle = PixelUnshuffle
local PIXELUNSHUFFLE = signature("nn.PixelUnshuffle", "downscale_factor")
function PixelUnshuffle:__init(...)
  local r = PIXELUNSHUFFLE(...).downscale_factor
  check_int("PixelUnshuffle", "downscale_factor", r); self.downscale_factor = r
end
function PixelUnshuffle:forward(x) check_input("PixelUnshuffle", x); return F.pixel_unshuffle(x, self.downscale_factor) end
function PixelUnshuffle:extra_repr() return "downscale_factor=" .. self.downscale_factor end

-- Upsample(size=nil, scale_factor=nil, mode="nearest", align_corners=nil,
-- recompute_scale_factor=nil); a size or scale_factor may be a list ({4, 6})
local Upsample = Module:extend("Upsample")
L.Upsample = Upsample
local UPSAMPLE = signature("nn.Upsample", "size=nil, scale_factor=nil, mode='nearest', align_corners=nil, " ..
  "recompute_scale_factor=nil")
function Upsample:__init(...)
  local a = UPSAMPLE(...)
  self.size, self.scale_factor, self.mode, self.align_corners = a.size, a.scale_factor, a.mode, a.align_corners
  self.recompute_scale_factor = a.recompute_scale_factor
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
local UPSAMPLINGNEAREST2D = signature("nn.UpsamplingNearest2d", "size=nil, scale_factor=nil")
function UpsamplingNearest2d:__init(...)
  local a = UPSAMPLINGNEAREST2D(...)
  Upsample.__init(self, a.size, a.scale_factor, "nearest")
end
local UpsamplingBilinear2d = Upsample:extend("UpsamplingBilinear2d")
L.UpsamplingBilinear2d = UpsamplingBilinear2d
local UPSAMPLINGBILINEAR2D = signature("nn.UpsamplingBilinear2d", "size=nil, scale_factor=nil")
function UpsamplingBilinear2d:__init(...)
  local a = UPSAMPLINGBILINEAR2D(...)
  Upsample.__init(self, a.size, a.scale_factor, "bilinear", true)
end

------------------------------------------------------------------------------
-- distances
------------------------------------------------------------------------------
local CosineSimilarity = Module:extend("CosineSimilarity")
L.CosineSimilarity = CosineSimilarity
local COSINESIMILARITY = signature("nn.CosineSimilarity", "dim=2, eps=1e-8")
function CosineSimilarity:__init(...)
  local a = COSINESIMILARITY(...)
  self.dim, self.eps = a.dim, a.eps
end
function CosineSimilarity:forward(a, b) return F.cosine_similarity(a, b, self.dim, self.eps) end

local PairwiseDistance = Module:extend("PairwiseDistance")
L.PairwiseDistance = PairwiseDistance
local PAIRWISEDISTANCE = signature("nn.PairwiseDistance", "p=2.0, eps=1e-6, keepdim=false")
function PairwiseDistance:__init(...)
  local a = PAIRWISEDISTANCE(...)
  self.norm, self.eps, self.keepdim = a.p, a.eps, a.keepdim
end
function PairwiseDistance:forward(a, b) return F.pairwise_distance(a, b, self.norm, self.eps, self.keepdim) end

return L
