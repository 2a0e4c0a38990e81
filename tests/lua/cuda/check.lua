-- tests/lua/cuda/check.lua — what the CUDA kernel tests of tests/lua/cuda/ share (required as
-- "cuda.check"; not a test itself): comparing a cuda result with the CPU's and checking that
-- the CUDA kernels computed it.
local T = require "testing"
local M = {}

-- the relative tolerance per float dtype (results of one op in another summation order)
M.TOL = { [torch.float64] = 1e-12, [torch.float32] = 2e-6, [torch.float16] = 2e-3, [torch.bfloat16] = 1.6e-2 }

-- got (on cuda) equals want (on the CPU): exact for integers and bools, within tol (a number,
-- or a table by dtype: tol[dtype], 0 when absent) for floats, NaNs in the same places; tables of results element by element
function M.close(got, want, what, tol)
  if type(want) == "table" then
    T.eq(#got, #want, what .. " results")
    for i = 1, #want do M.close(got[i], want[i], what .. " [" .. i .. "]", tol) end
    return
  end
  T.eq(tostring(got.device):sub(1, 4), "cuda", what .. " device")
  local h = got:cpu()
  T.eq(h.dtype, want.dtype, what .. " dtype")
  T.eq(tostring(h:size()), tostring(want:size()), what .. " shape")
  if h:numel() == 0 then return end
  if not h:is_floating_point() then
    T.ok(torch.equal(h, want), what .. ": " .. tostring(h) .. " vs " .. tostring(want))
    return
  end
  local a, b = h:double(), want:double()
  local nan = torch.isnan(a)
  T.ok(torch.equal(nan, torch.isnan(b)), what .. ": NaNs differ")
  local d = ((a - b):abs() / (b:abs() + 1)):masked_fill(nan, 0):masked_fill(a:eq(b), 0):max():item()
  local lim = type(tol) == "number" and tol or ((tol or M.TOL)[want.dtype] or 0)
  T.ok(d <= lim, ("%s: differs by %g"):format(what, d))
end

-- elements in a result or a table of results
function M.numel(v)
  if type(v) ~= "table" then return v:numel() end
  local n = 0
  for _, t in ipairs(v) do n = n + t:numel() end
  return n
end

function M.cuda_of(v) return torch.is_tensor(v) and v:cuda() or v end

-- f(args...) on the CPU and on cuda copies of the tensors: the same result (or the same
-- error), computed by the CUDA kernels: a launch counted (by either build) and no CPU
-- fallback. mode "any": no launch needed (an empty index, a plain byte copy); "fallback":
-- the CPU's kernel may run. tol as for close.
function M.check(what, f, args, mode, tol)
  local c = torch.cuda
  local dargs = {}
  for i = 1, #args do dargs[i] = M.cuda_of(args[i]) end
  local okc, want = pcall(f, table.unpack(args))
  c._kernel_counts(true)
  local okd, got = pcall(f, table.unpack(dargs))
  local k = c._kernel_counts(true)
  if not okc then
    T.ok(not okd, what .. ": the CPU raises (" .. tostring(want) .. ") but cuda does not")
    if not okd then T.eq(tostring(got), tostring(want), what .. " error") end
    return
  end
  T.ok(okd, what .. ": " .. tostring(got))
  if not okd then return end
  M.close(got, want, what, tol)
  if mode ~= "fallback" then T.eq(k.cpu, 0, what .. ": fell back to the CPU kernel") end
  if mode == nil and M.numel(want) > 0 then T.ok(k.host + k.device > 0, what .. ": no CUDA kernel launch") end
end

return M
