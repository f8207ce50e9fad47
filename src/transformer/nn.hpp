// nn.hpp: the building blocks of article 000 ("a Transformer encoder step by step"),
// named as the article names them, parameters named as PyTorch's state_dict keys.
//
// Construction draws random numbers exactly like the PyTorch module's __init__, in the
// same order, from ts::default_generator(): so after ts::manual_seed(S) the weights equal
// torch.manual_seed(S) followed by the same Python constructors.
//
// Where each block is explained:
//   Linear, Embedding          ch01 / ch04      scaled_dot_product_attention  ch02-ch03, ch08
//   AttentionHead (exhibit)    ch04             MultiHeadAttention (exhibit)  ch04
//   FeedForward                ch05             LayerNorm (three arithmetics) ch06
// The attention every model trains is attention.hpp's (article 000's per-head layout a setting);
// TransformerEncoderLayer, Embeddings and TransformerEncoder (ch07) are in transformer_encoder.hpp.
//
// Backward (introduced in ch13, which trains these modules): written right below each forward,
// llm.c's way (transformer/grad.hpp): it opens with its shape contract and gradient formula, ADDS
// (+=) into the gradients of the parameters, which live in a second module of the same type
// (`TransformerEncoder grads = model; zero_grad(grads);`), and returns the input's gradient.
// A forward keeps what its backward needs only under EnableGrad, so ch01-ch07 keep nothing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exact/print.hpp"
#include "exact/tensor.hpp"

