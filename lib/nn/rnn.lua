-- nn/rnn.lua — recurrent layers as in torch.nn: RNN (tanh or relu), LSTM (with proj_size),
-- GRU, and the single-step cells RNNCell, LSTMCell, GRUCell.
--
--   local lstm = nn.LSTM(10, 20, {num_layers = 2, batch_first = true, bidirectional = true})
--   local lstm = nn.LSTM{input_size = 10, hidden_size = 20, num_layers = 2}   -- all by name
--   local out, hc = lstm(x, {h0, c0})       -- hc = {h_n, c_n}, PyTorch's tuple as a table
--   local gru = nn.GRU(10, 20); local out, h_n = gru(x, h0)
--   local out, h_n = gru(nn.utils.rnn.pack_sequence({a, b}))   -- a PackedSequence in, one out
--   local cell = nn.LSTMCell(10, 20); local h, c = cell(x, {h, c})
--
-- Constructors and forward take PyTorch's parameters (class.signature: "nn.LSTM",
-- "nn.LSTM:forward", ...), positionally or by name in a trailing options table.
--
-- Parameter names, shapes, gate order (LSTM i,f,g,o; GRU r,z,n) and the default
-- initialisation (uniform(-1/sqrt(hidden), 1/sqrt(hidden))) are PyTorch's, so state_dicts
-- map one to one. The input projection of a whole sequence is one matrix product
-- (x @ W_ih^T over all steps and the batch at once); each step then only adds h @ W_hh^T
-- and runs the gate nonlinearities. An LSTM layer (without proj_size) runs its steps as
-- one autograd node with a hand-written backward (see LSTMSeqF); everything else is
-- plain autograd code over existing ops.
local torch = require "torch"
local base = require "nn.module"
local Module, Parameter = base.Module, base.Parameter
local pyval = base.pyval
local class = require "torch_class"
local rnn_utils = require "nn.rnn_utils"

local R = {}

local MODES = {
  RNN_TANH = { gates = 1, class = "RNN" }, RNN_RELU = { gates = 1, class = "RNN" },
  LSTM = { gates = 4, class = "LSTM" }, GRU = { gates = 3, class = "GRU" },
}

local function shape_str(t)
  local s = {}
  for i, v in ipairs(t.shape) do s[i] = tostring(v) end
  return "[" .. table.concat(s, ", ") .. "]"
end

local function check_int(who, name, v, min)
  if math.type(v) ~= "integer" or v < min then
    error(("%s: argument '%s' must be an integer >= %d, got %s"):format(who, name, min, tostring(v)), 5)
  end
end

-- dropout between layers
local function dropout(x, p) return torch.dropout(x, p, true) end

------------------------------------------------------------------------------
-- slicing with one backward node: torch.split/unbind are views made by narrow/select,
-- whose backward pads each slice's gradient to the full size and adds them up (for the
-- per-step slices of a sequence that is quadratic in its length). These Functions give
-- the slices one node whose backward is a single cat/stack, as PyTorch's chunk/unbind.
------------------------------------------------------------------------------
local Function = torch.autograd.Function
local SplitF = Function{ name = "Split",
  forward = function(ctx, x, size, dim) ctx.dim = dim; return table.unpack(torch.split(x, size, dim)) end,
  backward = function(ctx, ...) return torch.cat({ ... }, ctx.dim) end }
local UnbindF = Function{ name = "Unbind",
  forward = function(ctx, x, dim) ctx.dim = dim; return table.unpack(torch.unbind(x, dim)) end,
  backward = function(ctx, ...) return torch.stack({ ... }, ctx.dim) end }

local function needs_graph(x) return x.requires_grad and torch.is_grad_enabled() end
local function split(x, size, dim)
  if needs_graph(x) then return SplitF:apply(x, size, dim) end
  return table.unpack(torch.split(x, size, dim))
end
local function unbind(x, dim)
  if needs_graph(x) then return { UnbindF:apply(x, dim) } end
  return torch.unbind(x, dim)
end

------------------------------------------------------------------------------
-- one time step of each cell kind. xw: the step's input projection (with the biases
-- that fold into it); h, c: the state; w: per-direction weights prepared by the caller
-- (whh_t = W_hh^T, b_hh for GRU only, whr_t = W_hr^T for LSTM with proj_size).
------------------------------------------------------------------------------
local function step_tanh(xw, h, w) return torch.tanh(torch.addmm(xw, h, w.whh_t)) end
local function step_relu(xw, h, w) return torch.relu(torch.addmm(xw, h, w.whh_t)) end

