-- nn.fully_shard on 2 (or more) ranks (run by tests/sh/test_dist.sh under mpirun): training
-- with sharded parameters equals single-process training on the combined batch.
local T = require "testing"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional
local dist = torch.distributed
dist.init_process_group { backend = "mpi", timeout = 60 }
local rank, world = dist.get_rank(), dist.get_world_size()

-- ---- models ----

local function mlp(seed, dtype)
  torch.manual_seed(seed)
  -- sizes that no world size divides evenly: 7*13+13 = 104, 13*11+11 = 154, 11*3+3 = 36
  return nn.Sequential(nn.Linear(7, 13), nn.Tanh(), nn.Linear(13, 11), nn.Tanh(), nn.Linear(11, 3)):to(dtype)
end

local LeNet = nn.Module:extend("FsdpTestLeNet")
function LeNet:__init()
  self.features = nn.Sequential(nn.Conv2d(1, 6, 5, { padding = 2 }), nn.Tanh(), nn.AvgPool2d(2),
                                nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2))
  self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Tanh(), nn.Linear(120, 84),
                                  nn.Tanh(), nn.Linear(84, 10))
end
function LeNet:forward(x) return self.classifier(self.features(x)) end
local function lenet(seed, dtype) torch.manual_seed(seed); return LeNet():to(dtype) end

local Tiny = nn.Module:extend("FsdpTestTransformer")
function Tiny:__init()
  self.embed = nn.Embedding(17, 16)
  self.layers = nn.ModuleList({
    nn.TransformerEncoderLayer(16, 2, { dim_feedforward = 32, dropout = 0.0, batch_first = true }),
    nn.TransformerEncoderLayer(16, 2, { dim_feedforward = 32, dropout = 0.0, batch_first = true }),
  })
  self.head = nn.Linear(16, 17)
end
function Tiny:forward(x)
  local h = self.embed(x)
  for i = 1, #self.layers do h = self.layers[i](h) end
  return self.head(h)
end
local function tiny(seed, dtype) torch.manual_seed(seed); return Tiny():to(dtype) end

-- ---- data: the whole batch of step s is the same on every rank; rank r takes its rows ----
local B = 3
local kinds = {
  mlp = { make = mlp, batch = function(s, dt)
    torch.manual_seed(1000 + s)
    return torch.randn(B * world, 7, { dtype = dt }), torch.randint(1, 4, { B * world })
  end, loss = function(out, y) return F.cross_entropy(out, y) end,
  units = function(m) return { m[1], m[3], m[5] } end },
  lenet = { make = lenet, batch = function(s, dt)
    torch.manual_seed(2000 + s)
    return torch.randn(B * world, 1, 28, 28, { dtype = dt }), torch.randint(1, 11, { B * world })
  end, loss = function(out, y) return F.cross_entropy(out, y) end,
  units = function(m) return { m.features, m.classifier[2], m.classifier } end },
  transformer = { make = tiny, batch = function(s)
    torch.manual_seed(3000 + s)
    return torch.randint(1, 18, { B * world, 5 }), torch.randint(1, 18, { B * world, 5 })
  end, loss = function(out, y) return F.cross_entropy(out:reshape(-1, 17), y:reshape(-1)) end,
  units = function(m) return { m.layers[1], m.layers[2] } end },
}

local function shard(x, y) return x:narrow(1, rank * B + 1, B), y:narrow(1, rank * B + 1, B) end

local function reference(kind, dtype, steps, make_opt)
  local k = kinds[kind]
  local m = k.make(11, dtype)
  local opt = make_opt(m:parameters())
  for s = 1, steps do
    local x, y = k.batch(s, dtype)
    opt:zero_grad()
    k.loss(m(x), y):backward()     -- mean over the combined batch = mean of the rank means
    opt:step()
  end
  return m
end

local function sharded(kind, dtype, steps, make_opt, opts)
  local k = kinds[kind]
  local m = k.make(11, dtype)
  for _, u in ipairs(k.units(m)) do nn.fully_shard(u, opts) end
  nn.fully_shard(m, opts)
  local opt = make_opt(m:parameters())
  for s = 1, steps do
    local x, y = shard(k.batch(s, dtype))
    opt:zero_grad()
    k.loss(m(x), y):backward()
    opt:step()
  end
  return m, opt
