// train/gpt.cpp: see gpt.hpp. What training adds to the modules' GPT (src/transformer/gpt.cpp):
// the task as sequences, the checkpoint's keys and GPT-2's init, the loss, the batch parts,
// generation's cache calls, checkpoints and the measured wiring.
#include "train/gpt.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "exact/matmul.hpp"
#include "fast/simd/route.hpp"
#include "fast/thread_pool.hpp"
#include "train/batch_parts.hpp"
#include "train/checkpoint.hpp"
#include "train/safetensors.hpp"
#include "train/wiring.hpp"
#include "transformer/grad.hpp"

namespace ts::train {

// ---------------------------------------------------------------- the task as one sequence
const SeqVocab& seq_vocab() {
  static const SeqVocab v = [] {
    SeqVocab s;
    s.words = {"<pad>"};
    for (int d = 0; d < 10; ++d) s.words.push_back(std::to_string(d));
    s.eq = s.size();
    s.words.push_back("=");
    const Vocab& tv = target_vocab();  // ch11's 30 words
    for (int64_t i = 1; i < tv.vocab_size; ++i) s.words.push_back(tv.words[size_t(i)]);
    s.end = s.size();
    s.words.push_back("<end>");
    return s;
  }();
  return v;
}

std::string SeqVocab::decode(const std::vector<int64_t>& ids) const {
  std::string s;
  for (int64_t id : ids)
    if (id > eq && id < end) s += (s.empty() ? "" : " ") + words[size_t(id)];
  return s;
}

std::string SeqVocab::spelled(const std::vector<int64_t>& ids) const {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : " ") + words[size_t(id)];
  return s;
}

std::vector<int64_t> encode_prompt(int64_t n) {
  std::vector<int64_t> ids;
  for (char c : std::to_string(n)) ids.push_back(1 + (c - '0'));
  ids.push_back(seq_vocab().eq);
  return ids;
}

std::vector<int64_t> encode_sequence(int64_t n) {
  const SeqVocab& v = seq_vocab();
  std::vector<int64_t> ids = encode_prompt(n);
  const std::vector<int64_t> words = encode_target(n);  // <start> words <end>, ch11's target ids
  for (size_t i = 1; i + 1 < words.size(); ++i) ids.push_back(v.eq + words[i]);
  ids.push_back(v.end);
  return ids;
}

int64_t SeqBatch::answer_tokens() const {
  return static_cast<int64_t>(std::count_if(y.begin(), y.end(), [](int64_t t) { return t != kPad; }));
}

// the line below: make_seq_batch's own, for make_seq_batch_site()
static const CodeSite kSeqBatchSite{__FILE__, __LINE__ + 1, "make_seq_batch"};
SeqBatch make_seq_batch(const std::vector<int64_t>& numbers) {
  SeqBatch b;
  b.B = static_cast<int64_t>(numbers.size());
  b.numbers = numbers;
  const EncodedRows seqs = encode_rows(numbers, encode_sequence);
  b.T = std::max<int64_t>(0, seqs.longest - 1);  // position t predicts token t + 1
  b.x.assign(size_t(b.B * b.T), kPad);
  b.y.assign(size_t(b.B * b.T), kPad);
  for (int64_t i = 0; i < b.B; ++i) {
    const auto& s = seqs.rows[size_t(i)];
    const int64_t prompt = static_cast<int64_t>(encode_prompt(numbers[size_t(i)]).size());
    for (int64_t t = 0; t + 1 < static_cast<int64_t>(s.size()); ++t) {
      b.x[size_t(i * b.T + t)] = s[size_t(t)];
      // position t predicts s[t+1]; it counts only if s[t+1] is part of the answer
      if (t + 1 >= prompt) b.y[size_t(i * b.T + t)] = s[size_t(t + 1)];
    }
  }
  return b;
}

SeqBatch slice_seq_batch(const SeqBatch& b, int64_t r0, int64_t r1) {
  SeqBatch s;
  s.B = r1 - r0, s.T = b.T;
  s.numbers.assign(b.numbers.begin() + r0, b.numbers.begin() + r1);
  s.x.assign(b.x.begin() + r0 * b.T, b.x.begin() + r1 * b.T);
  s.y.assign(b.y.begin() + r0 * b.T, b.y.begin() + r1 * b.T);
  return s;
}

