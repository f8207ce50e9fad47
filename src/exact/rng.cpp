// rng.cpp: PyTorch 1.13.1's CPU random streams, bit for bit (introduced in ch01).
//
// Every formula below is quoted from /work/shared/reference/RNG_SPEC.md ("spec N").
// This file is compiled with -ffp-contract=off: the compiler never fuses a*b+c on
// its own, so each fused multiply-add that torch's AVX2 build performs is written
// out as std::fmaf / std::fma, and every other product is rounded separately.
#include "exact/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define TS_RNG_AVX2 1
#endif

namespace ts {

// ============================================================================
// 1) Seeding and raw draws: a standard MT19937 (spec 1)
// ============================================================================

namespace {
constexpr size_t kN = 624;  // state words
constexpr size_t kM = 397;  // twist offset
constexpr uint32_t kMatrixA = 0x9908b0dfu;
constexpr uint32_t kUpperMask = 0x80000000u;
constexpr uint32_t kLowerMask = 0x7fffffffu;
constexpr double kPi = 3.14159265358979323846;  // c10::pi<double>
}  // namespace

Generator::Generator(uint64_t seed) { manual_seed(seed); }

void Generator::manual_seed(uint64_t seed) {
  // state[0] = s & 0xFFFFFFFF                      (ONLY the low 32 bits are used)
  // state[j] = 1812433253 * (state[j-1] ^ (state[j-1] >> 30)) + j   (mod 2^32)
  seed_ = seed;
  state_[0] = static_cast<uint32_t>(seed & 0xffffffffu);
  for (uint32_t j = 1; j < kN; ++j) {
    state_[j] = 1812433253u * (state_[j - 1] ^ (state_[j - 1] >> 30)) + j;
  }
  next_ = kN;                   // the first draw twists the whole state
  next_double_normal.reset();   // clear the Box-Muller cache
}

void Generator::twist() {
  // for every i: y = upper bit of state[i] | lower 31 bits of state[i+1]
  //              state[i] = state[i+397] ^ (y >> 1) ^ (y odd ? 0x9908b0df : 0)   (indices mod 624)
  auto mix = [](uint32_t a, uint32_t b) {
    const uint32_t y = (a & kUpperMask) | (b & kLowerMask);
    return (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
  };
  size_t i = 0;
  for (; i < kN - kM; ++i) state_[i] = state_[i + kM] ^ mix(state_[i], state_[i + 1]);
  for (; i < kN - 1; ++i) state_[i] = state_[i + kM - kN] ^ mix(state_[i], state_[i + 1]);
  state_[kN - 1] = state_[kM - 1] ^ mix(state_[kN - 1], state_[0]);
  next_ = 0;
}

// one MT19937 output from one state word: tempered (shifts 11 / 7 / 15 / 18)
static inline uint32_t temper(uint32_t y) {
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint32_t Generator::random() {
  if (next_ >= kN) twist();
  return temper(state_[next_++]);
}

void Generator::random_n(uint32_t* out, size_t n) {
  // the state words left before the next twist, tempered in one loop (the compiler vectorises it)
  while (n > 0) {
    if (next_ >= kN) twist();
    const size_t take = std::min(n, kN - next_);
    const uint32_t* w = state_.data() + next_;
    for (size_t i = 0; i < take; ++i) out[i] = temper(w[i]);
    next_ += take, out += take, n -= take;
  }
}

uint64_t Generator::random64() {
  // random64() = (uint64(mt()) << 32) | mt()      (the FIRST draw is the high word)
  const uint64_t hi = random();
  const uint64_t lo = random();
  return (hi << 32) | lo;
}

double Generator::uniform01_double() {
  // x = (random64() & (2^53 - 1)) * 2^-53       (53 random bits -> [0, 1), exact)
  constexpr uint64_t kMask53 = (uint64_t{1} << 53) - 1;
  return static_cast<double>(random64() & kMask53) * 0x1p-53;
}

float Generator::uniform01_float() {
  // x = float(random() & 0xFFFFFF) * 2^-24      (24 random bits -> [0, 1), exact)
  return static_cast<float>(random() & 0xffffffu) * 0x1p-24f;
}

double Generator::normal_double() {
  // Cached value present: return it and empty the cache.
  if (next_double_normal) {
    const double v = *next_double_normal;
    next_double_normal.reset();
    return v;
  }
  // Box-Muller on two 53-bit uniforms (4 draws):
  //   r = sqrt(-2 log(1 - u2)), theta = 2 pi u1     (1.13 uses log(1-u2), not log1p)
  //   cache = r sin(theta), return r cos(theta)
  const double u1 = uniform01_double();
  const double u2 = uniform01_double();
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * kPi * u1;
  next_double_normal = r * std::sin(theta);
  return r * std::cos(theta);
}

Generator& default_generator() {
  static Generator g;
  return g;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

PyInt parse_py_int(const std::string& text) {
  // Python's int(text): 1) strip spaces 2) optional sign 3) decimal digits, a single
  // "_" allowed between two digits ("010" is 10; "0x10", "1e3", "" are refused).
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  PyInt r;
  // 1) strip
  size_t b = 0, e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  // 2) sign
  if (b < e && (text[b] == '+' || text[b] == '-')) {
    r.negative = text[b] == '-';
    ++b;
  }
  if (b == e) return r;
  // 3) digits; remember overflow past 2^64 - 1 but keep checking the syntax
  for (size_t i = b; i < e; ++i) {
    const char c = text[i];
    if (c == '_') {
      if (i == b || i + 1 == e || !is_digit(text[i - 1]) || !is_digit(text[i + 1])) return r;
      continue;
    }
    if (!is_digit(c)) return r;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (r.magnitude > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      r.too_big = true;
    } else {
      r.magnitude = r.magnitude * 10 + d;
    }
  }
  r.ok = true;
  return r;
}

std::optional<uint64_t> parse_seed(const std::string& text) {
  // int(text), then torch's range check: [-2^63, 2^64).
  const PyInt v = parse_py_int(text);
  if (!v.ok || v.too_big) return std::nullopt;                 // not an int, or beyond +-(2^64 - 1)
  if (!v.negative) return v.magnitude;                         // [0, 2^64)
  if (v.magnitude > (uint64_t{1} << 63)) return std::nullopt;  // below -2^63
  return uint64_t{0} - v.magnitude;                            // two's complement wrap: -1 -> 2^64-1
}

// ============================================================================
// 2) Uniform fills (spec 2)
// ============================================================================

void uniform_(float* p, size_t n, double from, double to, Generator& g) {
  if (!(from <= to)) throw std::invalid_argument("uniform_: expects from <= to");
  // f = float(a); t = float(b)                 (the bounds are cast to float32 FIRST)
  const float f = static_cast<float>(from);
  const float t = static_cast<float>(to);
  const float width = t - f;
  for (size_t i = 0; i < n; ++i) {
    // out = fmaf(x, t - f, f)                  (ONE rounding: the AVX2 build fuses it)
    p[i] = std::fmaf(g.uniform01_float(), width, f);
  }
}

void uniform_(double* p, size_t n, double from, double to, Generator& g) {
  if (!(from <= to)) throw std::invalid_argument("uniform_: expects from <= to");
  // out = fma(x, to - from, from), x with 53 random bits (two draws)
  const double width = to - from;
  for (size_t i = 0; i < n; ++i) p[i] = std::fma(g.uniform01_double(), width, from);
}

void uniform_(Tensor& t, double from, double to, Generator& g) { uniform_(t.data(), t.size(), from, to, g); }

// ============================================================================
// 3) Normal fills (spec 3)
// ============================================================================

namespace rng_detail {

namespace {
float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
// Cephes constants, as in Pommier's avx_mathfun.h
constexpr float kMinNormPos = 1.17549435e-38f;
constexpr float kSqrtHalf = 0.707106781186547524f;
constexpr float kLogP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                            -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                            2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLogQ1 = -2.12194440e-4f;
constexpr float kLogQ2 = 0.693359375f;
constexpr float kFourOverPi = 1.27323954473516f;
constexpr float kDP1 = 0.78515625f;  // pi/4 split into three parts
constexpr float kDP2 = 2.4187564849853515625e-4f;
constexpr float kDP3 = 3.77489497744594108e-8f;
constexpr float kCosP[3] = {2.443315711809948E-005f, -1.388731625493765E-003f, 4.166664568298827E-002f};
constexpr float kSinP[3] = {-1.9515295891E-4f, 8.3321608736E-3f, -1.6666654611E-1f};
constexpr float kTwoPiF = 6.2831855f;  // float(2 * pi)
constexpr uint32_t kSignBit = 0x80000000u;
}  // namespace

float log_cephes(float x) {
  // 1) split x = m * 2^e with m in [0.5, 1)
  x = std::max(x, kMinNormPos);  // cut off denormals
  const uint32_t bits = float_to_bits(x);
  float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 127) + 1.0f;
  x = bits_to_float((bits & ~0x7f800000u) | float_to_bits(0.5f));
  // 2) if m < sqrt(1/2): e -= 1, x = 2m - 1   else x = m - 1
  if (x < kSqrtHalf) {
    e = e - 1.0f;
    x = (x - 1.0f) + x;
  } else {
    x = x - 1.0f;
  }
  // 3) log(1+x) ~ x - x^2/2 + x^3 P(x), Horner with fused steps
  const float z = x * x;
  float y = kLogP[0];
  for (int k = 1; k < 9; ++k) y = std::fmaf(y, x, kLogP[k]);
  y = y * x;
  y = std::fmaf(y, z, e * kLogQ1);  // y*z fused; e*q1 rounded separately
  y = y - z * 0.5f;
  // 4) log(x) = log(1+x) + e * log(2)
  x = x + y;
  return std::fmaf(e, kLogQ2, x);
}

void sincos_cephes(float x, float* s, float* c) {
  // 1) j = octant of x (rounded up to even), x -= j * pi/4 in three fused steps
  const float yq = x * kFourOverPi;
  uint32_t j = static_cast<uint32_t>(static_cast<int32_t>(yq));  // truncate
  j = (j + 1) & ~1u;
  const float y = static_cast<float>(static_cast<int32_t>(j));
  x = std::fmaf(y, -kDP1, x);
  x = std::fmaf(y, -kDP2, x);
  x = std::fmaf(y, -kDP3, x);
  // 2) both polynomials on the reduced x
  const float z = x * x;
  float yc = std::fmaf(std::fmaf(kCosP[0], z, kCosP[1]), z, kCosP[2]);
  yc = yc * z;
  yc = std::fmaf(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = std::fmaf(std::fmaf(kSinP[0], z, kSinP[1]), z, kSinP[2]);
  ys = ys * z;
  ys = std::fmaf(ys, x, x);
  // 3) pick sin/cos by octant, then their signs
  const bool swap = (j & 2u) != 0;
  uint32_t sin_bits = float_to_bits(swap ? yc : ys);
  uint32_t cos_bits = float_to_bits(swap ? ys : yc);
  if (j & 4u) sin_bits ^= kSignBit;
  if ((~(j - 2u)) & 4u) cos_bits ^= kSignBit;
  *s = bits_to_float(sin_bits);
  *c = bits_to_float(cos_bits);
}

void fill16_naive(float* p, float mean, float stdv) {
  // fill16(p): for j in 0..7, Box-Muller on the pair (p[j], p[j+8])
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - p[j];                                   // [0,1) -> (0,1]
    const float u2 = p[j + 8];
    const float radius = std::sqrt(-2.0f * log_cephes(u1));         // sqrtf(-2 log u1)
    const float theta = kTwoPiF * u2;                               // float(2 pi) * u2
    float s, c;
    sincos_cephes(theta, &s, &c);
    p[j] = std::fmaf(radius * c, stdv, mean);                        // fmaf(radius cos, stdv, mean)
    p[j + 8] = std::fmaf(radius * s, stdv, mean);                    // fmaf(radius sin, stdv, mean)
  }
}

#ifdef TS_RNG_AVX2
namespace {
// log_cephes on 8 lanes: the same steps as above, in avx_mathfun's order.
__m256 log8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  x = _mm256_max_ps(x, _mm256_set1_ps(kMinNormPos));
  __m256i ei = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
  x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0x7f800000)));
  x = _mm256_or_ps(x, _mm256_set1_ps(0.5f));
  ei = _mm256_sub_epi32(ei, _mm256_set1_epi32(0x7f));
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(ei), one);
  const __m256 mask = _mm256_cmp_ps(x, _mm256_set1_ps(kSqrtHalf), _CMP_LT_OS);
  const __m256 tmp = _mm256_and_ps(x, mask);
  x = _mm256_sub_ps(x, one);
  e = _mm256_sub_ps(e, _mm256_and_ps(one, mask));
  x = _mm256_add_ps(x, tmp);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 y = _mm256_set1_ps(kLogP[0]);
  for (int k = 1; k < 9; ++k) y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(kLogP[k]));
  y = _mm256_mul_ps(y, x);
  y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, _mm256_set1_ps(kLogQ1)));
  y = _mm256_sub_ps(y, _mm256_mul_ps(z, _mm256_set1_ps(0.5f)));
  x = _mm256_add_ps(x, y);
  return _mm256_fmadd_ps(e, _mm256_set1_ps(kLogQ2), x);
}

