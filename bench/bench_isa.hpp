// bench_isa.hpp: what every benchmark binary shares: the SIMD route it runs (ts::active_isa(),
// capped by TS_ISA), read before anything is timed, so that a bad TS_ISA is bad input like
// anywhere else; its random inputs; the OpenBLAS core it reports; how a row is registered.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "exact/matmul.hpp"  // ts::blas_core
#include "exact/tensor.hpp"
#include "fast/blas_core.hpp"
#include "fast/isa.hpp"

// route: ts::active_isa(); a TS_ISA this CPU cannot run -> one line on stderr, exit 2
inline ts::Isa bench_isa_or_exit(const char* prog) {
  try {
    return ts::active_isa();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: error: %s\n", prog, e.what());
    std::exit(2);
  }
}

// x ~ N(0, 1), fixed by `seed` (std::mt19937): the same inputs in every run of a benchmark
inline ts::Tensor randn(const ts::Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  ts::Tensor t = ts::Tensor::from_shape(shape);
  for (auto& v : t) v = d(rng);
  return t;
}

// The `n` batches a training benchmark cycles through: make(indices) of epochs' first n draws.
template <class Epochs, class Make>
auto first_batches(Epochs& epochs, Make make, int n) {
  std::vector<decltype(make(epochs.next(nullptr, nullptr)))> batches;
  for (int i = 0; i < n; ++i) {
    int64_t e = 0, b = 0;
    batches.push_back(make(epochs.next(&e, &b)));
  }
  return batches;
}

// benchmark::Initialize on OpenBLAS's widest kernel for this CPU, which is named on stderr and in
// the JSON context ("openblas_core"). false: an argument google-benchmark does not know (exit 2).
inline bool init_on_widest_blas_core(int* argc, char** argv) {
  ts::use_widest_blas_core();
  benchmark::Initialize(argc, argv);
  if (benchmark::ReportUnrecognizedArguments(*argc, argv)) return false;
  std::fprintf(stderr, "OpenBLAS core: %s (%s)\n", ts::blas_core().c_str(), ts::blas_core_reason().c_str());
  benchmark::AddCustomContext("openblas_core", ts::blas_core());
  benchmark::AddCustomContext("openblas_core_reason", ts::blas_core_reason());
  return true;
}

// A row `name`/threads at 1 and 2 threads, `runs` timed runs per repetition, in ms of real time.
inline void add_at_1_and_2_threads(const std::string& name, int runs,
                                   const std::function<void(benchmark::State&)>& fn) {
  benchmark::RegisterBenchmark(name.c_str(), fn)
      ->Arg(1)
      ->Arg(2)
      ->Iterations(runs)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}
