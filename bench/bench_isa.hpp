// bench_isa.hpp: what every benchmark binary shares: the SIMD route it runs (ts::active_isa(),
// capped by TS_ISA), read before anything is timed, so that a bad TS_ISA is bad input like
// anywhere else; its random inputs; the OpenBLAS core it reports; how a row is registered.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
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

// The thread counts every row runs at: TS_BENCH_THREADS ("1,2,4") if set, else 1, 2, 4, ... up to
// the logical CPUs this process may use, and that count itself (a 12-core machine: 1 2 4 8 12).
// bench/report.py computes the same list (bench_threads()) and sets TS_BENCH_THREADS for every binary,
// so both sides of the table agree. A malformed list is bad input: one line, exit 2.
inline std::vector<int> bench_thread_counts() {
  std::vector<int> counts;
  if (const char* env = std::getenv("TS_BENCH_THREADS"); env && *env) {
    std::string s(env);
    size_t i = 0;
    while (i <= s.size()) {
      const size_t j = std::min(s.find(',', i), s.size());
      const std::string item = s.substr(i, j - i);
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 1 || v > 1024) {
        std::fprintf(stderr, "error: TS_BENCH_THREADS='%s': expected thread counts like 1,2,4 (each 1..1024)\n", env);
        std::exit(2);
      }
      counts.push_back(int(v));
      i = j + 1;
    }
    return counts;
  }
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  for (int t = 1; t <= cores; t *= 2) counts.push_back(t);
  if (counts.back() != cores) counts.push_back(cores);
  return counts;
}

// A row `name`/threads at every count of bench_thread_counts(), `runs` timed runs per repetition,
// in ms of real time.
inline benchmark::internal::Benchmark* add_at_thread_counts(const std::string& name, int runs,
                                                            const std::function<void(benchmark::State&)>& fn) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), fn);
  for (int t : bench_thread_counts()) b->Arg(t);
  return b->Iterations(runs)->Unit(benchmark::kMillisecond)->UseRealTime();
}