// sincos_cephes on 8 lanes (x >= 0).
void sincos8(__m256 x, __m256* s, __m256* c) {
  __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, _mm256_set1_ps(kFourOverPi)));
  j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
  const __m256 y = _mm256_cvtepi32_ps(j);
  x = _mm256_fmadd_ps(y, _mm256_set1_ps(-kDP1), x);
  x = _mm256_fmadd_ps(y, _mm256_set1_ps(-kDP2), x);
  x = _mm256_fmadd_ps(y, _mm256_set1_ps(-kDP3), x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 yc = _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(kCosP[0]), z, _mm256_set1_ps(kCosP[1])), z,
                              _mm256_set1_ps(kCosP[2]));
  yc = _mm256_mul_ps(yc, z);
  yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, _mm256_set1_ps(0.5f)));
  yc = _mm256_add_ps(yc, _mm256_set1_ps(1.0f));
  __m256 ys = _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(kSinP[0]), z, _mm256_set1_ps(kSinP[1])), z,
                              _mm256_set1_ps(kSinP[2]));
  ys = _mm256_mul_ps(ys, z);
  ys = _mm256_fmadd_ps(ys, x, x);
  // swap where (j & 2) != 0; sign of sin from (j & 4), sign of cos from ~(j-2) & 4
  const __m256 swap = _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(2)));
  const __m256 sin_sign = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29));
  const __m256 cos_sign = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_andnot_si256(_mm256_sub_epi32(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(4)), 29));
  *s = _mm256_xor_ps(_mm256_blendv_ps(ys, yc, swap), sin_sign);
  *c = _mm256_xor_ps(_mm256_blendv_ps(yc, ys, swap), cos_sign);
}
}  // namespace
#endif

