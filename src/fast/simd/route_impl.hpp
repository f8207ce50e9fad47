// route_impl.hpp: the fast path's SIMD kernels, written once for every vector width.
//
// Included only by route_avx512.cpp, route_avx2.cpp (x86-64) and route_neon.cpp (arm64), each compiled with exactly its
// ISA's flags; each defines TS_ROUTE_ARCH (an xsimd architecture) and builds its Route
// table from the templates below. Everything here has internal linkage, so the two
// copies (one per ISA) can never be mixed up by the linker.
//
// xsimd::batch<float, A> is W floats in one vector register: W = 16 (AVX-512), 8 (AVX2), 4 (NEON).
// Tails shorter than W go through a W-float buffer padded with a neutral value.
#pragma once

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "exact/kernels.hpp"  // kernel_path(), naive_kernels.gelu (--naive)
#include "fast/simd/erf_fit.hpp"
#include "fast/simd/route.hpp"
#include "fast/simd/xsimd_compat.hpp"  // hadd / reduce_add, bitwise_cast: xsimd 8 and 13

namespace ts::simd {
namespace {

using A = TS_ROUTE_ARCH;
using V = xsimd::batch<float, A>;
constexpr int64_t W = int64_t(V::size);
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- loads and stores of a tail of k < W floats ----
inline V load_tail(const float* p, int64_t k, float fill) {
  alignas(64) float buf[W];
  std::fill_n(buf, W, fill);
  std::copy_n(p, k, buf);
  return V::load_aligned(buf);
}
inline void store_tail(float* p, int64_t k, V v) {
  alignas(64) float buf[W];
  v.store_aligned(buf);
  std::copy_n(buf, k, p);
}
inline float hmax(V v) {
  alignas(64) float buf[W];
  v.store_aligned(buf);
  return *std::max_element(buf, buf + W);
}

// e^x to ~1e-7 relative, branch-free: x = n ln2 + r, |r| <= ln2/2; e^r by its Taylor
// polynomial (Cephes' coefficients); 2^n written into the exponent bits. 0 below -87.33
// (and for -inf). The scalar route's exp_fast is the same formula.
inline V exp_v(V x) {
  const auto tiny = x < V(-87.33f);
  const V xc = xsimd::min(xsimd::max(x, V(-87.33f)), V(88.72f));
  const V n = xsimd::nearbyint(xc * V(1.44269504088896341f));  // round(x / ln 2)
  V r = xsimd::fma(n, V(-0.693359375f), xc);                      // x - n ln2, in two
  r = xsimd::fma(n, V(2.12194440e-4f), r);                         // parts for accuracy
  V p(1.9875691500e-4f);
  p = xsimd::fma(p, r, V(1.3981999507e-3f));
  p = xsimd::fma(p, r, V(8.3334519073e-3f));
  p = xsimd::fma(p, r, V(4.1665795894e-2f));
  p = xsimd::fma(p, r, V(1.6666665459e-1f));
  p = xsimd::fma(p, r, V(5.0000001201e-1f));
  p = xsimd::fma(p, r * r, r) + V(1.0f);
  const V two_n = compat::float_bits((xsimd::to_int(n) + 127) << 23);
  return xsimd::select(tiny, V(0.0f), p * two_n);
}

// GELU(x) = x/2 (1 + erf(x / sqrt 2)), erf from erf_fit.hpp with the 1 / sqrt 2 folded into its
// coefficients (erf_fit::gelu_fold, computed at compile time): no product x / sqrt 2, and
// x/2 + (x/2) erf is one fma. Clamped to the fit's interval; +-1 where erf is +-1 to float
// precision, which keeps GELU(x) = x and 0 exactly in the tails, as torch has it.
constexpr erf_fit::GeluFold kGeluErf = erf_fit::gelu_fold();

inline V erf_of_x_over_sqrt2(V x) {
  const V xc = xsimd::min(xsimd::max(x, V(-kGeluErf.clamp)), V(kGeluErf.clamp));
  const V x2 = xc * xc;
  V p(kGeluErf.p[0]);
  for (int i = 1; i < erf_fit::kNP; ++i) p = xsimd::fma(x2, p, V(kGeluErf.p[i]));
  V q(kGeluErf.q[0]);
  for (int i = 1; i < erf_fit::kNQ; ++i) q = xsimd::fma(x2, q, V(kGeluErf.q[i]));
  const V e = xc * p / q;
  return xsimd::select(xsimd::abs(x) >= V(kGeluErf.saturate), xsimd::copysign(V(1.0f), x), e);
}

inline V gelu_v(V x) {
  const V half_x = V(0.5f) * x;
  return xsimd::fma(half_x, erf_of_x_over_sqrt2(x), half_x);
}

// ================================================================================
// Row kernels
// ================================================================================

// x, y (rows, n); mask (rows, n) or nullptr
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, const float* mask) {
  const int64_t nW = n / W * W;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    const float* m = mask ? mask + r * n : nullptr;
    // 1) out = masked_fill(in, mask == 0, -inf); the row max          (n)
    V mx(kNegInf);
    for (int64_t i = 0; i < n; i += W) {
      const bool full = i < nW;
      V v = full ? V::load_unaligned(in + i) : load_tail(in + i, n - i, kNegInf);
      if (m) v = xsimd::select((full ? V::load_unaligned(m + i) : load_tail(m + i, n - i, 1.0f)) == V(0.0f), V(kNegInf), v);
      if (full) v.store_unaligned(out + i); else store_tail(out + i, n - i, v);
      mx = xsimd::max(mx, v);
    }
    const float max = hmax(mx);
    if (max == kNegInf) {  // every entry hidden: exp(-inf - -inf) = NaN in torch too
      std::fill_n(out, n, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    // 2) out = exp(out - max), summed                                 (n)
    const V vmax(max);
    V sum(0.0f);
    for (int64_t i = 0; i < n; i += W) {
      const bool full = i < nW;
      const V e = exp_v((full ? V::load_unaligned(out + i) : load_tail(out + i, n - i, kNegInf)) - vmax);
      if (full) e.store_unaligned(out + i); else store_tail(out + i, n - i, e);
      sum += e;  // padding lanes hold exp(-inf) = 0
    }
    // 3) out /= sum                                                   (n)
    const V inv(1.0f / compat::reduce_add(sum));
    for (int64_t i = 0; i < n; i += W) {
      if (i < nW) (V::load_unaligned(out + i) * inv).store_unaligned(out + i);
      else store_tail(out + i, n - i, load_tail(out + i, n - i, 0.0f) * inv);
    }
  }
}

// x, y (rows, n); gamma, beta (n)
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma, const float* beta,
                     float eps) {
  const int64_t nW = n / W * W;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    // 1) mean = sum(x) / n
    V s(0.0f);
    for (int64_t i = 0; i < nW; i += W) s += V::load_unaligned(in + i);
    if (nW < n) s += load_tail(in + nW, n - nW, 0.0f);
    const float mean_s = compat::reduce_add(s) / static_cast<float>(n);
    const V mean(mean_s);
    // 2) var = sum((x - mean)^2) / n   (biased, as torch)
    V q(0.0f);
    for (int64_t i = 0; i < nW; i += W) {
      const V d = V::load_unaligned(in + i) - mean;
      q = xsimd::fma(d, d, q);
    }
    if (nW < n) {
      const V d = load_tail(in + nW, n - nW, mean_s) - mean;  // padding lanes: 0
      q = xsimd::fma(d, d, q);
    }
    const V rstd(1.0f / std::sqrt(compat::reduce_add(q) / static_cast<float>(n) + eps));
    // 3) y = (x - mean) * rstd * gamma + beta
    for (int64_t i = 0; i < nW; i += W) {
      const V v = xsimd::fma((V::load_unaligned(in + i) - mean) * rstd, V::load_unaligned(gamma + i), V::load_unaligned(beta + i));
      v.store_unaligned(out + i);
    }
    if (nW < n) {
      const int64_t k = n - nW;
      store_tail(out + nW, k, xsimd::fma((load_tail(in + nW, k, 0.0f) - mean) * rstd, load_tail(gamma + nW, k, 0.0f),
                                        load_tail(beta + nW, k, 0.0f)));
    }
  }
}

