// train/loss.hpp: the cross-entropy with a padding mask and label smoothing, its forward beside
// its hand-written backward (introduced in ch11; ch13's classifier trains with it, and
// tests/twins/train_reference.py checks both against torch's F.cross_entropy). The layers'
// forward and backward live beside each module (src/transformer/annotated.cpp, nn.cpp, gpt.cpp).
// Like the modules' backward, cross_entropy_backward ADDS (+=) into its gradient buffer.
// Plain row-major arrays: logits (N,V) means N rows of V values.
#pragma once

#include <cstdint>

namespace ts::train {

// q = (1 - eps) onehot(y) + eps / V  (eps = label smoothing, 0 in the article);  p = softmax(logits)
// loss[n] = -sum_v q_v log p_v for a real target, 0 where y[n] == pad (the article's loss_ * mask)
// logits (N,V), y (N) -> loss (N); probs (N,V) kept for backward
void cross_entropy_forward(float* loss, float* probs, const float* logits, const int64_t* y, int64_t N, int64_t V,
                           int64_t pad, float eps);
// dlogits += (p - q) * dloss[n]   (N,V);  rows with y[n] == pad get nothing
// (dloss[n] is 1 / (B*T) for the article's reduce_mean, 1 / (#real tokens) for the per-token mean)
void cross_entropy_backward(float* dlogits, const float* probs, const int64_t* y, const float* dloss, int64_t N,
                            int64_t V, int64_t pad, float eps);

}  // namespace ts::train
