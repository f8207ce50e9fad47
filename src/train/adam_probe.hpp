// train/adam_probe.hpp: Adam's settings as its update applies them (issue 41: a sentence states what
// the code used, not the config). A copy of the optimiser, with fresh moments, takes two steps on
// three probe parameters; the decays are read back from m and v, lr and eps from the moves, and the
// second step is checked against torch.optim.Adam's formula with the values measured:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
#pragma once

#include "train/adam.hpp"

namespace ts::train {

struct AdamApplied {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0;  // measured from the first step
  double step2_gap = 0;  // max |move - the formula's move| / |the formula's move| at the second step
  bool formula = false;  // the second step follows Adam's formula with the measured values (gap <= 1e-3)
};
AdamApplied measure_adam(const Adam& adam);

}  // namespace ts::train
