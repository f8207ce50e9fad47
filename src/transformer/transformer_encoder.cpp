// transformer_encoder.cpp: article 000's encoder (transformer_encoder.hpp). Each forward reads top
// to bottom like the article's Python; comments give the formula, then the shape.
#include "transformer/transformer_encoder.hpp"
#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "base/errors.hpp"

#include <stdexcept>
#include <string>

#include "exact/tensor_ops.hpp"
#include "transformer/grad.hpp"

namespace ts {

// ---------------------------------------------------------------- encoder layer
TransformerEncoderLayer::TransformerEncoderLayer(const Config& config) {
  name = "TransformerEncoderLayer";
  size = config.hidden_size;
  // layer_norm_1, layer_norm_2: nn.LayerNorm(C) (no draws); the residual adds without a dropout
  SublayerConnection residual;
  residual.norm = LayerNorm(config.hidden_size);
  residual.dropout = Dropout(0.0);
  residual.named = false;
  sublayer.assign(2, residual);
  self_attn = multi_head_attention(config);  // draws head 0's q, k, v, ..., output_linear
  feed_forward = FeedForward(config);        // draws linear_1, then linear_2
}

std::string transformer_encoder_source() { return code_site_path(__FILE__); }

BTensor keep_where_nonzero(const Tensor& mask) {
  // keep = (mask != 0)   (1|B,T,S)
  BTensor keep = BTensor::from_shape(shape_of(mask));
  for (size_t i = 0; i < mask.size(); ++i) keep.data()[i] = mask.data()[i] != 0.0f;
  return keep;
}

Tensor TransformerEncoderLayer::post_ln(const Tensor& x_in, const BTensor* mask) const {
  TS_CODE_SITE();
  // the same weights, each sublayer's norm moved after its residual   (B,T,C)
  TransformerEncoderLayer post = *this;
  for (SublayerConnection& s : post.sublayer) s.norm_place = NormPlace::Post;
  // 1) x = LN1(x + MHA(x, x, x));  2) x = LN2(x + FFN(x))   (B,T,C)
  return post(x_in, mask);
}

ModuleRepr TransformerEncoderLayer::repr() const {
  return {"TransformerEncoderLayer", "",
          {{"layer_norm_1", layer_norm_1().repr()}, {"layer_norm_2", layer_norm_2().repr()},
           {"attention", self_attn.repr()}, {"feed_forward", feed_forward.repr()}}};
}

// ---------------------------------------------------------------- embeddings + encoder
Embeddings::Embeddings(const Config& config) {
  token_embeddings = Embedding(config.vocab_size, config.hidden_size);
  position_embeddings = Embedding(config.max_position_embeddings, config.hidden_size);
  layer_norm = LayerNorm(config.hidden_size, LayerNormArithmetic::Article000, 1e-12);
  dropout = Dropout();  // nn.Dropout() defaults to p = 0.5
}

static const CodeSite kEmbeddingsForwardSite{__FILE__, __LINE__ + 1, "Embeddings::operator()"};
Tensor Embeddings::operator()(const ITensor& input_ids) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("Embeddings", input_ids);
  // 1) position ids 0..T-1              (1,T)
  const size_t T = input_ids.shape()[1];
  if (T > position_embeddings.weight.shape()[0])
    throw std::invalid_argument("Embeddings: sequence longer than the position table");
  ITensor position_ids = ITensor::from_shape({1, T});
  for (size_t t = 0; t < T; ++t) position_ids(0, t) = static_cast<int64_t>(t);
  // 2) token + position embeddings      (B,T,C) + (1,T,C)
  Tensor token = token_embeddings(input_ids);
  Tensor position = position_embeddings(position_ids);
  Tensor embeddings = token + position;
  if (grad_enabled()) saved.embeddings = embeddings;  // kept for the backward
  // 3) LayerNorm, then Dropout          (B,T,C)
  return dropout(layer_norm(embeddings));
}

