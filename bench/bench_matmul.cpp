// bench_matmul.cpp: what does matching PyTorch's bits cost? Our linear against a raw sgemm.
//
//   ./bench_matmul --benchmark_min_time=0.1
//
// BM_linear_ours   ts::linear on x (1,128,768), weight (3072,768), bias (3072): the FFN's
//                  first projection, T=128. Allocates the output and copies the bias rows.
// BM_sgemm_raw     cblas_sgemm of the same product into a preallocated C holding the bias:
//                  the floor. Ours should stay within ~5 % of it.
// BM_linear_naive  the --naive path (plain triple loop) at a small size, beside the Blas path
//                  at the same size, so a learner can feel the gap.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <random>
#include <vector>

#include "matmul.hpp"

namespace {

ts::Tensor randn(const ts::Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  ts::Tensor t = ts::Tensor::from_shape(shape);
  for (auto& v : t) v = d(rng);
  return t;
}

constexpr size_t kT = 128, kC = 768, kF = 3072;

// x (1,T,C), w (F,C), b (F) -> (1,T,F)
void BM_linear_ours(benchmark::State& state) {
  ts::set_matmul_path(ts::MatmulPath::Blas);
  const ts::Tensor x = randn({1, kT, kC}, 1), w = randn({kF, kC}, 2), b = randn({kF}, 3);
  for (auto _ : state) {
    ts::Tensor y = ts::linear(x, w, &b);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(2 * kT * kC * kF));  // flops
}
BENCHMARK(BM_linear_ours)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same product as one column-major sgemm: C (F,T) = W^T' ... i.e. y^T = W x^T + b.
void BM_sgemm_raw(benchmark::State& state) {
  const ts::Tensor x = randn({1, kT, kC}, 1), w = randn({kF, kC}, 2), b = randn({kF}, 3);
  std::vector<float> c(kT * kF);
  for (auto _ : state) {
    for (size_t i = 0; i < kT; ++i) std::copy(b.data(), b.data() + kF, c.data() + i * kF);
    cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(kF), int(kT), int(kC), 1.0f, w.data(), int(kC), x.data(),
                int(kC), 1.0f, c.data(), int(kF));
    benchmark::DoNotOptimize(c.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(2 * kT * kC * kF));
}
BENCHMARK(BM_sgemm_raw)->Unit(benchmark::kMillisecond)->UseRealTime();

// Small: x (1,5,768), w (64,768) -- one attention head's projection in the articles.
void BM_linear_small(benchmark::State& state, ts::MatmulPath path) {
  ts::set_matmul_path(path);
  const ts::Tensor x = randn({1, 5, kC}, 4), w = randn({64, kC}, 5), b = randn({64}, 6);
  for (auto _ : state) {
    ts::Tensor y = ts::linear(x, w, &b);
    benchmark::DoNotOptimize(y.data());
  }
  ts::set_matmul_path(ts::MatmulPath::Blas);
}
BENCHMARK_CAPTURE(BM_linear_small, blas, ts::MatmulPath::Blas)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_linear_small, naive, ts::MatmulPath::Naive)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