local function step_lstm(xw, h, w, c)
  local i, f, g, o = split(torch.addmm(xw, h, w.whh_t), w.H, 2)
  c = torch.addcmul(torch.sigmoid(f) * c, torch.sigmoid(i), torch.tanh(g))
  h = torch.sigmoid(o) * torch.tanh(c)
  if w.whr_t then h = h:mm(w.whr_t) end
  return h, c
end

local function step_gru(xw, h, w)
  local gh = w.b_hh and torch.addmm(w.b_hh, h, w.whh_t) or h:mm(w.whh_t)
  local xr, xz, xn = split(xw, w.H, 2)
  local hr, hz, hn = split(gh, w.H, 2)
  local r = torch.sigmoid(xr + hr)
  local z = torch.sigmoid(xz + hz)
  local n = torch.tanh(xn + r * hn)
  return n + z * (h - n)
end

------------------------------------------------------------------------------
-- LSTM over a whole sequence as one autograd node (no proj_size). The forward writes the
-- activated gates, cell states and outputs of every step into three preallocated
-- tensors; the backward walks the steps back by hand (per step only dgates @ W_hh) and
-- computes grad W_hh for the whole sequence as one matrix product. The input projection
-- before it stays ordinary autograd. Not twice differentiable: set `lstm._fused = false`
-- for double backward through an LSTM.
------------------------------------------------------------------------------
local function gates4(g, H)
  return g:narrow(2, 1, H), g:narrow(2, H + 1, H), g:narrow(2, 2 * H + 1, H), g:narrow(2, 3 * H + 1, H)
end

-- the state that came before step t in processing order (h0 / c0 for the first step),
-- for all steps at once: (L, N, H)
local function previous(S, s0, reverse)
  local L = S:size(1)
  if L == 1 then return s0:unsqueeze(1) end
  if reverse then return torch.cat({ S:narrow(1, 2, L - 1), s0:unsqueeze(1) }, 1) end
  return torch.cat({ s0:unsqueeze(1), S:narrow(1, 1, L - 1) }, 1)
end

local LSTMSeqF = Function{ name = "LSTMSequence",
  -- xw: (L, N, 4H) time-major (td == 1) or (N, L, 4H); h0, c0: (N, H); w_hh: (4H, H)
  forward = function(ctx, xw, h0, c0, w_hh, td, reverse)
    local xwt = td == 1 and xw or xw:transpose(1, 2)
    local L, N, H = xwt:size(1), xwt:size(2), w_hh:size(2)
    local opt = { dtype = xw.dtype, device = xw.device }
    local G = torch.empty(L, N, 4 * H, opt)
    local C, TC, Hs = torch.empty(L, N, H, opt), torch.empty(L, N, H, opt), torch.empty(L, N, H, opt)
    local whh_t = w_hh:t()
    local h, c = h0, c0
    for s = 1, L do
      local t = reverse and (L - s + 1) or s
      local g = G:select(1, t)
      torch.addmm(xwt:select(1, t), h, whh_t, { out = g })
      g:narrow(2, 1, 2 * H):sigmoid_()
      g:narrow(2, 2 * H + 1, H):tanh_()
      g:narrow(2, 3 * H + 1, H):sigmoid_()
      local i, f, gg, o = gates4(g, H)
      local ct, tct, ht = C:select(1, t), TC:select(1, t), Hs:select(1, t)
      torch.mul(f, c, { out = ct }):addcmul_(i, gg)
      torch.tanh(ct, { out = tct })
      torch.mul(o, tct, { out = ht })
      h, c = ht, ct
    end
    ctx.td, ctx.reverse = td, reverse
    ctx:save_for_backward(G, C, TC, Hs, h0, c0, w_hh)
    return td == 1 and Hs or Hs:transpose(1, 2), h:clone(), c:clone()
  end,
  backward = function(ctx, dout, dhn, dcn)
    local G, C, TC, Hs, h0, c0, w_hh = table.unpack(ctx.saved_tensors)
    local td, reverse = ctx.td, ctx.reverse
    local dHs = td == 1 and dout or dout:transpose(1, 2)
    local L, N, H = Hs:size(1), Hs:size(2), Hs:size(3)
    local dG = torch.empty(L, N, 4 * H, { dtype = G.dtype, device = G.device })
    -- scratch buffers: the per-step math writes into them (out=) instead of allocating
    local opt = { dtype = G.dtype, device = G.device }
    local t1, t2, dht, dhbuf = torch.empty(N, H, opt), torch.empty(N, H, opt), torch.empty(N, H, opt),
      torch.empty(N, H, opt)
    local dh, dc = dhn, dcn:clone()
    for s = L, 1, -1 do
      local t = reverse and (L - s + 1) or s
      local cprev = s == 1 and c0 or C:select(1, reverse and t + 1 or t - 1)
      local i, f, gg, o = gates4(G:select(1, t), H)
      local tc = TC:select(1, t)
      local dgt = dG:select(1, t)
      local di, df, dg, dO = gates4(dgt, H)
      torch.add(dh, dHs:select(1, t), { out = dht })
      -- o: dht * tanh(c) * o (1 - o)
      torch.sub(o, torch.mul(o, o, { out = t1 }), { out = t1 })
      torch.mul(dht, tc, { out = dO }):mul_(t1)
      -- dc += dht * o * (1 - tanh(c)^2)
      torch.mul(tc, tc, { out = t1 }):mul_(-1):add_(1)
      dc:add_(torch.mul(dht, o, { out = t2 }):mul_(t1))
      -- f: dc * c_prev * f (1 - f); i: dc * g * i (1 - i); g: dc * i * (1 - g^2)
      torch.sub(f, torch.mul(f, f, { out = t1 }), { out = t1 })
      torch.mul(dc, cprev, { out = df }):mul_(t1)
      torch.sub(i, torch.mul(i, i, { out = t1 }), { out = t1 })
      torch.mul(dc, gg, { out = di }):mul_(t1)
      torch.mul(gg, gg, { out = t1 }):mul_(-1):add_(1)
      torch.mul(dc, i, { out = dg }):mul_(t1)
      dc:mul_(f)
      dh = torch.mm(dgt, w_hh, { out = dhbuf })
    end
    local dW
    if ctx.needs_input_grad[4] then
      dW = dG:view(L * N, 4 * H):t():mm(previous(Hs, h0, reverse):reshape(L * N, H))
    end
    return td == 1 and dG or dG:transpose(1, 2), dh, dc, dW
  end }

