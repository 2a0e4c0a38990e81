-- test_port_nn_args.lua — PyTorch's nn and optim calls port as written: every constructor and
-- function of nn (the layers, nn.init, nn.utils, the containers, Torch7's classes) and optim
-- (the optimizers, the schedulers) declares PyTorch's signature, so positional arguments may
-- be given by name in a trailing options table and a misspelt name is an error with a
-- suggestion; layers with parameters take device= and dtype=; Sequential and ModuleList walk
-- with ipairs. Torch7's functional optimizers keep their free config tables, with typos caught.
local T = require "testing"
local class = require "torch_class"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional

local function params() return { torch.zeros(3, { requires_grad = true }) } end

------------------------------------------------------------------------------
-- positional arguments by name
------------------------------------------------------------------------------
T.test("Conv2d: kernel_size and stride by name, or every argument by name", function()
  local c = nn.Conv2d(1, 16, { kernel_size = 3, stride = 2 })
  T.eq(c.weight.shape, { 16, 1, 3, 3 })
  T.eq(c.stride, { 2, 2 })
  local d = nn.Conv2d { in_channels = 2, out_channels = 4, kernel_size = { 3, 5 }, padding = 1, bias = false }
  T.eq(d.weight.shape, { 4, 2, 3, 5 }); T.eq(d.bias, nil); T.eq(d.padding, { 1, 1 })
  T.eq(tostring(nn.Conv1d(1, 2, { kernel_size = 3, dilation = 2 })), "Conv1d(1, 2, kernel_size=(3,), stride=(1,), dilation=(2,))")
  -- ConvTranspose2d's own order: ..., padding, output_padding, groups, bias, dilation
  local t = nn.ConvTranspose2d(2, 4, 3, 2, 1, 1)
  T.eq(t.output_padding, { 1, 1 })
  T.eq(nn.ConvTranspose2d(2, 4, 3, { output_padding = 1, stride = 2 }).output_padding, { 1, 1 })
  T.raises(function() nn.Conv2d(1, 16, 3, { kernel_size = 3 }) end, "nn.Conv2d: argument 'kernel_size' given twice")
  -- ConvTranspose2d's forward(input, output_size=None), by position or by name
  local up = nn.ConvTranspose2d(1, 1, 3, 2, 1)
  local x = torch.zeros(1, 1, 4, 4)
  T.eq(up(x, { 8, 8 }).shape, { 1, 1, 8, 8 })
  T.eq(up(x, { output_size = { 8, 8 } }).shape, { 1, 1, 8, 8 })
  T.raises(function() up(x, { output_sise = { 8, 8 } }) end, "nn.ConvTranspose2d:forward: unknown option 'output_sise'")
end)

T.test("nn.init: mean, std, a, b, gain, val, mode by name", function()
  torch.manual_seed(0)
  local w = nn.init.normal_(torch.empty(200, 50), { mean = 3, std = 0.02 })
  T.near(w:mean():item(), 3, 1e-2); T.near(w:std():item(), 0.02, 1e-2)
  local u = nn.init.uniform_(torch.empty(1000), { a = 2, b = 3 })
  T.ok(u:min():item() >= 2 and u:max():item() <= 3)
  T.tensor(nn.init.constant_(torch.empty(2), { val = 7 }), { 7, 7 })
  local x = nn.init.xavier_uniform_(torch.empty(30, 20), { gain = 2 })
  local bound = 2 * math.sqrt(6 / 50)
  T.ok(x:abs():max():item() <= bound and x:abs():max():item() > 0.8 * bound)
  local k = nn.init.kaiming_normal_(torch.empty(400, 100), 0, { mode = "fan_out", nonlinearity = "relu" })
  T.near(k:std():item(), math.sqrt(2 / 400), 5e-2)
  T.near(nn.init.calculate_gain({ nonlinearity = "leaky_relu", param = 0.2 }), math.sqrt(2 / 1.04), 1e-12)
  T.tensor(nn.init.dirac_(torch.empty(2, 2, 3), { groups = 1 })[1], { { 0, 1, 0 }, { 0, 0, 0 } })
  local g1, g2 = torch.Generator():manual_seed(5), torch.Generator():manual_seed(5)
  T.eq(nn.init.trunc_normal_(torch.empty(4), { std = 0.5, generator = g1 }):totable(),
    nn.init.trunc_normal_(torch.empty(4), 0, 0.5, { generator = g2 }):totable())
  T.raises(function() nn.init.normal_(torch.empty(2), { mean = "0" }) end, "nn.init.normal_: argument 'mean' must be a number")
end)

T.test("a misspelt options table alone is an unknown option with a suggestion, parsed first", function()
  T.raises(function() nn.Conv2d({ kernel_sise = 3 }) end,
    "nn.Conv2d: unknown option 'kernel_sise' (did you mean 'kernel_size'?)")
  T.raises(function() nn.init.normal_(torch.empty(2), { meen = 0 }) end,
    "nn.init.normal_: unknown option 'meen' (did you mean 'mean'?)")
  T.raises(function() nn.Linear({ in_feature = 3 }) end, "nn.Linear: unknown option 'in_feature' (did you mean 'in_features'?)")
  T.raises(function() optim.SGD({ lr = 0.1, momentun = 0.9 }) end, "optim.SGD: unknown option 'momentun' (did you mean 'momentum'?)")
  T.raises(function() optim.lr_scheduler.StepLR({ step_sise = 3 }) end,
    "optim.lr_scheduler.StepLR: unknown option 'step_sise' (did you mean 'step_size'?)")
  T.raises(function() nn.Sequential({ kernel_sise = 3 }) end, "nn.Sequential: unknown option 'kernel_sise'")
end)

-- the callable a signature's name names: "nn.init.normal_" -> nn.init.normal_
local function resolve(name)
  local roots = { nn = nn, optim = optim }
  local v
  for part in name:gmatch("[^.]+") do
    if v == nil then v = roots[part] else v = type(v) == "table" and v[part] or nil end
    if v == nil then return nil end
  end
  return v
end

T.test("every nn and optim signature: nn.X, nn.init.X, nn.utils.X, optim.X, optim.lr_scheduler.X", function()
  for _, name in ipairs({ "nn.Linear", "nn.Conv2d", "nn.Sequential", "nn.ModuleList", "nn.BatchNorm2d", "nn.ReLU",
      "nn.CrossEntropyLoss", "nn.Embedding", "nn.Embedding.from_pretrained", "nn.Parameter", "nn.init.normal_",
      "nn.init.kaiming_uniform_", "nn.utils.clip_grad_norm_", "nn.DistributedDataParallel", "nn.SpatialConvolution",
      "nn.ClassNLLCriterion", "optim.SGD", "optim.AdamW", "optim.LBFGS", "optim.lr_scheduler.StepLR",
      "optim.lr_scheduler.OneCycleLR", "optim.lr_scheduler.ReduceLROnPlateau" }) do
    T.ok(class.signatures[name], "no signature " .. name)
  end
  -- every class of nn's namespace that these files make, and every class of optim's but the
  -- abstract bases (whose constructor takes a table of defaults)
  local others = { RNNBase = 1, RNN = 1, LSTM = 1, GRU = 1, RNNCellBase = 1, RNNCell = 1, LSTMCell = 1, GRUCell = 1,
    MultiheadAttention = 1, TransformerEncoderLayer = 1, TransformerEncoder = 1, TransformerDecoderLayer = 1,
    TransformerDecoder = 1, Transformer = 1 }
  for short in pairs(nn.classes) do
    if not others[short] then T.ok(class.signatures["nn." .. short], "no signature nn." .. short) end
  end
  for short in pairs(class.namespace("optim")) do
    if short ~= "Optimizer" then T.ok(class.signatures["optim." .. short], "no signature optim." .. short) end
  end
  for short in pairs(class.namespace("optim.lr_scheduler")) do
    if short ~= "LRScheduler" then
      T.ok(class.signatures["optim.lr_scheduler." .. short], "no signature optim.lr_scheduler." .. short)
    end
  end
  -- each of them, called with nothing but a misspelt options table, says so before anything else
  local n = 0
  for name in pairs(class.signatures) do
    local f = (name:match("^nn%.") or name:match("^optim%.")) and not name:find(":", 1, true) and resolve(name)
    if f then
      n = n + 1
      T.raises(function() f({ kernel_sise = 3 }) end, name .. ": unknown option 'kernel_sise'")
    end
  end
  T.ok(n > 100, "only " .. n .. " signatures swept")
end)

T.test("call forms for help: PyTorch's parameters and defaults", function()
  T.eq(class.call_form("nn.Linear"), "nn.Linear(in_features, out_features, bias=true, *, device=nil, dtype=nil)")
  T.eq(class.call_form("nn.init.normal_"), "nn.init.normal_(tensor, mean=0.0, std=1.0, *, generator=nil)")
  T.eq(class.call_form("nn.Sequential"), "nn.Sequential(*args)")
  T.ok(class.call_form("optim.SGD"):find("^optim%.SGD%(params, lr=1e%-3, momentum=0, dampening=0"))
  T.eq(class.call_form("optim.lr_scheduler.StepLR"), "optim.lr_scheduler.StepLR(optimizer, step_size, gamma=0.1, last_epoch=-1)")
end)

T.test("layers: arguments after the first positional ones by name", function()
  local sp = nn.Softplus(2, { threshold = 10 })
  T.eq({ sp.beta, sp.threshold }, { 2, 10 })
  local ht = nn.Hardtanh(-2, { max_val = 3 })
  T.eq({ ht.min_val, ht.max_val }, { -2, 3 })
  T.eq(nn.Flatten(1, { end_dim = 2 })(torch.zeros(2, 3, 4)).shape, { 6, 4 })
  local bn = nn.BatchNorm1d(4, 1e-3, { momentum = 0.2, affine = false })
  T.eq({ bn.eps, bn.momentum, bn.weight }, { 1e-3, 0.2, nil })
  local ln = nn.LayerNorm(4, 1e-3, { bias = false })
  T.ok(ln.weight ~= nil and ln.bias == nil and ln.eps == 1e-3)
  local gn = nn.GroupNorm(2, 4, { affine = false })
  T.eq(gn.weight, nil)
  local e = nn.Embedding(10, 3, 1)                          -- padding_idx, positional as in PyTorch
  T.eq(e.padding_idx, 1); T.tensor(e.weight[1], { 0, 0, 0 })
  local pre = nn.Embedding.from_pretrained(torch.ones(4, 2), false)   -- freeze=false
  T.ok(pre.weight.requires_grad)
  T.eq(nn.MaxPool2d(3, { stride = 1, ceil_mode = true }).ceil_mode, true)
  T.eq(nn.AvgPool2d(2, 2, 0, false, false).count_include_pad, false)
  T.eq(nn.AdaptiveMaxPool2d(2, true).return_indices, true)
  T.eq(nn.Upsample(nil, 2, "bilinear").mode, "bilinear")
  T.eq(nn.Softmax({ dim = 2 }).dim, 2)
  T.eq(nn.Threshold({ threshold = 0.1, value = 20 }).value, 20)
  T.near(nn.PReLU(3, { init = 0.1 }).weight:totable()[3], 0.1, 1e-7)
  T.raises(function() nn.Embedding(10, 3, { scale_grad_by_freq = true }) end, "Embedding: scale_grad_by_freq=true is not supported")
  T.ok(nn.Identity(54, { }) ~= nil)                          -- PyTorch's Identity ignores its arguments
  T.raises(function() nn.Identity({ unused = 1 }) end, "nn.Identity: unknown option 'unused'")
end)

T.test("losses: PyTorch's positional order, and size_average/reduce as PyTorch reads them", function()
  local x = torch.tensor({ { 2.0, 0.5, -1.0 }, { 0.1, 0.2, 3.0 } })
  local y = torch.tensor({ 2, 2 })
  -- CrossEntropyLoss(weight, size_average, ignore_index): the second target is ignored
  local l = nn.CrossEntropyLoss(nil, nil, 2)(x, y)
  T.near(l:item(), F.cross_entropy(x, y, { ignore_index = 2 }):item(), 1e-6)
  local a, b = torch.tensor({ 1.0, 2.0, 4.0 }), torch.tensor({ 0.0, 0.0, 0.0 })
  T.near(nn.MSELoss({ size_average = false })(a, b):item(), 21, 1e-6)          -- the sum
  T.tensor(nn.MSELoss({ reduce = false })(a, b), { 1, 4, 16 })                -- no reduction
  T.near(nn.L1Loss(true, true)(a, b):item(), 7 / 3, 1e-6)                       -- the mean
  T.eq(nn.HuberLoss("sum", 0.5).delta, 0.5)
  T.eq(nn.TripletMarginLoss(2.0, 1.0).p, 1.0)
  T.raises(function() nn.L1Loss("sum") end, "L1Loss: argument 'size_average' must be a boolean")
  T.raises(function() nn.NLLLoss({ weigth = torch.ones(2) }) end, "nn.NLLLoss: unknown option 'weigth' (did you mean 'weight'?)")
  T.raises(function() nn.NLLLoss({ 1, 2 }) end, "NLLLoss: argument 'weight' must be a tensor")
end)

------------------------------------------------------------------------------
-- device= and dtype=
------------------------------------------------------------------------------
T.test("layers take device= and dtype=, as PyTorch's factory arguments", function()
  local l = nn.Linear(2, 3, { device = "cpu", dtype = torch.float64 })
  T.eq(l.weight.dtype.name, "float64"); T.eq(l.bias.dtype.name, "float64"); T.eq(tostring(l.weight.device), "cpu")
  T.eq(nn.Conv2d(1, 2, 3, { device = "cpu" }).weight.dtype.name, "float32")
  T.eq(nn.Conv2d(1, 2, 3, { dtype = "float64" }).bias.dtype.name, "float64")
  T.eq(nn.BatchNorm2d(3, { dtype = torch.float64, device = torch.device("cpu") }).running_mean.dtype.name, "float64")
  T.eq(nn.LayerNorm(4, { dtype = torch.float64 }).weight.dtype.name, "float64")
  T.eq(nn.GroupNorm(1, 2, { device = "cpu" }).bias.dtype.name, "float32")
  T.eq(nn.Embedding(5, 2, { dtype = torch.float64 }).weight.dtype.name, "float64")
  T.eq(nn.Bilinear(2, 3, 4, { device = "cpu" }).weight.shape, { 4, 2, 3 })
  T.eq(nn.PReLU({ dtype = torch.float64 }).weight.dtype.name, "float64")
  T.ok(l.weight.requires_grad and l.weight.is_leaf)
end)

T.test("a bad device or dtype is an error naming the layer and the argument", function()
  T.raises(function() nn.Linear(2, 3, { device = "cuda" }) end, "nn.Linear: argument 'device'", "backend not loaded")
  T.raises(function() nn.Conv2d(1, 2, 3, { device = "gpu" }) end, "nn.Conv2d: argument 'device'", "invalid device 'gpu'")
  T.raises(function() nn.Linear(2, 3, { dtype = torch.int64 }) end, "nn.Linear: argument 'dtype' must be a floating point dtype")
  T.raises(function() nn.BatchNorm1d(2, { dtype = "flot32" }) end, "nn.BatchNorm1d: argument 'dtype'", "flot32")
  T.raises(function() nn.Linear(2, 3, nil, "cpu") end, "nn.Linear: too many arguments")   -- keyword-only
end)

------------------------------------------------------------------------------
-- containers
------------------------------------------------------------------------------
T.test("ipairs, # and pairs over Sequential and ModuleList", function()
  local a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
  local seq = nn.Sequential(a, b, c)
  local seen = {}
  for i, m in ipairs(seq) do seen[i] = m end
  T.ok(#seen == 3 and rawequal(seen[1], a) and rawequal(seen[3], c))
  T.eq(#seq, 3)
  local n = 0
  for i, m in pairs(seq) do n = n + 1; T.ok(rawequal(m, seen[i])) end
  T.eq(n, 3)
  local list = nn.ModuleList({ a, b })
  local count = 0
  for i, m in ipairs(list) do count = count + 1; T.ok(rawequal(m, i == 1 and a or b)) end
  T.eq(count, 2); T.eq(#list, 2)
  for _, m in ipairs(nn.Sequential()) do error("an empty Sequential has no modules " .. tostring(m)) end
end)

T.test("indexing a container: n + 1 ends iteration, other indices out of range are errors", function()
  local seq = nn.Sequential(nn.ReLU(), nn.Tanh())
  T.eq(seq[3], nil)
  T.ok(rawequal(seq[-1], seq[2]))
  T.raises(function() return seq[0] end, "Sequential: index 0 is out of range (it has 2 modules)")
  T.raises(function() return seq[4] end, "Sequential: index 4 is out of range")
  T.raises(function() return seq[-3] end, "Sequential: index -3 is out of range")
  T.raises(function() return seq[1.5] end, "Sequential: index 1.5 is out of range")
  local list = nn.ModuleList({ nn.ReLU() })
  T.eq(list[2], nil)
  T.raises(function() return list[0] end, "ModuleList: index 0 is out of range (it has 1 modules)")
  T.raises(function() seq[3] = nn.ReLU() end, "Sequential: index 3 is out of range")
end)

T.test("ParameterList and ParameterDict: ipairs, pairs, #, by name", function()
  local p1, p2 = nn.Parameter(torch.zeros(2)), nn.Parameter(torch.ones(3))
  local pl = nn.ParameterList({ p1, p2 })
  local got = {}
  for i, p in ipairs(pl) do got[i] = p end
  T.ok(#got == 2 and rawequal(got[2], p2)); T.eq(#pl, 2)
  T.raises(function() return pl[0] end, "ParameterList: index 0 is out of range")
  local n = 0
  for i, p in pairs(pl) do n = n + 1; T.ok(rawequal(p, got[i])) end
  T.eq(n, 2)
  T.eq(#nn.ParameterList({ values = { p1 } }), 1)
  local pd = nn.ParameterDict({ { "w", p1 }, { "b", p2 } })        -- ordered pairs
  local keys = {}
  for k, p in pairs(pd) do keys[#keys + 1] = k; T.ok(rawequal(p, k == "w" and p1 or p2)) end
  T.eq(keys, { "w", "b" })
  local pd2 = nn.ParameterDict({ b = p2, a = p1 })                   -- a plain dict: sorted keys
  T.eq(pd2:keys(), { "a", "b" }); T.ok(rawequal(pd2.a, p1))
  T.raises(function() nn.ParameterList(p1) end, "ParameterList: argument 'values' must be a list of tensors")
end)

T.test("ModuleDict and Sequential: dicts of modules are not options tables", function()
  local enc, dec = nn.Linear(2, 2), nn.Linear(2, 1)
  local md = nn.ModuleDict({ enc = enc, dec = dec })
  T.eq(md:keys(), { "dec", "enc" }); T.ok(rawequal(md.enc, enc))
  T.eq(#nn.ModuleDict({ modules = { a = enc } }), 1)
  T.eq(#nn.ModuleList({ modules = { enc, dec } }), 2)
  T.raises(function() nn.Sequential({ conv = enc, fc = dec }) end, "Sequential: a table of named modules has no order",
    "{name, module} pairs")
  local seq = nn.Sequential({ { "conv", enc }, { "fc", dec } })
  T.ok(rawequal(seq.conv, enc) and rawequal(seq[2], dec))
end)

------------------------------------------------------------------------------
-- optim
------------------------------------------------------------------------------
T.test("optimizers: positional lr (and the rest) as PyTorch, options after", function()
  local s = optim.SGD(params(), 0.1, { momentum = 0.9 })
  T.eq({ s.param_groups[1].lr, s.param_groups[1].momentum }, { 0.1, 0.9 })
  local s2 = optim.SGD(params(), 0.1, 0.8, 0, 1e-4, true)                      -- nesterov, positional
  T.eq({ s2.param_groups[1].momentum, s2.param_groups[1].weight_decay, s2.param_groups[1].nesterov }, { 0.8, 1e-4, true })
  local a = optim.Adam(params(), 1e-2, { 0.8, 0.9 })                          -- betas, a list
  T.eq(a.param_groups[1].betas, { 0.8, 0.9 })
  local w = optim.AdamW { params = params(), lr = 2e-3, weight_decay = 0 }
  T.eq({ w.param_groups[1].lr, w.param_groups[1].weight_decay }, { 2e-3, 0 })
  T.eq(optim.RMSprop(params(), 0.01, 0.9).param_groups[1].alpha, 0.9)
  T.eq(optim.LBFGS(params(), 1, 5).param_groups[1].max_eval, 6)
  T.eq(optim.Adagrad(params(), 0.1, 0.01).param_groups[1].lr_decay, 0.01)
  T.raises(function() optim.SGD(params(), 0.1, { lr = 0.2 }) end, "optim.SGD: argument 'lr' given twice")
  T.raises(function() optim.SGD(params(), 0.1, 0.9, 0, 0, false, true) end, "optim.SGD: too many arguments")   -- maximize is keyword-only
end)

T.test("schedulers: positional arguments as PyTorch, or by name", function()
  local opt = optim.SGD(params(), { lr = 0.1, momentum = 0.9 })
  local s = optim.lr_scheduler.StepLR(opt, 2, 0.5)
  T.eq(s.gamma, 0.5)
  local p = optim.lr_scheduler.ReduceLROnPlateau(opt, "max", 0.5, { patience = 2 })
  T.eq({ p.mode, p.factor, p.patience }, { "max", 0.5, 2 })
  local c = optim.lr_scheduler.CosineAnnealingLR { optimizer = optim.SGD(params(), 0.1), T_max = 10, eta_min = 0.01 }
  T.eq({ c.T_max, c.eta_min }, { 10, 0.01 })
  local o = optim.lr_scheduler.OneCycleLR(optim.SGD(params(), 0.1, 0.9), 0.1, 20)
  T.eq(o.total_steps, 20)
  local l = optim.lr_scheduler.LinearLR(optim.SGD(params(), 0.1), 0.5, 1.0, 4)
  T.eq({ l.start_factor, l.total_iters }, { 0.5, 4 })
  T.near(optim.lr_scheduler.ConstantLR(optim.SGD(params(), 0.1)).factor, 1 / 3, 1e-12)
end)

T.test("Torch7's optim functions: free config keys pass, typos and PyTorch's names do not", function()
  local x = torch.ones(2)
  local function feval(v) return (v * v):sum():item(), v * 2 end
  T.raises(function() optim.sgd(feval, x, { learningrate = 0.1 }) end, "optim.sgd: unknown option 'learningrate' (did you mean 'learningRate'?)")
  T.raises(function() optim.adam(feval, x, { lr = 0.1 }) end, "optim.adam: unknown option 'lr'", "learningRate")
  T.raises(function() optim.sgd(feval, x, { weightDecay = 0.1, momentun = 0.9 }) end, "optim.sgd: unknown option 'momentun' (did you mean 'momentum'?)")
  T.raises(function() optim.sgd(feval, x, 0.1) end, "optim.sgd: argument 'config' must be a table")
  T.tensor(x, { 1, 1 })                       -- nothing moved
  local config = { learningRate = 0.5, epoch = 3, momentum = 0 }
  optim.sgd(feval, x, config)
  T.tensor(x, { 0, 0 }); T.eq(config.epoch, 3)
  -- rmsprop's initialMean starts the mean square (1 - alpha) * g^2 + alpha * initialMean
  local y = torch.ones(1)
  optim.rmsprop(function(v) return 0, torch.ones(1) end, y, { learningRate = 0.1, alpha = 0.5, initialMean = 1 })
  T.near(y[1], 1 - 0.1 / (1 + 1e-8), 1e-6)
end)

------------------------------------------------------------------------------
-- Torch7's nn classes keep their positional forms, with Torch7's names
------------------------------------------------------------------------------
T.test("Torch7 classes: positional as in Torch7, options by Torch7's names, nInputDims, paddingValue 0", function()
  local c = nn.SpatialConvolution(1, 2, 3, { padW = 1 })
  T.eq({ c.kW, c.kH, c.padW, c.padH }, { 3, 3, 1, 1 })
  T.eq(nn.SpatialConvolution(1, 2, 5, 3, 1, 1, 2, 1).weight.shape, { 2, 1, 3, 5 })
  T.raises(function() nn.SpatialConvolution(1, 2, 3, { padw = 1 }) end, "nn.SpatialConvolution: unknown option 'padw' (did you mean 'padW'?)")
  -- SplitTable(dimension, nInputDims): a batched input splits past its batch dim
  local parts = nn.SplitTable(1, 2)(torch.arange(1, 13):reshape(2, 3, 2))
  T.eq(#parts, 3); T.tensor(parts[1], { { 1, 2 }, { 7, 8 } })
  T.eq(#nn.SplitTable(1, 2)(torch.zeros(3, 2)), 3)
  T.eq(nn.LookupTable(10, 3, 0).padding_idx, nil)
  T.eq(nn.LookupTable(10, 3, 2).padding_idx, 2)
  T.near(nn.MSECriterion(false):forward(torch.tensor({ 1.0, 2.0 }), torch.zeros(2)), 5, 1e-6)
  T.raises(function() nn.ClassNLLCriterion({ sizeAverag = false }) end, "nn.ClassNLLCriterion: unknown option 'sizeAverag' (did you mean 'sizeAverage'?)")
  T.eq(nn.View(2, 3)(torch.zeros(6)).shape, { 2, 3 })
  T.raises(function() nn.View({ size = 2 }) end, "nn.View: unknown option 'size'")
  T.eq(nn.Concat(2).dimension, 2)
end)

------------------------------------------------------------------------------
-- the rest of nn's surface: nn.Parameter, nn.utils, DDP, Module methods
------------------------------------------------------------------------------
T.test("nn.Parameter(data, requires_grad) by name", function()
  local p = nn.Parameter(torch.zeros(2), { requires_grad = false })
  T.ok(nn.is_parameter(p) and not p.requires_grad)
  T.ok(nn.Parameter({ data = torch.ones(1) }).requires_grad)
  T.raises(function() nn.Parameter(torch.zeros(1), { requires_gard = false }) end, "nn.Parameter: unknown option 'requires_gard'")
end)

T.test("nn.utils: arguments by name, empty lists, bad entries named", function()
  local lin = nn.Linear(2, 2)
  lin(torch.ones(1, 2)):sum():backward()
  local total = nn.utils.clip_grad_norm_(lin:parameters(), { max_norm = 1e-3, norm_type = "inf" })
  T.ok(total:item() > 0)
  local m = 0
  for _, p in ipairs(lin:parameters()) do m = math.max(m, p.grad:abs():max():item()) end
  T.near(m, 1e-3, 1e-3)
  nn.utils.clip_grad_value_({ parameters = lin:parameters(), clip_value = 1e-4 })
  T.ok(lin.weight.grad:abs():max():item() <= 1e-4 + 1e-9)
  T.eq(nn.utils.parameters_to_vector({}):numel(), 0)              -- a model without parameters
  nn.utils.vector_to_parameters(torch.empty(0), {})
  T.raises(function() nn.utils.parameters_to_vector(lin:named_parameters()) end,
    "nn.utils.parameters_to_vector: argument 'parameters' element 1 must be a tensor")
end)

T.test("DistributedDataParallel: PyTorch's signature; device_ids are for GPU modules", function()
  T.raises(function() nn.DistributedDataParallel({ modul = nn.Linear(2, 2) }) end,
    "nn.DistributedDataParallel: unknown option 'modul' (did you mean 'module'?)")
  T.raises(function() nn.DistributedDataParallel(nn.Linear(2, 2), { device_ids = { 0 } }) end,
    "DistributedDataParallel: device_ids and output_device only work with modules on a GPU")
end)

T.test("Module methods: boolean arguments by name are read, not taken as true", function()
  local M = nn.Module:extend("PortArgsBuf")
  function M:__init()
    self:register_buffer("kept", torch.zeros(1))
    self:register_buffer("scratch", torch.zeros(1), { persistent = false })
  end
  local m = M()
  T.eq(class.typename(m), "nn.PortArgsBuf")
  local keys = {}
  for k in pairs(m:state_dict()) do keys[#keys + 1] = k end
  T.eq(keys, { "kept" })
  T.raises(function() m:register_buffer("x", torch.zeros(1), { persistant = false }) end,
    "nn.PortArgsBuf:register_buffer: unknown option 'persistant' (did you mean 'persistent'?)")
  T.raises(function() m:register_buffer("x", torch.zeros(1), "no") end, "register_buffer: argument 'persistent' must be a boolean")
  local lin = nn.Linear(2, 2)
  lin:requires_grad_({ requires_grad = false })
  T.ok(not lin.weight.requires_grad)
  lin:train({ mode = false })
  T.eq(lin.training, false)
  T.eq(#lin:named_modules({ prefix = "top" }), 1)
  T.eq(lin:named_modules({ prefix = "top" })[1][1], "top")
  -- a class without an __init of its own is told so when given arguments
  local Plain = nn.Module:extend("PortArgsPlain")
  T.raises(function() Plain(3) end, "nn.PortArgsPlain: got 1 argument(s)", "define PortArgsPlain:__init")
end)

------------------------------------------------------------------------------
-- device= on a second device: the fake "cuda" backend (tests/fake/), loaded last
------------------------------------------------------------------------------
local build = os.getenv("BUILD") or "build"
package.cpath = build .. "/tests/?.so;" .. package.cpath
local ok_load = pcall(require, "fake_cuda")
if ok_load then
  T.test("device='cuda' makes the parameters and buffers there", function()
    local l = nn.Linear(3, 2, { device = "cuda" })
    T.eq(tostring(l.weight.device), "cuda:0"); T.eq(tostring(l.bias.device), "cuda:0")
    local bn = nn.BatchNorm1d(2, { device = "cuda:1" })
    T.eq(tostring(bn.running_var.device), "cuda:1"); T.eq(tostring(bn.num_batches_tracked.device), "cuda:1")
    local c = nn.Conv2d(1, 2, 3, { device = "cuda", dtype = torch.float64 })
    T.eq(tostring(c.weight.device), "cuda:0"); T.eq(c.weight.dtype.name, "float64")
    local y = l(torch.randn(4, 3, { device = "cuda" }))
    T.eq(tostring(y.device), "cuda:0")
  end)
else
  T.skip("device='cuda' makes the parameters and buffers there", "the fake backend (build/tests/fake_cuda.so) is not built")
end

T.done()
