-- char_rnn.lua — a character-level LSTM language model written as Torch7 scripts wrote
-- it (Karpathy's char-rnn): an LSTM cell built from nn primitives (Linear, Narrow,
-- Sigmoid, Tanh, CAddTable, CMulTable in table containers), one clone of the cell per
-- time step sharing the parameters (clone_many_times), backpropagation through time by
-- hand, and optim over the flat parameters of getParameters.
--   lutorch --torch7 examples/torch7/char_rnn.lua [-data FILE] [-iters 300] [-rnn_size 128]
-- examples/torch7/char_rnn_pytorch.lua is the same model in PyTorch mode (autograd): given the
-- same initial parameters (-save_init here, -init there) both print the same losses.
require "nn"
require "optim"

local cmd = torch.CmdLine()
cmd:text("Train a character-level LSTM on a text file")
cmd:option("-data", "", "the text file (default: Debian's fortunes, else the README)")
cmd:option("-rnn_size", 128, "LSTM hidden size")
cmd:option("-seq_length", 32, "time steps per batch")
cmd:option("-batch_size", 16, "sequences per batch")
cmd:option("-iters", 300, "training iterations")
cmd:option("-optim", "adam", "adam | rmsprop | sgd")
cmd:option("-learning_rate", 2e-3, "learning rate")
cmd:option("-grad_clip", 5, "clip each gradient element to [-grad_clip, grad_clip]")
cmd:option("-seed", 123, "random seed")
cmd:option("-print_every", 25, "print the loss every this many iterations")
cmd:option("-save_init", "", "write the initial flat parameters to this file (text)")
cmd:option("-init", "", "read the initial flat parameters from this file (text)")
local opt = cmd:parse(arg)
torch.manualSeed(opt.seed)

-- the text and its vocabulary
local function read_text(path)
  local candidates = path ~= "" and { path } or { "/usr/share/games/fortunes/fortunes", "README.md" }
  for _, p in ipairs(candidates) do
    local f = io.open(p, "rb")
    if f then local s = f:read("a"); f:close(); return s end
  end
  error("char_rnn: cannot read " .. table.concat(candidates, " or "))
