// blas_core.hpp: run OpenBLAS on the widest kernel this CPU has (introduced with the fast
// path). It lives in fast/ because the rule needs the CPU's instruction set (fast/isa.hpp);
// exact/matmul.hpp only reports which core runs (blas_core()).
#pragma once

#include <string>

#include "fast/isa.hpp"

namespace ts {

// Switch OpenBLAS to the widest kernel the CPU runs when OpenBLAS picked a narrower one
// (choose_blas_core); an explicit OPENBLAS_CORETYPE always wins. Every program calls it
// once, before its first product: Chapter::run, the tests' and tools' main, the benchmarks.
// Later calls do nothing.
void use_widest_blas_core();
// The rule: OpenBLAS picked `picked`, the environment says `env` (nullptr: unset), the CPU
// runs `cpu`. core: what to switch OpenBLAS to ("" = leave it); reason: one line.
struct BlasCoreChoice {
  std::string core, reason;
};
BlasCoreChoice choose_blas_core(const std::string& picked, const char* env, Isa cpu);
// OPENBLAS_CORETYPE set to a core OpenBLAS does not run: OpenBLAS falls back without a word on a
// name it does not know (or a core this CPU cannot run). `asked` the variable's value, `runs` the
// core OpenBLAS runs; both empty when the variable is unset, names the running core (any case, as
// OpenBLAS compares), or the BLAS is not OpenBLAS. Call after use_widest_blas_core().
struct BlasCoreMismatch {
  std::string asked, runs;
};
BlasCoreMismatch blas_core_env_mismatch();
// Why blas_core() is what it is, one line (for a chapter's info output and the benchmarks).
std::string blas_core_reason();

}  // namespace ts
