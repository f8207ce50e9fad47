// train/ops.cpp: forward ops and their hand-written backward (see ops.hpp for the formulas).
#include "train/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "exact/matmul.hpp"

// OpenBLAS's double-precision entry point (the float one is reached through ts::gemm).
extern "C" void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                       const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
                       const double* beta, double* c, const int* ldc);

namespace ts::train {

// ---------------------------------------------------------------- Rng (xoshiro256**)
Rng::Rng(uint64_t seed) {
  // splitmix64 spreads one seed over the four words of state
  for (auto& w : s) {
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    w = z ^ (z >> 31);
  }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Rng::next() {
  const uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

// ---------------------------------------------------------------- mm
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
template <>
void mm<float>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, const float* B, float beta,
               float* C) {
  ts::gemm(tb ? 'T' : 'N', ta ? 'T' : 'N', N, M, K, 1.0f, B, tb ? K : N, A, ta ? M : K, beta, C, N);
}

template <>
void mm<double>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double* A, const double* B, double beta,
                double* C) {
  const int m = int(N), n = int(M), k = int(K), lda = int(tb ? K : N), ldb = int(ta ? M : K), ldc = int(N);
  const char tA = tb ? 'T' : 'N', tB = ta ? 'T' : 'N';
  const double one = 1.0;
  dgemm_(&tA, &tB, &m, &n, &k, &one, B, &lda, A, &ldb, &beta, C, &ldc);
}

// ---------------------------------------------------------------- embedding
template <class F>
void embedding_forward(F* out, const int64_t* ids, const F* table, const F* pe, int64_t BT, int64_t T, int64_t C,
                       F scale) {
  for (int64_t n = 0; n < BT; ++n) {
    const F* row = table + ids[n] * C;
    const F* pos = pe + (n % T) * C;
    F* o = out + n * C;
    for (int64_t c = 0; c < C; ++c) o[c] = row[c] * scale + pos[c];
  }
}

template <class F>
void embedding_backward(F* dtable, const F* dout, const int64_t* ids, int64_t BT, int64_t C, F scale) {
  for (int64_t n = 0; n < BT; ++n) {
    F* d = dtable + ids[n] * C;
    const F* g = dout + n * C;
    for (int64_t c = 0; c < C; ++c) d[c] += scale * g[c];
  }
}

// ---------------------------------------------------------------- linear
template <class F>
void linear_forward(F* out, const F* x, const F* W, const F* b, int64_t N, int64_t I, int64_t O) {
  // out (N,O) = b broadcast, then += x (N,I) W^T (I,O)
  for (int64_t n = 0; n < N; ++n) std::copy_n(b, O, out + n * O);
  mm<F>(false, true, N, O, I, x, W, F(1), out);
}

template <class F>
void linear_backward(F* dx, F* dW, F* db, const F* dout, const F* x, const F* W, int64_t N, int64_t I, int64_t O) {
  // dx (N,I) += dout (N,O) W (O,I)
  if (dx) mm<F>(false, false, N, I, O, dout, W, F(1), dx);
  // dW (O,I) += dout^T (O,N) x (N,I)
  mm<F>(true, false, O, I, N, dout, x, F(1), dW);
  // db (O) += column sums of dout
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) db[o] += dout[n * O + o];
}

// ---------------------------------------------------------------- LayerNorm
template <class F>
void layernorm_forward(F* y, F* mean, F* rstd, const F* x, const F* a, const F* b, int64_t N, int64_t C, F eps,
                       Variance v) {
  const F d = F(v == Variance::Biased ? C : C - 1);
  for (int64_t n = 0; n < N; ++n) {
    const F* xr = x + n * C;
    // 1) mean and sum of squares, 2) rstd, 3) scale and shift
    F mu = 0;
    for (int64_t c = 0; c < C; ++c) mu += xr[c];
    mu /= F(C);
    F ss = 0;
    for (int64_t c = 0; c < C; ++c) ss += (xr[c] - mu) * (xr[c] - mu);
    const F r = F(1) / std::sqrt(ss / d + eps);
    F* yr = y + n * C;
    if (v == Variance::Biased)  // nn.LayerNorm's twin rounds (a (x - mu)) rstd
      for (int64_t c = 0; c < C; ++c) yr[c] = a[c] * (xr[c] - mu) * r + b[c];
    else  // article 002's twin rounds a ((x - mu) rstd)
      for (int64_t c = 0; c < C; ++c) yr[c] = a[c] * ((xr[c] - mu) * r) + b[c];
    mean[n] = mu;
    rstd[n] = r;
  }
}

