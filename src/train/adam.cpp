// train/adam.cpp: torch.optim.Adam's single-tensor update (torch 1.13, foreach off).
#include "train/adam.hpp"

#include <cmath>

#include "base/trace.hpp"

namespace ts::train {

void Adam::update(float* params, const float* grads, size_t n) {
  trace_call("Adam.step");
  if (exp_avg.size() != n) {
    exp_avg.assign(n, 0.0f);
    exp_avg_sq.assign(n, 0.0f);
  }
  ++step;
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const float step_size = static_cast<float>(lr / bc1), bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2), e = static_cast<float>(eps);
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    // exp_avg.mul_(b1).add_(g, alpha=1-b1); exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2)
    exp_avg[i] = exp_avg[i] * b1 + g * (1.0f - b1);
    exp_avg_sq[i] = exp_avg_sq[i] * b2 + g * g * (1.0f - b2);
    // denom = sqrt(v) / sqrt(bc2) + eps;  p -= step_size * m / denom
    const float denom = std::sqrt(exp_avg_sq[i]) / bc2_sqrt + e;
    params[i] -= step_size * exp_avg[i] / denom;
  }
}

}  // namespace ts::train
