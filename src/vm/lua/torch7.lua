-- torch7.lua — the Lua half of Torch7 mode. src/vm/lt7.c installs the
-- generated Torch7 binding (lua_t7_ops.c), then calls torch._t7_install;
-- nothing here runs in PyTorch mode. What is here: the tensor type tables
-- (torch.DoubleTensor, ...) as Torch7's class objects, torch.class and its
-- type functions, Torch7's random functions, the tensor methods Torch7 had
-- that are not ops (resize, apply, map, ...), LongStorage sizes, the
-- Lua 5.1 / LuaJIT names Torch7 code uses (t7lua51.lua), torch.Tester
-- (t7tester.lua) and torch.CmdLine (t7cmdline.lua).
local torch = ...

function torch._t7_install(torch)
  local M = torch._methods
  local mt = torch._tensor_mt

  ---------------------------------------------------------------------------
  -- Lua 5.1 / LuaJIT idioms (globals of this state only)
  ---------------------------------------------------------------------------
  torch._t7_lua51()     -- src/vm/lua/t7lua51.lua

  ---------------------------------------------------------------------------
  -- classes: torch.class, torch.typename, torch.type, torch.isTypeOf, ...
  ---------------------------------------------------------------------------
  local classes = {}        -- typename -> instance metatable
  local class_hooks         -- metamethod name -> maker of the hook every class gets
  local function typename_of(v)
    if torch.isTensor(v) then return v:type() end
    local m = getmetatable(v)
    if type(m) == "table" then
      local n = rawget(m, "__typename")
      if n then return n end
    end
    return nil
  end
  torch.typename = typename_of
  -- Torch7's generators were torch.Generator objects
  rawset(getmetatable(torch.Generator()), "__typename", "torch.Generator")
  function torch.type(v) return typename_of(v) or type(v) end

  -- what a class's instance metamethod runs: the class's own Torch7-style method
  -- (__tostring__, ...), else the nearest ancestor's plain metamethod (not a hook)
  local hooks = setmetatable({}, { __mode = "k" })
  local function class_method(obj, event)
    local f = obj[event .. "__"]
    if f then return f end
    local m = getmetatable(obj)
    while m do
      local g = rawget(m, event)
      if g and not hooks[g] then return g end
      m = rawget(m, "__parent")
    end
  end
  local function results(...) return ... end
  local function make_hook(event, fallback)
    local h = function(a, ...)
      -- a binary operator's class object may be either operand
      local f = type(a) == "table" and class_method(a, event)
      local b = (...)
      if not f then f = type(b) == "table" and class_method(b, event) end
      -- called in a frame of its own, as Torch7's C metamethods called these (see construct)
      if f then return results(f(a, ...)) end
      if fallback then return fallback(a, ...) end
      error(("attempt to perform '%s' on a %s"):format(event, torch.typename(a) or type(a)), 2)
    end
    hooks[h] = true
    return h
  end
  class_hooks = {}
  class_hooks.__tostring = function(event)
    return make_hook(event, function(o) return torch.typename(o) end)
  end
  class_hooks.__len = function(event) return make_hook(event, function(o) return rawlen(o) end) end
  for _, e in ipairs({ "__call", "__add", "__sub", "__mul", "__div", "__mod", "__unm", "__concat",
                       "__eq", "__lt", "__le" }) do
    class_hooks[e] = function(event) return make_hook(event) end
  end
  class_hooks.__eq = nil   -- identity unless a class says otherwise (rawequal is cheaper)

  -- a new instance of the class whose metatable is cmt. Torch7 made it in two frames (luaT's
  -- C __call, then the class's Lua constructor), and code reads debug.getinfo at a fixed
  -- depth from __init (nngraph labels a node with the line that made it): the calling
  -- function here keeps that depth
  local function construct(cmt, ...)
    local obj = setmetatable({}, cmt)
    if obj.__init then obj:__init(...) end
    return obj
  end

  -- torch.class(name [, parent] [, module]) -> class, parent
  function torch.class(name, parent, module)
    if type(name) ~= "string" then error("torch.class: argument 'name' must be a string", 2) end
    if type(parent) == "table" and module == nil then module, parent = parent, nil end
    if classes[name] then error("torch.class: class '" .. name .. "' exists already", 2) end
    local pmt
    if parent then
      pmt = classes[parent]
      if not pmt then error("torch.class: parent class '" .. tostring(parent) .. "' does not exist", 2) end
    end
    local cmt = { __typename = name }   -- the instances' metatable, holding the methods
    cmt.__index = cmt
    if pmt then
      setmetatable(cmt, { __index = pmt })
      cmt.__parent = pmt
    end
    -- Lua reads metamethods with rawget, so a parent's would not reach a child's
    -- instances: each class gets hooks that find Torch7's spellings (__tostring__,
    -- __call__, __len__, __add__, ...) or a parent's plain metamethod at call time
    for event, hook in pairs(class_hooks) do cmt[event] = hook(event) end
    classes[name] = cmt
    local class = setmetatable({}, {
      __index = cmt,
      __newindex = cmt,
      __call = function(_, ...)
        local obj = construct(cmt, ...)
        return obj   -- not a tail call: the two frames Torch7's constructor had (see construct)
      end,
      __tostring = function() return "torch.class " .. name end,
    })
    rawset(cmt, "__class", class)
    rawset(cmt, "new", function(...) return class(...) end)
    -- a dotted name lives in its module table: "nn.Foo" is nn.Foo, or module.Foo
    local short = name:match("([^.]+)$")
    if module then
      module[short] = class
    else
      local pkg = name:match("^(.+)%.[^.]+$")
      if pkg then
        local t = _G
        for part in pkg:gmatch("[^.]+") do
          t[part] = t[part] or {}
          t = t[part]
        end
        t[short] = class
      else
        _G[name] = class
      end
    end
    return class, pmt and rawget(pmt, "__class")
  end

  function torch.getmetatable(name)
    if type(name) ~= "string" then error("torch.getmetatable: argument 'name' must be a string", 2) end
    return classes[name]
  end
  function torch.factory(name)
    local cmt = classes[name]
    if not cmt then return nil end
    return function() return setmetatable({}, cmt) end
  end

  -- isTypeOf(obj, "name" | class | pattern): obj's class or one of its parents
  function torch.isTypeOf(obj, spec)
    if type(spec) == "table" then
      local n = rawget(spec, "__typename")
      if not n then
        local m = getmetatable(spec)
        local idx = m and rawget(m, "__index")
        n = type(idx) == "table" and rawget(idx, "__typename") or nil
      end
      if not n then return false end
      spec = n
    end
    if type(spec) ~= "string" then error("torch.isTypeOf: argument 'typeSpec' must be a string or a class", 2) end
    -- a plain name must match the whole type name; a pattern may match part of it
    local function matches(n)
      local m = n:match(spec)
      return m ~= nil and (m ~= spec or m == n)
    end
    if torch.isTensor(obj) then return matches(typename_of(obj)) end
    local m = getmetatable(obj)
    while type(m) == "table" and rawget(m, "__typename") do
      if matches(rawget(m, "__typename")) then return true end
      m = rawget(m, "__parent")
    end
    return false
  end

  function torch.isStorage(v)
    local n = typename_of(v)
    return n ~= nil and n:find("Storage$") ~= nil
  end

  ---------------------------------------------------------------------------
  -- tensor types as Torch7's class tables: torch.DoubleTensor(2, 3) still
  -- makes a tensor, and code may add functions to the table
  ---------------------------------------------------------------------------
  local types = { "Double", "Float", "Half", "Long", "Int", "Short", "Char", "Byte", "Bool", "BFloat16" }
  local is_storage
  local storage_view
  -- torch.DoubleTensor(storage [, offset [, sizes [, strides]]]), sizes and strides as
  -- tables/LongStorages or as numbers: size1, stride1, size2, stride2, ...
  local function tensor_on_storage(tname, s, offset, a, ...)
    local st = rawget(s, "_t")
    if st:type() ~= tname then
      error(("%s: a %s cannot hold a tensor of this type"):format(tname, torch.typename(s)), 3)
    end
    if offset ~= nil and math.type(offset) == nil then
      error(tname .. ": argument 'storageOffset' must be a number", 3)
    end
    local sizes, strides
    if type(a) == "number" then
      local v = { a, ... }
      sizes, strides = {}, {}
      for i = 1, #v, 2 do sizes[#sizes + 1] = v[i]; strides[#strides + 1] = v[i + 1] or -1 end
      -- a missing or negative stride means contiguous
      local expect = 1
      for i = #sizes, 1, -1 do
        if strides[i] < 0 then strides[i] = expect end
        expect = expect * sizes[i]
      end
    elseif a ~= nil then
      sizes, strides = a, (...)
    end
    return storage_view(st, offset, sizes, strides, tname)
  end
  local size_mt = getmetatable(torch.ones(1):size())
  -- a storage given as sizes is its values, as a size
  local function sizes_arg(...)
    local n = select("#", ...)
    local any = false
    for i = 1, n do if is_storage((select(i, ...))) then any = true end end
    if not any then return ... end
    local a = { ... }
    for i = 1, n do
      if is_storage(a[i]) then a[i] = setmetatable(a[i]:totable(), size_mt) end
    end
    return table.unpack(a, 1, n)
  end
  for _, t in ipairs(types) do
    local name = t .. "Tensor"
    local ctor = torch[name]
    if type(ctor) == "function" then
      local cls = { __typename = "torch." .. name }
      torch[name] = setmetatable(cls, {
        __call = function(_, a, ...)
          if is_storage(a) and (type((...)) == "number" or getmetatable(a).__typename ~= "torch.LongStorage") then
            return tensor_on_storage("torch." .. name, a, ...)
          end
          if a == nil and select("#", ...) == 0 then return ctor() end
          return ctor(sizes_arg(a, ...))
        end,
        __tostring = function() return "torch." .. name end,
        __index = M,     -- torch.getmetatable("torch.DoubleTensor").add is the method
        -- function torch.FloatTensor:foo() ... end: x:foo() for FloatTensors x
        __newindex = function(c, k, f)
          rawset(c, k, f)
          if type(k) ~= "string" or k:sub(1, 2) == "__" or type(f) ~= "function" then return end
          local prev = M[k]
          M[k] = function(x, ...)
            local own = torch.isTensor(x) and rawget(classes[x:type()] or {}, k)
            if own then return own(x, ...) end
            if prev then return prev(x, ...) end
            error(("tensor has no method '%s' for %s"):format(k, torch.typename(x) or type(x)), 2)
          end
        end,
      })
      classes["torch." .. name] = cls
      rawset(cls, "new", function(...) return cls(...) end)   -- the metatable's constructor, as luaT's
    end
  end
  torch.Tensor = setmetatable({}, {
    __call = function(_, ...)
      return torch[(torch.getdefaulttensortype():gsub("^torch%.", ""))](...)
    end,
    __index = function(_, k)
      return torch[(torch.getdefaulttensortype():gsub("^torch%.", ""))][k]
    end,
  })

  ---------------------------------------------------------------------------
  -- sizes: x:size() is a sequence with Torch7's LongStorage methods
  ---------------------------------------------------------------------------
  local size_methods = size_mt.__index
  size_methods.totable = function(s) local r = {} for i = 1, #s do r[i] = s[i] end return r end
  size_methods.size = function(s) return #s end
  size_methods.type = function() return "torch.LongStorage" end
  rawset(size_mt, "__typename", "torch.LongStorage")

  ---------------------------------------------------------------------------
  -- storages: 1-based arrays of one type, as views of a 1-D tensor (sharing
  -- its memory); torch.LongStorage(s, 2) is a view of s from its 2nd element
  ---------------------------------------------------------------------------
  local storage_methods = {}
  local storage_mts = {}
  is_storage = function(v)
    local m = getmetatable(v)
    return m ~= nil and storage_mts[m] ~= nil
  end
  local function make_storage(tname, t)
    return setmetatable({ _t = t }, storage_mts[tname])
  end
  for _, t in ipairs(types) do
    local tname = t .. "Storage"
    local tensor_type = "torch." .. t .. "Tensor"
    if torch[t .. "Tensor"] then
      local smt = { __typename = "torch." .. tname }
      smt.__index = function(s, k)
        if type(k) == "number" then return rawget(s, "_t")[k] end
        return storage_methods[k]
      end
      smt.__newindex = function(s, k, v)
        if type(k) ~= "number" then error(tname .. ": cannot set field '" .. tostring(k) .. "'", 2) end
        rawget(s, "_t")[k] = v
      end
      smt.__len = function(s) return rawget(s, "_t"):nElement() end
      -- two storage objects are equal when they are the same memory (x:storage() makes a
      -- new object each time, as Torch7's userdata did; Torch7 compared the C storages)
      smt.__eq = function(a, b)
        local ta, tb = rawget(a, "_t"), rawget(b, "_t")
        return ta ~= nil and tb ~= nil and torch._t7storage_id(ta) == torch._t7storage_id(tb)
          and ta:storage_offset() == tb:storage_offset() and ta:nElement() == tb:nElement()
      end
      smt.__tostring = function(s)
        local v = rawget(s, "_t"):totable()
        for i = 1, #v do v[i] = tostring(v[i]) end
        return table.concat(v, "\n") .. ("\n[torch.%s of size %d]"):format(tname, #v)
      end
      smt._tensor_type = tensor_type
      storage_mts[smt] = tname
      storage_mts[tname] = smt
      classes["torch." .. tname] = smt
      torch[tname] = setmetatable({ __typename = "torch." .. tname }, {
        __call = function(_, n, offset, size)
          local ctor = torch[t .. "Tensor"]
          if n == nil then return make_storage(tname, ctor(0)) end
          if type(n) == "number" then return make_storage(tname, ctor(n)) end
          if is_storage(n) then
            local base = rawget(n, "_t")
            offset = offset or 1
            size = size or (base:nElement() - offset + 1)
            return make_storage(tname, base:narrow(1, offset, size))
          end
          if type(n) == "table" then return make_storage(tname, ctor(#n > 0 and n or 0)) end
          error(("torch.%s: expected a size, a table or a storage, got %s"):format(tname, type(n)), 2)
        end,
        __tostring = function() return "torch." .. tname end,
      })
    end
  end
  function storage_methods.size(s) return rawget(s, "_t"):nElement() end
  function storage_methods.elementSize(s) return rawget(s, "_t"):element_size() end
  function storage_methods.totable(s) return rawget(s, "_t"):totable() end
  function storage_methods.fill(s, v) rawget(s, "_t"):fill(v); return s end
  function storage_methods.zero(s) rawget(s, "_t"):zero(); return s end
  function storage_methods.copy(s, o)
    rawget(s, "_t"):copy(is_storage(o) and rawget(o, "_t") or o)
    return s
  end
  function storage_methods.resize(s, n)
    local t = rawget(s, "_t")
    if t:nElement() ~= n then M.resize(t, n) end
    return s
  end
  function storage_methods.type(s) return getmetatable(s).__typename end
  function storage_methods.data(s) return rawget(s, "_t") end
  torch.isStorage = is_storage
  -- torch.Storage: the storage of the default tensor type
  torch.Storage = setmetatable({}, {
    __call = function(_, ...)
      local name = torch.getdefaulttensortype():gsub("^torch%.", ""):gsub("Tensor$", "Storage")
      return torch[name](...)
    end,
    __index = function(_, k)
      local name = torch.getdefaulttensortype():gsub("^torch%.", ""):gsub("Tensor$", "Storage")
      return rawget(torch[name], k)
    end,
  })
  -- a tensor on the elements of a storage's tensor st (a 1-D view): from offset
  -- (1-based), of the sizes and strides given (contiguous strides by default)
  storage_view = function(st, offset, size, stride, who)
    offset = offset or 1
    if size == nil then
      local n = st:nElement() - offset + 1
      if n <= 0 then return st:narrow(1, 1, 0) end
      return st:narrow(1, offset, n)
    end
    local sz = {}
    for i = 1, #size do sz[i] = size[i] end
    local n, contiguous, expect = 1, true, 1
    for i = #sz, 1, -1 do
      if stride and stride[i] and stride[i] ~= expect and sz[i] ~= 1 then contiguous = false end
      expect = expect * sz[i]
      n = n * sz[i]
    end
    if offset < 1 or (n > 0 and offset - 1 + n > st:nElement() and contiguous) then
      error(("%s: offset %d and %d elements go past the storage's %d"):format(who, offset, n, st:nElement()), 3)
    end
    if contiguous then
      if n == 0 then return st:narrow(1, offset <= st:nElement() and offset or 1, 0):view(sz) end
      return st:narrow(1, offset, n):view(sz)
    end
    local st_ = {}
    for i = 1, #sz do st_[i] = stride[i] end
    if not torch.as_strided then
      error(who .. ": strides that are not contiguous need torch.as_strided", 3)
    end
    return torch.as_strided(st, sz, st_, st:storage_offset() + offset - 1)
  end
  -- x:storage(): the whole of x's storage, sharing its memory (x:storageOffset() is 1-based)
  function M.storage(x)
    local name = x:type():gsub("^torch%.", ""):gsub("Tensor$", "Storage")
    return make_storage(name, x:_storage_view())
  end
  -- sizes given as storages
  for _, k in ipairs({ "view", "expand", "reshape", "resize", "repeatTensor", "permute" }) do
    local f = M[k]
    if f then M[k] = function(x, ...) return f(x, sizes_arg(...)) end end
  end
  for _, k in ipairs({ "zeros", "ones", "rand", "randn", "empty", "reshape" }) do
    local f = torch[k]
    if f then torch[k] = function(...) return f(sizes_arg(...)) end end
  end
  -- x:permute(3, 1, 2) and x:flip(1, 2) take the dims as varargs
  for _, k in ipairs({ "permute", "flip" }) do
    local f = M[k]
    if f then
      M[k] = function(x, a, ...)
        if type(a) == "number" then return f(x, { a, ... }) end
        return f(x, a, ...)
      end
    end
  end
  function M.isTensor(x) return torch.isTensor(x) end

  -- x:select(d, i) of a 1-D x is its i-th element, whatever d (as Torch7's was)
  local select0 = M.select
  function M.select(x, d, i, ...)
    if torch.isTensor(x) and x:dim() == 1 and math.type(i) == "integer" then
      local n = x:size(1)
      if i < 1 or i > n then error(("select: index %d out of range for a vector of %d elements"):format(i, n), 2) end
      return x[i]
    end
    return select0(x, d, i, ...)
  end

  -- torch.split(result, x, size, dim) / torch.chunk(result, x, n, dim): into a table
  for _, k in ipairs({ "split", "chunk" }) do
    local f = torch[k]
    if f then
      torch[k] = function(a, b, ...)
        if type(a) == "table" and not torch.isTensor(a) and torch.isTensor(b) then
          local r = f(b, ...)
          for i = #a, 1, -1 do a[i] = nil end
          for i, t in ipairs(r) do a[i] = t end
          return a
        end
        return f(a, b, ...)
      end
    end
  end

  -- operators, as Torch7 defined them: + and - of tensors with the same number
  -- of elements, * the matrix product of tensors (dot, mv, mm), / by a number
  local function as_shape_of(a, b)
    if torch.isTensor(a) and torch.isTensor(b) and a:nElement() == b:nElement() and not M.isSameSizeAs(a, b)
      and a:dim() > 0 and b:dim() > 0 then
      return b:reshape(a:size())
    end
    return b
  end
  local add0, sub0, mul0, div0 = mt.__add, mt.__sub, mt.__mul, mt.__div
  mt.__add = function(a, b) return add0(a, as_shape_of(a, b)) end
  mt.__sub = function(a, b) return sub0(a, as_shape_of(a, b)) end
  mt.__mul = function(a, b)
    if torch.isTensor(a) and torch.isTensor(b) then
      local da, db = a:dim(), b:dim()
      if da == 1 and db == 1 then return M.dot(a, b) end
      if da == 2 and db == 1 then return torch.mv(a, b) end
      if da == 2 and db == 2 then return torch.mm(a, b) end
      error(("*: Torch7's product of a %d-D and a %d-D tensor is not defined (use cmul for elementwise)"):format(da, db), 2)
    end
    return mul0(a, b)
  end
  mt.__div = function(a, b) return div0(a, as_shape_of(a, b)) end

  ---------------------------------------------------------------------------
  -- functions Torch7 had that are not ops here
  ---------------------------------------------------------------------------
  local t7pow = torch.pow
  function torch.pow(a, b, c, ...)
    if type(a) == "number" and torch.isTensor(b) then return t7pow(torch.full_like(b, a), b) end
    if torch.isTensor(a) and type(b) == "number" and torch.isTensor(c) then
      return t7pow(a, torch.full_like(c, b), c)
    end
    return t7pow(a, b, c, ...)
  end

  local function sizes_of(...)
    local a = ...
    if type(a) == "table" then
      local r = {}
      for i = 1, #a do r[i] = a[i] end
      return r
    end
    return { ... }
  end
  -- generators: torch.Generator() objects may come first in Torch7's random calls
  local gen_mt = getmetatable(torch.Generator())
  local function is_gen(v) return v ~= nil and getmetatable(v) == gen_mt end
  local function gen_opt(g) return g and { generator = g } or nil end

  -- one number from a generator (the default one: seeded by torch.manualSeed)
  local function draw(g, fill, a, b)
    local t = torch.empty(1, { dtype = torch.float64 })
    if g then fill(t, a, b, { generator = g }) else fill(t, a, b) end
    return t[1]
  end
  local function with_gen(f)
    return function(g, ...)
      if is_gen(g) then return f(g, ...) end
      return f(nil, g, ...)
    end
  end
  -- on the 2^-32 grid, as x:uniform() and Torch7's THRandom_uniform draw
  torch.uniform = with_gen(function(g, a, b)
    local u = math.floor(draw(g, M.uniform_, 0, 1) * 2.0 ^ 32) / 2.0 ^ 32
    a, b = a or 0, b or 1
    return a + (b - a) * u
  end)
  torch.normal = with_gen(function(g, m, s) return draw(g, M.normal_, m or 0, s or 1) end)
  torch.exponential = with_gen(function(g, l) return draw(g, M.exponential_, l or 1) end)
  local bern0 = torch.bernoulli
  torch.bernoulli = with_gen(function(g, p, ...)
    if torch.isTensor(p) then return bern0(p, ...) end
    return draw(g, M.bernoulli_, p or 0.5)
  end)
  torch.random = with_gen(function(g, a, b)
    if a == nil then return math.tointeger(draw(g, M.random_, 1, 2 ^ 32 + 1)) end
    if b == nil then a, b = 1, a end
    return math.tointeger(draw(g, M.random_, a, b + 1))
  end)
  for _, k in ipairs({ "rand", "randn" }) do
    local f = torch[k]
    torch[k] = function(g, ...)
      if is_gen(g) then
        local sz = sizes_of(...)
        return f(sz, { generator = g })
      end
      return f(g, ...)
    end
  end
  local seeds = setmetatable({}, { __mode = "k" })
  local default_seed = 0
  local manual = torch.manualSeed or torch.manual_seed
  function torch.manualSeed(gen, s)
    -- Torch7 took any number and kept its integer part (nn.test seeds with 1e5 * torch.tic())
    if math.type(s) == "float" then s = math.floor(s) end
    if math.type(gen) == "float" then gen = math.floor(gen) end
    if is_gen(gen) then seeds[gen] = s; gen:manual_seed(s); return end
    default_seed = gen
    return manual(gen)
  end
  function torch.seed(gen)
    local s = os.time() ~ math.floor(os.clock() * 1e6)
    torch.manualSeed(gen or s, gen and s or nil)
    return s
  end
  function torch.initialSeed(gen)
    if is_gen(gen) then return seeds[gen] or gen:initial_seed() end
    return default_seed
  end
  local getstate, setstate = torch.getRNGState, torch.setRNGState
  function torch.getRNGState(gen)
    if is_gen(gen) then return gen:get_state() end
    return getstate()
  end
  function torch.setRNGState(gen, state)
    if is_gen(gen) then return gen:set_state(state) end
    return setstate(gen)
  end

  -- in place, Torch7's ranges: x:random() in 1..2^32, x:random(b) in 1..b, x:random(a, b) in a..b
  function M.random(x, a, b)
    if a == nil then return M.random_(x, 1, 2 ^ 32 + 1) end
    if b == nil then a, b = 1, a end
    return M.random_(x, a, b + 1)
  end
  function M.normal(x, m, s) return M.normal_(x, m or 0, s or 1) end
  function M.exponential(x, l) return M.exponential_(x, l or 1) end
  function M.bernoulli(x, p)
    if torch.isTensor(p) then return x:copy(torch.bernoulli(p:type(x:type()))) end
    return M.bernoulli_(x, p or 0.5)
  end
  function M.logNormal(x, m, s) return x:normal_(m or 1, s or 2):exp_() end
  -- Torch7's geometric: P(i) = (1 - p) p^(i-1), i >= 1 (p the chance to go on)
  local function check_p(p, name)
    if type(p) ~= "number" or not (p > 0 and p < 1) then
      error(name .. ": argument 'p' must be a number with 0 < p < 1, got " .. tostring(p), 3)
    end
  end
  function M.geometric(x, p)
    check_p(p, "geometric")
    return x:uniform_(0, 1):neg_():add_(1):log_():div_(math.log(p)):floor_():add_(1)
  end
  function M.cauchy(x, median, sigma)
    return x:uniform_(0, 1):sub_(0.5):mul_(math.pi):tan_():mul_(sigma or 1):add_(median or 0)
  end

  ---------------------------------------------------------------------------
  -- tensor methods Torch7 had that are not ops
  ---------------------------------------------------------------------------
  -- x:resize(sizes): x takes the shape, keeping its leading elements
  function M.resize(x, ...)
    local sz = sizes_of(...)
    local same = #sz == x:dim()
    for i = 1, #sz do same = same and sz[i] == x:size(i) end
    if same then return x end
    local n = torch.zeros(sz, { dtype = x.dtype })
    local k = math.min(n:nElement(), x:nElement())
    if k > 0 then
      n:view(-1):narrow(1, 1, k):copy(x:contiguous():view(-1):narrow(1, 1, k))
    end
    return x:set_(n)
  end
  function M.resizeAs(x, y) return M.resize(x, y:size()) end
  function M.typeAs(x, y) return x:type(y:type()) end
  -- result-first: res:expandAs(x, template) makes res that view of x
  function M.expandAs(x, y, z)
    if z then return x:set_(y:expand(z:size())) end
    return x:expand(y:size())
  end
  function M.viewAs(x, y, z)
    if z then return x:set_(y:view(z:size())) end
    return x:view(y:size())
  end
  -- x:set(tensor) and x:set(storage [, offset [, sizes [, strides]]]): x views that
  -- memory (offset 1-based; sizes and strides as tables or LongStorages)
  function M.set(x, y, offset, size, stride)
    if torch.isTensor(y) then return x:set_(y) end
    if is_storage(y) then return x:set_(storage_view(rawget(y, "_t"), offset, size, stride, "set")) end
    if y == nil then return x:set_(x.new()) end
    error("set: argument 'source' must be a tensor or a storage", 2)
  end
  -- x:copy(y) copies y's elements in order when both have as many elements, whatever
  -- their shapes (Torch7's rule); other sizes broadcast as before
  local copy = M.copy
  function M.copy(x, y, ...)
    if torch.isTensor(y) and x:nElement() == y:nElement() and x:dim() > 0 and not M.isSameSizeAs(x, y) then
      return copy(x, y:reshape(x:size()), ...)
    end
    return copy(x, y, ...)
  end
  function M.isSameSizeAs(x, y)
    if x:dim() ~= y:dim() then return false end
    for i = 1, x:dim() do if x:size(i) ~= y:size(i) then return false end end
    return true
  end
  function M.isSize(x, s)
    s = sizes_of(s)
    if x:dim() ~= #s then return false end
    for i = 1, #s do if x:size(i) ~= s[i] then return false end end
    return true
  end
  function M.elementSize(x) return x:element_size() end
  function M.storageOffset(x) return x:storage_offset() + 1 end
  -- x.new is x's tensor class (callable): x.new() is an empty tensor of x's type,
  -- x.new(2, 3) one of that size, and x:new() passes x itself, so, as in Torch7,
  -- it is a new tensor object on x's storage
  M.new = nil
  M._fields.new = function(x) return torch[(x:type():gsub("^torch%.", ""))] end
  function M.real(x) return x:double() end
  function M.nDimension(x) return x:dim() end

  -- elementwise Lua functions over the elements, in place; nil keeps a value
  local function each(x, ys, f)
    -- an empty x takes the shape of the first tensor (expected = a:new(); expected:map2(a, b, f))
    if x:nElement() == 0 and ys[1] and ys[1]:nElement() > 0 then M.resize(x, ys[1]:size()) end
    local n = x:nElement()
    if n == 0 then return x end
    local xc = x:contiguous()
    local xv = xc:view(n)
    local yv = {}
    for j, y in ipairs(ys) do
      if y:nElement() ~= n then error(("map: argument #%d has %d elements, self has %d"):format(j, y:nElement(), n), 3) end
      yv[j] = y:contiguous():view(n):totable()
    end
    local vals = xv:totable()
    for i = 1, n do
      local r
      if #yv == 0 then r = f(vals[i])
      elseif #yv == 1 then r = f(vals[i], yv[1][i])
      else r = f(vals[i], yv[1][i], yv[2][i]) end
      if r ~= nil then vals[i] = r end
    end
    xv:copy(torch.tensor(vals, { dtype = x.dtype }))
    if not rawequal(xc, x) then x:copy(xc) end
    return x
  end
  function M.apply(x, f) return each(x, {}, f) end
  function M.map(x, y, f) return each(x, { y }, f) end
  function M.map2(x, y, z, f) return each(x, { y, z }, f) end

  -- Torch7's generator drew uniform doubles as k / 2^32 (32 random bits): code
  -- relies on sums of a few such numbers being exact (the mean of an expanded
  -- column equals the column), so float64 draws keep that grid here
  local grid = 2.0 ^ 32
  local function on_grid(t)
    if torch.isTensor(t) and t.dtype == torch.float64 then t:mul_(grid):floor_():div_(grid) end
    return t
  end
  local rand0 = torch.rand
  torch.rand = function(...) return on_grid(rand0(...)) end
  local uniform0 = M.uniform
  function M.uniform(x, a, b, ...)
    if x.dtype ~= torch.float64 then return uniform0(x, a, b, ...) end
    a, b = a or 0, b or 1
    uniform0(x, 0, 1, ...)
    on_grid(x)
    if a ~= 0 or b ~= 1 then x:mul_(b - a):add_(a) end
    return x
  end

  -- torch.Tensor() is Torch7's empty tensor, which has no dims: a 1-D tensor of
  -- 0 elements (lutorch's empty tensor) says dim() 0 and its size() is empty
  local dim0, size0 = M.dim, M.size
  local function no_dims(x) return torch.isTensor(x) and dim0(x) == 1 and x:nElement() == 0 end
  function M.dim(x, ...)
    if no_dims(x) then return 0 end
    return dim0(x, ...)
  end
  M.nDimension = M.dim
  function M.size(x, ...)
    if select("#", ...) == 0 and no_dims(x) then return setmetatable({}, size_mt) end
    return size0(x, ...)
  end

  -- x:stride() is a LongStorage-like sequence, as x:size() is
  local stride0 = M.stride
  function M.stride(x, ...)
    local r = stride0(x, ...)
    if select("#", ...) == 0 and type(r) == "table" then return setmetatable(r, size_mt) end
    return r
  end

  -- x:sub(d1s, d1e [, d2s, d2e ...]) is Torch7's sub-tensor (Torch7 subtracts
  -- with csub): inclusive 1-based ranges, negative counting from the end
  local sub0 = M.sub
  function M.sub(x, ...)
    local n = select("#", ...)
    local ranges = n >= 2 and n % 2 == 0
    for i = 1, n do ranges = ranges and math.type((select(i, ...))) == "integer" end
    if not ranges or not torch.isTensor(x) then return sub0(x, ...) end
    if n / 2 > dim0(x) then error(("sub: %d ranges for a %d-D tensor"):format(n // 2, dim0(x)), 2) end
    local r = x
    for d = 1, n // 2 do
      local size = x:size(d)
      local s, e = select(2 * d - 1, ...)
      if s < 0 then s = size + s + 1 end
      if e < 0 then e = size + e + 1 end
      if s < 1 or e > size or s > e then
        error(("sub: range %d..%d out of bounds for dim %d of size %d"):format(s, e, d, size), 2)
      end
      r = r:narrow(d, s, e - s + 1)
    end
    return r
  end

  -- Walker's alias method (Torch7's torch.multinomialAliasSetup/multinomialAlias):
  -- the setup splits the n outcomes into n equal columns, each holding its own
  -- outcome with probability q[i] and one other, J[i], with 1 - q[i]; a draw
  -- then costs one column index and one uniform number
  function torch.multinomialAliasSetup(probs, state)
    if not torch.isTensor(probs) or dim0(probs) ~= 1 or probs:nElement() == 0 then
      error("multinomialAliasSetup: argument 'probs' must be a non-empty 1-D tensor", 2)
    end
    if state ~= nil and (type(state) ~= "table" or not torch.isTensor(state[1]) or not torch.isTensor(state[2])) then
      error("multinomialAliasSetup: argument 'state' must be a table {LongTensor, Tensor}", 2)
    end
    local n = probs:nElement()
    local p = probs:double():totable()
    local total = 0
    for i = 1, n do
      if p[i] < 0 or p[i] ~= p[i] then error("multinomialAliasSetup: the probabilities must be non-negative numbers", 2) end
      total = total + p[i]
    end
    if total <= 0 then error("multinomialAliasSetup: the probabilities sum to 0", 2) end
    local q, J, small, large = {}, {}, {}, {}
    for i = 1, n do
      q[i] = p[i] * n / total
      J[i] = i
      if q[i] < 1 then small[#small + 1] = i else large[#large + 1] = i end
    end
    -- each short column is topped up from a tall one, which shrinks by as much
    while #small > 0 and #large > 0 do
      local s, l = table.remove(small), large[#large]
      J[s] = l
      q[l] = q[l] - (1 - q[s])
      if q[l] < 1 then table.remove(large); small[#small + 1] = l end
    end
    -- what is left is full up to rounding
    for _, i in ipairs(small) do q[i] = 1 end
    for _, i in ipairs(large) do q[i] = 1 end
    local Jt = state and state[1] or torch.LongTensor()
    local qt = state and state[2] or probs.new(probs)
    M.resize(Jt, n):copy(torch.LongTensor(J))
    M.resize(qt, n):copy(torch.DoubleTensor(q))
    if state then return state end
    return { Jt, qt }
  end
  function torch.multinomialAlias(output, state)
    if not torch.isTensor(output) or dim0(output) ~= 1 then
      error("multinomialAlias: argument 'output' must be a 1-D tensor", 2)
    end
    if type(state) ~= "table" or not torch.isTensor(state[1]) or not torch.isTensor(state[2])
      or state[1]:nElement() == 0 or state[1]:nElement() ~= state[2]:nElement() then
      error("multinomialAlias: argument 'state' must be the table torch.multinomialAliasSetup returns", 2)
    end
    local m = output:nElement()
    if m == 0 then return output end
    local J, q = state[1]:long(), state[2]:double()
    local col = torch.LongTensor(m):random(1, J:nElement())
    local u = torch.DoubleTensor(m):uniform()
    local keep = u:lt(q:index(1, col))
    output:copy(torch.where(keep, col, J:index(1, col)))
    return output
  end

  -- install the Tester and CmdLine
  torch._t7_tester(torch)
  torch._t7_cmdline(torch)
  torch._t7file_install(torch, storage_methods)   -- files and serialization (t7file.lua)

  -- torch.setheaptracking: accepted (the binding reports storage bytes to the
  -- collector anyway); torch._heaptracking says what was asked
  function torch.setheaptracking(on) torch._heaptracking = on and true or false end

  -- Torch7's mask methods: in place where Torch7's were (ByteTensor masks: lt7.c)
  M.maskedFill = M.masked_fill
  M.maskedCopy = M.masked_scatter
  M.maskedSelect = M.masked_select
  torch.maskedSelect = torch.masked_select
  -- x:real(): a HalfTensor as the default type (cutorch's spelling); other tensors themselves
  M.real = function(x)
    if x:type() == "torch.HalfTensor" then return x:type(torch.getdefaulttensortype()) end
    return x
  end
  M.half = M.half or function(x) return x:type("torch.HalfTensor") end

  -- torch.cat: Torch7 skipped empty tensors, and its dim defaults to the last
  local cat0 = torch.cat
  function torch.cat(a, b, c, ...)
    local res
    if torch.isTensor(a) and (type(b) == "table" and not torch.isTensor(b) or (torch.isTensor(b) and torch.isTensor(c))) then
      res, a, b, c = a, b, c, ...
    end
    local list, dim
    if torch.isTensor(a) then list, dim = { a, b }, c else list, dim = a, b end
    if type(list) ~= "table" or #list == 0 then error("cat: expected two tensors or a non-empty table of tensors", 2) end
    local keep = {}
    for _, t in ipairs(list) do if t:nElement() > 0 then keep[#keep + 1] = t end end
    local r
    if #keep == 0 then r = list[1] and list[1]:new() or torch.Tensor()
    else
      if dim == nil then dim = 1; for _, t in ipairs(keep) do if t:dim() > dim then dim = t:dim() end end end
      r = cat0(keep, dim)
    end
    if res then M.resize(res, r:size()); res:copy(r); return res end
    return r
  end
  M.cat = function(x, ...) return torch.cat(x, ...) end

  -- std and var: Torch7's flag after the dim means biased (divide by n)
  for _, k in ipairs({ "std", "var" }) do
    local f, m = torch[k], M[k]
    local function flip(args, n)
      local at = (torch.isTensor(args[1]) and torch.isTensor(args[2])) and 4 or 3
      if type(args[at]) == "boolean" then args[at] = not args[at] end
      return table.unpack(args, 1, n)
    end
    torch[k] = function(...) return f(flip({ ... }, select("#", ...))) end
    M[k] = function(...) return m(flip({ ... }, select("#", ...))) end
  end

  -- dot of any two tensors with the same number of elements
  local dot0 = torch.dot
  local function dot(a, b, ...)
    if torch.isTensor(a) and torch.isTensor(b) and (a:dim() ~= 1 or b:dim() ~= 1) and a:nElement() == b:nElement() then
      local n = a:nElement()
      return dot0(a:reshape(n), b:reshape(n), ...)
    end
    return dot0(a, b, ...)
  end
  torch.dot, M.dot = dot, dot

  -- torch.lerp(a, b, w) of numbers is a number
  local lerp0 = torch.lerp
  function torch.lerp(a, b, w, ...)
    if type(a) == "number" and type(b) == "number" then return a + w * (b - a) end
    return lerp0(a, b, w, ...)
  end
  -- linspace / logspace: one point is only allowed between equal endpoints
  for _, k in ipairs({ "linspace", "logspace" }) do
    local f = torch[k]
    torch[k] = function(...)
      local args = { ... }
      local i = torch.isTensor(args[1]) and 2 or 1
      if args[i + 2] == 1 and args[i] ~= args[i + 1] then
        error(("%s: 1 point between 2 distinct endpoints (%s and %s)"):format(k, tostring(args[i]), tostring(args[i + 1])), 2)
      end
      return f(...)
    end
  end
  -- torch.conv2 / xcorr2 (2-D, or planes of 3-D) and conv3 / xcorr3 (3-D) of
  -- Torch7: 'V' (valid, the default) or 'F' (full); conv flips the kernel
  local function plane(x, k, mode, flip)
    if x:dim() ~= 2 or k:dim() ~= 2 then error("conv2: the planes must be 2-D", 3) end
    local w = flip and k:flip({ 1, 2 }) or k
    local pad = mode == "F" and { k:size(1) - 1, k:size(2) - 1 } or { 0, 0 }
    local r = torch.conv2d(x:contiguous():view(1, 1, x:size(1), x:size(2)),
      w:contiguous():view(1, 1, k:size(1), k:size(2)), nil, 1, pad)
    return r:view(r:size(3), r:size(4))
  end
  local function check_mode(name, mode)
    mode = mode or "V"
    if type(mode) ~= "string" or not (mode:upper() == "V" or mode:upper() == "F") then
      error(name .. ": argument 'mode' must be 'V' (valid) or 'F' (full), got " .. tostring(mode), 3)
    end
    return mode:upper()
  end
  local function conv2(name, flip)
    return function(x, k, mode)
      mode = check_mode(name, mode)
      if x:dim() == 2 and k:dim() == 2 then return plane(x, k, mode, flip) end
      if x:dim() == 3 and (k:dim() == 2 or k:dim() == 3) then
        if k:dim() == 3 and k:size(1) ~= x:size(1) then
          error(("%s: %d input planes and %d kernel planes"):format(name, x:size(1), k:size(1)), 2)
        end
        local first = plane(x[1], k:dim() == 3 and k[1] or k, mode, flip)
        local out = torch.zeros(x:size(1), first:size(1), first:size(2), { dtype = first.dtype })
        out[1]:copy(first)
        for i = 2, x:size(1) do out[i]:copy(plane(x[i], k:dim() == 3 and k[i] or k, mode, flip)) end
        return out
      end
      error(("%s: expected 2-D or 3-D tensors, got %d-D and %d-D"):format(name, x:dim(), k:dim()), 2)
    end
  end
  local function conv3(name, flip)
    local f
    f = function(x, k, mode)
      mode = check_mode(name, mode)
      if x:dim() == 4 and (k:dim() == 3 or k:dim() == 4) then
        -- volumes of a 4-D x, with one kernel or one each
        if k:dim() == 4 and k:size(1) ~= x:size(1) then
          error(("%s: %d input volumes and %d kernel volumes"):format(name, x:size(1), k:size(1)), 2)
        end
        local first = f(x[1], k:dim() == 4 and k[1] or k, mode)
        local sz = first:size()
        local out = torch.zeros(x:size(1), sz[1], sz[2], sz[3], { dtype = first.dtype })
        out[1]:copy(first)
        for i = 2, x:size(1) do out[i]:copy(f(x[i], k:dim() == 4 and k[i] or k, mode)) end
        return out
      end
      if x:dim() ~= 3 or k:dim() ~= 3 then error(name .. ": expected 3-D (or 4-D) tensors", 2) end
      local iz, kz = x:size(1), k:size(1)
      local out
      if mode == "F" then
        for i = 1, iz do
          for j = 1, kz do
            local p = plane(x[i], flip and k[j] or k[kz - j + 1], "F", flip)
            out = out or torch.zeros(iz + kz - 1, p:size(1), p:size(2), { dtype = p.dtype })
            out[i + j - 1]:add(p)
          end
        end
      else
        local nz = iz - kz + 1
        if nz < 1 then error(name .. ": the kernel is deeper than the input", 2) end
        for i = 1, nz do
          for j = 1, kz do
            local p = plane(x[i + j - 1], flip and k[kz - j + 1] or k[j], "V", flip)
            out = out or torch.zeros(nz, p:size(1), p:size(2), { dtype = p.dtype })
            out[i]:add(p)
          end
        end
      end
      return out
    end
    return f
  end
  torch.conv2, torch.xcorr2 = conv2("conv2", true), conv2("xcorr2", false)
  torch.conv3, torch.xcorr3 = conv3("conv3", true), conv3("xcorr3", false)

  -- Torch7's LAPACK names (gesv, potrf, svd, ...) over torch.linalg: t7lapack.lua
  torch._t7_lapack_install(torch, M)

  -- torch.bhistc([res,] x [, nbins, min, max]): the histogram of each row of a 2-D x
  function torch.bhistc(res, x, nbins, lo, hi)
    if not torch.isTensor(x) then res, x, nbins, lo, hi = nil, res, x, nbins, lo end
    if not torch.isTensor(x) or x:dim() ~= 2 then error("bhistc: argument 'x' must be a 2-D tensor", 2) end
    nbins, lo, hi = nbins or 100, lo or 0, hi or 0
    local out = torch.zeros(x:size(1), nbins, { dtype = x.dtype })
    for i = 1, x:size(1) do
      local row = x[i]
      local a, b = lo, hi
      if a == b then a, b = row:min(), row:max() end
      out[i]:copy(torch.histc(row, nbins, a, b))
    end
    if res then M.resize(res, out:size()); res:copy(out); return res end
    return out
  end

  ---------------------------------------------------------------------------
  -- the rest of Torch7's documented names that cost little (doc/utility.md,
  -- maths.md, tensor.md, storage.md; tools/torch7_names.lua lists them)
  ---------------------------------------------------------------------------
  -- the deprecated spellings of fmod
  torch.mod, M.mod = torch.fmod, M.fmod
  torch.cmod, M.cmod = torch.cfmod, M.cfmod
  -- reference counts are the collector's: retain and free are accepted
  function M.retain(x) return x end
  function M.free(x) return x end
  storage_methods.retain, storage_methods.free = M.retain, M.free
  -- s:string(): a Byte/Char storage's bytes as a Lua string; s:string(str) takes them
  function storage_methods.string(s, str)
    local tn = getmetatable(s).__typename
    if tn ~= "torch.ByteStorage" and tn ~= "torch.CharStorage" then
      error("string: only a ByteStorage or a CharStorage holds a string, this is a " .. tn, 2)
    end
    local t = rawget(s, "_t")
    if str == nil then
      local v = t:totable()
      for i = 1, #v do v[i] = string.char(v[i] % 256) end
      return table.concat(v)
    end
    if type(str) ~= "string" then error("string: argument 'str' must be a string", 2) end
    local bytes = { str:byte(1, -1) }
    if tn == "torch.CharStorage" then
      for i = 1, #bytes do if bytes[i] > 127 then bytes[i] = bytes[i] - 256 end end
    end
    storage_methods.resize(s, #bytes)
    if #bytes > 0 then rawget(s, "_t"):copy(torch[tn == "torch.ByteStorage" and "ByteTensor" or "CharTensor"](bytes)) end
    return s
  end
  -- class ids: the class's metatable stands for it
  function torch.typename2id(name) return classes[name] end
  function torch.id(obj)
    local n = typename_of(obj)
    return n and classes[n] or nil
  end
  function torch.isequal(a, b)
    local t = type(a)
    return (t == "table" or t == "userdata") and rawequal(a, b)
  end
  -- the version written into .t7 files ("V 1"): the class metatable's
  -- __version, 1 by default for a torch class, nothing for other values
  function torch.version(obj)
    local name = torch.typename(obj)
    if not name then return nil end
    local mt = torch.getmetatable(name)
    return type(mt) == "table" and rawget(mt, "__version") or 1
  end
  -- the math functions take plain numbers too, as Torch7's did (torch.round(2.5) is 3)
  local number_math = {
    abs = math.abs, floor = math.floor, ceil = math.ceil, sqrt = math.sqrt, exp = math.exp,
    log = math.log, sin = math.sin, cos = math.cos, tan = math.tan, asin = math.asin,
    acos = math.acos, atan = math.atan,
    sinh = function(v) return (math.exp(v) - math.exp(-v)) / 2 end,
    cosh = function(v) return (math.exp(v) + math.exp(-v)) / 2 end,
    tanh = function(v) local e = math.exp(-2 * math.abs(v)); local t = (1 - e) / (1 + e); return v < 0 and -t or t end,
    round = function(v) return v >= 0 and math.floor(v + 0.5) or -math.floor(-v + 0.5) end,   -- half away from 0
    trunc = function(v) return v >= 0 and math.floor(v) or math.ceil(v) end,
    frac = function(v) return v - (v >= 0 and math.floor(v) or math.ceil(v)) end,
    sign = function(v) return v > 0 and 1 or (v < 0 and -1 or 0) end,
    sigmoid = function(v) return 1 / (1 + math.exp(-v)) end,
    -- log(1 + v) without losing v's digits when |v| is small (Goldberg's correction)
    log1p = function(v) local u = 1 + v; if u == 1 then return v end; return math.log(u) * v / (u - 1) end,
  }
  for name, f in pairs(number_math) do
    local tensor_f = torch[name]
    if tensor_f then
      torch[name] = function(x, ...)
        if type(x) == "number" and select("#", ...) == 0 then return (f(x) + 0.0) end
        return tensor_f(x, ...)
      end
    end
  end

  -- torch.packageLuaPath(name): the folder of package name's Lua files (where its init.lua
  -- is); torch.include(name, file) runs a file of that folder, as Torch7 packages load parts
  function torch.packageLuaPath(name)
    if type(name) ~= "string" then error("torch.packageLuaPath: argument 'name' must be a string", 2) end
    local path = package.searchpath(name, package.path)
    if not path then error("torch.packageLuaPath: package '" .. name .. "' not found on package.path", 2) end
    return (path:match("^(.*)/[^/]*$") or ".")
  end
  function torch.include(name, file)
    if type(file) ~= "string" then error("torch.include: argument 'file' must be a string", 2) end
    return dofile(torch.packageLuaPath(name) .. "/" .. file)
  end

  -- tic(): seconds on a monotonic clock; toc(t): seconds since tic() gave t
  function torch.tic() return torch.time() end
  function torch.toc(t)
    if type(t) ~= "number" then error("torch.toc: argument 't' must be a number from torch.tic()", 2) end
    return torch.time() - t
  end
  -- a unique number per object (its address)
  function torch.pointer(obj)
    local t = type(obj)
    if t ~= "table" and t ~= "userdata" and t ~= "function" and t ~= "thread" then return nil end
    -- a storage object stands for its memory (x:storage() makes a new object each time)
    if torch.isStorage(obj) then
      local st = obj:data()
      return tonumber((("%p"):format(torch._t7storage_id(st)))) + st:storage_offset() * st:element_size()
    end
    return tonumber((("%p"):format(obj)))
  end
  -- the environment of a function (Torch7's userdata environments do not exist here)
  function torch.getenv(f)
    if type(f) ~= "function" then error("torch.getenv: argument #1 must be a function here (no userdata environments)", 2) end
    return getfenv(f)
  end
  function torch.setenv(f, env)
    if type(f) ~= "function" then error("torch.setenv: argument #1 must be a function here (no userdata environments)", 2) end
    return setfenv(f, env)
  end
  function torch.setmetatable(t, name)
    if type(t) ~= "table" then error("torch.setmetatable: argument #1 must be a table", 2) end
    local cmt = classes[name]
    if not cmt then error("torch.setmetatable: unknown class '" .. tostring(name) .. "'", 2) end
    return setmetatable(t, cmt)
  end
  function torch.getconstructortable(name)
    local cmt = classes[name]
    if not cmt then return nil end
    return rawget(cmt, "__class") or cmt
  end
  function torch.totable(obj)
    if torch.isTensor(obj) or is_storage(obj) then return obj:totable() end
    error("torch.totable: argument #1 must be a tensor or a storage, got " .. torch.type(obj), 2)
  end
  -- single draws of the distributions Torch7's generator had, as numbers
  local function std_ok(s, name)
    if type(s) ~= "number" or not (s > 0) then error(name .. ": argument 'stdv' must be a positive number", 3) end
  end
  torch.logNormal = with_gen(function(g, m, s)
    std_ok(s, "logNormal")
    return math.exp(draw(g, M.normal_, m, s))
  end)
  torch.cauchy = with_gen(function(g, median, sigma)
    return (median or 0) + (sigma or 1) * math.tan(math.pi * (draw(g, M.uniform_, 0, 1) - 0.5))
  end)
  torch.geometric = with_gen(function(g, p)
    check_p(p, "geometric")
    return math.floor(math.log(1 - draw(g, M.uniform_, 0, 1)) / math.log(p)) + 1
  end)
end
