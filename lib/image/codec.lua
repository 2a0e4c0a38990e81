-- image/codec.lua — reading and writing PNG and JPEG: files and bytes in memory, Torch7's and
-- torchvision.io's names, over the codecs of liblutorch (src/serial/png.c, jpeg.c through
-- src/vm/limage.c, torch._image).
local torch = torch or require("torch")
local class = require "torch_class"
local U = require "image.util"
local fail = U.fail
local LOADABLE = U.LOADABLE
local is_dtype = U.is_dtype
local to_dtype = U.to_dtype
local read_all = U.read_all
local to_uint8 = U.to_uint8
local write_all = U.write_all
local C = torch._image
local M = {}

-- the pixels of bytes (a string) as [C, H, W] of dtype dt; `what` names the source
local function decode(fname, bytes, channels, dt, what)
  if channels ~= nil and not (math.type(channels) == "integer" and channels >= 1 and channels <= 4) then
    fail(fname, "option 'channels' must be 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA), got %s",
      tostring(channels))
  end
  if not LOADABLE[dt.name] then
    fail(fname, "dtype %s cannot hold an image (uint8, int32, int64 or a floating dtype)", dt.name)
  end
  local keep16 = dt ~= torch.uint8
  local t, bits = C.decode(bytes, channels or 0, keep16, what, fname)
  if dt == torch.uint8 or (not dt.is_floating_point) then return t:to(dt) end
  local maxv = bits == 16 and 65535 or 255
  if dt == torch.float64 then return t:to(dt):div_(maxv) end
  return t:to(torch.float32):div_(maxv):to(dt)
end

local LOAD_OPTS = { "channels", "dtype" }

-- image.load(path, {channels=, dtype=torch.float32}) -> [C, H, W]
-- image.load(path, depth, tensortype) (Torch7): depth 1 gives [H, W], 3 (or 2, 4) [C, H, W];
-- tensortype 'float' (default), 'double' or 'byte'
function M.load(path, a2, a3)
  local fname = "image.load"
  local channels, dt, flat
  if type(a2) == "table" and not is_dtype(a2) then
    if a3 ~= nil then fail(fname, "too many arguments (path, options)") end
    class.check_options(fname, a2, LOAD_OPTS)
    channels, dt = a2.channels, a2.dtype and to_dtype(fname, a2.dtype, "dtype") or torch.float32
  else
    if a2 ~= nil and not (math.type(a2) == "integer" and a2 >= 1 and a2 <= 4) then
      fail(fname, "argument 'depth' must be 1, 2, 3 or 4, got %s", tostring(a2))
    end
    channels, flat = a2, a2 == 1
    dt = a3 ~= nil and to_dtype(fname, a3, "tensortype") or torch.float32
  end
  local t = decode(fname, read_all(fname, path), channels, dt, ("'%s'"):format(path))
  if flat then t = t:squeeze(1) end
  return t
end

-- torchvision.io.read_image(path, {channels=, dtype=torch.uint8})
function M.read_image(path, opts)
  local fname = "image.read_image"
  class.check_options(fname, opts, LOAD_OPTS)
  opts = opts or {}
  local dt = opts.dtype and to_dtype(fname, opts.dtype, "dtype") or torch.uint8
  return decode(fname, read_all(fname, path), opts.channels, dt, ("'%s'"):format(path))
end

