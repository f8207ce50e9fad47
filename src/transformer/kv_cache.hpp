// kv_cache.hpp: decoding one token at a time with a per-layer cache (introduced in ch09,
// reused by ch10's greedy loop).
//
// Article 001's DecoderBlock keeps, for each layer i, the rows the layer has seen so far in
// state[2][i] and appends the new token's row at every inference step
// (key_values = torch.cat((state[2][i], X), dim=1)); the new row then attends over all of
// them, so no causal mask is needed: the cache only holds the past. Here the same idea runs
// on article 002's pre-LN DecoderLayer / Decoder (src/transformer/annotated.hpp), whose forward
// takes the cache as an argument (no second copy of the layer), in two flavours:
//
//   CacheKind::Inputs      article 001 as written: cache the rows self-attention reads
//                          (norm(x) in the pre-LN layer) and project keys and values of
//                          ALL cached rows again at every step; cross-attention projects
//                          the memory again at every step too.
//   CacheKind::KeysValues  what "KV cache" usually means: cache the projected keys and
//                          values, so a step projects only its own row; the memory's keys
//                          and values are projected once, at the first step.
//
// Both give, row for row, what the full masked pass gives (up to float rounding) -- in eval
// mode. In train mode every call draws fresh dropout masks, so no two passes agree.
//
// Multiply-adds (MACs) are counted for the matrix products only; softmax, LayerNorm and the
// additions are O(T*C) per layer and left out.
// Shapes: B batch, t tokens decoded so far, T target length, S memory length, C = d_model,
// H heads, D = C/H, F = d_ff.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exact/tensor.hpp"
#include "transformer/annotated.hpp"

namespace ts {

// Multiply-adds of the matrix products a pass runs, by part of the decoder layer.
struct MacCount {
  uint64_t self_proj = 0;   // self-attention: Q, K, V and output projections
  uint64_t self_attn = 0;   // self-attention: Q K^T and weights V
  uint64_t cross_proj = 0;  // cross-attention: Q, K, V (of the memory) and output projections
  uint64_t cross_attn = 0;  // cross-attention: Q K^T and weights V
  uint64_t ffn = 0;         // feed-forward: w_1 and w_2
  uint64_t total() const { return self_proj + self_attn + cross_proj + cross_attn + ffn; }
  MacCount& operator+=(const MacCount& o);
};

enum class CacheKind { Inputs, KeysValues };

// The caches of a whole decoder stack (one DecoderLayerCache per layer, annotated.hpp: the
// cache is an argument of the layers' own forward), and the products run so far.
struct DecoderCache {
  CacheKind kind = CacheKind::KeysValues;
  std::vector<DecoderLayerCache> layers;  // one per decoder layer
  MacCount macs;
  DecoderCache(CacheKind kind, size_t n_layers);
};

// torch.cat((a, b), dim=1): a (B,t,C) or empty, b (B,u,C) -> (B,t+u,C)
Tensor cat_dim1(const Tensor& a, const Tensor& b);

// One new token through the whole stack and its final norm: decoder(x, memory, src_mask, None,
// caches), the same Decoder::operator() as the full pass, with each layer's cache; then the
// products that step ran are added to cache.macs (counted from the caches' lengths).
// x (B,1,C) (the embedded new token) -> (B,1,C), the row decoder(...) gives at that position
Tensor decoder_step(Decoder& decoder, const Tensor& x, const Tensor& memory, const BTensor* src_mask,
                    DecoderCache& cache);

// The products one decoding step runs in one layer, as decoder_step counts them: the layer's cache
// holds t rows after the step; memory_cached: the key/value cache already holds the memory's keys
// and values (every step after the first). Nothing is run: ch09 sums these over the steps to come.
MacCount decoder_step_macs(CacheKind kind, int64_t B, int64_t t, int64_t S, int64_t C, int64_t F,
                           bool memory_cached);

// The products of article 002's full masked pass (Decoder::operator()) on T target rows over
// S memory rows, N layers: each layer projects all T rows, scores the full T x T matrix
// (masked entries included), attends over the S memory rows and runs the FFN on T rows.
MacCount decoder_full_pass_macs(int64_t N, int64_t B, int64_t T, int64_t S, int64_t C, int64_t F);

}  // namespace ts