end
local text = read_text(opt.data)
local chars, vocab = {}, {}
for c in text:gmatch(".") do chars[c] = true end
for c in pairs(chars) do vocab[#vocab + 1] = c end
table.sort(vocab)
local index = {}
for i, c in ipairs(vocab) do index[c] = i end
local V, B, T, R = #vocab, opt.batch_size, opt.seq_length, opt.rnn_size
local codes = torch.LongTensor(#text)
for i = 1, #text do codes[i] = index[text:sub(i, i)] end
print(("%d characters, %d distinct"):format(#text, V))

-- batch k: B windows of T+1 characters, the inputs and the next characters as targets
local nbatches = math.floor((#text - 1) / (B * T))
if nbatches < 1 then error("char_rnn: the text is too short for one batch of " .. B .. "x" .. T) end
local function batch(k)
  local start = ((k - 1) % nbatches) * B * T
  local x, y = torch.LongTensor(B, T), torch.LongTensor(B, T)
  for b = 1, B do
    local from = start + (b - 1) * T + 1
    x[b]:copy(codes:narrow(1, from, T))
    y[b]:copy(codes:narrow(1, from + 1, T))
  end
  return x, y
end

-- one LSTM step from containers: {x, prev_c, prev_h} -> {next_c, next_h}; gates in the order
-- input, forget, output, candidate
local function lstm(input_size, rnn_size)
  local function select(i) return nn.SelectTable(i) end
  local function gate(k, f)
    return nn.Sequential():add(select(1)):add(nn.Narrow(2, (k - 1) * rnn_size + 1, rnn_size)):add(f())
  end
  local function product(a, b)
    return nn.Sequential():add(nn.ConcatTable():add(select(a)):add(select(b))):add(nn.CMulTable())
  end
  local preactivations = nn.Sequential()
    :add(nn.ConcatTable()
      :add(nn.Sequential():add(select(1)):add(nn.Linear(input_size, 4 * rnn_size)))   -- i2h
      :add(nn.Sequential():add(select(3)):add(nn.Linear(rnn_size, 4 * rnn_size))))    -- h2h
    :add(nn.CAddTable())
  return nn.Sequential()
    :add(nn.ConcatTable():add(preactivations):add(select(2)))            -- {all, prev_c}
    :add(nn.ConcatTable()                                                -- {i, f, o, g, prev_c}
      :add(gate(1, nn.Sigmoid)):add(gate(2, nn.Sigmoid)):add(gate(3, nn.Sigmoid))
      :add(gate(4, nn.Tanh)):add(select(2)))
    :add(nn.ConcatTable()                                                -- {next_c, o}
      :add(nn.Sequential():add(nn.ConcatTable():add(product(2, 5)):add(product(1, 4))):add(nn.CAddTable()))
      :add(select(3)))
    :add(nn.ConcatTable()                                                -- {next_c, next_h}
      :add(select(1))
      :add(nn.Sequential()
        :add(nn.ConcatTable():add(select(2)):add(nn.Sequential():add(select(1)):add(nn.Tanh())))
        :add(nn.CMulTable())))
end

local protos = {
  embed = nn.LookupTable(V, R),
  rnn = lstm(R, R),
  softmax = nn.Sequential():add(nn.Linear(R, V)):add(nn.LogSoftMax()),
  criterion = nn.ClassNLLCriterion(),
}
-- one container for the flat parameters (its order: embed, rnn, softmax)
local all = nn.Sequential():add(protos.embed):add(protos.rnn):add(protos.softmax)
local params, grads = all:getParameters()
params:uniform(-0.08, 0.08)
if opt.init ~= "" then
  local f = assert(io.open(opt.init, "r"))
  local i = 0
  for line in f:lines() do i = i + 1; params[i] = tonumber(line) end
  f:close()
  if i ~= params:nElement() then error(("char_rnn: %s has %d numbers, the model %d"):format(opt.init, i, params:nElement())) end
end
if opt.save_init ~= "" then
  local f = assert(io.open(opt.save_init, "w"))
  for i = 1, params:nElement() do f:write(("%.17g\n"):format(params[i])) end
  f:close()
end
print(("%d parameters"):format(params:nElement()))

-- T copies of a module sharing its parameters and their gradients (each keeps its own
-- output and gradInput for its time step)
local function clone_many_times(net, n)
  local p, g
  if net.parameters then p, g = net:parameters() end   -- criteria have none
  local mem = torch.MemoryFile("w"):binary()
  mem:writeObject(net)
  local clones = {}
  for t = 1, n do
    local reader = torch.MemoryFile(mem:storage(), "r"):binary()
    local clone = reader:readObject()
    reader:close()
    if p then
      local cp, cg = clone:parameters()
      for i = 1, #p do cp[i]:set(p[i]); cg[i]:set(g[i]) end
    end
    clones[t] = clone
  end
  mem:close()
  return clones
end
local clones = {}
for name, proto in pairs(protos) do clones[name] = clone_many_times(proto, T) end

local zero = torch.zeros(B, R)
local current = 1   -- the batch feval trains on
local function feval(x)
  if x ~= params then params:copy(x) end
  grads:zero()
  local inputs, targets = batch(current)
  local c, h, emb, pred = { [0] = zero }, { [0] = zero }, {}, {}
  local loss = 0
  for t = 1, T do
    emb[t] = clones.embed[t]:forward(inputs:select(2, t))
    local out = clones.rnn[t]:forward({ emb[t], c[t - 1], h[t - 1] })
    c[t], h[t] = out[1], out[2]
    pred[t] = clones.softmax[t]:forward(h[t])
    loss = loss + clones.criterion[t]:forward(pred[t], targets:select(2, t))
  end
  loss = loss / T
  local dc, dh = torch.zeros(B, R), torch.zeros(B, R)
  for t = T, 1, -1 do
    local dpred = clones.criterion[t]:backward(pred[t], targets:select(2, t)):clone():div(T)
    dh:add(clones.softmax[t]:backward(h[t], dpred))
    local d = clones.rnn[t]:backward({ emb[t], c[t - 1], h[t - 1] }, { dc, dh })
    clones.embed[t]:backward(inputs:select(2, t), d[1])
    dc, dh = d[2]:clone(), d[3]:clone()
  end
  grads:clamp(-opt.grad_clip, opt.grad_clip)
  return loss, grads
end

local method = optim[opt.optim]
if not method or not ({ adam = 1, rmsprop = 1, sgd = 1 })[opt.optim] then
  error("char_rnn: -optim must be adam, rmsprop or sgd (got " .. opt.optim .. ")")
end
local config = { learningRate = opt.learning_rate }
local t0 = torch.tic()
for k = 1, opt.iters do
  current = k
  local _, fs = method(feval, params, config)
  if k == 1 or k % opt.print_every == 0 or k == opt.iters then
    print(("iter %d loss %.12f"):format(k, fs[1]))
  end
end
print(("%.2f s"):format(torch.toc(t0)))
