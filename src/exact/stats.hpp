// stats.hpp: torch-exact statistics along the last dim -- var, std, mean with keepdim.
//
// src/exact/kernels.hpp has the row kernels a model needs (softmax, LayerNorm, ...); the
// hand-written LayerNorms of articles 002 and 004 (ch06) also call x.mean(-1, keepdim=True)
// and x.std(-1, keepdim=True), and these functions reproduce those calls bit for bit
// (torch 1.13, CPU, float32; checked by tests/test_stats.cpp against the live torch).
//
// How torch 1.13 computes them (aten/src/ATen/native/ReduceOps.cpp, std_var_out):
//   - more than one output value (rows > 1): Welford's one-pass update per row, in double
//       count += 1;  delta = x - mean;  mean += delta / count;  m2 += delta * (x - mean)
//     var = m2 / (n - correction), std = sqrt(var) in double, then rounded to float;
//   - exactly one output value (rows == 1, the whole tensor is one row): a two-pass sum
//       mean = float(x.mean());  var = sum((double(x) - mean)^2) / (n - correction)
//     (std_var_all_cpu; identical to torch with 1 thread; for n > 32768 torch splits the sum
//     across its threads, which can move the last bit).
// n - correction <= 0 gives inf/NaN like torch; n == 0 gives NaN.
//
// NOTE: kernels.hpp already has `mean_lastdim(x)` returning (...) WITHOUT the kept dim, so
// the keepdim mean is spelled `mean_lastdim_keepdim` here (the two names must not clash).
// Introduced in ch06 (LayerNorm formulas).
#pragma once

#include <cstdint>

#include "exact/tensor.hpp"

namespace ts {

// x (R,N) -> y (R): torch.var(dim=-1), correction 1 = unbiased, 0 = biased (population)
void var_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t correction = 1);
// x (R,N) -> y (R): torch.std(dim=-1) = sqrt(var), same correction rule
void std_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t correction = 1);

// x (..., N) -> (..., 1): x.var(-1, keepdim=True, correction=correction)
Tensor var_lastdim(const Tensor& x, int64_t correction = 1);
// x (..., N) -> (..., 1): x.std(-1, keepdim=True, correction=correction)
Tensor std_lastdim(const Tensor& x, int64_t correction = 1);
// x (..., N) -> (..., 1): x.mean(-1, keepdim=True), torch's bits whatever kernel_path() says
Tensor mean_lastdim_keepdim(const Tensor& x);

// The smallest and largest value, in double, for a chapter's notes ("from 0.89 to 1.05").
// t: any shape, at least one value -> {lo, hi}
struct Range {
  double lo, hi;
};
Range range_of(const Tensor& t);

}  // namespace ts
