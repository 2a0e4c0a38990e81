-- data: datasets, samplers, collate, the single-process DataLoader, transforms, progress.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local data = require "data"
local tf = data.transforms

local X = torch.arange(20):float():reshape(10, 2)
local Y = torch.arange(1, 11)
local ds = data.TensorDataset(X, Y)

T.test("TensorDataset", function()
  T.eq(#ds, 10); T.eq(ds:len(), 10)
  local s = ds:get(3)
  T.tensor(s[1], { 4, 5 }); T.tensor(s[2], 3, { dtype = "int64" })
  T.tensor(ds[10][2], 10)
  T.raises(function() ds:get(11) end, "TensorDataset", "out of range")
  T.raises(function() data.TensorDataset(X, torch.arange(3)) end, "size mismatch")
end)

T.test("Subset, ConcatDataset, random_split", function()
  local sub = data.Subset(ds, { 2, 4, 6 })
  T.eq(#sub, 3); T.tensor(sub[2][2], 4)
  local sub2 = data.Subset(ds, torch.tensor({ 9, 1 }))
  T.tensor(sub2[1][2], 9)
  local cat = data.ConcatDataset({ ds, sub, { "a", "b" } })
  T.eq(#cat, 15)
  T.tensor(cat[10][2], 10); T.tensor(cat[11][2], 2); T.tensor(cat[13][2], 6); T.eq(cat[15], "b"); T.eq(cat[-1], "b")
  T.raises(function() cat:get(16) end, "out of range")
  local a, b = table.unpack(data.random_split(ds, { 7, 3 }, torch.Generator():manual_seed(3)))
  T.eq(#a, 7); T.eq(#b, 3)
  local seen = {}
  for i = 1, 7 do seen[a[i][2]:item()] = true end
  for i = 1, 3 do seen[b[i][2]:item()] = true end
  local n = 0
  for _ in pairs(seen) do n = n + 1 end
  T.eq(n, 10, "the splits partition the dataset")
  local a2 = data.random_split(ds, { 7, 3 }, torch.Generator():manual_seed(3))[1]
  T.eq(a2.indices, a.indices, "same generator seed, same split")
  local f = data.random_split(ds, { 0.5, 0.25, 0.25 }, torch.Generator():manual_seed(1))
  T.eq({ #f[1], #f[2], #f[3] }, { 6, 2, 2 })
  T.raises(function() data.random_split(ds, { 3, 3 }) end, "does not equal the length")
end)

T.test("samplers", function()
  local function all(s)
    local out = {}
    for i in s:iter() do out[#out + 1] = i end
    return out
  end
  T.eq(all(data.SequentialSampler(ds)), { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
  local r = all(data.RandomSampler(ds, { generator = torch.Generator():manual_seed(0) }))
  local sorted = { table.unpack(r) }
  table.sort(sorted)
  T.eq(sorted, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
  T.eq(r, all(data.RandomSampler(ds, { generator = torch.Generator():manual_seed(0) })))
  local rr = all(data.RandomSampler(ds, { replacement = true, num_samples = 50 }))
  T.eq(#rr, 50)
  for _, i in ipairs(rr) do T.ok(i >= 1 and i <= 10) end
  T.eq(#all(data.RandomSampler(ds, { num_samples = 25 })), 25)
  local w = all(data.WeightedRandomSampler({ 0, 0, 1, 0 }, 6))
  T.eq(w, { 3, 3, 3, 3, 3, 3 })
  local w2 = all(data.WeightedRandomSampler({ 1, 1, 1, 1 }, 4, { replacement = false }))
  table.sort(w2)
  T.eq(w2, { 1, 2, 3, 4 })
  local sr = all(data.SubsetRandomSampler({ 5, 7, 9 }))
  table.sort(sr)
  T.eq(sr, { 5, 7, 9 })
  local bsm = data.BatchSampler(data.SequentialSampler(ds), 4, false)
  T.eq(all(bsm), { { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10 } }); T.eq(#bsm, 3)
  local bsd = data.BatchSampler(data.SequentialSampler(ds), 4, true)
  T.eq(all(bsd), { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }); T.eq(#bsd, 2)
end)

T.test("default_collate", function()
  local c = data.default_collate
  T.tensor(c({ 1, 2, 3 }), { 1, 2, 3 }, { dtype = "int64" })
  T.tensor(c({ 1, 2.5 }), { 1, 2.5 }, { dtype = "float32" })
  T.tensor(c({ true, false }), { true, false }, { dtype = "bool" })
  T.eq(c({ "a", "b" }), { "a", "b" })
  local b = c({ { x = torch.ones(2), y = 1, meta = { name = "p", v = { 1.5, 2 } } },
                { x = torch.zeros(2), y = 2, meta = { name = "q", v = { 3.5, 4 } } } })
  T.tensor(b.x, { { 1, 1 }, { 0, 0 } }); T.tensor(b.y, { 1, 2 })
  T.eq(b.meta.name, { "p", "q" })
  T.tensor(b.meta.v[1], { 1.5, 3.5 }); T.tensor(b.meta.v[2], { 2, 4 }, { dtype = "int64" })
  T.tensor(c({ torch.tensor(1, { dtype = torch.uint8 }), torch.tensor(2, { dtype = torch.uint8 }) }), { 1, 2 }, { dtype = "uint8" })
  T.raises(function() c({ { 1, 2 }, { 1 } }) end, "equal size")
  T.raises(function() c({ torch.ones(2), torch.ones(3) }) end, "default_collate", "stack")
  T.raises(function() c({ { a = 1 }, { b = 1 } }) end, "no key 'a'")
end)

T.test("DataLoader: batches, drop_last, partial batch, len", function()
  local l = data.DataLoader(ds, { batch_size = 4 })
  T.eq(#l, 3)
  local got = {}
  for b in l do got[#got + 1] = b[2]:totable() end
  T.eq(got, { { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10 } })
  local ld = data.DataLoader(ds, { batch_size = 4, drop_last = true })
  T.eq(#ld, 2)
  local n = 0
  for b in ld:iter() do n = n + 1; T.eq(b[1]:size(), { 4, 2 }) end
  T.eq(n, 2)
  -- a plain Lua list is a dataset; no batching with batch_size=false
  local lst = data.DataLoader({ 10, 20, 30 }, { batch_size = false })
  local v = {}
  for b in lst do v[#v + 1] = b:item() end
  T.eq(v, { 10, 20, 30 })
  -- custom collate and a batch_sampler
  local lb = data.DataLoader(ds, { batch_sampler = { { 3, 1 }, { 2 } }, collate_fn = function(s) return #s end })
  local sizes = {}
  for b in lb do sizes[#sizes + 1] = b end
  T.eq(sizes, { 2, 1 }); T.eq(#lb, 2)
  T.raises(function() data.DataLoader(ds, { batch_sampler = { { 1 } }, shuffle = true }) end, "mutually exclusive")
  T.raises(function() data.DataLoader(ds, { sampler = data.SequentialSampler(ds), shuffle = true }) end, "mutually exclusive")
  T.raises(function() data.DataLoader(ds, { batch_size = 0 }) end, "batch_size")
end)

T.test("DataLoader: shuffle with a generator, re-iteration, early break", function()
  local function epoch(l)
    local out = {}
    for b in l do for _, y in ipairs(b[2]:totable()) do out[#out + 1] = y end end
    return out
  end
  local l1 = data.DataLoader(ds, { batch_size = 3, shuffle = true, generator = torch.Generator():manual_seed(7) })
  local l2 = data.DataLoader(ds, { batch_size = 3, shuffle = true, generator = torch.Generator():manual_seed(7) })
  local e1, e2 = epoch(l1), epoch(l2)
  T.eq(e1, e2)
  local s = { table.unpack(e1) }
  table.sort(s)
  T.eq(s, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
  T.ok(not T.deq(epoch(l1), e1), "a new order each epoch")
  for b in l1 do break end
  T.eq(#epoch(l1), 10, "a new loop after a break starts over")
end)

T.test("iterable dataset, single process", function()
  local Stream = data.IterableDataset:extend("Stream")
  function Stream:iter()
    local i = 0
    return function() i = i + 1; if i <= 5 then return i * 1.5 end end
  end
  local got = {}
  for b in data.DataLoader(Stream(), { batch_size = 2 }) do got[#got + 1] = b:totable() end
  T.eq(got, { { 1.5, 3 }, { 4.5, 6 }, { 7.5 } })
  T.raises(function() data.DataLoader(Stream(), { shuffle = true }) end, "iterable")
end)

T.test("transforms", function()
  local img = torch.arange(2 * 4 * 4):reshape(2, 4, 4):to(torch.uint8)
  local f = tf.ToFloat()(img)
  T.tensor(f, nil, { dtype = "float32", shape = { 2, 4, 4 } })
  T.near(f[1][1][2], 1 / 255, 1e-6)
  local n = tf.Normalize({ 0.5, 1 }, { 2, 4 })(torch.ones(2, 3, 3))
  T.near(n[1][1][1], 0.25); T.near(n[2][1][1], 0)
  local nb = tf.Normalize({ 0.5, 1 }, { 2, 4 })(torch.ones(5, 2, 3, 3))
  T.eq(nb:size(), { 5, 2, 3, 3 }); T.near(nb[5][1][3][3], 0.25)
  local n2 = tf.Normalize(0.5, 0.5)(torch.ones(3, 3))
  T.near(n2[1][1], 1)
  T.raises(function() tf.Normalize({ 1, 2, 3 }, { 1, 1, 1 })(torch.ones(2, 3, 3)) end, "Normalize")
  local x = torch.arange(12):float():reshape(3, 4)
  T.tensor(tf.RandomHorizontalFlip(1)(x), { { 3, 2, 1, 0 }, { 7, 6, 5, 4 }, { 11, 10, 9, 8 } })
  T.tensor(tf.RandomHorizontalFlip(0)(x), x:totable())
  local xb = torch.arange(2 * 1 * 2 * 3):float():reshape(2, 1, 2, 3)
  local fb = tf.RandomHorizontalFlip(1)(xb)
  T.tensor(fb[2][1][1], { 8, 7, 6 })
  local c = tf.RandomCrop(2)(x)
  T.eq(c:size(), { 2, 2 })
  local cp = tf.RandomCrop(4, { padding = 2 })(torch.ones(1, 4, 4))
  T.eq(cp:size(), { 1, 4, 4 })
  local cb = tf.RandomCrop({ 3, 3 }, { padding = 1 })(torch.ones(6, 2, 4, 4))
  T.eq(cb:size(), { 6, 2, 3, 3 })
  local full = tf.RandomCrop(6, { padding = 1 })(torch.ones(1, 4, 4))   -- the whole padded image
  T.near(full:sum():item(), 16)
  T.raises(function() tf.RandomCrop(9)(torch.ones(4, 4)) end, "larger than")
  local comp = tf.Compose({ tf.ToFloat(), tf.Normalize(0, 1 / 255) })
  T.tensor(comp(torch.tensor({ { 3 } }, { dtype = torch.uint8 })), { { 3 } }, { tol = 1e-4 })
end)

T.test("progress bar", function()
  local path = os.tmpname()
  local f = io.open(path, "w")
  local bar = data.progress(data.DataLoader(ds, { batch_size = 2 }), { desc = "train", file = f, interval = 0 })
  local n = 0
  for b in bar do n = n + 1; bar:set { loss = 0.5 / n } end
  f:close()
  T.eq(n, 5)
  local text = io.open(path):read("a")
  os.remove(path)
  T.ok(text:find("train: 100%|##############################| 5/5", 1, true), text)
  T.ok(text:find("loss=0.1000", 1, true), text)
  T.ok(text:find("it/s", 1, true))
  T.ok(not text:find("\r", 1, true), "no carriage returns when not a terminal")
  local lines = 0
  for _ in text:gmatch("\n") do lines = lines + 1 end
  T.ok(lines >= 5, "one line per update")
  -- on a terminal: drawn in place
  local p2 = os.tmpname()
  local f2 = io.open(p2, "w")
  local cnt = 0
  for i in data.progress(3, { file = f2, tty = true, interval = 0 }) do cnt = cnt + i end
  f2:close()
  local t2 = io.open(p2):read("a")
  os.remove(p2)
  T.eq(cnt, 6)
  T.ok(t2:find("\r", 1, true) and t2:find("3/3", 1, true), t2)
  T.eq(select(2, t2:gsub("\n", "")), 1, "one newline at the end")
  T.eq(type(torch._data.isatty(io.stdout)), "boolean")
end)

T.test("require 'data'", function()
  T.eq(require("data"), data)
  T.eq(type(data.DataLoader), "table")
end)

T.done()
