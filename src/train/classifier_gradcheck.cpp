// train/classifier_gradcheck.cpp: see classifier_gradcheck.hpp.
#include "train/classifier_gradcheck.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "transformer/encoder_classifier.hpp"
#include "transformer/grad.hpp"

namespace ts::train {
namespace {

// the check's own numbers (splitmix64, Box-Muller): the generators training uses are not touched
struct CheckRng {
  uint64_t s = 0x5eed13c0ffee1234ull;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (double(next() >> 11) + 0.5) * 0x1.0p-53; }
  double normal() { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); }
};

struct Entry {
  std::string tensor;
  float* p;     // the value moved by +-h
  double grad;  // the backward's
};

// One module: forward y = fwd() (its loss sum y r), backward(r) -> the input's gradient (or
// an empty tensor), the entries sampled from tensors (name, value, gradient tensor).
struct ModuleUnderCheck {
  std::string name;
  std::function<Tensor()> fwd;
  std::function<Tensor(const Tensor&)> bwd;
  std::vector<std::pair<std::string, std::pair<Tensor*, Tensor*>>> tensors;  // name -> (value, grad)
  Tensor* input = nullptr;                                                   // x, when the input is a float tensor
};


size_t nonfinite(const Tensor& t) {
  size_t n = 0;
  for (const float v : t) n += !std::isfinite(v);
  return n;
}

// NaN or inf in what a module computed: the check fails before comparing anything (a NaN
// compares false with every tolerance), naming where the trace of its forward first saw one
void reject_nonfinite(ClsGradCheck& out, ModuleUnderCheck& m, size_t bad, const char* what) {
  out.ok = false;
  out.module = m.name, out.tensor = what;
  out.nonfinite = int64_t(bad);
  std::vector<TraceEvent> events;
  {
    const TraceRecorder trace(events);
    (void)m.fwd();
  }
  out.first_nonfinite = trace_first_nonfinite(events);
}