namespace ts {

// The BERT-base configuration article 000 loads with AutoConfig("bert-base-uncased").
struct Config {
  int64_t vocab_size = 30522;               // V
  int64_t hidden_size = 768;                // C
  int64_t num_attention_heads = 12;         // H
  int64_t intermediate_size = 3072;         // F
  double hidden_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t num_hidden_layers = 12;
};

// nn.Linear: y = x W^T + b.   weight (out,in), bias (out).
struct Linear {
  int64_t in_features = 0, out_features = 0;
  Tensor weight;  // (out, in)
  Tensor bias;    // (out)
  Linear() = default;
  Linear(int64_t in, int64_t out);                // draws weight, then bias (kaiming-uniform init)
  Tensor operator()(const Tensor& x) const;       // x (...,in) -> (...,out)
  // dx = dy W   (...,in);   grad.weight += dy^T x   (out,in);   grad.bias += sum over rows of dy   (out)
  // x the forward's input (...,in), dy (...,out); grad a Linear of the same shape (its .grad).
  Tensor backward(const Tensor& x, const Tensor& dy, Linear& grad) const;
  ModuleRepr repr() const;
};

// nn.Embedding: a lookup table.   weight (V,C).
struct Embedding {
  Tensor weight;  // (num_embeddings, embedding_dim), drawn from N(0, 1)
  Embedding() = default;
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor operator()(const ITensor& ids) const;    // ids (B,T) -> (B,T,C)
  // grad.weight[ids[n]] += dy[n]   (V,C): the ids have no gradient.   ids (B,T), dy (B,T,C)
  void backward(const ITensor& ids, const Tensor& dy, Embedding& grad) const;
  ModuleRepr repr() const;
};

// LayerNorm over the last dimension (introduced in ch06). The three articles normalise with three
// arithmetics, a setting of the one module (weight and bias keep each article's own names):
//   Article000  nn.LayerNorm          y = (x - m) / sqrt(var_n + eps) * weight + bias   eps 1e-5
//   Article002  its class LayerNorm   y = a_2 (x - m) / sqrt(std_u^2 + eps) + b_2        eps 1e-6
//   Article004  LayerNormalization    y = gamma (x - m) / (std_n + eps) + beta           eps 1e-6
//   var_n = sum (x - m)^2 / C,  std_u^2 = sum (x - m)^2 / (C - 1),  std_n = sqrt(var_n)
// Each runs the kernel its twin's bits need (src/transformer/layer_norm.cpp).
enum class LayerNormArithmetic { Article000, Article002, Article004 };
std::string layer_norm_source();  // "src/transformer/layer_norm.cpp", from the compiler
double default_eps(LayerNormArithmetic arithmetic);  // 1e-5, 1e-6, 1e-6

struct LayerNorm {
  Tensor weight;  // (C) ones    (state_dict name: weight, a_2 or gamma: param_names())
  Tensor bias;    // (C) zeros   (bias, b_2 or beta)
  double eps = 1e-5;  // Article004's is the float32 the Keras layer holds
  LayerNormArithmetic arithmetic = LayerNormArithmetic::Article000;
  LayerNorm() = default;
  // no random draws; eps = default_eps(arithmetic) unless given
  explicit LayerNorm(int64_t normalized_shape, LayerNormArithmetic arithmetic = LayerNormArithmetic::Article000);
  LayerNorm(int64_t normalized_shape, LayerNormArithmetic arithmetic, double eps);
  Tensor operator()(const Tensor& x) const;       // x (...,C) -> (...,C)
  // xhat = (x - mean) / divisor,  g = dy weight:   dx = (g - mean(g) - xhat k mean(g xhat)) / divisor   (...,C)
  //   k = 1 (Article000), C/(C-1) (Article002), divisor / std_n (Article004)
  // grad.weight += sum over rows of dy xhat   (C);   grad.bias += sum over rows of dy   (C)
  // x the forward's input (mean and divisor are recomputed from it)
  Tensor backward(const Tensor& x, const Tensor& dy, LayerNorm& grad) const;
  ModuleRepr repr() const;  // LayerNorm((C,), eps=..., elementwise_affine=True), LayerNorm() or LayerNormalization()
  // the state_dict names of weight and bias: weight/bias, a_2/b_2 or gamma/beta
  std::pair<const char*, const char*> param_names() const;
};

// nn.Dropout: in train mode zero each element with probability p, scale the rest by 1/(1-p).
struct Dropout {
  double p = 0.5;
  bool training = true;  // a fresh nn.Module is in train mode
  Dropout() = default;
  explicit Dropout(double p) : p(p) {}
  Tensor operator()(const Tensor& x) const;       // draws 2 random numbers per element in train mode (p > 0)
  Tensor operator()(Tensor&& x) const;            // the same, in x's own storage (a temporary's)
  // dx = dy * keep   (shape of x): keep is 0 or 1/(1-p), the draws of the last train-mode forward
  // (kept only under EnableGrad, transformer/grad.hpp); in eval mode, or with p = 0, dx = dy.
  Tensor backward(const Tensor& dy) const;
  Tensor backward(Tensor&& dy) const;             // the same, in dy's own storage
  // Whether backward(dy) has what it needs: eval mode, p = 0, or a train-mode forward under
  // EnableGrad of dy's shape (a module's backward asks, to name a forward that skipped it).
  bool ready_for(const Tensor& dy) const;
  ModuleRepr repr() const;
  mutable Tensor keep;  // the last train-mode forward's 0 or 1/(1-p) per element (EnableGrad and p > 0 only)
};

// A module's backward that undoes a step its forward no longer takes (a learner's edit of the
// forward alone: a sublayer or a dropout no longer called) stops here with a failed check
// naming both functions (file:line) and the fix, instead of failing deep inside the backward.
// ran: whether the forward took the step (e.g. dropout.ready_for(dy)); part: what it no longer
// calls ("dropout", "sublayer[1]"). The sites are the two functions' CodeSites.
struct CodeSite;
void require_forward(bool ran, const std::string& part, const CodeSite& forward, const CodeSite& backward);

// scores = Q K^T / sqrt(d_k); masked where mask == 0; softmax; times V.
// q (B,T,D), k (B,S,D), v (B,S,Dv), mask (1 or B,T,S) with 0 = hide, or nullptr -> (B,T,Dv)
// *weights (if not null) = the softmax's output (B,T,S).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask = nullptr,
                                    Tensor* weights = nullptr);
// scores = q k^T / sqrt(D), as article 000 writes it (torch.bmm, then / sqrt(dim_k) with D read
// from q's last dim): q (B,T,D), k (B,S,D) -> (B,T,S)
Tensor scaled_scores(const Tensor& q, const Tensor& k);
// scores.masked_fill(mask == 0, value): scores (B,T,S), mask broadcastable (1 or B,T,S)
Tensor masked_fill_zero(const Tensor& scores, const Tensor& mask, float value);

// Article 000's own attention classes, as ch04 shows them (forward only: the model every chapter
// trains runs the one attention of attention.hpp, whose article 000 setting draws and computes the
// same numbers, tests/test_nn_backward.cpp).
// One attention head: three Linears C -> D, then scaled dot-product attention.
struct AttentionHead {
  Linear q, k, v;
  AttentionHead() = default;
  AttentionHead(int64_t embed_dim, int64_t head_dim);  // draws q, then k, then v
  // query (B,T,C), key/value (B,S,C) -> (B,T,D)
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor* mask = nullptr) const;
  ModuleRepr repr() const;
};

