// exact_kernels.cpp: PyTorch 1.13's CPU row kernels, replayed bit for bit.
//
// Why this file exists: the course prints tensors the way PyTorch does, and a chapter's
// output must be byte-identical to its PyTorch twin. Rounding differs in the last bit as
// soon as two additions happen in another order, so "close" is not enough: these kernels
// follow torch's own code paths (Debian python3-torch 1.13.1, "CPU capability usage:
// AVX2") operation by operation:
//   * Vectorized<float> is 8 lanes of __m256; exp/log are SLEEF's Sleef_expf8_u10 and
//     Sleef_logf8_u10 from the system libsleef, the very functions torch calls
//     (aten/src/ATen/cpu/vec/vec256/vec256_float.h). On a CPU without AVX2 (arm64) the
//     same operations run lane by lane in plain C++, SLEEF's scalar builds of the same
//     algorithm included (vec8.hpp): the bits are the same on every CPU.
//   * Reductions (max, sum) follow vec::reduce_all / map_reduce_all: one accumulator
//     vector, a blended partial tail, then a 3-step shuffle tree across the 8 lanes
//     (aten/src/ATen/cpu/vec/functional_base.h, VecReduceAllSIMD); rows shorter than 8
//     take the "slow path", a left-to-right fold into lane 0.
//   * x.sum(dim=-1) is cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp): 4 vector
//     accumulators, levelled partial sums, scalar tail, then lanes added one by one.
//   * LayerNorm uses RowwiseMoments (aten/src/ATen/native/cpu/moments_utils.h): Welford
//     over chunks of 16 vectors, cascaded, then merged lane by lane.
//   * Element-wise ops (GELU, ReLU) run through cpu_kernel_vec (native/cpu/Loops.h):
//     blocks of 16 floats use the vector formula, the last n % 16 the scalar one.
//
// FMA: torch's kernels were compiled by GCC 12 with -mfma and the default
// -ffp-contract=fast, so GCC fused some `a * b + c` into one fused multiply-add. This
// file is compiled with -ffp-contract=off and spells every such fusion out with
// vfmadd (_mm256_fmadd_ps or std::fma, vec8.hpp) / std::fma; each one was confirmed against the live torch (see
// tests/test_kernels.cpp). The fused spots are marked "FMA:" below.
//
// Introduced in ch03 (softmax); the learner-facing loops are in kernels_naive.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "exact/kernels.hpp"
#include "exact/torch_version.hpp"

#include "exact/vec8.hpp"

