// decoder_notes.hpp: what the decoder chapters say about masks, sublayers, attention's scaling
// and the cached decoder, each read from the objects (introduced in ch09, used by ch10).
//
// A learner who edits the model (flips the causal mask, drops a residual, removes the
// sqrt(d_k) division, edits DecoderLayer) gets sentences that follow the edit: each helper
// below measures the thing it names instead of repeating what the article's code does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/trace.hpp"
#include "course/chapter.hpp"
#include "exact/tensor.hpp"
#include "transformer/annotated.hpp"
#include "transformer/kv_cache.hpp"

namespace ts {

// mask[t, s] == (s <= t) for every entry: the causal lower triangle.   mask (T,S) or (1,T,S)
bool is_lower_triangle(const BTensor& mask);

// Which keys each query may attend to, read from the keep-mask (True = keep), e.g.
// "token t sees tokens 0..t, itself and the earlier ones", "token t sees tokens t..4, itself
// and the later ones...", "every token sees all 5", else row by row ("row 0: 0,2; row 1: ...").
// mask (T,S) or (1,T,S)
std::string mask_sees(const BTensor& mask);

// Masked self-attention weights against their mask, batch 0, all heads.   w (B,H,T,T), mask (T,T)
struct SelfAttentionStats {
  float above = 0.0f;        // largest |weight| above the diagonal (a later token)
  size_t mask_above = 0;     // entries above the diagonal the mask keeps (a causal mask: 0)
  size_t kept = 0;           // weights the mask keeps, over the heads
  size_t kept_zeros = 0;     // ... that are exactly 0 (dropout's, in train mode)
  float row_err = 0.0f;      // max |row sum - 1|
  double self = 0.0, other = 0.0;  // mean weight on itself / on another token, rows seeing 2 or more
  size_t n_other = 0;
};
SelfAttentionStats self_attention_stats(const Tensor& w, const BTensor& mask);

// What a SublayerConnection computes, measured on x with two probe sublayers (zero and
// identity), its dropout off: "x + f(norm(x))" (pre-LN residual), "norm(x + f(x))" (post-LN),
// "x + f(x)" (no norm), "f(norm(x))" (no residual), "0.5 x + f(norm(x))" (the input added back at
// the weight measured, <out, x> / <x, x> with f = 0), or "" when none of these fits.
// x (B,T,C)
std::string sublayer_formula(const SublayerConnection& sub, const Tensor& x);

// The number attention_heads() divides the scores by, measured on a probe of H heads of D:
// one query row of 1/D over two keys (ones, zeros), so the scores are 1 and 0 before the
// division, and the weights' log-ratio is 1 / divisor. sqrt(D) for article 002's attention.
double score_divisor(int64_t h, int64_t d_k);

// The chapters' notes and verdicts, each from the objects it names (ch09 unless said):
// "OK: self_attn and src_attn are deep copies ..." and "OK: inside one block the 4 Linears ..."
std::string copies_verdicts(Chapter& ch, const DecoderLayer& layer);
// sublayer_formula in words ("x + f(norm(x)) (pre-LN: ...)")
std::string sublayer_words(const SublayerConnection& sub, const Tensor& x);
// the weights' note (the mask check over the heads; dropout's zeros only where dropout ran and
// zeroed weights the mask keeps) and the mean weight on itself vs on another token
struct SelfAttentionNotes {
  std::string weights, self_vs_other;
};
SelfAttentionNotes self_attention_notes(Chapter& ch, const MultiHeadedAttention& attn, const BTensor& mask);
// article 002's sqrt(d_k) erratum, with the divisor measured by score_divisor
std::string scaling_erratum(const MultiHeadedAttention& attn);
// Step 5: row std of pre-LN out vs post-LN, and the two verdicts
std::string pre_post_note(Chapter& ch, const Tensor& out, const Tensor& post, double eps,
                          const std::vector<std::string>& tokens);
// Largest self-attention weight above the diagonal (a later token) in the decoder's last full
// pass, over its layers and heads; 0 when the future was hidden. Read it before a cached step
// overwrites the layers' attn.
float future_weight(const Decoder& decoder);
// Why the cached decoder's rows are not the full pass's, from what the run measured: train mode;
// a full pass that let tokens see later ones (`future` > 0: by a mask that is not the causal
// triangle, or without its mask); a layer's cache holding another number of positions than the
// `positions` decoded (or of the `memory_rows`), naming KVCache::append's file and line; else the
// layer code itself answering differently for a cached row (ch09, ch10). The cached and full
// passes run the same DecoderLayer code (the cache is an argument), so no copy is blamed.
std::string cached_rows_cause(bool training, float future, const BTensor& tgt_mask, const DecoderCache& cache,
                              size_t positions, size_t memory_rows);

// ch10: a decoder layer's parameters = an encoder layer's + a cross-attention block + a LayerNorm
std::string decoder_layer_params_verdict(Chapter& ch, uint64_t encoder_layer, uint64_t decoder_layer,
                                         const DecoderLayer& layer);

// The sizes of a decoder stack: N layers, T target and S memory rows, C = d_model, F = d_ff.
struct DecoderShape {
  size_t N, T, S;
  int64_t C, F;
};

// ch09's Step 7 tables: per decoding step (the K/V cache's keys shape, multiply-adds with no
// cache, with article 001's input cache, with the K/V cache), and the totals by part of the
// layer, one column per way of decoding (a short column name, spelled out in a key above).
struct StepCost {
  std::string token;
  Shape k_shape;
  uint64_t no_cache = 0, inputs = 0, keys_values = 0;
};
std::string step_cost_table(const std::vector<StepCost>& steps);
struct CostWay {
  std::string column, description;  // "K/V cache", "generate, K/V cache"
};
std::string total_cost_table(size_t T, const std::vector<std::pair<CostWay, MacCount>>& ways);
// Step 7 whole: the per-step table, the totals, what the caches hold, and the two cost verdicts
std::string decoding_costs(Chapter& ch, const DecoderShape& d, const std::vector<StepCost>& steps,
                           const MacCount& inputs, const DecoderCache& kv_cache);

// "Decoder = 6 deep copies of the layer, then a final LayerNorm.", rendered from a trace of one
// decoder call (what ran directly inside "Decoder", counted); when the trace shows another
// structure, what ran and what article 002's Decoder holds, each said as such; fewer layers ran
// than the decoder holds (n_layers): NOT OK, naming Decoder::operator().
std::string decoder_structure_words(Chapter& ch, const std::vector<TraceEvent>& events, size_t n_layers);
// What a traced Encoder or Decoder (`stack`) ran: how many of its `layer` children, whether
// they were all n_layers of them followed by a final LayerNorm, and what ran, in words.
struct StackRun {
  size_t layers = 0;
  bool whole = false;
  std::string words;
};
StackRun stack_run(const std::vector<TraceEvent>& events, const char* stack, const char* layer, size_t n_layers);

}  // namespace ts
