-- image/display.lua — make_grid (torchvision), toDisplayTensor (Torch7) and display: a
-- notebook's display hook, or a PNG file and a colour preview on a terminal.
local torch = torch or require("torch")
local class = require "torch_class"
local U = require "image.util"
local fail = U.fail
local check_image = U.check_image
local positive_int = U.positive_int
local to_uint8 = U.to_uint8
local write_all = U.write_all
local C = torch._image
local resample = require("image.resample")._resample
local M = {}

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
function M.make_grid(...)
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
function M.toDisplayTensor(opts, ...)
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
M._ansi_preview = ansi_preview

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
function M.display(img, opts)
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
  local x = M.toDisplayTensor { input = img, padding = opts.padding or (single and 0 or 2), nrow = opts.nrow,
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

return M
