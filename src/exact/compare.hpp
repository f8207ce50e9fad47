// compare.hpp: how far apart two computations of the same thing are (introduced in ch04,
// where the per-head and fused multi-head attention are shown equal; used again in ch05,
// where a feed-forward without activation is shown equal to one merged Linear).
#pragma once

#include "exact/tensor.hpp"

namespace ts {

// (a - b).abs().max(): the largest elementwise gap, as PyTorch's 0-d tensor.
// a, b (same shape) -> () ; each a - b is rounded to float32 first, like torch.
Tensor max_abs_diff(const Tensor& a, const Tensor& b);

}  // namespace ts
