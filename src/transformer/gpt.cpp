// transformer/gpt.cpp: see gpt.hpp. The forwards read top to bottom as nanoGPT's Block and GPT;
// each backward calls the modules' own backwards (annotated.cpp) in the reverse order.
#include "transformer/gpt.hpp"

#include <stdexcept>
#include <string>

#include "base/code_site.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "transformer/grad.hpp"

namespace ts {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument(msg); }

// a Linear(in, out) of zeros, without the random draws of Linear's constructor
Linear zero_linear(int64_t in, int64_t out) {
  Linear l;
  l.in_features = in, l.out_features = out;
  l.weight = zeros({size_t(out), size_t(in)});
  l.bias = zeros({size_t(out)});
  return l;
}

Embedding zero_embedding(int64_t rows, int64_t C) {
  Embedding e;
  e.weight = zeros({size_t(rows), size_t(C)});
  return e;
}

}  // namespace

// ---------------------------------------------------------------- the causal mask
// the line below: gpt_causal_mask's own, for gpt_causal_mask_site()
static const CodeSite kMaskSite{__FILE__, __LINE__ + 1, "gpt_causal_mask"};
BTensor gpt_causal_mask(int64_t T, int64_t past, bool causal) {
  // keep (t, s) when key s is at or before query t's position past + t   (1,T,S)
  const size_t n = size_t(T), S = size_t(past + T);
  BTensor m = BTensor::from_shape({1, n, S});
  for (size_t t = 0; t < n; ++t)
    for (size_t s = 0; s < S; ++s) m(0, t, s) = !causal || s <= size_t(past) + t;  // query t sees 0..past+t
  return m;
}

std::string gpt_causal_mask_site() {
  return code_site_path(kMaskSite.file) + ":" + std::to_string(kMaskSite.line) + " " + kMaskSite.func;
}

// ---------------------------------------------------------------- Block
namespace {
MultiHeadedAttention zero_attention(const GPTConfig& c) {
  if (c.n_head <= 0 || c.n_embd % c.n_head != 0) fail("Block: n_embd must be divisible by n_head");
  MultiHeadedAttention attn;
  attn.h = c.n_head, attn.d_k = c.n_embd / c.n_head;
  for (int i = 0; i < 4; ++i) attn.linears.push_back(zero_linear(c.n_embd, c.n_embd));  // q, k, v, out
  attn.dropout = Dropout(c.dropout);
  return attn;
}

FeedForward zero_mlp(const GPTConfig& c) {
  FeedForward mlp;
  mlp.linear_1 = zero_linear(c.n_embd, c.d_ff);
  mlp.linear_2 = zero_linear(c.d_ff, c.n_embd);
  mlp.dropout = Dropout(0.0);  // GPT-2's MLP has no dropout between its Linears
  mlp.activation = Activation::GELU;
  mlp.article = FeedForwardArticle::Article002;  // article 002's module: w_1, w_2, the dropout between
  mlp.gelu_backward_kernel = c.gelu_backward_kernel;
  return mlp;
}
}  // namespace

Block::Block(const GPTConfig& c) : EncoderLayer(c.n_embd, zero_attention(c), zero_mlp(c), c.dropout) {
  name = "Block";
}

// ---------------------------------------------------------------- GPT
GPT::GPT(const GPTConfig& c)
    : config(c), wte(zero_embedding(c.vocab_size, c.n_embd)), wpe(zero_embedding(c.block_size, c.n_embd)),
      drop(c.dropout), h(size_t(c.n_layer > 0 ? c.n_layer : 0), Block(c)), ln_f(c.n_embd, LayerNormArithmetic::Article002) {
  if (!c.tied) lm_head = zeros({size_t(c.vocab_size), size_t(c.n_embd)});
}

// the line below: GPT::head_weight's own, for gpt_head_weight_site()
static const CodeSite kHeadSite{__FILE__, __LINE__ + 1, "GPT::head_weight"};
const Tensor& GPT::head_weight() const { return config.tied ? wte.weight : lm_head; }

// the line below: GPT::forward's own, for gpt_forward_site()
static const CodeSite kForwardSite{__FILE__, __LINE__ + 1, "GPT::forward"};
Tensor GPT::forward(const ITensor& idx, std::vector<KVCache>* caches) {
  TS_CODE_SITE();
  if (idx.dimension() != 2) fail("GPT.forward: idx must be (B,T)");
  const size_t B = idx.shape()[0], T = idx.shape()[1], C = size_t(config.n_embd);
  if (caches && caches->size() != h.size()) fail("GPT.forward: give one KVCache per block");
  const size_t past = caches && !caches->empty() ? (*caches)[0].len() : 0;  // P positions cached so far
  if (int64_t(past + T) > config.block_size)
    fail("GPT.forward: positions up to " + std::to_string(past + T) + " > block_size " +
         std::to_string(config.block_size));
  // 1) x = drop(wte[idx] + wpe[past..past+T))   (B,T,C)
  Tensor x = wte(idx);
  for (size_t b = 0; b < B; ++b)
    for (size_t t = 0; t < T; ++t)
      for (size_t c = 0; c < C; ++c) x(b, t, c) = x(b, t, c) + wpe.weight(past + t, c);
  x = drop(x);
  // 2) the causal mask over the cached past and the new positions   (1,T,P+T)
  const BTensor mask = gpt_causal_mask(int64_t(T), int64_t(past), config.causal);
  // a cached step is a row or a few: its products stream each weight once (exact/matmul.hpp)
  const FewRowsProducts few_rows(caches != nullptr);
  // 3) the N blocks, each with its own cache
  for (size_t l = 0; l < h.size(); ++l) x = h[l](x, &mask, caches ? &(*caches)[l] : nullptr);
  // 4) logits = ln_f(x) W^T   (B,T,V)
  Tensor xf = ln_f(x);
  Tensor logits = linear(xf, head_weight(), nullptr);
  if (grad_enabled()) saved = Saved{idx, std::move(x), std::move(xf)};
  return logits;
}

