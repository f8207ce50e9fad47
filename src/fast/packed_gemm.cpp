// packed_gemm.cpp: see packed_gemm.hpp.
#include "fast/packed_gemm.hpp"

#include <cstdlib>
#include <new>

#include "exact/matmul.hpp"

namespace ts {

void product(const simd::Route& rt, const float* x, int64_t rows, int64_t K, const float* W, int64_t o0, int64_t o1,
             float* y, int64_t ldy) {
  constexpr int64_t kFewRows = 8;
  if (o1 <= o0 || rows <= 0) return;
  if (rows <= kFewRows && matmul_path() == MatmulPath::Blas) {
    rt.few_rows(x, rows, K, W + o0 * K, o1 - o0, y + o0, ldy);
    return;
  }
  gemm('t', 'n', o1 - o0, rows, K, 1.0f, W + o0 * K, K, x, K, 1.0f, y + o0, ldy);
}

Aligned::~Aligned() { std::free(p); }

void Aligned::resize(size_t count) {
  if (count <= n) return;
  std::free(p);
  p = static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64));
  if (!p) throw std::bad_alloc();
  n = count;
}

void FastLinear::set(const float* weight, const float* b, int64_t out, int64_t in, const simd::Route* rt) {
  w = weight;
  bias = b;
  M = out;
  K = in;
  if (!rt) return;
  panels.resize(size_t((M + rt->nr - 1) / rt->nr * rt->nr * K));
  rt->pack_panels(w, K, M, K, 1.0f, panels.p);
}

}  // namespace ts