// x, y (rows, n), rows ld apart; bias (n) or nullptr
void bias_gelu_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t ld, const float* bias) {
  const int64_t nW = n / W * W;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * ld;
    float* out = y + r * ld;
    auto step = [&](int64_t i) {
      V v = V::load_unaligned(in + i);
      if (bias) v += V::load_unaligned(bias + i);
      gelu_v(v).store_unaligned(out + i);
    };
    int64_t i = 0;
    for (; i + 2 * W <= nW; i += 2 * W) step(i), step(i + W);  // two independent chains per pass
    for (; i < nW; i += W) step(i);
    if (nW < n) {
      V v = load_tail(in + nW, n - nW, 0.0f);
      if (bias) v += load_tail(bias + nW, n - nW, 0.0f);
      store_tail(out + nW, n - nW, gelu_v(v));
    }
  }
}

// dx += dy * (Phi(x) + x phi(x)): Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  const int64_t nW = n / W * W;
  auto grad = [](V xv) {
    const V cdf = xsimd::fma(V(0.5f), erf_of_x_over_sqrt2(xv), V(0.5f));
    const V pdf = V(0.3989422804014327f) * exp_v(V(-0.5f) * xv * xv);
    return xsimd::fma(xv, pdf, cdf);
  };
  for (int64_t i = 0; i < nW; i += W)
    xsimd::fma(V::load_unaligned(dy + i), grad(V::load_unaligned(x + i)), V::load_unaligned(dx + i)).store_unaligned(dx + i);
  if (nW < n) {
    const int64_t k = n - nW;
    store_tail(dx + nW, k, xsimd::fma(load_tail(dy + nW, k, 0.0f), grad(load_tail(x + nW, k, 0.0f)), load_tail(dx + nW, k, 0.0f)));
  }
}

