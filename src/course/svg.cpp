// svg.cpp: see svg.hpp.
#include "course/svg.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "course/layout.hpp"

namespace ts {
namespace {

const char* kFont = "DejaVu Sans, Noto Sans CJK SC, WenQuanYi Micro Hei, sans-serif";

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// viridis, by five stops: dark blue (low) to yellow (high); readable in print and for the
// colour-blind
std::string colour(double t) {
  static const int kStops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  int rgb[3];
  for (int k = 0; k < 3; ++k) rgb[k] = static_cast<int>(std::lround(kStops[i][k] + f * (kStops[i + 1][k] - kStops[i][k])));
  return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

std::string num(double v) { return fmt::format("{:.4g}", v); }

// every k-th index (k odd, as the terminal heatmap picks them) so that at most `most` remain
std::vector<size_t> pick(size_t n, size_t most) {
  size_t step = n <= most ? 1 : (n + most - 1) / most;
  if (step > 1 && step % 2 == 0) ++step;
  std::vector<size_t> idx;
  for (size_t i = 0; i < n; i += step) idx.push_back(i);
  return idx;
}

// a text's width in pixels at `size` px, roughly (CJK characters are square)
double text_px(const std::string& s, double size) { return display_width(s) * size * 0.6; }

// The title in lines of at most 72 columns (wrapped as the terminal's prose is), from y = 20
// down, 18 px apart; returns the SVG text and sets `height` to the pixels it takes.
std::string title_svg(const std::string& title, double& height, double& width) {
  const std::string wrapped = hang(title, 72, "", "");
  std::string out;
  double y = 20;
  width = 0;
  for (size_t b = 0, e; b < wrapped.size(); b = e + 1, y += 18) {
    e = wrapped.find('\n', b);
    const std::string line = wrapped.substr(b, e - b);
    width = std::max(width, 20 + text_px(line, 14));
    out += fmt::format("<text x=\"10\" y=\"{:.0f}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", y, esc(line));
  }
  height = y - 18;
  return out;
}

std::string heatmap_svg(const FigureData& f) {
  const std::vector<size_t> rows = pick(f.rows, 64), cols = pick(f.cols, 64);
  auto value = [&](size_t i, size_t j) { return f.values[i * f.cols + j]; };
  float lo = INFINITY, hi = -INFINITY;
  bool neg_inf = false, pos_inf = false, nan = false;
  for (float v : f.values) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    neg_inf |= std::isinf(v) && v < 0;
    pos_inf |= std::isinf(v) && v > 0;
    nan |= std::isnan(v);
  }
  if (!std::isnan(f.vmin) && !std::isnan(f.vmax)) lo = f.vmin, hi = f.vmax;
  auto row_label = [&](size_t i) { return i < f.row_labels.size() ? f.row_labels[i] : std::to_string(i); };
  auto col_label = [&](size_t j) { return j < f.col_labels.size() ? f.col_labels[j] : std::to_string(j); };
  // 1) sizes: square cells, the grid about 560 px wide at most
  const double cell = std::clamp(560.0 / static_cast<double>(std::max(cols.size(), rows.size() / 2 + 1)), 6.0, 48.0);
  const double font = 12;
  double row_w = 0, col_h = 0;
  for (size_t i : rows) row_w = std::max(row_w, text_px(row_label(i), font));
  for (size_t j : cols) col_h = std::max(col_h, text_px(col_label(j), font));
  const bool slanted = col_h > cell - 4;  // column labels that do not fit across a cell
  const size_t label_every = std::max<size_t>(1, static_cast<size_t>(std::ceil(16.0 / cell)));
  double title_h = 0, title_w = 0;
  const std::string title = title_svg(f.title, title_h, title_w);
  const double left = 10 + row_w + 8, top = title_h + 14 + (slanted ? col_h * 0.75 + 10 : font + 8);
  const double grid_w = cell * cols.size(), grid_h = cell * rows.size();
  const double bar_x = left + grid_w + 24, bar_w = 14;
  const double width = std::max(bar_x + bar_w + 8 + 7 * font * 0.6 + 10, title_w),
               height = top + grid_h + 40;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"{}\" font-size=\"{:.0f}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height, kFont, font);
  out += title;
  // 2) the cells
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < cols.size(); ++c) {
      const float v = value(rows[r], cols[c]);
      const double x = left + c * cell, y = top + r * cell;
      if (std::isfinite(v)) {
        const double t = hi > lo ? (static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo) : 0.5;
        out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x, y,
                           cell, cell, colour(t));
        if (cell >= 40)  // room for the value itself, dark on light cells, light on dark ones
          out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{}\">{}</text>\n",
                             x + cell / 2, y + cell / 2 + 4, t > 0.6 ? "#222" : "#eee", fmt::format("{:.3g}", v));
      } else {
        out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#c8c8c8\"/>\n", x,
                           y, cell, cell);
        if (cell >= 10)
          out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n",
                             x + cell / 2, y + cell / 2 + 4, std::isnan(v) ? "?" : (v < 0 ? "x" : "!"));
      }
    }
  out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n",
                     left, top, grid_w, grid_h);
  // 3) the labels: rows on the left, columns on top (slanted when they are long)
  for (size_t r = 0; r < rows.size(); ++r)
    if (r % label_every == 0)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                         top + r * cell + cell / 2 + 4, esc(row_label(rows[r])));
  for (size_t c = 0; c < cols.size(); ++c) {
    if (c % label_every != 0) continue;
    const double x = left + c * cell + cell / 2;
    if (slanted)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" transform=\"rotate(-50 {:.1f} {:.1f})\">{}</text>\n", x,
                         top - 6, x, top - 6, esc(col_label(cols[c])));
    else
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x, top - 6,
                         esc(col_label(cols[c])));
  }
  // 4) the colour bar and its values
  if (lo <= hi) {
    const int steps = 32;
    for (int k = 0; k < steps; ++k)
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.2f}\" width=\"{:.1f}\" height=\"{:.2f}\" fill=\"{}\"/>\n", bar_x,
                         top + grid_h * (steps - 1 - k) / steps, bar_w, grid_h / steps + 0.3,
                         colour((k + 0.5) / steps));
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n",
                       bar_x, top, bar_w, grid_h);
    const int ticks = lo < hi ? 5 : 1;
    for (int k = 0; k < ticks; ++k) {
      const double t = ticks == 1 ? 0.5 : static_cast<double>(k) / (ticks - 1);
      const double y = top + grid_h * (1 - t);
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#444\"/>\n",
                         bar_x + bar_w, y, bar_x + bar_w + 4, y);
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", bar_x + bar_w + 6, y + 4,
                         esc(num(lo + t * (static_cast<double>(hi) - lo))));
    }
  }
  // 5) what the grey cells mean, and what was left out
  std::string note;
  if (neg_inf) note += "x = -inf   ";
  if (pos_inf) note += "! = +inf   ";
  if (nan) note += "? = nan   ";
  if (rows.size() < f.rows || cols.size() < f.cols)
    note += fmt::format("{} of {} rows, {} of {} columns", rows.size(), f.rows, cols.size(), f.cols);
  if (!note.empty())
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\">{}</text>\n", left, top + grid_h + 22, esc(note));
  return out + "</svg>\n";
}

