// fast_encoder.cpp: article 000's encoder forward, fused for speed (see fast_encoder.hpp).
//
// Read nn.cpp first: it is the same computation written the way the article writes it.
// Here every tensor of one layer lives in a preallocated buffer of rows (N = B*T rows):
//   x    (N,C)   the residual stream (the output tensor itself, updated in place)
//   ln   (N,C)   LayerNorm output           qkv  (N,3C)  Q | K | V of all heads
//   ctx  (N,C)   attention output, heads side by side
//   ff   (N,F)   GELU(ln W1^T + b1)         scores (T,S) per thread: one head's weights
// The weight products run on the packed GEMM of section 3 where the CPU has AVX-512, else
// (and with Gemm::Sgemm) as column-major sgemm calls through ts::gemm; on the --naive path
// always through ts::gemm, i.e. the plain triple loop. For sgemm, a row-major (R,K) block
// with row stride ld is a column-major (K,R) one.
//
// Sections: 1) row kernels  2) threads  3) products  4) the encoder.
#include "fast_encoder.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "isa.hpp"
#include "kernels.hpp"
#include "matmul.hpp"
#include "nn.hpp"

// The AVX-512 code below (the packed GEMM, the row kernels' vector versions) is compiled
// for AVX-512 whatever the build flags, and runs only where the CPU has it.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TS_HAVE_AVX512 1
#define TS_AVX512 __attribute__((target("avx512f,avx512cd,avx512bw,avx512dq,avx512vl,avx2,fma")))
#else
#define TS_HAVE_AVX512 0
#endif

namespace ts {

namespace {
bool cpu_has_avx512f() { return TS_HAVE_AVX512 && active_isa() == Isa::Avx512; }
}  // namespace

// ================================================================================
// 1) Row kernels: plain loops the compiler vectorises
// ================================================================================
// A float sum cannot be vectorised as written (reordering it changes the rounding), so
// every reduction below keeps kL running partial sums, one per vector lane, and adds them
// up at the end: the loops over j < kL are what the compiler turns into vector code.
namespace fast {
namespace {
constexpr int kL = 16;  // lanes: one AVX-512 vector of floats (two AVX2 vectors elsewhere)

float bits_to_float(int32_t i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

// e^x to ~1e-7 relative, branch-free: x = n ln2 + r with |r| <= ln2/2, e^r by its Taylor
// polynomial (Cephes' coefficients), 2^n written straight into the exponent bits.
// 0 for x < -87.3 (and -inf), the largest finite float's neighbourhood above 88.7.
inline float exp_fast(float x) {
  const float xc = std::min(std::max(x, -87.33f), 88.72f);
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  float r = std::fma(n, -0.693359375f, xc);                                 // x - n ln2, in two
  r = std::fma(n, 2.12194440e-4f, r);                                        // parts for accuracy
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  p = std::fma(p, r * r, r) + 1.0f;
  const float two_n = bits_to_float((static_cast<int32_t>(n) + 127) << 23);
  return x < -87.33f ? 0.0f : p * two_n;
}

// GELU(x) = x/2 (1 + erf(x / sqrt 2)); erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7),
// the same formula oneDNN's kernel (and so torch here) uses.
inline float gelu_fast(float x) {
  const float z = std::fabs(x) * 0.70710678118654752f;
  const float t = 1.0f / std::fma(0.3275911f, z, 1.0f);
  float p = 1.061405429f;
  p = std::fma(p, t, -1.453152027f);
  p = std::fma(p, t, 1.421413741f);
  p = std::fma(p, t, -0.284496736f);
  p = std::fma(p, t, 0.254829592f);
  const float erf_abs = 1.0f - p * t * exp_fast(-z * z);
  return 0.5f * x * (1.0f + std::copysign(erf_abs, x));
}

float sum_lanes(float* a) {  // a[kL], pairwise
  for (int w = kL / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) a[j] += a[j + w];
  return a[0];
}

float max_lanes(float* a) {
  for (int w = kL / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) a[j] = std::max(a[j], a[j + w]);
  return a[0];
}

// The same two kernels written with AVX-512 intrinsics: the compiler's version of the loops
// above spends ~2 cycles per float (it keeps every select and clamp as written); these take
// about a third of that. Same formulas, same coefficients.
#if TS_HAVE_AVX512
// GCC 12's AVX-512 headers initialise a pass-through operand from itself, which its own
// -Wmaybe-uninitialized then reports inside every function that inlines them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
TS_AVX512 inline __m512 exp16(__m512 x) {
  const __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.33f), _CMP_LT_OQ);  // and -inf
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.33f)), _mm512_set1_ps(88.72f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), xc);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_maskz_mov_ps(__mmask16(~tiny), _mm512_scalef_ps(p, n));  // p * 2^n
}

TS_AVX512 inline __m512 gelu16(__m512 x) {
  const __m512 sign = _mm512_set1_ps(-0.0f);
  const __m512 z = _mm512_mul_ps(_mm512_andnot_ps(sign, x), _mm512_set1_ps(0.70710678118654752f));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), z, one));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  const __m512 e = exp16(_mm512_mul_ps(_mm512_xor_ps(z, sign), z));  // exp(-z^2)
  const __m512 erf_abs = _mm512_fnmadd_ps(_mm512_mul_ps(p, t), e, one);
  const __m512 erf = _mm512_or_ps(erf_abs, _mm512_and_ps(x, sign));  // copysign(erf_abs, x)
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(one, erf));
}

// (GCC 12's _mm512_reduce_* warn spuriously: reduce through memory, 16 floats per row)
TS_AVX512 inline float hmax16(__m512 v) {
  alignas(64) float a[16];
  _mm512_store_ps(a, v);
  return max_lanes(a);
}
TS_AVX512 inline float hsum16(__m512 v) {
  alignas(64) float a[16];
  _mm512_store_ps(a, v);
  return sum_lanes(a);
}

TS_AVX512 void softmax_rows_512(const float* x, float* y, int64_t rows, int64_t n, const float* mask) {
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    const float* m = mask ? mask + r * n : nullptr;
    // 1) out = masked_fill(in, mask == 0, -inf); the row max
    __m512 mx = neg_inf;
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 live = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
      __m512 v = _mm512_mask_loadu_ps(neg_inf, live, in + i);
      if (m) v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(live, m + i), _mm512_setzero_ps(), _CMP_EQ_OQ) & live, neg_inf);
      _mm512_mask_storeu_ps(out + i, live, v);
      mx = _mm512_max_ps(mx, v);
    }
    const float max = hmax16(mx);
    if (max == -std::numeric_limits<float>::infinity()) {  // every entry hidden: NaN, like torch
      std::fill_n(out, n, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    // 2) out = exp(out - max), summed; 3) out /= sum
    const __m512 vmax = _mm512_set1_ps(max);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 live = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
      const __m512 e = _mm512_maskz_mov_ps(live, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(live, out + i), vmax)));
      _mm512_mask_storeu_ps(out + i, live, e);
      sum = _mm512_add_ps(sum, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / hsum16(sum));
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 live = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
      _mm512_mask_storeu_ps(out + i, live, _mm512_mul_ps(_mm512_maskz_loadu_ps(live, out + i), inv));
    }
  }
}

