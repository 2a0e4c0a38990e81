-- alloc_fail_cases.lua — the operations tests/c/test_alloc_fail.c runs with every
-- allocation from the Nth on failing. Each case: a name, setup() (run with allocation
-- working; returns the case's context) and run(ctx) (the operation swept). run must succeed
-- when nothing fails, and be repeatable on the same context.
local nn = require "nn"
local data = require "data"
local F = nn.functional
local dir = os.getenv("LT_ALLOC_FAIL_DIR") or "/tmp"

return {
  { "matmul", function() return { a = torch.randn(16, 12), b = torch.randn(12, 8) } end,
    function(c) return c.a:matmul(c.b):sum() end },
  { "conv2d", function() return { x = torch.randn(2, 3, 8, 8), w = torch.randn(4, 3, 3, 3), b = torch.randn(4) } end,
    function(c) return F.conv2d(c.x, c.w, c.b, { padding = 1 }) end },
  { "cat", function() return { a = torch.randn(3, 4), b = torch.randn(2, 4), c = torch.arange(4):float():view(1, 4) } end,
    function(c) return torch.cat({ c.a, c.b, c.c }, 1) end },
  { "indexing", function() return { x = torch.randn(6, 5), i = torch.tensor({ 1, 3, 6 }), m = torch.randn(6, 5):gt(0) } end,
    function(c)
      local a = c.x[{ { 2, 4 }, 3 }]
      local b = c.x:index_select(1, c.i)
      local d = c.x[c.m]
      local y = c.x:clone()
      y[c.m] = 0
      y[{ 1, {} }] = a:sum()
      return a, b, d, y
    end },
  { "backward", function()
      local m = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
      return { m = m, x = torch.randn(4, 6), y = torch.tensor({ 1, 2, 2, 1 }) }
    end,
    function(c)
      c.m:zero_grad()
      local loss = F.cross_entropy(c.m(c.x), c.y)
      loss:backward()
      return loss
    end },
  { "save", function()
      return { v = { w = torch.randn(5, 3), b = torch.arange(5), note = "x", nested = { torch.ones(2) } },
               path = dir .. "/alloc_fail_save.pt" }
    end,
    function(c) torch.save(c.path, c.v) end },
  { "load", function()
      local path = dir .. "/alloc_fail_load.pt"
      torch.save(path, { w = torch.randn(5, 3), b = torch.arange(5), note = "x", t = { torch.ones(2) } })
      return { path = path }
    end,
    function(c) return torch.load(c.path) end },
  { "serialize", function() return { v = { a = torch.randn(3, 3), s = "text", n = 4 } } end,
    function(c) return torch.deserialize(torch.serialize(c.v)) end },
  { "dataloader", function()
      local ds = data.TensorDataset(torch.randn(20, 3), torch.arange(20))
      return { loader = data.DataLoader(ds, { batch_size = 4, shuffle = true }) }
    end,
    function(c)
      for x, y in c.loader:iter() do return x, y end
    end },
}
