-- complex_sweep.lua — which ops PyTorch (Debian's 1.13, /usr/bin/python3)
-- runs on complex CPU tensors that lutorch refuses. Every name of
-- torch._ops() is called in a few argument patterns on both sides; a name is
-- listed when some pattern works in PyTorch and none works here.
--   build/lutorch tools/complex_sweep.lua
local C = torch.complex_number
local patterns = {  -- lutorch call, the same call in Python (x: 2x2 complex64)
  { function(f, x) return f(x) end, "f(x)" },
  { function(f, x) return f(x, x) end, "f(x, x)" },
  { function(f, x) return f(x, 1) end, "f(x, 0)" },      -- a dim (1-based here) or a number
  { function(f, x) return f(x, 2) end, "f(x, 2)" },
  { function(f, x) return f({x, x}) end, "f([x, x])" },
  { function(f, x) return f(x:select(1, 1), x:select(1, 1)) end, "f(x[0], x[0])" },
}

local names, seen = {}, {}
for _, op in ipairs(torch._ops()) do
  local n = op.name
  if not n:find("^_") and not seen[n] then seen[n] = true; names[#names + 1] = n end
end

local function lookup(name)
  local f = torch
  for part in name:gmatch("[^.]+") do f = type(f) == "table" and f[part] or nil end
  if type(f) == "function" then return f end
  local x = torch.zeros(2, 2, {dtype = torch.cfloat})
  local ok, m = pcall(function() return x[name] end)
  if ok and type(m) == "function" then return function(a, ...) return m(a, ...) end end
end

local ours = {}
for _, n in ipairs(names) do
  local f = lookup(n)
  ours[n] = false
  if f then
    for _, p in ipairs(patterns) do
      local x = torch.tensor({{C(1, 2), C(-0.5, 3)}, {C(0, -1), C(2, 0.5)}})
      if pcall(p[1], f, x) then ours[n] = true; break end
    end
  end
end

local py = { "import torch, warnings", "warnings.simplefilter('ignore')",
  "x0 = torch.tensor([[1+2j, -0.5+3j], [-1j, 2+0.5j]], dtype=torch.complex64)" }
py[#py + 1] = "for n in " .. "['" .. table.concat(names, "','") .. "']:"
py[#py + 1] = "  f = torch\n  for p in n.split('.'):\n    f = getattr(f, p, None)"
py[#py + 1] = "  if f is None: f = getattr(torch.Tensor, n, None)"
py[#py + 1] = "  if f is None: continue"
for _, p in ipairs(patterns) do
  py[#py + 1] = "  try:\n    x = x0.clone(); " .. p[2] .. "; print(n); continue\n  except Exception: pass"
end
local tmp = os.tmpname()
local fh = assert(io.open(tmp, "w")); fh:write(table.concat(py, "\n"), "\n"); fh:close()
local p = io.popen("/usr/bin/python3 " .. tmp .. " 2>/dev/null")
local missing = {}
for line in p:lines() do
  if ours[line] == false then missing[#missing + 1] = line end
end
p:close(); os.remove(tmp)
print(#missing .. " ops PyTorch runs on complex that lutorch refuses:")
print(table.concat(missing, " "))
