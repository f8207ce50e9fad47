// course/counts.hpp: counts as the chapters print them: thousands separators, and the
// parameters-per-part table ch10, ch11, ch12 and ch13 show beside their twins' line
// {part: sum(p.numel() for p in module.parameters())} (introduced in ch09, the table in ch10).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ts {

// 32381952 -> "32,381,952" (Python's "{:,}").
std::string thousands(uint64_t n);

// Parameters summed by part, in state_dict order: add() each parameter with the part its name
// belongs to; consecutive parameters of one part make one row.
struct PartCounts {
  std::vector<std::pair<std::string, uint64_t>> parts;  // part -> numel, in parameters() order
  uint64_t total = 0;                                   // every parameter added

  void add(const std::string& part, uint64_t numel);
  // One line a part, then `total`: the name left-aligned in `name_width` columns, the count
  // (with thousands separators) right-aligned in `count_width`; `notes` are (name, text) rows
  // printed, text right-aligned, just before the total (GPT-2's tied "lm_head  = wte").
  std::string table(int name_width, int count_width,
                    const std::vector<std::pair<std::string, std::string>>& notes = {}) const;
};

// "encoder.layers.0.self_attn..." -> "encoder": the state_dict prefix before the first '.'.
std::string first_field(const std::string& name);

}  // namespace ts
