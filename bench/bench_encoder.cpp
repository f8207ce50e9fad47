// bench_encoder.cpp: article 000's BERT-base encoder (chapter 7) and its parts, our side.
//
//   ./bench_encoder --benchmark_filter=encoder_fast_1x5
//   make bench        (runs this and bench/bench_pytorch.py side by side: scripts/bench.sh)
//
// Workloads (the PyTorch peer bench/bench_pytorch.py runs the same names):
//   encoder_fast_BxT   ts::FastEncoder on ids (B,T): 12 pre-LN layers, C 768, H 12, F 3072, eval
//   encoder_exact_BxT  TransformerEncoder::operator(): PyTorch's op sequence, bit for bit
//   layer_8x128        one encoder layer (fast path) on x (8,128,768)
//   qk_8x128           scores = Q K^T on the heads of q, k (8,128,768): (8,12,128,128)
//   softmax_8x12x128x128, layernorm_8x128x768, gelu_8x128x3072: the row kernels
// The argument is the thread count (ours: OpenBLAS threads + as many row-kernel workers).
// Each benchmark reports counter "flop" = floating-point operations of one run (products only).
// Before timing, the fast encoder is checked against the exact one: max |diff| <= 1e-4.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "fast_encoder.hpp"
#include "kernels.hpp"
#include "matmul.hpp"
#include "nn.hpp"
#include "rng.hpp"

namespace {

constexpr int64_t kC = 768, kH = 12, kF = 3072, kLayers = 12;

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

// ids (B,T): fixed pseudo-random token ids
ts::ITensor ids(int64_t B, int64_t T) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int64_t> d(0, 30521);
  ts::ITensor t = ts::ITensor::from_shape({size_t(B), size_t(T)});
  for (auto& v : t) v = d(rng);
  return t;
}

ts::Tensor randn(const ts::Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  ts::Tensor t = ts::Tensor::from_shape(shape);
  for (auto& v : t) v = d(rng);
  return t;
}

// Products of one encoder layer on (B,T): QKV, output, FFN in and out, QK^T and PV.
double layer_flop(int64_t B, int64_t T) {
  const double N = double(B * T);
  return 2 * N * kC * (3 * kC) + 2 * N * kC * kC + 2 * 2 * N * kC * kF + 2 * 2 * double(B) * kH * T * T * (kC / kH);
}

void set_threads(benchmark::State& state) { ts::set_num_threads(int(state.range(0))); }

void encoder_fast(benchmark::State& state, int64_t B, int64_t T) {
  set_threads(state);
  const ts::ITensor x = ids(B, T);
  benchmark::DoNotOptimize(fast()(x).data());  // warm-up: buffers, pages, BLAS threads
  for (auto _ : state) {
    ts::Tensor y = fast()(x);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = layer_flop(B, T) * kLayers;
}

void encoder_exact(benchmark::State& state, int64_t B, int64_t T) {
  set_threads(state);
  const ts::ITensor x = ids(B, T);
  benchmark::DoNotOptimize(model()(x).data());
  for (auto _ : state) {
    ts::Tensor y = model()(x);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = layer_flop(B, T) * kLayers;
}

void layer_8x128(benchmark::State& state) {
  set_threads(state);
  const ts::Tensor x = randn({8, 128, kC}, 1);
  benchmark::DoNotOptimize(fast().layer(0, x).data());
  for (auto _ : state) {
    ts::Tensor y = fast().layer(0, x);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = layer_flop(8, 128);
}

void qk_8x128(benchmark::State& state) {
  set_threads(state);
  const ts::Tensor q = randn({8, 128, kC}, 2), k = randn({8, 128, kC}, 3);
  for (auto _ : state) {
    ts::Tensor s = ts::matmul_heads_qk(q, k, kH);
    benchmark::DoNotOptimize(s.data());
  }
  state.counters["flop"] = 2.0 * 8 * kH * 128 * 128 * (kC / kH);
}

// A row kernel over `rows` rows of n, rows split over the threads.
template <class Kernel>
void rows_bench(benchmark::State& state, int64_t rows, int64_t n, Kernel kernel) {
  set_threads(state);
  const ts::Tensor x = randn({size_t(rows), size_t(n)}, 4);
  ts::Tensor y = ts::Tensor::from_shape({size_t(rows), size_t(n)});
  for (auto _ : state) {
    ts::parallel_for(rows, 8, [&](int64_t r0, int64_t r1) { kernel(x.data() + r0 * n, y.data() + r0 * n, r1 - r0, n); });
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = 0;
}

void softmax_8x12x128x128(benchmark::State& state) {
  rows_bench(state, 8 * 12 * 128, 128, [](const float* x, float* y, int64_t r, int64_t n) { ts::softmax_rows(x, y, r, n); });
}

void layernorm_8x128x768(benchmark::State& state) {
  const ts::Tensor g = randn({size_t(kC)}, 5), b = randn({size_t(kC)}, 6);
  rows_bench(state, 8 * 128, kC, [&](const float* x, float* y, int64_t r, int64_t n) {
    ts::layer_norm_rows(x, y, r, n, g.data(), b.data(), 1e-5f);
  });
}

void gelu_8x128x3072(benchmark::State& state) {
  rows_bench(state, 8 * 128, kF, [](const float* x, float* y, int64_t r, int64_t n) { ts::gelu(x, y, r * n); });
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

// Heavy workloads: a fixed number of runs per repetition (repetitions come from the command line).
BENCHMARK_CAPTURE(encoder_fast, 1x5, 1, 5)->Arg(1)->Arg(2)->Iterations(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(encoder_fast, 1x128, 1, 128)->Arg(1)->Arg(2)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(encoder_fast, 8x128, 8, 128)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(encoder_exact, 1x5, 1, 5)->Arg(1)->Arg(2)->Iterations(10)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(encoder_exact, 1x128, 1, 128)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(layer_8x128)->Arg(1)->Arg(2)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(qk_8x128)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(softmax_8x12x128x128)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(layernorm_8x128x768)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(gelu_8x128x3072)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  std::fprintf(stderr, "OpenBLAS core: %s (%s)\n", ts::blas_core().c_str(), ts::blas_core_reason().c_str());
  if (!check_fast_equals_exact()) return 1;
  benchmark::AddCustomContext("openblas_core", ts::blas_core());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
