// train/trainer.cpp: one training step, optionally on two threads.
#include "train/trainer.hpp"

#include <algorithm>
#include <thread>

#include "exact/matmul.hpp"

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

Trainer::Trainer(Model<float> model, int threads, uint64_t seed) : model_(std::move(model)) {
  ws_.resize(static_cast<size_t>(std::max(1, threads)));
  for (size_t i = 0; i < ws_.size(); ++i) rngs_.emplace_back(seed * 1000003ull + i + 1);
  // our threads split the batch; each product runs on one OpenBLAS thread
  if (ws_.size() > 1) set_blas_threads(1);
}

StepStats Trainer::gradients(const Batch& b, Reduction r, bool training) {
  const int64_t denom = reduction_denominator(b, r);
  const int64_t K = std::min<int64_t>(static_cast<int64_t>(ws_.size()), b.B);
  std::vector<Batch> parts;
  for (int64_t k = 0; k < K; ++k) parts.push_back(slice_batch(b, b.B * k / K, b.B * (k + 1) / K));
  std::vector<double> sums(static_cast<size_t>(K));
  auto run = [&](int64_t k) {
    Workspace<float>& w = ws_[static_cast<size_t>(k)];
    w.grads.assign(model_.layout.total, 0.0f);
    sums[static_cast<size_t>(k)] = forward(model_, w, parts[static_cast<size_t>(k)], training, rngs_[static_cast<size_t>(k)]);
    backward(model_, w, parts[static_cast<size_t>(k)], static_cast<float>(denom));
  };
  std::vector<std::thread> pool;
  for (int64_t k = 1; k < K; ++k) pool.emplace_back(run, k);
  run(0);
  for (auto& t : pool) t.join();
  // add the halves' gradients in a fixed order
  for (int64_t k = 1; k < K; ++k) {
    const auto& g = ws_[static_cast<size_t>(k)].grads;
    auto& g0 = ws_[0].grads;
    for (size_t i = 0; i < g0.size(); ++i) g0[i] += g[i];
  }
  StepStats s;
  double sum = 0;
  for (int64_t k = 0; k < K; ++k) {
    sum += sums[static_cast<size_t>(k)];
    s.correct += correct_tokens(ws_[static_cast<size_t>(k)], parts[static_cast<size_t>(k)], model_.cfg.tgt_vocab);
  }
  s.positions = b.B * b.T;
  s.tokens = reduction_denominator(b, Reduction::TokenMean);
  s.loss_article = sum / static_cast<double>(s.positions);
  s.loss_token = sum / static_cast<double>(s.tokens);
  return s;
}

StepStats Trainer::step(const Batch& b, Reduction r) {
  const StepStats s = gradients(b, r, true);
  adam_.update(model_.params.data(), ws_[0].grads.data(), model_.params.size());
  return s;
}

}  // namespace ts::train
