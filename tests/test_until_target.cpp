// test_until_target.cpp: src/train/until_target.hpp -- when train_until scores, stops and says
// the target was reached (a fake score that rises by 0.1 per step: no model needed).
#include "catch_compat.hpp"

#include <vector>

#include "train/until_target.hpp"

using namespace ts::train;

namespace {
// score() after s steps is s / 10
struct Fake {
  int64_t steps = 0;
  std::vector<int64_t> scored_at;  // the step count at each score() call
  TargetRun run(const TargetPlan& p) {
    return train_until(
        p, [&](int64_t s) { ++steps; return 10.0 - double(s); },  // the loss: 10 at step 0
        [&] {
          scored_at.push_back(steps);
          return double(steps) / 10.0;
        });
  }
};
}  // namespace

TEST_CASE("train_until stops at the first checked step that reaches the target", "[until_target]") {
  Fake f;
  const TargetRun r = f.run(TargetPlan{4, 100, 0.95});  // 0.4, 0.8, 1.2: the third check
  CHECK(r.hit());
  CHECK(r.step_hit == 12);
  CHECK(r.steps == 12);
  CHECK(r.held_out == Approx(1.2));
  CHECK(f.scored_at == std::vector<int64_t>{4, 8, 12});
  CHECK(r.seconds_hit >= 0);
  CHECK(r.first_loss == 10.0);  // step 0's, not a later step's
}

TEST_CASE("train_until checks the last step when the cap falls between two checks", "[until_target]") {
  Fake f;
  const TargetRun r = f.run(TargetPlan{4, 10, 0.95});  // checks at 4, 8; the cap at 10 scores 1.0
  CHECK(r.steps == 10);
  CHECK(r.step_hit == 10);
  CHECK(r.held_out == Approx(1.0));
  CHECK(f.scored_at == std::vector<int64_t>{4, 8, 10});

  Fake g;
  const TargetRun miss = g.run(TargetPlan{4, 6, 0.95});  // 0.4 at 4, 0.6 at the cap: missed
  CHECK_FALSE(miss.hit());
  CHECK(miss.steps == 6);
  CHECK(miss.held_out == Approx(0.6));
}

TEST_CASE("train_until without stop trains to the cap and stops checking once reached", "[until_target]") {
  Fake f;
  const TargetRun r = f.run(TargetPlan{5, 30, 0.95, /*stop=*/false});  // 0.5, 1.0 (reached), then no checks
  CHECK(r.steps == 30);
  CHECK(r.step_hit == 10);
  CHECK(f.scored_at == std::vector<int64_t>{5, 10});
}
