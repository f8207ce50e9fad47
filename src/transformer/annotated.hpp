// annotated.hpp: article 002's Transformer ("Attention and the Transformer line by line",
// Annotated-Transformer style, English -> French), its modules as that article's listings
// write them (introduced in ch09 and ch10). Its attention (listings 9.1, 9.2) is the one attention
// of attention.hpp, which every model trains.
//
// Where the article's listings differ from the canonical Annotated Transformer, this file
// follows the article (tests/twins/article002.py re-types the same code for the twins):
//   - PositionwiseFeedForward is w_2(dropout(w_1(x))): NO ReLU between the two Linears (the one
//     FeedForward of nn.hpp with FeedForwardArticle::Article002);
//   - LayerNorm divides by sqrt(std**2 + eps) with the UNBIASED std and eps 1e-6 (the one
//     LayerNorm of nn.hpp with LayerNormArithmetic::Article002);
//   - attention() hides masked scores with -1e9 (not -inf); mask true = keep (attention.hpp).
//
// Construction draws random numbers exactly like the Python __init__ (from
// ts::default_generator()). MultiHeadedAttention's four Linears are four independent draws:
// the listing's [deepcopy(nn.Linear(d_model, d_model)) for i in range(4)] builds a new Linear
// on each iteration (unlike the Annotated Transformer's clones(), which copies ONE module).
// Where `deepcopy` copies an existing object (DecoderLayer(C, deepcopy(attn), ...)), it is
// one draw, then copies.
//
// Name clashes with the core (src/transformer/nn.hpp, src/exact/rng.hpp) are resolved with a prefix; the
// module reprs still print the article's class names:
//   article Embeddings -> AnnotatedEmbeddings
//   article Generator   -> AnnotatedGenerator      article Transformer -> EncoderDecoder
// Shapes: B batch, T target length, S source length, C = d_model, H = h heads, D = d_k = C/H,
// F = d_ff, V vocabulary.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "exact/print.hpp"
#include "exact/tensor.hpp"
#include "transformer/attention.hpp"
#include "transformer/nn.hpp"

