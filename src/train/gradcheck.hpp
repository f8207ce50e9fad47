// train/gradcheck.hpp: the whole-model gradient check of ch11's --check-grads (and ch12's): every
// parameter's hand-written gradient against central finite differences, on a tiny model
// (introduced in ch11). ch11 checks ch10's float modules, ch12 its GPT of the same modules
// (train/gpt.hpp, with its own tighter tolerance: no ReLU kink there).
//   fd_i = (L(p + h e_i) - L(p - h e_i)) / (2h),   dropout off
// A tensor passes when max_i |grad_i - fd_i| <= tolerance * max(max_i |fd_i|, floor).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "train/trainer.hpp"

namespace ts::train {

constexpr double kFdStep = 1e-5, kFdTolerance = 1e-6;
// ch11's model is ch10's float modules (llm.c's test_gpt2.c checks in float as well): a larger
// step, so the loss's float rounding (~1e-7 of it) stays small beside the change, and a float
// tolerance: 5 % of max(max |fd|, 1e-2). A wrong backward is off by about its gradient's size;
// float rounding and a ReLU kink crossed by the step measured below 2 % on the tiny model.
constexpr double kFdStepFloat = 1e-3, kFdToleranceFloat = 5e-2, kFdFloorFloat = 1e-2;

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
// In float, fd_i divides by the step the stored values really took (P[i] + h - (P[i] - h), each
// rounded to float); in double by 2h. A tensor passes when maxdiff <= tolerance * max(max |fd|, floor).
// The first `firsts` values of each tensor are kept for the table.
template <class Real, class Loss>
std::vector<GradCheckRow> fd_rows(const std::vector<ParamSpec>& specs, Real* P, const std::vector<double>& ours,
                                  const Loss& loss, size_t firsts, double step = kFdStep,
                                  double tolerance = kFdTolerance, double floor = 1e-3) {
  std::vector<GradCheckRow> rows;
  for (const ParamSpec& s : specs) {
    GradCheckRow r;
    r.name = s.name;
    for (size_t i = s.offset; i < s.offset + s.numel; ++i) {
      // fd_i = (L(p + h) - L(p - h)) / 2h
      const Real keep = P[i];
      P[i] = static_cast<Real>(keep + step);
      const double up = loss(), hi = double(P[i]);
      P[i] = static_cast<Real>(keep - step);
      const double down = loss(), lo = double(P[i]);
      P[i] = keep;
      const double width = sizeof(Real) < sizeof(double) ? hi - lo : 2 * step;
      const double fd = (up - down) / width, g = ours[i];
      if (r.ours.size() < firsts) r.ours.push_back(g), r.fd.push_back(fd);
      r.maxdiff = std::max(r.maxdiff, std::fabs(g - fd));
      r.maxgrad = std::max(r.maxgrad, std::fabs(fd));
    }
    r.ok = r.maxdiff <= tolerance * std::max(r.maxgrad, floor);
    rows.push_back(r);
  }
  return rows;
}
// One line per tensor: OK / NOT OK, its name, the max difference, the first values ours/fd.
std::string grad_table(const std::vector<GradCheckRow>& rows);

}  // namespace ts::train