// ================================================================================
// A few rows: y (R, M) += x (R, K) W^T, W streamed once
// ================================================================================
// With a few rows a product is bound by reading W from memory. W is read G rows (G
// outputs) at a time, each dotted with the R rows of x (in L1): R x G vector sums; one row of
// x (generation's matrix-vector products) takes 8 rows of W at a time: more loads in flight.
template <int R, int G = R == 1 ? 8 : 4>
void few_rows_r(const float* __restrict x, int64_t K, const float* __restrict w, int64_t M, float* __restrict y,
                int64_t ldy) {
  const int64_t KW = K / W * W;
  int64_t o = 0;
  for (; o + G <= M; o += G) {
    const float* w0 = w + o * K;
    V acc[R][G];
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < G; ++q) acc[r][q] = V(0.0f);
    for (int64_t k = 0; k < KW; k += W) {
      if constexpr (R > 1)
        for (int q = 0; q < G; ++q) __builtin_prefetch(w0 + q * K + k + 128);  // 512 bytes ahead
      V wq[G];
      for (int q = 0; q < G; ++q) wq[q] = V::load_unaligned(w0 + q * K + k);
      for (int r = 0; r < R; ++r) {
        const V xr = V::load_unaligned(x + r * K + k);
        for (int q = 0; q < G; ++q) acc[r][q] = xsimd::fma(wq[q], xr, acc[r][q]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < G; ++q) {
        float sum = compat::reduce_add(acc[r][q]);
        for (int64_t k = KW; k < K; ++k) sum = std::fma(w0[q * K + k], x[r * K + k], sum);
        y[r * ldy + o + q] += sum;
      }
  }
  for (; o < M; ++o) {
    const float* wo = w + o * K;
    for (int r = 0; r < R; ++r) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k) sum = std::fma(wo[k], x[r * K + k], sum);
      y[r * ldy + o] += sum;
    }
  }
}

void few_rows(const float* x, int64_t R, int64_t K, const float* w, int64_t M, float* y, int64_t ldy) {
  switch (R) {
    case 1: return few_rows_r<1>(x, K, w, M, y, ldy);
    case 2: return few_rows_r<2>(x, K, w, M, y, ldy);
    case 3: return few_rows_r<3>(x, K, w, M, y, ldy);
    case 4: return few_rows_r<4>(x, K, w, M, y, ldy);
    case 5: return few_rows_r<5>(x, K, w, M, y, ldy);
    case 6: return few_rows_r<6>(x, K, w, M, y, ldy);
    case 7: return few_rows_r<7>(x, K, w, M, y, ldy);
    default: return few_rows_r<8>(x, K, w, M, y, ldy);  // callers keep R <= 8
  }
}