// The vector code: AVX2 + FMA intrinsics on x86-64 (compiled for them whatever flags the
// build passes, under GCC and clang), the same operations in plain C++ elsewhere (vec8.hpp).
TS_VEC8_BEGIN
namespace ts {
namespace exact {
namespace {

// torch's Vectorized<float> on AVX2: 8 floats in a __m256 (x86-64), or the same 8 floats and
// operations in plain C++
using namespace vec8;
constexpr int64_t kLanes = 8;

// ---------------------------------------------------------------------------
// Vectorized<float> helpers, as in vec256_float.h
// ---------------------------------------------------------------------------

// Vectorized<float>::loadu(ptr, count): the first `count` floats, the rest zero.
inline V vload_partial(const float* p, int64_t count) {
  alignas(32) float tmp[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(tmp, p, static_cast<size_t>(count) * sizeof(float));
  return vload(tmp);
}

// Vectorized<float>::store(ptr, count): only the first `count` lanes.
inline void vstore_partial(float* p, V v, int64_t count) {
  alignas(32) float tmp[kLanes];
  vstore(tmp, v);
  std::memcpy(p, tmp, static_cast<size_t>(count) * sizeof(float));
}

// (vec8.hpp: vset(a, b, count) is Vectorized<float>::set, lanes [0, count) from b;
// vmaximum is vec::maximum, the IEEE maximum that propagates NaN as all-ones, like torch.)

struct MaxOp {
  V operator()(V a, V b) const { return vmaximum(a, b); }
};
struct AddOp {
  V operator()(V a, V b) const { return vadd(a, b); }
};

// ---------------------------------------------------------------------------
// functional_base.h: reductions and maps over one row
// ---------------------------------------------------------------------------

// vec_reduce_all(op, acc, size), the slow path: fold lanes 1..size-1 into lane 0, one
// by one, each as a full vector op against (lane, 0, 0, ...).
template <class Op>
float vec_reduce_all_slow(const Op& op, V acc, int64_t size) {
  alignas(32) float arr[kLanes];
  vstore(arr, acc);
  for (int64_t i = 1; i < size; ++i) {
    const V next = vfirst(arr[i]);
    acc = op(acc, next);
  }
  return vlane0(acc);
}

// VecReduceAllSIMD<float>: a shuffle tree, ((v0 op v4) op (v2 op v6)) op ((v1 op v5) op (v3 op v7)).
template <class Op>
float vec_reduce_all(const Op& op, V v) {
  V v1 = vswap<4>(v);  // _mm256_permute2f128_ps(v, v, 0x1)
  v = op(v, v1);
  v1 = vswap<2>(v);  // _mm256_shuffle_ps(v, v, 0x4E)
  v = op(v, v1);
  v1 = vswap<1>(v);  // _mm256_shuffle_ps(v, v, 0xB1)
  v = op(v, v1);
  return vlane0(v);
}

// vec::reduce_all(op, data, size)
template <class Op>
float reduce_all(const Op& op, const float* data, int64_t size) {
  if (size < kLanes) return vec_reduce_all_slow(op, vload_partial(data, size), size);
  int64_t d = kLanes;
  V acc = vload(data);
  for (; d < size - (size % kLanes); d += kLanes) acc = op(acc, vload(data + d));
  if (size - d > 0) {
    const V tail = vload_partial(data + d, size - d);
    acc = vset(acc, op(acc, tail), size - d);
  }
  return vec_reduce_all(op, acc);
}

// vec::map_reduce_all(map, red, data, size)
template <class Map, class Red>
float map_reduce_all(const Map& map, const Red& red, const float* data, int64_t size) {
  if (size < kLanes) return vec_reduce_all_slow(red, map(vload_partial(data, size)), size);
  int64_t d = kLanes;
  V acc = map(vload(data));
  for (; d < size - (size % kLanes); d += kLanes) acc = red(acc, map(vload(data + d)));
  if (size - d > 0) {
    const V tail = map(vload_partial(data + d, size - d));
    acc = vset(acc, red(acc, tail), size - d);
  }
  return vec_reduce_all(red, acc);
}

// vec::map(op, out, in, size): full vectors, then one zero-padded partial vector.
template <class Op>
void vec_map(const Op& op, float* out, const float* in, int64_t size) {
  int64_t d = 0;
  for (; d < size - (size % kLanes); d += kLanes) vstore(out + d, op(vload(in + d)));
  if (size - d > 0) vstore_partial(out + d, op(vload_partial(in + d, size - d)), size - d);
}

// ---------------------------------------------------------------------------
// SumKernel.cpp: cascade_sum for a contiguous reduction over the last dim
// ---------------------------------------------------------------------------

// utils::CeilLog2
inline int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  const uint64_t v = static_cast<uint64_t>(x) - 1;
  return static_cast<int64_t>(63 - __builtin_clzll(v)) + 1;
}

// multi_row_sum<T, 4>: 4 interleaved accumulators, summed in levels of 2^level_power
// items so that only partial sums of similar size meet. `load(i, k)` gives item (i, k).
template <class T, class Load, class Add>
void multi_row_sum4(T out[4], int64_t size, const Load& load, const Add& add, T zero) {
  constexpr int64_t kLevels = 4;
  const int64_t level_power = std::max<int64_t>(4, ceil_log2(size) / kLevels);
  const int64_t level_step = int64_t(1) << level_power;
  const int64_t level_mask = level_step - 1;
  T acc[kLevels][4];
  for (auto& level : acc)
    for (T& a : level) a = zero;

  int64_t i = 0;
  while (i + level_step <= size) {
    for (int64_t j = 0; j < level_step; ++j, ++i)
      for (int64_t k = 0; k < 4; ++k) acc[0][k] = add(acc[0][k], load(i, k));
    for (int64_t j = 1; j < kLevels; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        acc[j][k] = add(acc[j][k], acc[j - 1][k]);
        acc[j - 1][k] = zero;
      }
      const int64_t mask = level_mask << (j * level_power);
      if ((i & mask) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int64_t k = 0; k < 4; ++k) acc[0][k] = add(acc[0][k], load(i, k));
  for (int64_t j = 1; j < kLevels; ++j)
    for (int64_t k = 0; k < 4; ++k) acc[0][k] = add(acc[0][k], acc[j][k]);
  for (int64_t k = 0; k < 4; ++k) out[k] = acc[0][k];
}

// row_sum<T>: view the `size` items as (size/4, 4), sum the columns, add the leftover
// items to column 0, then fold columns 1..3 into column 0.
template <class T, class Load, class Add>
T row_sum(int64_t size, const Load& load, const Add& add, T zero) {
  const int64_t size_ilp = size / 4;
  T partial[4];
  multi_row_sum4<T>(
      partial, size_ilp, [&](int64_t i, int64_t k) { return load(i * 4 + k); }, add, zero);
  for (int64_t i = size_ilp * 4; i < size; ++i) partial[0] = add(partial[0], load(i));
  for (int64_t k = 1; k < 4; ++k) partial[0] = add(partial[0], partial[k]);
  return partial[0];
}

// One row of x.sum(dim=-1): vectorized_inner_sum for n >= 8, scalar_inner_sum below.
// The output starts at 0 and the sum is added to it (CastStoreAccumulate).
float cascade_sum_row(const float* x, int64_t n) {
  const auto fadd = [](float a, float b) { return a + b; };
  float total;
  if (n >= kLanes) {
    const int64_t vec_size = n / kLanes;
    const V vacc = row_sum<V>(
        vec_size, [&](int64_t i) { return vload(x + i * kLanes); },
        [](V a, V b) { return vadd(a, b); }, vzero());
    float final_acc = 0.0f;
    for (int64_t k = vec_size * kLanes; k < n; ++k) final_acc += x[k];
    alignas(32) float partials[kLanes];
    vstore(partials, vacc);
    for (float p : partials) final_acc += p;
    total = final_acc;
  } else {
    total = row_sum<float>(n, [&](int64_t i) { return x[i]; }, fadd, 0.0f);
  }
  return 0.0f + total;
}

// ---------------------------------------------------------------------------
// moments_utils.h: RowwiseMoments (mean and biased variance of one row)
// ---------------------------------------------------------------------------

struct Moments {
  float mean;
  float var;
};

// AddMomentsVec: merge (m0_add, m1_add, m2_add) into (m0, m1, m2), 8 lanes at once.
inline void add_moments_vec(int64_t m0_add, V m1_add, V m2_add, int64_t& m0, V& m1, V& m2) {
  const int64_t n = m0 + m0_add;
  const float c = n == 0 ? 0.0f : static_cast<float>(m0_add) / static_cast<float>(n);
  const V c_vec = vbroadcast(c);
  const V delta = vsub(m1_add, m1);
  m1 = vadd(m1, vmul(c_vec, delta));  // m1 += c * delta
  // m2 += m2_add + delta * delta * c * m0
  const V ddcm = vmul(vmul(vmul(delta, delta), c_vec), vbroadcast(static_cast<float>(m0)));
  m2 = vadd(m2, vadd(m2_add, ddcm));
  m0 = n;
}

// AddMoments: the scalar twin of add_moments_vec.
inline void add_moments(int64_t m0_add, float m1_add, float m2_add, int64_t& m0, float& m1,
                        float& m2) {
  const int64_t n = m0 + m0_add;
  const float c = n == 0 ? 0.0f : static_cast<float>(m0_add) / static_cast<float>(n);
  const float delta = m1_add - m1;
  m1 += c * delta;
  m2 += m2_add + delta * delta * c * static_cast<float>(m0);
  m0 = n;
}

Moments rowwise_moments(const float* X, int64_t N) {
  constexpr int64_t kChunk = 16;  // utils::kChunkSize
  const int64_t n = N / kLanes;
  const int64_t m = (n + kChunk - 1) / kChunk;
  const int64_t depth = ceil_log2(m);

  // the cascade stack (depth <= 64)
  int64_t m0_stk[64];
  V m1_stk[64];
  V m2_stk[64];
  for (int64_t d = 0; d < depth; ++d) {
    m0_stk[d] = 0;
    m1_stk[d] = vzero();
    m2_stk[d] = vzero();
  }

  for (int64_t i = 0; i < m; ++i) {
    const float* X_ptr = X + i * kChunk * kLanes;
    const int64_t m0 = std::min(kChunk, n - i * kChunk);
    // 1) Welford over up to 16 vectors
    V m1_vec = vzero();
    V m2_vec = vzero();
    for (int64_t j = 0; j < m0; ++j) {
      const V x_vec = vload(X_ptr + j * kLanes);
      const V c_vec = vbroadcast(1.0f / static_cast<float>(j + 1));
      const V delta = vsub(x_vec, m1_vec);
      m1_vec = vadd(m1_vec, vmul(delta, c_vec));  // m1 += delta * (1/(j+1))
      m2_vec = vadd(m2_vec, vmul(delta, vsub(x_vec, m1_vec)));
    }
    // 2) push onto the cascade, merging like a binary counter
    add_moments_vec(m0, m1_vec, m2_vec, m0_stk[0], m1_stk[0], m2_stk[0]);
    int64_t mask = i + 1;
    for (int64_t j = 1; j < depth && (mask & 1) == 0; ++j) {
      add_moments_vec(m0_stk[j - 1], m1_stk[j - 1], m2_stk[j - 1], m0_stk[j], m1_stk[j],
                      m2_stk[j]);
      m0_stk[j - 1] = 0;
      m1_stk[j - 1] = vzero();
      m2_stk[j - 1] = vzero();
      mask >>= 1;
    }
  }
  for (int64_t i = 1; i < depth; ++i)
    add_moments_vec(m0_stk[i], m1_stk[i], m2_stk[i], m0_stk[0], m1_stk[0], m2_stk[0]);

  alignas(32) float m1_arr[kLanes];
  alignas(32) float m2_arr[kLanes];
  vstore(m1_arr, m1_stk[0]);
  vstore(m2_arr, m2_stk[0]);

  // 3) scalar Welford over the n % 8 tail, then merge the 8 lanes one by one
  int64_t m0 = 0;
  float m1 = 0.0f;
  float m2 = 0.0f;
  for (int64_t i = n * kLanes; i < N; ++i) {
    const float delta = X[i] - m1;
    ++m0;
    m1 += delta / static_cast<float>(m0);
    m2 += delta * (X[i] - m1);
  }
  for (int64_t i = 0; i < kLanes; ++i) add_moments(n, m1_arr[i], m2_arr[i], m0, m1, m2);
  return {m1, m2 / static_cast<float>(N)};
}

// ---------------------------------------------------------------------------
// Loops.h: cpu_kernel_vec over a contiguous 1-D range
// ---------------------------------------------------------------------------

// Blocks of 2 vectors (16 floats) use vop, the remaining n % 16 floats use the scalar op.
template <class Op, class VOp>
void cpu_kernel_vec(const float* x, float* y, int64_t n, const Op& op, const VOp& vop) {
  int64_t i = 0;
  for (; i <= n - 2 * kLanes; i += 2 * kLanes) {
    const V out1 = vop(vload(x + i));
    const V out2 = vop(vload(x + i + kLanes));
    vstore(y + i, out1);
    vstore(y + i + kLanes, out2);
  }
  for (; i < n; ++i) y[i] = op(x[i]);
}

// ---------------------------------------------------------------------------
// oneDNN 2.6.3, jit_uni_eltwise_injector_f32: exp and gelu_erf, lane by lane
// ---------------------------------------------------------------------------

inline V bits_to_v(uint32_t u) { return vbits(u); }

// exp_compute_vector_fwd: exp(x) = 2 * 2^(n-1) * p(r), x = n ln2 + r, p a degree-5 polynomial.
inline V dnnl_exp(V x) {
  const V ln_flt_min = bits_to_v(0xc2aeac50u);
  const V ln_flt_max = bits_to_v(0x42b17218u);
  const V log2e = bits_to_v(0x3fb8aa3bu);
  const V ln2 = bits_to_v(0x3f317218u);
  const V one = vbroadcast(1.0f);
  const V underflow = vless(x, ln_flt_min);  // results forced to 0
  x = vmin(x, ln_flt_max);
  x = vmax(x, ln_flt_min);
  // n = floor(x log2(e) + 0.5), r = x - n ln2 (fused)
  V fx = vadd(vmul(x, log2e), vbroadcast(0.5f));
  fx = vfloor(fx);
  const V r = vfnmadd(fx, ln2, x);
  // 2^(n-1) built in the exponent bits
  const V pow2 = vblend(vpow2(vsub(fx, one)), vzero(), underflow);
  // p(r) = 1 + r (p1 + r (p2 + r (p3 + r (p4 + r p5)))), Horner with FMAs
  V p = bits_to_v(0x3c07cfceu);               // p5
  p = vfmadd(p, r, bits_to_v(0x3d2b9d0du));  // p4
  p = vfmadd(p, r, bits_to_v(0x3e2aad40u));  // p3
  p = vfmadd(p, r, bits_to_v(0x3efffee3u));  // p2
  p = vfmadd(p, r, bits_to_v(0x3f7ffffbu));  // p1
  p = vfmadd(p, r, one);
  return vmul(vmul(p, pow2), vbroadcast(2.0f));
}

// gelu_erf_compute_vector_fwd: erf by Abramowitz & Stegun 7.1.26,
//   erf(x) = sign(x) (1 - t (p1 + t (p2 + ...)) exp(-x^2)), t = 1 / (1 + p |x|),
// then GELU = S + S erf with S = (s / sqrt2) / sqrt2.
inline V dnnl_gelu_erf(V s) {
  const V sign_mask = bits_to_v(0x80000000u);
  const V abs_mask = bits_to_v(0x7fffffffu);
  const V inv_sqrt2 = bits_to_v(0x3f3504f3u);
  const V one = vbroadcast(1.0f);
  const V x = vmul(s, inv_sqrt2);
  const V neg_exp = vxor(dnnl_exp(vxor(vmul(x, x), sign_mask)), sign_mask);
  const V sign = vand(x, sign_mask);
  const V ax = vand(x, abs_mask);
  const V t = vdiv(one, vfmadd(bits_to_v(0x3ea7ba05u), ax, one));
  const V et = vmul(neg_exp, t);
  V r = bits_to_v(0x3f87dc22u);               // p5
  r = vfmadd(r, t, bits_to_v(0xbfba00e3u));  // p4
  r = vfmadd(r, t, bits_to_v(0x3fb5f0e3u));  // p3
  r = vfmadd(r, t, bits_to_v(0xbe91a98eu));  // p2
  r = vfmadd(r, t, bits_to_v(0x3e827906u));  // p1
  const V erf = vxor(vfmadd(et, r, one), sign);
  const V half_s = vmul(s, vbroadcast(0.5f));
  return vfmadd(erf, half_s, half_s);
}

// Both softmaxes start alike (_vec_softmax_lastdim, _vec_log_softmax_lastdim): for each row,
// in = x + r n, out = y + r n and the row max reduce_all(MaxOp) broadcast to a vector; then
// row(in, out, vmax).
template <class Row>
void each_row_with_max(const float* x, float* y, int64_t rows, int64_t n, const Row& row) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    row(in, y + r * n, vbroadcast(reduce_all(MaxOp{}, in, n)));
  }
}

// ===========================================================================
// The kernels
// ===========================================================================

// x (rows, n) -> y (rows, n); _vec_softmax_lastdim
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
  // 1) row max, 2) exp(x - max), 3) sum, 4) multiply by 1 / sum
  each_row_with_max(x, y, rows, n, [n](const float* in, float* out, V vmax) {
    vec_map([&](V v) { return sleef_expf8(vsub(v, vmax)); }, out, in, n);
    float tmp_sum = reduce_all(AddOp{}, out, n);
    tmp_sum = 1.0f / tmp_sum;
    const V vinv = vbroadcast(tmp_sum);
    vec_map([&](V v) { return vmul(v, vinv); }, out, out, n);
  });
}

// x (rows, n) -> y (rows, n); _vec_log_softmax_lastdim
void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
  // 1) row max, 2) sum of exp(x - max), 3) its log (SLEEF, vector), 4) x - max - log
  each_row_with_max(x, y, rows, n, [n](const float* in, float* out, V vmax) {
    const float sum = map_reduce_all(
        [&](V v) { return sleef_expf8(vsub(v, vmax)); }, AddOp{}, in, n);
    const float log_sum = vlane0(sleef_logf8(vbroadcast(sum)));
    const V vlog = vbroadcast(log_sum);
    vec_map([&](V v) { return vsub(vsub(v, vmax), vlog); }, out, in, n);
  });
}

