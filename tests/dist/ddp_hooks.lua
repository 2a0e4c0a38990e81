-- nn.DistributedDataParallel on 2 ranks: buckets rebuilt in the order gradients became
-- ready, communication hooks, and torch.futures (run by tests/sh/test_dist.sh under mpirun).
local T = require "testing"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional
local dist = torch.distributed
dist.init_process_group { backend = "mpi", timeout = 30 }
local rank, world = dist.get_rank(), dist.get_world_size()
torch.set_default_dtype(torch.float64)
local hooks = dist.algorithms.ddp_comm_hooks.default_hooks

-- registers head, left, right, (spare): the head is used last in forward, so its gradients
-- are ready first, the opposite of the registration order DDP starts from. With flip the
-- two branches are computed in the other order, which changes the order backward reaches
-- them (the autograd engine runs the newest node first): rank 1 flips, so the ranks
-- observe different ready orders.
local Branchy = nn.Module:extend("Branchy")
function Branchy:__init(spare)
  self.head = nn.Linear(8, 3)
  self.left = nn.Linear(6, 8)
  self.right = nn.Linear(6, 8)
  if spare then self.spare = nn.Linear(2, 2) end   -- never used
  self.flip = false
end
function Branchy:forward(x)
  local l, r
  if self.flip then r = self.right(x); l = self.left(x) else l = self.left(x); r = self.right(x) end
  return self.head(torch.tanh(l) + torch.tanh(r))
end

local function make_model(seed, spare)
  torch.manual_seed(seed)
  local m = Branchy(spare)
  m.flip = rank == 1
  return m
end

local B = 4
local function batch(s)
  torch.manual_seed(1000 + s)
  return torch.randn(B * world, 6), torch.randint(1, 4, { B * world })
end
local function shard(x, y) return x:narrow(1, rank * B + 1, B), y:narrow(1, rank * B + 1, B) end

local function flat_params(m)
  local ps = {}
  for i, p in ipairs(m:parameters()) do ps[i] = p:detach():reshape(-1) end
  return torch.cat(ps)
end

local function gather(t)
  local all = {}
  for r = 1, world do all[r] = torch.zeros(t:numel(), { dtype = t.dtype }) end
  dist.all_gather(all, t)
  return all
end

local function check_identical(t, what)
  local all = gather(t)
  for r = 2, world do T.eq((all[r] - all[1]):abs():max():item(), 0.0, what .. ": ranks differ") end
end

