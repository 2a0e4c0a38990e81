-- ext_save.lua PATH — saves a model that uses the swish extension (nn.Swish) to PATH,
-- and its output on a fixed input to PATH.out, for ext_load.lua in another process
local torch = require "torch"
local nn = require "nn"
local Swish = require "swish_nn"
torch.manual_seed(3)
local net = nn.Sequential(nn.Linear(4, 3), Swish(), nn.Linear(3, 2))
torch.save(arg[1], net)
torch.save(arg[1] .. ".out", net(torch.ones(2, 4)))
print("saved")
