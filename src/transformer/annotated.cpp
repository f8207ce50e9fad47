// annotated.cpp: article 002's modules. Each forward reads top to bottom like the
// article's Python (tests/twins/article002.py); comments give the formula, then the shape.
#include "transformer/annotated.hpp"
#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "base/errors.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "exact/fp_contract.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/rng.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/grad.hpp"


namespace ts {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument(msg); }


ModuleRepr dropout_child(const Dropout& d) { return d.repr(); }

}  // namespace

std::string annotated_source() { return code_site_path(__FILE__); }

// ---------------------------------------------------------------- masks
BTensor subsequent_mask(int64_t size) {
  TS_CODE_SITE();
  // triu(ones, k=1) == 0  ->  keep (t, s) when s <= t
  // (1,T,T)
  if (size < 0) fail("subsequent_mask: size must be >= 0");
  const size_t n = static_cast<size_t>(size);
  BTensor m = BTensor::from_shape({1, n, n});
  for (size_t t = 0; t < n; ++t)
    for (size_t s = 0; s < n; ++s) m(0, t, s) = s <= t;
  return m;
}

// ---------------------------------------------------------------- SublayerConnection
const char* norm_place_name(NormPlace p) { return p == NormPlace::Pre ? "pre-LN" : "post-LN"; }

SublayerConnection::SublayerConnection(int64_t size, double p, NormPlace place)
    : norm(size, LayerNormArithmetic::Article002), dropout(p), norm_place(place) {}

// the lines below: SublayerConnection's forward and backward, named when they disagree
static const CodeSite kSublayerForwardSite{__FILE__, __LINE__ + 1, "SublayerConnection::operator()"};
Tensor SublayerConnection::operator()(const Tensor& x, const std::function<Tensor(const Tensor&)>& sublayer) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE(named ? "SublayerConnection" : nullptr, x);
  if (norm_place == NormPlace::Post) {
    // out = norm(x + dropout(sublayer(x)))   (B,T,C) -> (B,T,C)
    Tensor sum = x + dropout(sublayer(x));
    Tensor out = norm(sum);
    if (grad_enabled()) {
      saved_x = std::move(sum);
      ran = true;
    }
    return out;
  }
  // out = x + dropout(sublayer(norm(x)))
  // (B,T,C) -> (B,T,C)
  if (grad_enabled()) {
    saved_x = x;
    ran = true;
  }
  Tensor y = dropout(sublayer(norm(x)));
  // out = x + y   (added in y's storage: the same sums, no new tensor)
  y += x;
  return y;
}

static void require_forward(const SublayerConnection& s, size_t i, const CodeSite& forward, const CodeSite& backward) {
  require_forward(s.ran, "sublayer[" + std::to_string(i) + "]", forward, backward);
}

static const CodeSite kSublayerBackwardSite{__FILE__, __LINE__ + 1, "SublayerConnection::backward"};
Tensor SublayerConnection::backward(const Tensor& dy, const std::function<Tensor(const Tensor&)>& sublayer_backward,
                                    SublayerConnection& grad) const {
  TS_CODE_SITE();
  require_forward(dropout.ready_for(dy), "dropout", kSublayerForwardSite, kSublayerBackwardSite);
  if (norm_place == NormPlace::Post) {
    // ds = norm.backward(sum, dy);  dx = ds (the residual) + sublayer_backward(dropout.backward(ds))
    Tensor ds = norm.backward(saved_x, dy, grad.norm);
    ds += sublayer_backward(dropout.backward(ds));
    return ds;
  }
  // dx = dy (the residual) + norm.backward(x, sublayer_backward(dropout.backward(dy)))   (B,T,C)
  const Tensor dn = sublayer_backward(dropout.backward(dy));
  Tensor dx = norm.backward(saved_x, dn, grad.norm);
  dx += dy;
  return dx;
}

ModuleRepr SublayerConnection::repr() const {
  return {"SublayerConnection", "", {{"norm", norm.repr()}, {"dropout", dropout_child(dropout)}}};
}

// ---------------------------------------------------------------- encoder
EncoderLayer::EncoderLayer(int64_t size_, const MultiHeadedAttention& attn, const FeedForward& ff,
                           double dropout)
    : self_attn(attn), feed_forward(ff), sublayer(2, SublayerConnection(size_, dropout)), size(size_) {}

