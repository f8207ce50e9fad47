// svg.cpp: see svg.hpp.
#include "course/svg.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <vector>

#include <fmt/format.h>

#include "course/i18n.hpp"
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

// The colours of a mask, the same in every chapter: kept cells white, hidden ones grey (the
// grey of a -inf score, which is what a hidden key's score becomes).
const char* kKeep = "#ffffff";
const char* kHidden = "#b4b4b4";

// every k-th index (k odd, as the terminal heatmap picks them) so that at most `most` remain
std::vector<size_t> pick(size_t n, size_t most) {
  size_t step = n <= most ? 1 : (n + most - 1) / most;
  if (step > 1 && step % 2 == 0) ++step;
  std::vector<size_t> idx;
  for (size_t i = 0; i < n; i += step) idx.push_back(i);
  return idx;
}

// A text's width in pixels at `size` px, never less than DejaVu Sans draws it (the first font
// asked for; the fallbacks are narrower): each glyph counted at the widest advance of its
// class, in ems (digits 0.636, 'm' 0.974, 'W' 0.989, a CJK character 1.0), bold 12% wider.
// Measured, not guessed: tests/figures_check.py lays the figures out in a browser and fails on
// any two texts that overlap.
double text_px(const std::string& s, double size, bool bold = false) {
  double em = 0;
  for (size_t b = 0; b < s.size(); ++b) {
    const unsigned char c = static_cast<unsigned char>(s[b]);
    if (c >= 0x80) {  // one code point: its lead byte counts, its continuation bytes do not
      if ((c & 0xC0) != 0x80) em += 1.0;
      continue;
    }
    if (std::strchr(" .,:;'|!ijlftr()[]{}/\\-", c)) em += 0.42;
    else if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '@' || c == '%') em += 1.0;
    else if (std::islower(c) || std::isdigit(c) || c == '$' || c == '?' || c == '_' || c == '*' || c == '"') em += 0.64;
    else if (std::isupper(c) || c == '&') em += 0.8;
    else em += 0.84;  // < > = + ~ # ^ and the rest
  }
  return em * size * (bold ? 1.12 : 1.0);
}

// the height of a line of text at `size` px (DejaVu's ascent + descent is 1.164 em)
double line_px(double size) { return size * 1.2; }

// Round values for an axis between lo and hi: steps of 1, 2 or 5 x 10^k, about `most` of them
// at most (the first and last inside [lo, hi]).
std::vector<double> nice_ticks(double lo, double hi, int most) {
  std::vector<double> out;
  if (!(lo < hi) || most < 2) return out;
  const double raw = (hi - lo) / (most - 1), mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; ++k) out.push_back(k * step == 0 ? 0.0 : k * step);
  return out;
}

// Round values for a log axis between 10^lo and 10^hi (lo, hi in decades): 1, 2 and 5 x 10^k,
// or only the powers of ten (every second or third when there are many decades) when those are
// too many; in less than a decade 1..9 x 10^k, or failing those round linear steps. Returns
// the values themselves (not their logs).
std::vector<double> log_ticks(double lo, double hi, int most) {
  auto within = [&](std::initializer_list<int> mantissas, int every) {
    std::vector<double> v;
    for (int k = static_cast<int>(std::floor(lo)); k <= static_cast<int>(std::ceil(hi)); ++k) {
      if (every > 1 && k % every != 0) continue;
      for (int m : mantissas) {
        const double x = m * std::pow(10.0, k), l = std::log10(x);
        if (l >= lo - 1e-9 && l <= hi + 1e-9) v.push_back(x);
      }
    }
    return v;
  };
  std::vector<double> v = within({1, 2, 5}, 1);
  if (static_cast<int>(v.size()) > most)
    for (int every = 1; every <= 6; ++every)
      if (static_cast<int>((v = within({1}, every)).size()) <= most) break;
  if (v.size() < 2) v = within({1, 2, 3, 4, 5, 6, 7, 8, 9}, 1);
  if (v.size() < 2) v = nice_ticks(std::pow(10.0, lo), std::pow(10.0, hi), most);
  return v;
}

