// attention.hpp: the one multi-head attention every trainable model runs (introduced in ch04,
// trained from ch11 on): the heads' kernel (article 002's listing 9.1, attention_heads and its
// backward), the key/value cache, and MultiHeadedAttention, whose article is a setting (article
// 000's per-head Linears, article 002's fused four, article 004's Keras names).
// Shapes: B batch, T queries, S keys, C = d_model, H = h heads, D = d_k = C/H.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exact/print.hpp"
#include "exact/tensor.hpp"
#include "transformer/nn.hpp"

namespace ts {

// ---------------------------------------------------------------- attention (listing 9.1)
// scores = Q K^T / sqrt(D); masked_fill(mask == 0, -1e9); p = softmax(scores); p = dropout(p);
// out = p V.
// q (B,H,T,D), k,v (B,H,S,D) contiguous; mask broadcastable to (B,H,T,S) (right-aligned,
// rank <= 4), true = keep, or nullptr; dropout or nullptr (train-mode dropout draws);
// -> (B,H,T,D); *p_attn_out (if not null) = the weights p (B,H,T,S).
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const BTensor* mask,
                 const Dropout* dropout, Tensor* p_attn_out);

// The same computation as MultiHeadedAttention runs it: q (B,T,C), k,v (B,S,C) are the
// projected tensors, split into h heads as views (view(B,-1,h,D).transpose(1,2)) exactly
// like torch, so the bits equal the article's code. mask as above -> (B,H,T,D).
// *p_softmax_out (if not null) = the weights before dropout (what the backward needs).
// scale_scores false: the scores are not divided by sqrt(D) (an exercise, ch11 --no-scale).
// hidden: what a hidden score becomes before the softmax, -1e9 (article 002) or -inf (article 000,
// whose query row with every key hidden is then nan).
Tensor attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int64_t h, const BTensor* mask,
                       const Dropout* dropout, Tensor* p_attn_out, Tensor* p_softmax_out = nullptr,
                       bool scale_scores = true, float hidden = -1e9f);
// Backward of attention_heads, per head (scale = sqrt(D)):
//   dpd = dout V^T   (T,S);   dV += pd^T dout   (S,D);   dp = dropout.backward(dpd)
//   ds = p (dp - sum_s dp p) / scale   (T,S) (scale 1 without scale_scores);   dQ += ds K   (T,D);   dK += ds^T Q   (S,D)
// dout (B,T,C) (the merged heads' gradient, read per head in place), q (B,T,C), k, v (B,S,C),
// p the softmax weights before dropout and pd after (B,H,T,S); dq (B,T,C), dk, dv (B,S,C) += .
void attention_heads_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v, int64_t h,
                              const Tensor& p, const Tensor& pd, const Dropout* dropout, Tensor& dq, Tensor& dk,
                              Tensor& dv, bool scale_scores = true);


// ---------------------------------------------------------------- the key/value cache (ch09)
// One attention's cache, an argument of its forward (as Hugging Face passes past_key_values
// into the same forward): the projected keys and values of every position seen so far, so a
// decoding step projects only its own row and attends over all cached positions. Full forward
// and cached decoding run the same MultiHeadedAttention code.
struct KVCache {
  Tensor k, v;         // (B,t,C) projected keys and values of the t positions so far (empty: none)
  bool fixed = false;  // true (cross-attention): key/value are the same at every step (the memory):
                       // projected at the first call, reused after; false: each call appends its rows
  size_t len() const;  // t
  // torch.cat((K, k), dim=1), torch.cat((V, v), dim=1): this step's projected rows appended
  // k, v (B,u,C) -> K, V (B,t+u,C)
  void append(const Tensor& k_new, const Tensor& v_new);
};
// "src/transformer/attention.cpp", from the compiler: where the attention and its backward are written
std::string attention_source();
// "src/transformer/attention.cpp:LINE KVCache::append", file and line from the compiler
std::string kv_cache_append_site();

