#include "course/model_probes.hpp"

#include <algorithm>
#include <cmath>

#include "course/i18n.hpp"
#include "exact/kernels.hpp"

namespace ts {
namespace {

// largest |a - b| in double (a, b same shape)
double gap_of(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, std::fabs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i])));
  return d;
}

// nn.Linear(n, n) with weight = I and bias = 0, built without drawing
Linear identity_linear(size_t n) {
  Linear l;
  l.in_features = l.out_features = static_cast<int64_t>(n);
  l.weight = Tensor::from_shape({n, n});
  l.weight.fill(0.0f);
  for (size_t i = 0; i < n; ++i) l.weight(i, i) = 1.0f;
  l.bias = Tensor::from_shape({n});
  l.bias.fill(0.0f);
  return l;
}

}  // namespace

std::string feed_forward_activation() {
  const size_t n = 33;
  FeedForward probe;  // default-constructed: nothing drawn
  probe.linear_1 = identity_linear(n);
  probe.linear_2 = identity_linear(n);
  probe.train(false);
  Tensor z = Tensor::from_shape({1, 1, n});  // (B,T,C)
  for (size_t i = 0; i < n; ++i) z.data()[i] = -4.0f + 0.25f * static_cast<float>(i);
  const Tensor y = probe(z);
  if (y.size() != z.size()) return "";
  for (const char* name : {"GELU", "ReLU", "none"})
    if (gap_of(y, apply_activation(name, z)) <= 1e-6) return name;
  return "";
}

Tensor apply_activation(const std::string& name, const Tensor& x) {
  if (name == "GELU") return gelu(x);
  if (name == "ReLU") return relu(x);
  return x;
}

std::string activation_words(const std::string& name) {
  if (name.empty()) return _("an activation that is neither GELU nor ReLU");
  if (name == "none") return _("no activation");
  return name;
}

std::string activation_note(const std::string& act, const char* gelu_text, const char* other_text) {
  if (act == "GELU") return tr(gelu_text);
  return trf(other_text, fmt::arg("act", activation_words(act)));
}

ResidualCheck pre_ln_residuals(const TransformerEncoderLayer& layer, const Tensor& x) {
  TransformerEncoderLayer quiet = layer;
  quiet.train(false);
  const Tensor y = quiet(x);
  const Tensor h = quiet.layer_norm_1(x);
  const Tensor x1 = x + quiet.attention(h, h, h);
  const Tensor sum = x1 + quiet.feed_forward(quiet.layer_norm_2(x1));
  ResidualCheck r;
  if (y.size() != sum.size()) {
    r.gap = INFINITY;
    return r;
  }
  r.gap = gap_of(y, sum);
  for (float v : y) r.scale = std::max(r.scale, std::fabs(static_cast<double>(v)));
  return r;
}

size_t parameter_count(const TransformerEncoderLayer& layer) {
  auto count = [](const Linear& l) { return l.weight.size() + l.bias.size(); };
  size_t n = layer.layer_norm_1.weight.size() + layer.layer_norm_1.bias.size() + layer.layer_norm_2.weight.size() +
             layer.layer_norm_2.bias.size();
  for (const AttentionHead& h : layer.attention.heads) n += count(h.q) + count(h.k) + count(h.v);
  return n + count(layer.attention.output_linear) + count(layer.feed_forward.linear_1) +
         count(layer.feed_forward.linear_2);
}

}  // namespace ts
