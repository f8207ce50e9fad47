// course/classifier_report.cpp: see classifier_report.hpp.
#include "course/classifier_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/counts.hpp"
#include "course/errors.hpp"
#include "course/i18n.hpp"
#include "train/numbers.hpp"

namespace ts {

std::string classifier_parameter_table(train::Classifier& m) {
  PartCounts counts;
  for (const auto& [name, t] : m.model.named_parameters()) {
    // "encoder.layers.0.attention..." -> "encoder.layers.0"; "encoder.embeddings..." -> "encoder.embeddings"
    std::string part = first_field(name);
    if (part == "encoder") {
      const size_t a = name.find('.', 8);
      part = name.substr(0, a);
      if (part == "encoder.layers") part = name.substr(0, name.find('.', a + 1));
    }
    counts.add(part, t->size());
  }
  return counts.table(20, 9);
}

Pooling measure_pooling(train::Classifier& m, const train::ClsBatch& b) {
  using namespace train;
  ClsWorkspace w;
  classifier_forward(m, w, b, /*training=*/false);  // m.model, the module that ran
  const int64_t T = b.T, C = m.cfg.d_model;
  const std::vector<float> x = w.x;  // the encoder's output (B,T,C)
  ITensor ids = ITensor::from_shape({size_t(b.B), size_t(T)});
  std::copy(b.ids.begin(), b.ids.end(), ids.data());
  // the module's whole head, x -> logits, as its forward calls it (dropout off)
  m.model.train(false);
  auto logits_of = [&](const std::vector<float>& v) {
    Tensor xt = Tensor::from_shape({size_t(b.B), size_t(T), size_t(C)});
    std::copy(v.begin(), v.end(), xt.data());
    const Tensor l = m.model.head(xt, ids);
    return std::vector<double>(l.data(), l.data() + l.shape()[1]);  // sentence 0's K logits
  };
  const std::vector<double> base = logits_of(x);
  const int64_t K = int64_t(base.size());
  // moving position t's final vector by d (d_c = 1) moves a pooled vector that weights t by w_t by w_t d,
  // so the logits by w_t (W d), W the classifier's (K, C) weight: w_t is read back along W d
  std::vector<double> Wd(static_cast<size_t>(K), 0.0);
  const Tensor& W = m.model.classifier.weight;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) Wd[size_t(k)] += double(W.data()[k * C + c]);
  double WdWd = 0;
  for (double v : Wd) WdWd += v * v;
  Pooling out;
  std::vector<std::string> tokens;
  int64_t n = 0;  // sentence 0's real positions; the ones after it (up to T) are padding, moved too
  while (n < T && b.ids[size_t(n)] != kPad) ++n;
  for (int64_t t = 0; t < T; ++t) {
    tokens.push_back(t < n ? classifier_token(b.ids[size_t(t)]) : std::string("<pad>"));
    std::vector<float> moved = x;
    for (int64_t c = 0; c < C; ++c) moved[size_t(t * C + c)] += 1.0f;
    const std::vector<double> l = logits_of(moved);
    double along = 0, off = 0, dl = 0;
    for (int64_t k = 0; k < K; ++k) along += (l[size_t(k)] - base[size_t(k)]) * Wd[size_t(k)];
    const double wt = WdWd > 0 ? along / WdWd : 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const double d = l[size_t(k)] - base[size_t(k)];
      dl = std::max(dl, std::abs(d)), off = std::max(off, std::abs(d - wt * Wd[size_t(k)]));
    }
    out.linear = out.linear && off <= 1e-3 * std::max(1.0, dl);
    out.moves.push_back(dl > 1e-5);
    out.weight.push_back(std::abs(wt) < 1e-5 ? 0.0 : wt);
  }
  for (int64_t t = 0; t < n && out.cls_at < 0; ++t)
    if (b.ids[size_t(t)] == cls_id()) out.cls_at = t;
  out.has_cls = out.cls_at == 0;
  std::string joined;
  for (int64_t t = 0; t < n; ++t) joined += (joined.empty() ? "" : " ") + tokens[size_t(t)];
  std::vector<int64_t> read;
  int64_t pads_read = 0;
  for (int64_t t = 0; t < T; ++t)
    if (out.moves[size_t(t)]) read.push_back(t), pads_read += t >= n;
  auto near = [](double a, double b) { return std::abs(a - b) < 1e-4; };
  const bool equal = out.linear && !read.empty() && std::all_of(read.begin(), read.end(), [&](int64_t t) {
    return near(out.weight[size_t(t)], 1.0 / double(read.size()));
  });
  out.cls_only = out.has_cls && read.size() == 1 && read[0] == 0 && equal;
  if (pads_read > 0) {  // the padding reaches the logits: say so, with every position's weight
    std::string parts;
    for (int64_t t = 0; t < T; ++t)
      parts += fmt::format("{}{} {:.3g}", t ? ", " : "", tokens[size_t(t)], out.weight[size_t(t)]);
    out.words = trf("a weighted sum that reads the padding too: {k} padded position(s) of '{s}' move the logits ({parts})",
                    fmt::arg("k", pads_read), fmt::arg("s", joined), fmt::arg("parts", parts));
    out.weight.resize(size_t(n)), out.moves.resize(size_t(n));
    return out;
  }
  out.weight.resize(size_t(n)), out.moves.resize(size_t(n));
  const std::string first = out.has_cls ? "[CLS]" : trf("'{w}' (a word: no [CLS] before it)", fmt::arg("w", n ? tokens[0] : ""));
  if (read.size() == 1 && equal)
    out.words = out.cls_only ? std::string(_("the final vector of position 0, [CLS]"))
                : read[0] == 0 ? trf("the final vector of position 0, {first}", fmt::arg("first", first))
                             : trf("the final vector of position {t}, '{w}'{last}", fmt::arg("t", read[0]),
                                   fmt::arg("w", tokens[size_t(read[0])]),
                                   fmt::arg("last", read[0] == n - 1 ? _(" (the last word)") : ""));
  else if (equal && int64_t(read.size()) == n && out.has_cls)
    out.words = trf("the mean of the final vectors of every real position, [CLS] included ({n} in '{s}')",
                    fmt::arg("n", n), fmt::arg("s", joined));
  else if (equal && int64_t(read.size()) == n)
    out.words = trf("the mean of the final vectors of every real position, all of them words ({n} in '{s}')",
                    fmt::arg("n", n), fmt::arg("s", joined));
  else if (equal && int64_t(read.size()) == n - 1 && read[0] == 1 && out.has_cls)
    out.words = trf("the mean of the final vectors of the words, [CLS] left out ({n} in '{s}')", fmt::arg("n", n - 1),
                    fmt::arg("s", joined));
  else if (read.empty())
    out.words = _("no position: moving any final vector leaves the logits where they were");
  else if (!out.linear) {
    std::string parts;
    for (int64_t t = 0; t < n; ++t) parts += fmt::format("{}{} {}", t ? ", " : "", tokens[size_t(t)], out.moves[size_t(t)] ? _("moves") : _("does not"));
    out.words = trf("not a weighted sum the classifier's Linear reads: moving a final vector moves the logits off its "
                    "weight's direction ({parts})",
                    fmt::arg("parts", parts));
  } else {
    std::string parts;
    for (int64_t t = 0; t < n; ++t)
      parts += fmt::format("{}{} {:.3g}", t ? ", " : "", tokens[size_t(t)], out.weight[size_t(t)]);
    out.words = trf("a weighted sum of the final vectors ({parts})", fmt::arg("parts", parts));
  }
  return out;
}

