// train/encoder_ops.hpp: the ops article 000's encoder adds to train/ops.hpp, each forward
// beside its backward (introduced in ch13; ch12's GPT uses them; ch13 now trains the modules of
// transformer/nn.hpp, whose pooling is EncoderClassifier::pool). Same conventions as ops.hpp: the gradient formula
// first, every backward ADDS (+=) into its gradient buffers, plain row-major arrays.
#pragma once

#include <cstdint>

namespace ts::train {

// ---------------------------------------------------------------- GELU (article 000's FFN)
// y = x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2))   (n)   (nn.GELU(), the exact form)
template <class F>
void gelu_forward(F* y, const F* x, int64_t n);
// dx += dy * (Phi(x) + x * phi(x)),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)   (n)
template <class F>
void gelu_backward(F* dx, const F* dy, const F* x, int64_t n);

// ---------------------------------------------------------------- nn.LayerNorm (article 000)
// ops.hpp's layernorm_forward / layernorm_backward with Variance::Biased (divide by C, as torch)

// ---------------------------------------------------------------- learned positions
// out[n] = tok[ids[n]] + pos[n % T]        ids (B,T), tok (V,C), pos (>= T, C) -> out (B*T,C)
// (forward: ops.hpp's embedding_forward with scale 1 and pe = pos)
// dpos[t] += sum_b dout[b*T + t]   (T,C): unlike the sinusoidal table, these rows learn
template <class F>
void positions_backward(F* dpos, const F* dout, int64_t B, int64_t T, int64_t C);

}  // namespace ts::train
