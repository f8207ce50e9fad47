// exact_kernels_torch2.cpp: PyTorch 2.6's CPU row kernels, where they differ from 1.13's.
//
// A build configured with TS_TORCH=2.6 (exact/torch_version.hpp) runs this table instead of
// exact_kernels.cpp's. What changed between torch 1.13 and 2.6, read in PyTorch's sources
// (aten/src/ATen/native/DispatchStub.h, native/cpu/SoftMaxKernel.cpp, layer_norm_kernel.cpp,
// SumKernel.cpp, cpu/vec/functional_base.h):
//   * Dispatch. 1.13 never picked its AVX-512 kernels by itself (AVX-512 was opt-in through
//     ATEN_CPU_CAPABILITY=avx512). 2.x picks the AVX-512 capability on a CPU with AVX-512
//     F/BW/VL/DQ, but only the kernels registered with ALSO_REGISTER_AVX512_DISPATCH run
//     their AVX-512 build; every other kernel stays on AVX2. softmax and log_softmax over
//     the last dim are among the first: on such a CPU their Vectorized<float> is 16 lanes,
//     so their sums add 16 partial sums through a 4-step shuffle tree (lane i with i^8, i^4,
//     i^2, i^1), and rows shorter than 16 take the left-to-right slow path. Element-wise
//     steps (exp, log, the final multiply or subtraction) give the same bits at any width:
//     SLEEF's 16-lane expf/logf equal its 8-lane ones on every input we tried
//     (tests/test_kernels.cpp checks the 8-lane ones against torch).
//     sum (SumKernel.cpp: "slower with AVX512") and LayerNorm stay on AVX2.
//   * LayerNorm (float): 1.13 computed y = (x * rstd + (-rstd * mean)) * gamma + beta; 2.x
//     computes y = (x + (-mean)) * rstd * gamma + beta (PyTorch issue 108072: the old form
//     loses the centring when the mean is large). GCC fuses the last multiply-add, as it
//     fused 1.13's. The moments (RowwiseMoments) are the same algorithm, but Debian's 2.6 was
//     compiled by GCC 14, which fuses more of its multiply-adds (see rowwise_moments below).
//   * GELU: both hand a float tensor of more than one element to oneDNN (native/Activation.cpp,
//     use_mkldnn), but Debian's 2.6 links oneDNN 3.7, whose gelu_erf on an AVX-512 CPU is a
//     piecewise minimax polynomial (jit_uni_eltwise_injector.cpp,
//     gelu_erf_minimax_approx_compute_vector_fwd) where oneDNN 2.6.3 used Abramowitz & Stegun
//     with its own exp; below AVX-512 oneDNN 3.7 keeps the latter, exact_kernels.cpp's.
//   * sin and cos (article 002's PositionalEncoding): 2.x's Vectorized<float> calls SLEEF's
//     3.5-ulp builds (Sleef_sinf8_u35) where 1.13 called the 1-ulp ones: exact::sleef_sin and
//     sleef_cos (exact_kernels.cpp) take them under 2.6. Found by comparing the two torches'
//     tables (a quarter of the values 1-2 ulp apart; SLEEF's scalar u35 build matches all but
//     small lanes sharing a vector with large ones, vec8.hpp's sleef_trig8). They stay
//     8 lanes on an AVX-512 CPU: a lane's result does not change with lanes 8-15's values.
// What is the same bits in both: x.sum(-1), x.mean(-1), ReLU, and the 8-lane softmax of a
// CPU without AVX-512.
//
// Same conventions as exact_kernels.cpp: compiled with -ffp-contract=off, every fused
// multiply-add spelled out ("FMA:").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "exact/kernels.hpp"
#include "exact/torch_version.hpp"

#include "exact/vec8.hpp"

