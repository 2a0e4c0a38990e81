-- t7nn — nn as Torch7 had it, for Torch7 mode (`lutorch --torch7`; man/torch7.md):
-- modules holding plain tensors, with Torch7's module protocol (updateOutput,
-- updateGradInput, accGradParameters) and classes. `require "nn"` loads it in Torch7
-- mode; the PyTorch-style nn (lib/nn) is the other mode's.
--
--   require "nn"
--   local mlp = nn.Sequential():add(nn.Linear(10, 25)):add(nn.Tanh()):add(nn.Linear(25, 1))
--   local crit = nn.MSECriterion()
--   local err = crit:forward(mlp:forward(x), y)
--   mlp:zeroGradParameters()
--   mlp:backward(x, crit:backward(mlp.output, y))
--   mlp:updateParameters(0.01)
--
-- Each file below holds the classes of one concept; the built-in classes compute their
-- backward with explicit formulas or the op library's backward kernels.
local torch = require "torch"
if torch.compat() ~= "torch7" then
  error("t7nn is Torch7 mode's nn: run with lutorch --torch7 (PyTorch mode's is require \"nn\")", 2)
end
local nn = require "t7nn.env"
package.loaded["nn"] = nn

require "t7nn.utils"
require "t7nn.module"
require "t7nn.container"
require "t7nn.criterion"
require "t7nn.jacobian"

for _, part in ipairs({
  "t7nn.simple",        -- Identity and one-line modules: Add, Mul, CMul, Copy, Dropout, ...
  "t7nn.activation",    -- transfer functions: Tanh, Sigmoid, ReLU, SoftMax, ...
  "t7nn.linear",        -- Linear, Bilinear, LookupTable, ... (and their normalized forms)
  "t7nn.shape",         -- Reshape, View, Select, Narrow, Transpose, Replicate, ...
  "t7nn.table",         -- tables of tensors: ConcatTable, ParallelTable, JoinTable, ...
  "t7nn.reduce",        -- Sum, Max, Mean, MM, DotProduct, CosineDistance, ...
  "t7nn.normalization", -- BatchNormalization family, LRN, contrastive normalization
  "t7nn.convolution",   -- 2-D and 1-D (Temporal) convolutions, sub-sampling
  "t7nn.spatial",       -- 2-D poolings, paddings, up-sampling
  "t7nn.volumetric",    -- 3-D convolutions and poolings
  "t7nn.criteria",      -- the criteria
  "t7nn.decorator",     -- Decorator, Bottle, WeightNorm, DontCast, NaN, Profile, ...
}) do
  require(part)
end

return nn
