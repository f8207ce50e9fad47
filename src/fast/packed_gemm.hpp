// packed_gemm.hpp: the fast path's weight products (introduced with ch07's fast encoder).
//
// A Linear's weight W (M,K) is packed once, at construction, into the route's panel order
// (src/fast/simd/route_impl.hpp: panels of nr outputs, k-major), so every forward reads it
// in the order the micro-kernel consumes it. Without a packed GEMM (the scalar route, or
// Gemm::Sgemm) the products go to OpenBLAS sgemm, or for a few rows to the route's
// kernel that streams W once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fast/simd/route.hpp"

namespace ts {

// y (rows, [o0,o1)), rows ldy apart, += x (rows, K) W[o0:o1]^T, W (M,K) row-major.
// Up to 8 rows: the route's few-rows kernel (sgemm would spend its time packing W for R
// rows); else column-major C (o1-o0, rows) += W[o0:o1] (as (K, o1-o0), transposed) .
// x^T (K, rows): sgemm('t','n'), or the plain triple loop on the naive path.
void product(const simd::Route& rt, const float* x, int64_t rows, int64_t K, const float* W, int64_t o0, int64_t o1,
             float* y, int64_t ldy);

// 64-byte aligned floats (a panel step is one or two cache lines).
struct Aligned {
  float* p = nullptr;
  size_t n = 0;
  Aligned() = default;
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  ~Aligned();
  void resize(size_t count);  // at least `count` floats (contents lost when it grows)
};

// One Linear of a layer as the fast path holds it: W (M,K) row-major and its bias, plus
// W packed into panels when the packed GEMM is in use.
struct FastLinear {
  const float* w = nullptr;
  const float* bias = nullptr;
  int64_t M = 0, K = 0;
  std::vector<float> own_w, own_bias;  // storage when w/bias are built here (Q/K/V stacked)
  Aligned panels;

  // rt: the route whose packed GEMM will read the panels, or nullptr (no packing)
  void set(const float* weight, const float* b, int64_t out, int64_t in, const simd::Route* rt);
};

}  // namespace ts
