// rng.hpp: PyTorch 1.13.1's CPU random numbers, bit for bit (introduced in ch01).
//
// With the same seed, every function here draws the same numbers, in the same order,
// as the matching torch call on an AVX2 CPU build without MKL (Debian's python3-torch):
//   torch.manual_seed(s)            ts::manual_seed(s)
//   torch.rand(4, 4)                ts::rand({4, 4})
//   torch.randn(5, 768)             ts::randn({5, 768})
//   t.uniform_(a, b) / t.normal_()  ts::uniform_(p, n, a, b) / ts::normal_(p, n, mean, stdv)
//   nn.Linear(in, out)              ts::init_linear_(weight, &bias)
//   nn.Embedding(V, C)              ts::init_embedding_(weight)
//   nn.init.xavier_uniform_(w)      ts::xavier_uniform_(w)
//   F.dropout(x, p, training=True)  ts::dropout(x, p)
// The recipe (and the proof that it matches) is /work/shared/reference/RNG_SPEC.md;
// section numbers below ("spec 3") point into it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "exact/tensor.hpp"

namespace ts {

// torch's CPU generator: one MT19937 engine plus the cached second Box-Muller value.
class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;  // torch's seed before any manual_seed

  explicit Generator(uint64_t seed = kDefaultSeed);

  // seed -> MT19937 state. Only the low 32 bits reach the engine (spec 1), so
  // seeds 42 and 42 + 2^32 give the same stream. Clears the normal cache.
  void manual_seed(uint64_t seed);
  // The 64-bit seed as given, like torch.initial_seed().
  uint64_t initial_seed() const { return seed_; }

  uint32_t random();           // one MT19937 output
  void random_n(uint32_t* out, size_t n);  // n outputs, exactly n calls of random() (in blocks)
  uint64_t random64();         // two outputs, the FIRST is the high word
  double uniform01_double();   // (random64() & (2^53-1)) * 2^-53, in [0, 1)
  float uniform01_float();     // (random() & (2^24-1)) * 2^-24, in [0, 1)

  // One N(0,1) sample, torch's at::normal_distribution<double>: Box-Muller makes a
  // (cos, sin) pair, returns the cos value and keeps the sin value for the next call.
  double normal_double();
  // The kept sin value (torch: next_double_normal_sample); only manual_seed clears it.
  std::optional<double> next_double_normal;

 private:
  void twist();  // regenerate all 624 state words

  std::array<uint32_t, 624> state_{};
  size_t next_ = 624;  // index of the next state word to temper; 624 = twist first
  uint64_t seed_ = kDefaultSeed;
};

// The process-wide generator used when no generator is passed (torch.default_generator).
Generator& default_generator();
// torch.manual_seed(seed) on the default generator.
void manual_seed(uint64_t seed);

// "--seed" text -> seed, accepted exactly like torch.manual_seed(int(text)):
// a base-10 Python int (surrounding spaces, a sign, "_" between digits allowed) in
// [-2^63, 2^64); negative values wrap to uint64 (-1 -> 2^64-1). std::nullopt otherwise.
std::optional<uint64_t> parse_seed(const std::string& text);

// Python's int(text) in base 10, the syntax parse_seed and the chapters' integer knobs share:
// ok = the text is an int (surrounding ASCII spaces, a sign, digits, "_" between digits);
// then the value is -magnitude or +magnitude, unless too_big (|value| >= 2^64).
struct PyInt {
  bool ok = false, negative = false, too_big = false;
  uint64_t magnitude = 0;
};
PyInt parse_py_int(const std::string& text);

// ---- In-place fills of n contiguous values, in row-major order (torch's CPU kernels) ----