// ---------------------------------------------------------------- the checkpoint's keys
std::vector<CheckpointKey> gpt_checkpoint_keys(GPT& g) {
  const NamedTensors named = g.named_parameters();
  std::vector<bool> held(named.size(), false);
  std::vector<CheckpointKey> keys;
  // key = the parameters at these tensors, one after another (a tensor the module does not list is skipped)
  auto add = [&](const std::string& key, std::initializer_list<const Tensor*> tensors) {
    CheckpointKey k{key, {}, {}};
    int64_t rows = 0;
    for (const Tensor* t : tensors)
      for (size_t i = 0; i < named.size(); ++i)
        if (named[i].second == t && !held[i]) {
          k.params.push_back(i), held[i] = true;
          rows += t->dimension() ? int64_t(t->shape()[0]) : 1;
          if (k.shape.empty())
            for (size_t d : t->shape()) k.shape.push_back(int64_t(d));
        }
    if (k.params.empty()) return;
    k.shape[0] = rows;  // the tensors' rows one after another
    keys.push_back(std::move(k));
  };
  add("transformer.wte.weight", {&g.wte.weight});
  add("transformer.wpe.weight", {&g.wpe.weight});
  for (size_t l = 0; l < g.h.size(); ++l) {
    const std::string p = fmt::format("transformer.h.{}.", l);
    Block& b = g.h[l];
    const auto& q = b.self_attn.linears;
    add(p + "ln_1.weight", {&b.sublayer[0].norm.weight});
    add(p + "ln_1.bias", {&b.sublayer[0].norm.bias});
    add(p + "attn.c_attn.weight", {&q[0].weight, &q[1].weight, &q[2].weight});  // [q; k; v]   (3C,C)
    add(p + "attn.c_attn.bias", {&q[0].bias, &q[1].bias, &q[2].bias});          // (3C)
    add(p + "attn.c_proj.weight", {&q[3].weight});
    add(p + "attn.c_proj.bias", {&q[3].bias});
    add(p + "ln_2.weight", {&b.sublayer[1].norm.weight});
    add(p + "ln_2.bias", {&b.sublayer[1].norm.bias});
    add(p + "mlp.c_fc.weight", {&b.feed_forward.linear_1.weight});
    add(p + "mlp.c_fc.bias", {&b.feed_forward.linear_1.bias});
    add(p + "mlp.c_proj.weight", {&b.feed_forward.linear_2.weight});
    add(p + "mlp.c_proj.bias", {&b.feed_forward.linear_2.bias});
  }
  add("transformer.ln_f.weight", {&g.ln_f.weight});
  add("transformer.ln_f.bias", {&g.ln_f.bias});
  add("lm_head.weight", {&g.lm_head});
  // a parameter the module lists beyond these keeps its own name
  for (size_t i = 0; i < named.size(); ++i)
    if (!held[i]) add(named[i].first, {named[i].second});
  return keys;
}

// ---------------------------------------------------------------- the mask and the sites
std::vector<float> gpt_mask(const GptConfig& cfg, int64_t T) {
  // the mask GPT::forward builds (transformer/gpt.cpp gpt_causal_mask), true = keep -> 1 = hide
  const BTensor keep = gpt_causal_mask(T, 0, cfg.causal);  // (1,T,T)
  std::vector<float> m(keep.size());
  for (size_t i = 0; i < keep.size(); ++i) m[i] = keep.data()[i] ? 0.0f : 1.0f;
  return m;
}

std::string make_seq_batch_site() { return code_site_words(kSeqBatchSite); }

// ---------------------------------------------------------------- the module it trains
// the SIMD route's GELU backward, looked up at each call (TS_ISA, or a test, may change the route);
// a call on more than the module's 8-point probe (feed_forward.cpp) is a backward's: its route is kept
static std::atomic<int> g_gelu_route{-1};  // the Isa of the last such call, -1: none yet
static void route_gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  const simd::Route& rt = simd::route();
  rt.gelu_backward(x, dy, dx, n);
  if (n > 8) g_gelu_route.store(static_cast<int>(rt.isa), std::memory_order_relaxed);
}
std::string gelu_backward_route() {
  const int isa = g_gelu_route.load(std::memory_order_relaxed);
  return isa < 0 ? std::string() : std::string(isa_name(static_cast<Isa>(isa)));
}

