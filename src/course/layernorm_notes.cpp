#include "course/layernorm_notes.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "course/errors.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"

namespace ts {

Tensor squeeze_last(Tensor t) {
  Shape s = shape_of(t);
  s.pop_back();
  t.reshape(s);
  return t;
}

Range range_of(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

std::vector<double> per_row(const Tensor& stat, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (float v : stat) out.push_back(f(static_cast<double>(v)));
  return out;
}

size_t rows_not_from_table(const Tensor& e, const Tensor& weight, const ITensor& ids) {
  const size_t C = weight.shape()[1], V = weight.shape()[0];
  size_t lost = 0;
  for (size_t t = 0; t < ids.size(); ++t) {
    const int64_t id = ids.data()[t];
    const bool in_table = id >= 0 && static_cast<size_t>(id) < V && (t + 1) * C <= e.size();
    lost += !in_table || !std::equal(e.data() + t * C, e.data() + (t + 1) * C, weight.data() + size_t(id) * C,
                                     [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; });
  }
  return lost;
}

Moments moments_of(const Tensor& table) {
  Moments m;
  const double n = double(table.size());
  if (table.size() < 2) return m;
  // two passes: the mean, then the central moments about it
  double sum = 0;
  for (const float v : table) sum += v;
  m.mean = sum / n;
  double m2 = 0, m4 = 0;
  for (const float v : table) {
    const double d = double(v) - m.mean, d2 = d * d;
    m2 += d2, m4 += d2 * d2;
  }
  m2 /= n, m4 /= n;
  m.std = std::sqrt(m2);
  m.kurtosis = m2 > 0 ? m4 / (m2 * m2) : 0;
  m.standard_normal = std::isfinite(m.kurtosis) && std::abs(m.mean) <= 5 * std::sqrt(1 / n) &&
                      std::abs(m2 - 1) <= 5 * std::sqrt(2 / n) && std::abs(m.kurtosis - 3) <= 5 * std::sqrt(24 / n);
  return m;
}

size_t count_nonfinite(const Tensor& x) {
  return static_cast<size_t>(std::count_if(x.begin(), x.end(), [](float v) { return !std::isfinite(v); }));
}

// What a LayerNorm makes of every row, checked. With a uniform weight w and bias b (fresh: 1
// and 0), y = w z + b, where z has mean 0 and the formula's own variance unit[t] (a hair under
// 1 because of eps), so
//   y.mean(-1) = b       y.var(-1, unbiased=False) = w^2 unit[t]
bool row_stats(Chapter& ch, const std::string& name, const Tensor& y, const Tensor& weight, const Tensor& bias,
               const std::vector<double>& unit, const std::string& formula) {
  const Tensor mean = squeeze_last(mean_lastdim_keepdim(y)), var = squeeze_last(var_lastdim(y, 0));
  const Range w = range_of(weight), b = range_of(bias), u = range_of(unit);
  const bool uniform = w.lo == w.hi && b.lo == b.hi;
  // NaN or inf in the output: no mean or variance of them can confirm anything (NaN passes no "<=")
  if (const size_t bad = count_nonfinite(y)) {
    const bool unit_finite = std::all_of(unit.begin(), unit.end(), [](double v) { return std::isfinite(v); });
    ch.show(name + ".mean(-1)", mean, {"MeanBackward1"},
            ch.verdict(false, trf("{name} holds {bad} NaN or inf of its {n} values: its rows have no mean or variance "
                                  "to check{input}",
                                  fmt::arg("name", name), fmt::arg("bad", bad), fmt::arg("n", y.size()),
                                  fmt::arg("input", unit_finite ? std::string()
                                                                : _("; the input rows' own variance is not finite "
                                                                    "either, so look at what fed this LayerNorm")))),
            Shown::Twin);
    ch.show(name + ".var(-1, unbiased=False)", var, {"VarBackward0"},
            _("not checked: the values are not finite (above)"), Shown::Twin);
    return false;
  }
  // the formula's own variance not finite (the input's overflowed): NaN passes no "<=" below either
  if (!std::all_of(unit.begin(), unit.end(), [](double v) { return std::isfinite(v); })) {
    ch.show(name + ".mean(-1)", mean, {"MeanBackward1"}, "", Shown::Twin);
    ch.show(name + ".var(-1, unbiased=False)", var, {"VarBackward0"},
            ch.verdict(false, trf("{formula} is not finite for these rows (their own variance overflows float32), "
                                  "so {name}'s variance cannot be checked against it",
                                  fmt::arg("formula", formula), fmt::arg("name", name))),
            Shown::Twin);
    return false;
  }
  double mean_gap = 0, var_gap = 0;  // largest |measured - expected| (the variance's relative to w^2)
  for (size_t t = 0; t < mean.size(); ++t) {
    mean_gap = std::max(mean_gap, std::fabs(mean.data()[t] - b.lo));
    var_gap = std::max(var_gap, std::fabs(var.data()[t] - w.lo * w.lo * unit[t]) / std::max(w.lo * w.lo, 1e-30));
  }
  // a float32 mean of C values of size ~1 is off by ~1e-7 at most: 1e-5 is rounding. A variance may
  // stray by less than half of what eps changes (|1 - unit|, 1e-5 for var_n / (var_n + 1e-5)), else
  // the check could not tell the formula from one without eps or with it inverted; 8 float32
  // roundings at least, 1e-4 at most
  double effect = std::numeric_limits<double>::infinity();
  for (double v : unit) effect = std::min(effect, std::fabs(1.0 - v));
  const double var_tol = std::min(1e-4, std::max(8.0 * std::numeric_limits<float>::epsilon(), 0.5 * effect));
  const bool mean_ok = mean_gap <= 1e-5, var_ok = var_gap <= var_tol;
  ch.show(name + ".mean(-1)", mean, {"MeanBackward1"},
          !uniform ? _("weight or bias is not a single value: each row's mean depends on the row")
          : ch.verdict(mean_ok, mean_ok ? trf("every row's mean is the bias, {b:.4g}, up to float rounding (largest "
                                              "gap {g:.2g}): the input's own mean is gone",
                                              fmt::arg("b", b.lo), fmt::arg("g", mean_gap))
                                        : trf("the rows' means stray from the bias {b:.4g} by up to {g:.2g}, more than "
                                              "float rounding (1e-5): the output is not centred on the bias",
                                              fmt::arg("b", b.lo), fmt::arg("g", mean_gap))),
          Shown::Twin);
  ch.show(name + ".var(-1, unbiased=False)", var, {"VarBackward0"},
          !uniform ? _("weight or bias is not a single value: each row's variance depends on the row")
          : ch.verdict(var_ok, var_ok ? trf("each row's variance is {w2:.4g} x {formula}, {lo:.6f} to {hi:.6f} for "
                                            "these rows (largest gap {g:.2g})",
                                            fmt::arg("w2", w.lo * w.lo), fmt::arg("formula", formula),
                                            fmt::arg("lo", u.lo), fmt::arg("hi", u.hi), fmt::arg("g", var_gap))
                                      : trf("the rows' variances are not {w2:.4g} x {formula} ({lo:.6f} to {hi:.6f}): "
                                            "off by up to {g:.2g} of it ({tol:.2g} allowed: half of what eps changes, "
                                            "{e:.2g}, or float rounding), so the module no longer divides by what this "
                                            "formula says",
                                            fmt::arg("w2", w.lo * w.lo), fmt::arg("formula", formula),
                                            fmt::arg("lo", u.lo), fmt::arg("hi", u.hi), fmt::arg("g", var_gap),
                                            fmt::arg("tol", var_tol), fmt::arg("e", effect))),
          Shown::Twin);
  return !uniform || (mean_ok && var_ok);
}

double divisor_of(const Tensor& x, const Tensor& y) {
  const size_t n = x.size();
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  size_t k = 0;
  for (size_t i = 1; i < n; ++i)
    if (std::fabs(x.data()[i] - mean) > std::fabs(x.data()[k] - mean)) k = i;
  return y.data()[k] == 0.0f ? 0.0 : (x.data()[k] - mean) / y.data()[k];
}

std::string divisor_note(Chapter& ch, double measured, double formula, const std::string& how) {
  if (measured == 0.0)
    return _("a constant row: every value is its mean, so every output is 0 (up to float rounding) whatever the "
             "divisor");
  const bool ok = std::fabs(measured - formula) <= 1e-4 * formula;
  return ch.verdict(ok, ok ? trf("divided by {m:.6g}; the formula says {how} = {f:.6g}", fmt::arg("m", measured),
                                 fmt::arg("how", how), fmt::arg("f", formula))
                           : trf("divided by {m:.6g}, not by {how} = {f:.6g} as the formula says: the module "
                                 "computes another formula",
                                 fmt::arg("m", measured), fmt::arg("how", how), fmt::arg("f", formula)));
}

bool ShortRow::overflows() const {
  constexpr double kLargest = std::numeric_limits<float>::max();
  return big * big > kLargest || static_cast<double>(n) * big > kLargest;
}

ShortRow short_row(const Tensor& x) {
  ShortRow r;
  r.n = x.size();
  r.mean_f = mean_lastdim_keepdim(x).data()[0];
  r.var_f = var_lastdim(x, 0).data()[0];
  const double n = static_cast<double>(r.n);
  r.mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  r.big = std::fabs(r.mean);
  for (float v : x) {
    r.sum_sq += (v - r.mean) * (v - r.mean);
    r.big = std::max({r.big, std::fabs(double(v)), std::fabs(v - r.mean)});
  }
  r.var_n = r.sum_sq / n, r.var_u = r.sum_sq / (n - 1);
  r.constant = std::all_of(x.begin(), x.end(), [&](float v) { return v == x.data()[0]; });
  return r;
}

std::string overflow_note(Chapter& ch, const Tensor& y, const ShortRow& r, const std::string& what, double value) {
  constexpr double kLargest = std::numeric_limits<float>::max();
  const bool finite = std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); });
  const bool zeros = std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f; });
  if (!finite) {  // inf - inf, 0 x inf, inf / inf: NaN, once a square or a sum has overflowed
    const std::string stats =
        trf("the largest of |x|, |mean| and |x - mean| is {b:.6g}: squared {sq:.6g}, {n} of them summed {sum:.6g}; "
            "float32 ends at {max:.6g} (its mean here {mf:.6g}, var_n {vf:.6g})",
            fmt::arg("b", r.big), fmt::arg("sq", r.big * r.big), fmt::arg("n", r.n),
            fmt::arg("sum", static_cast<double>(r.n) * r.big), fmt::arg("max", kLargest), fmt::arg("mf", r.mean_f),
            fmt::arg("vf", r.var_f));
    return ch.verdict(r.overflows(), r.overflows() ? trf("not a number: float32 overflows inside this row's statistics "
                                                         "({stats}); inf - inf or 0 x inf then gives NaN",
                                                         fmt::arg("stats", stats))
                                                   : trf("not a number, yet nothing in this row's statistics can "
                                                         "overflow float32 ({stats}): the module computes something "
                                                         "else",
                                                         fmt::arg("stats", stats)));
  }
  if (!zeros || r.constant) return "";
  const bool inf = value > kLargest;
  return ch.verdict(inf, inf ? trf("every output is 0 although the row is not constant: {what} = {v:.6g} is above "
                                   "float32's largest value, {max:.6g}, so in float32 the divisor is inf and every "
                                   "(x - mean) / inf is 0",
                                   fmt::arg("what", what), fmt::arg("v", value), fmt::arg("max", kLargest))
                             : trf("every output is 0 although the row is not constant and {what} = {v:.6g} fits "
                                   "in float32: the module computes another formula",
                                   fmt::arg("what", what), fmt::arg("v", value)));
}

