-- The global tensors of the distributed checkpoint tests (tests/dist/checkpoint*.lua), made
-- the same way by every script from a seed, and the shards each rank holds of them.
-- Not a test file itself.
local dist = torch.distributed
local G = {}

-- name -> global tensor; sharded ones and whole ones
function G.globals(seed)
  torch.manual_seed(seed or 1234)
  return {
    a = torch.randn(7),                                   -- 7 elements: 4/3 on 2 ranks
    m = torch.randn(5, 3),                                -- 15: 8/7
    i = torch.randint(-1000, 1000, { 11 }),               -- int64
    h = torch.randn(6, 2):to(torch.bfloat16),
    d = torch.randn(3, 3, { dtype = torch.float64 }),
    dup = torch.randn(10),                                -- overlapping shards on 2 ranks
    exp_avg = torch.randn(5, 3),                          -- at opt.state[1].exp_avg
    r = torch.randn(3),                                   -- whole, on every rank
    only1 = torch.randn(4, { dtype = torch.float64 }),    -- whole, saved by rank 1 only
  }
end
G.SHARDED = { "a", "m", "i", "h", "d", "dup", "exp_avg" }

-- Which elements rank holds of each sharded tensor: {name = {offset, count}}, or nil for
-- whole tensors. "even" (the default) gives the first ranks one more element where the
-- split is uneven; "other" the last ranks; "save" is even except for dup, whose ranges
-- overlap on 2 ranks.
function G.split(rank, world, mode)
  mode = mode or "even"
  local g = G.globals()
  local s = {}
  for _, k in ipairs(G.SHARDED) do
    local n = g[k]:numel()
    local base, extra = n // world, n % world
    local sizes = {}
    for r = 0, world - 1 do
      if mode == "other" then sizes[r] = base + ((r >= world - extra) and 1 or 0)
      else sizes[r] = base + ((r < extra) and 1 or 0) end
    end
    local off = 0
    for r = 0, rank - 1 do off = off + sizes[r] end
    s[k] = { off, sizes[rank] }
  end
  if mode ~= "other" and world == 2 then s.dup = rank == 0 and { 0, 6 } or { 4, 6 } end
  return s
end

local function piece(t, shape, off, count, zero)
  local p = t:reshape(-1):narrow(1, off + 1, count):clone()
  if zero then p:zero() end
  return dist.register_shard(p, shape, off)
end

local function build(split, rank, g, zero)
  local function get(k)
    local t = g[k]
    if split then return piece(t, t:size(), split[k][1], split[k][2], zero) end
    t = t:clone()
    if zero then t:zero() end
    return t
  end
  local function whole(k)
    local t = g[k]:clone()
    if zero then t:zero() end
    return t
  end
  local sd = {
    a = get("a"), m = get("m"), i = get("i"), h = get("h"), d = get("d"), dup = get("dup"), r = whole("r"),
    opt = { state = { [1] = { exp_avg = get("exp_avg"), step = zero and 0 or 100 } },
            param_groups = { { lr = zero and 0 or 0.5, betas = { zero and 0 or 0.9, zero and 0 or 0.999 } } } },
    step = zero and 0 or 100,
    from = zero and "?" or "rank " .. tostring(rank),
    only1 = whole("only1"),
  }
  return sd
end

-- the state dict rank saves: its shards (split from G.split) of the globals of seed
function G.state_dict(split, rank, world, seed)
  local sd = build(split, rank, G.globals(seed), false)
  if rank ~= 1 then sd.only1 = nil end
  if rank == 0 then sd.rank0_only = "from rank 0" end
  return sd
end

-- a state dict to load into: the same pieces, zeroed, and wrong values (split nil: whole tensors)
function G.blank(split, rank)
  local sd = build(split, rank, G.globals(), true)
  sd.rank0_only = "?"
  return sd
end

-- sd (loaded) holds exactly this rank's pieces of the globals of seed, and the saved values
function G.check(T, sd, split, rank, world, seed)
  local g = G.globals(seed)
  local function want(k)
    local t = g[k]
    if split and split[k] then return t:reshape(-1):narrow(1, split[k][1] + 1, split[k][2]) end
    return t
  end
  local got = { a = sd.a, m = sd.m, i = sd.i, h = sd.h, d = sd.d, dup = sd.dup, r = sd.r, only1 = sd.only1,
                exp_avg = sd.opt.state[1].exp_avg }
  for k, t in pairs(got) do
    local w = want(k)
    T.eq(t.dtype.name, w.dtype.name, k .. " dtype")
    T.eq(t:size(), w:size(), k .. " shape")
    T.ok(torch.equal(t, w), ("%s differs on rank %s"):format(k, tostring(rank)))
  end
  T.eq(sd.step, 100)
  T.eq(sd.opt.state[1].step, 100)
  T.eq(sd.opt.param_groups[1].lr, 0.5)
  T.eq(sd.opt.param_groups[1].betas, { 0.9, 0.999 })
  T.eq(sd.from, "rank 0")                   -- the lowest rank's value wins
  T.eq(sd.rank0_only, "from rank 0")
end

return G