// the lines below: EncoderLayer's forward and backward, named when they disagree
static const CodeSite kEncoderLayerForwardSite{__FILE__, __LINE__ + 1, "EncoderLayer::operator()"};
Tensor EncoderLayer::operator()(const Tensor& x_in, const BTensor* mask, KVCache* cache) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE(name, x_in);
  // x = x + dropout(self_attn(norm(x)))   (B,S,C); with a cache the queries attend over the cached keys too
  Tensor x = sublayer[0](x_in, [&](const Tensor& y) { return self_attn(y, y, y, mask, cache); });
  // out = x + dropout(feed_forward(norm(x)))   (B,S,C)
  return sublayer[1](x, [&](const Tensor& y) { return feed_forward(y); });
}

static const CodeSite kEncoderLayerBackwardSite{__FILE__, __LINE__ + 1, "EncoderLayer::backward"};
Tensor EncoderLayer::backward(const Tensor& dy, EncoderLayer& grad) const {
  TS_CODE_SITE();
  for (size_t i = 0; i < sublayer.size(); ++i)
    require_forward(sublayer[i], i, kEncoderLayerForwardSite, kEncoderLayerBackwardSite);
  // the forward's two sublayers in reverse: feed-forward, then self-attention (its three inputs are one x)
  const Tensor dx = sublayer[1].backward(
      dy, [&](const Tensor& d) { return feed_forward.backward(d, grad.feed_forward); }, grad.sublayer[1]);
  return sublayer[0].backward(
      dx,
      [&](const Tensor& d) { return self_attn.self_backward(d, grad.self_attn); },
      grad.sublayer[0]);
}

ModuleRepr EncoderLayer::repr() const {
  std::vector<ModuleRepr> subs;
  for (const SublayerConnection& s : sublayer) subs.push_back(s.repr());
  return {"EncoderLayer", "",
          {{"self_attn", self_attn.repr()}, {"feed_forward", feed_forward.repr()}, {"sublayer", module_list_repr(subs)}}};
}

void EncoderLayer::train(bool on) {
  self_attn.train(on);
  feed_forward.train(on);
  for (SublayerConnection& s : sublayer) s.train(on);
}

Tensor Encoder::operator()(const Tensor& x_in, const BTensor* mask) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("Encoder", x_in);
  // x = layer(x) for each of the N layers, then the final norm   (B,S,C)
  // (the article re-applies self.norm inside the loop; only the last result is kept, and the
  // norm draws no random numbers, so applying it once after the loop gives the same tensor)
  Tensor x = x_in;
  for (EncoderLayer& layer : layers) x = layer(x, mask);
  if (grad_enabled()) saved_x = x;
  return norm(x);
}

Tensor Encoder::backward(const Tensor& dy, Encoder& grad) const {
  TS_CODE_SITE();
  // the final norm, then the N layers in reverse   (B,S,C)
  Tensor dx = norm.backward(saved_x, dy, grad.norm);
  for (size_t i = layers.size(); i-- > 0;) dx = layers[i].backward(dx, grad.layers[i]);
  return dx;
}

// ---------------------------------------------------------------- decoder
DecoderLayer::DecoderLayer(int64_t size_, const MultiHeadedAttention& self, const MultiHeadedAttention& src,
                           const FeedForward& ff, double dropout)
    : size(size_), self_attn(self), src_attn(src), feed_forward(ff), sublayer(3, SublayerConnection(size_, dropout)) {}

