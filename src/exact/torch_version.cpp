// torch_version.cpp: the PyTorch the exact path reproduces (see torch_version.hpp).
// TS_TORCH_V2_6 is defined for this file alone (CMakeLists.txt), so changing TS_TORCH
// recompiles one file, not the whole core.
#include "exact/torch_version.hpp"

#include <atomic>

namespace ts {

namespace {
#if defined(TS_TORCH_V2_6) && TS_TORCH_V2_6
constexpr TorchVersion kConfigured = TorchVersion::V2_6;
#else
constexpr TorchVersion kConfigured = TorchVersion::V1_13;
#endif
std::atomic<TorchVersion> g_version{kConfigured};
}  // namespace

TorchVersion torch_version() { return g_version.load(std::memory_order_relaxed); }
void set_torch_version(TorchVersion v) { g_version.store(v, std::memory_order_relaxed); }

const char* torch_version_name(TorchVersion v) { return v == TorchVersion::V2_6 ? "2.6" : "1.13"; }

}  // namespace ts
