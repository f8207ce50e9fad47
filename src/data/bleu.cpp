// data/bleu.cpp: corpus BLEU under NLTK's or torchtext's conventions (see bleu.hpp).
#include "data/bleu.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <stdexcept>

namespace ts::data {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_punct13a(char c) {
  return (c >= '!' && c <= '&') || (c >= '(' && c <= '+') || c == '/' || (c >= ':' && c <= '@') ||
         (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

using Counts = std::map<std::vector<std::string_view>, uint64_t>;

Counts ngram_counts(const Tokens& t, size_t n) {
  Counts c;
  for (size_t i = 0; i + n <= t.size(); ++i) {
    std::vector<std::string_view> key(t.begin() + long(i), t.begin() + long(i + n));
    ++c[key];
  }
  return c;
}

// Python's math.fsum: the exactly rounded sum (Shewchuk's partials)
double fsum(const std::vector<double>& xs) {
  std::vector<double> partials;
  for (double x : xs) {
    size_t k = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) partials[k++] = lo;
      x = hi;
    }
    partials.resize(k);
    partials.push_back(x);
  }
  double sum = 0;
  for (auto it = partials.rbegin(); it != partials.rend(); ++it) sum += *it;
  return sum;
}

}  // namespace

Tokens bleu_tokens(std::string_view s) {
  // 1) spaces around the characters that become tokens, as 13a's regular expressions place them
  std::string out;
  out.reserve(s.size() * 2);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool digit_before = i > 0 && is_digit(s[i - 1]);
    const bool digit_after = i + 1 < s.size() && is_digit(s[i + 1]);
    if (is_punct13a(c) || ((c == '.' || c == ',') && !(digit_before && digit_after)) || (c == '-' && digit_before)) {
      out += ' ';
      out += c;
      out += ' ';
    } else {
      out += c;
    }
  }
  // 2) split at whitespace
  Tokens t;
  size_t i = 0;
  while (i < out.size()) {
    while (i < out.size() && is_space(out[i])) ++i;
    size_t j = i;
    while (j < out.size() && !is_space(out[j])) ++j;
    if (j > i) t.emplace_back(out.substr(i, j - i));
    i = j;
  }
  return t;
}

BleuStats corpus_bleu(const std::vector<Tokens>& hyps, const std::vector<std::vector<Tokens>>& refs,
                      BleuConvention conv) {
  if (hyps.size() != refs.size())
    throw std::invalid_argument("corpus_bleu: " + std::to_string(hyps.size()) + " hypotheses but " +
                                std::to_string(refs.size()) + " reference lists");
  const bool nltk = conv == BleuConvention::nltk;
  BleuStats st;
  for (size_t s = 0; s < hyps.size(); ++s) {
    const Tokens& hyp = hyps[s];
    if (refs[s].empty()) throw std::invalid_argument("corpus_bleu: hypothesis " + std::to_string(s) + " has no reference");
    for (size_t n = 1; n <= 4; ++n) {
      const Counts counts = ngram_counts(hyp, n);
      Counts best;  // per n-gram, the most any one reference has
      for (const Tokens& r : refs[s])
        for (const auto& [g, k] : ngram_counts(r, n)) best[g] = std::max(best[g], k);
      uint64_t matched = 0, total = 0;
      for (const auto& [g, k] : counts) {
        const auto it = best.find(g);
        matched += std::min(k, it == best.end() ? 0 : it->second);
        total += k;
      }
      st.matches[n - 1] += matched;
      st.totals[n - 1] += nltk ? std::max<uint64_t>(1, total) : total;
    }
    const uint64_t c = hyp.size();
    st.hyp_len += c;
    // the closest reference length; NLTK breaks ties to the shorter, torchtext to the first
    uint64_t r_best = refs[s][0].size();
    for (const Tokens& r : refs[s]) {
      const uint64_t r_len = r.size();
      const uint64_t d = r_len > c ? r_len - c : c - r_len, d_best = r_best > c ? r_best - c : c - r_best;
      if (d < d_best || (nltk && d == d_best && r_len < r_best)) r_best = r_len;
    }
    st.ref_len += r_best;
  }
  const double c = double(st.hyp_len), r = double(st.ref_len);
  if (nltk) {
    st.brevity = st.hyp_len > st.ref_len ? 1.0 : st.hyp_len == 0 ? 0.0 : std::exp(1.0 - r / c);
    if (st.matches[0] == 0) return st;  // score 0
    std::vector<double> logs;
    for (size_t n = 0; n < 4; ++n) {
      const double p = st.matches[n] == 0 ? DBL_MIN : double(st.matches[n]) / double(st.totals[n]);
      logs.push_back(0.25 * std::log(p));
    }
    st.score = st.brevity * std::exp(fsum(logs));
  } else {
    if (*std::min_element(st.matches.begin(), st.matches.end()) == 0) return st;  // score 0
    st.brevity = std::exp(std::min(1.0 - r / c, 0.0));
    double sum = 0;
    for (size_t n = 0; n < 4; ++n) sum += 0.25 * std::log(double(st.matches[n]) / double(st.totals[n]));
    st.score = st.brevity * std::exp(sum);
  }
  return st;
}

}  // namespace ts::data
