// vec8.hpp: torch's Vectorized<float> on AVX2 (8 lanes), the operations the exact kernels use,
// twice: with AVX2 + FMA intrinsics (x86-64) and in plain C++ (every CPU).
//
// Introduced in ch03 with exact_kernels.cpp (PyTorch's softmax, LayerNorm, GELU, sums). The
// course prints PyTorch's bits whatever CPU it runs on, so where torch's x86 kernels use AVX2
// the exact path replays the same float operations in the same order:
//   vec8_avx2      the intrinsics torch's vec256_float.h calls (x86-64 only)
//   vec8_portable  8 floats in an array, each operation lane by lane: IEEE add/sub/mul/div
//                  round the same on every CPU, a fused multiply-add is std::fma (only where
//                  the x86 code fuses), max/min/compare follow x86's NaN rules, and SLEEF's
//                  8-lane functions are its scalar "purecfma" builds of the same algorithm
//                  (Sleef_expf1_u10purecfma: same source, same FMAs, one lane). sinf/cosf
//                  need one more step: SLEEF's vector builds reduce every lane with the slow
//                  path (Payne-Hanek, in double-float) as soon as one lane has |x| >= 125 or
//                  is inf/NaN, and that path can round a small lane 1 ulp apart from the fast
//                  one (PositionalEncoding's tables mix such lanes from position 125 on). Such
//                  a vector goes through SLEEF's 4-lane FMA build (AdvSIMD on arm64, AVX2's
//                  128-bit build on x86-64) three lanes at a time, the fourth lane holding the
//                  vector's own lane that sends the call down the same path
// exact_kernels.cpp uses vec8_avx2 on x86-64 and vec8_portable elsewhere (arm64);
// tests/test_vec8.cpp checks the two give the same bits on x86, op by op, edge cases included.
// The file including this one must be compiled with -ffp-contract=off (CMakeLists.txt).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

// SLEEF's scalar builds of the functions torch's AVX2 kernels call (libsleef-dev, on every
// architecture Debian builds it for).
extern "C" {
float Sleef_expf1_u10purecfma(float);
float Sleef_logf1_u10purecfma(float);
float Sleef_sinf1_u10purecfma(float);
float Sleef_cosf1_u10purecfma(float);
// PyTorch 2.x's Vectorized<float>::sin/cos call SLEEF's 3.5-ulp builds (u35), 1.13's the 1-ulp ones
float Sleef_sinf1_u35purecfma(float);
float Sleef_cosf1_u35purecfma(float);
}
// SLEEF's 4-lane sinf/cosf with FMA: the 8-lane AVX2 algorithm, 4 lanes wide (see
// sleef_trig8 below). The x86-64 one runs only where the CPU has AVX2 + FMA: there the
// portable layer is run by tests/test_vec8.cpp alone, which checks that first.
#if defined(__aarch64__)
#include <arm_neon.h>
extern "C" {
float32x4_t Sleef_sinf4_u10advsimd(float32x4_t);
float32x4_t Sleef_cosf4_u10advsimd(float32x4_t);
float32x4_t Sleef_sinf4_u35advsimd(float32x4_t);
float32x4_t Sleef_cosf4_u35advsimd(float32x4_t);
}
#define TS_SLEEF_TRIG4 1
#define TS_SLEEF_SINF4 Sleef_sinf4_u10advsimd
#define TS_SLEEF_COSF4 Sleef_cosf4_u10advsimd
#define TS_SLEEF_SINF4_U35 Sleef_sinf4_u35advsimd
#define TS_SLEEF_COSF4_U35 Sleef_cosf4_u35advsimd
#elif defined(__x86_64__)
#include <xmmintrin.h>
extern "C" {
__m128 Sleef_sinf4_u10avx2128(__m128);
__m128 Sleef_cosf4_u10avx2128(__m128);
__m128 Sleef_sinf4_u35avx2128(__m128);
__m128 Sleef_cosf4_u35avx2128(__m128);
}
#define TS_SLEEF_TRIG4 1
#define TS_SLEEF_SINF4 Sleef_sinf4_u10avx2128
#define TS_SLEEF_COSF4 Sleef_cosf4_u10avx2128
#define TS_SLEEF_SINF4_U35 Sleef_sinf4_u35avx2128
#define TS_SLEEF_COSF4_U35 Sleef_cosf4_u35avx2128
#endif

