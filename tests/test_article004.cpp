// test_article004.cpp: article 004's functions (src/transformer/article004.hpp) on the article's own
// examples: its padding and look-ahead masks, and its toy attention (q 3x3, k 4x3, v 4x2).
#include "catch_compat.hpp"

#include <cmath>
#include <vector>

#include "tensor_rows.hpp"
#include "transformer/article004.hpp"

using ts_test::matrix;

TEST_CASE("article 004: create_padding_mask and create_look_ahead_mask as the article prints them",
          "[article004]") {
  const ts::Tensor pad = ts::create_padding_mask({{1, 2, 0, 0, 0}, {3, 4, 5, 0, 0}});
  REQUIRE(ts::shape_of(pad) == ts::Shape{2, 1, 1, 5});
  const std::vector<float> want = {0, 0, 1, 1, 1, 0, 0, 0, 1, 1};
  CHECK(std::vector<float>(pad.begin(), pad.end()) == want);
  const ts::Tensor look = ts::create_look_ahead_mask(3);
  CHECK(look == matrix({{0, 1, 1}, {0, 0, 1}, {0, 0, 0}}));
  CHECK_THROWS(ts::create_look_ahead_mask(0));
  CHECK_THROWS(ts::create_padding_mask({{1, 2}, {3}}));
}

TEST_CASE("article 004: the toy example's weights and output, and a look-ahead mask", "[article004]") {
  const ts::Tensor q = matrix({{0, 0, 10}, {0, 10, 0}, {10, 10, 0}});
  const ts::Tensor k = matrix({{10, 0, 0}, {0, 10, 0}, {0, 0, 10}, {0, 0, 10}});
  const ts::Tensor v = matrix({{1, 0}, {10, 0}, {100, 5}, {1000, 6}});
  ts::Tensor att;
  const ts::Tensor out = ts::scaled_dot_product_attention_004(q, k, v, nullptr, &att);
  const ts::Tensor want_att = matrix({{0, 0, 0.5f, 0.5f}, {0, 1, 0, 0}, {0.5f, 0.5f, 0, 0}});
  const ts::Tensor want_out = matrix({{550, 5.5f}, {10, 0}, {5.5f, 0}});
  for (size_t i = 0; i < att.size(); ++i) CHECK(att.data()[i] == Approx(want_att.data()[i]).margin(1e-20));
  for (size_t i = 0; i < out.size(); ++i) CHECK(out.data()[i] == Approx(want_out.data()[i]).margin(1e-20));
  // 3-D, with the look-ahead mask (1 = hide): row t keeps keys 0..t only, renormalised
  ts::Tensor q3 = matrix({{1, 0}, {0, 1}, {1, 1}});
  q3.reshape({1, 3, 2});
  const ts::Tensor mask = ts::create_look_ahead_mask(3);
  ts::Tensor w;
  ts::scaled_dot_product_attention_004(q3, q3, q3, &mask, &w);
  REQUIRE(ts::shape_of(w) == ts::Shape{1, 3, 3});
  CHECK(w(0, 0, 0) == 1.0f);
  CHECK(w(0, 0, 1) == 0.0f);
  CHECK(w(0, 1, 2) == 0.0f);
  CHECK(w(0, 2, 0) + w(0, 2, 1) + w(0, 2, 2) == Approx(1.0));
}
