/*
** test_overlap.c — the overlap predicates of core/overlap.h on hand-made
** geometries (lt_tensor_alias stands in for as_strided, which Lua does not
** offer), and the errors of the entry points' checks.
*/
#include <string.h>
#include "ctest.h"
#include "dispatch/dispatch.h"
#include "core/overlap.h"

static lt_tensor *base;   /* 64 float32 elements, 0..63 */

/* a view of base: n dims, sizes and strides, starting at element off */
static lt_tensor *view(int64_t off, int n, const int64_t *sizes, const int64_t *strides) {
  return lt_tensor_alias(base, off, n, sizes, strides);
}

static lt_overlap internal(int n, const int64_t *sizes, const int64_t *strides) {
  lt_tensor *v = view(0, n, sizes, strides);
  lt_overlap r = lt_internal_overlap(v);
  lt_tensor_release(v);
  return r;
}

TEST(internal_overlap_decided) {
  /* contiguous, transposed, strided, size 1 with stride 0, one element, empty */
  CHECK_EQ_INT(internal(2, (int64_t[]){3, 4}, (int64_t[]){4, 1}), LT_OVERLAP_NO);
  CHECK_EQ_INT(internal(2, (int64_t[]){4, 3}, (int64_t[]){1, 4}), LT_OVERLAP_NO);
  CHECK_EQ_INT(internal(2, (int64_t[]){3, 2}, (int64_t[]){8, 2}), LT_OVERLAP_NO);
  CHECK_EQ_INT(internal(2, (int64_t[]){1, 3}, (int64_t[]){0, 1}), LT_OVERLAP_NO);
  CHECK_EQ_INT(internal(1, (int64_t[]){1}, (int64_t[]){0}), LT_OVERLAP_NO);
  CHECK_EQ_INT(internal(2, (int64_t[]){0, 3}, (int64_t[]){0, 0}), LT_OVERLAP_NO);
  /* holes but no repeats: offsets 0, 2, 3, 5 */
  CHECK_EQ_INT(internal(2, (int64_t[]){2, 2}, (int64_t[]){3, 2}), LT_OVERLAP_NO);
  /* expanded: stride 0 on a dim of size > 1, in any position */
  CHECK_EQ_INT(internal(2, (int64_t[]){3, 3}, (int64_t[]){0, 1}), LT_OVERLAP_YES);
  CHECK_EQ_INT(internal(2, (int64_t[]){3, 3}, (int64_t[]){1, 0}), LT_OVERLAP_YES);
  CHECK_EQ_INT(internal(1, (int64_t[]){5}, (int64_t[]){0}), LT_OVERLAP_YES);
  /* strides that provably collide: [1][0] and [0][1] (equal strides), and
  ** [2][0] and [0][1] (stride 2 = 2 * stride 1 with 2 < 3): unfold's windows */
  CHECK_EQ_INT(internal(2, (int64_t[]){3, 3}, (int64_t[]){1, 1}), LT_OVERLAP_YES);
  CHECK_EQ_INT(internal(2, (int64_t[]){2, 3}, (int64_t[]){2, 1}), LT_OVERLAP_YES);
  CHECK_EQ_INT(internal(2, (int64_t[]){3, 2}, (int64_t[]){1, 2}), LT_OVERLAP_YES);
}

TEST(internal_overlap_too_hard) {
  /* strides 2 and 3: [3][0] and [0][2] are both 6, but no cheap rule sees it
  ** (PyTorch calls this too hard as well, and lets the write through) */
  CHECK_EQ_INT(internal(2, (int64_t[]){4, 3}, (int64_t[]){2, 3}), LT_OVERLAP_TOO_HARD);
  lt_tensor *v = view(0, 2, (int64_t[]){4, 3}, (int64_t[]){2, 3});
  CHECK_EQ_INT(lt_check_overlap_dst("add_", NULL, -1, v), 0);
  lt_tensor_release(v);
}

static lt_alias alias(int64_t oa, int na, const int64_t *sa, const int64_t *sta,
                      int64_t ob, int nb, const int64_t *sb, const int64_t *stb) {
  lt_tensor *a = view(oa, na, sa, sta), *b = view(ob, nb, sb, stb);
  lt_alias r = lt_alias_status(a, b);
  lt_tensor_release(a);
  lt_tensor_release(b);
  return r;
}

