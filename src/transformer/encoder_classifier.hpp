// transformer/encoder_classifier.hpp: ch13's model, composed from article 000's encoder
// (transformer/transformer_encoder.hpp) the way nanoGPT composes its GPT: the encoder, one vector
// per sentence, dropout, a Linear head (introduced in ch13). Nothing here is a second copy of a
// layer: a learner's edit to the one block (EncoderLayer and SublayerConnection in annotated.cpp,
// whose article 000 setting TransformerEncoderLayer is), or to the one FeedForward, LayerNorm or
// attention (feed_forward.cpp, layer_norm.cpp, attention.cpp), reaches ch11's and ch12's models
// too, and is what ch13 and ch14 run and train.
//
// Shapes: B sentences, T positions ([CLS] + words, padded), C = hidden_size, K classes.
// Parameters (named_parameters(), the twin's state_dict keys):
//   encoder.embeddings.*, encoder.layers.L.*, classifier.weight, classifier.bias
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exact/tensor.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

namespace ts {

struct EncoderClassifier {
  TransformerEncoder encoder;
  Dropout dropout;         // on the sentence vector
  Linear classifier;       // C -> K
  bool mean_pool = false;  // false: the final [CLS] vector (position 0); true: the mean of the real positions
  int64_t pad_id = 0;      // the id of padding: hidden from attention and left out of the mean
  EncoderClassifier() = default;
  // draws the encoder, then the classifier; every Dropout (the embeddings' too) has p = hidden_dropout_prob
  EncoderClassifier(const Config& config, int64_t num_labels, bool mean_pool, int64_t pad_id);

  // logits = classifier(dropout(pool(encoder(ids, padding_mask(ids)))))   ids (B,T) -> (B,K)
  Tensor operator()(const ITensor& ids) const;
  // mask[b,q,s] = 0 where key s of sentence b is padding, else 1   ids (B,T) -> (B,T,T)
  Tensor padding_mask(const ITensor& ids) const;
  // the head: pool, dropout, classifier   x (B,T,C) -> (B,K)
  Tensor head(const Tensor& x, const ITensor& ids) const;
  // one vector per sentence: x[b,0] ([CLS]) or the mean of x[b,t] over the real t   (B,T,C) -> (B,C)
  Tensor pool(const Tensor& x, const ITensor& ids) const;
  // its backward: [CLS]: dx[b,0] = dpooled[b];  mean: dx[b,t] = dpooled[b] / count_b for every real t
  // dpooled (B,C) -> dx (B,T,C)
  Tensor pool_backward(const Tensor& dpooled, const ITensor& ids, size_t T) const;

  // Backward of operator(): dlogits (B,K) -> every parameter's gradient, added into grad.
  //   dd = classifier.backward(dropped, dlogits);  dx = pool_backward(dropout.backward(dd));  encoder.backward(dx)
  void backward(const Tensor& dlogits, EncoderClassifier& grad) const;

  std::vector<std::pair<std::string, Tensor*>> named_parameters();  // the twin's order and keys
  void train(bool on);
  // the last forward's ids, mask (B,T,T), encoder output x (B,T,C), pooled and dropped (B,C) (EnableGrad only)
  mutable struct Saved { ITensor ids; Tensor mask, x, pooled, dropped; } saved;
};

// Every parameter of grads set to 0.
void zero_grad(EncoderClassifier& grads);
// "src/transformer/encoder_classifier.cpp:LINE EncoderClassifier::pool", from the compiler
std::string classifier_pool_site();

}  // namespace ts
