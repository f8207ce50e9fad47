// test_train_step.cpp: ch11's training step as the chapter writes it out (forward, zero_grad,
// backward, Adam) equals the one-call step on 1 and 2 threads, and what it trains is ch10's
// EncoderDecoder: the trainer's loss is the one the module's own forward gives.
#include "catch_compat.hpp"

#include <cmath>

#include "transformer/grad.hpp"
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

TEST_CASE("train: ch11 trains ch10's EncoderDecoder with article 004's settings", "[train]") {
  ModelConfig c = small();
  c.pre_ln = false, c.scale_scores = false, c.dropout = 0.2;
  const Model<float> m = init_model(c, 2);
  // the settings are the module's: ReLU, post-LN, the attention's dropout, no scaling
  const ts::EncoderDecoder module = training_module(m);
  const ts::DecoderLayer& layer = module.decoder.layers.at(0);
  CHECK(layer.feed_forward.activation == ts::Activation::ReLU);
  CHECK(layer.sublayer.at(1).norm_place == ts::NormPlace::Post);
  CHECK(layer.src_attn.dropout.p == 0.2);
  CHECK_FALSE(layer.src_attn.scale_scores);
  // the trainer's eval-mode loss is what ch10's create_model (same draws, these settings) gives
  const Batch batch = make_batch({3, 45, 678, 9012});
  Trainer tr(m, 1, 2);
  const StepStats st = tr.forward(batch, false);
  ts::manual_seed(2);
  ts::EncoderDecoder ch10 = ts::create_model(c.src_vocab, c.tgt_vocab, c.layers, c.d_model, c.d_ff, c.heads,
                                             c.dropout, module_settings(c));
  ch10.train(false);
  const ModuleInputs in = module_inputs(batch, true);
  const ts::Tensor logp = ch10.generator(ch10.decode(ch10.encode(in.src, &in.enc), &in.cross, in.tgt, &in.self));
  double sum = 0;
  const int64_t V = c.tgt_vocab;
  for (int64_t n = 0; n < batch.B * batch.T; ++n)
    if (batch.tar_real[size_t(n)] != kPad) sum -= double(logp.data()[n * V + batch.tar_real[size_t(n)]]);
  // (the trainer runs the batch in two parts: products of 2 rows, sums in another order)
  const double ref = sum / double(batch.B * batch.T);
  CHECK(std::fabs(st.loss_article - ref) <= 1e-5 * ref);
  // an edit of the module (a changed weight) changes what the trainer trains
  Model<float> edited = m;
  edited.params[edited.layout.specs.back().offset] += 0.5f;  // generator.proj.bias[0]
  Trainer te(edited, 1, 2);
  CHECK(std::fabs(te.forward(batch, false).loss_article - st.loss_article) > 1e-3);
}
