// train/adam_probe.cpp: Adam's settings read back from its update (see adam_probe.hpp).
#include "train/adam_probe.hpp"

#include <algorithm>
#include <cmath>

namespace ts::train {

AdamApplied measure_adam(const Adam& adam) {
  Adam probe = adam;  // the same settings and code, fresh moments: what a first step applies
  probe.step = 0;
  probe.exp_avg.clear();
  probe.exp_avg_sq.clear();
  // parameter 0: g = 1 (moves by lr at step 1); 1: g = 1e-12 (eps dominates the denominator);
  // 2: g = 0.5 then 1 (the second step's check)
  float p[3] = {0.0f, 0.0f, 0.0f};
  const float g1[3] = {1.0f, 1e-12f, 0.5f}, g2[3] = {1.0f, 1e-12f, 1.0f};
  probe.update(p, g1, 3);
  AdamApplied a;
  // m = (1 - b1) g, v = (1 - b2) g^2 from zero moments
  a.beta1 = 1.0 - double(probe.exp_avg[0]) / double(g1[0]);
  a.beta2 = 1.0 - double(probe.exp_avg_sq[0]) / (double(g1[0]) * double(g1[0]));
  const auto denom_of = [&](double v, double t, double eps) {
    return std::sqrt(v) / std::sqrt(1.0 - std::pow(a.beta2, t)) + eps;
  };
  const auto step_of = [&](double t) { return 1.0 - std::pow(a.beta1, t); };
  // step 1: -p = lr / (1 - b1) * m / (sqrt(v) / sqrt(1 - b2) + eps), eps neglected on g = 1 (1e-9 relative)
  a.lr = -double(p[0]) * step_of(1) * denom_of(probe.exp_avg_sq[0], 1, 0.0) / double(probe.exp_avg[0]);
  // eps from the tiny gradient: denom = lr / (1 - b1) * m / -p, eps = denom - sqrt(v) / sqrt(1 - b2)
  a.eps = a.lr / step_of(1) * double(probe.exp_avg[1]) / -double(p[1]) - denom_of(probe.exp_avg_sq[1], 1, 0.0);
  // step 2 against the formula with the measured values
  float before[3] = {p[0], p[1], p[2]};
  double m[3], v[3];
  for (int i = 0; i < 3; ++i)
    m[i] = a.beta1 * double(probe.exp_avg[size_t(i)]) + (1.0 - a.beta1) * double(g2[i]),
    v[i] = a.beta2 * double(probe.exp_avg_sq[size_t(i)]) + (1.0 - a.beta2) * double(g2[i]) * double(g2[i]);
  probe.update(p, g2, 3);
  for (int i : {0, 2}) {
    const double want = a.lr / step_of(2) * m[i] / denom_of(v[i], 2, a.eps);
    const double got = double(before[i]) - double(p[i]);
    a.step2_gap = std::max(a.step2_gap, std::fabs(got - want) / std::max(std::fabs(want), 1e-30));
  }
  a.formula = std::isfinite(a.step2_gap) && a.step2_gap <= 1e-3;
  return a;
}

}  // namespace ts::train
