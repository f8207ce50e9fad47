// fp_contract.hpp: TS_NO_FP_CONTRACT, for functions that must round like PyTorch's scalar code.
//
// The course builds with -march=native, so the compiler may fuse `a * b + c` into one FMA, which
// rounds once where torch's kernels round twice (the product, then the sum) and changes last bits.
// Files that replay torch's arithmetic wholesale (src/exact/exact_*.cpp, src/exact/rng.cpp) are
// compiled with -ffp-contract=off (CMakeLists.txt); a single function elsewhere that does such
// math is marked instead, twice, because GCC and clang turn contraction off in different places:
//
//   TS_NO_FP_CONTRACT Tensor f(const Tensor& x) {   // GCC: an attribute of the function
//     TS_NO_FP_CONTRACT_BODY                         // clang: a pragma opening the body
//     ...
//
// tests/fp_contract_check.py checks that every marked function has both. Under clang, the pragma covers the code written inside
// the braces (lambdas included), not the inline functions and templates it calls: those keep the
// contraction of the place they are written, so such a helper doing a*b+c where bits matter must
// be marked itself. (Introduced with the exact matmul loop of ch02; clang's half with issue 30.)
//
// Everywhere else both compilers contract the same way: GCC's default for C++ is
// -ffp-contract=fast, and CMakeLists.txt gives clang -ffp-contract=fast-honor-pragmas (its own
// default, "on", fuses only inside one expression, and the fast path's and the KV cache's last
// digits then differed from GCC's in ch07 and ch09).
#pragma once

#if defined(__clang__)
#define TS_NO_FP_CONTRACT
#define TS_NO_FP_CONTRACT_BODY _Pragma("clang fp contract(off)")
#elif defined(__GNUC__)
#define TS_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#define TS_NO_FP_CONTRACT_BODY
#else
#error "fp_contract.hpp: a compiler other than GCC or clang: say here how it turns off FMA contraction"
#endif
