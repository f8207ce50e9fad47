// test_heatmap.cpp: the terminal heatmap (src/course/heatmap.hpp, introduced in ch01).
//
// What the chapters rely on: labelled rows and columns, a legend with the value range and the
// shade ramp, marks for -inf / nan cells, pure ASCII output in Ascii mode (stdout not a
// terminal), and the darkest/lightest shade at the ends of the range.
#include "catch_compat.hpp"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "course/heatmap.hpp"
#include "tensor_rows.hpp"

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool is_ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80 || (c < 0x20 && c != '\n')) return false;
  return true;
}

}  // namespace

using ts_test::matrix;

TEST_CASE("heatmap: ASCII mode is plain ASCII, labelled, with a legend", "[heatmap]") {
  ts::HeatmapOptions opt;
  opt.mode = ts::HeatmapMode::Ascii;
  opt.title = "scores";
  opt.cell_width = 5;
  const ts::Tensor m = matrix({{0, 1, 2}, {3, 4, 9}});
  const std::string pic = ts::heatmap(m, {"time", "flies"}, {"a", "b", "c"}, opt);
  REQUIRE(is_ascii(pic));
  const auto lines = lines_of(pic);
  REQUIRE(lines.size() == 5);  // title, column labels, 2 rows, legend
  CHECK(lines[0] == "scores");
  CHECK(lines[1] == "          a    b    c");
  // the smallest value is blank, the largest the densest character
  CHECK(lines[2] == "time       .....:::::");
  CHECK(lines[3] == "flies -----=====@@@@@");
  CHECK(lines[4] == "      scale: low 0 [ .:-=+*#%@] high 9");
}

TEST_CASE("heatmap: -inf, +inf and nan cells are marked and named in the legend", "[heatmap]") {
  ts::HeatmapOptions opt;
  opt.mode = ts::HeatmapMode::Ascii;
  opt.cell_width = 3;
  const ts::Tensor m = matrix({{1, -INFINITY}, {NAN, INFINITY}});
  const auto lines = lines_of(ts::heatmap(m, {}, {}, opt));
  REQUIRE(lines.size() == 4);
  CHECK(lines[1] == "0 +++  x");  // a constant matrix draws at mid-shade
  CHECK(lines[2] == "1   ?  !");
  CHECK(lines[3].find("every finite value = 1") != std::string::npos);
  CHECK(lines[3].find("x = -inf") != std::string::npos);
  CHECK(lines[3].find("! = +inf") != std::string::npos);
  CHECK(lines[3].find("? = nan") != std::string::npos);
}

TEST_CASE("heatmap: Unicode and colour modes shade with blocks and 256-colour cells", "[heatmap]") {
  ts::HeatmapOptions opt;
  opt.cell_width = 2;
  const ts::Tensor m = matrix({{0, 1}});
  opt.mode = ts::HeatmapMode::Unicode;
  const auto uni = lines_of(ts::heatmap(m, {"r"}, {"c0", "c1"}, opt));
  REQUIRE(uni.size() == 3);
  CHECK(uni[1] == "r   \u2588\u2588");
  CHECK(uni[2].find("[ \u2591\u2592\u2593\u2588]") != std::string::npos);
  opt.mode = ts::HeatmapMode::Color;
  const std::string col = ts::heatmap(m, {"r"}, {"c0", "c1"}, opt);
  CHECK(col.find("\033[48;5;17m  \033[0m\033[48;5;208m  \033[0m") != std::string::npos);
}

TEST_CASE("heatmap: a fixed scale shades a constant mask by its value", "[heatmap]") {
  ts::HeatmapOptions opt;
  opt.mode = ts::HeatmapMode::Ascii;
  opt.cell_width = 2;
  opt.vmin = 0.0f;
  opt.vmax = 1.0f;
  const auto lines = lines_of(ts::heatmap(matrix({{1, 1}, {0, 0}}), {"a", "b"}, {}, opt));
  REQUIRE(lines.size() == 4);
  CHECK(lines[1] == "a @@@@");
  CHECK(lines[2] == "b     ");
  CHECK(lines[3] == "  scale (fixed): low 0 [ .:-=+*#%@] high 1");
  opt.vmin = NAN;  // back to the matrix's own range: a constant matrix has none
  CHECK(lines_of(ts::heatmap(matrix({{1, 1}}), {}, {}, opt))[1] == "0 ++++");
}

TEST_CASE("heatmap: wide matrices show every k-th column and say so", "[heatmap]") {
  ts::HeatmapOptions opt;
  opt.mode = ts::HeatmapMode::Ascii;
  opt.cell_width = 1;
  opt.max_cols = 10;
  ts::Tensor m = ts::zeros({2, 100});
  m(1, 99) = 1.0f;
  const std::string pic = ts::heatmap(m, {}, {}, opt);
  REQUIRE(is_ascii(pic));
  // 100 columns at most 10 shown: stride 10 is even, so 11 (sin and cos columns alike)
  CHECK(pic.find("(showing 2 of 2 rows, 10 of 100 columns)") != std::string::npos);
  // index labels wider than a cell become a ruler: each index where its column starts, if it fits
  CHECK(lines_of(pic)[0] == "  0 22 55 88");  // columns 0, 11, 22, ... one character each
  REQUIRE_THROWS(ts::heatmap(ts::zeros({2, 2, 2}), {}, {}, opt));
}

TEST_CASE("heatmap: a swatch is the very cell the picture draws for a value", "[heatmap]") {
  ts::HeatmapOptions opt;
  opt.vmin = 0, opt.vmax = 1;
  opt.cell_width = 1;
  for (ts::HeatmapMode mode : {ts::HeatmapMode::Ascii, ts::HeatmapMode::Unicode, ts::HeatmapMode::Color}) {
    opt.mode = mode;
    const std::string pic = ts::heatmap(matrix({{0, 1}}), {"r"}, {"a", "b"}, opt);
    for (float v : {0.0f, 1.0f}) {
      const std::string sw = ts::heatmap_swatch(v, opt);
      REQUIRE(sw.size() > 2);
      // the swatch's cell (without its brackets) occurs in the picture's row
      CHECK(lines_of(pic)[1].find(sw.substr(1, sw.size() - 2)) != std::string::npos);
    }
    CHECK(ts::heatmap_swatch(0, opt) != ts::heatmap_swatch(1, opt));
  }
  opt.mode = ts::HeatmapMode::Ascii;
  CHECK(ts::heatmap_swatch(1, opt) == "[@]");
  CHECK(ts::heatmap_swatch(0, opt) == "[ ]");
}

TEST_CASE("heatmap: a terminal legend follows the title in the terminal only; a mask says so to the SVG",
          "[heatmap]") {
  std::vector<ts::FigureData> seen;
  ts::set_figure_sink([&](const ts::FigureData& f) { seen.push_back(f); });
  ts::HeatmapOptions opt;
  opt.vmin = 0, opt.vmax = 1;
  opt.mask = ts::MaskMeaning::OneHides;
  opt.title = "mask";
  opt.terminal_legend = ", " + ts::heatmap_swatch(1, opt) + " = hidden";
  const std::string pic = ts::heatmap(matrix({{0, 1}}), {"r"}, {"a", "b"}, opt);
  ts::set_figure_sink(nullptr);
  CHECK(lines_of(pic)[0] == "mask, [@] = hidden");
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].title == "mask");  // the SVG draws its own legend, in its own colours
  CHECK(seen[0].mask == ts::MaskMeaning::OneHides);
}
