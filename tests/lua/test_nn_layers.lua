-- Every layer's output, input gradient and parameter gradients against PyTorch's, with the
-- same weights (sent from lutorch). One Python run checks all cases; a case whose C op is
-- not in this build yet is skipped and says so.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local P = require "pyref"
local nn = require "nn"
local F = nn.functional

torch.manual_seed(3)
local f64 = { dtype = torch.float64 }
local function randn(...) return torch.randn({ ... }, f64) end

-- name, Lua constructor, PyTorch constructor, input(s), ops it needs, mode
--   x: input tensor; x2: a second input (or a target); index = true: x (or x2 with index2)
--   holds 1-based indices, sent to PyTorch minus 1
local cases = {
  { "Linear", function() return nn.Linear(4, 3) end, "nn.Linear(4, 3)", x = randn(5, 4) },
  { "Linear no bias, 3-D input", function() return nn.Linear(4, 2, { bias = false }) end, "nn.Linear(4, 2, bias=False)", x = randn(2, 3, 4) },
  { "Bilinear", function() return nn.Bilinear(3, 2, 4) end, "nn.Bilinear(3, 2, 4)", x = randn(5, 3), x2 = randn(5, 2) },
  { "Identity", function() return nn.Identity() end, "nn.Identity()", x = randn(2, 3) },
  { "Flatten", function() return nn.Flatten() end, "nn.Flatten()", x = randn(2, 3, 4) },
  { "Unflatten", function() return nn.Unflatten(2, { 2, 3 }) end, "nn.Unflatten(1, (2, 3))", x = randn(4, 6) },
  { "Conv1d", function() return nn.Conv1d(2, 4, 3, { stride = 2, padding = 1 }) end, "nn.Conv1d(2, 4, 3, stride=2, padding=1)",
    x = randn(2, 2, 9), needs = { "conv1d" } },
  { "Conv2d", function() return nn.Conv2d(3, 4, 3, { padding = 1 }) end, "nn.Conv2d(3, 4, 3, padding=1)",
    x = randn(2, 3, 6, 5), needs = { "conv2d" } },
  { "Conv2d groups, dilation, stride, no bias", function() return nn.Conv2d(4, 6, { 3, 2 }, { stride = { 2, 1 }, dilation = 2, groups = 2, bias = false }) end,
    "nn.Conv2d(4, 6, (3, 2), stride=(2, 1), dilation=2, groups=2, bias=False)", x = randn(2, 4, 9, 7), needs = { "conv2d" } },
  { "Conv2d padding same", function() return nn.Conv2d(2, 3, 4, { padding = "same" }) end, "nn.Conv2d(2, 3, 4, padding='same')",
    x = randn(1, 2, 7, 6), needs = { "conv2d" } },
  { "ConvTranspose2d", function() return nn.ConvTranspose2d(4, 2, 3, { stride = 2, padding = 1, output_padding = 1 }) end,
    "nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)", x = randn(2, 4, 3, 5), needs = { "conv_transpose2d" } },
  { "MaxPool1d", function() return nn.MaxPool1d(3, 2) end, "nn.MaxPool1d(3, 2)", x = randn(2, 3, 9), needs = { "max_pool1d" } },
  { "MaxPool2d", function() return nn.MaxPool2d(3, 2, 1) end, "nn.MaxPool2d(3, 2, 1)", x = randn(2, 3, 7, 6), needs = { "max_pool2d" } },
  { "MaxPool2d ceil_mode", function() return nn.MaxPool2d(2, { ceil_mode = true }) end, "nn.MaxPool2d(2, ceil_mode=True)",
    x = randn(1, 2, 5, 5), needs = { "max_pool2d" } },
  { "AvgPool1d", function() return nn.AvgPool1d(3, 2) end, "nn.AvgPool1d(3, 2)", x = randn(2, 3, 9), needs = { "avg_pool1d" } },
  { "AvgPool2d", function() return nn.AvgPool2d(2) end, "nn.AvgPool2d(2)", x = randn(2, 3, 6, 4), needs = { "avg_pool2d" } },
  { "AvgPool2d padding, count_include_pad=false", function() return nn.AvgPool2d(3, { stride = 2, padding = 1, count_include_pad = false }) end,
    "nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)", x = randn(1, 2, 7, 6), needs = { "avg_pool2d" } },
  { "AdaptiveAvgPool2d", function() return nn.AdaptiveAvgPool2d({ 2, 3 }) end, "nn.AdaptiveAvgPool2d((2, 3))",
    x = randn(2, 3, 7, 8), needs = { "adaptive_avg_pool2d" } },
  { "AdaptiveMaxPool2d", function() return nn.AdaptiveMaxPool2d(2) end, "nn.AdaptiveMaxPool2d(2)",
    x = randn(2, 3, 5, 7), needs = { "adaptive_max_pool2d" } },
  { "BatchNorm1d train", function() return nn.BatchNorm1d(4) end, "nn.BatchNorm1d(4)", x = randn(6, 4), train = true,
    buffers = true },
  { "BatchNorm1d 3-D train, momentum 0.3", function() return nn.BatchNorm1d(3, { momentum = 0.3 }) end, "nn.BatchNorm1d(3, momentum=0.3)",
    x = randn(4, 3, 5), train = true, buffers = true },
  { "BatchNorm1d cumulative average (momentum=false)", function() return nn.BatchNorm1d(4, { momentum = false }) end,
    "nn.BatchNorm1d(4, momentum=None)", x = randn(6, 4), train = true, buffers = true },
  { "BatchNorm1d without running stats, eval", function() return nn.BatchNorm1d(4, { track_running_stats = false }) end,
    "nn.BatchNorm1d(4, track_running_stats=False)", x = randn(6, 4) },
  { "BatchNorm1d eval", function()
      local m = nn.BatchNorm1d(4)
      m.running_mean:copy_(torch.randn(4)); m.running_var:copy_(torch.rand(4) + 0.5)
      torch.no_grad(function() m.weight:copy_(torch.randn(4)); m.bias:copy_(torch.randn(4)) end)
      return m
    end, "nn.BatchNorm1d(4)", x = randn(6, 4) },
  { "BatchNorm2d train", function() return nn.BatchNorm2d(3) end, "nn.BatchNorm2d(3)", x = randn(2, 3, 4, 5), train = true,
    buffers = true },
  { "BatchNorm2d no affine", function() return nn.BatchNorm2d(3, { affine = false }) end, "nn.BatchNorm2d(3, affine=False)",
    x = randn(2, 3, 4, 5), train = true, buffers = true },
  { "LayerNorm", function()
      local m = nn.LayerNorm(5)
      torch.no_grad(function() m.weight:copy_(torch.randn(5)); m.bias:copy_(torch.randn(5)) end)
      return m
    end, "nn.LayerNorm(5)", x = randn(3, 5) },
  { "LayerNorm 2 dims", function() return nn.LayerNorm({ 2, 3 }) end, "nn.LayerNorm((2, 3))", x = randn(4, 2, 3) },
  { "GroupNorm", function()
      local m = nn.GroupNorm(2, 4)
      torch.no_grad(function() m.weight:copy_(torch.randn(4)); m.bias:copy_(torch.randn(4)) end)
      return m
    end, "nn.GroupNorm(2, 4)", x = randn(3, 4, 5) },
  { "Embedding padding_idx", function() return nn.Embedding(10, 3, { padding_idx = 2 }) end, "nn.Embedding(10, 3, padding_idx=1)",
    x = torch.tensor({ { 1, 2, 5 }, { 10, 2, 2 } }), index = true },
  { "PixelShuffle", function() return nn.PixelShuffle(2) end, "nn.PixelShuffle(2)", x = randn(2, 8, 3, 2), needs = { "pixel_shuffle" } },
  { "PixelUnshuffle", function() return nn.PixelUnshuffle(2) end, "nn.PixelUnshuffle(2)", x = randn(2, 2, 4, 6), needs = { "pixel_unshuffle" } },
  { "Upsample nearest", function() return nn.Upsample({ scale_factor = 2 }) end, "nn.Upsample(scale_factor=2)", x = randn(1, 2, 3, 4),
    needs = { "upsample_nearest2d" } },
  { "Upsample nearest size", function() return nn.Upsample({ size = { 5, 7 } }) end, "nn.Upsample(size=(5, 7))", x = randn(1, 2, 3, 4),
    needs = { "upsample_nearest2d" } },
  { "Upsample bilinear", function() return nn.Upsample({ size = { 5, 7 }, mode = "bilinear" }) end,
    "nn.Upsample(size=(5, 7), mode='bilinear')", x = randn(1, 2, 3, 4), needs = { "upsample_bilinear2d" } },
  { "UpsamplingBilinear2d", function() return nn.UpsamplingBilinear2d({ scale_factor = 2 }) end,
    "nn.UpsamplingBilinear2d(scale_factor=2)", x = randn(1, 2, 3, 4), needs = { "upsample_bilinear2d" } },
  -- activations
  { "ReLU", function() return nn.ReLU() end, "nn.ReLU()", x = randn(3, 4) },
  { "ReLU6", function() return nn.ReLU6() end, "nn.ReLU6()", x = randn(3, 4) * 4 },
  { "LeakyReLU", function() return nn.LeakyReLU(0.2) end, "nn.LeakyReLU(0.2)", x = randn(3, 4) },
  { "ELU", function() return nn.ELU(0.7) end, "nn.ELU(0.7)", x = randn(3, 4) },
  { "SELU", function() return nn.SELU() end, "nn.SELU()", x = randn(3, 4) },
  { "CELU", function() return nn.CELU(0.5) end, "nn.CELU(0.5)", x = randn(3, 4) },
  { "GELU", function() return nn.GELU() end, "nn.GELU()", x = randn(3, 4) },
  { "GELU tanh", function() return nn.GELU("tanh") end, "nn.GELU('tanh')", x = randn(3, 4) },
  { "SiLU", function() return nn.SiLU() end, "nn.SiLU()", x = randn(3, 4) },
  { "Mish", function() return nn.Mish() end, "nn.Mish()", x = randn(3, 4) },
  { "Softplus", function() return nn.Softplus(2, 3) end, "nn.Softplus(2, 3)", x = randn(3, 4) * 2 },
  { "PReLU", function() return nn.PReLU() end, "nn.PReLU()", x = randn(3, 4) },
  { "PReLU per channel", function()
      local m = nn.PReLU(3)
      torch.no_grad(function() m.weight:copy_(torch.tensor({ 0.1, 0.5, -0.3 })) end)
      return m
    end, "nn.PReLU(3)", x = randn(2, 3, 4) },
  { "Hardtanh", function() return nn.Hardtanh(-0.5, 0.8) end, "nn.Hardtanh(-0.5, 0.8)", x = randn(3, 4) },
  { "Hardsigmoid", function() return nn.Hardsigmoid() end, "nn.Hardsigmoid()", x = randn(3, 4) * 4, tol = 1e-7 },  -- PyTorch's grad uses a float 1/6
  { "Hardswish", function() return nn.Hardswish() end, "nn.Hardswish()", x = randn(3, 4) * 4, tol = 1e-7 },
  { "Softsign", function() return nn.Softsign() end, "nn.Softsign()", x = randn(3, 4) },
  { "LogSigmoid", function() return nn.LogSigmoid() end, "nn.LogSigmoid()", x = randn(3, 4) },
  { "Sigmoid", function() return nn.Sigmoid() end, "nn.Sigmoid()", x = randn(3, 4) },
  { "Tanh", function() return nn.Tanh() end, "nn.Tanh()", x = randn(3, 4) },
  { "Tanhshrink", function() return nn.Tanhshrink() end, "nn.Tanhshrink()", x = randn(3, 4) },
  { "Softmax", function() return nn.Softmax(2) end, "nn.Softmax(1)", x = randn(3, 4, 2) },
  { "LogSoftmax", function() return nn.LogSoftmax(-1) end, "nn.LogSoftmax(-1)", x = randn(3, 4) },
  { "Softmin", function() return nn.Softmin(1) end, "nn.Softmin(0)", x = randn(3, 4) },
  { "GLU", function() return nn.GLU() end, "nn.GLU()", x = randn(3, 4) },
  { "GLU dim 1", function() return nn.GLU(1) end, "nn.GLU(0)", x = randn(4, 3) },
  { "Threshold", function() return nn.Threshold(0.1, 20) end, "nn.Threshold(0.1, 20)", x = randn(3, 4) },
  { "Hardshrink", function() return nn.Hardshrink() end, "nn.Hardshrink()", x = randn(3, 4), needs = { "hardshrink" } },
  { "Softshrink", function() return nn.Softshrink(0.3) end, "nn.Softshrink(0.3)", x = randn(3, 4), needs = { "softshrink" } },
  { "RReLU eval", function() return nn.RReLU() end, "nn.RReLU()", x = randn(3, 4), needs = { "rrelu" } },
  -- losses: x is the input, x2 the target
  { "MSELoss", function() return nn.MSELoss() end, "nn.MSELoss()", x = randn(3, 4), x2 = randn(3, 4) },
  { "MSELoss sum", function() return nn.MSELoss({ reduction = "sum" }) end, "nn.MSELoss(reduction='sum')", x = randn(3, 4), x2 = randn(3, 4) },
  { "L1Loss none", function() return nn.L1Loss({ reduction = "none" }) end, "nn.L1Loss(reduction='none')", x = randn(3, 4), x2 = randn(3, 4) },
  { "SmoothL1Loss", function() return nn.SmoothL1Loss({ beta = 0.5 }) end, "nn.SmoothL1Loss(beta=0.5)", x = randn(3, 4), x2 = randn(3, 4) },
  { "HuberLoss", function() return nn.HuberLoss({ delta = 0.7 }) end, "nn.HuberLoss(delta=0.7)", x = randn(3, 4), x2 = randn(3, 4) },
  { "CrossEntropyLoss", function() return nn.CrossEntropyLoss() end, "nn.CrossEntropyLoss()", x = randn(5, 4),
    x2 = torch.tensor({ 1, 4, 2, 2, 3 }), index2 = true },
  { "CrossEntropyLoss weight, label_smoothing", function()
      return nn.CrossEntropyLoss({ weight = torch.tensor({ 1, 2, 0.5, 1 }, f64), label_smoothing = 0.1 })
    end, "nn.CrossEntropyLoss(weight=torch.ones(4), label_smoothing=0.1)", x = randn(5, 4),
    x2 = torch.tensor({ 1, 4, 2, 2, 3 }), index2 = true, needs = { "cross_entropy" } },
  { "CrossEntropyLoss probabilities", function() return nn.CrossEntropyLoss() end, "nn.CrossEntropyLoss()", x = randn(3, 4),
    x2 = torch.softmax and torch.softmax(randn(3, 4), 2) or randn(3, 4):exp(), needs = { "cross_entropy", "softmax" } },
  { "CrossEntropyLoss [N, C, d]", function() return nn.CrossEntropyLoss() end, "nn.CrossEntropyLoss()", x = randn(2, 3, 4),
    x2 = torch.tensor({ { 1, 2, 3, 3 }, { 2, 2, 1, 3 } }), index2 = true, needs = { "cross_entropy" } },
  { "NLLLoss ignore_index", function() return nn.NLLLoss({ ignore_index = 2 }) end, "nn.NLLLoss(ignore_index=1)", x = randn(5, 3),
    x2 = torch.tensor({ 1, 2, 3, 2, 3 }), index2 = true },
  { "BCELoss", function() return nn.BCELoss() end, "nn.BCELoss()", x = torch.rand(3, 4, f64) * 0.9 + 0.05,
    x2 = torch.rand(3, 4, f64) },
  { "BCEWithLogitsLoss pos_weight", function() return nn.BCEWithLogitsLoss({ pos_weight = torch.tensor({ 1, 2, 3, 0.5 }, f64) }) end,
    "nn.BCEWithLogitsLoss(pos_weight=torch.ones(4))", x = randn(3, 4), x2 = torch.rand(3, 4, f64) },
  { "KLDivLoss batchmean", function() return nn.KLDivLoss({ reduction = "batchmean" }) end, "nn.KLDivLoss(reduction='batchmean')",
    x = randn(3, 4), x2 = torch.rand(3, 4, f64) },
  { "KLDivLoss log_target", function() return nn.KLDivLoss({ log_target = true }) end, "nn.KLDivLoss(log_target=True)",
    x = randn(3, 4), x2 = randn(3, 4) },
}


