// figure_sink.hpp: where a picture goes besides the terminal (introduced in ch01's --svg).
// The code that draws a heatmap (course/heatmap) or a loss curve (train/plot) hands the
// numbers behind it to the sink, if one is set; the chapter sets one for --svg DIR and
// writes each figure as an SVG file (course/svg). Nothing here knows about files or SVG.
#pragma once

#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace ts {

// A heatmap of a mask (its values 0 and 1): which of the two means "keep" (the query sees the
// key). The SVG then draws every mask of every chapter alike: kept cells white, hidden ones
// grey (the grey of a -inf score), with a legend that says which value is which.
enum class MaskMeaning { None, OneKeeps, OneHides };

struct FigureData {
  enum class Kind { Heatmap, Curve, Bars, Tree };
  Kind kind = Kind::Heatmap;
  std::string title;
  // Heatmap: values (rows, cols) row-major, one label per row and column (may be empty:
  // indices are used); vmin/vmax a fixed scale, NaN = the finite min / max.
  // Curve: values are the y of points 1..cols (rows = 1), y drawn on a log scale if log_y.
  // Bars:  values are the heights of cols bars (rows = 1), col_labels the label under each.
  // Tree:  rows nodes; row_labels[i] node i's text, col_labels[i] a note under it (may be
  //        empty), children[i] its two children's indices ({-1, -1}: a leaf); the last node is
  //        the root.
  size_t rows = 0, cols = 0;
  std::vector<float> values;
  std::vector<std::string> row_labels, col_labels;
  float vmin = NAN, vmax = NAN;
  MaskMeaning mask = MaskMeaning::None;
  bool log_y = false;
  std::vector<std::array<int, 2>> children;
  std::string x_label, y_label;
};

using FigureSink = std::function<void(const FigureData&)>;

// The sink every figure goes to from now on (an empty function: none).
void set_figure_sink(FigureSink sink);
// Hands `f` to the sink; does nothing when none is set.
void emit_figure(const FigureData& f);

}  // namespace ts
