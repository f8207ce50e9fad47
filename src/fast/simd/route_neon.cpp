// route_neon.cpp: the SIMD kernels of route_impl.hpp for arm64's Advanced SIMD (NEON, 4 floats
// a vector, fused multiply-add included). Compiled only in arm64 builds (CMakeLists.txt), where
// every CPU has it; route() calls it unless TS_ISA=scalar.
#define TS_ROUTE_ARCH xsimd::neon64
#include "fast/simd/route_impl.hpp"

namespace ts::simd {
const Route& route_neon() {
  static const Route r = make_route<Narrow>(Isa::Neon, "6x8, NEON");
  return r;
}
}  // namespace ts::simd
