/*
** test_profiler_hooks.c — the hooks torch.profiler (src/vm/lprofiler.c) is fed
** by, from C alone: the dispatcher's Profile key (in the keyset only while a
** hook is set; composite ops seen from their entry points, with their tensor
** arguments), the storage allocator's trace hook (inline and allocated
** storages, +bytes when made and -bytes when freed), and the autograd
** engine's node hook with the node seq counter that links an op to the nodes
** it made.
*/
#include <string.h>
#include "ctest.h"
#include "lt_ops.h"
#include "autograd/autograd.h"

static int enters, exits, last_n, saw_linear;
static void op_hook(void *ud, int op, int phase, const lt_tensor *const *in, int n) {
  (void)ud; (void)in;
  if (phase == 0) {
    enters++;
    last_n = n;
    if (op == LT_OP_linear) saw_linear = n;
  } else {
    exits++;
  }
}

TEST(profile_key_only_while_hooked) {
  CHECK(!(lt_tls_included & LT_KEYBIT(LT_KEY_PROFILE)));
  lt_dispatch_set_hook(op_hook, NULL);
  CHECK(lt_tls_included & LT_KEYBIT(LT_KEY_PROFILE));
  int64_t s2[2] = {2, 3}, s33[2] = {3, 3}, s1[1] = {3};
  lt_tensor *x = lt_ones(lt_intlist_make(s2, 2), LT_FLOAT32, lt_device_cpu());
  lt_tensor *w = lt_ones(lt_intlist_make(s33, 2), LT_FLOAT32, lt_device_cpu());
  lt_tensor *b = lt_ones(lt_intlist_make(s1, 1), LT_FLOAT32, lt_device_cpu());
  lt_tensor *y = lt_linear(x, w, b);      /* composite: seen, with its three tensors */
  CHECK(y != NULL);
  CHECK_EQ_INT(saw_linear, 3);
  CHECK(enters > 1 && enters == exits);   /* the ops linear runs are seen too, balanced */
  lt_dispatch_set_hook(NULL, NULL);
  CHECK(!(lt_tls_included & LT_KEYBIT(LT_KEY_PROFILE)));
  int before = enters;
  lt_tensor *z = lt_linear(x, w, b);
  CHECK_EQ_INT(enters, before);           /* off: nothing calls the hook */
  lt_tensor_release(x); lt_tensor_release(w); lt_tensor_release(b);
  lt_tensor_release(y); lt_tensor_release(z);
}

static int64_t live, events;
static void storage_hook(const lt_storage *s, int64_t delta) {
  (void)s;
  live += delta;
  events++;
}

TEST(storage_trace_hook) {
  lt_storage_trace_hook = storage_hook;
  int64_t small[1] = {4}, big[1] = {4096}, square[2] = {64, 64};
  lt_tensor *a = lt_ones(lt_intlist_make(small, 1), LT_FLOAT32, lt_device_cpu());   /* inline: 16 bytes */
  CHECK_EQ_INT(live, 16);
  lt_tensor *b = lt_ones(lt_intlist_make(big, 1), LT_FLOAT64, lt_device_cpu());     /* from the allocator */
  CHECK_EQ_INT(live, 16 + 4096 * 8);
  lt_tensor *v = lt_view(b, lt_intlist_make(square, 2));           /* a view: no storage */
  CHECK_EQ_INT(events, 2);
  lt_tensor_release(v);
  lt_tensor_release(b);
  CHECK_EQ_INT(live, 16);
  lt_tensor_release(a);
  CHECK_EQ_INT(live, 0);
  lt_storage_trace_hook = NULL;
  lt_tensor *c = lt_ones(lt_intlist_make(small, 1), LT_FLOAT32, lt_device_cpu());
  CHECK_EQ_INT(events, 4);                 /* off: not seen */
  lt_tensor_release(c);
}

static int node_enters, node_exits;
static uint64_t last_seq;
static void node_hook(const lt_node *n, int phase) {
  if (phase == 0) { node_enters++; last_seq = n->seq; } else node_exits++;
}

TEST(node_hook_and_seq) {
  int64_t s[1] = {3};
  lt_tensor *x = lt_ones(lt_intlist_make(s, 1), LT_FLOAT64, lt_device_cpu());
  lt_requires_grad_(x, true);
  uint64_t seq0 = lt_node_seq_peek();
  lt_tensor *y = lt_mul(x, x);
  uint64_t seq1 = lt_node_seq_peek();
  CHECK(seq1 > seq0);                      /* mul made its node (and x's AccumulateGrad) */
  CHECK(y->grad_fn && y->grad_fn->seq >= seq0 && y->grad_fn->seq < seq1);
  lt_tensor *l = lt_sum(y, lt_intlist_none(), false, LT_DTYPE_NONE);
  lt_autograd_node_hook = node_hook;
  CHECK_EQ_INT(lt_backward(l, NULL, false, false), 0);
  lt_autograd_node_hook = NULL;
  CHECK_EQ_INT(node_enters, 3);            /* SumBackward0, MulBackward0, AccumulateGrad */
  CHECK_EQ_INT(node_exits, 3);
  lt_tensor_release(l); lt_tensor_release(y); lt_tensor_release(x);
}

int main(void) {
  lt_init();
  RUN(profile_key_only_while_hooked);
  RUN(storage_trace_hook);
  RUN(node_hook_and_seq);
  return ctest_summary();
}
