// test_nn_backward.cpp: the backward written beside article 000's modules (transformer/nn.hpp,
// transformer_encoder.hpp, the one attention of attention.hpp; introduced in ch13) must not change
// any forward, and ch13's model is those modules.
// (Each backward's values are checked against torch autograd by classifier_twin.)
// Debian 13's GCC 14 reports a false -Wmaybe-uninitialized inside xtensor's svector copy
// (xstorage.hpp) where this file's from_shape({2, 5}) is inlined; the tests only, not the
// course's code. (GCC only: clang has no such warning, and warns about the unknown name.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "catch_compat.hpp"

#include <cmath>
#include <cstring>

#include "exact/rng.hpp"
#include "transformer/encoder_classifier.hpp"
#include "transformer/grad.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

namespace {
ts::Config small_config() {
  ts::Config k;
  k.vocab_size = 11, k.hidden_size = 16, k.num_attention_heads = 2, k.intermediate_size = 32;
  k.hidden_dropout_prob = 0.1, k.max_position_embeddings = 6, k.num_hidden_layers = 2;
  return k;
}
}  // namespace

// Without EnableGrad nothing is kept (ch01-ch07 run as before); with it the same draws give the
// same bits, in train mode (dropout) and in eval mode.
TEST_CASE("nn: EnableGrad keeps what backward needs and changes no bit", "[nn]") {
  ts::ITensor ids = ts::ITensor::from_shape({2, 5});
  for (size_t i = 0; i < ids.size(); ++i) ids.data()[i] = int64_t(1 + i % 10);
  ts::Tensor mask = ts::Tensor::from_shape({2, 5, 5});
  mask.fill(1.0f);
  mask(1, 2, 4) = 0.0f;
  for (bool train : {true, false}) {
    ts::manual_seed(3);
    ts::TransformerEncoder enc(small_config());
    enc.train(train);
    ts::manual_seed(9);
    const ts::Tensor plain = enc(ids, &mask);
    CHECK(enc.layers[0].feed_forward.saved.x.dimension() == 0);  // nothing kept
    CHECK(enc.layers[1].self_attn.saved.p.dimension() == 0);
    ts::manual_seed(9);
    ts::Tensor kept;
    {
      ts::EnableGrad grad_mode;
      kept = enc(ids, &mask);
    }
    CHECK(ts::grad_enabled() == false);
    REQUIRE(plain.size() == kept.size());
    CHECK(std::memcmp(plain.data(), kept.data(), plain.size() * sizeof(float)) == 0);
    CHECK(enc.layers[1].self_attn.saved.p.size() == 2 * 2 * 5 * 5);
    CHECK(enc.layers[0].feed_forward.saved.h.size() == 2 * 5 * 32);
  }
}

// The classifier's parameters are its encoder's, under "encoder.", then the head's; a backward
// without a forward under EnableGrad is refused, not run on stale tensors.
TEST_CASE("nn: EncoderClassifier is the encoder's modules plus a head", "[nn]") {
  ts::manual_seed(1);
  ts::EncoderClassifier m(small_config(), 10, false, 0);
  const auto named = m.named_parameters();
  const auto inner = m.encoder.named_parameters();
  REQUIRE(named.size() == inner.size() + 2);
  for (size_t i = 0; i < inner.size(); ++i) {
    CHECK(named[i].first == "encoder." + inner[i].first);
    CHECK(named[i].second == inner[i].second);
  }
  CHECK(named.back().first == "classifier.bias");
  CHECK(m.encoder.embeddings.dropout.p == 0.1);
  ts::EncoderClassifier g = m;
  ts::zero_grad(g);
  ts::Tensor dlogits = ts::Tensor::from_shape({2, 10});
  dlogits.fill(1.0f);
  CHECK_THROWS(m.backward(dlogits, g));
}

// The one attention in article 000's setting (attention.hpp) draws the same weights as the
// article's per-head MultiHeadAttention (nn.hpp, ch04's exhibit) and computes the same bits, with
// and without a padding mask.
TEST_CASE("nn: the one attention in article 000's setting is the per-head exhibit, bit for bit", "[nn]") {
  ts::Config k = small_config();
  k.hidden_size = 24, k.num_attention_heads = 3;
  ts::manual_seed(5);
  const ts::MultiHeadAttention exhibit(k);
  ts::manual_seed(5);
  ts::MultiHeadedAttention one = ts::multi_head_attention(k);
  REQUIRE(one.linears.size() == 3 * 3 + 1);
  for (size_t i = 0; i < 3; ++i) {
    const ts::Linear* l[3] = {&exhibit.heads[i].q, &exhibit.heads[i].k, &exhibit.heads[i].v};
    for (size_t j = 0; j < 3; ++j) {
      CHECK(std::memcmp(l[j]->weight.data(), one.linears[3 * i + j].weight.data(), l[j]->weight.size() * 4) == 0);
      CHECK(std::memcmp(l[j]->bias.data(), one.linears[3 * i + j].bias.data(), l[j]->bias.size() * 4) == 0);
    }
  }
  CHECK(std::memcmp(exhibit.output_linear.weight.data(), one.output_linear().weight.data(), 24 * 24 * 4) == 0);
  CHECK(one.linear_name(4) == "heads.1.k");
  CHECK(one.linear_name(9) == "output_linear");
  ts::Tensor x = ts::Tensor::from_shape({2, 5, 24});
  ts::manual_seed(8);
  for (size_t i = 0; i < x.size(); ++i) x.data()[i] = float(std::sin(0.37 * double(i)) * 1.7);
  ts::Tensor mask = ts::Tensor::from_shape({2, 5, 5});
  mask.fill(1.0f);
  for (size_t t = 0; t < 5; ++t) mask(1, t, 4) = 0.0f, mask(1, t, 3) = 0.0f;
  ts::BTensor keep = ts::BTensor::from_shape({2, 5, 5});
  for (size_t i = 0; i < mask.size(); ++i) keep.data()[i] = mask.data()[i] != 0.0f;
  for (bool masked : {false, true}) {
    const ts::Tensor a = exhibit(x, x, x, masked ? &mask : nullptr);
    const ts::Tensor b = one(x, x, x, masked ? &keep : nullptr);
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
  }
}