void fill16_fast(float* p, float mean, float stdv) {
#ifdef TS_RNG_AVX2
  // torch's normal_fill_16_AVX2: lanes 0..7 are u1, lanes 8..15 are u2
  const __m256 u1 = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(p));
  const __m256 u2 = _mm256_loadu_ps(p + 8);
  const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), log8(u1)));
  const __m256 theta = _mm256_mul_ps(_mm256_set1_ps(kTwoPiF), u2);
  __m256 s, c;
  sincos8(theta, &s, &c);
  const __m256 vstd = _mm256_set1_ps(stdv), vmean = _mm256_set1_ps(mean);
  _mm256_storeu_ps(p, _mm256_fmadd_ps(_mm256_mul_ps(radius, c), vstd, vmean));
  _mm256_storeu_ps(p + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, s), vstd, vmean));
#else
  fill16_naive(p, mean, stdv);
#endif
}

}  // namespace rng_detail

namespace {
// float64 fill16: torch's scalar normal_fill_16<double>, glibc double libm.
void fill16_double(double* p, double mean, double stdv) {
  for (int j = 0; j < 8; ++j) {
    const double u1 = 1.0 - p[j];
    const double u2 = p[j + 8];
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * kPi * u2;
    p[j] = std::fma(radius * std::cos(theta), stdv, mean);
    p[j + 8] = std::fma(radius * std::sin(theta), stdv, mean);
  }
}
}  // namespace

