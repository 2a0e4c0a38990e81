-- test_torch7_misc.lua — Torch7 mode's library odds and ends, under
-- `lutorch --torch7` (tests/sh/test_torch7_mode.sh): torch.CmdLine, the Lua 5.1
-- names (setfenv/getfenv, module, bit, math), the alias multinomial, the
-- empty tensor with no dims, the 2^-32 grid of uniform doubles, torch.Storage
-- and torch.Tester's counts. Expected values follow Torch7's documentation.
local T = require "testing"

local function tmpname() local n = os.tmpname(); os.remove(n); return n end

-- run f with io.write, io.stderr and os.exit captured: returns what was
-- written, what went to stderr, and the exit status (nil when f returned)
local function captured(f)
  local out, err = {}, {}
  local write, stderr, exit = io.write, io.stderr, os.exit
  io.write = function(...) for _, s in ipairs({ ... }) do out[#out + 1] = tostring(s) end end
  io.stderr = { write = function(_, ...) for _, s in ipairs({ ... }) do err[#err + 1] = tostring(s) end end }
  os.exit = function(code) error({ exit = code }, 0) end
  local ok, e = pcall(f)
  io.write, io.stderr, os.exit = write, stderr, exit
  local status
  if not ok then
    if type(e) == "table" and e.exit ~= nil then status = e.exit else error(e, 0) end
  end
  return table.concat(out), table.concat(err), status
end

local function example()
  local cmd = torch.CmdLine()
  cmd:text()
  cmd:text("Training a simple network")
  cmd:text()
  cmd:text("Options")
  cmd:option("-seed", 123, "initial random seed")
  cmd:option("-booloption", false, "boolean option")
  cmd:option("-stroption", "mystring", "string option")
  cmd:text()
  return cmd
end

T.test("CmdLine: defaults, options, the options table", function()
  local cmd = example()
  T.eq(torch.type(cmd), "torch.CmdLine")
  local p = cmd:parse({})
  T.eq(p.seed, 123); T.eq(p.booloption, false); T.eq(p.stroption, "mystring")
  p = cmd:parse({ "-seed", "456", "-stroption", "mycustomstring", "-booloption" })
  T.eq(p.seed, 456); T.eq(type(p.seed), "number"); T.eq(p.booloption, true); T.eq(p.stroption, "mycustomstring")
  -- the directory name of the doc's example
  T.eq(cmd:string("experiment", p, { dir = true }), "experiment,booloption=t,seed=456,stroption=mycustomstring")
  T.eq(cmd:string("experiment", cmd:parse({}), { dir = true }), "experiment")
  T.eq(cmd:string("exp", p, { seed = true }), "exp,booloption=t,stroption=mycustomstring")
  local c2 = torch.CmdLine("_", ":")
  c2:option("-lr", 0.1, "rate")
  T.eq(c2:string("run", c2:parse({ "-lr", "0.5" })), "run_lr:0.5")
end)

T.test("CmdLine: positional arguments", function()
  local cmd = torch.CmdLine()
  cmd:argument("-input", "input file")
  cmd:argument("-n", "count", "number")
  cmd:option("-v", false, "verbose")
  local p = cmd:parse({ "data.t7", "-v", "12" })
  T.eq(p.input, "data.t7"); T.eq(p.n, 12); T.eq(p.v, true)
  T.eq(cmd:string("x", p), "x,input=data.t7,n=12,v=t")
end)

T.test("CmdLine: -h prints the help and exits 0", function()
  local cmd = example()
  cmd:argument("-file", "the data")
  local want = table.concat({
    "Usage: prog.lua [options] <file>",
    "",
    "Training a simple network",
    "",
    "Options",
    "  -seed       initial random seed [123]",
    "  -booloption boolean option [false]",
    "  -stroption  string option [mystring]",
    "",
    "  <file>      the data",
    "" }, "\n")
  for _, flag in ipairs({ "-h", "-help", "--help" }) do
    local out, _, status = captured(function() cmd:parse({ [0] = "prog.lua", flag }) end)
    T.eq(out, want); T.eq(status, 0)
  end
end)

T.test("CmdLine: bad command lines print why and the help, and exit 1", function()
  local cmd = example()
  cmd:argument("-file", "the data")
  local cases = {
    { { "-seed" }, "missing argument for option -seed" },
    { { "-seed", "abc", "f" }, "invalid type for option -seed (should be number)" },
    { {}, "not enough arguments" },
    { { "a", "b" }, "invalid argument: b" },
  }
  for _, c in ipairs(cases) do
    local out, err, status = captured(function() cmd:parse(c[1]) end)
    T.eq(err, c[2]); T.eq(status, 1)
    T.ok(out:find("Usage: [options] <file>", 1, true) ~= nil)
  end
  T.raises(function() cmd:option("-x") end, "option -x has no default value")
  T.raises(function() cmd:option("-x", 1, "help", "string") end, "has a default of type number, not string")
  T.raises(function() cmd:option("x", 1) end, "must be a string starting with '-'")
  T.raises(function() cmd:addTime("n", 3) end, "argument 'format' must be a string")
end)

T.test("CmdLine: log tees print to a file, addTime prefixes it, silent keeps the screen quiet", function()
  local cmd = torch.CmdLine()
  cmd:option("-seed", 1, "seed")
  local file = tmpname()
  local oldprint = print
  local screen = {}
  print = function(...) screen[#screen + 1] = table.concat({ ... }, "\t") end
  cmd:addTime("proj", "%Y")
  cmd:log(file, { seed = 7, a = "x" })
  print("hello", 3)
  cmd:silent()
  print("quiet")
  local now = print
  print = oldprint
  local f = assert(io.open(file)); local text = f:read("a"); f:close(); os.remove(file)
  local year = os.date("%Y")
  local lines = {}
  for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
  T.eq(#lines, 7)
  T.ok(lines[1]:find("^" .. year .. "%[proj%]: %[program started on ") ~= nil)
  T.eq(lines[2], year .. "[proj]: [command line arguments]")
  T.eq(lines[3], year .. "[proj]: a\tx")
  T.eq(lines[4], year .. "[proj]: seed\t7")
  T.eq(lines[5], year .. "[proj]: [----------------------]")
  T.eq(lines[6], year .. "[proj]: hello\t3")
  T.eq(lines[7], year .. "[proj]: quiet")
  -- the screen got everything before silent(), without the time prefix
  T.eq(screen[6], "hello\t3"); T.eq(#screen, 6)
  T.ok(now ~= oldprint)
end)

T.test("setfenv / getfenv over a function's _ENV", function()
  x_t7misc = 1
  local function f() return x_t7misc end
  T.eq(f(), 1)
  T.eq(getfenv(f), _G)
  local env = { x_t7misc = 42 }
  T.eq(setfenv(f, env), f)
  T.eq(f(), 42); T.eq(getfenv(f), env); T.eq(x_t7misc, 1)
  -- closures made afterwards see the new environment too
  local function maker() return function() return x_t7misc end end
  setfenv(maker, { x_t7misc = 5 })
  T.eq(maker()(), 5)
  -- levels: 1 is the caller
  local function g() setfenv(1, { y = 7 }); return y end
  T.eq(g(), 7)
  local function h() return getfenv(1) end
  T.eq(h(), _G)
  -- what Lua 5.4 cannot do is an error; a function without globals is left alone
  T.raises(function() setfenv(print, {}) end, "a C function has no environment")
  T.raises(function() setfenv(0, {}) end, "level 0")
  T.raises(function() setfenv(f, 3) end, "argument #2 must be a table")
  local function pure(a) return a + 1 end
  T.eq(setfenv(pure, {}), pure); T.eq(pure(1), 2)
  x_t7misc = nil
end)

T.test("module(name, package.seeall) and loadstring", function()
  local chunk = loadstring([[
    module("t7misc_mod", package.seeall)
    function twice(v) return 2 * v end
    local_check = type(print)
  ]])
  chunk()
  T.eq(t7misc_mod.twice(4), 8)
  T.eq(t7misc_mod.local_check, "function")
  T.eq(t7misc_mod._NAME, "t7misc_mod")
  T.eq(package.loaded.t7misc_mod, t7misc_mod)
  T.eq(rawget(_G, "twice"), nil)
  package.loaded.t7misc_mod, t7misc_mod = nil, nil
end)

T.test("Lua 5.1 / LuaJIT names: unpack, math, table, bit", function()
  T.eq(select("#", unpack({ 1, 2, 3 })), 3)
  T.eq(math.pow(2, 10), 1024); T.eq(table.getn({ 1, 2 }), 2); T.eq(table.maxn({ 1, [7] = 2 }), 7)
  T.near(math.atan2(1, 1), math.pi / 4, 1e-15); T.eq(math.cosh(0), 1); T.near(math.tanh(1), 0.7615941559557649, 1e-15)
  local m, e = math.frexp(8); T.eq(m, 0.5); T.eq(e, 4)
  m, e = math.frexp(-3); T.eq(m, -0.75); T.eq(e, 2)
  T.eq(math.ldexp(0.5, 4), 8)
  T.eq(bit.band(0xff, 0x0f), 15); T.eq(bit.bor(1, 2, 4), 7); T.eq(bit.bxor(5, 3), 6)
  T.eq(bit.bnot(0), -1); T.eq(bit.lshift(1, 31), -2147483648); T.eq(bit.rshift(-1, 28), 15)
  T.eq(bit.arshift(-16, 2), -4); T.eq(bit.tobit(0xffffffff), -1); T.eq(bit.rol(0x80000001, 1), 3)
  T.eq(bit.tohex(255), "000000ff"); T.eq(bit.tohex(-1, -4), "FFFF"); T.eq(bit.bswap(0x12345678), 0x78563412)
  T.eq(require("bit"), bit)
end)

T.test("multinomialAliasSetup / multinomialAlias", function()
  local probs = torch.DoubleTensor({ 0.2, 0.3, 0.5 })
  local state = torch.multinomialAliasSetup(probs)
  T.eq(torch.type(state[1]), "torch.LongTensor"); T.eq(torch.type(state[2]), "torch.DoubleTensor")
  T.eq(state[1]:nElement(), 3); T.ok(state[1]:min() >= 1 and state[1]:max() <= 3)
  -- the columns' masses add back up to the probabilities
  local mass = torch.zeros(3)
  for i = 1, 3 do
    mass[i] = mass[i] + state[2][i] / 3
    local j = state[1][i]
    mass[j] = mass[j] + (1 - state[2][i]) / 3
  end
  T.tensor(mass, { 0.2, 0.3, 0.5 }, { tol = 1e-12 })
  -- a given state is reused
  local mine = { torch.LongTensor(), torch.DoubleTensor() }
  T.ok(torch.multinomialAliasSetup(probs, mine) == mine); T.eq(mine[1]:nElement(), 3)
  torch.manualSeed(1)
  local out = torch.LongTensor(2, 50000)
  local r = torch.multinomialAlias(out:view(-1), state)
  T.eq(r:nElement(), 100000)
  for k, p in ipairs({ 0.2, 0.3, 0.5 }) do T.near(out:eq(k):sum() / 100000, p, 0.01) end
  -- unnormalised weights are probabilities after dividing by their sum
  local s2 = torch.multinomialAliasSetup(torch.Tensor({ 1, 0, 3 }))
  local o2 = torch.multinomialAlias(torch.LongTensor(20000), s2)
  T.eq(o2:eq(2):sum(), 0); T.near(o2:eq(3):sum() / 20000, 0.75, 0.02)
  T.raises(function() torch.multinomialAliasSetup(torch.Tensor(2, 2)) end, "argument 'probs' must be a non-empty 1-D tensor")
  T.raises(function() torch.multinomialAliasSetup(torch.Tensor({ 1, -1 })) end, "non-negative")
  T.raises(function() torch.multinomialAliasSetup(torch.Tensor({ 0, 0 })) end, "sum to 0")
  T.raises(function() torch.multinomialAlias(torch.LongTensor(2, 2), state) end, "argument 'output' must be a 1-D tensor")
  T.raises(function() torch.multinomialAlias(torch.LongTensor(2), {}) end, "argument 'state'")
end)

T.test("torch.Tensor() has no dims; cat skips it", function()
  local e = torch.Tensor()
  T.eq(e:dim(), 0); T.eq(e:nDimension(), 0); T.eq(#e:size(), 0); T.eq(e:nElement(), 0)
  T.eq(torch.cat(e, torch.Tensor()):dim(), 0)
  local x = torch.rand(1, 2, 3)
  local c = torch.cat(x, e, 2)
  T.eq(c:size():totable(), { 1, 2, 3 })
  T.eq(torch.cat({ e, x }):size():totable(), { 1, 2, 3 })
  T.eq(torch.Tensor(2, 0):dim(), 2)
end)

T.test("uniform doubles lie on Torch7's 2^-32 grid", function()
  local u = torch.rand(1000)
  T.eq((u * 2 ^ 32 - (u * 2 ^ 32):floor()):abs():max(), 0)
  local v = torch.Tensor(1000):uniform()
  T.eq((v * 2 ^ 32 - (v * 2 ^ 32):floor()):abs():max(), 0)
  local w = torch.Tensor(1000):uniform(-2, 3)
  T.ok(w:min() >= -2 and w:max() < 3)
  -- so the mean of an expanded column is the column, as Torch7's tests expect
  local t = torch.rand(8, 1)
  T.eq((t:expand(8, 5):mean(2) - t):abs():max(), 0)
end)

T.test("torch.Storage is the default type's storage", function()
  local s = torch.Storage({ 1, 2 })
  T.eq(torch.type(s), "torch.DoubleStorage"); T.eq(s:size(), 2); T.eq(s[2], 2)
end)

T.test("torch.Tester: counts, _setUp/_tearDown, warnings", function()
  local tester = torch.Tester()
  local suite = torch.TestSuite()
  local setups = {}
  function suite._setUp(name) setups[#setups + 1] = name end
  function suite.a() tester:asserteq(1, 1); tester:eq({ 1, { 2 } }, { 1, { 2 } }) end
  function suite.b() tester:assert({}) end   -- a warning, not a failure
  tester:add(suite)
  local out = captured(function() tester:run() end)
  T.eq(tester.countasserts, 3)
  T.eq(setups, { "a", "b" })
  T.ok(out:find("Completed 3 asserts in 2 tests with 0 failures and 0 errors and 1 warning", 1, true) ~= nil)
  T.ok(out:find("should only be used for boolean conditions", 1, true) ~= nil)
  -- the assertion's own result and message
  local sub = torch.Tester()
  sub._success = function() return true, "ok" end
  sub._failure = function(_, m) return false, m end
  local ok, m = sub:assertlt(2, 1, "msg")
  T.eq(ok, false); T.eq(m, "msg\nLT failed: 2 >= 1")
  ok, m = sub:assertTensorEq(torch.Tensor({ 1 }), torch.Tensor({ 2 }), 0.5)
  T.eq(m, "TensorEQ(==) violation: max diff=1.0, tolerance=0.5")
  T.raises(function() sub:assert(true, "m", "extra") end, "Unexpected arguments")
  T.raises(function() tester:add(function() end, "a") end, "Test with name a already exists!")
  T.raises(function() torch.TestSuite().x = 1 end, "Only functions are supported")
end)

T.test("torch.setheaptracking and torch.Timer", function()
  torch.setheaptracking(true); T.eq(torch._heaptracking, true)
  local t = torch.Timer()
  local a = t:time()
  T.ok(a.real >= 0 and a.user >= 0 and a.sys >= 0)
  t:stop(); local s1 = t:time().real
  local x = 0; for i = 1, 1e5 do x = x + i end
  T.eq(t:time().real, s1)
  t:resume(); t:reset(); T.ok(t:time().real < 1)
end)

T.test("x:sub is Torch7's sub-tensor, x:stride() a LongStorage", function()
  local x = torch.range(1, 30):view(5, 6)
  local y = x:sub(2, 4)
  T.eq(y:size():totable(), { 3, 6 }); T.eq(y[1][1], 7)
  local z = x:sub(2, -1, 3, 4)
  T.eq(z:size():totable(), { 4, 2 }); T.eq(z[1][1], 9); T.eq(z[4][2], 28)
  z:fill(0); T.eq(x[2][3], 0)   -- a view
  T.eq(x[1][1], 1)              -- x itself is unchanged
  T.raises(function() x:sub(0, 2) end, "sub: range 0..2 out of bounds for dim 1 of size 5")
  T.raises(function() x:sub(1, 2, 1, 2, 1, 1) end, "sub: 3 ranges for a 2-D tensor")
  local st = x:stride()
  T.eq(st:size(), 2); T.eq(st:totable(), { 6, 1 }); T.eq(x:stride(1), 6)
end)

T.test("utility names: mod, retain, storage strings, ids, pointer, totable, ...", function()
  local a = torch.Tensor({ 5, -5 })
  T.eq(torch.mod(a, 3):totable(), torch.fmod(a, 3):totable())
  T.eq(torch.cmod(a, torch.Tensor({ 3, 3 })):totable(), { 2, -2 })
  T.ok(a:retain() == a); T.ok(a:free() == a)
  local cs = torch.CharStorage():string("hi!")
  T.eq(cs:size(), 3); T.eq(cs[1], 104); T.eq(cs:string(), "hi!")
  T.eq(torch.ByteStorage({ 65, 66 }):string(), "AB")
  T.raises(function() torch.DoubleStorage(2):string() end, "only a ByteStorage or a CharStorage")
  T.ok(torch.id(torch.Tensor()) == torch.typename2id("torch.DoubleTensor"))
  T.ok(torch.id(torch.LongTensor()) ~= torch.id(torch.Tensor()))
  T.eq(torch.id(3), nil)
  local t = {}
  T.eq(torch.isequal(t, t), true); T.eq(torch.isequal(t, {}), false); T.eq(torch.isequal(1, 1), false)
  T.eq(math.type(torch.pointer(t)), "integer"); T.ok(torch.pointer(t) ~= torch.pointer({})); T.eq(torch.pointer(1), nil)
  T.eq(torch.totable(torch.Tensor({ { 1, 2 } })), { { 1, 2 } }); T.eq(torch.totable(torch.LongStorage({ 3 })), { 3 })
  T.raises(function() torch.totable(1) end, "must be a tensor or a storage")
  local C = torch.class("t7misc.Thing")
  function C:hello() return "hi" end
  local obj = torch.setmetatable({}, "t7misc.Thing")
  T.eq(obj:hello(), "hi"); T.eq(torch.type(obj), "t7misc.Thing")
  -- torch.version reads the class metatable (1 unless the class sets __version);
  -- a value that is no torch object has none
  T.eq(torch.version(obj), 1); T.eq(torch.version(torch.Tensor()), 1); T.eq(torch.version({}), nil)
  torch.getmetatable("t7misc.Thing").__version = 3
  T.eq(torch.version(obj), 3)
  T.eq(torch.typename(torch.Generator()), "torch.Generator"); T.eq(torch.version(torch.Generator()), 1)
  T.ok(torch.getconstructortable("t7misc.Thing") == C)
  T.raises(function() torch.setmetatable({}, "no.Such") end, "unknown class 'no.Such'")
  local function f() return g_t7misc end
  torch.setenv(f, { g_t7misc = 9 }); T.eq(f(), 9); T.eq(torch.getenv(f).g_t7misc, 9)
  t7misc = nil
end)

T.test("torch.logNormal, cauchy, geometric: numbers, Torch7's conventions", function()
  torch.manualSeed(3)
  local g = 0
  for i = 1, 20000 do
    local v = torch.geometric(0.25)
    T.ok(math.type(v) == "integer" and v >= 1)
    g = g + v
  end
  T.near(g / 20000, 1 / (1 - 0.25), 0.03)     -- P(i) = (1 - p) p^(i-1)
  T.near(torch.Tensor(20000):geometric(0.25):mean(), 1 / 0.75, 0.03)
  T.ok(torch.logNormal(0, 1) > 0)
  T.eq(type(torch.cauchy(0, 1)), "number")
  local gen = torch.Generator(); torch.manualSeed(gen, 5)
  local v1 = torch.logNormal(gen, 1, 0.5); torch.manualSeed(gen, 5)
  T.eq(torch.logNormal(gen, 1, 0.5), v1)
  T.raises(function() torch.geometric(1) end, "0 < p < 1")
  T.raises(function() torch.logNormal(0, -1) end, "argument 'stdv' must be a positive number")
end)

T.done()
