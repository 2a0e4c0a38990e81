-- t7nn/table.lua
local torch = require "torch"
local nn = require "t7nn.env"

return nn
