-- repl.lua — the Lua half of lutorch's REPL (the program's src/repl calls it
-- through torch._repl): how results print, the candidates for tab completion,
-- who() and the `?` help command. Nothing here runs until the REPL asks.
local torch = ...

local R = {}
torch._repl = R

local next, type, tostring, rawget, getmetatable, pcall = next, type, tostring, rawget, getmetatable, pcall

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
            repeat return then true until while]]):gmatch("%a+") do KEYWORDS[w] = true end

local function is_ident(s)
  return type(s) == "string" and s:find("^[%a_][%w_]*$") ~= nil and not KEYWORDS[s]
end

-- the metamethod `name` of v, without running any __index
local function metafield(v, name)
  local mt = getmetatable(v)
  if type(mt) == "table" then return rawget(mt, name) end
end

---------------------------------------------------------------- printing ----

local MAX_ITEMS = 40     -- entries of one table shown before "... (N more)"
local MAX_DEPTH = 6      -- nesting shown before "{...}"
local MAX_KEYS = 10000   -- keys sorted; a bigger table shows its first keys unsorted

local function quote(s)
  return (("%q"):format(s):gsub("\\\n", "\\n"))
end

-- continuation lines of a multi-line text moved right by `indent` columns
local function indent_lines(s, indent)
  if indent == 0 or not s:find("\n", 1, true) then return s end
  return (s:gsub("\n", "\n" .. (" "):rep(indent)))
end

local function leaf(v, top)
  local tv = type(v)
  if tv == "string" then return top and v or quote(v) end
  if tv == "number" or tv == "boolean" or tv == "nil" then return tostring(v) end
  local ok, s = pcall(tostring, v)   -- tensors, modules, dtypes... (their __tostring)
  if ok and type(s) == "string" then return s end
  return ("<%s (tostring failed)>"):format(tv)
end

