-- Options tables: every function and constructor of nn, optim and data that takes
-- {name = value, ...} rejects a name it does not know, with an error naming the function
-- and the option (torch_class.check_options); the known names still work.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local class = require "torch_class"
local nn = require "nn"
local F = nn.functional
local optim = require "optim"
local data = require "data"

local function params() return { torch.zeros(3, { requires_grad = true }) } end

-- fn() must fail with exactly "<fname>: unknown option '<name>'"
local function unknown(fn, fname, name)
  local err = T.raises(fn, fname .. ": unknown option '" .. name .. "'")
  return err
end

T.test("check_options: the message, lists and defaults tables, several allowed tables", function()
  local check = class.check_options
  T.eq(next(check("f", nil, { "a" })), nil)             -- nil gives an empty table
  local o = { a = 1 }
  T.ok(check("f", o, { "a", "b" }) == o)                 -- the same table back
  T.ok(check("f", { lr = 1 }, { lr = 0.1, momentum = 0 }))   -- a defaults table names the options
  T.ok(check("f", { fused = true }, { lr = 0.1 }, { "fused" }))
  unknown(function() check("my.fn", { lerning_rate = 1 }, { "lr" }) end, "my.fn", "lerning_rate")
  T.raises(function() check("my.fn", { 0.1 }, { "lr" }) end, "my.fn: unknown option [1]")
  T.raises(function() check("my.fn", 0.1, { "lr" }) end, "my.fn: options must be a table", "number")
  T.raises(function() check("my.fn", torch.zeros(1), { "lr" }) end, "my.fn: options must be a table", "a tensor")
end)

T.test("optimizers: SGD, Adam, AdamW and the others name themselves and the option", function()
  unknown(function() optim.SGD(params(), { lerning_rate = 0.1 }) end, "optim.SGD", "lerning_rate")
  unknown(function() optim.SGD(params(), { lr = 0.1, momentun = 0.9 }) end, "optim.SGD", "momentun")
  unknown(function() optim.Adam(params(), { lr = 1e-3, beta = { 0.9, 0.99 } }) end, "optim.Adam", "beta")
  unknown(function() optim.AdamW(params(), { weight_decy = 0.1 }) end, "optim.AdamW", "weight_decy")
  unknown(function() optim.RMSprop(params(), { momentum = 0.9, centred = true }) end, "optim.RMSprop", "centred")
  unknown(function() optim.LBFGS(params(), { max_iters = 5 }) end, "optim.LBFGS", "max_iters")
  -- a user optimizer made from SGD keeps SGD's options
  local My = optim.SGD:extend("OptionsTestSGD")
  T.ok(My(params(), { lr = 0.2, nesterov = true, momentum = 0.9 }))
  -- the right names work; PyTorch's implementation switches are accepted
  local a = optim.AdamW(params(), { lr = 1e-3, betas = { 0.9, 0.99 }, weight_decay = 0.1, amsgrad = true, foreach = true })
  T.eq(a.param_groups[1].lr, 1e-3)
  local s = optim.SGD(params(), 0.5)
  T.eq(s.param_groups[1].lr, 0.5)
  unknown(function() s:zero_grad({ set_to_nun = true }) end, "optim.SGD:zero_grad", "set_to_nun")
  -- param groups keep their own keys (schedulers and scripts store things there)
  local g = optim.SGD({ { params = params(), lr = 0.1, name = "encoder" } })
  T.eq(g.param_groups[1].name, "encoder")
end)

T.test("schedulers reject unknown options", function()
  local opt = optim.SGD(params(), { lr = 0.1, momentum = 0.9 })
  local S = optim.lr_scheduler
  unknown(function() S.StepLR(opt, 2, { gama = 0.5 }) end, "optim.lr_scheduler.StepLR", "gama")
  unknown(function() S.OneCycleLR(opt, 0.1, { total_steps = 10, pct = 0.3 }) end, "optim.lr_scheduler.OneCycleLR", "pct")
  unknown(function() S.ReduceLROnPlateau(opt, { patince = 3 }) end, "optim.lr_scheduler.ReduceLROnPlateau", "patince")
  unknown(function() S.CosineAnnealingLR(opt, 10, { eta_mn = 0 }) end, "optim.lr_scheduler.CosineAnnealingLR", "eta_mn")
  local ok = S.StepLR(optim.SGD(params(), { lr = 0.1 }), 2, { gamma = 0.5 })
  T.eq(ok.gamma, 0.5)
end)

T.test("Torch7's optim.sgd keeps free config and state tables", function()
  local x = torch.zeros(2)
  local function feval(v) return (v * v):sum():item(), v * 2 end
  local config = { learningRate = 0.1, momentum = 0.5, myOwnKey = 1 }
  optim.sgd(feval, x, config)
  optim.sgd(feval, x, config)        -- config now also holds the state sgd wrote into it
  T.ok(config.evalCounter == 2 and config.myOwnKey == 1)
end)