-- the buckets' parameter names, one after the other
local function layout_names(ddp)
  local out = {}
  for _, b in ipairs(ddp:bucket_info()) do
    for _, n in ipairs(b.names) do out[#out + 1] = n end
  end
  return out
end

local SMALL = { bucket_cap_mb = 0.0005, first_bucket_bytes = 256 }
local function with(opts, extra)
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- ---- torch.futures ----

T.test("Future: set_result, wait, value, done", function()
  local Future = torch.futures.Future
  T.ok(Future == dist.futures.Future)
  local f = Future()
  T.eq(f:done(), false)
  T.raises(function() f:value() end, "Future.value", "not completed")
  T.raises(function() f:wait() end, "Future.wait", "nothing will complete it")
  f:set_result(42)
  T.eq(f:done(), true)
  T.eq(f:wait(), 42)
  T.eq(f:value(), 42)
  T.raises(function() f:set_result(1) end, "Future.set_result", "already completed")
  local e = Future()
  e:set_exception("broken pipe")
  T.raises(function() e:wait() end, "broken pipe")
  T.raises(function() e:value() end, "broken pipe")
end)

T.test("Future: then_, fut['then'], callbacks and errors", function()
  local Future = dist.futures.Future
  local f = Future()
  local seen
  local g = f:then_(function(p) seen = p; return p:value() * 2 end)
  local h = g["then"](g, function(p) return p:value() + 1 end)
  T.eq(g:done(), false)
  local cb = 0
  f:add_done_callback(function() cb = cb + 1 end)
  f:set_result(5)
  T.ok(rawequal(seen, f), "the callback gets the parent future")
  T.eq(g:wait(), 10)
  T.eq(h:wait(), 11)
  T.eq(cb, 1)
  -- on a completed future the callback runs at once
  local now = f:then_(function(p) return p:value() - 5 end)
  T.eq(now:done(), true)
  T.eq(now:value(), 0)
  -- an error in the callback completes the child with it; the chain passes it on
  local bad = f:then_(function() error("callback failed") end)
  local after = bad:then_(function(p) return p:value() end)
  T.raises(function() bad:wait() end, "callback failed")
  T.raises(function() after:wait() end, "callback failed")
  T.raises(function() f:then_(42) end, "Future.then_", "'callback' must be a function")
  T.raises(function() f:add_done_callback("x") end, "Future.add_done_callback", "function")
  -- a child of a future nobody completes cannot be waited for
  local orphan = Future():then_(function() return 1 end)
  T.raises(function() orphan:wait() end, "nothing will complete it")
end)

T.test("Future: collect_all, wait_all", function()
  local Future = dist.futures.Future
  local a, b = Future(), Future()
  local all = torch.futures.collect_all({ a, b })
  a:set_result(1)
  T.eq(all:done(), false)
  b:set_result(2)
  T.eq(all:done(), true)
  T.ok(rawequal(all:wait()[2], b))
  T.eq(torch.futures.wait_all({ a, b })[2], 2)
  T.raises(function() torch.futures.wait_all({ a, 3 }) end, "wait_all", "futures[2]")
  T.raises(function() torch.futures.collect_all(3) end, "collect_all", "list of futures")
end)

T.test("Work:get_future: the output tensors, after the collective", function()
  local t = torch.full({ 5 }, rank + 1.0)
  local work = dist.all_reduce(t, { async_op = true })
  local fut = work:get_future()
  T.ok(rawequal(fut, work:get_future()), "one future per work")
  local doubled = fut:then_(function(f) return f:value()[1] * 2 end)
  local want = world * (world + 1) / 2
  T.eq(doubled:wait():sum():item(), 5 * 2 * want)
  T.eq(fut:done(), true)
  T.ok(rawequal(fut:value()[1], t), "the value is {tensor}")
  T.eq(t:sum():item(), 5 * want)
  -- a non-contiguous tensor: the future's tensor is the caller's, written back
  local m = torch.full({ 3, 2 }, rank + 1.0):t()
  local v = dist.all_reduce(m, { op = "avg", async_op = true }):get_future():wait()[1]
  T.ok(rawequal(v, m))
  T.eq(m:sum():item(), 6 * (world + 1) / 2)
  -- broadcast and all_gather futures
  local s = torch.full({ 2 }, rank + 0.0)
  T.eq(dist.broadcast(s, 1, { async_op = true }):get_future():wait()[1]:sum():item(), 2.0)
  local list = { torch.zeros(2), torch.zeros(2) }
  local got = dist.all_gather(list, torch.full({ 2 }, rank + 1.0), { async_op = true }):get_future():wait()
  T.ok(rawequal(got, list))
  T.eq(list[2]:sum():item(), 4.0)
  -- polling: done() turns true once the work is (it may already be)
  local w = dist.all_reduce(torch.ones(3), { async_op = true }):get_future()
  w:wait()
  T.eq(w:done(), true)
end)

-- ---- bucket rebuild ----

T.test("buckets are rebuilt once, in rank 0's ready order, the same on every rank", function()
  local m = make_model(7)
  local ddp = nn.DistributedDataParallel(m, SMALL)
  local params = m:named_parameters()
  local index = {}
  for i, e in ipairs(params) do index[e[1]] = i end
  -- the first layout: reverse registration order
  local first = layout_names(ddp)
  for k = 1, #params do T.eq(first[k], params[#params + 1 - k][1]) end
  T.eq(ddp:buckets_rebuilt(), false)
  T.ok(#ddp:bucket_info() >= 3, "several buckets")

  -- the test's own record of the order gradients become ready on this rank
  local ready, recording = {}, true
  for _, e in ipairs(params) do
    e[2]:register_post_accumulate_grad_hook(function() if recording then ready[#ready + 1] = index[e[1]] end end)
  end
  local x, y = shard(batch(1))
  F.cross_entropy(ddp(x), y):backward()
  recording = false
  T.eq(#ready, #params)
  T.eq(ddp:buckets_rebuilt(), true)

  -- rank 0's order, as recorded here
  local mine = torch.tensor(ready, { dtype = torch.int64 })
  local orders = gather(mine)
  T.ok((orders[1] - orders[2]):abs():sum():item() > 0,
    "the test needs the ranks to see different ready orders (rank 1 flips its branches)")
  local now = layout_names(ddp)
  for k = 1, #params do T.eq(index[now[k]], orders[1][k], "bucket order follows rank 0's ready order") end
  T.ok(now[1] ~= first[1], "the layout changed")
  -- every rank has the same layout
  local lay = {}
  for k, n in ipairs(now) do lay[k] = index[n] end
  check_identical(torch.tensor(lay, { dtype = torch.int64 }), "layout")
  -- size caps and dtype still hold: the first bucket small, the others under the cap
  local info = ddp:bucket_info()
  T.ok(info[1].numel * 8 <= 256 or #info[1].names == 1, "first bucket within first_bucket_bytes")
  for i = 2, #info do
    T.ok(info[i].numel * 8 <= 0.0005 * 1024 * 1024 or #info[i].names == 1, "bucket within bucket_cap_mb")
  end
  -- rebuilt once: the second iteration keeps the layout
  F.cross_entropy(ddp(shard(batch(2))), select(2, shard(batch(2)))):backward()
  local again = layout_names(ddp)
  for k = 1, #params do T.eq(again[k], now[k]) end
end)

local function train(opts, steps, hook, state, spare)
  local m = make_model(7, spare)
  local ddp = nn.DistributedDataParallel(m, opts)
  if hook then ddp:register_comm_hook(state, hook) end
  local opt = optim.SGD(ddp:parameters(), { lr = 0.1 })
  for s = 1, steps do
    local x, y = shard(batch(s))
    opt:zero_grad()
    F.cross_entropy(ddp(x), y):backward()
    opt:step()
  end
  return m, ddp
end

local function reference(steps, spare)
  local m = make_model(7, spare)
  m.flip = false
  local opt = optim.SGD(m:parameters(), { lr = 0.1 })
  for s = 1, steps do
    local x, y = batch(s)
    opt:zero_grad()
    F.cross_entropy(m(x), y):backward()
    opt:step()
  end
  return m
end

for _, cfg in ipairs({
  { name = "small buckets", opts = SMALL },
  { name = "default buckets", opts = {} },
  { name = "gradient_as_bucket_view", opts = with(SMALL, { gradient_as_bucket_view = true }) },
  { name = "find_unused_parameters", opts = with(SMALL, { find_unused_parameters = true }), spare = true },
  { name = "find_unused_parameters + gradient_as_bucket_view",
    opts = with(SMALL, { find_unused_parameters = true, gradient_as_bucket_view = true }), spare = true },
}) do
  T.test("rebuilt buckets: training matches one process on the combined batch: " .. cfg.name, function()
    local m, ddp = train(cfg.opts, 5, nil, nil, cfg.spare)
    T.eq(ddp:buckets_rebuilt(), true)
    check_identical(flat_params(m), cfg.name)
    local d = (flat_params(m) - flat_params(reference(5, cfg.spare))):abs():max():item()
    T.ok(d < 1e-12, ("differs from single-process training by %g"):format(d))
    local names = layout_names(ddp)
    if cfg.spare then
      -- the unused parameters got no gradient: they go last
      T.ok(names[#names]:match("^spare%.") and names[#names - 1]:match("^spare%."), "spare.* last")
      T.eq(m.spare.weight.grad:abs():sum():item(), 0.0)
    end
    if cfg.opts.gradient_as_bucket_view then
      -- the gradients are views of the new buckets
      for _, b in ipairs(ddp._reducer.buckets) do b.flat:fill_(b.index) end
      for i, b in ipairs(ddp._reducer.buckets) do
        for _, p in ipairs(b.params) do
          T.eq(p.grad:min():item(), i + 0.0, "grad is a view of bucket " .. i)
          T.eq(p.grad:max():item(), i + 0.0)
        end
      end
    end
  end)
end

T.test("mixed dtypes: one dtype per bucket after the rebuild, gradients as one process", function()
  local Mixed = nn.Module:extend("Mixed")
  function Mixed:__init()
    self.out = nn.Linear(8, 3):to(torch.float32)
    self.a = nn.Linear(6, 8)
    self.b = nn.Linear(8, 8):to(torch.float32)
  end
  function Mixed:forward(x)
    local h = torch.tanh(self.a(x)):to(torch.float32)
    return self.out(torch.tanh(self.b(h)))
  end
  local function make() torch.manual_seed(3); return Mixed() end
  local m = make()
  local ddp = nn.DistributedDataParallel(m, SMALL)
  local x, y = shard(batch(1))
  F.cross_entropy(ddp(x), y):backward()
  T.eq(ddp:buckets_rebuilt(), true)
  local dtype_of, count = {}, {}
  for _, e in ipairs(m:named_parameters()) do dtype_of[e[1]] = e[2].dtype end
  for _, b in ipairs(ddp:bucket_info()) do
    for _, n in ipairs(b.names) do
      T.ok(dtype_of[n] == b.dtype, n .. " in a bucket of another dtype")
      count[n] = (count[n] or 0) + 1
    end
  end
  for n in pairs(dtype_of) do T.eq(count[n], 1, n .. " in exactly one bucket") end
  -- the buckets follow the ready order: out's gradients first
  T.ok(ddp:bucket_info()[1].names[1]:match("^out%."), "bucket 1 starts with out")
  local ref = make()
  local X, Y = batch(1)
  F.cross_entropy(ref(X), Y):backward()
  local ps, rs = m:parameters(), ref:parameters()
  for i = 1, #ps do
    local d = (ps[i].grad - rs[i].grad):abs():max():item()
    T.ok(d < 1e-5, ("param %d grad differs by %g"):format(i, d))
  end
end)

-- ---- communication hooks ----

T.test("default hooks are reachable under both names", function()
  T.ok(nn.DistributedDataParallel.comm_hooks == hooks)
  T.ok(type(hooks.allreduce_hook) == "function" and type(hooks.fp16_compress_hook) == "function"
       and type(hooks.bf16_compress_hook) == "function")
end)

T.test("allreduce_hook trains exactly as no hook", function()
  local plain = train(SMALL, 5)
  local hooked = train(SMALL, 5, hooks.allreduce_hook, nil)
  T.eq((flat_params(plain) - flat_params(hooked)):abs():max():item(), 0.0)
  local grouped = train(SMALL, 5, hooks.allreduce_hook, dist.group_world())
  T.eq((flat_params(plain) - flat_params(grouped)):abs():max():item(), 0.0)
  local d = (flat_params(hooked) - flat_params(reference(5))):abs():max():item()
  T.ok(d < 1e-12, ("differs from single-process training by %g"):format(d))
end)

-- one backward on step 1's shard; the gradients of m
local function grads_of(opts, hook, state)
  local m = make_model(7)
  local ddp = nn.DistributedDataParallel(m, opts)
  if hook then ddp:register_comm_hook(state, hook) end
  local x, y = shard(batch(1))
  F.cross_entropy(ddp(x), y):backward()
  local out = {}
  for i, p in ipairs(m:parameters()) do out[i] = p.grad:clone() end
  return out, ddp
end

-- this rank's own gradients of step 1 (no reduction)
local function local_grads()
  local m = make_model(7)
  local x, y = shard(batch(1))
  F.cross_entropy(m(x), y):backward()
  local out = {}
  for i, p in ipairs(m:parameters()) do out[i] = p.grad:clone() end
  return out
end

for _, c in ipairs({
  { name = "fp16_compress_hook", hook = hooks.fp16_compress_hook, dtype = torch.float16, tol = 2e-3 },
  { name = "bf16_compress_hook", hook = hooks.bf16_compress_hook, dtype = torch.bfloat16, tol = 1.6e-2 },
}) do
  T.test(c.name .. ": the gradients within the compressed dtype's precision, reduced in it", function()
    local ref = grads_of(SMALL)
    local got = grads_of(SMALL, c.hook, nil)
    local mine = local_grads()
    local any = 0
    for i = 1, #ref do
      local err = (got[i] - ref[i]):abs():max():item()
      local scale = ref[i]:abs():max():item()
      T.ok(err <= c.tol * scale, ("%s: param %d off by %g (scale %g)"):format(c.name, i, err, scale))
      any = math.max(any, err)
      -- what the reduction in the compressed dtype gives: each rank's gradient cast and
      -- divided by the world size, summed in that dtype, cast back
      local all = gather(mine[i]:reshape(-1))
      local sum = (all[1]:to(c.dtype) / world)
      for r = 2, world do sum = sum + all[r]:to(c.dtype) / world end
      local want = sum:to(torch.float64):view(ref[i].shape)
      T.eq((got[i] - want):abs():max():item(), 0.0, c.name .. ": the sum ran in the compressed dtype")
    end
    T.ok(any > 0, c.name .. " changed nothing: no compression happened")
  end)
end

T.test("fp16_compress_wrapper(allreduce_hook)", function()
  local ref = grads_of(SMALL)
  local got = grads_of(SMALL, hooks.fp16_compress_wrapper(hooks.allreduce_hook), nil)
  for i = 1, #ref do
    T.ok((got[i] - ref[i]):abs():max():item() <= 2e-3 * ref[i]:abs():max():item(), "param " .. i)
  end
  T.raises(function() hooks.bf16_compress_wrapper(3) end, "bf16_compress_wrapper", "'hook' must be a function")
end)

T.test("a script's hook: all_reduce then x2, its state passed through, every bucket once", function()
  local state = { scale = 2, calls = {} }
  local function hook(st, bucket)
    local buf = bucket:buffer()
    local n = 0
    for _, g in ipairs(bucket:gradients()) do n = n + g:numel() end
    st.calls[#st.calls + 1] = { state = st, index = bucket:index(), last = bucket:is_last(),
                                nparams = #bucket:parameters(), ngrad = n, numel = buf:numel(),
                                params = bucket:parameters() }
    local fut = dist.all_reduce(buf, { op = "avg", async_op = true }):get_future()
    return fut["then"](fut, function(f) return f:value()[1] * st.scale end)
  end
  local ref = grads_of(SMALL)
  local got, ddp = grads_of(SMALL, hook, state)
  for i = 1, #ref do T.eq((got[i] - 2 * ref[i]):abs():max():item(), 0.0, "param " .. i .. " doubled") end
  -- the calls of the first backward used the first layout (the buckets were rebuilt after)
  local nb = #state.calls
  T.ok(nb >= 3, "one call per bucket")
  local names = ddp._reducer.names
  local first = {}
  for i = #ddp.module:parameters(), 1, -1 do first[#first + 1] = ddp.module:named_parameters()[i][1] end
  local k = 0
  for i, call in ipairs(state.calls) do
    T.ok(rawequal(call.state, state), "the state is passed through")
    T.eq(call.index, i - 1, "0-based index in order")
    T.eq(call.last, i == nb)
    T.eq(call.ngrad, call.numel)
    for _, p in ipairs(call.params) do k = k + 1; T.eq(names[p], first[k]) end
  end
  T.eq(k, #first)
end)

T.test("register_comm_hook: errors", function()
  local ddp = nn.DistributedDataParallel(make_model(1), SMALL)
  T.raises(function() ddp:register_comm_hook(nil, 42) end, "register_comm_hook", "'hook' must be a function")
  T.raises(function() ddp:register_comm_hook(nil) end, "register_comm_hook", "'hook' must be a function")
  ddp:register_comm_hook(nil, hooks.allreduce_hook)
  T.raises(function() ddp:register_comm_hook(nil, hooks.allreduce_hook) end, "register_comm_hook", "already registered")

  local late = nn.DistributedDataParallel(make_model(1), SMALL)
  local x, y = shard(batch(1))
  F.cross_entropy(late(x), y):backward()
  T.raises(function() late:register_comm_hook(nil, hooks.allreduce_hook) end, "register_comm_hook",
    "before the first backward")

  -- a hook that returns no future: backward raises (on every rank, before any collective)
  local bad = nn.DistributedDataParallel(make_model(1), SMALL)
  bad:register_comm_hook(nil, function() return 3 end)
  T.raises(function() F.cross_entropy(bad(x), y):backward() end, "register_comm_hook", "must return a Future")
  -- a future of the wrong size
  local wrong = nn.DistributedDataParallel(make_model(1), SMALL)
  wrong:register_comm_hook(nil, function()
    local f = dist.futures.Future()
    f:set_result(torch.zeros(1))
    return f
  end)
  T.raises(function() F.cross_entropy(wrong(x), y):backward() end, "comm hook", "1 elements")
  -- a built-in hook given a state that is no process group
  local st = nn.DistributedDataParallel(make_model(1), SMALL)
  st:register_comm_hook("x", hooks.fp16_compress_hook)
  T.raises(function() F.cross_entropy(st(x), y):backward() end, "fp16_compress_hook", "process group")
end)

dist.barrier()
dist.destroy_process_group()
T.done()