// x (rows, C), gamma (C), beta (C) -> y (rows, C); LayerNormKernelImplInternal
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma,
                     const float* beta, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    // 1) mean and biased variance, 2) rstd = 1/sqrt(var + eps), 3) y = (x*rstd - rstd*mean)*g + b
    const Moments mom = rowwise_moments(in, n);
    const float rstd = 1.0f / std::sqrt(mom.var + eps);
    const float scale = rstd;
    const float bias = -rstd * mom.mean;
    const V vscale = vbroadcast(scale);
    const V vbias = vbroadcast(bias);
    // vec::map3: full vectors, then one zero-padded partial vector
    const auto f = [&](V xv, V gv, V bv) {
      // FMA: (x * scale + bias) * gamma + beta, both fused
      return vfmadd(vfmadd(xv, vscale, vbias), gv, bv);
    };
    int64_t d = 0;
    for (; d < n - (n % kLanes); d += kLanes)
      vstore(out + d, f(vload(in + d), vload(gamma + d), vload(beta + d)));
    if (n - d > 0) {
      const int64_t c = n - d;
      vstore_partial(out + d, f(vload_partial(in + d, c), vload_partial(gamma + d, c),
                                vload_partial(beta + d, c)),
                     c);
    }
  }
}

// x (rows, n) -> y (rows); cascade_sum
void sum_rows(const float* x, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) y[r] = cascade_sum_row(x + r * n, n);
}

