// compare.hpp: how far apart two computations of the same thing are (introduced in ch04,
// where the per-head and fused multi-head attention are shown equal; used again in ch05,
// where a feed-forward without activation is shown equal to one merged Linear).
#pragma once

#include "exact/tensor.hpp"

namespace ts {

// (a - b).abs().max(): the largest elementwise gap, as PyTorch's 0-d tensor.
// a, b (same shape) -> () ; each a - b is rounded to float32 first, like torch.
Tensor max_abs_diff(const Tensor& a, const Tensor& b);

// How far two float32 computations of the same values may drift apart when they only round in
// another order (a cached step vs recomputing the prefix, a fast path vs the module). A
// rounding error is relative to the value rounded, so a fixed limit (1e-5) fails on large
// values (logits of a model trained at a high learning rate) and passes anything on tiny ones.
// The limit scales with the largest |value| compared:
//   tolerance = growth * FLT_EPSILON * max(1, scale)
// FLT_EPSILON = 1.19e-7 is one float32 rounding. kRoundingGrowth = 128 is what a reordered
// computation can accumulate: a dot product of n terms summed in another order drifts by about
// sqrt(n) roundings (n <= 4096 in the course's models: 64), times 2 for the softmax, LayerNorm
// and residual that follow it. 128 FLT_EPSILON = 1.5e-5: values of size 1 keep the course's
// former 1e-5 limit within a factor 1.5.
constexpr double kRoundingGrowth = 128;
double scaled_tolerance(double scale, double growth = kRoundingGrowth);

// max_i |v_i| (0 for n = 0; NaN if any v_i is NaN)
double max_abs(const float* v, size_t n);

}  // namespace ts
