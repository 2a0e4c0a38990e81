-- test_devices.lua — devices and guards: torch.cuda.set_device/current_device, the
-- torch.cuda.device guard (function and <close> forms), what "cuda" means (the current
-- device when used), device properties, the per-device generators, and bad indices.
-- The fake driver has two devices; on a one-GPU machine the two-device tests skip.
local T = require "testing"
torch = require "torch"

if not torch.cuda.is_available() then
  T.skip("cuda devices", "CUDA is not available: " .. tostring(torch.cuda.unavailable_reason()))
  T.done()
  return
end
local n = torch.cuda.device_count()

T.test("device_count, current_device, properties", function()
  T.ok(n >= 1)
  T.eq(torch.cuda.current_device(), 0)
  local p = torch.cuda.get_device_properties(0)
  T.eq(type(p.name), "string")
  T.ok(p.total_memory > 0)
  T.ok(p.major >= 1 and p.minor >= 0 and p.multi_processor_count >= 1)
  T.eq(torch.cuda.get_device_name(), p.name)
  local a, b = torch.cuda.get_device_capability()
  T.eq(a, p.major)
  T.eq(b, p.minor)
end)

T.test("torch.device('cuda') has no index and means the current device when used", function()
  local d = torch.device("cuda")
  T.eq(d.type, "cuda")
  T.eq(d.index, nil)
  T.eq(tostring(d), "cuda")
  T.eq(torch.device("cuda:0").index, 0)
  T.eq(torch.device("cuda", 0).index, 0)
  T.eq(torch.zeros(2, { device = d }).device.index, 0)
  T.eq(torch.ones(2):cuda().device.index, 0)
end)

if n < 2 then
  T.skip("two-device tests", "one CUDA device")