T.test("DataLoader and the samplers reject unknown options", function()
  local ds = data.TensorDataset(torch.arange(1, 9))
  unknown(function() data.DataLoader(ds, { batchsize = 4 }) end, "data.DataLoader", "batchsize")
  unknown(function() data.DataLoader(ds, { batch_size = 4, shufle = true }) end, "data.DataLoader", "shufle")
  unknown(function() data.DataLoader(ds, { num_worker = 2 }) end, "data.DataLoader", "num_worker")   -- pin_memory is known (ignored, as PyTorch without a GPU)
  unknown(function() data.RandomSampler(ds, { replace = true }) end, "data.RandomSampler", "replace")
  unknown(function() data.DistributedSampler(ds, { num_replica = 2 }) end, "data.DistributedSampler", "num_replica")
  unknown(function() data.progress(3, { descr = "x" }) end, "data.progress", "descr")
  unknown(function() data.transforms.RandomCrop(2, { pad = 1 }) end, "data.transforms.RandomCrop", "pad")
  local loader = data.DataLoader(ds, { batch_size = 4, shuffle = true, drop_last = true })
  T.eq(#loader, 2)
end)

T.test("nn constructors with options: layers, losses, recurrent, attention", function()
  unknown(function() nn.Linear(4, 8, { biass = false }) end, "nn.Linear", "biass")
  unknown(function() nn.Conv2d(1, 2, 3, { strid = 2 }) end, "nn.Conv2d", "strid")
  unknown(function() nn.MaxPool2d(2, { ceil = true }) end, "nn.MaxPool2d", "ceil")
  unknown(function() nn.BatchNorm1d(4, { momentun = 0.2 }) end, "nn.BatchNorm1d", "momentun")
  unknown(function() nn.Embedding(10, 3, { padding = 1 }) end, "nn.Embedding", "padding")
  unknown(function() nn.Dropout({ prob = 0.1 }) end, "nn.Dropout", "prob")
  unknown(function() nn.ReLU({ in_place = true }) end, "nn.ReLU", "in_place")
  unknown(function() nn.CrossEntropyLoss({ label_smooting = 0.1 }) end, "nn.CrossEntropyLoss", "label_smooting")
  -- reduce= is PyTorch's deprecated boolean (a name the signature knows): a string there is wrong
  T.raises(function() nn.MSELoss({ reduce = "sum" }) end, "MSELoss: argument 'reduce' must be a boolean")
  unknown(function() nn.MSELoss({ reduct = "sum" }) end, "nn.MSELoss", "reduct")
  unknown(function() nn.LSTM(3, 4, { batchfirst = true }) end, "nn.LSTM", "batchfirst")
  unknown(function() nn.GRU(3, 4, 2, { nonlinearity = "relu" }) end, "nn.GRU", "nonlinearity")
  unknown(function() nn.MultiheadAttention(8, 2, { batch_frist = true }) end, "nn.MultiheadAttention", "batch_frist")
  unknown(function() nn.Upsample({ scale = 2 }) end, "nn.Upsample", "scale")
  -- the right names still work, and a list where a positional argument goes is not options
  T.eq(nn.Linear(4, 8, { bias = false }).bias, nil)
  T.eq(tostring(nn.Conv2d(1, 2, 3, { 2, 2 })), "Conv2d(1, 2, kernel_size=(3, 3), stride=(2, 2))")
  T.eq(nn.LSTM(3, 4, 2, { batch_first = true }).num_layers, 2)
  T.eq(nn.Upsample({ 4, 4 }).size[1], 4)
end)

T.test("nn.functional, nn.init, nn.utils and Module methods", function()
  local x = torch.randn(4, 3)
  local y = torch.tensor({ 1, 2, 3, 1 })
  unknown(function() F.cross_entropy(x, y, { label_smothing = 0.1 }) end, "F.cross_entropy", "label_smothing")
  unknown(function() F.cross_entropy(x, y, torch.ones(3), { ignore = 1 }) end, "F.cross_entropy", "ignore")
  unknown(function() F.relu(x, { inplac = true }) end, "F.relu", "inplac")
  unknown(function() F.softmax(x, { dim = 2, dtyp = torch.float64 }) end, "F.softmax", "dtyp")
  unknown(function() F.dropout(x, { p = 0.5, train = false }) end, "F.dropout", "train")
  unknown(function() F.conv2d(torch.randn(1, 1, 4, 4), torch.randn(1, 1, 3, 3), { strides = 2 }) end, "F.conv2d", "strides")
  unknown(function() F.interpolate(torch.randn(1, 1, 2, 2), { scale = 2 }) end, "F.interpolate", "scale")
  unknown(function() nn.init.kaiming_uniform_(torch.empty(3, 3), { mod = "fan_out" }) end, "nn.init.kaiming_uniform_", "mod")
  unknown(function() nn.init.normal_(torch.empty(3), 0, 1, { gen = 1 }) end, "nn.init.normal_", "gen")
  local m = nn.Linear(3, 2)
  unknown(function() m:state_dict({ prefx = "a." }) end, "nn.Linear:state_dict", "prefx")
  unknown(function() m:load_state_dict(m:state_dict(), { strct = false }) end, "nn.Linear:load_state_dict", "strct")
  unknown(function() m:zero_grad({ set_to_nne = false }) end, "nn.Linear:zero_grad", "set_to_nne")
  unknown(function() m:to({ dtyp = torch.float64 }) end, "nn.Linear:to", "dtyp")
  unknown(function() nn.utils.clip_grad_norm_(m, 1, { norm = 2 }) end, "nn.utils.clip_grad_norm_", "norm")
  -- the right names still work
  T.near(F.cross_entropy(x, y, { reduction = "sum" }):item(), F.cross_entropy(x, y):item() * 4, 1e-5)
  T.eq(m:to({ dtype = torch.float64 }).weight.dtype.name, "float64")
  T.ok(m:state_dict({ prefix = "a." })["a.weight"] ~= nil)
end)

T.test("torch.distributed: collectives, point to point, init_process_group", function()
  local dist = require "distributed"   -- the options are checked before any process group is needed
  unknown(function() dist.all_reduce(torch.zeros(1), { asyn_op = true }) end, "torch.distributed.all_reduce", "asyn_op")
  unknown(function() dist.broadcast(torch.zeros(1), 0, { op = "sum" }) end, "torch.distributed.broadcast", "op")
  unknown(function() dist.send(torch.zeros(1), 1, { tags = 3 }) end, "torch.distributed.send", "tags")
  unknown(function() dist.init_process_group({ backend = "mpi", world = 2 }) end,
    "torch.distributed.init_process_group", "world")
end)

T.test("closest: the misspellings PyTorch users make find the option they meant", function()
  local names = { "is_causal", "batch_first", "dim_feedforward", "reduction", "shuffle", "training",
    "batch_size", "learning_rate", "lr", "momentum" }
  for bad, good in pairs({ is_casual = "is_causal", batch_firts = "batch_first", dim_feedfoward =
      "dim_feedforward", reductin = "reduction", shufle = "shuffle", trainig = "training", batch_sz =
      "batch_size", Momentum = "momentum" }) do
    T.eq(class.closest(bad, names), good, bad)
  end
  T.eq(class.closest("xyz", names), nil)                  -- nothing near: no suggestion
  T.raises(function() class.check_options("F.sdpa", { is_casual = true }, { "is_causal", "scale" }) end,
    "F.sdpa: unknown option 'is_casual' (did you mean 'is_causal'?)")
end)

T.test("signature: positional arguments by position or by name, defaults, errors", function()
  local S = class.signature("test.Conv", "in_channels, out_channels, kernel_size, stride=1, " ..
    "padding={0, 0}, bias=true, mode='zeros', *, device=nil")
  local a = S(1, 16, { kernel_size = 3, stride = 2 })
  T.eq({ a.in_channels, a.out_channels, a.kernel_size, a.stride, a.bias, a.mode }, { 1, 16, 3, 2, true, "zeros" })
  T.eq(a.padding, nil)                                    -- a default that is not a literal: the caller's
  local b = S(1, 16, { 3, 3 })                            -- a list is a positional argument
  T.eq(b.kernel_size, { 3, 3 })
  local c = S { in_channels = 1, out_channels = 2, kernel_size = 5, device = "cpu" }
  T.eq({ c.in_channels, c.kernel_size, c.device }, { 1, 5, "cpu" })
  local d = S(1, 2, 3, nil, nil, false)                   -- holes stay holes, false stays false
  T.eq({ d.stride, d.bias }, { 1, false })
  T.raises(function() S(1, 16, { kernel_size = 3, strid = 2 }) end,
    "test.Conv: unknown option 'strid' (did you mean 'stride'?)")
  T.raises(function() S(1, 16, 3, { kernel_size = 3 }) end, "test.Conv: argument 'kernel_size' given twice")
  T.raises(function() S(1, 16, { 3, 3, stride = 2 }) end, "test.Conv: the last argument mixes list entries")
  T.raises(function() S(1, 16, 3, { [true] = 1 }) end, "test.Conv: unknown option [true]")   -- not a list
  T.raises(function() S(1, 2, 3, 4, 5, 6, 7, 8) end, "test.Conv: too many arguments (8 given, at most 7 positional)")
  T.eq(S(1, 2, 3, nil, nil, nil, nil, nil, nil).stride, 1)        -- trailing nils are not arguments
  T.eq(S(1, 2, 3, { stride = 4 }, nil, nil).stride, 4)
  T.raises(function() S(1, 2, 3, 4, 5, 6, 7, "cpu") end, "too many arguments")   -- device is keyword-only
  T.eq(class.call_form("test.Conv"), "test.Conv(in_channels, out_channels, kernel_size, stride=1, " ..
    "padding={0, 0}, bias=true, mode='zeros', *, device=nil)")
  T.ok(class.signatures["test.Conv"] == S)
end)

T.done()
