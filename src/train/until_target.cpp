// train/until_target.cpp: see until_target.hpp.
#include "train/until_target.hpp"

#include <cmath>

#include "exact/rng.hpp"
#include "train/numbers.hpp"
#include "train/sampling.hpp"

namespace ts::train {

double encdec_held_out(const Model<float>& m, int64_t max_new) {
  const auto& held = number_split().held_out;
  const auto pred = greedy_translate(m, held, max_new);
  int64_t exact = 0;
  for (size_t i = 0; i < held.size(); ++i) exact += target_vocab().decode(pred[i]) == number_to_words(held[i]);
  return double(exact) / double(held.size());
}

double classifier_held_out(Classifier& m) {
  const ClsBatch held = make_cls_batch(number_split().held_out);
  ClsWorkspace ws;
  classifier_forward(m, ws, held, /*training=*/false);
  const auto pred = predictions(ws, m.cfg.classes);
  int64_t right = 0;
  for (size_t i = 0; i < pred.size(); ++i) right += pred[i] == held.labels[i];
  return double(right) / double(held.B);
}

TargetRun train_encdec_until(Trainer& tr, int64_t batch, uint64_t seed, const TargetPlan& plan) {
  Epochs epochs(batch, seed);
  return train_until(
      plan,
      [&](int64_t) {
        int64_t e = 0, bi = 0;
        // forward (article 004's loss_fun), zero_grad, backward, Adam
        return tr.step(make_batch(epochs.next(&e, &bi)), Reduction::ArticleMean).loss_article;
      },
      [&] { return encdec_held_out(tr.model()); });
}

TargetRun train_gpt_until(Gpt& m, Adam& adam, int64_t batch, uint64_t seed, const TargetPlan& plan) {
  Epochs epochs(batch, seed);
  return train_until(
      plan,
      [&](int64_t) {
        int64_t e = 0, bi = 0;
        const SeqBatch b = make_seq_batch(epochs.next(&e, &bi));
        const double loss = m.forward(b, /*training=*/true);
        m.zero_grad();
        m.backward();
        adam.update(m.parameters(), m.gradients());
        return loss;
      },
      [&] { return held_out_exact_match(m, Sampler{}, 0); });
}

TargetRun train_classifier_until(Classifier& m, Adam& adam, int64_t batch, uint64_t seed, const TargetPlan& plan) {
  Epochs epochs(batch, seed);
  ClsWorkspace ws;
  manual_seed(seed * 1000003ull + 1);  // dropout masks, seeded as ch13 seeds them
  return train_until(
      plan,
      [&](int64_t) {
        int64_t e = 0, bi = 0;
        const ClsBatch b = make_cls_batch(epochs.next(&e, &bi));
        classifier_forward(m, ws, b, /*training=*/true);
        const double loss = classifier_loss(ws, b, m.cfg.classes);
        classifier_backward(m, ws, b);  // zero_grad, backward
        adam.update(m.model.named_parameters(), ws.grad.named_parameters());
        return loss;
      },
      [&] { return classifier_held_out(m); });
}

}  // namespace ts::train
