// train/classifier.hpp: article 000's encoder (learned positions, pre-LN, GELU, per-head
// Linears) made trainable, with a classification head on one vector per sentence: the final
// vector of the [CLS] position, or the mean of the real positions (introduced in ch13).
//
// The twin (tests/twins/classifier_reference.py) names the modules as article 000's
// TransformerEncoder does, under "encoder.", plus "classifier." for the head:
//   encoder.embeddings.{token_embeddings,position_embeddings}.weight, .layer_norm.{weight,bias}
//   encoder.layers.L.{layer_norm_1,layer_norm_2}.{weight,bias}
//   encoder.layers.L.attention.heads.H.{q,k,v}.{weight,bias}, .attention.output_linear.*
//   encoder.layers.L.feed_forward.{linear_1,linear_2}.*,   classifier.{weight,bias}
// Dropout (one rate) after the embeddings' LayerNorm, after the feed-forward, and on the
// pooled vector; none on the attention weights (article 000 has none there).
// Shapes: B sentences, T positions ([CLS] + words, padded), C = d_model, H heads, D = C/H,
// F = d_ff, K classes, V vocabulary.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/adam.hpp"
#include "train/model.hpp"  // ParamSpec
#include "train/ops.hpp"
#include "train/safetensors.hpp"  // FileError

namespace ts::train {

// The input: [CLS] then the words of ch11's target vocabulary (train/numbers.hpp).
//   ids: pad 0, the words 1..30, [CLS] 31   (V = 32)
int64_t cls_id();
int64_t classifier_vocab();
std::string classifier_token(int64_t id);  // "[CLS]", "<pad>" or the word

struct ClassifierConfig {
  int64_t vocab = 32, max_len = 8;  // rows of the token and position tables
  int64_t layers = 2, d_model = 64, heads = 4, d_ff = 256, classes = 10;
  double dropout = 0.1;
  bool mean_pool = false;  // false: the [CLS] vector; true: the mean over the real positions
};

struct ClassifierLayout {
  struct Lin { size_t w = 0, b = 0; };
  struct Norm { size_t w = 0, b = 0; };
  struct Layer {
    Norm ln1, ln2;
    std::vector<Lin> q, k, v;  // one Linear C -> D per head
    Lin out, ff1, ff2;
  };
  size_t tok = 0, pos = 0;
  Norm emb_ln;
  std::vector<Layer> layers;
  Lin head;
  std::vector<ParamSpec> specs;  // the twin's named_parameters() order
  size_t total = 0;
};

struct Classifier {
  ClassifierConfig cfg;
  ClassifierLayout layout;
  std::vector<float> params;  // (total)
};

// PyTorch's default inits, drawn from the course's Rng(seed): nn.Embedding N(0, 1), nn.Linear
// U(-1/sqrt(in), 1/sqrt(in)) for weight and bias, LayerNorm ones and zeros.
Classifier init_classifier(const ClassifierConfig& cfg, uint64_t seed);

// A padded batch of numbers: ids (B,T) = [CLS] + the words of n, labels (B) = n % 10.
struct ClsBatch {
  int64_t B = 0, T = 0;
  std::vector<int64_t> numbers, ids, labels;
};
ClsBatch make_cls_batch(const std::vector<int64_t>& numbers);
std::string make_cls_batch_site();  // "src/train/classifier.cpp:LINE make_cls_batch", from the compiler

// Everything one forward keeps for its backward, and the gradient buffer.
struct ClsWorkspace {
  struct Layer {
    std::vector<float> x, ln1, mean1, rstd1;  // (N,C) input, LN1(x), (N) x2
    std::vector<float> qh, kh, vh, p, keep;   // (B,H,T,D) x3, (B,H,T,T) attention weights, (unused) dropout
    std::vector<float> ctxh, ctx, attn, mid;  // (B,H,T,D), (N,C) merged, (N,C) output_linear, x + attn
    std::vector<float> ln2, mean2, rstd2;     // LN2(mid)
    std::vector<float> h, g, f, fkeep, fd;    // (N,F) linear_1, gelu; (N,C) linear_2, dropout mask, dropped
    std::vector<float> y;                     // (N,C) mid + fd
  };
  int64_t B = 0, T = 0;
  std::vector<float> mask;                         // (B,T,T) 1 = hide (padding keys)
  std::vector<float> emb, emb_ln, emb_mean, emb_rstd, emb_keep, x0;  // (N,C)
  std::vector<Layer> layers;
  std::vector<float> pooled, pool_keep, pooled_d;  // (B,C) the sentence vectors, dropout
  std::vector<float> logits, probs, loss;          // (B,K), (B,K), (B)
  std::vector<float> grads;                        // (total)
};

// The encoder and the head: fills w (caches, w.pooled, w.logits). training: dropout on.
void classifier_forward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b, bool training, Rng& rng);
// Its step 3, the head: one vector per sentence from the last layer's output x (B,T,C) into
// w.pooled (B,C), dropout, the Linear into w.logits (B,K). A probe may call it on an edited x.
void classifier_head_forward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b, const float* x, bool training,
                             Rng& rng);
// its file and line, from the compiler: "src/train/classifier.cpp:LINE classifier_head_forward"
std::string classifier_head_site();
// Cross-entropy of w.logits against the labels, averaged over the B sentences.
float classifier_loss(ClsWorkspace& w, const ClsBatch& b, int64_t K);
// Adds d(mean loss)/d(params) into w.grads (zero them first), the forward's ops in reverse.
void classifier_backward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b);
// The name of the activation the feed-forward runs, measured on it ("GELU", "ReLU", ...).
std::string classifier_activation();
// Where classifier_forward puts a layer's LayerNorms, measured on one token (train/wiring.hpp):
// "pre-LN" (x + f(LN(x))), "post-LN" (LN(x + f(x))), or "" for neither.
std::string classifier_block_wiring();
// argmax of each row of w.logits   -> (B)
std::vector<int64_t> predictions(const ClsWorkspace& w, int64_t K);

// DIR/model.safetensors and DIR/optimizer.safetensors, saved and read through ch11's folder
// code (train/checkpoint.hpp, kind "classifier"): every parameter under its twin key, Adam's
// moments, the sizes and the pooling in the metadata; load checks every key and shape
// (FileError naming the first one wrong) before it touches the model.
void save_classifier(const std::string& dir, const Classifier& m, const Adam& adam);
// --load's settings, as ch11's and ch12's: a size flag given (given(flag)) must agree with the
// checkpoint (FileError naming both otherwise), one not given takes the checkpoint's; the
// pooling is the checkpoint's unless --pool is given (a [CLS]-trained model read with --pool
// mean is an experiment, not an error).
ClassifierConfig classifier_checkpoint_config(const std::string& dir, const ClassifierConfig& asked,
                                              const std::function<bool(const std::string&)>& given);
void load_classifier(const std::string& dir, Classifier& m, Adam& adam);

}  // namespace ts::train
