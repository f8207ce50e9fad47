// bench_peak.cpp: what this machine's multiply-adds reach on the SIMD route in use: the
// reference of make bench's "% of peak" column.
//
//   ./build/bench_peak                    (make bench runs it beside bench_encoder)
//   TS_ISA=scalar ./build/bench_peak      (the peak of a lower route)
//
// fma_peak/<threads>  <threads> threads, each running kChains independent multiply-add chains
//                     acc = acc * a + b on full vectors of the route ts::active_isa() picks:
//   avx512  _mm512_fmadd_ps: 16 floats, one fused instruction (2 flop per float)
//   avx2    _mm256_fmadd_ps:  8 floats, one fused instruction
//   scalar  a multiply, then an add, on 4-float vectors of plain C++ (GCC vector extension):
//           SSE2 mulps + addps, the widest arithmetic of baseline x86-64 -- the ceiling of the
//           scalar route's plain loops, which the compiler may vectorise but cannot fuse
// Each step of a chain waits for the previous one (4-8 cycles: FMA, or multiply then add), and
// a core starts 1-2 steps per cycle, so 12 chains per thread keep the arithmetic units full.
// make bench (bench/report.py) runs it three times interleaved with the rows and keeps the best
// repetition: a peak measured once, minutes before what it divides, is no bound on a shared host.
// This file is compiled for baseline x86-64 (CMakeLists.txt: -march=x86-64, no contraction),
// and each wide function's target attribute names exactly the instruction set it uses.
// Counter "flop": floating-point operations of one run, all threads together.
//
// mem_read_bw/<threads>  the memory's read bandwidth, the bound of one-token generation (ch12):
//                     <threads> threads each read their share of a 256 MB buffer (8x the L3 of
//                     the machines we ran on: DRAM, not cache) once, with the same route's widest
//                     loads (avx512: _mm512_load_ps, avx2: _mm256_load_ps, scalar: 4-float SSE2
//                     loads), added into kChains independent vector sums so the adds never wait
//                     on each other: only the loads can limit it. Counter "bytes": bytes of one run.
// Context "peak_isa": the route measured; "cpu_isa": the widest this CPU runs (TS_ISA unset).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench_isa.hpp"

namespace {

// 12 chains: a two-port AVX-512 core (Intel's server parts: 2 FMA units, 4-cycle latency) needs
// 2 x 4 = 8 multiply-adds in flight to stay full; Zen 4's double-pumped units and AVX2 cores need
// fewer. 12 leaves headroom on each (and fits the 16 vector registers of AVX2 with a and b).
constexpr int kChains = 12;
constexpr double kWarmUpSeconds = 0.3;
constexpr double kFlopPerThread = 4e9;  // one run: ~20-100 ms per thread, depending on the route

// floats per vector of a route
int lanes(ts::Isa isa) { return isa == ts::Isa::Avx512 ? 16 : isa == ts::Isa::Avx2 ? 8 : 4; }

// chains(iters) -> a float that depends on every chain (so none is dropped)
#if defined(__x86_64__)
__attribute__((target("avx512f"), noinline)) float chains_avx512(int64_t iters) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 1e-3f * float(i));  // distinct: not merged
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);  // acc -> b / (1 - a) = 0.1: no denormals
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  float t[16];
  _mm512_storeu_ps(t, acc[0]);
  return t[0] + t[15];
}

__attribute__((target("avx2,fma"), noinline)) float chains_avx2(int64_t iters) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1.0f + 1e-3f * float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  float t[8];
  _mm256_storeu_ps(t, acc[0]);
  return t[0] + t[7];
}
#endif

typedef float v4sf __attribute__((vector_size(16)));

__attribute__((noinline)) float chains_scalar(int64_t iters) {
  v4sf acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = v4sf{} + (1.0f + 1e-3f * float(i));
  const v4sf a = v4sf{} + 0.999999f, b = v4sf{} + 1e-7f;
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * a + b;  // two instructions: -ffp-contract=off
  }
  for (int i = 1; i < kChains; ++i) acc[0] += acc[i];
  return acc[0][0] + acc[0][3];
}

float chains(ts::Isa isa, int64_t iters) {
#if defined(__x86_64__)
  if (isa == ts::Isa::Avx512) return chains_avx512(iters);
  if (isa == ts::Isa::Avx2) return chains_avx2(iters);
#endif
  return chains_scalar(iters);
}

// the sum of n floats at p (64-byte aligned, n a multiple of kChains * 16), read once in kChains sums
#if defined(__x86_64__)
__attribute__((target("avx512f"), noinline)) float read_avx512(const float* p, int64_t n) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < n; k += 16 * kChains) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_add_ps(acc[i], _mm512_load_ps(p + k + 16 * i));
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  float t[16];
  _mm512_storeu_ps(t, acc[0]);
  return t[0] + t[15];
}