else
  T.test("set_device changes what 'cuda' means; tensors keep their device", function()
    torch.cuda.set_device(1)
    T.eq(torch.cuda.current_device(), 1)
    local x = torch.zeros(3, { device = "cuda" })
    T.eq(x.device.index, 1)
    T.eq(torch.ones(2, { device = torch.device("cuda") }).device.index, 1)
    T.eq(torch.ones(2):cuda().device.index, 1)
    T.eq(torch.ones(2):to("cuda").device.index, 1)
    T.eq(torch.cuda.current_stream().device, "cuda:1")
    T.eq(torch.rand(4, { device = "cuda" }).device.index, 1)
    torch.cuda.set_device(torch.device("cuda:0"))
    T.eq(torch.cuda.current_device(), 0)
    T.eq(x.device.index, 1)
    torch.cuda.set_device("cuda:1")
    T.eq(torch.cuda.current_device(), 1)
    torch.cuda.set_device(0)
  end)

  T.test("torch.cuda.device guard: function form, restoring on error too", function()
    local seen = torch.cuda.device(1, function()
      return torch.cuda.current_device(), torch.zeros(1, { device = "cuda" }).device.index
    end)
    T.eq(seen, 1)
    T.eq(torch.cuda.current_device(), 0)
    local ok = pcall(torch.cuda.device, 1, function() error("boom") end)
    T.ok(not ok)
    T.eq(torch.cuda.current_device(), 0)
    local a, b = torch.cuda.device("cuda:1", function() return 7, 8 end)
    T.eq(a, 7)
    T.eq(b, 8)
  end)

  T.test("torch.cuda.device guard: <close> form, nested", function()
    do
      local _ <close> = torch.cuda.device(1)
      T.eq(torch.cuda.current_device(), 1)
      do
        local _ <close> = torch.cuda.device(0)
        T.eq(torch.cuda.current_device(), 0)
      end
      T.eq(torch.cuda.current_device(), 1)
    end
    T.eq(torch.cuda.current_device(), 0)
  end)

  T.test("each device has its generator; manual_seed, manual_seed_all, states", function()
    torch.cuda.manual_seed_all(11)
    local a0 = torch.rand(50, { device = "cuda:0" }):cpu()
    local a1 = torch.rand(50, { device = "cuda:1" }):cpu()
    T.ok(torch.equal(a0, a1), "same seed, same offset: same numbers on both")
    torch.cuda.device(1, function() torch.cuda.manual_seed(12) end)
    T.eq(torch.cuda.initial_seed(), 11)
    T.eq(torch.cuda.device(1, torch.cuda.initial_seed), 12)
    local states = torch.cuda.get_rng_state_all()
    T.eq(#states, n)
    local b0 = torch.rand(5, { device = "cuda:0" }):cpu()
    local b1 = torch.rand(5, { device = "cuda:1" }):cpu()
    torch.cuda.set_rng_state_all(states)
    T.ok(torch.equal(torch.rand(5, { device = "cuda:0" }):cpu(), b0))
    T.ok(torch.equal(torch.rand(5, { device = "cuda:1" }):cpu(), b1))
    torch.cuda.set_rng_state(states[2], 1)
    T.ok(torch.equal(torch.rand(5, { device = "cuda:1" }):cpu(), b1))
    torch.manual_seed(13)   -- seeds every device too
    T.eq(torch.cuda.initial_seed(), 13)
    T.eq(torch.cuda.initial_seed(1), 13)
    local s = torch.seed()
    T.eq(torch.cuda.initial_seed(1), s)
  end)
end

T.test("pin_memory: pinned copies of cpu tensors, is_pinned, errors", function()
  local x = torch.arange(1000):float():view(10, 100)
  T.ok(not x:is_pinned())
  local before = torch.cuda._fake_calls("mem_host_alloc")
  local p = x:pin_memory()
  T.ok(p:is_pinned())
  T.ok(torch.equal(p, x))
  T.eq(p.device.type, "cpu")
  T.eq(p:size(), { 10, 100 })
  T.ok(rawequal(p:pin_memory(), p), "already pinned: itself")
  if before then T.eq(torch.cuda._fake_calls("mem_host_alloc"), before + 1) end
  -- a strided view pins as a contiguous copy; views of pinned memory are pinned
  local q = x:t():pin_memory()
  T.ok(q:is_pinned() and q:is_contiguous() and torch.equal(q, x:t()))
  T.ok(p:narrow(1, 2, 3):is_pinned())
  T.ok(torch.zeros(0):pin_memory():is_pinned())
  T.ok(not p:clone():is_pinned())
  for _, dt in ipairs({ torch.float64, torch.int64, torch.bool, torch.float16 }) do
    local y = torch.ones(7, { dtype = dt })
    T.ok(torch.equal(y:pin_memory(), y))
  end
  T.raises(function() torch.ones(3, { device = "cuda" }):pin_memory() end, "pin_memory", "cannot pin a cuda:0 tensor")
  -- freed back to the driver when the last view goes
  if before then
    collectgarbage(); collectgarbage()
    local frees = torch.cuda._fake_calls("mem_free_host")
    local t = torch.ones(100):pin_memory()
    t = nil
    collectgarbage(); collectgarbage()
    T.eq(torch.cuda._fake_calls("mem_free_host"), frees + 1)
  end
end)

T.test("non_blocking copies from pinned memory", function()
  local x = torch.randn(64, 33)
  local y = x:pin_memory():to("cuda", { non_blocking = true })
  T.eq(y.device.type, "cuda")
  T.ok(torch.equal(y:cpu(), x))
  local z = x:pin_memory():cuda({ non_blocking = true })
  T.ok(torch.equal(z:cpu(), x))
  -- with a dtype too, and from pageable memory: synchronous, same values
  T.ok(torch.equal(x:pin_memory():to("cuda", torch.float64, { non_blocking = true }):cpu(), x:double()))
  T.ok(torch.equal(x:to("cuda", { non_blocking = true }):cpu(), x))
  torch.cuda.synchronize()
  T.eq(torch.cuda._pending_pinned_copies(), 0)
  T.raises(function() x:to("cuda", { non_blokcing = true }) end, "non_blokcing", "did you mean", "non_blocking")
  T.raises(function() x:cuda({ non_blokcing = true }) end, "non_blokcing", "did you mean")
end)

if torch.cuda._fake_calls("mem_host_alloc") then
  T.test("non_blocking: the copy stays queued on a held stream and its source is kept alive", function()
    local x = torch.arange(4096):float()
    local p = x:pin_memory()
    collectgarbage(); collectgarbage()
    local frees = torch.cuda._fake_calls("mem_free_host")
    T.ok(torch.cuda._fake_hold_stream(true))
    local y = p:to("cuda", { non_blocking = true })
    T.eq(torch.cuda._pending_pinned_copies(), 1, "the copy has not run")
    T.eq(torch.cuda.current_stream():query(), false)
    p = nil
    collectgarbage(); collectgarbage()
    T.eq(torch.cuda._fake_calls("mem_free_host"), frees, "the source is not freed while the copy is pending")
    torch.cuda._fake_hold_stream(false)
    torch.cuda.synchronize()
    T.eq(torch.cuda._pending_pinned_copies(), 0)
    T.eq(torch.cuda._fake_calls("mem_free_host"), frees + 1, "freed once the copy ran")
    T.ok(torch.equal(y:cpu(), x))
  end)
else
  T.skip("non_blocking on a held stream", "needs the fake driver's knobs")
end

T.test("DataLoader pin_memory = true pins each batch in the main process", function()
  local data = require "data"
  local ds = data.TensorDataset(torch.randn(10, 3), torch.arange(10))
  local n = 0
  for b in data.DataLoader(ds, { batch_size = 4, pin_memory = true }) do
    n = n + 1
    T.ok(b[1]:is_pinned() and b[2]:is_pinned())
    local g = b[1]:cuda({ non_blocking = true })
    T.eq(g.device.type, "cuda")
  end
  T.eq(n, 3)
  for b in data.DataLoader(ds, { batch_size = 4 }) do T.ok(not b[1]:is_pinned()) end
end)

T.test("bad device indices name the function and argument", function()
  T.raises(function() torch.cuda.set_device(99) end, "torch.cuda.set_device", "argument 'device'", "cuda:99")
  T.raises(function() torch.cuda.set_device(-1) end, "torch.cuda.set_device", "argument 'device'")
  T.raises(function() torch.cuda.set_device("cpu") end, "torch.cuda.set_device", "expected a cuda device")
  T.raises(function() torch.cuda.set_device() end, "set_device")
  T.raises(function() torch.cuda.device(-1) end, "torch.cuda.device", "argument 'device'")
  T.raises(function() torch.cuda.device(99, function() end) end, "torch.cuda.device", "cuda:99")
  T.raises(function() torch.cuda.device(0, 5) end, "function")
  T.raises(function() torch.cuda.get_device_properties(99) end, "get_device_properties", "argument 'device'")
  T.raises(function() torch.cuda.manual_seed("x") end, "torch.cuda.manual_seed", "seed")
  T.raises(function() torch.cuda.get_rng_state(99) end, "torch.cuda.get_rng_state", "cuda:99")
  T.raises(function() torch.zeros(2, { device = "cuda:99" }) end, "cuda:99")
  T.eq(torch.cuda.current_device(), 0)
end)

T.done()
