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

// ---- the kind of core, for the packed GEMM's blocking (src/fast/simd/route_impl.hpp) ----
// The avx512 route has one register blocking per kind of AVX-512 core; the avx2 route has one
// (Zen 1-3, Haswell to Alder Lake: two 256-bit FMA ports) and the scalar route none:
//   two-port       Intel's server cores (Skylake-X, Ice Lake server, Sapphire/Emerald Rapids)
//                  and AMD Zen 5 server/desktop: two 512-bit FMA pipes; the default for any
//                  CPU not listed as double-pumped
//   double-pumped  AMD Zen 4 and mobile Zen 5: a 512-bit FMA runs as two 256-bit halves
// The kind is read from CPUID (vendor, family, model); TS_AVX512_CORE=two-port|double-pumped
// overrides it, so one machine can run (and test) both blockings. The choice never changes a
// result: every blocking sums each output over k in the same order (route_impl.hpp).
enum class Avx512Core { TwoPort = 0, DoublePumped = 1 };

// "two-port", "double-pumped"
const char* avx512_core_name(Avx512Core core);

// CPUID's vendor string ("GenuineIntel", "AuthenticAMD", ...; "" off x86-64) and display
// family / model (base + extended, as /proc/cpuinfo prints them)
struct CpuModel {
  std::string vendor;
  int family = 0, model = 0;
};
CpuModel cpu_model();

// The kind CPUID says this core is (isa.cpp lists the families and models).
Avx512Core cpu_avx512_core();

// The kind the avx512 route's GEMM uses: set_avx512_core's choice, else TS_AVX512_CORE, else
// cpu_avx512_core(). Throws std::invalid_argument (one line naming the accepted values) for
// an unknown TS_AVX512_CORE.
Avx512Core active_avx512_core();

// Choose the kind from inside the program (tests); wins over TS_AVX512_CORE.
void set_avx512_core(Avx512Core core);
void clear_avx512_core();  // back to TS_AVX512_CORE / CPUID

}  // namespace ts
