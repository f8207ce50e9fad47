// blas_core.cpp: which OpenBLAS kernel the course runs (see blas_core.hpp).
#include "fast/blas_core.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "exact/matmul.hpp"
#include "exact/openblas.hpp"  // the weak OpenBLAS entry points

namespace ts {

// ================================================================================
// Choosing the OpenBLAS kernel (moved here from exact/matmul.cpp: the rule needs the CPU's ISA,
// which the fast path detects, and exact/ must not include fast/)
// ================================================================================
//
// Debian's OpenBLAS 0.3.21 is built for every x86 core and picks one when it loads
// (before main). Its pick depends on how well it knows the CPU: a recent AVX-512 CPU
// may get "Cooperlake"/"SkylakeX" (AVX-512) or, when unrecognised, the AVX2 "Haswell"
// kernel at about half the FLOP rate. OPENBLAS_CORETYPE=<core> in the environment
// overrides the pick, but only when it is set before the library loads.
//
// The course's rule (choose_blas_core below), applied by use_widest_blas_core(), which
// every program calls first thing (Chapter::run, the tests' and tools' main, the benchmarks):
//   * OPENBLAS_CORETYPE set (to anything)  -> leave it: the user (or CI) decided.
//   * else, CPU + OS have AVX-512 F/CD/BW/DQ/VL and OpenBLAS chose a core without
//     AVX-512 kernels                      -> SkylakeX
//   * else, CPU + OS have AVX2 + FMA and OpenBLAS chose a core without AVX2 kernels (an
//     AVX2 CPU it does not know falls back to "Prescott", SSE3: ~4x slower) -> Haswell
//   * else                                 -> leave OpenBLAS's own pick.
// A switch happens in-process (gotoblas_dynamic_quit + _init re-read the variable) and
// exports OPENBLAS_CORETYPE so child processes (the PyTorch twins) get the same kernel,
// hence the same bits. PyTorch uses the same libopenblas, so what matters for
// bit-equality is that both sides run the same core: tests/twin_compare.py resolves the
// variable by the same rule and passes it explicitly to both the chapter and its twin.
namespace {
bool core_has_avx512(const std::string& name) {
  return name == "SkylakeX" || name == "Cooperlake" || name == "SapphireRapids";
}
// OpenBLAS 0.3.21's x86-64 cores whose sgemm uses AVX2 + FMA (Zen and Excavator run
// Haswell-class kernels)
bool core_has_avx2(const std::string& name) {
  return core_has_avx512(name) || name == "Haswell" || name == "Zen" || name == "Excavator";
}

std::string& core_reason() {
  static std::string reason = "not chosen yet";
  return reason;
}

}  // namespace

BlasCoreChoice choose_blas_core(const std::string& picked, const char* env, Isa cpu) {
  if (env && *env) return {"", std::string("OPENBLAS_CORETYPE=") + env + " set in the environment"};
  if (cpu == Isa::Avx512) {
    if (core_has_avx512(picked)) return {"", "OpenBLAS picked an AVX-512 core itself"};
    return {"SkylakeX", "AVX-512 CPU, OpenBLAS picked " + picked + ": switched to SkylakeX"};
  }
  if (cpu == Isa::Avx2) {
    if (core_has_avx2(picked)) return {"", "AVX2 CPU, OpenBLAS picked the AVX2 core " + picked + " itself"};
    return {"Haswell", "AVX2 CPU, OpenBLAS picked " + picked + " (no AVX2 kernels): switched to Haswell"};
  }
  return {"", "no AVX2 on this CPU: OpenBLAS's own pick"};
}

void use_widest_blas_core() {
  static const bool once = [] {
    if (!openblas_get_corename) {
      core_reason() = "the BLAS is not OpenBLAS: used as it is";
      return true;
    }
    const BlasCoreChoice c = choose_blas_core(openblas_get_corename(), std::getenv("OPENBLAS_CORETYPE"), cpu_isa());
    core_reason() = c.reason;
    if (c.core.empty()) return true;
    if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) {
      core_reason() = "this OpenBLAS cannot switch cores: its own pick";
      return true;
    }
    // gotoblas_dynamic_quit + _init re-read the variable; exporting it also gives child
    // processes (the PyTorch twins) the same kernel
    setenv("OPENBLAS_CORETYPE", c.core.c_str(), 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    return true;
  }();
  (void)once;
}

std::string blas_core_reason() { return core_reason(); }

BlasCoreMismatch blas_core_env_mismatch() {
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  if (!env || !*env || !openblas_get_corename) return {};
  const std::string asked = env, runs = openblas_get_corename();
  // OpenBLAS matches the name with strncasecmp: the same letters in any case
  const bool same = asked.size() == runs.size() &&
                    std::equal(asked.begin(), asked.end(), runs.begin(), [](char a, char b) {
                      return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
                    });
  if (same) return {};
  return {asked, runs};
}

}  // namespace ts