TS_AVX512 void bias_gelu_rows_512(const float* x, float* y, int64_t rows, int64_t n, int64_t ld, const float* bias) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * ld;
    float* out = y + r * ld;
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 live = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
      __m512 v = _mm512_maskz_loadu_ps(live, in + i);
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(live, bias + i));
      _mm512_mask_storeu_ps(out + i, live, gelu16(v));
    }
  }
}
#pragma GCC diagnostic pop
#endif
}  // namespace

void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, const float* mask) {
#if TS_HAVE_AVX512
  if (cpu_has_avx512f()) return softmax_rows_512(x, y, rows, n, mask);
#endif
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    const float* m = mask ? mask + r * n : nullptr;
    const int64_t n16 = n / kL * kL;
    // 1) out = masked_fill(in, mask == 0, -inf); max over the row
    float mx[kL];
    std::fill_n(mx, kL, kNegInf);
    for (int64_t i = 0; i < n16; i += kL)
      for (int j = 0; j < kL; ++j) {
        const float v = (m && m[i + j] == 0.0f) ? kNegInf : in[i + j];
        out[i + j] = v;
        mx[j] = std::max(mx[j], v);
      }
    for (int64_t i = n16; i < n; ++i) {
      out[i] = (m && m[i] == 0.0f) ? kNegInf : in[i];
      mx[0] = std::max(mx[0], out[i]);
    }
    const float max = max_lanes(mx);
    if (max == kNegInf) {  // every entry hidden: exp(-inf - -inf) = NaN in torch too
      std::fill_n(out, n, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    // 2) out = exp(out - max), summed
    float sum[kL] = {};
    for (int64_t i = 0; i < n16; i += kL)
      for (int j = 0; j < kL; ++j) {
        out[i + j] = exp_fast(out[i + j] - max);
        sum[j] += out[i + j];
      }
    for (int64_t i = n16; i < n; ++i) {
      out[i] = exp_fast(out[i] - max);
      sum[0] += out[i];
    }
    // 3) out /= sum
    const float inv = 1.0f / sum_lanes(sum);
    for (int64_t i = 0; i < n; ++i) out[i] *= inv;
  }
}

void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t n, const float* gamma,
                     const float* beta, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    const int64_t n16 = n / kL * kL;
    // 1) mean
    float s[kL] = {};
    for (int64_t i = 0; i < n16; i += kL)
      for (int j = 0; j < kL; ++j) s[j] += in[i + j];
    for (int64_t i = n16; i < n; ++i) s[0] += in[i];
    const float mean = sum_lanes(s) / static_cast<float>(n);
    // 2) biased variance (divide by n)
    float q[kL] = {};
    for (int64_t i = 0; i < n16; i += kL)
      for (int j = 0; j < kL; ++j) {
        const float d = in[i + j] - mean;
        q[j] = std::fma(d, d, q[j]);
      }
    for (int64_t i = n16; i < n; ++i) q[0] = std::fma(in[i] - mean, in[i] - mean, q[0]);
    const float rstd = 1.0f / std::sqrt(sum_lanes(q) / static_cast<float>(n) + eps);
    // 3) normalise, scale, shift
    for (int64_t i = 0; i < n; ++i) out[i] = std::fma((in[i] - mean) * rstd, gamma[i], beta[i]);
  }
}

void bias_gelu_rows(const float* x, float* y, int64_t rows, int64_t n, int64_t ld, const float* bias) {
#if TS_HAVE_AVX512
  if (cpu_has_avx512f()) return bias_gelu_rows_512(x, y, rows, n, ld, bias);
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * ld;
    float* out = y + r * ld;
    if (bias)
      for (int64_t i = 0; i < n; ++i) out[i] = gelu_fast(in[i] + bias[i]);
    else
      for (int64_t i = 0; i < n; ++i) out[i] = gelu_fast(in[i]);
  }
}

void gelu(const float* x, float* y, int64_t n) { bias_gelu_rows(x, y, 1, n, n, nullptr); }

}  // namespace fast

// ================================================================================
// 2) Threads: a pool (the caller plus n - 1 workers) and a barrier
// ================================================================================
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spin a little (the other threads are usually microseconds away), then give the core up.
template <class Done>
void wait_until(Done done) {
  for (int spin = 0; !done(); ++spin) {
    if (spin < 4000)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

thread_local bool t_in_team = false;  // set while a thread runs a Pool::run body

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return int(workers_.size()) + 1; }

  // Stop the current workers and start n - 1 new ones.
  void resize(int n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stop_.store(false);
    const uint64_t g = generation_.load();
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i, g] { work(i, g); });
  }

  // body(tid) for tid in [0, size()): 0 on the caller, the others on the workers; returns
  // when all are done. Called from inside a body, it runs body(0) alone.
  void run(const std::function<void(int)>& body) {
    if (workers_.empty() || t_in_team) {
      body(0);
      return;
    }
    body_ = &body;
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    t_in_team = true;
    body(0);
    t_in_team = false;
    wait_until([this] { return pending_.load(std::memory_order_acquire) == 0; });
  }

 private:
  void work(int tid, uint64_t seen) {
    t_in_team = true;
    for (;;) {
      // a new generation: spin briefly (back-to-back calls), then sleep
      for (int spin = 0; spin < 20000 && generation_.load(std::memory_order_acquire) == seen; ++spin) cpu_relax();
      if (generation_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_.load() != seen; });
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load()) return;
      (*body_)(tid);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* body_ = nullptr;
  std::atomic<int> pending_{0};
};

Pool& pool() {
  static Pool p;
  return p;
}

std::atomic<int> g_threads{1};

// All n threads of a team wait here until the last one arrives.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    if (n_ <= 1) return;
    const uint32_t gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      count_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_release);
      return;
    }
    wait_until([&] { return gen_.load(std::memory_order_acquire) != gen; });
  }

 private:
  const int n_;
  std::atomic<int> count_{0};
  std::atomic<uint32_t> gen_{0};
};

