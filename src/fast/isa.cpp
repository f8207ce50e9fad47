// isa.cpp: the run-time choice of the SIMD route (see isa.hpp).
#include "fast/isa.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return "avx512";
    case Isa::Avx2: return "avx2";
    case Isa::Neon: return "neon";
    case Isa::Scalar: break;
  }
  return "scalar";
}

Isa cpu_isa() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const Isa best = [] {
    __builtin_cpu_init();  // libgcc also checks XCR0: the OS saves the ymm / zmm registers
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      return Isa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
    return Isa::Scalar;
  }();
  return best;
#elif defined(__aarch64__)
  return Isa::Neon;  // Advanced SIMD is part of every AArch64 CPU
#else
  return Isa::Scalar;
#endif
}

namespace {
// this build's routes, narrowest first
const std::vector<Isa>& ladder() {
#if defined(__x86_64__)
  static const std::vector<Isa> routes{Isa::Scalar, Isa::Avx2, Isa::Avx512};
#elif defined(__aarch64__)
  static const std::vector<Isa> routes{Isa::Scalar, Isa::Neon};
#else
  static const std::vector<Isa> routes{Isa::Scalar};
#endif
  return routes;
}

// position on the ladder; -1 for another architecture's route
int rank(Isa isa) {
  const auto& l = ladder();
  for (size_t i = 0; i < l.size(); ++i)
    if (l[i] == isa) return int(i);
  return -1;
}

std::string supported_list() {
  std::string s;
  for (int i = rank(cpu_isa()); i >= 0; --i) s += std::string(s.empty() ? "" : ", ") + isa_name(ladder()[size_t(i)]);
  return s;
}

void check_runs(Isa isa, const std::string& what) {
  if (!isa_runs(isa))
    throw std::invalid_argument(what + ": this CPU cannot run " + isa_name(isa) + "; it supports " + supported_list() +
                                " (unset TS_ISA to use the widest)");
}

// TS_ISA, read once: the cap it sets (cpu_isa() when unset or empty)
Isa env_cap() {
  const char* v = std::getenv("TS_ISA");
  if (!v || !*v) return cpu_isa();
  const std::string s = v;
  Isa isa;
  if (s == "avx512")
    isa = Isa::Avx512;
  else if (s == "avx2")
    isa = Isa::Avx2;
  else if (s == "neon")
    isa = Isa::Neon;
  else if (s == "scalar")
    isa = Isa::Scalar;
  else
    throw IsaEnvError("TS_ISA='" + s + "' is not a route: use avx512, avx2, neon or scalar (this CPU supports " +
                          supported_list() + ")",
                      s, supported_list(), true);
  if (!isa_runs(isa))
    throw IsaEnvError("TS_ISA=" + s + ": this CPU cannot run " + isa_name(isa) + "; it supports " + supported_list() +
                          " (unset TS_ISA to use the widest)",
                      s, supported_list(), false);
  return isa;
}

std::atomic<int> g_cap{-1};  // set_isa_cap's cap; -1: none
}  // namespace

Isa active_isa() {
  static const Isa from_env = env_cap();  // a bad TS_ISA throws here, at every call
  const int cap = g_cap.load(std::memory_order_relaxed);
  return cap >= 0 && rank(Isa(cap)) < rank(from_env) ? Isa(cap) : from_env;
}

bool isa_runs(Isa isa) {
  const int r = rank(isa);
  return r >= 0 && r <= rank(cpu_isa());
}

void set_isa_cap(Isa cap) {
  check_runs(cap, "set_isa_cap");
  g_cap.store(int(cap), std::memory_order_relaxed);
}

}  // namespace ts