std::string tick_text(double v) { return fmt::format("{:g}", v); }

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
    width = std::max(width, 20 + text_px(line, 14, true));
    out += fmt::format("<text x=\"10\" y=\"{:.0f}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", y, esc(line));
  }
  height = y - 18;
  return out;
}

// How the values are written in the cells: 3 significant digits at 11 or 10 px, else 2, else
// either at 9 px: the first with which every label fits inside its cell, 2 px clear of each
// side; none fits: no labels (the colour bar carries the values).
struct CellLabels {
  bool on = false;
  int digits = 3;
  double font = 11;
};

std::string cell_text(float v, int digits) { return fmt::format("{:.{}g}", v, digits); }

CellLabels cell_labels(const std::vector<float>& shown, double cell) {
  const std::pair<int, double> tries[] = {{3, 11}, {3, 10}, {2, 11}, {2, 10}, {3, 9}, {2, 9}};  // digits, px
  for (const auto& [digits, font] : tries) {
    if (line_px(font) > cell - 2) continue;
    bool fits = true;
    for (float v : shown)
      if (std::isfinite(v) && text_px(cell_text(v, digits), font) > cell - 4) {
        fits = false;
        break;
      }
    if (fits) return {true, digits, font};
  }
  return {};
}

std::string heatmap_svg(const FigureData& f) {
  const std::vector<size_t> rows = pick(f.rows, 64), cols = pick(f.cols, 64);
  auto value = [&](size_t i, size_t j) { return f.values[i * f.cols + j]; };
  float lo = INFINITY, hi = -INFINITY;
  bool neg_inf = false, pos_inf = false, nan = false, binary = true;
  for (float v : f.values) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    neg_inf |= std::isinf(v) && v < 0;
    pos_inf |= std::isinf(v) && v > 0;
    nan |= std::isnan(v);
    binary &= v == 0.0f || v == 1.0f;
  }
  if (!std::isnan(f.vmin) && !std::isnan(f.vmax)) lo = f.vmin, hi = f.vmax;
  // a mask in the mask colouring only when it holds nothing but 0 and 1 (else: its values)
  const bool mask = f.mask != MaskMeaning::None && binary;
  const float keep_value = f.mask == MaskMeaning::OneHides ? 0.0f : 1.0f;
  auto row_label = [&](size_t i) { return i < f.row_labels.size() ? f.row_labels[i] : std::to_string(i); };
  auto col_label = [&](size_t j) { return j < f.col_labels.size() ? f.col_labels[j] : std::to_string(j); };
  // 1) sizes: square cells, the grid about 560 px wide at most
  const double cell = std::clamp(560.0 / static_cast<double>(std::max(cols.size(), rows.size() / 2 + 1)), 6.0, 48.0);
  const double font = 12, line = line_px(font);
  double row_w = 0, col_w = 0;
  for (size_t i : rows) row_w = std::max(row_w, text_px(row_label(i), font));
  for (size_t j : cols) col_w = std::max(col_w, text_px(col_label(j), font));
  // a label on every k-th row, k rows at least a line apart
  const size_t row_every = std::max<size_t>(1, static_cast<size_t>(std::ceil(line / cell)));
  // column labels across the cells when they fit, else slanted (50 degrees up): k columns
  // apart, two slanted labels are k * cell * sin(50) apart across their lines
  const double slant = 50 * std::acos(-1.0) / 180, sin_s = std::sin(slant), cos_s = std::cos(slant);
  size_t col_every = row_every;
  const bool slanted = col_w > col_every * cell - 4;
  if (slanted) col_every = std::max<size_t>(1, static_cast<size_t>(std::ceil(line / (cell * sin_s))));
  double title_h = 0, title_w = 0;
  const std::string title = title_svg(f.title, title_h, title_w);
  const double left = 10 + row_w + 8,
               top = title_h + 14 + (slanted ? col_w * sin_s + line * cos_s + 8 : line + 6);
  const double grid_w = cell * cols.size(), grid_h = cell * rows.size();
  // 2) what the colours mean, right of the grid: the mask's two colours, or a colour bar with
  // as many values as its height holds a line apart (at least 80 px tall)
  const double bar_x = left + grid_w + 24, bar_w = 14, bar_h = std::max(grid_h, 80.0);
  struct Tick {
    double y;
    std::string text;
  };
  std::vector<Tick> bar_ticks;
  std::vector<std::pair<const char*, std::string>> swatches;  // colour, words
  if (mask) {
    const float hide_value = 1.0f - keep_value;
    swatches.emplace_back(kKeep, trf("{v} = keep (visible)", fmt::arg("v", keep_value)));
    swatches.emplace_back(kHidden, trf("{v} = hidden", fmt::arg("v", hide_value)));
  } else if (lo <= hi) {
    const int ticks = lo < hi ? std::clamp(static_cast<int>(bar_h / (line + 4)) + 1, 2, 5) : 1;
    for (int k = 0; k < ticks; ++k) {
      const double t = ticks == 1 ? 0.5 : static_cast<double>(k) / (ticks - 1);
      bar_ticks.push_back({top + bar_h * (1 - t), num(lo + t * (static_cast<double>(hi) - lo))});
    }
  }
  double key_w = 0;
  for (const Tick& t : bar_ticks) key_w = std::max(key_w, bar_w + 6 + text_px(t.text, font));
  for (const auto& s : swatches) key_w = std::max(key_w, bar_w + 6 + text_px(s.second, font));
  // 3) what the grey cells mean, and what was left out: one line under the grid and the key
  std::string note;
  if (neg_inf) note += "x = -inf   ";
  if (pos_inf) note += "! = +inf   ";
  if (nan) note += "? = nan   ";
  if (rows.size() < f.rows || cols.size() < f.cols)
    note += fmt::format("{} of {} rows, {} of {} columns", rows.size(), f.rows, cols.size(), f.cols);
  while (!note.empty() && note.back() == ' ') note.pop_back();
  const CellLabels labels = cell_labels([&] {
    std::vector<float> shown;
    for (size_t i : rows)
      for (size_t j : cols) shown.push_back(value(i, j));
    return shown;
  }(), cell);
  if (!labels.on && !mask && cell >= 24) {  // cells wide enough to read, too narrow for the values
    if (!note.empty()) note += "   ";
    note += _("the colour bar gives the values");
  }
  const double note_y = top + std::max(grid_h, bar_h) + 22;
  const double width = std::max({bar_x + key_w + 10, title_w, left + text_px(note, font) + 10,
                                 slanted ? left + grid_w - cell / 2 + col_w * cos_s + line * sin_s + 10 : 0.0}),
               height = note_y + (note.empty() ? 0 : 18);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"{}\" font-size=\"{:.0f}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      std::ceil(width), std::ceil(height), std::ceil(width), std::ceil(height), kFont, font);
  out += title;
  // 4) the cells, each with its value when it fits
  const double mark_font = std::min(font, (cell - 2) / 1.2);
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < cols.size(); ++c) {
      const float v = value(rows[r], cols[c]);
      const double x = left + c * cell, y = top + r * cell;
      if (!std::isfinite(v)) {
        out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x, y,
                           cell, cell, kHidden);
        if (mark_font >= 7)
          out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"{:.0f}\" fill=\"#333\">{}</text>\n",
                             x + cell / 2, y + cell / 2 + mark_font * 0.36, mark_font,
                             std::isnan(v) ? "?" : (v < 0 ? "x" : "!"));
        continue;
      }
      const double t = hi > lo ? (static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo) : 0.5;
      const bool dark_text = mask || t > 0.6;  // dark on light cells, light on dark ones
      if (mask)
        out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"#888\" "
                           "stroke-width=\"0.5\"/>\n",
                           x, y, cell, cell, v == keep_value ? kKeep : kHidden);
      else
        out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x, y,
                           cell, cell, colour(t));
      if (labels.on)
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"{:.0f}\" fill=\"{}\">{}</text>\n",
                           x + cell / 2, y + cell / 2 + labels.font * 0.36, labels.font, dark_text ? "#222" : "#eee",
                           cell_text(v, labels.digits));
    }
  out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n",
                     left, top, grid_w, grid_h);
  // 5) the labels: rows on the left, columns on top (slanted when they are long)
  for (size_t r = 0; r < rows.size(); ++r)
    if (r % row_every == 0)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                         top + r * cell + cell / 2 + 4, esc(row_label(rows[r])));
  for (size_t c = 0; c < cols.size(); ++c) {
    if (c % col_every != 0) continue;
    const double x = left + c * cell + cell / 2;
    if (slanted)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" transform=\"rotate(-50 {:.1f} {:.1f})\">{}</text>\n", x,
                         top - 6, x, top - 6, esc(col_label(cols[c])));
    else
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x, top - 6,
                         esc(col_label(cols[c])));
  }
  // 6) the key: the mask's two colours with their meaning, or the colour bar and its values
  for (size_t k = 0; k < swatches.size(); ++k) {
    const double y = top + k * (line + 8);
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"#444\"/>\n",
                       bar_x, y, bar_w, bar_w, swatches[k].first);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", bar_x + bar_w + 6, y + bar_w / 2 + 4,
                       esc(swatches[k].second));
  }
  if (!bar_ticks.empty()) {
    const int steps = 32;
    for (int k = 0; k < steps; ++k)
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.2f}\" width=\"{:.1f}\" height=\"{:.2f}\" fill=\"{}\"/>\n", bar_x,
                         top + bar_h * (steps - 1 - k) / steps, bar_w, bar_h / steps + 0.3, colour((k + 0.5) / steps));
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n",
                       bar_x, top, bar_w, bar_h);
    for (const Tick& t : bar_ticks) {
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#444\"/>\n",
                         bar_x + bar_w, t.y, bar_x + bar_w + 4, t.y);
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", bar_x + bar_w + 6, t.y + 4, esc(t.text));
    }
  }
  if (!note.empty())
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\">{}</text>\n", left, note_y, esc(note));
  return out + "</svg>\n";
}