// [begin, end) of part `i` of `n` items split into `parts` near-equal parts, boundaries
// rounded to multiples of `align` (keeps column blocks on whole vectors).
std::pair<int64_t, int64_t> split(int64_t n, int parts, int i, int64_t align = 1) {
  const int64_t units = (n + align - 1) / align;
  const int64_t b = std::min(n, units * i / parts * align), e = std::min(n, units * (i + 1) / parts * align);
  return {b, e};
}

// While alive: OpenBLAS runs one thread per call (the team's threads call it side by side).
struct BlasSingleThreaded {
  int saved;
  BlasSingleThreaded() : saved(blas_threads()) {
    if (saved > 1) set_blas_threads(1);
  }
  ~BlasSingleThreaded() {
    if (saved > 1) set_blas_threads(saved);
  }
  BlasSingleThreaded(const BlasSingleThreaded&) = delete;
  BlasSingleThreaded& operator=(const BlasSingleThreaded&) = delete;
};

}  // namespace

void set_num_threads(int n) {
  n = std::max(1, n);
  set_blas_threads(n);
  if (pool().size() != n) pool().resize(n);
  g_threads.store(n);
}

int num_threads() { return g_threads.load(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(pool().size(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (chunks <= 1 || t_in_team) {
    body(0, n);
    return;
  }
  pool().run([&](int c) {
    if (c >= chunks) return;
    const auto [b, e] = split(n, int(chunks), c);
    if (b < e) body(b, e);
  });
}

// ================================================================================
// 3) Products: y (rows, [o0,o1)) += x (rows, K) W[o0:o1]^T, W (M,K) row-major
// ================================================================================
namespace {
constexpr int64_t kFewRows = 8;

// With a few rows a product is bound by reading W from memory: sgemm would spend its time
// packing W into blocks it then uses R times only. Here W is streamed once, 4 rows of W
// (4 outputs) at a time, each dotted with the R rows of x that stay in L1: R x 4 x kL
// running sums the compiler keeps in vector registers.
template <int R>
void few_rows(const float* __restrict x, int64_t K, const float* __restrict w, int64_t M, float* __restrict y,
              int64_t ldy) {
  constexpr int kL = 16;
  const int64_t K16 = K / kL * kL;
  int64_t o = 0;
  for (; o + 4 <= M; o += 4) {
    const float* w0 = w + o * K;
    float acc[R][4][kL] = {};
    for (int64_t k = 0; k < K16; k += kL) {
      for (int q = 0; q < 4; ++q) __builtin_prefetch(w0 + q * K + k + 128);  // 512 bytes ahead
      for (int r = 0; r < R; ++r)
        for (int q = 0; q < 4; ++q)
          for (int j = 0; j < kL; ++j) acc[r][q][j] = std::fma(w0[q * K + k + j], x[r * K + k + j], acc[r][q][j]);
    }
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < 4; ++q) {
        float* a = acc[r][q];
        for (int width = kL / 2; width > 0; width /= 2)
          for (int j = 0; j < width; ++j) a[j] += a[j + width];
        float sum = a[0];
        for (int64_t k = K16; k < K; ++k) sum = std::fma(w0[q * K + k], x[r * K + k], sum);
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

void few_rows_any(const float* x, int64_t R, int64_t K, const float* w, int64_t M, float* y, int64_t ldy) {
  switch (R) {
    case 1: return few_rows<1>(x, K, w, M, y, ldy);
    case 2: return few_rows<2>(x, K, w, M, y, ldy);
    case 3: return few_rows<3>(x, K, w, M, y, ldy);
    case 4: return few_rows<4>(x, K, w, M, y, ldy);
    case 5: return few_rows<5>(x, K, w, M, y, ldy);
    case 6: return few_rows<6>(x, K, w, M, y, ldy);
    case 7: return few_rows<7>(x, K, w, M, y, ldy);
    case 8: return few_rows<8>(x, K, w, M, y, ldy);
    default: throw std::logic_error("few_rows: R must be 1..8");
  }
}

// y (rows, [o0,o1)), rows ldy apart, += x (rows, K) W[o0:o1]^T. Column-major that is
// C (o1-o0, rows) += W[o0:o1] (as (K, o1-o0), transposed) . x^T (K, rows): sgemm('t','n').
void product(const float* x, int64_t rows, int64_t K, const float* W, int64_t o0, int64_t o1, float* y, int64_t ldy) {
  if (o1 <= o0 || rows <= 0) return;
  if (rows <= kFewRows && matmul_path() == MatmulPath::Blas) {
    few_rows_any(x, rows, K, W + o0 * K, o1 - o0, y + o0, ldy);
    return;
  }
  gemm('t', 'n', o1 - o0, rows, K, 1.0f, W + o0 * K, K, x, K, 1.0f, y + o0, ldy);
}

// ---- the packed-weights GEMM (AVX-512) ----
// sgemm repacks W into cache-sized blocks on every call: at T = 128 that copy of the whole
// weight matrix is a fifth of the product's time. Here W is packed once, when the
// FastEncoder is built, into panels of kNR = 32 outputs:
//   panel p, step k: the 32 floats W[32p .. 32p+31][k]   (zeros past the last output)
// and a micro-kernel computes a tile of kMR = 12 rows x 32 outputs: per k, 2 vector loads
// of the panel, 12 broadcasts of x, 24 fused multiply-adds into 24 vector registers. The
// loops around it keep a block of panels in L2 and 12 rows of x (packed the same way,
// k-major) in L1 -- the BLIS/GotoBLAS blocking. The bias, the residual and GELU are
// applied to a finished tile while it is in registers / L1: no extra pass over memory.

constexpr int kMR = 12;          // rows of x per micro-tile
constexpr int kNR = 32;          // outputs per panel (two 16-float vectors)
constexpr int64_t kKC = 768;     // steps of k per pass (one pass when K = C = 768)
constexpr int64_t kNC = 20 * kMR;  // rows per block: the packed x block (NC x KC) stays in L2
constexpr int64_t kMCp = 6;      // panels per block: 6 x 32 x 768 floats (576 KB) stay in L2

// 64-byte aligned floats (a panel step is one or two cache lines).
struct Aligned {
  float* p = nullptr;
  size_t n = 0;
  Aligned() = default;
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  ~Aligned() { std::free(p); }
  void resize(size_t count) {
    if (count <= n) return;
    std::free(p);
    p = static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64));
    if (!p) throw std::bad_alloc();
    n = count;
  }
};

#if TS_HAVE_AVX512
#pragma GCC diagnostic push  // (see the row kernels)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// r[0..15] rows of 16 -> r[c] = column c: 4x4 blocks by unpacks, then 128-bit block shuffles
TS_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);      // a0 b0 a1 b1 (per 128-bit block)
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);  // a2 b2 a3 b3
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));      // a0 b0 c0 d0
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));  // a1 b1 c1 d1
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));  // a2 b2 c2 d2
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));  // a3 b3 c3 d3
  }
  __m512 out[16];
  for (int j = 0; j < 4; ++j) {  // column 4L + j = block L of r[j], r[4+j], r[8+j], r[12+j]
    const __m512 a = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), b = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
    const __m512 c = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88), d = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
    out[j] = _mm512_shuffle_f32x4(a, c, 0x88);
    out[8 + j] = _mm512_shuffle_f32x4(a, c, 0xdd);
    out[4 + j] = _mm512_shuffle_f32x4(b, d, 0x88);
    out[12 + j] = _mm512_shuffle_f32x4(b, d, 0xdd);
  }
  for (int i = 0; i < 16; ++i) r[i] = out[i];
}