void normal_(float* p, size_t n, double mean, double stdv, Generator& g) {
  if (n < 16) {
    // Scalar path: out = float(fma(v, stdv, mean)), v from the cached Box-Muller pair.
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(std::fma(g.normal_double(), stdv, mean));
    return;
  }
  // Block path (normal_fill); mean and stdv are cast to float first.
  const float mean_f = static_cast<float>(mean);
  const float std_f = static_cast<float>(stdv);
  // 1) ALL n uniforms first (n draws)
  for (size_t i = 0; i < n; ++i) p[i] = g.uniform01_float();
  // 2) each full block of 16: fill16
  for (size_t i = 0; i + 16 <= n; i += 16) rng_detail::fill16_fast(p + i, mean_f, std_f);
  // 3) tail: 16 FRESH uniforms over the LAST 16 slots, transformed again
  if (n % 16 != 0) {
    float* last = p + n - 16;
    for (size_t k = 0; k < 16; ++k) last[k] = g.uniform01_float();
    rng_detail::fill16_fast(last, mean_f, std_f);
  }
}

void normal_(double* p, size_t n, double mean, double stdv, Generator& g) {
  if (n < 16) {
    for (size_t i = 0; i < n; ++i) p[i] = std::fma(g.normal_double(), stdv, mean);
    return;
  }
  // Same block/tail logic as float, with 53-bit uniforms and double libm.
  for (size_t i = 0; i < n; ++i) p[i] = g.uniform01_double();
  for (size_t i = 0; i + 16 <= n; i += 16) fill16_double(p + i, mean, stdv);
  if (n % 16 != 0) {
    double* last = p + n - 16;
    for (size_t k = 0; k < 16; ++k) last[k] = g.uniform01_double();
    fill16_double(last, mean, stdv);
  }
}

