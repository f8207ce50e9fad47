// test_vec8.cpp: the exact kernels' two vector layers (src/exact/vec8.hpp) give the same bits.
//
// exact_kernels.cpp is written once against vec8's operations; x86-64 runs them as AVX2
// intrinsics (and SLEEF's 8-lane functions), arm64 as plain C++ lane by lane (and SLEEF's
// scalar purecfma builds). If every operation gives the same bits in both, so does every
// kernel (the same operations in the same order, no contraction). Here, on an x86 CPU with
// AVX2 + FMA, each operation runs both ways on edge cases (signed zeros, subnormals, the
// largest floats, infinities, NaNs, exp's overflow and underflow edges) and on 2^16 random bit
// patterns and 2^16 values of moderate size; every output bit must match (NaNs included:
// sign and payload).
#include "catch_compat.hpp"

#if defined(__x86_64__)

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "exact/vec8.hpp"

namespace {

enum Op {
  kAdd, kSub, kMul, kDiv, kFmadd, kFnmadd, kMax, kMin, kMaximum, kFloor, kXor, kAnd, kLess, kBlend,
  kPow2, kSwap4, kSwap2, kSwap1, kFirst, kExp, kLog, kSin, kCos, kSin35, kCos35, kNumOps
};
const char* const kOpNames[kNumOps] = {"vadd", "vsub", "vmul", "vdiv", "vfmadd", "vfnmadd", "vmax", "vmin",
                                       "vmaximum", "vfloor", "vxor", "vand", "vless", "vblend", "vpow2",
                                       "vswap<4>", "vswap<2>", "vswap<1>", "vfirst/vlane0", "sleef_expf8",
                                       "sleef_logf8", "sleef_sinf8", "sleef_cosf8", "sleef_sinf8_u35",
                                       "sleef_cosf8_u35"};

// One operation on 8 lanes of a, b, c into out, with layer L (vec8_avx2 or vec8_portable).
#define TS_VEC8_APPLY(L)                                                         \
  using namespace L;                                                             \
  const V x = vload(a), y = vload(b), z = vload(c);                              \
  V r;                                                                           \
  switch (op) {                                                                  \
    case kAdd: r = vadd(x, y); break;                                            \
    case kSub: r = vsub(x, y); break;                                            \
    case kMul: r = vmul(x, y); break;                                            \
    case kDiv: r = vdiv(x, y); break;                                            \
    case kFmadd: r = vfmadd(x, y, z); break;                                     \
    case kFnmadd: r = vfnmadd(x, y, z); break;                                   \
    case kMax: r = vmax(x, y); break;                                            \
    case kMin: r = vmin(x, y); break;                                            \
    case kMaximum: r = vmaximum(x, y); break;                                    \
    case kFloor: r = vfloor(x); break;                                           \
    case kXor: r = vxor(x, y); break;                                            \
    case kAnd: r = vand(x, y); break;                                            \
    case kLess: r = vless(x, y); break;                                          \
    case kBlend: r = vblend(x, y, z); break;                                     \
    case kPow2: r = vpow2(x); break;                                             \
    case kSwap4: r = vswap<4>(x); break;                                         \
    case kSwap2: r = vswap<2>(x); break;                                         \
    case kSwap1: r = vswap<1>(x); break;                                         \
    case kFirst: r = vfirst(vlane0(vswap<1>(x))); break;                         \
    case kExp: r = sleef_expf8(x); break;                                        \
    case kLog: r = sleef_logf8(x); break;                                        \
    case kSin: r = sleef_sinf8(x); break;                                        \
    case kCos: r = sleef_cosf8(x); break;                                        \
    case kSin35: r = sleef_sinf8_u35(x); break;                                  \
    default: r = sleef_cosf8_u35(x); break;                                      \
  }                                                                              \
  vstore(out, r);

__attribute__((target("avx2,fma"))) void apply_avx2(int op, const float* a, const float* b, const float* c,
                                                    float* out) {
  TS_VEC8_APPLY(ts::exact::vec8_avx2)
}
void apply_portable(int op, const float* a, const float* b, const float* c, float* out) {
  TS_VEC8_APPLY(ts::exact::vec8_portable)
}

__attribute__((target("avx2,fma"))) void vset_avx2(const float* a, const float* b, int count, float* out) {
  using namespace ts::exact::vec8_avx2;
  vstore(out, vset(vload(a), vload(b), count));
}

using ts::exact::vec8_portable::bits;  // a float's bits and back
using ts::exact::vec8_portable::from_bits;

std::vector<float> inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.5f, -2.5f, 3.5f, 1e-3f, -1e-3f,
                          std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                          from_bits(0x007fffffu), from_bits(0x807fffffu),  // the largest subnormals
                          std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), inf, -inf,
                          std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                          from_bits(0x7fc12345u), from_bits(0xffffffffu),  // NaNs with payloads
                          88.0f, 88.72f, 88.73f, 89.0f, -87.33f, -87.34f, -88.0f, -103.0f, -104.0f, -150.0f,
                          0.69314718f, 1.5707964f, 3.1415927f, 6.2831855f, 1e4f, -1e4f, 1e7f, 1e20f};
  std::mt19937 rng(30);
  std::uniform_int_distribution<uint32_t> any_bits;
  std::uniform_real_distribution<float> moderate(-100.0f, 100.0f);
  for (int i = 0; i < 1 << 16; ++i) v.push_back(from_bits(any_bits(rng)));
  for (int i = 0; i < 1 << 16; ++i) v.push_back(moderate(rng));
  return v;
}

}  // namespace

