-- repl_display.lua — rich display: torch.display(x [, opts]) and the MIME
-- bundles the Jupyter kernel (src/repl/kernel*.c) sends for results. A bundle
-- is a table of MIME type -> content: { ["text/plain"] = "...", ["image/png"] =
-- png_bytes }. Under the kernel torch._display_hook(bundle, opts) sends one as
-- display_data; elsewhere torch.display prints the bundle's text.
local torch = ...

local R = torch._repl
local type, pairs, tostring, getmetatable, rawget = type, pairs, tostring, getmetatable, rawget

local HTML_MAX_ROWS, HTML_MAX_COLS = 20, 20   -- a tensor gets an HTML table up to this size

local function html_escape(s)
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

local function cell_text(v)
  if math.type(v) == "float" then
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" elseif v == -math.huge then return "-inf" end
    return ("%.6g"):format(v)
  end
  return tostring(v)
end

-- a small (at most 2-D, 20 x 20) CPU tensor as an HTML table; nil for others
local function tensor_html(x)
  local nd = x:dim()
  if nd > 2 or tostring(x.device) ~= "cpu" or x.is_sparse or x.is_quantized or x.is_meta then return nil end
  local rows = nd == 2 and x.shape[1] or 1
  local cols = nd == 0 and 1 or x.shape[nd]
  if rows > HTML_MAX_ROWS or cols > HTML_MAX_COLS or x:numel() == 0 then return nil end
  local ok, list = pcall(x.tolist, x)
  if not ok then return nil end
  if nd == 0 then list = { { list } } elseif nd == 1 then list = { list } end
  local shape = {}
  for i, s in ipairs(x.shape) do shape[i] = tostring(s) end
  local out = { ("<table class=\"lutorch-tensor\"><caption>tensor %s [%s]%s</caption>")
    :format(html_escape(x.dtype.name), table.concat(shape, ", "), x.requires_grad and " requires_grad" or "") }
  for r = 1, rows do
    local cells = {}
    for c = 1, cols do cells[c] = "<td>" .. html_escape(cell_text(list[r][c])) .. "</td>" end
    out[#out + 1] = "<tr>" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</table>"
  return table.concat(out, "\n")
end

-- an object's own bundle: a method __mimebundle or _repr_mimebundle_ (IPython's name)
local function own_bundle(x)
  if type(x) ~= "table" and type(x) ~= "userdata" then return nil end
  if torch.is_tensor(x) then return nil end
  local ok, f = pcall(function() return x.__mimebundle or x._repr_mimebundle_ end)
  if not ok or f == nil then
    local mt = getmetatable(x)
    f = type(mt) == "table" and (rawget(mt, "__mimebundle") or rawget(mt, "_repr_mimebundle_")) or nil
  end
  if f == nil then return nil end
  local b = f(x)
  if type(b) ~= "table" then
    error(("display: the object's mimebundle method returned a %s (a table of MIME type -> content expected)"):format(type(b)), 3)
  end
  return b
end

-- a table whose keys all look like MIME types ("text/plain", "image/png") and values are strings
local function is_bundle(t)
  if type(t) ~= "table" or getmetatable(t) ~= nil or next(t) == nil then return false end
  for k, v in pairs(t) do
    if type(k) ~= "string" or not k:find("^[%w%-%.]+/[%w%-%.%+]+$") or (type(v) ~= "string" and type(v) ~= "table") then
      return false
    end
  end
  return true
end

-- R.bundle(x [, width]): the MIME bundle that shows x: its own bundle, x itself
-- when it is one, else text (and an HTML table for a small tensor)
function R.bundle(x, width)
  local b = own_bundle(x)
  if b then
    if b["text/plain"] == nil then
      local copy = {}
      for k, v in pairs(b) do copy[k] = v end
      copy["text/plain"] = R.pretty(x, width)
      b = copy
    end
    return b
  end
  if is_bundle(x) then return x end
  b = { ["text/plain"] = R.pretty(x, width) }
  if torch.is_tensor(x) then b["text/html"] = tensor_html(x) end
  return b
end

-- R.result_bundle(width, ...): a cell's values as execute_result data
function R.result_bundle(width, ...)
  local n = select("#", ...)
  if n == 0 then return nil end
  if n == 1 then
    local x = ...
    local b = own_bundle(x)
    if b then return R.bundle(x, width) end
    b = { ["text/plain"] = R.show(width, x) }
    if torch.is_tensor(x) then b["text/html"] = tensor_html(x) end
    return b
  end
  return { ["text/plain"] = R.show(width, ...) }
end

local DISPLAY_OPTS = { metadata = true, display_id = true, update = true }

-- torch.display(x [, opts]): shows x now (IPython's display): in the notebook
-- as display_data, elsewhere its text on stdout. opts: metadata (a table per
-- MIME type), display_id (a later display with the same id and update=true
-- replaces it)
function torch.display(x, opts)
  if opts ~= nil then
    if type(opts) ~= "table" then
      error(("torch.display: argument 'opts' must be a table, got %s"):format(type(opts)), 2)
    end
    for k in pairs(opts) do
      if not DISPLAY_OPTS[k] then
        error(("torch.display: unknown option '%s' (metadata, display_id, update)"):format(tostring(k)), 2)
      end
    end
  end
  local b = R.bundle(x)
  local hook = rawget(torch, "_display_hook")
  if hook then
    hook(b, opts)
  else
    local text = b["text/plain"]
    if type(text) ~= "string" then text = R.pretty(x) end
    io.write(text, "\n")
  end
end

---------------------------------------------------------------- the kernel --

local cell_hooks = {}

-- R.on_cell_done(key, fn): fn() runs after each notebook cell (gnuplot's
-- inline figures draw then); fn nil removes it
function R.on_cell_done(key, fn) cell_hooks[key] = fn end

function R.cell_done()
  local keys = {}
  for k in pairs(cell_hooks) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local f = cell_hooks[k]
    if f then f() end
  end
end

-- io.read's formats, each answered by one line the notebook's user types
local function kernel_read(input, ...)
  local n = select("#", ...)
  local fmts = n == 0 and { "l" } or { ... }
  n = math.max(n, 1)
  local out = {}
  for i = 1, n do
    local f = fmts[i]
    if type(f) == "string" then f = f:gsub("^%*", ""):sub(1, 1) end
    if f == "l" or f == "a" then out[i] = input("", false)
    elseif f == "L" then out[i] = input("", false) .. "\n"
    elseif f == "n" then out[i] = tonumber(input("", false))
    elseif math.type(f) == "integer" and f >= 0 then out[i] = f == 0 and "" or input("", false):sub(1, f)
    else error(("bad argument #%d to 'read' (invalid format)"):format(i), 3) end
  end
  return table.unpack(out, 1, n)
end

-- R.kernel_install(api): the kernel's display hook, display() and io.read
function R.kernel_install(api)
  torch._display_hook = api.display
  if rawget(_G, "display") == nil then rawset(_G, "display", torch.display) end
  local input = api.input
  io.read = function(...) return kernel_read(input, ...) end
  R.baseline()
end
