// few_rows.cpp: linear's few-row products (see matmul.hpp, FewRowsProducts): a decoder step or a
// few prompts times a weight, one dot product per output in this order (8 outputs at a time with
// AVX2 + FMA), split over the caller's threads by groups of outputs.
#include "exact/matmul.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace ts {

// ---- few-row products (FewRowsProducts) -------------------------------------------
namespace {
thread_local bool g_few_rows = false;

// acc + a*b rounded once where the CPU fuses (as OpenBLAS's kernels do), else twice
inline float madd(float a, float b, float acc) {
#if defined(__FMA__)
  return std::fma(a, b, acc);
#else
  return acc + a * b;
#endif
}
}  // namespace

FewRowsProducts::FewRowsProducts(bool on) : was_(g_few_rows) { g_few_rows = g_few_rows || on; }
FewRowsProducts::~FewRowsProducts() { g_few_rows = was_; }
bool few_rows_products() { return g_few_rows; }

namespace {
// few_rows_linear's outputs [j0, j1) of every row; j0 is a multiple of 8
void few_rows_range(const float* x, int64_t rows, int64_t in_f, const float* w, int64_t out_f, const float* bias,
                    float* out, int64_t j0, int64_t j1) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in_f;
    float* o = out + r * out_f;
    int64_t j = j0;
#if defined(__AVX2__) && defined(__FMA__)
    // 8 outputs at a time, each a dot product of x with one contiguous row of w: 8 lanes of
    // partial sums per output, the 8 outputs' lanes added together at the end (hadd tree).
    const int64_t in8 = in_f / 8 * 8;
    for (; j + 8 <= j1; j += 8) {
      const float* wj = w + j * in_f;
      __m256 a[8];
      for (int q = 0; q < 8; ++q) a[q] = _mm256_setzero_ps();
      for (int64_t l = 0; l < in8; l += 8) {
        const __m256 xv = _mm256_loadu_ps(xr + l);
        for (int q = 0; q < 8; ++q) a[q] = _mm256_fmadd_ps(_mm256_loadu_ps(wj + q * in_f + l), xv, a[q]);
      }
      const __m256 h0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
      const __m256 h1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
      alignas(32) float sums[8];
      _mm256_store_ps(sums, _mm256_add_ps(_mm256_permute2f128_ps(h0, h1, 0x20), _mm256_permute2f128_ps(h0, h1, 0x31)));
      for (int64_t q = 0; q < 8; ++q) {
        float sq = sums[q];
        for (int64_t l = in8; l < in_f; ++l) sq = madd(wj[q * in_f + l], xr[l], sq);
        o[j + q] = bias ? bias[j + q] + sq : sq;
      }
    }
#endif
    for (; j < j1; ++j) {  // the outputs left over (all of them without AVX2): one running sum each
      float sq = 0.0f;
      for (int64_t l = 0; l < in_f; ++l) sq = madd(w[j * in_f + l], xr[l], sq);
      o[j] = bias ? bias[j] + sq : sq;
    }
  }
}

std::atomic<FewRowsParallel> g_few_rows_parallel{nullptr};

struct FewRowsJob {
  const float *x, *w, *bias;
  float* out;
  int64_t rows, in_f, out_f;
};
}  // namespace

void set_few_rows_parallel(FewRowsParallel parallel) { g_few_rows_parallel.store(parallel); }

void few_rows_linear(const float* x, int64_t rows, int64_t in_f, const float* w, int64_t out_f, const float* bias,
                     float* out) {
  if (rows > kFewRows) throw std::invalid_argument("few_rows_linear: at most " + std::to_string(kFewRows) + " rows");
  const FewRowsParallel parallel = g_few_rows_parallel.load();
  if (!parallel || in_f * out_f < kFewRowsSplit) return few_rows_range(x, rows, in_f, w, out_f, bias, out, 0, out_f);
  // groups of 8 outputs over the threads, at least 64 outputs each
  FewRowsJob job{x, w, bias, out, rows, in_f, out_f};
  parallel((out_f + 7) / 8, 8, [](void* ctx, int64_t g0, int64_t g1) {
    const FewRowsJob& jb = *static_cast<const FewRowsJob*>(ctx);
    few_rows_range(jb.x, jb.rows, jb.in_f, jb.w, jb.out_f, jb.bias, jb.out, g0 * 8, std::min(g1 * 8, jb.out_f));
  }, &job);
}

}  // namespace ts