GPTConfig module_config(const GptConfig& c) {
  GPTConfig g;
  g.vocab_size = c.vocab, g.block_size = c.ctx, g.n_layer = c.layers, g.n_embd = c.d_model, g.n_head = c.heads;
  g.d_ff = c.d_ff, g.dropout = c.dropout, g.tied = c.tied, g.causal = c.causal;
  g.gelu_backward_kernel = &route_gelu_backward;  // the MLPs' GELU backward may take the route (nn.hpp)
  return g;
}

// the line below: token_losses's own, for token_losses_site()
static const CodeSite kLossSite{__FILE__, __LINE__ + 1, "token_losses"};
std::vector<double> token_losses(const Tensor& logits, const std::vector<int64_t>& y) {
  const size_t N = y.size(), V = logits.size() / std::max<size_t>(N, 1);
  std::vector<double> loss(N, 0.0);
  for (size_t n = 0; n < N; ++n) {
    if (y[n] == kPad) continue;  // a prompt position or padding: the loss skips it
    // loss_n = log sum_v exp(l_v - max) + max - l_y
    const float* l = logits.data() + n * V;
    const double mx = *std::max_element(l, l + V);
    double sum = 0.0;
    for (size_t v = 0; v < V; ++v) sum += std::exp(double(l[v]) - mx);
    loss[n] = std::log(sum) + mx - double(l[size_t(y[n])]);
  }
  return loss;
}
std::string token_losses_site() { return code_site_words(kLossSite); }

Tensor token_losses_backward(const Tensor& logits, const std::vector<int64_t>& y, float scale) {
  const size_t N = y.size(), V = logits.size() / std::max<size_t>(N, 1);
  Tensor d = zeros(shape_of(logits));
  std::vector<double> e(V);  // exp(l_v - max), computed once per row
  for (size_t n = 0; n < N; ++n) {
    if (y[n] == kPad) continue;
    // dlogits_n = scale (softmax(l_n) - onehot(y_n))   (V)
    const float* l = logits.data() + n * V;
    float* dl = d.data() + n * V;
    const double mx = *std::max_element(l, l + V);
    double sum = 0.0;
    for (size_t v = 0; v < V; ++v) sum += e[v] = std::exp(double(l[v]) - mx);
    for (size_t v = 0; v < V; ++v) dl[v] = float(double(scale) * e[v] / sum);
    dl[y[n]] -= scale;
  }
  return d;
}

