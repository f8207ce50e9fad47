// heatmap.hpp: a matrix drawn in the terminal (introduced in ch01, used by ch02-ch10).
//   Color   256-colour background cells (stdout is a terminal)
//   Unicode shading blocks " ░▒▓█" (terminal with --no-color or NO_COLOR set)
//   Ascii   " .:-=+*#%@" (stdout is a file or a pipe: pure ASCII apart from the labels)
// heatmap_mode(ch.color) picks among the three. Rows and columns are labelled; the legend
// gives the value range and the whole shade ramp; non-finite cells are marked, not shaded:
// x = -inf (masked scores), ! = +inf, ? = nan (a fully masked softmax row).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "base/figure_sink.hpp"
#include "exact/tensor.hpp"

namespace ts {

enum class HeatmapMode { Color, Unicode, Ascii };

struct HeatmapOptions {
  HeatmapMode mode = HeatmapMode::Ascii;
  std::string title;
  int cell_width = 3;   // characters per cell
  int max_cols = 64;    // wider matrices show every k-th column (said in the legend)
  int max_rows = 64;    // likewise for rows
  // A fixed scale (e.g. 0 and 1 for masks and attention weights, so that 1 is always the
  // darkest shade and two pictures compare); NaN = use the matrix's finite min / max.
  float vmin = NAN, vmax = NAN;
  // A mask: which value means keep (base/figure_sink.hpp); the SVG draws it in the one mask
  // colouring every chapter shares, the terminal in the shades above.
  MaskMeaning mask = MaskMeaning::None;
  // Words after the title in the terminal only: a legend in the terminal's own shades
  // (", [@] = hidden, [ ] = visible"); the SVG draws its own legend, in its colours.
  std::string terminal_legend;
};

// The mode for a chapter's figures: Color if the chapter uses colour (ch.color), else
// Unicode shading when stdout is a terminal, else plain ASCII.
HeatmapMode heatmap_mode(bool color);

// m (R,C) -> the picture; labels may be empty (indices are used) or one per row/column.
std::string heatmap(const Tensor& m, const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels, const HeatmapOptions& opt);

// How the value v looks in a heatmap drawn with opt (its mode, its fixed vmin/vmax), as
// "[cell]" with a one-character cell: a legend in words can show the very shade the picture
// uses ("[@] = hidden", or the orange cell on a colour terminal).
std::string heatmap_swatch(float v, const HeatmapOptions& opt);

// One heatmap per head, titled "head h", laid out side by side in `width` columns (ch04:
// two per row for BERT's 12 heads on 5 tokens). Labels are cut to 4 columns to keep each
// map narrow. w (B,H,T,S) -> the pictures of batch 0's H matrices (T,S)
std::string head_heatmaps(const Tensor& w, const std::vector<std::string>& labels, HeatmapOptions opt,
                          size_t width);

}  // namespace ts
