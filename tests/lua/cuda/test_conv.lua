-- test_conv.lua — conv2d, its backwards, conv_transpose2d and the 2-D pools on CUDA tensors
-- (src/cuda/conv.c, pool.c over src/cuda/kernels/conv.cu and the cuBLAS seam), compared
-- with the CPU's result; each check also says that the CUDA kernels ran (host/device launch
-- counts, cuBLAS calls) and the CPU's kernel did not. The same file runs on a real GPU.
local T = require "testing"
local c = torch.cuda
local F = require("nn").functional

if not c.is_available() then
  T.skip("cuda conv", "torch.cuda is not available: " .. tostring(c.reason or "?"))
  T.done()
  return
end

local function close(got, want, tol, what)
  T.eq(tostring(got.device):sub(1, 4), "cuda", what .. ": device")
  T.eq(got.dtype, want.dtype, what .. ": dtype")
  T.eq(tostring(got.shape), tostring(want.shape), what .. ": shape")
  if want:numel() == 0 then return end
  local g, w = got:cpu():double(), want:double()
  local gn, wn = g:ne(g), w:ne(w)                 -- NaNs where the CPU has them
  T.eq(T.fmt(gn:reshape(-1):tolist()), T.fmt(wn:reshape(-1):tolist()), what .. ": NaNs")
  g, w = g:masked_fill(gn, 0), w:masked_fill(wn, 0)
  local err = (g - w):abs():max():item() / (1 + w:abs():max():item())
  T.ok(err <= tol, ("%s: error %g > %g"):format(what, err, tol))
end

local TOL = { [torch.float32] = 2e-5, [torch.float64] = 1e-12 }

-- f on CPU and cuda copies of args; results (one tensor or a table of them) compared
local function check(what, f, args, opts)
  opts = opts or {}
  local dargs = {}
  for i, t in ipairs(args) do dargs[i] = type(t) == "userdata" and t:cuda() or t end
  local want = f(table.unpack(args))
  c._kernel_counts(true); c._blas_calls(true)
  local got = f(table.unpack(dargs))
  local n, calls = c._kernel_counts(true), c._blas_calls(true)
  if torch.is_tensor(want) then want, got = { want }, { got } end
  for i = 1, #want do
    local tol = want[i].dtype == torch.int64 and 0 or TOL[want[i].dtype] or 1e-5
    close(got[i], want[i], tol, what .. " [" .. i .. "]")
  end
  T.eq(n.cpu, 0, what .. ": the CPU fallback ran")
  if not opts.empty then T.ok(n.host + n.device > 0, what .. ": no CUDA kernel ran") end
  if opts.blas then T.ok(calls > 0, what .. ": no cuBLAS call") end
end

local DT = { torch.float32, torch.float64 }

T.test("conv2d: stride, padding, dilation, groups, bias, unbatched, dtypes", function()
  local cases = {
    { x = { 2, 3, 7, 7 }, w = { 4, 3, 3, 3 } },
    { x = { 2, 3, 7, 8 }, w = { 4, 3, 3, 2 }, stride = { 2, 1 }, padding = { 1, 2 } },
    { x = { 1, 4, 9, 9 }, w = { 6, 2, 3, 3 }, groups = 2, dilation = 2, padding = 1 },
    { x = { 3, 6, 5, 5 }, w = { 6, 1, 3, 3 }, groups = 6, padding = 1 },      -- depthwise
    { x = { 2, 3, 5, 5 }, w = { 5, 3, 1, 1 } },                                -- pointwise
    { x = { 3, 7, 7 }, w = { 2, 3, 3, 3 }, stride = 2 },                        -- unbatched
    { x = { 1, 1, 31, 31 }, w = { 1, 1, 5, 5 }, stride = 3, padding = 2 },
    { x = { 0, 3, 5, 5 }, w = { 4, 3, 3, 3 } },                                -- no images
  }
  for _, dt in ipairs(DT) do
    for i, cs in ipairs(cases) do
      local x, w = torch.randn(cs.x):to(dt), torch.randn(cs.w):to(dt)
      local b = torch.randn(cs.w[1]):to(dt)
      local function f(x, w, b)
        return F.conv2d(x, w, b, cs.stride or 1, cs.padding or 0, cs.dilation or 1, cs.groups or 1)
      end
      check(("conv2d case %d %s"):format(i, tostring(dt)), f, { x, w, b }, { blas = cs.x[1] ~= 0, empty = cs.x[1] == 0 })
      check(("conv2d case %d no bias"):format(i), function(x, w) return f(x, w, nil) end, { x, w },
            { empty = cs.x[1] == 0 })
    end
  end
  -- a non-contiguous input
  check("conv2d transposed input", function(x, w) return F.conv2d(x, w) end,
        { torch.randn(2, 3, 8, 6):transpose(3, 4), torch.randn(4, 3, 3, 3) }, { blas = true })
end)

