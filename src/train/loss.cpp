// train/loss.cpp: the cross-entropy and its backward (see loss.hpp for the formulas).
#include "train/loss.hpp"

#include <algorithm>
#include <cmath>

namespace ts::train {

using F = float;

void cross_entropy_forward(F* loss, F* probs, const F* logits, const int64_t* y, int64_t N, int64_t V, int64_t pad,
                           F eps) {
  for (int64_t n = 0; n < N; ++n) {
    const F* l = logits + n * V;
    F* pr = probs + n * V;
    // log p = logits - max - log(sum exp(logits - max))
    F mx = l[0];
    for (int64_t v = 1; v < V; ++v) mx = std::max(mx, l[v]);
    F sum = 0;
    for (int64_t v = 0; v < V; ++v) {
      pr[v] = std::exp(l[v] - mx);
      sum += pr[v];
    }
    const F lse = mx + std::log(sum);
    for (int64_t v = 0; v < V; ++v) pr[v] /= sum;
    if (y[n] == pad) {
      loss[n] = 0;
      continue;
    }
    // -sum_v q_v log p_v with q = (1 - eps) onehot + eps / V
    F smooth = 0;
    if (eps != F(0))
      for (int64_t v = 0; v < V; ++v) smooth += lse - l[v];
    loss[n] = (F(1) - eps) * (lse - l[y[n]]) + eps / F(V) * smooth;
  }
}


void cross_entropy_backward(F* dlogits, const F* probs, const int64_t* y, const F* dloss, int64_t N, int64_t V,
                            int64_t pad, F eps) {
  for (int64_t n = 0; n < N; ++n) {
    if (y[n] == pad) continue;
    const F* pr = probs + n * V;
    F* d = dlogits + n * V;
    const F g = dloss[n], off = eps / F(V);
    for (int64_t v = 0; v < V; ++v) d[v] += (pr[v] - off - (v == y[n] ? F(1) - eps : F(0))) * g;
  }
}

}  // namespace ts::train