template <class F>
void layernorm_backward(F* dx, F* da, F* db, const F* dy, const F* x, const F* mean, const F* rstd, const F* a,
                        int64_t N, int64_t C, Variance v) {
  const F d = F(v == Variance::Biased ? C : C - 1);
  for (int64_t n = 0; n < N; ++n) {
    const F* xr = x + n * C;
    const F* g_out = dy + n * C;
    const F mu = mean[n], r = rstd[n];
    // two sums over the row: mean(g) and sum(g * xhat) / d, g = dy * a
    F g_mean = 0, g_xhat = 0;
    for (int64_t c = 0; c < C; ++c) {
      const F xhat = (xr[c] - mu) * r, g = g_out[c] * a[c];
      g_mean += g;
      g_xhat += g * xhat;
      da[c] += g_out[c] * xhat;
      db[c] += g_out[c];
    }
    g_mean /= F(C);
    g_xhat /= d;
    F* dxr = dx + n * C;
    for (int64_t c = 0; c < C; ++c) {
      const F xhat = (xr[c] - mu) * r;
      dxr[c] += r * (g_out[c] * a[c] - g_mean - xhat * g_xhat);
    }
  }
}

// ---------------------------------------------------------------- dropout
template <class F>
void dropout_forward(F* y, F* keep, const F* x, int64_t n, double p, bool training, Rng& rng) {
  if (!training || p <= 0.0) {
    std::copy_n(x, n, y);
    std::fill_n(keep, n, F(1));
    return;
  }
  // two draws per 64-bit number: keep when a 32-bit uniform integer u >= p * 2^32
  const F scale = F(1.0 / (1.0 - p));
  const uint64_t cut = static_cast<uint64_t>(p * 4294967296.0);
  for (int64_t i = 0; i < n; i += 2) {
    const uint64_t r = rng.next();
    keep[i] = (r & 0xffffffffull) >= cut ? scale : F(0);
    y[i] = x[i] * keep[i];
    if (i + 1 < n) {
      keep[i + 1] = (r >> 32) >= cut ? scale : F(0);
      y[i + 1] = x[i + 1] * keep[i + 1];
    }
  }
}

template <class F>
void dropout_backward(F* dx, const F* dy, const F* keep, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * keep[i];
}

// ---------------------------------------------------------------- residual
template <class F>
void residual_forward(F* y, const F* x, const F* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + r[i];
}

// ---------------------------------------------------------------- merge heads
template <class F>
void merge_heads(F* out, const F* x, int64_t B, int64_t T, int64_t H, int64_t D) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        std::copy_n(x + ((b * H + h) * T + t) * D, D, out + (b * T + t) * H * D + h * D);
}

template <class F>
void merge_heads_backward(F* dx, const F* dout, int64_t B, int64_t T, int64_t H, int64_t D) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        F* d = dx + ((b * H + h) * T + t) * D;
        const F* g = dout + (b * T + t) * H * D + h * D;
        for (int64_t i = 0; i < D; ++i) d[i] += g[i];
      }
}

// ---------------------------------------------------------------- masked softmax
template <class F>
void masked_softmax_forward(F* p, const F* scores, const F* mask, int64_t B, int64_t H, int64_t T, int64_t S) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t r = (b * H + h) * T + t;
        const F* s = scores + r * S;
        const F* m = mask ? mask + (b * T + t) * S : nullptr;
        F* pr = p + r * S;
        // scores + mask * -1e9, then the max is subtracted before exp (ch03)
        F mx = -std::numeric_limits<F>::infinity();
        for (int64_t j = 0; j < S; ++j) {
          pr[j] = m ? s[j] + m[j] * F(-1e9) : s[j];
          mx = std::max(mx, pr[j]);
        }
        F sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          pr[j] = std::exp(pr[j] - mx);
          sum += pr[j];
        }
        const F inv = F(1) / sum;
        for (int64_t j = 0; j < S; ++j) pr[j] *= inv;
      }
}

