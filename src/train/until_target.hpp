// train/until_target.hpp: train one of the course's three models until its held-out score reaches
// a target, checked every few steps, with a cap on the steps (introduced in ch14; ch12 --vs-ch11
// runs ch11's model with it). The training steps are the chapters' own: ch11's train_step
// (Trainer::step), ch12's and ch13's forward, loss, zero the grads, backward, Adam.
#pragma once

#include <chrono>
#include <cstdint>

#include "train/classifier.hpp"
#include "train/gpt.hpp"
#include "train/trainer.hpp"

namespace ts::train {

// When to look and when to stop: the score every check_every steps until it reaches target;
// max_steps steps at most. stop: end the run at the target (ch14), or train on to max_steps and
// only note the step (ch12's loop).
struct TargetPlan {
  int64_t check_every = 100, max_steps = 2000;
  double target = 0.95;
  bool stop = true;
};

// What a run measured: steps trained, the first checked step whose score reached the target (-1:
// none), wall seconds of the whole run and up to that step (the checks included), and the score
// at the end (with plan.stop; otherwise the last score checked).
struct TargetRun {
  int64_t steps = 0, step_hit = -1;
  double seconds = 0, seconds_hit = -1, held_out = 0;
  double first_loss = 0;  // what the first step(0) returned: the first batch's loss, before any update
  bool hit() const { return step_hit > 0; }
  double steps_per_second() const { return seconds > 0 ? double(steps) / seconds : 0.0; }
};

// The loop: step(s) for s = 0, 1, ... (each returns its batch's loss); after every check_every-th step until the target is
// reached, score(); with plan.stop the run ends there, and a run that ends between two checks is
// scored once more (and reaches the target at its last step if that score does).
template <class Step, class Score>
TargetRun train_until(const TargetPlan& plan, Step&& step, Score&& score) {
  using Clock = std::chrono::steady_clock;
  TargetRun r;
  const auto t0 = Clock::now();
  bool scored_last = false;
  for (int64_t s = 0; s < plan.max_steps && !(plan.stop && r.hit()); ++s) {
    const double loss = step(s);
    if (s == 0) r.first_loss = loss;
    r.steps = s + 1, scored_last = false;
    if (!r.hit() && (s + 1) % plan.check_every == 0) {
      r.held_out = score(), scored_last = true;
      if (r.held_out >= plan.target)
        r.step_hit = s + 1, r.seconds_hit = std::chrono::duration<double>(Clock::now() - t0).count();
    }
  }
  if (plan.stop && !scored_last) {  // the cap fell between two checks: the last step is checked too
    r.held_out = score();
    if (!r.hit() && r.held_out >= plan.target) r.step_hit = r.steps;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (r.step_hit == r.steps && r.seconds_hit < 0) r.seconds_hit = r.seconds;
  return r;
}

// The held-out scores the chapters print: ch11's greedy exact match (every word right, at most
// max_new words), ch13's accuracy (argmax of the logits == n % 10). ch12's is held_out_exact_match
// (train/sampling.hpp).
double encdec_held_out(const Model<float>& m, int64_t max_new = 10);
double classifier_held_out(Classifier& m);

// The three chapters' runs with their batches (Epochs(batch, seed), as each chapter draws them).
// ch11: Trainer::step with article 004's loss_fun. ch12: Gpt::forward, zero_grad, backward, Adam.
// ch13: classifier_forward (dropout from its Rng, seeded as ch13 seeds it), loss, zero, backward, Adam.
TargetRun train_encdec_until(Trainer& tr, int64_t batch, uint64_t seed, const TargetPlan& plan);
TargetRun train_gpt_until(Gpt& m, Adam& adam, int64_t batch, uint64_t seed, const TargetPlan& plan);
TargetRun train_classifier_until(Classifier& m, Adam& adam, int64_t batch, uint64_t seed, const TargetPlan& plan);

}  // namespace ts::train