void check_module(ClsGradCheck& out, ModuleUnderCheck& m, size_t per_tensor, CheckRng& rng) {
  Tensor y;
  {
    EnableGrad keep;
    y = m.fwd();
  }
  if (const size_t bad = nonfinite(y)) return reject_nonfinite(out, m, bad, "output");
  std::vector<double> r(y.size());
  for (double& v : r) v = rng.normal();
  Tensor dy = y;
  for (size_t i = 0; i < y.size(); ++i) dy.data()[i] = float(r[i]);
  std::vector<const CodeSite*> sites;
  Tensor dx;
  {
    CodeSiteRecorder rec(sites);  // the backward's own site comes first
    dx = m.bwd(dy);
  }
  const std::string site = sites.empty() ? m.name : code_site_words(*sites.front());
  if (dx.dimension() > 0)  // an empty Tensor() when the input is ids
    if (const size_t bad = nonfinite(dx)) return reject_nonfinite(out, m, bad, "input gradient");
  for (auto& [name, vg] : m.tensors)
    if (const size_t bad = nonfinite(*vg.second)) return reject_nonfinite(out, m, bad, "parameter gradient");
  auto sample = [&](size_t n) {
    std::vector<size_t> idx;
    if (per_tensor == 0 || per_tensor >= n) {
      for (size_t i = 0; i < n; ++i) idx.push_back(i);
    } else {
      for (size_t k = 0; k < per_tensor; ++k) idx.push_back(size_t(rng.next() % n));
    }
    return idx;
  };
  std::vector<Entry> entries;
  for (auto& [name, vg] : m.tensors)
    for (size_t i : sample(vg.first->size())) entries.push_back({name, vg.first->data() + i, double(vg.second->data()[i])});
  if (m.input && dx.size() == m.input->size())
    for (size_t i : sample(m.input->size())) entries.push_back({"input", m.input->data() + i, double(dx.data()[i])});
  auto loss = [&] {
    const Tensor z = m.fwd();
    double L = 0;
    for (size_t i = 0; i < z.size(); ++i) L += double(z.data()[i]) * r[i];
    return L;
  };
  // L(p + step) for entry e, p restored; `taken` the step float really took
  auto moved = [&](const Entry& e, float step, double* taken) {
    const float keep = *e.p;
    *e.p = keep + step;
    *taken = double(*e.p) - double(keep);
    const double L = loss();
    *e.p = keep;
    return L;
  };
  auto step_of = [](const Entry& e) { return float(kClsFdStep * std::max(1.0, std::fabs(double(*e.p)))); };
  std::vector<double> fds;
  double scale = 0;
  for (const Entry& e : entries) {
    const float h = step_of(e);
    double up_h = 0, down_h = 0;
    const double up = moved(e, h, &up_h), down = moved(e, -h, &down_h);
    const double fd = (up - down) / (up_h - down_h);
    fds.push_back(fd);
    scale = std::max({scale, std::fabs(fd), std::fabs(e.grad)});
  }
  {
    size_t bad = 0;
    for (const double fd : fds) bad += !std::isfinite(fd);
    if (bad) return reject_nonfinite(out, m, bad, "finite difference");
  }
  scale = std::max(scale, 1e-6);
  // each tensor's own scale (its largest sampled |fd| or |grad|), at least a tenth of the module's:
  // a tensor with tiny gradients is not judged on float noise
  std::map<std::string, double> tscale;
  for (size_t j = 0; j < entries.size(); ++j) {
    double& t = tscale.try_emplace(entries[j].tensor, 0.1 * scale).first->second;
    t = std::max({t, std::fabs(fds[j]), std::fabs(entries[j].grad)});
  }
  ++out.modules;
  out.tensors = std::max(out.tensors, int64_t(m.tensors.size()));  // the whole model's, last, has them all
  out.entries += int64_t(entries.size());
  size_t worst = 0;
  double worst_rel = -1;
  double L0 = 0;
  bool have_L0 = false;
  for (size_t j = 0; j < entries.size(); ++j) {
    const Entry& e = entries[j];
    double rel = std::fabs(e.grad - fds[j]) / tscale[e.tensor];
    if (rel > kClsFdTolerance) {
      // a kink (ReLU, a mask, a max) between p - h and p + h spoils the central difference, not a
      // wrong backward: again with h/4, centrally and from each side (one side has no kink); a
      // backward that does not match its forward misses on every one
      if (!have_L0) L0 = loss(), have_L0 = true;
      const float q = step_of(e) / 4;
      double up_h = 0, down_h = 0;
      const double up = moved(e, q, &up_h), down = moved(e, -q, &down_h);
      for (const double fd : {(up - down) / (up_h - down_h), (up - L0) / up_h, (L0 - down) / -down_h}) {
        const double r2 = std::fabs(e.grad - fd) / tscale[e.tensor];
        if (r2 < rel) rel = r2, fds[j] = fd;
      }
    }
    if (rel > worst_rel) worst = j, worst_rel = rel;
  }
  if (entries.empty()) return;
  out.maxrel = std::max(out.maxrel, worst_rel);
  if (worst_rel > kClsFdTolerance) {  // the module's worst entry is the one shown
    out.ok = false;
    out.module = m.name, out.tensor = entries[worst].tensor, out.site = site;
    out.grad = entries[worst].grad, out.fd = fds[worst], out.rel = worst_rel;
  }
}

}  // namespace

