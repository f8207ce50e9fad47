// heatmap.cpp: map each value to a shade between the matrix's min and max (finite values);
// non-finite cells get a mark instead of a shade: x = -inf (masked scores), ! = +inf, ? = nan.
#include "course/heatmap.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "base/figure_sink.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"

namespace ts {
namespace {

std::vector<size_t> pick(size_t n, int max_n) {
  std::vector<size_t> idx;
  size_t step = n <= static_cast<size_t>(max_n) ? 1 : (n + max_n - 1) / max_n;
  // An odd stride visits even and odd indices alike (interleaved data such as the
  // sin/cos columns of a positional encoding would otherwise show only one kind).
  if (step > 1 && step % 2 == 0) ++step;
  for (size_t i = 0; i < n; i += step) idx.push_back(i);
  return idx;
}

// A 256-colour ramp from dark blue through teal and yellow (readable on dark and light themes).
const int kRamp[] = {17, 18, 19, 20, 25, 31, 37, 43, 79, 115, 151, 187, 223, 222, 221, 220, 214, 208};
const char* kUnicode[] = {" ", "░", "▒", "▓", "█"};
const char kAscii[] = " .:-=+*#%@";

std::string cell(float v, float lo, float hi, const HeatmapOptions& opt) {
  const int w = opt.cell_width;
  if (!std::isfinite(v)) {
    std::string mark = std::isnan(v) ? "?" : (v < 0 ? "x" : "!");
    if (opt.mode == HeatmapMode::Color) return "\033[48;5;236m" + std::string(w - 1, ' ') + mark + "\033[0m";
    return std::string(w - 1, ' ') + mark;
  }
  double t = hi > lo ? (static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo) : 0.5;
  t = std::clamp(t, 0.0, 1.0);
  switch (opt.mode) {
    case HeatmapMode::Color: {
      int n = sizeof(kRamp) / sizeof(kRamp[0]);
      int k = std::min(n - 1, static_cast<int>(t * n));
      return fmt::format("\033[48;5;{}m{}\033[0m", kRamp[k], std::string(w, ' '));
    }
    case HeatmapMode::Unicode: {
      int k = std::min(4, static_cast<int>(t * 5));
      std::string s;
      for (int i = 0; i < w; ++i) s += kUnicode[k];
      return s;
    }
    case HeatmapMode::Ascii:
    default: {
      int k = std::min(9, static_cast<int>(t * 10));
      return std::string(w, kAscii[k]);
    }
  }
}

}  // namespace

HeatmapMode heatmap_mode(bool color) {
  if (color) return HeatmapMode::Color;
  return isatty(STDOUT_FILENO) ? HeatmapMode::Unicode : HeatmapMode::Ascii;
}

std::string heatmap(const Tensor& m, const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels, const HeatmapOptions& opt) {
  if (m.dimension() != 2) throw std::invalid_argument("heatmap: needs a 2-D matrix");
  const size_t R = m.shape()[0], C = m.shape()[1];
  {  // the numbers behind the picture, for --svg (base/figure_sink.hpp)
    FigureData f;
    f.title = opt.title;
    f.rows = R;
    f.cols = C;
    f.values.assign(m.begin(), m.end());
    f.row_labels = row_labels;
    f.col_labels = col_labels;
    f.vmin = opt.vmin;
    f.vmax = opt.vmax;
    f.mask = opt.mask;
    emit_figure(f);
  }
  float lo = INFINITY, hi = -INFINITY;
  for (float v : m) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  const bool fixed = !std::isnan(opt.vmin) && !std::isnan(opt.vmax);
  if (fixed) lo = opt.vmin, hi = opt.vmax;
  std::vector<size_t> rows = pick(R, opt.max_rows);
  auto row_label = [&](size_t i) { return i < row_labels.size() ? row_labels[i] : std::to_string(i); };
  auto col_label = [&](size_t j) { return j < col_labels.size() ? col_labels[j] : std::to_string(j); };
  size_t lw = 1;
  for (size_t i : rows) lw = std::max(lw, display_width(fit(row_label(i), 12)));
  // on a terminal (or TS_COLUMNS), at most the columns its width holds
  int max_cols = opt.max_cols;
  const size_t screen = terminal_width(std::string::npos);
  if (screen != std::string::npos && screen > lw + 1)
    max_cols = std::clamp(static_cast<int>((screen - lw - 1) / static_cast<size_t>(opt.cell_width)), 1, max_cols);
  std::vector<size_t> cols = pick(C, max_cols);

  std::string out;
  // the title, wrapped to the screen (never wider than it, so never cut into a block of its own)
  if (!opt.title.empty())
    out += screen == std::string::npos ? opt.title + opt.terminal_legend + "\n"
                                       : hang(opt.title + opt.terminal_legend, screen, "", "  ");
  // Column labels: written vertically when they do not fit the cell width.
  const size_t w = static_cast<size_t>(opt.cell_width);
  size_t max_cl = 0;
  for (size_t j : cols) max_cl = std::max(max_cl, display_width(fit(col_label(j), 8)));
  if (max_cl > w && col_labels.empty()) {
    // Index labels that do not fit a cell: a ruler, each index written where its column starts
    // when there is room (at least one blank after the previous one).
    // (and, on a screen, none past its edge)
    std::string ruler;
    for (size_t k = 0; k < cols.size(); ++k) {
      const std::string l = std::to_string(cols[k]);
      const size_t at = k * w;
      if (at < ruler.size() + (ruler.empty() ? 0 : 1)) continue;
      if (screen != std::string::npos && lw + 1 + at + l.size() > screen) break;
      ruler += std::string(at - ruler.size(), ' ') + l;
    }
    out += std::string(lw + 1, ' ') + ruler + "\n";
  } else if (max_cl <= w) {
    out += std::string(lw + 1, ' ');
    for (size_t j : cols) {
      std::string l = fit(col_label(j), w);
      out += std::string(w - display_width(l), ' ') + l;
    }
    out += "\n";
  } else {
    for (size_t line = 0; line < max_cl; ++line) {
      out += std::string(lw + 1, ' ');
      for (size_t j : cols) {
        std::string l = fit(col_label(j), 8);
        // the line-th code point of l, right-aligned in the cell
        std::string ch = " ";
        size_t n = 0;
        for (size_t b = 0; b < l.size(); ++b) {
          unsigned char c = static_cast<unsigned char>(l[b]);
          if ((c & 0xC0) != 0x80) {
            if (n == line) {
              size_t e = b + 1;
              while (e < l.size() && (static_cast<unsigned char>(l[e]) & 0xC0) == 0x80) ++e;
              ch = l.substr(b, e - b);
              break;
            }
            ++n;
          }
        }
        out += std::string(w - 1, ' ') + ch;
      }
      out += "\n";
    }
  }
  for (size_t i : rows) {
    out += pad_right(fit(row_label(i), 12), lw) + " ";
    for (size_t j : cols) out += cell(m(i, j), lo, hi, opt);
    out += "\n";
  }
  // Legend: the whole shade ramp between the smallest and the largest finite value, then
  // the marks of the non-finite cells that occur.
  std::vector<std::string> legend;  // its parts, each kept whole on a line of the screen
  if (!(lo <= hi)) {
    legend.push_back(_("no finite values"));
  } else if (lo == hi) {
    legend.push_back(trf("every finite value = {v:.4g}", fmt::arg("v", lo)));
  } else {
    std::string ramp;
    switch (opt.mode) {
      case HeatmapMode::Color:
        for (int k : kRamp) ramp += fmt::format("\033[48;5;{}m \033[0m", k);
        break;
      case HeatmapMode::Unicode:
        for (const char* c : kUnicode) ramp += c;
        ramp = "[" + ramp + "]";
        break;
      case HeatmapMode::Ascii:
      default:
        ramp = std::string("[") + kAscii + "]";
        break;
    }
    legend.push_back(fixed ? trf("scale (fixed): low {lo:.4g} {ramp} high {hi:.4g}", fmt::arg("lo", lo),
                                 fmt::arg("ramp", ramp), fmt::arg("hi", hi))
                           : trf("scale: low {lo:.4g} {ramp} high {hi:.4g}", fmt::arg("lo", lo), fmt::arg("ramp", ramp),
                                 fmt::arg("hi", hi)));
  }
  auto any = [&](auto pred) { return std::any_of(m.begin(), m.end(), pred); };
  if (any([](float v) { return std::isinf(v) && v < 0; })) legend.push_back("x = -inf");
  if (any([](float v) { return std::isinf(v) && v > 0; })) legend.push_back("! = +inf");
  if (any([](float v) { return std::isnan(v); })) legend.push_back("? = nan");
  if (rows.size() < R || cols.size() < C)
    legend.push_back(trf("(showing {r} of {R} rows, {c} of {C} columns)", fmt::arg("r", rows.size()),
                         fmt::arg("R", R), fmt::arg("c", cols.size()), fmt::arg("C", C)));
  // on a terminal (or TS_COLUMNS) a part that would run past its width starts a new line, so
  // the legend is never cut into a block of its own
  // (a part wider than the screen by itself is wrapped under its start)
  const std::string lead(screen != std::string::npos && lw + 1 > screen / 2 ? 2 : lw + 1, ' ');
  std::string line = lead + legend[0];
  auto flush = [&] {
    out += screen == std::string::npos || display_width(line) <= screen ? line + "\n" : hang(line.substr(lead.size()), screen, lead, lead + "  ");
  };
  for (size_t k = 1; k < legend.size(); ++k) {
    if (screen != std::string::npos && display_width(line + "   " + legend[k]) > screen) {
      flush();
      line = lead + legend[k];
    } else {
      line += "   " + legend[k];
    }
  }
  flush();
  return out;
}

std::string heatmap_swatch(float v, const HeatmapOptions& opt) {
  HeatmapOptions one = opt;
  one.cell_width = 1;
  return "[" + cell(v, opt.vmin, opt.vmax, one) + "]";
}

std::string head_heatmaps(const Tensor& w, const std::vector<std::string>& labels, HeatmapOptions opt,
                          size_t width) {
  // (B,H,T,S) -> H pictures of (T,S), batch 0
  std::vector<std::string> cut;
  size_t longest = 1;
  for (const std::string& l : labels) {
    cut.push_back(fit(l, 4));
    longest = std::max(longest, display_width(cut.back()));
  }
  opt.cell_width = static_cast<int>(std::max<size_t>(longest + 1, 3));
  std::vector<std::string> maps;
  for (size_t h = 0; h < w.shape()[1]; ++h) {
    opt.title = trf("head {h}", fmt::arg("h", h));
    maps.push_back(heatmap(xt::view(w, 0, h, xt::all(), xt::all()), cut, cut, opt));
  }
  return side_by_side(maps, std::min(width, terminal_width(std::string::npos)));
}

}  // namespace ts
