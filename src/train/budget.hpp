// train/budget.hpp: what a ch11 run costs, estimated from its settings before any work
// (introduced in ch11, for Chapter::budget like every other chapter's estimate).
#pragma once

#include <cstdint>

#include "train/params.hpp"

namespace ts::train {

struct TrainCost {
  double bytes = 0;  // peak memory: parameters, Adam's moments, gradients, activations
  double madds = 0;  // multiply-adds of `steps` train steps and the evaluation
};

// cfg's model trained `steps` steps of `batch` numbers on `threads` threads, then evaluated on
// `evaluated` numbers (greedy, up to max_new words each).
TrainCost training_cost(const ModelConfig& cfg, int64_t batch, int64_t steps, int64_t threads, int64_t evaluated,
                        int64_t max_new);

}  // namespace ts::train