template <class F>
void masked_softmax_backward(F* dscores, const F* dp, const F* p, int64_t B, int64_t H, int64_t T, int64_t S) {
  const int64_t rows = B * H * T;
  for (int64_t r = 0; r < rows; ++r) {
    const F* pr = p + r * S;
    const F* g = dp + r * S;
    F dot = 0;
    for (int64_t j = 0; j < S; ++j) dot += g[j] * pr[j];
    F* d = dscores + r * S;
    for (int64_t j = 0; j < S; ++j) d[j] += pr[j] * (g[j] - dot);
  }
}

// ---------------------------------------------------------------- attention
// The per-(b,h) products are tiny here (T, S <= 8, D = 16): plain loops beat a BLAS call each.
template <class F>
void attention_forward(F* out, F* p, F* keep, const F* q, const F* k, const F* v, const F* mask, int64_t B,
                       int64_t H, int64_t T, int64_t S, int64_t D, F scale, double dropout, bool training, Rng& rng) {
  // 1) scores = q k^T * scale   (B,H,T,S), written into p
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t t = 0; t < T; ++t) {
      const F* qr = q + (bh * T + t) * D;
      F* sr = p + (bh * T + t) * S;
      for (int64_t s = 0; s < S; ++s) {
        const F* kr = k + (bh * S + s) * D;
        F acc = 0;
        for (int64_t d = 0; d < D; ++d) acc += qr[d] * kr[d];
        sr[s] = acc * scale;
      }
    }
  // 2) p = masked_softmax(scores)   (in place)
  masked_softmax_forward(p, p, mask, B, H, T, S);
  // 3) keep = dropout mask   4) out = (p * keep) v   (B,H,T,D)
  thread_local std::vector<F> pd;  // scratch kept per thread: no allocation per call
  pd.resize(static_cast<size_t>(B * H * T * S));
  dropout_forward(pd.data(), keep, p, B * H * T * S, dropout, training, rng);
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t t = 0; t < T; ++t) {
      F* o = out + (bh * T + t) * D;
      std::fill_n(o, D, F(0));
      const F* pr = pd.data() + (bh * T + t) * S;
      for (int64_t s = 0; s < S; ++s) {
        const F w = pr[s];
        const F* vr = v + (bh * S + s) * D;
        for (int64_t d = 0; d < D; ++d) o[d] += w * vr[d];
      }
    }
}

template <class F>
void attention_backward(F* dq, F* dk, F* dv, const F* dout, const F* q, const F* k, const F* v, const F* p,
                        const F* keep, int64_t B, int64_t H, int64_t T, int64_t S, int64_t D, F scale) {
  std::vector<F> dp(static_cast<size_t>(T * S)), ds(static_cast<size_t>(T * S));
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const F* pb = p + bh * T * S;
    const F* kb = keep + bh * T * S;
    // 1) dpd = dout v^T  then dp = dpd * keep;   dv += (p * keep)^T dout
    for (int64_t t = 0; t < T; ++t) {
      const F* g = dout + (bh * T + t) * D;
      for (int64_t s = 0; s < S; ++s) {
        const F* vr = v + (bh * S + s) * D;
        F* dvr = dv + (bh * S + s) * D;
        const F pd = pb[t * S + s] * kb[t * S + s];
        F acc = 0;
        for (int64_t d = 0; d < D; ++d) {
          acc += g[d] * vr[d];
          dvr[d] += pd * g[d];
        }
        dp[static_cast<size_t>(t * S + s)] = acc * kb[t * S + s];
      }
    }
    // 2) ds = softmax backward (fresh buffer: the scores themselves are not kept)
    std::fill(ds.begin(), ds.end(), F(0));
    masked_softmax_backward(ds.data(), dp.data(), pb, 1, 1, T, S);
    // 3) dq += ds k * scale;  dk += ds^T q * scale
    for (int64_t t = 0; t < T; ++t) {
      const F* qr = q + (bh * T + t) * D;
      F* dqr = dq + (bh * T + t) * D;
      for (int64_t s = 0; s < S; ++s) {
        const F g = ds[static_cast<size_t>(t * S + s)] * scale;
        const F* kr = k + (bh * S + s) * D;
        F* dkr = dk + (bh * S + s) * D;
        for (int64_t d = 0; d < D; ++d) {
          dqr[d] += g * kr[d];
          dkr[d] += g * qr[d];
        }
      }
    }
  }
}

