-- The sweep: every Lua-level function and class of nn, nn.functional, nn.init, nn.utils, optim,
-- the schedulers, data and torch.autograd declares its parameters (torch_class.signature), or is
-- listed below as taking none; and each declared one, called with nothing but a misspelt option,
-- raises "unknown option '<name>' (did you mean '<the name>'?)" before anything else. A new
-- function that takes options without declaring them fails here.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local class = require "torch_class"
local nn = require "nn"
local F = nn.functional
local optim = require "optim"
local data = require "data"

-- public names that take no arguments at all, or only values no options table could carry
-- (a module list, a function, a dataset), with the reason; everything else must be declared
local NO_OPTIONS = {
  -- abstract bases and containers of arbitrary children
  ["nn.Module"] = "base class", ["nn.Container"] = "base class", ["nn.RNNBase"] = "base class",
  ["nn.RNNCellBase"] = "base class", ["nn.Sequential"] = "takes modules", ["nn.ModuleList"] = "takes modules",
  ["nn.ModuleDict"] = "takes a table of modules by name", ["nn.ParameterList"] = "takes parameters",
  ["nn.ParameterDict"] = "takes a table of parameters by name", ["optim.Optimizer"] = "base class",
  ["optim.lr_scheduler.LRScheduler"] = "base class", ["data.Dataset"] = "base class",
  ["data.IterableDataset"] = "base class", ["data.Sampler"] = "base class",
  ["data.Progress"] = "made by data.progress, which declares it",
  ["data.default_collate"] = "takes a list of samples, which may be tables by name",
  ["data.default_convert"] = "takes a sample, which may be a table by name",
  ["nn.utils.keys"] = "a table's keys in order (for the Torch7 layer)",
  ["nn.utils.ordered_dict"] = "takes a table by name",
  ["nn.utils.rnn.is_packed"] = "takes one value", ["data.get_worker_info"] = "takes no arguments",
}

-- the public callables of a table, as "prefix.name" -> value
local function walk(prefix, t, out, filter)
  for k, v in pairs(t) do
    if type(k) == "string" and not k:find("^_") and (type(v) == "function" or class.is_class(v)) then
      if not filter or filter(k, v) then out[prefix .. "." .. k] = v end
    end
  end
end

local function targets()
  local out = {}
  walk("nn", nn.classes, out)
  walk("F", F, out)
  if type(nn.init) == "table" then walk("nn.init", nn.init, out) end
  if type(nn.utils) == "table" then
    walk("nn.utils", nn.utils, out)
    if type(nn.utils.rnn) == "table" then walk("nn.utils.rnn", nn.utils.rnn, out) end
  end
  walk("optim", optim, out, function(_, v) return class.is_class(v) end)
  if type(optim.lr_scheduler) == "table" then
    walk("optim.lr_scheduler", optim.lr_scheduler, out, function(_, v) return class.is_class(v) end)
  end
  walk("data", data, out)
  if type(data.transforms) == "table" then
    walk("data.transforms", data.transforms, out, function(_, v) return class.is_class(v) end)
  end
  return out
end

-- a misspelling of name at edit distance 1: two neighbours swapped, or a letter added
local function misspell(name)
  for i = 2, #name - 1 do
    local a, b = name:sub(i, i), name:sub(i + 1, i + 1)
    if a ~= b and a ~= "_" and b ~= "_" then return name:sub(1, i - 1) .. b .. a .. name:sub(i + 2) end
  end
  return name .. "x"
end

-- the name of a signature to misspell: the longest, so the suggestion is unambiguous
local function victim(sig)
  local best
  for _, n in ipairs(sig.names) do if not best or #n > #best then best = n end end
  return best
end

-- the signature of a target: its own, its class's full name's, or that of another name of the
-- same value (nn.init.normal is nn.init.normal_, F.feature_dropout is F.dropout2d)
local function signature_of(all, name, v)
  local sig = class.signatures[name]
  if not sig and class.is_class(v) then sig = class.signatures[rawget(v, "__typename") or ""] end
  if sig then return sig end
  for other, w in pairs(all) do
    if rawequal(w, v) and other ~= name and class.signatures[other] then return class.signatures[other] end
  end
end

