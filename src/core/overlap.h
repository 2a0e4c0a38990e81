/*
** overlap.h — whether a tensor's elements share memory with each other, or
** with another tensor's elements.
**
** Writing through a view in which two elements are one memory location (an
** expanded tensor: stride 0 on a dim of size > 1) lands several writes on one
** place, and reading an input that partly overlaps the tensor being written
** reads values the op has already overwritten: either way the answer depends
** on the order a kernel visits elements. The generated entry points refuse
** both before any kernel runs (lt_check_overlap_dst, lt_check_overlap_src,
** called from the code tools/gen.lua writes for every op that writes into a
** tensor it was given).
**
** A predicate that cannot decide cheaply says TOO_HARD, and the checks let
** such calls through, as PyTorch does: deciding overlap for arbitrary strides
** is a knapsack problem, and refusing what might be fine would reject valid
** programs.
*/
#ifndef LT_OVERLAP_H
#define LT_OVERLAP_H

#include "core/tensor.h"

typedef enum lt_overlap {
  LT_OVERLAP_NO,          /* every element has a memory location of its own */
  LT_OVERLAP_YES,         /* two elements provably share one */
  LT_OVERLAP_TOO_HARD,    /* not decided (treated as no) */
} lt_overlap;

/* Internal overlap: YES when a dim of size > 1 has stride 0, or when two
** strides provably reach one location (stride b = k * stride a with k less
** than a's size: as_strided({3, 3}, {1, 1})); NO for contiguous, permuted,
** dense and other strides that provably never collide (x[{{}, {1, 3, 2}}]). */
lt_overlap lt_internal_overlap(const lt_tensor *t);

typedef enum lt_alias {
  LT_ALIAS_NONE,          /* no memory location in common */
  LT_ALIAS_FULL,          /* the same view: same locations, element by element */
  LT_ALIAS_PARTIAL,       /* some locations in common, not element by element */
  LT_ALIAS_TOO_HARD,      /* not decided (treated as none) */
} lt_alias;

/* How the memory of a and b overlaps. Broadcast dims (stride 0) and dims of
** size 1 are ignored, since they add no location: x and x:view(1, n) are the
** same view, x and x[1]:expand(n) overlap partially. PARTIAL is decided when
** both, so reduced, are dense (cover a block of memory without holes); other
** layouts whose address ranges meet are TOO_HARD. */
lt_alias lt_alias_status(const lt_tensor *a, const lt_tensor *b);

/* The checks of the entry points. dst is about to be written by op.
**
** lt_check_overlap_dst: -1 and "op: unsupported operation: more than one
** element of the written-to tensor refers to a single memory location; clone()
** it first" when dst has internal overlap. arg names dst when it is not self
** ("out"); elem >= 0 is its 0-based position in a list argument.
**
** lt_check_overlap_src: -1 when src, an input of op named arg, overlaps dst
** partially or, with `disjoint` (ops that read an input after writing some of
** their output: index_select, scatter_, cat, ...), fully as well. 0 otherwise. */
int lt_check_overlap_dst_(const char *op, const char *arg, int elem, const lt_tensor *dst);
int lt_check_overlap_src_(const char *op, const char *arg, int elem, const lt_tensor *src,
                          const lt_tensor *dst, bool disjoint);

/* Every in-place call makes these checks, so the common answers are inline:
** a contiguous destination, and an input in another allocation (separate
** allocations never share memory; only wrapped external memory can alias). */
static inline int lt_check_overlap_dst(const char *op, const char *arg, int elem, const lt_tensor *dst) {
  if (dst->numel <= 1 || lt_tensor_is_contiguous(dst)) return 0;
  return lt_check_overlap_dst_(op, arg, elem, dst);
}
static inline int lt_check_overlap_src(const char *op, const char *arg, int elem, const lt_tensor *src,
                                       const lt_tensor *dst, bool disjoint) {
  if (src->storage != dst->storage && src->storage->kind != LT_STORAGE_EXTERNAL &&
      dst->storage->kind != LT_STORAGE_EXTERNAL)
    return 0;
  return lt_check_overlap_src_(op, arg, elem, src, dst, disjoint);
}

#endif
