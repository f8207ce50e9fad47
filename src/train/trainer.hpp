// train/trainer.hpp: article 004's train_step as llm.c's loop spells it: forward (with
// loss_fun), zero_grad, backward, then the optimizer's update (introduced in ch11). The batch is
// split into a fixed number of parts (train/batch_parts.hpp, kBatchParts, not the thread count);
// each part runs forward and backward into its own buffers, the threads take parts, and the
// parts' gradients are added in part order: the result is the same for a given seed at any
// thread count.
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
  int64_t correct_all = 0;  // argmax == tar_real over all B*T positions (padding: argmax == 0)
};

// What the chapter prints about a run: article 004's train_loss and train_accuracy (means
// since the start of the epoch, reset at each epoch), and over the whole run the loss curve,
// loss_fun beside the per-token mean, and real/all, the share of real tokens per batch.
struct Metrics {
  int64_t epoch = 0, epoch_steps = 0, epoch_correct = 0, epoch_correct_all = 0, epoch_tokens = 0, epoch_positions = 0;
  double epoch_loss = 0;
  std::vector<double> curve;  // the loss of every step
  double sum_article = 0, sum_token = 0, ratio_sum = 0, ratio_min = 1, ratio_max = 0;
  void add(int64_t epoch_now, const StepStats& st, double loss);
  double train_loss() const { return epoch_loss / double(epoch_steps); }
  // over the real target tokens (the course's acc)
  double train_accuracy() const { return double(epoch_correct) / double(epoch_tokens); }
  // over all B*T positions, padding included (what article 004's SparseCategoricalAccuracy counts)
  double train_accuracy_all() const { return double(epoch_correct_all) / double(epoch_positions); }
  int64_t steps() const { return static_cast<int64_t>(curve.size()); }
};

class Trainer {
 public:
  Trainer(Model<float> model, int threads, uint64_t seed);
  // llm.c's loop, one call each (the chapter writes them out):
  // forward: the model and the masked per-token losses on the batch (its parts on the threads,
  // each on its own workspace); dropout on when training. Returns the losses and accuracy.
  StepStats forward(const Batch& b, bool training);
  // zero_grad: every gradient buffer = 0.
  void zero_grad();
  // backward: d(loss)/d(params) of the last forward, loss = the sum of the masked losses / the
  // reduction's denominator; the parts' gradients are added in part order into grads().
  void backward(Reduction r);
  // One train_step: forward, zero_grad, backward, Adam's update.
  StepStats step(const Batch& b, Reduction r);
  // Forward and backward only (no update): the gradients stay in grads().
  StepStats gradients(const Batch& b, Reduction r, bool training);
  const std::vector<float>& grads() const { return ws_[0].grads; }
  Model<float>& model() { return model_; }
  Adam& adam() { return adam_; }
  int threads() const { return threads_; }

 private:
  Model<float> model_;
  int threads_ = 1;  // threads that take the parts (results do not depend on it)
  Adam adam_;
  std::vector<Workspace<float>> ws_;  // one per part (kBatchParts)
  std::vector<Rng> rngs_;             // one dropout generator per part
  Batch batch_;               // the last forward's batch
  std::vector<Batch> parts_;  // its rows in batch_parts(B) parts
};

// rows [r0, r1) of a padded batch, keeping its S and T (so the loss denominators agree)
Batch slice_batch(const Batch& b, int64_t r0, int64_t r1);

}  // namespace ts::train
