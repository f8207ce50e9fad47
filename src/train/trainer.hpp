// train/trainer.hpp: article 004's train_step as llm.c's loop spells it: forward (with
// loss_fun), zero_grad, backward, then the optimizer's update (introduced in ch11). The model
// it trains is ch10's EncoderDecoder itself (src/transformer/annotated.cpp), with article 004's
// differences as module settings (module_settings below); its backward is the one written below
// each module's forward, into a second module of the same type (llm.c's `grads`).
// The batch is split into a fixed number of parts (train/batch_parts.hpp, kBatchParts, not the
// thread count); each part runs forward and backward on its own module, gradient module and
// dropout generator, the threads take parts, and the parts' gradients are added in part order:
// the result is the same for a given seed at any thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exact/rng.hpp"
#include "train/adam.hpp"
#include "train/params.hpp"
#include "transformer/annotated.hpp"

namespace ts::train {

struct StepStats {
  double loss_article = 0;  // article 004's loss_fun: sum of masked losses / (B*T)
  double loss_token = 0;    // per-token mean: sum of masked losses / real tokens
  int64_t correct = 0, tokens = 0, positions = 0;  // argmax == tar_real over real tokens; B*T
  int64_t correct_all = 0;  // argmax == tar_real over all B*T positions (padding: argmax == 0)
  // which positions the loss counted, measured in its loop over the targets it received (tar_real):
  // counted = positions whose cross-entropy entered the sum, padding = targets that are the padding id
  int64_t counted = 0, padding = 0;
  // whether what it summed are log-probabilities, measured on the generator's rows it counted: a
  // log_softmax row has logsumexp 0 up to float rounding; not_logp = rows farther than that,
  // lse_worst = the largest |logsumexp| among the counted rows
  int64_t not_logp = 0;
  double lse_worst = 0;
};

// What the chapter prints about a run: article 004's train_loss and train_accuracy (means
// since the start of the epoch, reset at each epoch), and over the whole run the loss curve,
// loss_fun beside the per-token mean, and real/all, the share of real tokens per batch.
struct Metrics {
  int64_t epoch = 0, epoch_steps = 0, epoch_correct = 0, epoch_correct_all = 0, epoch_tokens = 0, epoch_positions = 0;
  double epoch_loss = 0;
  std::vector<double> curve;  // the loss of every step
  double sum_article = 0, sum_token = 0, ratio_sum = 0, ratio_min = 1, ratio_max = 0;
  int64_t run_counted = 0, run_padding = 0, run_positions = 0;  // StepStats' over the whole run
  int64_t run_not_logp = 0;   // StepStats::not_logp over the run
  double run_lse_worst = 0;   // the largest StepStats::lse_worst
  void add(int64_t epoch_now, const StepStats& st, double loss);
  double train_loss() const { return epoch_loss / double(epoch_steps); }
  // over the real target tokens (the course's acc)
  double train_accuracy() const { return double(epoch_correct) / double(epoch_tokens); }
  // over all B*T positions, padding included (what article 004's SparseCategoricalAccuracy counts)
  double train_accuracy_all() const { return double(epoch_correct_all) / double(epoch_positions); }
  int64_t steps() const { return static_cast<int64_t>(curve.size()); }
};

// Article 004's differences from ch10's create_model, as its settings (they draw nothing):
// cfg.relu: the feed-forward's ReLU; cfg.pre_ln: where the LayerNorm sits; cfg.dropout for the
// attention weights too (the article's MultiHeadedAttention keeps 0.1); cfg.scale_scores.
ModelSettings module_settings(const ModelConfig& cfg);
// create_model(V_src, V_tgt, N, d_model, d_ff, h, dropout, module_settings(cfg)) holding m's
// weights (m.params, in named_parameters() order). The default generator is left as it was.
EncoderDecoder training_module(const Model<float>& m);
// m.params (in m.layout.specs order) copied into named (module.named_parameters()).
void copy_params(const Model<float>& m, const std::vector<std::pair<std::string, Tensor*>>& named);

// What the module's forward takes for batch b: ids as tensors, create_mask's masks (1 = hide)
// as the modules' true = keep.
struct ModuleInputs {
  ITensor src, tgt;         // (B,S), (B,T) ids
  BTensor enc, self, cross;  // (B,S,S), (B,T,T), (B,T,S)
};
ModuleInputs module_inputs(const Batch& b, bool look_ahead);

// Article 004's evaluate(), for many numbers at once, through the trained module (ch10's
// EncoderDecoder with module_settings): encode once, then each step feeds the new token's row to
// the decoder with one DecoderLayerCache per layer (the same layer code as training), argmax,
// append; a row stops at the end token, all stop after max_new tokens.
// Returns the predicted target ids (without start/end) per number. If cross (not null), it
// receives the last decoder layer's cross-attention of row 0 at the final step: (H, T, S).
std::vector<std::vector<int64_t>> greedy_translate(const Model<float>& m, const std::vector<int64_t>& numbers,
                                                   int64_t max_new, std::vector<float>* cross = nullptr,
                                                   int64_t* cross_T = nullptr, int64_t* cross_S = nullptr);

// "src/train/trainer.cpp:LINE Trainer::forward", from the compiler: where the loss's loop decides
// which positions it counts (StepStats::counted), for a NOT OK to name
std::string trainer_loss_site();
// the same for Trainer::backward, where each module's backward is called (a NOT OK on the gradients)
std::string trainer_backward_site();

class Trainer {
 public:
  Trainer(Model<float> model, int threads, uint64_t seed);
  // llm.c's loop, one call each (the chapter writes them out):
  // forward: the model and the masked per-token losses on the batch (its parts on the threads,
  // each on its own copy of the module, which keeps what its backward needs); dropout on when
  // training. Returns the losses and accuracy.
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
  // every parameter's gradient, in model().layout.specs order (the flat layout of the weights)
  const std::vector<float>& grads() const { return grads_; }
  Model<float>& model() { return model_; }
  // the module part 0 trains (ch10's EncoderDecoder with module_settings(model().cfg))
  const EncoderDecoder& module() const { return parts_[0]->model; }
  Adam& adam() { return adam_; }
  int threads() const { return threads_; }

 private:
  Model<float> model_;
  int threads_ = 1;  // threads that take the parts (results do not depend on it)
  Adam adam_;
  // One part of the batch: its own module (whose forward keeps what backward needs), its
  // gradient module, its dropout generator, its rows and their log-probabilities.
  struct Part {
    EncoderDecoder model, grads;
    std::vector<std::pair<std::string, Tensor*>> params, gparams;  // their named_parameters()
    Generator generator;
    Batch batch;
    Tensor logp;  // (B,T,V) of the last forward
  };
  std::vector<std::unique_ptr<Part>> parts_;  // kBatchParts (heap: the named pointers stay put)
  int64_t used_ = 0;                          // parts the last forward used: batch_parts(B)
  Batch batch_;                               // the last forward's batch
  std::vector<float> grads_;                  // (total) the parts' gradients, summed in part order
};

// rows [r0, r1) of a padded batch, keeping its S and T (so the loss denominators agree)
Batch slice_batch(const Batch& b, int64_t r0, int64_t r1);

}  // namespace ts::train
