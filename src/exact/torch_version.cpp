// torch_version.cpp: the PyTorch the exact path reproduces (see torch_version.hpp).
// TS_TORCH_V2_6 is defined for this file alone (CMakeLists.txt), so changing TS_TORCH
// recompiles one file, not the whole core.
#include "exact/torch_version.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ts {

namespace {
#if defined(TS_TORCH_V2_6) && TS_TORCH_V2_6
constexpr TorchVersion kConfigured = TorchVersion::V2_6;
#else
constexpr TorchVersion kConfigured = TorchVersion::V1_13;
#endif

// TS_TORCH in the environment, when set, overrides the configured version (one build can
// then be compared with either PyTorch); any other value than 1.13 or 2.6 stops the program.
TorchVersion from_environment() {
  const char* v = std::getenv("TS_TORCH");
  if (!v || !*v) return kConfigured;
  if (std::strcmp(v, "1.13") == 0) return TorchVersion::V1_13;
  if (std::strcmp(v, "2.6") == 0) return TorchVersion::V2_6;
  std::fprintf(stderr, "TS_TORCH=%s: the exact path reproduces PyTorch 1.13 or 2.6; set TS_TORCH=1.13 or TS_TORCH=2.6, or unset it\n", v);
  std::exit(2);
}

std::atomic<TorchVersion>& version() {
  static std::atomic<TorchVersion> v{from_environment()};
  return v;
}
}  // namespace

TorchVersion torch_version() { return version().load(std::memory_order_relaxed); }
void set_torch_version(TorchVersion v) { version().store(v, std::memory_order_relaxed); }

const char* torch_version_name(TorchVersion v) { return v == TorchVersion::V2_6 ? "2.6" : "1.13"; }

}  // namespace ts
