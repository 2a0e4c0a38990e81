-- torch.fft and the signal windows: declarations. The transforms run on lutorch's own
-- FFT engine (src/cpu/fft.h; why our own: man/fft.md); the kernels are in
-- src/cpu/fft_ops.c. The frequencies, shifts and windows are composites
-- (src/composite/fft.c): any backend runs them.
local O = "*, ScalarType? dtype=None, Device? device=None, bool requires_grad=False"

local function fn(schema, doc, extra)
  local d = { schema, variants = "function", doc = doc }
  for k, v in pairs(extra or {}) do d[k] = v end
  return d
end

return {
  fn("fft_fftfreq(int n, float d=1.0, " .. O .. ") -> Tensor",
     "The sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., ceil(n/2)-1, -floor(n/2), ..., -1] / (d n), as numpy.fft.fftfreq.",
     { lua = "fft.fftfreq", composite = "lt_composite_fft_fftfreq", nondiff = true }),
  fn("fft_rfftfreq(int n, float d=1.0, " .. O .. ") -> Tensor",
     "The n/2+1 non-negative sample frequencies of rfft of length n: [0, 1, ..., floor(n/2)] / (d n).",
     { lua = "fft.rfftfreq", composite = "lt_composite_fft_rfftfreq", nondiff = true }),
  fn("fft_fftshift(Tensor self, Dim[]? dim=None) -> Tensor",
     "Rolls each dim in `dim` (default: all) by half its size, moving the zero frequency to the middle.",
     { lua = "fft.fftshift", composite = "lt_composite_fft_fftshift" }),
  fn("fft_ifftshift(Tensor self, Dim[]? dim=None) -> Tensor",
     "The inverse of fftshift (they differ for odd sizes): rolls each dim by minus half its size.",
     { lua = "fft.ifftshift", composite = "lt_composite_fft_ifftshift" }),

  fn("hann_window(int window_length, bool periodic=True, " .. O .. ") -> Tensor",
     "The Hann window 0.5 - 0.5 cos(2 pi k / N), N = window_length (periodic, for spectral analysis) or window_length - 1 (symmetric, for filter design).",
     { composite = "lt_composite_hann_window", nondiff = true }),
  fn("hamming_window(int window_length, bool periodic=True, float alpha=0.54, float beta=0.46, " .. O .. ") -> Tensor",
     "The Hamming window alpha - beta cos(2 pi k / N) (N as hann_window's).",
     { composite = "lt_composite_hamming_window", nondiff = true }),
  fn("blackman_window(int window_length, bool periodic=True, " .. O .. ") -> Tensor",
     "The Blackman window 0.42 - 0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N) (N as hann_window's).",
     { composite = "lt_composite_blackman_window", nondiff = true }),
  fn("bartlett_window(int window_length, bool periodic=True, " .. O .. ") -> Tensor",
     "The triangular Bartlett window 1 - |2k/N - 1| (N as hann_window's).",
     { composite = "lt_composite_bartlett_window", nondiff = true }),
  fn("kaiser_window(int window_length, bool periodic=True, float beta=12.0, " .. O .. ") -> Tensor",
     "The Kaiser window I0(beta sqrt(1 - (2k/N - 1)^2)) / I0(beta) (N as hann_window's).",
     { composite = "lt_composite_kaiser_window", nondiff = true }),
}
