// tfprint.cpp: numpy's FloatingFormat (floatmode 'maxprec') and _formatArray, for float32.
#include "exact/tfprint.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>

namespace ts {
namespace {

constexpr int kPrecision = 8;
size_t g_linewidth = kNumpyLineWidth;  // np.set_printoptions(linewidth=...)
constexpr size_t kThreshold = 1000;
constexpr size_t kEdge = 3;

// Shortest digits that identify the float32, positional ("0.5", "550.", "10."), at most 8 decimals.
std::string positional(float v) {
  char buf[128];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  std::string s(buf, r.ptr);
  size_t dot = s.find('.');
  if (dot != std::string::npos && s.size() - dot - 1 > static_cast<size_t>(kPrecision)) {
    // cut at 8 decimals, rounding the exact value, then drop trailing zeros
    r = std::to_chars(buf, buf + sizeof buf, static_cast<double>(v), std::chars_format::fixed, kPrecision);
    s.assign(buf, r.ptr);
    while (s.back() == '0') s.pop_back();
  }
  if (s.find('.') == std::string::npos) s += '.';
  return s;
}

// Shortest digits in scientific form split into mantissa digits and exponent ("4.216591", -26).
void scientific(float v, std::string& mant, int& exp) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  size_t e = s.find('e');
  mant = s.substr(0, e);
  exp = std::stoi(s.substr(e + 1));
  if (mant.find('.') == std::string::npos) mant += '.';
}

struct FloatFormat {
  bool exp_format = false;
  size_t pad_left = 0, pad_right = 0, precision = 0, exp_size = 0;

  explicit FloatFormat(const std::vector<float>& shown) {
    std::vector<float> finite;
    for (float v : shown)
      if (std::isfinite(v)) finite.push_back(v);
    double mx = 0, mn = INFINITY;
    bool any_nz = false;
    for (float v : finite)
      if (v != 0) {
        any_nz = true;
        mx = std::max(mx, std::fabs(static_cast<double>(v)));
        mn = std::min(mn, std::fabs(static_cast<double>(v)));
      }
#if TS_NUMPY_2
    // numpy 2 (NEP 50): the comparisons in float32, the array's dtype ([1e-4] stays positional)
    const float mxf = static_cast<float>(mx), mnf = static_cast<float>(mn);
    if (any_nz && (mxf >= 1e8f || mnf < 1e-4f || mxf / mnf > 1000.0f)) exp_format = true;
#else
    // numpy 1: the float32 min and max compared in float64
    if (any_nz && (mx >= 1e8 || mn < 1e-4 || mx / mn > 1000.0)) exp_format = true;
#endif
    if (finite.empty()) {
      pad_left = pad_right = 0;
    } else if (exp_format) {
      for (float v : finite) {
        std::string m;
        int e;
        scientific(v, m, e);
        size_t dot = m.find('.');
        pad_left = std::max(pad_left, dot);
        precision = std::max(precision, m.size() - dot - 1);
        exp_size = std::max<size_t>(exp_size, std::max<size_t>(2, std::to_string(std::abs(e)).size()));
      }
      pad_right = exp_size + 2 + precision;
    } else {
      for (float v : finite) {
        std::string s = positional(v);
        size_t dot = s.find('.');
        pad_left = std::max(pad_left, dot);
        pad_right = std::max(pad_right, s.size() - dot - 1);
      }
    }
    if (finite.size() != shown.size()) {  // room for "nan" / "inf" / "-inf"
      bool neginf = std::any_of(shown.begin(), shown.end(), [](float v) { return std::isinf(v) && v < 0; });
      size_t offset = pad_right + 1;
      size_t inflen = 3 + (neginf ? 1 : 0);
      if (3 > offset) pad_left = std::max(pad_left, 3 - offset);
      if (inflen > offset) pad_left = std::max(pad_left, inflen - offset);
    }
  }

