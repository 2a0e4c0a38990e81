-- autograd.lua — the Lua half of torch.autograd: custom Functions, gradcheck
-- and gradgradcheck. Runs once when the torch module opens.
local torch = ...
local autograd = torch.autograd

local function as_list(x)
  if torch.is_tensor(x) then return { x }, true end
  return x, false
end

------------------------------------------------------------------------------
-- torch.autograd.Function: a table with forward(ctx, ...) and backward(ctx, ...)
--   local Square = torch.autograd.Function{
--     forward = function(ctx, x) ctx:save_for_backward(x); return x * x end,
--     backward = function(ctx, g) local x = ctx.saved_tensors[1]; return g * 2 * x end }
--   y = Square:apply(x)   -- or Square(x)
------------------------------------------------------------------------------
local Ctx = {}
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
  return Ctx[k]
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

function Function:apply(...)
  local args = table.pack(...)
  local name = self.name or "Function"
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

Function.__call = function(self, ...) return self:apply(...) end

setmetatable(Function, {
  __call = function(_, def)
    assert(type(def) == "table" and type(def.forward) == "function" and type(def.backward) == "function",
      "torch.autograd.Function: expected a table with forward(ctx, ...) and backward(ctx, ...)")
    return setmetatable(def, Function)
  end
})
autograd.Function = Function

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

function autograd.gradcheck(fn, inputs, opts)
  opts = opts or {}
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

-- second order: the gradient function itself passes gradcheck
function autograd.gradgradcheck(fn, inputs, opts)
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
