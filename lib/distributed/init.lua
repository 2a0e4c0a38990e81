-- torch.distributed — process groups and collectives over MPI (CPU tensors) or NCCL
-- (CUDA tensors: backend = "nccl", bootstrapped over MPI).
--
--   local dist = torch.distributed            -- or require "distributed"
--   dist.init_process_group {backend = "mpi", timeout = 600}
--   local rank, world = dist.get_rank(), dist.get_world_size()
--   dist.all_reduce(t)                         -- sum in place on every rank
--   local work = dist.all_reduce(t, {op = "avg", async_op = true}); ...; work:wait()
--
-- Ranks are numbered from 0, as in PyTorch and as MPI and its launchers print
-- them (OMPI_COMM_WORLD_RANK, mpirun's messages): a rank is an identity, not a
-- Lua index. Lists indexed by rank (all_gather's tensor_list, scatter_list...)
-- are Lua sequences, so rank r's tensor is list[r + 1].
--
-- The C half is lutorch_dist.so, built beside the lutorch program where MPI
-- is installed; this file finds and loads it on first use (see find_module).
local torch = require "torch"
local class = require "torch_class"
local check_options = class.check_options

local dist = {}

dist.ReduceOp = { SUM = "sum", AVG = "avg", MAX = "max", MIN = "min", PRODUCT = "product" }
dist.DEFAULT_TIMEOUT = 600

-- ---- the C module ----

local C, load_error

local function dirname(p) return p:match("^(.*)/[^/]*$") or "." end

-- lutorch_dist.so lives beside whatever holds the torch module: the lutorch
-- program, torch.so or liblutorch.so (found in /proc/self/maps), or under
-- lib/lutorch of an install; LUTORCH_DIST_SO and package.cpath come first.
local function candidates()
  local list = {}
  local env = os.getenv("LUTORCH_DIST_SO")
  if env and env ~= "" then list[#list + 1] = env end
  local p = package.searchpath("lutorch_dist", package.cpath)
  if p then list[#list + 1] = p end
  local f = io.open("/proc/self/maps")
  if f then
    local seen = {}
    for line in f:lines() do
      local path = line:match("%s(/%S+)$")
      if path and not seen[path] then
        local base = path:match("[^/]+$")
        if base == "lutorch" or base == "torch.so" or base:match("^liblutorch%.so") then
          seen[path] = true
          local d = dirname(path)
          list[#list + 1] = d .. "/lutorch_dist.so"
          list[#list + 1] = d .. "/../lib/lutorch/lutorch_dist.so"
          list[#list + 1] = d .. "/lutorch/lutorch_dist.so"
        end
      end
    end
    f:close()
  end
  local src = debug.getinfo(1, "S").source
  if src:sub(1, 1) == "@" then list[#list + 1] = dirname(src:sub(2)) .. "/../../build/lutorch_dist.so" end
  return list
end

local function load_c()
  if C then return C end
  if load_error then return nil, load_error end
  local tried = {}
  for _, path in ipairs(candidates()) do
    local f = io.open(path)
    if f then
      f:close()
      local open, err = package.loadlib(path, "luaopen_lutorch_dist")
      if open then C = open(); return C end
      tried[#tried + 1] = path .. ": " .. tostring(err)
    else
      tried[#tried + 1] = path .. ": not found"
    end
  end
  load_error = "torch.distributed: lutorch_dist.so is not available (lutorch was built without MPI, " ..
               "or set LUTORCH_DIST_SO); tried:\n  " .. table.concat(tried, "\n  ")
  return nil, load_error
end

--- true when the MPI backend can be loaded
function dist.is_available() return load_c() ~= nil end
function dist.is_mpi_available() return load_c() ~= nil end
--- true when the nccl backend can be had: libnccl.so.2 opens, or the fake NCCL is on
--- (LUTORCH_NCCL=fake, or the fake CUDA driver); the second value says which, or why not
function dist.is_nccl_available()
  local c, err = load_c()
  if not c then return false, err end
  torch.cuda.is_available()     -- loads the CUDA module first: the nccl backend works through it
  return c.nccl_available()
end

-- ---- groups ----

-- ProcessGroup(pg): a group this rank is a member of (pg: the C group);
-- ProcessGroup(nil, ranks): the value new_group gives the ranks outside it
local Group = class("torch.distributed.ProcessGroup")
function Group:__init(pg, ranks)
  self.index = {}
  if not pg then self.ranks = ranks; return end
  self.pg, self.backend, self.rank, self.size, self.ranks = pg, pg:backend(), pg:rank(), pg:size(), pg:ranks()
  for i, r in ipairs(self.ranks) do self.index[r] = i - 1 end
end
function Group:__tostring()
  if not self.pg then return "ProcessGroup(non-member)" end
  return ("ProcessGroup(backend=%s, rank=%d, size=%d, ranks={%s})"):format(self.backend, self.rank, self.size,
    table.concat(self.ranks, ","))
end

local world   -- the default group

local function need_init(op)
  if not world then error(op .. ": the default process group is not initialized; call init_process_group first", 3) end
end

local function group_of(opts, op)
  need_init(op)
  local g = opts and opts.group or world
  if getmetatable(g) ~= Group then error(op .. ": 'group' must be a process group", 3) end
  if not g.pg then error(op .. ": this rank is not a member of the group", 3) end
  return g
end

-- a global rank (what users pass as src/dst) to its rank in g
local function group_rank(g, r, op, what)
  if math.type(r) ~= "integer" then error(("%s: '%s' must be an integer rank, got %s"):format(op, what, tostring(r)), 3) end
  local i = g.index[r]
  if not i then error(("%s: %s %d is not in the group {%s}"):format(op, what, r, table.concat(g.ranks, ",")), 3) end
  return i
end

local function local_size()
  return tonumber(os.getenv("OMPI_COMM_WORLD_LOCAL_SIZE") or os.getenv("LOCAL_WORLD_SIZE") or "") or 1
end

--- init_process_group {backend="mpi", timeout=seconds}: joins the job started by mpirun
local INIT_OPTS = { "backend", "timeout" }
function dist.init_process_group(opts)
  if type(opts) == "string" then opts = { backend = opts } end
  opts = check_options("torch.distributed.init_process_group", opts, INIT_OPTS)
  local backend = opts.backend or "mpi"
  if backend == "gloo" then backend = "mpi" end
  if backend ~= "mpi" and backend ~= "nccl" then
    error(("init_process_group: unknown backend '%s' (mpi, nccl; gloo is taken as mpi)"):format(tostring(backend)), 2)
  end
  if world then error("init_process_group: trying to initialize the default process group twice", 2) end
  local timeout = opts.timeout or tonumber(os.getenv("LUTORCH_DIST_TIMEOUT") or "") or dist.DEFAULT_TIMEOUT
  if type(timeout) ~= "number" or timeout <= 0 then error("init_process_group: timeout must be a positive number of seconds", 2) end
  local c, err = load_c()
  if not c then error(err, 2) end
  if backend == "nccl" then torch.cuda.is_available() end   -- the CUDA module, before the backend needs it
  local ok, pg = pcall(c.init, timeout, backend)
  if not ok then error(pg, 2) end
  world = Group(pg)
  -- as torch.cuda.set_device(local_rank) in PyTorch scripts: the communicator's device is current
  if pg:device() and torch.cuda.is_available() then torch.cuda.set_device(pg:device()) end
  -- ranks sharing a machine share its cores (as torch.distributed.run sets OMP_NUM_THREADS)
  if not os.getenv("LUTORCH_NUM_THREADS") and not os.getenv("OMP_NUM_THREADS") and local_size() > 1 then
    torch.set_num_threads(math.max(1, torch.get_num_threads() // local_size()))
  end
  return world
end

function dist.is_initialized() return world ~= nil end

function dist.get_rank(group)
  need_init("get_rank")
  local g = group or world
  if not g.pg then return -1 end
  return g.rank
end

function dist.get_world_size(group)
  need_init("get_world_size")
  local g = group or world
  if not g.pg then return -1 end
  return g.size
end

function dist.get_backend(group) need_init("get_backend"); return (group or world).backend or "mpi" end
function dist.get_timeout() return C and C.get_timeout() end
function dist.set_timeout(t) need_init("set_timeout"); C.set_timeout(t) end
function dist.group_world() return world end

--- new_group(ranks, {backend=}): every rank calls it; members get the group, others a
--- non-member value. backend: the default group's (nil), or "mpi" beside a nccl default group
--- (CPU tensors over the MPI world the nccl group was bootstrapped on, as PyTorch's gloo group)
local NEW_GROUP_OPTS = { "backend" }
function dist.new_group(ranks, opts)
  opts = check_options("torch.distributed.new_group", opts, NEW_GROUP_OPTS)
  need_init("new_group")
  local backend = opts and opts.backend
  if backend == "gloo" then backend = "mpi" end
  if backend ~= nil and backend ~= "mpi" and backend ~= world.backend then
    error(("new_group: backend '%s' needs a default group of that backend (this one is %s)"):format(
      tostring(backend), world.backend), 2)
  end
  if ranks == nil then ranks = world.ranks end
  if type(ranks) ~= "table" or #ranks == 0 then error("new_group: 'ranks' must be a non-empty list of ranks", 2) end
  local sorted, seen = {}, {}
  for i, r in ipairs(ranks) do
    if math.type(r) ~= "integer" or r < 0 or r >= world.size then
      error(("new_group: rank %s is not in 0..%d"):format(tostring(r), world.size - 1), 2)
    end
    if seen[r] then error(("new_group: rank %d appears twice"):format(r), 2) end
    seen[r] = true
    sorted[i] = r
  end
  table.sort(sorted)
  local w = C.new_group(world.pg, sorted, backend)
  w:wait()
  local pg = w:group()
  return Group(pg, sorted)
end

--- destroy_process_group([group]): waits for queued work, then shuts MPI down (default group)
function dist.destroy_process_group(group)
  if group and group ~= world then
    if group.pg then group.pg:free(); group.pg = nil end
    return
  end
  if not world then return end
  C.destroy()
  world = nil
end

-- ---- work handles ----

-- Work(name, cworks, post, result, outputs): the handle of an async op over the C handles
-- cworks; post() runs once they are done, result() gives what the op returns, outputs
-- lists the tensors it writes (the value of its future)
local Work = class("torch.distributed.Work")
function Work:__init(name, cworks, post, result, outputs)
  self.name, self.c, self.post, self.result, self.outputs = name, cworks, post, result, outputs
end

local function finish(self)
  if not self.finished then
    self.finished = true
    if self.post then self.post() end
  end
end

--- work:wait(): blocks until done (raises the error of a failed or timed-out op)
function Work:wait()
  for _, c in ipairs(self.c) do c:wait() end
  finish(self)
  return true
end

--- work:is_completed(): true once done (never blocks)
function Work:is_completed()
  for _, c in ipairs(self.c) do if not c:is_completed() then return false end end
  finish(self)
  return true
end

--- work:timing(): queued, started and finished times (dist.clock() seconds) of the C op
function Work:timing() return self.c[1]:times() end

function Work:__tostring() return ("Work(%s)"):format(self.name) end

--- work:get_future(): a torch.futures.Future completed, once the op is done, with the list
--- of the tensors it wrote ({tensor} for all_reduce and broadcast), as PyTorch's
function Work:get_future()
  if not self.future then
    self.future = dist.futures._driven(function()
      self:wait()
      if self.result then return self.result() end
      return self.outputs or {}
    end, function() return self:is_completed() end)
  end
  return self.future
end

-- the C functions for opts: queued handles (async_op), or C.now's, which return once done
local function run(opts) return opts and opts.async_op and C or C.now end

-- after the C op(s): a Work for async_op; else (C.now has run them) the result
local function launch(name, opts, cworks, post, result, outputs)
  if not (opts and opts.async_op) then
    if post then post() end
    if result then return result() end
    return nil
  end
  return Work(name, cworks, post, result, outputs)
end

-- ---- tensors in and out ----

local function check_tensor(t, op, what)
  if not torch.is_tensor(t) then error(("%s: '%s' must be a tensor, got %s"):format(op, what, type(t)), 4) end
  return t
end

local function copy_into(dst, src)
  torch.no_grad(function() dst:copy_(src) end)
end

-- a contiguous tensor to operate on in place, and a function that writes it back
local function inplace(t, op, what)
  check_tensor(t, op, what)
  if t:is_contiguous() then return t, nil end
  local c = t:contiguous()
  return c, function() copy_into(t, c) end
end

local function readonly(t, op, what)
  check_tensor(t, op, what)
  return t:is_contiguous() and t or t:contiguous()
end

local function chain(a, b)
  if not a then return b end
  if not b then return a end
  return function() a(); b() end
end

local NO_OPTS = setmetatable({}, { __newindex = function() error("torch.distributed: internal: NO_OPTS written", 2) end })

-- the options of each collective and point-to-point call; any other name is an error
-- naming the function and the option (torch_class.check_options)
local OPTS = {
  all_reduce = { "op", "group", "async_op" }, reduce = { "op", "group", "async_op" },
  reduce_scatter = { "op", "group", "async_op" }, reduce_scatter_tensor = { "op", "group", "async_op" },
  broadcast = { "group", "async_op" }, all_gather = { "group", "async_op" },
  all_gather_into_tensor = { "group", "async_op" }, gather = { "group", "async_op" },
  scatter = { "group", "async_op" }, all_to_all = { "group", "async_op" }, barrier = { "group", "async_op" },
  all_to_all_single = { "output_split_sizes", "input_split_sizes", "group", "async_op" },
  isend = { "tag", "group" }, irecv = { "tag", "group" }, send = { "tag", "group" }, recv = { "tag", "group" },
}

local function opts_of(opts, op)
  if opts == nil then return NO_OPTS end
  if type(opts) == "string" then opts = { op = opts } end
  if type(opts) ~= "table" then error(("%s: options must be a table, got %s"):format(op, type(opts)), 3) end
  return check_options("torch.distributed." .. op, opts, OPTS[op])
end

local function check_list(list, n, op, what)
  if type(list) ~= "table" or #list ~= n then
    error(("%s: '%s' must be a list of %d tensors (one per rank)"):format(op, what, n), 4)
  end
  for i = 1, n do check_tensor(list[i], op, what .. "[" .. i .. "]") end
end

-- the tensors of list, flattened one after the other into one new tensor
local function concat(list)
  local flat = {}
  for i, t in ipairs(list) do flat[i] = t:reshape(-1) end
  return torch.cat(flat)
end

-- copy consecutive pieces of flat into the tensors of list
local function split_into(flat, list)
  local off = 1
  for _, t in ipairs(list) do
    local n = t:numel()
    if n > 0 then copy_into(t, flat:narrow(1, off, n):view(t.shape)) end
    off = off + n
  end
end

local function flat_view(t) return t:view(-1) end

-- ---- collectives ----

--- all_reduce(tensor, {op="sum"|"avg"|"max"|"min"|"product", group=, async_op=})
function dist.all_reduce(tensor, opts)
  opts = opts_of(opts, "all_reduce")
  local g = group_of(opts, "all_reduce")
  local t, post = inplace(tensor, "all_reduce", "tensor")
  return launch("all_reduce", opts, { run(opts).all_reduce(g.pg, t, opts.op or "sum") }, post, nil, { tensor })
end

--- broadcast(tensor, src, {group=, async_op=})
function dist.broadcast(tensor, src, opts)
  opts = opts_of(opts, "broadcast")
  local g = group_of(opts, "broadcast")
  local t, post = inplace(tensor, "broadcast", "tensor")
  return launch("broadcast", opts, { run(opts).broadcast(g.pg, t, group_rank(g, src or 0, "broadcast", "src")) }, post,
                nil, { tensor })
end

--- reduce(tensor, dst, {op=, group=, async_op=}): the result lands on dst
function dist.reduce(tensor, dst, opts)
  opts = opts_of(opts, "reduce")
  local g = group_of(opts, "reduce")
  local t, post = inplace(tensor, "reduce", "tensor")
  local d = group_rank(g, dst or 0, "reduce", "dst")
  if g.rank ~= d then post = nil end
  return launch("reduce", opts, { run(opts).reduce(g.pg, t, d, opts.op or "sum") }, post, nil, { tensor })
end

--- all_gather_into_tensor(output, input, opts): output holds world_size inputs, rank by rank
function dist.all_gather_into_tensor(output, input, opts)
  opts = opts_of(opts, "all_gather_into_tensor")
  local g = group_of(opts, "all_gather_into_tensor")
  local i = readonly(input, "all_gather_into_tensor", "input")
  local o, post = inplace(output, "all_gather_into_tensor", "output")
  return launch("all_gather", opts, { run(opts).all_gather(g.pg, o, i) }, post, nil, { output })
end

--- all_gather(tensor_list, tensor, opts): tensor_list[r + 1] receives rank r's tensor;
--- all_gather(output_tensor, tensor) gathers into one tensor
function dist.all_gather(list, tensor, opts)
  if torch.is_tensor(list) then return dist.all_gather_into_tensor(list, tensor, opts) end
  opts = opts_of(opts, "all_gather")
  local g = group_of(opts, "all_gather")
  local i = readonly(tensor, "all_gather", "tensor")
  check_list(list, g.size, "all_gather", "tensor_list")
  local out = torch.empty({ g.size * i:numel() }, { dtype = i.dtype, device = i.device })
  return launch("all_gather", opts, { run(opts).all_gather(g.pg, out, i) }, function() split_into(out, list) end,
                nil, list)
end

--- gather(tensor, gather_list, dst, opts): on dst, gather_list[r + 1] receives rank r's tensor
function dist.gather(tensor, gather_list, dst, opts)
  opts = opts_of(opts, "gather")
  local g = group_of(opts, "gather")
  local i = readonly(tensor, "gather", "tensor")
  local d = group_rank(g, dst or 0, "gather", "dst")
  local out, post
  if g.rank == d then
    check_list(gather_list, g.size, "gather", "gather_list")
    out = torch.empty({ g.size * i:numel() }, { dtype = i.dtype, device = i.device })
    post = function() split_into(out, gather_list) end
  end
  return launch("gather", opts, { run(opts).gather(g.pg, i, out, d) }, post, nil, g.rank == d and gather_list or {})
end

--- scatter(tensor, scatter_list, src, opts): rank r receives scatter_list[r + 1] of src
function dist.scatter(tensor, scatter_list, src, opts)
  opts = opts_of(opts, "scatter")
  local g = group_of(opts, "scatter")
  local o, post = inplace(tensor, "scatter", "tensor")
  local s = group_rank(g, src or 0, "scatter", "src")
  local input
  if g.rank == s then
    check_list(scatter_list, g.size, "scatter", "scatter_list")
    for r = 1, g.size do
      if scatter_list[r]:numel() ~= o:numel() then
        error(("scatter: scatter_list[%d] has %d elements, the tensor %d"):format(r, scatter_list[r]:numel(), o:numel()), 2)
      end
    end
    input = concat(scatter_list)
  end
  return launch("scatter", opts, { run(opts).scatter(g.pg, o, input, s) }, post, nil, { tensor })
end

--- reduce_scatter(output, input_list, opts): output = op over ranks of input_list[rank + 1]
function dist.reduce_scatter(output, input_list, opts)
  opts = opts_of(opts, "reduce_scatter")
  local g = group_of(opts, "reduce_scatter")
  if torch.is_tensor(input_list) then return dist.reduce_scatter_tensor(output, input_list, opts) end
  check_list(input_list, g.size, "reduce_scatter", "input_list")
  local counts = {}
  for r = 1, g.size do counts[r] = input_list[r]:numel() end
  local o, post = inplace(output, "reduce_scatter", "output")
  return launch("reduce_scatter", opts, { run(opts).reduce_scatter(g.pg, o, concat(input_list), opts.op or "sum", counts) },
                post, nil, { output })
end

--- reduce_scatter_tensor(output, input, opts): input holds world_size parts of output's size
function dist.reduce_scatter_tensor(output, input, opts)
  opts = opts_of(opts, "reduce_scatter_tensor")
  local g = group_of(opts, "reduce_scatter_tensor")
  local i = readonly(input, "reduce_scatter_tensor", "input")
  local o, post = inplace(output, "reduce_scatter_tensor", "output")
  if i:numel() ~= o:numel() * g.size then
    error(("reduce_scatter_tensor: the input has %d elements; it needs %d x %d"):format(i:numel(), g.size, o:numel()), 2)
  end
  return launch("reduce_scatter", opts, { run(opts).reduce_scatter(g.pg, o, i, opts.op or "sum") }, post, nil, { output })
end

--- all_to_all(output_list, input_list, opts): input_list[r + 1] goes to rank r,
--- output_list[r + 1] comes from rank r (sizes may differ)
function dist.all_to_all(output_list, input_list, opts)
  opts = opts_of(opts, "all_to_all")
  local g = group_of(opts, "all_to_all")
  check_list(output_list, g.size, "all_to_all", "output_list")
  check_list(input_list, g.size, "all_to_all", "input_list")
  local sc, rc, total = {}, {}, 0
  for r = 1, g.size do sc[r] = input_list[r]:numel(); rc[r] = output_list[r]:numel(); total = total + rc[r] end
  local out = torch.empty({ total }, { dtype = output_list[1].dtype, device = output_list[1].device })
  return launch("all_to_all", opts, { run(opts).all_to_all(g.pg, out, concat(input_list), sc, rc) },
                function() split_into(out, output_list) end, nil, output_list)
end

--- all_to_all_single(output, input, {output_split_sizes=, input_split_sizes=}): splits along dim 1
function dist.all_to_all_single(output, input, opts)
  opts = opts_of(opts, "all_to_all_single")
  local g = group_of(opts, "all_to_all_single")
  local i = readonly(input, "all_to_all_single", "input")
  local o, post = inplace(output, "all_to_all_single", "output")
  local function counts(t, splits)
    if not splits then return nil end
    local row = t:dim() > 0 and t:numel() // math.max(1, t:size(1)) or 1
    local c = {}
    for r = 1, g.size do c[r] = splits[r] * row end
    return c
  end
  return launch("all_to_all", opts, { run(opts).all_to_all(g.pg, o, i, counts(i, opts.input_split_sizes),
                                                   counts(o, opts.output_split_sizes)) }, post, nil, { output })
end

--- barrier({group=, async_op=})
function dist.barrier(opts)
  opts = opts_of(opts, "barrier")
  local g = group_of(opts, "barrier")
  return launch("barrier", opts, { run(opts).barrier(g.pg) })
end

-- ---- point to point ----

--- isend(tensor, dst, {tag=, group=}): a Work
function dist.isend(tensor, dst, opts)
  opts = opts_of(opts, "isend")
  local g = group_of(opts, "isend")
  local t = readonly(tensor, "isend", "tensor")
  local w = C.send(g.pg, t, group_rank(g, dst, "isend", "dst"), opts.tag or 0)
  return Work("send", { w }, nil, nil, { tensor })
end

--- irecv(tensor, src, {tag=, group=}): a Work; src nil receives from any rank
function dist.irecv(tensor, src, opts)
  opts = opts_of(opts, "irecv")
  local g = group_of(opts, "irecv")
  local t, post = inplace(tensor, "irecv", "tensor")
  local s = src ~= nil and group_rank(g, src, "irecv", "src") or nil
  local w = C.recv(g.pg, t, s, opts.tag or 0)
  local work = Work("recv", { w }, post, nil, { tensor })
  work.source = function() local r = w:source(); return r and g.ranks[r + 1] end
  return work
end

function dist.send(tensor, dst, opts) dist.isend(tensor, dst, opts_of(opts, "send")):wait() end

--- recv(tensor, src, opts): returns the sender's rank
function dist.recv(tensor, src, opts)
  local w = dist.irecv(tensor, src, opts_of(opts, "recv"))
  w:wait()
  return w.source()
end

-- ---- sharded tensors ----

-- A sharded tensor in a state dict is a plain 1-D tensor holding a contiguous range of
-- the row-major flattening of a larger, global tensor that no rank holds whole
-- (FSDP's parameter shards and their optimizer state). What it is a piece of lives here,
-- keyed weakly by the tensor value, so state dicts stay tables of ordinary tensors and
-- torch.distributed.checkpoint can place each piece.
local shard_registry = setmetatable({}, { __mode = "k" })

--- register_shard(t, global_shape, offset): t (1-D, contiguous) holds elements
--- offset .. offset + t:numel() - 1 (0-based) of a tensor of shape global_shape
function dist.register_shard(t, global_shape, offset)
  check_tensor(t, "register_shard", "tensor")
  if t:dim() ~= 1 then error("register_shard: the shard must be 1-D, got " .. t:dim() .. " dims", 2) end
  if type(global_shape) ~= "table" then error("register_shard: 'global_shape' must be a list of sizes", 2) end
  local shape, n = {}, 1
  for i, s in ipairs(global_shape) do
    if math.type(s) ~= "integer" or s < 0 then error("register_shard: 'global_shape' must hold sizes >= 0", 2) end
    shape[i] = s; n = n * s
  end
  if math.type(offset) ~= "integer" or offset < 0 or offset + t:numel() > n then
    error(("register_shard: elements %s..%s are outside a tensor of %d elements"):format(
      tostring(offset), tostring((offset or 0) + t:numel() - 1), n), 2)
  end
  shard_registry[t] = { global_shape = shape, offset = offset, numel = n }
  return t
end

--- shard_info(t): {global_shape=, offset=, numel=} for a registered shard, else nil
function dist.shard_info(t) return shard_registry[t] end

-- torch.distributed.fsdp.fully_shard is nn.fully_shard (lib/nn/fsdp.lua), loaded on first use
dist.fsdp = setmetatable({}, { __index = function(t, k)
  local v = require("nn.fsdp")[k]
  rawset(t, k, v)
  return v
end })

-- ---- helpers ----

--- clock(): the monotonic clock work handles time themselves with
function dist.clock()
  local c = load_c()
  return c and c.clock() or os.clock()
end

--- broken(): the message of a timed-out or failed collective, or nil
function dist.broken() return C and C.broken() end

-- _nccl_info(): {available=, library=, version=, id_hash=} of the nccl backend (tests)
function dist._nccl_info() local c = load_c(); return c and c._nccl_info() end

--- abort(msg): end the whole job now
function dist.abort(msg, code)
  local c = load_c()
  if c then c.abort(msg, code) end
  io.stderr:write(tostring(msg), "\n")
  os.exit(code or 1)
end

--- print0(...): print on rank 0 only (every rank when not initialized)
function dist.print0(...)
  if not world or world.rank == 0 then print(...) end
end

--- progress(src, opts): data.progress drawn on rank 0 only (other ranks iterate silently)
function dist.progress(src, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  if world and world.rank ~= 0 then
    o.file = { write = function() end, flush = function() end }
    o.tty = false
    o.interval = math.huge
  end
  return require("data").progress(src, o)
end

--- is_main_process(): rank 0, or no process group
function dist.is_main_process() return not world or world.rank == 0 end

-- torch.futures (Future, collect_all, wait_all) and DDP's communication hooks
-- (torch.distributed.algorithms.ddp_comm_hooks.default_hooks)
dist.futures = require "distributed.futures"
local comm_hooks = require "distributed.comm_hooks"
dist.GradBucket = comm_hooks.GradBucket
dist.algorithms = { ddp_comm_hooks = { default_hooks = comm_hooks } }
if rawget(torch, "futures") == nil then rawset(torch, "futures", dist.futures) end

-- torch.distributed.checkpoint (lib/distributed/checkpoint.lua), loaded on first use
setmetatable(dist, { __index = function(t, k)
  if k == "checkpoint" then
    local m = require "distributed.checkpoint"
    rawset(t, k, m)
    return m
  end
end })

return dist
