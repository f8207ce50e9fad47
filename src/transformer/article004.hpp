// article004.hpp: article 004's TensorFlow functions ("GPT (1): transformer principles and
// code"), with PyTorch's semantics and bits, as tests/twins/article004.py re-types them.
// Introduced in ch02 (scaled_dot_product_attention on the toy example); the masks in ch08.
//
// Article 004's masks say 1 = HIDE (the PyTorch articles 000/002 say 1 = keep):
//   create_padding_mask(seq)       1.0 where the id is the padding id 0      seq (B,S) -> (B,1,1,S)
//   create_look_ahead_mask(size)   1 - band_part(ones, -1, 0): 1 above the diagonal  -> (S,S)
// and are applied by adding mask * -1e9 to the scaled scores.
#pragma once

#include <cstdint>
#include <vector>

#include "exact/tensor.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"

namespace ts {

// seq (B,S) ids -> (B,1,1,S) float: 1.0 where seq == 0 (padding), shaped to broadcast over
// heads and queries.
Tensor create_padding_mask(const std::vector<std::vector<int64_t>>& seq);

// -> (size,size) float: 1.0 strictly above the diagonal, the future keys a query may not see.
Tensor create_look_ahead_mask(int64_t size);

// matmul_qk = q k^T; attn_weight = softmax(matmul_qk / sqrt(dk) + mask * -1e9); output = attn_weight v
// q (T,D) or (B,T,D), k (S,D) or (B,S,D), v (S,Dv) or (B,S,Dv); mask (T,S), (1,T,S) or (B,T,S)
// with 1 = hide, or nullptr -> output (T,Dv) or (B,T,Dv); *attn_weight (if not null) = the
// weights (T,S) or (B,T,S). The products are torch.matmul's calls (a transposed view of k,
// never a copy), so the bits equal the twin's.
Tensor scaled_dot_product_attention_004(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                                        Tensor* attn_weight);

// ---------------------------------------------------------------- MutilHeadAttention (§3.2)
// The article's layer (it spells it "MutilHeadAttention"), introduced in ch04, is the one
// multi-head attention of annotated.hpp in AttentionArticle::Article004's setting:
//   q, k, v = wq(q), wk(k), wv(v); split_heads: reshape (B,-1,H,D), transpose [0,2,1,3];
//   scaled_dot_product_attention per head; transpose back, reshape (B,T,C); dense.
// The article's call(v, k, q, mask=None) is the module's (query, key, value) with the arguments
// the other way round; its attention_weights (B,H,T,S) are the module's attn after the call.
// Dense(d_model) is a Linear with Keras's defaults, glorot-uniform kernel and zero bias, drawn
// like tests/twins/article004.py: for each Dense (wq, wk, wv, dense), nn.Linear's init, then
// xavier_uniform_. Shapes: H = num_heads, C = d_model, D = depth = C / H.
MultiHeadedAttention mutil_head_attention(int64_t d_model, int64_t num_heads);

// Article 004's LayerNormalization (a Keras layer, §3.3; introduced in ch06) is the one LayerNorm
// of nn.hpp with LayerNormArithmetic::Article004: gamma (x - mean) / (std_n + eps) + beta, std_n
// the POPULATION std (tf.keras.backend.std, / C), eps 1e-6 added to the std itself.

}  // namespace ts
