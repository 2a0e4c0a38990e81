-- nn.RNN / LSTM / GRU and their cells: values, final states and gradients against PyTorch
-- with identical weights (one Python run for every case), gradchecks, errors.
local T = require "testing"
local P = require "pyref"
local ok_nn, nn = pcall(require, "nn")
if not ok_nn or type(nn) ~= "table" or not nn.LSTM then nn = require "nn.rnn" end

torch.manual_seed(7)

local function numel_all(list)
  local parts = {}
  for i, t in ipairs(list) do parts[i] = t:reshape(-1) end
  return torch.cat(parts, 1)
end

local function pybool(b) return b and "True" or "False" end

------------------------------------------------------------------------------
-- cases: module + inputs; lutorch results now, PyTorch's in one run below
------------------------------------------------------------------------------
local cases = {}
local I, H, L, N = 3, 4, 5, 2

local function seq_case(kind, opts, cfg)
  cfg = cfg or {}
  local m = nn[kind](I, H, opts):double()
  m:eval()
  local D = opts.bidirectional and 2 or 1
  local nl = opts.num_layers or 1
  local Hout = (opts.proj_size or 0) > 0 and opts.proj_size or H
  local x
  if cfg.unbatched then x = torch.randn(L, I, { dtype = torch.float64 })
  elseif opts.batch_first then x = torch.randn(N, L, I, { dtype = torch.float64 })
  else x = torch.randn(L, N, I, { dtype = torch.float64 }) end
  if cfg.noncontig then
    -- the same shape, as a transposed view
    local s = x.shape
    x = torch.randn(s[2], s[1], s[3], { dtype = torch.float64 }):transpose(1, 2)
  end
  x.requires_grad = true
  local hshape = cfg.unbatched and { D * nl, Hout } or { D * nl, N, Hout }
  local cshape = cfg.unbatched and { D * nl, H } or { D * nl, N, H }
  local hx, leaves = nil, { x }
  if cfg.init then
    local h0 = torch.randn(hshape, { dtype = torch.float64 }); h0.requires_grad = true
    if kind == "LSTM" then
      local c0 = torch.randn(cshape, { dtype = torch.float64 }); c0.requires_grad = true
      hx = { h0, c0 }; leaves[2], leaves[3] = h0, c0
    else
      hx = h0; leaves[2] = h0
    end
  end
  local out, st = m(x, hx)
  local hn, cn = st, nil
  if kind == "LSTM" then hn, cn = st[1], st[2] end
  local go, gh = torch.randn(out.shape, { dtype = torch.float64 }), torch.randn(hn.shape, { dtype = torch.float64 })
  local gc = cn and torch.randn(cn.shape, { dtype = torch.float64 }) or torch.zeros(1, { dtype = torch.float64 })
  local loss = (out * go):sum() + (hn * gh):sum()
  if cn then loss = loss + (cn * gc):sum() end
  loss:backward()
  local params = m:parameters()
  for _, p in ipairs(params) do leaves[#leaves + 1] = p end
  local grads = {}
  for i, t in ipairs(leaves) do grads[i] = t.grad end
  local ctor = ("nn.%s(%d, %d, num_layers=%d, bias=%s, batch_first=%s, bidirectional=%s%s%s)"):format(
    kind, I, H, nl, pybool(opts.bias ~= false), pybool(opts.batch_first), pybool(opts.bidirectional),
    opts.nonlinearity and (", nonlinearity='" .. opts.nonlinearity .. "'") or "",
    opts.proj_size and (", proj_size=" .. opts.proj_size) or "")
  local name = kind .. " " .. ctor:match("%((.*)%)") .. (cfg.unbatched and " unbatched" or "")
    .. (cfg.init and " h0" or "") .. (cfg.noncontig and " noncontig" or "")
  cases[#cases + 1] = {
    name = name, ctor = ctor, x = x:detach(), hx = hx, params = params, go = go, gh = gh, gc = gc,
    out = out, hn = hn, cn = cn, grad = numel_all(grads), cell = false,
  }
end

local function cell_case(kind, opts, init, unbatched)
  local m = nn[kind](I, H, opts):double()
  local x = unbatched and torch.randn(I, { dtype = torch.float64 }) or torch.randn(N, I, { dtype = torch.float64 })
  x.requires_grad = true
  local hs = unbatched and { H } or { N, H }
  local hx, leaves = nil, { x }
  if init then
    local h0 = torch.randn(hs, { dtype = torch.float64 }); h0.requires_grad = true
    if kind == "LSTMCell" then
      local c0 = torch.randn(hs, { dtype = torch.float64 }); c0.requires_grad = true
      hx = { h0, c0 }; leaves[2], leaves[3] = h0, c0
    else hx = h0; leaves[2] = h0 end
  end
  local h, c = m(x, hx)
  local gh = torch.randn(h.shape, { dtype = torch.float64 })
  local gc = c and torch.randn(c.shape, { dtype = torch.float64 }) or torch.zeros(1, { dtype = torch.float64 })
  local loss = (h * gh):sum()
  if c then loss = loss + (c * gc):sum() end
  loss:backward()
  local params = m:parameters()
  for _, p in ipairs(params) do leaves[#leaves + 1] = p end
  local grads = {}
  for i, t in ipairs(leaves) do grads[i] = t.grad end
  local ctor = ("nn.%s(%d, %d, bias=%s%s)"):format(kind, I, H, pybool(opts.bias ~= false),
    opts.nonlinearity and (", nonlinearity='" .. opts.nonlinearity .. "'") or "")
  cases[#cases + 1] = {
    name = ctor .. (unbatched and " unbatched" or "") .. (init and " h0" or ""), ctor = ctor,
    x = x:detach(), hx = hx, params = params, go = gh, gh = gh, gc = gc,
    out = h, hn = h, cn = c, grad = numel_all(grads), cell = true,
  }
end

for _, kind in ipairs({ "RNN", "LSTM", "GRU" }) do
  seq_case(kind, {})
  seq_case(kind, { num_layers = 2, bidirectional = true }, { init = true })
  seq_case(kind, { num_layers = 2, batch_first = true }, { init = true })
  seq_case(kind, { bidirectional = true, batch_first = true, bias = false }, { noncontig = true })
  seq_case(kind, { num_layers = 2, bidirectional = true }, { unbatched = true, init = true })
end
seq_case("RNN", { nonlinearity = "relu", num_layers = 2 }, { init = true })
seq_case("GRU", { batch_first = true }, { unbatched = true })    -- batch_first does not apply
seq_case("LSTM", { proj_size = 2, num_layers = 2, bidirectional = true }, { init = true })
seq_case("LSTM", { num_layers = 2, dropout = 0.5 }, {})       -- eval: dropout is off
cell_case("RNNCell", {}, true, false)
cell_case("RNNCell", { nonlinearity = "relu", bias = false }, false, true)
cell_case("LSTMCell", {}, true, false)
cell_case("LSTMCell", {}, false, true)
cell_case("GRUCell", {}, true, false)
cell_case("GRUCell", { bias = false }, true, true)

------------------------------------------------------------------------------
-- PyTorch, once for all cases
------------------------------------------------------------------------------
local PY_HELPERS = [[
def _load(m, W):
    with torch.no_grad():
        for p, w in zip(m.parameters(), W): p.copy_(w)
    m.eval()
    return m
def run_seq(m, W, x, hx, go, gh, gc):
    _load(m, W)
    x = x.clone().requires_grad_()
    if isinstance(hx, list):
        hx = tuple(h.clone().requires_grad_() for h in hx); leaves = [x] + list(hx)
    elif hx is not None:
        hx = hx.clone().requires_grad_(); leaves = [x, hx]
    else:
        leaves = [x]
    out, st = m(x, hx) if hx is not None else m(x)
    hn, cn = st if isinstance(st, tuple) else (st, None)
    loss = (out * go).sum() + (hn * gh).sum() + ((cn * gc).sum() if cn is not None else 0)
    loss.backward()
    g = torch.cat([t.grad.reshape(-1) for t in leaves + list(m.parameters())])
    return [out, hn, cn if cn is not None else torch.zeros(1), g]
def run_cell(m, W, x, hx, gh, gc):
    _load(m, W)
    x = x.clone().requires_grad_()
    if isinstance(hx, list):
        hx = tuple(h.clone().requires_grad_() for h in hx); leaves = [x] + list(hx)
    elif hx is not None:
        hx = hx.clone().requires_grad_(); leaves = [x, hx]
    else:
        leaves = [x]
    r = m(x, hx) if hx is not None else m(x)
    h, c = r if isinstance(r, tuple) else (r, None)
    loss = (h * gh).sum() + ((c * gc).sum() if c is not None else 0)
    loss.backward()
    g = torch.cat([t.grad.reshape(-1) for t in leaves + list(m.parameters())])
    return [h, h, c if c is not None else torch.zeros(1), g]
R = []
]]

local ref
if P.available() then
  local inputs, body, outputs = {}, { PY_HELPERS }, {}
  for i, c in ipairs(cases) do
    inputs["x" .. i], inputs["W" .. i] = c.x, c.params
    inputs["go" .. i], inputs["gh" .. i], inputs["gc" .. i] = c.go, c.gh, c.gc
    local hx = "None"
    if c.hx then
      if torch.is_tensor(c.hx) then inputs["h" .. i] = c.hx:detach(); hx = "h" .. i
      else inputs["h" .. i] = { c.hx[1]:detach(), c.hx[2]:detach() }; hx = "h" .. i end
    end
    if c.cell then
      body[#body + 1] = ("R.append(run_cell(%s, W%d, x%d, %s, gh%d, gc%d))"):format(c.ctor, i, i, hx, i, i)
    else
      body[#body + 1] = ("R.append(run_seq(%s, W%d, x%d, %s, go%d, gh%d, gc%d))"):format(c.ctor, i, i, hx, i, i, i)
    end
    for k = 0, 3 do outputs[#outputs + 1] = ("R[%d][%d]"):format(i - 1, k) end
  end
  ref = P.run(inputs, table.concat(body, "\n"), outputs)
end

local function close(a, b, what)
  T.eq(a.shape, b.shape, what .. " shape")
  local d = (a:detach() - b):abs():max():item()
  T.ok(d < 1e-10, ("%s differs from PyTorch by %g"):format(what, d))
end

for i, c in ipairs(cases) do
  if not ref then T.skip(c.name, P.why()) break end
  T.test(c.name .. " vs PyTorch", function()
    local r = { table.unpack(ref, 4 * i - 3, 4 * i) }
    close(c.out, r[1], "output")
    close(c.hn, r[2], "h_n")
    if c.cn then close(c.cn, r[3], "c_n") end
    close(c.grad, r[4], "gradients")
  end)
end

------------------------------------------------------------------------------
-- structure, init, modes
------------------------------------------------------------------------------
T.test("LSTM parameter names and shapes follow PyTorch", function()
  local m = nn.LSTM(3, 4, { num_layers = 2, bidirectional = true, proj_size = 2 })
  local names, shapes = {}, {}
  for name, p in m:named_parameters() do names[#names + 1] = name; shapes[#shapes + 1] = p.shape end
  T.eq(names, {
    "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
    "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_hr_l0_reverse",
    "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_hr_l1",
    "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse", "weight_hr_l1_reverse" })
  T.eq(shapes[1], { 16, 3 }); T.eq(shapes[2], { 16, 2 }); T.eq(shapes[5], { 2, 4 })
  T.eq(shapes[11], { 16, 4 })
  T.eq(#m:all_weights(), 4)
end)

T.test("GRU and RNN parameter shapes; no biases with bias=false", function()
  local g = nn.GRU(3, 5, { bias = false })
  local n = 0
  for name, p in g:named_parameters() do n = n + 1; T.ok(not name:find("bias")) end
  T.eq(n, 2)
  T.eq(g.weight_ih_l0.shape, { 15, 3 })
  local r = nn.RNN(3, 5, 3)          -- positional num_layers, as PyTorch
  T.eq(r.num_layers, 3)
  T.eq(r.weight_hh_l2.shape, { 5, 5 })
end)

T.test("default init is uniform(-1/sqrt(hidden), 1/sqrt(hidden))", function()
  local m = nn.LSTM(20, 16, { num_layers = 2 })
  for _, p in ipairs(m:parameters()) do
    T.ok(p:abs():max():item() <= 0.25, "within the bound")
    T.ok(p:abs():max():item() > 0.2, "spread over the range")
  end
  local c = nn.GRUCell(4, 9)
  T.ok(c.weight_hh:abs():max():item() <= 1 / 3)
end)

T.test("repr as PyTorch", function()
  T.eq(tostring(nn.LSTM(10, 20, { num_layers = 2, batch_first = true, bidirectional = true })),
    "LSTM(10, 20, num_layers=2, batch_first=True, bidirectional=True)")
  T.eq(tostring(nn.GRU(3, 4, { dropout = 0.5, num_layers = 2 })), "GRU(3, 4, num_layers=2, dropout=0.5)")
  T.eq(tostring(nn.RNNCell(3, 4, { nonlinearity = "relu" })), "RNNCell(3, 4, nonlinearity='relu')")
end)

T.test("dropout between layers acts in training only", function()
  local m = nn.GRU(3, 8, { num_layers = 2, dropout = 0.5 })
  local x = torch.randn(6, 2, 3)
  m:eval()
  local a = m(x)
  local b = m(x)
  T.ok((a - b):abs():max():item() == 0, "eval is deterministic")
  m:train()
  local c = m(x)
  T.ok((a - c):abs():max():item() > 0, "training drops")
  local m1 = nn.GRU(3, 8, { num_layers = 1, dropout = 0.5 })   -- no layer to drop between
  T.ok((m1(x) - m1(x)):abs():max():item() == 0)
end)

T.test("float32 forward and backward run", function()
  local m = nn.LSTM(3, 4, { batch_first = true })
  local x = torch.randn(2, 5, 3, { requires_grad = true })
  local out, hc = m(x)
  T.eq(out.dtype, torch.float32)
  T.eq(out.shape, { 2, 5, 4 }); T.eq(hc[1].shape, { 1, 2, 4 }); T.eq(hc[2].shape, { 1, 2, 4 })
  -- the last output step is h_n
  T.ok((out:select(2, 5) - hc[1][1]):abs():max():item() == 0)
  out:sum():backward()
  T.eq(x.grad.shape, { 2, 5, 3 })
  T.eq(m.weight_hh_l0.grad.shape, { 16, 4 })
end)

T.test("LSTM: the fused sequence node and the per-step graph agree", function()
  local m = nn.LSTM(3, 4, { num_layers = 2, bidirectional = true, batch_first = true }):double()
  local x = torch.randn(2, 5, 3, { dtype = torch.float64, requires_grad = true })
  local h0 = torch.randn(4, 2, 4, { dtype = torch.float64, requires_grad = true })
  local function run()
    x.grad, h0.grad = nil, nil
    m:zero_grad()
    local out, hc = m(x, { h0, h0 * 0.5 })
    ;(out:sum() + (hc[1] * 2):sum() + hc[2]:sum()):backward()
    local g = { out:detach(), hc[1]:detach(), hc[2]:detach(), x.grad, h0.grad }
    for _, p in ipairs(m:parameters()) do g[#g + 1] = p.grad end
    return g
  end
  local a = run()
  m._fused = false
  local b = run()
  for k = 1, #a do T.ok((a[k] - b[k]):abs():max():item() < 1e-12, "tensor " .. k) end
  -- the per-step graph is twice differentiable
  local out = m(x)
  local gx = torch.autograd.grad({ out:pow(2):sum() }, { x }, { create_graph = true })[1]
  gx:sum():backward()
  T.ok(m.weight_hh_l0.grad ~= nil)
  -- no_grad inference gives the same values through the fused node
  m._fused = nil
  local y = torch.no_grad(function() return (m(x)) end)
  T.ok((y - out:detach()):abs():max():item() < 1e-12)
end)

T.test("state_dict round trip", function()
  local a, b = nn.GRU(3, 4, { num_layers = 2 }), nn.GRU(3, 4, { num_layers = 2 })
  b:load_state_dict(a:state_dict())
  local x = torch.randn(4, 1, 3)
  T.ok((a(x) - b(x)):abs():max():item() == 0)
end)

------------------------------------------------------------------------------
-- gradcheck in float64 (inputs, initial state and every parameter)
------------------------------------------------------------------------------
local function gradcheck_module(m, x, hx)
  local inputs = { x }
  if torch.is_tensor(hx) then inputs[#inputs + 1] = hx
  elseif hx then inputs[#inputs + 1] = hx[1]; inputs[#inputs + 1] = hx[2] end
  for _, p in ipairs(m:parameters()) do inputs[#inputs + 1] = p end
  return torch.autograd.gradcheck(function() return m(x, hx) end, inputs)
end

T.test("gradcheck LSTM (2 layers, bidirectional, batch_first, non-contiguous input)", function()
  local m = nn.LSTM(2, 2, { num_layers = 2, bidirectional = true, batch_first = true }):double()
  local x = torch.randn(3, 2, 2, { dtype = torch.float64 }):transpose(1, 2)
  x.requires_grad = true
  local h0 = torch.randn(4, 2, 2, { dtype = torch.float64, requires_grad = true })
  local c0 = torch.randn(4, 2, 2, { dtype = torch.float64, requires_grad = true })
  T.ok(gradcheck_module(m, x, { h0, c0 }))
end)

T.test("gradcheck GRU and LSTMCell", function()
  local m = nn.GRU(2, 3, { num_layers = 2 }):double()
  local x = torch.randn(3, 2, 2, { dtype = torch.float64, requires_grad = true })
  local h0 = torch.randn(2, 2, 3, { dtype = torch.float64, requires_grad = true })
  T.ok(gradcheck_module(m, x, h0))
  local c = nn.LSTMCell(2, 3):double()
  local xc = torch.randn(2, 2, { dtype = torch.float64, requires_grad = true })
  local hc = { torch.randn(2, 3, { dtype = torch.float64, requires_grad = true }),
               torch.randn(2, 3, { dtype = torch.float64, requires_grad = true }) }
  T.ok(gradcheck_module(c, xc, hc))
end)

------------------------------------------------------------------------------
-- errors name the layer
------------------------------------------------------------------------------
T.test("errors for bad inputs name the layer", function()
  local m = nn.LSTM(3, 4, { num_layers = 2 })
  T.raises(function() m(torch.randn(5, 2, 7)) end, "LSTM", "input_size", "Expected 3, got 7")
  T.raises(function() m(torch.randn(5, 2, 3, 1)) end, "LSTM", "4-D")
  T.raises(function() m(torch.randn(0, 2, 3)) end, "LSTM", "sequence length")
  T.raises(function() m(torch.randn(5, 2, 3), torch.zeros(2, 2, 4)) end, "LSTM", "{h_0, c_0}")
  T.raises(function() m(torch.randn(5, 2, 3), { torch.zeros(2, 3, 4), torch.zeros(2, 2, 4) }) end,
    "LSTM", "h_0", "[2, 2, 4]", "[2, 3, 4]")
  T.raises(function() m(torch.randn(5, 3), { torch.zeros(2, 1, 4), torch.zeros(2, 1, 4) }) end,
    "LSTM", "unbatched", "2-D")
  T.raises(function() m(torch.randn(5, 2, 3, { dtype = torch.float64 })) end, "LSTM", "float64", "float32")
  local g = nn.GRU(3, 4)
  T.raises(function() g(torch.randn(5, 2, 3), torch.zeros(1, 2, 5)) end, "GRU", "hx", "[1, 2, 4]")
  T.raises(function() nn.RNN(3, 4, { nonlinearity = "sigmoid" }) end, "RNN", "nonlinearity")
  T.raises(function() nn.GRU(3, 4, { proj_size = 2 }) end, "GRU", "proj_size")
  T.raises(function() nn.LSTM(3, 4, { dropout = 2 }) end, "LSTM", "dropout")
  T.raises(function() nn.GRUCell(3, 4)(torch.randn(2, 5)) end, "GRUCell", "input_size")
  T.raises(function() nn.RNNCell(3, 4)(torch.randn(2, 3), torch.zeros(3, 4)) end, "RNNCell", "hx", "[2, 4]")
end)

T.done()