TEST(alias_status) {
  CHECK_EQ_INT(lt_alias_status(base, base), LT_ALIAS_FULL);
  /* the same view through another header, also with extra dims of size 1 */
  CHECK_EQ_INT(alias(0, 1, (int64_t[]){8}, (int64_t[]){1}, 0, 2, (int64_t[]){1, 8}, (int64_t[]){8, 1}), LT_ALIAS_FULL);
  CHECK_EQ_INT(alias(4, 2, (int64_t[]){2, 3}, (int64_t[]){8, 2}, 4, 2, (int64_t[]){2, 3}, (int64_t[]){8, 2}), LT_ALIAS_FULL);
  /* x[2:4] and x[1:3]; a 3x3 block and its transpose */
  CHECK_EQ_INT(alias(2, 1, (int64_t[]){2}, (int64_t[]){1}, 1, 1, (int64_t[]){2}, (int64_t[]){1}), LT_ALIAS_PARTIAL);
  CHECK_EQ_INT(alias(0, 2, (int64_t[]){3, 3}, (int64_t[]){3, 1}, 0, 2, (int64_t[]){3, 3}, (int64_t[]){1, 3}), LT_ALIAS_PARTIAL);
  /* one element of x expanded over x's length: broadcast dims add no location */
  CHECK_EQ_INT(alias(0, 1, (int64_t[]){3}, (int64_t[]){1}, 0, 1, (int64_t[]){3}, (int64_t[]){0}), LT_ALIAS_PARTIAL);
  /* disjoint ranges of one storage; an empty view */
  CHECK_EQ_INT(alias(0, 1, (int64_t[]){3}, (int64_t[]){1}, 3, 1, (int64_t[]){3}, (int64_t[]){1}), LT_ALIAS_NONE);
  CHECK_EQ_INT(alias(0, 1, (int64_t[]){3}, (int64_t[]){1}, 1, 1, (int64_t[]){0}, (int64_t[]){1}), LT_ALIAS_NONE);
  /* interleaved: the ranges meet but neither is dense (they happen not to share) */
  CHECK_EQ_INT(alias(0, 1, (int64_t[]){4}, (int64_t[]){2}, 1, 1, (int64_t[]){4}, (int64_t[]){2}), LT_ALIAS_TOO_HARD);
  /* separate storages */
  lt_tensor *other = lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 1, (int64_t[]){64});
  CHECK_EQ_INT(lt_alias_status(base, other), LT_ALIAS_NONE);
  lt_tensor_release(other);
}

TEST(alias_through_two_storages) {
  /* from_blob twice over one buffer: two storages, one memory */
  float buf[8] = {0};
  lt_tensor *a = lt_tensor_from_blob(buf, LT_FLOAT32, 1, (int64_t[]){4}, NULL, NULL, NULL);
  lt_tensor *b = lt_tensor_from_blob(buf + 2, LT_FLOAT32, 1, (int64_t[]){4}, NULL, NULL, NULL);
  CHECK(a && b && a->storage != b->storage);
  CHECK_EQ_INT(lt_alias_status(a, b), LT_ALIAS_PARTIAL);
  CHECK_EQ_INT(lt_check_overlap_src("copy_", "src", -1, b, a, false), -1);
  lt_tensor_release(a);
  lt_tensor_release(b);
}

TEST(check_messages) {
  lt_tensor *e = view(0, 2, (int64_t[]){3, 3}, (int64_t[]){0, 1});
  CHECK_EQ_INT(lt_check_overlap_dst("add_", NULL, -1, e), -1);
  CHECK(strcmp(lt_error_message(), "add_: unsupported operation: more than one element of the written-to tensor "
                                   "refers to a single memory location; clone() it first") == 0);
  CHECK_EQ_INT(lt_check_overlap_dst("mul", "out", -1, e), -1);
  CHECK(strncmp(lt_error_message(), "mul: argument 'out': unsupported operation", 42) == 0);
  CHECK_EQ_INT(lt_check_overlap_dst("_foreach_add_", "self", 1, e), -1);
  CHECK(strncmp(lt_error_message(), "_foreach_add_: argument 'self' (element 2): unsupported", 55) == 0);
  lt_tensor_release(e);
  /* partial overlap is refused; the same view only where the op asks for disjoint inputs */
  lt_tensor *a = view(2, 1, (int64_t[]){2}, (int64_t[]){1}), *b = view(1, 1, (int64_t[]){2}, (int64_t[]){1});
  CHECK_EQ_INT(lt_check_overlap_src("copy_", "src", -1, b, a, false), -1);
  CHECK(strstr(lt_error_message(), "copy_: argument 'src': unsupported operation: some elements of the input tensor "
                                   "and the written-to tensor refer to a single memory location") != NULL);
  CHECK_EQ_INT(lt_check_overlap_src("add_", "other", -1, a, a, false), 0);
  CHECK_EQ_INT(lt_check_overlap_src("index_add_", "source", -1, a, a, true), -1);
  CHECK(strstr(lt_error_message(), "index_add_: argument 'source': unsupported operation: the input tensor is the "
                                   "written-to tensor") != NULL);
  lt_tensor_release(a);
  lt_tensor_release(b);
}

int main(void) {
  lt_init();
  base = lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 1, (int64_t[]){64});
  RUN(internal_overlap_decided);
  RUN(internal_overlap_too_hard);
  RUN(alias_status);
  RUN(alias_through_two_storages);
  RUN(check_messages);
  lt_tensor_release(base);
  return ctest_summary();
}