// p[n] <- U[from, to): one draw per float, out = fmaf(u, to - from, from) (spec 2).
void uniform_(float* p, size_t n, double from, double to, Generator& g = default_generator());
// p[n] <- N(mean, std^2). n >= 16: torch's AVX2 block path (n + 16 draws if n % 16 != 0);
// n < 16: the scalar Box-Muller path that reads and writes the generator's cache (spec 3).
void normal_(float* p, size_t n, double mean, double stdv, Generator& g = default_generator());
// float64 versions: two draws per uniform, double libm for the normal (spec 2, 3).
void uniform_(double* p, size_t n, double from, double to, Generator& g = default_generator());
void normal_(double* p, size_t n, double mean, double stdv, Generator& g = default_generator());

// The same fills on whole tensors.
void uniform_(Tensor& t, double from, double to, Generator& g = default_generator());
void normal_(Tensor& t, double mean, double stdv, Generator& g = default_generator());

// shape -> new tensor of U[0,1) values: torch.rand(*shape)
Tensor rand(const Shape& shape, Generator& g = default_generator());
// shape -> new tensor of N(0,1) values: torch.randn(*shape)
Tensor randn(const Shape& shape, Generator& g = default_generator());
// one integer in [low, high): random() % (high-low) + low, random64() if the range >= 2^32
int64_t randint(int64_t low, int64_t high, Generator& g = default_generator());
// shape -> int64 tensor of such integers in row-major order: torch.randint(low, high, shape)
ITensor randint(int64_t low, int64_t high, const Shape& shape, Generator& g = default_generator());

// ---- nn.* default initialisation (draw order = construction order, spec 4) ----

// weight (out,in), bias (out) or nullptr: nn.Linear(in, out).reset_parameters()
//   weight ~ U(-bw, bw), bw = sqrt(3) * sqrt(2 / (1 + sqrt(5)^2)) / sqrt(in)   (kaiming_uniform_, a=sqrt(5))
//   bias   ~ U(-bb, bb), bb = 1 / sqrt(in)                                     (drawn AFTER the weight)
void init_linear_(Tensor& weight, Tensor* bias, Generator& g = default_generator());
// weight (N,D): nn.Embedding(N, D, padding_idx): weight ~ N(0,1), then row padding_idx = 0
// (a negative padding_idx counts from the end, as in torch).
void init_embedding_(Tensor& weight, std::optional<int64_t> padding_idx = {},
                     Generator& g = default_generator());
// w (fan_out, fan_in, *k): nn.init.xavier_uniform_(w, gain)
//   a = sqrt(3) * (gain * sqrt(2 / (fan_in + fan_out))), w ~ U(-a, a)
//   fan_in = size(1) * prod(k), fan_out = size(0) * prod(k); needs rank >= 2.
void xavier_uniform_(Tensor& w, double gain = 1.0, Generator& g = default_generator());

// ---- Dropout, train mode (spec 5) ----

// x (any shape) -> same shape: F.dropout(x, p, training=True) on a non-MKL CPU build
//   keep = uniform01_double() < 1 - p        (two 32-bit draws per element)
//   out  = x * (keep / float(1 - p))         (dropped values are x * 0: -0.0 stays -0.0)
// p == 0 returns x unchanged and p == 1 returns x * 0, both without drawing, like torch.
Tensor dropout(const Tensor& x, double p, Generator& g = default_generator());
void dropout_(float* x, size_t n, double p, Generator& g = default_generator());

// ---- The block path's building blocks, exposed so tests can check fast against naive ----
namespace rng_detail {
// p[16] uniforms in [0,1) -> p[16] normals: torch's normal_fill_16_AVX2, one lane at a time.
void fill16_naive(float* p, float mean, float stdv);
// Same result; 8 lanes at once with AVX2 intrinsics when the build has AVX2+FMA, else naive.
void fill16_fast(float* p, float mean, float stdv);
// The Cephes single-precision log and sincos (Pommier's avx_mathfun) with GCC's FMAs.
float log_cephes(float x);
void sincos_cephes(float x, float* s, float* c);  // x >= 0
}  // namespace rng_detail

}  // namespace ts
