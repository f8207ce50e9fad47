// train/ops.hpp: training ops on plain arrays, each forward beside its backward (introduced
// in ch11, whose model is now ch10's EncoderDecoder with the backward written below each module's
// forward, src/transformer/annotated.cpp). What is left here serves ch12's GPT (train/gpt.cpp),
// the cross-entropy of ch13's classifier and the per-op twin check (tests/tools/train_dump.cpp).
// The style is llm.c's train_gpt2.c: one *_backward per forward op, opening with its shape
// contract and the formula of its gradient; every backward ADDS (+=) into its gradient
// buffers, as autograd does for a tensor used twice, so callers zero them once.
//
// F is float (training) or double (the finite-difference check of --check-grads).
// Plain row-major arrays: x (N,C) means N rows of C values, N = B*T flattened.
// Masks follow article 004: 1 = HIDE (added as mask * -1e9 to the scores).
#pragma once

#include <cstdint>
#include <string>

namespace ts::train {

// A small, fast, seedable generator for dropout masks (xoshiro256**): training draws
// millions of numbers per second; the torch-exact mt19937 of src/exact/rng.hpp is not needed
// here, because the twin checks run with dropout off.
struct Rng {
  uint64_t s[4];
  explicit Rng(uint64_t seed = 0);
  uint64_t next();
  double uniform();  // [0, 1)
};

// row-major C (M,N) = op(A) op(B) + beta * C; op(A) (M,K) (stored (K,M) if ta), op(B) (K,N)
// (stored (N,K) if tb). float -> OpenBLAS sgemm through ts::gemm (honours --naive);
// double -> OpenBLAS dgemm.
template <class F>
void mm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const F* A, const F* B, F beta, F* C);

// ---------------------------------------------------------------- embedding
// out[n] = table[ids[n]] * scale + pe[n % T]      ids (B,T), table (V,C), pe (T,C) -> out (B*T,C)
template <class F>
void embedding_forward(F* out, const int64_t* ids, const F* table, const F* pe, int64_t BT, int64_t T, int64_t C, F scale);
// dtable[ids[n]] += scale * dout[n]   (the positions pe are a fixed buffer: no gradient)
template <class F>
void embedding_backward(F* dtable, const F* dout, const int64_t* ids, int64_t BT, int64_t C, F scale);

// ---------------------------------------------------------------- linear
// out = x W^T + b      x (N,I), W (O,I), b (O) -> out (N,O)
template <class F>
void linear_forward(F* out, const F* x, const F* W, const F* b, int64_t N, int64_t I, int64_t O);
// dx += dout W   (N,I);   dW += dout^T x   (O,I);   db += sum_n dout[n]   (O).   dx may be null.
template <class F>
void linear_backward(F* dx, F* dW, F* db, const F* dout, const F* x, const F* W, int64_t N, int64_t I, int64_t O);

// ---------------------------------------------------------------- LayerNorm (article 002; nn.LayerNorm)
// The course's two LayerNorms differ only in the divisor of the variance:
//   Variance::Unbiased  article 002's LayerNorm (ch11, ch12): sum (x - mu)^2 / (C-1)
//   Variance::Biased    torch's nn.LayerNorm (article 000's encoder, ch13): sum (x - mu)^2 / C
enum class Variance { Unbiased, Biased };
// y = a * (x - mu) * rstd + b,  rstd = 1 / sqrt(sum (x - mu)^2 / d + eps),  d = C-1 (unbiased) or C (biased)
// x (N,C), a, b (C) -> y (N,C); mean, rstd (N) kept for backward
template <class F>
void layernorm_forward(F* y, F* mean, F* rstd, const F* x, const F* a, const F* b, int64_t N, int64_t C, F eps,
                       Variance v = Variance::Unbiased);
// xhat = (x - mu) rstd, g = dy * a, d as in the forward:
// dx += rstd (g - mean(g) - xhat * sum(g xhat) / d)   (N,C)
// da += sum_n dy xhat   (C);   db += sum_n dy   (C)
template <class F>
void layernorm_backward(F* dx, F* da, F* db, const F* dy, const F* x, const F* mean, const F* rstd, const F* a,
                        int64_t N, int64_t C, Variance v = Variance::Unbiased);