end

local function max_diff(sd, ref)
  local worst = 0
  for name, t in pairs(ref:state_dict()) do
    local v = sd[name]
    T.ok(v ~= nil, "full state dict has " .. name)
    if v == nil then return math.huge end
    T.eq(v.shape, t.shape, name .. ": shape")
    worst = math.max(worst, (v:to(torch.float64) - t:to(torch.float64)):abs():max():item())
  end
  return worst
end

-- Adam runs in float64 only, and not on the transformer: a gradient that is zero but for
-- rounding (attention's key bias; float32 sums in another order) Adam scales up to a full
-- step in whatever direction the rounding took
local sgd = function(ps) return optim.SGD(ps, { lr = 0.1, momentum = 0.9 }) end
local adam = function(ps) return optim.AdamW(ps, { lr = 1e-2, weight_decay = 0.01 }) end

for _, cfg in ipairs({
  { kind = "mlp", dtype = torch.float64, tol = 1e-12, opt = sgd, name = "MLP, float64, SGD" },
  { kind = "mlp", dtype = torch.float64, tol = 1e-12, opt = adam, name = "MLP, float64, AdamW" },
  { kind = "mlp", dtype = torch.float32, tol = 1e-5, opt = sgd, name = "MLP, float32, SGD" },
  { kind = "lenet", dtype = torch.float64, tol = 1e-12, opt = sgd, name = "LeNet-5, float64, SGD" },
  { kind = "lenet", dtype = torch.float32, tol = 1e-5, opt = sgd, name = "LeNet-5, float32, SGD" },
  { kind = "lenet", dtype = torch.float64, tol = 1e-12, opt = adam, name = "LeNet-5, float64, AdamW" },
  { kind = "transformer", dtype = torch.float64, tol = 1e-12, opt = sgd, name = "transformer, float64, SGD" },
  { kind = "transformer", dtype = torch.float32, tol = 1e-5, opt = sgd, name = "transformer, float32, SGD" },
}) do
  for _, raf in ipairs({ true, false }) do
    T.test(("%s, reshard_after_forward=%s: equals single-process training"):format(cfg.name, raf), function()
      local ref = reference(cfg.kind, cfg.dtype, 3, cfg.opt)
      local m = sharded(cfg.kind, cfg.dtype, 3, cfg.opt, { reshard_after_forward = raf })
      local full = nn.fsdp.full_state_dict(m, { rank0_only = false })
      local d = max_diff(full, ref)
      T.ok(d <= cfg.tol, ("largest difference %g (tolerance %g)"):format(d, cfg.tol))
      -- every rank ends with the same full model
      local t = torch.tensor({ d })
      dist.all_reduce(t, "max")
      T.ok(t:item() <= cfg.tol)
    end)
  end
end

T.test("parameters() are the shards: 1-D, and together exactly the model's elements", function()
  local m = mlp(11, torch.float64)
  local total = 0
  for _, p in ipairs(m:parameters()) do total = total + p:numel() end
  nn.fully_shard(m[1]); nn.fully_shard(m)
  local mine = 0
  for _, p in ipairs(m:parameters()) do
    T.eq(p:dim(), 1)
    T.ok(p.requires_grad and p.is_leaf)
    mine = mine + p:numel()
  end
  local t = torch.tensor({ mine }, { dtype = torch.int64 })
  dist.all_reduce(t)
  T.eq(t:item(), total)
  -- names are the original ones
  local names = {}
  for name in m:named_parameters() do names[#names + 1] = name end
  T.eq(table.concat(names, ","), "1.weight,1.bias,3.weight,3.bias,5.weight,5.bias")
end)

T.test("the sharded state_dict: pieces registered as ranges of the full parameters", function()
  local m = mlp(11, torch.float64)
  local ref = mlp(11, torch.float64):state_dict()
  nn.fully_shard(m[3]); nn.fully_shard(m)
  local sd = m:state_dict()
  for name, t in pairs(sd) do
    local info = dist.shard_info(t)
    T.ok(info ~= nil, name .. " is registered")
    T.eq(info.global_shape, ref[name].shape)
    local flat = ref[name]:reshape(-1)
    if t:numel() > 0 then T.eq((flat:narrow(1, info.offset + 1, t:numel()) - t):abs():max():item(), 0.0) end
  end
  -- load_state_dict of the same sharded state restores values
  local before = m:state_dict()
  for _, v in pairs(before) do before[_] = v:clone() end
  for _, p in ipairs(m:parameters()) do torch.no_grad(function() p:zero_() end) end
  m:load_state_dict(before)
  local after = m:state_dict()
  for name, v in pairs(before) do T.eq((after[name] - v):abs():sum():item(), 0.0) end
end)

T.test("full_state_dict on rank 0 loads into a plain model with the same outputs", function()
  local m = sharded("lenet", torch.float64, 2, sgd, {})
  local sd = nn.fsdp.full_state_dict(m)
  local x = kinds.lenet.batch(9, torch.float64)
  local y_sharded = torch.no_grad(function() return m(x) end)
  if rank == 0 then
    T.ok(sd ~= nil)
    local plain = lenet(99, torch.float64)
    plain:load_state_dict(sd)
    T.eq((plain(x) - y_sharded):abs():max():item(), 0.0)
  else
    T.ok(sd == nil)
  end
end)

T.test("collectives: a gather per unit in forward and in backward, one reduce-scatter each", function()
  for _, raf in ipairs({ true, false }) do
    local m = mlp(11, torch.float64)
    for _, u in ipairs(kinds.mlp.units(m)) do nn.fully_shard(u, { reshard_after_forward = raf }) end
    nn.fully_shard(m, { reshard_after_forward = raf })
    local x, y = shard(kinds.mlp.batch(1, torch.float64))
    F.cross_entropy(m(x), y):backward()
    local st = nn.fsdp.stats(m)
    T.eq(#st, 4)
    -- the root (no parameters of its own here) and units that stay gathered gather once
    for i = 2, 4 do
      T.eq(st[i].gathers, raf and 2 or 1, ("unit %d gathers (reshard_after_forward=%s)"):format(i, raf))
      T.eq(st[i].reduce_scatters, 1)
    end
    -- after backward nothing stays gathered; each shard has a gradient
    for _, p in ipairs(m:parameters()) do T.ok(p.grad ~= nil and p.grad:numel() == p:numel()) end
  end
end)

T.test("memory: shards + gradients + AdamW state are 1/world of the model, plus one unit gathered", function()
  -- a model whose parameters dominate: 4 blocks of 256x256
  collectgarbage(); collectgarbage()
  local base_bytes = torch.cpu_memory_stats().allocated
  torch.manual_seed(5)
  local blocks = {}
  for i = 1, 4 do blocks[i] = nn.Linear(256, 256) end
  local m = nn.Sequential(table.unpack(blocks))
  local full_bytes = 0
  for _, p in ipairs(m:parameters()) do full_bytes = full_bytes + p:numel() * p:element_size() end
  for i = 1, 4 do nn.fully_shard(m[i]) end
  nn.fully_shard(m)
  collectgarbage(); collectgarbage()
  local opt = optim.AdamW(m:parameters(), { lr = 1e-3 })
  local x = torch.randn(8, 256)
  opt:zero_grad(); m(x):sum():backward(); opt:step()
  -- what each rank keeps: shards, their gradients, the optimizer's two moments
  local kept = 0
  for _, p in ipairs(m:parameters()) do
    kept = kept + p:numel() * p:element_size()
    kept = kept + p.grad:numel() * p.grad:element_size()
    for _, v in pairs(opt.state[p]) do if torch.is_tensor(v) and v:dim() == 1 then kept = kept + v:numel() * v:element_size() end end
  end
  local unsharded = 4 * full_bytes        -- parameters, gradients, exp_avg, exp_avg_sq
  T.ok(kept <= unsharded / world * 1.02 + 4096, ("kept %d bytes; unsharded %d over %d ranks"):format(kept, unsharded, world))
  local mem = nn.fsdp.memory(m)
  -- gathered at once: at most the unit computing and the one prefetched
  T.ok(mem.peak_gathered_bytes <= 2 * mem.largest_unit_bytes, ("peak gathered %d, largest unit %d"):format(
    mem.peak_gathered_bytes, mem.largest_unit_bytes))
  T.ok(mem.peak_gathered_bytes >= mem.largest_unit_bytes)
  -- the allocator agrees: after the step, memory held is the shards' share, not the model's
  collectgarbage(); collectgarbage()
  local held = torch.cpu_memory_stats().allocated - base_bytes
  T.ok(held < unsharded / world * 1.05 + 65536, ("%d bytes allocated by the sharded model; %d unsharded"):format(held, unsharded))
  -- and memory stays bounded over steps
  for _ = 1, 20 do opt:zero_grad(); m(x):sum():backward(); opt:step() end
  collectgarbage(); collectgarbage()
  local later = torch.cpu_memory_stats().allocated - base_bytes
  T.ok(later <= held + 65536, ("%d bytes after 20 more steps, %d after one"):format(later, held))
end)

T.test("mixed precision: bfloat16 compute, float32 shards, float32 reduction", function()
  local ref = reference("mlp", torch.float32, 2, sgd)
  local m = sharded("mlp", torch.float32, 2, sgd,
    { mp_policy = { param_dtype = torch.bfloat16, reduce_dtype = torch.float32 } })
  for _, p in ipairs(m:parameters()) do T.eq(p.dtype, torch.float32) end
  local full = nn.fsdp.full_state_dict(m, { rank0_only = false })
  local d = max_diff(full, ref)
  T.ok(d < 0.05 and d > 0, ("bf16 compute is close to float32, not equal (difference %g)"):format(d))
  -- during forward the module computes in bfloat16
  local seen
  local h = m[1]:register_forward_hook(function(mod) seen = mod.weight.dtype end)
  m(shard(kinds.mlp.batch(1, torch.float32)))
  h.remove()
  T.eq(seen, torch.bfloat16)
end)

T.test("eval under no_grad reshards; train again afterwards", function()
  local m = sharded("mlp", torch.float64, 1, sgd, {})
  local x = kinds.mlp.batch(4, torch.float64)
  torch.no_grad(function() m(x) end)
  for _, u in ipairs(kinds.mlp.units(m)) do
    for _, p in ipairs(u:parameters()) do T.eq(p:dim(), 1) end
  end
  local mem = nn.fsdp.memory(m)
  T.ok(mem.peak_gathered_bytes > 0)
  local x2, y2 = shard(kinds.mlp.batch(5, torch.float64))
  F.cross_entropy(m(x2), y2):backward()
  for _, p in ipairs(m:parameters()) do T.ok(p.grad ~= nil) end
end)

T.test("bad input: errors name fully_shard and the argument", function()
  T.raises(function() nn.fully_shard(42) end, "nn.fully_shard: argument 'module' must be a module")
  T.raises(function() nn.fully_shard(nn.Linear(2, 2), { reshard_after_foward = true }) end, "reshard_after_foward")
  T.raises(function() nn.fully_shard(nn.Linear(2, 2), { reshard_after_forward = 1 }) end, "'reshard_after_forward' must be a boolean")
  T.raises(function() nn.fully_shard(nn.Linear(2, 2), { mp_policy = { param_dtype = torch.int32 } }) end,
    "mp_policy.param_dtype must be a floating dtype")
  T.raises(function() nn.fully_shard(nn.Linear(2, 2), { mp_policy = { param_type = torch.float16 } }) end, "param_type")
  local l = nn.Linear(2, 2)
  nn.fully_shard(l)
  T.raises(function() nn.fully_shard(l) end, "already sharded")
  T.raises(function() nn.fsdp.full_state_dict(nn.Linear(2, 2)) end, "not sharded")
end)

T.done()