T.test("conv2d gradients on cuda match the CPU's", function()
  local cases = {
    { x = { 2, 3, 7, 7 }, w = { 4, 3, 3, 3 }, stride = 1, padding = 1, dilation = 1, groups = 1 },
    { x = { 2, 4, 9, 8 }, w = { 6, 2, 3, 2 }, stride = { 2, 1 }, padding = { 1, 0 }, dilation = { 1, 2 }, groups = 2 },
    { x = { 1, 3, 6, 6 }, w = { 3, 1, 3, 3 }, stride = 2, padding = 0, dilation = 1, groups = 3 },
  }
  for i, cs in ipairs(cases) do
    local function grads(dev)
      torch.manual_seed(i)
      local x = torch.randn(cs.x):to(dev):requires_grad_()
      local w = torch.randn(cs.w):to(dev):requires_grad_()
      local b = torch.randn(cs.w[1]):to(dev):requires_grad_()
      local y = F.conv2d(x, w, b, cs.stride, cs.padding, cs.dilation, cs.groups)
      y:backward(torch.randn(y.shape):to(dev))   -- only the conv's own backward ops run
      return { y:detach(), x.grad, w.grad, b.grad }
    end
    local want = grads("cpu")
    c._kernel_counts(true)
    local got = grads("cuda")
    local n = c._kernel_counts(true)
    for k = 1, 4 do close(got[k], want[k], 2e-5, ("conv grads case %d [%d]"):format(i, k)) end
    T.eq(n.cpu, 0, "conv backward: the CPU fallback ran")
  end
  -- the backward ops themselves
  local gy, w, x = torch.randn(2, 4, 5, 5), torch.randn(4, 3, 3, 3), torch.randn(2, 3, 7, 7)
  check("conv2d_backward_input", function(g, w) return torch.conv2d_backward_input(g, w, { 2, 3, 7, 7 }) end,
        { gy, w }, { blas = true })
  check("conv2d_backward_weight", function(g, x) return torch.conv2d_backward_weight(g, x, { 4, 3, 3, 3 }) end,
        { gy, x }, { blas = true })
  local x64 = torch.randn(1, 2, 5, 5):double():cuda():requires_grad_()
  local w64 = torch.randn(3, 2, 3, 3):double():cuda():requires_grad_()
  T.ok(torch.autograd.gradcheck(function(a, b) return F.conv2d(a, b, nil, 2, 1) end, { x64, w64 }), "gradcheck conv2d")
end)

T.test("conv_transpose2d", function()
  for _, dt in ipairs(DT) do
    check("conv_transpose2d " .. tostring(dt), function(x, w, b) return F.conv_transpose2d(x, w, b, 2, 1, 1) end,
          { torch.randn(2, 4, 5, 5):to(dt), torch.randn(4, 3, 3, 3):to(dt), torch.randn(3):to(dt) }, { blas = true })
    check("conv_transpose2d groups", function(x, w) return F.conv_transpose2d(x, w, nil, 1, 0, 0, 2) end,
          { torch.randn(1, 4, 4, 4):to(dt), torch.randn(4, 2, 2, 2):to(dt) }, { blas = true })
  end
end)

T.test("an nn.Conv2d model's training step on cuda matches the CPU", function()
  local nn = require "nn"
  local optim = require "optim"
  local function make()
    torch.manual_seed(3)
    return nn.Sequential(nn.Conv2d(1, 4, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3),
                         nn.ReLU(), nn.Flatten(), nn.Linear(6 * 2 * 2, 3))
  end
  local m1, m2 = make(), make():cuda()
  torch.manual_seed(9)
  local x, y = torch.randn(5, 1, 8, 8), torch.randint(1, 4, { 5 })
  local loss_fn = nn.CrossEntropyLoss()
  local o1 = optim.SGD(m1:parameters(), { lr = 0.1, momentum = 0.9 })
  local o2 = optim.SGD(m2:parameters(), { lr = 0.1, momentum = 0.9 })
  c._blas_calls(true)
  for _ = 1, 3 do
    o1:zero_grad(); o2:zero_grad()
    local l1, l2 = loss_fn(m1(x), y), loss_fn(m2(x:cuda()), y:cuda())
    T.near(l2:item(), l1:item(), 1e-5, "loss")
    l1:backward(); l2:backward()
    o1:step(); o2:step()
  end
  T.ok(c._blas_calls(true) > 0, "the model ran cuBLAS")
  local p1, p2 = m1:parameters(), m2:parameters()
  for i = 1, #p1 do close(p2[i]:detach(), p1[i]:detach(), 1e-5, "param " .. i) end
end)

