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

-- the three transforms every torch.fft function ends in, and the weighting of a half
-- spectrum their adjoints use; dims already wrapped, sizes already what the transform
-- wants, normalization 0 (none), 1 (1/sqrt n) or 2 (1/n)
local prims = {
  { "_fft_c2c(Tensor self, Dim[] dim, int normalization, bool forward) -> Tensor", variants = "function",
    complex = true, derivatives = { self = "lt_grad_fft_c2c(grad, dim, normalization, forward)" },
    doc = "The complex transform of self over dim (forward: exponent sign -), unnormalised (0), times 1/sqrt(n) (1) or 1/n (2). What torch.fft.fft and its kin call." },
  { "_fft_r2c(Tensor self, Dim[] dim, int normalization, bool forward=True) -> Tensor", variants = "function",
    complex = true, derivatives = { self = "lt_grad_fft_r2c(grad, self_meta, dim, normalization, forward)" },
    doc = "The transform of real self over dim, the last dim halved to n/2+1 (the non-negative frequencies); forward=false gives the inverse transform (the conjugate)." },
  { "_fft_c2r(Tensor self, Dim[] dim, int normalization, int last_dim_size, bool forward=False) -> Tensor", variants = "function",
    complex = true, derivatives = { self = "lt_grad_fft_c2r(grad, dim, normalization, last_dim_size, forward)" },
    doc = "The real inverse transform of a half spectrum (last dim last_dim_size/2+1 values) over dim, last_dim_size real values along the last; forward=true gives the forward transform of the Hermitian signal." },
  { "_fft_halfweight(Tensor self, Dim dim, int n, float weight) -> Tensor", variants = "function",
    complex = true, derivatives = { self = "lt__fft_halfweight(grad, dim, n, weight)" },
    doc = "self (a half spectrum of length n along dim) with the values that stand for two frequencies, 1 .. n - n/2 - 1, times weight." },
}

-- the torch.fft functions: composites over the primitives (src/composite/fft.c)
local function tr(name, schema, doc)
  return fn("fft_" .. name .. schema, doc, { lua = "fft." .. name, composite = "lt_composite_fft_" .. name, complex = true })
end
local ONE = "(Tensor self, int? n=None, Dim dim=-1, str? norm=None) -> Tensor"
local MANY = "(Tensor self, int[]? s=None, Dim[]? dim=None, str? norm=None) -> Tensor"
local NORM = " norm: \"backward\" (default), \"ortho\" or \"forward\" (man/fft.md)."
local transforms = {
  tr("fft", ONE, "The discrete Fourier transform along dim; n pads (zeros) or cuts the dim first; a real input is made complex." .. NORM),
  tr("ifft", ONE, "The inverse of fft." .. NORM),
  tr("rfft", ONE, "The transform of a real input: its n/2+1 non-negative frequencies." .. NORM),
  tr("irfft", ONE, "The inverse of rfft: a real result of length n (default 2(m-1) for m input values)." .. NORM),
  tr("hfft", ONE, "The transform of a Hermitian-symmetric signal given by its first half: a real result of length n (default 2(m-1))." .. NORM),
  tr("ihfft", ONE, "The inverse of hfft: the n/2+1 values of a real input's inverse transform." .. NORM),
  tr("fft2", MANY, "fftn over dims (-2, -1) unless dim says otherwise." .. NORM),
  tr("ifft2", MANY, "ifftn over dims (-2, -1) unless dim says otherwise." .. NORM),
  tr("rfft2", MANY, "rfftn over dims (-2, -1) unless dim says otherwise." .. NORM),
  tr("irfft2", MANY, "irfftn over dims (-2, -1) unless dim says otherwise." .. NORM),
  tr("fftn", MANY, "The transform over several dims: dim (default: the last #s, or all), s their lengths (pad or cut)." .. NORM),
  tr("ifftn", MANY, "The inverse of fftn." .. NORM),
  tr("rfftn", MANY, "fftn of a real input, the last of the dims halved to n/2+1." .. NORM),
  tr("irfftn", MANY, "The inverse of rfftn: a real result, the last dim of length s[-1] (default 2(m-1))." .. NORM),
}

local ops = {
  fn("fft_fftfreq(int n, float d=1.0, " .. O .. ") -> Tensor",
     "The sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., ceil(n/2)-1, -floor(n/2), ..., -1] / (d n), as numpy.fft.fftfreq.",
     { lua = "fft.fftfreq", composite = "lt_composite_fft_fftfreq", nondiff = true }),
  fn("fft_rfftfreq(int n, float d=1.0, " .. O .. ") -> Tensor",
     "The n/2+1 non-negative sample frequencies of rfft of length n: [0, 1, ..., floor(n/2)] / (d n).",
     { lua = "fft.rfftfreq", composite = "lt_composite_fft_rfftfreq", nondiff = true }),
  fn("fft_fftshift(Tensor self, Dim[]? dim=None) -> Tensor",
     "Rolls each dim in `dim` (default: all) by half its size, moving the zero frequency to the middle.",
     { lua = "fft.fftshift", composite = "lt_composite_fft_fftshift", complex = true }),
  fn("fft_ifftshift(Tensor self, Dim[]? dim=None) -> Tensor",
     "The inverse of fftshift (they differ for odd sizes): rolls each dim by minus half its size.",
     { lua = "fft.ifftshift", composite = "lt_composite_fft_ifftshift", complex = true }),

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
local stft = {
  { "stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, str pad_mode=\"reflect\", bool normalized=False, bool? onesided=None, bool? return_complex=None) -> Tensor",
    composite = "lt_composite_stft", complex = true,
    doc = "The short-time Fourier transform of a signal (L) or batch (B, L): frames of n_fft samples every hop_length (default n_fft/4), times the window (win_length long, centred in n_fft; default all ones), padded by n_fft/2 at both ends (pad_mode) when center; the complex (B,) freq x frames result, with n_fft/2+1 frequencies for a real signal and window (onesided) and n_fft for a complex one or onesided=false. return_complex must be true or nil (man/fft.md)." },
  { "istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, int? length=None, bool return_complex=False) -> Tensor",
    composite = "lt_composite_istft", complex = true,
    doc = "The inverse of stft: each frame's inverse transform times the window, overlap-added and divided by the overlap-added squared window; length trims or pads the result. A real signal from a onesided (n_fft/2+1) or two-sided spectrum; with return_complex=true a complex signal from a two-sided one." },
}

for _, list in ipairs { prims, transforms, stft } do
  for _, d in ipairs(list) do ops[#ops + 1] = d end
end
return ops
