-- A PNG writer in Lua: 8-bit RGB, no compression (the zlib stream holds stored deflate blocks,
-- which every PNG reader takes). Used by optim.Logger:plot().
--   png.encode(w, h, pixels) -> the file's bytes; pixels[(y - 1) * w + x] = 0xRRGGBB, top row first
--   png.write(path, w, h, pixels)
--   png.crc32(s [, crc]), png.adler32(s): the checksums, for checking files
local M = {}

local CRC = {}
for n = 0, 255 do
  local c = n
  for _ = 1, 8 do
    if c & 1 == 1 then c = 0xEDB88320 ~ (c >> 1) else c = c >> 1 end
  end
  CRC[n] = c
end

function M.crc32(s, crc)
  local c = (crc or 0) ~ 0xFFFFFFFF
  for i = 1, #s do c = CRC[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end

function M.adler32(s)
  local a, b = 1, 0
  local i, n = 1, #s
  while i <= n do
    local j = math.min(i + 3799, n)       -- sums stay far below 2^53 between reductions
    for k = i, j do a = a + s:byte(k); b = b + a end
    a, b = a % 65521, b % 65521
    i = j + 1
  end
  return (b << 16) | a
end

local function chunk(kind, data)
  return string.pack(">I4", #data) .. kind .. data .. string.pack(">I4", M.crc32(kind .. data))
end

-- the zlib stream of data in stored (uncompressed) deflate blocks
local function zlib_stored(data)
  local out = { "\x78\x01" }
  local n, i = #data, 1
  if n == 0 then out[#out + 1] = "\x01\x00\x00\xff\xff" end
  while i <= n do
    local len = math.min(65535, n - i + 1)
    local final = (i + len > n) and 1 or 0
    out[#out + 1] = string.char(final) .. string.pack("<I2<I2", len, len ~ 0xFFFF)
    out[#out + 1] = data:sub(i, i + len - 1)
    i = i + len
  end
  out[#out + 1] = string.pack(">I4", M.adler32(data))
  return table.concat(out)
end

function M.encode(w, h, pixels)
  if math.type(w) ~= "integer" or math.type(h) ~= "integer" or w < 1 or h < 1 then
    error("png.encode: the width and height must be positive integers", 2)
  end
  local rows = {}
  local bytes = {}
  for y = 1, h do
    local base = (y - 1) * w
    bytes[1] = 0                                   -- filter type 0 (none)
    for x = 1, w do
      local p = pixels[base + x] or 0xFFFFFF
      local k = 3 * x - 1
      bytes[k], bytes[k + 1], bytes[k + 2] = (p >> 16) & 0xFF, (p >> 8) & 0xFF, p & 0xFF
    end
    rows[y] = string.char(table.unpack(bytes, 1, 3 * w + 1))
  end
  local ihdr = string.pack(">I4>I4BBBBB", w, h, 8, 2, 0, 0, 0)   -- 8-bit RGB, no interlace
  return "\x89PNG\r\n\x1a\n" .. chunk("IHDR", ihdr) .. chunk("IDAT", zlib_stored(table.concat(rows)))
    .. chunk("IEND", "")
end

function M.write(path, w, h, pixels)
  local f, err = io.open(path, "wb")
  if not f then error("png.write: cannot open " .. tostring(path) .. ": " .. tostring(err), 2) end
  f:write(M.encode(w, h, pixels))
  f:close()
  return path
end

return M
