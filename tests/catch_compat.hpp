// catch_compat.hpp: Catch2 2 (Debian 12, Ubuntu 22.04: one header) and Catch2 3 (Debian 13,
// Ubuntu 24.04+: split headers, a compiled library) behind one include. CMake passes the major
// version found at configure time (TS_CATCH2_MAJOR). The tests use v2's spellings; for v3 this
// header brings back those that moved: Approx (now Catch::Approx), Catch::Contains (now
// Catch::Matchers::ContainsSubstring) and Catch::StartsWith (now in Catch::Matchers).
// test_main.cpp defines CATCH_CONFIG_RUNNER first (v2; v3 needs nothing).
#pragma once
#if TS_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>
#include <string>
using Catch::Approx;
namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& s) { return Matchers::ContainsSubstring(s); }
using Matchers::StartsWith;
}  // namespace Catch
#else
#include <catch2/catch.hpp>
#endif
