/*
** overlap.c — memory overlap of a tensor with itself and with another one
** (overlap.h says why the entry points ask). Everything here reads geometry
** only, never data, so it serves every backend.
*/
#include <stdio.h>
#include <stdint.h>
#include "core/overlap.h"

/* The dims of a tensor that address more than one location: size > 1, and,
** with drop_broadcast, stride != 0 (a broadcast dim revisits the same
** locations). Strides are made positive; lo and hi are the lowest and highest
** element offsets reached, counted from the storage's start. */
typedef struct layout {
  int n;
  int64_t size[LT_MAX_DIMS], stride[LT_MAX_DIMS];
  int64_t lo, hi;
} layout;

static void get_layout(const lt_tensor *t, bool drop_broadcast, layout *g) {
  g->n = 0;
  g->lo = g->hi = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    int64_t sz = t->sizes[d], st = t->strides[d];
    if (sz == 1 || (st == 0 && drop_broadcast)) continue;
    int64_t span = (sz - 1) * st;
    if (st < 0) { g->lo += span; st = -st; }
    else g->hi += span;
    g->size[g->n] = sz;
    g->stride[g->n] = st;
    g->n++;
  }
}

/* smallest stride first (at most LT_MAX_DIMS entries: insertion sort) */
static void sort_by_stride(layout *g) {
  for (int i = 1; i < g->n; i++) {
    int64_t sz = g->size[i], st = g->stride[i];
    int j = i;
    for (; j > 0 && g->stride[j - 1] > st; j--) {
      g->size[j] = g->size[j - 1];
      g->stride[j] = g->stride[j - 1];
    }
    g->size[j] = sz;
    g->stride[j] = st;
  }
}

/* a sorted layout that covers one block of memory without holes or repeats */
static bool is_dense(const layout *g) {
  int64_t expect = 1;
  for (int i = 0; i < g->n; i++) {
    if (g->stride[i] != expect) return false;
    expect *= g->size[i];
  }
  return true;
}

lt_overlap lt_internal_overlap(const lt_tensor *t) {
  if (t->numel <= 1 || lt_tensor_is_contiguous(t)) return LT_OVERLAP_NO;
  layout g;
  get_layout(t, false, &g);
  sort_by_stride(&g);
  if (g.n > 0 && g.stride[0] == 0) return LT_OVERLAP_YES;   /* a broadcast dim */
  /* When each stride exceeds the farthest the smaller dims reach together,
  ** two different indices differ at some highest dim, and that dim's step
  ** outweighs whatever the lower dims add: the addresses differ. */
  int64_t reach = 0;
  int i;
  for (i = 0; i < g.n && g.stride[i] > reach; i++) reach += (g.size[i] - 1) * g.stride[i];
  if (i == g.n) return LT_OVERLAP_NO;
  /* stride b = k * stride a with k < size a: index k along a and index 1
  ** along b are one address (equal strides are k = 1) */
  for (int a = 0; a < g.n; a++)
    for (int b = a + 1; b < g.n; b++)
      if (g.stride[b] % g.stride[a] == 0 && g.stride[b] / g.stride[a] < g.size[a]) return LT_OVERLAP_YES;
  return LT_OVERLAP_TOO_HARD;
}

/* element 0 at one address and the same sizes and strides dim by dim (dims of
** size 1 aside, so x and x:view(1, n) match): each element of a is the same
** location as the element of b at the same index */
static bool same_view(const lt_tensor *a, const lt_tensor *b) {
  if (lt_tensor_data(a) != lt_tensor_data(b) || lt_dtype_size((lt_dtype)a->dtype) != lt_dtype_size((lt_dtype)b->dtype))
    return false;
  int i = 0, j = 0;
  for (;;) {
    while (i < a->ndim && a->sizes[i] == 1) i++;
    while (j < b->ndim && b->sizes[j] == 1) j++;
    if (i == a->ndim || j == b->ndim) return i == a->ndim && j == b->ndim;
    if (a->sizes[i] != b->sizes[j] || a->strides[i] != b->strides[j]) return false;
    i++, j++;
  }
}

lt_alias lt_alias_status(const lt_tensor *a, const lt_tensor *b) {
  if (a->numel == 0 || b->numel == 0) return LT_ALIAS_NONE;
  if (a == b) return LT_ALIAS_FULL;
  if (!lt_device_eq(lt_tensor_device(a), lt_tensor_device(b))) return LT_ALIAS_NONE;
  /* storages without bytes (the meta device's) share nothing unless they are one storage */
  if (a->storage != b->storage && (!a->storage->data || !b->storage->data)) return LT_ALIAS_NONE;
  layout ga, gb;
  get_layout(a, true, &ga);
  get_layout(b, true, &gb);
  /* byte ranges, so views of one memory through two storages (from_blob) count */
  size_t ea = lt_dtype_size((lt_dtype)a->dtype), eb = lt_dtype_size((lt_dtype)b->dtype);
  uintptr_t a0 = (uintptr_t)a->storage->data + (uintptr_t)ga.lo * ea, a1 = (uintptr_t)a->storage->data + (uintptr_t)(ga.hi + 1) * ea;
  uintptr_t b0 = (uintptr_t)b->storage->data + (uintptr_t)gb.lo * eb, b1 = (uintptr_t)b->storage->data + (uintptr_t)(gb.hi + 1) * eb;
  if (a1 <= b0 || b1 <= a0) return LT_ALIAS_NONE;
  if (same_view(a, b)) return LT_ALIAS_FULL;
  sort_by_stride(&ga);
  sort_by_stride(&gb);
  /* two blocks without holes whose ranges meet share locations */
  if (is_dense(&ga) && is_dense(&gb)) return LT_ALIAS_PARTIAL;
  return LT_ALIAS_TOO_HARD;
}

/* "argument 'out': ", "argument 'params' (element 2): " or "" (self) */
static const char *who(char *buf, size_t n, const char *arg, int elem) {
  if (!arg) buf[0] = '\0';
  else if (elem >= 0) snprintf(buf, n, "argument '%s' (element %d): ", arg, elem + 1);
  else snprintf(buf, n, "argument '%s': ", arg);
  return buf;
}

int lt_check_overlap_dst_(const char *op, const char *arg, int elem, const lt_tensor *dst) {
  if (lt_internal_overlap(dst) != LT_OVERLAP_YES) return 0;
  char w[96];
  return lt_error("%s: %sunsupported operation: more than one element of the written-to tensor refers to a "
                  "single memory location; clone() it first", op, who(w, sizeof w, arg, elem));
}

int lt_check_overlap_src_(const char *op, const char *arg, int elem, const lt_tensor *src,
                          const lt_tensor *dst, bool disjoint) {
  lt_alias s = lt_alias_status(dst, src);
  char w[96];
  if (s == LT_ALIAS_PARTIAL)
    return lt_error("%s: %sunsupported operation: some elements of the input tensor and the written-to tensor "
                    "refer to a single memory location; clone() it first", op, who(w, sizeof w, arg, elem));
  if (s == LT_ALIAS_FULL && disjoint)
    return lt_error("%s: %sunsupported operation: the input tensor is the written-to tensor (%s reads its inputs "
                    "while it writes); clone() it first", op, who(w, sizeof w, arg, elem), op);
  return 0;
}
