-- CUDA softmax, log_softmax, layer_norm, batch_norm and nll_loss (src/cuda/nnred.c over
-- src/cuda/kernels/nnred.cu), forward and backward, compared with the CPU's over floating
-- dtypes, dims, layouts, empty and 0-d inputs, reductions, weights and ignore_index, errors,
-- and gradients through softmax, layer_norm, batch_norm, cross_entropy on cuda tensors; the CUDA kernels
-- ran, not the CPU fallback.
local T = require "testing"
local C = require "cuda.check_reduce"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda nn reductions", "torch.cuda is not available")
  T.done()
end

local check, gen = C.check, C.gen
local FL = { torch.float32, torch.float64, torch.float16, torch.bfloat16 }

T.test("softmax and log_softmax over dtypes, dims, layouts", function()
  for _, dt in ipairs(FL) do
    local views = {
      { "4x5x6", gen(dt, { 4, 5, 6 }) },
      { "transposed", gen(dt, { 6, 5 }):t() },
      { "stepped", gen(dt, { 8, 7, 6 }):unfold(2, 1, 2):select(4, 1) },
      { "1025", gen(dt, { 2, 1025 }) },
      { "0", gen(dt, { 0, 3 }) },
      { "0-d", gen(dt, {}) },
    }
    for _, v in ipairs(views) do
      for _, d in ipairs({ 1, -1, 2 }) do
        if d <= math.max(v[2]:dim(), 1) then
          local what = ("%s %s dim %d"):format(dt.name, v[1], d)
          check("softmax " .. what, function(t) return t:softmax(d) end, { v[2] })
          check("log_softmax " .. what, function(t) return t:log_softmax(d) end, { v[2] })
        end
      end
    end
  end
  local big = torch.tensor({ { 1000, 1001, -math.huge }, { -math.huge, -math.huge, -math.huge }, { 0 / 0, 1, 2 } })
  check("softmax extremes", function(t) return t:softmax(2) end, { big })
  check("log_softmax extremes", function(t) return t:log_softmax(2) end, { big })
  check("softmax dtype=", function(t) return torch.softmax(t, 2, torch.float64) end, { gen(torch.float32, { 3, 4 }) })
  check("log_softmax f64 dtype=f16", function(t) return torch.log_softmax(t, 1, torch.float16) end,
        { gen(torch.float64, { 3, 4 }) })
  check("log_softmax int dtype=", function(t) return torch.log_softmax(t, 1, torch.float32) end,
        { torch.tensor({ 1, 2, 3 }) })
  local o = torch.zeros(1):cuda()
  local x = gen(torch.float32, { 3, 4 })
  torch.softmax(x:cuda(), 2, { out = o })
  C.close(o, x:softmax(2), "softmax out=")
end)

T.test("softmax backwards", function()
  for _, dt in ipairs(FL) do
    local y = gen(dt, { 4, 7 }):softmax(2)
    local g = gen(dt, { 4, 7 })
    check("softmax_backward " .. dt.name, function(a, b) return torch.softmax_backward(a, b, 2) end, { g, y })
    check("log_softmax_backward " .. dt.name, function(a, b) return torch.log_softmax_backward(a, b, 1) end,
          { g, y:log() })
    check("softmax_backward transposed " .. dt.name, function(a, b) return torch.softmax_backward(a, b, 1) end,
          { g:t(), y:t() })
  end
  check("softmax_backward mixed dtypes", function(a, b) return torch.softmax_backward(a, b, 2) end,
        { gen(torch.float32, { 3, 5 }), gen(torch.float16, { 3, 5 }):softmax(2) })
end)

T.test("softmax errors are the CPU's", function()
  check("softmax int", function(t) return t:softmax(1) end, { torch.tensor({ 1, 2 }) })
  check("softmax bad dim", function(t) return t:softmax(3) end, { torch.zeros(2, 2) })
  check("softmax_backward shapes", function(a, b) return torch.softmax_backward(a, b, 1) end,
        { torch.zeros(2, 3), torch.zeros(3, 2) })
end)

