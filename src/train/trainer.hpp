// train/trainer.hpp: article 004's train_step: forward, loss_fun, backward, optimizer step
// (introduced in ch11). With threads = 2 the batch is split in two halves, each half runs
// forward and backward on its own thread into its own gradient buffer, and the two buffers
// are added in a fixed order: the result is the same for a given seed and thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "train/adam.hpp"
#include "train/model.hpp"

namespace ts::train {

struct StepStats {
  double loss_article = 0;  // article 004's loss_fun: sum of masked losses / (B*T)
  double loss_token = 0;    // per-token mean: sum of masked losses / real tokens
  int64_t correct = 0, tokens = 0, positions = 0;  // argmax == tar_real over real tokens; B*T
};

class Trainer {
 public:
  Trainer(Model<float> model, int threads, uint64_t seed);
  // One train_step on the batch: gradients of the chosen reduction, then Adam.
  StepStats step(const Batch& b, Reduction r);
  // Forward and backward only (no update): the gradients stay in grads().
  StepStats gradients(const Batch& b, Reduction r, bool training);
  const std::vector<float>& grads() const { return ws_[0].grads; }
  Model<float>& model() { return model_; }
  Adam& adam() { return adam_; }
  int threads() const { return static_cast<int>(ws_.size()); }

 private:
  Model<float> model_;
  Adam adam_;
  std::vector<Workspace<float>> ws_;
  std::vector<Rng> rngs_;
};

// rows [r0, r1) of a padded batch, keeping its S and T (so the loss denominators agree)
Batch slice_batch(const Batch& b, int64_t r0, int64_t r1);

}  // namespace ts::train
