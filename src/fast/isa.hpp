// isa.hpp: which SIMD instruction set the fast path and the row kernels use (introduced
// with the fast encoder of ch07; see docs/performance.md).
//
// The course is built once and runs on any CPU of its architecture: the SIMD kernels are
// compiled for each instruction set in its own file (src/fast/simd/, one source, instantiated
// per width) and the widest one the CPU and the OS support is chosen at run time. TS_ISA caps
// it, so one machine can test every route it has:
//   TS_ISA=avx512   AVX-512 F/CD/BW/DQ/VL, 16 floats per vector   (x86-64 builds)
//   TS_ISA=avx2     AVX2 + FMA, 8 floats per vector               (x86-64 builds)
//   TS_ISA=neon     Advanced SIMD, 4 floats per vector            (arm64 builds: every arm64 CPU)
//   TS_ISA=scalar   plain C++ compiled for the baseline CPU (no SIMD of ours)
// TS_ISA caps our own kernels only; OpenBLAS picks its kernel itself (OPENBLAS_CORETYPE).
// The exact path (PyTorch's bits) never depends on it.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace ts {

// The routes of one build are ordered, narrowest first: scalar, avx2, avx512 on x86-64;
// scalar, neon on arm64; scalar elsewhere. A route of another architecture never runs.
enum class Isa { Scalar = 0, Avx2 = 1, Avx512 = 2, Neon = 3 };

// "scalar", "avx2", "avx512", "neon"
const char* isa_name(Isa isa);

// Whether this CPU (and this build) can run `isa`.
bool isa_runs(Isa isa);

// The widest route this CPU and OS can run (the OS must save the wide registers).
Isa cpu_isa();

// A TS_ISA the program cannot follow: an unknown route, or one this CPU cannot run. what() is
// the English line; the fields let a chapter say it in the learner's language.
struct IsaEnvError : std::invalid_argument {
  std::string value;      // TS_ISA as given
  std::string supported;  // "avx512, avx2, scalar": the routes this CPU runs, widest first
  bool unknown = false;   // true: not a route name at all; false: a route this CPU cannot run
  IsaEnvError(const std::string& what, std::string v, std::string s, bool u)
      : std::invalid_argument(what), value(std::move(v)), supported(std::move(s)), unknown(u) {}
};

// The route in use: cpu_isa(), capped by TS_ISA and by set_isa_cap. Throws IsaEnvError
// (a one-line message: what the CPU supports, how to fix it) when TS_ISA names an unknown
// route or one this CPU cannot run.
Isa active_isa();

// Cap the route from inside the program (the tests run every route the machine can run);
// throws std::invalid_argument for a route the CPU cannot run.
void set_isa_cap(Isa cap);

}  // namespace ts