// pack_panels by 16 x 16 register transposes: 16 outputs x 16 steps at a time
TS_AVX512 void pack_panels_512(const float* W, int64_t ldw, int64_t M, int64_t K, float scale, float* out) {
  const int64_t P = (M + kNR - 1) / kNR;
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t half = 0; half < 2; ++half) {
      const int64_t o0 = p * kNR + half * 16, rows = std::max<int64_t>(0, std::min<int64_t>(16, M - o0));
      for (int64_t k0 = 0; k0 < K; k0 += 16) {
        const int64_t n = std::min<int64_t>(16, K - k0);
        const __mmask16 live = n == 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
        __m512 r[16];
        for (int64_t i = 0; i < 16; ++i)
          r[i] = i < rows ? _mm512_mul_ps(_mm512_maskz_loadu_ps(live, W + (o0 + i) * ldw + k0), s) : _mm512_setzero_ps();
        transpose16(r);
        for (int64_t c = 0; c < n; ++c) _mm512_store_ps(out + (p * K + k0 + c) * kNR + half * 16, r[c]);
      }
    }
}
#pragma GCC diagnostic pop
#endif

// W (M,K), rows ldw apart, times `scale` -> panels (ceil(M/32), K, 32) at out (64-byte aligned)
void pack_panels(const float* W, int64_t ldw, int64_t M, int64_t K, float scale, float* out) {
#if TS_HAVE_AVX512
  if (cpu_has_avx512f()) return pack_panels_512(W, ldw, M, K, scale, out);
#endif
  const int64_t P = (M + kNR - 1) / kNR;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t j = 0; j < kNR; ++j) {
      const int64_t o = p * kNR + j;
      float* dst = out + p * K * kNR + j;
      if (o < M)
        for (int64_t k = 0; k < K; ++k) dst[k * kNR] = W[o * ldw + k] * scale;
      else
        for (int64_t k = 0; k < K; ++k) dst[k * kNR] = 0.0f;
    }
}

// W^T given as (K,M), rows ldw apart (V: k = key position, outputs = features) -> panels
void pack_panels_kmajor(const float* Wt, int64_t ldw, int64_t M, int64_t K, float* out) {
  const int64_t P = (M + kNR - 1) / kNR;
  for (int64_t p = 0; p < P; ++p) {
    const int64_t n = std::min<int64_t>(kNR, M - p * kNR);
    for (int64_t k = 0; k < K; ++k) {
      float* dst = out + (p * K + k) * kNR;
      std::copy_n(Wt + k * ldw + p * kNR, n, dst);
      std::fill(dst + n, dst + kNR, 0.0f);
    }
  }
}

// What happens to a finished tile: c = [c +] [bias] + x W^T, then [GELU].
struct Epilogue {
  const float* bias = nullptr;  // (M) or nullptr
  bool residual = false;        // c starts as the residual stream: add to it
  bool gelu = false;            // GELU on the result
};

#if TS_HAVE_AVX512
#pragma GCC diagnostic push  // (see the row kernels)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// c (MR, nvalid), rows ldc apart, = [c +] [bias] + xp (kc, MR) . wp (kc, 32)
//   xp: the tile's rows of x, k-major (xp[k*MR + r]); wp: one panel's kc steps;
//   wp_next: the panel the next call reads, fetched into L2 meanwhile (it may come from DRAM)
template <int MR>
TS_AVX512 void micro_tile(int64_t kc, const float* __restrict xp, const float* __restrict wp, const float* wp_next,
                          float* c, int64_t ldc, int nvalid, const float* bias, bool load_c) {
  for (int r = 0; r < MR; ++r) {  // fetch the tile now: it is read once the sums are done
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_T0);
  }
  __m512 acc0[MR], acc1[MR];
  for (int r = 0; r < MR; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    _mm_prefetch(reinterpret_cast<const char*>(wp + (k + 16) * kNR), _MM_HINT_T0);  // L2 -> L1, 2 KB ahead
    _mm_prefetch(reinterpret_cast<const char*>(wp + (k + 16) * kNR + 16), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(wp_next + k * kNR), _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(wp_next + k * kNR + 16), _MM_HINT_T1);
    const __m512 w0 = _mm512_load_ps(wp + k * kNR), w1 = _mm512_load_ps(wp + k * kNR + 16);
    for (int r = 0; r < MR; ++r) {
      const __m512 xr = _mm512_set1_ps(xp[k * MR + r]);
      acc0[r] = _mm512_fmadd_ps(xr, w0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(xr, w1, acc1[r]);
    }
  }
  const __mmask16 m0 = nvalid >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << nvalid) - 1);
  const __mmask16 m1 = nvalid >= 32 ? __mmask16(0xFFFF) : nvalid <= 16 ? __mmask16(0) : __mmask16((1u << (nvalid - 16)) - 1);
  const __m512 b0 = bias ? _mm512_maskz_loadu_ps(m0, bias) : _mm512_setzero_ps();
  const __m512 b1 = bias ? _mm512_maskz_loadu_ps(m1, bias + 16) : _mm512_setzero_ps();
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    __m512 c0 = b0, c1 = b1;
    if (load_c) {
      c0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, cr), c0);
      c1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, cr + 16), c1);
    }
    _mm512_mask_storeu_ps(cr, m0, _mm512_add_ps(c0, acc0[r]));
    _mm512_mask_storeu_ps(cr + 16, m1, _mm512_add_ps(c1, acc1[r]));
  }
}

