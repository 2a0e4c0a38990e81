-- hyperbolic.lua — the inverse hyperbolic functions asinh, acosh, atanh
-- (arcsinh, arccosh, arctanh), real and complex. Kernels in
-- src/cpu/ew_hyperbolic.c and, real only, src/cuda/unary.c; derivatives in src/autograd/formulas_complex_more.c
-- (written once for both: the complex gradient is grad * conj(f'(z))).
local ops = {}
local inverse = {
  { "asinh", "arcsinh", "Inverse hyperbolic sine: log(x + sqrt(x^2 + 1)); complex branch cuts on the imaginary axis beyond +-i." },
  { "acosh", "arccosh", "Inverse hyperbolic cosine (nan below 1 for real x); complex branch cut on the real axis below 1." },
  { "atanh", "arctanh", "Inverse hyperbolic tangent (+-inf at +-1, nan beyond for real x); complex branch cuts on the real axis beyond +-1." },
}
for _, f in ipairs(inverse) do
  ops[#ops + 1] = { f[1] .. "(Tensor self) -> Tensor", out = true, inplace = true, alias = { f[2] },
                    complex = true, doc = f[3] .. " Integer inputs give the default float dtype.",
                    kernels = { cpu = "lt_cpu_" .. f[1], cuda = "lt_cuda_" .. f[1] },
                    derivatives = { self = "lt_grad_" .. f[1] .. "(grad, self)" } }
end
return ops