// ---------------------------------------------------------------- cross-entropy
template <class F>
void cross_entropy_forward(F* loss, F* probs, const F* logits, const int64_t* y, int64_t N, int64_t V, int64_t pad,
                           F eps) {
  for (int64_t n = 0; n < N; ++n) {
    const F* l = logits + n * V;
    F* pr = probs + n * V;
    // log p = logits - max - log(sum exp(logits - max))
    F mx = l[0];
    for (int64_t v = 1; v < V; ++v) mx = std::max(mx, l[v]);
    F sum = 0;
    for (int64_t v = 0; v < V; ++v) {
      pr[v] = std::exp(l[v] - mx);
      sum += pr[v];
    }
    const F lse = mx + std::log(sum);
    for (int64_t v = 0; v < V; ++v) pr[v] /= sum;
    if (y[n] == pad) {
      loss[n] = 0;
      continue;
    }
    // -sum_v q_v log p_v with q = (1 - eps) onehot + eps / V
    F smooth = 0;
    if (eps != F(0))
      for (int64_t v = 0; v < V; ++v) smooth += lse - l[v];
    loss[n] = (F(1) - eps) * (lse - l[y[n]]) + eps / F(V) * smooth;
  }
}

template <class F>
void cross_entropy_backward(F* dlogits, const F* probs, const int64_t* y, const F* dloss, int64_t N, int64_t V,
                            int64_t pad, F eps) {
  for (int64_t n = 0; n < N; ++n) {
    if (y[n] == pad) continue;
    const F* pr = probs + n * V;
    F* d = dlogits + n * V;
    const F g = dloss[n], off = eps / F(V);
    for (int64_t v = 0; v < V; ++v) d[v] += (pr[v] - off - (v == y[n] ? F(1) - eps : F(0))) * g;
  }
}

// ---------------------------------------------------------------- explicit instantiations
#define TS_TRAIN_OPS(F)                                                                                        \
  template void embedding_forward<F>(F*, const int64_t*, const F*, const F*, int64_t, int64_t, int64_t, F);   \
  template void embedding_backward<F>(F*, const F*, const int64_t*, int64_t, int64_t, F);                     \
  template void linear_forward<F>(F*, const F*, const F*, const F*, int64_t, int64_t, int64_t);               \
  template void linear_backward<F>(F*, F*, F*, const F*, const F*, const F*, int64_t, int64_t, int64_t);      \
  template void layernorm_forward<F>(F*, F*, F*, const F*, const F*, const F*, int64_t, int64_t, F, Variance); \
  template void layernorm_backward<F>(F*, F*, F*, const F*, const F*, const F*, const F*, const F*, int64_t,  \
                                      int64_t, Variance);                                                     \
  template void dropout_forward<F>(F*, F*, const F*, int64_t, double, bool, Rng&);                            \
  template void dropout_backward<F>(F*, const F*, const F*, int64_t);                                         \
  template void residual_forward<F>(F*, const F*, const F*, int64_t);                                         \
  template void merge_heads<F>(F*, const F*, int64_t, int64_t, int64_t, int64_t);                             \
  template void merge_heads_backward<F>(F*, const F*, int64_t, int64_t, int64_t, int64_t);                    \
  template void masked_softmax_forward<F>(F*, const F*, const F*, int64_t, int64_t, int64_t, int64_t);        \
  template void masked_softmax_backward<F>(F*, const F*, const F*, int64_t, int64_t, int64_t, int64_t);       \
  template void attention_forward<F>(F*, F*, F*, const F*, const F*, const F*, const F*, int64_t, int64_t,    \
                                     int64_t, int64_t, int64_t, F, double, bool, Rng&);                       \
  template void attention_backward<F>(F*, F*, F*, const F*, const F*, const F*, const F*, const F*, const F*, \
                                      int64_t, int64_t, int64_t, int64_t, int64_t, F);                        \
  template void cross_entropy_forward<F>(F*, F*, const F*, const int64_t*, int64_t, int64_t, int64_t, F);     \
  template void cross_entropy_backward<F>(F*, const F*, const int64_t*, const F*, int64_t, int64_t, int64_t, F);

TS_TRAIN_OPS(float)
TS_TRAIN_OPS(double)
#undef TS_TRAIN_OPS

}  // namespace ts::train