T.test("every public function and class of the libraries declares its parameters", function()
  local missing = {}
  local all = targets()
  for name, v in pairs(all) do
    if not signature_of(all, name, v) and not NO_OPTIONS[name] then missing[#missing + 1] = name end
  end
  table.sort(missing)
  T.ok(#missing == 0, "no signature declared for: " .. table.concat(missing, ", "))
end)

T.test("every declared function, called with only a misspelt option, names it and the nearest option", function()
  local bad = {}
  local checked = 0
  local all = targets()
  for name, v in pairs(all) do
    local sig = signature_of(all, name, v)
    if sig and #sig.names > 0 then
      local want = victim(sig)
      local typo = misspell(want)
      local ok, err = pcall(v, { [typo] = 1 })
      err = tostring(err)
      checked = checked + 1
      if ok or not err:find("unknown option '" .. typo .. "'", 1, true)
        or not err:find("did you mean '", 1, true) then
        bad[#bad + 1] = ("%s({%s = 1}): %s"):format(name, typo, ok and "no error" or err)
      end
    end
  end
  table.sort(bad)
  T.ok(checked > 100, "only " .. checked .. " functions checked")
  T.ok(#bad == 0, #bad .. " did not reject the misspelling:\n  " .. table.concat(bad, "\n  "))
end)

T.test("methods that declare their options parse them (forward options of attention and transformers)", function()
  local n = 0
  for name, sig in pairs(class.signatures) do
    if name:find(":", 1, true) and #sig.names > 0 then
      local typo = misspell(victim(sig))
      T.raises(function() sig.parse({ [typo] = 1 }) end, "unknown option '" .. typo .. "'", "did you mean")
      n = n + 1
    end
  end
  T.ok(n >= 10, "only " .. n .. " methods declare options")
end)

T.test("autograd: backward and grad reject a misspelt option", function()
  local x = torch.randn(3, { requires_grad = true, dtype = torch.float64 })
  T.raises(function() (x * 2):sum():backward({ retain_grap = true }) end,
    "backward: unknown option 'retain_grap'", "did you mean 'retain_graph'")
  T.raises(function() torch.autograd.grad((x * 2):sum(), { x }, { grad_output = torch.ones({}) }) end,
    "grad: unknown option 'grad_output'", "did you mean 'grad_outputs'")
end)

T.test("autograd: every function of torch.autograd that takes options rejects a misspelt one", function()
  local x = torch.randn(2, { dtype = torch.float64, requires_grad = true })
  local y = (x * x):sum()
  local cases = {
    grad = { function(o) return torch.autograd.grad(y, { x }, o) end, "retain_grap", "retain_graph" },
    backward = { function(o) return torch.autograd.backward({ y }, o) end, "create_grap", "create_graph" },
    gradcheck = { function(o) return torch.autograd.gradcheck(function(v) return v * 2 end, { x }, o) end, "atoll", "atol" },
    gradgradcheck = { function(o) return torch.autograd.gradgradcheck(function(v) return v * v end, { x }, o) end, "rtoll", "rtol" },
    Variable = { function(o) return torch.autograd.Variable(torch.ones(2), o) end, "requires_gard", "requires_grad" },
  }
  for name, c in pairs(cases) do
    T.raises(function() c[1]({ [c[2]] = true }) end, "unknown option '" .. c[2] .. "'", "did you mean '" .. c[3] .. "'")
  end
  -- every public function of torch.autograd is one of the cases above or takes no options
  local no_options = { set_detect_anomaly = true, is_anomaly_enabled = true, queue_callback = true, Function = true }
  for k in pairs(torch.autograd) do
    if not k:find("^_") then T.ok(cases[k] or no_options[k], "torch.autograd." .. k .. " is not swept") end
  end
end)

-- the longest argument name of an op's declared signature ("sum(Tensor self, Dim dim, ...)")
local function op_victim(signature)
  local best
  for a in (signature:match("^[^(]*%((.-)%)%s*%->") or signature:match("^[^(]*%((.*)%)") or ""):gmatch("[%w_%[%]%?]+%s+([%a_][%w_]*)") do
    if a ~= "self" and (not best or #a > #best) then best = a end
  end
  return best
end

T.test("every torch op, called with only a misspelt option, names the op and the nearest argument", function()
  local seen, bad, n = {}, {}, 0
  for _, op in ipairs(torch._ops()) do
    local best = not seen[op.name] and type(torch[op.name]) == "function" and op_victim(op.signature)
    seen[op.name] = true
    if best then
      local typo = misspell(best)
      local ok, err = pcall(torch[op.name], { [typo] = 1 })
      n = n + 1
      if ok or not tostring(err):find("unknown option '" .. typo .. "'", 1, true)
        or not tostring(err):find("did you mean", 1, true) then
        bad[#bad + 1] = op.name .. ": " .. (ok and "no error" or tostring(err))
      end
    end
  end
  T.ok(n > 300, "only " .. n .. " ops checked")
  T.ok(#bad == 0, table.concat(bad, "\n"))
end)

T.test("torch ops: a misspelt option of an op names the op and the nearest argument", function()
  local x = torch.randn(3, 4)
  T.raises(function() torch.sum(x, 1, { keepdm = true }) end, "sum: unknown option 'keepdm'", "did you mean 'keepdim'")
  T.raises(function() x:softmax({ dimm = 1 }) end, "softmax: unknown option 'dimm'", "did you mean 'dim'")
  T.raises(function() torch.zeros(2, { dtyp = torch.float64 }) end, "zeros: unknown option 'dtyp'", "did you mean 'dtype'")
end)

T.done()
