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

-- ---- transforms against numpy.fft ----

local LENGTHS = { 1, 2, 3, 5, 7, 8, 12, 17, 97, 128, 1000, 1009, 4096 }

-- a complex tensor re + i im (both real, same shape)
local function cplx(re, im, dtype)
  local a, b = re:contiguous():view(-1):totable(), im:contiguous():view(-1):totable()
  local c = {}
  for i = 1, #a do c[i] = torch.complex_number(a[i], b[i]) end
  return torch.tensor(c, { dtype = dtype or torch.complex128 }):view(re:size())
end

torch.manual_seed(7)

T.test("fft and ifft of every kind of length against numpy (complex128, complex64)", function()
  if not np_or_skip("fft against numpy") then return end
  local ins, code, outs, mine = {}, {}, {}, {}
  for _, n in ipairs(LENGTHS) do
    local z = cplx(torch.randn(n, { dtype = torch.float64 }), torch.randn(n, { dtype = torch.float64 }))
    ins["z" .. n] = z
    code[#code + 1] = ("f%d = np.fft.fft(z%d); i%d = np.fft.ifft(z%d)"):format(n, n, n, n)
    outs[#outs + 1] = "f" .. n; mine[#mine + 1] = { torch.fft.fft(z), 1e-15 * (4 + math.log(n, 2)) }
    outs[#outs + 1] = "i" .. n; mine[#mine + 1] = { torch.fft.ifft(z), 1e-15 * (4 + math.log(n, 2)) }
    local z32 = z:to(torch.complex64)
    outs[#outs + 1] = "f" .. n; mine[#mine + 1] = { torch.fft.fft(z32), 3e-7 * (4 + math.log(n, 2)), torch.complex64 }
  end
  local r = N.run(ins, table.concat(code, "\n"), outs)
  for i, m in ipairs(mine) do
    local e = N.relerr(m[1], r[i])
    T.ok(e <= m[2], ("%s: relative error %g > %g"):format(outs[i], e, m[2]))
    T.eq(m[1].dtype, m[3] or torch.complex128)
  end
end)

T.test("rfft, irfft, hfft, ihfft of every kind of length against numpy", function()
  if not np_or_skip("real transforms against numpy") then return end
  local ins, code, outs, mine = {}, {}, {}, {}
  for _, n in ipairs(LENGTHS) do
    local x = torch.randn(n, { dtype = torch.float64 })
    local h = cplx(torch.randn(n // 2 + 1, { dtype = torch.float64 }), torch.randn(n // 2 + 1, { dtype = torch.float64 }))
    ins["x" .. n], ins["h" .. n] = x, h
    code[#code + 1] = ("r%d = np.fft.rfft(x%d); ir%d = np.fft.irfft(h%d, %d); hf%d = np.fft.hfft(h%d, %d); ih%d = np.fft.ihfft(x%d)")
      :format(n, n, n, n, n, n, n, n, n, n)
    local tol = 1e-15 * (4 + math.log(n, 2))
    for _, o in ipairs {
      { "r", torch.fft.rfft(x) }, { "ir", torch.fft.irfft(h, n) }, { "hf", torch.fft.hfft(h, n) },
      { "ih", torch.fft.ihfft(x) } } do
      outs[#outs + 1] = o[1] .. n; mine[#mine + 1] = { o[2], tol }
    end
    -- float32 in, complex64 out
    outs[#outs + 1] = "r" .. n; mine[#mine + 1] = { torch.fft.rfft(x:to(torch.float32)), 3e-7 * (4 + math.log(n, 2)) }
  end
  local r = N.run(ins, table.concat(code, "\n"), outs)
  for i, m in ipairs(mine) do
    local e = N.relerr(m[1], r[i])
    T.ok(e <= m[2], ("%s: relative error %g > %g"):format(outs[i], e, m[2]))
  end
  T.eq(torch.fft.rfft(torch.randn(4)).dtype, torch.complex64)
  T.eq(torch.fft.irfft(torch.fft.rfft(torch.randn(4))).dtype, torch.float32)
end)

T.test("2^20 points: fft and rfft against numpy", function()
  if not np_or_skip("2^20 against numpy") then return end
  local n = 1 << 20
  local x = torch.randn(n, { dtype = torch.float64 })
  local z = cplx(x, torch.randn(n, { dtype = torch.float64 }))
  local r = N.run({ x = x, z = z }, "f = np.fft.fft(z); r = np.fft.rfft(x)", { "f", "r" })
  local tol = 1e-15 * (4 + 20)
  local e1, e2 = N.relerr(torch.fft.fft(z), r[1]), N.relerr(torch.fft.rfft(x), r[2])
  T.ok(e1 <= tol and e2 <= tol, ("errors %g, %g"):format(e1, e2))
end)

T.test("norm modes against numpy", function()
  if not np_or_skip("norm modes") then return end
  local ins, code, outs, mine = {}, {}, {}, {}
  for _, n in ipairs { 7, 12 } do
    local x = torch.randn(n, { dtype = torch.float64 })
    local z = cplx(torch.randn(n, { dtype = torch.float64 }), torch.randn(n, { dtype = torch.float64 }))
    local h = cplx(torch.randn(n // 2 + 1, { dtype = torch.float64 }), torch.randn(n // 2 + 1, { dtype = torch.float64 }))
    ins["x" .. n], ins["z" .. n], ins["h" .. n] = x, z, h
    for _, norm in ipairs { "backward", "ortho", "forward" } do
      for _, f in ipairs { { "fft", z }, { "ifft", z }, { "rfft", x }, { "irfft", h }, { "hfft", h }, { "ihfft", x } } do
        local name = ("%s_%s_%d"):format(f[1], norm, n)
        local arg = rawequal(f[2], x) and "x" or rawequal(f[2], z) and "z" or "h"
        local nn = (f[1] == "irfft" or f[1] == "hfft") and n or nil
        code[#code + 1] = ("%s = np.fft.%s(%s%d, %s, norm='%s')"):format(name, f[1], arg, n, nn and tostring(nn) or "None", norm)
        outs[#outs + 1] = name
        mine[#mine + 1] = torch.fft[f[1]](f[2], nn, -1, norm)
      end
    end
    -- nil norm is "backward"
    local a, b = N.parts(torch.fft.ifft(z)), N.parts(torch.fft.ifft(z, nil, -1, "backward"))
    T.ok(torch.equal(a, b))
  end
  local r = N.run(ins, table.concat(code, "\n"), outs)
  for i, m in ipairs(mine) do
    local e = N.relerr(m, r[i])
    T.ok(e <= 1e-14, ("%s: relative error %g"):format(outs[i], e))
  end
end)

T.test("dims, several dims, s, non-contiguous inputs, n padding and cutting", function()
  if not np_or_skip("dims") then return end
  local x = torch.randn(4, 6, 5, { dtype = torch.float64 })
  local z = cplx(torch.randn(4, 6, 5, { dtype = torch.float64 }), torch.randn(4, 6, 5, { dtype = torch.float64 }))
  local xt = x:transpose(1, 3)            -- 5 x 6 x 4, not contiguous
  local cases = {
    { "np.fft.fft(z, axis=0)", torch.fft.fft(z, nil, 1) },
    { "np.fft.fft(z, axis=1)", torch.fft.fft(z, nil, 2) },
    { "np.fft.fft(z, 9)", torch.fft.fft(z, 9) },                 -- padded
    { "np.fft.fft(z, 3, axis=1)", torch.fft.fft(z, 3, 2) },      -- cut
    { "np.fft.ifft(x, 8, axis=0)", torch.fft.ifft(x, 8, 1) },    -- real input made complex
    { "np.fft.rfft(x, 7, axis=1)", torch.fft.rfft(x, 7, 2) },
    { "np.fft.irfft(z, 11, axis=1)", torch.fft.irfft(z, 11, 2) },
    { "np.fft.irfft(z)", torch.fft.irfft(z) },                   -- n = 2(m-1) = 8
    { "np.fft.hfft(z, 5, axis=0)", torch.fft.hfft(z, 5, 1) },
    { "np.fft.rfft(x.transpose(2, 1, 0), axis=0)", torch.fft.rfft(xt, nil, 1) },
    { "np.fft.fft2(z)", torch.fft.fft2(z) },
    { "np.fft.ifft2(z, s=(3, 7))", torch.fft.ifft2(z, { 3, 7 }) },
    { "np.fft.fft2(z, axes=(0, 2))", torch.fft.fft2(z, nil, { 1, 3 }) },
    { "np.fft.fftn(z)", torch.fft.fftn(z) },
    { "np.fft.fftn(z, s=(5, 4))", torch.fft.fftn(z, { 5, 4 }) },
    { "np.fft.ifftn(z, axes=(2, 0), norm='ortho')", torch.fft.ifftn(z, nil, { 3, 1 }, "ortho") },
    { "np.fft.rfft2(x)", torch.fft.rfft2(x) },
    { "np.fft.rfftn(x)", torch.fft.rfftn(x) },
    { "np.fft.rfftn(x, s=(3, 8), axes=(0, 1))", torch.fft.rfftn(x, { 3, 8 }, { 1, 2 }) },
    { "np.fft.irfft2(z)", torch.fft.irfft2(z) },
    { "np.fft.irfftn(z, s=(4, 6, 9))", torch.fft.irfftn(z, { 4, 6, 9 }) },
    { "np.fft.irfftn(z, axes=(1, 2), norm='forward')", torch.fft.irfftn(z, nil, { 2, 3 }, "forward") },
    { "np.fft.rfftn(x.transpose(2, 1, 0))", torch.fft.rfftn(xt) },
  }
  local code, outs = {}, {}
  for i, c in ipairs(cases) do code[i] = ("o%d = %s"):format(i, c[1]); outs[i] = "o" .. i end
  local r = N.run({ x = x, z = z }, table.concat(code, "\n"), outs)
  for i, c in ipairs(cases) do
    local ref = r[i]
    local shape = (type(ref) == "table" and ref.re or ref):size()
    T.eq(c[2]:size(), shape, c[1] .. ": shape")
    local e = N.relerr(c[2], ref)
    T.ok(e <= 1e-14, ("%s: relative error %g"):format(c[1], e))
  end
end)

T.test("large batches on the thread pool, along the first and the last dim", function()
  if not np_or_skip("batches") then return end
  local nt = torch.get_num_threads()
  torch.set_num_threads(2)
  local x = torch.randn(600, 96, { dtype = torch.float64 })
  local r = N.run({ x = x }, "a = np.fft.rfft(x); b = np.fft.fft(x, axis=0); c = np.fft.irfft(np.fft.rfft2(x), 96)",
                  { "a", "b", "c" })
  local mine = { torch.fft.rfft(x), torch.fft.fft(x, nil, 1), torch.fft.irfft(torch.fft.rfft2(x), 96) }
  torch.set_num_threads(nt)
  for i = 1, 3 do
    local e = N.relerr(mine[i], r[i])
    T.ok(e <= 1e-14, ("case %d: relative error %g"):format(i, e))
  end
end)

T.test("dtypes: integers and float16 transform in the default dtype, complex64 stays", function()
  local i = torch.tensor({ 1, 2, 3, 4 })
  T.eq(torch.fft.fft(i).dtype, torch.complex64)
  T.eq(torch.fft.rfft(i).dtype, torch.complex64)
  T.eq(torch.fft.rfft(i:to(torch.float16)).dtype, torch.complex64)
  T.eq(torch.fft.fft(torch.zeros(3, { dtype = torch.complex64 })).dtype, torch.complex64)
  T.eq(torch.fft.irfft(torch.zeros(3, { dtype = torch.complex128 })).dtype, torch.float64)
  local f = N.parts(torch.fft.fft(i))
  T.tensor(f, { 10, -2, -2, -2 }, { tol = 1e-6 })
  -- empty batch dims
  T.eq(torch.fft.fft(torch.zeros(0, 4, { dtype = torch.complex64 })):size(), { 0, 4 })
  T.eq(torch.fft.rfft(torch.zeros(3, 0, 8)):size(), { 3, 0, 5 })
end)

T.test("bad input: n, s, dim, norm, dtype", function()
  local x = torch.randn(4, 6)
  T.raises(function() torch.fft.fft(x, 0) end, "fft.fft", "'n'", "at least 1")
  T.raises(function() torch.fft.rfft(x, -3) end, "fft.rfft", "'n'")
  T.raises(function() torch.fft.irfft(torch.fft.rfft(x), 0) end, "fft.irfft", "'n'")
  T.raises(function() torch.fft.irfft(torch.zeros(1, { dtype = torch.complex64 })) end, "fft.irfft", "'n'")
  T.raises(function() torch.fft.fft(x, nil, 3) end, "fft.fft", "out of range")
  T.raises(function() torch.fft.fft(x, nil, -3) end, "fft.fft", "out of range")
  T.raises(function() torch.fft.ifft(x, nil, 1, "none") end, "fft.ifft", "'norm'", "ortho")
  T.raises(function() torch.fft.fftn(x, { 2, 3 }, { 1 }) end, "fft.fftn", "'s'", "'dim'")
  T.raises(function() torch.fft.fftn(x, { 2, 3, 4 }) end, "fft.fftn", "'s'")
  T.raises(function() torch.fft.fftn(x, { 0, 3 }) end, "fft.fftn", "'s'", "at least 1")
  T.raises(function() torch.fft.fft2(x, nil, { 1, 1 }) end, "fft.fft2", "repeats")
  T.raises(function() torch.fft.fft2(torch.randn(5)) end, "fft.fft2", "2 dims")
  T.raises(function() torch.fft.rfft(torch.zeros(4, { dtype = torch.complex64 })) end, "fft.rfft", "real")
  T.raises(function() torch.fft.fft(torch.tensor(1.5)) end, "fft.fft", "0-d")
  T.raises(function() torch.fft.fft(torch.zeros(0)) end, "fft.fft", "'n'")
  T.raises(function() torch._fft_c2c(x, { 1 }, 0, true) end, "_fft_c2c", "complex")
  T.raises(function() torch._fft_c2c(torch.zeros(3, { dtype = torch.complex64 }), { 1 }, 5, true) end,
           "_fft_c2c", "'normalization'")
  T.raises(function() torch._fft_c2r(torch.zeros(3, { dtype = torch.complex64 }), { 1 }, 0, 9) end,
           "_fft_c2r", "needs 5")
end)

-- ---- derivatives: real -> real chains through every primitive ----

T.test("gradcheck: rfft, irfft, ifft, fft, hfft, ihfft, the n-dim ones, every norm", function()
  local gc = torch.autograd.gradcheck
  local x = torch.randn(6, { dtype = torch.float64, requires_grad = true })
  local x7 = torch.randn(7, { dtype = torch.float64, requires_grad = true })
  local m = torch.randn(3, 5, { dtype = torch.float64, requires_grad = true })
  for _, norm in ipairs { "backward", "ortho", "forward" } do
    T.ok(gc(function(a) return torch.fft.irfft(torch.fft.rfft(a, nil, -1, norm), 6) end, { x }), "irfft(rfft) " .. norm)
    T.ok(gc(function(a) return torch.fft.irfft(torch.fft.rfft(a), 7, -1, norm) end, { x7 }), "irfft odd " .. norm)
    -- c2c in the middle, with padding and cutting
    T.ok(gc(function(a)
      return torch.fft.irfft(torch.fft.fft(torch.fft.ifft(torch.fft.rfft(a), 5, -1, norm), 4, -1, norm), 6)
    end, { x }), "fft/ifft " .. norm)
    T.ok(gc(function(a) return torch.fft.hfft(torch.fft.ihfft(a, nil, -1, norm), 7, -1, norm) end, { x7 }), "hfft " .. norm)
    T.ok(gc(function(a) return torch.fft.irfftn(torch.fft.rfftn(a, nil, nil, norm), { 4, 5 }, nil, norm) end, { m }),
         "rfftn " .. norm)
    T.ok(gc(function(a) return torch.fft.irfft2(torch.fft.fft2(torch.fft.rfft2(a), { 2, 3 }, nil, norm)) end, { m }),
         "fft2 " .. norm)
  end
  -- complex outputs of real inputs (gradcheck compares both parts)
  for name, f in pairs {
    fft = function(a) return torch.fft.fft(a, 8) end,
    ifft = function(a) return torch.fft.ifft(a, 5, -1, "ortho") end,
    rfft = function(a) return torch.fft.rfft(a) end,
    ihfft = function(a) return torch.fft.ihfft(a, 7) end,
    fft2 = function(a) return torch.fft.fft2(a:view(2, 3)) end,
    ifftn = function(a) return torch.fft.ifftn(a:view(3, 2), { 4, 2 }, nil, "forward") end,
    rfftn = function(a) return torch.fft.rfftn(a:view(2, 3)) end,
  } do
    T.ok(gc(f, { x }), name .. " of a real input")
  end
  -- a second derivative
  T.ok(torch.autograd.gradgradcheck(function(a) return torch.fft.hfft(torch.fft.fft(a), 7) end, { x }))
  T.ok(torch.autograd.gradgradcheck(function(a) return torch.fft.irfft(torch.fft.rfft(a, 8), 5) end, { x }))
  -- non-contiguous input
  local t = torch.randn(5, 3, { dtype = torch.float64, requires_grad = true })
  T.ok(gc(function(a) return torch.fft.irfft(torch.fft.rfft(a:t()), 5) end, { t }))
end)

-- ---- stft and istft ----

T.test("stft and istft against PyTorch 1.13", function()
  local P = require "pyref"
  if not (has_np and P.available()) then return T.skip("stft against PyTorch", P.why() or N.why()) end
  local x = torch.randn(100, { dtype = torch.float64 })
  local b = torch.randn(3, 50, { dtype = torch.float64 })
  local w = torch.hann_window(16, { dtype = torch.float64 })
  local w10 = torch.hamming_window(10, { dtype = torch.float64 })
  local cases = {
    { "torch.stft(X, 16, 4, window=W, return_complex=True)", torch.stft(x, 16, 4, nil, w) },
    { "torch.stft(X, 16, window=W, center=False, return_complex=True)", torch.stft(x, 16, nil, nil, w, false) },
    { "torch.stft(X, 16, 5, 10, window=W10, pad_mode='constant', normalized=True, return_complex=True)",
      torch.stft(x, 16, 5, 10, w10, true, "constant", true) },
    { "torch.stft(B, 12, 3, return_complex=True)", torch.stft(b, 12, 3) },
    { "torch.istft(torch.stft(X, 16, 4, window=W, return_complex=True), 16, 4, window=W, length=100)",
      torch.istft(torch.stft(x, 16, 4, nil, w), 16, 4, nil, w, true, false, nil, 100) },
    { "torch.istft(torch.stft(B, 12, 3, return_complex=True), 12, 3)", torch.istft(torch.stft(b, 12, 3), 12, 3) },
    { "torch.istft(torch.stft(X, 16, 5, 10, window=W10, normalized=True, return_complex=True), 16, 5, 10, window=W10, normalized=True)",
      torch.istft(torch.stft(x, 16, 5, 10, w10, true, "reflect", true), 16, 5, 10, w10, true, true) },
  }
  local code, outs = { "import torch" }, {}
  code[2] = "X, B, W, W10 = (torch.from_numpy(v) for v in (x, b, w, w10))"
  for i, c in ipairs(cases) do code[#code + 1] = ("o%d = (%s).numpy()"):format(i, c[1]); outs[i] = "o" .. i end
  local r = N.run({ x = x, b = b, w = w, w10 = w10 }, table.concat(code, "\n"), outs)
  for i, c in ipairs(cases) do
    local ref = r[i]
    T.eq(c[2]:size(), (type(ref) == "table" and ref.re or ref):size(), c[1] .. ": shape")
    local e = N.relerr(c[2], ref)
    T.ok(e <= 1e-13, ("%s: relative error %g"):format(c[1], e))
  end
end)

T.test("stft and istft: round trip, gradients, bad input", function()
  local x = torch.randn(64, { dtype = torch.float64 })
  local w = torch.hann_window(16, { dtype = torch.float64 })
  local y = torch.istft(torch.stft(x, 16, 4, nil, w), 16, 4, nil, w, true, false, nil, 64)
  T.ok((y - x):abs():max():item() < 1e-14)
  local a = torch.randn(40, { dtype = torch.float64, requires_grad = true })
  local w8 = torch.hann_window(8, { dtype = torch.float64 })
  T.ok(torch.autograd.gradcheck(function(s)
    return torch.istft(torch.stft(s, 8, 2, nil, w8), 8, 2, nil, w8, true, false, nil, 40)
  end, { a }))
  T.eq(torch.stft(torch.randn(32), 8).dtype, torch.complex64)
  T.raises(function() torch.stft(x, 16, { return_complex = false }) end, "stft", "'return_complex'")
  T.raises(function() torch.stft(x, 0) end, "stft", "'n_fft'")
  T.raises(function() torch.stft(x, 16, 0) end, "stft", "'hop_length'")
  T.raises(function() torch.stft(x, 16, 4, 17) end, "stft", "'win_length'")
  T.raises(function() torch.stft(x, 16, 4, nil, torch.ones(8)) end, "stft", "'window'")
  T.raises(function() torch.stft(x, 100, { center = false }) end, "stft", "fewer than n_fft")
  T.raises(function() torch.stft(torch.randn(2, 2, 20), 8) end, "stft", "1-D")
  local S = torch.stft(x, 16, 4, nil, w)
  T.raises(function() torch.istft(x, 16) end, "istft", "complex")
  T.raises(function() torch.istft(S, 10) end, "istft", "frequencies")
  T.raises(function() torch.istft(S, 16, 4, nil, torch.zeros(16, { dtype = torch.float64 })) end, "istft", "NOLA")
end)

T.done()
