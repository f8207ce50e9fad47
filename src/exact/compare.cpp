// compare.cpp: see compare.hpp.
#include "exact/compare.hpp"

#include <algorithm>
#include <cfloat>
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

double scaled_tolerance(double scale, double growth) {
  // growth * FLT_EPSILON * max(1, scale)
  return growth * double(FLT_EPSILON) * std::max(1.0, scale);
}

double max_abs(const float* v, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = std::fabs(double(v[i]));
    if (std::isnan(a)) return a;
    m = std::max(m, a);
  }
  return m;
}

}  // namespace ts
