-- char_lm.lua — a character-level language model: embedding -> LSTM -> linear, trained to
-- predict the next byte of a text file with AdamW and gradient-norm clipping, then asked
-- to write some text of its own (temperature sampling with torch.multinomial).
--   lutorch examples/char_lm.lua /usr/share/games/fortunes/fortunes
--   lutorch examples/char_lm.lua --text FILE --steps 2000 --hidden 256 --temperature 0.7
-- Any text file works; Debian's fortunes-min package installs
-- /usr/share/games/fortunes/fortunes, used when no file is given.
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local nn = require "nn"
local optim = require "optim"
local data = require "data"
local F = nn.functional

-- the text file may come first, without an option name
local argv, positional = {}, nil
for i = 1, #arg do
  if i == 1 and arg[i]:sub(1, 1) ~= "-" then positional = arg[i] else argv[#argv + 1] = arg[i] end
end
local o = common.options(argv, "usage: lutorch examples/char_lm.lua [TEXTFILE] [options]", {
  { "text", "", "the text file to learn (or give it first, without --text)" },
  { "steps", 1000, "training steps" },
  { "batch", 32, "sequences per batch" },
  { "seq", 64, "characters per training sequence" },
  { "embed", 32, "embedding size" },
  { "hidden", 256, "LSTM hidden size" },
  { "layers", 1, "LSTM layers" },
  { "lr", 3e-3, "AdamW learning rate" },
  { "weight_decay", 0.01, "AdamW weight decay" },
  { "clip", 1.0, "clip the gradient norm to this" },
  { "log_every", 100, "print the mean loss every this many steps" },
  { "sample_len", 400, "characters to generate after training" },
  { "temperature", 0.8, "sampling temperature (lower: safer, higher: wilder)" },
  { "prime", "", "text to start the sample with (default: the text's first line)" },
  { "seed", 0, "random seed" },
  { "threads", 0, "compute threads (0: lutorch's default)" },
  { "out", "char_lm", "prefix of the loss-curve picture and the checkpoint" },
  { "quiet", false, "no progress bar" },
})
if o.threads > 0 then torch.set_num_threads(o.threads) end
torch.manual_seed(o.seed)

local path = positional or (o.text ~= "" and o.text) or nil
if not path then
  for _, p in ipairs({ "/usr/share/games/fortunes/fortunes", "/usr/share/fortune/fortunes" }) do
    local f = io.open(p)
    if f then f:close(); path = p; break end
  end
end
if not path then
  io.stderr:write("char_lm: no text file given, and Debian's fortunes text isn't installed\n"
    .. "  give one: lutorch examples/char_lm.lua FILE (or --text FILE); any text will do,\n"
    .. "  e.g. /usr/share/common-licenses/GPL-3; or apt-get install fortunes-min\n")
  os.exit(2)
end
local f, err = io.open(path, "rb")
if not f then io.stderr:write("char_lm: " .. err .. "\n"); os.exit(2) end
local text = f:read("a")
f:close()
text = text:gsub("\n%%\n", "\n\n")       -- fortune files separate entries with "%" lines
if #text < o.seq + 2 then
  io.stderr:write(("char_lm: %s has %d characters; need more than --seq %d\n"):format(path, #text, o.seq))
  os.exit(2)
end

-- the vocabulary: the bytes that occur, numbered 1..V in byte order
local seen = {}
for i = 1, #text do seen[text:byte(i)] = true end
local itos, stoi = {}, {}
for b = 0, 255 do if seen[b] then itos[#itos + 1] = b; stoi[b] = #itos end end
local V = #itos
local codes = {}
for i = 1, #text do codes[i] = stoi[text:byte(i)] end
local all = torch.tensor(codes)                                   -- int64, 1-based class numbers
codes = nil
-- the last 10% is held out to measure how well the model generalises
local nval = math.max(o.seq + 2, #text // 10)
if nval > #text // 2 then nval = 0 end
local train = all:narrow(1, 1, #text - nval)
local val = nval > 0 and all:narrow(1, #text - nval + 1, nval) or nil
print(("text: %s, %d characters, %d distinct | train %d, held out %d"):format(path, #text, V, train:size(1), nval))

local CharLM = nn.Module:extend("CharLM")
function CharLM:__init(vocab, embed, hidden, layers)
  self.embed = nn.Embedding(vocab, embed)
  self.lstm = nn.LSTM(embed, hidden, { num_layers = layers, batch_first = true })
  self.head = nn.Linear(hidden, vocab)
end
-- x: [B, T] character numbers; state: {h, c} or nil. Returns logits [B, T, V] and the state.
function CharLM:forward(x, state)
  local h, st = self.lstm(self.embed(x), state)
  return self.head(h), st
end

local model = CharLM(V, o.embed, o.hidden, o.layers):to(o.device)
print(model)
local nparams = 0
for _, p in ipairs(model:parameters()) do nparams = nparams + p:numel() end
print(("%d parameters"):format(nparams))
local opt = optim.AdamW(model:parameters(), { lr = o.lr, weight_decay = o.weight_decay })

-- a batch of B random windows of T + 1 characters: inputs are the first T, targets the last T
local steps_ahead = torch.arange(0, o.seq + 1):view(1, -1)       -- [1, T+1]
local function batch_from(src, B)
  local starts = torch.randint(1, src:size(1) - o.seq + 1, { B, 1 })
  local win = src:index_select(1, (starts + steps_ahead):view(-1)):view(B, o.seq + 1):to(o.device)
  return win:narrow(2, 1, o.seq), win:narrow(2, 2, o.seq)
end

local function loss_on(x, y)
  local logits = model(x)
  return F.cross_entropy(logits:reshape(-1, V), y:reshape(-1))
end

local losses = {}
local bar = not o.quiet and data.progress(o.steps, { desc = "train" })
local start = torch.time()
local window = 0
for step = 1, o.steps do
  local x, y = batch_from(train, o.batch)
  local loss = loss_on(x, y)
  opt:zero_grad()
  loss:backward()
  nn.utils.clip_grad_norm_(model:parameters(), o.clip)
  opt:step()
  local l = loss:item()
  losses[step] = l
  window = window + l
  if bar then bar:update(); bar:set("loss", l) end
  if step % o.log_every == 0 or step == o.steps then
    local k = (step - 1) % o.log_every + 1
    if bar and bar.tty then io.write("\r\27[K") end
    print(("step %d: loss %.4f (%.3f bits/char) | %.1f ms/step"):format(
      step, window / k, window / k / math.log(2), 1e3 * (torch.time() - start) / step))
    window = 0
  end
end
local dt = torch.time() - start
if bar then bar:close() end

local val_loss
if val then
  model:eval()
  torch.no_grad(function()
    local tot, n = 0, 0
    torch.manual_seed(o.seed + 1)
    for _ = 1, 10 do
      local x, y = batch_from(val, o.batch)
      tot = tot + loss_on(x, y):item(); n = n + 1
    end
    val_loss = tot / n
  end)
  model:train()
end
print(("trained %d steps in %.2f s (%.1f ms/step) | final loss %.4f | held-out loss %s"):format(
  o.steps, dt, 1e3 * dt / o.steps, losses[o.steps], val_loss and ("%.4f"):format(val_loss) or "-"))

-- sampling: feed the prime, then one character at a time from softmax(logits / temperature)
local function sample(prime, n, temperature)
  model:eval()
  local out = {}
  torch.no_grad(function()
    local ids = {}
    for i = 1, #prime do ids[i] = stoi[prime:byte(i)] or 1 end
    local logits, state = model(torch.tensor({ ids }):to(o.device))            -- [1, #prime, V]
    local last = logits:select(2, -1):squeeze(1)                    -- [V]
    for i = 1, n do
      local probs = F.softmax(last / temperature, -1)
      local c = torch.multinomial(probs:cpu(), 1):item()         -- drawn on the CPU on every device
      out[i] = string.char(itos[c])
      logits, state = model(torch.tensor({ { c } }):to(o.device), state)
      last = logits:view(-1)
    end
  end)
  model:train()
  return prime .. table.concat(out)
end

local prime = o.prime ~= "" and o.prime or (text:match("^([^\n]+)\n") or text:sub(1, 8)):sub(1, 40)
print(("sample (temperature %g, %d characters after the prime %q):"):format(o.temperature, o.sample_len, prime))
print(sample(prime, o.sample_len, o.temperature))
print(("peak RSS %.0f MiB"):format(common.peak_rss_mib()))
common.plot(o.out .. "_loss.png", "character LM: training loss per step", "step", { { "loss", losses } })
common.checkpoint(o.out .. ".ckpt", { model = model:state_dict(), itos = itos, loss = losses })
