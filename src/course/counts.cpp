// course/counts.cpp: see counts.hpp.
#include "course/counts.hpp"

#include <fmt/format.h>

namespace ts {

std::string thousands(uint64_t n) {
  const std::string s = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

void PartCounts::add(const std::string& part, uint64_t numel) {
  if (parts.empty() || parts.back().first != part) parts.emplace_back(part, 0);
  parts.back().second += numel;
  total += numel;
}

std::string PartCounts::table(int name_width, int count_width,
                              const std::vector<std::pair<std::string, std::string>>& notes) const {
  std::string s;
  for (const auto& [part, n] : parts) s += fmt::format("{:<{}} {:>{}}\n", part, name_width, thousands(n), count_width);
  for (const auto& [name, text] : notes) s += fmt::format("{:<{}} {:>{}}\n", name, name_width, text, count_width);
  return s + fmt::format("{:<{}} {:>{}}", "total", name_width, thousands(total), count_width);
}

std::string first_field(const std::string& name) { return name.substr(0, name.find('.')); }

}  // namespace ts