// ================================================================================
// The packed-weight GEMM (BLIS / GotoBLAS blocking)
// ================================================================================
// W is packed once (when the FastEncoder is built) into panels of NR = NV W outputs:
//   panel p, step k: the NR floats W[NR p .. NR p + NR-1][k]   (zeros past the last output)
// x is not packed: the micro-kernel reads MR of its rows where they are. It computes an
// MR x NR tile: per k, NV vector loads of the panel, MR broadcasts of x (one from each row),
// MR NV fused multiply-adds into MR NV accumulator registers.
// Blocks: NC rows of x (in L2) x kKC steps x MCp panels (in L2); MR rows of x in L1.
// Loop order (packed_product): row blocks, k passes, panel blocks, then each MR rows of x
// against every panel of the block (the MR rows stay in L1 while the panels stream from L2).
//
// One blocking per kind of core (isa.hpp: Avx512Core), each checked with llvm-mca on the loop as
// compiled (bench/mca.py; figures from LLVM 19, in % of the same model's independent-FMA peak):
//   two-port AVX-512 (Intel SKX/ICX/SPR/EMR)  12 x 32: 24 zmm sums, 2 panel loads + 12 broadcasts
//     per 24 FMAs. Two 512-bit FMA pipes of latency 4 need >= 8 sums in flight; the 14 loads
//     fit the 2-3 load ports. llvm-mca -mcpu=sapphirerapids / icelake-server: 100 %,
//     skylake-avx512 (two FMA ports, two load ports in LLVM 19's model): 89 %.
//   double-pumped AVX-512 (AMD Zen 4/5)       6 x 64: 24 zmm sums, 4 panel loads per 24 FMAs, each
//     FMA broadcasting its x from memory itself (m32{1to16}, fma_bcast below). Zen 4 runs one zmm
//     FMA a cycle on its two 256-bit pipes, and a zmm vbroadcastss takes one of those pipes too:
//     12 x 32 spends 12 FP slots per 24 FMAs on broadcasts (llvm-mca -mcpu=znver4: 66 %), this
//     blocking none (znver4: 98 %). On a two-port core the same loop is load-bound (28 loads per
//     24 FMAs: skylake-avx512 67 % against 12 x 32's 89 %), hence two blockings; measured on a
//     two-port Zen 5 (EPYC 9005), one thread, x (128, 768) W^T (3072, 768): 12 x 32 at 248
//     GFLOP/s, this blocking at 181-185 (shared machine, best of 30).
//     Its 192 KB panels: 3 per L2 block (Zen 4: 1 MB L2).
//   AVX2 (Zen 1-3, Haswell to Alder Lake)     6 x 16: 12 ymm sums of 16 registers, 2 panel loads +
//     6 broadcasts per 12 FMAs. llvm-mca -mcpu=znver3 / skylake: 100 %.
// The blocking is meant never to change a result: every output is one chain of FMAs over k in
// order, in passes of kKC (the same for every blocking), then (c [+ bias]) + sum; MR, NR, NC, MCp
// and the loop order only choose which outputs are computed side by side. tests/test_fast_encoder.cpp
// compares every blocking this machine can run: the same bits in the Release build, last-bit
// differences (<= 7.2e-7) in the ASan build (-O2), cause not found.
constexpr int64_t kKC = 768;  // one pass when K = C = 768; fixed: it is part of every output's sum order

template <int MR_, int NV_, int64_t NC_, int64_t MCp_, bool EB_ = false>
struct Blocking {
  static constexpr bool EB = EB_;                  // x's broadcast inside each FMA (AVX-512's {1to16})
  static constexpr int MR = MR_;                   // rows of x per micro-tile
  static constexpr int NR = int(NV_ * W);          // outputs per panel
  static constexpr int NV = NV_;                   // vectors per panel step
  static constexpr int64_t NC = NC_;               // rows of x per block
  static constexpr int64_t MCp = MCp_;             // panels per block
};

// c (MR, nvalid), rows ldc apart, = [c +] [bias] + x (MR, kc) . wp (kc, NR)
//   x: MR rows of x, ldx apart; wp: one panel's kc steps; wp_next: the panel the next call
//   reads, fetched towards L2 meanwhile
// acc + broadcast(*xp) * w with the broadcast inside the FMA (AVX-512's embedded broadcast,
// m32{1to16}): the load ports do the broadcast. Compilers fold a broadcast into the FMA only when
// it feeds one FMA; here it feeds NV of them, so the instruction is written out. The address goes
// in as a register, not a memory operand: with "m", GCC 12 keeps the 24 sums on the stack. (x is
// only read while the micro-tile runs, so no write can be reordered past the asm.) One rounding,
// like xsimd::fma: the same bits.
#if defined(__AVX512F__) && (defined(__GNUC__) || defined(__clang__))
#define TS_FMA_BCAST 1
inline __attribute__((always_inline)) __m512 fma_bcast(__m512 acc, __m512 w, const float* xp) {
  asm("vfmadd231ps %[x]%{1to16%}, %[w], %[a]" : [a] "+v"(acc) : [w] "v"(w), [x] "m"(*xp));  // "m": it reads *xp
  return acc;
}
#endif