// ---------------------------------------------------------------- dropout
// keep[i] = (u_i >= p) / (1 - p), u_i uniform in [0,1) (32 bits);  y = x * keep      (n); p == 0 or !training: y = x, keep = 1
template <class F>
void dropout_forward(F* y, F* keep, const F* x, int64_t n, double p, bool training, Rng& rng);
// dx += dy * keep   (n)
template <class F>
void dropout_backward(F* dx, const F* dy, const F* keep, int64_t n);

// ---------------------------------------------------------------- residual add
// y = x + r   (n)
template <class F>
void residual_forward(F* y, const F* x, const F* r, int64_t n);

// ---------------------------------------------------------------- multi-head merge
// out[b,t,h*D+d] = x[b,h,t,d]      (B,H,T,D) -> (B,T,C): transpose(1,2).contiguous().view(B,T,C)
template <class F>
void merge_heads(F* out, const F* x, int64_t B, int64_t T, int64_t H, int64_t D);
// dx[b,h,t,d] += dout[b,t,h*D+d]
template <class F>
void merge_heads_backward(F* dx, const F* dout, int64_t B, int64_t T, int64_t H, int64_t D);

// ---------------------------------------------------------------- softmax with a mask
// p[r] = softmax(scores[r] + mask * -1e9) over the last dim    scores, p (B,H,T,S); mask (B,T,S),
// 1 = hide, shared by the H heads (the article's (B,1,T,S) broadcast), or null
template <class F>
void masked_softmax_forward(F* p, const F* scores, const F* mask, int64_t B, int64_t H, int64_t T, int64_t S);
// dscores += p * (dp - sum_s dp p)   (B,H,T,S). A hidden score has p = 0: no gradient reaches it.
template <class F>
void masked_softmax_backward(F* dscores, const F* dp, const F* p, int64_t B, int64_t H, int64_t T, int64_t S);

// ---------------------------------------------------------------- scaled dot-product attention
// scores = q k^T * scale;  p = masked_softmax(scores);  pd = dropout(p);  out = pd v
// q (B,H,T,D), k, v (B,H,S,D), mask (B,T,S) or null -> out (B,H,T,D); kept: p, keep (B,H,T,S)
// (scale = 1/sqrt(D) in the article; 1 for the "drop the sqrt(d) scaling" exercise)
template <class F>
void attention_forward(F* out, F* p, F* keep, const F* q, const F* k, const F* v, const F* mask, int64_t B,
                       int64_t H, int64_t T, int64_t S, int64_t D, F scale, double dropout, bool training, Rng& rng);
// dpd = dout v^T;  dv += pd^T dout;  dp = dpd * keep;  ds = softmax_backward(dp);
// dq += ds k * scale;  dk += ds^T q * scale              (shapes as in the forward)
template <class F>
void attention_backward(F* dq, F* dk, F* dv, const F* dout, const F* q, const F* k, const F* v, const F* p,
                        const F* keep, int64_t B, int64_t H, int64_t T, int64_t S, int64_t D, F scale);

// ---------------------------------------------------------------- cross-entropy with a padding mask
// q = (1 - eps) onehot(y) + eps / V  (eps = label smoothing, 0 in the article);  p = softmax(logits)
// loss[n] = -sum_v q_v log p_v for a real target, 0 where y[n] == pad (the article's loss_ * mask)
// logits (N,V), y (N) -> loss (N); probs (N,V) kept for backward
template <class F>
void cross_entropy_forward(F* loss, F* probs, const F* logits, const int64_t* y, int64_t N, int64_t V, int64_t pad,
                           F eps);
// dlogits += (p - q) * dloss[n]   (N,V);  rows with y[n] == pad get nothing
// (dloss[n] is 1 / (B*T) for the article's reduce_mean, 1 / (#real tokens) for the per-token mean)
template <class F>
void cross_entropy_backward(F* dlogits, const F* probs, const int64_t* y, const F* dloss, int64_t N, int64_t V,
                            int64_t pad, F eps);

}  // namespace ts::train
