// train/gpt_ops.cpp: see gpt_ops.hpp for the formulas.
#include "train/gpt_ops.hpp"

#include <algorithm>
#include <cmath>

#include "exact/matmul.hpp"
#include "fast/simd/route.hpp"
#include "fast/thread_pool.hpp"
#include "train/ops.hpp"

namespace ts::train {

template <class F>
void split_qkv(F* q, F* k, F* v, const F* qkv, int64_t B, int64_t T, int64_t H, int64_t D) {
  const int64_t C = H * D;
  F* out[3] = {q, k, v};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t h = 0; h < H; ++h) {
          const F* src = qkv + (b * T + t) * 3 * C + j * C + h * D;
          F* dst = out[j] + ((b * H + h) * T + t) * D;
          for (int64_t d = 0; d < D; ++d) dst[d] = src[d];
        }
}

template <class F>
void split_qkv_backward(F* dqkv, const F* dq, const F* dk, const F* dv, int64_t B, int64_t T, int64_t H, int64_t D) {
  const int64_t C = H * D;
  const F* in[3] = {dq, dk, dv};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t h = 0; h < H; ++h) {
          F* dst = dqkv + (b * T + t) * 3 * C + j * C + h * D;
          const F* src = in[j] + ((b * H + h) * T + t) * D;
          for (int64_t d = 0; d < D; ++d) dst[d] += src[d];
        }
}

template <class F>
void lm_head_forward(F* logits, const F* x, const F* W, int64_t N, int64_t C, int64_t V) {
  mm<F>(false, true, N, V, C, x, W, F(0), logits);
}

template <class F>
void lm_head_backward(F* dx, F* dW, const F* dlogits, const F* x, const F* W, int64_t N, int64_t C, int64_t V) {
  mm<F>(false, false, N, C, V, dlogits, W, F(1), dx);
  mm<F>(true, false, V, C, N, dlogits, x, F(1), dW);
}

// The route's GELU stands in for encoder_ops.cpp's only while it computes what that one computes:
// both are probed on a few points at every call (16 values: nothing beside a layer's thousands), so
// an edit of gelu_forward or gelu_backward (the ReLU exercise, a broken gradient) runs as written.
constexpr int kProbe = 8;
constexpr float kProbeX[kProbe] = {-4.0f, -2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f};

static bool route_gelu_forward_is_gelu_forward(const simd::Route& rt) {
  float want[kProbe], got[kProbe];
  gelu_forward(want, kProbeX, kProbe);
  rt.bias_gelu_rows(kProbeX, got, 1, kProbe, kProbe, nullptr);
  for (int i = 0; i < kProbe; ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f)) return false;
  return true;
}

static bool route_gelu_backward_is_gelu_backward(const simd::Route& rt) {
  const float dy[kProbe] = {1.0f, -1.0f, 0.5f, 2.0f, 1.0f, -0.5f, 1.5f, 1.0f};
  float want[kProbe] = {}, got[kProbe] = {};
  gelu_backward(want, dy, kProbeX, kProbe);
  rt.gelu_backward(kProbeX, dy, got, kProbe);
  for (int i = 0; i < kProbe; ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f)) return false;
  return true;
}

void gelu_forward_fast(float* y, const float* x, int64_t n) {
  const simd::Route& rt = simd::route();
  if (matmul_path() != MatmulPath::Blas || !route_gelu_forward_is_gelu_forward(rt)) return gelu_forward(y, x, n);
  rt.bias_gelu_rows(x, y, 1, n, n, nullptr);
}

void gelu_backward_fast(float* dx, const float* dy, const float* x, int64_t n) {
  const simd::Route& rt = simd::route();
  if (matmul_path() != MatmulPath::Blas || !route_gelu_backward_is_gelu_backward(rt))
    return gelu_backward(dx, dy, x, n);
  rt.gelu_backward(x, dy, dx, n);
}

template <class F>
void matvec_plain(F* y, const F* x, const F* W, const F* b, int64_t N, int64_t K) {
  for (int64_t n = 0; n < N; ++n) {
    const F* w = W + n * K;
    F acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += w[k] * x[k];
    y[n] = (b ? b[n] : F(0)) + acc;
  }
}

void matvec(float* y, const float* x, const float* W, const float* b, int64_t N, int64_t K) {
  if (matmul_path() != MatmulPath::Blas) return matvec_plain(y, x, W, b, N, K);
  // 1) y = b   2) y += W x on the route, rows of W split over the team when there are enough
  if (b) std::copy_n(b, N, y);
  else std::fill_n(y, N, 0.0f);
  const simd::Route& rt = simd::route();
  constexpr int64_t kMinWeightsPerThread = int64_t(1) << 17;  // 512 KB of W: below it a hand-off costs more than it saves
  const int parts = int(std::min<int64_t>(team_size(), std::max<int64_t>(1, N * K / kMinWeightsPerThread)));
  if (parts <= 1) return rt.few_rows(x, 1, K, W, N, y, N);
  team_run([&](int tid) {
    if (tid >= parts) return;
    const auto [n0, n1] = part_of(N, parts, tid, 16);  // whole groups of rows: few_rows reads 4 at a time
    if (n0 < n1) rt.few_rows(x, 1, K, W + n0 * K, n1 - n0, y + n0, N);
  });
}

void attend_cached(float* out, float* p, const float* q, const float* Kc, const float* Vc, int64_t S, int64_t D,
                   float scale) {
  // 1) scores = Kc q * scale   (S)
  matvec(p, q, Kc, nullptr, S, D);
  for (int64_t s = 0; s < S; ++s) p[s] *= scale;
  // 2) p = softmax(scores)   (S): nothing to hide, the cache holds only the past
  if (matmul_path() == MatmulPath::Blas) simd::route().softmax_rows(p, p, 1, S, nullptr);
  else masked_softmax_forward(p, p, static_cast<const float*>(nullptr), 1, 1, 1, S);
  // 3) out = p Vc   (D)
  std::fill_n(out, D, 0.0f);
  for (int64_t s = 0; s < S; ++s) {
    const float w = p[s];
    const float* v = Vc + s * D;
    for (int64_t d = 0; d < D; ++d) out[d] += w * v[d];
  }
}

#define TS_GPT_OPS(F)                                                                                   \
  template void split_qkv<F>(F*, F*, F*, const F*, int64_t, int64_t, int64_t, int64_t);                 \
  template void split_qkv_backward<F>(F*, const F*, const F*, const F*, int64_t, int64_t, int64_t, int64_t); \
  template void lm_head_forward<F>(F*, const F*, const F*, int64_t, int64_t, int64_t);                  \
  template void lm_head_backward<F>(F*, F*, const F*, const F*, const F*, int64_t, int64_t, int64_t);      \
  template void matvec_plain<F>(F*, const F*, const F*, const F*, int64_t, int64_t);

TS_GPT_OPS(float)
TS_GPT_OPS(double)
#undef TS_GPT_OPS

}  // namespace ts::train
