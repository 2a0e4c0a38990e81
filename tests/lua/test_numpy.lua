-- test_numpy.lua — lutorch's results against numpy's on random inputs: elementwise ops,
-- reductions and matrix products, in float64 (tight) and float32 (loose), with broadcasting
-- and non-contiguous (transposed) inputs.
-- Mechanism: every case is built and computed here first; the inputs (the exact values the
-- tensors hold, as raw float64) go to a temporary file, one run of `/usr/bin/python3 tests/numpy_ref.py` computes
-- numpy's answers in float64, and each case is compared. Debian's interpreter is used on
-- purpose: a `python3` earlier on PATH (pyenv) may lack numpy. Skipped without it.
local T = require "testing"

local PY = "/usr/bin/python3"
local HERE = (arg and arg[0] or ""):match("^(.*)/lua/[^/]*$") or "tests"
local REF = HERE .. "/numpy_ref.py"

local function sh_ok(cmd)
  local p = io.popen(cmd .. " >/dev/null 2>&1; echo $?")
  local s = p:read("a"); p:close()
  return tonumber(s) == 0
end

local pyf = io.open(PY, "r")
if pyf then pyf:close() end
if not pyf then
  T.skip("numpy cross-check", PY .. " is not installed (apt-get install python3-numpy)")
  T.done()
elseif not sh_ok(PY .. " -c 'import numpy'") then
  T.skip("numpy cross-check", "numpy is not importable by " .. PY .. " (apt-get install python3-numpy)")
  T.done()
end
if not torch.tensor then
  T.skip("numpy cross-check", "torch.tensor does not exist yet")
  T.done()
end

math.randomseed(20240611)

---------------------------------------------------------------------------------------------
-- helpers

local function numel(shape) local n = 1 for _, d in ipairs(shape) do n = n * d end return n end

-- nested table of the given shape from a flat sequence
local function nest(flat, shape)
  if #shape == 0 then return flat[1] end
  local pos = 0
  local function build(d)
    local t = {}
    for i = 1, shape[d] do
      if d == #shape then pos = pos + 1; t[i] = flat[pos] else t[i] = build(d + 1) end
    end
    return t
  end
  return build(1)
end

