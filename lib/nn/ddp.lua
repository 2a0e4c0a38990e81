-- nn/ddp.lua — nn.DistributedDataParallel: data-parallel training over torch.distributed.
--
--   dist.init_process_group {backend = "mpi"}
--   local ddp = nn.DistributedDataParallel(model)       -- rank 0's weights everywhere
--   local loss = F.cross_entropy(ddp(x), y)             -- each rank its own batch
--   loss:backward()                                      -- grads averaged over ranks
--   opt:step()
--
-- Gradients are grouped into buckets (one flat tensor each, one dtype each) in
-- reverse order of model:parameters(), a guess at the order backward produces them;
-- each dtype's first bucket is small (1 MB) so its reduction starts early, the
-- others hold up to bucket_cap_mb. Each parameter has a post-accumulate-grad hook:
-- when the last gradient of a bucket has arrived, its all_reduce (avg) starts on
-- the communication thread while backward goes on computing the earlier layers.
-- Buckets are launched in bucket order on every rank (a mismatched order would
-- pair different buckets across ranks). A callback at the end of backward waits
-- for all of them and writes the averaged gradients back into .grad (or leaves
-- .grad as views of the buckets with gradient_as_bucket_view).
--
-- The guess is replaced once by what was seen: the first backward that reduces
-- records the order its gradients became ready, and once its reduction is done the
-- buckets are laid out again in that order (rank 0's, broadcast: the order may
-- differ between ranks, the layout must not), so later iterations fill bucket 1
-- first and start reducing it earliest.
--
-- register_comm_hook(state, hook) replaces the all_reduce of each bucket with
-- hook(state, bucket) -> Future (distributed/comm_hooks.lua: compression to
-- float16/bfloat16, or a script's own).
--
-- state_dict keys carry the "module." prefix, as in PyTorch: save
-- ddp.module:state_dict() to load the weights into a plain model.
local torch = require "torch"
local base = require "nn.module"

local DDP = base.Module:extend("DistributedDataParallel")

local FIRST_BUCKET_BYTES = 1024 * 1024

local function dist() return require "distributed" end

local function no_grad(fn) return torch.no_grad(fn) end

local comm_hooks = require "distributed.comm_hooks"
DDP.comm_hooks = comm_hooks

-- r.buckets laid out from the parameters in order: one dtype and device per bucket (each
-- fills its own open bucket, as gradients of several dtypes may interleave); a dtype's first
-- bucket holds up to first_bytes, its next ones up to cap_bytes. Buckets are numbered by
-- the place of their first parameter in order, the order they are launched in.
local function layout(r, order)
  local open, limit, list = {}, {}, {}
  for pos, p in ipairs(order) do
    local key = tostring(p.dtype) .. "@" .. tostring(p.device)
    local bytes = p:numel() * p:element_size()
    local b = open[key]
    if b and b.bytes + bytes > limit[key] then
      list[#list + 1] = b
      b, open[key], limit[key] = nil, nil, r.cap_bytes
    end
    if not b then
      b = { params = {}, offsets = {}, numel = 0, bytes = 0, dtype = p.dtype, first = pos }
      open[key] = b
      limit[key] = limit[key] or r.first_bytes
    end
    b.params[#b.params + 1] = p
    b.offsets[#b.params] = b.numel
    b.numel = b.numel + p:numel()
    b.bytes = b.bytes + bytes
  end
  for _, b in pairs(open) do list[#list + 1] = b end
  table.sort(list, function(a, b) return a.first < b.first end)
  r.buckets, r.where = list, {}
  for i, b in ipairs(list) do
    b.index = i
    b.flat = torch.zeros(b.numel, { dtype = b.dtype, device = b.params[1].device })
    b.views = {}
    for k, p in ipairs(b.params) do
      b.views[k] = b.flat:narrow(1, b.offsets[k] + 1, p:numel()):view(p.shape)
      r.where[p] = { bucket = b, slot = k }
    end
    b.pending = #b.params
    b.ready_set = {}
  end
  r.next_launch = 1
  if r.as_view then
    -- the gradients (the reduced ones, after a rebuild) move into the new buckets
    no_grad(function()
      for _, b in ipairs(list) do
        for k, p in ipairs(b.params) do
          if p.grad then b.views[k]:copy_(p.grad) end
          p.grad = b.views[k]
        end
      end
    end)
  end
end

-- once, after the first backward that reduced: lay the buckets out again in the order its
-- gradients became ready. Rank 0's order is used everywhere (broadcast), as the ready order
-- may differ between ranks; parameters that got no gradient go last, in their old order.
local function rebuild(self)
  local r = self._reducer
  local n = #r.params
  local seen, order = {}, {}
  for _, i in ipairs(r.ready_log) do
    if not seen[i] then seen[i] = true; order[#order + 1] = i end
  end
  for _, b in ipairs(r.buckets) do
    for _, p in ipairs(b.params) do
      local i = r.index_of[p]
      if not seen[i] then seen[i] = true; order[#order + 1] = i end
    end
  end
  -- on the parameters' device: a backend such as nccl moves only its device's tensors
  local t = torch.tensor(order, { dtype = torch.int64, device = n > 0 and r.params[1].device or nil })
  dist().broadcast(t, 0, { group = r.group })
  t = t:cpu()
  local params, check = {}, {}
  for k = 1, n do
    local i = t[k]
    if check[i] or not r.params[i] then
      error("DistributedDataParallel: rank 0's parameters differ from this rank's (bucket rebuild)", 0)
    end
    check[i] = true
    params[k] = r.params[i]
  end
  layout(r, params)
  r.rebuilt = true
  r.ready_log = nil
end

-- PyTorch's arguments (dim is 1-based, and like check_reduction and static_graph it changes
-- nothing here: there is one device per process and no scatter); first_bucket_bytes is
-- lutorch's (the size of the first, small bucket)
local DDP_SIG = require("torch_class").signature("nn.DistributedDataParallel",
  "module, device_ids=nil, output_device=nil, dim=1, broadcast_buffers=true, process_group=nil, " ..
  "bucket_cap_mb=25, find_unused_parameters=false, check_reduction=false, gradient_as_bucket_view=false, " ..
  "static_graph=false, *, first_bucket_bytes=nil")
function DDP:__init(...)
  local opts = DDP_SIG(...)
  local module = opts.module
  if not base.is_module(module) then error("DistributedDataParallel: expected a module, got " .. type(module), 3) end
  if opts.device_ids ~= nil or opts.output_device ~= nil then
    -- as PyTorch: they name the one GPU of a GPU module; a CPU module takes neither
    for _, p in ipairs(module:parameters()) do
      if p.device.type == "cpu" then
        error("DistributedDataParallel: device_ids and output_device only work with modules on a GPU; "
          .. "this module's parameters are on the CPU (leave them out)", 3)
      end
    end
  end
  local d = dist()
  if not d.is_initialized() then
    error("DistributedDataParallel: the default process group is not initialized; call torch.distributed.init_process_group first", 3)
  end
  self.module = module
  local cap = opts.bucket_cap_mb or 25
  if type(cap) ~= "number" or cap <= 0 then error("DistributedDataParallel: bucket_cap_mb must be a positive number", 3) end
  local r = {
    group = opts.process_group,
    broadcast_buffers = opts.broadcast_buffers ~= false,
    find_unused = opts.find_unused_parameters == true,
    as_view = opts.gradient_as_bucket_view == true,
    cap_bytes = math.floor(cap * 1024 * 1024),
    first_bytes = opts.first_bucket_bytes or math.min(FIRST_BUCKET_BYTES, math.floor(cap * 1024 * 1024)),
    require_sync = true,
    buckets = {}, where = {}, names = {},
    ready_log = {}, rebuilt = false, started = false,
    trace = { launch = {}, backward_end = nil, first_ready = nil },
  }
  self._reducer = r
  r.world = d.get_world_size(r.group)

  local named = module:named_parameters()
  local params = {}
  for _, e in ipairs(named) do
    local name, p = e[1], e[2]
    if p.requires_grad then params[#params + 1] = p; r.names[p] = name end
  end
  r.params = params

  -- every rank starts from rank 0's parameters and buffers
  no_grad(function()
    for _, p in ipairs(params) do d.broadcast(p, 0, { group = r.group }) end
    for _, b in ipairs(module:buffers()) do d.broadcast(b, 0, { group = r.group }) end
  end)

  r.index_of = {}
  for i, p in ipairs(params) do r.index_of[p] = i end

  -- the first layout: reverse registration order
  local order = {}
  for i = #params, 1, -1 do order[#order + 1] = params[i] end
  layout(r, order)

  for _, p in ipairs(params) do
    -- keyed by the Lua value we hold: the hook receives a fresh value for the same tensor
    p:register_post_accumulate_grad_hook(function() self:_mark_ready(p) end)
  end
end

function DDP:forward(...)
  local r = self._reducer
  local d = dist()
  if r.broadcast_buffers and r.require_sync then
    local bufs = self.module:buffers()
    if #bufs > 0 then
      no_grad(function() for _, b in ipairs(bufs) do d.broadcast(b, 0, { group = r.group }) end end)
    end
  end
  if r.as_view then
    -- optimizer:zero_grad() may have dropped the grads: they become bucket views again
    for _, b in ipairs(r.buckets) do
      for i, p in ipairs(b.params) do
        if p.grad == nil then b.views[i]:zero_(); p.grad = b.views[i] end
      end
    end
  end
  return self.module(...)
end

local function is_future(f)
  return type(f) == "table" and type(f.wait) == "function"
end

local function launch_ready(self)
  local r = self._reducer
  local d = dist()
  while r.next_launch <= #r.buckets and r.buckets[r.next_launch].pending == 0 do
    local b = r.buckets[r.next_launch]
    r.next_launch = r.next_launch + 1
    r.trace.launch[b.index] = d.clock()
    if r.hook then
      local bucket = comm_hooks.GradBucket(b.index, b.flat, b.params, b.views, b.index == #r.buckets)
      local fut = r.hook(r.hook_state, bucket)
      if not is_future(fut) then
        error(("DistributedDataParallel: the comm hook given to register_comm_hook returned %s for bucket %d; "
          .. "it must return a Future (e.g. work:get_future())"):format(type(fut), b.index - 1), 0)
      end
      b.fut = fut
    else
      b.work = d.all_reduce(b.flat, { op = "avg", group = r.group, async_op = true })
    end
  end
end

function DDP:_mark_ready(p)
  local r = self._reducer
  r.started = true
  if not r.require_sync then return end
  local where = r.where[p]
  if not where then return end
  local b = where.bucket
  if b.ready_set[where.slot] then return end
  if not r.in_backward then
    r.in_backward = true
    r.trace = { launch = {}, first_ready = dist().clock() }
    torch.autograd.queue_callback(function() self:_finalize() end)
  end
  if not r.as_view then
    no_grad(function() b.views[where.slot]:copy_(p.grad) end)
  end
  b.ready_set[where.slot] = true
  if not r.rebuilt then r.ready_log[#r.ready_log + 1] = r.index_of[p] end
  b.pending = b.pending - 1
  if b.pending == 0 then launch_ready(self) end
end

function DDP:_finalize()
  local r = self._reducer
  r.trace.backward_end = dist().clock()
  local unused = {}
  for _, b in ipairs(r.buckets) do
    if b.pending > 0 then
      for i, p in ipairs(b.params) do
        if not b.ready_set[i] then
          unused[#unused + 1] = r.names[p]
          no_grad(function() b.views[i]:zero_() end)
        end
      end
      b.pending = 0
    end
  end
  -- the buckets of unused parameters are reduced too, so every rank runs the same collectives
  launch_ready(self)
  for _, b in ipairs(r.buckets) do
    if b.work then
      b.work:wait()
      r.trace[b.index] = { b.work:timing() }
      b.work = nil
    else
      local fut = b.fut
      b.fut = nil
      local out = fut:wait()
      if not torch.is_tensor(out) or out:numel() ~= b.numel then
        error(("DistributedDataParallel: the Future of the comm hook (register_comm_hook) for bucket %d gave %s; "
          .. "it must give a tensor of the bucket's %d elements"):format(b.index - 1,
          torch.is_tensor(out) and out:numel() .. " elements" or type(out), b.numel), 0)
      end
      if not rawequal(out, b.flat) then no_grad(function() b.flat:copy_(out:reshape(-1)) end) end
    end
  end
  r.trace.done = dist().clock()
  no_grad(function()
    for _, b in ipairs(r.buckets) do
      for i, p in ipairs(b.params) do
        if r.as_view then p.grad = b.views[i]
        elseif p.grad == nil then p.grad = b.views[i]:clone()
        else p.grad:copy_(b.views[i]) end
      end
      b.pending = #b.params
      b.ready_set = {}
    end
  end)
  r.next_launch = 1
  r.in_backward = false
  if not r.rebuilt then rebuild(self) end
  if #unused > 0 and not r.find_unused then
    error("DistributedDataParallel: these parameters got no gradient in this backward: " ..
          table.concat(unused, ", ") .. ". Pass find_unused_parameters=true if parts of the model are unused " ..
          "(their gradients are then reduced as zeros)", 0)
  end
end

--- no_sync(fn): run fn (forward + backward) with gradients accumulating locally, without
--- reduction; the next backward outside reduces the sum. Without fn: a value for `<close>`.
function DDP:no_sync(fn)
  local r = self._reducer
  local prev = r.require_sync
  r.require_sync = false
  if fn == nil then
    return setmetatable({}, { __close = function() r.require_sync = prev end })
  end
  local ok, a, b, c = pcall(fn)
  r.require_sync = prev
  if not ok then error(a, 0) end
  return a, b, c
end

--- timings of the last backward: {first_ready=, launch={bucket->t}, backward_end=, done=,
--- [i]={queued, started, finished} per bucket}, all in torch.distributed.clock() seconds
function DDP:last_trace() return self._reducer.trace end

--- the buckets, in reduction order: a list of {numel=, dtype=, names={...}}
function DDP:bucket_info()
  local out = {}
  for i, b in ipairs(self._reducer.buckets) do
    local names = {}
    for k, p in ipairs(b.params) do names[k] = self._reducer.names[p] end
    out[i] = { numel = b.numel, dtype = b.dtype, names = names }
  end
  return out
end

--- true once the buckets have been laid out in the order gradients became ready
function DDP:buckets_rebuilt() return self._reducer.rebuilt end

--- register_comm_hook(state, hook): reduce each bucket with hook(state, bucket) -> Future
--- instead of all_reduce (avg); the tensor the future's wait() gives becomes the bucket's
--- gradients. Once, before the first backward.
function DDP:register_comm_hook(state, hook)
  local r = self._reducer
  if type(hook) ~= "function" then
    error("DistributedDataParallel.register_comm_hook: 'hook' must be a function, got " .. type(hook), 2)
  end
  if r.hook then
    error("DistributedDataParallel.register_comm_hook: 'hook': a comm hook is already registered (only one can be)", 2)
  end
  if r.started then
    error("DistributedDataParallel.register_comm_hook: 'hook': must be registered before the first backward", 2)
  end
  r.hook, r.hook_state = hook, state
end

function DDP:extra_repr()
  local r = self._reducer
  return ("buckets=%d, world_size=%d%s"):format(#r.buckets, r.world, r.as_view and ", gradient_as_bucket_view" or "")
end

return { DistributedDataParallel = DDP }
