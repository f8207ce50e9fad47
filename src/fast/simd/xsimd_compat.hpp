// xsimd_compat.hpp: the two xsimd calls whose spelling changed between xsimd 8 (Debian 12)
// and xsimd 13 (Debian 13), written once for both (CMakeLists.txt accepts xsimd 8-13).
//   reduce_add(v)   the sum of v's lanes: xsimd::hadd before 9.0, xsimd::reduce_add since
//                   (hadd is gone in 13);
//   float_bits(i)   the float lanes holding the bits of the int32 lanes i: before 11.0
//                   bitwise_cast takes the batch type it returns, since then its element type.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>

namespace ts::simd::compat {

template <class T, class Arch>
inline T reduce_add(const xsimd::batch<T, Arch>& v) {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::reduce_add(v);
#else
  return xsimd::hadd(v);
#endif
}

template <class Arch>
inline xsimd::batch<float, Arch> float_bits(const xsimd::batch<std::int32_t, Arch>& i) {
#if XSIMD_VERSION_MAJOR >= 11
  return xsimd::bitwise_cast<float>(i);
#else
  return xsimd::bitwise_cast<xsimd::batch<float, Arch>>(i);
#endif
}

}  // namespace ts::simd::compat
