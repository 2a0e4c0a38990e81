-- torch.special: values against scipy.special 1.10 (and mpmath where scipy's
-- own error is larger than ours, said at the case), computed at test time by
-- tests/lua/scipyref.lua (skipped, saying why, without python3-scipy); float32
-- and the 16-bit floats; integer inputs; out=; the aliases of top-level ops;
-- gradcheck and gradgradcheck in float64; argument errors.
local T = require "testing"
local S = require "scipyref"

torch.manual_seed(18)
local f64, f32 = torch.float64, torch.float32
local nan, inf = 0 / 0, math.huge
local sp = torch.special

-- |got - want| <= atol + rtol |want|, NaN matching NaN, infinities exactly
local function close(got, want, rtol, atol)
  if want ~= want then return got ~= got end
  if want == inf or want == -inf then return got == want end
  return math.abs(got - want) <= (atol or 0) + rtol * math.abs(want)
end
local function check_values(name, got, want, xs, ys, rtol, atol)
  local worst, wi = 0, nil
  for i = 1, #want do
    if not close(got[i], want[i], rtol, atol) then
      error(("%s(%s%s): expected %.17g, got %.17g"):format(name, ("%.17g"):format(xs[i]),
        ys and (", %.17g"):format(ys[i]) or "", want[i], got[i]), 0)
    end
    if want[i] == want[i] and want[i] ~= 0 and math.abs(want[i]) ~= inf then
      local r = math.abs(got[i] - want[i]) / math.abs(want[i])
      if r > worst then worst, wi = r, i end
    end
  end
  return worst, wi
end

-- ordinary and hard inputs: 0, signs, tiny, huge, poles, infinities, NaN
local X = {
  erfcx = { -30, -26.7, -26.6, -10, -5, -1, -1e-300, 0, 1e-10, 0.3, 0.5, 1, 3, 5, 11.9, 12, 12.1, 20, 26.9,
            30, 100, 1e10, 1e300, inf, -inf, nan },
  i0e = { 0, -0.0, 1e-300, 1e-8, 0.5, -1, 2, -7.5, 15, 29.9, 30, 30.1, -45, 100, 1e4, 1e10, 1e300, inf, -inf, nan },
  ndtr = { -40, -37, -20, -8, -5, -1.5, -1, -0.3, 0, 1e-20, 0.3, 1, 1.5, 5, 8, 10, 40, inf, -inf, nan },
  ndtri = { 0, 5e-324, 1e-310, 1e-300, 1e-100, 1e-20, 1e-5, 0.01, 0.1, 0.2499, 0.25, 0.3, 0.5 - 1e-12, 0.5,
            0.5000001, 0.7, 0.75, 0.76, 0.9, 0.999, 0.9999999999, 1, -0.1, 1.5, nan },
  log_ndtr = { -1e5, -40, -38, -20, -5, -1.01, -1, -0.99, 0, 1, 5, 8, 10, 30, inf, -inf, nan },
  entr = { 0, -0.0, 1e-300, 1e-5, 0.3, 1 / math.exp(1), 1, 2.5, 1e10, 1e300, -1e-10, -3, inf, -inf, nan },
  bessel = { 0, -0.0, 1e-300, 1e-5, 0.5, 1, 2.404825557695773, 3.8317059702075125, 5, -7.3, 10, 25.1, 100, 1e5,
             1e10, -1e10, inf, -inf, nan },
  bessel_y = { 0, -0.0, 1e-300, 1e-5, 0.5, 0.8935769662791675, 2.197141326031017, 5, 10, 25.1, 100, 1e5, 1e10,
               inf, -1, -inf, nan },
  besselk = { 0, -0.0, 1e-300, 1e-10, 0.1, 0.5, 0.99, 1, 1.01, 2, 5, 20, 100, 700, 750, 1e4, 1e16, inf, -1, -inf,
              nan },
}
-- binary inputs: x (self) with y (other)
local XLX = { 0, 0, 0, 1, -2, 3.5, 1e-300, 1e300, 2, 0, 5, inf, nan, 0, 1 }
local XLY = { 0, -1, nan, 0, 1e-20, 2.5, 10, -0.5, -1, inf, -2, 1, 1, 1e300, -1 + 1e-16 }
local ZS = { 2, 2, 3, 1.5, 10, 50, 64, 65, 100, 1, 0.5, 2, 2, 3, 2.5, 4, 2, nan, 2, 1.0001, 30 }
local ZQ = { 1, 2, 0.5, 1e-3, 7.25, 1, 1, 1, 0.9, 1, 1, 0, -3, -2.5, -2.5, 1e10, inf, 1, nan, 1, 1e-5 }

