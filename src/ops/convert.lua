-- Conversions and whole-tensor writes: to(dtype), float()/long()/..., clone,
-- copy_, fill_, zero_. Kernels: src/core/copy_ops.c (device-neutral, `any`), over each
-- backend's copy and cast loops (src/cpu/copy.c, ew_cast.c).
-- The to_float()/... casts and type_as are composites over to(), differentiable through it.
local ops = {
  { "to(Tensor self, ScalarType dtype, *, bool copy=False) -> Tensor", composite = "lt_to_impl",
    doc = "self converted to dtype; self itself when it already has it (unless copy)." },
  -- the converting part of to(); differentiable when the result is floating
  { "_to_copy(Tensor self, ScalarType dtype) -> Tensor", kernels = { any = "lt_core__to_copy" }, variants = "function",
    derivatives = { self = "lt_grad_to_dtype(grad, self_meta)" },
    doc = "A new tensor with self's values converted to dtype (what to() does when it converts)." },
  -- to(device [, dtype]): Lua tries the dtype form first, then this one
  { "to_device(Tensor self, Device? device, ScalarType? dtype=None, *, bool copy=False, bool non_blocking=False) -> Tensor", lua = "to",
    composite = "lt_to_device_impl",
    doc = "self on device (\"cpu\", \"cuda\", \"cuda:1\"), converted to dtype when given; self itself when nothing changes (unless copy). non_blocking: from pinned memory (x:pin_memory()) to a cuda device, the copy is queued on the current stream and not waited for." },
  -- the moving part of to(device): one backend's data copied through the host to another's
  { "_to_device(Tensor self, Device? device, bool non_blocking=False) -> Tensor", kernels = { any = "lt_core__to_device" }, variants = "function",
    cross_device = true,
    derivatives = { self = "lt_grad_to_device(grad, self_meta)" },
    doc = "A copy of self on device (what to(device) does when it moves)." },
  { "cuda(Tensor self, Device? device=None, *, bool non_blocking=False) -> Tensor", composite = "lt_to_cuda_impl", variants = "method",
    doc = "self on a cuda device (the current one unless given); self itself when already there. non_blocking as in to()." },
  { "cpu(Tensor self) -> Tensor", composite = "lt_to_cpu_impl", variants = "method",
    doc = "self on the cpu; self itself when already there." },
  { "type_as(Tensor self, Tensor other) -> Tensor", composite = "lt_type_as_impl",
    doc = "self converted to other's dtype." },
  { "clone(Tensor self) -> Tensor", kernels = { any = "lt_core_clone" }, derivatives = { self = "lt_grad_identity(grad)" },
    doc = "A contiguous copy of self." },
  -- whole-tensor writes: self's old value gets a zero gradient
  { "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)", kernels = { any = "lt_core_copy_" },
    alias = { "copy" }, node_name = "CopyBackwards",
    cross_device = true,   -- x:copy_(y) copies between devices: dispatched on self's backend
    derivatives = { self = "lt_ew_grad_zeros(grad)", src = "lt_grad_identity(grad)" },
    doc = "Copies src into self, broadcasting and converting dtype; returns self." },
  { "fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)", kernels = { any = "lt_core_fill_" }, alias = { "fill" }, node_name = "FillBackward0",
    overlap = "fill",   -- one value everywhere: an expanded self is fine, as in PyTorch
    derivatives = { self = "lt_ew_grad_zeros(grad)" },
    doc = "Sets every element of self to value; returns self." },
  { "zero_(Tensor(a!) self) -> Tensor(a!)", kernels = { any = "lt_core_zero_" }, alias = { "zero" }, node_name = "ZeroBackward0", overlap = "fill",
    derivatives = { self = "lt_ew_grad_zeros(grad)" },
    doc = "Sets every element of self to 0; returns self." },
}
local casts = {
  { "float", "float32" }, { "double", "float64" }, { "half", "float16" }, { "bfloat16", "bfloat16" },
  { "long", "int64" }, { "int", "int32" }, { "short", "int16" }, { "char", "int8" },
  { "byte", "uint8" }, { "bool", "bool" },
}
for _, c in ipairs(casts) do
  ops[#ops + 1] = { "to_" .. c[1] .. "(Tensor self) -> Tensor", lua = c[1], variants = "method",
                    composite = "lt_to_" .. c[1] .. "_impl",
                    doc = "self converted to " .. c[2] .. " (self itself when it already is)." }
end
return ops
