// train/gpt_ops.cpp: see gpt_ops.hpp for the formulas.
#include "train/gpt_ops.hpp"

#include <cmath>

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

#define TS_GPT_OPS(F)                                                                                   \
  template void split_qkv<F>(F*, F*, F*, const F*, int64_t, int64_t, int64_t, int64_t);                 \
  template void split_qkv_backward<F>(F*, const F*, const F*, const F*, int64_t, int64_t, int64_t, int64_t); \
  template void lm_head_forward<F>(F*, const F*, const F*, int64_t, int64_t, int64_t);                  \
  template void lm_head_backward<F>(F*, F*, const F*, const F*, const F*, int64_t, int64_t, int64_t);

TS_GPT_OPS(float)
TS_GPT_OPS(double)
#undef TS_GPT_OPS

}  // namespace ts::train
