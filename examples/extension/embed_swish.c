/*
** embed_swish.c — a C program that embeds lutorch, loads the swish extension with
** require (as Lua code would) and calls its op both from Lua and from C.
**   ./embed_swish [DIR]     DIR: where swish_ext.so is (default: the current folder)
*/
#include <stdio.h>
#include <lutorch/extension.h>

int main(int argc, char **argv) {
  lua_State *L = lutorch_open();
  if (!L) { fprintf(stderr, "lutorch_open: %s\n", lutorch_last_error()); return 1; }
  char code[1024];
  snprintf(code, sizeof code, "package.cpath = '%s/?.so;' .. package.cpath; require 'swish_ext'", argc > 1 ? argv[1] : ".");
  if (lutorch_dostring(L, code) < 0) { fprintf(stderr, "%s\n", lutorch_last_error()); lutorch_close(L); return 1; }
  /* from Lua */
  lt_tensor *x = lutorch_eval(L, "return torch.linspace(-2, 2, 5, {dtype = torch.float64})");
  lutorch_setglobal(L, "x", x);
  lt_tensor *y_lua = lutorch_eval(L, "return torch.ops.swish_ext.swish(x)");
  /* from C, through the same dispatcher */
  lt_ivalue args[1] = { lt_iv_tensor(x) }, rets[1];
  if (!y_lua || lt_ext_call("swish_ext::swish", args, 1, rets) < 0) {
    fprintf(stderr, "%s\n", lutorch_last_error());
    return 1;
  }
  lt_tensor *y_c = rets[0].u.t;
  const double *a = lt_tensor_data(y_lua), *b = lt_tensor_data(y_c);
  int same = 1;
  for (int i = 0; i < 5; i++) { printf("%.6f %.6f\n", a[i], b[i]); same &= a[i] == b[i]; }
  lt_tensor_release(y_c);
  lt_tensor_release(y_lua);
  lt_tensor_release(x);
  lutorch_close(L);
  printf(same ? "embed: ok\n" : "embed: MISMATCH\n");
  return same ? 0 : 1;
}