std::string eps_str(double eps) {
  std::string s = fmt::format("{:g}", eps);  // 1e-05
  const size_t e = s.find("e-0");
  if (e != std::string::npos) s.erase(e + 2, 1);  // 1e-5, as the articles write it
  return s;
}

void divisor_table(Chapter& ch, const std::vector<std::string>& tokens, const Tensor& var_n, const Tensor& var_u,
                   size_t C, double eps_000, double eps_002, double eps_004, bool follows_002) {
  std::vector<std::vector<std::string>> rows = {
      {_("token"), "var_n", "var_u", "sqrt(var_n+" + eps_str(eps_000) + ")", "sqrt(std_u^2+" + eps_str(eps_002) + ")",
       "std_n+" + eps_str(eps_004)}};
  size_t largest_002 = 0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const double vn = var_n.data()[t], vu = var_u.data()[t];
    const double d000 = std::sqrt(vn + eps_000), d002 = std::sqrt(vu + eps_002), d004 = std::sqrt(vn) + eps_004;
    largest_002 += d002 > d000 && d002 > d004;
    if (t < 8)
      rows.push_back({tokens[t], fmt::format("{:.6f}", vn), fmt::format("{:.6f}", vu), fmt::format("{:.8f}", d000),
                      fmt::format("{:.8f}", d002), fmt::format("{:.8f}", d004)});
  }
  ch.say(_("  What each formula divides by (000 | 002 | 004). var_n divides by C, var_u by C-1:"));
  ch.figure(text_table(rows, 1));
  // against nn.LayerNorm: var_u = var_n C/(C-1) > var_n + (eps_000 - eps_002) when var_n > (eps_000 - eps_002)(C-1)
  const double d_eps = eps_000 - eps_002;
  const std::string first =
      follows_002 ? trf("  The 002 column is the largest in {n} of the {T} rows: there article 002's outputs are the "
                        "smallest.",
                        fmt::arg("n", largest_002), fmt::arg("T", tokens.size()))
                  : trf("  By its formula the 002 column is the largest in {n} of the {T} rows, but article 002's "
                        "module no longer divides by it (Step 3).",
                        fmt::arg("n", largest_002), fmt::arg("T", tokens.size()));
  ch.say(d_eps > 0 ? first + trf(" var_u = var_n C/(C-1) outgrows nn.LayerNorm's larger eps when var_n > {d} (C-1) = "
                                 "{v:.3g}.",
                                 fmt::arg("d", eps_str(d_eps)), fmt::arg("v", d_eps * static_cast<double>(C - 1)))
                   : first + trf(" var_u = var_n C/(C-1) and article 002's eps ({e2}) is at least nn.LayerNorm's "
                                 "({e0}): it beats nn.LayerNorm's divisor in every row.",
                                 fmt::arg("e2", eps_str(eps_002)), fmt::arg("e0", eps_str(eps_000))));
}