// x (rows, n) -> y (rows); mean = sum(dim) then div_(n), as torch 1.13 does on CPU
void mean_rows(const float* x, float* y, int64_t rows, int64_t n) {
  const float count = static_cast<float>(n);
  for (int64_t r = 0; r < rows; ++r) y[r] = cascade_sum_row(x + r * n, n) / count;
}

// x (n) -> y (n); nn.GELU() (approximate='none').
// torch 1.13 hands a contiguous float tensor with more than one element to oneDNN
// (ideep eltwise_gelu_erf, oneDNN 2.6.3's JIT kernel); a single element goes through
// ATen's GeluKernelImpl, whose scalar path is x * 0.5 * (1 + erf(x / sqrt(2))).
void gelu(const float* x, float* y, int64_t n) {
  if (n <= 1) {
    const float kAlpha = static_cast<float>(M_SQRT1_2);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * 0.5f * (1.0f + std::erf(x[i] * kAlpha));
    return;
  }
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) vstore(y + i, dnnl_gelu_erf(vload(x + i)));
  if (i < n) vstore_partial(y + i, dnnl_gelu_erf(vload_partial(x + i, n - i)), n - i);
}

// x (n) -> y (n); relu = clamp_min(x, 0): max_ps(0, x) in vectors, std::max(x, 0) in the tail
void relu(const float* x, float* y, int64_t n) {
  const V zero = vzero();
  cpu_kernel_vec(
      x, y, n, [](float v) { return std::max(v, 0.0f); },
      [&](V v) { return vmax(zero, v); });
}

}  // namespace

