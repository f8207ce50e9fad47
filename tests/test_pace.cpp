// test_pace.cpp: src/course/pace.hpp -- the estimate behind ch09's > 10 s note, from given step
// times (no clock read): it must add up as its comment says, and with ch09's step work it must
// foresee a long decoding loop at large sizes (the old estimate, a straight line through the first
// two steps, went negative there: the first step's one-time memory projection made the second
// step look cheaper, and no note printed) and a short one at the defaults.
#include "catch_compat.hpp"

#include <cstdint>
#include <numeric>
#include <vector>

#include "course/pace.hpp"
#include "transformer/kv_cache.hpp"

namespace {

// ch09's steps: the multiply-adds of step t with both caches, N layers (as chapters/ch09_decoder.cpp)
std::vector<double> decoding_work(int64_t N, int64_t T, int64_t S, int64_t C, int64_t F) {
  std::vector<double> work;
  for (int64_t t = 0; t < T; ++t)
    work.push_back(double(N) *
                   double(ts::decoder_step_macs(ts::CacheKind::Inputs, 1, t + 1, S, C, F, t > 0).total() +
                          ts::decoder_step_macs(ts::CacheKind::KeysValues, 1, t + 1, S, C, F, t > 0).total()));
  return work;
}

}  // namespace

TEST_CASE("pace: the timed steps as measured, the rest at the last timed step's pace", "[pace]") {
  // 5 s + 1 s timed; the last timed step did 2 units in 1 s, so 3 + 4 more units take 3.5 s
  CHECK(ts::loop_seconds({10, 2, 3, 4}, {5, 1}) == Approx(9.5));
  CHECK(ts::loop_seconds({10, 2, 3, 4}, {5}) == Approx(5 + 0.5 * 9));
  CHECK(ts::loop_seconds({10}, {3}) == Approx(3));        // one step, timed: nothing more to come
  CHECK(ts::loop_seconds({0, 0, 7}, {1, 2}) == Approx(3));  // no work timed: no pace to read
  CHECK(ts::loop_seconds({1, 2}, {}) == 0);
}

TEST_CASE("pace: ch09's decoding loop at large sizes is foreseen as long, at the defaults as short", "[pace]") {
  // A pace of 1 ns of processor time per multiply-add from the second step on (a product of one row reads
  // each weight once: memory-bound, ~1 G multiply-adds/s); the first step also projects the memory.
  const auto estimate = [](const std::vector<double>& work) {
    return ts::loop_seconds(work, {work[0] * 0.5e-9, work[1] * 1e-9});
  };
  const std::vector<double> big = decoding_work(12, 64, 64, 512, 8192);  // the largest sizes --help allows
  const double total = std::accumulate(big.begin() + 1, big.end(), 0.0);
  CHECK(big[0] > big[1]);  // the one-time projection of the memory's keys and values
  CHECK(estimate(big) == Approx(big[0] * 0.5e-9 + total * 1e-9));
  CHECK(estimate(big) > 10);  // the note prints
  // the straight line through the first two steps that the note used before: below 0 here
  const double n = double(big.size()), grow = big[1] - big[0];
  CHECK(n * big[0] + grow * n * (n - 1) / 2 < 0);
  // the defaults (N 6, T 5, S 6, C 256, F 1024): far below 10 s at the same pace
  CHECK(estimate(decoding_work(6, 5, 6, 256, 1024)) < 0.1);
  // more target tokens, more work still to come
  CHECK(estimate(decoding_work(12, 32, 64, 512, 8192)) < estimate(big));
}

TEST_CASE("pace: processor time advances while this process computes", "[pace]") {
  const double a = ts::cpu_seconds();
  volatile double x = 0;
  bool advanced = false;
  for (int i = 0; i < 1000000000 && !advanced; ++i) {
    x = x + 1e-9 * i;
    if (i % 100000 == 0) advanced = ts::cpu_seconds() > a;
  }
  CHECK(a > 0);  // this process has run already
  CHECK(advanced);
}
