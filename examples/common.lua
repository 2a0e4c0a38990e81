-- common.lua — what the examples share: command-line options, the Fashion-MNIST
-- tensors, and a loss curve drawn with gnuplot. Each example finds this file
-- beside itself:  package.path = arg[0]:match("^(.*/)") .. "?.lua;" .. package.path
local data = require "data"
local C = {}

-- The device the examples compute on (--device, default cpu): "cpu", "cuda" or "cuda:N".
-- Where CUDA is not available, --device cuda says why and exits with status 1.
function C.check_device(dev)
  if dev == "cpu" then return dev end
  if not (dev == "cuda" or dev:match("^cuda:%d+$")) then
    io.stderr:write("--device expects cpu, cuda or cuda:N, got '" .. dev .. "'\n"); os.exit(2)
  end
  if not torch.cuda.is_available() then
    io.stderr:write("--device " .. dev .. ": CUDA is not available: " .. tostring(torch.cuda.unavailable_reason()) .. "\n")
    os.exit(1)
  end
  local n = tonumber(dev:match(":(%d+)$") or "0")
  if n >= torch.cuda.device_count() then
    io.stderr:write(("--device %s: there are %d CUDA devices (cuda:0 .. cuda:%d)\n"):format(dev,
      torch.cuda.device_count(), torch.cuda.device_count() - 1))
    os.exit(1)
  end
  return dev
end

