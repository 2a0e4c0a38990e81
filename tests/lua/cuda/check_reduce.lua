-- check_reduce.lua — what the reduction, scan and nn test files under tests/lua/cuda share:
-- inputs of a dtype, comparing a cuda result with the CPU's, and `check`, which runs an op on
-- the CPU and on cuda and says the CUDA kernel (not the CPU fallback) computed it.
local T = require "testing"
local check = require "cuda.check"
local M = {}

M.TOL = { float64 = 1e-10, float32 = 1e-4, float16 = 1e-2, bfloat16 = 3e-2 }

-- values of dtype dt with the given shape (a 0-d tensor for {})
function M.gen(dt, shape)
  local x = #shape == 0 and torch.randn({}) * 3 or torch.randn(shape) * 3
  if dt == torch.bool then return x:gt(0) end
  if x:to(dt):is_floating_point() then return x:to(dt) end
  x = x:round()
  if dt == torch.uint8 then x = x:abs() end
  return x:to(dt)
end

-- got (on cuda) equals want (on the CPU): exactly for integers and bools, else within the
-- dtype's relative tolerance (or tol), NaNs where want has them
local by_dtype = {}
for name, v in pairs(M.TOL) do by_dtype[torch[name]] = v end
function M.close(got, want, what, tol) check.close(got, want, what, tol or by_dtype) end

-- f on the CPU and on cuda give the same, or both raise the same message; unless
-- opts.no_count, a CUDA kernel ran (host or device count rose) and nothing fell back
function M.check(what, f, args, opts)
  opts = opts or {}
  local c = torch.cuda
  local dargs = {}
  for i, t in ipairs(args) do dargs[i] = torch.is_tensor(t) and t:cuda() or t end
  local okc, want = pcall(f, table.unpack(args))
  c._kernel_counts(true)
  local okd, got = pcall(f, table.unpack(dargs))
  local n = c._kernel_counts(true)
  if not okc then
    T.ok(not okd, what .. ": the CPU raises (" .. tostring(want) .. ") but cuda does not")
    if not okd then T.eq(tostring(got):match(": ([^:]*)$"), tostring(want):match(": ([^:]*)$"), what .. " error") end
    return
  end
  T.ok(okd, what .. ": " .. tostring(got))
  if not okd then return end
  M.close(got, want, what, opts.tol)
  T.ok(n.cpu == 0, what .. ": the CPU fallback ran")
  if not opts.no_count and want:numel() > 0 then T.ok(n.host + n.device > 0, what .. ": no CUDA kernel ran") end
end

return M