-- flat sequence of a tensor's values (booleans as 0/1) and its shape
local function flat_of(x)
  local shape = {}
  for i = 1, x:dim() do shape[i] = x:size(i) end
  local t = x:dim() == 0 and x:item() or x:totable()
  local out = {}
  local function walk(v)
    if type(v) == "table" then for _, e in ipairs(v) do walk(e) end
    elseif type(v) == "boolean" then out[#out + 1] = v and 1 or 0
    else out[#out + 1] = v end
  end
  walk(t)
  return out, shape
end

-- a random tensor: uniform in [lo, hi); dtype defaults to float64
local function rnd(shape, lo, hi, dtype)
  lo, hi = lo or -2, hi or 2
  local flat = {}
  for i = 1, numel(shape) do flat[i] = lo + (hi - lo) * math.random() end
  return torch.tensor(nest(flat, shape), { dtype = dtype or "float64" })
end

-- integer-valued floats (so ties and equality happen in comparisons)
local function rndint(shape, lo, hi, dtype)
  local flat = {}
  for i = 1, numel(shape) do flat[i] = math.random(lo, hi) + 0.0 end
  return torch.tensor(nest(flat, shape), { dtype = dtype or "float64" })
end

local function has(name)
  return torch[name] ~= nil or (torch._methods ~= nil and torch._methods[name] ~= nil)
end

local function num_str(v)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  return ("%.17g"):format(v)
end

---------------------------------------------------------------------------------------------
-- cases: case(name, {needs}, npop, params, inputs, fn, tol)
--   needs:  torch functions / methods the case uses (missing: the case is skipped)
--   npop:   the numpy_ref.py op, params its key=value arguments (dims 0-based there)
--   fn:     computes lutorch's result(s) from the inputs

local cases = {}
local function case(name, needs, npop, params, inputs, fn, tol)
  for _, n in ipairs(needs) do
    if not has(n) then T.skip(name, "torch." .. n .. " does not exist yet"); return end
  end
  local c = { id = #cases + 1, name = name, op = npop, params = params, tol = tol or 1e-10 }
  local ok, err = pcall(function()
    local ins = type(inputs) == "function" and inputs() or inputs
    c.inputs = {}
    for i, x in ipairs(ins) do
      local v, s = flat_of(x)
      c.inputs[i] = { v = v, s = s }
    end
    local outs = table.pack(fn(table.unpack(ins)))
    c.outs = {}
    for i = 1, outs.n do
      local o = outs[i]
      if type(o) == "number" then c.outs[i] = { v = { o }, s = {} }
      else
        local v, s = flat_of(o)
        c.outs[i] = { v = v, s = s }
      end
    end
  end)
  if not ok then c.err = tostring(err) end
  cases[#cases + 1] = c
end

local f64, f32 = "float64", "float32"
local TOL32 = 2e-5

-- elementwise binary ops with broadcasting, both dtypes
local binops = {
  { "add", function(a, b) return a + b end },
  { "sub", function(a, b) return a - b end },
  { "mul", function(a, b) return a * b end },
  { "div", function(a, b) return a / b end },
}
for _, dt in ipairs { f64, f32 } do
  local tol = dt == f64 and 1e-12 or TOL32
  for _, op in ipairs(binops) do
    local name, f = op[1], op[2]
    -- divisors kept away from zero
    local lo = name == "div" and 0.5 or -2
    case(("%s %s same shape"):format(name, dt), {}, name, {},
         function() return { rnd({ 7, 5 }, -2, 2, dt), rnd({ 7, 5 }, lo, 3, dt) } end, f, tol)
    case(("%s %s broadcast (3,1,4) with (5,4)"):format(name, dt), {}, name, {},
         function() return { rnd({ 3, 1, 4 }, -2, 2, dt), rnd({ 5, 4 }, lo, 3, dt) } end, f, tol)
    case(("%s %s transposed input"):format(name, dt), { "t" }, name, {},
         function() return { rnd({ 6, 4 }, -2, 2, dt):t(), rnd({ 4, 6 }, lo, 3, dt) } end, f, tol)
  end
  case("torch.add alpha " .. dt, { "add" }, "add", { alpha = 3 },
       function() return { rnd({ 4, 3 }, -2, 2, dt), rnd({ 4, 3 }, -2, 2, dt) } end,
       function(a, b) return torch.add(a, b, { alpha = 3 }) end, tol)
  case("large add " .. dt .. " (parallel path)", {}, "add", {},
       function() return { rnd({ 270, 257 }, -2, 2, dt), rnd({ 257 }, -2, 2, dt) } end,
       function(a, b) return a + b end, tol)
end

-- elementwise unary ops
local unops = {
  { "exp", -3, 3 }, { "log", 0.01, 10 }, { "tanh", -4, 4 }, { "sigmoid", -8, 8 },
  { "sqrt", 0, 9 }, { "abs", -3, 3 }, { "neg", -3, 3 },
}
for _, dt in ipairs { f64, f32 } do
  for _, u in ipairs(unops) do
    local name, lo, hi = u[1], u[2], u[3]
    local tol = dt == f64 and 1e-12 or TOL32
    case(("%s %s"):format(name, dt), { name }, name, {},
         function() return { rnd({ 9, 7 }, lo, hi, dt) } end,
         function(x) return x[name](x) end, tol)
    -- one large case per op (past 2 x LT_GRAIN_ELEMENTWISE: the parallel path), small otherwise
    local big = (dt == f32) == (name == "exp" or name == "sigmoid" or name == "sqrt" or name == "neg")
    case(("%s %s transposed%s"):format(name, dt, big and ", large" or ""), { name, "t" }, name, {},
         function() return { rnd(big and { 260, 270 } or { 30, 40 }, lo, hi, dt):t() } end,
         function(x) return torch[name] and torch[name](x) or x[name](x) end, tol)
  end
end

-- pow: tensor exponent, scalar exponent, ^ operator
for _, dt in ipairs { f64, f32 } do
  local tol = dt == f64 and 1e-12 or 1e-4
  case("pow tensor^tensor " .. dt, { "pow" }, "pow", {},
       function() return { rnd({ 5, 6 }, 0.1, 3, dt), rnd({ 6 }, -2, 3, dt) } end,
       function(a, b) return torch.pow(a, b) end, tol)
  case("pow x^2.5 " .. dt, { "pow" }, "pow_scalar", { e = 2.5 },
       function() return { rnd({ 5, 6 }, 0.1, 3, dt) } end,
       function(a) return a ^ 2.5 end, tol)
  case("pow x^2 (negative base) " .. dt, { "pow" }, "pow_scalar", { e = 2 },
       function() return { rnd({ 5, 6 }, -3, 3, dt) } end,
       function(a) return a:pow(2) end, tol)
end

-- maximum / minimum and comparisons (integer-valued inputs so ties occur)
for _, dt in ipairs { f64, f32 } do
  for _, name in ipairs { "maximum", "minimum" } do
    case(("%s %s broadcast"):format(name, dt), { name }, name, {},
         function() return { rndint({ 4, 1, 3 }, -3, 3, dt), rndint({ 5, 3 }, -3, 3, dt) } end,
         function(a, b) return torch[name](a, b) end, 0)
  end
  for _, name in ipairs { "eq", "ne", "lt", "le", "gt", "ge" } do
    case(("%s %s broadcast"):format(name, dt), { name }, name, {},
         function() return { rndint({ 4, 1, 3 }, -2, 2, dt), rndint({ 5, 3 }, -2, 2, dt) } end,
         function(a, b) return a[name](a, b) end, 0)
  end
end

-- reductions
for _, dt in ipairs { f64, f32 } do
  local tol = dt == f64 and 1e-10 or 1e-4
  local function X() return { rnd({ 6, 7, 5 }, -2, 2, dt) } end
  case("sum all " .. dt, { "sum" }, "sum", {}, X, function(x) return x:sum() end, tol)
  for d = 1, 3 do
    case(("sum dim %d %s"):format(d, dt), { "sum" }, "sum", { dim = d - 1 }, X,
         function(x) return x:sum(d) end, tol)
  end
  case("sum dim -1 keepdim " .. dt, { "sum" }, "sum", { dim = 2, keepdim = true }, X,
       function(x) return x:sum(-1, true) end, tol)
  case("sum of transposed " .. dt, { "sum", "t" }, "sum", { dim = 0 },
       function() return { rnd({ 30, 40 }, -2, 2, dt):t() } end, function(x) return x:sum(1) end, tol)
  case("sum large (parallel) " .. dt, { "sum" }, "sum", {},
       function() return { rnd({ 270, 257 }, 0, 1, dt) } end, function(x) return x:sum() end, tol)
  case("prod dim 1 " .. dt, { "prod" }, "prod", { dim = 0 },
       function() return { rnd({ 5, 4 }, 0.5, 1.5, dt) } end, function(x) return x:prod(1) end, tol)
  case("mean all " .. dt, { "mean" }, "mean", {}, X, function(x) return x:mean() end, tol)
  case("mean dim 2 " .. dt, { "mean" }, "mean", { dim = 1 }, X, function(x) return x:mean(2) end, tol)
  case("max dim 2 (values, 1-based indices) " .. dt, { "max" }, "max_dim", { dim = 1 }, X,
       function(x) return x:max(2) end, tol)
  case("min dim -1 (values, 1-based indices) " .. dt, { "min" }, "min_dim", { dim = 2 }, X,
       function(x) return x:min(-1) end, tol)
  case("max all " .. dt, { "max" }, "amax", {}, X, function(x) return x:max() end, tol)
  case("var all " .. dt, { "var" }, "var", {}, X, function(x) return x:var() end, tol)
  case("var dim 1 " .. dt, { "var" }, "var", { dim = 0 }, X, function(x) return x:var(1) end, tol)
  case("std all " .. dt, { "std" }, "std", {}, X, function(x) return x:std() end, tol)
  case("std dim 3 " .. dt, { "std" }, "std", { dim = 2 }, X, function(x) return x:std(3) end, tol)
  case("norm all " .. dt, { "norm" }, "norm", {}, X, function(x) return x:norm() end, tol)
  case("norm p=1 dim 2 " .. dt, { "norm" }, "norm", { p = 1, dim = 1 }, X,
       function(x) return x:norm(1, 2) end, tol)
  case("logsumexp dim 2 " .. dt, { "logsumexp" }, "logsumexp", { dim = 1 },
       function() return { rnd({ 6, 7, 5 }, -20, 20, dt) } end, function(x) return x:logsumexp(2) end, tol)
  case("logsumexp large values " .. dt, { "logsumexp" }, "logsumexp", { dim = 0 },
       function() return { rnd({ 8, 3 }, 500, 700, dt) } end,
       function(x) return torch.logsumexp(x, 1) end, tol)
  case("cumsum dim 1 " .. dt, { "cumsum" }, "cumsum", { dim = 0 }, X, function(x) return x:cumsum(1) end, tol)
  case("cumsum dim -1 transposed " .. dt, { "cumsum", "t" }, "cumsum", { dim = 1 },
       function() return { rnd({ 9, 4 }, -2, 2, dt):t() } end, function(x) return x:cumsum(-1) end, tol)
  case("argmax dim 2 (+1) " .. dt, { "argmax" }, "argmax", { dim = 1 }, X,
       function(x) return x:argmax(2) end, 0)
  case("argmax all (+1) " .. dt, { "argmax" }, "argmax", {}, X, function(x) return x:argmax() end, 0)
  case("argmin dim 1 (+1) " .. dt, { "argmin" }, "argmin", { dim = 0 }, X,
       function(x) return x:argmin(1) end, 0)
  case("softmax dim 2 " .. dt, { "softmax" }, "softmax", { dim = 1 }, X,
       function(x) return x:softmax(2) end, tol)
end

-- matrix products
for _, dt in ipairs { f64, f32 } do
  local tol = dt == f64 and 1e-10 or 1e-4
  case("mm " .. dt, { "mm" }, "mm", {},
       function() return { rnd({ 13, 17 }, -1, 1, dt), rnd({ 17, 11 }, -1, 1, dt) } end,
       function(a, b) return torch.mm(a, b) end, tol)
  case("mm transposed operands " .. dt, { "mm", "t" }, "mm", {},
       function() return { rnd({ 17, 13 }, -1, 1, dt):t(), rnd({ 11, 17 }, -1, 1, dt):t() } end,
       function(a, b) return a:mm(b) end, tol)
  case("mm large " .. dt, { "mm" }, "mm", {},
       function() return { rnd({ 64, 100 }, -1, 1, dt), rnd({ 100, 70 }, -1, 1, dt) } end,
       function(a, b) return torch.mm(a, b) end, tol)
  case("matmul 2-D " .. dt, { "matmul" }, "matmul", {},
       function() return { rnd({ 5, 8 }, -1, 1, dt), rnd({ 8, 3 }, -1, 1, dt) } end,
       function(a, b) return a:matmul(b) end, tol)
  case("matmul matrix-vector " .. dt, { "matmul" }, "matmul", {},
       function() return { rnd({ 5, 8 }, -1, 1, dt), rnd({ 8 }, -1, 1, dt) } end,
       function(a, b) return torch.matmul(a, b) end, tol)
  case("matmul vector-vector " .. dt, { "matmul" }, "matmul", {},
       function() return { rnd({ 8 }, -1, 1, dt), rnd({ 8 }, -1, 1, dt) } end,
       function(a, b) return torch.matmul(a, b) end, tol)
  case("matmul batched broadcast " .. dt, { "matmul" }, "matmul", {},
       function() return { rnd({ 2, 1, 4, 6 }, -1, 1, dt), rnd({ 3, 6, 5 }, -1, 1, dt) } end,
       function(a, b) return torch.matmul(a, b) end, tol)
  case("mv " .. dt, { "mv" }, "mv", {},
       function() return { rnd({ 9, 7 }, -1, 1, dt):t(), rnd({ 9 }, -1, 1, dt) } end,
       function(a, b) return torch.mv(a, b) end, tol)
  case("dot " .. dt, { "dot" }, "dot", {},
       function() return { rnd({ 50 }, -1, 1, dt), rnd({ 50 }, -1, 1, dt) } end,
       function(a, b) return a:dot(b) end, tol)
  case("bmm " .. dt, { "bmm" }, "bmm", {},
       function() return { rnd({ 4, 3, 6 }, -1, 1, dt), rnd({ 4, 6, 5 }, -1, 1, dt) } end,
       function(a, b) return torch.bmm(a, b) end, tol)
  case("einsum ij,jk->ik " .. dt, { "einsum" }, "einsum", { spec = "ij,jk->ik" },
       function() return { rnd({ 4, 6 }, -1, 1, dt), rnd({ 6, 3 }, -1, 1, dt) } end,
       function(a, b) return torch.einsum("ij,jk->ik", a, b) end, tol)
  case("einsum bij,bjk->bik " .. dt, { "einsum" }, "einsum", { spec = "bij,bjk->bik" },
       function() return { rnd({ 2, 4, 6 }, -1, 1, dt), rnd({ 2, 6, 3 }, -1, 1, dt) } end,
       function(a, b) return torch.einsum("bij,bjk->bik", a, b) end, tol)
  case("einsum ii->i (diagonal) " .. dt, { "einsum" }, "einsum", { spec = "ii->i" },
       function() return { rnd({ 5, 5 }, -1, 1, dt) } end,
       function(a) return torch.einsum("ii->i", a) end, tol)
  case("einsum ij->ji " .. dt, { "einsum" }, "einsum", { spec = "ij->ji" },
       function() return { rnd({ 3, 5 }, -1, 1, dt) } end,
       function(a) return torch.einsum("ij->ji", a) end, tol)
  case("einsum i,i-> (dot) " .. dt, { "einsum" }, "einsum", { spec = "i,i->" },
       function() return { rnd({ 7 }, -1, 1, dt), rnd({ 7 }, -1, 1, dt) } end,
       function(a, b) return torch.einsum("i,i->", a, b) end, tol)
  case("einsum bhqd,bhkd->bhqk " .. dt, { "einsum" }, "einsum", { spec = "bhqd,bhkd->bhqk" },
       function() return { rnd({ 2, 3, 4, 5 }, -1, 1, dt), rnd({ 2, 3, 6, 5 }, -1, 1, dt) } end,
       function(a, b) return torch.einsum("bhqd,bhkd->bhqk", a, b) end, tol)
end

---------------------------------------------------------------------------------------------
-- numpy's side: one interpreter run for every case

local req = os.tmpname()
local res = os.tmpname()

-- a tensor on the wire: "tensor NDIM D1 .. Dn\n", then its values as little-endian float64
-- (exact, NaN and infinities included), then "\n"
local CHUNK = 200
local function write_values(f, v)
  for i = 1, #v, CHUNK do
    local j = math.min(i + CHUNK - 1, #v)
    f:write(string.pack("<" .. ("d"):rep(j - i + 1), table.unpack(v, i, j)))
  end
end
local function read_values(buf, pos, n)
  local vals = {}
  for i = 1, n, CHUNK do
    local k = math.min(CHUNK, n - i + 1)
    local got = table.pack(string.unpack("<" .. ("d"):rep(k), buf, pos))
    for j = 1, k do vals[i + j - 1] = got[j] end
    pos = got[k + 1]
  end
  return vals, pos
end

do
  local f = assert(io.open(req, "wb"))
  for _, c in ipairs(cases) do
    if not c.err then
      local params = {}
      for k, v in pairs(c.params) do params[#params + 1] = k .. "=" .. tostring(v) end
      table.sort(params)
      f:write(("case %d %s %d %s\n"):format(c.id, c.op, #c.inputs, table.concat(params, " ")))
      for _, x in ipairs(c.inputs) do
        f:write(("tensor %d %s\n"):format(#x.s, table.concat(x.s, " ")))
        write_values(f, x.v)
        f:write("\n")
      end
    end
  end
  f:close()
end

local p = io.popen(("%s %s %s %s 2>&1"):format(PY, REF, req, res))
local pyout = p:read("a")
local pyok = p:close()
local expected = {}
do
  local f = io.open(res, "rb")
  local buf = f and f:read("a") or ""
  if f then f:close() end
  local pos = 1
  local function line()
    local e = buf:find("\n", pos, true)
    if not e then return nil end
    local l = buf:sub(pos, e - 1)
    pos = e + 1
    return l
  end
  while true do
    local l = line()
    if not l then break end
    local kind, id, rest = l:match("^(%S+) (%d+) ?(.*)$")
    id = tonumber(id)
    if kind == "error" then expected[id] = { err = rest }
    elseif kind == "result" then
      local outs = {}
      for k = 1, tonumber(rest) do
        local head = {}
        for w in line():gmatch("%S+") do head[#head + 1] = w end
        local shape = {}
        for d = 3, #head do shape[#shape + 1] = tonumber(head[d]) end
        local vals
        vals, pos = read_values(buf, pos, numel(shape))
        pos = pos + 1                          -- the "\n" after the values
        outs[k] = { v = vals, s = shape }
      end
      expected[id] = { outs = outs }
    else
      break
    end
  end
end
os.remove(req); os.remove(res)

T.test("numpy_ref.py ran", function()
  T.ok(pyok, "numpy_ref.py failed: " .. pyout)
end)

for _, c in ipairs(cases) do
  T.test(c.name, function()
    if c.err then error("lutorch raised: " .. c.err, 0) end
    local e = expected[c.id]
    T.ok(e, "numpy gave no result")
    if e.err then error("numpy raised: " .. e.err, 0) end
    T.eq(#c.outs, #e.outs, "number of results")
    for k, o in ipairs(c.outs) do
      local want = e.outs[k]
      T.eq(o.s, want.s, ("result %d shape"):format(k))
      T.eq(#o.v, #want.v, ("result %d number of values"):format(k))
      -- report the first mismatch only: the tensors can hold thousands of values
      for i = 1, #want.v do
        if not T.deq(o.v[i], want.v[i], c.tol > 0 and c.tol or nil) then
          error(("result %d, element %d (row-major): expected %s (tol %g), got %s"):format(
            k, i, num_str(want.v[i]), c.tol, num_str(o.v[i])), 0)
        end
      end
    end
  end)
end

T.done()
