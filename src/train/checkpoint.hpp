// train/checkpoint.hpp: --save DIR / --load DIR for ch11 (introduced in ch11).
//   DIR/model.safetensors      every parameter under the twin's state_dict key (float32)
//   DIR/optimizer.safetensors  Adam's exp_avg / exp_avg_sq per parameter ("<key>.exp_avg", ...)
// Both carry the step in "__metadata__"; model.safetensors also the model's sizes. Each file
// is written atomically (train/safetensors.hpp); a load whose two steps disagree (a save
// interrupted between the two renames) is refused.
#pragma once

#include <string>

#include "train/adam.hpp"
#include "train/model.hpp"
#include "train/safetensors.hpp"

namespace ts::train {

void save_checkpoint(const std::string& dir, const Model<float>& m, const Adam& adam);
// Fills m.params and adam from DIR; m.layout says which keys and shapes are expected.
// Throws FileError naming the first missing, extra or mis-shaped tensor.
void load_checkpoint(const std::string& dir, Model<float>& m, Adam& adam);

}  // namespace ts::train
