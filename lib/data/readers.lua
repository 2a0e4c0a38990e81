-- data/readers.lua — reading the data people have: idx (MNIST, Fashion-MNIST),
-- CSV and .npy (C readers in src/vm/ldata_readers.c; .gz files are read
-- through zlib), and the MNIST-family datasets over them.
local torch = torch or require("torch")
local D = torch._data
local dataset = require "data.dataset"
local class = require "torch_class"
local M = {}

-- read_idx(path) -> tensor with the file's dtype (uint8 for images and labels) and shape
local READ_IDX = class.signature("data.read_idx", "path")
function M.read_idx(...)
  local path = READ_IDX(...).path
  if type(path) ~= "string" then error("data.read_idx: argument 'path' must be a string", 2) end
  return D.read_idx(path)
end

-- read_csv(path, {header=true, delimiter=",", dtype=default float}) -> tensor [rows, cols], names
-- Every field must be a number (an empty field reads as NaN); with a header
-- the first non-blank line gives the column names.
local READ_CSV = class.signature("data.read_csv", "path, header=true, delimiter=',', dtype=nil")
function M.read_csv(...)
  local opts = READ_CSV(...)
  local path = opts.path
  if type(path) ~= "string" then error("data.read_csv: argument 'path' must be a string", 2) end
  if type(opts.header) ~= "boolean" then error("data.read_csv: header must be a boolean, got " .. tostring(opts.header), 2) end
  if type(opts.delimiter) ~= "string" or #opts.delimiter ~= 1 then
    error("data.read_csv: delimiter must be a one-character string, got " .. tostring(opts.delimiter), 2)
  end
  local t, names = D.read_csv(path, opts.header, opts.delimiter)
  local dt = opts.dtype or torch.get_default_dtype()
  if type(dt) == "string" then dt = torch[dt] end
  if dt ~= torch.float64 then t = t:to(dt) end
  return t, names
end

local READ_NPY = class.signature("data.read_npy", "path")
function M.read_npy(...)
  local path = READ_NPY(...).path
  if type(path) ~= "string" then error("data.read_npy: argument 'path' must be a string", 2) end
  return D.read_npy(path)
end
local WRITE_NPY = class.signature("data.write_npy", "path, tensor")
function M.write_npy(...)
  local a = WRITE_NPY(...)
  if type(a.path) ~= "string" then error("data.write_npy: argument 'path' must be a string", 2) end
  if not torch.is_tensor(a.tensor) then error("data.write_npy: argument 'tensor' must be a tensor, got " .. type(a.tensor), 2) end
  return D.write_npy(a.path, a.tensor)
end

local function exists(p)
  local f = io.open(p, "rb")
  if f then f:close() return true end
  return false
end

-- root/prefix-kind-idxN-ubyte, gzipped or not
local function find_file(reader, root, prefix, kind, n, download)
  local base = ("%s/%s-%s-idx%d-ubyte"):format(root, prefix, kind, n)
  for _, p in ipairs({ base, base .. ".gz" }) do
    if exists(p) then return p end
  end
  error(("%s: cannot find %s (or .gz) under '%s'%s"):format(reader, base:match("[^/]+$"), root,
    download and " (download=true cannot fetch it: lutorch does not download; put the files there)" or ""), 4)
end

-- The MNIST family: ds.data is uint8 [N, 28, 28], ds.targets int64 [N] with
-- 1-based classes (the file's label + 1, the project's convention: class k is
-- column k of the logits). get(i) -> {image, label}: image is ds.data[i] (a
-- uint8 [28, 28] view) through opts.transform, label a Lua integer through
-- opts.target_transform. Without transforms batches come from index_select.
local MNIST = dataset.Dataset:extend("MNIST")
M.MNIST = MNIST
MNIST.default_root = "/usr/share/datasets/mnist"
MNIST.classes = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" }
-- torchvision's order: MNIST(root, train, transform, target_transform, download); there is no
-- download (no network here): download = true only finds files that are already there
local MNIST_SPEC = "root=nil, train=true, transform=nil, target_transform=nil, download=false"
local MNIST_SIG = class.signature("data.MNIST", MNIST_SPEC)
function MNIST:__init(...)
  local sig = class.signatures[self.__typename] or MNIST_SIG
  local opts = sig(...)
  local root = opts.root or self.default_root
  if type(root) ~= "string" then error(self.__typename .. ": argument 'root' must be a string, got " .. type(root), 3) end
  if type(opts.train) ~= "boolean" then error(self.__typename .. ": train must be a boolean, got " .. tostring(opts.train), 3) end
  local train = opts.train
  local prefix = train and "train" or "t10k"
  local name = self.__typename
  self.root, self.train = root, train
  self.data = D.read_idx(find_file(name, root, prefix, "images", 3, opts.download))
  local labels = D.read_idx(find_file(name, root, prefix, "labels", 1, opts.download))
  if labels:size(1) ~= self.data:size(1) then
    error(("%s: %d images but %d labels under '%s'"):format(name, self.data:size(1), labels:size(1), root), 2)
  end
  self.targets = labels:long():add(1)
  self.transform, self.target_transform = opts.transform, opts.target_transform
end
function MNIST:len() return self.data:size(1) end
function MNIST:get(i)
  local img, y = self.data[i], self.targets[i]
  if self.transform then img = self.transform(img) end
  if self.target_transform then y = self.target_transform(y) end
  return { img, y }
end
function MNIST:collate_batch(idx)
  if self.transform or self.target_transform then
    local s = {}
    for k, i in ipairs(idx) do s[k] = self:get(i) end
    return require("data.collate").default_collate(s)
  end
  local it = torch.tensor(idx, { dtype = torch.int64 })
  local rows = require("data.collate").index_rows
  return { rows(self.data, it), rows(self.targets, it) }
end

local FashionMNIST = MNIST:extend("FashionMNIST")
M.FashionMNIST = FashionMNIST
FashionMNIST.default_root = "/usr/share/datasets/fashion-mnist"   -- Debian's dataset-fashion-mnist
class.signature("data.FashionMNIST", MNIST_SPEC)
FashionMNIST.classes = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
  "Sneaker", "Bag", "Ankle boot" }

return M
