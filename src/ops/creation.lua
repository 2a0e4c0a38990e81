-- Creation ops: constant tensors, ranges, identity, *_like, and random sampling.
-- torch.tensor, torch.Tensor and the Torch7 typed constructors are hand-written
-- in src/vm/lcreation.c; generators live in src/core/rng.c and src/vm/lrng.c.
local O = "*, ScalarType? dtype=None, Device? device=None, bool requires_grad=False"
local G = "*, Generator? generator=None, ScalarType? dtype=None, Device? device=None, bool requires_grad=False"
local OL = "*, ScalarType? dtype=None, Device? device=None, bool requires_grad=False"

local function fn(schema, doc, extra)
  local d = { schema, variants = "function", nondiff = true, doc = doc }
  for k, v in pairs(extra or {}) do d[k] = v end
  return d
end
local function meth(schema, doc, extra)
  local d = { schema, variants = "method", nondiff = true, doc = doc }
  for k, v in pairs(extra or {}) do d[k] = v end
  return d
end

local ops = {
  fn("zeros(int[] size, " .. O .. ") -> Tensor",
     "A tensor of zeros: torch.zeros(2, 3), torch.zeros{2, 3}, torch.zeros(x.shape, {dtype=torch.int64})."),
  fn("ones(int[] size, " .. O .. ") -> Tensor", "A tensor of ones."),
  fn("empty(int[] size, " .. O .. ") -> Tensor",
     "An uninitialised tensor (its values are whatever the memory held)."),
  fn("full(int[] size, Scalar fill_value, " .. O .. ") -> Tensor",
     "A tensor filled with fill_value; its dtype follows the value (integer: int64, boolean: bool, else the default float dtype) unless dtype is given."),
  fn("arange(Scalar start, Scalar? end=None, Scalar step=1, " .. O .. ") -> Tensor",
     "Values start, start+step, ... up to but excluding end; arange(n) is 0..n-1. int64 when every bound is an integer, else the default float dtype."),
  fn("range(Scalar start, Scalar end, Scalar step=1, " .. O .. ") -> Tensor",
     "Torch7's inclusive range: start, start+step, ..., up to and including end (default float dtype)."),
  fn("linspace(Scalar start, Scalar end, int steps, " .. O .. ") -> Tensor",
     "steps values evenly spaced from start to end inclusive."),
  fn("logspace(Scalar start, Scalar end, int steps, float base=10.0, " .. O .. ") -> Tensor",
     "base ^ linspace(start, end, steps)."),
  fn("eye(int n, int? m=None, " .. O .. ") -> Tensor", "An n x m (default n x n) identity matrix."),

  fn("zeros_like(Tensor self, " .. OL .. ") -> Tensor", "Zeros with self's shape (and dtype and device unless given)."),
  fn("ones_like(Tensor self, " .. OL .. ") -> Tensor", "Ones with self's shape (and dtype and device unless given)."),
  fn("empty_like(Tensor self, " .. OL .. ") -> Tensor", "An uninitialised tensor with self's shape."),
  fn("full_like(Tensor self, Scalar fill_value, " .. OL .. ") -> Tensor", "fill_value with self's shape."),
  meth("new_zeros(Tensor self, int[] size, " .. OL .. ") -> Tensor", "Zeros of the given size with self's dtype and device."),
  meth("new_ones(Tensor self, int[] size, " .. OL .. ") -> Tensor", "Ones of the given size with self's dtype and device."),
  meth("new_empty(Tensor self, int[] size, " .. OL .. ") -> Tensor", "An uninitialised tensor of the given size with self's dtype."),
  meth("new_full(Tensor self, int[] size, Scalar fill_value, " .. OL .. ") -> Tensor", "fill_value in the given size with self's dtype."),

  -- random sampling (all take an optional torch.Generator)
  fn("rand(int[] size, " .. G .. ") -> Tensor", "Uniform samples in [0, 1)."),
  fn("randn(int[] size, " .. G .. ") -> Tensor", "Standard normal samples."),
  fn("randint(int low, int high, int[] size, " .. G .. ") -> Tensor",
     "Uniform integers in [low, high) (int64 unless dtype is given)."),
  fn("randint_high(int high, int[] size, " .. G .. ") -> Tensor",
     "Uniform integers in [0, high).", { lua = "randint" }),
  fn("randperm(int n, " .. G .. ") -> Tensor",
     "A random permutation of 1..n (int64). Unlike PyTorch (0..n-1) the values are 1-based, so the result indexes directly: x:index_select(1, torch.randperm(#x))."),
  fn("normal(Scalar mean, Scalar std, int[] size, " .. G .. ") -> Tensor", "Normal samples with the given mean and std."),
  fn("rand_like(Tensor self, " .. G .. ") -> Tensor", "Uniform [0, 1) samples with self's shape."),
  fn("randn_like(Tensor self, " .. G .. ") -> Tensor", "Standard normal samples with self's shape."),
  fn("randint_like(Tensor self, int low, int high, " .. G .. ") -> Tensor", "Integers in [low, high) with self's shape."),
  fn("randint_like_high(Tensor self, int high, " .. G .. ") -> Tensor", "Integers in [0, high) with self's shape.",
     { lua = "randint_like" }),
  { "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", nondiff = true,
    doc = "0/1 samples, 1 with probability self (elementwise, values in [0, 1]); result has self's dtype." },
  { "bernoulli_p(Tensor self, float p, *, Generator? generator=None) -> Tensor", lua = "bernoulli", nondiff = true,
    doc = "0/1 samples with probability p, with self's shape and dtype." },
  { "bernoulli_(Tensor(a!) self, Scalar p=0.5, *, Generator? generator=None) -> Tensor(a!)", nondiff = true,
    variants = "method", doc = "Fill self in place with 0/1 samples, 1 with probability p." },
  { "bernoulli_tensor_(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!)", nondiff = true,
    variants = "method", lua = "bernoulli_", doc = "Fill self in place with 0/1 samples, 1 with probability p (a tensor broadcast to self)." },
  { "uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)", nondiff = true,
    variants = "method", alias = { "uniform" }, doc = "Fill self in place with uniform samples in [from, to)." },
  { "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)", nondiff = true,
    variants = "method", doc = "Fill self in place with normal samples." },
  { "exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!)", nondiff = true,
    variants = "method", doc = "Fill self in place with exponential samples of rate lambd." },
  { "random_(Tensor(a!) self, int? from=None, int? to=None, *, Generator? generator=None) -> Tensor(a!)", nondiff = true,
    variants = "method",
    doc = "Fill self in place with integers: random_() in [0, 2^mantissa] (floats) or the dtype's range, random_(to) in [0, to), random_(from, to) in [from, to)." },
  { "multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor",
    nondiff = true,
    doc = "Samples 1-based category indices from the (unnormalised) weights in each row of self (1-D or 2-D); int64." },
}

-- the ops with a CUDA kernel (src/cuda/creation.c, random.c); multinomial has
-- none yet (src/cuda/kernels_left.lua says why)
local cuda = {}
for name in ([[zeros ones empty full arange range linspace logspace eye zeros_like ones_like empty_like
    full_like new_zeros new_ones new_empty new_full rand randn randint randint_high normal rand_like
    randn_like randint_like randint_like_high bernoulli bernoulli_p bernoulli_ bernoulli_tensor_
    uniform_ normal_ exponential_ random_ randperm]]):gmatch("%S+") do cuda[name] = true end
for _, d in ipairs(ops) do
  local name = d[1]:match("^([%w_]+)%(")
  if cuda[name] then d.kernels = { cpu = "lt_cpu_" .. name, cuda = "lt_cuda_" .. name } end
end
return ops
