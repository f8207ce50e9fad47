#include "course/model_probes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

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

std::string feed_forward_activation() { return feed_forward_activation(FeedForward()); }

std::string feed_forward_activation(const FeedForward& ff) {
  const size_t n = 33;
  FeedForward probe = ff;  // a copy: its settings (activation, article), its Linears made identities
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

HeadReach probe_head_reach(const MultiHeadAttention& mha, const Tensor& query, const Tensor& key, const Tensor& value,
                           const Tensor& shown) {
  HeadReach r;
  const Tensor y = mha(query, key, value);  // (B,T,C)
  r.is_shown = shape_of(y) == shape_of(shown) && std::equal(y.begin(), y.end(), shown.begin());
  r.numbers = y.size();
  for (size_t h = 0; h < mha.heads.size(); ++h) {
    // head h's values doubled: v_h = 2 (x W_v^T + b_v), so its output doubles   (B,T,D)
    MultiHeadAttention probe = mha;
    Linear& v = probe.heads[h].v;
    for (float& w : v.weight) w *= 2.0f;
    for (float& b : v.bias) b *= 2.0f;
    const Tensor moved = probe(query, key, value);
    size_t n = 0;
    for (size_t i = 0; i < y.size() && i < moved.size(); ++i) n += moved.data()[i] != y.data()[i];
    if (moved.size() != y.size()) n = 0;  // another shape: nothing comparable
    r.moved.push_back(n);
    if (n < r.moved[r.fewest_head]) r.fewest_head = h;
  }
  return r;
}

ResidualCheck post_ln_rebuilt(const TransformerEncoderLayer& layer, const Tensor& x) {
  TransformerEncoderLayer quiet = layer;
  quiet.train(false);
  const Tensor y = quiet.post_ln(x);
  const Tensor x1 = quiet.layer_norm_1()(Tensor(x + quiet.self_attn(x, x, x)));
  const Tensor out = quiet.layer_norm_2()(Tensor(x1 + quiet.feed_forward(x1)));
  ResidualCheck r;
  r.gap = y.size() == out.size() ? gap_of(y, out) : INFINITY;
  for (float v : y) r.scale = std::max(r.scale, std::fabs(static_cast<double>(v)));
  return r;
}

ResidualCheck pre_ln_residuals(const TransformerEncoderLayer& layer, const Tensor& x) {
  TransformerEncoderLayer quiet = layer;
  quiet.train(false);
  const Tensor y = quiet(x);
  const Tensor h = quiet.layer_norm_1()(x);
  const Tensor x1 = x + quiet.self_attn(h, h, h);
  const Tensor sum = x1 + quiet.feed_forward(quiet.layer_norm_2()(x1));
  ResidualCheck r;
  if (y.size() != sum.size()) {
    r.gap = INFINITY;
    return r;
  }
  r.gap = gap_of(y, sum);
  for (float v : y) r.scale = std::max(r.scale, std::fabs(static_cast<double>(v)));
  // d = y - sum;  k = <d, x> / <x, x>;  share = 1 - |d - k x|^2 / |d|^2
  double dx = 0, xx = 0, dd = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double d = double(y.data()[i]) - double(sum.data()[i]), xi = double(x.data()[i]);
    dx += d * xi, xx += xi * xi, dd += d * d;
  }
  if (xx > 0 && dd > 0) {
    r.input_k = dx / xx;
    double rest = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      const double d = double(y.data()[i]) - double(sum.data()[i]) - r.input_k * double(x.data()[i]);
      rest += d * d;
    }
    r.input_share = 1 - rest / dd;
  }
  return r;
}

std::string ResidualCheck::instead() const {
  if (holds()) return "";
  if (input_share >= 0.9 && std::fabs(1 + input_k) < 0.05)
    return trf("{pct:.0f}% of the difference is {k:+.3g} times the input itself: the layer no longer adds its input",
               fmt::arg("pct", 100 * input_share), fmt::arg("k", input_k));
  if (input_share >= 0.9)
    return trf("{pct:.0f}% of the difference is {k:+.3g} times the input itself: the layer carries its input {n:.2f} "
               "times instead of once",
               fmt::arg("pct", 100 * input_share), fmt::arg("k", input_k), fmt::arg("n", 1 + input_k));
  return _("the layer no longer returns its input plus the two sublayers' outputs");
}

size_t parameter_count(const TransformerEncoderLayer& layer) {
  auto count = [](const Linear& l) { return l.weight.size() + l.bias.size(); };
  size_t n = layer.layer_norm_1().weight.size() + layer.layer_norm_1().bias.size() +
             layer.layer_norm_2().weight.size() + layer.layer_norm_2().bias.size();
  for (const Linear& l : layer.self_attn.linears) n += count(l);  // the heads' q, k, v, then output_linear
  return n + count(layer.feed_forward.linear_1) +
         count(layer.feed_forward.linear_2);
}

bool embeddings_apply_layer_norm(const Embeddings& e, const ITensor& ids) {
  Embeddings quiet = e;
  quiet.train(false);
  const Tensor out = quiet(ids);
  // 1) position ids 0..T-1, 2) LayerNorm(token + position), the layer's own modules   (B,T,C)
  const size_t T = ids.shape()[1];
  ITensor positions = ITensor::from_shape({1, T});
  for (size_t t = 0; t < T; ++t) positions(0, t) = static_cast<int64_t>(t);
  const Tensor ref = quiet.layer_norm(quiet.token_embeddings(ids) + quiet.position_embeddings(positions));
  return out.size() == ref.size() && gap_of(out, ref) <= 1e-5;
}