// torch's vec::map(Sleef_<f>f8_u10) over n floats in place: full 8-lane vectors, then the
// tail as one zero-padded vector (article 002's PositionalEncoding builds its table so).
namespace {
template <class F>
void sleef_map(float* data, int64_t n, F f) {
  for (int64_t i = 0; i < n; i += kLanes) {
    const int64_t m = std::min<int64_t>(kLanes, n - i);
    alignas(32) float buf[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::copy_n(data + i, m, buf);
    vstore(buf, f(vload(buf)));
    std::copy_n(buf, m, data + i);
  }
}
}  // namespace
void sleef_exp(float* x, int64_t n) { sleef_map(x, n, [](V v) { return sleef_expf8(v); }); }
// sin and cos: torch 1.13's Vectorized<float> calls SLEEF's 1-ulp builds (u10), 2.x's its
// 3.5-ulp ones (u35): under 2.6 a quarter of PositionalEncoding's table is 1-2 ulp apart from
// 1.13's. Both stay 8 lanes on an AVX-512 CPU (sin and cos have no AVX-512 registration).
void sleef_sin(float* x, int64_t n) {
  if (torch_version() == TorchVersion::V2_6)
    sleef_map(x, n, [](V v) { return sleef_sinf8_u35(v); });
  else
    sleef_map(x, n, [](V v) { return sleef_sinf8(v); });
}
void sleef_cos(float* x, int64_t n) {
  if (torch_version() == TorchVersion::V2_6)
    sleef_map(x, n, [](V v) { return sleef_cosf8_u35(v); });
  else
    sleef_map(x, n, [](V v) { return sleef_cosf8(v); });
}

}  // namespace exact

const RowKernels exact_kernels = {exact::softmax_rows, exact::log_softmax_rows, exact::layer_norm_rows,
                                  exact::sum_rows,     exact::mean_rows,        exact::gelu,
                                  exact::relu};

}  // namespace ts

TS_VEC8_END
