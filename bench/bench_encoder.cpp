// bench_encoder.cpp: article 000's BERT-base encoder (chapter 7) and its parts, our side.
//
//   make bench                                   (this, bench_matmul and the PyTorch peer
//                                                 side by side: scripts/bench.sh)
//   ./build/bench_encoder --benchmark_filter=encoder_1x5
//
// Each benchmark is named <workload>/<threads>; bench/bench_pytorch.py times the same
// workloads under the same names. Workloads:
//   encoder_BxT      ts::FastEncoder on ids (B,T): 12 pre-LN layers, C 768, H 12, F 3072, eval
//   sgemmroute_BxT   the same with FastEncoder::Gemm::Sgemm (OpenBLAS for the weight products)
//   exact_BxT        TransformerEncoder::operator(): PyTorch's op sequence, bit for bit
//   layer_8x128      one encoder layer (fast path) on x (8,128,768)
//   qk_8x128         scores (8,12,128,128) = Q K^T per head, as the fast path computes it:
//                    one sgemm per (batch, head) on strided views of q, k (8,128,768)
//   softmax_8x12x128x128, layernorm_8x128x768, gelu_8x128x3072: the fast path's row kernels
// The "% of peak" reference is bench_peak's (the FMA rate of the route in use, per thread count).
// Threads: ts::set_num_threads (the fast path's team; OpenBLAS threads for the exact path).
// Counter "flop": floating-point operations of one run (products only; see
// FastEncoder::flops). Each benchmark warms up once before it is timed.
// Before anything is timed, the fast encoder is checked against the exact one (<= 1e-4).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "bench_isa.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "fast/blas_core.hpp"
#include "exact/rng.hpp"
#include "fast/fast_encoder.hpp"
#include "fast/isa.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

namespace {

constexpr int64_t kC = 768, kH = 12, kF = 3072;

// The model, built once (torch.manual_seed(0); TransformerEncoder(config).eval()).
ts::TransformerEncoder& model() {
  static ts::TransformerEncoder* enc = [] {
    ts::manual_seed(0);
    auto* e = new ts::TransformerEncoder(ts::Config{});
    e->train(false);
    return e;
  }();
  return *enc;
}

ts::FastEncoder& fast() {
  static ts::FastEncoder f(model());
  return f;
}

ts::FastEncoder& fast_sgemm() {
  static ts::FastEncoder f(model(), ts::FastEncoder::Gemm::Sgemm);
  return f;
}

// ids (B,T): fixed pseudo-random token ids
ts::ITensor ids(int64_t B, int64_t T) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int64_t> d(0, 30521);
  ts::ITensor t = ts::ITensor::from_shape({size_t(B), size_t(T)});
  for (auto& v : t) v = d(rng);
  return t;
}

// Sets the threads; runs fn (the warm-up) the first time `key` is seen at this thread count.
template <class Fn>
void setup(benchmark::State& state, const std::string& key, Fn fn) {
  static std::set<std::string> warmed;
  ts::set_num_threads(int(state.range(0)));
  if (warmed.insert(key + "/" + std::to_string(state.range(0))).second) fn();
}

void encoder(benchmark::State& state, ts::FastEncoder* (*which)(), int64_t B, int64_t T) {
  ts::FastEncoder& f = *which();
  const ts::ITensor x = ids(B, T);
  setup(state, f.backend() + std::to_string(B) + "x" + std::to_string(T), [&] { benchmark::DoNotOptimize(f(x).data()); });
  for (auto _ : state) {
    ts::Tensor y = f(x);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = f.flops(B, T);
}

ts::FastEncoder* fast_ptr() { return &fast(); }
ts::FastEncoder* fast_sgemm_ptr() { return &fast_sgemm(); }

void exact(benchmark::State& state, int64_t B, int64_t T) {
  const ts::ITensor x = ids(B, T);
  setup(state, "exact" + std::to_string(B) + "x" + std::to_string(T), [&] { benchmark::DoNotOptimize(model()(x).data()); });
  for (auto _ : state) {
    ts::Tensor y = model()(x);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = fast().flops(B, T);
}

void layer_8x128(benchmark::State& state) {
  const ts::Tensor x = randn({8, 128, size_t(kC)}, 1);
  setup(state, "layer", [&] { benchmark::DoNotOptimize(fast().layer(0, x).data()); });
  for (auto _ : state) {
    ts::Tensor y = fast().layer(0, x);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = fast().flops(8, 128, 1);
}

// scores (B,H,T,S) = Q K^T / 1 per (batch, head), on the heads of q, k (B,T,C): what the
// fast path's attention does (there with scale 1/sqrt(D) folded into alpha).
void qk_8x128(benchmark::State& state) {
  const int64_t B = 8, T = 128, S = 128, D = kC / kH;
  const ts::Tensor q = randn({size_t(B), size_t(T), size_t(kC)}, 2), k = randn({size_t(B), size_t(S), size_t(kC)}, 3);
  ts::Tensor s = ts::Tensor::from_shape({size_t(B), size_t(kH), size_t(T), size_t(S)});
  auto run = [&] {
    const int saved = ts::blas_threads();
    ts::set_blas_threads(1);  // one sgemm per (b, h), the heads spread over the threads
    ts::parallel_for(B * kH, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / kH, h = i % kH;
        // column-major (S,T) = K_h (S,D) . Q_h^T (D,T), both read with row stride C
        ts::gemm('t', 'n', S, T, D, 1.0f, k.data() + b * S * kC + h * D, kC, q.data() + b * T * kC + h * D, kC, 0.0f,
                 s.data() + i * T * S, S);
      }
    });
    ts::set_blas_threads(saved);
  };
  setup(state, "qk", run);
  run();  // untimed: s is new in each repetition; its first touch (page faults) is not the product
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(s.data());
  }
  state.counters["flop"] = 2.0 * B * kH * T * S * D;
}

