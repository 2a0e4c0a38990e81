-- test_transpose_copy.lua — copies whose source is a transposed view (x:t():contiguous(),
-- copy_ from a transpose): the blocked path, the streaming path for big 4-byte
-- destinations (>= 4 MiB), and the edges each leaves to scalar loops.
local T = require("testing")

-- x = 0, 1, 2, ... in R x C; x^T[i][j] = x[j][i] = j * C + i
local function expected(R, C, dtype)
  local i = torch.arange(C, { dtype = dtype }):view(C, 1)
  local j = torch.arange(R, { dtype = dtype }):view(1, R)
  return i + j * C
end

local shapes = {
  { 8, 8 }, { 17, 33 }, { 128, 130 },   -- small: the blocked path
  { 1024, 1024 }, { 2048, 1024 },       -- 4 and 8 MiB float32: the streaming path
  { 1030, 1032 }, { 1032, 1030 },       -- rows left over; columns not whole 32-byte pieces
  { 1027, 1048 },                       -- a last band narrower than 32 columns
}

T.test("x:t():contiguous() equals the transpose, every path", function()
  for _, dt in ipairs({ "float32", "int32", "float64", "int16" }) do
    for _, sh in ipairs(shapes) do
      local R, C = sh[1], sh[2]
      if dt ~= "int16" or R * C < 32768 then
        local x = torch.arange(R * C, { dtype = dt }):view(R, C)
        local y = x:t():contiguous()
        T.eq(y:is_contiguous(), true)
        T.eq(torch.equal(y, expected(R, C, dt)), true, dt .. " " .. R .. "x" .. C)
      end
    end
  end
end)

T.test("leading dims: each matrix of a batch transposed", function()
  local B, R, C = 3, 1024, 520
  local x = torch.arange(B * R * C, { dtype = "float32" }):view(B, R, C)
  local y = x:transpose(2, 3):contiguous()
  for b = 1, B do
    local want = expected(R, C, "float32") + (b - 1) * R * C
    T.eq(torch.equal(y[b], want), true, "batch " .. b)
  end
  -- a permuted batch dim too
  local z = x:permute(3, 1, 2):contiguous()          -- C x B x R: not a last-two swap
  T.eq(torch.equal(z[5][2], x[2]:select(2, 5)), true)
end)

T.test("copy_ into a destination that is not 32-byte aligned", function()
  local R, C = 1024, 1024
  local x = torch.arange(R * C, { dtype = "float32" }):view(R, C)
  local buf = torch.zeros(R * C + 1)
  local d = buf:narrow(1, 2, R * C):view(C, R)         -- 4 bytes past an aligned start
  d:copy_(x:t())
  T.eq(torch.equal(d, expected(R, C, "float32")), true)
  T.eq(buf[1], 0)
end)

T.test("threads: the same result with 1 and 2", function()
  local x = torch.randn(2048, 1056)
  local old = torch.get_num_threads()
  torch.set_num_threads(1); local a = x:t():contiguous()
  torch.set_num_threads(2); local b = x:t():contiguous()
  torch.set_num_threads(old)
  T.eq(torch.equal(a, b), true)
  T.eq(torch.equal(a[7], x:select(2, 7)), true)
end)

T.done()
