// Tests for src/exact/compare.hpp: max_abs_diff is (a - b).abs().max() as a 0-d tensor.
#include "catch_compat.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "exact/compare.hpp"
#include "exact/print.hpp"

using namespace ts;

TEST_CASE("max_abs_diff: the largest |a - b|, printed like torch's 0-d max", "[compare]") {
  Tensor a = {{1.0f, -2.0f, 3.0f}, {0.5f, 0.25f, -1.0f}};
  Tensor b = {{1.0f, -2.5f, 3.0f}, {0.5f, 0.25f, 1.0f}};
  const Tensor d = max_abs_diff(a, b);
  CHECK(d.dimension() == 0);
  CHECK(d() == 2.0f);
  CHECK(str(d, {"MaxBackward1"}) == "tensor(2., grad_fn=<MaxBackward1>)");
  // the difference is rounded to float32 first: 1 + 2^-23 and 1 differ by exactly one ulp
  Tensor one = {1.0f}, next = {std::nextafter(1.0f, 2.0f)};
  CHECK(max_abs_diff(one, next)() == std::ldexp(1.0f, -23));
  CHECK(str(max_abs_diff(one, next)) == "tensor(1.1921e-07)");
  CHECK(max_abs_diff(a, a)() == 0.0f);
}

TEST_CASE("max_abs_diff: NaN wins and shapes must agree", "[compare]") {
  Tensor a = {0.0f, 1.0f, 2.0f};
  Tensor b = {0.0f, std::numeric_limits<float>::quiet_NaN(), 5.0f};
  CHECK(std::isnan(max_abs_diff(a, b)()));
  Tensor c = {0.0f, 1.0f};
  CHECK_THROWS_AS(max_abs_diff(a, c), std::invalid_argument);
}
