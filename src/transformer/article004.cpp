// article004.cpp: article 004's functions (see article004.hpp); formula line, then shape line.
#include "transformer/article004.hpp"
#include "base/code_site.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "exact/fp_contract.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/rng.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/annotated.hpp"


namespace ts {

Tensor create_padding_mask(const std::vector<std::vector<int64_t>>& seq) {
  TS_CODE_SITE();
  // seq = cast(equal(seq, 0), float32);  return seq[:, newaxis, newaxis, :]
  // (B,S) -> (B,1,1,S)
  if (seq.empty() || seq[0].empty()) throw std::invalid_argument("create_padding_mask: empty batch");
  const size_t B = seq.size(), S = seq[0].size();
  Tensor m = Tensor::from_shape({B, 1, 1, S});
  for (size_t b = 0; b < B; ++b) {
    if (seq[b].size() != S) throw std::invalid_argument("create_padding_mask: rows of different lengths");
    for (size_t s = 0; s < S; ++s) m(b, 0, 0, s) = seq[b][s] == 0 ? 1.0f : 0.0f;
  }
  return m;
}

Tensor create_look_ahead_mask(int64_t size) {
  TS_CODE_SITE();
  // mask = 1 - band_part(ones((size, size)), -1, 0): band_part keeps the lower triangle
  // (size,size)
  if (size < 1) throw std::invalid_argument("create_look_ahead_mask: size must be positive");
  const size_t n = static_cast<size_t>(size);
  Tensor m = Tensor::from_shape({n, n});
  for (size_t t = 0; t < n; ++t)
    for (size_t s = 0; s < n; ++s) m(t, s) = 1.0f - (s <= t ? 1.0f : 0.0f);
  return m;
}

TS_NO_FP_CONTRACT Tensor scaled_dot_product_attention_004(const Tensor& q, const Tensor& k, const Tensor& v,
                                                           const Tensor* mask, Tensor* attn_weight) {
  TS_NO_FP_CONTRACT_BODY
  const size_t rank = q.dimension();
  if (rank < 2 || rank > 3 || k.dimension() != rank || v.dimension() != rank)
    throw std::invalid_argument("scaled_dot_product_attention_004: q, k, v must all be 2-D or all 3-D");
  const size_t D = q.shape()[rank - 1];
  if (k.shape()[rank - 1] != D) throw std::invalid_argument("scaled_dot_product_attention_004: q and k widths differ");
  // 1) matmul_qk = q k^T, k^T a transposed view of k (torch.matmul(q, k.transpose(-2, -1)))
  //    (T,D) x (D,S) -> (T,S)   or   (B,T,D) x (B,D,S) -> (B,T,S)
  Tensor matmul_qk;
  if (rank == 2) {
    const int64_t T = static_cast<int64_t>(q.shape()[0]), S = static_cast<int64_t>(k.shape()[0]);
    const int64_t d = static_cast<int64_t>(D);
    matmul_qk = Tensor::from_shape({q.shape()[0], k.shape()[0]});
    addmm_(MatView{matmul_qk.data(), T, S, S, 1}, CMatView{q.data(), T, d, d, 1}, CMatView{k.data(), d, S, 1, d},
           0.0f, 1.0f);
  } else {
    matmul_qk = bmm_nt(q, k);  // 3-D matmul is torch.bmm on the transposed view
  }
  // 2) attn_weight = matmul_qk / sqrt(dk), dk = k.shape[-1] as a float32
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(D)));
  Tensor scores = matmul_qk / scale;
  // 3) attn_weight += mask * -1e9   (1 = hide; a float32 product, then a float32 sum)
  //    mask (T,S) or (1|B,T,S) broadcast to the scores
  if (mask) {
    const size_t TS = scores.shape()[rank - 2] * scores.shape()[rank - 1];
    const size_t batches = scores.size() / TS;
    if (mask->size() != TS && mask->size() != scores.size())
      throw std::invalid_argument("scaled_dot_product_attention_004: the mask must be (T,S), (1,T,S) or (B,T,S)");
    const bool per_batch = mask->size() == scores.size();
    for (size_t b = 0; b < batches; ++b) {
      const float* m = mask->data() + (per_batch ? b * TS : 0);
      float* s = scores.data() + b * TS;
      for (size_t i = 0; i < TS; ++i) s[i] += m[i] * -1e9f;
    }
  }
  // 4) attn_weight = softmax(attn_weight, axis=-1)
  //    (...,T,S)
  Tensor weights = softmax(scores);
  // 5) output = attn_weight v
  //    (...,T,S) x (...,S,Dv) -> (...,T,Dv)
  Tensor output = matmul(weights, v);
  if (attn_weight) *attn_weight = std::move(weights);
  return output;
}

MultiHeadedAttention mutil_head_attention(int64_t d_model, int64_t num_heads) {
  if (num_heads <= 0 || d_model <= 0 || d_model % num_heads != 0)
    throw std::invalid_argument("MutilHeadAttention: d_model % num_heads must be 0");
  MultiHeadedAttention mha;
  mha.article = AttentionArticle::Article004;  // names wq, wk, wv, dense; no dropout
  mha.h = num_heads, mha.d_k = d_model / num_heads;  // H, depth D
  mha.dropout = Dropout(0.0);
  // self.wq, wk, wv, dense = keras_dense(d_model, d_model): nn.Linear's draws, then xavier_uniform_
  for (int i = 0; i < 4; ++i) {
    Linear l(d_model, d_model);
    xavier_uniform_(l.weight);
    l.bias.fill(0.0f);
    mha.linears.push_back(std::move(l));
  }
  return mha;
}

}  // namespace ts
