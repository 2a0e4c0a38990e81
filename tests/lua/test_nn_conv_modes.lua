-- test_nn_conv_modes.lua — Conv1d/Conv2d padding_mode reflect and replicate
-- against PyTorch with the same weights (skipped where PyTorch is absent).
local T = require "testing"
local P = require "pyref"
local nn = require "nn"

torch.manual_seed(3)
local cases = {
  { "Conv2d", 2, 3, 3, { padding = 1, padding_mode = "reflect" }, { 2, 2, 6, 7 } },
  { "Conv2d", 2, 4, { 3, 2 }, { padding = { 2, 1 }, padding_mode = "replicate", stride = 2 }, { 1, 2, 7, 6 } },
  { "Conv2d", 3, 2, 4, { padding = "same", padding_mode = "reflect" }, { 2, 3, 8, 8 } },
  { "Conv1d", 2, 3, 3, { padding = 2, padding_mode = "replicate", dilation = 2 }, { 2, 2, 9 } },
}

T.test("padding modes print like PyTorch and reject what is not supported", function()
  local m = nn.Conv2d(2, 3, 3, { padding = 1, padding_mode = "reflect" })
  T.eq(tostring(m), "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), padding_mode=reflect)")
  T.raises(function() nn.Conv2d(2, 3, 3, { padding_mode = "circular" }) end, "Conv2d: padding_mode \"circular\" is not supported")
  T.raises(function() nn.ConvTranspose2d(2, 3, 3, { padding_mode = "reflect" }) end, "ConvTranspose2d: padding_mode")
end)

if not P.available() then
  T.skip("padding modes against PyTorch", P.why())
  T.done()
end

T.test("reflect and replicate padding modes match PyTorch, values and gradients", function()
  local inputs, body, outs = {}, {}, {}
  local mods, xs = {}, {}
  for i, c in ipairs(cases) do
    local m = nn[c[1]](c[2], c[3], c[4], c[5]):double()
    local x = torch.randn(c[6], { dtype = torch.float64, requires_grad = true })
    local y = m(x)
    y:pow(2):sum():backward()
    mods[i], xs[i] = m, { x = x, y = y }
    inputs["x" .. i] = x:detach()
    inputs["w" .. i] = m.weight:detach()
    inputs["b" .. i] = m.bias:detach()
    local o = c[5]
    local pad = type(o.padding) == "string" and ("'%s'"):format(o.padding)
      or (type(o.padding) == "table" and ("(%d, %d)"):format(o.padding[1], o.padding[2]) or tostring(o.padding))
    local k = type(c[4]) == "table" and ("(%d, %d)"):format(c[4][1], c[4][2]) or tostring(c[4])
    body[#body + 1] = ("m%d = nn.%s(%d, %d, %s, padding=%s, padding_mode='%s', stride=%d, dilation=%d).double()")
      :format(i, c[1], c[2], c[3], k, pad, o.padding_mode, o.stride or 1, o.dilation or 1)
    body[#body + 1] = ("with torch.no_grad(): m%d.weight.copy_(w%d); m%d.bias.copy_(b%d)"):format(i, i, i, i)
    body[#body + 1] = ("x%d.requires_grad_(); y%d = m%d(x%d); y%d.pow(2).sum().backward()"):format(i, i, i, i, i)
    outs[#outs + 1] = "y" .. i
    outs[#outs + 1] = "x" .. i .. ".grad"
    outs[#outs + 1] = "m" .. i .. ".weight.grad"
  end
  local r = P.run(inputs, table.concat(body, "\n"), outs)
  for i = 1, #cases do
    T.near(xs[i].y:detach():totable(), r[3 * i - 2]:totable(), 1e-10, "output " .. i)
    T.near(xs[i].x.grad:totable(), r[3 * i - 1]:totable(), 1e-10, "input grad " .. i)
    T.near(mods[i].weight.grad:totable(), r[3 * i]:totable(), 1e-10, "weight grad " .. i)
  end
end)

T.done()
