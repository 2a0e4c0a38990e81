-- testing.lua — the tiny test framework of the Lua test files.
--   local T = require "testing"
--   T.test("add broadcasts", function() T.eq(...) end)
--   T.done()          -- prints "N passed, N failed" and sets the exit status
local T = {}
local passed, failed, skipped = 0, 0, 0
local current = "?"

local function fmt(v)
  if torch and torch.is_tensor(v) then return tostring(v) end
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = fmt(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end
T.fmt = fmt

local function fail(msg, level)
  error(msg, (level or 1) + 2)
end

function T.test(name, fn)
  current = name
  local ok, err = xpcall(fn, debug.traceback)
  if ok then passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write(("FAIL %s\n  %s\n"):format(name, tostring(err)))
  end
end

function T.skip(name, why)
  skipped = skipped + 1
  print(("SKIP %s: %s"):format(name, why))
end

function T.ok(cond, msg) if not cond then fail(msg or "expected a true value") end end

-- deep equality of Lua values (tables compared element by element)
local function deq(a, b, tol)
  if type(a) == "number" and type(b) == "number" then
    if a ~= a and b ~= b then return true end      -- NaN matches NaN
    if a == b then return true end
    return tol ~= nil and math.abs(a - b) <= tol * (1 + math.abs(b))
  end
  if torch.is_tensor(a) then return rawequal(a, b) end   -- tensors: the same object (== raises)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  if #a ~= #b then return false end
  for i = 1, #a do if not deq(a[i], b[i], tol) then return false end end
  return true
end
T.deq = deq

function T.eq(a, b, msg)
  if not deq(a, b) then fail((msg and msg .. ": " or "") .. "expected " .. fmt(b) .. ", got " .. fmt(a)) end
end

function T.near(a, b, tol, msg)
  tol = tol or 1e-6
  if not deq(a, b, tol) then fail((msg and msg .. ": " or "") .. "expected " .. fmt(b) .. " (tol " .. tol .. "), got " .. fmt(a)) end
end

-- a tensor's values (as nested tables) and optionally its dtype name and shape
function T.tensor(t, values, opts)
  opts = opts or {}
  if not torch.is_tensor(t) then fail("expected a tensor, got " .. type(t)) end
  if opts.dtype and t.dtype.name ~= opts.dtype then
    fail("expected dtype " .. opts.dtype .. ", got " .. t.dtype.name)
  end
  if opts.shape and not deq(t:size(), opts.shape) then
    fail("expected shape " .. fmt(opts.shape) .. ", got " .. fmt(t:size()))
  end
  if values ~= nil then
    local got = t:totable()
    if not deq(got, values, opts.tol) then fail("expected " .. fmt(values) .. ", got " .. fmt(got)) end
  end
end

-- fn must raise an error whose message contains every pattern (plain text)
function T.raises(fn, ...)
  local ok, err = pcall(fn)
  if ok then fail("expected an error, got none") end
  err = tostring(err)
  for _, p in ipairs({ ... }) do
    if not err:find(p, 1, true) then fail("error '" .. err .. "' does not mention '" .. p .. "'") end
  end
  return err
end

-- T.scratch(): a fresh directory for the files a test writes, with helpers:
-- S.dir, S.path(name), S.write(name, bytes) -> path, S.read(path) -> bytes, S.remove()
function T.scratch()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local S = { dir = dir }
  function S.path(name) return dir .. "/" .. name end
  function S.write(name, bytes)
    local f = assert(io.open(S.path(name), "wb"))
    f:write(bytes)
    f:close()
    return S.path(name)
  end
  function S.read(p)
    local f = assert(io.open(p, "rb"))
    local b = f:read("a")
    f:close()
    return b
  end
  function S.remove() os.execute("rm -rf " .. dir) end
  return S
end

function T.done()
  print(("%d passed, %d failed%s"):format(passed, failed, skipped > 0 and (", " .. skipped .. " skipped") or ""))
  os.exit(failed == 0 and 0 or 1)
end

return T