// The vector code as in exact_kernels.cpp: AVX2 + FMA intrinsics on x86-64, the same
// operations in plain C++ elsewhere (vec8.hpp), so the bits are the same on every CPU.
TS_VEC8_BEGIN
namespace ts {
namespace exact {
namespace {

using namespace vec8;
constexpr int64_t kLanes = 8;  // one half of an AVX-512 Vectorized<float>

// torch 2.x runs its AVX-512 softmax kernels here: the CPU has AVX-512 F, BW, VL and DQ
// (DispatchStub.cpp's test) and ATEN_CPU_CAPABILITY, which both sides of a twin see, does
// not ask for less.
bool torch_picks_avx512() {
  static const bool picks = [] {
    if (const char* cap = std::getenv("ATEN_CPU_CAPABILITY"); cap && *cap && std::strcmp(cap, "avx512") != 0)
      return false;
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
    return false;  // another CPU: the exact path reproduces x86 torch without AVX-512
#endif
  }();
  return picks;
}

struct MaxOp {
  V operator()(V a, V b) const { return vmaximum(a, b); }
};
struct AddOp {
  V operator()(V a, V b) const { return vadd(a, b); }
};

// A 16-lane Vectorized<float> as two 8-lane halves: lanes 0-7 in lo, 8-15 in hi.
struct V16 {
  V lo, hi;
};
constexpr int64_t kLanes16 = 16;

// Vectorized<float>::loadu(p, count): the first `count` floats, the rest zero.
inline V16 load16(const float* p, int64_t count = kLanes16) {
  alignas(32) float tmp[kLanes16] = {};
  std::memcpy(tmp, p, static_cast<size_t>(count) * sizeof(float));
  return {vload(tmp), vload(tmp + kLanes)};
}

template <class Op>
inline V16 op16(const Op& op, V16 a, V16 b) {
  return {op(a.lo, b.lo), op(a.hi, b.hi)};
}

// Vectorized<float>::set(a, b, count): lanes [0, count) from b, the rest from a.
inline V16 set16(V16 a, V16 b, int64_t count) {
  alignas(32) float fa[kLanes16], fb[kLanes16];
  vstore(fa, a.lo);
  vstore(fa + kLanes, a.hi);
  vstore(fb, b.lo);
  vstore(fb + kLanes, b.hi);
  for (int64_t i = 0; i < count; ++i) fa[i] = fb[i];
  return {vload(fa), vload(fa + kLanes)};
}

// VecReduceAllSIMD<float> for AVX-512: lane i meets lane i^8 (the 256-bit halves), then
// i^4, i^2, i^1 -- after the first step, the AVX2 tree on the low half.
template <class Op>
float vec_reduce_all16(const Op& op, V16 v) {
  V w = op(v.lo, v.hi);
  V w1 = vswap<4>(w);
  w = op(w, w1);
  w1 = vswap<2>(w);
  w = op(w, w1);
  w1 = vswap<1>(w);
  w = op(w, w1);
  return vlane0(w);
}

// vec_reduce_all(op, acc, size), the slow path: lanes 1..size-1 folded into lane 0 in order,
// each as a vector op against (lane, 0, ...); only lane 0 is read back.
template <class Op>
float vec_reduce_all16_slow(const Op& op, V16 acc, int64_t size) {
  alignas(32) float arr[kLanes16];
  vstore(arr, acc.lo);
  vstore(arr + kLanes, acc.hi);
  V a = acc.lo;
  for (int64_t i = 1; i < size; ++i) a = op(a, vfirst(arr[i]));
  return vlane0(a);
}

// vec::map_reduce_all(map, red, data, size) with 16 lanes (reduce_all: map = identity).
template <class Map, class Red>
float map_reduce_all16(const Map& map, const Red& red, const float* data, int64_t size) {
  const auto m = [&](V16 v) { return V16{map(v.lo), map(v.hi)}; };
  if (size < kLanes16) return vec_reduce_all16_slow(red, m(load16(data, size)), size);
  int64_t d = kLanes16;
  V16 acc = m(load16(data));
  for (; d < size - (size % kLanes16); d += kLanes16) acc = op16(red, acc, m(load16(data + d)));
  if (size - d > 0) {
    const V16 tail = m(load16(data + d, size - d));
    acc = set16(acc, op16(red, acc, tail), size - d);
  }
  return vec_reduce_all16(red, acc);
}

template <class Red>
float reduce_all16(const Red& red, const float* data, int64_t size) {
  return map_reduce_all16([](V v) { return v; }, red, data, size);
}

// vec::map: element-wise, so 8 lanes at a time give the bits 16 lanes give.
template <class Op>
void vec_map(const Op& op, float* out, const float* in, int64_t size) {
  int64_t d = 0;
  for (; d + kLanes <= size; d += kLanes) vstore(out + d, op(vload(in + d)));
  if (d < size) {
    alignas(32) float tmp[kLanes] = {};
    std::memcpy(tmp, in + d, static_cast<size_t>(size - d) * sizeof(float));
    vstore(tmp, op(vload(tmp)));
    std::memcpy(out + d, tmp, static_cast<size_t>(size - d) * sizeof(float));
  }
}

// x (rows, n) -> y (rows, n); _vec_softmax_lastdim, AVX-512 build
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
  if (!torch_picks_avx512()) return exact_kernels.softmax_rows(x, y, rows, n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    // 1) row max, 2) exp(x - max), 3) sum, 4) multiply by 1 / sum
    const V vmax = vbroadcast(reduce_all16(MaxOp{}, in, n));
    vec_map([&](V v) { return sleef_expf8(vsub(v, vmax)); }, out, in, n);
    const float inv = 1.0f / reduce_all16(AddOp{}, out, n);
    const V vinv = vbroadcast(inv);
    vec_map([&](V v) { return vmul(v, vinv); }, out, out, n);
  }
}

// x (rows, n) -> y (rows, n); _vec_log_softmax_lastdim, AVX-512 build
void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
  if (!torch_picks_avx512()) return exact_kernels.log_softmax_rows(x, y, rows, n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    // 1) row max, 2) sum of exp(x - max), 3) its log (SLEEF, vector), 4) x - max - log
    const V vmax = vbroadcast(reduce_all16(MaxOp{}, in, n));
    const float sum = map_reduce_all16([&](V v) { return sleef_expf8(vsub(v, vmax)); }, AddOp{}, in, n);
    const V vlog = sleef_logf8(vbroadcast(sum));
    vec_map([&](V v) { return vsub(vsub(v, vmax), vlog); }, y + r * n, in, n);
  }
}

// ---------------------------------------------------------------------------
// moments_utils.h: RowwiseMoments, as GCC 14 compiled it for 2.6
// ---------------------------------------------------------------------------
// The same Welford chunks and cascade as 1.13's (exact_kernels.cpp), but GCC 14 fuses the
// updates of the form a + b * c that GCC 12 left as two roundings: in the vector Welford
// loop (m1 and m2) and in both merges (m1, and m2_add + delta^2 c m0). The scalar Welford
// over the n % 8 tail stays unfused. Each fusion was confirmed against the live 2.6
// (native_layer_norm's mean and rstd on 411 rows of 1 to 40000 floats, scales 1e-3 to 100).

inline int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  const uint64_t v = static_cast<uint64_t>(x) - 1;
  return static_cast<int64_t>(63 - __builtin_clzll(v)) + 1;
}

