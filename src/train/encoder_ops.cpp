// train/encoder_ops.cpp: article 000's encoder ops and their backward (see encoder_ops.hpp).
#include "train/encoder_ops.hpp"

#include <cmath>

namespace ts::train {

template <class F>
void gelu_forward(F* y, const F* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * F(0.5) * (F(1) + std::erf(x[i] * F(M_SQRT1_2)));
}

template <class F>
void gelu_backward(F* dx, const F* dy, const F* x, int64_t n) {
  const F inv_sqrt_2pi = F(0.3989422804014327);
  for (int64_t i = 0; i < n; ++i) {
    const F cdf = F(0.5) * (F(1) + std::erf(x[i] * F(M_SQRT1_2)));
    const F pdf = inv_sqrt_2pi * std::exp(F(-0.5) * x[i] * x[i]);
    dx[i] += dy[i] * (cdf + x[i] * pdf);
  }
}

template <class F>
void positions_backward(F* dpos, const F* dout, int64_t B, int64_t T, int64_t C) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) dpos[t * C + c] += dout[(b * T + t) * C + c];
}

#define TS_ENCODER_OPS(F)                                                                                          \
  template void gelu_forward<F>(F*, const F*, int64_t);                                                            \
  template void gelu_backward<F>(F*, const F*, const F*, int64_t);                                                 \
  template void positions_backward<F>(F*, const F*, int64_t, int64_t, int64_t);

TS_ENCODER_OPS(float)
TS_ENCODER_OPS(double)
#undef TS_ENCODER_OPS

}  // namespace ts::train