-- functional forms: {a}, {b}, ... in the Python expression are the inputs a, b, ...
local ri = function(...) return torch.randint(1, 4, { ... }) end
local fcases = {
  { "F.pad constant", needs = { "pad" }, a = randn(1, 2, 3, 4),
    lua = function(a) return F.pad(a, { 1, 2, 0, 1 }, "constant", 0.5) end, py = "F.pad({a}, (1, 2, 0, 1), value=0.5)" },
  { "F.pad reflect", needs = { "pad" }, a = randn(1, 2, 4, 5),
    lua = function(a) return F.pad(a, { 1, 2, 2, 1 }, { mode = "reflect" }) end, py = "F.pad({a}, (1, 2, 2, 1), mode='reflect')" },
  { "F.pad replicate", needs = { "pad" }, a = randn(1, 2, 4, 5),
    lua = function(a) return F.pad(a, { 2, 0, 1, 3 }, "replicate") end, py = "F.pad({a}, (2, 0, 1, 3), mode='replicate')" },
  { "F.interpolate bilinear align_corners", needs = { "upsample_bilinear2d" }, a = randn(1, 2, 3, 4),
    lua = function(a) return F.interpolate(a, { size = { 6, 5 }, mode = "bilinear", align_corners = true }) end,
    py = "F.interpolate({a}, size=(6, 5), mode='bilinear', align_corners=True)" },
  { "F.interpolate nearest scale 3", needs = { "upsample_nearest2d" }, a = randn(1, 2, 3, 4),
    lua = function(a) return F.interpolate(a, nil, 3) end, py = "F.interpolate({a}, scale_factor=3)" },
  { "F.one_hot", needs = { "one_hot" }, a = torch.tensor({ 3, 1, 2 }), nograd = true,
    lua = function(a) return F.one_hot(a, 4):double() end, py = "F.one_hot({a} - 1, 4)" },
  { "F.normalize", a = randn(3, 4), lua = function(a) return F.normalize(a) end, py = "F.normalize({a})" },
  { "F.normalize p=1 dim 1", a = randn(3, 4), lua = function(a) return F.normalize(a, 1, 1) end, py = "F.normalize({a}, 1, 0)" },
  { "F.cosine_similarity", needs = { "cosine_similarity" }, a = randn(3, 4), b = randn(3, 4),
    lua = function(a, b) return F.cosine_similarity(a, b) end, py = "F.cosine_similarity({a}, {b})" },
  { "F.pairwise_distance", needs = { "pairwise_distance" }, a = randn(3, 4), b = randn(3, 4),
    lua = function(a, b) return F.pairwise_distance(a, b, 3) end, py = "F.pairwise_distance({a}, {b}, 3)" },
  { "F.scaled_dot_product_attention causal", needs = { "scaled_dot_product_attention" },
    a = randn(2, 3, 4), b = randn(2, 3, 4), c = randn(2, 3, 4),
    lua = function(a, b, c) return F.scaled_dot_product_attention(a, b, c, { is_causal = true }) end,
    py = "torch.softmax(({a} @ {b}.transpose(-2, -1) / 2.0).masked_fill(torch.ones(3, 3).triu(1).bool(), float('-inf')), -1) @ {c}" },
  { "F.linear 1-D input", a = randn(4), b = randn(3, 4), c = randn(3),
    lua = function(a, b, c) return F.linear(a, b, c) end, py = "F.linear({a}, {b}, {c})" },
  { "F.bilinear", a = randn(2, 3), b = randn(2, 2), c = randn(4, 3, 2),
    lua = function(a, b, c) return F.bilinear(a, b, c) end, py = "F.bilinear({a}, {b}, {c})" },
  { "F.softmax dim 1", a = randn(3, 4), lua = function(a) return F.softmax(a, 1) end, py = "F.softmax({a}, 0)" },
  { "F.log_softmax {dim=}", a = randn(3, 4), lua = function(a) return F.log_softmax(a, { dim = 2 }) end, py = "F.log_softmax({a}, 1)" },
  { "F.gelu tanh", a = randn(3, 4), lua = function(a) return F.gelu(a, { approximate = "tanh" }) end, py = "F.gelu({a}, approximate='tanh')" },
  { "F.glu", a = randn(3, 4), lua = function(a) return F.glu(a) end, py = "F.glu({a})" },
  { "F.max_pool2d indices (1-based)", needs = { "max_pool2d_with_indices" }, a = randn(1, 2, 4, 4), nograd = true,
    lua = function(a) local _, i = F.max_pool2d(a, 2, { return_indices = true }); return (i - 1):double() end,
    py = "F.max_pool2d({a}, 2, return_indices=True)[1]" },
  { "F.adaptive_avg_pool2d uneven", needs = { "adaptive_avg_pool2d" }, a = randn(1, 2, 5, 7),
    lua = function(a) return F.adaptive_avg_pool2d(a, { 3, 4 }) end, py = "F.adaptive_avg_pool2d({a}, (3, 4))" },
  { "F.nll_loss weight sum", a = randn(4, 3), b = torch.tensor({ 1, 3, 3, 2 }), c = torch.tensor({ 0.5, 1, 2 }, f64), const = "c",
    lua = function(a, b, c) return F.nll_loss(a, b, c, { reduction = "sum" }) end, py = "F.nll_loss({a}, {b} - 1, {c}, reduction='sum')" },
  { "F.nll_loss weight mean", a = randn(4, 3), b = torch.tensor({ 1, 3, 3, 2 }), c = torch.tensor({ 0.5, 1, 2 }, f64), const = "c",
    lua = function(a, b, c) return F.nll_loss(a, b, c) end, py = "F.nll_loss({a}, {b} - 1, {c})" },
  { "F.cross_entropy ignore_index", a = randn(4, 3), b = torch.tensor({ 1, 3, 3, 2 }),
    lua = function(a, b) return F.cross_entropy(a, b, { ignore_index = 3 }) end, py = "F.cross_entropy({a}, {b} - 1, ignore_index=2)" },
  { "F.cross_entropy unbatched", needs = { "cross_entropy" }, a = randn(5), b = torch.tensor(2),
    lua = function(a, b) return F.cross_entropy(a, b) end, py = "F.cross_entropy({a}, {b} - 1)" },
  { "F.binary_cross_entropy weight", a = torch.rand(3, 4, f64) * 0.9 + 0.05, b = torch.rand(3, 4, f64), c = torch.rand(4, f64), const = "c",
    lua = function(a, b, c) return F.binary_cross_entropy(a, b, c) end, py = "F.binary_cross_entropy({a}, {b}, {c})" },
  { "F.binary_cross_entropy_with_logits weight sum", a = randn(3, 4), b = torch.rand(3, 4, f64), c = torch.rand(4, f64), const = "c",
    lua = function(a, b, c) return F.binary_cross_entropy_with_logits(a, b, c, { reduction = "sum" }) end,
    py = "F.binary_cross_entropy_with_logits({a}, {b}, {c}, reduction='sum')" },
  { "F.kl_div sum", a = randn(3, 4), b = torch.rand(3, 4, f64),
    lua = function(a, b) return F.kl_div(a, b, { reduction = "sum" }) end, py = "F.kl_div({a}, {b}, reduction='sum')" },
  { "F.smooth_l1_loss beta 0", a = randn(3, 4), b = randn(3, 4),
    lua = function(a, b) return F.smooth_l1_loss(a, b, { beta = 0 }) end, py = "F.smooth_l1_loss({a}, {b}, beta=0.0)" },
  { "F.cosine_embedding_loss", a = randn(4, 3), b = randn(4, 3), c = torch.tensor({ 1, -1, 1, -1 }, f64), const = "c",
    lua = function(a, b, c) return F.cosine_embedding_loss(a, b, c, { margin = 0.2 }) end,
    py = "F.cosine_embedding_loss({a}, {b}, {c}, margin=0.2)" },
  { "F.margin_ranking_loss", a = randn(5), b = randn(5), c = torch.tensor({ 1, -1, 1, -1, 1 }, f64), const = "c",
    lua = function(a, b, c) return F.margin_ranking_loss(a, b, c, { margin = 0.1 }) end,
    py = "F.margin_ranking_loss({a}, {b}, {c}, margin=0.1)" },
  { "F.triplet_margin_loss", needs = { "pairwise_distance" }, a = randn(4, 3), b = randn(4, 3), c = randn(4, 3),
    lua = function(a, b, c) return F.triplet_margin_loss(a, b, c) end, py = "F.triplet_margin_loss({a}, {b}, {c})" },
  { "F.soft_margin_loss", a = randn(5), b = torch.tensor({ 1, -1, 1, -1, 1 }, f64), const = "b",
    lua = function(a, b) return F.soft_margin_loss(a, b) end, py = "F.soft_margin_loss({a}, {b})" },
  { "F.hinge_embedding_loss", a = randn(5), b = torch.tensor({ 1, -1, 1, -1, 1 }, f64), const = "b",
    lua = function(a, b) return F.hinge_embedding_loss(a, b) end, py = "F.hinge_embedding_loss({a}, {b})" },
  { "F.poisson_nll_loss", a = randn(5), b = torch.rand(5, f64) * 3,
    lua = function(a, b) return F.poisson_nll_loss(a, b) end, py = "F.poisson_nll_loss({a}, {b})" },
  { "F.gaussian_nll_loss", a = randn(5), b = randn(5), c = torch.rand(5, f64) + 0.1,
    lua = function(a, b, c) return F.gaussian_nll_loss(a, b, c) end, py = "F.gaussian_nll_loss({a}, {b}, {c})" },
}