T.test("max pools: values, 1-based plane indices, ceil_mode, dilation, padding, backward", function()
  local cases = {
    { k = 2 }, { k = 3, s = 2, p = 1 }, { k = { 3, 2 }, s = { 2, 1 }, p = { 1, 0 }, d = { 2, 1 } },
    { k = 3, s = 2, ceil = true }, { k = 2, s = 1 },
  }
  for _, dt in ipairs(DT) do
    for i, cs in ipairs(cases) do
      local x = torch.randn(2, 3, 9, 8):to(dt)
      check(("max_pool2d case %d"):format(i), function(x)
        return { torch.max_pool2d_with_indices(x, cs.k, cs.s, cs.p or 0, cs.d or 1, cs.ceil or false) }
      end, { x })
      local function grad(dev)
        local xx = x:to(dev):requires_grad_()
        local y = F.max_pool2d(xx, cs.k, cs.s, cs.p or 0, cs.d or 1, cs.ceil or false)
        torch.manual_seed(1)
        y:backward(torch.randn(y.shape):to(dt):to(dev))
        return xx.grad
      end
      c._kernel_counts(true)
      local g = grad("cuda")
      T.eq(c._kernel_counts(true).cpu, 0, "max_pool2d backward fell back")
      close(g, grad("cpu"), TOL[dt], ("max_pool2d grad case %d"):format(i))
    end
  end
  -- ties keep the first, NaN wins
  local x = torch.tensor({ { { 1, 1, 0 / 0, 2 }, { 1, 1, 3, 2 } } })
  check("max_pool2d ties and NaN", function(x) return { torch.max_pool2d_with_indices(x, 2) } end, { x })
  check("adaptive_max_pool2d", function(x) return { F.adaptive_max_pool2d(x, { 3, 4 }, true) } end,
        { torch.randn(2, 3, 7, 9) })
  check("unbatched max_pool2d", function(x) return { torch.max_pool2d_with_indices(x, 2) } end, { torch.randn(3, 6, 6) })
  T.raises(function()
    torch.max_pool2d_backward(torch.ones(1, 1, 1, 1):cuda(), torch.tensor({ { { { 99 } } } }):cuda(), { 1, 1, 2, 2 })
  end, "outside the input plane")
end)

T.test("average pools and their backward", function()
  local cases = {
    { k = 2 }, { k = 3, s = 2, p = 1 }, { k = 3, s = 2, p = 1, inc = false }, { k = 3, s = 2, ceil = true },
    { k = { 2, 3 }, s = { 1, 2 }, p = { 1, 1 }, div = 5 },
  }
  for _, dt in ipairs(DT) do
    for i, cs in ipairs(cases) do
      local x = torch.randn(2, 3, 9, 8):to(dt)
      local inc = cs.inc == nil and true or cs.inc
      local function f(x) return F.avg_pool2d(x, cs.k, cs.s, cs.p or 0, cs.ceil or false, inc, cs.div) end
      check(("avg_pool2d case %d"):format(i), f, { x })
      local function grad(dev)
        local xx = x:to(dev):requires_grad_()
        local y = f(xx)
        torch.manual_seed(1)
        y:backward(torch.randn(y.shape):to(dt):to(dev))
        return xx.grad
      end
      c._kernel_counts(true)
      local g = grad("cuda")
      T.eq(c._kernel_counts(true).cpu, 0, "avg_pool2d backward fell back")
      close(g, grad("cpu"), TOL[dt], ("avg_pool2d grad case %d"):format(i))
    end
  end
  for _, os in ipairs({ { 1, 1 }, { 3, 4 }, { 7, 9 }, { 5, 2 } }) do
    local x = torch.randn(2, 3, 7, 9)
    check("adaptive_avg_pool2d " .. T.fmt(os), function(x) return F.adaptive_avg_pool2d(x, os) end, { x })
    local function grad(dev)
      local xx = x:to(dev):requires_grad_()
      local y = F.adaptive_avg_pool2d(xx, os)
      torch.manual_seed(1)
      y:backward(torch.randn(y.shape):to(dev))
      return xx.grad
    end
    close(grad("cuda"), grad("cpu"), 2e-5, "adaptive_avg_pool2d grad " .. T.fmt(os))
  end
  local x64 = torch.randn(1, 2, 5, 5):double():cuda():requires_grad_()
  T.ok(torch.autograd.gradcheck(function(a) return F.avg_pool2d(a, 3, 2, 1) end, { x64 }), "gradcheck avg_pool2d")
end)