T.test("layer_norm forward and backward kernels", function()
  for _, dt in ipairs(FL) do
    local x = gen(dt, { 4, 3, 5 })
    local w, b = gen(dt, { 5 }), gen(dt, { 5 })
    for _, case in ipairs({ { "affine", { 5 }, w, b }, { "weight", { 5 }, w, nil }, { "bias", { 5 }, nil, b },
                            { "plain 2 dims", { 3, 5 }, nil, nil } }) do
      local what = dt.name .. " " .. case[1]
      local function ln(t, ww, bb) return torch.native_layer_norm(t, case[2], ww, bb, 1e-5) end
      local args = { x, case[3] or false, case[4] or false }
      local function fwd(k)
        return function(t, ww, bb) local r = { ln(t, ww or nil, bb or nil) } return r[k] end
      end
      check("layer_norm out " .. what, fwd(1), args)
      check("layer_norm mean " .. what, fwd(2), args)
      check("layer_norm rstd " .. what, fwd(3), args)
    end
    check("layer_norm transposed " .. dt.name, function(t) return (torch.native_layer_norm(t, { 4 }, nil, nil, 1e-5)) end,
          { gen(dt, { 4, 6 }):t() })
    local _, m, r = torch.native_layer_norm(x, { 5 }, w, b, 1e-5)
    local g = gen(dt, { 4, 3, 5 })
    check("layer_norm_backward " .. dt.name,
          function(gg, xx, mm, rr, ww) return torch.layer_norm_backward(gg, xx, mm, rr, ww, { 5 }) end, { g, x, m, r, w })
    check("layer_norm_backward no weight " .. dt.name,
          function(gg, xx, mm, rr) return torch.layer_norm_backward(gg, xx, mm, rr, nil, { 5 }) end, { g, x, m, r })
    check("layer_norm_backward_weight " .. dt.name,
          function(gg, xx, mm, rr) return torch.layer_norm_backward_weight(gg, xx, mm, rr, { 5 }) end, { g, x, m, r })
  end
  check("layer_norm empty", function(t) return (torch.native_layer_norm(t, { 5 }, nil, nil, 1e-5)) end,
        { torch.zeros(0, 5) }, { no_count = true })
  check("layer_norm bad shape", function(t) return (torch.native_layer_norm(t, { 4 }, nil, nil, 1e-5)) end,
        { torch.zeros(3, 5) })
  check("layer_norm int", function(t) return (torch.native_layer_norm(t, { 2 }, nil, nil, 1e-5)) end,
        { torch.tensor({ 1, 2 }) })
end)

T.test("nll_loss forward and backward kernels", function()
  for _, dt in ipairs(FL) do
    local x2 = gen(dt, { 6, 5 }):log_softmax(2)
    local t2 = torch.tensor({ 1, 5, 3, 3, 2, 4 })
    local w5 = torch.rand(5):to(dt)
    local x4 = gen(dt, { 2, 5, 3, 2 })
    local t4 = torch.randint(1, 6, { 2, 3, 2 })
    for _, red in ipairs({ "mean", "sum", "none" }) do
      for _, case in ipairs({ { "plain", nil, -100 }, { "weight", w5, -100 }, { "ignore", w5, 3 } }) do
        local what = ("%s %s %s"):format(dt.name, red, case[1])
        local args = { x2, t2, case[2] or false }
        check("nll_loss " .. what, function(x, t, w) return (torch.nll_loss_forward(x, t, w or nil, red, case[3])) end, args)
        check("nll_loss total_weight " .. what,
              function(x, t, w) local _, tw = torch.nll_loss_forward(x, t, w or nil, red, case[3]) return tw end, args)
        check("nll_loss 4-d " .. what, function(x, t, w) return (torch.nll_loss_forward(x, t, w or nil, red, case[3])) end,
              { x4, t4, case[2] or false })
        local out, tw = torch.nll_loss_forward(x2, t2, case[2], red, case[3])
        local go = red == "none" and gen(dt, { 6 }) or torch.tensor(1.5):to(dt)
        check("nll_loss_backward " .. what,
              function(g, x, t, w, ttw) return torch.nll_loss_backward(g, x, t, w or nil, red, case[3], ttw) end,
              { go, x2, t2, case[2] or false, tw })
      end
    end
    check("nll_loss 1-d input " .. dt.name, function(x, t) return (torch.nll_loss_forward(x, t, nil, "mean", -100)) end,
          { gen(dt, { 5 }), torch.tensor(2) })
  end
  check("nll_loss all ignored", function(x, t) return (torch.nll_loss_forward(x, t, nil, "mean", 2)) end,
        { gen(torch.float32, { 2, 3 }), torch.tensor({ 2, 2 }) })
  check("nll_loss bad class", function(x, t) return (torch.nll_loss_forward(x, t, nil, "mean", -100)) end,
        { gen(torch.float32, { 2, 3 }), torch.tensor({ 1, 4 }) })
  check("nll_loss bad reduction", function(x, t) return (torch.nll_loss_forward(x, t, nil, "max", -100)) end,
        { gen(torch.float32, { 2, 3 }), torch.tensor({ 1, 2 }) })
  check("nll_loss empty batch", function(x, t) return (torch.nll_loss_forward(x, t, nil, "sum", -100)) end,
        { gen(torch.float32, { 0, 3 }), torch.zeros(0):long() })
end)