using MicroTile = void (*)(int64_t, const float*, const float*, const float*, float*, int64_t, int, const float*, bool);
const MicroTile kMicroTiles[kMR + 1] = {nullptr,        micro_tile<1>, micro_tile<2>,  micro_tile<3>, micro_tile<4>,
                                        micro_tile<5>,  micro_tile<6>, micro_tile<7>,  micro_tile<8>, micro_tile<9>,
                                        micro_tile<10>, micro_tile<11>, micro_tile<12>};
#pragma GCC diagnostic pop
#endif

// x (rows, K), rows ldx apart -> tiles [t0, t1) of kMR rows, each k-major: tile t at
// xp + t*K*kMR holds x[12t + r][k] at [k*mr + r], mr = the tile's rows (12 but the last)
#if TS_HAVE_AVX512
#pragma GCC diagnostic push  // (see the row kernels)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// src (mr <= 16 rows, n <= 16 columns), rows ld apart -> dst[c*mr + r]: one register transpose
TS_AVX512 inline void pack_block16(const float* src, int64_t ld, int64_t mr, int64_t n, float* dst) {
  const __mmask16 live = n == 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 row_mask = mr == 16 ? __mmask16(0xFFFF) : __mmask16((1u << mr) - 1);
  __m512 r[16];
  for (int64_t i = 0; i < 16; ++i) r[i] = i < mr ? _mm512_maskz_loadu_ps(live, src + i * ld) : _mm512_setzero_ps();
  transpose16(r);
  for (int64_t c = 0; c < n; ++c) _mm512_mask_storeu_ps(dst + c * mr, row_mask, r[c]);
}

// pack_tiles by 16 x 16 register transposes (the scalar loop's strided stores cost ~5 %
// of a forward at T = 128)
TS_AVX512 void pack_tiles_512(const float* x, int64_t ldx, int64_t rows, int64_t K, int64_t t0, int64_t t1,
                              float* xp) {
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t mr = std::min<int64_t>(kMR, rows - t * kMR);
    for (int64_t k0 = 0; k0 < K; k0 += 16)
      pack_block16(x + t * kMR * ldx + k0, ldx, mr, std::min<int64_t>(16, K - k0), xp + t * K * kMR + k0 * mr);
  }
}
#pragma GCC diagnostic pop
#endif

void pack_tiles(const float* x, int64_t ldx, int64_t rows, int64_t K, int64_t t0, int64_t t1, float* xp) {
#if TS_HAVE_AVX512
  if (cpu_has_avx512f()) return pack_tiles_512(x, ldx, rows, K, t0, t1, xp);
#endif
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t mr = std::min<int64_t>(kMR, rows - t * kMR);
    float* dst = xp + t * K * kMR;
    for (int64_t r = 0; r < mr; ++r) {
      const float* src = x + (t * kMR + r) * ldx;
      for (int64_t k = 0; k < K; ++k) dst[k * mr + r] = src[k];
    }
  }
}

int64_t tiles_of(int64_t rows) { return (rows + kMR - 1) / kMR; }

// y (rows, outputs of panels [p0,p1)) = epilogue(x (rows, K) W^T), x packed by pack_tiles
// and W into panels. Loops: blocks of kNC rows, passes of kKC steps, blocks of kMCp panels
// (in L2), then each row tile (in L1) against each panel of the block.
// pack_out (needs K <= kKC: one pass): instead of y, each finished tile goes, after the
// epilogue, straight into pack_out in pack_tiles order for a product with K' = M -- the
// next Linear's x never exists row by row (FFN1 -> FFN2).
void packed_product(const float* xp, int64_t rows, int64_t K, const Aligned& W, int64_t M, int64_t p0, int64_t p1,
                    float* y, int64_t ldy, const Epilogue& epi, float* pack_out = nullptr) {
#if TS_HAVE_AVX512
  const bool naive_gelu = kernel_path() == KernelPath::Naive;
  alignas(64) float tile[kMR * kNR];  // the finished tile when it goes to pack_out
  if (pack_out && K > kKC) throw std::logic_error("packed_product: pack_out needs one pass");
  for (int64_t r0 = 0; r0 < rows; r0 += kNC) {
    const int64_t nc = std::min(kNC, rows - r0);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const bool first = pc == 0, last = pc + kc == K;
      for (int64_t pb = p0; pb < p1; pb += kMCp) {
        const int64_t pe = std::min(p1, pb + kMCp);
        for (int64_t t = 0; t * kMR < nc; ++t) {
          const int64_t mr = std::min<int64_t>(kMR, nc - t * kMR);
          const float* xt = xp + (r0 / kMR + t) * K * kMR + pc * mr;
          float* c_rows = y + (r0 + t * kMR) * ldy;
          for (int64_t p = pb; p < pe; ++p) {
            const int nvalid = int(std::min<int64_t>(kNR, M - p * kNR));
            float* c = pack_out ? tile : c_rows + p * kNR;
            const int64_t ldc = pack_out ? kNR : ldy;
            // the next call's panel: the next one of this block, or the first of the next block
            const int64_t pn = p + 1 < pe ? p + 1 : (t + 1) * kMR < nc ? pb : std::min(pe, p1 - 1);
            kMicroTiles[mr](kc, xt, W.p + (p * K + pc) * kNR, W.p + (pn * K + pc) * kNR, c, ldc, nvalid,
                            first && epi.bias ? epi.bias + p * kNR : nullptr, !first || epi.residual);
            if (last && epi.gelu) {
              if (naive_gelu)
                for (int64_t r = 0; r < mr; ++r) naive::gelu(c + r * ldc, c + r * ldc, nvalid);
              else
                fast::bias_gelu_rows(c, c, mr, nvalid, ldc, nullptr);
            }
            if (pack_out) {
              float* dst = pack_out + (r0 / kMR + t) * M * kMR + p * kNR * mr;
              pack_block16(c, kNR, mr, std::min(16, nvalid), dst);
              if (nvalid > 16) pack_block16(c + 16, kNR, mr, nvalid - 16, dst + 16 * mr);
            }
          }
        }
      }
    }
  }
#else
  (void)xp, (void)rows, (void)K, (void)W, (void)M, (void)p0, (void)p1, (void)y, (void)ldy, (void)epi, (void)pack_out;
  throw std::logic_error("packed_product: not compiled for this CPU");
#endif
}
}  // namespace

// ================================================================================
// 4) The encoder
// ================================================================================

// One Linear of a layer as the fast path holds it: W (M,K) row-major and its bias, plus
// W packed into panels when the packed GEMM is in use.
struct FastLinear {
  const float* w = nullptr;
  const float* bias = nullptr;
  int64_t M = 0, K = 0;
  std::vector<float> own_w, own_bias;  // storage when w/bias are built here (Q/K/V stacked)
  Aligned panels;

