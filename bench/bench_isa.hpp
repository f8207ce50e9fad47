// bench_isa.hpp: what every benchmark binary shares: the SIMD route it runs (ts::active_isa(),
// capped by TS_ISA), read before anything is timed, so that a bad TS_ISA is bad input like
// anywhere else; and its random inputs.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "exact/tensor.hpp"
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