ClsGradCheck check_classifier_grads(const Classifier& cm, const ClsBatch& b, size_t per_tensor) {
  // everything the check runs is recorded here and dropped: the chapter's "code:" lines stay as they were
  std::vector<const CodeSite*> quiet;
  CodeSiteRecorder silence(quiet);
  EncoderClassifier M = cm.model;  // a copy: the check moves its weights one at a time
  M.train(false);  // dropout off: no draws, a deterministic loss
  EncoderClassifier G = M;
  zero_grad(G);
  const auto values = M.named_parameters(), grads = G.named_parameters();
  auto under = [&](const std::string& prefix) {
    std::vector<std::pair<std::string, std::pair<Tensor*, Tensor*>>> t;
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i].first.rfind(prefix, 0) == 0)
        t.push_back({values[i].first.substr(prefix.size()), {values[i].second, grads[i].second}});
    return t;
  };
  ITensor ids = ITensor::from_shape({size_t(b.B), size_t(b.T)});
  std::copy(b.ids.begin(), b.ids.end(), ids.data());
  const Tensor mask = M.padding_mask(ids);
  const BTensor keep = keep_where_nonzero(mask);  // the same mask as the attention reads it
  const size_t B = size_t(b.B), T = size_t(b.T), C = size_t(cm.cfg.d_model);
  CheckRng rng;
  auto normal = [&](std::initializer_list<size_t> shape) {
    Tensor x = Tensor::from_shape(shape);
    for (float& v : x) v = float(rng.normal());
    return x;
  };
  TransformerEncoderLayer& layer = M.encoder.layers[0];
  TransformerEncoderLayer& glayer = G.encoder.layers[0];
  Tensor x_head = normal({B, C}), x_ln = normal({B, T, C}), x_attn = normal({B, T, C}), x_ff = normal({B, T, C}),
         x_layer = normal({B, T, C});
  std::vector<ModuleUnderCheck> modules;
  // leaves first, then what composes them: the first module that disagrees is the one edited
  modules.push_back({"Linear (classifier)", [&] { return M.classifier(x_head); },
                     [&](const Tensor& dy) { return M.classifier.backward(x_head, dy, G.classifier); },
                     under("classifier."), &x_head});
  modules.push_back({"LayerNorm (encoder.layers.0.layer_norm_1)", [&] { return layer.layer_norm_1()(x_ln); },
                     [&](const Tensor& dy) { return layer.layer_norm_1().backward(x_ln, dy, glayer.layer_norm_1()); },
                     under("encoder.layers.0.layer_norm_1."), &x_ln});
  modules.push_back({"MultiHeadAttention (encoder.layers.0.attention)",
                     [&] { return layer.self_attn(x_attn, x_attn, x_attn, &keep); },
                     [&](const Tensor& dy) {
                       MultiHeadedAttention::InputGrads g = layer.self_attn.backward(dy, glayer.self_attn);
                       for (size_t i = 0; i < g.dquery.size(); ++i)
                         g.dquery.data()[i] += g.dkey.data()[i] + g.dvalue.data()[i];
                       return g.dquery;
                     },
                     under("encoder.layers.0.attention."), &x_attn});
  modules.push_back({"FeedForward (encoder.layers.0.feed_forward)", [&] { return layer.feed_forward(x_ff); },
                     [&](const Tensor& dy) { return layer.feed_forward.backward(dy, glayer.feed_forward); },
                     under("encoder.layers.0.feed_forward."), &x_ff});
  modules.push_back({"TransformerEncoderLayer (encoder.layers.0)", [&] { return layer(x_layer, &keep); },
                     [&](const Tensor& dy) { return layer.backward(dy, glayer); }, under("encoder.layers.0."),
                     &x_layer});
  modules.push_back({"Embeddings (encoder.embeddings)", [&] { return M.encoder.embeddings(ids); },
                     [&](const Tensor& dy) {
                       M.encoder.embeddings.backward(ids, dy, G.encoder.embeddings);
                       return Tensor();
                     },
                     under("encoder.embeddings."), nullptr});
  modules.push_back({"EncoderClassifier", [&] { return M(ids); },
                     [&](const Tensor& dy) {
                       M.backward(dy, G);
                       return Tensor();
                     },
                     under(""), nullptr});
  ClsGradCheck out;
  for (ModuleUnderCheck& m : modules) {
    zero_grad(G);
    // the whole model: a few entries of each tensor (its modules were checked above), 8 when all are asked for
    check_module(out, m, m.name == "EncoderClassifier" ? (per_tensor == 0 ? 8 : 1) : per_tensor, rng);
    if (!out.ok) break;
  }
  return out;
}

}  // namespace ts::train
