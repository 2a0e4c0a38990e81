-- nn.Module mechanics: registration, ordering, state_dict, hooks, modes, conversions, printing,
-- containers, nn.init and nn.utils.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local nn = require "nn"
local F = nn.functional

torch.manual_seed(0)

local Net = nn.Module:extend("Net")
function Net:__init()
  self.fc1 = nn.Linear(4, 8)
  self.act = nn.ReLU()
  self.scale = nn.Parameter(torch.ones(1))
  self:register_buffer("steps", torch.zeros(1))
  self.fc2 = nn.Linear(8, 2)
  self.note = "plain"
end
function Net:forward(x) return self.fc2(self.act(self.fc1(x))) * self.scale end

local function names(list) local r = {} for i, e in ipairs(list) do r[i] = e[1] end return r end

T.test("assigning Parameters and Modules registers them, in order", function()
  local n = Net()
  T.eq(names(n:named_parameters()), { "scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias" })
  T.eq(#n:parameters(), 5)
  T.eq(names(n:named_children()), { "fc1", "act", "fc2" })
  T.eq(names(n:named_modules()), { "", "fc1", "act", "fc2" })
  T.eq(names(n:named_buffers()), { "steps" })
  T.eq(n.note, "plain")
  T.ok(n.training == true)
  -- iteration as `for name, p in m:named_parameters() do`
  local seen = {}
  for name, p in n:named_parameters() do seen[#seen + 1] = name; T.ok(torch.is_tensor(p)) end
  T.eq(seen, { "scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias" })
  -- reassigning nil unregisters
  n.scale = nil
  T.eq(#n:parameters(), 4)
  T.eq(n.scale, nil)
  -- a plain tensor can't replace a parameter
  T.raises(function() n.fc1.weight = torch.zeros(8, 4) end, "Linear", "parameter 'weight'")
  -- shared parameters are listed once
  local s = nn.Sequential(n.fc1, n.fc1)
  T.eq(#s:parameters(), 2)
end)

T.test("subclass of a subclass; super's forward; __init may call the parent's", function()
  local Sub = Net:extend("Sub")
  function Sub:__init() Net.__init(self); nn.Module.__init(self); self.extra = nn.Linear(2, 1) end
  function Sub:forward(x) return self.extra(Net.forward(self, x)) end
  T.ok(Sub.super == Net)
  local s = Sub()
  T.tensor(s(torch.randn(3, 4)), nil, { shape = { 3, 1 } })
  T.ok(nn.isinstance(s, Net) and nn.isinstance(s, nn.Module) and not nn.isinstance(Net(), Sub))
end)

T.test("state_dict keys and order follow PyTorch (Sequential 1-based)", function()
  local m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 2, { bias = false }))
  local keys = {}
  for k in pairs(m:state_dict()) do keys[#keys + 1] = k end
  T.eq(keys, { "1.weight", "1.bias", "2.weight", "2.bias", "2.running_mean", "2.running_var",
               "2.num_batches_tracked", "4.weight" })
  T.eq(nn.utils.keys(m:state_dict()), keys)
  T.eq(m:state_dict()["2.num_batches_tracked"].dtype.name, "int64")
  -- non-persistent buffers stay out
  local n = nn.Module()
  n:register_buffer("a", torch.ones(1))
  n:register_buffer("b", torch.ones(1), false)
  T.eq(nn.utils.keys(n:state_dict()), { "a" })
  T.eq(#n:buffers(), 2)
end)

T.test("load_state_dict round trip and strict errors naming the keys", function()
  local a, b = Net(), Net()
  b:load_state_dict(a:state_dict())
  T.tensor(b.fc1.weight, a.fc1.weight:totable())
  -- in place: b's tensors stay the same objects
  local w = b.fc2.weight
  b:load_state_dict(Net():state_dict())
  T.ok(rawequal(w, b.fc2.weight))
  local sd = a:state_dict()
  sd["fc1.bias"] = nil
  sd["extra.weight"] = torch.zeros(1)
  local err = T.raises(function() b:load_state_dict(sd) end, "Error(s) in loading state_dict for Net",
    'Missing key(s) in state_dict: "fc1.bias"', 'Unexpected key(s) in state_dict: "extra.weight"')
  local r = b:load_state_dict(sd, { strict = false })
  T.eq(r.missing_keys, { "fc1.bias" })
  T.eq(r.unexpected_keys, { "extra.weight" })
  local sd2 = a:state_dict()
  sd2["fc2.weight"] = torch.zeros(3, 8)
  T.raises(function() b:load_state_dict(sd2, { strict = false }) end,
    "size mismatch for fc2.weight: copying a param with shape torch.Size([3, 8]) from checkpoint, the shape in current model is torch.Size([2, 8])")
end)

T.test("train/eval, training() and evaluate() (Torch7) reach every submodule", function()
  local n = Net()
  n:eval()
  T.ok(n.training == false and n.fc1.training == false)
  n:train()
  T.ok(n.fc1.training == true)
  n:evaluate()
  T.ok(n.act.training == false)
  n:training()
  T.ok(n.act.training == true and n.training == true)
  T.raises(function() local b = true; b() end, "attempt to call a boolean value")
end)

T.test("forward hooks and pre-hooks, removable handles", function()
  local m = nn.Linear(2, 2)
  local calls = {}
  local h1 = m:register_forward_pre_hook(function(mod, inputs)
    calls[#calls + 1] = "pre"
    return inputs[1] * 0   -- replaces the input
  end)
  local h2 = m:register_forward_hook(function(mod, inputs, out)
    calls[#calls + 1] = "post"
    T.ok(mod == m)
    return out + 1
  end)
  local y = m(torch.ones(1, 2))
  T.eq(calls, { "pre", "post" })
  T.tensor(y, (m.bias + 1):view(1, 2):totable(), { tol = 1e-6 })
  h1.remove(); h2:remove()
  local y2 = m(torch.ones(1, 2))
  T.tensor(y2, F.linear(torch.ones(1, 2), m.weight, m.bias):totable(), { tol = 1e-6 })
  T.eq(#calls, 2)
end)

T.test("zero_grad, requires_grad_, gradients flow to parameters", function()
  local n = Net()
  n(torch.randn(5, 4)):sum():backward()
  for name, p in n:named_parameters() do T.ok(p.grad ~= nil, name .. " has a grad") end
  n:zero_grad({ set_to_none = false })
  T.eq(n.fc1.weight.grad:abs():sum():item(), 0.0)
  n:zero_grad()
  T.eq(n.fc1.weight.grad, nil)
  n:requires_grad_(false)
  T.ok(not n.fc2.bias.requires_grad)
  T.ok(not n(torch.randn(2, 4)).requires_grad)
end)

T.test("to(dtype), double(), float(), apply", function()
  local m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
  m:double()
  T.eq(m[1].weight.dtype.name, "float64")
  T.eq(m[2].running_mean.dtype.name, "float64")
  T.eq(m[2].num_batches_tracked.dtype.name, "int64")
  T.ok(m[1].weight.requires_grad and nn.is_parameter(m[1].weight))
  T.eq(m[1](torch.randn(4, 3, { dtype = torch.float64 })).dtype.name, "float64")
  m:to("float32")
  T.eq(m[1].bias.dtype.name, "float32")
  m:to({ dtype = torch.float64 })
  T.eq(m[1].bias.dtype.name, "float64")
  m:float()
  T.raises(function() m:to(torch.int64) end, "floating point")
  T.raises(function() m:to("cuda") end, "cuda")
  -- a shared parameter stays shared
  local l = nn.Linear(2, 2)
  local tied = nn.Sequential(l, nn.Tanh(), l):double()
  T.ok(rawequal(tied[1].weight, tied[3].weight))
  T.eq(#tied:parameters(), 2)
  local visited = {}
  m:apply(function(mod) visited[#visited + 1] = mod:_get_name() end)
  T.eq(visited, { "Linear", "BatchNorm1d", "Sequential" })
  m:apply(function(mod) if mod.weight and mod:_get_name() == "Linear" then nn.init.zeros_(mod.weight) end end)
  T.eq(m[1].weight:abs():sum():item(), 0.0)
end)

T.test("tostring prints the tree like PyTorch", function()
  local m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 2, { bias = false }))
  T.eq(tostring(m), table.concat({
    "Sequential(",
    "  (1): Linear(in_features=4, out_features=8, bias=True)",
    "  (2): ReLU()",
    "  (3): Dropout(p=0.2, inplace=False)",
    "  (4): Linear(in_features=8, out_features=2, bias=False)",
    ")" }, "\n"))
  T.eq(tostring(Net()), table.concat({
    "Net(",
    "  (fc1): Linear(in_features=4, out_features=8, bias=True)",
    "  (act): ReLU()",
    "  (fc2): Linear(in_features=8, out_features=2, bias=True)",
    ")" }, "\n"))
  local nested = nn.Sequential(nn.Sequential(nn.Tanh()), nn.BatchNorm2d(3))
  T.eq(tostring(nested), table.concat({
    "Sequential(",
    "  (1): Sequential(",
    "    (1): Tanh()",
    "  )",
    "  (2): BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)",
    ")" }, "\n"))
end)

T.test("Sequential / ModuleList / ModuleDict", function()
  local s = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
  T.eq(#s, 2)
  T.eq(s[1]:_get_name(), "Linear")
  T.eq(s[-1]:_get_name(), "Tanh")
  s:append(nn.Linear(3, 1))
  T.eq(#s, 3)
  T.tensor(s(torch.randn(5, 2)), nil, { shape = { 5, 1 } })
  T.raises(function() return s[7] end, "Sequential", "out of range")
  T.raises(function() nn.Sequential(nn.Linear(2, 2), 5) end, "Sequential", "argument 2 must be a Module")
  local named = nn.Sequential({ { "conv", nn.Linear(2, 2) }, { "act", nn.ReLU() } })
  T.eq(names(named:named_children()), { "conv", "act" })
  local l = nn.ModuleList({ nn.Linear(1, 1), nn.Linear(1, 1) })
  l:append(nn.Linear(1, 1))
  T.eq(#l, 3)
  T.eq(#l:parameters(), 6)
  local n = 0
  for i, m in pairs(l) do n = n + i end
  T.eq(n, 6)
  local d = nn.ModuleDict({ { "b", nn.Linear(1, 1) }, { "a", nn.ReLU() } })
  T.eq(d:keys(), { "b", "a" })
  T.eq(d.a:_get_name(), "ReLU")
  T.eq(nn.utils.keys(d:state_dict()), { "b.weight", "b.bias" })
  local Sub = nn.Sequential:extend("MySeq")
  T.eq(tostring(Sub(nn.ReLU())), "MySeq(\n  (1): ReLU()\n)")
end)

T.test("nn.Parameter and register_* argument errors", function()
  T.raises(function() nn.Parameter(5) end, "nn.Parameter", "expected a tensor")
  T.raises(function() nn.Parameter(torch.tensor({ 1, 2 })) end, "floating point")
  local p = nn.Parameter(torch.tensor({ 1, 2 }), false)
  T.ok(nn.is_parameter(p) and not p.requires_grad)
  local m = nn.Module()
  T.raises(function() m:register_buffer("a.b", torch.ones(1)) end, "can't be empty or contain")
  T.raises(function() m:register_parameter("w", "x") end, "register_parameter", "expects a tensor")
  T.raises(function() nn.Linear(4, 2)(torch.randn(3, 5)) end, "Linear: expected input with last dimension 4, got 5")
  T.raises(function() nn.Module()(torch.ones(1)) end, "Module: forward() is not implemented")
end)

T.test("nn.init: bounds, gains, fans", function()
  local w = torch.empty(64, 32)
  nn.init.kaiming_uniform_(w, math.sqrt(5))
  local bound = 1 / math.sqrt(32)
  T.ok(w:abs():max():item() <= bound + 1e-6)
  nn.init.xavier_uniform_(w)
  T.ok(w:abs():max():item() <= math.sqrt(6 / 96) + 1e-6)
  nn.init.constant_(w, 0.5)
  T.eq(w:mean():item(), 0.5)
  nn.init.ones_(w); T.eq(w:sum():item(), 64.0 * 32)
  nn.init.zeros(w); T.eq(w:sum():item(), 0.0)
  T.near(nn.init.calculate_gain("relu"), math.sqrt(2))
  T.near(nn.init.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / 1.04))
  T.near(nn.init.calculate_gain("tanh"), 5 / 3)
  local fi, fo = nn.init._calculate_fan_in_and_fan_out(torch.empty(8, 3, 5, 5))
  T.eq({ fi, fo }, { 75, 200 })
  local t = torch.empty(10000)
  nn.init.trunc_normal_(t, 0, 1, -0.5, 0.5)
  T.ok(t:min():item() >= -0.5 and t:max():item() <= 0.5)
  local n = torch.empty(20000)
  nn.init.normal_(n, 2, 0.5)
  T.near(n:mean():item(), 2, 0.02); T.near(n:std():item(), 0.5, 0.05)
  local q = torch.empty(6, 10)
  nn.init.orthogonal_(q)
  T.tensor(q:mm(q:t()), torch.eye(6):totable(), { tol = 1e-5 })
  local q2 = torch.empty(10, 4, { dtype = torch.float64 })
  nn.init.orthogonal_(q2, 2)
  T.tensor(q2:t():mm(q2), (torch.eye(4, { dtype = torch.float64 }) * 4):totable(), { tol = 1e-9 })
  T.raises(function() nn.init.xavier_uniform_(torch.empty(3)) end, "fewer than 2 dimensions")
  T.ok(nn.init.kaiming_normal == nn.init.kaiming_normal_)
end)

T.test("nn.utils: clip_grad_norm_, clip_grad_value_, parameters <-> vector", function()
  local a = nn.Parameter(torch.zeros(2))
  local b = nn.Parameter(torch.zeros(3))
  a.grad = torch.tensor({ 3.0, 4.0 })
  b.grad = torch.tensor({ 0.0, 0.0, 12.0 })
  local total = nn.utils.clip_grad_norm_({ a, b }, 1.3)
  T.near(total:item(), 13.0, 1e-6)
  T.tensor(a.grad, { 0.3, 0.4 }, { tol = 1e-5 })
  T.tensor(b.grad, { 0, 0, 1.2 }, { tol = 1e-5 })
  -- below the limit nothing changes
  nn.utils.clip_grad_norm_({ a, b }, 100)
  T.tensor(a.grad, { 0.3, 0.4 }, { tol = 1e-5 })
  a.grad = torch.tensor({ 3.0, -4.0 })
  T.near(nn.utils.clip_grad_norm_({ a }, 1, "inf"):item(), 4.0)
  a.grad = torch.tensor({ 3.0, -4.0 })
  nn.utils.clip_grad_value_({ a }, 2)
  T.tensor(a.grad, { 2, -2 })
  local m = nn.Linear(3, 2)
  local v = nn.utils.parameters_to_vector(m:parameters())
  T.eq(v.shape, { 8 })
  nn.utils.vector_to_parameters(torch.arange(8):float(), m:parameters())
  T.tensor(m.bias, { 6, 7 })
  T.tensor(m.weight, { { 0, 1, 2 }, { 3, 4, 5 } })
  T.raises(function() nn.utils.vector_to_parameters(torch.zeros(5), m) end, "vec has 5 elements")
end)

T.done()