// H heads side by side, concatenated back to C, then an output Linear C -> C.
struct MultiHeadAttention {
  std::vector<AttentionHead> heads;  // H heads of D = C / H
  Linear output_linear;
  MultiHeadAttention() = default;
  explicit MultiHeadAttention(const Config& config);  // draws heads 0..H-1, then output_linear
  // query (B,T,C), key/value (B,S,C) -> (B,T,C)
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor* mask = nullptr) const;
  ModuleRepr repr() const;
};

// ---------------------------------------------------------------- the feed-forward (ch05)
// The position-wise feed-forward, Linear C -> F, activation, Linear F -> C, with a dropout. Two
// articles write it; what differs is a setting of the one module (introduced in ch05):
//   Article000  FeedForward               FFN(x) = dropout(linear_2(act(linear_1(x))))
//   Article002  PositionwiseFeedForward   FFN(x) = w_2(dropout(act(w_1(x))))
// The article sets the dropout's place, the class name the repr prints and the state_dict names of
// the two Linears (linear_1/linear_2 or w_1/w_2). The activation is a setting of its own: article
// 000 runs GELU; article 002's listing none (Identity: the two Linears are one linear map, ch05);
// article 004 and the paper ReLU; GPT-2's MLP (ch12) GELU, x Phi(x) with the exact erf.
enum class FeedForwardArticle { Article000, Article002 };
std::string feed_forward_source();  // "src/transformer/feed_forward.cpp", from the compiler
enum class Activation { Identity, ReLU, GELU };
const char* activation_name(Activation a);  // "no activation", "ReLU" or "GELU"

// A kernel for GELU's backward, dx = dy * GELU'(x) over n floats: a setting of the module
// (train/gpt.cpp gives ch12's MLPs the SIMD route's, src/fast/simd/, which this layer cannot
// include). The backward uses it only while a probe finds it computes what the plain loop does;
// nullptr (the default): the plain loop beside the forward.
using GeluBackwardKernel = void (*)(const float* x, const float* dy, float* dx, int64_t n);

struct FeedForward {
  Linear linear_1;  // C -> F   (article 002: w_1)
  Linear linear_2;  // F -> C   (article 002: w_2)
  Dropout dropout;
  Activation activation = Activation::GELU;
  FeedForwardArticle article = FeedForwardArticle::Article000;
  GeluBackwardKernel gelu_backward_kernel = nullptr;
  FeedForward() = default;
  explicit FeedForward(const Config& config);  // article 000's: draws linear_1, then linear_2; GELU
  // draws linear_1 (C -> F), then linear_2 (the activation draws nothing)
  FeedForward(int64_t d_model, int64_t d_ff, double dropout, Activation activation, FeedForwardArticle article);
  Tensor operator()(const Tensor& x) const;     // x (B,T,C) -> (B,T,F) -> (B,T,C)
  // dg = linear_2.backward(g, dropout.backward(dy)) (000), dropout.backward(linear_2.backward(g, dy)) (002);
  // dh = dg act'(h): dg (Identity), dg [h > 0] (ReLU), dg (Phi(h) + h phi(h)) (GELU);
  // dx = linear_1.backward(x, dh)   dy (B,T,C) -> dx (B,T,C)
  Tensor backward(const Tensor& dy, FeedForward& grad) const;
  ModuleRepr repr() const;
  // the state_dict names of the two Linears: linear_1/linear_2 or w_1/w_2
  std::pair<const char*, const char*> linear_names() const;
  void train(bool on) { dropout.training = on; }
  // the last forward's input x (B,T,C), h = linear_1(x) and g = act(h) (B,T,F), g after the dropout
  // in article 002's place (EnableGrad only)
  mutable struct Saved { Tensor x, h, g; } saved;
};
// Article 002's PositionwiseFeedForward(d_model, d_ff, dropout): the one FeedForward in its setting
FeedForward positionwise_feed_forward(int64_t d_model, int64_t d_ff, double dropout = 0.1,
                                      Activation activation = Activation::Identity);
// GELU's backward as article 000's module (ch13) computes it: dx = dy (Phi(x) + x phi(x)),
// phi(x) = exp(-x^2 / 2) / sqrt(2 pi)   (shape of x)
Tensor gelu_backward(const Tensor& x, const Tensor& dy);



}  // namespace ts
