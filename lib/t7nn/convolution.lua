-- t7nn/convolution.lua
local torch = require "torch"
local nn = require "t7nn.env"

return nn
