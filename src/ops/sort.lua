-- Sorting and selection. Indices are 1-based.
return {
  { "sort(Tensor self, Dim dim=-1, bool descending=False, *, bool stable=False) -> (Tensor values, Tensor indices)",
    doc = "Sort along dim; always stable; NaN sorts as the largest value (last ascending, first descending)." },
  { "argsort(Tensor self, Dim dim=-1, bool descending=False, *, bool stable=False) -> Tensor", nondiff = true,
    doc = "1-based indices that sort self along dim (stable)." },
  { "topk(Tensor self, int k, Dim dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
    doc = "The k largest (or smallest) elements along dim and their 1-based indices, in sorted order." },
  { "kthvalue(Tensor self, int k, Dim dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    doc = "The k-th smallest element (k 1-based) along dim and its 1-based index." },
  { "median_dim(Tensor self, Dim dim, bool keepdim=False) -> (Tensor values, Tensor indices)", lua = "median",
    doc = "Lower median along dim and its 1-based index; NaN if the slice holds a NaN." },
  { "median(Tensor self) -> Tensor", doc = "Lower median of all elements; NaN if any is NaN." },
  { "nanmedian_dim(Tensor self, Dim dim, bool keepdim=False) -> (Tensor values, Tensor indices)", lua = "nanmedian",
    doc = "Lower median along dim ignoring NaN." },
  { "nanmedian(Tensor self) -> Tensor", doc = "Lower median of all non-NaN elements." },
  { "mode(Tensor self, Dim dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    doc = "Most frequent value along dim (the smallest on ties) and the 1-based index of its last occurrence." },
  { "unique(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False, Dim? dim=None) -> (Tensor output, Tensor inverse_indices, Tensor counts)",
    nondiff = true,
    doc = "Sorted unique values (or slices along dim). Always returns three tensors: the values, the 1-based "
      .. "index into them of each input element (slice), and the counts; the flags are accepted for PyTorch compatibility." },
}