static const CodeSite kEmbeddingsBackwardSite{__FILE__, __LINE__ + 1, "Embeddings::backward"};
void Embeddings::backward(const ITensor& input_ids, const Tensor& dy, Embeddings& grad) const {
  TS_CODE_SITE();
  if (saved.embeddings.size() != dy.size()) throw std::logic_error("Embeddings.backward: no forward under EnableGrad");
  require_forward(dropout.ready_for(dy), "dropout", kEmbeddingsForwardSite, kEmbeddingsBackwardSite);
  // 3) de = LN.backward(token + position, dropout.backward(dy))   (B,T,C)
  const Tensor de = layer_norm.backward(saved.embeddings, dropout.backward(dy), grad.layer_norm);
  // 2) the token rows: grad.token_embeddings.weight[ids[b,t]] += de[b,t]
  token_embeddings.backward(input_ids, de, grad.token_embeddings);
  // 1) the position rows, shared by the B sentences: dpos[t] = sum_b de[b,t]   (1,T,C)
  const size_t B = de.shape()[0], T = de.shape()[1], C = de.shape()[2];
  Tensor dpos = Tensor::from_shape({1, T, C});
  dpos.fill(0.0f);
  for (size_t b = 0; b < B; ++b)
    for (size_t i = 0; i < T * C; ++i) dpos.data()[i] += de.data()[b * T * C + i];
  ITensor position_ids = ITensor::from_shape({1, T});
  for (size_t t = 0; t < T; ++t) position_ids(0, t) = static_cast<int64_t>(t);
  position_embeddings.backward(position_ids, dpos, grad.position_embeddings);
}

ModuleRepr Embeddings::repr() const {
  return {"Embeddings", "",
          {{"token_embeddings", token_embeddings.repr()}, {"position_embeddings", position_embeddings.repr()},
           {"layer_norm", layer_norm.repr()}, {"dropout", dropout.repr()}}};
}

TransformerEncoder::TransformerEncoder(const Config& config) {
  embeddings = Embeddings(config);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) layers.emplace_back(config);
}

Tensor TransformerEncoder::operator()(const ITensor& input_ids, const Tensor* mask) const {
  TS_CODE_SITE();
  TS_TRACE_SCOPE("TransformerEncoder", input_ids);
  // x = Embeddings(ids); then x = layer(x) for each of the N layers
  // (B,T) -> (B,T,C)
  Tensor x = embeddings(input_ids);
  if (grad_enabled()) saved_ids = input_ids;  // kept for the backward
  // the mask as every layer's attention reads it: true = keep   (1|B,T,T)
  const BTensor keep = mask ? keep_where_nonzero(*mask) : BTensor();
  for (const TransformerEncoderLayer& layer : layers) x = layer(x, mask ? &keep : nullptr);
  return x;
}

void TransformerEncoder::backward(const Tensor& dy, TransformerEncoder& grad) const {
  TS_CODE_SITE();
  // the layers last first, then the embeddings   (B,T,C)
  Tensor d = dy;
  for (size_t l = layers.size(); l-- > 0;) d = layers[l].backward(d, grad.layers[l]);
  embeddings.backward(saved_ids, d, grad.embeddings);
}

std::vector<std::pair<std::string, Tensor*>> TransformerEncoder::named_parameters() {
  std::vector<std::pair<std::string, Tensor*>> out;
  auto lin = [&](const std::string& name, Linear& l) {
    out.push_back({name + ".weight", &l.weight});
    out.push_back({name + ".bias", &l.bias});
  };
  auto norm = [&](const std::string& name, LayerNorm& n) {
    out.push_back({name + ".weight", &n.weight});
    out.push_back({name + ".bias", &n.bias});
  };
  out.push_back({"embeddings.token_embeddings.weight", &embeddings.token_embeddings.weight});
  out.push_back({"embeddings.position_embeddings.weight", &embeddings.position_embeddings.weight});
  norm("embeddings.layer_norm", embeddings.layer_norm);
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    TransformerEncoderLayer& y = layers[l];
    norm(p + "layer_norm_1", y.layer_norm_1());
    norm(p + "layer_norm_2", y.layer_norm_2());
    for (size_t i = 0; i < y.self_attn.linears.size(); ++i)
      lin(p + "attention." + y.self_attn.linear_name(i), y.self_attn.linears[i]);
    lin(p + "feed_forward.linear_1", y.feed_forward.linear_1);
    lin(p + "feed_forward.linear_2", y.feed_forward.linear_2);
  }
  return out;
}

void zero_grad(TransformerEncoder& grads) {
  for (auto& [name, p] : grads.named_parameters()) p->fill(0.0f);
}

ModuleRepr TransformerEncoder::repr() const {
  std::vector<ModuleRepr> items;
  for (const TransformerEncoderLayer& l : layers) items.push_back(l.repr());
  return {"TransformerEncoder", "", {{"embeddings", embeddings.repr()}, {"layers", module_list_repr(items)}}};
}

void TransformerEncoder::train(bool on) {
  embeddings.train(on);
  for (TransformerEncoderLayer& l : layers) l.train(on);
}


}  // namespace ts
