-- help.lua — torch.help(name or function): the op reference from the same
-- declarations as the manual (src/ops, through the generated op table).
local torch = ...

local by_name
local function index()
  if by_name then return by_name end
  by_name = {}
  for _, op in ipairs(torch._ops()) do
    local list = by_name[op.name] or {}
    list[#list + 1] = op
    by_name[op.name] = list
  end
  return by_name
end

-- the name a function value is registered under, as torch.NAME or a method
local function name_of(fn)
  for k, v in pairs(torch) do if v == fn then return k end end
  for k, v in pairs(torch._methods) do if v == fn then return k end end
end

-- The Lua libraries' reference is their man page (man/nn.md, man/optim.md,
-- man/data.md beside lib/): the paragraphs and table rows that name the item.
local LIBS = { "nn", "optim", "data" }

local function lib_of(v)
  for _, lib in ipairs(LIBS) do
    local t = package.loaded[lib]
    if type(t) == "table" then
      for k, x in pairs(t) do if rawequal(x, v) then return lib .. "." .. k end end
      if type(t.functional) == "table" then
        for k, x in pairs(t.functional) do if rawequal(x, v) then return lib .. ".functional." .. k end end
      end
    end
  end
end

local function lib_help(lib, item)
  local path = package.searchpath(lib, package.path)
  -- .../lib/nn/init.lua or lib/nn.lua (a relative search path) -> the folder holding lib/
  local root = path and (path:match("^(.*/)lib/") or (path:match("^lib/") and "./"))
  local f = root and io.open(root .. "man/" .. lib .. ".md")
  if not f then return ("help: no reference for '%s.%s' (man/%s.md not found)"):format(lib, item, lib) end
  local text = f:read("a")
  f:close()
  -- blocks: paragraphs split at blank lines, a fenced code block kept whole
  local blocks, cur, fenced = {}, {}, false
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:find("^```") then fenced = not fenced end
    if line:find("^%s*$") and not fenced then
      if #cur > 0 then blocks[#blocks + 1] = table.concat(cur, "\n"); cur = {} end
    else
      cur[#cur + 1] = line
    end
  end
  if #cur > 0 then blocks[#blocks + 1] = table.concat(cur, "\n") end
  local hits = {}
  local pat = "%f[%w_]" .. item:gsub("%p", "%%%0") .. "%f[^%w_]"
  for _, b in ipairs(blocks) do
    if b:find("^|") then   -- a table: only its matching rows
      for row in b:gmatch("[^\n]+") do if row:find(pat) then hits[#hits + 1] = row end end
    elseif b:find(pat) then
      hits[#hits + 1] = b
    end
  end
  if #hits == 0 then return ("help: no reference for '%s.%s' in man/%s.md"):format(lib, item, lib) end
  return table.concat(hits, "\n\n")
end

function torch.help(what)
  local name = what
  if type(what) == "function" then name = name_of(what) or lib_of(what)
  elseif type(what) == "table" then name = lib_of(what) end
  if type(name) == "string" then
    local lib, item = name:match("^(%a+)%.(.+)$")
    if lib == "torch" then name = item
    elseif lib then
      for _, l in ipairs(LIBS) do
        if l == lib then return lib_help(lib, (item:gsub("^functional%.", ""):gsub("^F%.", ""))) end
      end
    end
  end
  if type(name) ~= "string" then
    return "help: give an op name (\"add\") or a function (torch.add)"
  end
  name = name:gsub("^torch%.", ""):gsub("^x:", "")
  local entries = index()[name]
  if not entries then return ("help: no reference for '%s'"):format(name) end
  local lines = {}
  for _, e in ipairs(entries) do
    lines[#lines + 1] = ("%s\n    %s%s"):format(e.signature, e.doc,
      e.differentiable and "" or " (not differentiable)")
  end
  return table.concat(lines, "\n")
end
