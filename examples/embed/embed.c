/*
** embed.c — lutorch inside a C program.
**
**   1. A Lua state with torch and nn runs model.lua; a C array goes to the
**      model's predict() without a copy, and the result is read in place.
**   2. The same tensors and autograd straight from C, no Lua at all.
**
** Build: make (pkg-config finds lutorch.pc; in the source tree: make PKG_CONFIG_PATH=../../build);
** run: ./embed [model.lua]. See README.md here.
*/
#include <stdio.h>
#include <stdlib.h>
#include <lutorch.h>

/* called when the last reference to the wrapped buffer dies (C's or Lua's) */
static void on_release(void *data, void *ctx) {
  (void)data;
  *(int *)ctx = 1;
  printf("input buffer released\n");
}

/* print a float32 matrix through its strides: results are read in place */
static void print_matrix(const char *name, const lt_tensor *t) {
  const float *p = lt_tensor_data(t);
  printf("%s: %s [%lld, %lld]\n", name, lt_dtype_name(lt_tensor_dtype(t)),
         (long long)t->sizes[0], (long long)t->sizes[1]);
  for (int64_t i = 0; i < t->sizes[0]; i++) {
    for (int64_t j = 0; j < t->sizes[1]; j++)
      printf(" %.6f", p[i * t->strides[0] + j * t->strides[1]]);
    printf("\n");
  }
}

static int run_model(const char *script) {
  lua_State *L = lutorch_open();
  if (!L) { fprintf(stderr, "lutorch_open: %s\n", lutorch_last_error()); return 1; }
  if (lutorch_dofile(L, script) < 0) {
    fprintf(stderr, "error: %s\n", lutorch_last_error());
    lutorch_close(L);
    return 1;
  }

  /* the application's own data: 2 rows of 4 features */
  static float input[2][4] = { {1.0f, 2.0f, 3.0f, 4.0f}, {0.5f, -1.0f, 0.0f, 2.0f} };
  int released = 0;
  int64_t sizes[2] = {2, 4};
  lt_tensor *x = lt_tensor_from_blob(input, LT_FLOAT32, 2, sizes, NULL, on_release, &released);
  if (!x) { fprintf(stderr, "from_blob: %s\n", lutorch_last_error()); lutorch_close(L); return 1; }

  lt_tensor *y = NULL;
  if (lutorch_call(L, "predict", 1, &x, 1, &y) < 0) {
    fprintf(stderr, "predict: %s\n", lutorch_last_error());
    lt_tensor_release(x);
    lutorch_close(L);
    return 1;
  }
  print_matrix("probabilities", y);

  /* the same through a global and an expression, and the model's own weights */
  lutorch_setglobal(L, "x", x);
  lt_tensor *s = lutorch_eval(L, "model(x):sum()");
  lt_tensor *w = lutorch_getglobal(L, "model.1.weight");
  if (!s || !w) fprintf(stderr, "eval: %s\n", lutorch_last_error());
  else printf("sum of logits: %.6f; first layer weight: [%lld, %lld]\n",
              lt_tensor_get_double(s, 0), (long long)w->sizes[0], (long long)w->sizes[1]);
  lt_tensor_release(s);
  lt_tensor_release(w);

  /* errors come back as messages */
  if (lutorch_dostring(L, "local t = torch.ones(2, 3); return t:matmul(t)") < 0)
    printf("caught: %s\n", lutorch_last_error());
  lt_tensor *r = NULL;
  if (lutorch_call(L, "no_such_function", 1, &x, 1, &r) < 0)
    printf("caught: %s\n", lutorch_last_error());

  lt_tensor_release(y);
  lt_tensor_release(x);          /* Lua still holds the global x ... */
  printf("released after C's release: %s\n", released ? "yes" : "no");
  lutorch_close(L);              /* ... until the state closes */
  printf("released after close: %s\n", released ? "yes" : "no");
  return 0;
}

/* y = sum(tanh(x @ w + b)); dy/dw and dy/db by autograd, all from C */
static int run_core(void) {
  int rc = 1;
  float xd[2][3] = { {1, 2, 3}, {-1, 0.5f, 2} };
  int64_t xs[2] = {2, 3}, ws[2] = {3, 2}, bs[1] = {2};
  lt_tensor *x = lt_tensor_from_blob(xd, LT_FLOAT32, 2, xs, NULL, NULL, NULL);
  lt_tensor *w = lt_linspace(lt_scalar_float(-0.5), lt_scalar_float(0.5), 6, LT_FLOAT32, lt_device_cpu());
  lt_tensor *w2 = w ? lt_reshape(w, lt_intlist_make(ws, 2)) : NULL;
  lt_tensor *b = lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 1, bs);
  lt_tensor *xw = NULL, *z = NULL, *h = NULL, *loss = NULL;
  if (!x || !w2 || !b) goto done;
  if (lt_requires_grad_(w2, true) < 0 || lt_requires_grad_(b, true) < 0) goto done;
  if (!(xw = lt_matmul(x, w2))) goto done;
  if (!(z = lt_add(xw, b, lt_scalar_int(1)))) goto done;
  if (!(h = lt_tanh(z))) goto done;
  if (!(loss = lt_sum(h, lt_intlist_none(), false, LT_DTYPE_NONE))) goto done;
  if (lt_backward(loss, NULL, false, false) < 0) goto done;
  printf("loss: %.6f\n", lt_tensor_get_double(loss, 0));
  print_matrix("dloss/dw", w2->grad);
  printf("dloss/db: %.6f %.6f\n", lt_tensor_get_double(b->grad, 0), lt_tensor_get_double(b->grad, 1));
  rc = 0;
done:
  if (rc) fprintf(stderr, "core: %s\n", lutorch_last_error());
  lt_tensor_release(loss); lt_tensor_release(h); lt_tensor_release(z); lt_tensor_release(xw);
  lt_tensor_release(b); lt_tensor_release(w2); lt_tensor_release(w); lt_tensor_release(x);
  return rc;
}

int main(int argc, char **argv) {
  printf("lutorch %s\n", lutorch_version());
  if (run_model(argc > 1 ? argv[1] : "model.lua")) return 1;
  return run_core();
}
