// exact_stats.cpp: var / std / mean along the last dim, replaying torch 1.13's CPU code.
// Compiled with -ffp-contract=off: every rounding step below happens exactly as written.
// See stats.hpp for the two algorithms torch picks between and why.
#include "exact/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "exact/kernels.hpp"

namespace ts {

namespace {

// x (n) -> var in double: WelfordOps<float, double, int64_t, ...>::reduce then project
// (aten/src/ATen/native/SharedReduceOps.h), the per-row path torch takes when rows > 1.
double welford_var(const float* x, int64_t n, int64_t correction) {
  double mean = 0.0, m2 = 0.0;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    count += 1;
    const double nf = static_cast<double>(count);
    const double delta = static_cast<double>(x[i]) - mean;
    mean = mean + delta / nf;
    const double new_delta = static_cast<double>(x[i]) - mean;
    m2 = m2 + delta * new_delta;
  }
  const double nf = static_cast<double>(count);
  const double c = static_cast<double>(correction);
  const double divisor = nf > c ? nf - c : 0.0;
  return m2 / divisor;  // 0/0 = NaN, m2/0 = inf, as in torch
}

// welford_var on R rows at once: xt (n, R) holds the R rows as columns (element i of row q at
// xt[i * R + q], so each step reads R neighbours: vector lanes). The same operations in the same
// order on each row, so the same bits; the R independent chains hide the latency of the division
// per element, which alone bounds welford_var.
template <int R>
void welford_var_rows(const float* xt, int64_t n, int64_t correction, double var[R]) {
  double mean[R] = {}, m2[R] = {};
  for (int64_t i = 0; i < n; ++i) {
    const double nf = static_cast<double>(i + 1);
    const float* xi = xt + i * R;
    for (int q = 0; q < R; ++q) {
      const double delta = static_cast<double>(xi[q]) - mean[q];
      mean[q] = mean[q] + delta / nf;
      const double new_delta = static_cast<double>(xi[q]) - mean[q];
      m2[q] = m2[q] + delta * new_delta;
    }
  }
  const double nf = static_cast<double>(n);
  const double c = static_cast<double>(correction);
  const double divisor = nf > c ? nf - c : 0.0;
  for (int q = 0; q < R; ++q) var[q] = m2[q] / divisor;
}

// rows [r, r+R) of x (rows, n) -> y: transposed into xt (n, R), welford_var_rows, the sqrt if asked
template <int R>
void std_var_block(const float* x, float* y, int64_t r, int64_t n, int64_t correction, bool take_sqrt,
                   std::vector<float>& xt) {
  xt.resize(static_cast<size_t>(n * R));
  for (int q = 0; q < R; ++q)
    for (int64_t i = 0; i < n; ++i) xt[static_cast<size_t>(i * R + q)] = x[(r + q) * n + i];
  double var[R];
  welford_var_rows<R>(xt.data(), n, correction, var);
  for (int q = 0; q < R; ++q) y[r + q] = static_cast<float>(take_sqrt ? std::sqrt(var[q]) : var[q]);
}

// x (n) -> var in double: std_var_all_cpu, torch's path when the result has one element.
// The mean is torch's float mean (cascade sum / n), widened to double.
double two_pass_var(const float* x, int64_t n, int64_t correction) {
  float mean_f = 0.0f;
  torch_kernels().mean_rows(x, &mean_f, 1, n);
  const double mean = static_cast<double>(mean_f);
  double sum_dx2 = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(x[i]) - mean;
    sum_dx2 = sum_dx2 + dx * dx;
  }
  return sum_dx2 / static_cast<double>(std::max<int64_t>(0, n - correction));
}

// x (R,N) -> y (R); take_sqrt selects std over var
void std_var_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t correction,
                  bool take_sqrt) {
  if (rows <= 0) return;
  if (n <= 0) {
    std::fill(y, y + rows, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  int64_t r = 0;
  if (rows > 1) {  // 16 rows at a time, then 4 (a LayerNorm's batch is B*T rows)
    std::vector<float> xt;
    for (; r + 16 <= rows; r += 16) std_var_block<16>(x, y, r, n, correction, take_sqrt, xt);
    for (; r + 4 <= rows; r += 4) std_var_block<4>(x, y, r, n, correction, take_sqrt, xt);
  }
  for (; r < rows; ++r) {
    const float* row = x + r * n;
    const double var = rows == 1 ? two_pass_var(row, n, correction) : welford_var(row, n, correction);
    y[r] = static_cast<float>(take_sqrt ? std::sqrt(var) : var);
  }
}

// x (..., N) -> (..., 1) by a row function f(x, y, rows, n)
template <class RowFn>
Tensor apply_keepdim(const Tensor& x, const char* name, RowFn f) {
  if (x.dimension() == 0) throw std::invalid_argument(std::string(name) + ": expected at least 1 dim");
  Shape shape = shape_of(x);
  const auto n = static_cast<int64_t>(shape.back());
  shape.back() = 1;
  Tensor y = Tensor::from_shape(shape);
  const auto rows = static_cast<int64_t>(y.size());
  f(x.data(), y.data(), rows, n);
  return y;
}

}  // namespace

// x (R,N) -> y (R): torch.var(dim=-1)
void var_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t correction) {
  std_var_rows(x, y, rows, n, correction, false);
}

// x (R,N) -> y (R): torch.std(dim=-1)
void std_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t correction) {
  std_var_rows(x, y, rows, n, correction, true);
}

// x (..., N) -> (..., 1)
Tensor var_lastdim(const Tensor& x, int64_t correction) {
  return apply_keepdim(x, "var_lastdim", [&](const float* a, float* b, int64_t rows, int64_t n) {
    var_rows(a, b, rows, n, correction);
  });
}

// x (..., N) -> (..., 1)
Tensor std_lastdim(const Tensor& x, int64_t correction) {
  return apply_keepdim(x, "std_lastdim", [&](const float* a, float* b, int64_t rows, int64_t n) {
    std_rows(a, b, rows, n, correction);
  });
}

// x (..., N) -> (..., 1); torch.mean = sum / n (ReduceOps.cpp mean_out on CPU)
Tensor mean_lastdim_keepdim(const Tensor& x) {
  return apply_keepdim(x, "mean_lastdim_keepdim", [&](const float* a, float* b, int64_t rows, int64_t n) {
    if (n <= 0) {
      std::fill(b, b + rows, std::numeric_limits<float>::quiet_NaN());
      return;
    }
    torch_kernels().mean_rows(a, b, rows, n);
  });
}

Range range_of(const Tensor& t) {
  if (t.size() == 0) throw std::invalid_argument("range_of: an empty tensor has no range");
  const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
  return {*lo, *hi};
}

}  // namespace ts
