-- t7map.lua — Torch7 nn classes -> lutorch modules, for torch.load_t7. Each builder gets the
-- object's fields as Torch7 wrote them (tensors, numbers, tables; storages as 1-D
-- tensors) and returns a lutorch module with the same weights and settings.
-- Built on first use (torch.load_t7 calls torch._t7map() once per state and keeps the
-- result), so loading the torch module costs nothing for it.
local torch = ...

function torch._t7map()
  local nn_
  local function N()
    if not nn_ then nn_ = require "nn" end
    return nn_
  end

  local function need(f, cls, ...)
    for _, k in ipairs({ ... }) do
      if f[k] == nil then error(("%s has no field '%s'"):format(cls, k), 0) end
    end
  end

  -- copy tensors from the file's fields into the module's parameters / buffers
  local function copy_into(m, f, names)
    torch.no_grad(function()
      for dst, src in pairs(names) do
        local s = f[src]
        if torch.is_tensor(s) and s:numel() > 0 then
          local d = m[dst]
          if d == nil then error(("%s: field '%s' has no place in %s"):format(m:_get_name(), src, m:_get_name()), 0) end
          if s:numel() ~= d:numel() then
            error(("%s: field '%s' has %d elements, the module expects %d"):format(m:_get_name(), src, s:numel(), d:numel()), 0)
          end
          d:copy_(s:reshape(d.shape))
        end
      end
    end)
    return m
  end

  local function finish(m, f)
    if f.train == false then m:eval() end
    return m
  end

  local function dtype_of(f)
    local w = f.weight
    if torch.is_tensor(w) and w:is_floating_point() then return w.dtype end
    return nil
  end

  local function to_dtype(m, f)
    local dt = dtype_of(f)
    if dt and dt ~= torch.float32 then m:to(dt) end
    return m
  end

  local function sizes(s)
    if torch.is_tensor(s) then return s:totable() end
    if type(s) == "table" then return s end
    return { s }
  end

  local function add_children(m, f)
    for _, c in ipairs(f.modules or {}) do m:add(c) end
    return m
  end

  local B = {}

  B["nn.Sequential"] = function(f) return finish(add_children(N().Sequential(), f), f) end
  B["nn.Concat"] = function(f) return finish(add_children(N().Concat(f.dimension), f), f) end
  B["nn.ConcatTable"] = function(f) return finish(add_children(N().ConcatTable(), f), f) end
  B["nn.ParallelTable"] = function(f) return finish(add_children(N().ParallelTable(), f), f) end

  B["nn.Linear"] = function(f)
    need(f, "nn.Linear", "weight")
    local w = f.weight
    local m = N().Linear(w:size(2), w:size(1), { bias = f.bias ~= nil })
    return finish(copy_into(to_dtype(m, f), f, { weight = "weight", bias = "bias" }), f)
  end

  local function conv(cls, f)
    need(f, cls, "nInputPlane", "nOutputPlane", "kW", "kH")
    local padW, padH = f.padW or f.padding or 0, f.padH or f.padding or 0
    local m = N().Conv2d(f.nInputPlane, f.nOutputPlane, { f.kH, f.kW },
      { stride = { f.dH or 1, f.dW or 1 }, padding = { padH, padW }, bias = f.bias ~= nil })
    return finish(copy_into(to_dtype(m, f), f, { weight = "weight", bias = "bias" }), f)
  end
  B["nn.SpatialConvolution"] = function(f) return conv("nn.SpatialConvolution", f) end
  B["nn.SpatialConvolutionMM"] = function(f) return conv("nn.SpatialConvolutionMM", f) end

  B["nn.SpatialFullConvolution"] = function(f)
    need(f, "nn.SpatialFullConvolution", "nInputPlane", "nOutputPlane", "kW", "kH")
    local m = N().ConvTranspose2d(f.nInputPlane, f.nOutputPlane, { f.kH, f.kW },
      { stride = { f.dH or 1, f.dW or 1 }, padding = { f.padH or 0, f.padW or 0 },
        output_padding = { f.adjH or 0, f.adjW or 0 }, bias = f.bias ~= nil })
    return finish(copy_into(to_dtype(m, f), f, { weight = "weight", bias = "bias" }), f)
  end

  local function bn(cls, f)
    local n
    if torch.is_tensor(f.running_mean) then n = f.running_mean:numel()
    elseif torch.is_tensor(f.weight) then n = f.weight:numel()
    else error(cls .. " has neither running_mean nor weight", 0) end
    local affine = f.affine
    if affine == nil then affine = f.weight ~= nil end
    local ctor = cls:find("Spatial", 1, true) and N().BatchNorm2d or N().BatchNorm1d
    local dt = torch.is_tensor(f.running_mean) and f.running_mean.dtype or nil
    local m = ctor(n, f.eps or 1e-5, f.momentum or 0.1, affine)
    if dt and dt ~= torch.float32 then m:to(dt) end
    copy_into(m, f, { weight = "weight", bias = "bias", running_mean = "running_mean", running_var = "running_var" })
    if f.running_var == nil and torch.is_tensor(f.running_std) then
      -- nn before 2016 kept 1/sqrt(var + eps)
      local std = f.running_std
      torch.no_grad(function() m.running_var:copy_(std:pow(-2) - (f.eps or 1e-5)) end)
    end
    return finish(m, f)
  end
  B["nn.BatchNormalization"] = function(f) return bn("nn.BatchNormalization", f) end
  B["nn.SpatialBatchNormalization"] = function(f) return bn("nn.SpatialBatchNormalization", f) end

  B["nn.ReLU"] = function(f) return finish(N().ReLU(f.inplace == true), f) end
  B["nn.Threshold"] = function(f) return finish(N().Threshold(f.threshold or 1e-6, f.val or 0, f.inplace == true), f) end
  B["nn.Tanh"] = function(f) return finish(N().Tanh(), f) end
  B["nn.Sigmoid"] = function(f) return finish(N().Sigmoid(), f) end
  B["nn.LogSoftMax"] = function(f) return finish(N().LogSoftMax(), f) end
  B["nn.SoftMax"] = function(f) return finish(N().SoftMax(), f) end
  B["nn.Identity"] = function(f) return finish(N().Identity(), f) end
  B["nn.LeakyReLU"] = function(f) return finish(N().LeakyReLU(f.negval or 0.01, f.inplace == true), f) end
  B["nn.ELU"] = function(f) return finish(N().ELU(f.alpha or 1, f.inplace == true), f) end
  B["nn.HardTanh"] = function(f) return finish(N().Hardtanh(f.min_val or -1, f.max_val or 1, f.inplace == true), f) end
  B["nn.SoftPlus"] = function(f) return finish(N().Softplus(f.beta or 1, f.threshold or 20), f) end
  B["nn.PReLU"] = function(f)
    local n = f.nOutputPlane
    if n == nil or n == 0 then n = 1 end
    return finish(copy_into(to_dtype(N().PReLU(n), f), f, { weight = "weight" }), f)
  end

  B["nn.View"] = function(f)
    local m = N().View(sizes(f.size))
    if f.numInputDims then m:setNumInputDims(f.numInputDims) end
    return finish(m, f)
  end
  B["nn.Reshape"] = function(f)
    local m = N().Reshape(sizes(f.size))
    m.batchMode = f.batchMode
    return finish(m, f)
  end

  B["nn.SpatialMaxPooling"] = function(f)
    need(f, "nn.SpatialMaxPooling", "kW", "kH")
    local m = N().SpatialMaxPooling(f.kW, f.kH, f.dW, f.dH, f.padW or 0, f.padH or 0)
    if f.ceil_mode then m:ceil() end
    return finish(m, f)
  end
  B["nn.SpatialAveragePooling"] = function(f)
    need(f, "nn.SpatialAveragePooling", "kW", "kH")
    local m = N().SpatialAveragePooling(f.kW, f.kH, f.dW, f.dH, f.padW or 0, f.padH or 0)
    if f.ceil_mode then m.ceil_mode = true end
    if f.count_include_pad == false then m.count_include_pad = false end
    return finish(m, f)
  end

  B["nn.Dropout"] = function(f) return finish(N().Dropout(f.p or 0.5), f) end
  B["nn.SpatialDropout"] = function(f) return finish(N().Dropout2d(f.p or 0.5), f) end

  B["nn.LookupTable"] = function(f)
    need(f, "nn.LookupTable", "weight")
    local w = f.weight
    local m = N().LookupTable(w:size(1), w:size(2))
    return finish(copy_into(to_dtype(m, f), f, { weight = "weight" }), f)
  end

  B["nn.JoinTable"] = function(f) return finish(N().JoinTable(f.dimension, f.nInputDims), f) end
  B["nn.SelectTable"] = function(f) return finish(N().SelectTable(f.index), f) end
  B["nn.SplitTable"] = function(f) return finish(N().SplitTable(f.dimension), f) end
  B["nn.CAddTable"] = function(f) return finish(N().CAddTable(), f) end
  B["nn.CMulTable"] = function(f) return finish(N().CMulTable(), f) end
  B["nn.CSubTable"] = function(f) return finish(N().CSubTable(), f) end
  B["nn.CDivTable"] = function(f) return finish(N().CDivTable(), f) end
  B["nn.MulConstant"] = function(f) return finish(N().MulConstant(f.constant_scalar), f) end
  B["nn.AddConstant"] = function(f) return finish(N().AddConstant(f.constant_scalar), f) end

  B["nn.ClassNLLCriterion"] = function(f) return N().ClassNLLCriterion(f.weights, f.sizeAverage) end
  B["nn.MSECriterion"] = function(f) return N().MSECriterion(f.sizeAverage) end

  -- cudnn's modules keep nn's fields: the same builders serve them (loaded on the CPU)
  for _, k in ipairs({ "SpatialConvolution", "SpatialFullConvolution", "SpatialMaxPooling", "SpatialAveragePooling",
                       "BatchNormalization", "SpatialBatchNormalization", "ReLU", "Tanh", "Sigmoid", "SoftMax",
                       "LogSoftMax" }) do
    B["cudnn." .. k] = B["nn." .. k]
  end

  local M = { classes = {} }
  for k in pairs(B) do M.classes[k] = true end

  function M.build(cls, fields)
    local b = B[cls]
    if not b then error(("class '%s' has no lutorch equivalent"):format(cls), 0) end
    if type(fields) ~= "table" then error(("%s: its fields are a %s, not a table"):format(cls, type(fields)), 0) end
    local ok, m = pcall(b, fields)
    if not ok then error(("cannot rebuild %s: %s"):format(cls, tostring(m)), 0) end
    return m
  end

  return M
end