local function missing_ops(c)
  for _, op in ipairs(c.needs or {}) do
    if torch[op] == nil then return op end
  end
  return nil
end

if not P.available() then
  T.skip("layers against PyTorch", P.why())
else
  local inputs, body, outputs, checks = {}, {}, {}, {}
  for i, c in ipairs(cases) do
    local name, mk, pyctor = c[1], c[2], c[3]
    local miss = missing_ops(c)
    if miss then
      T.skip(name .. " against PyTorch", "torch." .. miss .. " is not in this build yet")
    else
      local m = mk():double()
      if c.train then m:train() else m:eval() end
      local sd = m:state_dict()
      local sd_py = {}
      for _, k in ipairs(nn.utils.keys(sd)) do
        local v = "s" .. i .. "_" .. k:gsub("%.", "_")
        inputs[v] = sd[k]:clone()   -- before forward updates running stats in place
        sd_py[#sd_py + 1] = ("'%s': %s"):format(k, v)
      end
      local x = c.x
      if x:is_floating_point() then x = x:detach():clone():requires_grad_(true) end
      local xs = "x" .. i
      inputs[xs] = x
      local pyx = c.index and (xs .. " - 1") or xs
      local args = pyx
      local x2 = c.x2
      if x2 ~= nil then
        inputs["t" .. i] = x2
        args = args .. ", " .. (c.index2 and ("t" .. i .. " - 1") or ("t" .. i))
      end
      -- lutorch side
      local ok, y = pcall(function()
        if x2 ~= nil then return m(x, x2) end
        return m(x)
      end)
      if not ok then
        checks[#checks + 1] = { name = name, err = y }
      else
        local g = torch.randn(y.shape, f64)
        inputs["g" .. i] = g
        ;(y * g):sum():backward()
        local mp = "m" .. i
        body[#body + 1] = ("%s = %s.double()\n%s.load_state_dict({%s})\n%s.train(%s)\ny%d = %s(%s)\n(y%d * g%d).sum().backward()")
          :format(mp, pyctor, mp, table.concat(sd_py, ", "), mp, c.train and "True" or "False", i, mp, args, i, i)
        local chk = { name = name, got = {}, what = {}, tol = c.tol or 1e-9 }
        local function expect(expr, t, what)
          outputs[#outputs + 1] = expr
          chk.got[#chk.got + 1] = t
          chk.what[#chk.what + 1] = what
        end
        expect("y" .. i, y:detach(), "output")
        if x.requires_grad then expect(xs .. ".grad", x.grad, "input grad") end
        for pname, p in m:named_parameters() do
          expect(("%s.get_parameter('%s').grad"):format(mp, pname), p.grad, pname .. " grad")
        end
        if c.buffers then
          for bname, b in m:named_buffers() do
            expect(("%s.get_buffer('%s')"):format(mp, bname), b, "buffer " .. bname)
          end
        end
        checks[#checks + 1] = chk
      end
    end
  end
  for i, c in ipairs(fcases) do
    local name = c[1]
    local miss = missing_ops(c)
    if miss then
      T.skip(name .. " against PyTorch", "torch." .. miss .. " is not in this build yet")
    else
      local args, py = {}, c.py
      for j, key in ipairs({ "a", "b", "c" }) do
        local v = c[key]
        if v ~= nil then
          if v:is_floating_point() and not c.nograd and not (c.const or ""):find(key, 1, true) then v = v:detach():clone():requires_grad_(true) end
          local vn = ("f%d_%s"):format(i, key)
          inputs[vn] = v
          args[j] = v
          py = py:gsub("{" .. key .. "}", vn)
        end
      end
      local ok, y = pcall(c.lua, table.unpack(args))
      if not ok then
        checks[#checks + 1] = { name = name, err = y }
      else
        local chk = { name = name, got = { y:detach() }, what = { "output" }, tol = c.tol or 1e-9 }
        outputs[#outputs + 1] = "fy" .. i
        body[#body + 1] = ("fy%d = %s"):format(i, py)
        if y.requires_grad then
          local g = torch.randn(y.shape, f64)
          inputs["fg" .. i] = g
          ;(y * g):sum():backward()
          body[#body + 1] = ("(fy%d * fg%d).sum().backward()"):format(i, i)
          for j, key in ipairs({ "a", "b", "c" }) do
            local v = args[j]
            if v ~= nil and v.requires_grad then
              outputs[#outputs + 1] = ("f%d_%s.grad"):format(i, key)
              chk.got[#chk.got + 1] = v.grad
              chk.what[#chk.what + 1] = key .. " grad"
            end
          end
        end
        checks[#checks + 1] = chk
      end
    end
  end
  local r = P.run(inputs, "import warnings\nwarnings.simplefilter('ignore')\n" .. table.concat(body, "\n"), outputs)
  local k = 0
  for _, chk in ipairs(checks) do
    T.test(chk.name .. " against PyTorch", function()
      if chk.err then error(chk.err, 0) end
      for j, got in ipairs(chk.got) do
        local want = r[k + j]
        T.ok(got ~= nil, chk.what[j] .. " is nil")
        T.tensor(got:to(torch.float64), want:totable(), { tol = chk.tol, shape = want.shape })
      end
    end)
    k = k + (chk.got and #chk.got or 0)
  end
end

T.test("float32 Linear + LogSoftmax against float64", function()
  local m = nn.Sequential(nn.Linear(6, 4), nn.LogSoftmax(2))
  local x = torch.randn(3, 6)
  local y32 = m(x)
  local y64 = m:double()(x:double())
  T.eq(y32.dtype.name, "float32")
  T.tensor(y32:double(), y64:totable(), { tol = 1e-5 })
end)

T.test("Dropout: identity in eval, scaled mask in training", function()
  local d = nn.Dropout(0.25)
  local x = torch.ones(2000)
  d:eval()
  T.ok(rawequal(d(x), x) or d(x):equal(x))
  d:train()
  local y = d(x)
  local vals = y:unique():totable()
  for _, v in ipairs(vals) do T.ok(v == 0 or math.abs(v - 1 / 0.75) < 1e-6, "value " .. v) end
  T.near(y:eq(0):double():mean():item(), 0.25, 0.05)
  T.raises(function() nn.Dropout(1.5) end, "Dropout: dropout probability has to be between 0 and 1, but got 1.5")
  if torch.feature_dropout then
    local d2 = nn.Dropout2d(0.5)
    local z = d2(torch.ones(4, 8, 3, 3))
    -- whole channels are zero or scaled
    local per = z:sum({ 3, 4 })
    for _, v in ipairs(per:view(-1):totable()) do T.ok(v == 0 or math.abs(v - 18) < 1e-5) end
  else
    T.skip("Dropout2d", "torch.feature_dropout is not in this build yet")
  end
end)

T.test("Embedding: padding row, from_pretrained, errors", function()
  local e = nn.Embedding(5, 2, { padding_idx = 1 })
  T.tensor(e.weight[1], { 0, 0 })
  local w = torch.arange(10):float():view(5, 2)
  local p = nn.Embedding.from_pretrained(w)
  T.ok(not p.weight.requires_grad)
  T.tensor(p(torch.tensor({ 3, 1 })), { { 4, 5 }, { 0, 1 } })
  T.raises(function() nn.Embedding(5, 2)(torch.ones(2)) end, "Embedding: expected an integer tensor")
  T.raises(function() nn.Embedding(5, 2, { padding_idx = 9 }) end, "padding_idx must be within num_embeddings")
end)

T.test("gradients reach every parameter of a small conv net", function()
  if torch.conv2d == nil or torch.max_pool2d == nil then
    T.skip("conv net gradients", "torch.conv2d / max_pool2d not in this build yet")
    return
  end
  local net = nn.Sequential(nn.Conv2d(1, 4, 3, { padding = 1 }), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
  local loss = F.cross_entropy(net(torch.randn(2, 1, 8, 8)), torch.tensor({ 1, 3 }))
  loss:backward()
  for name, p in net:named_parameters() do
    T.ok(p.grad ~= nil and p.grad:abs():sum():item() > 0, name .. " got a gradient")
  end
end)

T.test("ConvTranspose2d output_size, Embedding max_norm, float32 conv", function()
  if torch.conv_transpose2d == nil or torch.conv2d == nil then
    T.skip("ConvTranspose2d output_size", "torch.conv_transpose2d / conv2d not in this build yet")
  else
    local ct = nn.ConvTranspose2d(3, 2, 3, { stride = 2, padding = 1 })
    local x = torch.randn(1, 3, 4, 6)
    T.eq(ct(x).shape, { 1, 2, 7, 11 })
    T.eq(ct(x, { 8, 12 }).shape, { 1, 2, 8, 12 })
    T.raises(function() ct(x, { 10, 12 }) end, "ConvTranspose2d: requested an output size of (10, 12)")
    local c = nn.Conv2d(2, 3, 3)
    local x32 = torch.randn(2, 2, 5, 5)
    local y32 = c(x32)
    T.eq(y32.dtype.name, "float32")
    c:double()
    T.tensor(y32:double(), c(x32:double()):totable(), { tol = 1e-5 })
  end
  local e = nn.Embedding(6, 4, { max_norm = 1.0 })
  torch.no_grad(function() e.weight:mul_(10) end)
  local y = e(torch.tensor({ 1, 3 }))
  T.ok(y:norm(2, 2):max():item() <= 1.0 + 1e-5)
  T.near(e.weight[1]:norm():item(), 1.0, 1e-4)        -- renormalised in place
  T.ok(e.weight[2]:norm():item() > 1.5)                -- rows not looked up stay
end)

T.test("bad arguments name the layer", function()
  T.raises(function() nn.Linear(4, 3)(torch.randn(2, 5)) end, "Linear: expected input with last dimension 4, got 5")
  T.raises(function() nn.Linear(4.5, 3) end, "Linear: argument 'in_features'")
  T.raises(function() nn.Conv2d(3, 4, 3)(torch.randn(1, 2, 5, 5)) end, "Conv2d: expected input with 3 channels (dim 2), got 2")
  T.raises(function() nn.Conv2d(3, 4, 3)(torch.randn(5, 5)) end, "Conv2d: expected 3-D (unbatched) or 4-D (batched) input")
  T.raises(function() nn.Conv2d(3, 4, 3, { groups = 2 }) end, "Conv2d: in_channels (3) must be divisible by groups (2)")
  T.raises(function() nn.BatchNorm2d(3)(torch.randn(2, 3, 4)) end, "BatchNorm2d: expected 4-D input, got 3-D input")
  T.raises(function() nn.BatchNorm1d(3)(torch.randn(2, 4)) end, "BatchNorm1d: expected input with 3 features (dim 2), got 4")
  T.raises(function() nn.LayerNorm(5)(torch.randn(2, 4)) end, "LayerNorm: expected input with trailing shape (5,)")
  T.raises(function() nn.GroupNorm(3, 4) end, "GroupNorm: num_channels (4) must be divisible by num_groups (3)")
  T.raises(function() nn.Bilinear(3, 2, 4)(torch.randn(2, 3), torch.randn(2, 3)) end, "Bilinear: expected input2 with last dimension 2, got 3")
  T.raises(function() nn.Softmax()(torch.randn(2, 3)) end, "Softmax: no dim was given")
  T.raises(function() nn.MSELoss({ reduction = "avg" }) end, "MSELoss: reduction must be")
  T.raises(function() nn.GELU("fast") end, "GELU: approximate must be")
  T.raises(function() nn.PReLU(3)(torch.randn(2, 4)) end, "PReLU: expected input with 3 channels")
  T.raises(function() F.interpolate(torch.randn(1, 1, 2, 2), { mode = "cubic", scale_factor = 2 }) end, "mode \"cubic\" is not supported")
  T.raises(function() F.interpolate(torch.randn(1, 1, 2, 2), { scale_factor = 0 }) end, "F.interpolate: scale_factor must be positive")
  T.raises(function() F.interpolate(torch.randn(1, 1, 2, 2), { scale_factor = { 2, -1 } }) end, "scale_factor must be positive")
  T.raises(function() F.interpolate(torch.randn(1, 1, 2, 2), { size = 3, recompute_scale_factor = true }) end,
    "recompute_scale_factor is not meaningful")
  T.raises(function() F.softmax(torch.randn(2)) end, "F.softmax: argument 'dim' is required")
end)

T.test("reprs of the layers match PyTorch's", function()
  local want = {
    { nn.Conv2d(3, 8, 3), "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1))" },
    { nn.Conv2d(3, 8, { 3, 5 }, { stride = 2, padding = 1, bias = false, dilation = 2 }),
      "Conv2d(3, 8, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), bias=False)" },
    { nn.Conv1d(2, 4, 3), "Conv1d(2, 4, kernel_size=(3,), stride=(1,))" },
    { nn.ConvTranspose2d(4, 2, 3, { stride = 2, output_padding = 1 }), "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))" },
    { nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)" },
    { nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)" },
    { nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))" },
    { nn.AdaptiveAvgPool2d({ 2, 3 }), "AdaptiveAvgPool2d(output_size=(2, 3))" },
    { nn.BatchNorm1d(4), "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)" },
    { nn.LayerNorm(5), "LayerNorm((5,), eps=1e-05, elementwise_affine=True)" },
    { nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True)" },
    { nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)" },
    { nn.ELU(), "ELU(alpha=1.0)" },
    { nn.GELU(), "GELU(approximate='none')" },
    { nn.Softplus(), "Softplus(beta=1, threshold=20)" },
    { nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)" },
    { nn.ReLU(true), "ReLU(inplace=True)" },
    { nn.PReLU(), "PReLU(num_parameters=1)" },
    { nn.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)" },
    { nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)" },
    { nn.Hardshrink(), "Hardshrink(0.5)" },
    { nn.Dropout(), "Dropout(p=0.5, inplace=False)" },
    { nn.Upsample({ scale_factor = 2 }), "Upsample(scale_factor=2.0, mode=nearest)" },
    { nn.PixelShuffle(2), "PixelShuffle(upscale_factor=2)" },
    { nn.Bilinear(2, 3, 4), "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)" },
    { nn.CrossEntropyLoss(), "CrossEntropyLoss()" },
    { nn.Identity(), "Identity()" },
  }
  for _, w in ipairs(want) do T.eq(tostring(w[1]), w[2]) end
end)

T.done()