// the line below: GPT::backward's own, for gpt_backward_site()
static const CodeSite kBackwardSite{__FILE__, __LINE__ + 1, "GPT::backward"};
void GPT::backward(const Tensor& dlogits, GPT& grad) const {
  TS_CODE_SITE();
  const int64_t C = config.n_embd, V = config.vocab_size;
  const int64_t N = int64_t(saved.idx.size()), T = int64_t(saved.idx.shape()[1]);
  if (int64_t(dlogits.size()) != N * V) fail("GPT.backward: dlogits must be (B,T,V) of the last forward");
  // 4) logits = xf W^T:  dxf = dlogits W   (N,C);  dW += dlogits^T xf   (V,C)  (tied: into wte)
  Tensor dxf = zeros(shape_of(saved.xf));  // zeroed: an edit that drops the product below reads 0s, not old memory
  mm_rows(false, false, N, C, V, dlogits.data(), V, head_weight().data(), C, 0.0f, dxf.data(), C);
  Tensor& dW = config.tied ? grad.wte.weight : grad.lm_head;
  mm_rows(true, false, V, C, N, dlogits.data(), V, saved.xf.data(), C, 1.0f, dW.data(), C);
  Tensor dx = ln_f.backward(saved.x, dxf, grad.ln_f);
  // 3) the blocks, last first
  for (size_t l = h.size(); l-- > 0;) dx = h[l].backward(dx, grad.h[l]);
  // 1) x = drop(wte[idx] + wpe[t]):  d = drop.backward(dx);  dwte[idx[n]] += d[n];  dwpe[t] += d[n]
  const Tensor d = drop.backward(dx);
  for (int64_t n = 0; n < N; ++n) {
    float* row = grad.wte.weight.data() + saved.idx.data()[n] * C;
    float* pos = grad.wpe.weight.data() + (n % T) * C;
    for (int64_t c = 0; c < C; ++c) row[c] += d.data()[n * C + c], pos[c] += d.data()[n * C + c];
  }
}

std::string gpt_head_weight_site() {
  return code_site_path(kHeadSite.file) + ":" + std::to_string(kHeadSite.line) + " " + kHeadSite.func;
}

std::string gpt_forward_site() {
  return code_site_path(kForwardSite.file) + ":" + std::to_string(kForwardSite.line) + " " + kForwardSite.func;
}

std::string gpt_backward_site() {
  return code_site_path(kBackwardSite.file) + ":" + std::to_string(kBackwardSite.line) + " " + kBackwardSite.func;
}

void GPT::train(bool on) {
  drop.training = on;
  for (Block& b : h) b.train(on);
}

// the line below: GPT::named_parameters's own, for gpt_parameters_site()
static const CodeSite kParametersSite{__FILE__, __LINE__ + 1, "GPT::named_parameters"};
std::vector<std::pair<std::string, Tensor*>> GPT::named_parameters() {
  std::vector<std::pair<std::string, Tensor*>> out;
  out.emplace_back("transformer.wte.weight", &wte.weight);
  out.emplace_back("transformer.wpe.weight", &wpe.weight);
  for (size_t l = 0; l < h.size(); ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    Block& b = h[l];
    for (size_t j = 0; j < b.self_attn.linears.size(); ++j) {
      out.emplace_back(p + "self_attn.linears." + std::to_string(j) + ".weight", &b.self_attn.linears[j].weight);
      out.emplace_back(p + "self_attn.linears." + std::to_string(j) + ".bias", &b.self_attn.linears[j].bias);
    }
    const std::string w_1 = p + "feed_forward." + b.feed_forward.linear_names().first;
    const std::string w_2 = p + "feed_forward." + b.feed_forward.linear_names().second;
    out.emplace_back(w_1 + ".weight", &b.feed_forward.linear_1.weight);
    out.emplace_back(w_1 + ".bias", &b.feed_forward.linear_1.bias);
    out.emplace_back(w_2 + ".weight", &b.feed_forward.linear_2.weight);
    out.emplace_back(w_2 + ".bias", &b.feed_forward.linear_2.bias);
    for (size_t k = 0; k < b.sublayer.size(); ++k) {
      const LayerNorm& n = b.sublayer[k].norm;
      out.emplace_back(p + "sublayer." + std::to_string(k) + ".norm." + n.param_names().first, &b.sublayer[k].norm.weight);
      out.emplace_back(p + "sublayer." + std::to_string(k) + ".norm." + n.param_names().second, &b.sublayer[k].norm.bias);
    }
  }
  out.emplace_back(std::string("transformer.ln_f.") + ln_f.param_names().first, &ln_f.weight);
  out.emplace_back(std::string("transformer.ln_f.") + ln_f.param_names().second, &ln_f.bias);
  if (!config.tied) out.emplace_back("lm_head.weight", &lm_head);
  return out;
}

std::string gpt_parameters_site() { return code_site_words(kParametersSite); }

void zero_grad(GPT& grads) {
  for (auto& [name, p] : grads.named_parameters()) p->fill(0.0f);
}

}  // namespace ts