std::string curve_svg(const FigureData& f) {
  double title_h = 0, title_w = 0;
  const std::string title = title_svg(f.title, title_h, title_w);
  const size_t n = f.values.size();
  const double font = 12, line = line_px(font);
  auto y_of = [&](double v) { return f.log_y ? std::log10(std::max(v, 1e-12)) : v; };
  double lo = INFINITY, hi = -INFINITY;
  for (float v : f.values)
    if (std::isfinite(v)) lo = std::min(lo, y_of(v)), hi = std::max(hi, y_of(v));
  if (!(lo < hi)) lo -= 0.5, hi += 0.5;
  const double pad = (hi - lo) * 0.05;
  lo -= pad, hi += pad;
  // y values at round numbers (1, 2, 5 x 10^k; on a log axis, powers of ten when those are many)
  std::vector<double> yt = f.log_y ? log_ticks(lo, hi, 7) : nice_ticks(lo, hi, 6);
  double tick_w = 0;
  for (double v : yt) tick_w = std::max(tick_w, text_px(tick_text(v), font));
  // left to right: the y label (turned up, one line), a gap, the y values, the ticks, the plot
  const double label_x = 10 + line * 0.8;  // its baseline: the line's ascent right of 10 px
  const double left = 10 + line + 8 + tick_w + 6, right = 20, top = title_h + 20, bottom = 56;
  const double width = std::max(640.0, title_w), height = 320 + title_h;
  const double pw = width - left - right, ph = height - top - bottom;
  auto px = [&](double step) { return left + (n > 1 ? (step - 1) / (n - 1) : 0.5) * pw; };
  auto py = [&](double y) { return top + (1 - (y - lo) / (hi - lo)) * ph; };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"{}\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height, kFont);
  out += title;
  out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n",
                     left, top, pw, ph);
  for (double v : yt) {
    const double y = py(f.log_y ? std::log10(v) : v);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, y,
                       left + pw, y);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#444\"/>\n", left - 4, y,
                       left, y);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6, y + 4, tick_text(v));
  }
  // x: steps at round numbers, up to 6, and the first step
  const double raw = std::max(1.0, (n - 1) / 5.0), mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
  for (double s = 1; s <= static_cast<double>(n) + 0.5; s = (s == 1 && step > 1) ? step : s + step) {
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#444\"/>\n", px(s),
                       top + ph, px(s), top + ph + 4);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.0f}</text>\n", px(s), top + ph + 18, s);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, height - 12,
                     esc(f.x_label));
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 {:.1f} {:.1f})\">{}</text>\n",
                     label_x, top + ph / 2, label_x, top + ph / 2, esc(f.y_label));
  // the line itself
  out += "<polyline fill=\"none\" stroke=\"#3b528b\" stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(f.values[i])) out += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", px(i + 1.0), py(y_of(f.values[i])));
  return out + "\"/>\n</svg>\n";
}