// AddMomentsVec: merge (m0_add, m1_add, m2_add) into (m0, m1, m2), 8 lanes at once
inline void add_moments_vec(int64_t m0_add, V m1_add, V m2_add, int64_t& m0, V& m1, V& m2) {
  const int64_t n = m0 + m0_add;
  const V c = vbroadcast(n == 0 ? 0.0f : static_cast<float>(m0_add) / static_cast<float>(n));
  const V delta = vsub(m1_add, m1);
  m1 = vfmadd(c, delta, m1);  // FMA: m1 += c * delta
  // FMA: m2 += m2_add + ((delta * delta) * c) * m0, the inner multiply-add fused
  const V ddc = vmul(vmul(delta, delta), c);
  m2 = vadd(m2, vfmadd(ddc, vbroadcast(static_cast<float>(m0)), m2_add));
  m0 = n;
}

// AddMoments: the scalar twin of add_moments_vec, fused alike
inline void add_moments(int64_t m0_add, float m1_add, float m2_add, int64_t& m0, float& m1, float& m2) {
  const int64_t n = m0 + m0_add;
  const float c = n == 0 ? 0.0f : static_cast<float>(m0_add) / static_cast<float>(n);
  const float delta = m1_add - m1;
  m1 = std::fma(c, delta, m1);                                                    // FMA
  m2 = m2 + std::fma(delta * delta * c, static_cast<float>(m0), m2_add);  // FMA
  m0 = n;
}

