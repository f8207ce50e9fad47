// course/plot.hpp: ch11's terminal pictures of training (introduced in ch11): presentation,
// so it sits in course/ beside the heatmaps, above train/.
#pragma once

#include <string>
#include <vector>

namespace ts {

// The loss per step as a curve, log scale: each of `width` columns is the mean loss of its
// steps, drawn as '*' at its height among `height` rows; y labels at top, middle and bottom,
// x labels at the first and last step.   losses (steps) -> text
std::string loss_curve(const std::vector<double>& losses, int width = 60, int height = 12);

// "[#########...........]  340/1000  loss 0.1234  41.2 steps/s" (no newline), the bar narrower
// (or left out, then the text cut) so that the line fits the terminal (terminal_width)
std::string progress_bar(long done, long total, double loss, double steps_per_s, int width = 30);

}  // namespace ts
