// test_stats.cpp: var / std / mean along the last dim against the live PyTorch 1.13
// (tests/twins/stats_reference.py writes inputs and torch's outputs as raw float32).
//
// Every case must match bit for bit (NaN matches NaN) and keep the last dim as 1.
#include "catch_compat.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exact/stats.hpp"
#include "reference_run.hpp"

namespace {

namespace fs = std::filesystem;

struct StatCase {
  std::string name, op;
  int64_t correction = 0;
  ts::Shape shape;
  std::vector<float> x, y;
};

StatCase read_case(std::istringstream& ss, const fs::path& dir) {
  StatCase c;
  ss >> c.name >> c.op >> c.correction;
  size_t d;
  while (ss >> d) c.shape.push_back(d);
  c.x = ts_test::read_f32(dir / (c.name + ".x.f32"));
  c.y = ts_test::read_f32(dir / fmt::format("{}.{}.{}.f32", c.name, c.op, c.correction));
  return c;
}

// torch's cases: the twin runs once per test binary, its temporary folder goes once they are read.
const std::vector<StatCase>& stats_cases() {
  static const std::vector<StatCase> cases =
      ts_test::ReferenceRun("stats_reference.py").manifest_cases<StatCase>(read_case);
  return cases;
}

ts::Tensor to_tensor(const std::vector<float>& v, const ts::Shape& shape) {
  ts::Tensor t = ts::Tensor::from_shape(shape);
  REQUIRE(t.size() == v.size());
  std::copy(v.begin(), v.end(), t.begin());
  return t;
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST_CASE("var / std / mean along the last dim match torch 1.13 bit for bit", "[stats]") {
  REQUIRE(stats_cases().size() >= 60);
  size_t bad_cases = 0;
  std::string report;
  for (const StatCase& c : stats_cases()) {
    const ts::Tensor x = to_tensor(c.x, c.shape);
    ts::Tensor y;
    if (c.op == "var") y = ts::var_lastdim(x, c.correction);
    else if (c.op == "std") y = ts::std_lastdim(x, c.correction);
    else if (c.op == "mean") y = ts::mean_lastdim_keepdim(x);
    else FAIL("unknown op " << c.op);
    ts::Shape want = c.shape;
    want.back() = 1;
    if (ts::shape_of(y) != want) {
      ++bad_cases;
      report += fmt::format("NOT OK {} {} {}: wrong shape\n", c.name, c.op, c.correction);
      continue;
    }
    REQUIRE(y.size() == c.y.size());
    size_t mismatches = 0, first = 0;
    for (size_t i = 0; i < c.y.size(); ++i)
      if (!same_bits(y.data()[i], c.y[i]) && mismatches++ == 0) first = i;
    if (mismatches != 0) {
      ++bad_cases;
      report += fmt::format("NOT OK {} {}(correction={}): {}/{} differ; first at {}: ours {:.9g} torch {:.9g}\n",
                            c.name, c.op, c.correction, mismatches, c.y.size(), first, y.data()[first], c.y[first]);
    }
  }
  INFO(report);
  CHECK(bad_cases == 0);
}

TEST_CASE("the one-row and many-row algorithms really differ (the test can fail)", "[stats]") {
  // torch runs Welford per row when the result has several values and a two-pass sum
  // when it has one; on shifted data they round differently. Feeding the 200 rows one
  // at a time (rows = 1, the two-pass path) must then disagree with torch's Welford result.
  const StatCase* c = nullptr;
  for (const StatCase& k : stats_cases())
    if (k.name == "shifted_200x37" && k.op == "var" && k.correction == 1) c = &k;
  REQUIRE(c != nullptr);
  const int64_t rows = 200, n = 37;
  size_t differ = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float y = 0;
    ts::var_rows(c->x.data() + r * n, &y, 1, n, 1);
    if (!same_bits(y, c->y[static_cast<size_t>(r)])) ++differ;
  }
  CHECK(differ > 0);
}

TEST_CASE("stats wrappers: shapes and simple values", "[stats]") {
  ts::Tensor x = ts::zeros({2, 4});
  for (size_t i = 0; i < 4; ++i) {
    x(0, i) = static_cast<float>(i + 1);        // 1 2 3 4
    x(1, i) = static_cast<float>(2 * (i + 1));  // 2 4 6 8
  }
  const ts::Tensor v = ts::var_lastdim(x);
  CHECK(ts::shape_of(v) == ts::Shape{2, 1});
  CHECK(v(0, 0) == Approx(5.0 / 3.0));
  CHECK(ts::var_lastdim(x, 0)(0, 0) == Approx(1.25));
  CHECK(ts::std_lastdim(x)(1, 0) == Approx(std::sqrt(20.0 / 3.0)));
  CHECK(ts::mean_lastdim_keepdim(x)(1, 0) == 5.0f);
  CHECK_THROWS_AS(ts::var_lastdim(ts::Tensor(3.0f)), std::invalid_argument);
}
