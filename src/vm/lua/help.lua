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

function torch.help(what)
  local name = what
  if type(what) == "function" then name = name_of(what) end
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
