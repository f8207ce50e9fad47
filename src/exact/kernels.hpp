// kernels.hpp: the row kernels every chapter leans on -- softmax, log_softmax,
// LayerNorm, sum/mean over the last dim, GELU, ReLU.
//
// Two implementations sit side by side, chosen process-wide by set_kernel_path():
//   KernelPath::Exact  (src/exact/exact_kernels.cpp) replays PyTorch 1.13's CPU kernels
//                      (AVX2 build, 8-lane vectors, SLEEF exp/log/erf) step by step, so
//                      every float has the same bits as torch's and the printed tensors
//                      match the PyTorch twin byte for byte. This is the default. A build
//                      configured for PyTorch 2.6 (TS_TORCH, exact/torch_version.hpp) runs
//                      2.6's kernels instead (src/exact/exact_kernels_torch2.cpp).
//   KernelPath::Naive  (src/exact/kernels_naive.cpp) is the textbook formula as plain loops:
//                      read it first. It agrees with torch to ~1e-6, not to the bit.
//
// Pointer kernels work on `rows` contiguous rows of length `n` (row-major, the last dim).
// Tensor wrappers apply them over the last dim of a tensor of any rank.
// Introduced in ch03 (softmax); GELU and ReLU in ch05, LayerNorm in ch06, log_softmax in ch10.
#pragma once

#include <cstdint>

#include "exact/tensor.hpp"

namespace ts {

enum class KernelPath { Exact, Naive };

// Process-wide switch between the torch-exact kernels and the plain loops.
void set_kernel_path(KernelPath p);
KernelPath kernel_path();

// ---- pointer kernels: x (rows, n) contiguous -> y, one table per implementation ----
// Each set of row kernels is a table of the same functions (like the fast path's
// simd::Route): exact_kernels.softmax_rows(x, y, rows, n), naive_kernels.gelu(x, y, n).
struct RowKernels {
  // y = F.softmax(x, dim=-1); a fully -inf row gives NaN, like torch.
  void (*softmax_rows)(const float* x, float* y, int64_t rows, int64_t n);
  // y = F.log_softmax(x, dim=-1)
  void (*log_softmax_rows)(const float* x, float* y, int64_t rows, int64_t n);
  // y = nn.LayerNorm(n, eps)(x) with weight gamma (n) and bias beta (n)
  void (*layer_norm_rows)(const float* x, float* y, int64_t rows, int64_t n, const float* gamma,
                          const float* beta, float eps);
  // x (rows, n) -> y (rows): x.sum(dim=-1)
  void (*sum_rows)(const float* x, float* y, int64_t rows, int64_t n);
  // x (rows, n) -> y (rows): x.mean(dim=-1)
  void (*mean_rows)(const float* x, float* y, int64_t rows, int64_t n);
  // y = nn.GELU()(x), the exact form 0.5 x (1 + erf(x / sqrt(2))); x, y (n)
  void (*gelu)(const float* x, float* y, int64_t n);
  // y = nn.ReLU()(x) = max(x, 0); x, y (n)
  void (*relu)(const float* x, float* y, int64_t n);
};

// The torch-replaying kernels, callable directly whatever kernel_path() says:
// PyTorch 1.13's (src/exact/exact_kernels.cpp) and 2.6's (src/exact/exact_kernels_torch2.cpp,
// which reuses 1.13's where 2.6 computes the same bits).
extern const RowKernels exact_kernels;
extern const RowKernels exact_kernels_torch2;
// The one of the two that torch_version() (exact/torch_version.hpp) names.
const RowKernels& torch_kernels();
// The textbook loops (src/exact/kernels_naive.cpp).
extern const RowKernels naive_kernels;
// The table kernel_path() picks: kernels().softmax_rows(x, y, rows, n).
const RowKernels& kernels();

// ---- Tensor wrappers (over the last dim) ----
// x (..., n) -> (..., n)
Tensor softmax(const Tensor& x);
// x (..., n) -> (..., n)
Tensor log_softmax(const Tensor& x);
// x (..., C), gamma (C), beta (C) -> (..., C)
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);
// x (..., n) -> (...)
Tensor sum_lastdim(const Tensor& x);
// x (..., n) -> (...)
Tensor mean_lastdim(const Tensor& x);
// x (any) -> same shape
Tensor gelu(const Tensor& x);
// x (any) -> same shape
Tensor relu(const Tensor& x);

namespace exact {
// x (n) <- exp / sin / cos (x), in place, as torch's vectorised map over SLEEF's 8-lane
// functions computes them (introduced with article 002's PositionalEncoding, ch09)
void sleef_exp(float* x, int64_t n);
void sleef_sin(float* x, int64_t n);
void sleef_cos(float* x, int64_t n);
}  // namespace exact

}  // namespace ts
