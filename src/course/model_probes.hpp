// model_probes.hpp: facts about the modules a learner may edit, measured by running them, so a
// chapter's words follow the code rather than what the articles say it does (introduced in
// ch05 and ch07, for issue "edit anything and the chapter stays true").
//
// Each probe runs the module's own operator() in eval mode on inputs it builds itself, with
// no random draw, so calling it never changes what a chapter prints as PyTorch would.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "exact/tensor.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

namespace ts {

// Which activation FeedForward::operator() runs between its two Linears: a FeedForward with
// identity Linears (C = F = 33, no draw) on z = -4, -3.75, ..., 4 gives the activation itself.
// "GELU", "ReLU", "none" (the identity: no activation) or "" (another function).
std::string feed_forward_activation();
// The same, measured on a copy of a model's own feed-forward `ff` (its activation and article
// settings kept, its Linears made identities): what that model's FeedForward::operator() runs.
std::string feed_forward_activation(const FeedForward& ff);
// The named activation (one of feed_forward_activation()'s answers except ""), on x.
Tensor apply_activation(const std::string& name, const Tensor& x);
// The activation's name for a sentence: the name, or "an activation that is neither GELU nor ReLU".
std::string activation_words(const std::string& name);
// A note on a step that depends on the activation `act` (feed_forward_activation()'s answer):
// `gelu_text` when FeedForward runs GELU, as article 000 builds it, else `other_text` with {act}
// = activation_words(act). Both marked N_(), translated here.
std::string activation_note(const std::string& act, const char* gelu_text, const char* other_text);

// What TransformerEncoderLayer::operator() adds to its input, measured on x with an eval-mode
// copy of `layer` (no dropout, no draw): a = MHA(LN1(x)), f = FFN(LN2(x + a)).
struct ResidualCheck {
  double gap = 0;           // max |layer(x) - (x + a + f)|
  double scale = 0;         // max |layer(x)|, what gap compares with
  // d = layer(x) - (x + a + f) projected on the input x:  k = <d, x> / <x, x>, and the share of
  // |d|^2 that k x explains (1: the difference is k times the input itself)
  double input_k = 0, input_share = 0;
  bool holds() const { return gap <= 1e-5 * (1 + scale); }
  // What the layer does instead, in words, from k and its share: "it adds its input 2 times
  // instead of once" when k x explains at least 90 % of the difference, else that it no longer
  // returns its input plus the two sublayers' outputs ("" when holds()).
  std::string instead() const;
};
ResidualCheck pre_ln_residuals(const TransformerEncoderLayer& layer, const Tensor& x);
// The same for TransformerEncoderLayer::post_ln (the paper's order), rebuilt from the layer's
// own sublayers on an eval-mode copy: x1 = LN1(x + MHA(x)), out = LN2(x1 + FFN(x1)). Only gap
// and scale are measured (a norm after each add leaves no input share to project).
ResidualCheck post_ln_rebuilt(const TransformerEncoderLayer& layer, const Tensor& x);

// Which tokens' outputs a sequence mixer `f` ((1,T,C) -> (1,T,C), deterministic: an eval-mode
// attention) lets each token reach: for each probed token j (the first `most` of the T), f runs
// again on x with row j moved (+1 on every value), and each other token i whose output row
// changed counts as reached from j. A mix of all tokens reaches every pair; attending to
// itself alone reaches none.
struct MixProbe {
  size_t probed = 0;          // tokens j moved
  size_t pairs = 0;           // (j, i != j) pairs looked at
  size_t reached = 0;         // of them, outputs that moved
  size_t first_j = 0, first_i = 0;  // the first pair whose output did not move (reached < pairs)
};
MixProbe probe_mixing(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, size_t most = 8);

// Which output numbers of article 000's MultiHeadAttention (ch04) each head reaches: on a copy,
// head h's value Linear doubled (its output doubles, its weights stay), the layer runs again on
// the same query, key, value and every output number that changed counts. Mixing the heads
// (output_linear over their concatenation) reaches all of them from every head.
struct HeadReach {
  bool is_shown = true;              // the layer's own output equals `shown`, the tensor printed as its output
  size_t numbers = 0;                // output numbers (B*T*C)
  std::vector<size_t> moved;         // per head: output numbers that changed
  size_t fewest_head = 0;            // the head that reached the fewest
  bool all() const { return !moved.empty() && moved[fewest_head] == numbers; }
};
// shown: what the chapter printed as the layer's output (checked to be the layer's)
HeadReach probe_head_reach(const MultiHeadAttention& mha, const Tensor& query, const Tensor& key, const Tensor& value,
                           const Tensor& shown);

// The parameters of one encoder layer: its two LayerNorms, the heads' Linears, output_linear
// and the feed-forward's two Linears.
size_t parameter_count(const TransformerEncoderLayer& layer);

// Whether article 000's Embeddings::operator() gives LayerNorm(token + position) of `ids`
// (before its Dropout): measured on an eval-mode copy against the modules it holds, no draw.
bool embeddings_apply_layer_norm(const Embeddings& e, const ITensor& ids);

// What create_model's nn.Sequential(Embeddings, PositionalEncoding) does to a token, in words
// for the note under `model.src_embed` (ch10): the factor Embeddings multiplies a looked-up row
// by, what PositionalEncoding adds (compared with its sinusoidal pe buffer), and its dropout.
// Measured on an eval-mode copy, no draw. `V` names the vocabulary ("V_src").
std::string embed_sequential_words(const EmbedSequential& e, const std::string& V);
// What the Generator does after its Linear (log_softmax, softmax, nothing or something else),
// in words for the note under `model.generator`: out = generator(x) against proj(x), x fixed.
std::string generator_words(const AnnotatedGenerator& g, const std::string& V);

// train::block_wiring's answer (ch12's and ch13's blocks) in the learner's words: "pre-LN",
// "post-LN", or that the block is neither.
std::string wiring_words(const std::string& wiring);

}  // namespace ts