// A bar per value (a histogram): its height to scale, its count above it, its label below it.
std::string bars_svg(const FigureData& f) {
  double title_h = 0, title_w = 0;
  const std::string title = title_svg(f.title, title_h, title_w);
  const size_t n = f.values.size();
  const double font = 12, line = line_px(font);
  double most = 0;
  for (float v : f.values)
    if (std::isfinite(v)) most = std::max(most, static_cast<double>(v));
  std::vector<double> yt = nice_ticks(0, most > 0 ? most * 1.15 : 1, 6);
  const double hi = yt.empty() ? 1 : std::max(yt.back(), most * 1.15);
  double tick_w = 0;
  for (double v : yt) tick_w = std::max(tick_w, text_px(tick_text(v), font));
  // each bar's slot is as wide as its label and its count need, 24 px at least
  double slot = 24;
  for (size_t i = 0; i < n; ++i) {
    slot = std::max(slot, text_px(i < f.col_labels.size() ? f.col_labels[i] : std::to_string(i), font) + 8);
    slot = std::max(slot, text_px(tick_text(f.values[i]), 11) + 8);
  }
  const double label_x = 10 + line * 0.8;
  const double left = 10 + line + 8 + tick_w + 6, right = 20, top = title_h + 20, bottom = 56;
  const double width = std::max({640.0, title_w, left + slot * static_cast<double>(n) + right}), height = 320 + title_h;
  const double pw = width - left - right, ph = height - top - bottom;
  slot = pw / static_cast<double>(std::max<size_t>(n, 1));
  auto py = [&](double v) { return top + (1 - v / hi) * ph; };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"{}\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height, kFont);
  out += title;
  for (double v : yt) {
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, py(v),
                       left + pw, py(v));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6, py(v) + 4, tick_text(v));
  }
  out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#444\"/>\n", left, top + ph,
                     left + pw, top + ph);
  for (size_t i = 0; i < n; ++i) {
    const double v = std::isfinite(f.values[i]) ? std::max(0.0, static_cast<double>(f.values[i])) : 0.0;
    const double x = left + slot * static_cast<double>(i), mid = x + slot / 2;
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#3b528b\"/>\n",
                       x + slot * 0.15, py(v), slot * 0.7, top + ph - py(v));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n", mid,
                       py(v) - 4, tick_text(f.values[i]));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", mid, top + ph + 18,
                       esc(i < f.col_labels.size() ? f.col_labels[i] : std::to_string(i)));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, height - 12,
                     esc(f.x_label));
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 {:.1f} {:.1f})\">{}</text>\n",
                     label_x, top + ph / 2, label_x, top + ph / 2, esc(f.y_label));
  return out + "</svg>\n";
}

