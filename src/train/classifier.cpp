// train/classifier.cpp: see classifier.hpp. The model is transformer/encoder_classifier's, which
// holds the weights; its gradients come back from the modules' backward into a second module.
#include "train/classifier.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "base/code_site.hpp"
#include "exact/rng.hpp"
#include "transformer/grad.hpp"
#include "train/loss.hpp"
#include "train/numbers.hpp"
#include "train/checkpoint.hpp"
#include "train/safetensors.hpp"
#include "train/wiring.hpp"

namespace ts::train {

int64_t cls_id() { return target_vocab().vocab_size; }
int64_t classifier_vocab() { return target_vocab().vocab_size + 1; }
std::string classifier_token(int64_t id) {
  if (id == cls_id()) return "[CLS]";
  return target_vocab().words[static_cast<size_t>(id)];
}

// ---------------------------------------------------------------- the module and its init
// article 000's Config of these sizes (nn.hpp): C, H, F, the tables' rows, N layers, one dropout rate
static Config module_config(const ClassifierConfig& c) {
  Config k;
  k.vocab_size = c.vocab, k.hidden_size = c.d_model, k.num_attention_heads = c.heads, k.intermediate_size = c.d_ff;
  k.hidden_dropout_prob = c.dropout, k.max_position_embeddings = c.max_len, k.num_hidden_layers = c.layers;
  return k;
}

EncoderClassifier make_classifier_module(const ClassifierConfig& cfg) {
  // the constructors draw their inits from the default generator, which also draws dropout: keep
  // its state, since these weights are replaced (init_classifier draws them, load_classifier reads them)
  const Generator kept = default_generator();
  EncoderClassifier m(module_config(cfg), cfg.classes, cfg.mean_pool, kPad);
  default_generator() = kept;
  return m;
}

size_t Classifier::parameter_count() { return train::parameter_count(model.named_parameters()); }

Classifier init_classifier(const ClassifierConfig& cfg, uint64_t seed) {
  Classifier m;
  m.cfg = cfg;
  m.model = make_classifier_module(cfg);
  Rng rng(seed * 7919ull + 13);
  int64_t fan_in = 1;  // the columns of the last Linear weight drawn: its bias's bound
  for (auto& [name, t] : m.model.named_parameters()) {
    float* p = t->data();
    const size_t n = t->size();
    const bool embedding = name.find("embeddings.weight") != std::string::npos && name.find("_norm") == std::string::npos;
    if (name.find("layer_norm") != std::string::npos) {
      std::fill_n(p, n, name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0 ? 1.0f : 0.0f);
    } else if (embedding) {
      for (size_t i = 0; i < n; ++i) {  // N(0, 1), Box-Muller
        const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
        p[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
      }
    } else {
      // a Linear's weight (out, in) and its bias: U(-1/sqrt(in), 1/sqrt(in)), in = the weight's columns
      if (t->dimension() == 2) fan_in = static_cast<int64_t>(t->shape()[1]);
      const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>((2.0 * rng.uniform() - 1.0) * bound);
    }
  }
  return m;
}

// the line below: make_cls_batch's own, for make_cls_batch_site()
static const CodeSite kBatchSite{__FILE__, __LINE__ + 1, "make_cls_batch"};
ClsBatch make_cls_batch(const std::vector<int64_t>& numbers) {
  ClsBatch b;
  b.B = static_cast<int64_t>(numbers.size());
  b.numbers = numbers;
  // [CLS] words: encode_target's <start> words <end>, with [CLS] for <start> and no <end>
  const EncodedRows e = encode_rows(numbers, [](int64_t n) {
    std::vector<int64_t> r = encode_target(n);
    r.front() = cls_id();
    r.pop_back();
    return r;
  });
  b.T = e.longest;
  b.ids.assign(static_cast<size_t>(b.B * b.T), kPad);
  for (size_t i = 0; i < e.rows.size(); ++i) std::copy(e.rows[i].begin(), e.rows[i].end(), b.ids.begin() + i * b.T);
  for (int64_t n : numbers) b.labels.push_back(n % 10);
  return b;
}

// ---------------------------------------------------------------- the layer's wiring, measured
std::string classifier_block_wiring() {
  // one layer of C = 4, one head, F = 2C, on the one token [CLS]; a head K = C with W = I, so the
  // logits are the layer's output. Attention over one key returns v = W_v LN1(x): W_v =
  // output_linear = I makes it an identity, and linear_1 = [I; -I], linear_2 = [I, -I] make the
  // feed-forward one: act(h) - act(-h) = h. x is the embeddings' LayerNorm of a token row.
  ClassifierConfig c;
  c.vocab = cls_id() + 1, c.max_len = 1, c.layers = 1, c.d_model = 4, c.heads = 1, c.d_ff = 8, c.classes = 4;
  c.dropout = 0.0;
  Classifier m;
  m.cfg = c, m.model = make_classifier_module(c);
  const NamedTensors named = m.model.named_parameters();
  for (const auto& nt : named) nt.second->fill(0.0f);
  auto at = [&](const std::string& name) {
    for (const auto& [key, t] : named)
      if (key == name) return t->data();
    throw std::logic_error("classifier_block_wiring: no parameter " + name);
  };
  const size_t C = 4, F = 8;
  const float e[4] = {1.0f, -1.0f, 2.0f, 0.0f}, g0[4] = {2.0f, 1.0f, 0.5f, 3.0f}, b0[4] = {1.0f, -0.5f, 0.25f, 0.5f},
              g1[4] = {1.0f, 2.0f, 0.5f, 1.5f}, g2[4] = {0.5f, 1.0f, 3.0f, 2.0f};
  const std::string y = "encoder.layers.0.";
  for (size_t i = 0; i < C; ++i) {
    at("encoder.embeddings.token_embeddings.weight")[size_t(cls_id()) * C + i] = e[i];
    at("encoder.embeddings.layer_norm.weight")[i] = g0[i], at("encoder.embeddings.layer_norm.bias")[i] = b0[i];
    at(y + "layer_norm_1.weight")[i] = g1[i], at(y + "layer_norm_2.weight")[i] = g2[i];
    at(y + "attention.heads.0.v.weight")[i * C + i] = 1.0f, at(y + "attention.output_linear.weight")[i * C + i] = 1.0f;
    at(y + "feed_forward.linear_1.weight")[i * C + i] = 1.0f, at(y + "feed_forward.linear_1.weight")[(C + i) * C + i] = -1.0f;
    at(y + "feed_forward.linear_2.weight")[i * F + i] = 1.0f, at(y + "feed_forward.linear_2.weight")[i * F + C + i] = -1.0f;
    at("classifier.weight")[i * C + i] = 1.0f;
  }
  ClsBatch b;
  b.B = 1, b.T = 1, b.numbers = {0}, b.ids = {cls_id()}, b.labels = {0};
  ClsWorkspace w;
  classifier_forward(m, w, b, false);
  // the LayerNorms of the model that ran (a changed eps moves the output by less than tol)
  auto norm = [&](const LayerNorm& n) {
    return [&n](const std::vector<float>& v) {
      Tensor t = Tensor::from_shape({1, v.size()});
      std::copy(v.begin(), v.end(), t.data());
      const Tensor out = n(t);
      return std::vector<float>(out.data(), out.data() + out.size());
    };
  };
  const TransformerEncoder& enc = m.model.encoder;
  const std::vector<float> x = norm(enc.embeddings.layer_norm)(std::vector<float>(e, e + C));
  return block_wiring(x, w.logits, norm(enc.layers[0].layer_norm_1()), norm(enc.layers[0].layer_norm_2()),
                      [](const std::vector<float>& v) { return v; }, 1e-3);
}

// ---------------------------------------------------------------- forward
// m.cfg's run-time settings into the module: the pooling and the dropout rate (--pool, a
// loaded checkpoint's pooling); the sizes are the module's own (init_classifier, load_classifier)
static void apply_settings(Classifier& m) {
  m.model.mean_pool = m.cfg.mean_pool;
  for (Dropout* d : {&m.model.dropout, &m.model.encoder.embeddings.dropout}) d->p = m.cfg.dropout;
  for (TransformerEncoderLayer& l : m.model.encoder.layers) l.feed_forward.dropout.p = m.cfg.dropout;
}

// the lines below: classifier_forward's and classifier_backward's own, for their _site()s
static const CodeSite kForwardSite{__FILE__, __LINE__ + 1, "classifier_forward"};
void classifier_forward(Classifier& m, ClsWorkspace& w, const ClsBatch& b, bool training) {
  TS_CODE_SITE();
  apply_settings(m);
  m.model.train(training);
  // the gradient module the backward fills: the model's own shapes (built again when they change)
  const NamedTensors params = m.model.named_parameters(), grads = w.grad.named_parameters();
  bool same = params.size() == grads.size();
  for (size_t i = 0; same && i < params.size(); ++i) same = shape_of(*params[i].second) == shape_of(*grads[i].second);
  if (!same) w.grad = m.model;
  ITensor ids = ITensor::from_shape({size_t(b.B), size_t(b.T)});
  std::copy(b.ids.begin(), b.ids.end(), ids.data());
  Tensor logits;
  {
    EnableGrad keep;  // the modules keep what the backward (and the chapter) reads
    logits = m.model(ids);
  }
  // what the chapter reads: the mask the model used (as 1 = hide), each layer's attention weights
  const EncoderClassifier::Saved& s = m.model.saved;
  w.B = b.B, w.T = b.T;
  w.mask.resize(s.mask.size());
  for (size_t i = 0; i < s.mask.size(); ++i) w.mask[i] = s.mask.data()[i] == 0.0f ? 1.0f : 0.0f;
  w.layers.resize(m.model.encoder.layers.size());
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const Tensor& p = m.model.encoder.layers[l].self_attn.attn;  // (B,H,T,T), the weights the forward used
    w.layers[l].p.assign(p.data(), p.data() + p.size());
  }
  w.x.assign(s.x.data(), s.x.data() + s.x.size());
  w.pooled.assign(s.pooled.data(), s.pooled.data() + s.pooled.size());
  w.logits.assign(logits.data(), logits.data() + logits.size());
}

std::string make_cls_batch_site() { return code_site_words(kBatchSite); }

std::string classifier_head_site() { return classifier_pool_site(); }

static const CodeSite kLossSite{__FILE__, __LINE__ + 1, "classifier_loss"};
float classifier_loss(ClsWorkspace& w, const ClsBatch& b, int64_t K) {
  w.probs.assign(size_t(b.B * K), 0.0f), w.loss.assign(size_t(b.B), 0.0f);
  cross_entropy_forward(w.loss.data(), w.probs.data(), w.logits.data(), b.labels.data(), b.B, K, int64_t(-1), 0.0f);
  double sum = 0;
  for (float v : w.loss) sum += v;
  return static_cast<float>(sum / double(b.B));
}

// ---------------------------------------------------------------- backward
static const CodeSite kBackwardSite{__FILE__, __LINE__ + 1, "classifier_backward"};
void classifier_backward(const Classifier& m, ClsWorkspace& w, const ClsBatch& b) {
  TS_CODE_SITE();
  const int64_t B = b.B, K = m.cfg.classes;
  // the loss: mean over B sentences, so dloss = 1/B each;  dlogits = (softmax - onehot) / B   (B,K)
  std::vector<float> dloss(size_t(B), 1.0f / float(B));
  Tensor dlogits = Tensor::from_shape({size_t(B), size_t(K)});
  dlogits.fill(0.0f);
  cross_entropy_backward(dlogits.data(), w.probs.data(), b.labels.data(), dloss.data(), B, K, int64_t(-1), 0.0f);
  // the model: zero_grad, then its backward
  zero_grad(w.grad);
  m.model.backward(dlogits, w.grad);
}

std::vector<int64_t> predictions(const ClsWorkspace& w, int64_t K) {
  std::vector<int64_t> out;
  for (size_t i = 0; i + size_t(K) <= w.logits.size(); i += size_t(K))
    out.push_back(std::max_element(w.logits.begin() + long(i), w.logits.begin() + long(i) + K) - w.logits.begin() -
                  long(i));
  return out;
}

// ---------------------------------------------------------------- checkpoints
// The folder, its two files, the lock and the swap are ch11's (train/checkpoint); the keys are
// the twin's, the settings the classifier's.
void save_classifier(const std::string& dir, Classifier& m, const Adam& adam) {
  const NamedTensors named = m.model.named_parameters();
  CheckpointFiles f = checkpoint_files(named, keys_of(named), adam);
  const ClassifierConfig& c = m.cfg;
  f.wmeta = {{"format", "pt"}, {"layers", std::to_string(c.layers)}, {"d_model", std::to_string(c.d_model)},
             {"heads", std::to_string(c.heads)}, {"d_ff", std::to_string(c.d_ff)},
             {"classes", std::to_string(c.classes)}, {"vocab", std::to_string(c.vocab)},
             {"max_len", std::to_string(c.max_len)}, {"pool", c.mean_pool ? "mean" : "cls"}};
  save_checkpoint_folder(dir, "classifier", adam.step, std::move(f));
}

ClassifierConfig classifier_checkpoint_config(const std::string& dir, const ClassifierConfig& asked,
                                              const std::function<bool(const std::string&)>& given) {
  const std::string path = dir + "/model.safetensors";
  const StMeta meta = checkpoint_metadata(dir, "classifier");
  ClassifierConfig c = asked;
  const struct {
    const char* key;
    const char* flag;
    int64_t ClassifierConfig::*field;
  } sizes[] = {{"layers", "--layers", &ClassifierConfig::layers},
               {"d_model", "--d-model", &ClassifierConfig::d_model},
               {"heads", "--heads", &ClassifierConfig::heads},
               {"d_ff", "--d-ff", &ClassifierConfig::d_ff}};
  for (const auto& s : sizes) {
    const int64_t saved = checkpoint_int(meta, s.key, 1, 1000000, path);
    if (given(s.flag) && asked.*s.field != saved)
      throw FileError(N_("{flag} {asked} disagrees with the checkpoint, saved with {flag} {saved}: drop {flag} to use the "
                         "checkpoint's"),
                      fmt::arg("flag", s.flag), fmt::arg("asked", asked.*s.field), fmt::arg("saved", saved));
    c.*s.field = saved;
  }
  if (c.d_model % c.heads != 0)
    throw FileError(N_("{path}: its heads {H} do not divide its d_model {C}: it was not written by --save"),
                    fmt::arg("path", path), fmt::arg("H", c.heads), fmt::arg("C", c.d_model));
  // the pooling: the checkpoint's, unless --pool asks for the other (an experiment, not an error)
  const auto pool = meta.find("pool");
  if (!given("--pool") && pool != meta.end()) c.mean_pool = pool->second == "mean";
  return c;
}

void load_classifier(const std::string& dir, Classifier& m, Adam& adam) {
  CheckpointFiles f;
  const NamedTensors named = m.model.named_parameters();
  const int64_t step = read_checkpoint_folder(dir, "classifier", parameter_bytes(named), f);
  const std::string path = dir + "/model.safetensors";
  const ClassifierConfig& c = m.cfg;
  const struct {
    const char* key;
    const char* flag;
    int64_t asked;
  } sizes[] = {{"layers", "--layers", c.layers}, {"d_model", "--d-model", c.d_model}, {"heads", "--heads", c.heads},
               {"d_ff", "--d-ff", c.d_ff},       {"classes", "", c.classes},       {"vocab", "", c.vocab},
               {"max_len", "", c.max_len}};
  for (const auto& s : sizes) {
    const int64_t saved = checkpoint_int(f.wmeta, s.key, 1, 1000000, path);
    if (saved == s.asked) continue;
    if (*s.flag == 0)
      throw FileError(N_("{path} was saved with {key} {saved}, this course's classifier has {asked}: it was saved for "
                         "another task; train and save it again"),
                      fmt::arg("path", path), fmt::arg("key", s.key), fmt::arg("saved", saved), fmt::arg("asked", s.asked));
    throw FileError(N_("{path} was saved with {flag} {saved}, this run builds {asked}: give {flag} {saved}"),
                    fmt::arg("path", path), fmt::arg("flag", s.flag), fmt::arg("saved", saved), fmt::arg("asked", s.asked));
  }
  load_checkpoint_tensors(f, dir, step, named, keys_of(named), adam);
}

std::string classifier_forward_site() { return code_site_words(kForwardSite) + ", " + code_site_words(kLossSite); }
std::string classifier_backward_site() { return code_site_words(kBackwardSite); }

}  // namespace ts::train