local STEP = { RNN_TANH = step_tanh, RNN_RELU = step_relu, LSTM = step_lstm, GRU = step_gru }

-- x2d @ W_ih^T plus the biases that fold into it (both for RNN/LSTM; b_ih only for GRU,
-- whose b_hn sits inside r * (...))
local function project(mode, x2d, w_ih, b_ih, b_hh)
  if b_ih then
    local b = (mode == "GRU") and b_ih or (b_ih + b_hh)
    return torch.addmm(b, x2d, w_ih:t())
  end
  return x2d:mm(w_ih:t())
end

------------------------------------------------------------------------------
-- RNNBase: the multi-layer, optionally bidirectional sequence layers
------------------------------------------------------------------------------
local RNNBase = Module:extend("RNNBase")
R.RNNBase = RNNBase

-- the parameters of each constructor (PyTorch's; RNN's nonlinearity comes fourth, as there)
local COMMON = "bias=true, batch_first=false, dropout=0.0, bidirectional=false"
local SIGS = {
  RNNBase = class.signature("nn.RNNBase", "mode, input_size, hidden_size, num_layers=1, " .. COMMON ..
    ", proj_size=0, *, device=nil, dtype=nil"),
  RNN = class.signature("nn.RNN", "input_size, hidden_size, num_layers=1, nonlinearity='tanh', " .. COMMON ..
    ", *, device=nil, dtype=nil"),
  LSTM = class.signature("nn.LSTM", "input_size, hidden_size, num_layers=1, " .. COMMON ..
    ", proj_size=0, *, device=nil, dtype=nil"),
  GRU = class.signature("nn.GRU", "input_size, hidden_size, num_layers=1, " .. COMMON .. ", *, device=nil, dtype=nil"),
}
local FORWARD_SIGS = {}
for _, k in ipairs({ "RNN", "LSTM", "GRU" }) do
  FORWARD_SIGS[k] = class.signature("nn." .. k .. ":forward", "input, hx=nil")
end

-- RNNBase(mode, input_size, hidden_size, ...), mode "RNN_TANH", "RNN_RELU", "LSTM" or "GRU"
function RNNBase:__init(...)
  local a = SIGS.RNNBase(...)
  if not MODES[a.mode] then
    error(("RNNBase: unknown mode '%s' (RNN_TANH, RNN_RELU, LSTM or GRU)"):format(tostring(a.mode)), 3)
  end
  self:_setup(a.mode, a)
end

-- parameters in a dtype, and on a device, when the constructor is given them
local function empty(a, ...)
  if a.dtype ~= nil then return torch.empty({ ... }, { dtype = a.dtype }) end
  return torch.empty({ ... })
end
local function to_device(m, a)
  if a.device ~= nil then m:to(a.device) end
end

