-- t7lua51.lua — the Lua 5.1 / LuaJIT names Torch7 code relies on, as globals
-- of a Torch7-mode state (torch._t7_lua51(), called from torch7.lua):
-- unpack, loadstring, setfenv/getfenv, module, math.pow and the other 5.1 math
-- and table functions, and LuaJIT's bit library. PyTorch mode never runs this.
local torch = ...

function torch._t7_lua51()
  unpack = unpack or table.unpack
  loadstring = loadstring or load
  math.pow = math.pow or function(a, b) return a ^ b end
  math.log10 = math.log10 or function(x) return math.log(x, 10) end
  math.mod = math.mod or math.fmod
  math.ldexp = math.ldexp or function(m, e) return m * 2.0 ^ e end
  math.atan2 = math.atan2 or function(y, x) return math.atan(y, x) end
  math.cosh = math.cosh or function(x) return (math.exp(x) + math.exp(-x)) / 2 end
  math.sinh = math.sinh or function(x) return (math.exp(x) - math.exp(-x)) / 2 end
  math.tanh = math.tanh or function(x)
    if x > 20 then return 1.0 elseif x < -20 then return -1.0 end
    local a, b = math.exp(x), math.exp(-x)
    return (a - b) / (a + b)
  end
  -- m * 2^e = x with 0.5 <= |m| < 1 (m = x for 0, infinities and NaN)
  math.frexp = math.frexp or function(x)
    if x == 0 or x ~= x or x == math.huge or x == -math.huge then return x, 0 end
    local e = math.floor(math.log(math.abs(x), 2)) + 1
    local m = x / 2.0 ^ e
    -- log2 may round across a power of two
    if math.abs(m) >= 1 then m, e = m / 2, e + 1 elseif math.abs(m) < 0.5 then m, e = m * 2, e - 1 end
    return m, math.tointeger(e) or e
  end
  table.getn = table.getn or function(t) return #t end
  table.maxn = table.maxn or function(t)
    local n = 0
    for k in pairs(t) do if type(k) == "number" and k > n then n = k end end
    return n
  end

  ---------------------------------------------------------------------------
  -- setfenv / getfenv. A Lua 5.4 function sees globals through its upvalue
  -- _ENV; setfenv rebinds that upvalue of that one function to a fresh one
  -- holding the table, so closures the function makes afterwards see it too,
  -- as in Lua 5.1. What cannot be emulated: C functions (no _ENV; an error),
  -- level 0 (the thread's globals; an error), and a function's siblings that
  -- share its _ENV upvalue keep theirs. A function that uses no globals has no
  -- _ENV: setfenv accepts it and changes nothing (it would not notice), and
  -- getfenv gives the global table.
  ---------------------------------------------------------------------------
  local function env_slot(f)
    for i = 1, math.huge do
      local name = debug.getupvalue(f, i)
      if name == nil then return nil end
      if name == "_ENV" then return i end
    end
  end
  -- f may be a function or a level (1: the caller of setfenv/getfenv)
  local function target(name, f, default_level)
    if f == nil then f = default_level end
    if type(f) == "function" then return f end
    if math.type(f) ~= "integer" and not (type(f) == "number" and f == math.floor(f)) then
      error(("%s: argument #1 must be a function or a level, got %s"):format(name, type(f)), 3)
    end
    if f < 0 then error(name .. ": level must be non-negative", 3) end
    if f == 0 then return 0 end
    local info = debug.getinfo(f + 2, "f")   -- + this function and setfenv/getfenv
    if not info then error(name .. ": invalid level", 3) end
    return info.func
  end

  function getfenv(f)
    f = target("getfenv", f, 1)
    if f == 0 then return _G end
    local i = debug.getinfo(f, "S").what ~= "C" and env_slot(f)
    if not i then return _G end
    local _, env = debug.getupvalue(f, i)
    return env
  end

  function setfenv(f, env)
    if type(env) ~= "table" then error("setfenv: argument #2 must be a table, got " .. type(env), 2) end
    local fn = target("setfenv", f, 1)
    if fn == 0 then error("setfenv: level 0 (the thread's globals) cannot be changed in Lua 5.4", 2) end
    if debug.getinfo(fn, "S").what == "C" then
      error("setfenv: a C function has no environment in Lua 5.4", 2)
    end
    local i = env_slot(fn)
    if i then
      local holder = function() return env end
      debug.upvaluejoin(fn, i, holder, 1)
    end
    return fn
  end

  -- module(name [, ...]): Lua 5.1's module table, made the environment of the
  -- calling chunk; package.seeall (or any function given) is applied to it
  function module(name, ...)
    if type(name) ~= "string" then error("module: argument #1 must be a string", 2) end
    local m = package.loaded[name]
    if type(m) ~= "table" then
      m = _G
      for part in name:gmatch("[^.]+") do
        local t = rawget(m, part)
        if t == nil then t = {}; rawset(m, part, t) end
        if type(t) ~= "table" then error("module: name conflict for module '" .. name .. "'", 2) end
        m = t
      end
      package.loaded[name] = m
    end
    if m._NAME == nil then
      m._M, m._NAME, m._PACKAGE = m, name, name:match("^(.*%.)") or ""
    end
    local chunk = debug.getinfo(2, "f").func
    local i = env_slot(chunk)
    if i then debug.upvaluejoin(chunk, i, function() return m end, 1) end
    for _, opt in ipairs({ ... }) do opt(m) end
    return m
  end
  package.seeall = package.seeall or function(m)
    local mt = getmetatable(m) or {}
    mt.__index = _G
    setmetatable(m, mt)
  end

  ---------------------------------------------------------------------------
  -- LuaJIT's bit library: 32-bit signed results, as LuaJIT gives them
  ---------------------------------------------------------------------------
  if bit == nil then
    local function tobit(x)
      x = math.tointeger(x) or math.floor(x)
      x = x & 0xffffffff
      if x >= 0x80000000 then x = x - 0x100000000 end
      return x
    end
    local function u(x) return tobit(x) & 0xffffffff end
    local function fold(op)
      return function(a, ...)
        local r = u(a)
        for i = 1, select("#", ...) do r = op(r, u((select(i, ...)))) end
        return tobit(r)
      end
    end
    bit = {
      tobit = tobit,
      bnot = function(x) return tobit(~u(x)) end,
      band = fold(function(a, b) return a & b end),
      bor = fold(function(a, b) return a | b end),
      bxor = fold(function(a, b) return a ~ b end),
      lshift = function(x, n) return tobit(u(x) << (n & 31)) end,
      rshift = function(x, n) return tobit(u(x) >> (n & 31)) end,
      arshift = function(x, n) return tobit(tobit(x) // (1 << (n & 31))) end,
      rol = function(x, n) n = n & 31; local v = u(x); return tobit((v << n) | (v >> (32 - n))) end,
      ror = function(x, n) n = n & 31; local v = u(x); return tobit((v >> n) | (v << (32 - n))) end,
      bswap = function(x)
        local v = u(x)
        return tobit(((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >> 8) & 0xff00) | (v >> 24))
      end,
      tohex = function(x, n)
        n = n or 8
        local up = n < 0
        n = math.min(math.abs(n), 8)
        local s = ("%08x"):format(u(x)):sub(9 - n)
        return up and s:upper() or s
      end,
    }
    package.loaded.bit = bit
  end
end
