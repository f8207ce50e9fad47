// course/plot.cpp: see plot.hpp.
#include "course/plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/figure_sink.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"

namespace ts {

std::string loss_curve(const std::vector<double>& losses, int width, int height) {
  if (losses.empty()) return std::string(_("(no steps)")) + "\n";
  {  // every step's loss, for --svg (base/figure_sink.hpp)
    FigureData f;
    f.kind = FigureData::Kind::Curve;
    f.title = _("loss per step");
    f.rows = 1;
    f.cols = losses.size();
    f.values.assign(losses.begin(), losses.end());
    f.log_y = true;
    f.x_label = _("step");
    f.y_label = _("loss (log scale)");
    emit_figure(f);
  }
  const size_t n = losses.size(), W = std::min<size_t>(static_cast<size_t>(width), n);
  // 1) mean loss per column
  std::vector<double> col(W, 0.0);
  for (size_t c = 0; c < W; ++c) {
    const size_t a = c * n / W, b = (c + 1) * n / W;
    for (size_t i = a; i < b; ++i) col[c] += losses[i];
    col[c] /= static_cast<double>(b - a);
  }
  // 2) log10 scale between the smallest and largest column
  const double lo = std::log10(std::max(1e-6, *std::min_element(col.begin(), col.end())));
  const double hi = std::max(lo + 1e-9, std::log10(std::max(1e-6, *std::max_element(col.begin(), col.end()))));
  auto row_of = [&](double v) {
    const double f = (std::log10(std::max(1e-6, v)) - lo) / (hi - lo);
    return static_cast<int>(std::lround(f * (height - 1)));
  };
  std::string out;
  for (int r = height - 1; r >= 0; --r) {
    std::string label;
    if (r == height - 1) label = fmt::format("{:.4f}", std::pow(10.0, hi));
    if (r == (height - 1) / 2) label = fmt::format("{:.4f}", std::pow(10.0, lo + (hi - lo) * r / (height - 1)));
    if (r == 0) label = fmt::format("{:.4f}", std::pow(10.0, lo));
    out += fmt::format("{:>8} |", label);
    for (size_t c = 0; c < W; ++c) out += row_of(col[c]) == r ? '*' : ' ';
    out += "\n";
  }
  out += fmt::format("{:>8} +{}\n", "", std::string(W, '-'));
  // the first and the last step under the axis, measured in terminal columns (CJK labels are wide)
  const std::string first = trf("step {n}", fmt::arg("n", 1)), last = trf("step {n}", fmt::arg("n", n));
  const size_t fw = display_width(first), lw = display_width(last);
  out += std::string(10, ' ') + first + std::string(W > fw + lw ? W - fw - lw : 1, ' ') + last + "\n";
  return out;
}

std::string progress_bar(long done, long total, double loss, double steps_per_s, int width) {
  const std::string text = trf("{done:>5}/{total}  loss {loss:.4f}  {rate:.1f} steps/s", fmt::arg("done", done),
                               fmt::arg("total", total), fmt::arg("loss", loss), fmt::arg("rate", steps_per_s));
  // redrawn in place with "\r": it must fit one line of the terminal (a line that wraps would
  // leave a copy of itself at each redraw), so the bar shrinks, then goes, then the text is cut
  const size_t room = terminal_width(80) - 1, used = display_width(text);
  const int bar = std::min(width, room > used + 3 ? static_cast<int>(room - used - 3) : 0);
  if (bar < 5 && bar < width) return fit(text, room);
  const int fill = total > 0 ? static_cast<int>(bar * done / total) : bar;
  return "[" + std::string(static_cast<size_t>(fill), '#') + std::string(static_cast<size_t>(bar - fill), '.') + "] " +
         text;
}

}  // namespace ts
