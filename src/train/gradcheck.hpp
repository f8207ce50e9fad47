// train/gradcheck.hpp: the whole-model gradient check of ch11's --check-grads: every
// parameter's hand-written gradient against central finite differences, in double
// precision, on a tiny model (introduced in ch11).
//   fd_i = (L(p + h e_i) - L(p - h e_i)) / (2h),   h = kFdStep, dropout off
// A tensor passes when max_i |grad_i - fd_i| <= kFdTolerance * max(max_i |fd_i|, 1e-3).
#pragma once

#include <algorithm>
#include <cmath>
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
// Every tensor of specs (ch11's model, ch12's GPT): each parameter P[i] moved by +-h, the loss()
// of each, P[i] restored; fd_i against ours[i], the hand-written backward's gradient (P's layout).
// The first `firsts` values of each tensor are kept for the table.
template <class Loss>
std::vector<GradCheckRow> fd_rows(const std::vector<ParamSpec>& specs, double* P, const std::vector<double>& ours,
                                  const Loss& loss, size_t firsts) {
  std::vector<GradCheckRow> rows;
  for (const ParamSpec& s : specs) {
    GradCheckRow r;
    r.name = s.name;
    for (size_t i = s.offset; i < s.offset + s.numel; ++i) {
      // fd_i = (L(p + h) - L(p - h)) / 2h
      const double keep = P[i];
      P[i] = keep + kFdStep;
      const double up = loss();
      P[i] = keep - kFdStep;
      const double down = loss();
      P[i] = keep;
      const double fd = (up - down) / (2 * kFdStep), g = ours[i];
      if (r.ours.size() < firsts) r.ours.push_back(g), r.fd.push_back(fd);
      r.maxdiff = std::max(r.maxdiff, std::fabs(g - fd));
      r.maxgrad = std::max(r.maxgrad, std::fabs(fd));
    }
    r.ok = r.maxdiff <= kFdTolerance * std::max(r.maxgrad, 1e-3);
    rows.push_back(r);
  }
  return rows;
}
// One line per tensor: OK / NOT OK, its name, the max difference, the first values ours/fd.
std::string grad_table(const std::vector<GradCheckRow>& rows);

}  // namespace ts::train