namespace ts::exact::vec8_portable {

constexpr int kLanes = 8;
struct V {
  float f[kLanes];
};

inline uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
// out[i] = f(a[i], ...) for every lane
template <class F>
inline V each(const F& f, V a) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.f[i] = f(a.f[i]);
  return r;
}
template <class F>
inline V each(const F& f, V a, V b) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.f[i] = f(a.f[i], b.f[i]);
  return r;
}
template <class F>
inline V each(const F& f, V a, V b, V c) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.f[i] = f(a.f[i], b.f[i], c.f[i]);
  return r;
}

inline V vload(const float* p) {
  V v;
  std::memcpy(v.f, p, sizeof v.f);
  return v;
}
inline void vstore(float* p, V v) { std::memcpy(p, v.f, sizeof v.f); }
inline V vbroadcast(float x) { return each([x](float) { return x; }, V{}); }
inline V vzero() { return vbroadcast(0.0f); }
inline V vbits(uint32_t u) { return vbroadcast(from_bits(u)); }
inline V vfirst(float x) {  // (x, 0, 0, 0, 0, 0, 0, 0)
  V v = vzero();
  v.f[0] = x;
  return v;
}
inline float vlane0(V v) { return v.f[0]; }

inline V vadd(V a, V b) { return each([](float x, float y) { return x + y; }, a, b); }
inline V vsub(V a, V b) { return each([](float x, float y) { return x - y; }, a, b); }
inline V vmul(V a, V b) { return each([](float x, float y) { return x * y; }, a, b); }
inline V vdiv(V a, V b) { return each([](float x, float y) { return x / y; }, a, b); }
// a * b + c, one rounding (vfmadd231ps)
inline V vfmadd(V a, V b, V c) { return each([](float x, float y, float z) { return std::fma(x, y, z); }, a, b, c); }
// a NaN made quiet, its sign and payload kept, as x86 returns a NaN operand
inline float quiet(float x) { return from_bits(bits(x) | 0x00400000u); }
// c - a * b, one rounding (vfnmadd231ps); a NaN operand comes back as it is (quiet), not negated
inline V vfnmadd(V a, V b, V c) {
  return each([](float x, float y, float z) {
    if (std::isnan(x) || std::isnan(y) || std::isnan(z)) return quiet(std::isnan(x) ? x : std::isnan(y) ? y : z);
    return std::fma(-x, y, z);
  }, a, b, c);
}
// maxps / minps: the second operand when either is NaN or both are zero
inline V vmax(V a, V b) { return each([](float x, float y) { return x > y ? x : y; }, a, b); }
inline V vmin(V a, V b) { return each([](float x, float y) { return x < y ? x : y; }, a, b); }
// vec::maximum: maxps, then every bit set where either is NaN
inline V vmaximum(V a, V b) {
  return each([](float x, float y) { return std::isnan(x) || std::isnan(y) ? from_bits(~0u) : (x > y ? x : y); }, a, b);
}
inline V vfloor(V a) { return each([](float x) { return std::isnan(x) ? quiet(x) : std::floor(x); }, a); }
inline V vxor(V a, V b) { return each([](float x, float y) { return from_bits(bits(x) ^ bits(y)); }, a, b); }
inline V vand(V a, V b) { return each([](float x, float y) { return from_bits(bits(x) & bits(y)); }, a, b); }
// a < b (ordered, signalling): all bits set where true
inline V vless(V a, V b) { return each([](float x, float y) { return from_bits(x < y ? ~0u : 0u); }, a, b); }
// blendv: b where the mask's sign bit is set, else a
inline V vblend(V a, V b, V mask) {
  return each([](float x, float y, float m) { return (bits(m) >> 31) ? y : x; }, a, b, mask);
}
// Vectorized<float>::set(a, b, count): lanes [0, count) from b, the rest from a
inline V vset(V a, V b, int64_t count) {
  V r = a;
  for (int i = 0; i < kLanes && i < count; ++i) r.f[i] = b.f[i];
  return r;
}
// the bits (int(n) + 127) << 23, n rounded to nearest even (cvtps2dq), as a float: 2^n
// for integral n in [-126, 127]. The callers pass integral n in range.
inline V vpow2(V n) {
  return each([](float x) { return from_bits((static_cast<uint32_t>(static_cast<int32_t>(std::nearbyint(x))) + 127u) << 23); }, n);
}
// lane i <-> lane i ^ K: K = 4 swaps the 128-bit halves (permute2f128 0x01), K = 2 swaps pairs
// (shuffle_ps 0x4E), K = 1 swaps neighbours (shuffle_ps 0xB1)
template <int K>
inline V vswap(V v) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.f[i] = v.f[i ^ K];
  return r;
}

