// tensor_ops.hpp: moving numbers around -- stack, cat, the heads' split and merge, row
// slices, tril (introduced in ch04, used by the model code and the chapters).
//
// Each is one PyTorch call on contiguous tensors. They copy, never add or multiply, so
// they cannot change a bit: PyTorch parity is not at stake here, readability is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exact/tensor.hpp"

namespace ts {

// torch.cat(parts, dim): equal shapes except along dim -> the sum along dim.
// dim may be negative (-1 = last). parts: at least one.
Tensor cat(const std::vector<Tensor>& parts, int dim);
Tensor cat(const std::vector<const Tensor*>& parts, int dim);

// torch.stack(parts, dim): H equal shapes (...) -> a new axis of size H at dim.
// e.g. H x (B,T,S), dim 1 -> (B,H,T,S)
Tensor stack(const std::vector<Tensor>& parts, int dim);

// x.view(B, -1, H, D).transpose(1, 2), made contiguous: cut C into H heads of D = C / H.
// (B,T,C) -> (B,H,T,D)
Tensor split_heads(const Tensor& x, int64_t H);

// x.transpose(1, 2).contiguous().view(B, -1, H * D): the heads side by side again.
// (B,H,T,D) -> (B,T,H*D)
Tensor merge_heads(const Tensor& x);

// t[r0:r0+n] along the first dim: rows of a weight, entries of a bias.
// (R,...) -> (n,...)
Tensor slice_rows(const Tensor& t, size_t r0, size_t n);

// x[:, t] (keepdim false) or x[:, t:t+1] (keepdim true): one position of a sequence.
// (B,T,C) -> (B,C) or (B,1,C)
Tensor position(const Tensor& x, size_t t, bool keepdim = false);

// torch.tril(torch.ones(n, n)): 1 on and below the diagonal (query t may see keys 0..t).
// -> (n,n)
Tensor tril_ones(size_t n);

}  // namespace ts
