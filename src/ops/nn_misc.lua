-- nn ops that are neither convolutions nor normalisations: linear layers, dropout, embedding,
-- one_hot, distances, attention and the activations ew_unary.c does not have.
-- Kernels: src/cpu/nn_act.c (activations), src/cpu/nn_misc.c (the rest and the
-- composites); derivative helpers: src/autograd/formulas_nn_misc.c.
local function act(name, doc, deriv, inplace)
  return { name .. "(Tensor self) -> Tensor", out = true, inplace = inplace, doc = doc,
           derivatives = { self = "lt_nn_grad_" .. deriv .. "(grad, self)" } }
end

local ops = {
  -- linear layers: composites over addmm / mm / bmm
  { "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", variants = "function",
    composite = "lt_composite_linear",
    doc = "input @ weight^T + bias: weight [out_features, in_features], input [..., in_features]; one gemm with the bias folded in." },
  { "_linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", variants = "function",
    kernels = { cpu = "lt_cpu__linear", cuda = "lt_cuda__linear" },
    derivatives = { input = "lt_mm(grad, weight)", weight = "lt_nn_grad_linear_weight(grad, input)",
                    bias = "lt_grad_identity(grad)" },
    doc = "linear on a 2-D input (linear's kernel)." },
  { "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor", variants = "function",
    composite = "lt_composite_bilinear",
    doc = "y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]." },

  -- dropout: the global generator; scaled by 1/(1-p) so the expectation is unchanged
  { "native_dropout(Tensor input, float p, bool train=True) -> (Tensor output, Tensor mask)", variants = "function",
    kernels = { cpu = "lt_cpu_native_dropout", cuda = "lt_cuda_native_dropout" },
    derivatives = { input = "lt_nn_grad_dropout(grad, mask, p, train)" },
    doc = "Dropout returning the kept-element mask (bool) too: output = input * mask / (1 - p)." },
  { "_dropout_mask(Tensor self, float p, int[]? shape=None) -> Tensor", variants = "function", nondiff = true,
    kernels = { cpu = "lt_cpu__dropout_mask", cuda = "lt_cuda__dropout_mask" },
    doc = "A tensor of self's dtype and the given shape (default self's) holding 0 with probability p, else 1/(1-p)." },
  { "dropout(Tensor input, float p=0.5, bool train=True) -> Tensor", composite = "lt_composite_dropout",
    doc = "Zeroes each element with probability p and scales the others by 1/(1-p) when train; input itself otherwise." },
  { "dropout_(Tensor(a!) self, float p=0.5, bool train=True) -> Tensor(a!)", composite = "lt_composite_dropout_",
    doc = "In-place dropout." },
  { "feature_dropout(Tensor input, float p=0.5, bool train=True) -> Tensor", composite = "lt_composite_feature_dropout",
    doc = "Dropout of whole channels (dim 2) of an [N, C, ...] input (F.dropout1d/2d/3d)." },
  { "feature_dropout_(Tensor(a!) self, float p=0.5, bool train=True) -> Tensor(a!)",
    composite = "lt_composite_feature_dropout_", doc = "In-place feature_dropout." },

  -- embedding and one_hot (1-based indices)
  { "embedding(Tensor weight, Tensor indices, int? padding_idx=None) -> Tensor", kernels = { cpu = "lt_cpu_embedding", cuda = "lt_cuda_embedding" }, variants = "function",
    derivatives = { weight = "lt_nn_grad_embedding(grad, indices, weight_meta, padding_idx)" },
    doc = "Rows of weight [num_embeddings, dim] picked by 1-based integer indices: shape indices.shape + [dim]. padding_idx's row gets no gradient." },
  { "_embedding_backward(Tensor grad, Tensor indices, int num_weights, int? padding_idx=None) -> Tensor", kernels = { cpu = "lt_cpu__embedding_backward", cuda = "lt_cuda__embedding_backward" },
    variants = "function", doc = "embedding's weight gradient: the rows of grad summed by index; padding_idx's row 0." },
  { "one_hot(Tensor self, int num_classes=-1) -> Tensor", kernels = { cpu = "lt_cpu_one_hot", cuda = "lt_cuda_one_hot" }, nondiff = true,
    doc = "int64 [..., num_classes] with a 1 in column k for value k (1-based); num_classes -1: the largest value." },

  -- distances and attention: composites
  { "cosine_similarity(Tensor x1, Tensor x2, Dim dim=2, float eps=1e-08) -> Tensor", variants = "function",
    composite = "lt_composite_cosine_similarity",
    doc = "sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along dim, operands broadcast." },
  { "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor",
    variants = "function", composite = "lt_composite_pairwise_distance",
    doc = "p-norm of x1 - x2 + eps along the last dim." },
  { "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0, bool is_causal=False, Scalar? scale=None) -> Tensor",
    variants = "function", composite = "lt_composite_scaled_dot_product_attention",
    doc = "softmax(query @ key^T * scale + mask) @ value; scale defaults to 1/sqrt(E); a bool attn_mask marks the positions that take part, a float one is added; is_causal masks the positions above the diagonal." },

  -- activations
  { "glu(Tensor self, Dim dim=-1) -> Tensor", composite = "lt_composite_glu",
    doc = "a * sigmoid(b) with a, b the two halves of self along dim." },
  act("mish", "self * tanh(softplus(self)).", "mish", true),
  act("hardsigmoid", "clamp(self / 6 + 1/2, 0, 1).", "hardsigmoid", true),
  act("hardswish", "self * hardsigmoid(self).", "hardswish", true),
  act("softsign", "self / (1 + |self|).", "softsign"),
  act("logsigmoid", "log(sigmoid(self)), computed without overflow.", "logsigmoid"),
  act("tanhshrink", "self - tanh(self).", "tanhshrink"),
  { "selu(Tensor self) -> Tensor", out = true, inplace = true,
    doc = "scale * elu(self, alpha) with alpha = 1.6732632423543772, scale = 1.0507009873554805.",
    derivatives = { self = "lt_nn_grad_selu(grad, self)" } },
  { "celu(Tensor self, Scalar alpha=1) -> Tensor", out = true, inplace = true,
    doc = "max(0, self) + min(0, alpha * (exp(self / alpha) - 1)).",
    derivatives = { self = "lt_nn_grad_celu(grad, self, alpha)" } },
  { "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", out = true, inplace = true,
    doc = "self where self > threshold, value elsewhere.",
    derivatives = { self = "lt_nn_grad_threshold(grad, self, threshold)" } },
  { "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", out = true,
    doc = "self where |self| > lambd, 0 elsewhere.",
    derivatives = { self = "lt_nn_grad_shrink(grad, self, lambd)" } },
  { "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", out = true,
    doc = "self - lambd above lambd, self + lambd below -lambd, 0 between.",
    derivatives = { self = "lt_nn_grad_shrink(grad, self, lambd)" } },
  { "prelu(Tensor self, Tensor weight) -> Tensor", out = true,
    doc = "self where positive, weight * self elsewhere; weight has one element or one per channel (dim 2).",
    derivatives = { self = "lt_nn_grad_prelu_self(grad, self, weight)",
                    weight = "lt_nn_grad_prelu_weight(grad, self, weight)" } },
  { "rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False) -> Tensor",
    composite = "lt_composite_rrelu",
    doc = "leaky_relu with slopes drawn uniformly from [lower, upper] when training, their mean otherwise." },
  { "rrelu_(Tensor(a!) self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False) -> Tensor(a!)",
    composite = "lt_composite_rrelu_", doc = "In-place rrelu." },
  { "_activation_backward(Tensor grad, Tensor self, str act, float a=0, float b=0, float c=0) -> Tensor",
    variants = "function",
    doc = "grad * act'(self) in one pass, for the derivative helpers (act: mish, hardsigmoid, hardswish, softsign, logsigmoid, threshold, hardshrink, softshrink, tanhshrink, elu, silu, gelu, gelu_tanh, softplus)." },
}

-- the activations with a CUDA kernel (src/cuda/unary.c, binary.c)
local cuda = { mish = 1, hardsigmoid = 1, hardswish = 1, softsign = 1, logsigmoid = 1, tanhshrink = 1, selu = 1,
               celu = 1, threshold = 1, hardshrink = 1, softshrink = 1, prelu = 1, _activation_backward = 1 }
for _, d in ipairs(ops) do
  local name = d[1]:match("^([%w_]+)%(")
  if cuda[name] then d.kernels = { cpu = "lt_cpu_" .. name, cuda = "lt_cuda_" .. name } end
end
return ops