inline V sleef_expf8(V x) { return each(Sleef_expf1_u10purecfma, x); }
inline V sleef_logf8(V x) { return each(Sleef_logf1_u10purecfma, x); }
// SLEEF's 8-lane sinf/cosf branch on the whole vector; its lanes are computed independently
// apart from that branch. The 1-ulp builds (u10, torch 1.13): the fast reduction (Cody-Waite)
// when every lane has |x| < 125 (TRIGRANGEMAX2f), else the slow one (Payne-Hanek) for all 8
// lanes. The 3.5-ulp builds (u35, torch 2.x) in three ways: every lane |x| < 125, else every
// lane |x| < 39000 (TRIGRANGEMAXf), else the slow reduction. NaN and inf count as large in both.
// The one-lane build decides per lane, so it serves the all-small case. Otherwise every lane
// goes through the 4-lane build, three at a time, the fourth lane holding the vector's own lane
// that decides its branch (a NaN if there is one, else the largest |x|): the 4-lane call then
// takes the branch the 8-lane one took, for either build.
// Checked: x86 against AVX2 by tests/test_vec8.cpp; arm64 against x86's AVX2 bits on 2 million
// lanes of position * frequency, and by test_annotated's PositionalEncoding test under qemu.
#if defined(TS_SLEEF_TRIG4)
template <class F4>
inline V sleef_trig8(float (*one)(float), F4 (*four)(F4), V x) {
  constexpr float kTrigRangeMax2 = 125.0f;  // SLEEF's TRIGRANGEMAX2f
  int decider = 0;  // the lane with the largest |x|, NaN counting as larger than any
  bool slow = false;
  for (int i = 0; i < kLanes; ++i) {
    slow = slow || !(std::fabs(x.f[i]) < kTrigRangeMax2);
    if (std::isnan(x.f[i]) || (!std::isnan(x.f[decider]) && std::fabs(x.f[i]) > std::fabs(x.f[decider])))
      decider = i;
  }
  if (!slow) return each(one, x);
  V r;
  for (int i = 0; i < kLanes; i += 3) {
    float in[4], out[4];
    const int m = kLanes - i < 3 ? kLanes - i : 3;
    for (int k = 0; k < 4; ++k) in[k] = x.f[decider];
    for (int k = 0; k < m; ++k) in[k] = x.f[i + k];
    F4 v;
    std::memcpy(&v, in, sizeof in);
    v = four(v);
    std::memcpy(out, &v, sizeof out);
    for (int k = 0; k < m; ++k) r.f[i + k] = out[k];
  }
  // inf and NaN give every bit set on x86 (AArch64 clears cosf's sign: another NaN)
  for (int i = 0; i < kLanes; ++i)
    if (!std::isfinite(x.f[i])) r.f[i] = from_bits(~0u);
  return r;
}
inline V sleef_sinf8(V x) { return sleef_trig8(Sleef_sinf1_u10purecfma, TS_SLEEF_SINF4, x); }
inline V sleef_cosf8(V x) { return sleef_trig8(Sleef_cosf1_u10purecfma, TS_SLEEF_COSF4, x); }
inline V sleef_sinf8_u35(V x) { return sleef_trig8(Sleef_sinf1_u35purecfma, TS_SLEEF_SINF4_U35, x); }
inline V sleef_cosf8_u35(V x) { return sleef_trig8(Sleef_cosf1_u35purecfma, TS_SLEEF_COSF4_U35, x); }
#else
// A CPU with neither build: lane by lane, 1 ulp off x86 where a vector mixes small and large lanes.
inline V sleef_sinf8(V x) { return each(Sleef_sinf1_u10purecfma, x); }
inline V sleef_cosf8(V x) { return each(Sleef_cosf1_u10purecfma, x); }
inline V sleef_sinf8_u35(V x) { return each(Sleef_sinf1_u35purecfma, x); }
inline V sleef_cosf8_u35(V x) { return each(Sleef_cosf1_u35purecfma, x); }
#endif

}  // namespace ts::exact::vec8_portable

#if defined(__x86_64__)
// Functions between TS_AVX2_BEGIN and TS_AVX2_END are compiled for AVX2 + FMA whatever flags
// the build passes, under GCC (#pragma GCC target) and clang (which ignores that pragma but
// applies `target` to every function, lambdas included, through #pragma clang attribute).
// They may run only where the CPU has AVX2 and FMA (torch's AVX2 kernels need the same).
#if defined(__clang__)
#define TS_AVX2_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx2,fma\"))), apply_to = function)")
#define TS_AVX2_END _Pragma("clang attribute pop")
#else
#define TS_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define TS_AVX2_END _Pragma("GCC pop_options")
#endif

#include <immintrin.h>

