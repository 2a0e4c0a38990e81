-- Ops over lists of tensors for lib/optim: foreach primitives and fused
-- optimizer steps. A fused step updates every parameter of a group in one
-- call and one pass over memory (kernels in src/cpu/optim_foreach.c);
-- state lists are updated in place, state_steps (1-element tensors) are
-- incremented. Float32 and float64; a parameter's gradient and state share
-- its shape and dtype. None of these is differentiable: optimizers step
-- under no_grad.
return {
  { "_foreach_mul_(Tensor(a!)[] self, Scalar scalar) -> ()", nondiff = true, kernels = { cpu = "lt_cpu__foreach_mul_", cuda = "lt_cuda__foreach_mul_" }, variants = "function",
    doc = "Multiply every tensor of the list by a number (or a 1-element tensor) in place." },
  { "_foreach_add_(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()", nondiff = true, kernels = { cpu = "lt_cpu__foreach_add_", cuda = "lt_cuda__foreach_add_" }, variants = "function",
    doc = "self[i] += alpha * other[i] for every i, in place." },
  { "_foreach_zero_(Tensor(a!)[] self) -> ()", nondiff = true, kernels = { cpu = "lt_cpu__foreach_zero_", cuda = "lt_cuda__foreach_zero_" }, variants = "function",
    doc = "Zero every tensor of the list." },
  { "_foreach_norm(Tensor[] tensors, float ord=2) -> Tensor", nondiff = true, kernels = { cpu = "lt_cpu__foreach_norm", cuda = "lt_cuda__foreach_norm" }, variants = "function",
    doc = "A 1-D tensor holding the ord-norm of each tensor of the list (ord 2, 1, 0, p, math.huge, -math.huge)." },
  { "_fused_sgd_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] momentum_buffers, *, float lr, float momentum=0, float dampening=0, float weight_decay=0, bool nesterov=False, bool maximize=False, bool momentum_init=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_sgd_", cuda = "lt_cuda__fused_sgd_" }, variants = "function",
    doc = "One SGD step over a parameter group (momentum_buffers may be {} when momentum is 0; momentum_init: the buffers are new and take the gradient)." },
  { "_fused_adam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, Tensor(d!)[] max_exp_avg_sqs, Tensor(e!)[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay=0, bool amsgrad=False, bool maximize=False, bool decoupled=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_adam_", cuda = "lt_cuda__fused_adam_" }, variants = "function",
    doc = "One Adam step over a parameter group; decoupled=true is AdamW. max_exp_avg_sqs may be {} without amsgrad." },
  { "_fused_adamax_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_infs, Tensor(d!)[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay=0, bool maximize=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_adamax_", cuda = "lt_cuda__fused_adamax_" }, variants = "function", doc = "One Adamax step over a parameter group." },
  { "_fused_nadam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, Tensor(d!)[] mu_products, Tensor(e!)[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay=0, float momentum_decay=0.004, bool maximize=False, bool decoupled=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_nadam_", cuda = "lt_cuda__fused_nadam_" }, variants = "function", doc = "One NAdam step over a parameter group." },
  { "_fused_radam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, Tensor(d!)[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay=0, bool maximize=False, bool decoupled=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_radam_", cuda = "lt_cuda__fused_radam_" }, variants = "function", doc = "One RAdam step over a parameter group." },
  { "_fused_rmsprop_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] square_avgs, Tensor(c!)[] momentum_buffers, Tensor(d!)[] grad_avgs, *, float lr, float alpha, float eps, float weight_decay=0, float momentum=0, bool centered=False, bool maximize=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_rmsprop_", cuda = "lt_cuda__fused_rmsprop_" }, variants = "function",
    doc = "One RMSprop step over a parameter group (momentum_buffers {} when momentum is 0, grad_avgs {} unless centered)." },
  { "_fused_adagrad_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] state_sums, Tensor(c!)[] state_steps, *, float lr, float lr_decay=0, float weight_decay=0, float eps=1e-10, bool maximize=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_adagrad_", cuda = "lt_cuda__fused_adagrad_" }, variants = "function", doc = "One Adagrad step over a parameter group." },
  { "_fused_adadelta_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] square_avgs, Tensor(c!)[] acc_deltas, *, float lr, float rho, float eps, float weight_decay=0, bool maximize=False) -> ()",
    nondiff = true, kernels = { cpu = "lt_cpu__fused_adadelta_", cuda = "lt_cuda__fused_adadelta_" }, variants = "function", doc = "One Adadelta step over a parameter group." },
}