TEST_CASE("vec8: the portable layer computes the AVX2 layer's bits, operation by operation", "[vec8]") {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    WARN("this CPU has no AVX2 + FMA: the AVX2 layer cannot run here, not compared");
    return;
  }
  const std::vector<float> in = inputs();
  const size_t n = in.size();
  std::mt19937 rng(1);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  for (int op = 0; op < kNumOps; ++op) {
    INFO("operation " << kOpNames[op]);
    size_t mismatches = 0, compared = 0;
    std::string first;
    // a runs over every input in order; b and c are other inputs drawn at random
    for (size_t i = 0; i < n; i += 8) {
      alignas(32) float a[8], b[8], c[8], r_avx2[8], r_port[8];
      for (int k = 0; k < 8; ++k) {
        a[k] = in[(i + size_t(k)) % n];
        b[k] = in[pick(rng)];
        c[k] = in[pick(rng)];
        if (op == kPow2) a[k] = std::nearbyint(std::fmod(std::fabs(std::isfinite(a[k]) ? a[k] : 1.0f), 254.0f)) - 126.0f;
      }
      // sinf/cosf: SLEEF's 8 lanes take one path for the whole vector (vec8.hpp); every 4th
      // vector here has lanes 1-7 small (|x| < 2.5, the fast path unless lane 0 is large), so
      // vectors that mix small lanes with large, inf or NaN ones are compared too; the 3.5-ulp
      // builds have a middle path (every lane |x| < 39000): every 4th vector more has lane 0
      // in [125, 39000) and lanes 1-7 small
      const bool trig = op == kSin || op == kCos || op == kSin35 || op == kCos35;
      if (trig && (i / 8) % 4 == 0)
        for (int k = 1; k < 8; ++k) a[k] = std::isfinite(a[k]) ? std::fmod(a[k], 2.5f) : 0.5f;
      if ((op == kSin35 || op == kCos35) && (i / 8) % 4 == 1) {
        a[0] = 125.0f + std::fmod(std::isfinite(a[0]) ? std::fabs(a[0]) : 1.0f, 38000.0f);
        for (int k = 1; k < 8; ++k) a[k] = std::isfinite(a[k]) ? std::fmod(a[k], 2.5f) : 0.5f;
      }
      apply_avx2(op, a, b, c, r_avx2);
      apply_portable(op, a, b, c, r_port);
      for (int k = 0; k < 8; ++k, ++compared) {
        if (bits(r_avx2[k]) == bits(r_port[k])) continue;
        // _mm256_fmadd_ps(a, b, c) is vfmadd132/213/231ps as the compiler allocates registers,
        // and x86 returns the NaN of the instruction's first operand: with two NaN inputs,
        // which one comes back is the compiler's choice (GCC and clang differ), not torch's.
        // Both NaN, from two NaN inputs, is all the AVX2 side itself guarantees.
        if (std::isnan(r_avx2[k]) && std::isnan(r_port[k]) &&
            int(std::isnan(a[k])) + int(std::isnan(b[k])) + int(std::isnan(c[k])) >= 2)
          continue;
        if (mismatches++ == 0)
          first = "lane " + std::to_string(k) + ": a=" + std::to_string(a[k]) + " b=" + std::to_string(b[k]) +
                  " c=" + std::to_string(c[k]) + " avx2 bits " + std::to_string(bits(r_avx2[k])) +
                  ", portable bits " + std::to_string(bits(r_port[k]));
      }
    }
    INFO(compared << " lanes compared; first mismatch: " << first);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("vec8: vset takes lanes [0, count) from b, as Vectorized<float>::set", "[vec8]") {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
  alignas(32) float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {-1, -2, -3, -4, -5, -6, -7, -8};
  for (int count = 0; count <= 8; ++count) {
    alignas(32) float r_avx2[8], r_port[8];
    vset_avx2(a, b, count, r_avx2);
    using namespace ts::exact::vec8_portable;
    vstore(r_port, vset(vload(a), vload(b), count));
    INFO("count " << count);
    CHECK(std::memcmp(r_avx2, r_port, sizeof r_avx2) == 0);
    CHECK(r_port[0] == (count > 0 ? -1.0f : 1.0f));
  }
}

#endif