-- options: { {name, default, help}, ... }; returns a table name -> value.
-- "--name value" or "--name=value"; booleans are flags ("--quick"). Every example also
-- takes --device (C.check_device), unless its spec has its own.
function C.options(argv, usage, spec)
  local has_device = false
  for _, s in ipairs(spec) do has_device = has_device or s[1] == "device" end
  if not has_device then
    spec[#spec + 1] = { "device", "cpu", "where to compute: cpu, cuda or cuda:N" }
  end
  if spec.amp then
    spec[#spec + 1] = { "amp", "none", "mixed precision: none, bf16 or f16 (torch.autocast; f16 with a GradScaler)" }
  end
  local o, by = {}, {}
  for _, s in ipairs(spec) do o[s[1]] = s[2]; by[s[1]] = s end
  local function help()
    print(usage .. "\n\noptions:")
    for _, s in ipairs(spec) do
      print(("  --%-14s %s (default %s)"):format(s[1]:gsub("_", "-"), s[3], tostring(s[2])))
    end
    os.exit(0)
  end
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "-h" or a == "--help" then help() end
    local k, v = a:match("^%-%-([%w%-_]+)=(.*)$")
    if not k then k = a:match("^%-%-([%w%-_]+)$") end
    if not k then io.stderr:write("unexpected argument '" .. a .. "' (try --help)\n"); os.exit(2) end
    k = k:gsub("%-", "_")
    local s = by[k]
    if not s then io.stderr:write("unknown option --" .. k .. " (try --help)\n"); os.exit(2) end
    if type(s[2]) == "boolean" and v == nil then v = true
    elseif v == nil then i = i + 1; v = argv[i] end
    if type(s[2]) == "number" then
      local n = tonumber(v)
      if not n then io.stderr:write("--" .. k .. " expects a number\n"); os.exit(2) end
      v = n
    elseif type(s[2]) == "boolean" and type(v) == "string" then v = (v == "true" or v == "1") end
    o[k] = v
    i = i + 1
  end
  if not has_device then C.check_device(o.device) end
  if spec.amp and o.amp ~= "none" and o.amp ~= "bf16" and o.amp ~= "f16" then
    io.stderr:write("--amp expects none, bf16 or f16, got '" .. tostring(o.amp) .. "'\n"); os.exit(2)
  end
  return o
end

-- One training step under --amp (C.options with spec.amp): loss_fn() runs in a
-- torch.autocast region on o.device (matrix products and convolutions in bfloat16 or
-- float16, the loss in float32; the weights and their gradients stay float32), the
-- backward and the step outside it; float16 scales the loss with a GradScaler so small
-- gradients do not underflow. Returns the loss as a number.
function C.amp_step(o, opt, loss_fn)
  local dtype = ({ bf16 = torch.bfloat16, f16 = torch.float16 })[o.amp]
  if not dtype then
    local loss = loss_fn()
    opt:zero_grad(); loss:backward(); opt:step()
    return loss:item()
  end
  local dev = o.device:match("^(%a+)")
  local loss = torch.autocast(dev, { dtype = dtype }, loss_fn)
  opt:zero_grad()
  if dtype == torch.float16 then
    C._scaler = C._scaler or torch.amp.GradScaler(dev)
    C._scaler:scale(loss):backward()
    C._scaler:step(opt)
    C._scaler:update()
  else
    loss:backward()
    opt:step()
  end
  return loss:item()
end

-- Fashion-MNIST as float tensors in [0, 1] and 1-based int64 labels. Each
-- split's bytes are let go (and the allocator's cache emptied) before the next
-- is read, so the peak holds one uint8 copy, not two.
function C.fashion_mnist(root)
  local function load(train)
    local ds = data.FashionMNIST(root, { train = train })
    local x, y = ds.data:to(torch.float32):div_(255), ds.targets
    ds.data = nil
    ds = nil
    collectgarbage()
    torch.cpu_empty_cache()
    return x, y
  end
  local xtr, ytr = load(true)
  local xte, yte = load(false)
  return xtr, ytr, xte, yte
end

local function have(cmd)
  local p = io.popen("command -v " .. cmd .. " 2>/dev/null")
  local r = p and p:read("a") or ""
  if p then p:close() end
  return r ~= ""
end

-- a PNG of one or more curves: series = { {title, {y1, y2, ...}}, ... }
function C.plot(path, title, xlabel, series)
  if not have("gnuplot") then
    print(("(no loss curve picture: gnuplot is not installed; apt-get install gnuplot-nox, then rerun to get %s)"):format(path))
    return false
  end
  local dat = os.tmpname()
  local f = assert(io.open(dat, "w"))
  local n = 0
  for _, s in ipairs(series) do n = math.max(n, #s[2]) end
  for i = 1, n do
    local row = { tostring(i) }
    for _, s in ipairs(series) do row[#row + 1] = s[2][i] and ("%.6g"):format(s[2][i]) or "NaN" end
    f:write(table.concat(row, " "), "\n")
  end
  f:close()
  local plots = {}
  for j, s in ipairs(series) do plots[j] = ("'%s' using 1:%d with lines title '%s'"):format(dat, j + 1, s[1]) end
  local g = io.popen("gnuplot", "w")
  g:write(("set terminal png size 800,500\nset output '%s'\nset title '%s'\nset xlabel '%s'\nset grid\nplot %s\n")
    :format(path, title, xlabel, table.concat(plots, ", ")))
  local ok = g:close()
  os.remove(dat)
  if ok then print("loss curve: " .. path) end
  return ok
end

-- save a checkpoint when torch.save exists in this build, and say where
function C.checkpoint(path, obj)
  if type(torch.save) ~= "function" then
    print("(no checkpoint: torch.save is not in this build yet)")
    return false
  end
  torch.save(path, obj)
  print("checkpoint: " .. path)
  return true
end

-- --start DIR: the initial weights and first-epoch batch order that
-- bench/fmnist_start.py writes from PyTorch's trainer, so both train from one start.
function C.load_start(model, dir)
  torch.no_grad(function()
    for _, e in ipairs(model:named_parameters()) do
      local name, p = e[1], e[2]
      local src = data.read_npy(dir .. "/" .. name .. ".npy")
      assert(src.dtype == p.dtype and src:numel() == p:numel(),
             "--start: " .. name .. ".npy does not match the model's " .. name)
      p:copy_(src:view(p.shape))
    end
  end)
  print("start: weights from " .. dir)
end

function C.start_order(dir, n)
  local perm = data.read_npy(dir .. "/perm.npy")
  assert(perm:numel() == n, "--start: perm.npy does not have one entry per training image")
  return perm + 1   -- PyTorch's 0-based row numbers
end

-- peak resident set size in MiB (VmHWM)
function C.peak_rss_mib()
  local f = io.open("/proc/self/status")
  if not f then return 0 end
  for l in f:lines() do
    local kb = l:match("^VmHWM:%s+(%d+)")
    if kb then f:close(); return tonumber(kb) / 1024 end
  end
  f:close()
  return 0
end

-- The share of xte's rows that `predict` (a batch of images -> logits) classifies
-- as yte says, 1000 rows at a time, each batch moved to `device` (default cpu).
function C.accuracy(predict, xte, yte, device)
  local correct = 0
  device = device or "cpu"
  torch.no_grad(function()
    for i = 1, xte:size(1), 1000 do
      local n = math.min(1000, xte:size(1) - i + 1)
      local pred = predict(xte:narrow(1, i, n):to(device)):argmax(2)
      correct = correct + pred:eq(yte:narrow(1, i, n):to(device)):sum():item()
    end
  end)
  return correct / xte:size(1)
end

-- The Fashion-MNIST training loop of the examples (and of bench-ref's PyTorch
-- trainer): a fresh permutation each epoch, batches by index_select, a progress
-- bar, then one line per epoch with the training time (batches only), the mean
-- loss and the test accuracy; at the end the peak RSS, the loss curve and a
-- checkpoint. step(x, y) trains on one batch, moved to o.device, and returns its loss (a
-- number); evaluate() returns the test accuracy.
function C.fit(o, xtr, ytr, step, evaluate, title, checkpoint)
  local n = xtr:size(1)
  local first_perm = (o.start or "") ~= "" and C.start_order(o.start, n)
  local nbatches = (n + o.batch - 1) // o.batch
  local limit = o.max_batches > 0 and math.min(o.max_batches, nbatches) or nbatches
  local losses, accs = {}, {}
  for epoch = 1, o.epochs do
    local perm = epoch == 1 and first_perm or torch.randperm(n)
    local total = 0
    local bar = not o.quiet and data.progress(limit, { desc = ("epoch %d"):format(epoch) })
    local start = torch.time()
    for b = 1, limit do
      local idx = perm:narrow(1, (b - 1) * o.batch + 1, math.min(o.batch, n - (b - 1) * o.batch))
      local l = step(xtr:index_select(1, idx):to(o.device or "cpu"), ytr:index_select(1, idx):to(o.device or "cpu"))
      total = total + l
      losses[#losses + 1] = l
      if bar then bar:update(); bar:set("loss", l) end
    end
    local dt = torch.time() - start
    if bar then bar:close() end
    local acc = evaluate()
    accs[#accs + 1] = acc
    print(("epoch %d: train %.2f s | %.3f ms/batch | mean loss %.4f | test acc %.4f"):format(
      epoch, dt, 1e3 * dt / limit, total / limit, acc))
  end
  print(("peak RSS %.0f MiB"):format(C.peak_rss_mib()))
  C.plot(o.out .. "_loss.png", title .. ": training loss per batch", "batch", { { "loss", losses } })
  checkpoint.accuracy = accs
  C.checkpoint(o.out .. ".ckpt", checkpoint)
  return losses, accs
end

return C