void normal_(Tensor& t, double mean, double stdv, Generator& g) { normal_(t.data(), t.size(), mean, stdv, g); }

Tensor rand(const Shape& shape, Generator& g) {
  Tensor t = Tensor::from_shape(shape);
  uniform_(t.data(), t.size(), 0.0, 1.0, g);
  return t;
}

Tensor randn(const Shape& shape, Generator& g) {
  Tensor t = Tensor::from_shape(shape);
  normal_(t.data(), t.size(), 0.0, 1.0, g);
  return t;
}

int64_t randint(int64_t low, int64_t high, Generator& g) {
  if (!(low < high)) throw std::invalid_argument("randint: expects low < high");
  // random() % range + low; random64() when the range needs more than 32 bits
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const uint64_t v = range >= (uint64_t{1} << 32) ? g.random64() : g.random();
  return static_cast<int64_t>(v % range + static_cast<uint64_t>(low));
}

ITensor randint(int64_t low, int64_t high, const Shape& shape, Generator& g) {
  ITensor t = ITensor::from_shape(shape);
  for (auto& v : t) v = randint(low, high, g);
  return t;
}

// ============================================================================
// 4) nn.* initialisation (spec 4)
// ============================================================================

void init_linear_(Tensor& weight, Tensor* bias, Generator& g) {
  if (weight.dimension() != 2) throw std::invalid_argument("init_linear_: weight must be (out, in)");
  const size_t in = weight.shape()[1];
  // kaiming_uniform_(weight, a=sqrt(5)): gain = sqrt(2 / (1 + a^2)), stdv = gain / sqrt(in),
  // bound = sqrt(3) * std. torch skips a weight with no elements (no draws).
  if (weight.size() > 0) {
    const double a = std::sqrt(5.0);
    const double gain = std::sqrt(2.0 / (1.0 + std::pow(a, 2.0)));
    const double bw = std::sqrt(3.0) * (gain / std::sqrt(static_cast<double>(in)));
    uniform_(weight.data(), weight.size(), -bw, bw, g);
  }
  // bias ~ U(-1/sqrt(in), 1/sqrt(in)), drawn after the weight
  if (bias != nullptr) {
    const double bb = in > 0 ? 1.0 / std::sqrt(static_cast<double>(in)) : 0.0;
    uniform_(bias->data(), bias->size(), -bb, bb, g);
  }
}

