-- x.new in Torch7 mode. Torch7 code calls a tensor's `new` both as a method, x:new(...), and as
-- a plain function, x.new(...): rosenbrock.lua of optim's tests does x.new(d - 1) and
-- x.new():resizeAs(x). lutorch's Torch7 mode (src/vm/lua/torch7.lua) has only the method form,
-- which takes its first argument as the tensor whose type to make. Until that is fixed there,
-- require "optim" makes `x.new` a constructor of x's type that takes either form: x itself as
-- the first argument (the method call) is dropped, anything else goes to the constructor
-- (torch.DoubleTensor(...)). Nothing changes in PyTorch mode or where x.new already works.
local torch = require "torch"

local M = {}

function M.install()
  if torch.compat() ~= "torch7" then return end
  local probe = torch.Tensor(1)
  local ok = pcall(function() return probe.new(2) end)
  if ok then return end                                 -- the binding handles it already
  local mt = getmetatable(probe)
  local index = mt and rawget(mt, "__index")
  if type(index) ~= "function" or rawget(mt, "__optim_new") then return end
  rawset(mt, "__optim_new", true)
  mt.__index = function(x, k)
    if k == "new" then
      local name = x:type():gsub("^torch%.", "")
      local ctor = torch[name]
      return function(a, ...)
        if rawequal(a, x) then return ctor(...) end
        if a == nil and select("#", ...) == 0 then return ctor() end
        return ctor(a, ...)
      end
    end
    return index(x, k)
  end
end

return M
