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
--
-- The parts: codec.lua (load, save, decode_*, encode_*, read_image, write_*), resample.lua
-- (scale, resize), geometry.lua (crop, flips, translate, rotate), color.lua, filter.lua
-- (gaussian, convolve), display.lua (make_grid, toDisplayTensor, display); util.lua holds
-- what they share.
local image = {}
for _, part in ipairs { "codec", "resample", "geometry", "color", "filter", "display" } do
  for k, v in pairs(require("image." .. part)) do
    if k:sub(1, 1) ~= "_" or k == "_ansi_preview" then image[k] = v end
  end
end
return image
