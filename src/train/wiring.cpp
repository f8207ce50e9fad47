// train/wiring.cpp: see wiring.hpp.
#include "train/wiring.hpp"

#include "course/i18n.hpp"

namespace ts::train {

std::string wiring_words(const std::string& wiring) {
  if (wiring == "pre-LN") return _("pre-LN");
  if (wiring == "post-LN") return _("post-LN");
  return _("LayerNorms neither pre-LN nor post-LN (measured on one block)");
}

}  // namespace ts::train
