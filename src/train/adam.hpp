// train/adam.hpp: article 004's optimizer, Adam(0.001, beta_1=0.9, beta_2=0.98, epsilon=1e-9),
// with torch.optim.Adam's arithmetic (so the twin's loss curve can be matched step by step):
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// (Keras puts eps outside the bias correction; with eps = 1e-9 the two agree to ~1e-9.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exact/tensor.hpp"

namespace ts::train {

struct Adam {
  double lr = 0.001, beta1 = 0.9, beta2 = 0.98, eps = 1e-9;
  int64_t step = 0;             // t, steps taken
  std::vector<float> exp_avg;     // m (total), one per parameter
  std::vector<float> exp_avg_sq;  // v (total)
  // params (n) -= the update from grads (n); the moments are created on the first call
  void update(float* params, const float* grads, size_t n);
  // every parameter of a module -= its update from the same-named tensor of the gradient module
  // (named_parameters() of both): one step, the moments packed in that order (params.hpp)
  void update(const NamedTensors& params, const NamedTensors& grads);

 private:
  // t += 1 and the step's constants; the moments created for n values on the first step
  struct StepScalars {
    float step_size, bc2_sqrt, b1, b2, e;
  };
  StepScalars begin_step(size_t n);
  void update_range(const StepScalars& k, float* params, const float* grads, size_t offset, size_t n);
};

}  // namespace ts::train