local RANK = { number = 1, string = 2, boolean = 3 }
local function key_before(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then
    local ra, rb = RANK[ta] or 4, RANK[tb] or 4
    if ra ~= rb then return ra < rb end
    return ta < tb
  end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "boolean" then return not a and b end
  return tostring(a) < tostring(b)
end

local render

local function key_text(k)
  if is_ident(k) then return k end
  if type(k) == "string" then return "[" .. quote(k) .. "]" end
  return "[" .. (type(k) == "table" and not metafield(k, "__tostring") and tostring(k) or leaf(k)) .. "]"
end

local function render_table(t, indent, width, path, depth)
  if path[t] then return "<cycle>" end
  if depth >= MAX_DEPTH then return "{...}" end
  path[t] = true
  local n = rawlen(t)
  local items, more = {}, 0
  -- the sequence part, then the other keys in order
  for i = 1, n do
    if #items >= MAX_ITEMS then more = more + (n - i + 1); break end
    items[#items + 1] = { val = render(rawget(t, i), indent + 2, width, path, depth + 1) }
  end
  local keys, nk, sorted = {}, 0, true
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      nk = nk + 1
      if nk <= MAX_KEYS then keys[nk] = k else sorted = false end
    end
  end
  if sorted then table.sort(keys, key_before) end
  for i = 1, #keys do
    if #items >= MAX_ITEMS then more = more + (nk - i + 1); break end
    local k = keys[i]
    local kt = key_text(k)
    items[#items + 1] = { key = kt, val = render(rawget(t, k), indent + #kt + 5, width, path, depth + 1) }
  end
  path[t] = nil
  if #items == 0 then return "{}" end
  -- one line when everything is short enough
  local parts, multi, len = {}, false, indent + 2
  for i, it in ipairs(items) do
    local s = it.key and (it.key .. " = " .. it.val) or it.val
    parts[i] = s
    if s:find("\n", 1, true) then multi = true end
    len = len + #s + 2
  end
  if more > 0 then parts[#parts + 1] = ("... (%d more)"):format(more); len = len + 16 end
  if not multi and len <= width then return "{" .. table.concat(parts, ", ") .. "}" end
  -- else one entry a line, short sequence values packed side by side
  local pad = (" "):rep(indent + 2)
  local lines, cur = { "{" }, nil
  for i, it in ipairs(items) do
    local s = parts[i]
    if not it.key and not multi and cur and #cur + #s + 2 <= width then
      cur = cur .. " " .. s .. ","
    else
      if cur then lines[#lines + 1] = cur end
      cur = pad .. s .. ","
    end
    if it.key or s:find("\n", 1, true) then lines[#lines + 1] = cur; cur = nil end
  end
  if cur then lines[#lines + 1] = cur end
  if more > 0 then lines[#lines + 1] = pad .. parts[#parts] end
  lines[#lines + 1] = (" "):rep(indent) .. "}"
  return table.concat(lines, "\n")
end

function render(v, indent, width, path, depth, top)
  if type(v) == "table" and not metafield(v, "__tostring") then
    return render_table(v, indent, width, path, depth)
  end
  return indent_lines(leaf(v, top), indent)
end

-- R.pretty(v [, width]): v as the REPL shows it
function R.pretty(v, width)
  return render(v, 0, width or 80, {}, 0, true)
end

local function ulen(s) return utf8.len(s) or #s end

-- R.show(width, ...): the text for a command's results: single-line values
-- separated by tabs (as print does), multi-line ones side by side when they
-- fit the terminal's width, else one below the other
function R.show(width, ...)
  local n = select("#", ...)
  if n == 0 then return nil end
  width = width or 80
  local texts, multi = {}, false
  for i = 1, n do
    texts[i] = render((select(i, ...)), 0, n > 1 and width // n or width, {}, 0, true)
    if texts[i]:find("\n", 1, true) then multi = true end
  end
  if not multi then return table.concat(texts, "\t") end
  local cols, total, height = {}, 0, 0
  for i, s in ipairs(texts) do
    local lines, w = {}, 0
    for l in (s .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l; w = math.max(w, ulen(l)) end
    cols[i] = { lines = lines, w = w }
    total = total + w + (i > 1 and 3 or 0)
    height = math.max(height, #lines)
  end
  if total > width then return table.concat(texts, "\n") end
  local out = {}
  for r = 1, height do
    local row = {}
    for i, c in ipairs(cols) do
      local l = c.lines[r] or ""
      row[i] = i < #cols and l .. (" "):rep(c.w - ulen(l)) or l
    end
    out[r] = (table.concat(row, "   "):gsub("%s+$", ""))
  end
  return table.concat(out, "\n")
end

---------------------------------------------------------------- globals -----

local baseline = {}

-- R.baseline(): the globals there are before the user's code runs (called at
-- start, and again for names the REPL itself adds)
function R.baseline()
  for k, v in next, _G do baseline[k] = v end
end

-- R.install(): who() and help() as globals, for the REPL
function R.install()
  baseline.arg = rawget(_G, "arg")   -- the program's, not the user's
  for name, f in next, { who = R.who, help = R.help_value } do
    if rawget(_G, name) == nil then
      rawset(_G, name, f)
      baseline[name] = f
    end
  end
end

local function describe(v)
  local tv = type(v)
  if torch.is_tensor(v) then
    local shape = {}
    for i, s in ipairs(v.shape) do shape[i] = tostring(s) end
    local s = ("%s [%s]"):format(tostring(v.dtype):gsub("^torch%.", ""), table.concat(shape, ", "))
    if tostring(v.device) ~= "cpu" then s = s .. " " .. tostring(v.device) end
    if v.requires_grad then s = s .. " requires_grad" end
    return "tensor", s
  elseif tv == "table" then
    local name = metafield(v, "__name")
    if type(name) == "string" then return name, "" end
    local n = 0
    for _ in next, v do n = n + 1 end
    return "table", ("%d entr%s"):format(n, n == 1 and "y" or "ies")
  elseif tv == "string" then
    return "string", #v > 40 and quote(v:sub(1, 37)) .. "..." or quote(v)
  elseif tv == "number" or tv == "boolean" then
    return math.type(v) or tv, tostring(v)
  elseif tv == "function" then
    local info = debug.getinfo(v, "S")
    return "function", info.what == "C" and "" or ("%s:%d"):format(info.short_src, info.linedefined)
  end
  return tv, leaf(v)
end

-- who(): the globals the user made (or replaced), with what they hold
function R.who()
  local names = {}
  for k, v in next, _G do
    if type(k) == "string" and baseline[k] ~= v then names[#names + 1] = k end
  end
  table.sort(names)
  if #names == 0 then print("(no user globals)") return end
  local rows, w1, w2 = {}, 4, 4
  for i, k in ipairs(names) do
    local kind, info = describe(rawget(_G, k))
    rows[i] = { k, kind, info }
    w1, w2 = math.max(w1, ulen(k)), math.max(w2, ulen(kind))
  end
  for _, r in ipairs(rows) do
    io.write(r[1], (" "):rep(w1 - ulen(r[1]) + 2), r[2], (" "):rep(w2 - ulen(r[2]) + 2), r[3], "\n")
  end
end

---------------------------------------------------------------- completion --

local LAZY = {}                                   -- torch's fields loaded on first use (libs.lua)
local LAZY_NAMES = { "nn", "optim", "data" }
local TENSOR_FIELDS = { "shape", "dtype", "device", "requires_grad", "ndim", "is_cuda", "is_cpu", "T", "mT", "mH",
                        "grad", "grad_fn", "is_leaf", "retains_grad", "data", "itemsize", "nbytes",
                        "is_sparse", "is_quantized", "is_meta" }

-- every string key of t and of the tables its metatables' __index lead to
local function add_chain(t, out, seen, depth)
  if depth > 16 or seen[t] then return end
  seen[t] = true
  for k, x in next, t do
    if is_ident(k) and out[k] == nil then out[k] = x end
  end
  local idx = metafield(t, "__index")
  if type(idx) == "table" then add_chain(idx, out, seen, depth + 1) end
end

-- the names after `v.` (sep ".") or `v:` (sep ":")
local function fields(v, sep)
  local out, seen = {}, {}
  if torch.is_tensor(v) then
    for k, f in next, torch._methods do if is_ident(k) and type(f) == "function" then out[k] = f end end
    if sep == "." then for _, k in ipairs(TENSOR_FIELDS) do out[k] = out[k] or 0 end end
  elseif type(v) == "table" then
    add_chain(v, out, seen, 0)
    local mt = getmetatable(v)
    -- an object whose class is its metatable, reached by a function __index (nn.Module)
    if type(mt) == "table" and type(rawget(mt, "__index")) == "function" then add_chain(mt, out, seen, 0) end
    if sep == "." then
      -- a module's parameters, buffers, children and attributes live in its ordered lists
      for _, f in ipairs { "_parameters", "_buffers", "_modules" } do
        local od = rawget(v, f)
        if type(od) == "table" and type(rawget(od, "vals")) == "table" then
          for k, x in next, od.vals do if is_ident(k) then out[k] = x end end
        end
      end
      local attrs = rawget(v, "_attrs")
      if type(attrs) == "table" then for k, x in next, attrs do if is_ident(k) then out[k] = x end end end
    end
    if rawequal(v, torch) then for _, k in ipairs(LAZY_NAMES) do if out[k] == nil then out[k] = LAZY end end end
  elseif type(v) == "string" then
    add_chain(string, out, seen, 0)
  elseif type(v) == "userdata" then
    local idx = metafield(v, "__index")
    if type(idx) == "table" then add_chain(idx, out, seen, 0) end
  end
  if sep == ":" then
    for k, x in next, out do
      if not (type(x) == "function" or metafield(x, "__call")) then out[k] = nil end
    end
  end
  return out
end

-- the value of a chain of names `a.b.c`, indexing as the code would (so that
-- torch.nn loads); nil when any step fails
local function resolve(chain)
  local v = _G
  for name in chain:gmatch("[^.]+") do
    if v == nil then return nil end
    local ok, x = pcall(function() return v[name] end)
    if not ok then return nil end
    v = x
  end
  return v
end

local function callable(x)
  return type(x) == "function" or (type(x) == "table" and metafield(x, "__call") ~= nil)
end

-- R.complete(before, word): completions of `word`, where `before` is the line
-- up to it; functions get an opening bracket
function R.complete(before, word)
  local cands
  local sep = before:sub(-1)
  if sep == "." or sep == ":" then
    local head = before:sub(1, -2)
    local chain = head:match("[%a_][%w_.]*$")
    if not chain or chain:find("%.%.") or chain:find("%.$") then return {} end
    local prev = head:sub(1, #head - #chain):sub(-1)
    if prev == "." or prev == ":" or prev == "]" or prev == ")" or prev:find("[%w_]") then return {} end
    local v = resolve(chain)
    if v == nil then return {} end
    cands = fields(v, sep)
  else
    cands = {}
    local seen = {}
    add_chain(_G, cands, seen, 0)
    for k in next, KEYWORDS do cands[k] = cands[k] or false end
  end
  local list = {}
  local hide = word:sub(1, 1) ~= "_"
  for k, x in next, cands do
    if k:sub(1, #word) == word and not (hide and k:sub(1, 1) == "_") then
      list[#list + 1] = k .. (callable(x) and "(" or "")
    end
  end
  table.sort(list)
  return list
end

---------------------------------------------------------------- help --------

R.USAGE = [[
Help
  ? name              the reference of an op, method or library item:
                      ? add   ? x:view   ? nn.Linear   ? optim.Adam
  help(value)         the same for a value: help(torch.matmul), help(nn.Conv2d)
  man lutorch         the program; man 7 lutorch: the Lua reference
REPL
  expr                prints its value; `expr;` runs it without printing
  $ command           runs a shell command
  who()               lists your globals
  :timing on|off      prints the wall time of each command
  :quit  or Ctrl-D    leaves (history: ~/.lutorch_history)
  TAB                 completes names, fields (torch.nn.<TAB>), methods (x:<TAB>)
                      and file names inside a string
  Ctrl-C              stops a running command, or clears the line]]

local function is_miss(s) return type(s) ~= "string" or s:find("^help: ") ~= nil end

-- R.help(text): the `? text` command
function R.help(text)
  text = (text or ""):match("^%s*(.-)%s*$")
  if text == "" then return R.USAGE end
  local r
  local chain, meth = text:match("^([%a_][%w_.]*):([%a_][%w_]*)$")
  local v
  if chain then
    local obj = resolve(chain)
    v = obj ~= nil and fields(obj, ":")[meth] or nil
  elseif text:find("^[%a_][%w_.]*$") then
    v = resolve(text)
    if v == nil and not text:find("^torch%.") then v = resolve("torch." .. text) end
  end
  if type(v) == "function" or type(v) == "table" then
    local ok, s = pcall(torch.help, v)
    if ok then r = s end
  end
  if is_miss(r) then
    local ok, s = pcall(torch.help, meth or text)
    if ok and (r == nil or not is_miss(s)) then r = s end
  end
  return tostring(r)
end

-- help(value) as a global in the REPL
function R.help_value(...)
  if select("#", ...) == 0 then print(R.USAGE) return end
  local v = ...
  if type(v) == "string" then print(R.help(v)) return end
  local ok, s = pcall(torch.help, v)
  print(ok and s or ("help: " .. tostring(s)))
end
