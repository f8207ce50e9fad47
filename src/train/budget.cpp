// train/budget.cpp: see budget.hpp. The counts follow the forward of ch10's EncoderDecoder
// (src/transformer/annotated.cpp), which ch11 trains: per source token and
// encoder layer 4C^2 (Q, K, V, output) + 2CF (the feed-forward) + 2SC (scores and weighted sum);
// per target token and decoder layer twice the attention (self and cross); the generator CV.
// The backward costs about twice the forward.
#include "train/budget.hpp"

#include <algorithm>

namespace ts::train {

TrainCost training_cost(const ModelConfig& cfg, int64_t batch, int64_t steps, int64_t threads, int64_t evaluated,
                        int64_t max_new) {
  // the longest number: 4 digits + <start>, <end>; its words: 6 + <start> (tar_inp)
  const double S = 6, T = 7;
  const double N = double(cfg.layers), C = double(cfg.d_model), F = double(cfg.d_ff), H = double(cfg.heads);
  const double V = double(std::max(cfg.src_vocab, cfg.tgt_vocab));
  const double P = double(make_layout(cfg).total);
  // one number's forward: multiply-adds, and the floats its caches keep for the backward
  const double fwd = S * N * (4 * C * C + 2 * C * F + 2 * S * C) + T * N * (8 * C * C + 2 * C * F + 2 * T * C + 2 * S * C) +
                     T * C * V;
  // the caches kept per number for the backward, counted as generously as the hand-written
  // path ch11 trained before the modules kept them: per attention 9 (B,T,C) arrays and 2 of
  // (B,H,T,S), per feed-forward 4 (B,T,F) and one (B,T,C), per sublayer 5 of (B,T,C); the
  // embeddings, logits and probabilities, and 9 scratch arrays of the widest row
  const double acts = S * (3 * C + N * (20 * C + 4 * F + 2 * H * S)) +
                      T * (3 * C + N * (34 * C + 4 * F + 2 * H * (T + S)) + 3 * V) +
                      9 * T * std::max({C, F, V, H * T});
  TrainCost c;
  // parameters, Adam's two moments, the untrained copy and the one step 4 compares, a gradient
  // buffer per thread; the caches of a batch, and the evaluation's beside them (the trainer's
  // stay allocated). An upper bound: training the modules, --batch 512 --d-model 256 --d-ff 1024
  // peaks at 0.77 GB (estimate 1.6; the hand-written path it was fitted to took 1.65 GB).
  c.bytes = 4 * (P * (5 + double(threads)) + acts * double(batch + evaluated));
  c.madds = 3 * fwd * double(batch) * double(steps) + fwd * double(evaluated) * double(max_new) / 2;
  return c;
}

}  // namespace ts::train
