// row_kernels.cpp: the active route's row kernels (see row_kernels.hpp).
#include "fast/row_kernels.hpp"

#include "fast/simd/route.hpp"

namespace ts::fast {
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, const float* mask) {
  simd::route().softmax_rows(x, y, rows, n, mask);
}
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma, const float* beta,
                     float eps) {
  simd::route().layer_norm_rows(x, y, rows, n, gamma, beta, eps);
}
void bias_gelu_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t ld, const float* bias) {
  simd::route().bias_gelu_rows(x, y, rows, n, ld, bias);
}
void gelu(const float* x, float* y, int64_t n) { bias_gelu_rows(x, y, 1, n, n, nullptr); }
}  // namespace ts::fast