std::string embed_sequential_words(const EmbedSequential& e, const std::string& V) {
  const size_t C = static_cast<size_t>(e.embed.d_model);
  // 1) the factor: embed(id) / lut(id) on the entry of largest |lut| of one row
  ITensor id = ITensor::from_shape({1, 1});
  id(0, 0) = std::min<int64_t>(1, static_cast<int64_t>(e.embed.lut.weight.shape()[0]) - 1);
  const Tensor row = e.embed.lut(id), scaled = e.embed(id);  // (1,1,C)
  size_t at = 0;
  for (size_t c = 1; c < row.size(); ++c)
    if (std::fabs(row.data()[c]) > std::fabs(row.data()[at])) at = c;
  const double factor = row.size() == 0 || row.data()[at] == 0.0f || scaled.size() != row.size()
                            ? NAN
                            : static_cast<double>(scaled.data()[at]) / static_cast<double>(row.data()[at]);
  const double root = std::sqrt(static_cast<double>(C));
  const std::string scale = std::fabs(factor - root) <= 1e-5 * root ? _("scaled by sqrt(d_model)")
                            : std::fabs(factor - 1.0) <= 1e-6       ? _("not scaled")
                                                                    : trf("multiplied by {f:.4g} (sqrt(d_model) is {r:.4g})",
                                                                          fmt::arg("f", factor), fmt::arg("r", root));
  // 2) what PositionalEncoding adds to zeros, against its buffer pe[:, :T]
  PositionalEncoding pos = e.pos;
  pos.train(false);
  const size_t T = std::min<size_t>(4, pos.pe.shape()[1]);
  Tensor zeros = Tensor::from_shape({1, T, C});
  zeros.fill(0.0f);
  const Tensor added = pos(zeros);
  double gap = added.size() == T * C ? 0.0 : INFINITY, most = 0;
  for (size_t i = 0; i < added.size() && i < T * C; ++i) {
    gap = std::max(gap, std::fabs(static_cast<double>(added.data()[i]) - static_cast<double>(pos.pe.data()[i])));
    most = std::max(most, std::fabs(static_cast<double>(added.data()[i])));
  }
  const std::string positions = gap <= 1e-6 ? _("the fixed sinusoidal positions")
                                : most == 0 ? _("no positions (its PositionalEncoding adds nothing)")
                                            : trf("what its PositionalEncoding adds, which is not the sinusoidal table "
                                                  "(max |added - pe| = {g:.3g})",
                                                  fmt::arg("g", gap));
  return e.pos.dropout.p > 0
             ? trf("token table ({V}, C), {scale}, then {positions} and dropout", fmt::arg("V", V),
                   fmt::arg("scale", scale), fmt::arg("positions", positions))
             : trf("token table ({V}, C), {scale}, then {positions}; its dropout has p = 0", fmt::arg("V", V),
                   fmt::arg("scale", scale), fmt::arg("positions", positions));
}

std::string generator_words(const AnnotatedGenerator& g, const std::string& V) {
  const size_t C = static_cast<size_t>(g.proj.in_features);
  Tensor x = Tensor::from_shape({1, 1, C});  // (B,T,C), a fixed ramp: no draw
  for (size_t c = 0; c < C; ++c) x.data()[c] = 0.25f * static_cast<float>(static_cast<int>(c % 9) - 4);
  const Tensor z = g.proj(x), out = g(x);
  const bool same_shape = out.size() == z.size();
  if (same_shape && gap_of(out, log_softmax(z)) <= 1e-5)
    return trf("C -> {V} scores, then log_softmax", fmt::arg("V", V));
  if (same_shape && gap_of(out, softmax(z)) <= 1e-6)
    return trf("C -> {V} scores, then softmax (not log_softmax)", fmt::arg("V", V));
  if (same_shape && gap_of(out, z) == 0) return trf("C -> {V} scores, nothing after them", fmt::arg("V", V));
  return trf("C -> {V} scores, then a function of them that is neither log_softmax nor softmax", fmt::arg("V", V));
}

std::string wiring_words(const std::string& wiring) {
  if (wiring == "pre-LN") return _("pre-LN");
  if (wiring == "post-LN") return _("post-LN");
  return _("LayerNorms neither pre-LN nor post-LN (measured on one block)");
}

MixProbe probe_mixing(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, size_t most) {
  MixProbe r;
  if (x.dimension() != 3 || x.shape()[0] != 1) return r;
  const size_t T = x.shape()[1], C = x.shape()[2];
  const Tensor base = f(x);
  if (base.dimension() != 3 || base.shape()[1] != T || base.shape()[2] != C) return r;
  for (size_t j = 0; j < std::min(T, most); ++j) {
    // x with row j moved: x'[0, j, :] = x[0, j, :] + 1
    Tensor moved = x;
    for (size_t c = 0; c < C; ++c) moved(0, j, c) += 1.0f;
    const Tensor out = f(moved);
    ++r.probed;
    for (size_t i = 0; i < T; ++i) {
      if (i == j) continue;
      bool changed = false;
      for (size_t c = 0; c < C && !changed; ++c) changed = out(0, i, c) != base(0, i, c);
      if (!changed && r.reached == r.pairs) r.first_j = j, r.first_i = i;  // the first pair not reached
      ++r.pairs;
      r.reached += changed;
    }
  }
  return r;
}

}  // namespace ts
