// train/adam.cpp: torch.optim.Adam's single-tensor update (torch 1.13, foreach off).
#include "train/adam.hpp"

#include <cmath>
#include <stdexcept>

#include "base/trace.hpp"

namespace ts::train {

Adam::StepScalars Adam::begin_step(size_t n) {
  trace_call("Adam.step");
  if (exp_avg.size() != n) {
    exp_avg.assign(n, 0.0f);
    exp_avg_sq.assign(n, 0.0f);
  }
  ++step;
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  return {static_cast<float>(lr / bc1), static_cast<float>(std::sqrt(bc2)), static_cast<float>(beta1),
          static_cast<float>(beta2), static_cast<float>(eps)};
}

// params[i] for i < n, with moments [offset, offset + n)
void Adam::update_range(const StepScalars& k, float* params, const float* grads, size_t offset, size_t n) {
  float* m = exp_avg.data() + offset;
  float* v = exp_avg_sq.data() + offset;
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    // exp_avg.mul_(b1).add_(g, alpha=1-b1); exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2)
    m[i] = m[i] * k.b1 + g * (1.0f - k.b1);
    v[i] = v[i] * k.b2 + g * g * (1.0f - k.b2);
    // denom = sqrt(v) / sqrt(bc2) + eps;  p -= step_size * m / denom
    const float denom = std::sqrt(v[i]) / k.bc2_sqrt + k.e;
    params[i] -= k.step_size * m[i] / denom;
  }
}

void Adam::update(float* params, const float* grads, size_t n) { update_range(begin_step(n), params, grads, 0, n); }

void Adam::update(const NamedTensors& params, const NamedTensors& grads) {
  size_t n = 0;
  if (params.size() != grads.size()) throw std::logic_error("Adam::update: the gradients are not the parameters'");
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].first != grads[i].first || params[i].second->size() != grads[i].second->size())
      throw std::logic_error("Adam::update: gradient " + grads[i].first + " is not parameter " + params[i].first + "'s");
    n += params[i].second->size();
  }
  const StepScalars k = begin_step(n);
  size_t offset = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    update_range(k, params[i].second->data(), grads[i].second->data(), offset, params[i].second->size());
    offset += params[i].second->size();
  }
}

}  // namespace ts::train
