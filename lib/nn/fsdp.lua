-- nn/fsdp.lua — nn.fully_shard: fully sharded data parallelism (ZeRO-3) over torch.distributed.
--
--   dist.init_process_group {backend = "mpi"}
--   for _, block in ipairs(model.blocks) do nn.fully_shard(block) end   -- one unit per block
--   nn.fully_shard(model)                                              -- the root: the rest
--   local opt = optim.AdamW(model:parameters(), {lr = 1e-3})           -- steps on shards only
--   local loss = F.cross_entropy(model(x), y); loss:backward(); opt:step()
--
-- A unit is the module given to fully_shard with its parameters, less those of units
-- already made inside it. Its parameters are flattened, one flat buffer per dtype,
-- padded to a multiple of the world size, and split into equal ranges along that one
-- dimension: rank r keeps range r, and the module's parameters become 1-D views of the
-- rank's range (empty where a parameter lies outside it), so model:parameters() and the
-- optimizer see shards only. Flat buffers are what lets the all-gather write straight into
-- parameter memory: the gathered buffer is laid out as the parameters, each a view of it.
--
-- Around each unit's forward: an all-gather fills the flat buffer and the module's fields
-- point at full-size views of it (leaves that require grad); after the forward the fields
-- point at the shards again and, with reshard_after_forward, the buffer's memory is freed
-- (torch._resize_storage_: the storage object stays, so what autograd saved still refers
-- to it). A hook on the unit's outputs gathers it again when backward reaches them, and
-- the gradients of the full views accumulate into one flat gradient buffer; once every
-- parameter of the unit has its gradient, that buffer is reduce-scattered (averaged) into
-- the rank's range on the communication thread while backward goes on, the unit is
-- resharded, and at the end of backward each shard's .grad receives its part.
-- The next unit's all-gather is started early (prefetch) in forward, after the first
-- iteration has shown the order, and in backward in reverse forward order.
--
-- Mixed precision (mp_policy = {param_dtype =, reduce_dtype =}): shards stay in their
-- dtype (float32 for training), the gather casts them to param_dtype so forward and
-- backward compute in it, and gradients are reduced in reduce_dtype (param_dtype unless
-- given) before they reach the shards' dtype.
local torch = require "torch"
local class = require "torch_class"
local base = require "nn.module"

local M = {}

local function dist() return require "distributed" end
local function no_grad(fn) return torch.no_grad(fn) end

-- a temporary of ours gives its memory back now rather than when the collector finds it
-- (storages of 64 bytes or less live in their header and go with it)
local function release(t)
  if t and torch._storage_nbytes(t) > 64 then torch._resize_storage_(t, 0) end
end

-- every unit by its module (weakly)
local UNITS = setmetatable({}, { __mode = "k" })

-- storages of up to 64 bytes live inside their header and cannot be freed apart from it:
-- flat buffers are at least this big
local MIN_FLAT_BYTES = 128

local function is_float_dtype(dt) return torch.empty(0, { dtype = dt }):is_floating_point() end

------------------------------------------------------------------------------
-- layout
------------------------------------------------------------------------------

