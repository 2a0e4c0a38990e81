-- cuda/test_complex.lua — complex tensors on cuda: copies to and from the
-- device, same-dtype copies and fills (as the real dtype with a trailing dim
-- of 2), views; every other op says "cuda: complex64 not supported yet".
-- Runs under the fake driver (tests/sh/test_cuda_fake.sh) and on a GPU.
local T = require "testing"
torch = require "torch"

if not torch.cuda.is_available() then
  T.skip("cuda complex", "CUDA is not available: " .. tostring(torch.cuda.unavailable_reason()))
  T.done()
  return
end
local C = torch.complex_number

T.test("copies, clones, views and fills of complex tensors", function()
  local x = torch.tensor({{C(1, 2), C(3, 4)}, {C(5, 6), C(7, 8)}}, {dtype = torch.cdouble})
  local d = x:to("cuda")
  T.eq(d.dtype, torch.complex128)
  T.eq(d:cpu()[2][1], C(5, 6))
  T.eq(d:t():contiguous():cpu()[1][2], C(5, 6))
  T.eq(d:clone():cpu()[2][2], C(7, 8))
  T.eq(d[1][2], C(3, 4))
  T.eq(torch.view_as_real(d):cpu()[2][1][2], 6)
  T.eq(d:real():cpu():totable(), {{1, 3}, {5, 7}})
  local z = torch.zeros(2, 2, {dtype = torch.cfloat}):to("cuda")
  z:fill_(3)
  T.eq(z:cpu()[2][2], C(3, 0))
  z:zero_()
  T.eq(z:cpu()[1][1], C(0, 0))
end)

T.test("ops without a complex CUDA kernel refuse clearly", function()
  local d = torch.tensor({C(1, 2)}):to("cuda")
  T.raises(function() return d + d end, "add: cuda: complex64 not supported yet")
  T.raises(function() return d:exp() end, "cuda: complex64 not supported yet")
  T.raises(function() return torch.zeros(2, {dtype = torch.cfloat, device = "cuda"}) end, "zeros: cuda: complex64 not supported yet")
  T.raises(function() return d:to(torch.cdouble) end, "not supported yet")
  T.raises(function() return d:max() end, "no ordering")
end)

T.test("every op on cuda complex inputs works or refuses cleanly", function()
  local n = 0
  for _, op in ipairs(torch._ops()) do
    local f = torch
    for part in op.name:gmatch("[^.]+") do f = type(f) == "table" and f[part] or nil end
    if type(f) == "function" and not op.name:find("^_") then
      local x = torch.tensor({{C(1, 2), C(-0.5, 3)}, {C(0, -1), C(2, 0)}}):to("cuda")
      for _, call in ipairs({ function() return f(x) end, function() return f(x, x) end, function() return f(x, 1) end,
                              function() return f({x, x}) end,
                              function() return f(2, {dtype = torch.cfloat, device = "cuda"}) end }) do
        n = n + 1
        local ok, err = pcall(call)
        T.ok(ok or type(err) == "string", op.name)
      end
    end
  end
  T.ok(n > 1000)
end)

T.done()
