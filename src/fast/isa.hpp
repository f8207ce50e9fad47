// isa.hpp: which SIMD instruction set the fast path and the row kernels use (introduced
// with the fast encoder of ch07; see docs/performance.md).
//
// The course is built once and runs on any x86-64 CPU: the SIMD kernels are compiled for
// each instruction set in its own file (src/fast/simd/, one source, instantiated per width) and
// the widest one the CPU and the OS support is chosen at run time. TS_ISA caps it, so one
// machine can test every route:
//   TS_ISA=avx512   AVX-512 F/CD/BW/DQ/VL, 16 floats per vector
//   TS_ISA=avx2     AVX2 + FMA, 8 floats per vector
//   TS_ISA=scalar   plain C++ compiled for baseline x86-64 (no SIMD of ours)
// TS_ISA caps our own kernels only; OpenBLAS picks its kernel itself (OPENBLAS_CORETYPE).
// The exact path (PyTorch's bits) never depends on it.
#pragma once

#include <string>

namespace ts {

enum class Isa { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// "scalar", "avx2", "avx512"
const char* isa_name(Isa isa);

// The widest route this CPU and OS can run (the OS must save the wide registers).
Isa cpu_isa();

// The route in use: cpu_isa(), capped by TS_ISA and by set_isa_cap. Throws
// std::invalid_argument with a one-line message (what the CPU supports, how to fix it)
// when TS_ISA names an unknown route or one this CPU cannot run.
Isa active_isa();

// Cap the route from inside the program (the tests run every route the machine can run);
// throws std::invalid_argument for a route the CPU cannot run.
void set_isa_cap(Isa cap);

}  // namespace ts
