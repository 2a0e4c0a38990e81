-- images.lua — the image library end to end: pictures in, a grid out, a folder of
-- classes back in through data.ImageFolder and a DataLoader.
--   1. 32 pictures: Fashion-MNIST's first training images when the data set is there
--      (--data), else drawn here (coloured rings); laid out with image.make_grid, shown
--      (a notebook's display hook, or a PNG and a terminal preview) and saved;
--   2. one picture scaled up 4x three ways (nearest, bilinear, bicubic), rotated, flipped
--      and saved as PNG and JPEG, read back, with the JPEG's error;
--   3. the pictures written as root/<class>/<n>.png and read back with data.ImageFolder,
--      Resize, CenterCrop and ColorJitter, a batch at a time.
--   lutorch examples/images.lua
--   lutorch examples/images.lua --data /usr/share/datasets/fashion-mnist --out /tmp/img
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local image = require "image"
local data = require "data"

local o = common.options(arg, "usage: lutorch examples/images.lua [options]", {
  { "data", "", "Fashion-MNIST's folder (default: draw the pictures here)" },
  { "count", 32, "how many pictures" },
  { "out", "images", "prefix of the files written (a folder OUT_folder too)" },
  { "preview", false, "print the grid in colour even when the output is not a terminal" },
  { "seed", 0, "random seed" },
})
torch.manual_seed(o.seed)

-- 1. the pictures: [N, 3, H, W] floats in [0, 1], and a class for each
local pics, labels
local fm = o.data ~= "" and o.data or nil
if fm then
  local ds = data.FashionMNIST(fm)
  pics = ds.data:narrow(1, 1, o.count):to(torch.float32):div(255):unsqueeze(2):expand(o.count, 3, 28, 28):contiguous()
  labels = ds.targets:narrow(1, 1, o.count)
else
  -- rings of random colour and radius on a dark background; the class is the radius band
  local n, size = o.count, 32
  local ys = torch.arange(0, size):reshape(size, 1):expand(size, size):to(torch.float32)
  local xs = torch.arange(0, size):reshape(1, size):expand(size, size):to(torch.float32)
  pics = torch.zeros(n, 3, size, size)
  labels = torch.zeros(n, { dtype = torch.int64 })
  for i = 1, n do
    local r = 4 + 10 * torch.rand(1)[1]
    local cx, cy = 10 + 12 * torch.rand(1)[1], 10 + 12 * torch.rand(1)[1]
    local d = ((xs - cx) ^ 2 + (ys - cy) ^ 2):sqrt()
    local ring = (-(d - r):abs():div(1.5)):exp()          -- a soft ring of radius r
    local colour = torch.rand(3) * 0.8 + 0.2
    pics[i]:copy_(colour:reshape(3, 1, 1) * ring)
    labels[i] = r < 7.5 and 1 or (r < 11 and 2 or 3)
  end
end
local grid = image.make_grid(pics, { nrow = 8, padding = 2, pad_value = 1 })
image.save(o.out .. "_grid.png", grid)
image.display(grid, { preview = o.preview or nil, title = "the pictures" })
print(("grid: %d pictures, %s, saved as %s_grid.png"):format(o.count, table.concat(grid.shape, "x"), o.out))

-- 2. one picture, resampled and turned
local one = pics[1]
local H, W = one:size(2), one:size(3)
local row = {}
for _, mode in ipairs { "simple", "bilinear", "bicubic" } do
  row[#row + 1] = image.scale(one, 4 * W, 4 * H, mode):clamp(0, 1)
end
row[#row + 1] = image.rotate(row[3], math.pi / 6, "bilinear")
row[#row + 1] = image.hflip(row[3])
local strip = image.make_grid(row, { nrow = #row, padding = 4, pad_value = 1 })
image.save(o.out .. "_strip.png", strip)
image.save(o.out .. "_strip.jpg", strip, { quality = 90 })
local back_png = image.load(o.out .. "_strip.png")
local back_jpg = image.load(o.out .. "_strip.jpg")
print(("strip: nearest, bilinear, bicubic, rotated, flipped: %s; PNG max error %.4f (8-bit rounding), " ..
  "JPEG mean error %.4f"):format(table.concat(strip.shape, "x"), (back_png - strip):abs():max():item(),
  (back_jpg - strip):abs():mean():item()))

-- 3. a folder per class, read back as a data set
local root = o.out .. "_folder"
os.execute(("rm -rf '%s'"):format(root))
for i = 1, o.count do
  local dir = ("%s/class%d"):format(root, labels[i])
  os.execute(("mkdir -p '%s'"):format(dir))
  image.save(("%s/%03d.png"):format(dir, i), pics[i])
end
local T = data.transforms
local ds = data.ImageFolder(root, { transform = T.Compose {
  T.Resize(40), T.CenterCrop(32), T.ColorJitter { brightness = 0.3, saturation = 0.3 } } })
print(("ImageFolder: %d images in %d classes (%s)"):format(#ds, #ds.classes, table.concat(ds.classes, ", ")))
local loader = data.DataLoader(ds, { batch_size = 8, shuffle = true })
for b in loader:iter() do
  local xb, yb = b[1], b[2]
  print(("  a batch: images %s, labels %s"):format(table.concat(xb.shape, "x"), table.concat(yb:totable(), " ")))
  break
end
