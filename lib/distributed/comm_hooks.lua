-- distributed/comm_hooks.lua — DDP's communication hooks and the bucket they are given:
-- torch.distributed.algorithms.ddp_comm_hooks.default_hooks (also
-- nn.DistributedDataParallel.comm_hooks).
--
--   ddp:register_comm_hook(nil, dist.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook)
--
-- A hook is hook(state, bucket) -> Future: DDP calls it once per bucket when the bucket's
-- gradients are all in bucket:buffer(), and writes the tensor the future's wait() gives
-- into the gradients. The built-in hooks take a process group (or nil, the default group)
-- as their state.
local torch = require "torch"
local class = require "torch_class"

local M = {}

local function dist() return require "distributed" end

-- ---- the bucket a hook is given ----

--- GradBucket: one bucket of DDP's flat gradients, as a hook sees it
local GradBucket = class("torch.distributed.GradBucket")
M.GradBucket = GradBucket

-- index: 1-based here (the bucket's place in DDP's list); index() answers 0-based as PyTorch
function GradBucket:__init(index, buffer, params, grads, is_last)
  self._index, self._buffer, self._params, self._grads, self._last = index, buffer, params, grads, is_last
end

--- bucket:index(): the bucket's number, 0-based as in PyTorch (0 is reduced first)
function GradBucket:index() return self._index - 1 end
--- bucket:buffer(): the flat tensor holding the bucket's gradients, one after the other
function GradBucket:buffer() return self._buffer end
--- bucket:set_buffer(t): replace the buffer a later hook (or a wrapper) sees
function GradBucket:set_buffer(t)
  if not torch.is_tensor(t) then error("GradBucket.set_buffer: 'tensor' must be a tensor, got " .. type(t), 2) end
  self._buffer = t
end
--- bucket:parameters(): the parameters of the bucket, in buffer order
function GradBucket:parameters() return { table.unpack(self._params) } end
--- bucket:gradients(): their gradients: views into the buffer, in the same order
function GradBucket:gradients() return { table.unpack(self._grads) } end
--- bucket:is_last(): true for the bucket reduced last in an iteration
function GradBucket:is_last() return self._last end
function GradBucket:__tostring()
  return ("GradBucket(index=%d, %d parameters, %d elements)"):format(self._index - 1, #self._params,
    self._buffer:numel())
end

-- ---- the built-in hooks ----

local function group_of(state, fn)
  if state ~= nil and class.typename(state) ~= "torch.distributed.ProcessGroup" then
    error(("%s: the state must be a process group or nil (the default group), got %s"):format(
      fn, class.type(state)), 3)
  end
  return state
end

--- allreduce_hook(process_group, bucket): what DDP does without a hook: all_reduce (avg)
function M.allreduce_hook(process_group, bucket)
  local g = group_of(process_group, "allreduce_hook")
  return dist().all_reduce(bucket:buffer(), { op = "avg", group = g, async_op = true }):get_future()
    :then_(function(f) return f:value()[1] end)
end

-- the compressed reduction: the bucket cast to dtype and divided by the world size (before
-- the sum, as PyTorch, so a sum over many ranks cannot overflow float16), summed over MPI
-- in dtype (lutorch_dist reduces 16-bit floats pairwise, rounding every partial sum to
-- dtype), then cast back into the buffer
local function compressed(dtype, g, buf)
  local world = dist().get_world_size(g)
  local c = torch.no_grad(function() return buf:to(dtype):div_(world) end)
  return dist().all_reduce(c, { op = "sum", group = g, async_op = true }):get_future():then_(function(f)
    local r = f:value()[1]
    torch.no_grad(function() buf:copy_(r) end)
    return buf
  end)
end

--- fp16_compress_hook(process_group, bucket): reduce the bucket as float16 (half the bytes of
--- float32), cast back to the bucket's dtype
function M.fp16_compress_hook(process_group, bucket)
  local g = group_of(process_group, "fp16_compress_hook")
  return compressed(torch.float16, g, bucket:buffer())
end

--- bf16_compress_hook(process_group, bucket): the same in bfloat16 (float32's range, 8 bits
--- of mantissa)
function M.bf16_compress_hook(process_group, bucket)
  local g = group_of(process_group, "bf16_compress_hook")
  return compressed(torch.bfloat16, g, bucket:buffer())
end

-- wrap(hook, dtype): hook run on the bucket cast to dtype; its result cast back
local function wrapper(name, dtype)
  return function(hook)
    if type(hook) ~= "function" then error(("%s: 'hook' must be a function, got %s"):format(name, type(hook)), 2) end
    return function(state, bucket)
      local buf = bucket:buffer()
      bucket:set_buffer(torch.no_grad(function() return buf:to(dtype) end))
      local fut = hook(state, bucket)
      return fut:then_(function(f)
        local r = f:value()
        torch.no_grad(function() buf:copy_(r) end)
        return buf
      end)
    end
  end
end

--- fp16_compress_wrapper(hook): a hook that runs hook on the bucket cast to float16
M.fp16_compress_wrapper = wrapper("fp16_compress_wrapper", torch.float16)
--- bf16_compress_wrapper(hook): the same with bfloat16
M.bf16_compress_wrapper = wrapper("bf16_compress_wrapper", torch.bfloat16)

return M