  void set(const float* weight, const float* b, int64_t out, int64_t in, bool pack) {
    w = weight;
    bias = b;
    M = out;
    K = in;
    if (!pack) return;
    panels.resize(size_t((M + kNR - 1) / kNR * kNR * K));
    pack_panels(w, K, M, K, 1.0f, panels.p);
  }
};

struct FastEncoder::Impl {
  const TransformerEncoder& enc;
  bool packed = false;  // the packed AVX-512 GEMM (else OpenBLAS sgemm / the few-rows kernel)
  int64_t C = 0, H = 0, D = 0, F = 0;
  struct Layer {
    FastLinear qkv, out, ff1, ff2;
  };
  std::vector<Layer> layers;
  // buffers, sized for the largest (N, T, threads) seen
  std::vector<float> ln, qkv, ctx, ff, scores;
  Aligned xpack;               // the rows of a product's x, packed by pack_tiles (shared)
  Aligned xpack_ff;            // ff packed straight from FFN1's tiles, for FFN2 (shared)
  std::vector<Aligned> lnbuf;  // per thread: 12 rows of LayerNorm output on their way to xpack
  std::vector<Aligned> apack;  // per thread: one head's Q, K, P, V packed for the micro-tiles

  Impl(const TransformerEncoder& e, Gemm gemm) : enc(e), layers(e.layers.size()) {
    packed = gemm != Gemm::Sgemm && cpu_has_avx512f();
    if (e.layers.empty()) return;
    const MultiHeadAttention& a0 = e.layers[0].attention;
    H = int64_t(a0.heads.size());
    C = int64_t(a0.output_linear.in_features);
    D = C / H;
    F = e.layers[0].feed_forward.linear_1.out_features;
    for (size_t li = 0; li < e.layers.size(); ++li) {
      const TransformerEncoderLayer& layer = e.layers[li];
      Layer& L = layers[li];
      // Q/K/V of all heads stacked (3C, C): rows [0,C) = q of heads 0..H-1, [C,2C) = k,
      // [2C,3C) = v -- the order of the qkv buffer's columns
      L.qkv.own_w.resize(size_t(3 * C * C));
      L.qkv.own_bias.resize(size_t(3 * C));
      for (int64_t h = 0; h < H; ++h) {
        const AttentionHead& head = layer.attention.heads[size_t(h)];
        const Linear* parts[3] = {&head.q, &head.k, &head.v};
        for (int64_t p = 0; p < 3; ++p) {
          const int64_t row0 = p * C + h * D;
          std::copy_n(parts[p]->weight.data(), D * C, L.qkv.own_w.data() + row0 * C);
          std::copy_n(parts[p]->bias.data(), D, L.qkv.own_bias.data() + row0);
        }
      }
      L.qkv.set(L.qkv.own_w.data(), L.qkv.own_bias.data(), 3 * C, C, packed);  // (the naive path reads own_w)
      const Linear& o = layer.attention.output_linear;
      const Linear& l1 = layer.feed_forward.linear_1;
      const Linear& l2 = layer.feed_forward.linear_2;
      L.out.set(o.weight.data(), o.bias.data(), C, C, packed);
      L.ff1.set(l1.weight.data(), l1.bias.data(), F, C, packed);
      L.ff2.set(l2.weight.data(), l2.bias.data(), C, F, packed);
    }
  }

  void reserve(int64_t N, int64_t T, int nt) {
    auto grow = [](std::vector<float>& v, int64_t n) {
      if (int64_t(v.size()) < n) v.resize(size_t(n));
    };
    grow(ln, N * C);
    grow(qkv, N * 3 * C);
    grow(ctx, N * C);
    grow(ff, N * F);
    grow(scores, int64_t(nt) * T * T);
    if (packed) {
      xpack.resize(size_t(tiles_of(N) * kMR * std::max(C, F)));
      if (C <= kKC) xpack_ff.resize(size_t(tiles_of(N) * kMR * F));
      if (int(apack.size()) < nt) apack = std::vector<Aligned>(size_t(nt));
      if (int(lnbuf.size()) < nt) lnbuf = std::vector<Aligned>(size_t(nt));
      for (Aligned& a : lnbuf) a.resize(size_t(kMR * C));
      for (Aligned& a : apack) a.resize(size_t(attention_scratch(T)));
    }
  }

  // ---- the phases of one layer, each run by every thread `tid` of a team of `nt` ----

  // y (N, M) = epilogue(x (N, K) W^T) for the team's share of the M output columns.
  // Packed GEMM: the team packs x's row tiles (each thread a share) unless `xpacked` already
  // holds them, waits, then each thread runs its share of W's panels against all of them;
  // with pack_out the result goes there packed for the next product instead of into y.
  void linear(const FastLinear& L, const float* x, const float* xpacked, int64_t N, float* y, int64_t ldy,
              const Epilogue& epi, int tid, int nt, Barrier& sync, float* pack_out = nullptr) {
    if (packed && matmul_path() == MatmulPath::Blas) {
      if (!xpacked) {
        const auto [t0, t1] = split(tiles_of(N), nt, tid);
        pack_tiles(x, L.K, N, L.K, t0, t1, xpack.p);
        sync.wait();
        xpacked = xpack.p;
      }
      const int64_t P = (L.M + kNR - 1) / kNR;
      const auto [p0, p1] = split(P, nt, tid);
      if (p0 < p1) packed_product(xpacked, N, L.K, L.panels, L.M, p0, p1, y, ldy, epi, pack_out);
      return;
    }
    // OpenBLAS (or, on the naive path, the triple loop): prepare C, add the product, then GELU
    const auto [c0, c1] = split(L.M, nt, tid, 16);
    if (c0 >= c1) return;
    for (int64_t r = 0; r < N; ++r) {
      float* yr = y + r * ldy;
      if (!epi.residual) std::fill(yr + c0, yr + c1, 0.0f);
      if (epi.bias)
        for (int64_t i = c0; i < c1; ++i) yr[i] += epi.bias[i];
    }
    product(x, N, L.K, L.w, c0, c1, y, ldy);
    if (!epi.gelu) return;
    if (kernel_path() == KernelPath::Naive) {
      for (int64_t r = 0; r < N; ++r) naive::gelu(y + r * ldy + c0, y + r * ldy + c0, c1 - c0);
    } else {
      fast::bias_gelu_rows(y + c0, y + c0, N, c1 - c0, ldy, nullptr);
    }
  }

