// kv_cache.cpp: one-token decoding steps with per-layer caches (see kv_cache.hpp).
// Each step reads like article 002's DecoderLayer.forward with the causal mask replaced by the
// cache; tests/twins/ch09_decoder.py runs the same steps in PyTorch.
#include "transformer/kv_cache.hpp"
#include "base/code_site.hpp"

#include <algorithm>
#include <stdexcept>

#include "exact/tensor_ops.hpp"

namespace ts {

MacCount& MacCount::operator+=(const MacCount& o) {
  self_proj += o.self_proj;
  self_attn += o.self_attn;
  cross_proj += o.cross_proj;
  cross_attn += o.cross_attn;
  ffn += o.ffn;
  return *this;
}

size_t LayerCache::len() const {
  const Tensor& t = rows.dimension() == 3 ? rows : k;
  return t.dimension() == 3 ? t.shape()[1] : 0;
}

Tensor cat_dim1(const Tensor& a, const Tensor& b) {
  // torch.cat((a, b), dim=1)
  // (B,t,C) + (B,u,C) -> (B,t+u,C)
  if (a.dimension() != 3) return b;  // the first step: nothing cached yet
  if (b.dimension() != 3 || a.shape()[0] != b.shape()[0] || a.shape()[2] != b.shape()[2])
    throw std::invalid_argument("cat_dim1: tensors must be (B,t,C) and (B,u,C)");
  return cat(std::vector<const Tensor*>{&a, &b}, 1);
}

namespace {

uint64_t u(size_t v) { return static_cast<uint64_t>(v); }

// One query row attends over cached keys/values, through a MultiHeadedAttention's own
// linears[3] and dropout, storing the weights in its attn (as forward() does).
// q (B,1,C), k,v (B,t,C), mask (B|1,1,1,t) or nullptr -> (B,1,C)
Tensor attend_row(MultiHeadedAttention& mha, const Tensor& q, const Tensor& k, const Tensor& v, const BTensor* mask) {
  // 1) split heads and attend: softmax(Q_h K_h^T / sqrt(D)) V_h   (B,H,1,D)
  Tensor x = attention_heads(q, k, v, mha.h, mask, &mha.dropout, &mha.attn);
  // 2) merge heads: with one query row, (B,H,1,D) is laid out exactly like (B,1,H*D)
  x.reshape({q.shape()[0], 1, q.shape()[2]});
  // 3) output projection   (B,1,C)
  return mha.linears[3](x);
}

}  // namespace

// the line below: decoder_layer_step's own, for decoder_layer_step_site()
const CodeSite kStepSite{__FILE__, __LINE__ + 1, "decoder_layer_step"};
Tensor decoder_layer_step(DecoderLayer& layer, const Tensor& x_in, const Tensor& memory, const BTensor* src_mask,
                          LayerCache& cache, CacheKind kind, MacCount& macs) {
  TS_CODE_SITE();
  if (x_in.dimension() != 3 || x_in.shape()[1] != 1) throw std::invalid_argument("decoder_layer_step: x must be (B,1,C)");
  const size_t B = x_in.shape()[0], C = x_in.shape()[2], S = memory.shape()[1];
  const size_t F = static_cast<size_t>(layer.feed_forward.w_1.out_features);
  MultiHeadedAttention& self_attn = layer.self_attn;
  MultiHeadedAttention& src_attn = layer.src_attn;
  // src_mask.unsqueeze(1): the same mask for every head   (B|1,1,1,S)
  BTensor mask4;
  if (src_mask) {
    mask4 = *src_mask;
    mask4.reshape({src_mask->shape()[0], 1, 1, src_mask->shape()[2]});
  }
  Tensor x;
  if (kind == CacheKind::Inputs) {
    // 1) masked self-attention, article 001's way: rows = cat(rows, n); self_attn(n, rows, rows)
    //    (B,1,C) over (B,t,C); no mask: the cache holds only the past
    x = layer.sublayer[0](x_in, [&](const Tensor& n) {
      cache.rows = cat_dim1(cache.rows, n);
      return self_attn(n, cache.rows, cache.rows, nullptr);
    });
    const size_t t = cache.rows.shape()[1];
    macs.self_proj += u(B * C * C) * 2 + u(2 * B * t * C * C);  // Q and output: 1 row; K, V: all t rows
    macs.self_attn += u(2 * B * t * C);                          // scores (B,H,1,t), weights V
    // 2) cross-attention, again as article 001 writes it: the memory is projected every step
    x = layer.sublayer[1](x, [&](const Tensor& n) { return src_attn(n, memory, memory, src_mask); });
    macs.cross_proj += u(B * C * C) * 2 + u(2 * B * S * C * C);
    macs.cross_attn += u(2 * B * S * C);
  } else {
    // 1) masked self-attention with cached keys and values: project only the new row
    x = layer.sublayer[0](x_in, [&](const Tensor& n) {
      // q, k, v of the new row   (B,1,C) each
      const Tensor q = self_attn.linears[0](n);
      const Tensor k = self_attn.linears[1](n);
      const Tensor v = self_attn.linears[2](n);
      // append: K = cat(K, k), V = cat(V, v)   (B,t,C)
      cache.k = cat_dim1(cache.k, k);
      cache.v = cat_dim1(cache.v, v);
      return attend_row(self_attn, q, cache.k, cache.v, nullptr);
    });
    const size_t t = cache.k.shape()[1];
    macs.self_proj += u(4 * B * C * C);
    macs.self_attn += u(2 * B * t * C);
    // 2) cross-attention: the memory's keys and values are the same at every step; project once
    if (cache.mem_k.dimension() != 3) {
      cache.mem_k = src_attn.linears[1](memory);  // (B,S,C)
      cache.mem_v = src_attn.linears[2](memory);  // (B,S,C)
      macs.cross_proj += u(2 * B * S * C * C);
    }
    x = layer.sublayer[1](x, [&](const Tensor& n) {
      const Tensor q = src_attn.linears[0](n);  // (B,1,C)
      return attend_row(src_attn, q, cache.mem_k, cache.mem_v, src_mask ? &mask4 : nullptr);
    });
    macs.cross_proj += u(2 * B * C * C);
    macs.cross_attn += u(2 * B * S * C);
  }
  // 3) feed-forward on the new row   (B,1,C) -> (B,1,F) -> (B,1,C)
  x = layer.sublayer[2](x, [&](const Tensor& n) { return layer.feed_forward(n); });
  macs.ffn += u(2 * B * C * F);
  return x;
}

std::string decoder_layer_step_site() {
  return code_site_path(kStepSite.file) + ":" + std::to_string(kStepSite.line) + " " + kStepSite.func;
}

Tensor decoder_step(Decoder& decoder, const Tensor& x_in, const Tensor& memory, const BTensor* src_mask,
                    DecoderCache& cache) {
  TS_CODE_SITE();
  if (cache.layers.size() != decoder.layers.size())
    throw std::invalid_argument("decoder_step: the cache has " + std::to_string(cache.layers.size()) +
                                " layers, the decoder " + std::to_string(decoder.layers.size()));
  // x = layer_i(x) with layer i's cache, for every layer; then the final norm   (B,1,C)
  Tensor x = x_in;
  for (size_t i = 0; i < decoder.layers.size(); ++i)
    x = decoder_layer_step(decoder.layers[i], x, memory, src_mask, cache.layers[i], cache.kind, cache.macs);
  return decoder.norm(x);
}

MacCount decoder_full_pass_macs(int64_t N, int64_t B, int64_t T, int64_t S, int64_t C, int64_t F) {
  const uint64_t n = u(static_cast<size_t>(N)), b = u(static_cast<size_t>(B)), t = u(static_cast<size_t>(T)),
                 s = u(static_cast<size_t>(S)), c = u(static_cast<size_t>(C)), f = u(static_cast<size_t>(F));
  MacCount m;
  m.self_proj = n * 4 * b * t * c * c;              // Q, K, V, output on all T rows
  m.self_attn = n * 2 * b * t * t * c;              // (T,T) scores incl. the masked half, weights V
  m.cross_proj = n * (2 * b * t * c * c + 2 * b * s * c * c);  // Q, output on T rows; K, V on S rows
  m.cross_attn = n * 2 * b * t * s * c;             // (T,S) scores, weights V
  m.ffn = n * 2 * b * t * c * f;                    // w_1, w_2 on T rows
  return m;
}

}  // namespace ts
