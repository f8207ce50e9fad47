// fp_contract.hpp: TS_NO_FP_CONTRACT, for functions that must round like PyTorch's scalar code.
//
// The course builds with -march=native, so GCC may fuse `a * b + c` into one FMA, which rounds
// once where torch's kernels round twice (the product, then the sum) and changes last bits.
// Files that replay torch's arithmetic wholesale (src/exact_*.cpp, src/exact/rng.cpp) are compiled
// with -ffp-contract=off (CMakeLists.txt); a single function elsewhere that does such math is
// marked TS_NO_FP_CONTRACT instead. (Introduced with the exact matmul loop of ch02.)
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#define TS_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define TS_NO_FP_CONTRACT  // other compilers: not handled (the course builds with Debian's GCC)
#endif
