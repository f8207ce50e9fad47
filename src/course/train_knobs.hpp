// course/train_knobs.hpp: the knobs ch11, ch12 and ch13 declare alike, declared once so the
// three chapters give them the same names, ranges and help (introduced in ch11). Each chapter
// keeps its own knobs (--steps, --batch, --layers, ...) beside these calls.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "course/chapter.hpp"
#include "course/settings.hpp"
#include "train/trainer.hpp"

namespace ts {

// --prompt N / --translate N: a number of ch11's task, 0 to train::kMaxNumber in digits (whole_number)
int64_t task_number(const std::string& flag, const std::string& text);

// --d-model C, --heads H (must divide C; check_model_dims after parsing), --d-ff F
void width_options(Chapter& ch, int64_t& d_model, int64_t& heads, int64_t& d_ff);
// --dropout p, --lr (Adam's learning rate); `lr_help` replaces the generic help where given
void adam_options(Chapter& ch, double& dropout, double& lr, const Help& lr_help = "");
// --dropout in [0, 1); --lr in (0, 1] and at least float32's smallest normal number, since Adam's
// step lr / (1 - beta1^t) is a float32 (train/adam.cpp): below it the step is subnormal or 0.
// UsageError naming the flag otherwise.
void check_adam_knobs(double dropout, double lr);
// --log-every N (how often the progress line prints), --threads 1 to the machine's cores
// (training's threads: they take the batch's fixed parts, so results do not depend on them);
// `log_help` replaces the generic help where given
void loop_options(Chapter& ch, int64_t& log_every, int64_t& threads, const Help& log_help = "");
// --save DIR, --load DIR (safetensors weights and Adam's state)
void checkpoint_options(Chapter& ch, std::string& save_dir, std::string& load_dir);
// --check-grads runs alone: any of `flags` given beside it (--save, --load, --steps, ...) would be
// silently ignored, so it is refused (UsageError naming the flag).
void check_grads_alone(const Chapter& ch, std::initializer_list<const char*> flags);

// ch11's encoder-decoder as its settings make it, once (ch11 binds its flags to this config; ch14
// trains the same): create_model's sizes, dropout and label smoothing from s, the course's
// vocabularies (train/numbers.hpp), article 004's differences at their defaults (ModelConfig).
train::ModelConfig encdec_config(const Ch11Settings& s);
// The Trainer ch11 runs on cfg: init_model(cfg, seed) (create_model's weights for that seed), s's
// threads, Adam at s's lr.
train::Trainer encdec_trainer(const train::ModelConfig& cfg, const Ch11Settings& s, uint64_t seed);

}  // namespace ts