Similarity cosine_similarity(const std::vector<float>& v, int64_t C, const std::vector<int64_t>& labels) {
  const int64_t n = static_cast<int64_t>(labels.size());
  Similarity s;
  s.cos.assign(static_cast<size_t>(n * n), 0.0f);
  std::vector<double> norm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double q = 0;
    for (int64_t c = 0; c < C; ++c) q += double(v[size_t(i * C + c)]) * v[size_t(i * C + c)];
    norm[size_t(i)] = std::max(std::sqrt(q), 1e-12);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double d = 0;
      for (int64_t c = 0; c < C; ++c) d += double(v[size_t(i * C + c)]) * v[size_t(j * C + c)];
      const double cs = d / (norm[size_t(i)] * norm[size_t(j)]);
      s.cos[size_t(i * n + j)] = static_cast<float>(cs);
      if (j <= i) continue;
      if (labels[size_t(i)] == labels[size_t(j)])
        s.same += cs, ++s.same_pairs;
      else
        s.different += cs, ++s.different_pairs;
    }
  if (s.same_pairs) s.same /= double(s.same_pairs);
  if (s.different_pairs) s.different /= double(s.different_pairs);
  return s;
}

std::vector<float> cls_row(const std::vector<float>& p, int64_t i, int64_t H, int64_t T) {
  std::vector<float> r(static_cast<size_t>(H * T));
  for (int64_t h = 0; h < H; ++h)
    std::copy_n(p.begin() + ((i * H + h) * T + 0) * T, T, r.begin() + h * T);
  return r;
}

