// test_kv_cache.cpp: src/transformer/kv_cache.hpp -- one-token decoding with per-layer caches must give,
// row for row, what article 002's full masked Decoder pass gives (eval mode), for both cache
// kinds, with a batch of 2 and a source padding mask (paths the chapters, at B = 1 with no
// padding, do not take); and the multiply-add counts must add up as the formulas say.
#include "catch_compat.hpp"

#include <algorithm>
#include <cmath>

#include "exact/rng.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/annotated.hpp"
#include "transformer/kv_cache.hpp"

namespace {

float max_abs_diff(const ts::Tensor& a, const ts::Tensor& b) {
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a.data()[i] - b.data()[i]));
  return m;
}

}  // namespace

TEST_CASE("kv_cache: cat_dim1 appends rows per batch entry", "[kv_cache]") {
  ts::Tensor a = ts::Tensor::from_shape({2, 2, 3}), b = ts::Tensor::from_shape({2, 1, 3});
  for (size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<float>(i);
  for (size_t i = 0; i < b.size(); ++i) b.data()[i] = 100.0f + static_cast<float>(i);
  const ts::Tensor c = ts::cat_dim1(a, b);
  REQUIRE(c.shape()[1] == 3);
  CHECK(c(0, 1, 2) == 5.0f);
  CHECK(c(0, 2, 0) == 100.0f);
  CHECK(c(1, 0, 0) == 6.0f);
  CHECK(c(1, 2, 2) == 105.0f);
  CHECK(ts::cat_dim1(ts::Tensor(), b).shape()[1] == 1);  // nothing cached yet
  CHECK_THROWS_AS(ts::cat_dim1(a, ts::Tensor::from_shape({1, 1, 3})), std::invalid_argument);
}

TEST_CASE("kv_cache: cached steps equal the full masked pass, B = 2, padded memory", "[kv_cache]") {
  ts::manual_seed(5);
  const int64_t C = 32, H = 4, F = 64, N = 3;
  const size_t B = 2, T = 7, S = 5;
  const ts::MultiHeadedAttention attn(H, C);
  const ts::FeedForward ff = ts::positionwise_feed_forward(C, F, 0.1);
  ts::Decoder decoder(ts::DecoderLayer(C, attn, attn, ff, 0.1), N);
  decoder.train(false);
  const ts::Tensor tgt = ts::randn({B, T, static_cast<size_t>(C)});
  const ts::Tensor memory = ts::randn({B, S, static_cast<size_t>(C)});
  // batch entry 1 has 2 padded memory rows
  ts::BTensor src_mask = ts::BTensor::from_shape({B, 1, S});
  for (size_t s = 0; s < S; ++s) {
    src_mask(0, 0, s) = true;
    src_mask(1, 0, s) = s < 3;
  }
  const ts::BTensor tgt_mask = ts::subsequent_mask(static_cast<int64_t>(T));
  const ts::Tensor full = decoder(tgt, memory, &src_mask, &tgt_mask);
  for (const ts::CacheKind kind : {ts::CacheKind::Inputs, ts::CacheKind::KeysValues}) {
    ts::DecoderCache cache(kind, decoder.layers.size());
    ts::Tensor cached;
    for (size_t t = 0; t < T; ++t)
      cached = ts::cat_dim1(cached, ts::decoder_step(decoder, ts::position(tgt, t, true), memory, &src_mask, cache));
    REQUIRE(cached.shape() == full.shape());
    CHECK(max_abs_diff(full, cached) <= 1e-5f);
    CHECK(cache.layers[0].len() == T);
    CHECK(cache.layers[N - 1].len() == T);
    // the padded memory rows got weight 0 in the last step's cross-attention
    const ts::Tensor& w = decoder.layers[N - 1].src_attn.attn;  // (B,H,1,S)
    REQUIRE(w.shape()[2] == 1);
    CHECK(w(1, 0, 0, 3) == 0.0f);
    CHECK(w(1, H - 1, 0, 4) == 0.0f);
    CHECK(w(0, 0, 0, 4) > 0.0f);
  }
  // without the padding mask the cached rows of entry 1 no longer match the masked full pass
  ts::DecoderCache unmasked(ts::CacheKind::KeysValues, decoder.layers.size());
  ts::Tensor cached;
  for (size_t t = 0; t < T; ++t)
    cached = ts::cat_dim1(cached, ts::decoder_step(decoder, ts::position(tgt, t, true), memory, nullptr, unmasked));
  CHECK(max_abs_diff(full, cached) > 1e-3f);
}

TEST_CASE("kv_cache: multiply-add counts", "[kv_cache]") {
  ts::manual_seed(1);
  const int64_t C = 16, H = 2, F = 24, N = 2, T = 4, S = 3;
  const ts::MultiHeadedAttention attn(H, C);
  const ts::FeedForward ff = ts::positionwise_feed_forward(C, F, 0.1);
  ts::Decoder decoder(ts::DecoderLayer(C, attn, attn, ff, 0.1), N);
  decoder.train(false);
  const ts::Tensor tgt = ts::randn({1, static_cast<size_t>(T), static_cast<size_t>(C)});
  const ts::Tensor memory = ts::randn({1, static_cast<size_t>(S), static_cast<size_t>(C)});
  ts::DecoderCache kv(ts::CacheKind::KeysValues, N), in(ts::CacheKind::Inputs, N);
  for (size_t t = 0; t < static_cast<size_t>(T); ++t) {
    const uint64_t kv_before = kv.macs.total(), in_before = in.macs.total();
    ts::decoder_step(decoder, ts::position(tgt, t, true), memory, nullptr, kv);
    ts::decoder_step(decoder, ts::position(tgt, t, true), memory, nullptr, in);
    // what each step counted is what decoder_step_macs says before it runs (ch09's pace note sums these)
    const int64_t cached = static_cast<int64_t>(t + 1);
    CHECK(kv.macs.total() - kv_before ==
          static_cast<uint64_t>(N) * ts::decoder_step_macs(ts::CacheKind::KeysValues, 1, cached, S, C, F, t > 0).total());
    CHECK(in.macs.total() - in_before ==
          static_cast<uint64_t>(N) * ts::decoder_step_macs(ts::CacheKind::Inputs, 1, cached, S, C, F, t > 0).total());
  }
  const ts::MacCount full = ts::decoder_full_pass_macs(N, 1, T, S, C, F);
  // the K/V cache projects every row once, like the full pass, and runs the same FFN and cross
  // products; only its self-attention scores skip the masked half: sum_t t = T(T+1)/2 of T^2
  CHECK(kv.macs.self_proj == full.self_proj);
  CHECK(kv.macs.cross_proj == full.cross_proj);
  CHECK(kv.macs.cross_attn == full.cross_attn);
  CHECK(kv.macs.ffn == full.ffn);
  CHECK(kv.macs.self_attn == static_cast<uint64_t>(N * 2 * C * T * (T + 1) / 2));
  // article 001's input cache re-projects K, V of all cached rows and the memory every step
  CHECK(in.macs.self_proj == static_cast<uint64_t>(N * (2 * T * C * C + 2 * C * C * T * (T + 1) / 2)));
  CHECK(in.macs.cross_proj == static_cast<uint64_t>(N * T * (2 * C * C + 2 * S * C * C)));
  CHECK(in.macs.total() > kv.macs.total());
  CHECK(full.total() == full.self_proj + full.self_attn + full.cross_proj + full.cross_attn + full.ffn);
}

TEST_CASE("kv_cache: the cache is an argument of MultiHeadedAttention's own forward", "[kv_cache]") {
  ts::manual_seed(3);
  const int64_t C = 16, H = 4;
  const size_t B = 2, T = 5;
  ts::MultiHeadedAttention attn(H, C);
  attn.train(false);
  const ts::Tensor x = ts::randn({B, T, static_cast<size_t>(C)});
  const ts::BTensor mask = ts::subsequent_mask(static_cast<int64_t>(T));
  const ts::Tensor full = attn(x, x, x, &mask);
  // one row at a time: append its keys and values, attend over every cached position, no mask
  ts::KVCache cache;
  ts::Tensor cached;
  for (size_t t = 0; t < T; ++t) {
    const ts::Tensor x_t = ts::position(x, t, true);
    cached = ts::cat_dim1(cached, attn(x_t, x_t, x_t, nullptr, &cache));
    CHECK(cache.len() == t + 1);
    CHECK(attn.attn.shape()[3] == t + 1);  // the weights of the last call: (B,H,1,t+1)
  }
  CHECK(max_abs_diff(full, cached) <= 1e-5f);
  // a fixed cache (cross-attention) projects its key/value once and reuses them
  ts::KVCache fixed{ts::Tensor(), ts::Tensor(), true};
  const ts::Tensor memory = ts::randn({B, 3, static_cast<size_t>(C)});
  const ts::Tensor first = attn(ts::position(x, 0, true), memory, memory, nullptr, &fixed);
  const ts::Tensor other = ts::randn({B, 3, static_cast<size_t>(C)});
  const ts::Tensor again = attn(ts::position(x, 0, true), other, other, nullptr, &fixed);
  CHECK(fixed.len() == 3);
  CHECK(max_abs_diff(first, again) == 0.0f);
}
