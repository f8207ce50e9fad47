// train/model.hpp: the course's encoder-decoder (article 002's create_model, as ch10 builds it)
// made trainable: forward with caches, backward by hand, parameters in one flat buffer
// named by the PyTorch twin's state_dict keys (introduced in ch11).
//
// Differences from ch10's EncoderDecoder, all deliberate:
//   - the feed-forward has article 004's ReLU: w_2(dropout(relu(w_1(x)))) (article 002's
//     listing has no activation, which makes it one linear map, ch05);
//   - pre-LN as article 002 (x + dropout(f(LN(x)))) or, with pre_ln = false, post-LN as
//     article 004 and the paper (LN(x + dropout(f(x)))); the final LayerNorms stay either way;
//   - the generator's log_softmax is fused into the cross-entropy (the loss takes logits,
//     as article 004's SparseCategoricalCrossentropy(from_logits=True)).
// ch11 checks at step 0 that this forward still gives ch10's module's output (module_check.hpp):
// an edit of src/transformer/annotated.cpp must be made here too.
// Shapes: B batch, S source length, T target length (tar_inp), C = d_model, H heads, D = C/H,
// F = d_ff, V vocabulary. Activations are row-major (B*T, C) arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "train/numbers.hpp"
#include "train/ops.hpp"

namespace ts::train {

struct ModelConfig {
  int64_t src_vocab = 13, tgt_vocab = 33;  // V_src, V_tgt (train/numbers.hpp)
  int64_t layers = 2;                      // N encoder and N decoder layers
  int64_t d_model = 64, heads = 4, d_ff = 256;
  int64_t max_len = 32;                    // rows of the positional table
  double dropout = 0.1;
  bool pre_ln = true;        // false: post-LN (article 004)
  bool scale_scores = true;  // false: scores are not divided by sqrt(D) (an exercise)
  bool look_ahead = true;    // false: create_mask drops the look-ahead mask (an exercise)
  bool relu = true;          // false: the feed-forward without its ReLU, as article 002's listing
                             // and ch10's PositionwiseFeedForward (check_against_module)
  double label_smoothing = 0.0;
};

// One parameter tensor: its state_dict key, shape, and where it sits in the flat buffer.
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  size_t offset = 0, numel = 0;
};

// Offsets of every parameter, grouped as the modules group them.
struct Layout {
  struct Attn { size_t w[4], b[4]; };  // linears 0..3: query, key, value, output (C,C), (C)
  struct Ffn { size_t w1, b1, w2, b2; };  // w_1 (F,C), b_1 (F), w_2 (C,F), b_2 (C)
  struct Norm { size_t a, b; };           // a_2, b_2 (C)
  struct Enc { Attn self_attn; Ffn ff; Norm norm[2]; };
  struct Dec { Attn self_attn, src_attn; Ffn ff; Norm norm[3]; };
  std::vector<Enc> enc;
  std::vector<Dec> dec;
  Norm enc_norm{}, dec_norm{};
  size_t src_lut = 0, tgt_lut = 0, proj_w = 0, proj_b = 0;
  std::vector<ParamSpec> specs;  // model.parameters() order of article 002's Transformer
  size_t total = 0;
};
Layout make_layout(const ModelConfig& cfg);

// Where forward and backward live, from the compiler's __FILE__: "src/train/model.cpp".
std::string model_source();

template <class F>
struct Model {
  ModelConfig cfg;
  Layout layout;
  std::vector<F> params;  // (total) every parameter, layout.specs order
  std::vector<F> pe;      // (max_len, C) sinusoidal positions (a buffer, not trained)
};

// The weights torch.manual_seed(seed) then article 002's create_model(V_src, V_tgt, N, C, F, H)
// gives (ch10's ts::create_model, xavier_uniform_ included), copied into the flat buffer.
Model<float> init_model(const ModelConfig& cfg, uint64_t seed);
// The same model in double precision (for the finite-difference check).
Model<double> to_double(const Model<float>& m);

// How the masked per-token losses become one number:
//   ArticleMean  article 004's loss_fun: reduce_mean over ALL B*T positions (padding counts as 0)
//   TokenMean    the mean over the real (unpadded) target tokens only
enum class Reduction { ArticleMean, TokenMean };

template <class F>
struct LnCache { std::vector<F> y, mean, rstd; };
template <class F>
struct AttnCache {
  std::vector<F> q, k, v;       // (B,T,C), (B,S,C), (B,S,C) projections
  std::vector<F> qh, kh, vh;    // (B,H,T,D), (B,H,S,D), (B,H,S,D)
  std::vector<F> p, keep;       // (B,H,T,S) attention weights, dropout mask
  std::vector<F> ctxh, ctx;     // (B,H,T,D), (B,T,C)
  std::vector<F> out;           // (B,T,C) after linears[3]
};
template <class F>
struct FfnCache { std::vector<F> h, a, keep, ad, out; };  // (N,F) x4, (N,C)
// One residual sublayer: pre-LN y = x + drop(f(LN(x))); post-LN y = LN(x + drop(f(x))).
template <class F>
struct SublayerCache {
  std::vector<F> x;         // (N,C) input
  LnCache<F> ln;            // pre: LN(x); post: LN(sum)
  std::vector<F> keep, fd;  // dropout of f's output
  std::vector<F> sum;       // post-LN: x + fd
  std::vector<F> y;         // (N,C) output
};

// Everything one forward keeps for its backward, and the gradient buffer.
template <class F>
struct Workspace {
  int64_t B = 0, S = 0, T = 0;
  MasksT<F> masks;
  std::vector<F> src_emb, src_keep, src_x;  // (B,S,C) embedding + positions, dropout mask, output
  std::vector<F> tgt_emb, tgt_keep, tgt_x;  // (B,T,C)
  struct Enc { SublayerCache<F> s[2]; AttnCache<F> attn; FfnCache<F> ffn; };
  struct Dec { SublayerCache<F> s[3]; AttnCache<F> self_attn, src_attn; FfnCache<F> ffn; };
  std::vector<Enc> enc;
  std::vector<Dec> dec;
  LnCache<F> enc_norm, dec_norm;  // enc_norm.y is the memory (B,S,C)
  std::vector<F> logits, probs;   // (B*T, V)
  std::vector<F> loss;            // (B*T) masked per-token loss
  std::vector<F> grads;           // (total) same layout as the parameters
  std::vector<F> tmp[9];          // scratch for the backward pass
};

// encoder + decoder + generator: fills w (caches, logits), returns the SUM of the masked
// per-token losses. training: dropout on. rng: the dropout masks.
template <class F>
F forward(const Model<F>& m, Workspace<F>& w, const Batch& b, bool training, Rng& rng);
// Adds d(loss)/d(params) into w.grads, loss = sum of masked per-token losses / denom.
template <class F>
void backward(const Model<F>& m, Workspace<F>& w, const Batch& b, F denom);
// The denominator of a reduction for batch b: B*T or the number of real target tokens.
int64_t reduction_denominator(const Batch& b, Reduction r);
// Correct argmax predictions over the real target tokens of the last forward (with_padding:
// over all B*T positions, a padding position counting as correct when its argmax is 0).
template <class F>
int64_t correct_tokens(const Workspace<F>& w, const Batch& b, int64_t V, bool with_padding = false);

}  // namespace ts::train
