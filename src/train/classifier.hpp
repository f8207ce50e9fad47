// train/classifier.hpp: what training adds to ch13's model (transformer/encoder_classifier.hpp,
// article 000's encoder with a head on the final [CLS] vector or the mean of the real
// positions): the data, the flat parameters Adam updates, the loss, checkpoints (introduced in ch13).
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
#include "train/params.hpp"  // ParamSpec
#include "train/rng.hpp"
#include "train/safetensors.hpp"  // FileError
#include "transformer/encoder_classifier.hpp"

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

// The model Adam updates and checkpoints save: article 000's modules (make_classifier_module),
// which hold the weights themselves; model.named_parameters() gives them by the twin's keys, in
// the twin's order. The forward runs this module (classifier_forward); nothing is copied per step.
struct Classifier {
  ClassifierConfig cfg;
  EncoderClassifier model;
  size_t parameter_count();  // every weight of model, summed over named_parameters()
};

// PyTorch's default inits, drawn from the course's Rng(seed): nn.Embedding N(0, 1), nn.Linear
// U(-1/sqrt(in), 1/sqrt(in)) for weight and bias, LayerNorm ones and zeros.
Classifier init_classifier(const ClassifierConfig& cfg, uint64_t seed);
// cfg's model: article 000's encoder (nn.hpp Config) + the head; built without moving the
// dropout generator (its draws are replaced by the caller's weights)
EncoderClassifier make_classifier_module(const ClassifierConfig& cfg);

// A padded batch of numbers: ids (B,T) = [CLS] + the words of n, labels (B) = n % 10.
struct ClsBatch {
  int64_t B = 0, T = 0;
  std::vector<int64_t> numbers, ids, labels;
};
ClsBatch make_cls_batch(const std::vector<int64_t>& numbers);
std::string make_cls_batch_site();  // "src/train/classifier.cpp:LINE make_cls_batch", from the compiler

// The classifier's gradients and what the chapters read of the last forward.
struct ClsWorkspace {
  EncoderClassifier grad;  // the model's shapes (classifier_forward builds it) holding d(loss)/d(parameter), what Adam reads
  int64_t B = 0, T = 0;
  std::vector<float> mask;        // (B,T,T) 1 = hide (the padded keys), from the mask the model used
  struct Layer {
    std::vector<float> p;         // (B,H,T,T) the attention weights of each head
  };
  std::vector<Layer> layers;
  std::vector<float> x;                     // (B,T,C) the encoder's output
  std::vector<float> pooled;                // (B,C) the sentence vectors
  std::vector<float> logits, probs, loss;   // (B,K), (B,K), (B)
};

// m.model(ids), with m.cfg's dropout and pooling: fills w (the attention weights, w.x, w.pooled,
// w.logits). training: dropout on, its draws from ts::default_generator() (seed it with ts::manual_seed).
void classifier_forward(Classifier& m, ClsWorkspace& w, const ClsBatch& b, bool training);
// where the head's pooling is written: "src/transformer/encoder_classifier.cpp:LINE EncoderClassifier::pool"
std::string classifier_head_site();
// Cross-entropy of w.logits against the labels, averaged over the B sentences.
float classifier_loss(ClsWorkspace& w, const ClsBatch& b, int64_t K);
// d(mean loss)/d(params) into w.grad (set, not added): the model's backward from the loss.
void classifier_backward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b);
// where they are written: "src/train/classifier.cpp:LINE classifier_forward, ...:LINE classifier_loss"
// (the loss a step checks comes from both), "src/train/classifier.cpp:LINE classifier_backward"
std::string classifier_forward_site();
std::string classifier_backward_site();
// Where the model puts a layer's LayerNorms, measured on one token (train/wiring.hpp):
// "pre-LN" (x + f(LN(x))), "post-LN" (LN(x + f(x))), or "" for neither.
std::string classifier_block_wiring();
// argmax of each row of w.logits   -> (B)
std::vector<int64_t> predictions(const ClsWorkspace& w, int64_t K);

// DIR/model.safetensors and DIR/optimizer.safetensors, saved and read through ch11's folder
// code (train/checkpoint.hpp, kind "classifier"): every parameter under its twin key, Adam's
// moments, the sizes and the pooling in the metadata; load checks every key and shape
// (FileError naming the first one wrong) before it touches the model.
void save_classifier(const std::string& dir, Classifier& m, const Adam& adam);
// --load's settings, as ch11's and ch12's: a size flag given (given(flag)) must agree with the
// checkpoint (FileError naming both otherwise), one not given takes the checkpoint's; the
// pooling is the checkpoint's unless --pool is given (a [CLS]-trained model read with --pool
// mean is an experiment, not an error).
ClassifierConfig classifier_checkpoint_config(const std::string& dir, const ClassifierConfig& asked,
                                              const std::function<bool(const std::string&)>& given);
void load_classifier(const std::string& dir, Classifier& m, Adam& adam);

}  // namespace ts::train