// Step k of a micro-tile: panel step k + 16 from L2 into L1, step k of the next panel towards L2.
template <int NR>
inline __attribute__((always_inline)) void prefetch_step(const float* wp, const float* wp_next, int64_t k) {
  for (int l = 0; l < NR * 4 / 64; ++l) {
    __builtin_prefetch(wp + (k + 16) * NR + 16 * l, 0, 3);
    __builtin_prefetch(wp_next + k * NR + 16 * l, 0, 2);
  }
}

template <int MR, int NV, bool EB = false>
void micro_tile(int64_t kc, const float* __restrict x, int64_t ldx, const float* __restrict wp, const float* wp_next,
                float* c, int64_t ldc, int nvalid, const float* bias, bool load_c) {
  constexpr int NR = int(NV * W);
  constexpr int kLines = NR * 4 / 64;  // 64-byte cache lines in one step of a panel
  for (int r = 0; r < MR; ++r) {  // fetch the tile now: it is read once the sums are done
    for (int l = 0; l + 1 < kLines; ++l) __builtin_prefetch(c + r * ldc + 16 * l, 1, 3);
    __builtin_prefetch(c + r * ldc + NR - 1, 1, 3);  // (the row's first line where NR <= 16)
  }
  V acc[MR][NV];
#ifdef TS_FMA_BCAST
  if constexpr (EB) {  // the same sums, with the register type the asm takes
    __m512 a[MR][NV];
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) a[r][v] = _mm512_setzero_ps();
#pragma GCC unroll 1
    for (int64_t k = 0; k < kc; ++k) {
      prefetch_step<NR>(wp, wp_next, k);
      __m512 w[NV];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) w[v] = _mm512_load_ps(wp + k * NR + v * W);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) a[r][v] = fma_bcast(a[r][v], w[v], x + r * ldx + k);
    }
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = V(a[r][v]);
  } else
#endif
  {
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = V(0.0f);
#pragma GCC unroll 2
    for (int64_t k = 0; k < kc; ++k) {
      prefetch_step<NR>(wp, wp_next, k);
      V w[NV];
      for (int v = 0; v < NV; ++v) w[v] = V::load_aligned(wp + k * NR + v * W);
      for (int r = 0; r < MR; ++r) {
        const V xr(x[r * ldx + k]);
        for (int v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(xr, w[v], acc[r][v]);
      }
    }
  }
  // c = (c + bias) + acc
  if (nvalid == NR) {
    V b[NV];
    for (int v = 0; v < NV; ++v) b[v] = bias ? V::load_unaligned(bias + v * W) : V(0.0f);
    for (int r = 0; r < MR; ++r) {
      float* cr = c + r * ldc;
      for (int v = 0; v < NV; ++v) {
        V cv = b[v];
        if (load_c) cv = V::load_unaligned(cr + v * W) + cv;
        (cv + acc[r][v]).store_unaligned(cr + v * W);
      }
    }
    return;
  }
  alignas(64) float sums[NR];
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    for (int v = 0; v < NV; ++v) acc[r][v].store_aligned(sums + v * W);
    for (int j = 0; j < nvalid; ++j) {
      float cj = bias ? bias[j] : 0.0f;
      if (load_c) cj = cr[j] + cj;
      cr[j] = cj + sums[j];
    }
  }
}

using MicroTile = void (*)(int64_t, const float*, int64_t, const float*, const float*, float*, int64_t, int, const float*,
                           bool);
template <int NV, bool EB, int... I>
constexpr auto micro_tiles(std::integer_sequence<int, I...>) {
  return std::array<MicroTile, sizeof...(I) + 1>{nullptr, &micro_tile<I + 1, NV, EB>...};
}

// W (M,K), rows ldw apart, times scale -> panels (ceil(M/NR), K, NR)
template <int NR>
void pack_panels(const float* Wm, int64_t ldw, int64_t M, int64_t K, float scale, float* out) {
  const int64_t P = (M + NR - 1) / NR;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t j = 0; j < NR; ++j) {
      const int64_t o = p * NR + j;
      float* dst = out + p * K * NR + j;
      if (o < M)
        for (int64_t k = 0; k < K; ++k) dst[k * NR] = Wm[o * ldw + k] * scale;
      else
        for (int64_t k = 0; k < K; ++k) dst[k * NR] = 0.0f;
    }
}