function RNNBase:_setup(mode, a)
  local who = MODES[mode].class
  local input_size, hidden_size = a.input_size, a.hidden_size
  check_int(who, "input_size", input_size, 0)
  check_int(who, "hidden_size", hidden_size, 1)
  local num_layers = a.num_layers
  check_int(who, "num_layers", num_layers, 1)
  local dropout_p = a.dropout
  if type(dropout_p) ~= "number" or dropout_p < 0 or dropout_p > 1 then
    error(("%s: dropout should be a number in range [0, 1] representing the probability of an "
      .. "element being zeroed, got %s"):format(who, tostring(dropout_p)), 4)
  end
  local proj_size = a.proj_size or 0
  check_int(who, "proj_size", proj_size, 0)
  if proj_size > 0 and mode ~= "LSTM" then
    error(who .. ": proj_size argument is only supported for LSTM, not RNN or GRU", 4)
  end
  if proj_size >= hidden_size then
    error(("%s: proj_size has to be smaller than hidden_size (got %d >= %d)"):format(who, proj_size, hidden_size), 4)
  end
  self.mode = mode
  self.input_size, self.hidden_size = input_size, hidden_size
  self.num_layers = num_layers
  self.bias = a.bias ~= false
  self.batch_first = a.batch_first == true
  self.dropout = dropout_p
  self.bidirectional = a.bidirectional == true
  self.proj_size = proj_size
  local D = self.bidirectional and 2 or 1
  local G = MODES[mode].gates * hidden_size
  local real_hidden = proj_size > 0 and proj_size or hidden_size
  local names = {}
  for layer = 0, num_layers - 1 do
    for dir = 0, D - 1 do
      local in_size = layer == 0 and input_size or real_hidden * D
      local sfx = ("_l%d%s"):format(layer, dir == 1 and "_reverse" or "")
      local n = { w_ih = "weight_ih" .. sfx, w_hh = "weight_hh" .. sfx }
      self[n.w_ih] = Parameter(empty(a, G, in_size))
      self[n.w_hh] = Parameter(empty(a, G, real_hidden))
      if self.bias then
        n.b_ih, n.b_hh = "bias_ih" .. sfx, "bias_hh" .. sfx
        self[n.b_ih] = Parameter(empty(a, G))
        self[n.b_hh] = Parameter(empty(a, G))
      end
      if proj_size > 0 then
        n.w_hr = "weight_hr" .. sfx
        self[n.w_hr] = Parameter(empty(a, proj_size, hidden_size))
      end
      names[#names + 1] = n
    end
  end
  self._weight_names = names
  self:reset_parameters()
  to_device(self, a)
end

function RNNBase:reset_parameters()
  local stdv = 1 / math.sqrt(self.hidden_size)
  torch.no_grad(function()
    for _, p in ipairs(self:parameters()) do p:uniform_(-stdv, stdv) end
  end)
end

-- PyTorch's all_weights: per layer and direction, the list of its parameters
function RNNBase:all_weights()
  local out = {}
  for i, n in ipairs(self._weight_names) do
    local l = {}
    for _, k in ipairs({ "w_ih", "w_hh", "b_ih", "b_hh", "w_hr" }) do
      if n[k] then l[#l + 1] = self[n[k]] end
    end
    out[i] = l
  end
  return out
end

function RNNBase:flatten_parameters() end   -- cuDNN's concern in PyTorch; nothing to do here

function RNNBase:extra_repr()
  local s = ("%d, %d"):format(self.input_size, self.hidden_size)
  if self.proj_size ~= 0 then s = s .. ", proj_size=" .. self.proj_size end
  if self.num_layers ~= 1 then s = s .. ", num_layers=" .. self.num_layers end
  if not self.bias then s = s .. ", bias=False" end
  if self.batch_first then s = s .. ", batch_first=True" end
  if self.dropout ~= 0 then s = s .. ", dropout=" .. pyval(self.dropout + 0.0) end
  if self.bidirectional then s = s .. ", bidirectional=True" end
  return s
end

-- checks a given initial state and brings it to (D*num_layers, N, H) form
local function check_hidden(who, h, what, expect, batched)
  if not torch.is_tensor(h) then
    error(("%s: %s must be a tensor, got %s"):format(who, what, type(h)), 4)
  end
  local want = batched and 3 or 2
  if h:dim() ~= want then
    error(("%s: for %s input, %s should also be %d-D but got %d-D tensor"):format(
      who, batched and "batched 3-D" or "unbatched 2-D", what, want, h:dim()), 4)
  end
  if not batched then h = h:unsqueeze(2) end
  if h:size(1) ~= expect[1] or h:size(2) ~= expect[2] or h:size(3) ~= expect[3] then
    local e = batched and ("[%d, %d, %d]"):format(expect[1], expect[2], expect[3])
      or ("[%d, %d]"):format(expect[1], expect[3])
    error(("%s: expected %s size %s, got %s"):format(who, what, e,
      shape_str(batched and h or h:squeeze(2))), 4)
  end
  return h
end

-- the recurrence of one layer and direction over a PackedSequence: xw is the input
-- projection of data (sum of lengths, G), bs the batch sizes. Forward, the batch shrinks
-- as sequences end (the finished rows' states are set aside, longest sequences first);
-- in reverse it grows as sequences start, each from its row of the initial state.
local function packed_direction(step, xw, bs, h0, c0, w, reverse)
  local chunks = { split(xw, bs, 1) }
  local T, B = #bs, bs[1]
  local outs = {}
  local h, c
  if not reverse then
    h, c = h0, c0
    local done_h, done_c, cur = {}, {}, B
    for t = 1, T do
      local b = bs[t]
      if b < cur then
        table.insert(done_h, 1, h:narrow(1, b + 1, cur - b)); h = h:narrow(1, 1, b)
        if c then table.insert(done_c, 1, c:narrow(1, b + 1, cur - b)); c = c:narrow(1, 1, b) end
        cur = b
      end
      h, c = step(chunks[t], h, w, c)
      outs[t] = h
    end
    table.insert(done_h, 1, h)
    if c then table.insert(done_c, 1, c) end
    h = #done_h == 1 and h or torch.cat(done_h, 1)
    if c then c = #done_c == 1 and c or torch.cat(done_c, 1) end
  else
    local cur = 0
    for t = T, 1, -1 do
      local b = bs[t]
      if b > cur then
        local hs, cs = h0:narrow(1, cur + 1, b - cur), c0 and c0:narrow(1, cur + 1, b - cur)
        h = h and torch.cat({ h, hs }, 1) or hs
        if c0 then c = c and torch.cat({ c, cs }, 1) or cs end
        cur = b
      end
      h, c = step(chunks[t], h, w, c)
      outs[t] = h
    end
  end
  return torch.cat(outs, 1), h, c
end

-- forward over a PackedSequence: a PackedSequence of the same layout back, and the final
-- states (D * num_layers, B, H) in the batch's original order
function RNNBase:_forward_packed(packed, hx)
  local mode = self.mode
  local who = MODES[mode].class
  local data = packed.data
  if data:dim() ~= 2 or data:size(2) ~= self.input_size then
    error(("%s: a PackedSequence's data must be (sum of lengths, input_size = %d), got %s"):format(
      who, self.input_size, shape_str(data)), 2)
  end
  local w0 = self[self._weight_names[1].w_ih]
  if data.dtype ~= w0.dtype then
    error(("%s: input dtype %s does not match the parameters' dtype %s"):format(who, data.dtype.name, w0.dtype.name), 2)
  end
  local bs = packed:_batch_sizes()
  local B = bs[1]
  local D = self.bidirectional and 2 or 1
  local H = self.hidden_size
  local Hout = self.proj_size > 0 and self.proj_size or H
  local nl = self.num_layers
  local si, ui = packed.sorted_indices, packed.unsorted_indices
  local h0, c0
  -- a given state is in the batch's original order: bring it into the packed (sorted) one
  local function sorted(h) return si and h:index_select(2, si) or h end
  if mode == "LSTM" then
    if hx ~= nil then
      if type(hx) ~= "table" or torch.is_tensor(hx) or hx[1] == nil or hx[2] == nil then
        error("LSTM: hx must be a table {h_0, c_0} of two tensors", 2)
      end
      h0 = sorted(check_hidden(who, hx[1], "hx[1] (h_0)", { D * nl, B, Hout }, true))
      c0 = sorted(check_hidden(who, hx[2], "hx[2] (c_0)", { D * nl, B, H }, true))
    end
  elseif hx ~= nil then
    h0 = sorted(check_hidden(who, hx, "hx", { D * nl, B, H }, true))
  end
  if h0 == nil then h0 = torch.zeros(D * nl, B, Hout, { dtype = data.dtype, device = data.device }) end
  if mode == "LSTM" and c0 == nil then c0 = torch.zeros(D * nl, B, H, { dtype = data.dtype, device = data.device }) end
  local step = STEP[mode]
  local x = data
  local hn, cn = {}, {}
  for layer = 1, nl do
    local outs = {}
    for dir = 1, D do
      local idx = (layer - 1) * D + dir
      local n = self._weight_names[idx]
      local b_ih, b_hh = n.b_ih and self[n.b_ih], n.b_hh and self[n.b_hh]
      local xw = project(mode, x, self[n.w_ih], b_ih, b_hh)
      local w = { H = H, whh_t = self[n.w_hh]:t(), b_hh = mode == "GRU" and b_hh or nil,
                  whr_t = n.w_hr and self[n.w_hr]:t() or nil }
      outs[dir], hn[idx], cn[idx] = packed_direction(step, xw, bs, h0:select(1, idx),
        c0 and c0:select(1, idx), w, dir == 2)
    end
    x = D == 1 and outs[1] or torch.cat(outs, 2)
    if layer < nl and self.dropout > 0 and self.training then x = dropout(x, self.dropout) end
  end
  local h_n = torch.stack(hn, 1)
  local c_n = mode == "LSTM" and torch.stack(cn, 1) or nil
  if ui then
    h_n = h_n:index_select(2, ui)
    if c_n then c_n = c_n:index_select(2, ui) end
  end
  local out = packed:_with_data(x)
  if mode == "LSTM" then return out, { h_n, c_n } end
  return out, h_n
end

-- forward(input, hx=nil): input (L, N, input_size) (batch_first: (N, L, input_size)),
-- unbatched (L, input_size), or a PackedSequence
function RNNBase:forward(...)
  local mode = self.mode
  local who = MODES[mode].class
  local a = FORWARD_SIGS[who](...)
  local input, hx = a.input, a.hx
  if rnn_utils.is_packed(input) then return self:_forward_packed(input, hx) end
  if not torch.is_tensor(input) then
    error(("%s: argument 'input' must be a tensor, got %s"):format(who, type(input)), 2)
  end
  local d = input:dim()
  if d ~= 2 and d ~= 3 then
    error(("%s: expected input to be 2-D (unbatched) or 3-D (batched), got %d-D tensor %s"):format(
      who, d, shape_str(input)), 2)
  end
  if input:size(-1) ~= self.input_size then
    error(("%s: input.size(-1) must be equal to input_size. Expected %d, got %d"):format(
      who, self.input_size, input:size(-1)), 2)
  end
  local w0 = self[self._weight_names[1].w_ih]
  if input.dtype ~= w0.dtype then
    error(("%s: input dtype %s does not match the parameters' dtype %s"):format(
      who, input.dtype.name, w0.dtype.name), 2)
  end
  local batched = d == 3
  local x = batched and input or input:unsqueeze(2)
  -- td: the time dim; x stays in its layout (time-major or batch-major) throughout
  local td = (batched and self.batch_first) and 2 or 1
  local bd = 3 - td
  local L, N = x:size(td), x:size(bd)
  if L == 0 then error(("%s: expected sequence length to be larger than 0"):format(who), 2) end
  local D = self.bidirectional and 2 or 1
  local H = self.hidden_size
  local Hout = self.proj_size > 0 and self.proj_size or H
  local nl = self.num_layers
  local h0, c0
  if mode == "LSTM" then
    if hx ~= nil then
      if type(hx) ~= "table" or torch.is_tensor(hx) or hx[1] == nil or hx[2] == nil then
        error("LSTM: hx must be a table {h_0, c_0} of two tensors", 2)
      end
      h0 = check_hidden(who, hx[1], "hx[1] (h_0)", { D * nl, N, Hout }, batched)
      c0 = check_hidden(who, hx[2], "hx[2] (c_0)", { D * nl, N, H }, batched)
    end
  elseif hx ~= nil then
    h0 = check_hidden(who, hx, "hx", { D * nl, N, H }, batched)
  end
  if h0 == nil then h0 = torch.zeros(D * nl, N, Hout, { dtype = x.dtype, device = x.device }) end
  if mode == "LSTM" and c0 == nil then c0 = torch.zeros(D * nl, N, H, { dtype = x.dtype, device = x.device }) end

  local step = STEP[mode]
  local hn, cn = {}, {}
  for layer = 1, nl do
    local in_size = x:size(3)
    local x2d = x:reshape(L * N, in_size)
    local outs = {}
    for dir = 1, D do
      local idx = (layer - 1) * D + dir
      local n = self._weight_names[idx]
      local w_ih, w_hh = self[n.w_ih], self[n.w_hh]
      local b_ih, b_hh = n.b_ih and self[n.b_ih], n.b_hh and self[n.b_hh]
      local xw = project(mode, x2d, w_ih, b_ih, b_hh)
      xw = td == 1 and xw:view(L, N, -1) or xw:view(N, L, -1)
      if mode == "LSTM" and not n.w_hr and self._fused ~= false then
        outs[dir], hn[idx], cn[idx] = LSTMSeqF:apply(xw, h0:select(1, idx), c0:select(1, idx), w_hh, td, dir == 2)
      else
        local w = { H = H, whh_t = w_hh:t(), b_hh = mode == "GRU" and b_hh or nil,
                    whr_t = n.w_hr and self[n.w_hr]:t() or nil }
        local h = h0:select(1, idx)
        local c = c0 and c0:select(1, idx)
        local xws = unbind(xw, td)
        local hs = {}
        for s = 1, L do
          local t = dir == 1 and s or (L - s + 1)
          h, c = step(xws[t], h, w, c)
          hs[t] = h
        end
        outs[dir] = torch.stack(hs, td)
        hn[idx], cn[idx] = h, c
      end
    end
    x = D == 1 and outs[1] or torch.cat(outs, 3)
    if layer < nl and self.dropout > 0 and self.training then x = dropout(x, self.dropout) end
  end
  local h_n = torch.stack(hn, 1)
  local c_n = mode == "LSTM" and torch.stack(cn, 1) or nil
  if not batched then
    x = x:squeeze(2)
    h_n = h_n:squeeze(2)
    if c_n then c_n = c_n:squeeze(2) end
  end
  if mode == "LSTM" then return x, { h_n, c_n } end
  return x, h_n
end

-- RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=true, batch_first=false,
-- dropout=0, bidirectional=false)
local RNN = RNNBase:extend("RNN")
R.RNN = RNN
function RNN:__init(...)
  local a = SIGS.RNN(...)
  local nl = a.nonlinearity
  local mode
  if nl == "tanh" then mode = "RNN_TANH"
  elseif nl == "relu" then mode = "RNN_RELU"
  else error(("RNN: unknown nonlinearity '%s' (use 'tanh' or 'relu')"):format(tostring(nl)), 3) end
  self:_setup(mode, a)
  self.nonlinearity = nl
end

-- LSTM(input_size, hidden_size, num_layers=1, bias=true, batch_first=false, dropout=0,
-- bidirectional=false, proj_size=0); forward(input, {h_0, c_0}) -> output, {h_n, c_n}
local LSTM = RNNBase:extend("LSTM")
R.LSTM = LSTM
function LSTM:__init(...) self:_setup("LSTM", SIGS.LSTM(...)) end

-- GRU(input_size, hidden_size, num_layers=1, bias=true, batch_first=false, dropout=0, bidirectional=false)
local GRU = RNNBase:extend("GRU")
R.GRU = GRU
function GRU:__init(...) self:_setup("GRU", SIGS.GRU(...)) end

------------------------------------------------------------------------------
-- cells: one step; input (N, input_size) or unbatched (input_size)
------------------------------------------------------------------------------
local RNNCellBase = Module:extend("RNNCellBase")
R.RNNCellBase = RNNCellBase

local CELL_SIGS = {
  RNNCell = class.signature("nn.RNNCell", "input_size, hidden_size, bias=true, nonlinearity='tanh', *, device=nil, dtype=nil"),
  LSTMCell = class.signature("nn.LSTMCell", "input_size, hidden_size, bias=true, *, device=nil, dtype=nil"),
  GRUCell = class.signature("nn.GRUCell", "input_size, hidden_size, bias=true, *, device=nil, dtype=nil"),
}
local CELL_FORWARD_SIGS = {}
for k in pairs(CELL_SIGS) do CELL_FORWARD_SIGS[k] = class.signature("nn." .. k .. ":forward", "input, hx=nil") end

function RNNCellBase:_setup(mode, who, a)
  local input_size, hidden_size = a.input_size, a.hidden_size
  check_int(who, "input_size", input_size, 0)
  check_int(who, "hidden_size", hidden_size, 1)
  self.mode, self._who = mode, who
  self.input_size, self.hidden_size = input_size, hidden_size
  self.bias = a.bias ~= false
  local G = MODES[mode].gates * hidden_size
  self.weight_ih = Parameter(empty(a, G, input_size))
  self.weight_hh = Parameter(empty(a, G, hidden_size))
  if self.bias then
    self.bias_ih = Parameter(empty(a, G))
    self.bias_hh = Parameter(empty(a, G))
  end
  self:reset_parameters()
  to_device(self, a)
end
RNNCellBase.reset_parameters = RNNBase.reset_parameters

function RNNCellBase:extra_repr()
  local s = ("%d, %d"):format(self.input_size, self.hidden_size)
  if not self.bias then s = s .. ", bias=False" end
  if self.nonlinearity and self.nonlinearity ~= "tanh" then
    s = s .. ", nonlinearity='" .. self.nonlinearity .. "'"
  end
  return s
end

local function check_cell_state(who, h, what, batched, N, H)
  if not torch.is_tensor(h) then error(("%s: %s must be a tensor, got %s"):format(who, what, type(h)), 4) end
  local want = batched and 2 or 1
  if h:dim() ~= want then
    error(("%s: expected %s to be %d-D for %d-D input, got %d-D tensor"):format(
      who, what, want, want, h:dim()), 4)
  end
  if not batched then h = h:unsqueeze(1) end
  if h:size(1) ~= N or h:size(2) ~= H then
    error(("%s: expected %s size %s, got %s"):format(who, what,
      batched and ("[%d, %d]"):format(N, H) or ("[%d]"):format(H), shape_str(batched and h or h:squeeze(1))), 4)
  end
  return h
end

function RNNCellBase:forward(...)
  local who, mode = self._who, self.mode
  local a = CELL_FORWARD_SIGS[who](...)
  local input, hx = a.input, a.hx
  if not torch.is_tensor(input) then
    error(("%s: argument 'input' must be a tensor, got %s"):format(who, type(input)), 2)
  end
  local d = input:dim()
  if d ~= 1 and d ~= 2 then
    error(("%s: expected input to be 1-D or 2-D, got %d-D tensor %s"):format(who, d, shape_str(input)), 2)
  end
  if input:size(-1) ~= self.input_size then
    error(("%s: input has inconsistent input_size: got %d expected %d"):format(
      who, input:size(-1), self.input_size), 2)
  end
  if input.dtype ~= self.weight_ih.dtype then
    error(("%s: input dtype %s does not match the parameters' dtype %s"):format(
      who, input.dtype.name, self.weight_ih.dtype.name), 2)
  end
  local batched = d == 2
  local x = batched and input or input:unsqueeze(1)
  local N, H = x:size(1), self.hidden_size
  local h, c
  if mode == "LSTM" then
    if hx ~= nil then
      if type(hx) ~= "table" or torch.is_tensor(hx) or hx[1] == nil or hx[2] == nil then
        error(who .. ": hx must be a table {h_0, c_0} of two tensors", 2)
      end
      h = check_cell_state(who, hx[1], "hx[1] (h_0)", batched, N, H)
      c = check_cell_state(who, hx[2], "hx[2] (c_0)", batched, N, H)
    end
  elseif hx ~= nil then
    h = check_cell_state(who, hx, "hx", batched, N, H)
  end
  if h == nil then h = torch.zeros(N, H, { dtype = x.dtype, device = x.device }) end
  if mode == "LSTM" and c == nil then c = torch.zeros(N, H, { dtype = x.dtype, device = x.device }) end
  local xw = project(mode, x, self.weight_ih, self.bias_ih, self.bias_hh)
  local w = { H = H, whh_t = self.weight_hh:t(), b_hh = mode == "GRU" and self.bias_hh or nil }
  h, c = STEP[mode](xw, h, w, c)
  if not batched then
    h = h:squeeze(1)
    if c then c = c:squeeze(1) end
  end
  if mode == "LSTM" then return h, c end
  return h
end

-- RNNCell(input_size, hidden_size, bias=true, nonlinearity='tanh'); forward(x, h) -> h'
local RNNCell = RNNCellBase:extend("RNNCell")
R.RNNCell = RNNCell
function RNNCell:__init(...)
  local a = CELL_SIGS.RNNCell(...)
  local nl = a.nonlinearity
  local mode
  if nl == "tanh" then mode = "RNN_TANH"
  elseif nl == "relu" then mode = "RNN_RELU"
  else error(("RNNCell: unknown nonlinearity '%s' (use 'tanh' or 'relu')"):format(tostring(nl)), 3) end
  self.nonlinearity = nl
  self:_setup(mode, "RNNCell", a)
end

-- LSTMCell(input_size, hidden_size, bias=true); forward(x, {h, c}) -> h', c'
local LSTMCell = RNNCellBase:extend("LSTMCell")
R.LSTMCell = LSTMCell
function LSTMCell:__init(...) self:_setup("LSTM", "LSTMCell", CELL_SIGS.LSTMCell(...)) end

-- GRUCell(input_size, hidden_size, bias=true); forward(x, h) -> h'
local GRUCell = RNNCellBase:extend("GRUCell")
R.GRUCell = GRUCell
function GRUCell:__init(...) self:_setup("GRU", "GRUCell", CELL_SIGS.GRUCell(...)) end

return R