// A binary tree, root at the top: the leaves in one row at the bottom, in order; every other
// node one row above the higher of its two children, centred over them, joined to each by a line.
std::string tree_svg(const FigureData& f) {
  double title_h = 0, title_w = 0;
  const std::string title = title_svg(f.title, title_h, title_w);
  const size_t N = f.children.size();
  std::vector<double> x(N, 0), w(N, 0);
  std::vector<int> level(N, 0);
  // 1) leaves numbered left to right, every node's level and place (in leaf slots), children first
  double next_leaf = 0;
  std::vector<std::pair<int, bool>> stack;  // (node, children done)
  if (N > 0) stack.push_back({static_cast<int>(N - 1), false});
  while (!stack.empty()) {
    auto [i, done] = stack.back();
    stack.pop_back();
    const auto [l, r] = f.children[size_t(i)];
    const bool leaf = l < 0 || r < 0 || size_t(l) >= N || size_t(r) >= N;
    if (leaf) {
      x[size_t(i)] = next_leaf++;
    } else if (!done) {
      stack.push_back({i, true});
      stack.push_back({r, false});
      stack.push_back({l, false});
    } else {
      x[size_t(i)] = (x[size_t(l)] + x[size_t(r)]) / 2;
      level[size_t(i)] = 1 + std::max(level[size_t(l)], level[size_t(r)]);
    }
  }
  for (size_t i = 0; i < N; ++i)
    w[i] = std::max(text_px(i < f.row_labels.size() ? f.row_labels[i] : "", 12),
                    text_px(i < f.col_labels.size() ? f.col_labels[i] : "", 10)) + 8;
  // 2) the slot: wide enough that no two nodes of one row touch
  double slot = 20;
  const int top_level = N > 0 ? level[N - 1] : 0;
  for (int lv = 0; lv <= top_level; ++lv) {
    std::vector<size_t> row;
    for (size_t i = 0; i < N; ++i)
      if (level[i] == lv) row.push_back(i);
    std::sort(row.begin(), row.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
    for (size_t k = 1; k < row.size(); ++k)
      if (x[row[k]] > x[row[k - 1]]) slot = std::max(slot, ((w[row[k]] + w[row[k - 1]]) / 2 + 8) / (x[row[k]] - x[row[k - 1]]));
  }
  double pad = 10;
  for (size_t i = 0; i < N; ++i) pad = std::max(pad, 10 + w[i] / 2 - x[i] * slot);
  double right_edge = 0;
  for (size_t i = 0; i < N; ++i) right_edge = std::max(right_edge, pad + x[i] * slot + w[i] / 2);
  const double row_h = 44, top = title_h + 24;
  const double width = std::max({320.0, title_w, right_edge + 10}), height = top + row_h * top_level + 30;
  auto px = [&](size_t i) { return pad + x[i] * slot; };
  auto py = [&](size_t i) { return top + row_h * (top_level - level[i]); };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"{}\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height, kFont);
  out += title;
  for (size_t i = 0; i < N; ++i) {  // the lines first, under the boxes
    const auto [l, r] = f.children[i];
    if (l < 0 || r < 0 || size_t(l) >= N || size_t(r) >= N) continue;
    for (int c : {l, r})
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\"/>\n", px(i),
                         py(i) + 16, px(size_t(c)), py(size_t(c)) - 12);
  }
  for (size_t i = 0; i < N; ++i) {
    const bool leaf = f.children[i][0] < 0;
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"16\" rx=\"3\" fill=\"{}\" stroke=\"#888\"/>\n",
                       px(i) - w[i] / 2, py(i) - 12, w[i], leaf ? "#eeeeee" : "#dde4f4");
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", px(i), py(i),
                       esc(i < f.row_labels.size() ? f.row_labels[i] : ""));
    if (i < f.col_labels.size() && !f.col_labels[i].empty())
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555\">{}</text>\n",
                         px(i), py(i) + 14, esc(f.col_labels[i]));
  }
  return out + "</svg>\n";
}

}  // namespace

std::string svg(const FigureData& f) {
  switch (f.kind) {
    case FigureData::Kind::Curve: return curve_svg(f);
    case FigureData::Kind::Bars: return bars_svg(f);
    case FigureData::Kind::Tree: return tree_svg(f);
    case FigureData::Kind::Heatmap: break;
  }
  return heatmap_svg(f);
}

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
