// train/classifier_gradcheck.hpp: ch13's step-0 gradient check (introduced in ch13, for issue
// "edit anything": a learner's edit to a forward in src/transformer/ either flows into training
// or is caught here, naming the module whose backward no longer matches it).
//
// Each module ch13 trains is checked on its own, leaves first, on a copy of the model's weights
// (dropout off, nothing drawn from the generators training uses):
//   L(p) = sum_i y_i r_i,  y = module(x),  r fixed pseudo-random weights (so dL/dy = r)
//   fd_j = (L(p + h e_j) - L(p - h e_j)) / 2h  on a few sampled entries j of every parameter
//   (and of the module's input x), against the module's hand-written backward(dy = r).
// In float: h = kClsFdStep x max(1, |p_j|); a module passes when every |grad_j - fd_j| <=
// kClsFdTolerance x the scale of its tensor: the largest |fd| or |grad| over the tensor's sampled
// entries, at least a tenth of the module's largest. An entry that misses is tried again with h/4,
// centrally and from each side (a ReLU's kink spoils a central difference that straddles it).
#pragma once

#include <cstdint>
#include <string>

#include "train/classifier.hpp"

namespace ts::train {

constexpr double kClsFdStep = 1e-2, kClsFdTolerance = 1e-2;

struct ClsGradCheck {
  bool ok = true;
  int64_t modules = 0, tensors = 0, entries = 0;  // what was checked (tensors: distinct parameters)
  double maxrel = 0;                              // the largest |grad - fd| / its tensor's scale
  std::string module;  // the first module that disagrees ("" when ok)
  std::string tensor;  // its first tensor that disagrees ("feed_forward.linear_1.weight", "input")
  std::string site;    // "src/transformer/feed_forward.cpp:LINE FeedForward::backward", from the compiler
  double grad = 0, fd = 0, rel = 0;  // that entry
  int64_t nonfinite = 0;        // NaN/inf values in that module's `tensor` ("output", "input gradient", ...), rejected first
  std::string first_nonfinite;  // where the trace of its forward first saw one ("" when it did not)
};

// m's weights on batch b. per_tensor: entries sampled from each tensor (all of them when 0; the
// whole EncoderClassifier, last, samples 1, or 8 when per_tensor is 0).
ClsGradCheck check_classifier_grads(const Classifier& m, const ClsBatch& b, size_t per_tensor);

}  // namespace ts::train