// A row kernel over `rows` rows of n, rows split over the threads, into a preallocated y.
template <class Kernel>
void rows_bench(benchmark::State& state, const std::string& key, int64_t rows, int64_t n, Kernel kernel) {
  const ts::Tensor x = randn({size_t(rows), size_t(n)}, 4);
  ts::Tensor y = ts::Tensor::from_shape({size_t(rows), size_t(n)});
  auto run = [&] {
    ts::parallel_for(rows, 8, [&](int64_t r0, int64_t r1) { kernel(x.data() + r0 * n, y.data() + r0 * n, r1 - r0, n); });
  };
  setup(state, key, run);
  run();  // untimed: y is new in each repetition; its first touch (page faults) is not the kernel
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = 0;
}

void softmax_8x12x128x128(benchmark::State& state) {
  rows_bench(state, "softmax", 8 * 12 * 128, 128,
             [](const float* x, float* y, int64_t r, int64_t n) { ts::fast::softmax_rows(x, y, r, n); });
}

void layernorm_8x128x768(benchmark::State& state) {
  const ts::Tensor g = randn({size_t(kC)}, 5), b = randn({size_t(kC)}, 6);
  rows_bench(state, "layernorm", 8 * 128, kC, [&](const float* x, float* y, int64_t r, int64_t n) {
    ts::fast::layer_norm_rows(x, y, r, n, g.data(), b.data(), 1e-5f);
  });
}

void gelu_8x128x3072(benchmark::State& state) {
  rows_bench(state, "gelu", 8 * 128, kF, [](const float* x, float* y, int64_t r, int64_t n) { ts::fast::gelu(x, y, r * n); });
}

// The fast path must compute what the exact one computes (the 1e-4 on the encoder output).
bool check_fast_equals_exact() {
  for (const auto& bt : {std::pair<int64_t, int64_t>{1, 5}, {2, 16}}) {
    const ts::ITensor x = ids(bt.first, bt.second);
    const ts::Tensor a = model()(x), b = fast()(x);
    double max_diff = 0.0;
    for (size_t i = 0; i < a.size(); ++i) max_diff = std::max(max_diff, double(std::fabs(a.data()[i] - b.data()[i])));
    std::fprintf(stderr, "check: fast vs exact encoder on (%ld,%ld): max |diff| = %.3g %s\n", long(bt.first),
                 long(bt.second), max_diff, max_diff <= 1e-4 ? "OK" : "NOT OK");
    if (!(max_diff <= 1e-4)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ts::use_widest_blas_core();  // OpenBLAS on the widest kernel this CPU runs
  const ts::Isa isa = bench_isa_or_exit("bench_encoder");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  std::fprintf(stderr, "OpenBLAS core: %s (%s)\n", ts::blas_core().c_str(), ts::blas_core_reason().c_str());
  try {  // TS_AVX512_CORE (isa.hpp): a bad value is bad input, like TS_ISA
    ts::active_avx512_core();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "bench_encoder: %s\n", e.what());
    return 2;
  }
  const ts::CpuModel cpu = ts::cpu_model();
  const std::string cpu_kind = cpu.vendor + " family " + std::to_string(cpu.family) + " model " + std::to_string(cpu.model) +
                               ", AVX-512 kind " + ts::avx512_core_name(ts::active_avx512_core()) +
                               (std::getenv("TS_AVX512_CORE") && *std::getenv("TS_AVX512_CORE") ? " (TS_AVX512_CORE)" : " (CPUID)");
  std::fprintf(stderr, "CPU: %s\n", cpu_kind.c_str());
  std::fprintf(stderr, "fast path GEMM: %s\n", fast().backend().c_str());
  if (!check_fast_equals_exact()) return 1;
  benchmark::AddCustomContext("openblas_core", ts::blas_core());
  benchmark::AddCustomContext("openblas_core_reason", ts::blas_core_reason());
  benchmark::AddCustomContext("fast_gemm", fast().backend());
  benchmark::AddCustomContext("cpu_kind", cpu_kind);
  benchmark::AddCustomContext("isa", ts::isa_name(isa));

  for (const auto& bt : {std::pair<int64_t, int64_t>{1, 5}, {1, 128}, {8, 128}}) {
    const std::string shape = std::to_string(bt.first) + "x" + std::to_string(bt.second);
    const int runs = bt.second == 5 ? 10 : bt.first == 1 ? 3 : 1;
    const int64_t B = bt.first, T = bt.second;
    add_at_thread_counts("encoder_" + shape, runs, [=](benchmark::State& s) { encoder(s, fast_ptr, B, T); });
    add_at_thread_counts("sgemmroute_" + shape, runs,
                           [=](benchmark::State& s) { encoder(s, fast_sgemm_ptr, B, T); });
    if (B == 1) add_at_thread_counts("exact_" + shape, runs, [=](benchmark::State& s) { exact(s, B, T); });
  }
  add_at_thread_counts("layer_8x128", 2, layer_8x128);
  add_at_thread_counts("qk_8x128", 10, qk_8x128);
  add_at_thread_counts("softmax_8x12x128x128", 20, softmax_8x12x128x128);
  add_at_thread_counts("layernorm_8x128x768", 50, layernorm_8x128x768);
  add_at_thread_counts("gelu_8x128x3072", 20, gelu_8x128x3072);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
