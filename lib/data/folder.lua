-- data/folder.lua — ImageFolder: torchvision's dataset of images kept one folder per class,
--   root/cat/001.png, root/cat/sub/002.jpg, root/dog/003.png, ...
-- The classes are the folder names in sorted order, labelled 1, 2, ... (1-based, as every
-- label in lutorch); the samples are the files under each (subfolders included, walked in
-- sorted order, as torchvision's sorted os.walk) whose extension is one of `extensions`.
-- ds[i] is {image, label}; the image is loader(path) — image.load(path, {channels = 3}),
-- float32 RGB in [0, 1], unless a `loader` is given — passed through `transform`, the label
-- through `target_transform`.
local torch = torch or require("torch")
local class = require "torch_class"
local dataset = require "data.dataset"
local M = {}

M.IMG_EXTENSIONS = { ".png", ".jpg", ".jpeg" }

-- the entries of a directory, or nil and a message (torch.serialization's listing, which
-- also tells a directory from a file: a file cannot be listed)
local function listdir(path) return torch.serialization._dcp_listdir(path) end

local function default_loader(path) return require("image").load(path, { channels = 3 }) end
M.default_loader = default_loader

local ImageFolder = dataset.Dataset:extend("ImageFolder")
M.ImageFolder = ImageFolder
local SIG = class.signature("data.ImageFolder",
  "root, transform=nil, target_transform=nil, loader=nil, is_valid_file=nil, *, extensions=nil, allow_empty=false")

local function callable(v)
  local mt = getmetatable(v)
  return type(v) == "function" or (mt ~= nil and mt.__call ~= nil)
end

function ImageFolder:__init(...)
  local a = SIG(...)
  local fname = "data.ImageFolder"
  if type(a.root) ~= "string" then error(fname .. ": argument 'root' must be a directory name, got " .. type(a.root), 3) end
  for _, k in ipairs { "transform", "target_transform", "loader", "is_valid_file" } do
    if a[k] ~= nil and not callable(a[k]) then
      error(("%s: %s must be callable, got %s"):format(fname, k, type(a[k])), 3)
    end
  end
  if a.extensions ~= nil and a.is_valid_file ~= nil then
    error(fname .. ": give extensions or is_valid_file, not both", 3)
  end
  local exts = a.extensions or M.IMG_EXTENSIONS
  if type(exts) == "string" then exts = { exts } end
  if type(exts) ~= "table" then error(fname .. ": extensions must be a list such as {'.png', '.jpg'}", 3) end
  local function valid(path)
    if a.is_valid_file then return a.is_valid_file(path) end
    local lower = path:lower()
    for _, e in ipairs(exts) do
      if lower:sub(-#e) == e:lower() then return true end
    end
    return false
  end
  local names, err = listdir(a.root)
  if not names then error(("%s: cannot read the root '%s': %s"):format(fname, a.root, tostring(err)), 3) end
  local classes = {}
  for _, n in ipairs(names) do
    if n:sub(1, 1) ~= "." and listdir(a.root .. "/" .. n) then classes[#classes + 1] = n end
  end
  table.sort(classes)
  if #classes == 0 then error(("%s: no class folders in '%s'"):format(fname, a.root), 3) end
  local class_to_idx = {}
  for i, c in ipairs(classes) do class_to_idx[c] = i end
  -- every directory under dir, dir included, with its files
  local function walk(dir, out, depth)
    if depth > 64 then error(("%s: folders nested too deeply under '%s' (a link cycle?)"):format(fname, dir), 4) end
    local entries = listdir(dir) or {}
    local files = {}
    out[#out + 1] = { dir = dir, files = files }
    for _, n in ipairs(entries) do
      local p = dir .. "/" .. n
      if listdir(p) then walk(p, out, depth + 1) else files[#files + 1] = n end
    end
    table.sort(files)
    return out
  end
  local samples, targets, empty = {}, {}, {}
  for i, c in ipairs(classes) do
    local dirs = walk(a.root .. "/" .. c, {}, 0)
    table.sort(dirs, function(x, y) return x.dir < y.dir end)
    local before = #samples
    for _, d in ipairs(dirs) do
      for _, f in ipairs(d.files) do
        local p = d.dir .. "/" .. f
        if valid(p) then
          samples[#samples + 1] = { p, i }
          targets[#targets + 1] = i
        end
      end
    end
    if #samples == before then empty[#empty + 1] = c end
  end
  if #empty > 0 and not a.allow_empty then
    error(("%s: no images (%s) in the class folder%s %s of '%s' (allow_empty=true accepts that)"):format(fname,
      a.is_valid_file and "is_valid_file" or table.concat(exts, ", "), #empty > 1 and "s" or "",
      table.concat(empty, ", "), a.root), 3)
  end
  self.root, self.classes, self.class_to_idx = a.root, classes, class_to_idx
  self.samples, self.imgs, self.targets = samples, samples, targets
  self.extensions = a.is_valid_file == nil and exts or nil
  self.loader = a.loader or default_loader
  self.transform, self.target_transform = a.transform, a.target_transform
end

function ImageFolder:len() return #self.samples end
function ImageFolder:get(i)
  local s = self.samples[i]
  if s == nil then error(("data.ImageFolder: index %s is out of range (1..%d)"):format(tostring(i), #self.samples), 2) end
  local x, y = self.loader(s[1]), s[2]
  if self.transform then x = self.transform(x) end
  if self.target_transform then y = self.target_transform(y) end
  return { x, y }
end

return M
