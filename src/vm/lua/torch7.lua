-- torch7.lua — the Lua half of Torch7 mode (src/vm/lt7.c installs the
-- generated Torch7 binding, then calls torch._t7_install). Nothing here runs
-- in PyTorch mode.
local torch = ...

function torch._t7_install(torch)
end
