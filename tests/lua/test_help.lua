-- test_help.lua — torch.help covers the API: every public torch function and
-- field, every tensor method and field, every class and function of nn, optim
-- and data has reference text (from the op table or man/*.md); the lookups by
-- name, by value and by qualified name agree.
local T = require "testing"
local nn, optim, data = require "nn", require "optim", require "data"

local function has_help(v)
  local ok, r = pcall(torch.help, v)
  return ok and type(r) == "string" and not r:find("no help for", 1, true) and not r:find("no reference", 1, true)
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do if type(k) == "string" then ks[#ks + 1] = k end end
  table.sort(ks)
  return ks
end

-- Internals that are not part of the API, with why:
local EXEMPT = {
  -- the metatable hooks and field tables behind x.NAME (documented as fields)
  ["x:__tostring"] = "metamethod", ["x:_fields"] = "internal table", ["x:_setters"] = "internal table",
  -- the helper optimizers use to raise their argument errors (a public name by accident)
  ["optim.bad"] = "internal error helper",
}

local function missing_in(list)
  local miss = {}
  for _, q in ipairs(list) do
    if not EXEMPT[q[1]] and not has_help(q[2]) then miss[#miss + 1] = q[1] end
  end
  return miss
end

local function check(list)
  local miss = missing_in(list)
  T.ok(#miss == 0, ("%d without help: %s"):format(#miss, table.concat(miss, ", ")))
end

T.test("torch.help() says how to get help; unknown names say so", function()
  T.ok(torch.help():find("torch.help", 1, true))
  T.ok(torch.help("no_such_function_xyz"):find("no help for 'no_such_function_xyz'", 1, true))
  T.ok(torch.help("nn.NoSuchThing"):find("no help", 1, true))
end)

T.test("every public function and field of torch has help, by name and by value", function()
  local byname, byvalue = {}, {}
  for _, k in ipairs(sorted_keys(torch)) do
    if not k:find("^_") and not (k == "nn" or k == "optim") then
      byname[#byname + 1] = { "torch." .. k, "torch." .. k }
      local v = torch[k]
      if type(v) == "function" then byvalue[#byvalue + 1] = { "torch." .. k .. " (value)", v } end
    end
  end
  check(byname)
  check(byvalue)
end)

T.test("functions in torch's tables (torch.autograd.grad, ...) have help", function()
  local list = {}
  for _, k in ipairs(sorted_keys(torch)) do
    local t = rawget(torch, k)
    if type(t) == "table" and not k:find("^_") and getmetatable(t) == nil and k ~= "utils" then
      for _, j in ipairs(sorted_keys(t)) do
        if not j:find("^_") and type(t[j]) == "function" then
          list[#list + 1] = { "torch." .. k .. "." .. j, "torch." .. k .. "." .. j }
        end
      end
    end
  end
  check(list)
end)

T.test("every tensor method and field has help", function()
  local list = {}
  for _, k in ipairs(sorted_keys(torch._methods)) do list[#list + 1] = { "x:" .. k, "x:" .. k } end
  for _, k in ipairs(sorted_keys(torch._methods._fields)) do list[#list + 1] = { "x." .. k, "x." .. k } end
  for _, k in ipairs(sorted_keys(torch._methods._setters)) do list[#list + 1] = { "x." .. k, "x." .. k } end
  check(list)
  T.ok(torch.help(torch.ones(2)):find("tensor", 1, true))
end)

T.test("every class and function of nn, optim and data has help", function()
  local list = {}
  for lib, t in pairs({ nn = nn, optim = optim, data = data }) do
    for _, k in ipairs(sorted_keys(t)) do
      local v = t[k]
      if not k:find("^_") and (type(v) == "table" or type(v) == "function") then
        list[#list + 1] = { lib .. "." .. k, lib .. "." .. k }
      end
    end
  end
  for _, k in ipairs(sorted_keys(nn.functional)) do
    if not k:find("^_") and type(nn.functional[k]) == "function" then
      list[#list + 1] = { "nn.functional." .. k, "nn.functional." .. k }
    end
  end
  table.sort(list, function(a, b) return a[1] < b[1] end)
  check(list)
  -- a module value finds its class
  T.ok(torch.help(nn.Linear(2, 3)):find("Linear", 1, true))
end)

T.test("lookups agree: names, values, methods, qualified forms", function()
  T.ok(torch.help("add"):find("^add%("))
  T.eq(torch.help("torch.add"), torch.help("add"))
  T.eq(torch.help("x:add"), torch.help("add"))
  T.eq(torch.help(torch.add), torch.help("add"))
  T.ok(torch.help("add_"):find("^add_%("))
  T.ok(torch.help("cmul"):find("cmul(", 1, true))          -- a Torch7 alias
  T.ok(torch.help("manual_seed"):find("torch.manual_seed", 1, true))
  T.ok(torch.help(torch.manual_seed):find("manual_seed", 1, true))   -- also reached as torch.manualSeed
  T.ok(torch.help("x:item"):find("x:item()", 1, true))
  T.ok(torch.help(torch.autograd.grad):find("torch.autograd.grad(", 1, true))
  T.ok(torch.help("autograd.Function"):find("torch.autograd.Function", 1, true))
  T.ok(torch.help("x.grad_fn"):find("grad_fn", 1, true))
end)

T.test("? F.X, ? nn.X, ? torch.nn.functional.X print the declared call form first", function()
  local class = require "torch_class"
  local cases = {
    ["F.conv2d"] = "F.conv2d(input, weight, bias=nil, stride=1, padding=0, dilation=1, groups=1)",
    ["torch.nn.functional.conv2d"] = "F.conv2d(input, weight,",
    ["nn.functional.relu"] = "F.relu(input, inplace=false)",
    ["nn.Linear"] = "nn.Linear(in_features, out_features, bias=true, *, device=nil, dtype=nil)",
    ["torch.nn.Linear"] = "nn.Linear(in_features, out_features,",
    ["nn.Conv2d"] = "nn.Conv2d(in_channels, out_channels, kernel_size, stride=1",
    ["optim.SGD"] = "optim.SGD(params, lr=",
    ["torch.optim.AdamW"] = "optim.AdamW(params, lr=",
    ["data.DataLoader"] = "data.DataLoader(dataset, batch_size=1, shuffle=false",
    ["torch.utils.data.DataLoader"] = "data.DataLoader(dataset,",
    ["nn.utils.rnn.pad_sequence"] = "nn.utils.rnn.pad_sequence(sequences, batch_first=false",
    ["nn.init.normal_"] = "nn.init.normal_(tensor, mean=0.0, std=1.0",
  }
  for name, want in pairs(cases) do
    local h = torch.help(name)
    T.ok(h:find(want, 1, true) == 1, ("? %s starts with %q, got: %s"):format(name, want, h:sub(1, 200)))
  end
  -- a value finds its call form too
  T.ok(torch.help(nn.functional.conv2d):find("F.conv2d(input", 1, true) == 1)
  T.ok(torch.help(nn.Linear):find("nn.Linear(in_features", 1, true) == 1)
  -- an F function that runs one op also shows the op's entry (its arguments' types and meaning)
  T.ok(torch.help("F.conv2d"):find("conv2d(Tensor input", 1, true))
  -- every declared signature is one help can print
  local n = 0
  for fname in pairs(class.signatures) do
    if fname:find("^nn%.") or fname:find("^F%.") or fname:find("^optim%.") or fname:find("^data%.") then
      T.ok(class.call_form(fname):find(fname .. "(", 1, true) == 1, fname)
      n = n + 1
    end
  end
  T.ok(n > 200, n)
end)

T.done()
