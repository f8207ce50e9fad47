// test_counts.cpp: course/counts (thousands separators, the parameters-per-part table).
#include "catch_compat.hpp"

#include "course/counts.hpp"

TEST_CASE("thousands groups digits as Python's {:,}", "[counts]") {
  CHECK(ts::thousands(32381952) == "32,381,952");
  CHECK(ts::thousands(999) == "999");
  CHECK(ts::thousands(1000) == "1,000");
  CHECK(ts::thousands(0) == "0");
}

TEST_CASE("PartCounts sums consecutive parameters of one part and aligns the table", "[counts]") {
  ts::PartCounts c;
  for (const char* name : {"encoder.a.weight", "encoder.b.bias", "decoder.a.weight", "generator.proj.weight"})
    c.add(ts::first_field(name), 1500);
  REQUIRE(c.parts.size() == 3);
  CHECK(c.parts[0].second == 3000);
  CHECK(c.total == 6000);
  CHECK(c.table(9, 6) == "encoder    3,000\ndecoder    1,500\ngenerator  1,500\ntotal      6,000");
  CHECK(c.table(9, 6, {{"lm_head", "= wte"}}) ==
        "encoder    3,000\ndecoder    1,500\ngenerator  1,500\nlm_head    = wte\ntotal      6,000");
}