  // ln = LayerNorm(x) on the team's share of the rows
  void norm(const LayerNorm& n, const float* x, int64_t N, int tid, int nt) {
    const auto [r0, r1] = split(N, nt, tid);
    if (r0 >= r1) return;
    if (kernel_path() == KernelPath::Naive)
      naive::layer_norm_rows(x + r0 * C, ln.data() + r0 * C, r1 - r0, C, n.weight.data(), n.bias.data(), float(n.eps));
    else
      fast::layer_norm_rows(x + r0 * C, ln.data() + r0 * C, r1 - r0, C, n.weight.data(), n.bias.data(), float(n.eps));
  }

  // The same, written straight into xpack as row tiles for the next (packed) product: the
  // team splits the tiles; each thread normalises 12 rows into its lnbuf (L1), then packs.
  void norm_packed(const LayerNorm& n, const float* x, int64_t N, int tid, int nt) {
    const auto [t0, t1] = split(tiles_of(N), nt, tid);
    float* buf = lnbuf[size_t(tid)].p;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t mr = std::min<int64_t>(kMR, N - t * kMR);
      if (kernel_path() == KernelPath::Naive)
        naive::layer_norm_rows(x + t * kMR * C, buf, mr, C, n.weight.data(), n.bias.data(), float(n.eps));
      else
        fast::layer_norm_rows(x + t * kMR * C, buf, mr, C, n.weight.data(), n.bias.data(), float(n.eps));
      pack_tiles(buf, C, mr, C, 0, 1, xpack.p + t * C * kMR);
    }
  }

  // one (batch, head): ctx[b, :, h*D:(h+1)*D] = softmax(Q K^T / sqrt(D) [masked]) V
  //   p: this thread's (T,S) scratch for the weights; scratch: its packing space
  void attention_head(int64_t b, int64_t h, int64_t T, const Tensor* mask, float* p, float* scratch) {
    const int64_t S = T, ld = 3 * C;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));  // D = 64: 1/8, exact
    const float* q = qkv.data() + b * T * ld + h * D;               // (T,D), row stride 3C
    const float* k = q + C;                                         // (S,D)
    const float* v = q + 2 * C;                                     // (S,D)
    const float* m = mask ? mask->data() + (mask->shape()[0] == 1 ? 0 : b * T * S) : nullptr;
    float* out = ctx.data() + b * T * C + h * D;                    // (T,D), row stride C
    if (packed && matmul_path() == MatmulPath::Blas) {
      attention_head_packed(q, k, v, ld, T, S, scale, m, p, out, scratch);
      return;
    }
    // 1) p (T,S) = Q K^T / sqrt(D): column-major (S,T) = K (S,D) . Q^T (D,T)
    gemm('t', 'n', S, T, D, scale, k, ld, q, ld, 0.0f, p, S);
    // 2) p = softmax(masked_fill(p, mask == 0, -inf)) over S
    masked_softmax(p, T, S, m);
    // 3) out (T,D) = P (T,S) V (S,D): column-major (D,T) = V^T (D,S) . P^T (S,T)
    gemm('n', 'n', D, T, S, 1.0f, v, ld, p, S, 0.0f, out, C);
  }

  // Floats of packing space one head needs (T = S), each part on a 64-byte boundary.
  // p (T,S) <- softmax(masked_fill(p, m == 0, -inf)) over S, in place; m (T,S) or nullptr.
  // Both attention routes below share it; --naive takes the textbook loops.
  static void masked_softmax(float* p, int64_t T, int64_t S, const float* m) {
    if (kernel_path() == KernelPath::Naive) {
      if (m)
        for (int64_t j = 0; j < T * S; ++j)
          if (m[j] == 0.0f) p[j] = -std::numeric_limits<float>::infinity();
      naive::softmax_rows(p, p, T, S);
    } else {
      fast::softmax_rows(p, p, T, S, m);
    }
  }

  int64_t attention_scratch(int64_t T) const {
    const int64_t Tr = (T + kMR - 1) / kMR * kMR, Sp = (T + kNR - 1) / kNR * kNR, Dp = (D + kNR - 1) / kNR * kNR;
    auto up = [](int64_t n) { return (n + 15) / 16 * 16; };
    return up(Tr * D) + up(Sp * D) + up(Tr * T) + up(Dp * T);
  }

  // The same with the packed micro-tiles: Q and P as row tiles, K (scaled) and V as panels.
  void attention_head_packed(const float* q, const float* k, const float* v, int64_t ld, int64_t T, int64_t S,
                             float scale, const float* m, float* p, float* out, float* scratch) {
#if TS_HAVE_AVX512
    const int64_t Tr = (T + kMR - 1) / kMR * kMR, Sp = (S + kNR - 1) / kNR * kNR;
    auto up = [](int64_t n) { return (n + 15) / 16 * 16; };
    float* qp = scratch;           // (Tr, D) Q in row tiles
    float* kp = qp + up(Tr * D);   // (Sp, D) K / sqrt(D) in panels
    float* pp = kp + up(Sp * D);   // (Tr, S) P in row tiles
    float* vp = pp + up(Tr * S);   // V in panels of 32 features
    // 1) p (T,S) = Q K^T / sqrt(D): rows of Q against panels of 32 keys (1/sqrt(D) folded
    //    into the packed K: a power of two for D = 64, so the product is unchanged)
    pack_tiles(q, ld, T, D, 0, tiles_of(T), qp);
    pack_panels(k, ld, S, D, scale, kp);
    run_tiles(T, S, D, qp, kp, p, S);
    // 2) p = softmax(masked_fill(p, mask == 0, -inf)) over S
    masked_softmax(p, T, S, m);
    // 3) out (T,D) = P (T,S) V (S,D): rows of P against panels of 32 features of V
    pack_tiles(p, S, T, S, 0, tiles_of(T), pp);
    pack_panels_kmajor(v, ld, D, S, vp);
    run_tiles(T, D, S, pp, vp, out, C);
#else
    (void)q, (void)k, (void)v, (void)ld, (void)T, (void)S, (void)scale, (void)m, (void)p, (void)out, (void)scratch;
#endif
  }

  // c (rows, M), rows ldc apart, = xp (rows in tiles, K) . panels (M in panels, K)
  static void run_tiles(int64_t rows, int64_t M, int64_t K, const float* xp, const float* wp, float* c, int64_t ldc) {
#if TS_HAVE_AVX512
    const int64_t P = (M + kNR - 1) / kNR;
    for (int64_t t = 0; t * kMR < rows; ++t) {
      const int64_t mr = std::min<int64_t>(kMR, rows - t * kMR);
      for (int64_t pi = 0; pi < P; ++pi) {
        const float* w = wp + pi * K * kNR;
        kMicroTiles[mr](K, xp + t * K * kMR, w, w, c + t * kMR * ldc + pi * kNR, ldc,
                        int(std::min<int64_t>(kNR, M - pi * kNR)), nullptr, false);
      }
    }
#else
    (void)rows, (void)M, (void)K, (void)xp, (void)wp, (void)c, (void)ldc;
#endif
  }

  // x (N,C) <- layer li (x), in place; every thread of the team calls it.
  // With the packed GEMM the LayerNorms write their rows straight into the packed layout
  // the next product reads, and FFN1's tiles go straight into FFN2's (ln and ff are never
  // written row by row).
  void run_layer(size_t li, float* x, int64_t B, int64_t T, const Tensor* mask, int tid, int nt, Barrier& sync) {
    const TransformerEncoderLayer& L = enc.layers[li];
    const Layer& W = layers[li];
    const int64_t N = B * T;
    const bool fused = packed && matmul_path() == MatmulPath::Blas;
    const bool ff_fused = fused && C <= kKC;  // FFN1 in one pass: its tiles are final at once
    // 1) ln = LN1(x)                                                    (N,C)
    if (fused)
      norm_packed(L.layer_norm_1, x, N, tid, nt);
    else
      norm(L.layer_norm_1, x, N, tid, nt);
    sync.wait();
    // 2) qkv = ln Wqkv^T + bqkv, the team splits the 3C columns         (N,3C)
    linear(W.qkv, ln.data(), fused ? xpack.p : nullptr, N, qkv.data(), 3 * C, Epilogue{W.qkv.bias, false, false}, tid,
           nt, sync);
    sync.wait();
    // 3) ctx = the heads side by side, the team splits (b, h)            (N,C)
    {
      float* p = scores.data() + int64_t(tid) * T * T;  // this thread's (T,S) scratch
      float* scratch = packed ? apack[size_t(tid)].p : nullptr;
      const auto [i0, i1] = split(B * H, nt, tid);
      for (int64_t i = i0; i < i1; ++i) attention_head(i / H, i % H, T, mask, p, scratch);
    }
    sync.wait();
    // 4) x = x + (ctx Wo^T + bo), the team splits the C columns         (N,C)
    linear(W.out, ctx.data(), nullptr, N, x, C, Epilogue{W.out.bias, true, false}, tid, nt, sync);
    sync.wait();
    // 5) ln = LN2(x)                                                    (N,C)
    if (fused)
      norm_packed(L.layer_norm_2, x, N, tid, nt);
    else
      norm(L.layer_norm_2, x, N, tid, nt);
    sync.wait();
    // 6) ff = GELU(ln W1^T + b1), the team splits the F columns         (N,F)
    linear(W.ff1, ln.data(), fused ? xpack.p : nullptr, N, ff.data(), F, Epilogue{W.ff1.bias, false, true}, tid, nt,
           sync, ff_fused ? xpack_ff.p : nullptr);
    sync.wait();
    // 7) x = x + (ff W2^T + b2), the team splits the C columns          (N,C)
    linear(W.ff2, ff.data(), ff_fused ? xpack_ff.p : nullptr, N, x, C, Epilogue{W.ff2.bias, true, false}, tid, nt,
           sync);
    sync.wait();
  }

  void check_mask(const Tensor* mask, int64_t B, int64_t T) const {
    if (!mask) return;
    if (mask->dimension() != 3 || int64_t(mask->shape()[1]) != T || int64_t(mask->shape()[2]) != T ||
        (mask->shape()[0] != 1 && int64_t(mask->shape()[0]) != B))
      throw std::invalid_argument("FastEncoder: mask must be (1,T,T) or (B,T,T)");
  }

  // x (B,T,C) <- layers [first, last) applied to x, in place.
  void forward_layers(Tensor& x, size_t first, size_t last, const Tensor* mask) {
    if (x.dimension() != 3 || int64_t(x.shape()[2]) != C)
      throw std::invalid_argument("FastEncoder: input must be (B,T," + std::to_string(C) + ")");
    for (size_t li = first; li < last; ++li)
      if (enc.layers[li].feed_forward.dropout.training)
        throw std::invalid_argument("FastEncoder: eval mode only (call encoder.train(false) first)");
    const int64_t B = int64_t(x.shape()[0]), T = int64_t(x.shape()[1]);
    check_mask(mask, B, T);
    const int nt = std::min(num_threads(), pool().size());
    reserve(B * T, T, nt);
    const BlasSingleThreaded single;  // the team's threads call sgemm side by side
    Barrier sync(nt);
    float* data = x.data();
    auto team = [&](int tid) {
      for (size_t li = first; li < last; ++li) run_layer(li, data, B, T, mask, tid, nt, sync);
    };
    if (nt == 1)
      team(0);
    else
      pool().run(team);
  }

  double flops(int64_t B, int64_t T, int64_t layers_run) const {
    const double N = double(B) * double(T);
    const double per_layer = 2 * N * C * (3 * C) + 2 * N * C * C + 2 * 2 * N * C * F + 2 * 2 * double(B) * H * T * T * D;
    return per_layer * double(layers_run < 0 ? int64_t(enc.layers.size()) : layers_run);
  }
};