-- the parameters a unit manages: those of module's subtree, skipping the subtrees of units
-- made earlier; {owner=, name=, fqn=, p=} in named_parameters order
local function collect(module)
  local out, seen = {}, {}
  local function walk(m, prefix)
    for _, k in ipairs(m._parameters.keys) do
      local p = m._parameters.vals[k]
      if p ~= nil and not seen[p] then
        seen[p] = true
        out[#out + 1] = { owner = m, name = k, fqn = prefix .. k, p = p }
      end
    end
    for _, k in ipairs(m._modules.keys) do
      local c = m._modules.vals[k]
      if c and not UNITS[c] then walk(c, prefix .. k .. ".") end
    end
  end
  walk(module, "")
  return out
end

local function set_param(e, t) rawget(e.owner, "_parameters").vals[e.name] = t end

-- one flat buffer of a dtype: its parameters' places, the rank's shard, the views
local function make_group(unit, dtype, device, entries)
  local W, r = unit.world, unit.rank
  local esize = torch.empty(0, { dtype = dtype }):element_size()
  local total = 0
  for _, e in ipairs(entries) do
    e.shape = e.p.shape
    e.numel = e.p:numel()
    e.offset = total
    total = total + e.numel
  end
  local min_n = (MIN_FLAT_BYTES + esize - 1) // esize
  local padded = math.max(total, min_n)
  padded = (padded + W - 1) // W * W
  local n = padded // W
  local g = { dtype = dtype, device = device, entries = entries, total = total, padded = padded, shard_n = n }
  local cdtype = unit.param_dtype or dtype
  g.compute_dtype = cdtype
  g.reduce_dtype = unit.reduce_dtype or cdtype
  -- the full buffer, filled from the current parameters (rank 0's, broadcast)
  local full = torch.zeros(padded, { dtype = dtype, device = device })
  no_grad(function()
    for _, e in ipairs(entries) do full:narrow(1, e.offset + 1, e.numel):copy_(e.p:reshape(-1)) end
  end)
  if unit.sync_module_states and W > 1 then dist().broadcast(full, 0, { group = unit.group }) end
  g.shard = full:narrow(1, r * n + 1, n):clone()
  full = nil
  -- the shards: module fields become 1-D views of the rank's range (a parameter outside
  -- it gets an empty view); each remembers which elements of which parameter it holds
  local lo_r, hi_r = r * n, (r + 1) * n
  g.sgrad = torch.zeros(n, { dtype = dtype, device = device })
  for _, e in ipairs(entries) do
    local lo, hi = math.max(e.offset, lo_r), math.min(e.offset + e.numel, hi_r)
    if hi <= lo then lo, hi = math.min(math.max(e.offset, lo_r), hi_r), nil end
    hi = hi or lo
    e.shard_pos = lo - lo_r                        -- where the piece starts in the shard
    e.shard_lo = math.max(0, math.min(lo - e.offset, e.numel))   -- its first element in the parameter
    local v
    no_grad(function() v = g.shard:narrow(1, e.shard_pos + 1, hi - lo) end)
    e.shard_view = base.Parameter(v, e.p.requires_grad)
    e.sgrad_view = g.sgrad:narrow(1, e.shard_pos + 1, hi - lo)
    e.requires_grad = e.p.requires_grad
    set_param(e, e.shard_view)
    e.p = nil
  end
  -- the gathered buffer and its views, made once; its memory comes and goes
  g.full = torch.empty(padded, { dtype = cdtype, device = device })
  g.gfull = torch.empty(padded, { dtype = cdtype, device = device })
  for _, e in ipairs(entries) do
    local v
    no_grad(function() v = g.full:narrow(1, e.offset + 1, e.numel):view(e.shape) end)
    e.full_view = base.Parameter(v, e.requires_grad)
    e.gfull_view = g.gfull:narrow(1, e.offset + 1, e.numel):view(e.shape)
  end
  g.full_bytes = padded * torch.empty(0, { dtype = cdtype }):element_size()
  torch._resize_storage_(g.full, 0)
  torch._resize_storage_(g.gfull, 0)
  return g
end

------------------------------------------------------------------------------
-- gather and free
------------------------------------------------------------------------------

local function is_gathered(unit) return unit.gathered end

-- start the all-gather of every group of unit (async), unless gathered or under way
local function start_gather(unit)
  if unit.gathered or unit.gathering then return end
  local d = dist()
  local works = {}
  for i, g in ipairs(unit.groups) do
    torch._resize_storage_(g.full, g.full_bytes)
    local input = g.shard
    if g.compute_dtype ~= g.dtype then input = g.shard:to(g.compute_dtype) end
    g.gather_input = input                           -- alive until the gather is done
    works[i] = d.all_gather_into_tensor(g.full, input, { group = unit.group, async_op = true })
  end
  unit.gathering = works
  unit.stats.gathers = unit.stats.gathers + 1
end

local function finish_gather(unit)
  if unit.gathered then return end
  if not unit.gathering then start_gather(unit) end
  for i, w in ipairs(unit.gathering) do
    w:wait()
    local g = unit.groups[i]
    if not rawequal(g.gather_input, g.shard) then release(g.gather_input) end
    g.gather_input = nil
  end
  unit.gathering = nil
  unit.gathered = true
  local bytes = 0
  for _, u in ipairs(unit.ctx.units) do
    if u.gathered then for _, g in ipairs(u.groups) do bytes = bytes + g.full_bytes end end
  end
  unit.ctx.peak_gathered_bytes = math.max(unit.ctx.peak_gathered_bytes, bytes)
end

local function install_full(unit)
  for _, g in ipairs(unit.groups) do
    for _, e in ipairs(g.entries) do set_param(e, e.full_view) end
  end
end

local function install_shards(unit)
  for _, g in ipairs(unit.groups) do
    for _, e in ipairs(g.entries) do set_param(e, e.shard_view) end
  end
end

local function free_full(unit)
  if unit.gathering then finish_gather(unit) end
  if not unit.gathered then return end
  for _, g in ipairs(unit.groups) do torch._resize_storage_(g.full, 0) end
  unit.gathered = false
end

------------------------------------------------------------------------------
-- backward
------------------------------------------------------------------------------

-- the shards' gradients get the reduced values of unit's last reduce-scatter
local function finish_reduce(unit)
  local rs = unit.reducing
  if not rs then return end
  unit.reducing = nil
  for i, w in ipairs(rs.works) do
    w:wait()
    local g, out = unit.groups[i], rs.outs[i]
    torch._resize_storage_(g.gfull, 0)
    if not rawequal(rs.inputs[i], g.gfull) then release(rs.inputs[i]) end
    if rawequal(out, g.sgrad) then
      -- reduced straight into the gradient buffer: the shards' .grad are views of it
      for _, e in ipairs(g.entries) do
        if e.requires_grad then e.shard_view.grad = e.sgrad_view end
      end
    else
      local o = out.dtype ~= g.dtype and out:to(g.dtype) or out
      no_grad(function()
        for _, e in ipairs(g.entries) do
          if e.requires_grad then
            local piece = o:narrow(1, e.shard_pos + 1, e.shard_view:numel())
            local sv = e.shard_view
            if sv.grad == nil then
              e.sgrad_view:copy_(piece)
              sv.grad = e.sgrad_view
            else
              sv.grad:add_(piece)
            end
          end
        end
      end)
      if not rawequal(o, out) then release(o) end
      release(out)
    end
  end
end

-- can the reduce-scatter write into the shards' gradient buffer? Yes when no shard holds a
-- gradient to add to and the dtypes agree
local function reduce_into_sgrad(g)
  if g.reduce_dtype ~= g.dtype then return false end
  for _, e in ipairs(g.entries) do
    if e.requires_grad and e.shard_view.grad ~= nil then return false end
  end
  return true
end

-- all of unit's gradients are in: reduce-scatter them (async) and free the gathered memory
local function launch_reduce(unit)
  if unit.reduced then return end
  unit.reduced = true
  local ctx = unit.ctx
  -- one reduce-scatter in flight: the previous one's buffer goes first
  if ctx.last_reducing and ctx.last_reducing ~= unit then finish_reduce(ctx.last_reducing) end
  local d = dist()
  local rs = { works = {}, outs = {}, inputs = {} }
  for i, g in ipairs(unit.groups) do
    local input = g.gfull
    if g.reduce_dtype ~= g.compute_dtype then input = g.gfull:to(g.reduce_dtype) end
    local out = reduce_into_sgrad(g) and g.sgrad or torch.empty(g.shard_n, { dtype = g.reduce_dtype, device = g.device })
    rs.outs[i], rs.inputs[i] = out, input
    rs.works[i] = d.reduce_scatter_tensor(out, input, { op = "avg", group = unit.group, async_op = true })
  end
  unit.reducing = rs
  ctx.last_reducing = unit
  unit.stats.reduce_scatters = unit.stats.reduce_scatters + 1
  if unit.reshard_after_backward then free_full(unit) end
end

local function end_of_backward(ctx)
  ctx.callback_queued = false
  -- units that ran backward with a parameter left without a gradient are reduced now, in
  -- unit order, so every rank issues the same collectives
  for _, u in ipairs(ctx.units) do
    if u.backward_started and not u.reduced then launch_reduce(u) end
  end
  for _, u in ipairs(ctx.units) do finish_reduce(u) end
  ctx.last_reducing = nil
  for _, u in ipairs(ctx.units) do
    if u.gathering then finish_gather(u) end
    free_full(u)
    u.backward_started, u.reduced, u.ready, u.nready = false, false, {}, 0
    u.outputs_hooked = false
  end
end

local function queue_end(ctx)
  if ctx.callback_queued then return end
  ctx.callback_queued = true
  torch.autograd.queue_callback(function() end_of_backward(ctx) end)
end

-- backward reached unit's outputs: gather it (a prefetch may be under way), zero its
-- gradient buffer, and prefetch the unit that runs backward next
local function pre_backward(unit)
  if unit.backward_started then return end
  unit.backward_started = true
  local ctx = unit.ctx
  queue_end(ctx)
  finish_gather(unit)
  for _, g in ipairs(unit.groups) do
    if torch._storage_nbytes(g.gfull) == 0 then
      torch._resize_storage_(g.gfull, g.full_bytes)
    end
    no_grad(function() g.gfull:zero_() end)
    for _, e in ipairs(g.entries) do
      if e.requires_grad then e.full_view.grad = e.gfull_view end
    end
  end
  local pos = ctx.position[unit]
  if pos then
    for k = pos - 1, 1, -1 do
      local prev = ctx.order[k]
      if not prev.backward_started and prev.ran_forward then start_gather(prev); break end
    end
  end
end

local function on_grad_ready(unit, e)
  if unit.ready[e] then return end
  unit.ready[e] = true
  unit.nready = unit.nready + 1
  if unit.nready == unit.ntrainable then launch_reduce(unit) end
end

------------------------------------------------------------------------------
-- forward
------------------------------------------------------------------------------

local function each_tensor(v, fn, seen)
  if torch.is_tensor(v) then fn(v)
  elseif type(v) == "table" and not base.is_module(v) then
    seen = seen or {}
    if seen[v] then return end
    seen[v] = true
    for _, x in pairs(v) do each_tensor(x, fn, seen) end
  end
end

-- mp_policy.cast_forward_inputs: floating tensors among the arguments become param_dtype
local function cast_inputs(unit, args)
  local dt = unit.param_dtype
  if not dt or not unit.cast_forward_inputs then return nil end
  local changed = false
  local out = { n = args.n }
  for i = 1, args.n do
    local a = args[i]
    if torch.is_tensor(a) and a:is_floating_point() and a.dtype ~= dt then a = a:to(dt); changed = true end
    out[i] = a
  end
  return changed and out or nil
end

local function pre_forward(unit)
  local ctx = unit.ctx
  if not ctx.position[unit] then
    ctx.order[#ctx.order + 1] = unit
    ctx.position[unit] = #ctx.order
  end
  finish_gather(unit)
  install_full(unit)
  unit.ran_forward = true
  -- prefetch the unit that came next in the first forward
  local nxt = ctx.order[ctx.position[unit] + 1]
  if nxt and ctx.order_complete then start_gather(nxt) end
end

local function post_forward(unit, output)
  install_shards(unit)
  local grad = torch.is_grad_enabled()
  local hooked = false
  if grad and unit.ntrainable > 0 then
    each_tensor(output, function(t)
      if t.requires_grad then
        hooked = true
        t:register_hook(function() pre_backward(unit) end)
      end
    end)
  end
  if unit.is_root then unit.ctx.order_complete = true end
  -- the root is gathered again first thing in backward: it stays gathered when backward follows
  if unit.reshard_after_forward and not (unit.is_root and hooked) then free_full(unit) end
  if not hooked then
    -- no backward will come through this unit's outputs
    unit.ran_forward = false
    if not unit.reshard_after_forward and not grad then free_full(unit) end
  end
end

------------------------------------------------------------------------------
-- fully_shard
------------------------------------------------------------------------------

local FS_OPTS = { "mesh", "group", "process_group", "reshard_after_forward", "mp_policy", "sync_module_states" }
local MP_OPTS = { "param_dtype", "reduce_dtype", "cast_forward_inputs" }

--- fully_shard(module, {group=, reshard_after_forward=true, mp_policy={param_dtype=, reduce_dtype=},
--- sync_module_states=true}): shards module's parameters (those not in a unit already) across
--- the group's ranks; returns module
function M.fully_shard(module, opts)
  opts = class.check_options("nn.fully_shard", opts, FS_OPTS)
  if not base.is_module(module) then error("nn.fully_shard: argument 'module' must be a module, got " .. type(module), 2) end
  if UNITS[module] then error("nn.fully_shard: this module is already sharded", 2) end
  local d = dist()
  if not d.is_initialized() then
    error("nn.fully_shard: the default process group is not initialized; call torch.distributed.init_process_group first", 2)
  end
  local group = opts.group or opts.process_group or opts.mesh
  if group ~= nil and not (type(group) == "table" and group.pg) then
    error("nn.fully_shard: 'group' must be a process group this rank is a member of", 2)
  end
  local raf = opts.reshard_after_forward
  if raf == nil then raf = true end
  if type(raf) ~= "boolean" then error("nn.fully_shard: 'reshard_after_forward' must be a boolean", 2) end
  local mp = class.check_options("nn.fully_shard: mp_policy", opts.mp_policy, MP_OPTS)
  if mp.cast_forward_inputs ~= nil and type(mp.cast_forward_inputs) ~= "boolean" then
    error("nn.fully_shard: mp_policy.cast_forward_inputs must be a boolean", 2)
  end
  for _, k in ipairs({ "param_dtype", "reduce_dtype" }) do
    if mp[k] ~= nil and not (type(mp[k]) == "userdata" or type(mp[k]) == "table") then
      error(("nn.fully_shard: mp_policy.%s must be a dtype"):format(k), 2)
    end
    if mp[k] ~= nil and not is_float_dtype(mp[k]) then
      error(("nn.fully_shard: mp_policy.%s must be a floating dtype, got %s"):format(k, tostring(mp[k])), 2)
    end
  end

  local unit = {
    module = module, group = group, world = d.get_world_size(group), rank = d.get_rank(group),
    reshard_after_forward = raf, reshard_after_backward = true,
    param_dtype = mp.param_dtype, reduce_dtype = mp.reduce_dtype, cast_forward_inputs = mp.cast_forward_inputs ~= false,
    sync_module_states = opts.sync_module_states ~= false,
    groups = {}, ready = {}, nready = 0, ntrainable = 0,
    stats = { gathers = 0, reduce_scatters = 0 },
  }
  -- units made earlier inside module join this one's context; module becomes their root
  local ctx = { units = {}, order = {}, position = {}, peak_gathered_bytes = 0 }
  local inner = {}
  for _, e in ipairs(module:named_modules()) do
    local u = UNITS[e[2]]
    if u and u.ctx ~= ctx and not inner[u.ctx] then
      inner[u.ctx] = true
      for _, v in ipairs(u.ctx.units) do
        v.is_root = false
        v.ctx = ctx
        ctx.units[#ctx.units + 1] = v
      end
    end
  end
  unit.ctx, unit.is_root = ctx, true
  table.insert(ctx.units, 1, unit)

  -- one flat buffer per dtype and device, in the order they first appear
  local by_dtype, dtypes = {}, {}
  for _, e in ipairs(collect(module)) do
    local dt = e.p.dtype
    if not is_float_dtype(dt) then
      error(("nn.fully_shard: parameter '%s' is %s: only floating point parameters can be sharded"):format(e.fqn, tostring(dt)), 2)
    end
    local key = tostring(dt) .. "@" .. tostring(e.p.device)
    if not by_dtype[key] then by_dtype[key] = { dtype = dt, device = e.p.device, entries = {} }; dtypes[#dtypes + 1] = key end
    local l = by_dtype[key].entries
    l[#l + 1] = e
  end
  for _, key in ipairs(dtypes) do
    local g = make_group(unit, by_dtype[key].dtype, by_dtype[key].device, by_dtype[key].entries)
    unit.groups[#unit.groups + 1] = g
    for _, e in ipairs(g.entries) do
      if e.requires_grad then
        unit.ntrainable = unit.ntrainable + 1
        -- the hook lives as long as the tensor it is on, which the unit holds: it reaches the
        -- unit through weak references, so a model no longer used can be collected
        local weak = setmetatable({ unit = unit, e = e }, { __mode = "v" })
        e.full_view:register_post_accumulate_grad_hook(function()
          if weak.unit then on_grad_ready(weak.unit, weak.e) end
        end)
      end
    end
  end
  -- buffers: rank 0's everywhere, as DDP does
  if unit.sync_module_states and unit.world > 1 then
    no_grad(function() for _, b in ipairs(module:buffers()) do d.broadcast(b, 0, { group = group }) end end)
  end

  UNITS[module] = unit
  module:register_forward_pre_hook(function(_, args) pre_forward(unit); return cast_inputs(unit, args) end)
  module:register_forward_hook(function(_, _, output) post_forward(unit, output) end)
  -- state_dict(): the shards, each registered as a range of its full parameter
  module:register_state_dict_post_hook(function(_, sd, prefix)
    for _, g in ipairs(unit.groups) do
      for _, e in ipairs(g.entries) do
        local t = sd[prefix .. e.fqn]
        if t ~= nil and torch.is_tensor(t) and t:numel() == e.shard_view:numel() and t:dim() == 1 then
          d.register_shard(t, e.shape, e.shard_lo)
        end
      end
    end
  end)
  return module
end

------------------------------------------------------------------------------
-- helpers on sharded models
------------------------------------------------------------------------------

local function unit_of(module, fn)
  local u = UNITS[module]
  if not u then error(("nn.fsdp.%s: the module is not sharded (call nn.fully_shard first)"):format(fn), 3) end
  return u
end

--- is_sharded(module): true for a module given to fully_shard
function M.is_sharded(module) return UNITS[module] ~= nil end

--- unshard(module) / reshard(module): gather a unit's parameters into its module's fields
--- (e.g. to run it outside forward), and give them back
function M.unshard(module)
  local u = unit_of(module, "unshard")
  finish_gather(u)
  install_full(u)
end

function M.reshard(module)
  local u = unit_of(module, "reshard")
  install_shards(u)
  free_full(u)
end

--- full_state_dict(module, {rank0_only=true}): the unsharded parameters and buffers, as a
--- plain model's state_dict (copies); with rank0_only, other ranks get nil. Every rank calls it.
local FULL_OPTS = { "rank0_only" }
function M.full_state_dict(module, opts)
  opts = class.check_options("nn.fsdp.full_state_dict", opts, FULL_OPTS)
  local root = unit_of(module, "full_state_dict")
  local units = root.ctx.units
  for _, u in ipairs(units) do finish_gather(u); install_full(u) end
  local ok, sd = pcall(function()
    local out = module:state_dict()
    for k, v in pairs(out) do out[k] = v:clone() end
    return out
  end)
  for _, u in ipairs(units) do install_shards(u); free_full(u) end
  if not ok then error(sd, 0) end
  if opts.rank0_only ~= false and root.rank ~= 0 then return nil end
  return sd
end

--- optim_state_dict(module, optimizer): the optimizer's state keyed by parameter name, each
--- tensor the size of a shard registered as its range (for torch.distributed.checkpoint)
function M.optim_state_dict(module, optimizer)
  local root = unit_of(module, "optim_state_dict")
  local d = dist()
  local state = {}
  for _, u in ipairs(root.ctx.units) do
    local prefix = ""
    for _, e in ipairs(module:named_modules()) do if e[2] == u.module then prefix = e[1] ~= "" and e[1] .. "." or "" end end
    for _, g in ipairs(u.groups) do
      for _, e in ipairs(g.entries) do
        local st = optimizer.state[e.shard_view]
        if st then
          local c = {}
          for k, v in pairs(st) do
            if torch.is_tensor(v) and v:dim() == 1 and v:numel() == e.shard_view:numel() and v:numel() > 0 then
              c[k] = d.register_shard(v:detach(), e.shape, e.shard_lo)
            elseif torch.is_tensor(v) and v:dim() == 1 and v:numel() == 0 and e.shard_view:numel() == 0 then
              c[k] = d.register_shard(v:detach(), e.shape, e.shard_lo)
            else
              c[k] = v
            end
          end
          state[prefix .. e.fqn] = c
        end
      end
    end
  end
  return state
end

--- load_optim_state_dict(module, optimizer, state): puts state (from optim_state_dict, loaded
--- in place by torch.distributed.checkpoint) back into the optimizer
function M.load_optim_state_dict(module, optimizer, state)
  local root = unit_of(module, "load_optim_state_dict")
  if type(state) ~= "table" then error("nn.fsdp.load_optim_state_dict: argument 'state' must be a table", 2) end
  for _, u in ipairs(root.ctx.units) do
    local prefix = ""
    for _, e in ipairs(module:named_modules()) do if e[2] == u.module then prefix = e[1] ~= "" and e[1] .. "." or "" end end
    for _, g in ipairs(u.groups) do
      for _, e in ipairs(g.entries) do
        local st = state[prefix .. e.fqn]
        if st then
          local c = {}
          for k, v in pairs(st) do c[k] = torch.is_tensor(v) and v:clone() or v end
          optimizer.state[e.shard_view] = c
        end
      end
    end
  end
end

--- memory(module): bytes per rank of the shards, of the largest unit gathered, and the
--- most gathered at once so far
function M.memory(module)
  local root = unit_of(module, "memory")
  local shard, largest = 0, 0
  for _, u in ipairs(root.ctx.units) do
    local full = 0
    for _, g in ipairs(u.groups) do
      shard = shard + g.shard:numel() * g.shard:element_size()
      full = full + g.full_bytes
    end
    largest = math.max(largest, full)
  end
  return { shard_bytes = shard, largest_unit_bytes = largest, peak_gathered_bytes = root.ctx.peak_gathered_bytes }
end

--- stats(module): the collectives each unit has run, {gathers=, reduce_scatters=} in unit order
function M.stats(module)
  local root = unit_of(module, "stats")
  local out = {}
  for i, u in ipairs(root.ctx.units) do out[i] = { gathers = u.stats.gathers, reduce_scatters = u.stats.reduce_scatters } end
  return out
end

return M
