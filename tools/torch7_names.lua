-- torch7_names.lua — which of the names Torch7's reference documents exist in
-- lutorch's Torch7 mode. Reads the section headers of Torch7's doc/*.md
-- (maths, tensor, random, storage, utility by default) and checks torch.NAME
-- for the functions and x:NAME (a DoubleTensor, or a DoubleStorage for
-- storage.md) for the methods. Not part of make test: the docs are not in the tree.
--   lutorch --torch7 tools/torch7_names.lua TORCH7_TREE/doc [file.md ...]
-- Prints "missing" lines and a count per file; -a prints the present ones too.
local dir = arg[1] or error("usage: lutorch --torch7 tools/torch7_names.lua TORCH7_DOC_DIR [-a] [files]")
assert(torch.compat() == "torch7", "run under lutorch --torch7")
local all, files = false, {}
for i = 2, #arg do
  if arg[i] == "-a" then all = true else files[#files + 1] = arg[i] end
end
if #files == 0 then files = { "maths.md", "tensor.md", "random.md", "storage.md", "utility.md" } end

local function has_method(obj, name)
  local ok, v = pcall(function() return obj[name] end)
  return ok and v ~= nil
end

local total_missing = 0
for _, file in ipairs(files) do
  local f = assert(io.open(dir .. "/" .. file))
  local seen, order = {}, {}
  for line in f:lines() do
    if line:match("^#+ ") and line:find("(", 1, true) then
      local head = line:gsub("^#+%s*", ""):gsub("%s*#*%s*$", "")
      -- torch.NAME( ... ) is a function; NAME( or x:NAME( a method
      local fn = head:match("torch%.([%w_]+)%s*%(")
      -- random.md and utility.md name torch's functions without the prefix
      if not fn and (file == "random.md" or file == "utility.md") then
        fn = head:match("^%[[^%]]*%]%s*([%w_]+)%s*%(") or head:match("^([%w_]+)%s*%(")
      end
      if fn == "TYPEStorage" then fn = "DoubleStorage" end
      local key
      if fn then
        key = "torch." .. fn
      else
        local m = head:match(":([%w_]+)%s*%(") or head:match("^%[[^%]]*%]%s*([%w_]+)%s*%(")
          or head:match("^([%w_]+)%s*%(")
        if m then key = ":" .. m end
      end
      if key and not seen[key] then seen[key] = true; order[#order + 1] = key end
      -- "byte(), char(), short(), ...": every name of the list
      if head:find("%(%),") then
        for m in head:gmatch("([%w_]+)%(%)") do
          if not seen[":" .. m] then seen[":" .. m] = true; order[#order + 1] = ":" .. m end
        end
      end
    end
  end
  f:close()
  local probe = file == "storage.md" and torch.DoubleStorage(2) or torch.DoubleTensor(2)
  local missing = 0
  for _, key in ipairs(order) do
    local ok
    if key:sub(1, 1) == ":" then ok = has_method(probe, key:sub(2))
    else ok = torch[key:sub(7)] ~= nil end
    if not ok then missing = missing + 1 end
    if all or not ok then print(("%-8s %-12s %s"):format(ok and "present" or "missing", file, key)) end
  end
  print(("%s: %d names, %d missing"):format(file, #order, missing))
  total_missing = total_missing + missing
end
print(("%d missing in all"):format(total_missing))