  std::string operator()(float v) const {
    if (!std::isfinite(v)) {
      std::string r = std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
      size_t w = pad_left + pad_right + 1;
      return std::string(w > r.size() ? w - r.size() : 0, ' ') + r;
    }
    std::string s;
    if (exp_format) {
      std::string m;
      int e;
      scientific(v, m, e);
      size_t dot = m.find('.');
      if (m.size() - dot - 1 < precision) {
        // min_digits = precision: numpy's Dragon4 goes on past the shortest digits with the
        // exact value's own digits (rounded half-even at the last one), not zeros:
        // -0.63616949 (shortest "6.361695e-01") prints as -6.3616949e-01 next to 8-digit values
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof buf, static_cast<double>(v), std::chars_format::scientific,
                               static_cast<int>(precision));
        const std::string full(buf, r.ptr);
        const size_t ep = full.find('e');
        m = full.substr(0, ep);
        e = std::stoi(full.substr(ep + 1));
        dot = m.find('.');
      }
      std::string es = std::to_string(std::abs(e));
      es.insert(0, exp_size > es.size() ? exp_size - es.size() : 0, '0');
      s = std::string(pad_left > dot ? pad_left - dot : 0, ' ') + m + "e" + (e < 0 ? "-" : "+") + es;
    } else {
      std::string p = positional(v);
      size_t dot = p.find('.');
      size_t frac = p.size() - dot - 1;
      s = std::string(pad_left > dot ? pad_left - dot : 0, ' ') + p + std::string(pad_right - frac, ' ');
    }
    return s;
  }
};

// numpy's _extendLine (legacy=False): wrap when the word does not fit, unless wrapping cannot help.
void extend_line(std::string& s, std::string& line, const std::string& word, long width, const std::string& prefix) {
  bool wrap = static_cast<long>(line.size() + word.size()) > width && line.size() > prefix.size();
  if (wrap) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
    line = prefix;
  }
  line += word;
}

}  // namespace

std::string tf_shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

void set_np_linewidth(size_t linewidth) { g_linewidth = linewidth ? linewidth : kNumpyLineWidth; }
size_t np_linewidth() { return g_linewidth; }

std::string np_array_str(const Tensor& t, size_t linewidth) {
  const Shape shape = shape_of(t);
  const size_t nd = shape.size();
  const bool summarize = t.size() > kThreshold;
  std::vector<size_t> strides(nd, 1);
  for (size_t d = nd; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  auto indices = [&](size_t d) {  // the indices shown along dimension d
    std::vector<long> idx;
    size_t n = shape[d];
    if (summarize && n > 2 * kEdge) {
      for (size_t i = 0; i < kEdge; ++i) idx.push_back(static_cast<long>(i));
      idx.push_back(-1);  // "..."
      for (size_t i = n - kEdge; i < n; ++i) idx.push_back(static_cast<long>(i));
    } else {
      for (size_t i = 0; i < n; ++i) idx.push_back(static_cast<long>(i));
    }
    return idx;
  };
  if (nd == 0) return positional(t.data()[0]);
  // the formatter sees only the displayed elements
  std::vector<float> shown;
  std::function<void(size_t, size_t)> collect = [&](size_t d, size_t off) {
    if (d == nd) {
      shown.push_back(t.data()[off]);
      return;
    }
    for (long i : indices(d))
      if (i >= 0) collect(d + 1, off + static_cast<size_t>(i) * strides[d]);
  };
  collect(0, 0);
  FloatFormat fmt(shown);

  std::function<std::string(size_t, size_t, const std::string&, long)> rec =
      [&](size_t d, size_t off, const std::string& hang, long width) -> std::string {
    const std::string next_hang = hang + " ";
    const long next_width = width - 1;  // numpy lets it go below 0 on a narrow line
    std::string s;
    std::vector<long> idx = indices(d);
    if (d + 1 == nd) {
      const long elem_width = width - 1;
      std::string line = hang;
      for (size_t k = 0; k < idx.size(); ++k) {
        std::string word = idx[k] < 0 ? "..." : fmt(t.data()[off + static_cast<size_t>(idx[k]) * strides[d]]);
        extend_line(s, line, word, elem_width, hang);
        if (k + 1 < idx.size()) line += " ";
      }
      s += line;
    } else {
      const std::string sep = std::string(nd - d - 1, '\n');
      for (size_t k = 0; k < idx.size(); ++k) {
        s += hang;
        s += idx[k] < 0 ? "..." : rec(d + 1, off + static_cast<size_t>(idx[k]) * strides[d], next_hang, next_width);
        if (k + 1 < idx.size()) s += sep;
      }
    }
    return "[" + s.substr(hang.size()) + "]";
  };
  return rec(0, 0, " ", static_cast<long>(std::min<size_t>(linewidth ? linewidth : g_linewidth, 1u << 20)));
}

std::string tf_str(const Tensor& t, size_t linewidth) {
  std::string body = np_array_str(t, linewidth);
  if (body.find('\n') != std::string::npos) body = "\n" + body;
  return "tf.Tensor(" + body + ", shape=" + tf_shape_str(shape_of(t)) + ", dtype=float32)";
}

}  // namespace ts