// W^T given as (K,M), rows ldw apart (V: k = key position, outputs = features) -> panels
template <int NR>
void pack_panels_kmajor(const float* Wt, int64_t ldw, int64_t M, int64_t K, float* out) {
  const int64_t P = (M + NR - 1) / NR;
  for (int64_t p = 0; p < P; ++p) {
    const int64_t n = std::min<int64_t>(NR, M - p * NR);
    for (int64_t k = 0; k < K; ++k) {
      float* dst = out + (p * K + k) * NR;
      std::copy_n(Wt + k * ldw + p * NR, n, dst);
      std::fill(dst + n, dst + NR, 0.0f);
    }
  }
}

// y (rows, outputs of panels [p0,p1)) = epilogue(x (rows, K) W^T); x rows ldx apart, W in panels.
// Loops: blocks of NC rows, passes of kKC steps, blocks of MCp panels, then each MR rows
// of x against each panel of the block.
template <class B>
void packed_product(const float* x, int64_t ldx, int64_t rows, int64_t K, const float* panels, int64_t M, int64_t p0,
                    int64_t p1, float* y, int64_t ldy, const Epilogue& epi) {
  constexpr int kMR = B::MR, kNR = B::NR;
  static constexpr auto kMicroTiles = micro_tiles<B::NV, B::EB>(std::make_integer_sequence<int, kMR>{});  // [mr] -> micro_tile<mr>
  const bool naive_gelu = kernel_path() == KernelPath::Naive;
  for (int64_t r0 = 0; r0 < rows; r0 += B::NC) {
    const int64_t nc = std::min(B::NC, rows - r0);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const bool first = pc == 0, last = pc + kc == K;
      for (int64_t pb = p0; pb < p1; pb += B::MCp) {
        const int64_t pe = std::min(p1, pb + B::MCp);
        for (int64_t t = 0; t * kMR < nc; ++t) {
          const int64_t mr = std::min<int64_t>(kMR, nc - t * kMR);
          const float* xt = x + (r0 + t * kMR) * ldx + pc;
          float* c_rows = y + (r0 + t * kMR) * ldy;
          for (int64_t p = pb; p < pe; ++p) {
            const int nvalid = int(std::min<int64_t>(kNR, M - p * kNR));
            float* c = c_rows + p * kNR;
            // the next call's panel: the next one of this block, or the first of the next block
            const int64_t pn = p + 1 < pe ? p + 1 : (t + 1) * kMR < nc ? pb : std::min(pe, p1 - 1);
            kMicroTiles[size_t(mr)](kc, xt, ldx, panels + (p * K + pc) * kNR, panels + (pn * K + pc) * kNR, c, ldy,
                                    nvalid, first && epi.bias ? epi.bias + p * kNR : nullptr, !first || epi.residual);
            if (last && epi.gelu) {
              if (naive_gelu)
                for (int64_t r = 0; r < mr; ++r) naive_kernels.gelu(c + r * ldy, c + r * ldy, nvalid);
              else
                bias_gelu_rows(c, c, mr, nvalid, ldy, nullptr);
            }
          }
        }
      }
    }
  }
}

// The blockings (see above). NC rows x K floats of x and MCp panels stay in L2.
// (a type is only compiled where a route file names it)
using TwoPort = Blocking<12, 2, 240, 6>;      // AVX-512: 576 KB of panels a block (1-2 MB L2)
using DoublePumped = Blocking<6, 4, 120, 3, true>;  // AVX-512: 576 KB of panels a block (Zen 4: 1 MB L2)
using Narrow = Blocking<6, 2, 84, 8>;         // AVX2: 384 KB of panels a block (Zen 3's L2 is 512 KB);
                                              // NEON: 6 x 8 in 12 of 32 registers

// route.hpp's fields in their order, each kernel named as its field (a kernel in the wrong
// place has the wrong signature and does not compile)
template <class B>
Route make_route(Isa isa, const char* blocking) {
  return {isa,         softmax_rows, layer_norm_rows,        bias_gelu_rows,            gelu_backward, few_rows,  // row kernels
          B::MR,       B::NR,        blocking,               pack_panels<B::NR>, pack_panels_kmajor<B::NR>,
          packed_product<B>};  // packed GEMM
}

}  // namespace
}  // namespace ts::simd
