// train/gradcheck.hpp: the whole-model gradient check of ch11's --check-grads: every
// parameter's hand-written gradient against central finite differences, in double
// precision, on a tiny model (introduced in ch11).
//   fd_i = (L(p + h e_i) - L(p - h e_i)) / (2h),   h = kFdStep, dropout off
// A tensor passes when max_i |grad_i - fd_i| <= kFdTolerance * max(max_i |fd_i|, 1e-3).
#pragma once

#include <string>
#include <vector>

#include "train/model.hpp"

namespace ts::train {

constexpr double kFdStep = 1e-5, kFdTolerance = 1e-6;

struct GradCheckRow {
  std::string name;
  std::vector<double> ours, fd;  // the first few values, side by side
  double maxdiff = 0, maxgrad = 0;
  bool ok = false;
};

// The tiny model: 1+1 layers, d_model 8, 2 heads, d_ff 16, on four numbers of different lengths.
ModelConfig tiny_config();
std::vector<GradCheckRow> check_grads_fd(const ModelConfig& cfg, uint64_t seed, const std::vector<int64_t>& numbers);
// One line per tensor: OK / NOT OK, its name, the max difference, the first values ours/fd.
std::string grad_table(const std::vector<GradCheckRow>& rows);

}  // namespace ts::train