// the lines below: DecoderLayer's forward and backward, named when they disagree
static const CodeSite kDecoderLayerForwardSite{__FILE__, __LINE__ + 1, "DecoderLayer::operator()"};
Tensor DecoderLayer::operator()(const Tensor& x_in, const Tensor& memory, const BTensor* src_mask,
                                const BTensor* tgt_mask, DecoderLayerCache* cache) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("DecoderLayer", x_in);
  // 1) masked self-attention: x = x + dropout(self_attn(n, n, n, tgt_mask)), n = norm(x)   (B,T,C)
  //    with a cache, n holds the new rows only and attends over the cached past too; article
  //    001's way (cache->inputs) caches the rows: rows = cat(rows, n); self_attn(n, rows, rows)
  Tensor x = sublayer[0](x_in, [&](const Tensor& y) {
    if (cache && cache->inputs) {
      cache->rows = cache->rows.dimension() == 3 ? cat(std::vector<const Tensor*>{&cache->rows, &y}, 1) : y;
      return self_attn(y, cache->rows, cache->rows, tgt_mask);
    }
    return self_attn(y, y, y, tgt_mask, cache ? &cache->self_attn : nullptr);
  });
  // 2) cross-attention: x = x + dropout(src_attn(n, memory, memory, src_mask))   (B,T,C)
  //    with a key/value cache the memory's keys and values are projected once (article 001: every step)
  x = sublayer[1](x, [&](const Tensor& y) {
    return src_attn(y, memory, memory, src_mask, cache && !cache->inputs ? &cache->src_attn : nullptr);
  });
  // 3) feed-forward: out = x + dropout(feed_forward(norm(x)))   (B,T,C)
  return sublayer[2](x, [&](const Tensor& y) { return feed_forward(y); });
}

static const CodeSite kDecoderLayerBackwardSite{__FILE__, __LINE__ + 1, "DecoderLayer::backward"};
Tensor DecoderLayer::backward(const Tensor& dy, DecoderLayer& grad, Tensor& dmemory) const {
  TS_CODE_SITE();
  for (size_t i = 0; i < sublayer.size(); ++i)
    require_forward(sublayer[i], i, kDecoderLayerForwardSite, kDecoderLayerBackwardSite);
  // 3) feed-forward
  Tensor dx = sublayer[2].backward(
      dy, [&](const Tensor& d) { return feed_forward.backward(d, grad.feed_forward); }, grad.sublayer[2]);
  // 2) cross-attention: the query is x; key and value are the memory
  dx = sublayer[1].backward(
      dx,
      [&](const Tensor& d) {
        const MultiHeadedAttention::InputGrads g = src_attn.backward(d, grad.src_attn);
        dmemory += g.dkey;
        dmemory += g.dvalue;
        return g.dquery;
      },
      grad.sublayer[1]);
  // 1) masked self-attention: query, key and value are all x
  return sublayer[0].backward(
      dx,
      [&](const Tensor& d) { return self_attn.self_backward(d, grad.self_attn); },
      grad.sublayer[0]);
}

ModuleRepr DecoderLayer::repr() const {
  std::vector<ModuleRepr> subs;
  for (const SublayerConnection& s : sublayer) subs.push_back(s.repr());
  return {"DecoderLayer", "",
          {{"self_attn", self_attn.repr()},
           {"src_attn", src_attn.repr()},
           {"feed_forward", feed_forward.repr()},
           {"sublayer", module_list_repr(subs)}}};
}

void DecoderLayer::train(bool on) {
  self_attn.train(on);
  src_attn.train(on);
  feed_forward.train(on);
  for (SublayerConnection& s : sublayer) s.train(on);
}

Tensor Decoder::operator()(const Tensor& x_in, const Tensor& memory, const BTensor* src_mask,
                           const BTensor* tgt_mask, std::vector<DecoderLayerCache>* caches) {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("Decoder", x_in);
  if (caches && caches->size() != layers.size())
    fail("Decoder: " + std::to_string(caches->size()) + " caches for " + std::to_string(layers.size()) + " layers");
  // x = layer(x, memory) for each of the N layers (layer i with cache i), then the final norm   (B,T,C)
  Tensor x = x_in;
  for (size_t i = 0; i < layers.size(); ++i) x = layers[i](x, memory, src_mask, tgt_mask, caches ? &(*caches)[i] : nullptr);
  if (grad_enabled()) saved_x = x;
  return norm(x);
}

Tensor Decoder::backward(const Tensor& dy, Decoder& grad, Tensor& dmemory) const {
  TS_CODE_SITE();
  // the final norm, then the N layers in reverse   (B,T,C); each adds into dmemory (B,S,C)
  Tensor dx = norm.backward(saved_x, dy, grad.norm);
  for (size_t i = layers.size(); i-- > 0;) dx = layers[i].backward(dx, grad.layers[i], dmemory);
  return dx;
}

