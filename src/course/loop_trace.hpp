// course/loop_trace.hpp: the training loop as it ran, from the trace of its first steps (issue 41:
// "the training loop, written out" from what ran, not from fixed text). Introduced in ch12.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/trace.hpp"
#include "course/chapter.hpp"
#include "train/checkpoint.hpp"
#include "train/params.hpp"

namespace ts {

// "  each training step ran (traced, steps 1-2): forward, loss, zero_grad, backward, Adam.step", and,
// when a backward started from gradients left by the step before (zero_grad missing or misplaced),
// a NOT OK measuring them: each step's gradients then add up over the run.
void show_loop_trace(Chapter& ch, const std::vector<TraceEvent>& events);

// The parameter tensors (specs' names) whose gradient in grads is exactly 0 everywhere: after a
// backward, the ones it never reached (no tensor of a model that trains is legitimately all 0).
std::vector<std::string> zero_gradient_tensors(const std::vector<float>& grads, const std::vector<train::ParamSpec>& specs);
// the same over a gradient module's named_parameters(), named by its checkpoint keys
std::vector<std::string> zero_gradient_tensors(const NamedTensors& grads, const std::vector<train::CheckpointKey>& keys);
// step: the training step (1-based) whose backward the caller examined, as the caller ran it.
// Of the tensors that step's backward left at gradient 0 (`zero`), the ones a rerun of the same batch
// without dropout reached (not in `zero_without_dropout`): train-mode dropout zeroed every path from
// them to the loss (a p near 1 on a small batch), which is no fault. Said as such, measured; the
// caller passes zero_without_dropout on to show_unreached.
void show_dropout_zeroed(Chapter& ch, const std::vector<std::string>& zero,
                         const std::vector<std::string>& zero_without_dropout, size_t all, int64_t step);
// NOT OK when step `step`'s backward left tensors at gradient 0 (names, of `all`), naming `backward`;
// nothing when it reached them all.
void show_unreached(Chapter& ch, const std::vector<std::string>& names, size_t all, const std::string& backward,
                    int64_t step);
// NOT OK for such tensors that no logit depends on either (measured by the caller): no backward
// can reach them, so the backward is not to blame; names `where`, the code that chooses which
// storage the forward reads (the layout, the modules' weights).
void show_unread(Chapter& ch, const std::vector<std::string>& names, size_t all, const std::string& where,
                 int64_t step);

// The numbers a run's training batches held, every batch the loop drew (issue 41: the sets a run
// trained and evaluated on, and their overlap, from what ran; introduced in ch11).
class TrainedNumbers {
 public:
  void add(const std::vector<int64_t>& batch_numbers);  // one training batch's numbers (B)
  int64_t batches() const { return batches_; }
  size_t distinct() const { return seen_.size(); }
  bool has(int64_t n) const { return seen_.count(n) != 0; }

 private:
  std::set<int64_t> seen_;
  int64_t batches_ = 0;
};
// After training: how many distinct numbers the batches held and whether any of `evaluated` (the
// held-out numbers the chapter scores after training) was among them: OK when none was; NOT OK naming `where`
// (the split and the batches' source) when some were. Nothing when no batch ran.
void show_train_eval_overlap(Chapter& ch, const TrainedNumbers& trained, const std::vector<int64_t>& evaluated,
                             const std::string& where);

// One training step's loss and gradients, checked before the optimiser's update (introduced in
// ch11): a NaN or inf is named where the step measured it, not blamed on the learning rate.
//   the loss not finite at step 1 (the initial weights, no update yet): NOT OK naming `forward`;
//   the gradients not finite under a finite loss: NOT OK naming `backward` and the parameter
//     tensors (specs, state_dict names) whose gradients hold them;
//   the loss not finite after updates whose gradients were all finite: --lr (bad input, exit 2).
// Throws CheckFailure (NOT OK, exit 3) or UsageError; returns when the loss and grads are finite.
// grads (total) in specs' layout; step counts from 1.
void check_step_finite(double loss, const std::vector<float>& grads, const std::vector<train::ParamSpec>& specs,
                       int64_t step, const std::string& forward, const std::string& backward);
// the same for a model whose modules hold the gradients (grads: the gradient module's
// named_parameters()), each tensor named by its checkpoint key (keys_of, gpt_checkpoint_keys)
void check_step_finite(double loss, const NamedTensors& grads, const std::vector<train::CheckpointKey>& keys,
                       int64_t step, const std::string& forward, const std::string& backward);

}  // namespace ts
