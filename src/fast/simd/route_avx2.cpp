// route_avx2.cpp: the SIMD kernels of route_impl.hpp for AVX2 + FMA (8 floats a vector).
// Compiled with -mavx2 -mfma on a baseline x86-64 target (CMakeLists.txt), whatever the
// rest of the build uses; route() calls it only where cpu_isa() >= avx2.
#define TS_ROUTE_ARCH xsimd::fma3<xsimd::avx2>
#include "fast/simd/route_impl.hpp"

namespace ts::simd {
const Route& route_avx2() {
  static const Route r = make_route<Narrow>(Isa::Avx2, "6x16, AVX2");
  return r;
}
}  // namespace ts::simd