// ---------------------------------------------------------------- PositionalEncoding
TS_NO_FP_CONTRACT PositionalEncoding::PositionalEncoding(int64_t d_model, double p, int64_t max_len) : dropout(p) {
  TS_NO_FP_CONTRACT_BODY
  if (d_model <= 0 || max_len <= 0) fail("PositionalEncoding: d_model and max_len must be positive");
  const size_t C = static_cast<size_t>(d_model), L = static_cast<size_t>(max_len);
  const size_t half = (C + 1) / 2;  // torch.arange(0, C, 2) has ceil(C/2) values
  // 1) div_term = exp(arange(0, C, 2) * -(ln(10000) / C))   (half)
  //    torch: a float multiply by the Python float (cast to float32), then SLEEF expf (8 lanes)
  const float k = static_cast<float>(-(std::log(10000.0) / static_cast<double>(d_model)));
  std::vector<float> div_term(half);
  for (size_t i = 0; i < half; ++i) div_term[i] = static_cast<float>(2 * i) * k;
  //    (torch's vec::map: full 8-lane vectors, then the tail as one partial vector)
  exact::sleef_exp(div_term.data(), int64_t(half));
  // 2) pe_pos = position * div_term   (L, half)
  std::vector<float> pos(L * half), sn, cs;
  for (size_t l = 0; l < L; ++l)
    for (size_t i = 0; i < half; ++i) pos[l * half + i] = static_cast<float>(l) * div_term[i];
  sn = pos;
  cs = pos;
  // 3) pe[:, 0::2] = sin(pe_pos);  pe[:, 1::2] = cos(pe_pos)   (1, L, C)
  exact::sleef_sin(sn.data(), int64_t(sn.size()));
  exact::sleef_cos(cs.data(), int64_t(cs.size()));
  pe = Tensor::from_shape({1, L, C});
  pe.fill(0.0f);
  for (size_t l = 0; l < L; ++l)
    for (size_t i = 0; i < half; ++i) {
      pe.data()[l * C + 2 * i] = sn[l * half + i];
      if (2 * i + 1 < C) pe.data()[l * C + 2 * i + 1] = cs[l * half + i];
    }
}

Tensor PositionalEncoding::operator()(const Tensor& x) const {
  TS_CODE_SITE();
  // out = dropout(x + pe[:, :T])
  // (B,T,C) + (1,T,C) -> (B,T,C)
  if (x.dimension() != 3 || x.shape()[2] != pe.shape()[2]) fail("PositionalEncoding: x must be (B,T,C)");
  const size_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2];
  if (T > pe.shape()[1]) fail("PositionalEncoding: sequence longer than max_len");
  Tensor y = x;
  for (size_t b = 0; b < B; ++b)
    for (size_t i = 0; i < T * C; ++i) y.data()[b * T * C + i] = x.data()[b * T * C + i] + pe.data()[i];
  return dropout(y);
}

ModuleRepr PositionalEncoding::repr() const { return {"PositionalEncoding", "", {{"dropout", dropout.repr()}}}; }

// ---------------------------------------------------------------- Embeddings, Generator
AnnotatedEmbeddings::AnnotatedEmbeddings(int64_t d_model_, int64_t vocab) : lut(vocab, d_model_), d_model(d_model_) {}

Tensor AnnotatedEmbeddings::operator()(const ITensor& x) const {
  TS_CODE_SITE();
  // out = lut(x) * sqrt(d_model)   (the Python float, cast to float32 by torch)
  // (B,T) -> (B,T,C)
  Tensor out = lut(x);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
  for (float& v : out) v = v * scale;
  return out;
}

void AnnotatedEmbeddings::backward(const ITensor& x, const Tensor& dy, AnnotatedEmbeddings& grad) const {
  TS_CODE_SITE();
  // grad.lut.weight[x[n]] += scale dy[n]   (a row used twice gets both gradients)
  const size_t C = static_cast<size_t>(d_model);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
  if (dy.size() != x.size() * C) throw std::invalid_argument("Embeddings.backward: dy must be (B,T,C)");
  for (size_t n = 0; n < x.size(); ++n) {
    float* row = grad.lut.weight.data() + static_cast<size_t>(x.data()[n]) * C;
    for (size_t c = 0; c < C; ++c) row[c] += scale * dy.data()[n * C + c];
  }
}

ModuleRepr AnnotatedEmbeddings::repr() const { return {"Embeddings", "", {{"lut", lut.repr()}}}; }

