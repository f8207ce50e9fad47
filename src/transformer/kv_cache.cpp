// kv_cache.cpp: one-token decoding steps with per-layer caches (see kv_cache.hpp).
// The step runs article 002's Decoder.forward itself, the cache passed as an argument (no mask:
// the cache holds only the past); tests/twins/ch09_decoder.py runs the same steps in PyTorch.
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

DecoderCache::DecoderCache(CacheKind k, size_t n_layers) : kind(k), layers(n_layers) {
  for (DecoderLayerCache& l : layers) l.inputs = k == CacheKind::Inputs;
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
}  // namespace

Tensor decoder_step(Decoder& decoder, const Tensor& x_in, const Tensor& memory, const BTensor* src_mask,
                    DecoderCache& cache) {
  TS_CODE_SITE();
  if (x_in.dimension() != 3 || x_in.shape()[1] != 1) throw std::invalid_argument("decoder_step: x must be (B,1,C)");
  if (cache.layers.size() != decoder.layers.size())
    throw std::invalid_argument("decoder_step: the cache has " + std::to_string(cache.layers.size()) +
                                " layers, the decoder " + std::to_string(decoder.layers.size()));
  // whether the memory's keys and values were projected before this step (key/value cache: once)
  std::vector<bool> had_memory(cache.layers.size());
  for (size_t i = 0; i < cache.layers.size(); ++i) had_memory[i] = cache.layers[i].src_attn.len() > 0;
  // the same forward as the full pass, one row, each layer reading and appending to its cache   (B,1,C)
  const Tensor out = decoder(x_in, memory, src_mask, nullptr, &cache.layers);
  // the products this step ran, from what the caches now hold (t positions per layer)
  const auto i64 = [](size_t v) { return static_cast<int64_t>(v); };
  const size_t B = x_in.shape()[0], C = x_in.shape()[2], S = memory.shape()[1];
  for (size_t i = 0; i < decoder.layers.size(); ++i) {
    const DecoderLayerCache& l = cache.layers[i];
    cache.macs += decoder_step_macs(l.inputs ? CacheKind::Inputs : CacheKind::KeysValues, i64(B), i64(l.len()),
                                    i64(S), i64(C), decoder.layers[i].feed_forward.linear_1.out_features,
                                    had_memory[i]);
  }
  return out;
}

MacCount decoder_step_macs(CacheKind kind, int64_t B_, int64_t t_, int64_t S_, int64_t C_, int64_t F_,
                           bool memory_cached) {
  const uint64_t B = u(static_cast<size_t>(B_)), t = u(static_cast<size_t>(t_)), S = u(static_cast<size_t>(S_)),
                 C = u(static_cast<size_t>(C_)), F = u(static_cast<size_t>(F_));
  MacCount m;
  if (kind == CacheKind::Inputs) {
    m.self_proj = B * C * C * 2 + 2 * B * t * C * C;   // Q and output: 1 row; K, V: all t rows
    m.cross_proj = B * C * C * 2 + 2 * B * S * C * C;  // the memory projected every step
  } else {
    m.self_proj = 4 * B * C * C;                                         // Q, K, V and output of the new row only
    m.cross_proj = 2 * B * C * C + (memory_cached ? 0 : 2 * B * S * C * C);  // memory K, V: once
  }
  m.self_attn = 2 * B * t * C;   // scores (B,H,1,t), weights V
  m.cross_attn = 2 * B * S * C;  // scores (B,H,1,S), weights V
  m.ffn = 2 * B * C * F;         // w_1, w_2 on the new row
  return m;
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
