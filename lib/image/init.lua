-- image — reading, writing and transforming images: Torch7's `image` package on lutorch,
-- with torchvision's names (torchvision.io, torchvision.utils.make_grid,
-- torchvision.transforms.functional) as aliases. `local image = require "image"`, or
-- torch.image. man/image.md is the reference.
--
--   local img = image.load("cat.jpg")                  -- float32 [3, H, W] in [0, 1] (Torch7)
--   local u8 = image.read_image("cat.png")             -- uint8 [C, H, W] (torchvision)
--   image.save("small.png", image.scale(img, 64, 48))  -- width, height (Torch7's order)
--   image.display(image.make_grid(batch, {nrow = 8}))  -- notebook, or a PNG file + preview
--
-- Images are [C, H, W] (or [H, W], or a batch [N, C, H, W] where it makes sense), channels
-- first; floating images are in [0, 1], uint8 images in 0..255. The codecs (libpng,
-- libjpeg-turbo) are in liblutorch (src/serial/png.c, jpeg.c; torch._image).
local torch = torch or require("torch")
local class = require "torch_class"
local C = torch._image
local image = {}

local function fail(fname, fmt, ...) error(fname .. ": " .. fmt:format(...), 0) end

------------------------------------------------------------------------------
-- dtypes and shapes
------------------------------------------------------------------------------
-- Torch7's tensor type strings, and dtype names
local T7_TYPES = { byte = "uint8", float = "float32", double = "float64" }
local LOADABLE = { uint8 = true, int32 = true, int64 = true, float16 = true, bfloat16 = true, float32 = true,
                   float64 = true }

local function is_dtype(v) return type(v) == "table" and v.is_floating_point ~= nil and v.name ~= nil end

-- a dtype from a dtype value, a dtype name or a Torch7 type string
local function to_dtype(fname, v, argname)
  if is_dtype(v) then return v end
  if type(v) == "string" then
    local name = T7_TYPES[v] or v:gsub("^torch%.", "")
    local dt = rawget(torch, name)
    if is_dtype(dt) then return dt end
  end
  fail(fname, "argument '%s' must be a dtype (torch.uint8, torch.float32, ...) or 'byte', 'float', 'double'; got %s",
    argname, tostring(v))
end

local function check_tensor(fname, x, argname)
  if not torch.is_tensor(x) then
    fail(fname, "argument '%s' must be a tensor, got %s", argname or "input", type(x))
  end
  return x
end

-- an image tensor: [H, W] or [C, H, W] (with `batch`, also [N, C, H, W])
local function check_image(fname, x, argname, batch)
  check_tensor(fname, x, argname)
  local d = x:dim()
  if d < 2 or d > (batch and 4 or 3) then
    fail(fname, "argument '%s' must be an image [C, H, W] or [H, W]%s, got a %d-D tensor of shape %s",
      argname or "input", batch and " or a batch [N, C, H, W]" or "", d, tostring(x.shape))
  end
  if x.dtype.is_complex or x.dtype == torch.bool then
    fail(fname, "argument '%s' has dtype %s; images are real numbers", argname or "input", x.dtype.name)
  end
  return x
end

-- x as a 4-D float batch, and a function that gives a result of the batch back x's shape
-- and dtype (integer dtypes rounded and clamped to their range, as torchvision does)
local function as_batch(x)
  local d, dt = x:dim(), x.dtype
  local fdt = dt.is_floating_point and dt or torch.float32
  if dt == torch.float16 or dt == torch.bfloat16 then fdt = torch.float32 end
  local b = x:to(fdt)
  if d == 2 then b = b:reshape(1, 1, x:size(1), x:size(2))
  elseif d == 3 then b = b:unsqueeze(1) end
  local function back(y)
    if d == 2 then y = y:reshape(y:size(3), y:size(4))
    elseif d == 3 then y = y:squeeze(1) end
    if not dt.is_floating_point then
      local lo, hi = 0, 255
      if dt == torch.int8 then lo, hi = -128, 127 elseif dt ~= torch.uint8 then lo, hi = nil, nil end
      y = y:round()
      if lo then y = y:clamp(lo, hi) end
    end
    return y:to(dt):contiguous()
  end
  return b, back
end

local function positive_int(v) return math.type(v) == "integer" and v > 0 end

------------------------------------------------------------------------------
-- decoding
------------------------------------------------------------------------------
local function read_all(fname, path)
  if type(path) ~= "string" then fail(fname, "argument 'path' must be a file name, got %s", type(path)) end
  local f, err = io.open(path, "rb")
  if not f then fail(fname, "cannot open '%s': %s", path, (err or "?"):gsub("^[^:]*: ", "")) end
  local bytes = f:read("a")
  f:close()
  if not bytes then fail(fname, "cannot read '%s'", path) end
  return bytes
end

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
function image.load(path, a2, a3)
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
function image.read_image(path, opts)
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
image.decode_png = decoder("image.decode_png", "png")
image.decode_jpeg = decoder("image.decode_jpeg", "jpeg")
image.decode_image = decoder("image.decode_image", nil)
image.decode = image.decode_image

------------------------------------------------------------------------------
-- encoding
------------------------------------------------------------------------------
-- x as a contiguous uint8 [C, H, W]: floating images are clamped to [0, 1], scaled and rounded
local function to_uint8(fname, x, argname)
  check_image(fname, x, argname)
  if x:dim() == 2 then x = x:unsqueeze(1) end
  local c = x:size(1)
  if c < 1 or c > 4 then
    fail(fname, "argument '%s' must have 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) channels, got %d " ..
      "(shape %s; images are [C, H, W])", argname or "input", c, tostring(x.shape))
  end
  if x.device.type ~= "cpu" then x = x:cpu() end
  local dt = x.dtype
  if dt == torch.uint8 then return x:contiguous() end
  if not dt.is_floating_point then
    fail(fname, "argument '%s' has dtype %s: save uint8 (0..255) or floating ([0, 1]) images", argname or "input",
      dt.name)
  end
  -- x * 255 rounded half up, as torchvision's save_image (add 0.5, truncate)
  return x:to(torch.float32):clamp(0, 1):mul(255):add(0.5):floor():to(torch.uint8):contiguous()
end

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
function image.encode_png(...)
  local fname = "image.encode_png"
  local a = ENCODE_PNG(...)
  return C.encode_png(to_uint8(fname, a.input), check_level(fname, a.compression_level), fname)
end
function image.encode_jpeg(...)
  local fname = "image.encode_jpeg"
  local a = ENCODE_JPEG(...)
  return C.encode_jpeg(to_uint8(fname, a.input), check_quality(fname, a.quality), fname)
end

local function write_all(fname, path, bytes)
  if type(path) ~= "string" then fail(fname, "argument 'path' must be a file name, got %s", type(path)) end
  local f, err = io.open(path, "wb")
  if not f then fail(fname, "cannot write '%s': %s", path, (err or "?"):gsub("^[^:]*: ", "")) end
  local ok, werr = f:write(bytes)
  local cok, cerr = f:close()
  if not ok or not cok then fail(fname, "cannot write '%s': %s", path, tostring(werr or cerr)) end
end

local FORMATS = { png = "png", jpg = "jpeg", jpeg = "jpeg" }
local SAVE_OPTS = { "quality", "compression_level", "format" }

-- image.save(path, img, {quality=75, compression_level=6, format=}) — the format from the
-- extension (.png, .jpg, .jpeg) unless `format` ('png' | 'jpeg') says
function image.save(path, x, opts)
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
function image.write_png(...)
  local fname = "image.write_png"
  local a = WRITE_PNG(...)
  local bytes = C.encode_png(to_uint8(fname, a.input), check_level(fname, a.compression_level), fname)
  write_all(fname, a.filename, bytes)
end
function image.write_jpeg(...)
  local fname = "image.write_jpeg"
  local a = WRITE_JPEG(...)
  local bytes = C.encode_jpeg(to_uint8(fname, a.input), check_quality(fname, a.quality), fname)
  write_all(fname, a.filename, bytes)
end

-- Torch7's per-format names
function image.loadPNG(path, depth, tensortype) return image.load(path, depth, tensortype) end
image.loadJPG = image.loadPNG
function image.savePNG(path, x) return image.save(path, x, { format = "png" }) end
function image.saveJPG(path, x) return image.save(path, x, { format = "jpeg" }) end

------------------------------------------------------------------------------
-- resampling
------------------------------------------------------------------------------
-- PyTorch's cubic convolution weights (A = -0.75) for the four taps around t in [0, 1)
local CUBIC_A = -0.75
local function cubic_weights(t)
  local A = CUBIC_A
  local function near(x) return ((A + 2) * x - (A + 3)) * x * x + 1 end          -- |x| <= 1
  local function far(x) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A end      -- 1 < |x| < 2
  return far(t + 1), near(t), near(1 - t), far(2 - t)
end

-- filters for antialiased resampling (PyTorch's _upsample_*_aa): support and weight
local AA = {
  bilinear = { support = 1, f = function(x) x = math.abs(x); return x < 1 and 1 - x or 0 end },
  bicubic = { support = 2, f = function(x)
    x = math.abs(x)
    local A = -0.5
    if x < 1 then return ((A + 2) * x - (A + 3)) * x * x + 1 end
    if x < 2 then return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A end
    return 0
  end },
}

-- the taps that resample one axis of n_in samples to n_out: for each output o, the inputs
-- it reads and their weights, as two [n_out, T] lists (0-based input indices; unused taps
-- have weight 0)
local function resample_taps(n_in, n_out, mode, antialias)
  local scale = n_in / n_out
  local idx, wts, T = {}, {}, 0
  for o = 1, n_out do
    local ii, ww = {}, {}
    if antialias then
      -- PyTorch's _upsample_*_aa: the filter widened by the scale when shrinking, the weights
      -- normalised over the taps inside the input
      local flt = AA[mode]
      local sc = math.max(scale, 1)
      local support = flt.support * sc
      local center = scale * (o - 1 + 0.5)
      local xmin = math.max(math.floor(center - support + 0.5), 0)
      local xmax = math.min(math.floor(center + support + 0.5), n_in)
      local total = 0
      for j = xmin, xmax - 1 do
        local v = flt.f((j - center + 0.5) / sc)
        ii[#ii + 1], ww[#ww + 1] = j, v
        total = total + v
      end
      if total ~= 0 then for k = 1, #ww do ww[k] = ww[k] / total end end
    elseif mode == "bicubic" then
      -- PyTorch's upsample_bicubic2d: four taps around the source position, clamped at the edges
      local real = scale * (o - 1 + 0.5) - 0.5
      local i0 = math.floor(real)
      local w4 = { cubic_weights(real - i0) }
      for k = 0, 3 do ii[k + 1], ww[k + 1] = math.min(math.max(i0 - 1 + k, 0), n_in - 1), w4[k + 1] end
    else   -- bilinear
      local real = math.max(scale * (o - 1 + 0.5) - 0.5, 0)
      local i0 = math.floor(real)
      local l1 = real - i0
      ii[1], ww[1] = i0, 1 - l1
      ii[2], ww[2] = i0 < n_in - 1 and i0 + 1 or i0, l1
    end
    idx[o], wts[o] = ii, ww
    if #ii > T then T = #ii end
  end
  return idx, wts, T
end

-- b ([N, C, H, W]) resampled along dim d (3 or 4) to n_out samples: a weighted sum of T
-- index_selects, so the cost is the output's size times the taps
local function resample_axis(b, d, n_out, mode, antialias)
  local idx, wts, T = resample_taps(b:size(d), n_out, mode, antialias)
  local y
  for t = 1, T do
    local it, wt = {}, {}
    for o = 1, n_out do
      it[o] = (idx[o][t] or idx[o][1]) + 1   -- 1-based
      wt[o] = wts[o][t] or 0
    end
    local shape = { 1, 1, 1, 1 }
    shape[d] = n_out
    local term = b:index_select(d, torch.tensor(it, { dtype = torch.int64 })) *
      torch.tensor(wt, { dtype = b.dtype }):reshape(shape)
    y = y and y:add_(term) or term
  end
  return y
end

local MODES = { bilinear = "bilinear", bicubic = "bicubic", simple = "nearest", nearest = "nearest" }
-- the largest output the resamplers make: as the decoders' limits (serial/image.h)
local MAX_SIDE, MAX_PIXELS = 65535, 1 << 28

-- resample x ([H, W], [C, H, W] or [N, C, H, W]) to oh x ow
local function resample(fname, x, oh, ow, mode, antialias)
  local m = MODES[mode]
  if not m then
    fail(fname, "mode must be 'bilinear', 'bicubic', 'simple' or 'nearest', got %s", tostring(mode))
  end
  if not (positive_int(oh) and positive_int(ow)) or oh > MAX_SIDE or ow > MAX_SIDE then
    fail(fname, "the output size must be positive integers up to %d, got %s x %s (width x height)", MAX_SIDE,
      tostring(ow), tostring(oh))
  end
  if oh * ow > MAX_PIXELS then
    fail(fname, "a %d x %d output is more than %d pixels (width x height)", ow, oh, MAX_PIXELS)
  end
  local b, back = as_batch(x)
  local H, W = b:size(3), b:size(4)
  if antialias and m == "nearest" then fail(fname, "antialias applies to 'bilinear' and 'bicubic' only") end
  local y
  if m == "nearest" then
    y = torch.upsample_nearest2d(b, { oh, ow })
  elseif m == "bilinear" and not antialias then
    y = torch.upsample_bilinear2d(b, { oh, ow }, false)
  else
    -- separable: rows, then columns
    y = resample_axis(resample_axis(b, 3, oh, m, antialias), 4, ow, m, antialias)
  end
  return back(y)
end

-- Torch7's size argument: a number is the longer side; '^N' the shorter side; '*f' a factor
local function scaled_size(fname, H, W, size)
  if type(size) == "number" then
    if not positive_int(size) then fail(fname, "argument 'size' must be a positive integer, got %s", tostring(size)) end
    if W >= H then return math.max(1, math.floor(H * size / W + 0.5)), size end
    return size, math.max(1, math.floor(W * size / H + 0.5))
  elseif type(size) == "string" then
    local op, num = size:match("^([%^%*]?)([%d%.]+)$")
    num = tonumber(num)
    if op == "^" and num and num > 0 then
      local s = num / math.min(H, W)
      return math.max(1, math.floor(H * s + 0.5)), math.max(1, math.floor(W * s + 0.5))
    elseif op == "*" and num and num > 0 then
      return math.max(1, math.floor(H * num + 0.5)), math.max(1, math.floor(W * num + 0.5))
    elseif op == "" and num and math.tointeger(num) then
      return scaled_size(fname, H, W, math.tointeger(num))
    end
  end
  fail(fname, "argument 'size' must be a number (the longer side), '^N' (the shorter side) or '*f' (a factor), got %s",
    tostring(size))
end

local SCALE = class.signature("image.scale", "src, width, height=nil, mode='bilinear', *, antialias=false")
-- image.scale(src, width, height, mode='bilinear') or image.scale(src, size, mode) (Torch7)
function image.scale(...)
  local fname = "image.scale"
  local a = SCALE(...)
  local x = check_image(fname, a.src, "src", true)
  local H, W = x:size(-2), x:size(-1)
  local oh, ow, mode = a.height, a.width, a.mode
  if type(oh) == "string" and MODES[oh] then oh, mode = nil, oh end
  if oh == nil then
    oh, ow = scaled_size(fname, H, W, a.width)
  elseif not (positive_int(ow) and positive_int(oh)) then
    fail(fname, "width and height must be positive integers, got %s and %s", tostring(ow), tostring(oh))
  end
  return resample(fname, x, oh, ow, mode, a.antialias)
end

local RESIZE = class.signature("image.resize",
  "img, size, interpolation='bilinear', max_size=nil, antialias=false, *, mode=nil")
-- image.resize(img, size, interpolation='bilinear', max_size, antialias) — torchvision's:
-- size {h, w}, or a number that the shorter side becomes (the longer keeps the aspect ratio)
function image.resize(...)
  local fname = "image.resize"
  local a = RESIZE(...)
  local x = check_image(fname, a.img, "img", true)
  local H, W = x:size(-2), x:size(-1)
  local size, oh, ow = a.size
  if type(size) == "table" and #size == 1 then size = size[1] end
  if type(size) == "number" then
    if not positive_int(size) then fail(fname, "argument 'size' must be a positive integer, got %s", tostring(size)) end
    local short, long = math.min(H, W), math.max(H, W)
    local new_short, new_long = size, math.floor(size * long / short)
    if a.max_size ~= nil then
      if not positive_int(a.max_size) or a.max_size <= size then
        fail(fname, "max_size must be an integer greater than size (%d), got %s", size, tostring(a.max_size))
      end
      if new_long > a.max_size then new_short, new_long = math.floor(a.max_size * new_short / new_long), a.max_size end
    end
    if W <= H then ow, oh = new_short, new_long else oh, ow = new_short, new_long end
  elseif type(size) == "table" and #size == 2 then
    if a.max_size ~= nil then fail(fname, "max_size is only meaningful when size is a number") end
    oh, ow = size[1], size[2]
  else
    fail(fname, "argument 'size' must be a number or {h, w}, got %s", tostring(size))
  end
  local mode = a.mode or a.interpolation
  return resample(fname, x, oh, ow, mode, a.antialias)
end

------------------------------------------------------------------------------
-- geometry
------------------------------------------------------------------------------
local CROP_FORMATS = { c = true, tl = true, tr = true, bl = true, br = true }

-- image.crop(src, x1, y1, x2, y2): the window between pixel edges x1..x2, y1..y2, counted from
-- the image's top-left corner (0, 0), so x2 - x1 pixels wide (Torch7's convention; x1, y1 alone:
-- to the bottom-right). image.crop(src, 'c' | 'tl' | 'tr' | 'bl' | 'br', width, height)
function image.crop(src, a1, a2, a3, a4)
  local fname = "image.crop"
  local x = check_image(fname, src, "src", true)
  local H, W = x:size(-2), x:size(-1)
  local x1, y1, x2, y2
  if type(a1) == "string" then
    if not CROP_FORMATS[a1] then fail(fname, "format must be 'c', 'tl', 'tr', 'bl' or 'br', got '%s'", a1) end
    local w, h = a2, a3
    if not (positive_int(w) and positive_int(h)) then
      fail(fname, "width and height must be positive integers, got %s and %s", tostring(w), tostring(h))
    end
    if w > W or h > H then fail(fname, "a %d x %d crop does not fit in a %d x %d image", w, h, W, H) end
    if a1 == "c" then x1, y1 = (W - w) // 2, (H - h) // 2
    else
      y1 = a1:sub(1, 1) == "t" and 0 or H - h
      x1 = a1:sub(2, 2) == "l" and 0 or W - w
    end
    x2, y2 = x1 + w, y1 + h
  else
    x1, y1, x2, y2 = a1, a2, a3 == nil and W or a3, a4 == nil and H or a4
    for _, v in ipairs { x1, y1, x2, y2 } do
      if math.type(v) ~= "integer" then
        fail(fname, "x1, y1, x2, y2 must be integers (pixel edges from 0), got %s, %s, %s, %s", tostring(x1),
          tostring(y1), tostring(x2), tostring(y2))
      end
    end
    if not (0 <= x1 and x1 < x2 and x2 <= W and 0 <= y1 and y1 < y2 and y2 <= H) then
      fail(fname, "the window x %d..%d, y %d..%d is empty or outside the %d x %d image (0 <= x1 < x2 <= width)",
        x1, x2, y1, y2, W, H)
    end
  end
  local d = x:dim()
  return x:narrow(d - 1, y1 + 1, y2 - y1):narrow(d, x1 + 1, x2 - x1):contiguous()
end

-- torchvision's center_crop(img, size): size a number or {h, w}
function image.center_crop(img, size)
  local fname = "image.center_crop"
  check_image(fname, img, "img", true)
  local h, w
  if type(size) == "number" then h, w = size, size
  elseif type(size) == "table" then h, w = size[1], size[2] if w == nil then w = h end end
  if not (positive_int(h) and positive_int(w)) then
    fail(fname, "argument 'size' must be a positive integer or {h, w}, got %s", tostring(size))
  end
  local H, W = img:size(-2), img:size(-1)
  if h > H or w > W then fail(fname, "a %d x %d crop does not fit in a %d x %d image (h x w)", h, w, H, W) end
  -- torchvision rounds the offset: int(round((H - h) / 2))
  local function off(a, b)
    local v = (a - b) / 2
    local r = math.floor(v + 0.5)
    if v - math.floor(v) == 0.5 and r % 2 == 1 then r = r - 1 end   -- Python's round: half to even
    return r
  end
  local t, l = off(H, h), off(W, w)
  local d = img:dim()
  return img:narrow(d - 1, t + 1, h):narrow(d, l + 1, w):contiguous()
end

function image.hflip(src)
  local x = check_image("image.hflip", src, "src", true)
  return x:flip({ -1 })
end
function image.vflip(src)
  local x = check_image("image.vflip", src, "src", true)
  return x:flip({ -2 })
end

-- image.translate(src, x, y): shifted right by x and down by y whole pixels; uncovered pixels 0
function image.translate(src, dx, dy)
  local fname = "image.translate"
  local x = check_image(fname, src, "src", true)
  if math.type(dx) ~= "integer" or math.type(dy) ~= "integer" then
    fail(fname, "x and y must be whole pixels (integers), got %s and %s", tostring(dx), tostring(dy))
  end
  local d = x:dim()
  local H, W = x:size(d - 1), x:size(d)
  local out = torch.zeros_like(x)
  local w, h = W - math.abs(dx), H - math.abs(dy)
  if w <= 0 or h <= 0 then return out end
  local src_view = x:narrow(d - 1, math.max(-dy, 0) + 1, h):narrow(d, math.max(-dx, 0) + 1, w)
  out:narrow(d - 1, math.max(dy, 0) + 1, h):narrow(d, math.max(dx, 0) + 1, w):copy_(src_view)
  return out
end

-- image.rotate(src, theta, mode='simple'): rotated by theta radians about the centre (Torch7's
-- sense: output pixel (x, y) takes the input at the centre + R(theta) (x - xc, y - yc)), pixels
-- from outside the input 0; mode 'simple' (nearest) or 'bilinear'
function image.rotate(src, theta, mode)
  local fname = "image.rotate"
  local x = check_image(fname, src, "src", true)
  if type(theta) ~= "number" or theta ~= theta or math.abs(theta) == math.huge then
    fail(fname, "argument 'theta' must be a finite number (radians), got %s", tostring(theta))
  end
  mode = mode or "simple"
  if mode ~= "simple" and mode ~= "nearest" and mode ~= "bilinear" then
    fail(fname, "mode must be 'simple' (nearest) or 'bilinear', got %s", tostring(mode))
  end
  local b, back = as_batch(x)
  local N, Cn, H, W = b:size(1), b:size(2), b:size(3), b:size(4)
  local xc, yc = (W - 1) / 2, (H - 1) / 2
  local c, s = math.cos(theta), math.sin(theta)
  local xs = torch.arange(0, W, { dtype = torch.float64 }):reshape(1, W):expand(H, W) - xc
  local ys = torch.arange(0, H, { dtype = torch.float64 }):reshape(H, 1):expand(H, W) - yc
  local sx = xs * c - ys * s + xc     -- source coordinates of each output pixel
  local sy = xs * s + ys * c + yc
  local flat = b:reshape(N * Cn, H * W)
  local function tap(ix, iy, weight)
    local inside = ix:ge(0):logical_and(ix:le(W - 1)):logical_and(iy:ge(0)):logical_and(iy:le(H - 1))
    local idx = (iy:clamp(0, H - 1) * W + ix:clamp(0, W - 1) + 1):to(torch.int64):reshape(1, H * W)   -- 1-based
    local v = flat:gather(2, idx:expand(N * Cn, H * W))
    local wgt = inside:to(b.dtype):reshape(1, H * W)
    if weight then wgt = wgt * weight:to(b.dtype):reshape(1, H * W) end
    return v * wgt
  end
  local out
  if mode == "bilinear" then
    local x0, y0 = sx:floor(), sy:floor()
    local fx, fy = sx - x0, sy - y0
    out = tap(x0, y0, (1 - fx) * (1 - fy)) + tap(x0 + 1, y0, fx * (1 - fy)) + tap(x0, y0 + 1, (1 - fx) * fy) +
      tap(x0 + 1, y0 + 1, fx * fy)
  else
    out = tap((sx + 0.5):floor(), (sy + 0.5):floor())
  end
  return back(out:reshape(N, Cn, H, W))
end

------------------------------------------------------------------------------
-- colour
------------------------------------------------------------------------------
local function rgb_of(fname, src)
  local x = check_image(fname, src, "input")
  if x:dim() ~= 3 or x:size(1) < 3 or x:size(1) > 4 then
    fail(fname, "argument 'input' must be an RGB image [3, H, W], got shape %s", tostring(x.shape))
  end
  if not x.dtype.is_floating_point then x = x:to(torch.float32):div(255) end
  return x:narrow(1, 1, 3)
end

-- image.rgb2y(img) -> [1, H, W]: luma 0.299 R + 0.587 G + 0.114 B (ITU-R 601)
function image.rgb2y(src)
  local x = rgb_of("image.rgb2y", src)
  return (x[1] * 0.299 + x[2] * 0.587 + x[3] * 0.114):unsqueeze(1)
end
-- torchvision's rgb_to_grayscale(img, num_output_channels=1)
function image.rgb_to_grayscale(img, n)
  n = n or 1
  if n ~= 1 and n ~= 3 then fail("image.rgb_to_grayscale", "num_output_channels must be 1 or 3, got %s", tostring(n)) end
  local y = image.rgb2y(img)
  if n == 3 then y = y:expand(3, y:size(2), y:size(3)):contiguous() end
  if torch.is_tensor(img) and img.dtype == torch.uint8 then y = y:mul(255):round():clamp(0, 255):to(torch.uint8) end
  return y
end

-- image.rgb2hsv(img) -> [3, H, W] with hue, saturation and value in [0, 1]
function image.rgb2hsv(src)
  local x = rgb_of("image.rgb2hsv", src)
  local r, g, b = x[1], x[2], x[3]
  local maxc = torch.maximum(torch.maximum(r, g), b)
  local minc = torch.minimum(torch.minimum(r, g), b)
  local delta = maxc - minc
  local gray = delta:eq(0)
  local safe_delta = torch.where(gray, torch.ones_like(delta), delta)
  local safe_max = torch.where(maxc:eq(0), torch.ones_like(maxc), maxc)
  local s = torch.where(maxc:eq(0), torch.zeros_like(maxc), delta / safe_max)
  local rc, gc, bc = (maxc - r) / safe_delta, (maxc - g) / safe_delta, (maxc - b) / safe_delta
  local h = torch.where(maxc:eq(r), bc - gc, torch.where(maxc:eq(g), 2.0 + rc - bc, 4.0 + gc - rc))
  h = (h / 6.0):remainder(1.0)
  h = torch.where(gray, torch.zeros_like(h), h)
  return torch.stack({ h, s, maxc })
end

-- image.hsv2rgb(img) -> [3, H, W]
function image.hsv2rgb(src)
  local fname = "image.hsv2rgb"
  local x = check_image(fname, src, "input")
  if x:dim() ~= 3 or x:size(1) ~= 3 then
    fail(fname, "argument 'input' must be an HSV image [3, H, W], got shape %s", tostring(x.shape))
  end
  if not x.dtype.is_floating_point then fail(fname, "argument 'input' must be floating (h, s, v in [0, 1])") end
  local h, s, v = x[1], x[2], x[3]
  local h6 = (h:remainder(1.0)) * 6
  local i = h6:floor()
  local f = h6 - i
  local p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
  i = i:remainder(6)
  local function pick(...)
    local opts = { ... }
    local out = opts[6]
    for k = 5, 1, -1 do out = torch.where(i:eq(k - 1), opts[k], out) end
    return out
  end
  return torch.stack({ pick(v, q, p, p, t, v), pick(t, v, v, q, p, p), pick(p, p, t, v, v, q) })
end

------------------------------------------------------------------------------
-- filters
------------------------------------------------------------------------------
local GAUSSIAN = class.signature("image.gaussian",
  "size=3, sigma=0.25, amplitude=1, normalize=false, width=nil, height=nil, sigma_horz=nil, sigma_vert=nil, " ..
  "mean_horz=0.5, mean_vert=0.5, *, dtype=nil")
-- image.gaussian(size=3, sigma=0.25, amplitude=1, normalize=false, width, height, sigma_horz,
-- sigma_vert, mean_horz=0.5, mean_vert=0.5) (Torch7): a [height, width] kernel; sigma and
-- the means are fractions of the size
function image.gaussian(...)
  local fname = "image.gaussian"
  local a = GAUSSIAN(...)
  local width, height = a.width or a.size, a.height or a.size
  if not (positive_int(width) and positive_int(height)) then
    fail(fname, "size (or width and height) must be positive integers, got %s x %s", tostring(width), tostring(height))
  end
  if width * height > (1 << 24) then fail(fname, "a %d x %d kernel is too large", width, height) end
  local sh, sv = a.sigma_horz or a.sigma, a.sigma_vert or a.sigma
  for _, v in ipairs { sh, sv, a.amplitude, a.mean_horz, a.mean_vert } do
    if type(v) ~= "number" then fail(fname, "sigma, amplitude and the means must be numbers") end
  end
  if sh <= 0 or sv <= 0 then fail(fname, "sigma must be positive, got %s", tostring(sh <= 0 and sh or sv)) end
  local dt = a.dtype and to_dtype(fname, a.dtype, "dtype") or torch.get_default_dtype()
  local cx, cy = a.mean_horz * width + 0.5, a.mean_vert * height + 0.5
  local j = torch.arange(1, width + 1, { dtype = torch.float64 }):reshape(1, width)
  local i = torch.arange(1, height + 1, { dtype = torch.float64 }):reshape(height, 1)
  local g = (((j - cx) / (sh * width)) ^ 2 / 2 + ((i - cy) / (sv * height)) ^ 2 / 2):neg():exp() * a.amplitude
  if a.normalize then g = g / g:sum() end
  return g:to(dt)
end

-- image.gaussian1D(size=3, sigma=0.25, amplitude=1, normalize=false, mean=0.5)
function image.gaussian1D(size, sigma, amplitude, normalize, mean)
  local g = image.gaussian { width = size or 3, height = 1, sigma = sigma or 0.25, amplitude = amplitude or 1,
    normalize = normalize or false, mean_horz = mean or 0.5 }
  return g:reshape(g:size(2))
end

-- image.convolve(src, kernel, mode='valid'): true 2-D convolution (the kernel flipped, as
-- Torch7's torch.conv2) of each channel of src with a 2-D kernel; 'full' ((H+kh-1) x
-- (W+kw-1)), 'valid' ((H-kh+1) x (W-kw+1)) or 'same' (H x W, the centre of 'full', as
-- scipy.signal.convolve2d)
function image.convolve(src, kernel, mode)
  local fname = "image.convolve"
  local x = check_image(fname, src, "src", true)
  check_tensor(fname, kernel, "kernel")
  if kernel:dim() ~= 2 then fail(fname, "argument 'kernel' must be 2-D [kh, kw], got shape %s", tostring(kernel.shape)) end
  mode = mode or "valid"   -- Torch7's default
  if mode ~= "full" and mode ~= "valid" and mode ~= "same" then
    fail(fname, "mode must be 'full', 'valid' or 'same', got %s", tostring(mode))
  end
  local kh, kw = kernel:size(1), kernel:size(2)
  local H, W = x:size(-2), x:size(-1)
  if mode == "valid" and (kh > H or kw > W) then
    fail(fname, "a %d x %d kernel is larger than the %d x %d image ('valid' needs kernel <= image)", kh, kw, H, W)
  end
  local b, back = as_batch(x)
  local N, Cn = b:size(1), b:size(2)
  local k = kernel:to(b.dtype):flip({ 1, 2 }):reshape(1, 1, kh, kw)
  local planes = b:reshape(N * Cn, 1, H, W)
  local y
  if mode == "valid" then y = torch.conv2d(planes, k)
  else
    y = torch.conv2d(planes, k, nil, 1, { kh - 1, kw - 1 })   -- full
    if mode == "same" then
      y = y:narrow(3, (kh - 1) // 2 + 1, H):narrow(4, (kw - 1) // 2 + 1, W)
    end
  end
  return back(y:reshape(N, Cn, y:size(3), y:size(4)))
end

------------------------------------------------------------------------------
-- grids and display
------------------------------------------------------------------------------
-- a list of images (tables of tensors, or a batch) as one [N, C, H, W] float tensor
local function stack_images(fname, input)
  local x
  if type(input) == "table" and not torch.is_tensor(input) then
    if #input == 0 then fail(fname, "argument 'input' is an empty list") end
    local items = {}
    for i, t in ipairs(input) do
      check_image(fname, t, ("input[%d]"):format(i))
      if t:dim() == 2 then t = t:unsqueeze(1) end
      if i > 1 and not (t:size(1) == items[1]:size(1) and t:size(2) == items[1]:size(2) and t:size(3) == items[1]:size(3)) then
        fail(fname, "the images must all have one shape: input[1] is %s, input[%d] is %s", tostring(items[1].shape),
          i, tostring(t.shape))
      end
      items[i] = t
    end
    x = torch.stack(items)
  else
    x = check_image(fname, input, "input", true)
    if x:dim() == 2 then x = x:reshape(1, 1, x:size(1), x:size(2))
    elseif x:dim() == 3 then x = x:unsqueeze(1) end
  end
  return x
end

local GRID = class.signature("image.make_grid",
  "tensor, nrow=8, padding=2, normalize=false, value_range=nil, scale_each=false, pad_value=0")
-- image.make_grid(tensor, nrow=8, padding=2, normalize=false, value_range=nil, scale_each=false,
-- pad_value=0) — torchvision.utils.make_grid: a batch [N, C, H, W] (or a list of images) laid
-- out nrow to a row with `padding` pixels around each; one-channel images become three
function image.make_grid(...)
  local fname = "image.make_grid"
  local a = GRID(...)
  local x = stack_images(fname, a.tensor)
  if not positive_int(a.nrow) then fail(fname, "nrow must be a positive integer, got %s", tostring(a.nrow)) end
  if math.type(a.padding) ~= "integer" or a.padding < 0 then
    fail(fname, "padding must be a non-negative integer, got %s", tostring(a.padding))
  end
  if type(a.pad_value) ~= "number" then fail(fname, "pad_value must be a number, got %s", tostring(a.pad_value)) end
  if x:size(2) == 1 then x = torch.cat({ x, x, x }, 2) end
  if a.normalize then
    if not x.dtype.is_floating_point then x = x:to(torch.float32) else x = x:clone() end
    local vr = a.value_range
    if vr ~= nil and not (type(vr) == "table" and type(vr[1]) == "number" and type(vr[2]) == "number") then
      fail(fname, "value_range must be {min, max}, got %s", tostring(vr))
    end
    local function norm(t)
      local lo, hi
      if vr then lo, hi = vr[1], vr[2] else lo, hi = t:min():item(), t:max():item() end
      t:clamp_(lo, hi):sub_(lo):div_(math.max(hi - lo, 1e-5))
    end
    if a.scale_each then for i = 1, x:size(1) do norm(x[i]) end else norm(x) end
  elseif a.value_range ~= nil or a.scale_each then
    -- torchvision ignores them without normalize; a silent no-op would hide a mistake
    fail(fname, "value_range and scale_each apply only with normalize=true")
  end
  local n = x:size(1)
  if n == 1 then return x[1]:contiguous() end
  local xmaps = math.min(a.nrow, n)
  local ymaps = math.ceil(n / xmaps)
  local p = a.padding
  local h, w = x:size(3) + p, x:size(4) + p
  local grid = torch.full({ x:size(2), h * ymaps + p, w * xmaps + p }, a.pad_value, { dtype = x.dtype })
  local k = 0
  for yy = 0, ymaps - 1 do
    for xx = 0, xmaps - 1 do
      if k >= n then break end
      grid:narrow(2, yy * h + p + 1, h - p):narrow(3, xx * w + p + 1, w - p):copy_(x[k + 1])
      k = k + 1
    end
  end
  return grid
end

local TODISPLAY_OPTS = { "input", "padding", "nrow", "scaleeach", "min", "max", "symmetric", "saturate" }
-- image.toDisplayTensor{input=, padding=0, nrow=6, scaleeach=false, min=, max=, symmetric=false,
-- saturate=true} (Torch7's): the images (a list, a batch [N, C, H, W], or [N, H, W] with N not 1
-- or 3: N gray maps) laid out nrow to a row, each cell `padding` pixels larger than an image,
-- on a background of the largest value, and the whole scaled to [0, 1] (Torch7's minmax: from
-- min/max when given, clamped unless saturate=false, else from the data's own range;
-- scaleeach: each image by itself first). A single image ([H, W] or [C, H, W] with C 1 or 3) is
-- only scaled. Gray maps give a 2-D grid, as in Torch7.
function image.toDisplayTensor(opts, ...)
  local fname = "image.toDisplayTensor"
  if torch.is_tensor(opts) or (type(opts) == "table" and opts[1] ~= nil and opts.input == nil) then
    local pos = { ... }   -- Torch7 also took (input, padding, nrow, scaleeach, min, max, symmetric, saturate)
    opts = { input = opts, padding = pos[1], nrow = pos[2], scaleeach = pos[3], min = pos[4], max = pos[5],
             symmetric = pos[6], saturate = pos[7] }
  end
  class.check_options(fname, opts, TODISPLAY_OPTS)
  if opts.input == nil then fail(fname, "option 'input' (the images) is required") end
  local padding, nrow = opts.padding or 0, opts.nrow or 6
  if math.type(padding) ~= "integer" or padding < 0 then
    fail(fname, "padding must be a non-negative integer, got %s", tostring(padding))
  end
  if not positive_int(nrow) then fail(fname, "nrow must be a positive integer, got %s", tostring(nrow)) end
  for _, k in ipairs { "min", "max" } do
    if opts[k] ~= nil and type(opts[k]) ~= "number" then fail(fname, "%s must be a number, got %s", k, tostring(opts[k])) end
  end
  -- Torch7's minmax, in place on t
  local function minmax(t)
    local lo, hi = opts.min, opts.max
    local saturate = opts.saturate ~= false and (lo ~= nil or hi ~= nil)
    if lo == nil or hi == nil then
      local tmin, tmax = t:min():item(), t:max():item()
      if opts.symmetric then
        local m = math.max(math.abs(tmin), math.abs(tmax))
        tmin, tmax = -m, m
      end
      lo = lo == nil and tmin or lo
      hi = hi == nil and tmax or hi
    end
    t:sub_(lo)
    if hi - lo ~= 0 then t:div_(hi - lo) end
    if saturate then t:clamp_(0, 1) end
  end
  local input = opts.input
  local single = torch.is_tensor(input) and (input:dim() == 2 or (input:dim() == 3 and (input:size(1) == 1 or input:size(1) == 3)))
  local gray_maps = torch.is_tensor(input) and input:dim() == 3 and not single
  if gray_maps then input = input:unsqueeze(2) end
  local x = stack_images(fname, input)
  x = x.dtype.is_floating_point and x:clone() or x:to(torch.float32)
  if single then
    local one = x[1]
    minmax(one)
    return opts.input:dim() == 2 and one[1] or one
  end
  local n = x:size(1)
  if opts.scaleeach then for i = 1, n do minmax(x[i]) end end
  local xmaps = math.min(nrow, n)
  local ymaps = math.ceil(n / xmaps)
  local h, w = x:size(3) + padding, x:size(4) + padding
  local grid = torch.full({ x:size(2), h * ymaps, w * xmaps }, x:max():item(), { dtype = x.dtype })
  local k = 1
  for yy = 0, ymaps - 1 do
    for xx = 0, xmaps - 1 do
      if k > n then break end
      grid:narrow(2, yy * h + padding // 2 + 1, h - padding):narrow(3, xx * w + padding // 2 + 1, w - padding)
        :copy_(x[k])
      k = k + 1
    end
  end
  if not opts.scaleeach then minmax(grid) end
  if gray_maps then grid = grid[1] end
  return grid
end

-- an ANSI 24-bit colour preview of a uint8 [C, H, W] image: two pixel rows per text line
-- (upper half block, foreground the upper pixel, background the lower)
local function ansi_preview(u8, max_cols, max_lines)
  local H, W = u8:size(2), u8:size(3)
  local s = math.min(1, max_cols / W, (2 * max_lines) / H)
  local oh, ow = math.max(1, math.floor(H * s)), math.max(1, math.floor(W * s))
  local x = u8
  if oh ~= H or ow ~= W then x = resample("image.display", u8, oh, ow, "bilinear", true) end
  if x:size(1) < 3 then x = x:narrow(1, 1, 1):expand(3, oh, ow) end
  x = x:narrow(1, 1, 3):to(torch.int64):contiguous()
  local px = x:reshape(3 * oh * ow)
  local function at(c, y, xx) return px[(c - 1) * oh * ow + (y - 1) * ow + xx] end
  local lines = {}
  for y = 1, oh, 2 do
    local parts = {}
    for xx = 1, ow do
      local top = ("\27[38;2;%d;%d;%dm"):format(at(1, y, xx), at(2, y, xx), at(3, y, xx))
      if y + 1 <= oh then
        parts[#parts + 1] = top .. ("\27[48;2;%d;%d;%dm\u{2580}"):format(at(1, y + 1, xx), at(2, y + 1, xx),
          at(3, y + 1, xx))
      else
        parts[#parts + 1] = top .. "\27[49m\u{2580}"
      end
    end
    lines[#lines + 1] = table.concat(parts) .. "\27[0m"
  end
  return table.concat(lines, "\n") .. "\n"
end
image._ansi_preview = ansi_preview

local DISPLAY_OPTS = { "file", "preview", "title", "legend", "nrow", "padding", "min", "max", "scaleeach", "zoom" }
-- image.display(img, {file=, preview=, nrow=, padding=, min=, max=, scaleeach=, zoom=, title=}):
-- the image (or a list / batch of them, laid out as toDisplayTensor does) as a PNG. Floating
-- values in [0, 1] and uint8 images are shown as they are; other ranges are scaled to the
-- data's min and max (Torch7's display), or to opts.min / opts.max. With torch._display_hook
-- set (the Jupyter kernel sets it) the hook is handed the MIME bundle
-- {["image/png"] = bytes, ["text/plain"] = "<image CxHxW>"}; otherwise the PNG is written to a
-- temporary file, whose name is printed, and on a terminal (or with preview=true) shown in
-- colour with half-block characters. opts.file writes the PNG there too. Returns the file
-- name, or nil when the hook took the picture and no file was asked for.
function image.display(img, opts)
  local fname = "image.display"
  if type(img) == "table" and not torch.is_tensor(img) and img.image ~= nil and opts == nil then
    opts = {}   -- Torch7's image.display{image=, ...}
    for k, v in pairs(img) do if k ~= "image" then opts[k] = v end end
    img = img.image
  end
  class.check_options(fname, opts, DISPLAY_OPTS)
  opts = opts or {}
  if img == nil then fail(fname, "argument 'image' is required") end
  -- the range shown: opts.min / max; else [0, 1] when every value is in it (uint8: scaled)
  local lo, hi = opts.min, opts.max
  if lo == nil and hi == nil and not opts.scaleeach then
    local all = stack_images(fname, img)
    local mn, mx = all:min():item(), all:max():item()
    if all.dtype == torch.uint8 then lo, hi = 0, 255
    elseif mn >= 0 and mx <= 1 then lo, hi = 0, 1 end
  end
  local single = torch.is_tensor(img) and img:dim() <= 3
  local x = image.toDisplayTensor { input = img, padding = opts.padding or (single and 0 or 2), nrow = opts.nrow,
    scaleeach = opts.scaleeach, min = lo, max = hi }
  local zoom = opts.zoom or 1
  if type(zoom) ~= "number" or zoom <= 0 then fail(fname, "zoom must be a positive number, got %s", tostring(zoom)) end
  if zoom ~= 1 then
    x = resample(fname, x, math.max(1, math.floor(x:size(-2) * zoom + 0.5)), math.max(1, math.floor(x:size(-1) * zoom + 0.5)),
      "nearest")
  end
  local u8 = to_uint8(fname, x, "image")
  if u8:size(1) == 2 then u8 = u8:narrow(1, 1, 1):contiguous() end
  local png = C.encode_png(u8, 6, fname)
  local desc = ("<image %s>"):format(table.concat(u8.shape, "x"))
  local title = opts.title or opts.legend   -- legend: Torch7's name for the window title
  if title then desc = ("%s %s"):format(tostring(title), desc) end
  local hook = rawget(torch, "_display_hook")
  if hook ~= nil then
    hook({ ["image/png"] = png, ["text/plain"] = desc })
    if opts.file == nil then return nil end
  end
  local path = opts.file
  if path == nil then
    local base = os.tmpname()   -- a unique name (the empty file it makes is removed)
    os.remove(base)
    path = base .. ".png"
  end
  write_all(fname, path, png)
  local tty = opts.preview
  if tty == nil then tty = hook == nil and torch._data.isatty(io.stdout) end
  if tty then io.stdout:write(ansi_preview(u8, 80, 24)) end
  if opts.file == nil then io.stdout:write(("%s written to %s\n"):format(desc, path)) end
  return path
end

return image