// x (N) -> mean, biased variance
void rowwise_moments(const float* X, int64_t N, float* mean, float* var) {
  constexpr int64_t kChunk = 16;  // utils::kChunkSize
  const int64_t n = N / kLanes;
  const int64_t m = (n + kChunk - 1) / kChunk;
  const int64_t depth = ceil_log2(m);
  int64_t m0_stk[64];
  V m1_stk[64], m2_stk[64];
  for (int64_t d = 0; d < depth; ++d) {
    m0_stk[d] = 0;
    m1_stk[d] = m2_stk[d] = vzero();
  }
  for (int64_t i = 0; i < m; ++i) {
    const float* X_ptr = X + i * kChunk * kLanes;
    const int64_t m0 = std::min(kChunk, n - i * kChunk);
    // 1) Welford over up to 16 vectors
    V m1 = vzero(), m2 = vzero();
    for (int64_t j = 0; j < m0; ++j) {
      const V x = vload(X_ptr + j * kLanes);
      const V delta = vsub(x, m1);
      m1 = vfmadd(delta, vbroadcast(1.0f / static_cast<float>(j + 1)), m1);  // FMA
      m2 = vfmadd(delta, vsub(x, m1), m2);                             // FMA
    }
    // 2) push onto the cascade, merging like a binary counter
    add_moments_vec(m0, m1, m2, m0_stk[0], m1_stk[0], m2_stk[0]);
    int64_t mask = i + 1;
    for (int64_t j = 1; j < depth && (mask & 1) == 0; ++j) {
      add_moments_vec(m0_stk[j - 1], m1_stk[j - 1], m2_stk[j - 1], m0_stk[j], m1_stk[j], m2_stk[j]);
      m0_stk[j - 1] = 0;
      m1_stk[j - 1] = m2_stk[j - 1] = vzero();
      mask >>= 1;
    }
  }
  for (int64_t i = 1; i < depth; ++i)
    add_moments_vec(m0_stk[i], m1_stk[i], m2_stk[i], m0_stk[0], m1_stk[0], m2_stk[0]);
  alignas(32) float m1_arr[kLanes], m2_arr[kLanes];
  vstore(m1_arr, m1_stk[0]);
  vstore(m2_arr, m2_stk[0]);
  // 3) scalar Welford over the n % 8 tail (unfused), then merge the 8 lanes one by one
  int64_t m0 = 0;
  float m1 = 0.0f, m2 = 0.0f;
  for (int64_t i = n * kLanes; i < N; ++i) {
    const float delta = X[i] - m1;
    ++m0;
    m1 += delta / static_cast<float>(m0);
    const float spread = X[i] - m1;
    m2 += delta * spread;
  }
  for (int64_t i = 0; i < kLanes; ++i) add_moments(n, m1_arr[i], m2_arr[i], m0, m1, m2);
  *mean = m1;
  *var = m2 / static_cast<float>(N);
}

// x (rows, C), gamma (C), beta (C) -> y (rows, C); LayerNormKernelImplInternal, 2.x form
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma,
                     const float* beta, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    // 1) mean and biased variance, 2) rstd = 1/sqrt(var + eps), 3) y = (x - mean) * rstd * g + b
    float mean = 0.0f, var = 0.0f;
    rowwise_moments(in, n, &mean, &var);
    const float rstd = 1.0f / std::sqrt(var + eps);
    const V vscale = vbroadcast(rstd);
    const V vbias = vbroadcast(-mean);
    // vec::map3, element-wise: 8 lanes at a time, then the zero-padded rest
    const auto f = [&](V xv, V gv, V bv) {
      // FMA: ((x + bias) * scale) * gamma + beta, the last multiply-add fused
      return vfmadd(vmul(vadd(xv, vbias), vscale), gv, bv);
    };
    int64_t d = 0;
    for (; d + kLanes <= n; d += kLanes)
      vstore(out + d, f(vload(in + d), vload(gamma + d), vload(beta + d)));
    if (d < n) {
      const size_t c = static_cast<size_t>(n - d) * sizeof(float);
      alignas(32) float tx[kLanes] = {}, tg[kLanes] = {}, tb[kLanes] = {};
      std::memcpy(tx, in + d, c);
      std::memcpy(tg, gamma + d, c);
      std::memcpy(tb, beta + d, c);
      vstore(tx, f(vload(tx), vload(tg), vload(tb)));
      std::memcpy(out + d, tx, c);
    }
  }
}

// oneDNN 3.x's gelu_erf on AVX-512 (jit_uni_eltwise_injector, gelu_erf_minimax_approx):
// erf(x / sqrt2) as one of 25 degree-5 minimax polynomials in |x|, the piece chosen by |x|'s
// exponent and the top 2 bits of its mantissa; then GELU = (x (1 + sign(x) p(|x|))) * 0.5.
// The coefficients, as oneDNN's table gives them (bits of floats): one line per degree, the
// constant term's first, one column per piece (piece 23: |x| past the bound, erf = 1; piece
// 24: infinities and NaN).
constexpr uint32_t kGeluPol[6][25] = {
    {0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229, 0x37b8a3bb, 0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b, 0x3c515ed3, 0xbb503236, 0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced, 0x3f470d99, 0x3f7abb28, 0x3f800000, 0x00000000},
    {0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f, 0x3f4c2d40, 0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07, 0x3f3b980f, 0x3f48dff3, 0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e, 0x3e6c8684, 0x3c98f936, 0x00000000, 0x3f800000},
    {0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb, 0x3af9b960, 0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660, 0x3e0f27ab, 0x3d94004b, 0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8, 0xbdc4f8a8, 0xbbde6422, 0x00000000, 0x00000000},
    {0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0, 0xbe0e400a, 0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f, 0xbe96cbca, 0xbe8044aa, 0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91, 0x3ca46568, 0x3aa1e00a, 0x00000000, 0x00000000},
    {0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527, 0x3c221712, 0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910, 0x3dd53f69, 0x3db7dcef, 0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab, 0xbb097a32, 0xb8ebf380, 0x00000000, 0x00000000},
    {0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623, 0x3c4c824b, 0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366, 0xbc492c9e, 0xbc2a7aa6, 0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792, 0x38b84375, 0x3689bb5a, 0x00000000, 0x00000000},
};

