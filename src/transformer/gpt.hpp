// transformer/gpt.hpp: ch12's decoder-only Transformer, GPT-2's layout at a small size, composed
// from the course's modules (annotated.hpp) the way nanoGPT's model.py composes Block and GPT:
//
//   x = drop(wte[idx] + wpe[pos])                             (B,T,C) token + learned position
//   N blocks:  x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))   pre-LN SublayerConnections
//     attn: MultiHeadedAttention (its four Linears q, k, v, out) under the causal mask
//     mlp:  PositionwiseFeedForward with a GELU (C -> F -> C)
//   (each block is article 002's EncoderLayer with those settings: see Block)
//   logits = ln_f(x) W^T,  W = wte (tied, as GPT-2) or its own lm_head (V,C)
//
// One forward serves training and generation: given one KVCache per block, a call feeds only the
// new positions, each attention appends their keys and values to its cache and attends over all
// cached positions (the mask then spans the cached past). The backward is the modules' own,
// called in reverse (llm.c's habit, transformer/grad.hpp): gradients go into a second GPT.
// Dropout sits where GPT-2 has it: after the embeddings, on the attention weights, on each
// sublayer's output (the feed-forward's own inner dropout is 0: GPT-2 has none there).
// Shapes: B batch, T new positions, P cached positions before them, S = P + T, C, H, D = C/H,
// F, V vocabulary.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"

namespace ts {

struct GPTConfig {
  int64_t vocab_size = 0, block_size = 16;  // V, the rows of wpe
  int64_t n_layer = 2, n_embd = 64, n_head = 4, d_ff = 256;
  double dropout = 0.0;
  bool tied = true;    // logits read wte (GPT-2) or their own lm_head.weight
  bool causal = true;  // false: no causal mask (an exercise: the model then sees the answer)
  GeluBackwardKernel gelu_backward_kernel = nullptr;  // every MLP's (nn.hpp): nullptr, the plain loop
};

// The mask of T new queries over S = past + T keys, (1,T,S), true = may attend: with causal,
// query t (at position past + t) sees keys 0..past+t; without, every key. Every forward uses it,
// with a cache (past > 0) or without (past = 0).
BTensor gpt_causal_mask(int64_t T, int64_t past, bool causal);
// gpt_causal_mask's file and line, from the compiler: "src/transformer/gpt.cpp:LINE gpt_causal_mask"
std::string gpt_causal_mask_site();

// x = x + attn(ln_1(x));  x = x + mlp(ln_2(x)): article 002's EncoderLayer (self_attn is nanoGPT's
// attn, feed_forward its mlp, sublayer[0].norm / [1].norm its ln_1 / ln_2), under a causal mask,
// with a GELU feed-forward. Its forward (a cache an argument) and backward are EncoderLayer's.
struct Block : EncoderLayer {
  Block() = default;
  explicit Block(const GPTConfig& c);  // no random draws: weights zero, norms one (set them after)
};

struct GPT {
  GPTConfig config;
  Embedding wte;            // (V,C)
  Embedding wpe;            // (block_size,C)
  Dropout drop;
  std::vector<Block> h;     // n_layer
  LayerNorm ln_f;           // (C), article 002's arithmetic
  Tensor lm_head;           // (V,C) untied; empty when tied (the head reads wte.weight)
  GPT() = default;
  explicit GPT(const GPTConfig& c);  // no random draws: weights zero, norms one (set them after)
  // idx (B,T) -> logits (B,T,V). caches: one per block, all holding the same P positions, or
  // nullptr (P = 0); positions P..P+T must be < block_size.
  Tensor forward(const ITensor& idx, std::vector<KVCache>* caches = nullptr);
  // dlogits (B,T,V) of the last forward (under EnableGrad, without caches): every parameter's
  // gradient ADDED into grad (a GPT of the same config; tied: the head's into grad.wte)
  void backward(const Tensor& dlogits, GPT& grad) const;
  // The weight the logits read: wte.weight (tied) or lm_head.
  const Tensor& head_weight() const;
  void train(bool on);
  // Every parameter with its state_dict name (transformer.h.0.self_attn.linears.0.weight, ...),
  // wte first, lm_head.weight last (untied only).
  std::vector<std::pair<std::string, Tensor*>> named_parameters();
  // one empty KVCache per block, for generation
  std::vector<KVCache> make_caches() const { return std::vector<KVCache>(h.size()); }

  // what the last forward kept for backward (EnableGrad only): the ids, ln_f's input and output
  struct Saved { ITensor idx; Tensor x, xf; } saved;
};

// GPT::head_weight's file and line (where the storage the head reads is chosen), the same way
std::string gpt_head_weight_site();
// GPT::named_parameters's file and line (the parameters the model holds, what training steps)
std::string gpt_parameters_site();
// GPT::forward's file and line, from the compiler: "src/transformer/gpt.cpp:LINE GPT::forward"
std::string gpt_forward_site();
// GPT::backward's file and line, from the compiler: "src/transformer/gpt.cpp:LINE GPT::backward"
std::string gpt_backward_site();

// Every parameter of grads set to 0 (grads: a GPT that holds another's gradients).
void zero_grad(GPT& grads);

}  // namespace ts
