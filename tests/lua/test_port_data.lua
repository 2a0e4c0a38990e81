-- data: PyTorch loops and calls that port as written, and the ways they went silently wrong:
-- nested loops over one loader, ds[{{first, last}}] batches, workers after a break,
-- `for x, y in loader` (unpack = true), and the constructors' signatures.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local class = require "torch_class"
local data = require "data"
local D = torch._data

local function children()
  local f = io.open("/proc/self/task/" .. D.getpid() .. "/children")
  local s = f and f:read("a") or ""
  if f then f:close() end
  local out = {}
  for pid in s:gmatch("%d+") do out[#out + 1] = tonumber(pid) end
  return out
end

local function alive(pid)
  for _, c in ipairs(children()) do if c == pid then return true end end
  return false
end

-- every test that forks must leave no child process behind
local function clean(name)
  collectgarbage(); collectgarbage()
  T.eq(#children(), 0, name .. ": child processes left")
end

local X = torch.arange(12):float():reshape(6, 2)
local Y = torch.arange(1, 7)
local ds = data.TensorDataset(X, Y)

T.test("nested loops over one loader: each loop its own epoch", function()
  for _, nw in ipairs({ 0, 2 }) do
    local dl = data.DataLoader(ds, { batch_size = 2, num_workers = nw, timeout = 20 })
    local pairs_seen = {}
    for a in dl do
      for b in dl do
        pairs_seen[#pairs_seen + 1] = { a[2][1], b[2][1] }
      end
    end
    T.eq(#pairs_seen, 9, nw .. " workers: 3 x 3 steps")
    T.eq(pairs_seen[1], { 1, 1 }); T.eq(pairs_seen[3], { 1, 5 }); T.eq(pairs_seen[4], { 3, 1 })
    T.eq(pairs_seen[9], { 5, 5 })
    -- an inner loop left by break does not end the outer one
    local outer = 0
    for a in dl do
      outer = outer + 1
      for b in dl do break end
    end
    T.eq(outer, 3)
  end
  clean("nested")
  -- a collate_fn giving the same value to two open loops: an error, not a guess
  local const = {}
  local dc = data.DataLoader(ds, { batch_size = 2, collate_fn = function() return const end })
  local n = 0
  for b in dc do n = n + 1 end
  T.eq(n, 3, "one loop of a constant batch runs through")
  T.raises(function() for a in dc do for b in dc do end end end, "data.DataLoader", "same batch", "loader:iter()")
  local m = 0
  for a in dc:iter() do for b in dc:iter() do m = m + 1 end end   -- the way out
  T.eq(m, 9)
  T.raises(function() dc(nil, {}) end, "data.DataLoader", "not the batch a loop over this loader last got")
end)

T.test("ds[{{first, last}}] and ds[idx]: batches as PyTorch's slices and index tensors", function()
  local N = 62
  local x = torch.arange(N * 3):float():reshape(N, 3)
  local y = torch.arange(1, N + 1)
  local train = data.TensorDataset(x, y)
  local b = train[{ { 1, 10 } }]
  T.eq(#b, 2)
  T.tensor(b[1], x:narrow(1, 1, 10):totable(), { shape = { 10, 3 } })
  T.tensor(b[2], { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
  T.tensor(train[{ { 61, 64 } }][2], { 61, 62 })          -- clamped at the end, as a slice
  T.eq(train[{ { 70, 80 } }][1]:size(), { 0, 3 })         -- past the end: empty
  T.tensor(train[{ { -2, -1 } }][2], { 61, 62 })          -- negative: from the end
  T.tensor(train[{ { 5 } }][2], { 5 })                    -- {i}: the range i..i
  -- nn_tutorial: for i in range((n - 1) // bs + 1): xb, yb = train_ds[i * bs : i * bs + bs]
  local bs, rows, last = 16, 0, nil
  for i = 0, (N - 1) // bs do
    local xb, yb = table.unpack(train[{ { i * bs + 1, i * bs + bs } }])
    rows = rows + xb:size(1)
    last = yb
  end
  T.eq(rows, N); T.tensor(last, { 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62 })
  -- index tensors: integer (1-based, negative from the end), bool mask, 0-d
  T.tensor(train[torch.tensor({ 3, 1, -1 })][2], { 3, 1, 62 })
  local mask = y:gt(60)
  T.tensor(train[mask][2], { 61, 62 })
  T.tensor(train[torch.tensor(4)][2], 4); T.tensor(train[torch.tensor(-1)][2], 62)
  T.raises(function() return train[torch.tensor({ 1, 0 }, { dtype = torch.uint8 })] end, "uint8", "ambiguous")
  -- bad keys: errors naming the dataset, never nil
  T.raises(function() return train[{ { 0, 5 } }] end, "data.TensorDataset", "index 0")
  T.raises(function() return train[{ 3, 1 }] end, "data.TensorDataset", "range {{first, last}}", "torch.tensor")
  T.raises(function() return train[torch.tensor({ 1.5 })] end, "data.TensorDataset", "integer or bool")
  T.raises(function() return train[torch.tensor({ 63 })] end, "data.TensorDataset", "out of range")
  T.raises(function() return train[true] end, "data.TensorDataset", "cannot index")
  -- Subset: its positions, then the wrapped dataset's batch (as PyTorch's Subset does)
  local sub = data.Subset(train, { 5, 6, 7, 8 })
  T.tensor(sub[{ { 2, 3 } }][2], { 6, 7 })
  T.tensor(sub[{ { 3, 9 } }][2], { 7, 8 })
  T.tensor(sub[torch.tensor({ 4, 1 })][2], { 8, 5 })
  T.raises(function() return data.Subset({ 1, 2, 3 }, { 1, 2 })[{ { 1, 2 } }] end, "data.Subset", "gives no batches")
  -- datasets without batches: a clear error
  T.raises(function() return data.ConcatDataset({ train, train })[{ { 1, 2 } }] end, "data.ConcatDataset", "range")
  local My = data.Dataset:extend("PortMy")
  function My:len() return 3 end
  function My:get(i) return i end
  T.raises(function() return My()[{ { 1, 2 } }] end, "data.PortMy", "DataLoader")
  T.eq(My()[2], 2)
  T.eq(My().no_such_field, nil, "names are still fields")
end)

T.test("break: loader:iter() ends the workers at once, a plain loop when its epoch is collected", function()
  local dl = data.DataLoader(ds, { batch_size = 1, num_workers = 2, timeout = 20 })
  local pids
  for b in dl:iter() do pids = dl:worker_pids(); break end
  T.eq(#pids, 2)
  for _, p in ipairs(pids) do T.ok(not alive(p), "iter(): worker " .. p .. " gone at the break") end
  T.eq(dl:worker_pids(), {})
  -- the plain loop: no closing value; its epoch ends when collected
  for b in dl do pids = dl:worker_pids(); break end
  T.eq(#dl:worker_pids(), 2, "still open right after the break")
  collectgarbage()
  for _, p in ipairs(pids) do T.ok(not alive(p), "plain loop: worker " .. p .. " gone once collected") end
  T.eq(dl:worker_pids(), {})
  -- ... at the latest when the next loop over the loader starts
  for b in dl do pids = dl:worker_pids(); break end
  local n = 0
  for b in dl do
    if n == 0 then
      for _, p in ipairs(pids) do T.ok(not alive(p), "the next loop ended worker " .. p) end
    end
    n = n + 1
  end
  T.eq(n, 6)
  -- persistent workers stay after a break in either form
  local pl = data.DataLoader(ds, { batch_size = 1, num_workers = 2, persistent_workers = true, timeout = 20 })
  for b in pl:iter() do break end
  local pp = pl:worker_pids()
  T.eq(#pp, 2)
  for _, p in ipairs(pp) do T.ok(alive(p)) end
  for b in pl do break end
  collectgarbage()
  T.eq(pl:worker_pids(), pp, "the same persistent workers")
  local c = 0
  for b in pl do c = c + 1 end
  T.eq(c, 6)
  pl:shutdown()
  dl, pl = nil, nil
  clean("break")
end)

T.test("for xb, yb in loader: unpack = true", function()
  local dl = data.DataLoader(ds, { batch_size = 4, unpack = true })
  local rows = 0
  for xb, yb in dl do
    T.ok(torch.is_tensor(xb) and torch.is_tensor(yb))
    T.eq(xb:size(2), 2)
    rows = rows + yb:size(1)
  end
  T.eq(rows, 6)
  local got = {}
  for xb, yb in dl:iter() do got[#got + 1] = yb:totable() end
  T.eq(got, { { 1, 2, 3, 4 }, { 5, 6 } })
  -- positional, as PyTorch: DataLoader(ds, batch_size, shuffle) and the option by name
  local dp = data.DataLoader(ds, 3, false, { unpack = true })
  for xb, yb in dp do T.eq(xb:size(), { 3, 2 }); break end
  -- nested, through workers and the progress bar
  local cnt = 0
  local dw = data.DataLoader(ds, { batch_size = 3, num_workers = 2, unpack = true, timeout = 20 })
  for xa, ya in dw do for xb, yb in dw do cnt = cnt + ya:size(1) * yb:size(1) end end
  T.eq(cnt, 36)
  local f = io.open(os.tmpname(), "w")
  local seen = 0
  for xb, yb in data.progress(dl, { file = f }) do seen = seen + yb:size(1) end
  f:close()
  T.eq(seen, 6, "progress passes every value on")
  -- the default is unchanged: the batch is the list
  for b in data.DataLoader(ds, { batch_size = 4 }) do T.eq(#b, 2); T.eq(b[1]:size(), { 4, 2 }); break end
  -- a batch that is not a list: an error naming the option
  local dd = data.DataLoader(ds, { batch_size = 2, unpack = true, collate_fn = function(s) return { x = 1 } end })
  T.raises(function() for a, b in dd do end end, "data.DataLoader", "unpack = true", "named fields")
  local dt = data.DataLoader(data.TensorDataset(X), { batch_size = 2, unpack = true, collate_fn = function(s) return X end })
  T.raises(function() for a in dt:iter() do end end, "unpack = true", "a tensor")
  local dh = data.DataLoader(ds, { batch_size = 2, unpack = true, collate_fn = function(s) return { nil, 1 } end })
  T.raises(function() for a, b in dh do end end, "unpack = true", "nil fields")   -- not a silent end
  T.raises(function() data.DataLoader(ds, { unpack = 1 }) end, "data.DataLoader", "unpack should be a boolean")
  clean("unpack")
end)

-- "batch_size" -> "batch_siez": a near misspelling of a name
local function misspell(name)
  -- (swapping the last two letters of "brightness" gives "brightness" again)
  if #name < 3 or name:sub(-1) == name:sub(-2, -2) then return name .. "x" end
  return name:sub(1, -3) .. name:sub(-1) .. name:sub(-2, -2)
end

local function resolve(fname)
  local v = { data = data }
  for part in fname:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

T.test("signatures: PyTorch's positional order, names, and 'did you mean'", function()
  -- every data.* signature: a call with nothing but a misspelt option fails first
  local count = 0
  for fname, sig in pairs(class.signatures) do
    if fname:match("^data%.") then
      local f = resolve(fname)
      T.ok(f ~= nil, fname .. " resolves to a function or class")
      local name = sig.names[1]
      if name then
        T.raises(function() f({ [misspell(name)] = 1 }) end,
          fname .. ": unknown option '" .. misspell(name) .. "' (did you mean '" .. name .. "'?)")
      else
        T.raises(function() f({ bogus = 1 }) end, fname .. ": unknown option 'bogus'")
      end
      count = count + 1
    end
  end
  T.ok(count >= 20, "the data library's signatures are registered (" .. count .. ")")
  T.raises(function() data.DataLoader({ batch_sise = 4 }) end,
    "data.DataLoader: unknown option 'batch_sise' (did you mean 'batch_size'?)")
  T.ok(class.call_form("data.DataLoader"):find("data.DataLoader(dataset, batch_size=1, shuffle=false, sampler=nil", 1, true))
  T.eq(class.call_form("data.TensorDataset"), "data.TensorDataset(*tensors)")
  -- DataLoader(ds, 64, true) as in PyTorch; by name; all by name
  local g = torch.Generator():manual_seed(5)
  local l1 = data.DataLoader(ds, 4, true, { generator = g })
  T.eq(#l1, 2); T.ok(l1.sampler.replacement == false and l1.sampler.generator == g, "shuffled with the generator")
  local l2 = data.DataLoader { dataset = ds, batch_size = 4, drop_last = true }
  T.eq(#l2, 1)
  T.eq(#data.DataLoader(ds, nil, nil, nil, nil, 0, nil, false, true), 6)   -- drop_last is the 9th
  T.raises(function() data.DataLoader(ds, 4, { batch_size = 2 }) end, "given twice")
  T.raises(function() data.DataLoader(ds, { multiprocessing_context = "spawn" }) end, "multiprocessing_context 'spawn'")
  T.raises(function() data.DataLoader(ds, { shuffle = 1 }) end, "shuffle should be a boolean")
  T.raises(function() data.DataLoader(ds, { collate_fn = 3 }) end, "collate_fn should be a function")
  -- pin_memory: accepted, no effect, one warning per process
  local L = require "data.loader"
  local warned, saved = {}, L.warn
  L.warn = function(m) warned[#warned + 1] = m end
  local lp = data.DataLoader(ds, { batch_size = 3, pin_memory = true })
  data.DataLoader(ds, { pin_memory = true })
  L.warn = saved
  T.eq(#warned, 1); T.ok(warned[1]:find("pin_memory=true has no effect", 1, true), warned[1])
  local nb = 0
  for b in lp do nb = nb + 1; T.eq(b[1]:size(), { 3, 2 }) end
  T.eq(nb, 2)
  -- a dataset written as a plain table is a dataset, not an options table
  local plain = { len = function() return 4 end, get = function(_, i) return i * 10 end }
  local lt = {}
  for b in data.DataLoader(plain) do lt[#lt + 1] = b:item() end
  T.eq(lt, { 10, 20, 30, 40 })
  T.eq(#data.Subset(ds, {}), 0, "an empty list of indices")
  -- the others, in PyTorch's order
  T.eq(#data.random_split(ds, { 4, 2 }, torch.Generator():manual_seed(1))[1], 4)
  T.eq(#data.random_split { dataset = ds, lengths = { 0.5, 0.5 } }[2], 3)
  local rs = data.RandomSampler(ds, true, 20)
  T.eq(#rs, 20); T.eq(rs.replacement, true)
  local ws = {}
  for i in data.WeightedRandomSampler({ 1, 1, 1 }, 3, false):iter() do ws[#ws + 1] = i end
  table.sort(ws); T.eq(ws, { 1, 2, 3 })
  T.eq(data.BatchSampler(data.SequentialSampler(ds), 4):len(), 2, "drop_last defaults to false")
  local sh = data.DistributedSampler(ds, 2, 1, false)
  T.eq(sh:indices(), { 2, 4, 6 })
  T.raises(function() sh:set_epoch(1.5) end, "set_epoch", "integer")
  local tf = data.transforms
  T.eq(tf.RandomCrop(4, 1)(torch.ones(1, 4, 4)):size(), { 1, 4, 4 })                  -- padding positional
  T.eq(tf.RandomCrop(6, { pad_if_needed = true })(torch.ones(1, 4, 4)):size(), { 1, 6, 6 })
  T.near(tf.RandomCrop({ 2, 6 }, { 1, 0 }, { fill = 0 })(torch.ones(1, 2, 4)):sum():item(), 8)  -- {left/right, top/bottom}
  T.raises(function() tf.RandomCrop(2, { padding_mode = "reflect" }) end, "padding_mode 'reflect' is not supported")
  local xin = torch.ones(2, 2, 2)
  local xn = tf.Normalize({ 1, 0 }, { 1, 2 }, true)(xin)
  T.ok(rawequal(xn, xin), "inplace: the input, changed")
  T.near(xin[1][1][1], 0); T.near(xin[2][1][1], 0.5)
  T.raises(function() tf.RandomHorizontalFlip(2) end, "RandomHorizontalFlip", "probability")
  T.raises(function() tf.Compose({ 3 }) end, "Compose", "not callable")
  local path = os.tmpname()
  local fh = io.open(path, "w"); fh:write("1,2\n3,4\n"); fh:close()
  local t = data.read_csv(path, false)
  T.eq(t:size(), { 2, 2 })
  os.remove(path)
  T.raises(function() data.MNIST("/nonexistent", { download = true }) end, "data.MNIST", "cannot find", "does not download")
end)

T.test("progress: a new loop starts the source over; two loops on one bar are an error", function()
  local f = io.open(os.tmpname(), "w")
  local bar = data.progress(3, { file = f })
  for i in bar do break end
  local got = {}
  for i in bar do got[#got + 1] = i end
  T.eq(got, { 1, 2, 3 }, "restarted, not continued")
  local dl = data.DataLoader(ds, { batch_size = 2 })
  local b2 = data.progress(dl, "desc", { file = f })                 -- tqdm's order: iterable, desc
  T.eq(b2.desc, "desc")
  T.raises(function() for a in b2 do for b in b2 do end end end, "data.progress", "restarted by another loop")
  f:close()
end)

T.done()
