// figure_sink.hpp: where a picture goes besides the terminal (introduced in ch01's --svg).
// The code that draws a heatmap (course/heatmap) or a loss curve (train/plot) hands the
// numbers behind it to the sink, if one is set; the chapter sets one for --svg DIR and
// writes each figure as an SVG file (course/svg). Nothing here knows about files or SVG.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace ts {

struct FigureData {
  enum class Kind { Heatmap, Curve };
  Kind kind = Kind::Heatmap;
  std::string title;
  // Heatmap: values (rows, cols) row-major, one label per row and column (may be empty:
  // indices are used); vmin/vmax a fixed scale, NaN = the finite min / max.
  // Curve: values are the y of points 1..cols (rows = 1), y drawn on a log scale if log_y.
  size_t rows = 0, cols = 0;
  std::vector<float> values;
  std::vector<std::string> row_labels, col_labels;
  float vmin = NAN, vmax = NAN;
  bool log_y = false;
  std::string x_label, y_label;
};

using FigureSink = std::function<void(const FigureData&)>;

// The sink every figure goes to from now on (an empty function: none).
void set_figure_sink(FigureSink sink);
// Hands `f` to the sink; does nothing when none is set.
void emit_figure(const FigureData& f);

}  // namespace ts