-- bytes: a Lua string, or a uint8 tensor of bytes (torchvision.io.read_file's result)
local function bytes_of(fname, b)
  if type(b) == "string" then return b end
  if torch.is_tensor(b) and b.dtype == torch.uint8 and b:dim() == 1 then
    if b.device.type ~= "cpu" then b = b:cpu() end
    return b:contiguous()   -- the codecs read its memory
  end
  fail(fname, "argument 'input' must be the encoded bytes (a string, or a 1-D uint8 tensor), got %s",
    torch.is_tensor(b) and ("a %s tensor of shape %s"):format(b.dtype.name, tostring(b.shape)) or type(b))
end

local function decoder(fname, kind)
  return function(input, opts)
    class.check_options(fname, opts, LOAD_OPTS)
    opts = opts or {}
    local bytes = bytes_of(fname, input)
    if kind and C.sniff(bytes) ~= kind then
      fail(fname, "the bytes are not a %s image%s", kind:upper(),
        C.sniff(bytes) and (" (they are a " .. C.sniff(bytes):upper() .. ")") or "")
    end
    local dt = opts.dtype and to_dtype(fname, opts.dtype, "dtype") or torch.uint8
    return decode(fname, bytes, opts.channels, dt, "the bytes")
  end
end

-- decode_png / decode_jpeg / decode_image(bytes, {channels=, dtype=torch.uint8})
M.decode_png = decoder("image.decode_png", "png")
M.decode_jpeg = decoder("image.decode_jpeg", "jpeg")
M.decode_image = decoder("image.decode_image", nil)
M.decode = M.decode_image


local function check_level(fname, v)
  if not (math.type(v) == "integer" and v >= 0 and v <= 9) then
    fail(fname, "compression_level must be an integer 0..9, got %s", tostring(v))
  end
  return v
end
local function check_quality(fname, v)
  if not (math.type(v) == "integer" and v >= 1 and v <= 100) then
    fail(fname, "quality must be an integer 1..100, got %s", tostring(v))
  end
  return v
end

local ENCODE_PNG = class.signature("image.encode_png", "input, compression_level=6")
local ENCODE_JPEG = class.signature("image.encode_jpeg", "input, quality=75")

-- encode_png(input, compression_level=6) -> string; encode_jpeg(input, quality=75) -> string
function M.encode_png(...)
  local fname = "image.encode_png"
  local a = ENCODE_PNG(...)
  return C.encode_png(to_uint8(fname, a.input), check_level(fname, a.compression_level), fname)
end
function M.encode_jpeg(...)
  local fname = "image.encode_jpeg"
  local a = ENCODE_JPEG(...)
  return C.encode_jpeg(to_uint8(fname, a.input), check_quality(fname, a.quality), fname)
end

local FORMATS = { png = "png", jpg = "jpeg", jpeg = "jpeg" }
local SAVE_OPTS = { "quality", "compression_level", "format" }

-- image.save(path, img, {quality=75, compression_level=6, format=}) — the format from the
-- extension (.png, .jpg, .jpeg) unless `format` ('png' | 'jpeg') says
function M.save(path, x, opts)
  local fname = "image.save"
  class.check_options(fname, opts, SAVE_OPTS)
  opts = opts or {}
  if type(path) ~= "string" then fail(fname, "argument 'path' must be a file name, got %s", type(path)) end
  local fmt = opts.format
  if fmt ~= nil then
    fmt = FORMATS[tostring(fmt):lower()]
    if not fmt then fail(fname, "option 'format' must be 'png' or 'jpeg', got %s", tostring(opts.format)) end
  else
    local ext = path:match("%.([%w]+)$")
    fmt = ext and FORMATS[ext:lower()]
    if not fmt then
      fail(fname, "cannot tell the format of '%s' from its extension (.png, .jpg, .jpeg; or give {format=})", path)
    end
  end
  if fmt == "png" and opts.quality ~= nil then fail(fname, "option 'quality' is for JPEG files; PNG is lossless") end
  if fmt == "jpeg" and opts.compression_level ~= nil then
    fail(fname, "option 'compression_level' is for PNG files (JPEG takes 'quality')")
  end
  local u8 = to_uint8(fname, x, "tensor")
  local bytes
  if fmt == "png" then bytes = C.encode_png(u8, check_level(fname, opts.compression_level or 6), fname)
  else bytes = C.encode_jpeg(u8, check_quality(fname, opts.quality or 75), fname) end
  write_all(fname, path, bytes)
end

-- torchvision.io.write_png(input, filename, compression_level=6), write_jpeg(input, filename, quality=75)
local WRITE_PNG = class.signature("image.write_png", "input, filename, compression_level=6")
local WRITE_JPEG = class.signature("image.write_jpeg", "input, filename, quality=75")
function M.write_png(...)
  local fname = "image.write_png"
  local a = WRITE_PNG(...)
  local bytes = C.encode_png(to_uint8(fname, a.input), check_level(fname, a.compression_level), fname)
  write_all(fname, a.filename, bytes)
end
function M.write_jpeg(...)
  local fname = "image.write_jpeg"
  local a = WRITE_JPEG(...)
  local bytes = C.encode_jpeg(to_uint8(fname, a.input), check_quality(fname, a.quality), fname)
  write_all(fname, a.filename, bytes)
end

-- Torch7's per-format names
function M.loadPNG(path, depth, tensortype) return M.load(path, depth, tensortype) end
M.loadJPG = M.loadPNG
function M.savePNG(path, x) return M.save(path, x, { format = "png" }) end
function M.saveJPG(path, x) return M.save(path, x, { format = "jpeg" }) end

return M
