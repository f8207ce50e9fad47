// test_loop_trace.cpp: src/course/loop_trace.hpp's step checks, on made-up losses and gradients
// (no model): each NaN or inf must be named where it was measured (the forward at step 1, the
// backward under a finite loss, only then the learning rate), and the gradients left at exactly 0
// must be the tensors named. ch11 and ch12 call these after every step; no learner edit reaches
// the NaN-gradient case repeatably (the mutants that did read uninitialised memory), so it is
// pinned here.
#include "catch_compat.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "course/loop_trace.hpp"

namespace {

// three tensors: a (2 values), b (3), c (1), laid out in that order
std::vector<ts::train::ParamSpec> specs() {
  return {{"a", {2}, 0, 2}, {"b", {3}, 2, 3}, {"c", {1}, 5, 1}};
}

// the message check_step_finite throws (its type must be E), or "" when it returns
template <typename E>
std::string thrown(double loss, const std::vector<float>& g, int64_t step) {
  try {
    ts::check_step_finite(loss, g, specs(), step, "FORWARD_SITE", "BACKWARD_SITE");
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("check_step_finite names where a NaN or inf was measured", "[loop_trace]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> ok{1, 2, 3, 4, 5, 6};

  // finite loss and gradients: returns
  REQUIRE_NOTHROW(ts::check_step_finite(0.5, ok, specs(), 1, "F", "B"));

  // a NaN loss at step 1: the forward, never the learning rate
  const std::string first = thrown<ts::CheckFailure>(std::nan(""), ok, 1);
  REQUIRE(first.find("FORWARD_SITE") != std::string::npos);
  REQUIRE(first.find("--lr") == std::string::npos);

  // a finite loss with NaN/inf gradients in b and c: the backward, counted, the first tensor named
  std::vector<float> g = ok;
  g[3] = nan, g[4] = inf, g[5] = -inf;
  const std::string back = thrown<ts::CheckFailure>(2.0, g, 7);
  REQUIRE(back.find("at step 7") != std::string::npos);
  REQUIRE(back.find("left 3 of the 6 gradients NaN or inf, in 2 of the 3 parameter tensors (the first: b)") !=
          std::string::npos);
  REQUIRE(back.find("BACKWARD_SITE") != std::string::npos);
  REQUIRE(back.find("--lr") == std::string::npos);

  // the loss goes NaN after steps whose gradients were finite: the updates, so --lr (bad input)
  const std::string later = thrown<ts::UsageError>(std::nan(""), ok, 3);
  REQUIRE(later.find("lower --lr") != std::string::npos);
  REQUIRE(thrown<ts::UsageError>(inf, ok, 2).find("--lr") != std::string::npos);
}

TEST_CASE("zero_gradient_tensors names exactly the tensors all 0", "[loop_trace]") {
  // a all 0, b with one nonzero value, c all 0 (-0.0 is 0 too)
  const std::vector<float> g{0, 0, 0, 1e-30f, 0, -0.0f};
  REQUIRE(ts::zero_gradient_tensors(g, specs()) == std::vector<std::string>{"a", "c"});
  REQUIRE(ts::zero_gradient_tensors({1, 1, 1, 1, 1, 1}, specs()).empty());
}
