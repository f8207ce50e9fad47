// train/gpt_ops.hpp: the forward ops ch12's decoder-only model needs beyond ops.hpp, each
// beside its backward (introduced in ch12). Same rules as ops.hpp: the shape contract and the
// gradient formula first, every backward ADDS (+=) into its gradient buffers.
#pragma once

#include <cstdint>

namespace ts::train {

// ---------------------------------------------------------------- learned positions
// (the token lookup is ops.hpp's embedding_forward with scale 1 and the table wpe as "pe")
// dwpe[t] += sum_b dout[b,t]      dout (B*T,C) -> dwpe (T_ctx,C), rows 0..T-1
template <class F>
void positions_backward(F* dwpe, const F* dout, int64_t BT, int64_t T, int64_t C);

// ---------------------------------------------------------------- GELU (exact, nn.GELU())
// y = x Phi(x),  Phi(x) = (1 + erf(x / sqrt 2)) / 2      (n)
template <class F>
void gelu_forward(F* y, const F* x, int64_t n);
// dx += dy (Phi(x) + x phi(x)),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)      (n)
template <class F>
void gelu_backward(F* dx, const F* dy, const F* x, int64_t n);

// ---------------------------------------------------------------- fused q, k, v (GPT-2's c_attn)
// qkv (B,T,3C) = [q | k | v] -> q, k, v (B,H,T,D) each: qkv.split(C, dim=2), then
// view(B,T,H,D).transpose(1,2) on each
template <class F>
void split_qkv(F* q, F* k, F* v, const F* qkv, int64_t B, int64_t T, int64_t H, int64_t D);
// dqkv[b,t, j*C + h*D + d] += d{q,k,v}[b,h,t,d]   (a permutation: the inverse one)
template <class F>
void split_qkv_backward(F* dqkv, const F* dq, const F* dk, const F* dv, int64_t B, int64_t T, int64_t H, int64_t D);

// ---------------------------------------------------------------- the LM head (no bias)
// logits = x W^T      x (N,C), W (V,C) -> (N,V)
template <class F>
void lm_head_forward(F* logits, const F* x, const F* W, int64_t N, int64_t C, int64_t V);
// dx += dlogits W   (N,C);   dW += dlogits^T x   (V,C)   (tied: W is wte, so dW is dwte)
template <class F>
void lm_head_backward(F* dx, F* dW, const F* dlogits, const F* x, const F* W, int64_t N, int64_t C, int64_t V);

}  // namespace ts::train