// SLEEF's 8-lane functions, the ones torch's AVX2 kernels call (libsleef-dev). sleef.h
// declares its __m256 functions only when the includer is compiled with -mavx (it tests
// __AVX__, which the target pragma does not define), so a generic build (-DTS_NATIVE=OFF)
// would not see them: the ones used here are declared as sleef.h declares them.
// Declared under the target too: clang passes __m256 in a ymm register only to a function
// it knows runs with AVX, as SLEEF's do.
TS_AVX2_BEGIN
extern "C" {
__m256 Sleef_expf8_u10(__m256);
__m256 Sleef_logf8_u10(__m256);
__m256 Sleef_sinf8_u10(__m256);
__m256 Sleef_cosf8_u10(__m256);
__m256 Sleef_sinf8_u35(__m256);
__m256 Sleef_cosf8_u35(__m256);
}

namespace ts::exact::vec8_avx2 {

constexpr int kLanes = 8;
using V = __m256;  // torch's Vectorized<float> on AVX2

inline V vload(const float* p) { return _mm256_loadu_ps(p); }
inline void vstore(float* p, V v) { _mm256_storeu_ps(p, v); }
inline V vbroadcast(float x) { return _mm256_set1_ps(x); }
inline V vzero() { return _mm256_setzero_ps(); }
inline V vbits(uint32_t u) { return _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(u))); }
inline V vfirst(float x) { return _mm256_setr_ps(x, 0, 0, 0, 0, 0, 0, 0); }
inline float vlane0(V v) { return _mm256_cvtss_f32(v); }

inline V vadd(V a, V b) { return _mm256_add_ps(a, b); }
inline V vsub(V a, V b) { return _mm256_sub_ps(a, b); }
inline V vmul(V a, V b) { return _mm256_mul_ps(a, b); }
inline V vdiv(V a, V b) { return _mm256_div_ps(a, b); }
inline V vfmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline V vfnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
inline V vmax(V a, V b) { return _mm256_max_ps(a, b); }
inline V vmin(V a, V b) { return _mm256_min_ps(a, b); }
inline V vmaximum(V a, V b) {
  const V m = _mm256_max_ps(a, b);
  const V isnan = _mm256_cmp_ps(a, b, _CMP_UNORD_Q);
  return _mm256_or_ps(m, isnan);
}
inline V vfloor(V a) { return _mm256_floor_ps(a); }
inline V vxor(V a, V b) { return _mm256_xor_ps(a, b); }
inline V vand(V a, V b) { return _mm256_and_ps(a, b); }
inline V vless(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OS); }
inline V vblend(V a, V b, V mask) { return _mm256_blendv_ps(a, b, mask); }
inline V vset(V a, V b, int64_t count) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), idx);
  return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(mask));
}
inline V vpow2(V n) {
  const __m256i e = _mm256_cvtps_epi32(n);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23));
}
template <int K>
inline V vswap(V v) {
  static_assert(K == 4 || K == 2 || K == 1, "lanes swap by 4, 2 or 1");
  if constexpr (K == 4) return _mm256_permute2f128_ps(v, v, 0x1);
  if constexpr (K == 2) return _mm256_shuffle_ps(v, v, 0x4E);
  return _mm256_shuffle_ps(v, v, 0xB1);
}

inline V sleef_expf8(V x) { return Sleef_expf8_u10(x); }
inline V sleef_logf8(V x) { return Sleef_logf8_u10(x); }
inline V sleef_sinf8(V x) { return Sleef_sinf8_u10(x); }
inline V sleef_cosf8(V x) { return Sleef_cosf8_u10(x); }
inline V sleef_sinf8_u35(V x) { return Sleef_sinf8_u35(x); }
inline V sleef_cosf8_u35(V x) { return Sleef_cosf8_u35(x); }

}  // namespace ts::exact::vec8_avx2
TS_AVX2_END
#endif

// ts::exact::vec8, the layer the kernel files compute with: vec8_avx2 on x86-64, vec8_portable
// elsewhere. A kernel file puts its functions between TS_VEC8_BEGIN and TS_VEC8_END: on x86-64
// they are compiled for AVX2 + FMA (TS_AVX2_BEGIN), and GCC's note that passing __m256 between
// functions changes the ABI without -mavx (a generic build) is silenced, as every function that
// passes one is in that file, between the two.
#if defined(__x86_64__)
namespace ts::exact {
namespace vec8 = vec8_avx2;
}
#define TS_VEC8_BEGIN _Pragma("GCC diagnostic ignored \"-Wpsabi\"") TS_AVX2_BEGIN
#define TS_VEC8_END TS_AVX2_END
#else
namespace ts::exact {
namespace vec8 = vec8_portable;
}
#define TS_VEC8_BEGIN
#define TS_VEC8_END
#endif
