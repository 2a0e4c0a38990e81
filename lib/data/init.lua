-- data — datasets, samplers, DataLoader (with worker processes over shared
-- memory), readers, transforms and a progress bar. `local data = require "data"`.
-- Mirrors torch.utils.data; indices are 1-based (sample i of a dataset is
-- ds:get(i), worker ids run 1..num_workers). Every constructor takes PyTorch's
-- arguments in PyTorch's order, any of them by name in a trailing options table.
--
--   local loader = data.DataLoader(data.TensorDataset(x, y), 64, true)   -- batch_size, shuffle
--   local loader = data.DataLoader(ds, {batch_size=64, shuffle=true, num_workers=2,
--     generator=torch.Generator():manual_seed(0), unpack=true})
--   for xb, yb in loader do ... end           -- unpack=true: the batch's fields; else `for b in`
--   for b in loader:iter() do ... end         -- `break` stops its workers at once
--   #loader; loader:shutdown()                -- batches per epoch; stop workers now
--   for b in data.progress(loader, "train") do ... end
--   local xb, yb = table.unpack(ds[{{1, 64}}])   -- a TensorDataset batch by range (clamped)
--
-- A new epoch each time a loop starts, nested loops included; a plain `for b in loader`
-- left by break ends its workers when its epoch is collected (at the latest when the next
-- loop over the loader starts), loader:iter() at the break (data/loader.lua, DataLoader:__call).
-- Datasets: Dataset (extend it: len, get), IterableDataset (iter), TensorDataset,
-- Subset, ConcatDataset, random_split(ds, {lengths | fractions}, generator).
-- A plain Lua list is a map-style dataset too. Samplers: SequentialSampler,
-- RandomSampler, WeightedRandomSampler, SubsetRandomSampler, BatchSampler.
-- Readers: read_idx, read_csv, read_npy, write_npy; MNIST / FashionMNIST(root,
-- {train=true}) with 1-based class labels (file label + 1); ImageFolder(root, {transform=})
-- over root/class/*.png|jpg (data/folder.lua). data.transforms: ToFloat (ToTensor),
-- Normalize, RandomCrop, RandomHorizontalFlip, Resize, CenterCrop, ColorJitter, Compose.
-- The design of the worker processes is described in data/loader.lua.
local torch = torch or require("torch")
local dataset = require "data.dataset"
local sampler = require "data.sampler"
local collate = require "data.collate"
local loader = require "data.loader"
local readers = require "data.readers"
local progress = require "data.progress"

local data = {
  transforms = require "data.transforms",
  Dataset = dataset.Dataset,
  IterableDataset = dataset.IterableDataset,
  TensorDataset = dataset.TensorDataset,
  Subset = dataset.Subset,
  ConcatDataset = dataset.ConcatDataset,
  random_split = dataset.random_split,
  Sampler = sampler.Sampler,
  SequentialSampler = sampler.SequentialSampler,
  RandomSampler = sampler.RandomSampler,
  WeightedRandomSampler = sampler.WeightedRandomSampler,
  SubsetRandomSampler = sampler.SubsetRandomSampler,
  BatchSampler = sampler.BatchSampler,
  DistributedSampler = require("data.distributed").DistributedSampler,
  default_collate = collate.default_collate,
  default_convert = collate.default_convert,
  DataLoader = loader.DataLoader,
  get_worker_info = loader.get_worker_info,
  read_idx = readers.read_idx,
  read_csv = readers.read_csv,
  read_npy = readers.read_npy,
  write_npy = readers.write_npy,
  MNIST = readers.MNIST,
  FashionMNIST = readers.FashionMNIST,
  ImageFolder = require("data.folder").ImageFolder,
  progress = progress.progress,
  Progress = progress.Progress,
}

return data
