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

}  // namespace ts
