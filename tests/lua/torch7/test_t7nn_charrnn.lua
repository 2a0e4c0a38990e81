-- test_t7nn_charrnn.lua — examples/torch7/char_rnn.lua (char-rnn's LSTM from Torch7 mode's
-- nn primitives, clone_many_times, backpropagation through time by hand) trains, and gives
-- the same losses as the same model in PyTorch mode with autograd
-- (examples/torch7/char_rnn_pytorch.lua) from the same initial parameters.
local T = require "testing"
local S = T.scratch()

local build = os.getenv("BUILD") or "build"
local prog = build .. "/lutorch"
local text = {}
for i = 1, 60 do text[#text + 1] = ("the quick brown fox %d jumps over the lazy dog; "):format(i % 7) end
local data = S.write("text.txt", table.concat(text))

local function run(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end
local function losses(out)
  local l = {}
  for k, v in out:gmatch("iter (%d+) loss ([%d%.e%-]+)") do l[tonumber(k)] = tonumber(v) end
  return l
end

T.test("Torch7-mode char-rnn and its PyTorch-mode twin print the same losses", function()
  local common = " -data " .. data .. " -iters 6 -print_every 1 -rnn_size 16 -seq_length 6 -batch_size 3 -learning_rate 0.5"
  local out1, ok1 = run(prog .. " --torch7 examples/torch7/char_rnn.lua -optim sgd -save_init " .. S.path("p0") .. common)
  T.ok(ok1, out1)
  local out2, ok2 = run(prog .. " examples/torch7/char_rnn_pytorch.lua -init " .. S.path("p0") .. common)
  T.ok(ok2, out2)
  local a, b = losses(out1), losses(out2)
  T.eq(#a, 6, out1)
  for k = 1, 6 do
    T.ok(b[k] and math.abs(a[k] - b[k]) < 1e-9, ("iter %d: %s vs %s"):format(k, tostring(a[k]), tostring(b[k])))
  end
  T.ok(a[6] < a[1], "the loss goes down")
end)

T.test("char-rnn trains with adam (the loss falls well below log(vocabulary))", function()
  local out, ok = run(prog .. " --torch7 examples/torch7/char_rnn.lua -data " .. data
    .. " -iters 60 -print_every 60 -rnn_size 32 -seq_length 10 -batch_size 4 -learning_rate 0.01")
  T.ok(ok, out)
  local l = losses(out)
  local vocab = tonumber(out:match("(%d+) distinct"))
  T.ok(l[1] > 0.9 * math.log(vocab), out)
  T.ok(l[60] < 0.6 * l[1], out)
end)

T.test("char_rnn.lua refuses an unknown optimizer and a wrong parameter file", function()
  local out, ok = run(prog .. " --torch7 examples/torch7/char_rnn.lua -data " .. data .. " -optim nope -iters 1")
  T.ok(not ok and out:find("-optim must be adam, rmsprop or sgd", 1, true), out)
  S.write("bad", "1\n2\n")
  out, ok = run(prog .. " --torch7 examples/torch7/char_rnn.lua -data " .. data .. " -init " .. S.path("bad") .. " -iters 1")
  T.ok(not ok and out:find("has 2 numbers", 1, true), out)
end)

S.remove()
T.done()