namespace ts {

// "src/transformer/annotated.cpp", from the compiler: where every module below is written
std::string annotated_source();

// ---------------------------------------------------------------- masks
// np.triu(ones(1,size,size), k=1) == 0: true on and below the diagonal (true = may attend).
// size -> (1,size,size)
BTensor subsequent_mask(int64_t size);

// ---------------------------------------------------------------- sublayer (pre-LN or post-LN)
// Where the LayerNorm sits (a setting; article 002 is pre-LN, article 004 and the paper post-LN):
//   Pre   out = x + dropout(sublayer(norm(x)))
//   Post  out = norm(x + dropout(sublayer(x)))
enum class NormPlace { Pre, Post };
const char* norm_place_name(NormPlace p);  // "pre-LN" or "post-LN"

// Article 000 writes the same residual inline in its TransformerEncoderLayer (no dropout there):
// there it is this module with p = 0, PyTorch's LayerNorm, and no name of its own (named = false:
// no trace scope; the layer's repr prints its norms as layer_norm_1, layer_norm_2).
struct SublayerConnection {
  LayerNorm norm;  // article 002's arithmetic by default (nn.hpp); article 000's in its layer
  Dropout dropout;
  NormPlace norm_place = NormPlace::Pre;
  bool named = true;  // the article names this module (002, 004); false: article 000's inline residual
  SublayerConnection() = default;
  SublayerConnection(int64_t size, double dropout, NormPlace norm_place = NormPlace::Pre);
  // x (B,T,C), sublayer (B,T,C) -> (B,T,C)
  Tensor operator()(const Tensor& x, const std::function<Tensor(const Tensor&)>& sublayer) const;
  // Pre:  dx = dy + norm.backward(x, sublayer_backward(dropout.backward(dy)))   (B,T,C)
  // Post: ds = norm.backward(x + dropout(sublayer(x)), dy);  dx = ds + sublayer_backward(dropout.backward(ds))
  // sublayer_backward maps the sublayer's output gradient to its input's (B,T,C).
  Tensor backward(const Tensor& dy, const std::function<Tensor(const Tensor&)>& sublayer_backward,
                  SublayerConnection& grad) const;
  ModuleRepr repr() const;
  void train(bool on) { dropout.training = on; }
  mutable Tensor saved_x;  // the norm's input of the last forward: x (Pre) or the sum (Post) (EnableGrad only)
  mutable bool ran = false;  // a forward ran under EnableGrad: backward has what it needs
};

// ---------------------------------------------------------------- feed-forward (article 002)
// PositionwiseFeedForward is the one FeedForward of nn.hpp in article 002's setting
// (positionwise_feed_forward): FFN(x) = w_2(dropout(act(w_1(x)))), no activation in its listing.

// ---------------------------------------------------------------- encoder (listing 9.3)
// x = sublayer[0](x, self_attn(x, x, x, mask)); out = sublayer[1](x, feed_forward)
// The one block every model trains: article 002's EncoderLayer (ch11), GPT's Block (gpt.hpp, ch12)
// and article 000's TransformerEncoderLayer (transformer_encoder.hpp, ch07, ch13) are this class in
// their settings (the attention's, the feed-forward's, the norms' arithmetic and place, the names).
struct EncoderLayer {
  // mutable as every module's saved state is: a forward keeps what its backward needs
  mutable MultiHeadedAttention self_attn;
  FeedForward feed_forward;  // article 002's setting
  std::vector<SublayerConnection> sublayer;  // 2 (deep copies, no draws)
  int64_t size = 0;                          // C
  const char* name = "EncoderLayer";         // the class its article names (trace): Block, TransformerEncoderLayer
  EncoderLayer() = default;
  EncoderLayer(int64_t size, const MultiHeadedAttention& self_attn, const FeedForward& feed_forward,
               double dropout);
  // x (B,S,C), mask (B|1,1|S,S) true = keep, or nullptr -> (B,S,C)
  // With a cache (GPT's generation): x holds the new rows only, self-attention appends their keys
  // and values to it and reads every cached position (mask: (1,T,cache len) or nullptr).
  Tensor operator()(const Tensor& x, const BTensor* mask = nullptr, KVCache* cache = nullptr) const;
  // dx through sublayer[1] (feed_forward), then sublayer[0] (self_attn: dquery + dkey + dvalue)
  Tensor backward(const Tensor& dy, EncoderLayer& grad) const;
  ModuleRepr repr() const;
  void train(bool on);
};

// ---------------------------------------------------------------- N layers, then a norm
// What article 002's Encoder and Decoder both hold: N deep copies of one layer (no draws),
// then a final LayerNorm(layer.size). Each keeps its own forward (the decoder's reads memory).
template <class Layer>
struct LayerStack {
  std::vector<Layer> layers;  // N
  LayerNorm norm;             // (C), article 002's arithmetic
  Tensor saved_x;             // the final norm's input of the last forward (EnableGrad only)
  LayerStack() = default;
  LayerStack(const Layer& layer, int64_t N)
      : layers(static_cast<size_t>(N > 0 ? N : 0), layer), norm(layer.size, LayerNormArithmetic::Article002) {}
  void train(bool on) {
    for (Layer& l : layers) l.train(on);
  }

