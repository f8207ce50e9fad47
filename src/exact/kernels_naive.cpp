// kernels_naive.cpp: the row kernels as the textbook writes them, plus the switch that
// picks between them and the torch-exact versions (exact_kernels.cpp).
//
// Read these loops first: each is the formula, one step per loop. They agree with
// PyTorch to about 1e-6; they are not bit-identical, because torch sums in a different
// order (8 lanes at a time, in cascades), uses SLEEF's exp instead of the C library's,
// and hands GELU to oneDNN. Run a chapter with the naive path to see how little, and
// where, it changes.
//
// Long sums (a row of 30000 exponentials, a mean over 3072 values) are accumulated in
// double: a plain left-to-right float sum drifts by ~1e-5 over such rows, which torch
// avoids with its cascaded sums. Everything else is float, like the tensors.
//
// Introduced in ch03 (softmax); LayerNorm in ch08, GELU in ch07.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "exact/kernels.hpp"

namespace ts {
namespace {

// Runs row(in, out) on each of the `rows` rows of n floats: in = x + r n, out = y + r n.
template <class Row>
void each_row(const float* x, float* y, int64_t rows, int64_t n, const Row& row) {
  for (int64_t r = 0; r < rows; ++r) row(x + r * n, y + r * n);
}

// max_i x_i over one row (n): subtracted before exp so that exp never overflows
float row_max(const float* in, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, in[i]);
  return max;
}

// sum_i exp(x_i - max) over one row (n), in double; each exp is also stored in out (n) unless
// out is null. A fully -inf row: exp(-inf - -inf) = NaN, as torch.
double sum_exp(const float* in, float max, int64_t n, float* out) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(in[i] - max);
    if (out) out[i] = e;
    sum += e;
  }
  return sum;
}

// x (rows, n) -> y (rows, n): softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max)
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
  each_row(x, y, rows, n, [n](const float* in, float* out) {
    // 1) the row max, 2) exponentiate (into out) and 3) sum
    const float total = static_cast<float>(sum_exp(in, row_max(in, n), n, out));
    // 4) normalise so the row sums to 1
    for (int64_t i = 0; i < n; ++i) out[i] /= total;
  });
}

// x (rows, n) -> y (rows, n): log_softmax(x)_i = x_i - max - log(sum_j exp(x_j - max))
void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
  each_row(x, y, rows, n, [n](const float* in, float* out) {
    const float max = row_max(in, n);
    const float log_sum = static_cast<float>(std::log(sum_exp(in, max, n, nullptr)));
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] - max - log_sum;
  });
}

// x (rows, C), gamma (C), beta (C) -> y (rows, C):
//   y = (x - mean) / sqrt(var + eps) * gamma + beta, var biased (divide by C, not C-1)
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma,
                     const float* beta, float eps) {
  each_row(x, y, rows, n, [=](const float* in, float* out) {
    // 1) mean
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += in[i];
    const float mean = static_cast<float>(sum / n);
    // 2) biased variance: the mean square distance to the mean (divide by n, not n - 1)
    double sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sq += (in[i] - mean) * (in[i] - mean);
    const float var = static_cast<float>(sq / n);
    // 3) normalise, then scale and shift
    const float inv_std = 1.0f / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - mean) * inv_std * gamma[i] + beta[i];
  });
}

// x (rows, n) -> y (rows): y_r = sum_i x_ri
void sum_rows(const float* x, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += x[r * n + i];
    y[r] = static_cast<float>(sum);
  }
}

// x (rows, n) -> y (rows): y_r = sum_i x_ri / n
void mean_rows(const float* x, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += x[r * n + i];
    y[r] = static_cast<float>(sum / n);
  }
}

// x (n) -> y (n): GELU(x) = x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2)))
void gelu(const float* x, float* y, int64_t n) {
  const float inv_sqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * inv_sqrt2));
}

// x (n) -> y (n): ReLU(x) = max(x, 0)
void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

}  // namespace

const RowKernels naive_kernels = {softmax_rows, log_softmax_rows, layer_norm_rows, sum_rows,
                                  mean_rows,    gelu,             relu};

// ===========================================================================
// The switch: which table ts::softmax & co. run
// ===========================================================================

namespace {
std::atomic<KernelPath> g_path{KernelPath::Exact};
}  // namespace

void set_kernel_path(KernelPath p) { g_path.store(p, std::memory_order_relaxed); }
KernelPath kernel_path() { return g_path.load(std::memory_order_relaxed); }
const RowKernels& kernels() { return kernel_path() == KernelPath::Exact ? torch_kernels() : naive_kernels; }

// ===========================================================================
// Tensor wrappers: the last dim is the row (a 0-d tensor is one row of 1)
// ===========================================================================

namespace {
// Length of the last dim (1 for a 0-d tensor) and how many such rows there are.
struct Rows {
  int64_t rows;
  int64_t n;
};
Rows rows_of(const Tensor& x) {
  const int64_t n = x.dimension() == 0 ? 1 : static_cast<int64_t>(x.shape().back());
  const int64_t size = static_cast<int64_t>(x.size());
  return {n == 0 ? 0 : size / n, n};
}
// Tensor is row-major xt::xarray<float>: its storage is the contiguous (rows, n) block.
Tensor empty_like(const Tensor& x) { return Tensor::from_shape(shape_of(x)); }
Shape without_last(const Tensor& x) {
  Shape s = shape_of(x);
  if (!s.empty()) s.pop_back();
  return s;
}
}  // namespace

// x (..., n) -> (..., n)
Tensor softmax(const Tensor& x) {
  Tensor y = empty_like(x);
  const Rows r = rows_of(x);
  kernels().softmax_rows(x.data(), y.data(), r.rows, r.n);
  return y;
}

// x (..., n) -> (..., n)
Tensor log_softmax(const Tensor& x) {
  Tensor y = empty_like(x);
  const Rows r = rows_of(x);
  kernels().log_softmax_rows(x.data(), y.data(), r.rows, r.n);
  return y;
}

// x (..., C), gamma (C), beta (C) -> (..., C)
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  const Rows r = rows_of(x);
  if (static_cast<int64_t>(gamma.size()) != r.n || static_cast<int64_t>(beta.size()) != r.n)
    throw std::invalid_argument("layer_norm: gamma and beta must have the size of the last dim");
  Tensor y = empty_like(x);
  // torch casts eps to the tensor's dtype before use
  kernels().layer_norm_rows(x.data(), y.data(), r.rows, r.n, gamma.data(), beta.data(),
                  static_cast<float>(eps));
  return y;
}

// x (..., n) -> (...)
Tensor sum_lastdim(const Tensor& x) {
  Tensor y = Tensor::from_shape(without_last(x));
  const Rows r = rows_of(x);
  kernels().sum_rows(x.data(), y.data(), static_cast<int64_t>(y.size()), r.n);  // rows = y.size() also when n == 0
  return y;
}

// x (..., n) -> (...)
Tensor mean_lastdim(const Tensor& x) {
  Tensor y = Tensor::from_shape(without_last(x));
  const Rows r = rows_of(x);
  kernels().mean_rows(x.data(), y.data(), static_cast<int64_t>(y.size()), r.n);  // rows = y.size() also when n == 0
  return y;
}

// x (any) -> same shape
Tensor gelu(const Tensor& x) {
  Tensor y = empty_like(x);
  kernels().gelu(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

// x (any) -> same shape
Tensor relu(const Tensor& x) {
  Tensor y = empty_like(x);
  kernels().relu(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

}  // namespace ts