T.test("pad: constant, reflect, replicate, negative pads, dtypes, backward", function()
  local x = torch.randn(2, 3, 5, 6)
  local cases = {
    { { 1, 2 }, "constant", 0.5 }, { { 1, 2, 2, 1 }, "constant", -1 }, { { 2, 1, 0, 3, 1, 1 }, "constant", 0 },
    { { -1, 2, 1, -2 }, "constant", 3 }, { { 2, 3, 1, 1 }, "reflect" }, { { 2, 3, 4, 1 }, "reflect" },
    { { 1, 1, 2, 2 }, "replicate" }, { { 3, 0, 0, 4 }, "replicate" },
  }
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    for i, cs in ipairs(cases) do
      local xx = x:to(dt)
      local function f(t) return F.pad(t, cs[1], cs[2], cs[3] or 0) end
      check(("pad case %d %s"):format(i, tostring(dt)), f, { xx })
      local function grad(dev)
        local t = xx:detach():clone():to(dev):requires_grad_()
        local y = f(t)
        torch.manual_seed(2)
        y:backward(torch.randn(y.shape):to(dt):to(dev))
        return t.grad
      end
      c._kernel_counts(true)
      local g = grad("cuda")
      T.eq(c._kernel_counts(true).cpu, 0, "pad backward fell back")
      close(g, grad("cpu"), TOL[dt], ("pad grad case %d"):format(i))
    end
  end
  for _, dt in ipairs({ torch.int64, torch.int32, torch.uint8, torch.bool, torch.float16, torch.bfloat16 }) do
    local xx = (torch.randn(2, 3, 4) * 5):to(dt)
    check("pad constant " .. tostring(dt), function(t) return F.pad(t, { 1, 2, 1, 0 }, "constant", 1) end, { xx })
  end
  check("pad 1-d", function(t) return F.pad(t, { 2, 3 }, "constant", 7) end, { torch.randn(4) })
  check("pad non-contiguous", function(t) return F.pad(t, { 1, 1, 1, 1 }, "reflect") end,
        { torch.randn(2, 6, 5):transpose(2, 3) })
end)

T.test("upsample nearest and bilinear, sizes and scale factors, backward", function()
  local x = torch.randn(2, 3, 5, 7)
  local cases = {
    { size = { 10, 14 } }, { size = { 3, 4 } }, { size = { 8, 9 } }, { scale = { 1.7, 2.5 } }, { size = { 1, 1 } },
  }
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    for _, mode in ipairs({ "nearest", "bilinear" }) do
      for _, ac in ipairs(mode == "bilinear" and { false, true } or { false }) do
        for i, cs in ipairs(cases) do
          if not (ac and cs.scale) then
            local what = ("upsample %s ac=%s case %d %s"):format(mode, tostring(ac), i, tostring(dt))
            local function f(t)
              local o = { size = cs.size, scale_factor = cs.scale, mode = mode }
              if mode == "bilinear" then o.align_corners = ac end
              return F.interpolate(t, o)
            end
            local xx = x:to(dt)
            check(what, f, { xx })
            local function grad(dev)
              local t = xx:detach():clone():to(dev):requires_grad_()
              local y = f(t)
              torch.manual_seed(3)
              y:backward(torch.randn(y.shape):to(dt):to(dev))
              return t.grad
            end
            c._kernel_counts(true)
            local g = grad("cuda")
            T.eq(c._kernel_counts(true).cpu, 0, what .. ": backward fell back")
            close(g, grad("cpu"), TOL[dt], what .. " grad")
          end
        end
      end
    end
  end
end)

T.test("bad input gives the CPU's errors", function()
  local cases = {
    function(d) return F.conv2d(torch.randn(1, 3, 5, 5):to(d), torch.randn(4, 2, 3, 3):to(d)) end,
    function(d) return F.conv2d(torch.randn(1, 3, 2, 2):to(d), torch.randn(4, 3, 3, 3):to(d)) end,
    function(d) return F.max_pool2d(torch.randn(1, 3, 2, 2):to(d), 3) end,
    function(d) return F.avg_pool2d(torch.randn(1, 3, 4, 4):to(d), 2, 2, 2) end,
  }
  for i, f in ipairs(cases) do
    local okc, ec = pcall(f, "cpu")
    local okd, ed = pcall(f, "cuda")
    T.ok(not okc and not okd, "case " .. i .. " raises")
    T.eq(tostring(ed):match(": ([^:]*)$"), tostring(ec):match(": ([^:]*)$"), "case " .. i .. " message")
  end
end)

T.done()
