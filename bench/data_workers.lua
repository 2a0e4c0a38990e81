-- data_workers.lua — does a DataLoader with worker processes keep a training loop fed?
-- The Fashion-MNIST MLP (784-512-256-10, SGD momentum) trains from a map-style dataset
-- whose per-sample transform is deliberately slow: RandomCrop(28, padding 2) and a
-- horizontal flip on each image, plus a busy loop of --work_us microseconds (standing
-- in for decoding or augmentation). Prints training throughput (samples/s, batches
-- after the first --warmup excluded) for each worker count, and the ratio to 0 workers.
--   lutorch bench/data_workers.lua [--work_us 300] [--batches 150] [--workers "0 2"]
local data = require "data"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional
local T = data.transforms

local o = { work_us = 300, batches = 150, warmup = 5, batch = 64, workers = "0 2",
            data = "/usr/share/datasets/fashion-mnist" }
local i = 1
while i <= #arg do
  local k = arg[i]:match("^%-%-([%w_]+)$")
  if not k or o[k] == nil then io.stderr:write("unknown argument " .. arg[i] .. "\n"); os.exit(2) end
  o[k] = type(o[k]) == "number" and tonumber(arg[i + 1]) or arg[i + 1]
  i = i + 2
end

local images = data.read_idx(o.data .. "/train-images-idx3-ubyte.gz")
local labels = data.read_idx(o.data .. "/train-labels-idx1-ubyte.gz"):long() + 1
local now = torch.time

local Augmented = data.Dataset:extend("Augmented")
function Augmented:__init()
  self.crop = T.RandomCrop(28, { padding = 2 })
  self.flip = T.RandomHorizontalFlip()
end
function Augmented:len() return images:size(1) end
function Augmented:get(k)
  local x = self.flip(self.crop(images[k]:view(1, 28, 28):float():div_(255)))
  local t = now()
  while now() - t < o.work_us * 1e-6 do end
  return { x:view(784), labels[k] }
end

local function run(nw)
  torch.manual_seed(0)
  local model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                              nn.Linear(256, 10))
  local opt = optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
  local loader = data.DataLoader(Augmented(), { batch_size = o.batch, shuffle = true, num_workers = nw })
  local n, t0, b = 0, nil, 0
  for batch in loader do
    b = b + 1
    if b == o.warmup + 1 then t0 = now() end
    local x, y = batch[1], batch[2]
    local loss = F.cross_entropy(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    if t0 then n = n + x:size(1) end
    if b == o.warmup + o.batches then break end
  end
  return n / (now() - t0)
end

local base
for w in o.workers:gmatch("%d+") do
  local r = run(tonumber(w))
  base = base or r
  print(("workers %s: %7.0f samples/s  (%.2fx of the first)"):format(w, r, r / base))
end