T.test("batch_norm forward (training, eval), running stats and backward kernels", function()
  for _, dt in ipairs(FL) do
    local x3 = gen(dt, { 4, 3, 5 })
    local x2 = gen(dt, { 6, 3 })
    local w, b = gen(dt, { 3 }), gen(dt, { 3 })
    for _, x in ipairs({ x3, x2, gen(dt, { 2, 3, 2, 2 }):transpose(3, 4) }) do
      local what = dt.name .. " " .. tostring(x:size())
      for k = 1, 3 do
        check("batch_norm training out " .. k .. " " .. what, function(t, ww, bb)
          local r = { torch.native_batch_norm(t, ww, bb, nil, nil, true, 0.1, 1e-5) } return r[k] end, { x, w, b })
        check("batch_norm eval out " .. k .. " " .. what, function(t, ww, rm, rv)
          local r = { torch.native_batch_norm(t, ww, nil, rm, rv, false, 0.1, 1e-5) } return r[k] end,
          { x, w, torch.randn(3):to(dt), torch.rand(3):to(dt) + 0.5 })
      end
      -- the running statistics are updated in place
      local rm, rv = torch.randn(3):to(dt), torch.rand(3):to(dt) + 0.5
      local drm, drv = rm:cuda(), rv:cuda()
      torch.native_batch_norm(x, nil, nil, rm, rv, true, 0.3, 1e-5)
      c._kernel_counts(true)
      torch.native_batch_norm(x:cuda(), nil, nil, drm, drv, true, 0.3, 1e-5)
      local n = c._kernel_counts(true)
      T.ok(n.cpu == 0 and n.host > 0, "batch_norm running stats: the CUDA kernels ran")
      C.close(drm, rm, "running_mean " .. what)
      C.close(drv, rv, "running_var " .. what)
      local _, m, is = torch.native_batch_norm(x, w, b, nil, nil, true, 0.1, 1e-5)
      local g = (torch.randn(x:size()) * 3):to(dt)
      for _, tr in ipairs({ true, false }) do
        check("batch_norm_backward " .. tostring(tr) .. " " .. what,
              function(gg, xx, ww, mm, ii) return torch.batch_norm_backward(gg, xx, ww, mm, ii, tr) end, { g, x, w, m, is })
      end
      check("batch_norm_backward no weight " .. what,
            function(gg, xx, mm, ii) return torch.batch_norm_backward(gg, xx, nil, mm, ii, true) end, { g, x, m, is })
      check("batch_norm_backward_weight " .. what,
            function(gg, xx, mm, ii) return torch.batch_norm_backward_weight(gg, xx, mm, ii) end, { g, x, m, is })
      check("batch_norm_backward_bias " .. what,
            function(gg, xx) return torch.batch_norm_backward_bias(gg, xx) end, { g, x })
    end
  end
  check("batch_norm one value per channel", function(t) return (torch.native_batch_norm(t, nil, nil, nil, nil, true, 0.1, 1e-5)) end,
        { torch.zeros(1, 3) })
  check("batch_norm eval without running stats", function(t)
    return (torch.native_batch_norm(t, nil, nil, nil, nil, false, 0.1, 1e-5)) end, { torch.zeros(2, 3) })
  check("batch_norm bad weight", function(t, w) return (torch.native_batch_norm(t, w, nil, nil, nil, true, 0.1, 1e-5)) end,
        { torch.zeros(2, 3), torch.ones(4) })
end)

T.test("gradients through softmax, layer_norm, cross_entropy on cuda match the CPU's", function()
  local x = torch.randn(4, 6):double()
  local w, b = torch.randn(6):double(), torch.randn(6):double()
  local t = torch.tensor({ 1, 6, 3, 2 })
  local fs = {
    softmax = function(a) return (torch.softmax(a, 2) * torch.arange(1, 7):double():to(a.device)):sum() end,
    log_softmax = function(a) return (torch.log_softmax(a, 1):pow(2)):sum() end,
    layer_norm = function(a, ww, bb) return (torch.layer_norm(a, { 6 }, ww, bb):pow(3)):sum() end,
    cross_entropy = function(a, _, _, tt) return torch.cross_entropy(a, tt) end,
    cross_entropy_weighted = function(a, ww, _, tt) return torch.cross_entropy(a, tt, ww:abs(), "sum") end,
    batch_norm = function(a, ww, bb) return (torch.batch_norm(a, ww, bb, nil, nil, true):pow(3)):sum() end,
  }
  for name, f in pairs(fs) do
    local a, aw, ab = x:clone():requires_grad_(), w:clone():requires_grad_(), b:clone():requires_grad_()
    f(a, aw, ab, t):backward()
    local d, dw, db = x:cuda():requires_grad_(), w:cuda():requires_grad_(), b:cuda():requires_grad_()
    f(d, dw, db, t:cuda()):backward()
    C.close(d.grad, a.grad, name .. " grad", 1e-10)
    if name == "layer_norm" or name == "batch_norm" then
      C.close(dw.grad, aw.grad, name .. " weight grad", 1e-10)
      C.close(db.grad, ab.grad, name .. " bias grad", 1e-10)
    end
  end
  T.ok(torch.autograd.gradcheck(function(a) return torch.log_softmax(a, 2) end, { x:cuda():requires_grad_() }),
       "gradcheck log_softmax on cuda")
  -- the kernels ran for the backward too
  local a = x:cuda():requires_grad_()
  local loss = torch.cross_entropy(a, t:cuda())
  c._kernel_counts(true)
  loss:backward()
  T.ok(c._kernel_counts(true).host > 0, "cross_entropy backward ran CUDA kernels")
end)

T.done()
