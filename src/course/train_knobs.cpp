// course/train_knobs.cpp: see train_knobs.hpp.
#include "course/train_knobs.hpp"

#include <limits>

#include "course/errors.hpp"
#include "course/i18n.hpp"
#include "train/batch_parts.hpp"
#include "train/numbers.hpp"

namespace ts {

int64_t task_number(const std::string& flag, const std::string& text) {
  return whole_number(flag, text, train::kMaxNumber);
}

void width_options(Chapter& ch, int64_t& d_model, int64_t& heads, int64_t& d_ff) {
  ch.option("--d-model", d_model, _("C, the model width"), 2, 1024);
  ch.option("--heads", heads, _("H, attention heads; must divide --d-model"));
  ch.option("--d-ff", d_ff, _("F, the feed-forward width"), 1, 8192);
}

void adam_options(Chapter& ch, double& dropout, double& lr, const Help& lr_help) {
  ch.option("--dropout", dropout, _("dropout rate"));
  // 0 is no learning rate, and below float32's smallest normal number Adam's step is lost (check_adam_knobs)
  ch.option("--lr", lr, lr_help.empty() ? Help(N_("Adam's learning rate")) : lr_help,
            NearZero{false, std::numeric_limits<float>::min()});
}

void check_adam_knobs(double dropout, double lr) {
  if (!(dropout >= 0.0 && dropout < 1.0))
    throw UsageError(trf("--dropout must be in [0, 1), got {v}", fmt::arg("v", dropout)));
  if (!(lr > 0.0 && lr <= 1.0))
    throw UsageError(trf("--lr must be in (0, 1], got {v}", fmt::arg("v", lr)));
  // Adam's step lr / (1 - beta1^t) >= lr is a float32 (train/adam.cpp)
  constexpr float kSmallest = std::numeric_limits<float>::min();
  if (lr < kSmallest)
    throw UsageError(trf("--lr {v} is too small: Adam's step, lr / (1 - beta1^t), is a float32, subnormal or 0 below "
                         "{min} (float32's smallest normal number): give at least {min}",
                         fmt::arg("v", lr), fmt::arg("min", kSmallest)));
}

void loop_options(Chapter& ch, int64_t& log_every, int64_t& threads, const Help& log_help) {
  ch.option("--log-every", log_every,
            log_help.empty() ? Help(N_("print the progress line every N batches")) : log_help, 1, 1000000);
  // the batch is split into a fixed number of parts, which the threads take (train/batch_parts.hpp)
  ch.option("--threads", threads, _("threads for training, 1 to this machine's cores (results do not depend on it)"), 1,
            train::max_training_threads());
}

void checkpoint_options(Chapter& ch, std::string& save_dir, std::string& load_dir) {
  ch.option("--save", save_dir, _("write the weights and Adam's state to DIR as safetensors"));
  ch.option("--load", load_dir, _("start from the checkpoint in DIR (then train only if --steps is given)"));
  ch.value_kind("--save", "DIR");
  ch.value_kind("--load", "DIR");
}

void check_grads_alone(const Chapter& ch, std::initializer_list<const char*> flags) {
  for (const char* flag : flags)
    if (ch.given(flag))
      throw UsageError(trf("--check-grads checks the gradients of its own tiny model and trains, loads or saves "
                           "nothing: drop {flag} (or --check-grads)",
                           fmt::arg("flag", flag)));
}

train::ModelConfig encdec_config(const Ch11Settings& s) {
  train::ModelConfig cfg;
  cfg.src_vocab = train::source_vocab().size(), cfg.tgt_vocab = train::target_vocab().size();
  cfg.layers = s.layers, cfg.d_model = s.d_model, cfg.heads = s.heads, cfg.d_ff = s.d_ff;
  cfg.dropout = s.dropout, cfg.label_smoothing = s.label_smoothing;
  return cfg;
}

train::Trainer encdec_trainer(const train::ModelConfig& cfg, const Ch11Settings& s, uint64_t seed) {
  train::Trainer tr(train::init_model(cfg, seed), int(s.threads), seed);
  tr.adam().lr = s.lr;
  return tr;
}

}  // namespace ts
