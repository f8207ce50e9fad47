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

// ---------------------------------------------------------------- GELU on the SIMD route (training in float)
// encoder_ops.hpp's gelu_forward / gelu_backward on the active route (src/fast/simd/), erf to
// ~5e-7 (fast/simd/erf_fit.hpp) instead of std::erf per value; under --naive, or when a probe of a
// few points finds that gelu_forward / gelu_backward no longer compute what the route does (an
// edit of encoder_ops.cpp: the ReLU exercise), those plain loops, so the edit is what runs.
// y = x Phi(x)   (n)
void gelu_forward_fast(float* y, const float* x, int64_t n);
// dx += dy * (Phi(x) + x phi(x))   (n)
void gelu_backward_fast(float* dx, const float* dy, const float* x, int64_t n);

// ---------------------------------------------------------------- one token at a time (gpt_step)
// Generation only (no backward): with one row, x W^T is a matrix-vector product, bound by
// reading W once from memory, not by arithmetic.
// y = W x + b      x (K), W (N,K), b (N) or null -> y (N)   (linear_forward with N = 1)
// the plain loop: the reference, and what --naive runs
template <class F>
void matvec_plain(F* y, const F* x, const F* W, const F* b, int64_t N, int64_t K);
// the same on the active SIMD route (src/fast/simd/: few_rows with one row, W streamed once);
// a large W (the LM head's V rows) is split by rows over the course's thread pool
// (fast/thread_pool.hpp). Under --naive: matvec_plain.
void matvec(float* y, const float* x, const float* W, const float* b, int64_t N, int64_t K);
// one query against the S keys and values cached so far (one head):
// out = softmax(Kc q * scale) Vc      q (D), Kc, Vc (S,D) -> out (D); p (S) scratch
void attend_cached(float* out, float* p, const float* q, const float* Kc, const float* Vc, int64_t S, int64_t D,
                   float scale);

}  // namespace ts::train
