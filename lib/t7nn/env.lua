-- t7nn/env.lua — the nn table of Torch7 mode, made once. Torch7's nn was the global `nn`
-- and torch.class("nn.Foo", ...) puts its classes there, so the table is global first.
local nn = {}
rawset(_G, "nn", nn)
return nn
