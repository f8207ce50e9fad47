// course/gpt_report.hpp: what ch12 prints about its decoder-only model, kept out of the
// chapter so its main reads as the model and the loop (introduced in ch12). Every number and
// structural fact in these notes is read from the model, the batch or a measurement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "course/chapter.hpp"
#include "train/sampling.hpp"

namespace ts {

// How the runs are scored as they train: greedy held-out exact match every kCheckEvery steps,
// and the step at which it first reaches kTarget (the 95 %).
constexpr int64_t kCheckEvery = 100;
constexpr double kTarget = 0.95;

// --load / --save with bad input as UsageError (exit 2), naming the file; the sizes come from
// the checkpoint (a size knob given with another value is refused), dropout and the mask from knobs
train::GptConfig checkpoint_config_or_usage(const Chapter& ch, const std::string& dir, const train::GptConfig& knobs);
void load_or_usage(Chapter& ch, const std::string& dir, train::Gpt& m, train::Adam& adam);
void save_or_usage(const std::string& dir, train::Gpt& m, const train::Adam& adam);

// --check-grads: a tiny model of cfg's kind, every parameter vs finite differences, a verdict
void show_grad_check(Chapter& ch, const train::GptConfig& cfg);
// the sizes, the parameters per part and what tying the LM head saves; whether the head is
// tied is measured (the logits move with wte's row of a token not in the input), not read from cfg
void show_model(Chapter& ch, const train::Gpt& m);
// Of the parameter tensors named (state_dict names), the ones no logit depends on, measured: moving
// every value of one leaves every logit of the prompt "7 =" exactly where it was. Such a tensor
// (one the layout holds but no module reads, or one upstream of a head that reads storage of its
// own) gets no gradient from any backward (ch12's zero-gradient check).
std::vector<std::string> unread_by_forward(const train::Gpt& m, const std::vector<std::string>& names);
// the sequences of a batch with the targets the loss counts, measured from token_losses'
// per-position loss, and a verdict: the loss counts the answer's positions and no other
void show_loss_mask(Chapter& ch, const train::Gpt& m, const train::SeqBatch& b);

// The article's progress lines during training, a progress bar on a terminal, and at the end
// the speed, the step held-out exact match first reached 95 % and the loss curve.
struct TrainLog {
  Chapter& ch;
  int64_t every, steps;
  double loss_sum = 0;
  int64_t n = 0, correct = 0, tokens = 0, last_epoch = 0;
  void step(int64_t epoch, int64_t batch, double loss, int64_t correct_now, int64_t tokens_now, int64_t s,
            double seconds);
  void finish(const std::vector<double>& curve, double seconds, int64_t step_95, double seconds_95);
};

void show_held_out(Chapter& ch, const train::Gpt& m, double exact, const std::vector<int64_t>& wrong, double seconds);
// "N = words" for one number with the chosen sampler
void show_completion(Chapter& ch, const train::Gpt& m, int64_t n, const train::Sampler& s, uint64_t seed,
                     bool use_cache);
// one step of generating n's answer (the step the model is least sure of), transform by transform
void show_sampling_step(Chapter& ch, const train::Gpt& m, int64_t n, const train::Sampler& s, uint64_t seed);
// per setting (a fixed list, and the user's sampler): held-out exact match, and distinct
// outputs over `samples` samples of a few numbers
void show_settings(Chapter& ch, const train::Gpt& m, const train::Sampler& user, int64_t samples, uint64_t seed);
// the forward with a KVCache per block, one token at a time, against the same forward over the
// whole prefix, on the run's own model, as a verdict
void show_cache_check(Chapter& ch, const train::Gpt& m);
// tokens/s with and without the cache, per sequence length
void show_cache_speed(Chapter& ch, const train::Gpt& m);

// --vs-ch11: ch11's encoder-decoder with its defaults trained here on the same seed until its
// held-out exact match reaches kTarget (checked every kCheckEvery steps, as ch12's loop does, at most
// max_steps), then both models side by side: parameters, steps and seconds to 95 %, held-out
// exact match, positions run per answer
struct RunSummary {
  size_t params = 0;
  int64_t steps = 0, step_95 = -1;
  double seconds_95 = -1, held_out = 0;
};
void show_vs_ch11(Chapter& ch, const train::Gpt& m, const RunSummary& ours, int64_t max_steps);

}  // namespace ts
