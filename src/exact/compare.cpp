// compare.cpp: see compare.hpp.
#include "exact/compare.hpp"

#include <cmath>
#include <stdexcept>

namespace ts {

Tensor max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) throw std::invalid_argument("max_abs_diff: the two tensors differ in shape");
  // m = max_i |a_i - b_i|   (any shape) -> ()
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) {
    const float d = std::fabs(a.data()[i] - b.data()[i]);
    if (std::isnan(d) || d > m) m = d;
    if (std::isnan(m)) break;  // torch.max propagates NaN
  }
  Tensor out = Tensor::from_shape({});
  out() = m;
  return out;
}

}  // namespace ts
