// svg.hpp: a figure as an SVG picture, for --svg DIR (introduced in ch01, used by every
// chapter that shows a heatmap, a mask, a positional encoding, a loss curve, a histogram or a tree).
//   heatmap: one cell per value, rows and columns labelled with the tokens (or indices),
//            a colour bar with its values; -inf / +inf / nan cells grey, marked x ! ?
//   curve:   the values as a line over steps 1..n, axes with their values (log scale if asked)
//   bars:    one bar per value (a histogram), its count above it and its label below (ch15)
//   tree:    a binary tree, root at the top, the leaves in one row in order (ch15's merges)
// The text is a function of the numbers only (no dates, no random ids), so a figure made
// again from the same run is the same bytes (docs_check compares them).
#pragma once

#include <string>

#include "base/figure_sink.hpp"

namespace ts {

std::string svg(const FigureData& f);

// "softmax(qk), unscaled: rows = ..." -> "softmax_qk_unscaled_rows" (ASCII letters, digits
// and '_', at most 40 characters; "figure" when nothing is left)
std::string figure_file_stem(const std::string& title);

}  // namespace ts
