#include "course/mask_stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "exact/compare.hpp"
#include "exact/tensor_ops.hpp"

namespace ts {
namespace {

// Calls f(row pointer of w, row pointer of keep, S) for every row of the last dim.
template <class F>
void for_rows(const Tensor& w, const Tensor& keep, F f) {
  const size_t S = w.shape()[w.dimension() - 1];
  for (size_t r = 0; r < w.size() / S; ++r) f(w.data() + r * S, keep.data() + r * S, S);
}

}  // namespace

std::string py_bool(bool b) { return b ? "True" : "False"; }

size_t count_equal(const Tensor& t, float v) {
  return static_cast<size_t>(std::count(t.begin(), t.end(), v));
}

size_t empty_rows(const Tensor& keep) {
  size_t n = 0;
  for_rows(keep, keep, [&](const float* k, const float*, size_t S) { n += std::count(k, k + S, 0.0f) == long(S); });
  return n;
}

size_t nan_rows(const Tensor& w) {
  size_t n = 0;
  for_rows(w, w, [&](const float* r, const float*, size_t S) {
    n += std::all_of(r, r + S, [](float v) { return std::isnan(v); });
  });
  return n;
}

float max_hidden(const Tensor& w, const Tensor& keep) {
  float m = 0.0f;
  for (size_t i = 0; i < w.size(); ++i)
    if (keep.data()[i] == 0.0f && (std::isnan(w.data()[i]) || w.data()[i] > m)) m = w.data()[i];
  return std::isnan(m) ? NAN : m;  // printed "nan", never "-nan"
}

double row_sum_dev(const Tensor& w) {
  double m = 0.0;
  for_rows(w, w, [&](const float* r, const float*, size_t S) {
    double s = 0.0;
    for (size_t i = 0; i < S; ++i) s += r[i];
    const double d = std::fabs(s - 1.0);
    if (std::isnan(d) || d > m) m = d;
  });
  return m;
}

double uniform_dev(const Tensor& w, const Tensor& keep, bool only_empty) {
  double m = 0.0;
  for_rows(w, keep, [&](const float* r, const float* k, size_t S) {
    const size_t n = S - std::count(k, k + S, 0.0f);
    if (only_empty && n != 0) return;
    for (size_t i = 0; i < S; ++i) {
      if (n != 0 && k[i] == 0.0f) continue;
      const double d = std::fabs(r[i] - 1.0 / static_cast<double>(n ? n : S));
      if (std::isnan(d) || d > m) m = d;
    }
  });
  return m;
}

double kept_rows_diff(const Tensor& a, const Tensor& b) {
  const size_t S = a.shape()[a.dimension() - 1], R = a.size() / S;
  Tensor a2 = a, b2 = b;
  a2.reshape({R, S});
  b2.reshape({R, S});
  std::vector<Tensor> ra, rb;
  for (size_t r = 0; r < R; ++r)
    if (!std::all_of(a2.data() + r * S, a2.data() + (r + 1) * S, [](float v) { return std::isnan(v); })) {
      ra.push_back(slice_rows(a2, r, 1));
      rb.push_back(slice_rows(b2, r, 1));
    }
  if (ra.empty()) return 0.0;
  return max_abs_diff(cat(ra, 0), cat(rb, 0))();
}

float max_on_or_below_diagonal(const Tensor& w, const Tensor& keep) {
  const size_t S = w.shape()[w.dimension() - 1], T = w.shape()[w.dimension() - 2];
  float m = 0.0f;
  for (size_t r = 0; r < w.size() / S; ++r) {
    const float* row = w.data() + r * S;
    const float* k = keep.data() + r * S;
    if (std::count(k, k + S, 0.0f) == static_cast<long>(S)) continue;  // no key: nan or uniform
    for (size_t s = 0; s <= r % T && s < S; ++s)
      if (std::isnan(row[s]) || row[s] > m) m = row[s];
  }
  return std::isnan(m) ? NAN : m;
}

std::string filled_value(const Tensor& filled, const Tensor& keep) {
  bool any = false;
  float v = 0.0f;
  for (size_t i = 0; i < filled.size(); ++i) {
    if (keep.data()[i] != 0.0f) continue;
    if (any && filled.data()[i] != v) return _("mixed");
    v = filled.data()[i];
    any = true;
  }
  return any ? fmt::format("{:g}", v) : std::string("-");
}

std::string kept_pattern(const Tensor& keep) {
  const size_t S = keep.shape()[keep.dimension() - 1], T = keep.size() / S;
  bool lower = S == T, upper = S == T, future = S == T;
  for (size_t t = 0; t < T; ++t)
    for (size_t s = 0; s < S; ++s) {
      const bool kept = keep.data()[t * S + s] != 0.0f;
      lower = lower && kept == (s <= t);
      upper = upper && kept == (s >= t);
      future = future && kept == (s > t);
    }
  if (lower) return _("token t sees tokens 0..t");
  if (upper) return _("token t sees tokens t..T-1, its own and the FUTURE ones");
  if (future) return _("token t sees only the FUTURE tokens t+1..T-1, and the last token sees none");
  return "";
}

// Two tables, each narrower than 80 columns: what 1 / True means in each article's mask, then how
// each article applies it to the scores.
std::string polarity_table() {
  return text_table({
             {_("article"), _("mask"), _("1 / True means")},
             {"000", "torch.tril(torch.ones(T, T))", _("keep")},
             {"002", _("subsequent_mask(T)  (bool)"), _("keep")},
             {"001", _("arange(1, T + 1)  (valid lengths)"), _("keys kept")},
             {"004", "1 - band_part(ones, -1, 0)", _("HIDE")},
             {"004", "create_padding_mask(seq)", _("HIDE")},
         }) +
         "\n" +
         text_table({
             {_("article"), _("applied as")},
             {"000", "scores.masked_fill(mask == 0, -inf)"},
             {"002", "scores.masked_fill(mask == 0, -1e9)"},
             {"001", _("key s kept if s < valid_lens[t]")},
             {"004", "scores + mask * -1e9"},
         });
}

std::string mask_differs(bool causal, const std::string& pattern, const std::string& other) {
  if (!causal)
    return trf("they differ: {o} is the causal triangle and Step 2's mask is not ({p})", fmt::arg("o", other),
               fmt::arg("p", pattern.empty() ? _("its rows keep another pattern") : pattern));
  return trf("they differ although Step 2's mask and {o} are both the causal triangle: the code that applies one of "
             "them (its fill value, its softmax) computes something else",
             fmt::arg("o", other));
}

std::string look_note(const Tensor& look) {
  const std::string keeps = kept_pattern(1.0f - look);
  if (keeps == kept_pattern(tril_ones(look.shape()[0])))
    return _("1 - band_part(ones, -1, 0): the upper triangle, the keys a query may NOT see");
  return trf("1 = hide, so here {p}: not the causal mask article 004 means (create_look_ahead_mask, "
             "src/transformer/article004.cpp)",
             fmt::arg("p", keeps.empty() ? _("its rows keep another pattern") : keeps));
}

std::string mask_breaks_cache(const std::vector<float>& hide, int64_t T, const std::string& site) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < T; ++s) {
      const bool hidden = hide[size_t(t * T + s)] != 0.0f;
      if (s > t && !hidden)
        return trf("the mask the forward built lets query {t} see key {s}, a later position: generating one token "
                   "at a time, token {s} does not exist yet when token {t} is computed, so no cache can reproduce "
                   "this pass; the cache is not at fault, the mask is (look at {site})",
                   fmt::arg("t", t), fmt::arg("s", s), fmt::arg("site", site));
      if (s <= t && hidden)
        return trf("the mask the forward built hides key {s} from query {t}, an earlier position (or itself): a "
                   "cached step attends over every position cached so far, so no cache can reproduce this pass; "
                   "the cache is not at fault, the mask is (look at {site})",
                   fmt::arg("t", t), fmt::arg("s", s), fmt::arg("site", site));
    }
  return "";
}

}  // namespace ts
