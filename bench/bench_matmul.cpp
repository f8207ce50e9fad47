// bench_matmul.cpp: what does matching PyTorch's bits cost? Our linear against a raw sgemm.
//
//   ./build/bench_matmul                 (make bench runs it beside bench_encoder)
//
// linear_128x768x3072/<threads>  ts::linear on x (128,768), weight (3072,768), bias (3072):
//                                the FFN's first projection at T = 128, through the exact
//                                path (torch's addmm call shape). Allocates the output and
//                                copies the bias rows, like torch.
// sgemm_128x768x3072/<threads>   one cblas_sgemm of the same product into a preallocated C
//                                that holds the bias: the floor. ts::linear must stay within
//                                5 % of it (issue 2).
// linear_small_blas / _naive     x (5,768), w (64,768): one head's projection in the
//                                articles, on the Blas path and on the --naive triple loop.
// <threads> = OpenBLAS threads. Counter "flop" = 2*T*C*F per run.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench_isa.hpp"
#include "exact/matmul.hpp"
#include "fast/blas_core.hpp"

namespace {

constexpr size_t kT = 128, kC = 768, kF = 3072;
constexpr double kFlop = 2.0 * kT * kC * kF;

// OpenBLAS threads; fn once per (key, threads) as the warm-up
template <class Fn>
void setup(benchmark::State& state, const std::string& key, Fn fn) {
  static std::set<std::string> warmed;
  ts::set_blas_threads(int(state.range(0)));
  if (warmed.insert(key + "/" + std::to_string(state.range(0))).second) fn();
}

// x (T,C), w (F,C), b (F) -> (T,F)
void linear_128x768x3072(benchmark::State& state) {
  ts::set_matmul_path(ts::MatmulPath::Blas);
  const ts::Tensor x = randn({kT, kC}, 1), w = randn({kF, kC}, 2), b = randn({kF}, 3);
  setup(state, "linear", [&] { benchmark::DoNotOptimize(ts::linear(x, w, &b).data()); });
  for (auto _ : state) {
    ts::Tensor y = ts::linear(x, w, &b);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flop"] = kFlop;
}

// The same product as one column-major sgemm: C (F,T) = W^T' x^T + C, C holding the bias.
void sgemm_128x768x3072(benchmark::State& state) {
  const ts::Tensor x = randn({kT, kC}, 1), w = randn({kF, kC}, 2), b = randn({kF}, 3);
  std::vector<float> c(kT * kF);
  auto run = [&] {
    for (size_t i = 0; i < kT; ++i) std::copy(b.data(), b.data() + kF, c.data() + i * kF);
    cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(kF), int(kT), int(kC), 1.0f, w.data(), int(kC), x.data(),
                int(kC), 1.0f, c.data(), int(kF));
  };
  setup(state, "sgemm", run);
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["flop"] = kFlop;
}

// Small: x (1,5,768), w (64,768) -- one attention head's projection in the articles.
void linear_small(benchmark::State& state, ts::MatmulPath path) {
  ts::set_matmul_path(path);
  ts::set_blas_threads(1);
  const ts::Tensor x = randn({1, 5, kC}, 4), w = randn({64, kC}, 5), b = randn({64}, 6);
  for (auto _ : state) {
    ts::Tensor y = ts::linear(x, w, &b);
    benchmark::DoNotOptimize(y.data());
  }
  ts::set_matmul_path(ts::MatmulPath::Blas);
  state.counters["flop"] = 2.0 * 5 * kC * 64;
}

}  // namespace

BENCHMARK_CAPTURE(linear_small, blas, ts::MatmulPath::Blas)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(linear_small, naive, ts::MatmulPath::Naive)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  ts::use_widest_blas_core();  // OpenBLAS on the widest kernel this CPU runs
  bench_isa_or_exit("bench_matmul");  // not used here (OpenBLAS picks its own kernel), but bad input all the same
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  add_at_thread_counts("linear_128x768x3072", 20, linear_128x768x3072);
  add_at_thread_counts("sgemm_128x768x3072", 20, sgemm_128x768x3072);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
