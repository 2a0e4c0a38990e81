-- autograd.lua — the Lua half of torch.autograd: custom Functions, gradcheck
-- and gradgradcheck. Runs once when the torch module opens.
local torch = ...
local autograd = torch.autograd

-- unknown names in an options table are an error at the caller's line (level 2: the
-- caller of the function that checks)
local function check_options(fname, opts, names, level)
  local ok, err = pcall(torch._check_options, fname, opts, names)
  if not ok then error(err, (level or 2) + 1) end
end

local function as_list(x)
  if torch.is_tensor(x) then return { x }, true end
  return x, false
end

------------------------------------------------------------------------------
-- torch.autograd.Function: forward(ctx, ...) and backward(ctx, ...), as a table
--   local Square = torch.autograd.Function{
--     forward = function(ctx, x) ctx:save_for_backward(x); return x * x end,
--     backward = function(ctx, g) local x = ctx.saved_tensors[1]; return g * 2 * x end }
-- or as a class, PyTorch's static methods:
--   local Exp = torch.autograd.Function:extend("Exp")
--   function Exp.forward(ctx, x) local y = x:exp(); ctx:save_for_backward(y); return y end
--   function Exp.backward(ctx, g) return g * ctx.saved_tensors[1] end
-- and called as y = Exp.apply(x) (PyTorch's spelling), Exp:apply(x) or Exp(x)
------------------------------------------------------------------------------
local Ctx = {}
-- the methods PyTorch calls with a dot (ctx.save_for_backward(x)): both that and
-- Lua's ctx:save_for_backward(x) reach them with ctx as self
local CTX_METHODS = { save_for_backward = true, mark_dirty = true, mark_non_differentiable = true,
  set_materialize_grads = true }
Ctx.__index = function(ctx, k)
  if k == "saved_tensors" then
    local saved = rawget(ctx, "_saved")
    if not saved then return {} end
    for i, t in ipairs(saved.tensors) do
      if autograd._version(t) ~= saved.versions[i] then
        error(("%s: one of the variables needed for gradient computation has been modified by an inplace "
          .. "operation (saved tensor %d is at version %d; expected version %d)"):format(
          rawget(ctx, "_name"), i, autograd._version(t), saved.versions[i]), 2)
      end
    end
    return saved.tensors
  end
  local m = Ctx[k]
  if CTX_METHODS[k] then
    return function(first, ...)
      if rawequal(first, ctx) then return m(ctx, ...) end
      return m(ctx, first, ...)
    end
  end
  return m
end

function Ctx:save_for_backward(...)
  local ts = table.pack(...)
  local saved = { tensors = {}, versions = {} }
  for i = 1, ts.n do
    local t = ts[i]
    saved.tensors[i] = t
    saved.versions[i] = t ~= nil and autograd._version(t) or nil
  end
  rawset(self, "_saved", saved)
end

function Ctx:mark_dirty(...) rawset(self, "_dirty", table.pack(...)) end
function Ctx:mark_non_differentiable(...) rawset(self, "_nondiff", table.pack(...)) end
function Ctx:set_materialize_grads(v) rawset(self, "_materialize", v) end

local Function = {}
Function.__index = Function

local function contains(list, x)
  if not list then return false end
  for i = 1, list.n or #list do if rawequal(list[i], x) then return true end end
  return false
end

local function is_function_class(f)
  if type(f) ~= "table" then return false end
  local mt = getmetatable(f)
  return rawequal(mt, Function) or (type(mt) == "table" and rawget(mt, "_function_class") == true)
end

local function apply(self, ...)
  local args = table.pack(...)
  local name = self.name or "Function"
  if type(self.forward) ~= "function" or type(self.backward) ~= "function" then
    error(("%s.apply: %s needs forward(ctx, ...) and backward(ctx, ...) (function %s.forward(ctx, x) ... end)")
      :format(name, name, name), 3)
  end
  local inputs, needs = {}, {}
  local any = false
  for i = 1, args.n do
    local a = args[i]
    if torch.is_tensor(a) then
      inputs[#inputs + 1] = a
      needs[i] = a.requires_grad
      any = any or a.requires_grad
    else
      needs[i] = false
    end
  end
  local ctx = setmetatable({ needs_input_grad = needs, _name = name .. "Backward" }, Ctx)
  local outs = table.pack(torch.no_grad(function() return self.forward(ctx, table.unpack(args, 1, args.n)) end))
  if not (any and torch.is_grad_enabled()) then return table.unpack(outs, 1, outs.n) end
  -- outputs that are inputs and not marked dirty are returned as new views (no history rewrite)
  local tensor_inputs_pos = {}
  for i = 1, args.n do if torch.is_tensor(args[i]) then tensor_inputs_pos[#tensor_inputs_pos + 1] = i end end
  local backward = self.backward
  -- The node's closure lives in the registry, so it must not reach the outputs:
  -- output -> node -> closure -> output would be a cycle the collector cannot see.
  -- It keeps the outputs' shapes (for zero gradients) and ctx, whose saved outputs
  -- are swapped for history-free aliases below.
  local nouts, zero_of = outs.n, {}
  for k = 1, nouts do
    local o = outs[k]
    if torch.is_tensor(o) then zero_of[k] = { o.shape, { dtype = o.dtype, device = o.device } } end
  end
  local node = autograd._make_node(name .. "Backward", inputs, nouts, function(...)
    local grads = table.pack(...)
    if rawget(ctx, "_materialize") ~= false then
      for k = 1, nouts do
        if grads[k] == nil and zero_of[k] then grads[k] = torch.zeros(zero_of[k][1], zero_of[k][2]) end
      end
    end
    local res = table.pack(backward(ctx, table.unpack(grads, 1, nouts)))
    -- backward returns one value per forward argument; keep those of tensor arguments
    local r = {}
    for k, pos in ipairs(tensor_inputs_pos) do r[k] = res[pos] end
    return table.unpack(r, 1, #tensor_inputs_pos)
  end)
  for k = 1, outs.n do
    local o = outs[k]
    if torch.is_tensor(o) and not contains(rawget(ctx, "_nondiff"), o) then
      if contains(args, o) and not contains(rawget(ctx, "_dirty"), o) then
        o = o:detach()   -- returning an input unchanged: a fresh alias carries the history
        outs[k] = o
      end
      autograd._set_history(o, node, k)
    end
  end
  local saved = rawget(ctx, "_saved")
  if saved then
    local dirty = rawget(ctx, "_dirty")
    for i, t in pairs(saved.tensors) do
      if torch.is_tensor(t) and (contains(outs, t) or contains(dirty, t)) then
        saved.tensors[i] = t:detach()    -- same storage and version counter, no history
      end
    end
  end
  return table.unpack(outs, 1, outs.n)
end

-- F.apply(x), PyTorch's spelling, and F:apply(x), Lua's method call, are one call:
-- each Function gets its own apply, which knows F and drops a leading F
local function bind(F)
  rawset(F, "apply", function(first, ...)
    if rawequal(first, F) then return apply(F, ...) end
    return apply(F, first, ...)
  end)
  return F
end

-- the base's own apply: Function.apply(x) has no Function to run
function Function.apply(self, ...)
  if not is_function_class(self) then
    error("torch.autograd.Function.apply: call apply on a Function: Fn.apply(x) or Fn:apply(x)", 2)
  end
  return apply(self, ...)
end

Function.__call = function(self, ...) return apply(self, ...) end

-- torch.autograd.Function:extend(name): a class whose forward and backward are set
-- afterwards (function Exp.forward(ctx, x) ... end); Exp:extend(name) derives from it
function Function.extend(parent, name)
  if not (rawequal(parent, Function) or is_function_class(parent)) then
    error("torch.autograd.Function.extend: call it as torch.autograd.Function:extend(name)", 2)
  end
  if name ~= nil and type(name) ~= "string" then
    error(("torch.autograd.Function:extend: argument 'name' must be a string, got %s"):format(type(name)), 2)
  end
  local cls = { name = name or (not rawequal(parent, Function) and parent.name) or "Function" }
  setmetatable(cls, { __index = parent, __call = Function.__call, _function_class = true,
    __name = "torch.autograd.Function" })
  return bind(cls)
end

setmetatable(Function, {
  __call = function(_, def)
    assert(type(def) == "table" and type(def.forward) == "function" and type(def.backward) == "function",
      "torch.autograd.Function: expected a table with forward(ctx, ...) and backward(ctx, ...)")
    return bind(setmetatable(def, Function))
  end
})
autograd.Function = Function

------------------------------------------------------------------------------
-- torch.autograd.Variable(data [, requires_grad]): PyTorch's old wrapper. As in
-- PyTorch, it gives a plain tensor: a new one sharing data's storage, without
-- history, requiring grad when asked (data itself is left as it was)
------------------------------------------------------------------------------
function autograd.Variable(...)
  local fname = "torch.autograd.Variable"
  local args = table.pack(...)
  local n = args.n
  while n > 0 and args[n] == nil do n = n - 1 end
  local opts = {}
  local last = args[n]
  if n > 1 and type(last) == "table" and getmetatable(last) == nil then opts = last; n = n - 1 end
  check_options(fname, opts, { "requires_grad", "volatile" })
  if n > 2 then error(("%s: too many arguments (%d given, at most 2)"):format(fname, n), 2) end
  local data, rg = args[1], n >= 2 and args[2] or nil
  if not torch.is_tensor(data) then
    error(("%s: argument 'data' must be a tensor, got %s"):format(fname, type(data)), 2)
  end
  if rg ~= nil and opts.requires_grad ~= nil then
    error(("%s: argument 'requires_grad' given twice, as argument #2 and by name"):format(fname), 2)
  end
  if opts.volatile ~= nil then
    error(("%s: option 'volatile' was removed from PyTorch; run the code under torch.no_grad() instead"):format(fname), 2)
  end
  if rg == nil then rg = opts.requires_grad end
  if rg ~= nil and type(rg) ~= "boolean" then
    error(("%s: argument 'requires_grad' must be a boolean, got %s"):format(fname, type(rg)), 2)
  end
  local v = data:detach()
  if rg then v:requires_grad_(true) end
  return v
end

------------------------------------------------------------------------------
-- gradcheck: analytical Jacobian (autograd) against central differences
------------------------------------------------------------------------------
local function outputs_of(fn, inputs)
  local o = table.pack(fn(table.unpack(inputs)))
  local outs = {}
  for i = 1, o.n do
    if torch.is_tensor(o[i]) then outs[#outs + 1] = o[i]
    elseif type(o[i]) == "table" then for _, t in ipairs(o[i]) do outs[#outs + 1] = t end end
  end
  return outs
end

local function numel(t) return t:numel() end

-- outputs as copies: an output that is a view of an input would change with
-- the perturbation and make every finite difference zero
local function detached_outputs(fn, inputs)
  return torch.no_grad(function()
    local outs = outputs_of(fn, inputs)
    for i, o in ipairs(outs) do outs[i] = o:clone() end
    return outs
  end)
end

local GRADCHECK_OPTS = { "eps", "atol", "rtol", "raise_exception", "_realified" }

-- Complex inputs and outputs are checked through their real views, as
-- PyTorch's gradcheck does: each complex input becomes a float64 leaf of shape
-- [..., 2] (perturbing real and imaginary parts), each complex output its
-- view_as_real. Under PyTorch's convention a complex input's gradient is
-- dL/dx + i dL/dy, which is exactly the real leaf's gradient seen as complex,
-- so the real check verifies the complex derivatives.
local function realified(fn, inputs)
  local map, rin, any = {}, {}, false
  for i, x in ipairs(inputs) do
    if torch.is_tensor(x) and x:is_complex() then
      local r = torch.view_as_real(x:detach()):clone()
      r.requires_grad = x.requires_grad
      rin[i], map[i], any = r, true, true
    else
      rin[i] = x
    end
  end
  local function real_out(v)
    if torch.is_tensor(v) and v:is_complex() then any = true; return torch.view_as_real(v) end
    return v
  end
  local function rfn(...)
    local args = table.pack(...)
    for i = 1, args.n do if map[i] then args[i] = torch.view_as_complex(args[i]) end end
    local o = table.pack(fn(table.unpack(args, 1, args.n)))
    for i = 1, o.n do
      if type(o[i]) == "table" and not torch.is_tensor(o[i]) then
        local l = {}
        for j, t in ipairs(o[i]) do l[j] = real_out(t) end
        o[i] = l
      else
        o[i] = real_out(o[i])
      end
    end
    return table.unpack(o, 1, o.n)
  end
  return rfn, rin, any
end

function autograd.gradcheck(fn, inputs, opts)
  check_options("torch.autograd.gradcheck", opts, GRADCHECK_OPTS)
  opts = opts or {}
  if not opts._realified then
    local rfn, rin = realified(fn, as_list(inputs))
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o._realified = true
    return autograd.gradcheck(rfn, rin, o)
  end
  local eps, atol, rtol = opts.eps or 1e-6, opts.atol or 1e-5, opts.rtol or 1e-3
  local raise = opts.raise_exception ~= false
  inputs = as_list(inputs)
  local diff = {}
  for _, x in ipairs(inputs) do
    if torch.is_tensor(x) and x.requires_grad then
      if x.dtype ~= torch.float64 then
        io.stderr:write("gradcheck: input is not float64; the check will likely fail\n")
      end
      diff[#diff + 1] = x
    end
  end
  if #diff == 0 then error("gradcheck: no input requires grad", 2) end
  -- numerical: perturb each input element
  local numerical = {}
  local base = detached_outputs(fn, inputs)
  for k, x in ipairs(diff) do
    numerical[k] = {}
    for i = 1, numel(x) do
      local orig = autograd._flat_get(x, i)
      autograd._flat_set(x, i, orig + eps)
      local plus = detached_outputs(fn, inputs)
      autograd._flat_set(x, i, orig - eps)
      local minus = detached_outputs(fn, inputs)
      autograd._flat_set(x, i, orig)
      local col = {}
      for o = 1, #base do
        for j = 1, numel(base[o]) do
          col[#col + 1] = (autograd._flat_get(plus[o], j) - autograd._flat_get(minus[o], j)) / (2 * eps)
        end
      end
      numerical[k][i] = col
    end
  end
  -- analytical: one backward per output element
  local outs = outputs_of(fn, inputs)
  local row = 0
  for o, out in ipairs(outs) do
    for j = 1, numel(out) do
      row = row + 1
      local ana
      if out.requires_grad then
        local go = torch.zeros_like(out)
        autograd._flat_set(go, j, 1)
        ana = autograd.grad({ out }, diff, { grad_outputs = { go }, retain_graph = true, allow_unused = true })
      else
        ana = {}
      end
      for k, x in ipairs(diff) do
        for i = 1, numel(x) do
          local a = ana[k] and autograd._flat_get(ana[k], i) or 0
          local n = numerical[k][i][row]
          if not (math.abs(a - n) <= atol + rtol * math.abs(n)) then
            local msg = ("gradcheck: Jacobian mismatch for output %d (element %d) with respect to input %d "
              .. "(element %d): numerical %.10g, analytical %.10g"):format(o, j, k, i, n, a)
            if raise then error(msg, 2) end
            return false, msg
          end
        end
      end
    end
  end
  return true
end

-- second order: the gradient function itself passes gradcheck. A complex
-- function is checked as its realified form (float64 [..., 2] views in and
-- out, as gradcheck does): its gradient function is then real too, and the
-- real check of it verifies the complex second derivatives (conjugate
-- Wirtinger gradients are the real view's gradients).
function autograd.gradgradcheck(fn, inputs, opts)
  check_options("torch.autograd.gradgradcheck", opts, GRADCHECK_OPTS)
  local ropts = {}
  for k, v in pairs(opts or {}) do ropts[k] = v end
  if not ropts._realified then
    fn, inputs = realified(fn, as_list(inputs))
    ropts._realified = true
  end
  opts = ropts
  inputs = as_list(inputs)
  local outs = outputs_of(fn, inputs)
  local gos = {}
  for i, o in ipairs(outs) do
    gos[i] = torch.randn(o.shape, { dtype = o.dtype })
    gos[i].requires_grad = true
  end
  local diff = {}
  for _, x in ipairs(inputs) do if torch.is_tensor(x) and x.requires_grad then diff[#diff + 1] = x end end
  local n = #inputs
  local all = {}
  for i = 1, n do all[i] = inputs[i] end
  for i, g in ipairs(gos) do all[n + i] = g end
  local function gradfn(...)
    local args = table.pack(...)
    return torch.enable_grad(function()
    local ins = {}
    for i = 1, n do ins[i] = args[i] end
    local go = {}
    for i = 1, #gos do go[i] = args[n + i] end
    local o = outputs_of(fn, ins)
    local d = {}
    for _, x in ipairs(ins) do if torch.is_tensor(x) and x.requires_grad then d[#d + 1] = x end end
    local g = autograd.grad(o, d, { grad_outputs = go, create_graph = true, allow_unused = true })
    local r = {}
    for i = 1, #d do r[i] = g[i] or torch.zeros_like(d[i]) end
    return r
    end)
  end
  return autograd.gradcheck(gradfn, all, opts)
end

torch.gradcheck = autograd.gradcheck
