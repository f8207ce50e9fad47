// route_avx512.cpp: the SIMD kernels of route_impl.hpp for AVX-512 (16 floats a vector).
// Compiled with -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl (CMakeLists.txt),
// whatever the rest of the build uses; route() calls it only where cpu_isa() == avx512.
#define TS_ROUTE_ARCH xsimd::avx512bw
// GCC 12's AVX-512 headers initialise a pass-through operand from itself, which its own
// -Wmaybe-uninitialized then reports in every function that inlines them (not our code).
// (GCC only: clang has no such warning, and warns about the unknown name.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "fast/simd/route_impl.hpp"

namespace ts::simd {
// One table per kind of AVX-512 core (isa.hpp): the blocking its packed GEMM uses.
const Route& route_avx512() {
  static const Route two_port = make_route<TwoPort>(Isa::Avx512, "12x32, two-port AVX-512");
  static const Route double_pumped = make_route<DoublePumped>(Isa::Avx512, "6x64, double-pumped AVX-512");
  return active_avx512_core() == Avx512Core::DoublePumped ? double_pumped : two_port;
}
}  // namespace ts::simd
