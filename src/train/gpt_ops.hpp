// train/gpt_ops.hpp: the forward ops ch12's decoder-only model needs beyond ops.hpp, each
// beside its backward (introduced in ch12). Same rules as ops.hpp: the shape contract and the
// gradient formula first, every backward ADDS (+=) into its gradient buffers.
#pragma once

#include <cstdint>

#include "train/encoder_ops.hpp"

namespace ts::train {

// Learned positions (positions_backward) and GELU (gelu_forward, gelu_backward) are article
// 000's encoder ops, shared with ch13: train/encoder_ops.hpp. (One definition each: two
// templates of the same name and signature in two files would silently be one.)

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
