// bench_isa.hpp: the SIMD route a benchmark binary runs (ts::active_isa(), capped by TS_ISA),
// read before anything is timed, so that a bad TS_ISA is bad input like anywhere else.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

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
