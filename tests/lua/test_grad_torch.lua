-- test_grad_torch.lua — gradients of composite functions agree with PyTorch's
-- (Debian's python3-torch, run by /usr/bin/python3). The inputs travel to
-- Python as literals; PyTorch prints its gradients as Lua tables. Skipped,
-- and says so, where PyTorch is absent.
local T = require "testing"
local PY = "/usr/bin/python3"

local function have_torch()
  local p = io.popen(PY .. " -c 'import torch' >/dev/null 2>&1; echo $?")
  if not p then return false end
  local rc = p:read("a")
  p:close()
  return rc:match("^0") ~= nil
end

if not have_torch() then
  T.skip("gradients against PyTorch", PY .. " cannot import torch (apt-get install python3-torch)")
  T.done()
end

-- a nested Lua table of numbers as Python list text (exact: %.17g)
local function pylist(t)
  if type(t) == "number" then return ("%.17g"):format(t) end
  local parts = {}
  for i, v in ipairs(t) do parts[i] = pylist(v) end
  return "[" .. table.concat(parts, ",") .. "]"
end

-- run `body` (Python, with the inputs bound to names) and read back the gradients
local function torch_grads(names, values, body)
  local src = { "import torch", "torch.set_default_dtype(torch.float64)" }
  for i, n in ipairs(names) do
    src[#src + 1] = ("%s = torch.tensor(%s, requires_grad=True)"):format(n, pylist(values[i]))
  end
  src[#src + 1] = body
  src[#src + 1] = "loss.backward()"
  src[#src + 1] = "def lua(t):\n  if isinstance(t, list): return '{' + ','.join(lua(x) for x in t) + '}'\n  return repr(float(t))"
  local outs = {}
  for _, n in ipairs(names) do outs[#outs + 1] = ("lua(%s.grad.tolist())"):format(n) end
  src[#src + 1] = "print('{' + ','.join([" .. table.concat(outs, ",") .. "]) + '}')"
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(table.concat(src, "\n"), "\n")
  f:close()
  local p = io.popen(PY .. " " .. path .. " 2>&1")
  local out = p:read("a")
  p:close()
  os.remove(path)
  local chunk = load("return " .. out)
  if not chunk then error("PyTorch side failed:\n" .. out) end
  return chunk()
end

local function leaf(values)
  return torch.tensor(values, { dtype = torch.float64, requires_grad = true })
end

local function check(names, values, lua_loss, py_body)
  local leaves = {}
  for i, v in ipairs(values) do leaves[i] = leaf(v) end
  lua_loss(table.unpack(leaves)):backward()
  local ref = torch_grads(names, values, py_body)
  for i, n in ipairs(names) do
    T.near(leaves[i].grad:totable(), ref[i], 1e-10, "gradient of " .. n)
  end
end

torch.manual_seed(7)
local function rnd(...) return torch.randn({ ... }, { dtype = torch.float64 }):totable() end

T.test("softmax cross-entropy built from primitives", function()
  local x = torch.randn(4, 5, { dtype = torch.float64 }):totable()
  local onehot = torch.zeros(4, 5, { dtype = torch.float64 })
  for i, c in ipairs({ 2, 5, 1, 3 }) do onehot[{ i, c }] = 1 end
  local oh = onehot:totable()
  check({ "x" }, { x },
    function(x)
      local logp = x - x:exp():sum(2, true):log()
      return -(torch.tensor(oh, { dtype = torch.float64 }) * logp):sum() / 4
    end,
    "oh = torch.tensor(" .. pylist(oh) .. ")\n" ..
    "logp = x - x.exp().sum(1, keepdim=True).log()\n" ..
    "loss = -(oh * logp).sum() / 4")
end)

T.test("an MLP layer: tanh(x W + b), relu, sigmoid", function()
  local x, w, b, w2 = rnd(3, 4), rnd(4, 6), rnd(6), rnd(6, 2)
  check({ "x", "w", "b", "w2" }, { x, w, b, w2 },
    function(x, w, b, w2)
      local h = (x:matmul(w) + b):tanh()
      local o = h:relu():matmul(w2):sigmoid()
      return (o * o):sum() + (h * 0.5):mean()
    end,
    "h = (x @ w + b).tanh()\n" ..
    "o = (h.relu() @ w2).sigmoid()\n" ..
    "loss = (o * o).sum() + (h * 0.5).mean()")
end)

T.test("layer normalisation from primitives", function()
  local x, g, b, v = rnd(3, 8), rnd(8), rnd(8), rnd(3, 8)
  check({ "x", "g", "b" }, { x, g, b },
    function(x, g, b)
      local mu = x:mean(2, true)
      local var = ((x - mu) ^ 2):mean(2, true)
      local y = (x - mu) / (var + 1e-5):sqrt() * g + b
      return (y * torch.tensor(v, { dtype = torch.float64 })):sum()
    end,
    "v = torch.tensor(" .. pylist(v) .. ")\n" ..
    "mu = x.mean(1, keepdim=True)\n" ..
    "var = ((x - mu) ** 2).mean(1, keepdim=True)\n" ..
    "y = (x - mu) / (var + 1e-5).sqrt() * g + b\n" ..
    "loss = (y * v).sum()")
end)

T.test("indexing, views and reductions", function()
  local x, y = rnd(4, 5), rnd(5, 4)
  check({ "x", "y" }, { x, y },
    function(x, y)
      local a = x:t() * y
      local s = a[{ { 2, 4 }, {} }]:sum(1)
      return (s:max() + a:std() + x:narrow(2, 2, 3):abs():sum()) * x:select(1, 2):logsumexp(1)
    end,
    "a = x.t() * y\n" ..
    "s = a[1:4, :].sum(0)\n" ..
    "loss = (s.max() + a.std() + x.narrow(1, 1, 3).abs().sum()) * x.select(0, 1).logsumexp(0)")
end)

T.done()
