// route.hpp: the fast path's kernels for one instruction set (a "route"), as a table.
//
// Introduced with the fast encoder (ch07). The same kernels exist once per route:
//   avx512, avx2  route_impl.hpp, one source written with xsimd (xtensor's SIMD layer),
//                 compiled in route_avx512.cpp / route_avx2.cpp with exactly that ISA's flags
//   neon          the same route_impl.hpp for arm64's Advanced SIMD (4 floats), route_neon.cpp
//   scalar        route_scalar.cpp: plain loops, compiled for the baseline CPU
// Each architecture compiles only its own routes (x86-64: avx512, avx2; arm64: neon).
// route() picks the table for active_isa() (isa.hpp: the CPU's widest, capped by TS_ISA).
// Nothing here is PyTorch-bit-exact; everything agrees with the exact path to ~1e-5.
#pragma once

#include <cstdint>

#include "fast/isa.hpp"

namespace ts::simd {

// What happens to a finished GEMM tile: c = [c +] [bias] + x W^T, then [GELU].
struct Epilogue {
  const float* bias = nullptr;  // (M) or nullptr
  bool residual = false;        // c starts as the residual stream: add to it
  bool gelu = false;            // GELU on the result
};

struct Route {
  Isa isa;

  // ---- row kernels, rows of n contiguous floats (ld apart where given) ----
  // y = softmax(masked_fill(x, mask == 0, -inf)) over each row; mask (rows, n) or nullptr;
  // a row with every entry hidden gives NaN, like torch
  void (*softmax_rows)(const float* x, float* y, int64_t rows, int64_t n, const float* mask);
  // y = (x - mean) / sqrt(var + eps) * gamma + beta, biased variance; gamma, beta (n)
  void (*layer_norm_rows)(const float* x, float* y, int64_t rows, int64_t n, const float* gamma,
                          const float* beta, float eps);
  // y = GELU(x [+ bias]), erf form; x, y (rows, n) rows ld apart (in place allowed); bias (n) or nullptr
  void (*bias_gelu_rows)(const float* x, float* y, int64_t rows, int64_t n, int64_t ld, const float* bias);
  // dx += dy * (Phi(x) + x phi(x)): GELU's gradient (training, ch12), n contiguous values;
  // Phi from the same erf as bias_gelu_rows, phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
  void (*gelu_backward)(const float* x, const float* dy, float* dx, int64_t n);

  // ---- a few rows: y (R, M), rows ldy apart, += x (R, K) W^T, W (M, K); 1 <= R <= 8 ----
  void (*few_rows)(const float* x, int64_t R, int64_t K, const float* w, int64_t M, float* y, int64_t ldy);

  // ---- the packed-weight GEMM (nullptr on the scalar route) ----
  int mr = 0;  // rows of x per micro-tile
  int nr = 0;  // outputs per panel (a few vectors)
  const char* blocking = "";  // "12x32, two-port AVX-512": MR x NR and the kind of core it is for
  // W (M,K), rows ldw apart, times scale -> panels (ceil(M/nr), K, nr) at out (64-byte aligned)
  void (*pack_panels)(const float* W, int64_t ldw, int64_t M, int64_t K, float scale, float* out) = nullptr;
  // W^T given as (K,M), rows ldw apart -> the same panels
  void (*pack_panels_kmajor)(const float* Wt, int64_t ldw, int64_t M, int64_t K, float* out) = nullptr;
  // y (rows, outputs of panels [p0,p1)), rows ldy apart, = epilogue(x W^T); x (rows, K) rows
  // ldx apart, read where it is (x is never packed)
  void (*packed_product)(const float* x, int64_t ldx, int64_t rows, int64_t K, const float* panels, int64_t M,
                         int64_t p0, int64_t p1, float* y, int64_t ldy, const Epilogue& epi) = nullptr;
};

const Route& route_scalar();
const Route& route_avx2();
const Route& route_avx512();
const Route& route_neon();

// The table for `isa`, or for active_isa().
const Route& route(Isa isa);
const Route& route();

}  // namespace ts::simd