ModuleRepr EmbedSequential::repr() const { return {"Sequential", "", {{"0", embed.repr()}, {"1", pos.repr()}}}; }

AnnotatedGenerator::AnnotatedGenerator(int64_t d_model, int64_t vocab) : proj(d_model, vocab) {}

Tensor AnnotatedGenerator::operator()(const Tensor& x) const {
  TS_CODE_SITE();
  // log p = log_softmax(x W^T + b)
  // (B,T,C) -> (B,T,V)
  Tensor logp = log_softmax(proj(x));
  if (grad_enabled()) saved = Saved{x, logp};
  return logp;
}

Tensor AnnotatedGenerator::backward(const Tensor& dlogp, AnnotatedGenerator& grad) const {
  TS_CODE_SITE();
  // dz = dlogp - softmax(z) sum_v dlogp, softmax(z) = exp(logp)   (B,T,V);  dx = proj.backward(x, dz)
  const size_t V = static_cast<size_t>(proj.out_features), rows = dlogp.size() / std::max<size_t>(V, 1);
  Tensor dz = Tensor::from_shape(shape_of(dlogp));
  for (size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (size_t j = 0; j < V; ++j) sum += dlogp.data()[r * V + j];
    for (size_t j = 0; j < V; ++j)
      dz.data()[r * V + j] =
          static_cast<float>(dlogp.data()[r * V + j] - std::exp(double(saved.logp.data()[r * V + j])) * sum);
  }
  return proj.backward(saved.x, dz, grad.proj);
}

ModuleRepr AnnotatedGenerator::repr() const { return {"Generator", "", {{"proj", proj.repr()}}}; }

// ---------------------------------------------------------------- EncoderDecoder
Tensor EncoderDecoder::encode(const ITensor& src, const BTensor* src_mask) {
  TS_CODE_SITE();
  // memory = encoder(src_embed(src))   (B,S) -> (B,S,C)
  if (grad_enabled()) saved_src = src;
  return encoder(src_embed(src), src_mask);
}

Tensor EncoderDecoder::decode(const Tensor& memory, const BTensor* src_mask, const ITensor& tgt,
                              const BTensor* tgt_mask) {
  TS_CODE_SITE();
  // out = decoder(tgt_embed(tgt), memory)   (B,T) -> (B,T,C)
  if (grad_enabled()) saved_tgt = tgt;
  return decoder(tgt_embed(tgt), memory, src_mask, tgt_mask);
}

Tensor EncoderDecoder::forward(const ITensor& src, const ITensor& tgt, const BTensor* src_mask,
                               const BTensor* tgt_mask) {
  const Tensor memory = encode(src, src_mask);
  return decode(memory, src_mask, tgt, tgt_mask);
}

void EncoderDecoder::backward(const Tensor& dout, EncoderDecoder& grad) const {
  TS_CODE_SITE();
  // decode's backward: the decoder (every layer adds its memory gradient), then tgt_embed
  Tensor dmemory = zeros(shape_of(encoder.saved_x));
  const Tensor dtgt = decoder.backward(dout, grad.decoder, dmemory);
  tgt_embed.backward(saved_tgt, dtgt, grad.tgt_embed);
  // encode's backward: the encoder from dmemory, then src_embed
  const Tensor dsrc = encoder.backward(dmemory, grad.encoder);
  src_embed.backward(saved_src, dsrc, grad.src_embed);
}

void zero_grad(EncoderDecoder& grads) {
  for (auto& [name, p] : grads.named_parameters()) p->fill(0.0f);
}

ModuleRepr EncoderDecoder::repr() const {
  return {"Transformer", "",
          {{"encoder", encoder.repr()},
           {"decoder", decoder.repr()},
           {"src_embed", src_embed.repr()},
           {"tgt_embed", tgt_embed.repr()},
           {"generator", generator.repr()}}};
}

void EncoderDecoder::train(bool on) {
  encoder.train(on);
  decoder.train(on);
  src_embed.train(on);
  tgt_embed.train(on);
}

