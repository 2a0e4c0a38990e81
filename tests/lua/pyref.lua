-- pyref.lua — run a snippet of PyTorch (Debian's python3-torch, /usr/bin/python3)
-- on the same inputs as a lutorch test and get its results back as tensors.
--
--   local P = require "pyref"
--   if not P.available() then T.skip("...", P.why()); T.done() end
--   local r = P.run({ x = x, w = w }, "y = F.linear(x, w)", { "y", "x.grad" })
--   -- r[1], r[2]: float64 lutorch tensors (or Lua numbers for Python numbers)
--
-- Inputs travel as exact literals (%.17g) with their shapes and dtypes;
-- inside the snippet `torch`, `nn` and `F` are imported and the default dtype is
-- float64. An input tensor that requires grad arrives with requires_grad=True.
-- Results that are tensors (or lists of numbers) come back as float64 tensors
-- of the same shape; Python numbers and bools come back as Lua values.
local P = {}
P.PY = "/usr/bin/python3"

-- whether /usr/bin/python3 imports the modules (a string such as "scipy.special, mpmath"),
-- and if not, why: asked once per string
local imports = {}
function P.can_import(mods)
  if imports[mods] == nil then
    local p = io.popen(P.PY .. " -c 'import " .. mods .. "' >/dev/null 2>&1; echo $?")
    local rc = p and p:read("a") or "1"
    if p then p:close() end
    imports[mods] = rc:match("^0") ~= nil
  end
  return imports[mods], not imports[mods] and (P.PY .. " cannot import " .. mods) or nil
end
function P.available() return (P.can_import("torch")) end
function P.why()
  local _, why = P.can_import("torch")
  return why and why .. " (apt-get install python3-torch)"
end

-- a Lua sequence of numbers as a Python list literal, exactly (%.17g; NaN and infinities kept)
function P.pylist(v)
  local parts = {}
  for i, x in ipairs(v) do
    if x ~= x then parts[i] = "float('nan')"
    elseif x == math.huge then parts[i] = "float('inf')"
    elseif x == -math.huge then parts[i] = "-float('inf')"
    else parts[i] = ("%.17g"):format(x) end
  end
  return "[" .. table.concat(parts, ",") .. "]"
end

local function flat(t)
  return P.pylist(t:detach():to(torch.float64):contiguous():view(-1):totable())
end

local function pyvalue(v)
  if torch.is_tensor(v) then
    local shape = {}
    for i, s in ipairs(v.shape) do shape[i] = tostring(s) end
    local dt = tostring(v.dtype):gsub("^torch%.", "")
    local s = ("torch.tensor(%s, dtype=torch.float64).reshape([%s]).to(torch.%s)"):format(
      flat(v), table.concat(shape, ","), dt)
    if v.requires_grad then s = s .. ".requires_grad_()" end
    return s
  elseif type(v) == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    return ("%.17g"):format(v)
  elseif type(v) == "boolean" then return v and "True" or "False"
  elseif type(v) == "string" then return ("%q"):format(v)
  elseif type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = pyvalue(x) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  error("pyref: cannot send a " .. type(v))
end

local PRELUDE = [[
import torch, math
import torch.nn as nn
import torch.nn.functional as F
torch.set_default_dtype(torch.float64)
def _lua(v):
    if isinstance(v, torch.Tensor):
        v = v.detach().to(torch.float64)
        shape = ','.join(str(s) for s in v.shape)
        vals = ','.join(repr(float(x)) for x in v.reshape(-1).tolist())
        vals = vals.replace('nan', '(0/0)').replace('inf', 'math.huge')
        return '{t={' + vals + '},s={' + shape + '}}'
    if isinstance(v, bool): return 'true' if v else 'false'
    if isinstance(v, (int, float)):
        r = repr(v)
        return r.replace('nan', '(0/0)').replace('inf', 'math.huge')
    if isinstance(v, (list, tuple)):
        try:
            return _lua(torch.tensor(v, dtype=torch.float64))
        except Exception:
            return '{list={' + ','.join(_lua(x) for x in v) + '}}'
    if v is None: return 'nil'
    raise TypeError('pyref cannot return %r' % type(v))
]]

local function back(v)
  if type(v) ~= "table" then return v end
  if v.list then
    local r = {}
    for i, x in ipairs(v.list) do r[i] = back(x) end
    return r
  end
  local t = torch.tensor(v.t, { dtype = torch.float64 })
  if #v.s == 0 then return t:reshape({}) end
  return t:reshape(v.s)
end

-- runs the lines of a Python program that prints "return {...}" (Lua) and returns that
-- table; an error with the program's output, naming who, when it fails
function P.python(lines, who)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  local p = io.popen(P.PY .. " " .. path .. " 2>&1")
  local out = p:read("a")
  p:close()
  os.remove(path)
  local chunk = load(out, "=" .. who, "t", { math = math })
  local ok, res = pcall(chunk or error, nil)
  if not chunk or not ok or type(res) ~= "table" then error(who .. " failed:\n" .. out, 3) end
  return res
end

-- inputs: name -> value; body: Python statements; outputs: Python expressions
function P.run(inputs, body, outputs)
  local src = { PRELUDE }
  local names = {}
  for k in pairs(inputs) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do src[#src + 1] = ("%s = %s"):format(k, pyvalue(inputs[k])) end
  src[#src + 1] = body
  local outs = {}
  for i, e in ipairs(outputs) do outs[i] = "_lua(" .. e .. ")" end
  src[#src + 1] = "print('return {' + ','.join([" .. table.concat(outs, ",") .. "]) + '}')"
  local res = P.python(src, "PyTorch side")
  local r = {}
  for i = 1, #outputs do r[i] = back(res[i]) end
  return r
end

return P
