-- Elementwise ops: arithmetic, math, comparisons, logic, activations.
return {
  { "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", out = true, inplace = true,
    doc = "self + alpha * other, elementwise with broadcasting." },
  { "sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", out = true, inplace = true,
    alias = { "subtract" }, doc = "self - alpha * other, elementwise with broadcasting." },
  { "mul(Tensor self, Tensor other) -> Tensor", out = true, inplace = true, alias = { "multiply", "cmul" },
    doc = "Elementwise product with broadcasting." },
  { "div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor", out = true, inplace = true,
    alias = { "divide", "cdiv", "true_divide" },
    doc = "Elementwise quotient; rounding_mode nil (true division), \"trunc\" or \"floor\"." },
  { "remainder(Tensor self, Tensor other) -> Tensor", out = true, inplace = true,
    doc = "Python-style modulus: the result has the sign of other." },
  { "pow(Tensor self, Tensor exponent) -> Tensor", out = true, inplace = true,
    doc = "self raised to exponent, elementwise with broadcasting." },
  { "neg(Tensor self) -> Tensor", out = true, inplace = true, alias = { "negative" },
    doc = "-self." },
}