std::vector<float> parse_row(const std::string& text) {
  std::vector<float> row;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const bool chars_ok = !item.empty() && item.find_first_not_of("0123456789+-.eE") == std::string::npos;
    char* end = nullptr;
    errno = 0;
    const double v = chars_ok ? std::strtod(item.c_str(), &end) : 0.0;
    const bool underflow = errno == ERANGE && std::fabs(v) < 1.0;  // "1e-400": 0 in a double
    if (!chars_ok || end != item.c_str() + item.size() || !std::isfinite(static_cast<float>(v)))
      throw UsageError(trf("--row must be comma-separated finite numbers such as \"1,2,3,4\", got {text}",
                           fmt::arg("text", quoted_input(text))));
    // Step 5 divides the row by 1000 (x_small): a value whose thousandth is subnormal in float32 keeps
    // a few bits only, and the notes' divisors would measure that rounding, not the formulas
    const double smallest = 1000.0 * std::numeric_limits<float>::min();
    if ((v != 0.0 || underflow) && std::fabs(v) < smallest)
      throw UsageError(trf("--row: {v} is too small: below {min}, x / 1000 (Step 5's x_small) is subnormal in float32, "
                           "with too few bits for the formulas to show; write 0 or a number of at least {min}",
                           fmt::arg("v", quoted_input(item)), fmt::arg("min", smallest)));
    row.push_back(static_cast<float>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (row.size() < 2)
    throw UsageError(_("--row needs at least 2 numbers (the unbiased std of one number is undefined), got 1"));
  if (row.size() > 64) throw UsageError(trf("--row takes at most 64 numbers, got {n}", fmt::arg("n", row.size())));
  return row;
}

}  // namespace ts
