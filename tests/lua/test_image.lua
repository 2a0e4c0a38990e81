-- test_image.lua — lib/image: PNG and JPEG against Pillow on the same files (made at test
-- time by tests/image_ref.py), round trips, resampling against PyTorch's F.interpolate,
-- geometry and colour against hand-computable cases, scipy and colorsys, grids, display,
-- the data transforms and ImageFolder, and the errors of damaged and hostile files.
local T = require "testing"
local P = require "pyref"
local image = require "image"
local data = require "data"

T.test("torch.image is the image library; every function has help", function()
  T.ok(torch.image == image)
  T.eq(type(image.load), "function")
  local missing, n = {}, 0
  for k, v in pairs(image) do
    if type(v) == "function" and not k:find("^_") then
      n = n + 1
      local r = torch.help("image." .. k)
      if r:find("no help", 1, true) or r:find("no reference", 1, true) then missing[#missing + 1] = k end
    end
  end
  T.ok(n > 30 and #missing == 0, "without help: " .. table.concat(missing, ", "))
  T.ok(torch.help("torchvision.io.read_image"):find("image.read_image", 1, true), "torchvision's path")
  for _, k in ipairs { "ImageFolder", "transforms.Resize", "transforms.ColorJitter", "transforms.CenterCrop" } do
    T.ok(not torch.help("data." .. k):find("no help", 1, true), "data." .. k)
  end
end)

local have_pil, why_pil = P.can_import("PIL, numpy")
local S = T.scratch()
local ref_ok = false
if have_pil then
  local p = io.popen(("%s tests/image_ref.py %s 2>&1"):format(P.PY, S.dir))
  local out = p:read("a")
  p:close()
  ref_ok = out:find("return {ok = true}", 1, true) ~= nil
  if not ref_ok then io.stderr:write("tests/image_ref.py failed:\n" .. out) end
end
local function F(name) return S.path(name) end
local function npy(name) return torch.load_npy(S.path(name .. ".npy")) end

-- a and b have one shape and differ by at most tol anywhere
local function close(a, b, tol, msg)
  T.eq(a:size(), b:size(), msg)
  local d = (a:to(torch.float64) - b:to(torch.float64)):abs():max():item()
  if d > tol then error(("%s: max difference %g > %g"):format(msg or "", d, tol), 2) end
end

-- a, b: integer tensors; the largest absolute difference
local function maxdiff(a, b) return (a:to(torch.int64) - b:to(torch.int64)):abs():max():item() end

local function pil_test(name, fn)
  if not have_pil then T.skip(name, why_pil .. " (apt-get install python3-pil)")
  elseif not ref_ok then T.test(name, function() error("tests/image_ref.py did not run") end)
  else T.test(name, fn) end
end

------------------------------------------------------------------------------
-- PNG decoding against Pillow
------------------------------------------------------------------------------
pil_test("png: 8-bit RGB, RGBA, gray, gray+alpha equal Pillow's pixels", function()
  for _, c in ipairs { { "rgb8", "rgb8", 3 }, { "rgba8", "rgba8", 4 }, { "gray8", "gray8", 1 }, { "la8", "la8_LA", 2 } } do
    local t = image.read_image(F(c[1] .. ".png"))
    T.eq(t.dtype, torch.uint8, c[1])
    T.eq(t:size(1), c[3], c[1] .. " channels")
    T.ok(t:equal(npy(c[2]):to(torch.uint8)), c[1] .. " pixels")
  end
end)

pil_test("png: palette (with and without tRNS), 1/2/4-bit gray, tRNS on RGB", function()
  T.ok(image.read_image(F("palette.png")):equal(npy("palette_RGB"):to(torch.uint8)), "palette")
  local pt = image.read_image(F("palette_trns.png"))
  T.eq(pt:size(1), 4, "a palette with transparency gives RGBA")
  T.ok(pt:equal(npy("palette_trns_RGBA"):to(torch.uint8)), "palette + tRNS")
  for _, d in ipairs { 1, 2, 4 } do
    T.ok(image.read_image(F("gray" .. d .. ".png")):equal(npy("gray" .. d .. "_L"):to(torch.uint8)), d .. "-bit")
  end
  T.ok(image.read_image(F("rgb_trns.png"), { channels = 4 }):equal(npy("rgb_trns_RGBA"):to(torch.uint8)), "RGB + tRNS")
end)

pil_test("png: 16-bit samples kept exactly (int32, float) or as Pillow's high bytes (uint8)", function()
  local g = image.read_image(F("gray16.png"), { dtype = torch.int32 })
  T.ok(g:equal(npy("gray16_raw")), "gray16 raw")
  T.ok(g:equal(npy("gray16")), "Pillow's I;16 too")
  T.ok(image.read_image(F("rgb16.png"), { dtype = "int64" }):equal(npy("rgb16_raw"):to(torch.int64)), "rgb16")
  T.ok(image.read_image(F("rgb16.png")):equal(npy("rgb16"):to(torch.uint8)), "rgb16 -> uint8 = Pillow")
  T.ok(image.read_image(F("rgba16.png"), { dtype = torch.int32 }):equal(npy("rgba16_raw")), "rgba16")
  local f = image.load(F("gray16.png"), { dtype = torch.float64 })
  close(f, npy("gray16_raw"):to(torch.float64) / 65535, 1e-15)
end)

pil_test("png: Adam7 interlaced files (8- and 16-bit)", function()
  T.ok(image.read_image(F("interlaced.png")):equal(npy("interlaced"):to(torch.uint8)), "8-bit")
  T.ok(image.read_image(F("interlaced16.png"), { dtype = torch.int32 }):equal(npy("interlaced16_raw")), "16-bit")
end)

pil_test("png: channel conversions equal Pillow's convert()", function()
  T.ok(image.read_image(F("rgb8.png"), { channels = 1 }):equal(npy("rgb8_L"):to(torch.uint8)), "RGB -> L")
  T.ok(image.read_image(F("rgb8.png"), { channels = 4 }):equal(npy("rgb8_RGBA"):to(torch.uint8)), "RGB -> RGBA")
  T.ok(image.read_image(F("rgba8.png"), { channels = 3 }):equal(npy("rgba8_RGB"):to(torch.uint8)), "RGBA -> RGB")
  T.ok(image.read_image(F("rgba8.png"), { channels = 1 }):equal(npy("rgba8_L"):to(torch.uint8)), "RGBA -> L")
  T.ok(image.read_image(F("gray8.png"), { channels = 3 }):equal(npy("gray8_RGB"):to(torch.uint8)), "L -> RGB")
  T.ok(image.read_image(F("gray8.png"), { channels = 4 }):equal(npy("gray8_RGBA"):to(torch.uint8)), "L -> RGBA")
  T.ok(image.read_image(F("la8.png"), { channels = 4 }):equal(npy("la8_RGBA"):to(torch.uint8)), "LA -> RGBA")
end)

pil_test("load: Torch7's forms (float in [0, 1], depth 1 gives [H, W], 'byte', 'double')", function()
  local u8 = npy("rgb8"):to(torch.uint8)
  local f = image.load(F("rgb8.png"))
  T.eq(f.dtype, torch.float32)
  close(f, u8:to(torch.float32) / 255, 1e-7)
  local b = image.load(F("rgb8.png"), 3, "byte")
  T.ok(b:equal(u8))
  local g = image.load(F("rgb8.png"), 1, "double")
  T.eq(g.dtype, torch.float64)
  T.eq(g:size(), { 23, 37 })
  close(g, npy("rgb8_L"):to(torch.float64):squeeze(1) / 255, 1e-15)
  T.eq(image.load(F("rgb8.png"), { channels = 1 }):size(), { 1, 23, 37 }, "the options form keeps C")
  T.ok(image.loadPNG(F("rgb8.png"), 3, "byte"):equal(u8), "loadPNG")
end)

------------------------------------------------------------------------------
-- JPEG decoding against Pillow
------------------------------------------------------------------------------
pil_test("jpeg: baseline RGB, gray and progressive within a level of Pillow's", function()
  for _, c in ipairs { { "rgb", 3 }, { "gray", 1 }, { "progressive", 3 } } do
    local t = image.read_image(F(c[1] .. ".jpg"))
    T.eq(t:size(1), c[2], c[1])
    T.ok(maxdiff(t, npy(c[1])) <= 1, c[1] .. ": max difference " .. maxdiff(t, npy(c[1])))
  end
  local l = image.read_image(F("rgb.jpg"), { channels = 1 })
  T.ok(maxdiff(l, npy("rgb_L")) <= 1, "RGB -> L")
  -- and the decoded picture is the picture that was encoded (JPEG's loss at quality 90)
  local err = (image.read_image(F("rgb.jpg")):to(torch.float64) - npy("smooth"):to(torch.float64)):abs():mean():item()
  T.ok(err < 4, "mean error " .. err)
end)

pil_test("jpeg: a CMYK file is refused with a clear error", function()
  T.raises(function() image.load(F("cmyk.jpg")) end, "image.load", "CMYK")
end)

------------------------------------------------------------------------------
-- encoding and round trips
------------------------------------------------------------------------------
T.test("png round trips: uint8 exactly, 1-4 channels, float clamped and rounded", function()
  for c = 1, 4 do
    local x = torch.randint(0, 256, { c, 9, 14 }):to(torch.uint8)
    local bytes = image.encode_png(x)
    T.eq(bytes:sub(2, 4), "PNG")
    T.ok(image.decode_png(bytes):equal(x), c .. " channels")
  end
  -- x * 255 rounded half up (torchvision's save_image), after clamping to [0, 1]
  local f = torch.tensor({ { { -0.5, 0, 0.4 / 255, 0.6 / 255, 0.3, 1, 2 } } }, { dtype = torch.float64 })
  T.tensor(image.decode_png(image.encode_png(f)), { { { 0, 0, 0, 1, 77, 255, 255 } } })
  local hw = torch.randint(0, 256, { 5, 6 }):to(torch.uint8)
  T.ok(image.decode_image(image.encode_png(hw, 9))[1]:equal(hw), "[H, W] saves as gray")
  -- a non-contiguous view saves as its values
  local base = torch.randint(0, 256, { 3, 8, 8 }):to(torch.uint8)
  local v = base:transpose(2, 3)
  T.ok(image.decode_png(image.encode_png(v)):equal(v))
end)

T.test("save/load files by extension; write_png / write_jpeg", function()
  local x = torch.rand(3, 12, 20)
  image.save(S.path("a.png"), x)
  local y = image.load(S.path("a.png"))
  T.ok((y - x):abs():max():item() <= 0.5 / 255 + 1e-6)
  image.save(S.path("a.JPG"), x, { quality = 95 })
  T.eq(image.load(S.path("a.JPG")):size(), { 3, 12, 20 })
  image.write_png(image.read_image(S.path("a.png")), S.path("b.png"), 1)
  T.ok(image.read_image(S.path("b.png")):equal(image.read_image(S.path("a.png"))))
  image.write_jpeg((x * 255):round():to(torch.uint8), S.path("b.jpeg"), { quality = 50 })
  T.eq(image.decode_jpeg(S.read(S.path("b.jpeg"))):size(), { 3, 12, 20 })
  image.save(S.path("c.bin"), x, { format = "png" })
  T.eq(image.read_image(S.path("c.bin")):size(), { 3, 12, 20 })
end)

pil_test("png written here reads the same in Pillow; jpeg within its loss", function()
  local x = npy("rgba8"):to(torch.uint8)
  image.save(S.path("mine.png"), x)
  local sm = npy("smooth"):to(torch.uint8)
  image.save(S.path("mine.jpg"), sm, { quality = 95 })
  image.save(S.path("mine_gray.jpg"), sm[1], { quality = 95 })
  local r = P.python({
    "import numpy as np; from PIL import Image",
    ("a = np.asarray(Image.open(%q)).transpose(2, 0, 1).astype(np.int64)"):format(S.path("mine.png")),
    ("b = np.asarray(Image.open(%q)).transpose(2, 0, 1).astype(np.int64)"):format(S.path("mine.jpg")),
    ("g = Image.open(%q)"):format(S.path("mine_gray.jpg")),
    ("x = np.load(%q)"):format(S.path("rgba8.npy")),
    ("s = np.load(%q).astype(np.int64)"):format(S.path("smooth.npy")),
    "print('return {png = %s, jpg = %g, gray = \"%s\"}' % ('true' if (a == x).all() else 'false', " ..
      "np.abs(b - s).mean(), g.mode))",
  }, "Pillow")
  T.ok(r.png, "Pillow reads our PNG as the same pixels")
  T.ok(r.jpg < 2, "Pillow reads our JPEG within its loss: mean error " .. r.jpg)
  T.eq(r.gray, "L", "a [H, W] image is a gray JPEG")
end)

T.test("jpeg quality changes the size; encode_jpeg errors", function()
  local x = (torch.rand(3, 32, 32) * 255):to(torch.uint8)
  T.ok(#image.encode_jpeg(x, 10) < #image.encode_jpeg(x, 95))
  T.raises(function() image.encode_jpeg(torch.zeros(4, 4, 4, { dtype = torch.uint8 })) end, "image.encode_jpeg", "channels")
  T.raises(function() image.encode_jpeg(x, 0) end, "image.encode_jpeg", "quality")
  T.raises(function() image.encode_jpeg(x, 101) end, "quality")
  T.raises(function() image.encode_png(x, 10) end, "image.encode_png", "compression_level")
end)

------------------------------------------------------------------------------
-- bad files and bad arguments
------------------------------------------------------------------------------
pil_test("damaged and hostile files are clear errors", function()
  T.raises(function() image.load(F("truncated.png")) end, "image.load", "truncated.png", "truncated")
  T.raises(function() image.load(F("corrupt_header.png")) end, "image.load", "not a valid PNG")
  T.raises(function() image.load(F("corrupt_data.png")) end, "image.load", "not a valid PNG")
  T.raises(function() image.load(F("huge.png")) end, "image.load", "60000 x 60000", "refused")
  T.raises(function() image.load(F("wider.png")) end, "image.load", "not a valid PNG")
  T.raises(function() image.load(F("truncated.jpg")) end, "image.load", "not a valid JPEG")
  T.raises(function() image.load(F("huge.jpg")) end, "image.load", "65000 x 65000")
  T.raises(function() image.load(F("notimage.png")) end, "image.load", "neither a PNG nor a JPEG")
  T.raises(function() image.load(F("empty.png")) end, "image.load", "empty")
  T.raises(function() image.decode_jpeg(S.read(F("rgb8.png"))) end, "image.decode_jpeg", "not a JPEG", "they are a PNG")
end)

T.test("every prefix of a PNG and a JPEG is an error, never a crash", function()
  local png = image.encode_png((torch.rand(3, 16, 16) * 255):to(torch.uint8))
  local jpg = image.encode_jpeg((torch.rand(3, 16, 16) * 255):to(torch.uint8), 80)
  -- (a PNG whose pixels are all there but whose IEND chunk, the last 12 bytes, is missing
  -- is read, as Pillow and torchvision read it)
  for _, b in ipairs { png, jpg } do
    for n = 0, (b == png and #b - 13 or #b - 1), 7 do
      local ok = pcall(image.decode_image, b:sub(1, n))
      T.ok(not ok, "a prefix of " .. n .. " of " .. #b .. " bytes decoded")
    end
  end
  -- flipped bytes: an error or a picture, never a crash
  for i = 9, #png, 11 do
    local bad = png:sub(1, i - 1) .. string.char(png:byte(i) ~ 0x55) .. png:sub(i + 1)
    pcall(image.decode_png, bad)
  end
  for i = 3, #jpg, 5 do
    local bad = jpg:sub(1, i - 1) .. string.char(jpg:byte(i) ~ 0x55) .. jpg:sub(i + 1)
    pcall(image.decode_jpeg, bad)
  end
end)

T.test("bad arguments name the function and the argument", function()
  T.raises(function() image.load("/nonexistent/x.png") end, "image.load", "cannot open", "/nonexistent/x.png")
  T.raises(function() image.load(42) end, "image.load", "path")
  T.raises(function() image.load("x.png", { chanels = 3 }) end, "image.load", "unknown option 'chanels'", "channels")
  T.raises(function() image.load("x.png", 5) end, "image.load", "depth")
  T.raises(function() image.read_image("x.png", { channels = 7 }) end, "image.read_image")
  T.raises(function() image.load("x.png", 3, "bogus") end, "image.load", "tensortype")
  local png = image.encode_png(torch.zeros(1, 2, 2, { dtype = torch.uint8 }))
  T.raises(function() image.decode_png(png, { channels = 0 }) end, "image.decode_png", "channels")
  T.raises(function() image.decode_png(png, { dtype = torch.int16 }) end, "image.decode_png", "int16")
  T.raises(function() image.decode_png(png, { dtype = torch.bool }) end, "image.decode_png", "bool")
  T.raises(function() image.decode_png(42) end, "image.decode_png", "input")
  T.raises(function() image.save(S.path("x.bmp"), torch.zeros(3, 2, 2)) end, "image.save", "extension")
  T.raises(function() image.save(S.path("x.png"), torch.zeros(5, 2, 2)) end, "image.save", "channels")
  T.raises(function() image.save(S.path("x.png"), torch.zeros(2)) end, "image.save", "tensor", "1-D")
  T.raises(function() image.save(S.path("x.png"), torch.zeros(3, 2, 2, { dtype = torch.int64 })) end, "image.save", "int64")
  T.raises(function() image.save(S.path("x.png"), torch.zeros(3, 2, 2), { qualty = 9 }) end, "image.save", "unknown option 'qualty'")
  T.raises(function() image.save(S.path("x.png"), torch.zeros(3, 2, 2), { quality = 9 }) end, "image.save", "quality", "PNG")
  T.raises(function() image.save("/nonexistent/dir/x.png", torch.zeros(3, 2, 2)) end, "image.save", "cannot write")
  T.raises(function() image.save(S.path("x.jpg"), torch.zeros(4, 2, 2)) end, "image.save", "channels")
  T.raises(function() image.encode_png(torch.zeros(3, 0, 4)) end, "image.encode_png")
end)

T.test("decode_image takes a uint8 tensor of bytes as well as a string", function()
  local x = torch.randint(0, 256, { 3, 4, 5 }):to(torch.uint8)
  local s = image.encode_png(x)
  local bytes = torch.tensor({ s:byte(1, -1) }, { dtype = torch.uint8 })
  T.ok(image.decode_image(bytes):equal(x))
end)

------------------------------------------------------------------------------
-- resampling against PyTorch
------------------------------------------------------------------------------
local function torch_test(name, fn)
  if not P.available() then T.skip(name, P.why()) else T.test(name, fn) end
end

torch_test("scale/resize: bilinear, bicubic, nearest equal F.interpolate (align_corners=False)", function()
  local x = torch.rand(3, 9, 13, { dtype = torch.float64 })
  local cases = { { 17, 6 }, { 5, 4 }, { 13, 9 }, { 30, 21 } }   -- width, height
  local body, outs = {}, {}
  for i, wh in ipairs(cases) do
    local w, h = wh[1], wh[2]
    for _, m in ipairs { { "b", "mode='bilinear', align_corners=False" }, { "c", "mode='bicubic', align_corners=False" },
      { "n", "mode='nearest'" }, { "ba", "mode='bilinear', align_corners=False, antialias=True" },
      { "ca", "mode='bicubic', align_corners=False, antialias=True" } } do
      body[#body + 1] = ("%s%d = F.interpolate(x[None], size=(%d, %d), %s)[0]"):format(m[1], i, h, w, m[2])
      outs[#outs + 1] = m[1] .. i
    end
  end
  local r = P.run({ x = x }, table.concat(body, "\n"), outs)
  for i, wh in ipairs(cases) do
    local w, h = wh[1], wh[2]
    local tag, k = w .. "x" .. h, (i - 1) * 5
    close(image.scale(x, w, h), r[k + 1], 1e-12, "bilinear " .. tag)
    close(image.scale(x, w, h, "bicubic"), r[k + 2], 1e-12, "bicubic " .. tag)
    close(image.scale(x, w, h, "simple"), r[k + 3], 0, "nearest " .. tag)
    close(image.resize(x, { h, w }, { antialias = true }), r[k + 4], 1e-12, "bilinear antialias " .. tag)
    close(image.resize(x, { h, w }, "bicubic", { antialias = true }), r[k + 5], 1e-12, "bicubic antialias " .. tag)
  end
end)

T.test("scale: Torch7's size forms, resize's shorter side, uint8 rounded and clamped", function()
  local x = torch.rand(3, 40, 60)
  T.eq(image.scale(x, 30):size(), { 3, 20, 30 }, "a number is the longer side")
  T.eq(image.scale(x, "^20"):size(), { 3, 20, 30 }, "^N the shorter side")
  T.eq(image.scale(x, "*0.5"):size(), { 3, 20, 30 }, "*f a factor")
  T.eq(image.scale(x, 30, "bicubic"):size(), { 3, 20, 30 })
  T.eq(image.resize(x, 20):size(), { 3, 20, 30 })
  T.eq(image.resize(x:transpose(2, 3), 20):size(), { 3, 30, 20 })
  T.eq(image.resize(x, 20, { max_size = 25 }):size(), { 3, 16, 25 })
  T.eq(image.scale(x[1], 6, 4):size(), { 4, 6 }, "[H, W]")
  T.eq(image.scale(torch.rand(2, 3, 8, 8), 4, 4):size(), { 2, 3, 4, 4 }, "a batch")
  local u = torch.tensor({ { { 0, 255, 0, 255 }, { 255, 0, 255, 0 } } }, { dtype = torch.uint8 })
  local s = image.scale(u, 8, 4, "bicubic")
  T.eq(s.dtype, torch.uint8)
  local f = image.scale(u:to(torch.float32), 8, 4, "bicubic")
  T.ok(s:equal(f:round():clamp(0, 255):to(torch.uint8)), "uint8: the float result rounded and clamped")
  T.tensor(image.scale(torch.tensor({ { 1, 2 }, { 3, 4 } }), 4, 4, "simple"),
    { { 1, 1, 2, 2 }, { 1, 1, 2, 2 }, { 3, 3, 4, 4 }, { 3, 3, 4, 4 } })
  T.raises(function() image.scale(x, 0, 4) end, "image.scale", "width")
  T.raises(function() image.scale(x, 4, 4, "lanczos") end, "image.scale", "mode")
  T.raises(function() image.scale(x, "%3") end, "image.scale", "size")
  T.raises(function() image.scale(torch.rand(5), 4, 4) end, "image.scale", "src")
  T.raises(function() image.scale(x, 4, 4, { mdoe = "bicubic" }) end, "image.scale", "mdoe")
  T.raises(function() image.resize(x, { 1e9, 2 }) end, "image.resize", "size")
  T.raises(function() image.resize(x, { 70000, 2 }) end, "image.resize", "65535")
  T.raises(function() image.scale(x, 60000, 60000) end, "image.scale", "pixels")
  T.raises(function() image.resize(x, 20, { max_size = 10 }) end, "image.resize", "max_size")
end)

------------------------------------------------------------------------------
-- geometry
------------------------------------------------------------------------------
T.test("crop: Torch7's edge coordinates and the named windows", function()
  local x = torch.arange(0, 2 * 4 * 6):reshape(2, 4, 6)
  T.ok(image.crop(x, 1, 0, 4, 2):equal(x[{ {}, { 1, 2 }, { 2, 4 } }]))
  T.ok(image.crop(x, 2, 1):equal(x[{ {}, { 2, 4 }, { 3, 6 } }]), "to the bottom-right")
  T.ok(image.crop(x, "c", 2, 2):equal(x[{ {}, { 2, 3 }, { 3, 4 } }]))
  T.ok(image.crop(x, "tl", 3, 2):equal(x[{ {}, { 1, 2 }, { 1, 3 } }]))
  T.ok(image.crop(x, "tr", 3, 2):equal(x[{ {}, { 1, 2 }, { 4, 6 } }]))
  T.ok(image.crop(x, "bl", 3, 2):equal(x[{ {}, { 3, 4 }, { 1, 3 } }]))
  T.ok(image.crop(x, "br", 3, 2):equal(x[{ {}, { 3, 4 }, { 4, 6 } }]))
  T.ok(image.center_crop(x, 2):equal(x[{ {}, { 2, 3 }, { 3, 4 } }]))
  T.ok(image.center_crop(x, { 3, 3 }):equal(x[{ {}, { 1, 3 }, { 3, 5 } }]), "torchvision's rounding (half to even)")
  T.raises(function() image.crop(x, 0, 0, 7, 2) end, "image.crop", "outside")
  T.raises(function() image.crop(x, 3, 0, 3, 2) end, "image.crop", "empty")
  T.raises(function() image.crop(x, "middle", 2, 2) end, "image.crop", "format")
  T.raises(function() image.crop(x, "c", 7, 2) end, "image.crop", "does not fit")
  T.raises(function() image.crop(x, 0.5, 0, 2, 2) end, "image.crop", "integers")
end)

T.test("hflip, vflip, translate", function()
  local x = torch.tensor({ { { 1, 2, 3 }, { 4, 5, 6 } } })
  T.tensor(image.hflip(x), { { { 3, 2, 1 }, { 6, 5, 4 } } })
  T.tensor(image.vflip(x), { { { 4, 5, 6 }, { 1, 2, 3 } } })
  T.tensor(image.translate(x, 1, 0), { { { 0, 1, 2 }, { 0, 4, 5 } } })
  T.tensor(image.translate(x, -1, 1), { { { 0, 0, 0 }, { 2, 3, 0 } } })
  T.tensor(image.translate(x, 5, 0), { { { 0, 0, 0 }, { 0, 0, 0 } } })
  T.raises(function() image.translate(x, 0.5, 0) end, "image.translate", "integers")
end)

T.test("rotate: quarter turns are exact; bilinear keeps a constant image inside", function()
  local x = torch.rand(2, 5, 5)
  T.ok(image.rotate(x, 0):equal(x), "0")
  -- output (x, y) takes input at R(theta)(x - c, y - c) + c: theta = pi/2 samples (c - (y - c), x)
  close(image.rotate(x, math.pi / 2), x:transpose(2, 3):flip({ 2 }), 0, "pi/2")
  close(image.rotate(x, math.pi), x:flip({ 2, 3 }), 0, "pi")
  close(image.rotate(x, math.pi / 2, "bilinear"), x:transpose(2, 3):flip({ 2 }), 1e-6, "pi/2 bilinear")
  local ones = torch.ones(1, 9, 9)
  local r = image.rotate(ones, 0.3, "bilinear")
  T.near(r[1][5][5], 1, 1e-6, "the centre")
  T.eq(r[1][1][1], 0, "a corner comes from outside")
  T.raises(function() image.rotate(x, 0 / 0) end, "image.rotate", "theta")
  T.raises(function() image.rotate(x, 1, "bicubic") end, "image.rotate", "mode")
end)

------------------------------------------------------------------------------
-- colour
------------------------------------------------------------------------------
T.test("rgb2y, rgb_to_grayscale", function()
  local x = torch.tensor({ { { 1, 0 } }, { { 0, 1 } }, { { 0, 0 } } }, { dtype = torch.float64 })
  T.tensor(image.rgb2y(x), { { { 0.299, 0.587 } } }, { tol = 1e-12 })
  T.eq(image.rgb_to_grayscale(x, 3):size(), { 3, 1, 2 })
  local u = torch.tensor({ { { 255 } }, { { 255 } }, { { 255 } } }, { dtype = torch.uint8 })
  T.tensor(image.rgb_to_grayscale(u), { { { 255 } } }, { dtype = "uint8" })
  T.raises(function() image.rgb2y(torch.rand(1, 2, 2)) end, "image.rgb2y", "RGB")
end)

T.test("rgb2hsv / hsv2rgb against colorsys, and round trip", function()
  local x = torch.rand(3, 4, 6, { dtype = torch.float64 })
  x[{ {}, 1, 1 }] = 0.5          -- a gray pixel: hue and saturation 0
  x[{ {}, 1, 2 }] = 0            -- black
  local hsv = image.rgb2hsv(x)
  if P.can_import("colorsys") then
    local r = P.python({
      "import colorsys",
      "x = " .. P.pylist(x:reshape(-1):totable()),
      "n = 24",
      "out = []",
      "for i in range(n): out.extend(colorsys.rgb_to_hsv(x[i], x[n + i], x[2 * n + i]))",
      "print('return {' + ','.join('%.17g' % v for v in out) + '}')",
    }, "colorsys")
    local ref = torch.tensor(r, { dtype = torch.float64 }):reshape(24, 3):t():reshape(3, 4, 6)
    close(hsv, ref, 1e-12)
  end
  close(image.hsv2rgb(hsv), x, 1e-12)
  T.tensor(image.hsv2rgb(torch.tensor({ { { 0.0 } }, { { 1.0 } }, { { 1.0 } } })), { { { 1 } }, { { 0 } }, { { 0 } } })
  T.tensor(image.hsv2rgb(torch.tensor({ { { 1 / 3 } }, { { 1.0 } }, { { 0.5 } } })), { { { 0 } }, { { 0.5 } }, { { 0 } } },
    { tol = 1e-6 })
end)

------------------------------------------------------------------------------
-- filters
------------------------------------------------------------------------------
T.test("gaussian: Torch7's formula, normalize, 1-D", function()
  local g = image.gaussian(3)
  T.eq(g:size(), { 3, 3 })
  -- the centre is at mean * size + 0.5 = 2; sigma 0.25 * 3 = 0.75
  T.near(g[2][2], 1, 1e-7)
  T.near(g[1][2], math.exp(-(1 / 0.75) ^ 2 / 2), 1e-7)
  T.near(image.gaussian { size = 5, normalize = true }:sum():item(), 1, 1e-6)
  T.eq(image.gaussian { width = 5, height = 3 }:size(), { 3, 5 })
  T.eq(image.gaussian1D(7):size(), { 7 })
  T.near(image.gaussian1D(7)[4], 1, 1e-7)
  T.raises(function() image.gaussian(0) end, "image.gaussian", "size")
  T.raises(function() image.gaussian { size = 3, sigam = 1 } end, "image.gaussian", "sigam")
end)

T.test("convolve: full, valid, same equal scipy.signal.convolve2d", function()
  local x = torch.rand(2, 6, 7, { dtype = torch.float64 })
  local kernels = { torch.rand(3, 3, { dtype = torch.float64 }), torch.rand(2, 4, { dtype = torch.float64 }) }
  local MODES = { "full", "valid", "same" }
  if P.can_import("scipy.signal, numpy") then
    local lines = {
      "import numpy as np, scipy.signal as ss",
      ("x = np.array(%s).reshape(2, 6, 7)"):format(P.pylist(x:reshape(-1):totable())),
      "out = []",
    }
    for _, k in ipairs(kernels) do
      lines[#lines + 1] = ("k = np.array(%s).reshape(%d, %d)"):format(P.pylist(k:reshape(-1):totable()), k:size(1), k:size(2))
      for _, mode in ipairs(MODES) do
        lines[#lines + 1] = ("y = np.stack([ss.convolve2d(x[i], k, mode=%q) for i in range(2)])"):format(mode)
        lines[#lines + 1] = "out.append('{s = {%s}, v = {%s}}' % (','.join(map(str, y.shape)), " ..
          "','.join('%.17g' % v for v in y.reshape(-1))))"
      end
    end
    lines[#lines + 1] = "print('return {' + ','.join(out) + '}')"
    local r = P.python(lines, "scipy")
    local i = 0
    for _, k in ipairs(kernels) do
      for _, mode in ipairs(MODES) do
        i = i + 1
        local got = image.convolve(x, k, mode)
        T.eq(got:size(), r[i].s, mode)
        close(got, torch.tensor(r[i].v, { dtype = torch.float64 }):reshape(r[i].s), 1e-12, mode)
      end
    end
  else
    T.skip("convolve against scipy", "/usr/bin/python3 cannot import scipy.signal (apt-get install python3-scipy)")
  end
  -- by hand: a delta kernel shifted off-centre moves the image (convolution flips it)
  local img = torch.zeros(1, 3, 3); img[1][2][2] = 1
  local k = torch.tensor({ { 0, 1 }, { 0, 0 } })
  T.tensor(image.convolve(img, k, "full"), { { { 0, 0, 0, 0 }, { 0, 0, 1, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } } })
  T.raises(function() image.convolve(img, torch.rand(4, 4), "valid") end, "image.convolve", "larger")
  T.raises(function() image.convolve(img, k, "circular") end, "image.convolve", "mode")
  T.raises(function() image.convolve(img, torch.rand(2, 2, 2)) end, "image.convolve", "kernel")
end)

------------------------------------------------------------------------------
-- grids and display
------------------------------------------------------------------------------
T.test("make_grid: torchvision's layout, normalize, value_range, one channel to three", function()
  local b = torch.rand(5, 3, 4, 6)
  local g = image.make_grid(b, { nrow = 2 })
  T.eq(g:size(), { 3, 3 * 6 + 2, 2 * 8 + 2 })
  T.ok(g:narrow(2, 3, 4):narrow(3, 3, 6):equal(b[1]))
  T.ok(g:narrow(2, 3, 4):narrow(3, 11, 6):equal(b[2]))
  T.ok(g:narrow(2, 9, 4):narrow(3, 3, 6):equal(b[3]))
  T.eq(g[1][1][1], 0, "pad_value")
  T.eq(image.make_grid(b, { padding = 0, nrow = 5 }):size(), { 3, 4, 30 })
  T.eq(image.make_grid(torch.rand(2, 1, 3, 3)):size(1), 3, "one channel becomes three")
  T.eq(image.make_grid(torch.rand(1, 3, 3, 3)):size(), { 3, 3, 3 }, "one image alone, no padding")
  local n = image.make_grid(torch.tensor({ { { { -1, 1 } } }, { { { 0, 3 } } } }), { normalize = true, padding = 0 })
  T.tensor(n[1], { { 0, 0.5, 0.25, 1 } })
  local v = image.make_grid(torch.tensor({ { { { -1, 1 } } }, { { { 0, 3 } } } }),
    { normalize = true, value_range = { 0, 1 }, padding = 0 })
  T.tensor(v[1], { { 0, 1, 0, 1 } })
  local e = image.make_grid(torch.tensor({ { { { -1, 1 } } }, { { { 0, 3 } } } }),
    { normalize = true, scale_each = true, padding = 0 })
  T.tensor(e[1], { { 0, 1, 0, 1 } })
  T.eq(image.make_grid({ torch.rand(3, 2, 2), torch.rand(3, 2, 2) }, { padding = 1 }):size(), { 3, 4, 7 }, "a list")
  T.raises(function() image.make_grid({ torch.rand(3, 2, 2), torch.rand(3, 3, 2) }) end, "image.make_grid", "one shape")
  T.raises(function() image.make_grid(b, { nrows = 2 }) end, "image.make_grid", "nrows")
  T.raises(function() image.make_grid(b, { scale_each = true }) end, "image.make_grid", "normalize")
end)

T.test("toDisplayTensor: Torch7's grid (background the maximum), scaled to [0, 1], gray maps", function()
  local maps = torch.tensor({ { { 0, 2 } }, { { 4, 6 } } })      -- [2, 1, 2]: two gray maps
  local g = image.toDisplayTensor { input = maps, padding = 2, nrow = 2 }
  T.eq(g:size(), { 3, 8 })
  T.tensor(g[2], { 1, 0, 1 / 3, 1, 1, 2 / 3, 1, 1 }, { tol = 1e-6 })
  T.tensor(g[1], { 1, 1, 1, 1, 1, 1, 1, 1 })
  local each = image.toDisplayTensor { input = maps, scaleeach = true, nrow = 1 }
  T.tensor(each, { { 0, 1 }, { 0, 1 } })
  local b = image.toDisplayTensor(torch.rand(8, 3, 2, 2), 0)       -- positional; nrow 6 by default
  T.eq(b:size(), { 3, 4, 12 })
  T.eq(image.toDisplayTensor { input = torch.tensor({ { 1.0, 3.0 } }) }:size(), { 1, 2 }, "[H, W] stays 2-D")
  T.tensor(image.toDisplayTensor { input = torch.tensor({ { { -1.0, 3.0 } } }), symmetric = true }, { { { 1 / 3, 1 } } },
    { tol = 1e-6 })
  local mm = image.toDisplayTensor { input = torch.tensor({ { { -1, 0.5, 3 } } }), min = 0, max = 1 }
  T.tensor(mm, { { { 0, 0.5, 1 } } })
  T.raises(function() image.toDisplayTensor { input = maps, scalleach = true } end, "image.toDisplayTensor", "scalleach")
end)

T.test("display: the hook gets a PNG bundle; without it a file and (asked) a preview", function()
  local x = torch.rand(3, 6, 10)
  local got
  torch._display_hook = function(bundle) got = bundle end
  local ok, err = pcall(image.display, x)
  torch._display_hook = nil
  assert(ok, err)
  T.ok(got ~= nil, "the hook was called")
  T.eq(got["text/plain"], "<image 3x6x10>")
  local back = image.decode_png(got["image/png"])
  T.eq(back:size(), { 3, 6, 10 })
  -- no hook: the file, and the preview when asked for
  local path = image.display(x, { file = S.path("shown.png") })
  T.eq(path, S.path("shown.png"))
  T.eq(image.read_image(path):size(), { 3, 6, 10 })
  local u8 = torch.zeros(3, 2, 2, { dtype = torch.uint8 })
  u8[1]:fill(255)
  local text = image._ansi_preview(u8, 80, 24)
  T.ok(text:find("\27[38;2;255;0;0m\27[48;2;255;0;0m\u{2580}", 1, true) ~= nil, "half blocks in 24-bit colour")
  T.raises(function() image.display(x, { fiel = "x.png" }) end, "image.display", "fiel")
  -- a batch is shown as a grid (6 to a row: one row of four 5 x 5 images, cells 2 pixels larger)
  image.display(torch.rand(4, 3, 5, 5), { file = S.path("grid.png") })
  T.eq(image.read_image(S.path("grid.png")):size(), { 3, 7, 28 })
  -- values in [0, 1] are shown as they are; other ranges scaled to the data's, or to min/max
  image.display(torch.full({ 1, 2, 2 }, 0.5), { file = S.path("half.png") })
  T.eq(image.read_image(S.path("half.png"))[1][1][1], 128)
  image.display(torch.tensor({ { { -2.0, 2.0 } } }), { file = S.path("wide.png") })
  T.tensor(image.read_image(S.path("wide.png")), { { { 0, 255 } } })
  image.display(torch.tensor({ { { 0.25, 0.5 } } }), { file = S.path("mm.png"), min = 0.25, max = 0.5 })
  T.tensor(image.read_image(S.path("mm.png")), { { { 0, 255 } } })
  -- with the hook and a file: both
  torch._display_hook = function(bundle) got = bundle end
  got = nil
  ok, err = pcall(image.display, x, { file = S.path("both.png") })
  torch._display_hook = nil
  assert(ok, err)
  T.ok(got ~= nil and io.open(S.path("both.png")) ~= nil)
  -- Torch7's table form, its legend the title
  torch._display_hook = function(bundle) got = bundle end
  ok, err = pcall(image.display, { image = torch.rand(1, 3, 3), legend = "cat", zoom = 2 })
  torch._display_hook = nil
  assert(ok, err)
  T.eq(got["text/plain"], "cat <image 1x6x6>")
end)

------------------------------------------------------------------------------
-- data: transforms and ImageFolder
------------------------------------------------------------------------------
T.test("data.transforms: Resize, CenterCrop, ColorJitter", function()
  local tr = data.transforms
  local x = torch.rand(3, 40, 60)
  T.eq(tr.Resize(20)(x):size(), { 3, 20, 30 })
  T.eq(tr.Resize({ 10, 12 })(x):size(), { 3, 10, 12 })
  close(tr.Resize({ 10, 12 }, "bicubic")(x), image.resize(x, { 10, 12 }, "bicubic"), 0)
  T.eq(tr.CenterCrop(16)(x):size(), { 3, 16, 16 })
  T.eq(tr.Resize(20)(torch.rand(2, 3, 40, 60)):size(), { 2, 3, 20, 30 }, "a batch")
  local j = tr.ColorJitter({ brightness = 0.5, contrast = 0.5, saturation = 0.5, hue = 0.1,
    generator = torch.Generator():manual_seed(3) })
  local y = j(x)
  T.eq(y:size(), { 3, 40, 60 })
  T.ok(y:min():item() >= 0 and y:max():item() <= 1, "in [0, 1]")
  T.ok(not y:equal(x), "changed")
  -- brightness alone is a factor in [1 - b, 1 + b]
  local b = tr.ColorJitter({ brightness = 0.5, generator = torch.Generator():manual_seed(1) })(torch.full({ 3, 2, 2 }, 0.5))
  local f = b[1][1][1] / 0.5
  T.ok(f >= 0.5 and f <= 1.5 and math.abs(b:std():item()) < 1e-6)
  -- uint8 stays uint8
  T.eq(tr.ColorJitter({ brightness = 0.2 })((x * 255):to(torch.uint8)).dtype, torch.uint8)
  T.raises(function() tr.ColorJitter({ brightnes = 0.2 }) end, "ColorJitter", "brightnes")
  T.raises(function() tr.ColorJitter({ hue = 0.7 }) end, "ColorJitter", "hue")
  T.raises(function() tr.Resize(0) end, "Resize", "size")
  T.raises(function() tr.CenterCrop(100)(x) end, "center_crop", "fit")
end)

T.test("data.ImageFolder: classes sorted, samples, transform, target_transform, extensions", function()
  local root = S.path("folder")
  os.execute("mkdir -p " .. root .. "/dog " .. root .. "/cat/sub " .. root .. "/empty")
  local c1 = torch.full({ 3, 4, 4 }, 10, { dtype = torch.uint8 })
  local c2 = torch.full({ 3, 4, 4 }, 200, { dtype = torch.uint8 })
  image.save(root .. "/dog/b.png", c1)
  image.save(root .. "/dog/a.png", c2)
  image.save(root .. "/cat/x.jpg", c1, { quality = 95 })
  image.save(root .. "/cat/sub/y.png", c2)
  S.write("folder/cat/notes.txt", "not an image")
  T.raises(function() data.ImageFolder(root) end, "data.ImageFolder", "no images", "empty")
  T.eq(data.ImageFolder(root, { allow_empty = true }).classes, { "cat", "dog", "empty" })
  os.execute("rmdir " .. root .. "/empty")
  local ds = data.ImageFolder(root)
  T.eq(ds.classes, { "cat", "dog" })
  T.eq(ds.class_to_idx.dog, 2)
  T.eq(#ds, 4)
  local x, y = table.unpack(ds[1])
  T.eq(y, 1)
  T.eq(x.dtype, torch.float32)
  T.eq(ds.samples[3][1], root .. "/dog/a.png")
  T.eq(ds.targets, { 1, 1, 2, 2 })
  local ds2 = data.ImageFolder(root, { transform = data.transforms.CenterCrop(2), target_transform = function(t) return t * 10 end,
    extensions = { ".png" } })
  T.eq(#ds2, 3)
  local x2, y2 = table.unpack(ds2[3])
  T.eq(x2:size(), { 3, 2, 2 })
  T.eq(y2, 20)
  local ds3 = data.ImageFolder(root, { loader = function(p) return p end })
  T.eq(ds3[4][1], root .. "/dog/b.png")
  local loader = data.DataLoader(data.ImageFolder(root, { transform = data.transforms.Resize({ 2, 2 }) }), { batch_size = 4 })
  for b in loader:iter() do
    T.eq(b[1]:size(), { 4, 3, 2, 2 })
    T.tensor(b[2], { 1, 1, 2, 2 })
    break
  end
  -- decoded in worker processes
  local seen = 0
  for xb in data.DataLoader(data.ImageFolder(root, { transform = data.transforms.Resize({ 2, 2 }) }),
    { batch_size = 3, num_workers = 2, unpack = true }) do seen = seen + xb:size(1) end
  T.eq(seen, 4)
  T.raises(function() data.ImageFolder(S.path("nope")) end, "ImageFolder", "nope")
  T.raises(function() data.ImageFolder(root, { extensions = { ".gif" } }) end, "ImageFolder", "no images")
  T.raises(function() data.ImageFolder(root, { transfrom = 1 }) end, "ImageFolder", "transfrom")
end)

S.remove()
T.done()
