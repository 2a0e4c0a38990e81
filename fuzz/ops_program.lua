-- ops_program.lua — fuzz_ops' decoder: bytes -> a short program of op calls, with the ops,
-- their argument types and defaults taken from the declarations in src/ops/*.lua (every op
-- the generator binds, declared once). Loaded by fuzz/fuzz_ops.c from the tree's root.
--
-- A program: a pool of up to 3 starting tensors (dtype, shape and values from the bytes),
-- then up to 16 steps. A step's first byte picks what it does: an op call (the op from the
-- next byte pair, each argument from the bytes by its declared type: a tensor of the pool,
-- an int from small and edge values, a list, a scalar, a dtype, a string from the op's
-- default and a list of the options ops take), the op's in-place form, a backward through
-- a pool tensor, or reading every element of the pool. A tensor result joins the pool.
-- Errors are expected; a crash, a sanitizer report, a leak, or an error from Lua itself
-- ("attempt to index a nil value": an argument not checked) is a finding.
local torch = torch

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

local function split_top(s)
  local parts, depth, cur = {}, 0, {}
  for c in s:gmatch(".") do
    if c == "(" or c == "[" then depth = depth + 1 elseif c == ")" or c == "]" then depth = depth - 1 end
    if c == "," and depth == 0 then parts[#parts + 1] = trim(table.concat(cur)); cur = {}
    else cur[#cur + 1] = c end
  end
  local last = trim(table.concat(cur))
  if last ~= "" then parts[#parts + 1] = last end
  return parts
end

-- "name(Type a, Type b=def, *, Type c=def) -> ..." -> name, {{type, name, default, kw}}
local function parse(schema)
  local name, args = schema:match("^%s*([%w_]+)%s*(%b())")
  if not name then return nil end
  local out, kw = {}, false
  for _, a in ipairs(split_top(args:sub(2, -2))) do
    if a == "*" then kw = true
    else
      local ty, nm, def = a:match("^(%S+)%s+([%w_]+)%s*=?%s*(.*)$")
      if not ty then return nil end
      ty = ty:gsub("%b()", "")
      out[#out + 1] = { type = ty, name = nm, default = def ~= "" and def or nil, kw = kw }
    end
  end
  return name, out
end

-- ops that change the process rather than compute (seeds, threads, global defaults) or
-- would make a program's outcome depend on earlier inputs
local SKIP = { manual_seed = true, seed = true, set_num_threads = true, set_default_dtype = true,
               set_grad_enabled = true, set_printoptions = true }

local function resolve(path)
  local v = torch
  for part in path:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

local OPS = {}
do
  local probe = torch.zeros(1)
  local files = {}
  local p = io.popen("ls src/ops/*.lua")
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  table.sort(files)
  for _, f in ipairs(files) do
    local ok, decls = pcall(dofile, f)
    if ok and type(decls) == "table" then
      for _, d in ipairs(decls) do
        if type(d) == "table" and type(d[1]) == "string" then
          local name, args = parse(d[1])
          if name and not SKIP[name] and not name:find("^_") then
            local lua = d.lua or name
            if lua:sub(-1) == "." then lua = lua .. name end
            local fn = (d.variants ~= "method") and resolve(lua) or nil
            local method = d.variants ~= "function" and not lua:find("%.") and probe[lua] ~= nil and lua or nil
            if type(fn) == "function" or method then
              OPS[#OPS + 1] = { name = name, args = args, fn = type(fn) == "function" and fn or nil, method = method,
                                inplace = d.inplace and probe[lua .. "_"] ~= nil and lua .. "_" or nil }
            end
          end
        end
      end
    end
  end
  assert(#OPS > 100, "fuzz_ops: found only " .. #OPS .. " ops in src/ops (run from the tree's root)")
end

local DTYPES = { torch.float32, torch.float64, torch.int64, torch.int32, torch.bool, torch.uint8,
                 torch.float16, torch.bfloat16, torch.complex64, torch.int8, torch.int16 }
local INTS = { 0, 1, -1, 2, -2, 3, 4, -3, 5, 8, 1, 0, 1 << 62, math.mininteger, 16, 6 }
local SCALARS = { 0, 1, -1, 2, 0.5, -2.5, 1 / 0, -1 / 0, 0 / 0, math.maxinteger, math.mininteger, 3, true, 1e-30 }
local FLOATS = { 0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, 0 / 0, 1 / 0, 1e300, -3.5 }
local STRS = { "mean", "sum", "none", "reflect", "replicate", "circular", "zeros", "constant", "trunc",
               "floor", "L", "U", "reduced", "complete", "r", "fro", "nuc", "ortho", "forward", "backward",
               "linear", "nearest", "bilinear", "tanh", "sqrt", "gelsy", "", "bogus" }

local bytes, pos
local function byte()
  pos = pos + 1
  return bytes:byte(pos) or 0
end
local function pick(list) return list[byte() % #list + 1] end

local pool
local function tensor_arg()
  return pool[byte() % #pool + 1]
end

local function value(a)
  local ty = a.type
  local optional = ty:sub(-1) == "?"
  if optional then
    ty = ty:sub(1, -2)
    if byte() % 4 == 0 then return nil end
  end
  if ty == "Tensor" then return tensor_arg()
  elseif ty == "Tensor[]" then
    local l = {}
    for i = 1, byte() % 4 do l[i] = tensor_arg() end
    return l
  elseif ty == "int" or ty == "Dim" or ty == "Index" then return pick(INTS)
  elseif ty == "int[]" or ty == "Dim[]" then
    local l = {}
    for i = 1, byte() % 4 do l[i] = pick(INTS) end
    return l
  elseif ty == "Scalar" then return pick(SCALARS)
  elseif ty == "float" then return pick(FLOATS)
  elseif ty == "bool" then return byte() % 2 == 0
  elseif ty == "str" then
    local b = byte()
    if b % 3 == 0 and a.default then
      local s = a.default:match('^"(.*)"$')
      if s then return s end
    end
    return STRS[b % #STRS + 1]
  elseif ty == "ScalarType" then return pick(DTYPES)
  elseif ty == "Device" then return pick({ "cpu", "meta", "cpu" })
  elseif ty == "Generator" then return nil
  end
  return nil
end

local function add(t)
  if torch.is_tensor(t) and #pool < 12 and t:numel() <= 4096 then pool[#pool + 1] = t end
end

local function call_op(op, inplace)
  local pos_args, kw = {}, nil
  for _, a in ipairs(op.args) do
    if a.kw then
      if byte() % 2 == 0 then
        kw = kw or {}
        kw[a.name] = value(a)
      end
    else
      pos_args[#pos_args + 1] = value(a)
    end
  end
  local n = #op.args
  local np = 0
  for _, a in ipairs(op.args) do if not a.kw then np = np + 1 end end
  if kw then pos_args[np + 1] = kw; np = np + 1 end
  local r
  if inplace or (op.method and (not op.fn or byte() % 2 == 0)) then
    local self = pos_args[1]
    if not torch.is_tensor(self) then return end
    local m = self[inplace and op.inplace or op.method]
    r = table.pack(fuzz_try(m, table.unpack(pos_args, 1, np)))
  else
    r = table.pack(fuzz_try(op.fn, table.unpack(pos_args, 1, np)))
  end
  if r[1] then
    for i = 2, math.min(r.n, 3) do
      local v = r[i]
      if torch.is_tensor(v) then fuzz_touch(v); add(v)
      elseif type(v) == "table" then fuzz_touch(v); add(v[1]) end
    end
  end
  return n
end

local function start_tensor()
  local dt = pick(DTYPES)
  local shape = {}
  for i = 1, byte() % 4 do shape[i] = byte() % 5 end
  torch.manual_seed(byte())
  local t = torch.randn(shape, { dtype = torch.float64 }) * 3
  local ok, c = pcall(function() return t:to(dt) end)
  if not ok then c = t end
  if c:is_floating_point() and byte() % 4 == 0 then c = c:detach():requires_grad_(true) end
  return c
end

return function(b)
  bytes, pos = b, 0
  torch.manual_seed(0)
  pool = {}
  for _ = 1, 1 + byte() % 3 do pool[#pool + 1] = start_tensor() end
  local steps = 0
  while pos < #bytes and steps < 16 do
    steps = steps + 1
    local what = byte() % 16
    if what == 14 then
      -- backward through a pool tensor that needs a gradient
      local t = tensor_arg()
      if t.requires_grad then
        fuzz_try(function() t:sum():backward() end)
      end
    elseif what == 15 then
      fuzz_touch(pool)
    else
      local op = OPS[(byte() * 256 + byte()) % #OPS + 1]
      call_op(op, what == 13 and op.inplace ~= nil)
    end
  end
  pool = nil
end