// a float's bits and back (vec8.hpp's, on every CPU)
using vec8_portable::bits;
using vec8_portable::from_bits;

// One lane of it; every step is one IEEE operation, so a scalar loop gives the vector's bits.
inline float dnnl3_gelu_erf(float x) {
  const uint32_t xb = bits(x);
  const float ax = from_bits(xb & 0x7fffffffu);
  // piece = clamp((bits(|x|) + 0xc21fffff) >> 21, 1, 24), arithmetic shift of the 32-bit sum;
  // 23 past the bound 0x40b15cee (about 5.54), where erf(x / sqrt2) is 1 in float
  int32_t piece = static_cast<int32_t>((xb & 0x7fffffffu) + 0xc21fffffu) >> 21;
  piece = std::min<int32_t>(std::max<int32_t>(piece, 1), 24);
  if (from_bits(0x40b15ceeu) < ax) piece = 23;
  float p = from_bits(kGeluPol[5][piece]);
  for (int deg = 4; deg >= 0; --deg) p = std::fma(p, ax, from_bits(kGeluPol[deg][piece]));  // FMA: Horner
  p = from_bits(bits(p) ^ (xb & 0x80000000u));  // erf's sign is x's
  return (x * (p + 1.0f)) * 0.5f;
}

// x (n) -> y (n); nn.GELU() on a float tensor of more than one element: ideep's eltwise
// gelu_erf, oneDNN 3.x on AVX-512 (a single element goes through ATen's scalar formula).
void dnnl3_gelu(const float* x, float* y, int64_t n) {
  if (n <= 1) {
    const float kAlpha = static_cast<float>(M_SQRT1_2);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * 0.5f * (1.0f + std::erf(x[i] * kAlpha));
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = dnnl3_gelu_erf(x[i]);
}

// The kernels 2.6 computes as 1.13 did: exact_kernels.cpp's, called through its table (the
// table itself is a static object of another file, so it is read at call time, not copied).
void sum_rows(const float* x, float* y, int64_t rows, int64_t n) { exact_kernels.sum_rows(x, y, rows, n); }
void mean_rows(const float* x, float* y, int64_t rows, int64_t n) { exact_kernels.mean_rows(x, y, rows, n); }

// oneDNN takes its AVX-512 code (avx512_core: F, CD, BW, VL, DQ) unless ONEDNN_MAX_CPU_ISA
// (or the older DNNL_MAX_CPU_ISA) caps it below; otherwise its GELU is the Abramowitz & Stegun
// form 1.13's oneDNN 2.6.3 used, exact_kernels.cpp's.
bool dnnl_picks_avx512() {
  static const bool picks = [] {
    for (const char* var : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
      const char* isa = std::getenv(var);
      if (isa && *isa && std::strncmp(isa, "AVX512", 6) != 0 && std::strcmp(isa, "ALL") != 0) return false;
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
#else
    return false;
#endif
  }();
  return picks;
}
void gelu(const float* x, float* y, int64_t n) {
  if (dnnl_picks_avx512()) dnnl3_gelu(x, y, n);
  else exact_kernels.gelu(x, y, n);
}
void relu(const float* x, float* y, int64_t n) { exact_kernels.relu(x, y, n); }

}  // namespace
}  // namespace exact

const RowKernels exact_kernels_torch2 = {exact::softmax_rows, exact::log_softmax_rows, exact::layer_norm_rows,
                                         exact::sum_rows,     exact::mean_rows,        exact::gelu,
                                         exact::relu};

const RowKernels& torch_kernels() {
  return torch_version() == TorchVersion::V2_6 ? exact_kernels_torch2 : exact_kernels;
}

}  // namespace ts

TS_VEC8_END
