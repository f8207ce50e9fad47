// train/trainer.cpp: one training step, its batch in a fixed number of parts (batch_parts.hpp).
#include "train/trainer.hpp"

#include <algorithm>

#include "exact/matmul.hpp"
#include "train/batch_parts.hpp"

namespace ts::train {

Batch slice_batch(const Batch& b, int64_t r0, int64_t r1) {
  Batch s;
  s.B = r1 - r0, s.S = b.S, s.T = b.T;
  s.numbers.assign(b.numbers.begin() + r0, b.numbers.begin() + r1);
  s.inputs.assign(b.inputs.begin() + r0 * b.S, b.inputs.begin() + r1 * b.S);
  s.tar_inp.assign(b.tar_inp.begin() + r0 * b.T, b.tar_inp.begin() + r1 * b.T);
  s.tar_real.assign(b.tar_real.begin() + r0 * b.T, b.tar_real.begin() + r1 * b.T);
  return s;
}

void Metrics::add(int64_t epoch_now, const StepStats& st, double loss) {
  if (epoch_now != epoch) {
    epoch_loss = 0, epoch_steps = 0, epoch_correct = 0, epoch_correct_all = 0, epoch_tokens = 0, epoch_positions = 0;
    epoch = epoch_now;
  }
  epoch_loss += loss, ++epoch_steps, epoch_correct += st.correct, epoch_correct_all += st.correct_all;
  epoch_tokens += st.tokens, epoch_positions += st.positions;
  curve.push_back(loss);
  sum_article += st.loss_article, sum_token += st.loss_token;
  const double ratio = double(st.tokens) / double(st.positions);
  ratio_sum += ratio, ratio_min = std::min(ratio_min, ratio), ratio_max = std::max(ratio_max, ratio);
}

Trainer::Trainer(Model<float> model, int threads, uint64_t seed)
    : model_(std::move(model)), threads_(std::max(1, threads)) {
  // one workspace and one dropout generator per part, whatever the thread count
  ws_.resize(static_cast<size_t>(kBatchParts));
  for (size_t k = 0; k < ws_.size(); ++k) rngs_.emplace_back(seed * 1000003ull + k + 1);
  // each product runs on one OpenBLAS thread: our threads take the parts, and OpenBLAS's own
  // threads must not decide how a product's sums are split
  set_blas_threads(1);
}

StepStats Trainer::forward(const Batch& b, bool training) {
  const int64_t K = batch_parts(b.B);
  batch_ = b;
  parts_.clear();
  for (int64_t k = 0; k < K; ++k) {
    const RowRange r = part_rows(b.B, k, K);
    parts_.push_back(slice_batch(b, r.r0, r.r1));
  }
  std::vector<double> sums(parts_.size());
  run_parts(K, threads_, [&](int64_t k) {
    const size_t i = size_t(k);
    sums[i] = train::forward(model_, ws_[i], parts_[i], training, rngs_[i]);
  });
  StepStats s;
  double sum = 0;
  for (size_t k = 0; k < parts_.size(); ++k) {
    sum += sums[k];
    s.correct += correct_tokens(ws_[k], parts_[k], model_.cfg.tgt_vocab);
    s.correct_all += correct_tokens(ws_[k], parts_[k], model_.cfg.tgt_vocab, true);
  }
  s.positions = b.B * b.T;
  s.tokens = reduction_denominator(b, Reduction::TokenMean);
  s.loss_article = sum / static_cast<double>(s.positions);
  s.loss_token = sum / static_cast<double>(s.tokens);
  return s;
}

void Trainer::zero_grad() {
  for (Workspace<float>& w : ws_) w.grads.assign(model_.layout.total, 0.0f);
}

void Trainer::backward(Reduction r) {
  const float denom = static_cast<float>(reduction_denominator(batch_, r));
  run_parts(static_cast<int64_t>(parts_.size()), threads_,
            [&](int64_t k) { train::backward(model_, ws_[size_t(k)], parts_[size_t(k)], denom); });
  // add the parts' gradients in part order into part 0's: the same sums for any thread count
  std::vector<const std::vector<float>*> rest;
  for (size_t k = 1; k < parts_.size(); ++k) rest.push_back(&ws_[k].grads);
  add_parts(ws_[0].grads, rest);
}

StepStats Trainer::gradients(const Batch& b, Reduction r, bool training) {
  const StepStats s = forward(b, training);
  zero_grad();
  backward(r);
  return s;
}

StepStats Trainer::step(const Batch& b, Reduction r) {
  const StepStats s = gradients(b, r, true);
  adam_.update(model_.params.data(), ws_[0].grads.data(), model_.params.size());
  return s;
}

}  // namespace ts::train