 protected:
  // Name(  (layers): ModuleList(...)  (norm): LayerNorm()  )
  ModuleRepr repr_as(const std::string& name) const {
    std::vector<ModuleRepr> items;
    for (const Layer& l : layers) items.push_back(l.repr());
    return {name, "", {{"layers", module_list_repr(items)}, {"norm", norm.repr()}}};
  }
};

// N deep copies of one layer, then a final LayerNorm.
struct Encoder : LayerStack<EncoderLayer> {
  using LayerStack::LayerStack;
  Tensor operator()(const Tensor& x, const BTensor* mask);  // (B,S,C) -> (B,S,C)
  // dx = layers' backwards in reverse after norm.backward   (B,S,C)
  Tensor backward(const Tensor& dy, Encoder& grad) const;
  ModuleRepr repr() const { return repr_as("Encoder"); }
};

// ---------------------------------------------------------------- decoder (listing 9.4)
// A decoder layer's caches, for decoding one token at a time (ch09, ch10).
struct DecoderLayerCache {
  KVCache self_attn;                 // the keys and values of the tokens decoded so far (appended)
  KVCache src_attn{Tensor(), Tensor(), true};  // the memory's keys and values, projected once
  bool inputs = false;  // article 001's way instead: cache the rows self-attention reads (norm(x)),
                        // project keys and values of all of them again each step, the memory too
  Tensor rows;          // inputs: (B,t,C) the normed rows self-attention has read so far
  size_t len() const { return inputs ? (rows.dimension() == 3 ? rows.shape()[1] : 0) : self_attn.len(); }
};

// x = sublayer[0](x, self_attn(x, x, x, tgt_mask))           masked self-attention
// x = sublayer[1](x, src_attn(x, memory, memory, src_mask))  cross-attention over memory
// out = sublayer[2](x, feed_forward)
struct DecoderLayer {
  int64_t size = 0;  // C
  MultiHeadedAttention self_attn;
  MultiHeadedAttention src_attn;
  FeedForward feed_forward;  // article 002's setting
  std::vector<SublayerConnection> sublayer;  // 3 (deep copies, no draws)
  DecoderLayer() = default;
  DecoderLayer(int64_t size, const MultiHeadedAttention& self_attn, const MultiHeadedAttention& src_attn,
               const FeedForward& feed_forward, double dropout);
  // x (B,T,C), memory (B,S,C), src_mask (B|1,1,S), tgt_mask (B|1,T,T), each nullable -> (B,T,C)
  // With a cache: x holds the new rows only (B,1,C) and self-attention reads the cached past
  // (tgt_mask: nullptr, or (B|1,T,t) over the cached positions).
  Tensor operator()(const Tensor& x, const Tensor& memory, const BTensor* src_mask, const BTensor* tgt_mask,
                    DecoderLayerCache* cache = nullptr);
  // dx through sublayer[2] (feed_forward), [1] (src_attn: dquery; dkey + dvalue are added into
  // dmemory (B,S,C)), [0] (self_attn: dquery + dkey + dvalue)   dy (B,T,C) -> (B,T,C)
  Tensor backward(const Tensor& dy, DecoderLayer& grad, Tensor& dmemory) const;
  ModuleRepr repr() const;
  void train(bool on);
};

// N deep copies of one decoder layer, then a final LayerNorm.
struct Decoder : LayerStack<DecoderLayer> {
  using LayerStack::LayerStack;
  // x (B,T,C), memory (B,S,C) -> (B,T,C); caches: one per layer (layer i gets (*caches)[i]), or nullptr
  Tensor operator()(const Tensor& x, const Tensor& memory, const BTensor* src_mask, const BTensor* tgt_mask,
                    std::vector<DecoderLayerCache>* caches = nullptr);
  // dx (B,T,C); every layer adds its memory gradient into dmemory (B,S,C)
  Tensor backward(const Tensor& dy, Decoder& grad, Tensor& dmemory) const;
  ModuleRepr repr() const { return repr_as("Decoder"); }
};

// ---------------------------------------------------------------- embeddings + positions
// PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(...); out = dropout(x + pe[:, :T]).
struct PositionalEncoding {
  Dropout dropout;
  Tensor pe;  // (1, max_len, C) buffer, torch's float32 bits (SLEEF exp/sin/cos)
  PositionalEncoding() = default;
  PositionalEncoding(int64_t d_model, double dropout, int64_t max_len = 5000);  // no random draws
  Tensor operator()(const Tensor& x) const;  // (B,T,C) -> (B,T,C), T <= max_len
  // dx = dropout.backward(dy)   (pe is a fixed buffer: no gradient)
  Tensor backward(const Tensor& dy) const { return dropout.backward(dy); }
  ModuleRepr repr() const;
  void train(bool on) { dropout.training = on; }
};

// lut(x) * sqrt(d_model)   (article class name: Embeddings)
struct AnnotatedEmbeddings {
  Embedding lut;  // (V, C)
  int64_t d_model = 0;
  AnnotatedEmbeddings() = default;
  AnnotatedEmbeddings(int64_t d_model, int64_t vocab);  // draws the (V,C) table ~ N(0,1)
  Tensor operator()(const ITensor& x) const;             // (B,T) -> (B,T,C)
  // grad.lut.weight[x[n]] += sqrt(d_model) dy[n]   (V,C): ids have no gradient
  void backward(const ITensor& x, const Tensor& dy, AnnotatedEmbeddings& grad) const;
  ModuleRepr repr() const;
};

// nn.Sequential(Embeddings, PositionalEncoding): the src_embed / tgt_embed of create_model.
struct EmbedSequential {
  AnnotatedEmbeddings embed;  // (0)
  PositionalEncoding pos;     // (1)
  Tensor operator()(const ITensor& x) const { return pos(embed(x)); }  // (B,T) -> (B,T,C)
  void backward(const ITensor& x, const Tensor& dy, EmbedSequential& grad) const {
    embed.backward(x, pos.backward(dy), grad.embed);
  }
  ModuleRepr repr() const;
  void train(bool on) { pos.train(on); }
};

// log_softmax(proj(x))   (article class name: Generator; ts::Generator is the RNG)
struct AnnotatedGenerator {
  Linear proj;  // C -> V
  AnnotatedGenerator() = default;
  AnnotatedGenerator(int64_t d_model, int64_t vocab);  // draws proj
  Tensor operator()(const Tensor& x) const;             // (B,T,C) -> (B,T,V) log-probabilities
  // dz = dlogp - softmax(z) sum_v dlogp   (B,T,V), z = proj(x);   dx = proj.backward(x, dz)   (B,T,C)
  Tensor backward(const Tensor& dlogp, AnnotatedGenerator& grad) const;
  ModuleRepr repr() const;
  mutable struct Saved { Tensor x, logp; } saved;  // the last forward's (EnableGrad only)
};

// ---------------------------------------------------------------- the model (listing 9.5)
// encode(src) = encoder(src_embed(src)); decode = decoder(tgt_embed(tgt), memory).
// (article class name: Transformer). forward returns the decoder output (no generator).
struct EncoderDecoder {
  Encoder encoder;
  Decoder decoder;
  EmbedSequential src_embed;
  EmbedSequential tgt_embed;
  AnnotatedGenerator generator;
  // src (B,S) ids, src_mask (B|1,1,S) -> memory (B,S,C)
  Tensor encode(const ITensor& src, const BTensor* src_mask);
  // memory (B,S,C), tgt (B,T) ids, tgt_mask (B|1,T,T) -> (B,T,C)
  Tensor decode(const Tensor& memory, const BTensor* src_mask, const ITensor& tgt, const BTensor* tgt_mask);
  // -> (B,T,C)
  Tensor forward(const ITensor& src, const ITensor& tgt, const BTensor* src_mask, const BTensor* tgt_mask);
  // Backward of forward (the generator is not in forward: run generator.backward first):
  // dmemory from every decoder layer's cross-attention, then the encoder; the embeddings'
  // tables get their rows' gradients.   dout (B,T,C)
  void backward(const Tensor& dout, EncoderDecoder& grad) const;
  ModuleRepr repr() const;  // "Transformer(...)"
  void train(bool on);
  ITensor saved_src, saved_tgt;  // the last forward's ids (EnableGrad only)
  // Every parameter in model.parameters() order, with its state_dict name.
  std::vector<std::pair<std::string, Tensor*>> named_parameters();
};
using Transformer = EncoderDecoder;

// Every parameter of grads set to 0 (grads: a copy of the model that holds its gradients).
void zero_grad(EncoderDecoder& grads);

// Listing 9.6: attn, ff, pos, then the model (src Embeddings, tgt Embeddings, Generator drawn
// in that order), then xavier_uniform_ on every parameter with dim > 1, in parameters() order.
// Note: MultiHeadedAttention(h, d_model) keeps its default dropout 0.1 (as in the article).
// Article 004's differences are module settings (they draw nothing): the feed-forward's
// activation and where each SublayerConnection puts its LayerNorm. Defaults: article 002's.
// ch11's exercise --no-scale and the attention's dropout are settings too (drawing nothing).
struct ModelSettings {
  Activation activation = Activation::Identity;
  NormPlace norm_place = NormPlace::Pre;
  double attention_dropout = 0.1;  // MultiHeadedAttention(h, d_model)'s default in the article
  bool scale_scores = true;        // false: every attention's scores are not divided by sqrt(d_k)
};
EncoderDecoder create_model(int64_t src_vocab, int64_t tgt_vocab, int64_t N = 6, int64_t d_model = 256,
                            int64_t d_ff = 1024, int64_t h = 8, double dropout = 0.1,
                            const ModelSettings& settings = {});

}  // namespace ts