-- the aliases of top-level ops, against the scipy function of the same name
local A = {
  gammaln = { 0.5, 1, 2, 10.5, 171.5, 1e5, -0.5, -2.5, 1e-300 },
  psi = { 0.5, 1, 2, 10.5, -0.5, -2.5, 1e-10, 1e8 },
  i0 = { 0, 1, -5, 30, 31, 100, 700 },
  i1 = { 0, 1, -5, 30, 31, 100, 700 },
  expit = { -800, -20, -1, 0, 1e-10, 1, 20, 800 },
  logit = { 0, 1e-10, 0.25, 0.5, 0.9, 1 },
  erfinv = { -1, -0.999999, -0.5, -1e-20, 0, 1e-10, 0.3, 0.9, 0.999999999, 1 },
  multigammaln = { 1.5, 2, 7.25, 40 },
  polygamma = { 0.5, 1, 2.5, 10, -1.5 },
  sinc = { 0, 0.5, 1, -2.5, 1e-10, 100.25 },
  xlogy = { 0, 2, 3, 0 }, xlogy_y = { 0, 3, 0.5, nan },
}

local GA = { 0.5, 0.5, 1, 1, 3, 10, 10, 100, 100, 1e-10, 1e-10, 0.3, 0.01, 0.49, 1e3, 1e4, 0.1, 5, 2, 20, 7.5,
             0, 0, 1, inf, inf, 2, -1, 1, nan, 1 }
local GX = { 0.1, 2, 1, 30, 2.5, 9, 11, 90, 110, 1, 1e-5, 0.5, 1, 1.2, 1e3, 1.01e4, 1e-10, 100, 1e-300, 0.5, 7.5,
             0, 1, 0, 1, inf, inf, 1, -1, 1, nan }
-- mpmath's regularized gammainc where both are finite and positive, scipy for the edges
local GREF = "mp.gammainc(x, 0, y, regularized=True) if (0 < x < math.inf and 0 < y < math.inf) else s.gammainc(x, y)"
local GREFC = "mp.gammainc(x, y, mp.inf, regularized=True) if (0 < x < math.inf and 0 < y < math.inf) else s.gammaincc(x, y)"

