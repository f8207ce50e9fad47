// mo_writer.hpp: a small GNU .mo writer for tests/test_data.cpp and tests/fuzz/fuzz_mo.cpp, so the
// reader meets files in both byte orders built on the spot (msgfmt writes the same layout:
// header, table of originals, table of translations, then the strings, each with its NUL; no
// hash table). An original with a context is "ctx\4msgid", one with a plural "msgid\0plural";
// a translation's plural forms are NUL-separated.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ts::test {

inline std::string mo_bytes(const std::vector<std::pair<std::string, std::string>>& entries, bool big_endian) {
  std::string out;
  auto word = [&](uint32_t w) {
    for (int k = 0; k < 4; ++k) {
      const int shift = big_endian ? 24 - 8 * k : 8 * k;
      out += char((w >> shift) & 0xff);
    }
  };
  const uint32_t n = uint32_t(entries.size());
  const uint32_t orig = 28, trans = orig + 8 * n;
  uint32_t at = trans + 8 * n;
  word(0x950412de);
  word(0);
  word(n);
  word(orig);
  word(trans);
  word(0);
  word(at);
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> o, t;
  for (const auto& [id, str] : entries) {
    o.emplace_back(uint32_t(id.size()), at + uint32_t(strings.size()));
    strings += id;
    strings += '\0';
  }
  for (const auto& [id, str] : entries) {
    t.emplace_back(uint32_t(str.size()), at + uint32_t(strings.size()));
    strings += str;
    strings += '\0';
  }
  for (const auto& [len, off] : o) { word(len); word(off); }
  for (const auto& [len, off] : t) { word(len); word(off); }
  return out + strings;
}

}  // namespace ts::test
