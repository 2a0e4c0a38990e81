-- test_fft.lua — torch.fft and the windows: values against numpy.fft (and PyTorch
-- 1.13 for the windows), lengths with every kind of factor, norm modes, dims, n
-- padding and cutting, bad input; the frequencies, shifts and windows.
local T = require "testing"
local N = require "npref"

local has_np = N.available()
local function np_or_skip(name)
  if not has_np then T.skip(name, N.why()); return false end
  return true
end

-- ---- frequencies and shifts ----

T.test("fftfreq and rfftfreq as numpy's", function()
  T.tensor(torch.fft.fftfreq(5), { 0, 0.2, 0.4, -0.4, -0.2 }, { tol = 1e-7 })
  T.tensor(torch.fft.fftfreq(4, 0.5), { 0, 0.5, -1, -0.5 })
  T.tensor(torch.fft.rfftfreq(6, 0.5), { 0, 1 / 3, 2 / 3, 1 }, { tol = 1e-7 })
  T.tensor(torch.fft.rfftfreq(5), { 0, 0.2, 0.4 }, { tol = 1e-7 })
  T.tensor(torch.fft.fftfreq(1), { 0 })
  T.tensor(torch.fft.fftfreq(0), {}, { shape = { 0 } })
  T.eq(torch.fft.fftfreq(3, { dtype = torch.float64 }).dtype, torch.float64)
  T.eq(torch.fft.fftfreq(3).dtype, torch.get_default_dtype())
  T.raises(function() torch.fft.fftfreq(-1) end, "fft.fftfreq", "'n'")
  T.raises(function() torch.fft.fftfreq(4, 0) end, "fft.fftfreq", "'d'")
  T.raises(function() torch.fft.rfftfreq(4, { dtype = torch.int64 }) end, "fft.rfftfreq", "'dtype'")
end)

T.test("fftshift and ifftshift", function()
  T.tensor(torch.fft.fftshift(torch.arange(1, 6)), { 4, 5, 1, 2, 3 })
  T.tensor(torch.fft.ifftshift(torch.arange(1, 6)), { 3, 4, 5, 1, 2 })
  T.tensor(torch.fft.fftshift(torch.arange(1, 5)), { 3, 4, 1, 2 })
  local x = torch.arange(1, 7):view(2, 3)
  T.tensor(torch.fft.fftshift(x), { { 6, 4, 5 }, { 3, 1, 2 } })
  T.tensor(torch.fft.fftshift(x, 2), { { 3, 1, 2 }, { 6, 4, 5 } })
  T.tensor(torch.fft.fftshift(x, { -1 }), { { 3, 1, 2 }, { 6, 4, 5 } })
  T.tensor(torch.fft.ifftshift(torch.fft.fftshift(x)), x:totable())
  T.raises(function() torch.fft.fftshift(x, 3) end, "fft.fftshift")
  -- a roll, so differentiable
  local y = torch.randn(5, { dtype = torch.float64, requires_grad = true })
  T.ok(torch.autograd.gradcheck(function(a) return torch.fft.fftshift(a) end, { y }))
end)

-- ---- windows ----

local function window_values(name, n, periodic, extra)
  local w = {}
  local den = periodic and n or n - 1
  for k = 0, n - 1 do
    local x = 2 * math.pi * k / den
    if n == 1 then w[k + 1] = 1
    elseif name == "hann" then w[k + 1] = 0.5 - 0.5 * math.cos(x)
    elseif name == "hamming" then w[k + 1] = 0.54 - 0.46 * math.cos(x)
    elseif name == "blackman" then w[k + 1] = 0.42 - 0.5 * math.cos(x) + 0.08 * math.cos(2 * x)
    elseif name == "bartlett" then w[k + 1] = 1 - math.abs(2 * k / den - 1) end
  end
  return w
end

T.test("windows: formulas, periodic and symmetric, lengths 0 and 1", function()
  for _, name in ipairs { "hann", "hamming", "blackman", "bartlett" } do
    local f = torch[name .. "_window"]
    for _, n in ipairs { 1, 2, 5, 8, 31 } do
      for _, periodic in ipairs { true, false } do
        T.tensor(f(n, periodic, { dtype = torch.float64 }), window_values(name, n, periodic),
                 { tol = 1e-12 })
      end
    end
    T.tensor(f(0), {}, { shape = { 0 } })
    T.eq(f(4).dtype, torch.get_default_dtype())
    T.raises(function() f(-2) end, name .. "_window", "'window_length'")
    T.raises(function() f(4, { dtype = torch.int32 }) end, name .. "_window", "'dtype'")
  end
  T.tensor(torch.hamming_window(4, true, 0.5, 0.5, { dtype = torch.float64 }),
           torch.hann_window(4, { dtype = torch.float64 }):totable(), { tol = 1e-15 })
  T.ok(torch.hann_window(4, { requires_grad = true }).requires_grad)
end)

T.test("windows against PyTorch (kaiser included)", function()
  local P = require "pyref"
  if not P.available() then return T.skip("windows against PyTorch", P.why()) end
  local r = P.run({}, [[
a = torch.kaiser_window(9, dtype=torch.float64)
b = torch.kaiser_window(10, periodic=False, beta=5.0, dtype=torch.float64)
c = torch.hann_window(7, dtype=torch.float64)
d = torch.blackman_window(6, periodic=False, dtype=torch.float64)
e = torch.bartlett_window(7, dtype=torch.float64)
f = torch.hamming_window(5, periodic=False, alpha=0.6, beta=0.4, dtype=torch.float64)
]], { "a", "b", "c", "d", "e", "f" })
  local mine = {
    torch.kaiser_window(9, { dtype = torch.float64 }),
    torch.kaiser_window(10, false, 5.0, { dtype = torch.float64 }),
    torch.hann_window(7, { dtype = torch.float64 }),
    torch.blackman_window(6, false, { dtype = torch.float64 }),
    torch.bartlett_window(7, { dtype = torch.float64 }),
    torch.hamming_window(5, false, 0.6, 0.4, { dtype = torch.float64 }),
  }
  for i = 1, #mine do T.tensor(mine[i], r[i]:totable(), { tol = 1e-12 }) end
end)

T.done()
