-- complex.lua — the complex dtypes' ops (real, imag, view_as_real, ...) and,
-- in `complex_ops`, the ops declared in other files whose kernels take complex
-- tensors (tools/gen.lua: an op not listed here nor declared `complex = true`
-- refuses complex inputs in its entry point, naming itself; man/complex.md).
return {
  complex_ops = {
    -- device-neutral kernels: geometry only, or the core's copy and fill
    "_to_copy", "_to_device", "clone", "copy_", "fill_", "zero_", "contiguous",
    "view", "squeeze", "unsqueeze", "transpose", "permute", "expand", "narrow", "select",
    "unfold", "diagonal", "_cat", "flip", "roll", "diag", "set_", "_set_data",
    -- creation: the fill takes any dtype's element
    "zeros", "ones", "empty", "full", "eye", "zeros_like", "ones_like", "empty_like", "full_like",
    "new_zeros", "new_ones", "new_empty", "new_full",
  },
}
