// course/train_knobs.cpp: see train_knobs.hpp.
#include "course/train_knobs.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "course/errors.hpp"
#include "course/i18n.hpp"

namespace ts {

void width_options(Chapter& ch, int64_t& d_model, int64_t& heads, int64_t& d_ff) {
  ch.option("--d-model", d_model, _("C, the model width"), 2, 1024);
  ch.option("--heads", heads, _("H, attention heads; must divide --d-model"));
  ch.option("--d-ff", d_ff, _("F, the feed-forward width"), 1, 8192);
}

void adam_options(Chapter& ch, double& dropout, double& lr, const std::string& lr_help) {
  ch.option("--dropout", dropout, _("dropout rate"));
  ch.option("--lr", lr, lr_help.empty() ? std::string(_("Adam's learning rate")) : lr_help);
}

void checkpoint_options(Chapter& ch, std::string& save_dir, std::string& load_dir) {
  ch.option("--save", save_dir, _("write the weights and Adam's state to DIR as safetensors"));
  ch.option("--load", load_dir, _("start from the checkpoint in DIR (then train only if --steps is given)"));
}

void refuse_unwritable(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
    throw UsageError(trf("--save: cannot write to the folder '{dir}': choose a writable DIR", fmt::arg("dir", dir)));
  for (const char* f : {"/model.safetensors", "/optimizer.safetensors"})
    if (std::filesystem::is_symlink(dir + f))
      throw UsageError(trf("--save: refusing to overwrite {path}: it is a symbolic link", fmt::arg("path", dir + f)));
}

}  // namespace ts
