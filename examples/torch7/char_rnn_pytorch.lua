-- char_rnn_pytorch.lua — char_rnn.lua's model and training in PyTorch mode: the same LSTM
-- (gates input, forget, output, candidate), the same batches and plain SGD with element
-- clipping, but gradients from autograd instead of Torch7's hand-written backward passes.
-- Given char_rnn.lua's initial parameters it prints the same losses:
--   lutorch --torch7 examples/torch7/char_rnn.lua -optim sgd -learning_rate 0.5 -save_init /tmp/p0
--   lutorch examples/torch7/char_rnn_pytorch.lua -init /tmp/p0 -learning_rate 0.5
-- (the options and their defaults are char_rnn.lua's).
local nn = require "nn"
local F = nn.functional
torch.set_default_dtype(torch.float64)   -- char_rnn.lua runs in Torch7 mode's default, double

local opt = { data = "", rnn_size = 128, seq_length = 32, batch_size = 16, iters = 300,
              learning_rate = 2e-3, grad_clip = 5, print_every = 25, init = "" }
local i = 1
while i <= #arg do
  local k = arg[i]:match("^%-(.+)$")
  if not k or opt[k] == nil then error("char_rnn_pytorch: unknown option " .. arg[i]) end
  local v = arg[i + 1]
  opt[k] = type(opt[k]) == "number" and assert(tonumber(v), "char_rnn_pytorch: -" .. k .. " takes a number") or v
  i = i + 2
end
if opt.init == "" then error("char_rnn_pytorch: give -init FILE (from char_rnn.lua -save_init FILE)") end

local function read_text(path)
  local candidates = path ~= "" and { path } or { "/usr/share/games/fortunes/fortunes", "README.md" }
  for _, p in ipairs(candidates) do
    local f = io.open(p, "rb")
    if f then local s = f:read("a"); f:close(); return s end
  end
  error("char_rnn_pytorch: cannot read " .. table.concat(candidates, " or "))
end
local text = read_text(opt.data)
local chars, vocab = {}, {}
for c in text:gmatch(".") do chars[c] = true end
for c in pairs(chars) do vocab[#vocab + 1] = c end
table.sort(vocab)
local index = {}
for j, c in ipairs(vocab) do index[c] = j end
local V, B, T, R = #vocab, opt.batch_size, opt.seq_length, opt.rnn_size
local list = {}
for j = 1, #text do list[j] = index[text:sub(j, j)] end
local codes = torch.tensor(list, { dtype = torch.int64 })
local nbatches = math.floor((#text - 1) / (B * T))

local function batch(k)
  local start = ((k - 1) % nbatches) * B * T
  local x = codes:narrow(1, start + 1, B * T):view(B, T)
  local y = codes:narrow(1, start + 2, B * T):view(B, T)
  return x, y
end

-- the parameters, in char_rnn.lua's getParameters order
local shapes = { { V, R }, { 4 * R, R }, { 4 * R }, { 4 * R, R }, { 4 * R }, { V, R }, { V } }
local values = {}
for line in io.lines(opt.init) do values[#values + 1] = tonumber(line) end
local flat = torch.tensor(values)
local params, at = {}, 0
for j, s in ipairs(shapes) do
  local n = 1
  for _, d in ipairs(s) do n = n * d end
  params[j] = flat:narrow(1, at + 1, n):view(s):clone():requires_grad_(true)
  at = at + n
end
if at ~= flat:numel() then error(("char_rnn_pytorch: %s has %d numbers, the model %d"):format(opt.init, flat:numel(), at)) end
local emb_w, wi, bi, wh, bh, wo, bo = table.unpack(params)

for k = 1, opt.iters do
  local x, y = batch(k)
  local c, h = torch.zeros(B, R), torch.zeros(B, R)
  local loss = 0
  for t = 1, T do
    local e = F.embedding(x:select(2, t), emb_w)
    local a = F.linear(e, wi, bi) + F.linear(h, wh, bh)
    local ig = torch.sigmoid(a:narrow(2, 1, R))
    local fg = torch.sigmoid(a:narrow(2, R + 1, R))
    local og = torch.sigmoid(a:narrow(2, 2 * R + 1, R))
    local g = torch.tanh(a:narrow(2, 3 * R + 1, R))
    c = fg * c + ig * g
    h = og * torch.tanh(c)
    loss = loss + F.nll_loss(F.log_softmax(F.linear(h, wo, bo), 2), y:select(2, t))
  end
  loss = loss / T
  loss:backward()
  torch.no_grad(function()
    for _, p in ipairs(params) do
      p.grad:clamp_(-opt.grad_clip, opt.grad_clip)
      p:add_(p.grad, { alpha = -opt.learning_rate })
      p.grad:zero_()
    end
  end)
  if k == 1 or k % opt.print_every == 0 or k == opt.iters then
    print(("iter %d loss %.12f"):format(k, loss:item()))
  end
end
