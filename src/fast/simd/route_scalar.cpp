// route_scalar.cpp: the fast path's row kernels as plain loops (TS_ISA=scalar), and the
// choice of route. Compiled for the baseline CPU (x86-64, armv8-a) whatever the rest of the
// build uses, so this route runs on any CPU of the architecture. It has no packed GEMM: the products go to OpenBLAS.
// Same formulas as route_impl.hpp, one value at a time: read this file first.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "fast/simd/erf_fit.hpp"
#include "fast/simd/route.hpp"

namespace ts::simd {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float bits_to_float(int32_t i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

// e^x, route_impl.hpp's exp_v one value at a time
float exp_fast(float x) {
  const float xc = std::min(std::max(x, -87.33f), 88.72f);
  const float n = std::nearbyint(xc * 1.44269504088896341f);  // round(x / ln 2)
  float r = std::fma(n, -0.693359375f, xc);                    // x - n ln2, in two
  r = std::fma(n, 2.12194440e-4f, r);                           // parts for accuracy
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  p = std::fma(p, r * r, r) + 1.0f;
  const float two_n = bits_to_float((static_cast<int32_t>(n) + 127) << 23);
  return x < -87.33f ? 0.0f : p * two_n;
}

// erf(z) = z P(z^2) / Q(z^2) (erf_fit.hpp: Eigen's and XLA's float fit), |error| < 5e-7 on
// [-4, 4]; +-1 beyond |z| = 3.9 (float's own erf is +-1 there)
float erf_fast(float z) {
  using namespace erf_fit;
  if (std::fabs(z) >= kSaturate) return std::copysign(1.0f, z);
  const float x2 = z * z;
  float p = kP[0];
  for (int i = 1; i < kNP; ++i) p = std::fma(x2, p, kP[i]);
  float q = kQ[0];
  for (int i = 1; i < kNQ; ++i) q = std::fma(x2, q, kQ[i]);
  return z * p / q;
}

// GELU(x) = x/2 (1 + erf(x / sqrt 2))
float gelu_fast(float x) { return 0.5f * x * (1.0f + erf_fast(x * 0.70710678118654752f)); }

// x, y (rows, n); mask (rows, n) or nullptr
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, const float* mask) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    const float* m = mask ? mask + r * n : nullptr;
    // 1) out = masked_fill(in, mask == 0, -inf); the row max
    float max = kNegInf;
    for (int64_t i = 0; i < n; ++i) {
      out[i] = (m && m[i] == 0.0f) ? kNegInf : in[i];
      max = std::max(max, out[i]);
    }
    if (max == kNegInf) {  // every entry hidden: NaN, like torch
      std::fill_n(out, n, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    // 2) out = exp(out - max), summed (in double: one running float sum of 3072 terms
    //    drifts by ~1e-6, the vector routes' lane-wise partial sums do not); 3) out /= sum
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += out[i] = exp_fast(out[i] - max);
    const float inv = float(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) out[i] *= inv;
  }
}

// x, y (rows, n); gamma, beta (n)
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma, const float* beta,
                     float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    double sum = 0.0;  // 1) mean (sums in double, as in softmax)
    for (int64_t i = 0; i < n; ++i) sum += in[i];
    const float mean = float(sum / double(n));
    double sq = 0.0;  // 2) biased variance
    for (int64_t i = 0; i < n; ++i) sq += double(in[i] - mean) * double(in[i] - mean);
    const float rstd = float(1.0 / std::sqrt(sq / double(n) + double(eps)));
    for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - mean) * rstd * gamma[i] + beta[i];  // 3) scale, shift
  }
}

// x, y (rows, n), rows ld apart; bias (n) or nullptr
void bias_gelu_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t ld, const float* bias) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) y[r * ld + i] = gelu_fast(x[r * ld + i] + (bias ? bias[i] : 0.0f));
}

// dx += dy * (Phi(x) + x phi(x)),  Phi(x) = (1 + erf(x / sqrt 2)) / 2,  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float cdf = 0.5f * (1.0f + erf_fast(x[i] * 0.70710678118654752f));
    const float pdf = 0.3989422804014327f * exp_fast(-0.5f * x[i] * x[i]);
    dx[i] += dy[i] * (cdf + x[i] * pdf);
  }
}

// y (R, M) += x (R, K) W^T, one dot product per output
void few_rows(const float* x, int64_t R, int64_t K, const float* w, int64_t M, float* y, int64_t ldy) {
  for (int64_t o = 0; o < M; ++o)
    for (int64_t r = 0; r < R; ++r) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k) sum += w[o * K + k] * x[r * K + k];
      y[r * ldy + o] += sum;
    }
}
}  // namespace

// route.hpp's fields in their order, each kernel named as its field; no packed GEMM (nullptr)
const Route& route_scalar() {
  static const Route r{Isa::Scalar, softmax_rows, layer_norm_rows, bias_gelu_rows, gelu_backward, few_rows};
  return r;
}

const Route& route(Isa isa) {
  if (!isa_runs(isa))
    throw std::invalid_argument(std::string("simd::route: this CPU cannot run ") + isa_name(isa));
  switch (isa) {  // each architecture compiles only its own routes (CMakeLists.txt)
#if defined(__x86_64__)
    case Isa::Avx512: return route_avx512();
    case Isa::Avx2: return route_avx2();
#elif defined(__aarch64__)
    case Isa::Neon: return route_neon();
#endif
    default: break;
  }
  return route_scalar();
}

const Route& route() { return route(active_isa()); }

}  // namespace ts::simd
