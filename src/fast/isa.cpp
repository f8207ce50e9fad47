// isa.cpp: the run-time choice of the SIMD route (see isa.hpp).
#include "fast/isa.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

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

const char* avx512_core_name(Avx512Core core) {
  return core == Avx512Core::DoublePumped ? "double-pumped" : "two-port";
}

CpuModel cpu_model() {
  CpuModel m;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return m;
  char v[13] = {};
  std::memcpy(v, &b, 4);
  std::memcpy(v + 4, &d, 4);
  std::memcpy(v + 8, &c, 4);
  m.vendor = v;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return m;
  const int base_family = int((a >> 8) & 0xf), base_model = int((a >> 4) & 0xf);
  m.family = base_family == 0xf ? base_family + int((a >> 20) & 0xff) : base_family;
  m.model = base_family == 0x6 || base_family == 0xf ? base_model + (int((a >> 16) & 0xf) << 4) : base_model;
#endif
  return m;
}

// AMD's Zen 4 (family 0x19) runs a 512-bit FMA as two 256-bit halves, and so do the mobile Zen 5
// parts (family 0x1a, models 0x20-0x2f Strix Point, 0x60-0x7f Krackan Point: from AMD's model
// numbers, not run here). Zen 5's server and desktop parts (family 0x1a, e.g. the EPYC 9005
// this was written on, model 0x02) have full-width 512-bit FMA pipes: the two-port blocking,
// measured there (route_impl.hpp). Intel's server cores (family 6: Skylake-X 0x55, Ice
// Lake server 0x6a/0x6c, Sapphire Rapids 0x8f, Emerald Rapids 0xcf) have two 512-bit FMA
// pipes. Any other vendor or family gets the two-port blocking, the default before kinds.
Avx512Core cpu_avx512_core() {
  static const Avx512Core kind = [] {
    const CpuModel m = cpu_model();
    if (m.vendor != "AuthenticAMD") return Avx512Core::TwoPort;
    const bool zen5_mobile = m.family == 0x1a && ((m.model >= 0x20 && m.model <= 0x2f) || (m.model >= 0x60 && m.model <= 0x7f));
    return m.family == 0x19 || zen5_mobile ? Avx512Core::DoublePumped : Avx512Core::TwoPort;
  }();
  return kind;
}

namespace {
Avx512Core env_core() {
  const char* v = std::getenv("TS_AVX512_CORE");
  if (!v || !*v) return cpu_avx512_core();
  const std::string s = v;
  if (s == "two-port") return Avx512Core::TwoPort;
  if (s == "double-pumped") return Avx512Core::DoublePumped;
  throw std::invalid_argument("TS_AVX512_CORE='" + s + "' is not a kind of core: use two-port or double-pumped (unset it to " +
                              "use CPUID's: " + avx512_core_name(cpu_avx512_core()) + ")");
}
std::atomic<int> g_core{-1};  // set_avx512_core's choice; -1: none
}  // namespace

Avx512Core active_avx512_core() {
  const int c = g_core.load(std::memory_order_relaxed);
  if (c >= 0) return Avx512Core(c);
  static const Avx512Core from_env = env_core();  // a bad value throws here, at every call
  return from_env;
}

void set_avx512_core(Avx512Core core) { g_core.store(int(core), std::memory_order_relaxed); }
void clear_avx512_core() { g_core.store(-1, std::memory_order_relaxed); }

}  // namespace ts