local have = S.available()
local R
if have then
  R = S.run({
    -- scipy's erfcx (Faddeeva) rounds x*x before exp below -5: mpmath there
    erfcx = { "mp.exp(mp.mpf(x)**2) * mp.erfc(x) if (x == x and x < -5 and x > -27) else s.erfcx(x)", X.erfcx },
    i0e = { "s.i0e(x)", X.i0e },
    i1e = { "s.i1e(x)", X.i0e },
    -- scipy's ndtr and log_ndtr turn the rounding of x/sqrt 2 into x^2 ulps in the tails; ndtr below -37
    -- underflows to 0 there: mpmath in both tails
    ndtr = { "mp.ncdf(x) if (x == x and abs(x) > 2 and abs(x) != math.inf) else s.ndtr(x)", X.ndtr },
    log_ndtr = { "(mp.log(mp.ncdf(x)) if x < 0 else mp.log1p(-mp.ncdf(-x))) if (x == x and abs(x) > 2 and abs(x) != math.inf) else s.log_ndtr(x)",
                 X.log_ndtr },
    ndtri = { "s.ndtri(x)", X.ndtri },
    entr = { "s.entr(x)", X.entr },
    -- scipy's j0 .. y1 (Cephes) are off by up to 1e-12 at large x, where glibc's are right: mpmath
    -- (and at +-inf they give NaN where the functions tend to 0, which glibc's return)
    bessel_j0 = { "0.0 if abs(x) == math.inf else mp.besselj(0, x) if x == x else s.j0(x)", X.bessel },
    bessel_j1 = { "0.0 if abs(x) == math.inf else mp.besselj(1, x) if x == x else s.j1(x)", X.bessel },
    bessel_y0 = { "0.0 if x == math.inf else mp.bessely(0, x) if (x == x and x > 0) else s.y0(x)", X.bessel_y },
    bessel_y1 = { "0.0 if x == math.inf else mp.bessely(1, x) if (x == x and x > 0) else s.y1(x)", X.bessel_y },
    xlog1py = { "s.xlog1py(x, y)", XLX, XLY },
    modified_bessel_k0 = { "s.k0(x)", X.besselk },
    modified_bessel_k1 = { "s.k1(x)", X.besselk },
    scaled_modified_bessel_k0 = { "s.k0e(x)", X.besselk },
    scaled_modified_bessel_k1 = { "s.k1e(x)", X.besselk },
    gammainc = { GREF, GA, GX },
    gammaincc = { GREFC, GA, GX },
    zeta = { "s.zeta(x, y)", ZS, ZQ },
    gammaln = { "s.gammaln(x)", A.gammaln },
    psi = { "s.psi(x)", A.psi },
    i0 = { "s.i0(x)", A.i0 },
    i1 = { "s.i1(x)", A.i1 },
    expit = { "s.expit(x)", A.expit },
    logit = { "s.logit(x)", A.logit },
    erfinv = { "s.erfinv(x)", A.erfinv },
    multigammaln = { "s.multigammaln(x, 3)", A.multigammaln },
    polygamma = { "s.polygamma(3, x)", A.polygamma },
    sinc = { "np.sinc(x)", A.sinc },
    xlogy = { "s.xlogy(x, y)", A.xlogy, A.xlogy_y },
  })
end

-- a scipy case: the op on float64 inputs, within rtol (+ atol)
local function vcase(name, fn, xs, ys, rtol, atol)
  T.test(name .. " against scipy (float64)", function()
    if not have then return T.skip(name, S.why()) end
    local x = torch.tensor(xs, { dtype = f64 })
    local r = ys and fn(x, torch.tensor(ys, { dtype = f64 })) or fn(x)
    T.eq(r.dtype.name, "float64")
    check_values(name, r:totable(), R[name], xs, ys, rtol, atol)
  end)
end
local eps64 = 2.220446049250313e-16
vcase("erfcx", sp.erfcx, X.erfcx, nil, 4 * eps64)
vcase("i0e", sp.i0e, X.i0e, nil, 8 * eps64)
vcase("i1e", sp.i1e, X.i0e, nil, 8 * eps64)
vcase("ndtr", sp.ndtr, X.ndtr, nil, 4 * eps64)
vcase("log_ndtr", sp.log_ndtr, X.log_ndtr, nil, 4 * eps64)
vcase("ndtri", sp.ndtri, X.ndtri, nil, 4 * eps64)
vcase("entr", sp.entr, X.entr, nil, 2 * eps64)
-- glibc's j0 .. y1 are accurate in absolute terms: near a zero the relative error grows
vcase("bessel_j0", sp.bessel_j0, X.bessel, nil, 8 * eps64, 1e-16)
vcase("bessel_j1", sp.bessel_j1, X.bessel, nil, 8 * eps64, 1e-16)
vcase("bessel_y0", sp.bessel_y0, X.bessel_y, nil, 8 * eps64, 1e-16)
vcase("bessel_y1", sp.bessel_y1, X.bessel_y, nil, 8 * eps64, 1e-16)
vcase("xlog1py", sp.xlog1py, XLX, XLY, 2 * eps64)
vcase("modified_bessel_k0", sp.modified_bessel_k0, X.besselk, nil, 4 * eps64)
vcase("modified_bessel_k1", sp.modified_bessel_k1, X.besselk, nil, 4 * eps64)
vcase("scaled_modified_bessel_k0", sp.scaled_modified_bessel_k0, X.besselk, nil, 4 * eps64)
vcase("scaled_modified_bessel_k1", sp.scaled_modified_bessel_k1, X.besselk, nil, 4 * eps64)
-- x^a e^-x / Gamma(a) is e^E with E up to about 60 here: E's rounding, some ulps of E, is the
-- relative error of P and Q (gammainc(20, 0.5) = 2.4e-25 is the worst case, 25 ulps)
vcase("gammainc", sp.gammainc, GA, GX, 128 * eps64)
vcase("gammaincc", sp.gammaincc, GA, GX, 128 * eps64)
-- Euler-Maclaurin after a direct sum: each term is rounded, so some ulps
vcase("zeta", sp.zeta, ZS, ZQ, 32 * eps64)
-- glibc lgamma_r and the digamma recurrence: some ulps, absolute near their zeros
vcase("gammaln", sp.gammaln, A.gammaln, nil, 8 * eps64, 1e-16)
vcase("psi", sp.psi, A.psi, nil, 8 * eps64, 1e-15)
vcase("i0", sp.i0, A.i0, nil, 16 * eps64)
vcase("i1", sp.i1, A.i1, nil, 16 * eps64)
vcase("expit", sp.expit, A.expit, nil, 2 * eps64)
vcase("logit", sp.logit, A.logit, nil, 2 * eps64)
vcase("erfinv", sp.erfinv, A.erfinv, nil, 4 * eps64)
vcase("multigammaln", function(x) return sp.multigammaln(x, 3) end, A.multigammaln, nil, 4 * eps64)
vcase("polygamma", function(x) return sp.polygamma(3, x) end, A.polygamma, nil, 32 * eps64)
vcase("sinc", sp.sinc, A.sinc, nil, 2 * eps64)
vcase("xlogy", sp.xlogy, A.xlogy, A.xlogy_y, 2 * eps64)

-- float32: the same float64 computation on the float32 values, rounded once; so the
-- result is the float64 op's rounded to float32 (checked exactly), and within an ulp
-- or two of scipy's value at the float32 input
local UNARY = { "erfcx", "i0e", "i1e", "ndtr", "ndtri", "log_ndtr", "entr", "bessel_j0", "bessel_j1",
                "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                "scaled_modified_bessel_k1" }
local function inputs_of(name)
  return name:match("^bessel_y") and X.bessel_y or name:match("^bessel") and X.bessel
    or name:match("bessel_k") and X.besselk or X[name] or X.i0e
end
T.test("float32 is the float64 value rounded", function()
  for _, name in ipairs(UNARY) do
    local x32 = torch.tensor(inputs_of(name), { dtype = f64 }):float()
    local r = sp[name](x32)
    T.eq(r.dtype.name, "float32", name)
    T.eq(r:totable(), sp[name](x32:double()):float():totable(), name)
  end
  local a, b = torch.tensor(XLX):float(), torch.tensor(XLY):float()
  T.eq(sp.xlog1py(a, b):totable(), sp.xlog1py(a:double(), b:double()):float():totable())
  local s, q = torch.tensor(ZS):float(), torch.tensor(ZQ):float()
  T.eq(sp.zeta(s, q):totable(), sp.zeta(s:double(), q:double()):float():totable())
  local ga, gx = torch.tensor(GA, { dtype = f64 }):float(), torch.tensor(GX, { dtype = f64 }):float()
  T.eq(sp.gammainc(ga, gx):totable(), sp.gammainc(ga:double(), gx:double()):float():totable())
  T.eq(sp.gammaincc(ga, gx):totable(), sp.gammaincc(ga:double(), gx:double()):float():totable())
end)

T.test("float16 and bfloat16 compute in double and round", function()
  for _, dt in ipairs({ torch.float16, torch.bfloat16 }) do
    local x = torch.tensor({ -2, -0.5, 0.25, 1, 3 }):to(dt)
    for _, name in ipairs({ "erfcx", "i0e", "i1e", "ndtr", "log_ndtr", "bessel_j0", "bessel_j1" }) do
      local r = sp[name](x)
      T.eq(r.dtype, dt, name)
      T.eq(r:totable(), sp[name](x:double()):to(dt):totable(), name)
    end
    local p = torch.tensor({ 0.01, 0.3, 0.5, 0.9 }):to(dt)
    T.eq(sp.ndtri(p):totable(), sp.ndtri(p:double()):to(dt):totable())
  end
end)

T.test("integer and bool inputs give the default float dtype", function()
  local i = torch.tensor({ 0, 1, 2, 3 })
  for _, name in ipairs(UNARY) do
    T.eq(sp[name](i).dtype.name, "float32", name)
    T.eq(sp[name](i):totable(), sp[name](i:float()):totable(), name)
  end
  T.eq(sp.ndtr(torch.tensor({ true, false })):totable(), sp.ndtr(torch.tensor({ 1, 0 }):float()):totable())
  T.eq(sp.zeta(torch.tensor({ 2, 3 }), torch.tensor({ 1, 2 })).dtype.name, "float32")
  T.eq(sp.xlog1py(torch.tensor({ 2, 0 }), 1).dtype.name, "float32")
  torch.set_default_dtype(f64)
  T.eq(sp.erfcx(i).dtype.name, "float64")
  torch.set_default_dtype(f32)
  -- a float tensor keeps its dtype against a Lua number; float32 with float64 is float64
  T.eq(sp.zeta(torch.tensor({ 2, 3 }):float(), 1).dtype.name, "float32")
  T.eq(sp.zeta(torch.tensor({ 2, 3 }):float(), torch.tensor({ 1.0 }, { dtype = f64 })).dtype.name, "float64")
end)

T.test("broadcasting, non-contiguous and empty inputs, out=", function()
  local s = torch.tensor({ { 2 }, { 3 }, { 4 } }, { dtype = f64 })
  local q = torch.tensor({ 1, 2, 0.5, 7 }, { dtype = f64 })
  local z = sp.zeta(s, q)
  T.eq(z:size(), { 3, 4 })
  T.near(z[1][1], math.pi ^ 2 / 6, 1e-15)
  T.near(z[3][1], math.pi ^ 4 / 90, 1e-15)
  local x = torch.randn(4, 3):double()
  T.eq(sp.erfcx(x:t()):totable(), sp.erfcx(x:t():contiguous()):totable())
  T.eq(sp.xlog1py(x:t(), x:t()):totable(), sp.xlog1py(x:t():contiguous(), x:t():contiguous()):totable())
  T.eq(sp.ndtr(torch.zeros(0, 3)):size(), { 0, 3 })
  local out = torch.empty(0, { dtype = f64 })
  local r = sp.i1e(x, { out = out })
  T.eq(out:totable(), sp.i1e(x):totable())
  out = torch.empty(3, 4, { dtype = f64 })
  sp.zeta(s, q, { out = out })
  T.eq(out:totable(), z:totable())
  T.raises(function() sp.ndtr(x, { out = torch.empty(4, 3, { dtype = torch.int64 }) }) end, "special.ndtr")
end)

T.test("torch.special aliases are the top-level ops", function()
  local x = torch.rand(5):double() * 0.8 + 0.1
  local pairs_ = { { "erf", "erf" }, { "erfc", "erfc" }, { "erfinv", "erfinv" }, { "expit", "sigmoid" },
                   { "gammaln", "lgamma" }, { "digamma", "digamma" }, { "psi", "digamma" }, { "i0", "i0" },
                   { "sinc", "sinc" }, { "exp2", "exp2" }, { "expm1", "expm1" }, { "log1p", "log1p" },
                   { "round", "round" }, { "logit", "logit" }, { "modified_bessel_i0", "i0" } }
  for _, p in ipairs(pairs_) do
    T.ok(sp[p[1]] ~= nil, "torch.special." .. p[1])
    T.eq(sp[p[1]](x):totable(), torch[p[2]](x):totable(), p[1])
  end
  T.eq(sp.i1(x):totable(), sp.modified_bessel_i1(x):totable())
  -- gammainc, gammaincc: torch.igamma, torch.igammac, with methods and in-place forms there
  local a = x * 3
  T.eq(sp.gammainc(a, x):totable(), torch.igamma(a, x):totable())
  T.eq(sp.gammaincc(a, x):totable(), a:igammac(x):totable())
  local a2 = a:clone()
  a2:igamma_(x)
  T.eq(a2:totable(), torch.igamma(a, x):totable())
  T.eq((torch.igamma(a, x) + torch.igammac(a, x) - 1):abs():max():item() < 1e-15, true)
  T.eq(sp.gammainc_, nil)
  T.eq(sp.xlogy(x, x):totable(), torch.xlogy(x, x):totable())
  T.eq(sp.polygamma(2, x):totable(), torch.polygamma(2, x):totable())
  T.eq(sp.multigammaln(x + 2, 2):totable(), torch.mvlgamma(x + 2, 2):totable())
  T.eq(sp.logit(x, 0.2):totable(), torch.logit(x, 0.2):totable())
  T.eq(sp.round(x * 100, { decimals = 1 }):totable(), torch.round(x * 100, { decimals = 1 }):totable())
  local m = torch.randn(3, 4):double()
  T.eq(sp.softmax(m, 2):totable(), torch.softmax(m, 2):totable())
  T.eq(sp.log_softmax(m, 1):totable(), torch.log_softmax(m, 1):totable())
  T.eq(sp.logsumexp(m, 2):totable(), torch.logsumexp(m, 2):totable())
  T.eq(sp.softmax(m, 2, { dtype = f32 }).dtype.name, "float32")
  -- out= through an alias
  local o = torch.empty(5, { dtype = f64 })
  sp.gammaln(x, { out = o })
  T.eq(o:totable(), torch.lgamma(x):totable())
  -- functions only, and no in-place forms in the namespace (PyTorch has none)
  T.eq(sp.erf_, nil)
  T.ok(not pcall(function() return x.erfcx end))
  T.ok(not pcall(function() return x.ndtr end))
  T.eq(torch.erfcx, nil)
  T.eq(torch.xlog1py, nil)
end)

T.test("special values", function()
  T.eq(sp.ndtr(torch.tensor({ 0.0 }, { dtype = f64 })):item(), 0.5)
  T.eq(sp.ndtri(torch.tensor({ 0.5 }, { dtype = f64 })):item(), 0)
  T.eq(sp.erfcx(torch.tensor({ 0.0 }, { dtype = f64 })):item(), 1)
  T.eq(sp.i0e(torch.tensor({ 0.0 }, { dtype = f64 })):item(), 1)
  T.eq(sp.entr(torch.tensor({ 1.0 }, { dtype = f64 })):item(), 0)
  -- symmetry: i1e is odd, i0e even; ndtri(1 - p) = -ndtri(p)
  local x = torch.randn(20):double() * 10
  T.eq(sp.i1e(-x):totable(), (-sp.i1e(x)):totable())
  T.eq(sp.i0e(-x):totable(), sp.i0e(x):totable())
  local p = torch.rand(20):double() * 0.2
  T.eq(sp.ndtri(1 - p):totable(), (-sp.ndtri(1 - (1 - p))):totable())
  -- round trips
  local y = torch.linspace(-30, 3, 67):double()
  T.ok(((sp.ndtri(sp.ndtr(y)) - y):abs() / y:abs():clamp(1)):max():item() < 1e-13)
  local l = sp.log_ndtr(y)
  T.ok(((l - sp.ndtr(y):log()):abs() / (l:abs() + 1)):max():item() < 1e-15)
  -- zeta(s, 1) at even s: pi^s |B_s| 2^(s-1) / s!
  T.near(sp.zeta(torch.tensor({ 6.0 }, { dtype = f64 }), 1):item(), math.pi ^ 6 / 945, 1e-15)
  -- zeta(inf, q): the sum's limit (0 for q > 1, 1 at 1, inf below), where scipy and PyTorch give NaN
  T.eq(sp.zeta(torch.tensor({ inf, inf, inf }, { dtype = f64 }), torch.tensor({ 2, 1, 0.5 }, { dtype = f64 })):totable(),
       { 0, 1, inf })
end)

-- ---- derivatives ----------------------------------------------------------

local gc, ggc = torch.autograd.gradcheck, torch.autograd.gradgradcheck
local function req(t) t.requires_grad = true; return t end
local function unif(lo, hi, ...) return req(torch.rand(...):double() * (hi - lo) + lo) end

T.test("gradcheck and gradgradcheck", function()
  local cases = {
    { "erfcx", function() return unif(-3, 6, 2, 3) end },
    { "i0e", function() return unif(-4, 4, 2, 3) end },
    { "i1e", function() return unif(-4, 4, 2, 3) end },
    { "ndtr", function() return unif(-4, 4, 2, 3) end },
    { "ndtri", function() return unif(0.02, 0.98, 2, 3) end },
    { "log_ndtr", function() return unif(-8, 4, 2, 3) end },
    { "entr", function() return unif(0.1, 3, 2, 3) end },
    { "bessel_j0", function() return unif(-6, 6, 2, 3) end },
    { "bessel_j1", function() return unif(-6, 6, 2, 3) end },
    { "bessel_y0", function() return unif(0.3, 6, 2, 3) end },
    { "bessel_y1", function() return unif(0.3, 6, 2, 3) end },
  }
  for _, c in ipairs(cases) do
    local f = sp[c[1]]
    T.ok(gc(f, { c[2]() }), c[1] .. " gradcheck")
    T.ok(gc(function(x) return f(x:t()) end, { c[2]() }), c[1] .. " gradcheck, transposed")
    T.ok(ggc(f, { c[2]() }), c[1] .. " gradgradcheck")
  end
  -- x = 0 in the order-1 functions: the derivative is 1/2
  local z = req(torch.zeros(1, { dtype = f64 }))
  for _, name in ipairs({ "i1e", "bessel_j1" }) do
    local g = torch.autograd.grad({ sp[name](z):sum() }, { z })[1]
    T.near(g:item(), 0.5, 1e-15, name)
  end
  for _, name in ipairs({ "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                          "scaled_modified_bessel_k1" }) do
    local f = sp[name]
    T.ok(gc(f, { unif(0.3, 5, 2, 3) }), name .. " gradcheck")
    T.ok(ggc(f, { unif(0.3, 5, 2, 3) }), name .. " gradgradcheck")
  end
  -- igamma, igammac in x (other); a is a constant, as in PyTorch
  local ga = torch.tensor({ { 0.7 }, { 2.5 } }, { dtype = f64 })
  for _, f in ipairs({ torch.igamma, torch.igammac }) do
    T.ok(gc(function(x) return f(ga, x) end, { unif(0.2, 4, 3) }))
    T.ok(ggc(function(x) return f(ga, x) end, { unif(0.2, 4, 3) }))
  end
  -- xlog1py, broadcasting both ways
  T.ok(gc(sp.xlog1py, { unif(-2, 2, 2, 3), unif(-0.5, 2, 3) }))
  T.ok(gc(sp.xlog1py, { unif(-2, 2, 3), unif(-0.5, 2, 2, 3) }))
  T.ok(ggc(sp.xlog1py, { unif(-2, 2, 2, 3), unif(-0.5, 2, 3) }))
  -- xlog1py at x = 0, y = -1: no NaN from 0 * log(0), as PyTorch
  local a, b = req(torch.zeros(1, { dtype = f64 })), req(torch.tensor({ -1.0 }, { dtype = f64 }))
  local ga = torch.autograd.grad({ sp.xlog1py(a, b):sum() }, { a })[1]
  T.eq(ga:item(), 0)
  -- zeta in q (other); the exponent is a constant
  local s = torch.tensor({ { 2.5 }, { 4 } }, { dtype = f64 })
  T.ok(gc(function(q) return sp.zeta(s, q) end, { unif(0.5, 3, 3) }))
  T.ok(ggc(function(q) return sp.zeta(s, q) end, { unif(0.5, 3, 3) }))
end)

T.test("zeta's derivative in self is not implemented (as in PyTorch)", function()
  local s = req(torch.tensor({ 2.5, 3 }, { dtype = f64 }))
  local y = sp.zeta(s, torch.tensor({ 1.0, 2 }, { dtype = f64 }))
  T.raises(function() y:sum():backward() end, "special.zeta", "'self'", "not implemented")
end)

T.test("igamma's derivative in self is not implemented (as in PyTorch)", function()
  local a = req(torch.tensor({ 2.5, 3 }, { dtype = f64 }))
  local y = sp.gammainc(a, torch.tensor({ 1.0, 2 }, { dtype = f64 }))
  T.raises(function() y:sum():backward() end, "igamma", "'self'", "not implemented")
end)

T.test("argument errors name the op and the argument", function()
  T.raises(function() sp.gammainc(torch.randn(2), torch.randn(3)) end, "igamma")
  T.raises(function() sp.modified_bessel_k0("x") end, "special.modified_bessel_k0", "self")
  local x = torch.randn(3):double()
  T.raises(function() sp.zeta(torch.randn(3), torch.randn(4)) end, "special.zeta")
  T.raises(function() sp.xlog1py(torch.randn(2, 3), torch.randn(4)) end, "special.xlog1py")
  T.raises(function() sp.erfcx("x") end, "special.erfcx", "self")
  T.raises(function() sp.zeta(x) end, "special.zeta", "other")
  T.raises(function() sp.zeta(x, "q") end, "special.zeta", "other")
  T.raises(function() sp.ndtri(x, { bad = 1 }) end, "bad")
  T.raises(function() sp.i0e(x, { out = torch.empty(3, { dtype = torch.int32 }) }) end, "special.i0e")
  T.raises(function() sp.polygamma(-1, x) end, "polygamma", "'n'")
  T.raises(function() sp.multigammaln(x, 0) end, "p")
end)

T.test("help finds the functions", function()
  local h = torch.help and torch.help("torch.special.erfcx")
  if h == nil then return T.skip("help", "torch.help is not available") end
  T.ok(tostring(h):find("erfc", 1, true) ~= nil)
end)

T.done()
