// test_train_step.cpp: ch11's training step as the chapter writes it out (forward, zero_grad,
// backward, Adam) equals the one-call step on 1 and 2 threads, and the step-0 check of the
// model ch11 trains against ch10's EncoderDecoder: OK on the same weights, NOT OK (with the
// difference measured) when ch10's module computes something else.
#include "catch_compat.hpp"

#include "train/module_check.hpp"
#include "train/trainer.hpp"

using namespace ts::train;

namespace {
ModelConfig small() {
  ModelConfig c;
  c.src_vocab = source_vocab().size(), c.tgt_vocab = target_vocab().size();
  c.layers = 1, c.d_model = 16, c.heads = 2, c.d_ff = 32, c.dropout = 0.1;
  return c;
}
}  // namespace

TEST_CASE("train: the written-out step equals Trainer::step", "[train]") {
  for (int threads : {1, 2}) {
    Trainer a(init_model(small(), 5), threads, 5), b(init_model(small(), 5), threads, 5);
    const Batch batch = make_batch({3, 45, 678, 9012, 100, 7});
    for (int s = 0; s < 3; ++s) {
      const StepStats sa = a.step(batch, Reduction::ArticleMean);
      const StepStats sb = b.forward(batch, true);
      b.zero_grad();
      b.backward(Reduction::ArticleMean);
      b.adam().update(b.model().params.data(), b.grads().data(), b.model().params.size());
      CHECK(sa.loss_article == sb.loss_article);
      CHECK(sa.correct == sb.correct);
      CHECK(sa.correct_all >= sa.correct);
    }
    CHECK(a.model().params == b.model().params);
  }
}

TEST_CASE("train: the forward ch11 trains agrees with ch10's EncoderDecoder", "[train]") {
  const Model<float> m = init_model(small(), 2);
  const Batch batch = make_batch({3, 45, 678, 9012});
  ts::EncoderDecoder module = to_module(m);
  const ModuleCheck same = check_against_module(module, m, batch);
  CHECK(same.ok);
  CHECK_FALSE(same.relu);  // article 002's feed-forward has no ReLU
  CHECK(same.maxdiff <= same.tolerance);
  CHECK(same.B == 4);
  // ch10's module computes something else (a changed weight): NOT OK, the difference measured
  module.decoder.layers[0].feed_forward.w_2.bias(0) += 0.5f;
  const ModuleCheck other = check_against_module(module, m, batch);
  CHECK_FALSE(other.ok);
  CHECK(other.maxdiff > 100 * other.tolerance);
  // --post-ln and --no-scale train another layer, but the check compares ch10's
  ModelConfig c = small();
  c.pre_ln = false, c.scale_scores = false;
  const Model<float> post = init_model(c, 2);
  ts::EncoderDecoder module2 = to_module(post);
  CHECK(check_against_module(module2, post, batch).ok);
}