std::string curve_svg(const FigureData& f) {
  double title_h = 0, title_w = 0;
  const std::string title = title_svg(f.title, title_h, title_w);
  const double width = std::max(640.0, title_w), height = 320 + title_h, left = 70, right = 20, top = title_h + 20,
               bottom = 56;
  const double pw = width - left - right, ph = height - top - bottom;
  const size_t n = f.values.size();
  auto y_of = [&](double v) { return f.log_y ? std::log10(std::max(v, 1e-12)) : v; };
  double lo = INFINITY, hi = -INFINITY;
  for (float v : f.values)
    if (std::isfinite(v)) lo = std::min(lo, y_of(v)), hi = std::max(hi, y_of(v));
  if (!(lo < hi)) lo -= 0.5, hi += 0.5;
  const double pad = (hi - lo) * 0.05;
  lo -= pad, hi += pad;
  auto px = [&](double step) { return left + (n > 1 ? (step - 1) / (n - 1) : 0.5) * pw; };
  auto py = [&](double y) { return top + (1 - (y - lo) / (hi - lo)) * ph; };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"{}\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height, kFont);
  out += title;
  // axes, with 5 values on y (in the data's units) and up to 6 steps on x
  out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n",
                     left, top, pw, ph);
  for (int k = 0; k < 5; ++k) {
    const double y = lo + (hi - lo) * k / 4;
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, py(y),
                       left + pw, py(y));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6, py(y) + 4,
                       num(f.log_y ? std::pow(10.0, y) : y));
  }
  const double raw = std::max(1.0, (n - 1) / 5.0), mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
  for (double s = 1; s <= static_cast<double>(n) + 0.5; s = (s == 1 && step > 1) ? step : s + step) {
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#444\"/>\n", px(s),
                       top + ph, px(s), top + ph + 4);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.0f}</text>\n", px(s), top + ph + 18, s);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, height - 12,
                     esc(f.x_label));
  out += fmt::format("<text x=\"14\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1f})\">{}</text>\n",
                     top + ph / 2, top + ph / 2, esc(f.y_label));
  // the line itself
  out += "<polyline fill=\"none\" stroke=\"#3b528b\" stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(f.values[i])) out += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", px(i + 1.0), py(y_of(f.values[i])));
  return out + "\"/>\n</svg>\n";
}

}  // namespace

std::string svg(const FigureData& f) { return f.kind == FigureData::Kind::Curve ? curve_svg(f) : heatmap_svg(f); }

std::string figure_file_stem(const std::string& title) {
  std::string name;
  for (char c : title) {
    if (std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80) {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
    if (name.size() >= 40) break;
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  return name.empty() ? "figure" : name;
}

}  // namespace ts