// ---------------------------------------------------------------- multi-head (listing 9.2)
// 1) project q, k, v  2) split into h heads of d_k  3) attention_heads()  4) merge heads
// 5) the output Linear.
// Three articles write multi-head attention; what differs is a setting of this one module
// (introduced in ch04). Every setting runs the same kernels (attention_heads and its backward),
// so an edit there reaches every chapter that trains a model:
//   Article000  MultiHeadAttention(config)                  heads.i.{q,k,v}: each head its own
//               Linear(C, D), the H outputs side by side; output_linear; no dropout; hidden -inf
//   Article002  MultiHeadedAttention(h, d_model, dropout)   linears.0-3, dropout on the weights
//   Article004  MutilHeadAttention(d_model, num_heads)      wq, wk, wv, dense (Keras Dense init,
//               article004.hpp's mutil_head_attention), no dropout, no mask
// The article sets the projections' layout, the dropout's place, the class name the repr prints
// and the state_dict names of the Linears (linear_name). Article 000's per-head Linears are the
// rows of the fused ones (head i's q.weight is rows iD..iD+D-1 of a (C,C) W_q, ch04 shows it);
// kept as H Linears, each head's projection runs as its own product, as the article's twin does.
enum class AttentionArticle { Article000, Article002, Article004 };

struct MultiHeadedAttention {
  int64_t d_k = 0, h = 0;       // D, H
  // fused (002, 004): 4 x Linear(C, C), four independent draws (q, k, v, output);
  // per head (000): head i's q, k, v Linear(C, D) at 3i, 3i+1, 3i+2, then the output Linear(C, C)
  std::vector<Linear> linears;
  Tensor attn;                  // (B,H,T,S) weights of the last call (after dropout)
  Dropout dropout;              // on the weights (Article002); Article004 has none
  bool scale_scores = true;     // false: scores not divided by sqrt(d_k) (an exercise, ch11 --no-scale)
  AttentionArticle article = AttentionArticle::Article002;
  MultiHeadedAttention() = default;
  MultiHeadedAttention(int64_t h, int64_t d_model, double dropout = 0.1);  // one Linear draw
  // the state_dict name of linears[i]: "linears.i" (Article002), wq, wk, wv, dense (Article004),
  // heads.h.q, .k, .v, output_linear (Article000)
  std::string linear_name(size_t i) const;
  // the output projection (linears[3], or article 000's output_linear)
  const Linear& output_linear() const { return linears.back(); }
  // what a hidden score becomes before the softmax: -inf (Article000) or -1e9
  float hidden_score() const;
  // query (B,T,C), key/value (B,S,C), mask (B|1, T|1, S) true = keep (unsqueezed to heads)
  // -> (B,T,C); stores the weights in attn.
  // With a cache: key/value's projected rows are appended to it (or, cache->fixed, projected
  // once and reused), and the queries attend over every cached position: S = cache->len(); a
  // mask must then be (B|1, T|1, cache->len()) or nullptr.
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value, const BTensor* mask = nullptr,
                    KVCache* cache = nullptr);
  // Gradients of the three inputs (a self-attention's input gets their sum).
  struct InputGrads { Tensor dquery, dkey, dvalue; };
  // dmerged = linears[3].backward(merged, dy); attention_heads_backward -> dq, dk, dv;
  // dquery = linears[0].backward(query, dq), dkey, dvalue likewise   dy (B,T,C)
  InputGrads backward(const Tensor& dy, MultiHeadedAttention& grad) const;
  // A self-attention's (query, key and value one x) input gradient: dx = dquery + dkey + dvalue   (B,T,C)
  Tensor self_backward(const Tensor& dy, MultiHeadedAttention& grad) const;
  ModuleRepr repr() const;
  void train(bool on) { dropout.training = on; }
  // Q, K or V (which 0, 1, 2) of x: linears[which](x), or article 000's H heads' Linears side by side
  // x (B,T,C) -> (B,T,C)
  Tensor project(size_t which, const Tensor& x) const;
  // its backward: dx = dP W (each head's D columns of dP times its own W, summed over the heads in
  // order, article 000); the weights' gradients added into grad   x, dp (B,T,C) -> dx (B,T,C)
  Tensor project_backward(size_t which, const Tensor& x, const Tensor& dp, MultiHeadedAttention& grad) const;
  // What the last forward kept for backward (EnableGrad only): its inputs, their projections
  // (B,T|S,C), the weights before dropout (B,H,T,S), the merged heads (B,T,C). An input that is
  // the same tensor as the one before it (self-attention: key and value are query; a decoder's
  // memory: value is key) is kept once, its own slot left empty (key_is_query, value_is_key).
  struct Saved {
    Tensor query, key, value, q, k, v, p, merged;
    bool key_is_query = false, value_is_key = false;
    const Tensor& key_in() const { return key_is_query ? query : key; }
    const Tensor& value_in() const { return value_is_key ? key_in() : value; }
  } saved;
};


// Article 000's MultiHeadAttention(config): the one attention in its setting. Draws head 0's q, k,
// v, head 1's, ..., then output_linear, as the article's constructor does.
MultiHeadedAttention multi_head_attention(const Config& config);

}  // namespace ts