void init_embedding_(Tensor& weight, std::optional<int64_t> padding_idx, Generator& g) {
  if (weight.dimension() != 2) throw std::invalid_argument("init_embedding_: weight must be (N, D)");
  const int64_t rows = static_cast<int64_t>(weight.shape()[0]);
  const size_t cols = weight.shape()[1];
  // weight.normal_(0, 1), then the padding row is zeroed (no draws)
  normal_(weight.data(), weight.size(), 0.0, 1.0, g);
  if (padding_idx) {
    int64_t row = *padding_idx;
    if (row < -rows || row >= rows) throw std::invalid_argument("init_embedding_: padding_idx out of range");
    if (row < 0) row += rows;  // torch: padding_idx = num_embeddings + padding_idx
    std::fill_n(weight.data() + static_cast<size_t>(row) * cols, cols, 0.0f);
  }
}

void xavier_uniform_(Tensor& w, double gain, Generator& g) {
  if (w.dimension() < 2) throw std::invalid_argument("xavier_uniform_: needs at least 2 dimensions");
  // fan_in = size(1) * receptive field, fan_out = size(0) * receptive field
  size_t receptive = 1;
  for (size_t d = 2; d < w.dimension(); ++d) receptive *= w.shape()[d];
  const size_t fan_in = w.shape()[1] * receptive;
  const size_t fan_out = w.shape()[0] * receptive;
  // stdv = gain * sqrt(2 / (fan_in + fan_out)); a = sqrt(3) * stdv
  const double stdv = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double a = std::sqrt(3.0) * stdv;
  uniform_(w.data(), w.size(), -a, a, g);
}

// ============================================================================
// 5) Dropout, train mode (spec 5)
// ============================================================================

void dropout_(float* x, size_t n, double p, Generator& g) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("dropout: p must be in [0, 1]");
  if (p == 0.0 || n == 0) return;  // torch returns the input as is: no draws
  if (p == 1.0) {                  // torch: input * zeros({}), no draws; keeps -0.0
    for (size_t i = 0; i < n; ++i) x[i] = x[i] * 0.0f;
    return;
  }
  // q = 1 - p; keep = uniform01_double() < q; out = x * (keep / float(q))
  // uniform01_double() of element i from its two draws (high word first), taken in blocks
  // (random_n: the same draws in the same order, tempered many at a time)
  const double q = 1.0 - p;
  const float scale = 1.0f / static_cast<float>(q);
  constexpr uint64_t kMask53 = (uint64_t{1} << 53) - 1;
  constexpr size_t kBlock = 256;
  uint32_t w[2 * kBlock];
  for (size_t i0 = 0; i0 < n; i0 += kBlock) {
    const size_t m = std::min(kBlock, n - i0);
    g.random_n(w, 2 * m);
    for (size_t i = 0; i < m; ++i) {
      const uint64_t r = ((uint64_t{w[2 * i]} << 32) | w[2 * i + 1]) & kMask53;
      const bool keep = static_cast<double>(r) * 0x1p-53 < q;
      x[i0 + i] = x[i0 + i] * (keep ? scale : 0.0f);
    }
  }
}

Tensor dropout(const Tensor& x, double p, Generator& g) {
  Tensor out = x;
  dropout_(out.data(), out.size(), p, g);
  return out;
}

}  // namespace ts
