-- swish_nn.lua — nn.Swish, a module over the extension's op: require "swish_nn" loads
-- the extension (swish_ext.so, on package.cpath) and defines the class, so a saved model
-- that uses it loads in any process that requires this file first.
local torch = require "torch"
local nn = require "nn"
require "swish_ext"

local Swish = nn.Module:extend("Swish")
function Swish:forward(x) return torch.ops.swish_ext.swish(x) end
return Swish