// ---------------------------------------------------------------- the model and its threads
static float normal(Rng& rng, double stddev) {
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
  return static_cast<float>(stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

// the thread pool's parallel_for, for the few-row products of a cached step (exact/matmul.hpp)
static void pool_parallel(int64_t n, int64_t grain, void (*body)(void*, int64_t, int64_t), void* ctx) {
  parallel_for(n, grain, [&](int64_t begin, int64_t end) { body(ctx, begin, end); });
}

// GPT-2's init over the checkpoint's keys, in their (nanoGPT's) order: N(0, 0.02) weights,
// c_proj's N(0, 0.02 / sqrt(2 N)), zero biases, LayerNorm 1 and 0
static void gpt2_init(GPT& g, const std::vector<CheckpointKey>& keys, int64_t layers, uint64_t seed) {
  const NamedTensors named = g.named_parameters();
  Rng rng(seed * 7919ull + 17);
  const double proj_std = 0.02 / std::sqrt(2.0 * double(std::max<int64_t>(layers, 1)));
  for (const CheckpointKey& k : keys) {
    const bool norm = k.key.find("ln_") != std::string::npos, bias = k.key.size() > 5 && k.key.substr(k.key.size() - 5) == ".bias";
    const double sd = k.key.find("c_proj.weight") != std::string::npos ? proj_std : 0.02;
    for (size_t i : k.params)
      for (float& v : *named[i].second) v = bias ? 0.0f : norm ? 1.0f : normal(rng, sd);
  }
}

Gpt::Gpt(const GptConfig& c, uint64_t seed, int threads) : cfg(c) {
  set_few_rows_parallel(&pool_parallel);  // a cached step's wide products over set_num_threads' threads
  GPTConfig eval = module_config(cfg);
  eval.dropout = 0.0;  // the model generation and the probes run; the parts train with cfg.dropout
  model = GPT(eval);
  model.train(false);
  keys = gpt_checkpoint_keys(model);
  gpt2_init(model, keys, cfg.layers, seed);
  grad = model;
  ts::zero_grad(grad);
  // the batch in a fixed number of parts (train/batch_parts.hpp): one module, gradient module
  // and dropout generator per part, whatever the thread count, so --threads never changes a result
  threads_ = std::max(1, threads);
  parts_ = make_parts<Part>(GPT(module_config(cfg)), seed);
  set_blas_threads(1);  // our threads take the parts; OpenBLAS's must not split a product's sums
}

size_t Gpt::parameter_count() { return train::parameter_count(model.named_parameters()); }

double Gpt::forward(const SeqBatch& b, bool training) {
  trace_call("forward");
  const int64_t K = batch_parts(b.B), V = cfg.vocab;
  used_ = K;
  std::vector<double> sums(static_cast<size_t>(K), 0.0);
  std::vector<int64_t> correct(static_cast<size_t>(K), 0);
  const NamedTensors weights = model.named_parameters();
  run_parts(K, threads_, [&](int64_t k) {
    Part& p = *parts_[size_t(k)];
    const RowRange r = part_rows(b.B, k, K);
    p.batch = slice_seq_batch(b, r.r0, r.r1);
    // this step's weights (Adam or --load changed the model's): the part's module runs them
    for (size_t i = 0; i < weights.size(); ++i)
      std::copy_n(weights[i].second->data(), weights[i].second->size(), p.params.at(i).second->data());
    p.model.train(training);
    EnableGrad keep;                  // the modules keep what their backward needs
    UseGenerator draws(p.generator);  // this part's dropout draws
    // logits = GPT(x)   (B,T,V)
    ITensor idx = ITensor::from_shape({size_t(p.batch.B), size_t(p.batch.T)});
    std::copy(p.batch.x.begin(), p.batch.x.end(), idx.begin());
    p.logits = p.model.forward(idx);
    // loss: the sum of the answer positions' cross-entropies
    const std::vector<double> loss = token_losses(p.logits, p.batch.y);
    for (size_t n = 0; n < loss.size(); ++n) {
      sums[size_t(k)] += loss[n];
      if (p.batch.y[n] == kPad) continue;
      const float* row = p.logits.data() + n * size_t(V);
      correct[size_t(k)] += std::max_element(row, row + V) - row == p.batch.y[n];
    }
  });
  double sum = 0;
  correct_ = 0;
  for (int64_t k = 0; k < K; ++k) sum += sums[size_t(k)], correct_ += correct[size_t(k)];  // part order
  tokens_ = b.answer_tokens();
  trace_call("loss");
  return sum / double(std::max<int64_t>(tokens_, 1));
}

void Gpt::zero_grad() {
  trace_call("zero_grad");
  for (auto& p : parts_) ts::zero_grad(p->grads);
  ts::zero_grad(grad);
}

void Gpt::backward() {
  trace_call("backward");
  const NamedTensors sums = grad.named_parameters();
  if (trace_on()) {  // what this backward adds to: 0 after zero_grad
    double before = 0;
    for (const auto& nt : sums)
      for (const float g : *nt.second) before += std::fabs(double(g));
    trace_value("grads.sum_abs_before_backward", before);
  }
  const float scale = 1.0f / float(std::max<int64_t>(tokens_, 1));
  run_parts(used_, threads_, [&](int64_t k) {
    Part& p = *parts_[size_t(k)];
    // d loss / d logits, then the modules' backwards into this part's gradient module
    p.model.backward(token_losses_backward(p.logits, p.batch.y, scale), p.grads);
  });
  // part order: the same sums for a given seed at any thread count
  for (int64_t k = 0; k < used_; ++k) {
    const NamedTensors& part = parts_[size_t(k)]->gparams;
    for (size_t i = 0; i < sums.size(); ++i) {
      float* dst = sums[i].second->data();
      const float* g = part.at(i).second->data();
      for (size_t j = 0; j < sums[i].second->size(); ++j) dst[j] += g[j];
    }
  }
}

// ---------------------------------------------------------------- generation with a KV cache
static ITensor row_of(const std::vector<int64_t>& ids) {
  ITensor idx = ITensor::from_shape({1, ids.size()});
  std::copy(ids.begin(), ids.end(), idx.begin());
  return idx;
}

std::vector<float> next_logits(GPT& g, GptCache& cache, const std::vector<int64_t>& ids) {
  // logits = GPT(ids, caches)   (1,n,V): the cache supplies positions 0..len-1
  const Tensor l = g.forward(row_of(ids), &cache);
  return std::vector<float>(l.end() - g.config.vocab_size, l.end());
}

std::vector<float> last_logits(GPT& g, const std::vector<int64_t>& ids) {
  const Tensor l = g.forward(row_of(ids));  // (1,T,V), every position again
  return std::vector<float>(l.end() - g.config.vocab_size, l.end());
}

// ---------------------------------------------------------------- checkpoints
// The folder, its two files, the lock and the swap are ch11's (train/checkpoint): a checkpoint is
// one unit, never half old, half new; only the keys and the settings are the GPT's.
void save_gpt(const std::string& dir, Gpt& m, const Adam& adam) {
  CheckpointFiles f = checkpoint_files(m.model.named_parameters(), m.keys, adam);
  const GptConfig& c = m.cfg;
  f.wmeta = {{"format", "pt"}, {"layers", std::to_string(c.layers)}, {"d_model", std::to_string(c.d_model)},
             {"heads", std::to_string(c.heads)}, {"d_ff", std::to_string(c.d_ff)}, {"ctx", std::to_string(c.ctx)},
             {"vocab", std::to_string(c.vocab)}, {"tied", c.tied ? "true" : "false"}};
  save_checkpoint_folder(dir, "gpt", adam.step, std::move(f));
}

GptConfig gpt_checkpoint_config(const std::string& dir) {
  const std::string path = dir + "/model.safetensors";
  const StMeta meta = checkpoint_metadata(dir, "gpt");
  GptConfig c;
  c.vocab = seq_vocab().size();
  // the ranges ch12's flags accept
  c.layers = checkpoint_int(meta, "layers", 1, 64, path);
  c.d_model = checkpoint_int(meta, "d_model", 2, 8192, path);
  c.heads = checkpoint_int(meta, "heads", 1, c.d_model, path);
  c.d_ff = checkpoint_int(meta, "d_ff", 1, 65536, path);
  c.ctx = checkpoint_int(meta, "ctx", 1, 4096, path);
  if (c.d_model % c.heads != 0)
    throw FileError(N_("{path}: its heads {H} do not divide its d_model {C}: it was not written by --save"),
                    fmt::arg("path", path), fmt::arg("H", c.heads), fmt::arg("C", c.d_model));
  if (checkpoint_int(meta, "vocab", 1, 1000000, path) != c.vocab)
    throw FileError(N_("{path} was saved for a vocabulary of {saved} words, this course's has {ours}: train and save it "
                       "again"),
                    fmt::arg("path", path), fmt::arg("saved", meta.at("vocab")), fmt::arg("ours", c.vocab));
  const auto tied = meta.find("tied");
  if (tied == meta.end() || (tied->second != "true" && tied->second != "false"))
    throw FileError(N_("{path} has no valid {key} in its __metadata__ ({allowed} expected): it was not written by "
                       "--save; train and save it again"),
                    fmt::arg("path", path), fmt::arg("key", "tied"), fmt::arg("allowed", "true / false"));
  c.tied = tied->second == "true";
  return c;
}

void load_gpt(const std::string& dir, Gpt& m, Adam& adam) {
  CheckpointFiles f;
  const NamedTensors named = m.model.named_parameters();
  const int64_t step = read_checkpoint_folder(dir, "gpt", parameter_bytes(named), f);
  load_checkpoint_tensors(f, dir, step, named, m.keys, adam);
}

// ---------------------------------------------------------------- the block's wiring, measured
std::string gpt_block_wiring() {
  // one block of C = 4, one head, F = 2C, on one token, through the modules' GPT; an untied head
  // W = I, so the logits are ln_f(x_out). Attention over one key returns v = W_v ln_1(x): W_v =
  // W_out = I makes it an identity, and w_1 = [I; -I], w_2 = [I, -I] make the MLP one:
  // act(h) - act(-h) = h. The norms' weights differ per channel, so ln_f still tells the wirings apart.
  GptConfig c;
  c.vocab = 4, c.ctx = 1, c.layers = 1, c.d_model = 4, c.heads = 1, c.d_ff = 8, c.dropout = 0.0, c.tied = false;
  GPT g(module_config(c));
  g.train(false);
  Block& k = g.h[0];
  const size_t C = 4;
  const std::vector<float> x = {1.5f, -0.5f, 0.25f, 2.0f}, g1 = {1.0f, 2.0f, 0.5f, 1.5f}, g2 = {0.5f, 1.0f, 3.0f, 2.0f},
                           gf = {1.0f, 0.75f, 1.25f, 2.5f};
  for (size_t i = 0; i < C; ++i) {
    g.wte.weight(1, i) = x[i];  // token 1
    k.sublayer[0].norm.weight(i) = g1[i], k.sublayer[1].norm.weight(i) = g2[i], g.ln_f.weight(i) = gf[i];
    k.self_attn.linears[2].weight(i, i) = 1.0f;  // v
    k.self_attn.linears[3].weight(i, i) = 1.0f;  // out
    k.feed_forward.linear_1.weight(i, i) = 1.0f, k.feed_forward.linear_1.weight(C + i, i) = -1.0f;
    k.feed_forward.linear_2.weight(i, i) = 1.0f, k.feed_forward.linear_2.weight(i, C + i) = -1.0f;
    g.lm_head(i, i) = 1.0f;
  }
  ITensor idx = ITensor::from_shape({1, 1});
  idx(0, 0) = 1;
  const Tensor out = g.forward(idx);
  const std::vector<float> logits(out.begin(), out.end());
  // the model's own LayerNorms, as its forward calls them (a changed eps moves the output by less than tol)
  auto norm = [&](const LayerNorm& ln) {
    return [&ln](const std::vector<float>& v) {
      Tensor t = Tensor::from_shape({1, 1, v.size()});
      std::copy(v.begin(), v.end(), t.begin());
      const Tensor y = ln(t);
      return std::vector<float>(y.begin(), y.end());
    };
  };
  return block_wiring(x, logits, norm(k.sublayer[0].norm), norm(k.sublayer[1].norm), norm(g.ln_f), 1e-4);
}

// ---------------------------------------------------------------- --check-grads
std::vector<GradCheckRow> gpt_check_grads(const GptConfig& tiny, uint64_t seed, const std::vector<int64_t>& numbers) {
  // the modules' GPT in float (as ch11's check): each loss() runs the moved weights through it.
  // Weights of size ~0.3 instead of GPT-2's 0.02: the activations then reach the part of GELU
  // (and of every other op) where a dropped term changes the gradient by more than float rounding
  Gpt m(tiny, seed, 1);
  const NamedTensors params = m.model.named_parameters(), grads = m.grad.named_parameters();
  Rng draw(seed * 31ull + 7);
  for (const CheckpointKey& k : m.keys) {
    const bool norm_weight = k.key.find("ln_") != std::string::npos && k.key.find(".weight") != std::string::npos;
    for (size_t i : k.params)
      for (float& v : *params[i].second) v = float((norm_weight ? 1.0 : 0.0) + (draw.uniform() - 0.5));
  }
  const SeqBatch b = make_seq_batch(numbers);
  auto loss = [&]() { return m.forward(b, false); };
  loss();
  m.zero_grad();
  m.backward();
  // one row per checkpoint key (c_attn: its q, k and v Linears' values one after another)
  std::vector<GradCheckRow> rows;
  for (const CheckpointKey& k : m.keys) {
    GradCheckRow row;
    row.name = k.key;
    for (size_t i : k.params) {
      const ParamSpec s{k.key, {int64_t(params[i].second->size())}, 0, params[i].second->size()};
      const std::vector<double> ours(grads[i].second->begin(), grads[i].second->end());
      const size_t firsts = row.ours.size() < 2 ? 2 - row.ours.size() : 0;
      const GradCheckRow part =
          fd_rows({s}, params[i].second->data(), ours, loss, firsts, kFdStepFloat, kGptFdTolerance, kGptFdFloor)[0];
      row.ours.insert(row.ours.end(), part.ours.begin(), part.ours.end());
      row.fd.insert(row.fd.end(), part.fd.begin(), part.fd.end());
      row.maxdiff = std::max(row.maxdiff, part.maxdiff), row.maxgrad = std::max(row.maxgrad, part.maxgrad);
    }
    row.ok = row.maxdiff <= kGptFdTolerance * std::max(row.maxgrad, kGptFdFloor);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace ts::train