FastEncoder::FastEncoder(const TransformerEncoder& encoder, Gemm gemm) : impl_(std::make_unique<Impl>(encoder, gemm)) {}
FastEncoder::~FastEncoder() = default;

Tensor FastEncoder::operator()(const ITensor& ids, const Tensor* mask) {
  // x = Embeddings(ids) (the exact path: a lookup and one LayerNorm); then the N layers,
  // fused, in place on x
  // (B,T) -> (B,T,C)
  if (impl_->enc.embeddings.dropout.training)
    throw std::invalid_argument("FastEncoder: eval mode only (call encoder.train(false) first)");
  Tensor x = impl_->enc.embeddings(ids);
  impl_->forward_layers(x, 0, impl_->enc.layers.size(), mask);
  return x;
}

Tensor FastEncoder::layer(size_t i, const Tensor& x_in, const Tensor* mask) {
  // x (B,T,C) -> (B,T,C)
  if (i >= impl_->enc.layers.size()) throw std::out_of_range("FastEncoder: no layer " + std::to_string(i));
  Tensor x = x_in;
  impl_->forward_layers(x, i, i + 1, mask);
  return x;
}

double FastEncoder::flops(int64_t B, int64_t T, int64_t layers) const { return impl_->flops(B, T, layers); }

std::string FastEncoder::backend() const {
  return impl_->packed ? "packed-weight AVX-512 GEMM (weights packed once)" : "OpenBLAS sgemm (" + blas_core() + ")";
}

}  // namespace ts
