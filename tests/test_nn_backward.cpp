// test_nn_backward.cpp: the backward written beside article 000's modules (transformer/nn.hpp,
// introduced in ch13) must not change any forward, and ch13's model is those modules.
// (Each backward's values are checked against torch autograd by classifier_twin.)
#include "catch_compat.hpp"

#include <cstring>

#include "exact/rng.hpp"
#include "transformer/encoder_classifier.hpp"
#include "transformer/grad.hpp"
#include "transformer/nn.hpp"

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
    CHECK(enc.layers[1].attention.heads[0].saved.p.dimension() == 0);
    ts::manual_seed(9);
    ts::Tensor kept;
    {
      ts::EnableGrad grad_mode;
      kept = enc(ids, &mask);
    }
    CHECK(ts::grad_enabled() == false);
    REQUIRE(plain.size() == kept.size());
    CHECK(std::memcmp(plain.data(), kept.data(), plain.size() * sizeof(float)) == 0);
    CHECK(enc.layers[1].attention.heads[1].saved.p.size() == 2 * 5 * 5);
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
