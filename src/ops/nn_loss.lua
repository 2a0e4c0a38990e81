-- Loss functions (PyTorch's torch.nn.functional losses). reduction is "mean",
-- "sum" or "none" ("batchmean" too for kl_div). Class targets are 1-based.
-- nll_loss has kernels (src/cpu/nn_loss.c); the others are composites over
-- differentiable ops, so they are differentiable in input and target.
return {
  { "nll_loss_forward(Tensor self, Tensor target, Tensor? weight=None, str reduction=\"mean\", int ignore_index=-100) -> (Tensor output, Tensor total_weight)",
    kernels = { cpu = "lt_cpu_nll_loss_forward", cuda = "lt_cuda_nll_loss_forward" },
    variants = "function",
    -- under create_graph the input gradient is built from ops (the mean's divisor recomputed
    -- from weight: total_weight carries no gradient), so weights that require grad get
    -- second-order gradients too
    derivatives = { self = "lt_grad_nll_loss_self(grad, self, self_meta, target, weight, reduction, ignore_index, total_weight)",
                    weight = "lt_grad_nll_loss_weight(grad, self, target, weight, weight_meta, reduction, ignore_index)" },
    doc = "nll_loss and the total weight of the targets not ignored (the mean's divisor)." },
  { "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, str reduction, int ignore_index, Tensor total_weight) -> Tensor",
    kernels = { cpu = "lt_cpu_nll_loss_backward", cuda = "lt_cuda_nll_loss_backward" },
    variants = "function",
    -- linear in grad_output, constant in self (only its shape is read): the derivative is
    -- nll_loss itself (the mean's divisor is the same total weight). nll_loss_forward's
    -- derivative calls this kernel only for a plain backward. A direct call whose weight or
    -- total_weight requires grad gets an error at backward (those are not written)
    derivatives = { grad_output = "lt_nll_loss(grad, target, weight, reduction, ignore_index)",
                    weight = "lt_grad_nll_loss_backward_weight(grad)",
                    total_weight = "lt_grad_nll_loss_backward_total_weight(grad)" },
    doc = "Gradient of nll_loss with respect to its input." },
  { "nll_loss(Tensor self, Tensor target, Tensor? weight=None, str reduction=\"mean\", int ignore_index=-100) -> Tensor",
    variants = "function", composite = "lt_nll_loss_impl",
    doc = "Negative log likelihood: -weight[t] * input[n, t] for 1-based class targets t; input (C), (N, C) or (N, C, d1, ...); targets equal to ignore_index are skipped; the mean divides by the total weight." },
  { "cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction=\"mean\", int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
    variants = "function", composite = "lt_cross_entropy_impl",
    doc = "nll_loss(log_softmax(input, 2), target); target holds 1-based class indices, or class probabilities (floating, the input's shape); label_smoothing mixes in the uniform distribution." },
  { "mse_loss(Tensor self, Tensor target, str reduction=\"mean\") -> Tensor", variants = "function",
    composite = "lt_mse_loss_impl", doc = "(input - target)^2, reduced." },
  { "l1_loss(Tensor self, Tensor target, str reduction=\"mean\") -> Tensor", variants = "function",
    composite = "lt_l1_loss_impl", doc = "|input - target|, reduced." },
  { "smooth_l1_loss(Tensor self, Tensor target, str reduction=\"mean\", float beta=1.0) -> Tensor", variants = "function",
    composite = "lt_smooth_l1_loss_impl", doc = "0.5 d^2 / beta where |d| < beta, else |d| - beta / 2 (d = input - target), reduced." },
  { "huber_loss(Tensor self, Tensor target, str reduction=\"mean\", float delta=1.0) -> Tensor", variants = "function",
    composite = "lt_huber_loss_impl", doc = "0.5 d^2 where |d| < delta, else delta (|d| - delta / 2), reduced." },
  { "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction=\"mean\") -> Tensor",
    variants = "function", composite = "lt_binary_cross_entropy_impl",
    doc = "-weight (t log x + (1 - t) log(1 - x)) with the logs clamped at -100; input in [0, 1]." },
  { "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, str reduction=\"mean\") -> Tensor",
    variants = "function", composite = "lt_binary_cross_entropy_with_logits_impl",
    doc = "binary_cross_entropy(sigmoid(input), target) computed stably; pos_weight scales the positive term (broadcast over the last dim)." },
  { "kl_div(Tensor self, Tensor target, str reduction=\"mean\", bool log_target=False) -> Tensor", variants = "function",
    composite = "lt_kl_div_impl",
    doc = "target (log target - input) with input log-probabilities; log_target=true takes target as log-probabilities; reduction \"batchmean\" divides the sum by the batch size." },
}
