-- ext_load.lua PATH — loads the model ext_save.lua saved (which needs nn.Swish and the
-- extension: require "swish_nn" first) and checks its output is the same
local torch = require "torch"
require "nn"
require "swish_nn"
local net = torch.load(arg[1])
local want = torch.load(arg[1] .. ".out")
local got = net(torch.ones(2, 4))
assert((got - want):abs():max():item() == 0, "outputs differ")
print("loaded: same output")
