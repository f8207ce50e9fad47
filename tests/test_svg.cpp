// test_svg.cpp: figures for --svg (src/base/figure_sink.hpp, src/course/svg.hpp, introduced in ch01).
//
// What the docs pages rely on: a heatmap handed to the sink carries its numbers and labels;
// the SVG names the tokens on both axes, gives the colour bar its values, marks -inf cells,
// and is the same text every time; a loss curve has its axes' labels.
#include "catch_compat.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "base/figure_sink.hpp"
#include "course/heatmap.hpp"
#include "course/svg.hpp"

TEST_CASE("svg: heatmap() hands its numbers to the figure sink", "[svg]") {
  std::vector<ts::FigureData> seen;
  ts::set_figure_sink([&](const ts::FigureData& f) { seen.push_back(f); });
  ts::Tensor m = ts::Tensor::from_shape({2, 3});
  for (size_t i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(i);
  m(0, 2) = -INFINITY;
  ts::HeatmapOptions opt;
  opt.title = "scores";
  ts::heatmap(m, {"time", "flies"}, {"a", "b", "c"}, opt);
  ts::set_figure_sink(nullptr);
  ts::heatmap(m, {}, {}, opt);  // no sink: nothing more
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].rows == 2);
  CHECK(seen[0].cols == 3);
  CHECK(seen[0].values[4] == 4.0f);
  CHECK(seen[0].row_labels[1] == "flies");

  const std::string pic = ts::svg(seen[0]);
  CHECK(pic == ts::svg(seen[0]));  // the same text every time
  CHECK(pic.rfind("<svg ", 0) == 0);
  CHECK(pic.find(">time</text>") != std::string::npos);
  CHECK(pic.find(">flies</text>") != std::string::npos);
  CHECK(pic.find(">c</text>") != std::string::npos);
  CHECK(pic.find(">5</text>") != std::string::npos);  // the colour bar's top value
  CHECK(pic.find(">0</text>") != std::string::npos);  // and its bottom
  CHECK(pic.find("x = -inf") != std::string::npos);
}

TEST_CASE("svg: a loss curve has labelled axes; file names are plain ASCII", "[svg]") {
  ts::FigureData f;
  f.kind = ts::FigureData::Kind::Curve;
  f.title = "loss per step";
  f.values = {4.0f, 2.0f, 1.0f, 0.5f};
  f.rows = 1;
  f.cols = 4;
  f.log_y = true;
  f.x_label = "step";
  f.y_label = "loss (log scale)";
  const std::string pic = ts::svg(f);
  CHECK(pic.find(">step</text>") != std::string::npos);
  CHECK(pic.find("<polyline") != std::string::npos);
  CHECK(ts::figure_file_stem("softmax(qk), unscaled: rows = queries") == "softmax_qk_unscaled_rows_queries");
  CHECK(ts::figure_file_stem("头 0") == "0");
  CHECK(ts::figure_file_stem("注意力") == "figure");
}