__attribute__((target("avx2"), noinline)) float read_avx2(const float* p, int64_t n) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < n; k += 8 * kChains) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_add_ps(acc[i], _mm256_load_ps(p + k + 8 * i));
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  float t[8];
  _mm256_storeu_ps(t, acc[0]);
  return t[0] + t[7];
}
#endif

__attribute__((noinline)) float read_scalar(const float* p, int64_t n) {
  v4sf acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = v4sf{};
  for (int64_t k = 0; k < n; k += 4 * kChains) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] += *reinterpret_cast<const v4sf*>(p + k + 4 * i);
  }
  for (int i = 1; i < kChains; ++i) acc[0] += acc[i];
  return acc[0][0] + acc[0][3];
}

float read_all(ts::Isa isa, const float* p, int64_t n) {
#if defined(__x86_64__)
  if (isa == ts::Isa::Avx512) return read_avx512(p, n);
  if (isa == ts::Isa::Avx2) return read_avx2(p, n);
#endif
  return read_scalar(p, n);
}

ts::Isa g_isa = ts::Isa::Scalar;  // the route, read once in main

// state.range(0) threads, each running the chains kFlopPerThread / (2 * lanes * kChains) times
void fma_peak(benchmark::State& state) {
  const int threads = int(state.range(0));
  const int64_t iters = int64_t(kFlopPerThread / (2.0 * lanes(g_isa) * kChains));
  std::vector<float> sink(static_cast<size_t>(threads));
  volatile int64_t opaque = iters;  // read in the loop: the work cannot be hoisted out of it
  // a warm-up on every thread, long enough for the clock to settle (AVX-512 frequency licences,
  // turbo), before the timed runs (Google Benchmark's own warm-up does not combine with Iterations)
  {
    const int64_t n = std::max<int64_t>(1, iters / 8);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWarmUpSeconds);
    auto spin = [&](int t) {
      while (std::chrono::steady_clock::now() < until) sink[size_t(t)] = chains(g_isa, n);
    };
    std::vector<std::thread> team;
    for (int t = 1; t < threads; ++t) team.emplace_back(spin, t);
    spin(0);
    for (auto& th : team) th.join();
  }
  for (auto _ : state) {
    const int64_t n = opaque;
    std::vector<std::thread> team;
    for (int t = 1; t < threads; ++t) team.emplace_back([&, t] { sink[size_t(t)] = chains(g_isa, n); });
    sink[0] = chains(g_isa, n);
    for (auto& th : team) th.join();
    benchmark::DoNotOptimize(sink.data());
  }
  state.counters["flop"] = double(threads) * double(iters) * kChains * lanes(g_isa) * 2.0;
}

// state.range(0) threads, each reading its contiguous share of the buffer once per run
void mem_read_bw(benchmark::State& state) {
  constexpr int64_t kFloats = int64_t(64) << 20;  // 256 MB
  constexpr int64_t kBlock = 16 * kChains;        // every share a whole number of steps
  static float* buf = [] {
    float* p = static_cast<float*>(std::aligned_alloc(64, size_t(kFloats) * sizeof(float)));
    if (!p) throw std::bad_alloc();
    for (int64_t i = 0; i < kFloats; ++i) p[i] = 1.0f;  // touched: real pages, not the shared zero page
    return p;
  }();
  const int threads = int(state.range(0));
  std::vector<float> sink(static_cast<size_t>(threads));
  auto share = [&](int t) {
    const int64_t b = kFloats / kBlock * t / threads * kBlock, e = kFloats / kBlock * (t + 1) / threads * kBlock;
    sink[size_t(t)] = read_all(g_isa, buf + b, e - b);
  };
  for (auto _ : state) {
    std::vector<std::thread> team;
    for (int t = 1; t < threads; ++t) team.emplace_back(share, t);
    share(0);
    for (auto& th : team) th.join();
    benchmark::DoNotOptimize(sink.data());
  }
  state.counters["bytes"] = double(kFloats) * sizeof(float);
}

}  // namespace

int main(int argc, char** argv) {
  g_isa = bench_isa_or_exit("bench_peak");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("peak_isa", ts::isa_name(g_isa));
  benchmark::AddCustomContext("cpu_isa", ts::isa_name(ts::cpu_isa()));
  add_at_thread_counts("fma_peak", 3, fma_peak);
  add_at_thread_counts("mem_read_bw", 5, mem_read_bw);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
