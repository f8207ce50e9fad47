// weight_stats.cpp: see weight_stats.hpp.
#include "course/weight_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace ts {

RowStats row_stats(const Tensor& x) {
  const size_t S = x.shape()[2], T = x.shape()[1];
  RowStats st;
  st.min = st.diag_min = st.min_gap = st.min_ratio = std::numeric_limits<double>::infinity();
  st.max = st.diag_max = st.max_gap = st.max_ratio = -std::numeric_limits<double>::infinity();
  for (size_t t = 0; t < T; ++t) {
    const float* row = x.data() + t * S;
    const double d = row[std::min(t, S - 1)];
    st.diag_min = std::min(st.diag_min, d);
    st.diag_max = std::max(st.diag_max, d);
    double best = -std::numeric_limits<double>::infinity(), second = best;
    for (size_t s = 0; s < S; ++s) {
      const double v = row[s];
      st.min = std::min(st.min, v);
      st.max = std::max(st.max, v);
      if (v > best) {
        second = best;
        best = v;
      } else if (v > second) {
        second = v;
      }
    }
    st.diagonal_max_rows += d >= best;
    if (S > 1) {
      st.min_gap = std::min(st.min_gap, best - second);
      st.max_gap = std::max(st.max_gap, best - second);
      st.min_ratio = std::min(st.min_ratio, best / second);
      st.max_ratio = std::max(st.max_ratio, best / second);
    }
  }
  return st;
}

ExpRowSums exp_row_sums(const Tensor& x) {
  const size_t V = x.shape().back(), rows = V == 0 ? 0 : x.size() / V;
  ExpRowSums r{0.0f, -INFINITY};
  for (size_t t = 0; t < rows; ++t) {
    double sum = 0.0;
    for (size_t v = 0; v < V; ++v) {
      sum += std::exp(static_cast<double>(x.data()[t * V + v]));
      r.top = std::max(r.top, x.data()[t * V + v]);
    }
    r.sum_err = std::max(r.sum_err, static_cast<float>(std::fabs(sum - 1.0)));
  }
  return r;
}

double off_diagonal_mass(const Tensor& w) {
  const size_t S = w.shape()[2], T = w.size() / S;
  double worst = 0;
  for (size_t t = 0; t < T; ++t) {
    double off = 0;
    for (size_t s = 0; s < S; ++s)
      if (s != t) off += w.data()[t * S + s];
    worst = std::max(worst, off);
  }
  return worst;
}

double diagonal_vs_squared_norms(const Tensor& x, const Tensor& e) {
  const size_t T = x.shape()[1], C = e.shape()[2];
  double worst = 0;
  for (size_t t = 0; t < T; ++t) {
    double sq = 0;
    for (size_t c = 0; c < C; ++c) sq += static_cast<double>(e.data()[t * C + c]) * e.data()[t * C + c];
    const double d = x.data()[t * T + t];
    worst = std::max(worst, std::fabs(d - sq) / std::max(sq, 1e-30));
  }
  return worst;
}

double mean_of(const Tensor& x) {
  double mean = 0;
  for (float v : x) mean += v;
  return mean / static_cast<double>(x.size());
}

double std_of(const Tensor& x) {
  const double mean = mean_of(x);
  double var = 0;
  for (float v : x) var += (v - mean) * (v - mean);
  return std::sqrt(var / static_cast<double>(x.size()));
}

Peak peakedness(const Tensor& w) {
  const size_t S = w.shape()[w.dimension() - 1], rows = w.size() / S;
  Peak p;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = w.data() + r * S;
    double h = 0;
    for (size_t s = 0; s < S; ++s)
      if (row[s] > 0) h -= static_cast<double>(row[s]) * std::log(static_cast<double>(row[s]));
    p.max_weight += *std::max_element(row, row + S);
    p.effective_keys += std::exp(h);
  }
  p.max_weight /= static_cast<double>(rows);
  p.effective_keys /= static_cast<double>(rows);
  return p;
}

double mean_diagonal(const Tensor& w) {
  const size_t T = w.shape()[w.dimension() - 1], maps = w.size() / (T * T);
  double sum = 0;
  for (size_t m = 0; m < maps; ++m)
    for (size_t t = 0; t < T; ++t) sum += w.data()[m * T * T + t * T + t];
  return sum / static_cast<double>(maps * T);
}

std::vector<float> max_per_head(const Tensor& w) {
  const size_t H = w.shape()[1], n = w.size() / H;
  std::vector<float> out(H);
  for (size_t h = 0; h < H; ++h) out[h] = *std::max_element(w.data() + h * n, w.data() + (h + 1) * n);
  return out;
}

ColumnSpread column_spread(const Tensor& x) {
  const size_t T = x.shape()[1], C = x.shape()[2];
  ColumnSpread r;
  r.lo = INFINITY, r.hi = -INFINITY;
  for (size_t c = 0; c < C; ++c) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t t = 0; t < T; ++t) lo = std::min<double>(lo, x(0, t, c)), hi = std::max<double>(hi, x(0, t, c));
    r.spread = std::max(r.spread, hi - lo);
    r.lo = std::min(r.lo, lo), r.hi = std::max(r.hi, hi);
  }
  return r;
}

size_t count_zeros(const Tensor& t) {
  return static_cast<size_t>(std::count(t.begin(), t.end(), 0.0f));
}

std::string short_sci(double x) {
  if (x == 0 || (std::fabs(x) >= 1e-3 && std::fabs(x) < 1e4)) return fmt::format("{:g}", x);
  std::string s = fmt::format("{:e}", x);  // 1.000000e-05
  const size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  while (mant.back() == '0') mant.pop_back();
  if (mant.back() == '.') mant.pop_back();
  const int exp = std::stoi(s.substr(e + 1));
  return mant + "e" + std::to_string(exp);
}

std::vector<std::string> numbered(const std::string& prefix, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

}  // namespace ts