int64_t most_attended(const std::vector<float>& row, int64_t H, int64_t T) {
  int64_t best = 0;
  double best_w = -1;
  for (int64_t t = 0; t < T; ++t) {
    double w = 0;
    for (int64_t h = 0; h < H; ++h) w += row[size_t(h * T + t)];
    if (w > best_w) best_w = w, best = t;
  }
  return best;
}

float min_cls_weight(const std::vector<float>& p, const std::vector<int64_t>& ids, int64_t B, int64_t H, int64_t T) {
  float lo = 1.0f;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < T; ++s)
        if (ids[size_t(b * T + s)] != train::kPad) lo = std::min(lo, p[size_t(((b * H + h) * T + 0) * T + s)]);
  return lo;
}

float hidden_cls_weight(const std::vector<float>& p, const std::vector<float>& mask, int64_t B, int64_t H, int64_t T) {
  float hi = 0.0f;
  if (p.size() != size_t(B * H * T * T) || mask.size() != size_t(B * T * T)) return INFINITY;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < T; ++s)
        if (mask[size_t((b * T + 0) * T + s)] != 0.0f) hi = std::max(hi, p[size_t(((b * H + h) * T + 0) * T + s)]);
  return hi;
}

MaskRow cls_mask_row(const std::vector<float>& mask, const std::vector<int64_t>& ids, int64_t B, int64_t T) {
  MaskRow r;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < T; ++s) {
      const bool pad = ids[size_t(b * T + s)] == train::kPad, hidden = mask[size_t((b * T + 0) * T + s)] != 0.0f;
      r.pads += pad;
      r.hidden_pad += pad && hidden;
      r.hidden_real += !pad && hidden;
    }
  return r;
}

int64_t parse_number_words(const std::string& text) {
  std::istringstream in(text);
  std::string word, words;
  while (in >> word) {
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    words += (words.empty() ? "" : " ") + word;
  }
  if (!words.empty() && text.size() <= 200)
    for (int64_t n = 0; n <= train::kMaxNumber; ++n)
      if (train::number_to_words(n) == words) return n;
  throw UsageError(trf("--classify needs a number from 0 to {max} written in English words as the course writes them "
                       "(e.g. \"forty eight\", no 'and', no hyphens), got {text}",
                       fmt::arg("max", train::kMaxNumber), fmt::arg("text", quoted_input(text))));  // one line, cut, invisible characters named
}

}  // namespace ts