namespace {
void add_mha(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix, MultiHeadedAttention& m) {
  for (size_t j = 0; j < m.linears.size(); ++j) {
    out.emplace_back(prefix + ".linears." + std::to_string(j) + ".weight", &m.linears[j].weight);
    out.emplace_back(prefix + ".linears." + std::to_string(j) + ".bias", &m.linears[j].bias);
  }
}
void add_ff(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix, FeedForward& f) {
  const std::string w_1 = prefix + "." + f.linear_names().first, w_2 = prefix + "." + f.linear_names().second;
  out.emplace_back(w_1 + ".weight", &f.linear_1.weight);
  out.emplace_back(w_1 + ".bias", &f.linear_1.bias);
  out.emplace_back(w_2 + ".weight", &f.linear_2.weight);
  out.emplace_back(w_2 + ".bias", &f.linear_2.bias);
}
void add_norm(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix, LayerNorm& n) {
  out.emplace_back(prefix + "." + n.param_names().first, &n.weight);
  out.emplace_back(prefix + "." + n.param_names().second, &n.bias);
}
void add_subs(std::vector<std::pair<std::string, Tensor*>>& out, const std::string& prefix,
              std::vector<SublayerConnection>& subs) {
  for (size_t k = 0; k < subs.size(); ++k) add_norm(out, prefix + ".sublayer." + std::to_string(k) + ".norm", subs[k].norm);
}
}  // namespace

std::vector<std::pair<std::string, Tensor*>> EncoderDecoder::named_parameters() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t i = 0; i < encoder.layers.size(); ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    add_mha(out, p + ".self_attn", encoder.layers[i].self_attn);
    add_ff(out, p + ".feed_forward", encoder.layers[i].feed_forward);
    add_subs(out, p, encoder.layers[i].sublayer);
  }
  add_norm(out, "encoder.norm", encoder.norm);
  for (size_t i = 0; i < decoder.layers.size(); ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    add_mha(out, p + ".self_attn", decoder.layers[i].self_attn);
    add_mha(out, p + ".src_attn", decoder.layers[i].src_attn);
    add_ff(out, p + ".feed_forward", decoder.layers[i].feed_forward);
    add_subs(out, p, decoder.layers[i].sublayer);
  }
  add_norm(out, "decoder.norm", decoder.norm);
  out.emplace_back("src_embed.0.lut.weight", &src_embed.embed.lut.weight);
  out.emplace_back("tgt_embed.0.lut.weight", &tgt_embed.embed.lut.weight);
  out.emplace_back("generator.proj.weight", &generator.proj.weight);
  out.emplace_back("generator.proj.bias", &generator.proj.bias);
  return out;
}

EncoderDecoder create_model(int64_t src_vocab, int64_t tgt_vocab, int64_t N, int64_t d_model, int64_t d_ff,
                            int64_t h, double dropout, const ModelSettings& settings) {
  // 1) attn, ff, pos: drawn once, deep-copied everywhere below
  // the article's MultiHeadedAttention(h, d_model) keeps its dropout default 0.1 (settings.attention_dropout)
  MultiHeadedAttention attn(h, d_model, settings.attention_dropout);
  attn.scale_scores = settings.scale_scores;
  const FeedForward ff = positionwise_feed_forward(d_model, d_ff, dropout, settings.activation);
  const PositionalEncoding pos(d_model, dropout);
  // 2) the five parts, constructed in the article's argument order
  EncoderDecoder model;
  model.encoder = Encoder(EncoderLayer(d_model, attn, ff, dropout), N);
  model.decoder = Decoder(DecoderLayer(d_model, attn, attn, ff, dropout), N);
  model.src_embed = EmbedSequential{AnnotatedEmbeddings(d_model, src_vocab), pos};
  model.tgt_embed = EmbedSequential{AnnotatedEmbeddings(d_model, tgt_vocab), pos};
  model.generator = AnnotatedGenerator(d_model, tgt_vocab);
  // where each sublayer puts its LayerNorm (draws nothing; the final norms stay either way)
  for (EncoderLayer& l : model.encoder.layers)
    for (SublayerConnection& s : l.sublayer) s.norm_place = settings.norm_place;
  for (DecoderLayer& l : model.decoder.layers)
    for (SublayerConnection& s : l.sublayer) s.norm_place = settings.norm_place;
  // 3) xavier_uniform_ on every parameter with more than one dim, in parameters() order
  for (auto& [name, p] : model.named_parameters())
    if (p->dimension() > 1) xavier_uniform_(*p);
  return model;
}

}  // namespace ts
