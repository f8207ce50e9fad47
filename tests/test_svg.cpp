// test_svg.cpp: figures for --svg (src/base/figure_sink.hpp, src/course/svg.hpp, introduced in ch01).
//
// What the docs pages rely on: a heatmap handed to the sink carries its numbers and labels;
// the SVG names the tokens on both axes, gives the colour bar its values, marks -inf cells,
// and is the same text every time; a loss curve has its axes' labels.
#include "catch_compat.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
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

namespace {

// every match of `re`'s first group in `s`
std::vector<std::string> all(const std::string& s, const std::string& re) {
  std::vector<std::string> out;
  const std::regex r(re);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), r); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

// A number's width in DejaVu Sans (the figures' first font), from its real advances in ems:
// independent of the estimate svg.cpp makes, so that a too-hopeful estimate fails here.
double dejavu_px(const std::string& s, double size) {
  double em = 0;
  for (char c : s) em += std::isdigit(static_cast<unsigned char>(c)) ? 0.636 : c == '.' ? 0.318 : c == 'e' ? 0.615 : c == '-' ? 0.361 : 0.838;
  return em * size;
}

ts::FigureData matrix_figure(size_t rows, size_t cols, const std::vector<float>& cycle) {
  ts::FigureData f;
  f.title = "weights";
  f.rows = rows, f.cols = cols;
  for (size_t k = 0; k < rows * cols; ++k) f.values.push_back(cycle[k % cycle.size()]);
  f.vmin = 0, f.vmax = 1;
  return f;
}

}  // namespace

TEST_CASE("svg: the values in the cells fit their cells, or are left to the colour bar", "[svg]") {
  // 5 columns: 48-px cells, too narrow for "1.01e-12" at 11 px (51 px in DejaVu Sans)
  const std::string pic = ts::svg(matrix_figure(5, 5, {1.01e-12f, 1.64e-13f, 0.00972f, 1.0f, 0.5f}));
  const auto sizes = all(pic, "text-anchor=\"middle\" font-size=\"(\\d+)\" fill=\"#(?:222|eee)\">");
  const auto texts = all(pic, "font-size=\"\\d+\" fill=\"#(?:222|eee)\">([^<]*)<");
  REQUIRE(texts.size() == 25);
  const double font = std::stod(sizes.at(0));
  CHECK(font >= 9);
  for (const std::string& t : texts) {
    INFO(t << " at " << font << " px");
    CHECK(dejavu_px(t, font) <= 48 - 4);
  }
  CHECK(pic.find("colour bar gives the values") == std::string::npos);
  // 20 columns: 28-px cells hold no "1.2e-12" even at 9 px; the colour bar carries the values
  const std::string narrow = ts::svg(matrix_figure(3, 20, {1.2345e-12f, 0.98765f}));
  CHECK(all(narrow, "fill=\"#(?:222|eee)\">([^<]*)<").empty());
  CHECK(narrow.find("the colour bar gives the values") != std::string::npos);
}

TEST_CASE("svg: a mask is drawn in the mask colours, with a legend that says which value keeps", "[svg]") {
  ts::FigureData f = matrix_figure(2, 2, {0.0f, 1.0f});
  f.mask = ts::MaskMeaning::OneHides;
  const std::string hides = ts::svg(f);
  CHECK(hides.find(">0 = keep (visible)</text>") != std::string::npos);
  CHECK(hides.find(">1 = hidden</text>") != std::string::npos);
  CHECK(hides.find(">0.5</text>") == std::string::npos);  // no colour bar
  f.mask = ts::MaskMeaning::OneKeeps;
  const std::string keeps = ts::svg(f);
  CHECK(keeps.find(">1 = keep (visible)</text>") != std::string::npos);
  CHECK(keeps.find(">0 = hidden</text>") != std::string::npos);
  // the same colours for "keep" whichever value means it: cell (0,0) holds 0, cell (0,1) holds 1
  const auto fills_h = all(hides, "<rect x=\"[\\d.]+\" y=\"[\\d.]+\" width=\"[\\d.]+\" height=\"[\\d.]+\" fill=\"(#[0-9a-f]+)\" stroke=\"#888\"");
  const auto fills_k = all(keeps, "<rect x=\"[\\d.]+\" y=\"[\\d.]+\" width=\"[\\d.]+\" height=\"[\\d.]+\" fill=\"(#[0-9a-f]+)\" stroke=\"#888\"");
  REQUIRE(fills_h.size() == 4);
  REQUIRE(fills_k.size() == 4);
  CHECK(fills_h[0] == fills_k[1]);  // kept: 0 in one, 1 in the other
  CHECK(fills_h[1] == fills_k[0]);  // hidden
  CHECK(fills_h[0] != fills_h[1]);
  // not a 0/1 matrix: its values, on a colour bar, no mask legend
  f.values[0] = 0.5f;
  const std::string values = ts::svg(f);
  CHECK(values.find("keep (visible)") == std::string::npos);
  CHECK(values.find(">0.5</text>") != std::string::npos);
}

TEST_CASE("svg: a log axis ticks at 1, 2, 5 x 10^k, clear of the axis label", "[svg]") {
  ts::FigureData f;
  f.kind = ts::FigureData::Kind::Curve;
  f.title = "loss per step";
  f.log_y = true;
  f.y_label = "loss (log scale)";
  for (std::vector<float> losses : {std::vector<float>{4.113f, 0.2633f, 0.01686f, 6.91e-05f},  // 5 decades
                                    std::vector<float>{2.9f, 2.5f, 2.1f},                       // in one decade
                                    std::vector<float>{40.0f, 31.0f, 12.0f}}) {
    f.values = losses;
    f.rows = 1, f.cols = losses.size();
    const std::string pic = ts::svg(f);
    const auto ticks = all(pic, "text-anchor=\"end\">([^<]*)<");
    INFO(pic);
    REQUIRE(ticks.size() >= 2);
    // round: each 1..9 x 10^k (over decades: 1, 2 or 5 x 10^k); within less than a decade, a
    // linear run whose step is 1, 2 or 5 x 10^k and every value a multiple of it (2.2, 2.4, ...)
    auto mantissa = [](double v) { return v / std::pow(10.0, std::floor(std::log10(v) + 1e-9)); };
    bool one_digit = true;
    for (const std::string& t : ticks) one_digit &= std::abs(mantissa(std::stod(t)) - std::round(mantissa(std::stod(t)))) < 1e-9;
    if (losses.size() == 4 || one_digit) {
      CHECK(one_digit);
      for (const std::string& t : ticks) {
        const double m = std::round(mantissa(std::stod(t)));
        INFO(t);
        if (losses.size() == 4) CHECK((m == 1 || m == 2 || m == 5));
      }
    } else {
      const double step = std::abs(std::stod(ticks[1]) - std::stod(ticks[0]));
      const double m = mantissa(step);
      CHECK((std::abs(m - 1) < 1e-6 || std::abs(m - 2) < 1e-6 || std::abs(m - 5) < 1e-6));
      for (const std::string& t : ticks) {
        INFO(t << " in steps of " << step);
        CHECK(std::abs(std::stod(t) / step - std::round(std::stod(t) / step)) < 1e-6);
      }
    }
    // the turned y label (its glyphs 1.2 lines wide around its baseline) ends left of the values
    const double plot_left = std::stod(all(pic, "<rect x=\"([\\d.]+)\" y=\"[\\d.]+\" width=\"[\\d.]+\" height=\"[\\d.]+\" fill=\"none\"")[0]);
    const double label_x = std::stod(all(pic, "<text x=\"([\\d.]+)\" y=\"[\\d.]+\" text-anchor=\"middle\" transform=\"rotate\\(-90")[0]);
    double widest = 0;
    for (const std::string& t : ticks) widest = std::max(widest, dejavu_px(t, 12));
    CHECK(label_x + 0.3 * 12 < plot_left - 6 - widest);
  }
}

TEST_CASE("svg: a bar chart draws one bar per value, its count above it and its label below", "[svg]") {
  ts::FigureData f;
  f.kind = ts::FigureData::Kind::Bars;
  f.title = "tokens by length";
  f.values = {116, 88, 1};
  f.col_labels = {"2", "3", "12"};
  f.rows = 1, f.cols = 3;
  f.x_label = "bytes", f.y_label = "tokens";
  const std::string pic = ts::svg(f);
  CHECK(pic == ts::svg(f));
  std::smatch m;
  const std::regex bar(R"re(<rect x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)" fill="#3b528b"/>)re");
  std::vector<double> heights;
  for (auto it = std::sregex_iterator(pic.begin(), pic.end(), bar); it != std::sregex_iterator(); ++it)
    heights.push_back(std::stod((*it)[2]));
  REQUIRE(heights.size() == 3);
  CHECK(heights[0] > heights[1]);
  CHECK(std::abs(heights[0] / heights[1] - 116.0 / 88.0) < 0.01);  // to scale (0.1 px steps)
  CHECK(heights[2] > 0);
  CHECK(pic.find(">116</text>") != std::string::npos);
  CHECK(pic.find(">12</text>") != std::string::npos);
  CHECK(pic.find(">bytes</text>") != std::string::npos);
}

TEST_CASE("svg: a tree puts the leaves in one row, in order, and each parent above its children", "[svg]") {
  // ' the' = ' t' + 'he'; ' t' = ' ' + 't'; 'he' = 'h' + 'e' (children before parents, root last)
  ts::FigureData f;
  f.kind = ts::FigureData::Kind::Tree;
  f.row_labels = {"' '", "'t'", "' t'", "'h'", "'e'", "'he'", "' the'"};
  f.col_labels = {"", "", "merge 1", "", "", "merge 3", "merge 9"};
  f.children = {{-1, -1}, {-1, -1}, {0, 1}, {-1, -1}, {-1, -1}, {3, 4}, {2, 5}};
  f.rows = f.children.size();
  const std::string pic = ts::svg(f);
  CHECK(pic == ts::svg(f));
  auto at = [&](const std::string& label) {
    std::smatch m;
    const std::regex re("<text x=\"([0-9.]+)\" y=\"([0-9.]+)\" text-anchor=\"middle\">" + std::regex_replace(label, std::regex("'"), "'") + "</text>");
    REQUIRE(std::regex_search(pic, m, re));
    return std::pair<double, double>{std::stod(m[1]), std::stod(m[2])};
  };
  const auto sp = at("' '"), t = at("'t'"), h = at("'h'"), e = at("'e'"), st = at("' t'"), he = at("'he'"), root = at("' the'");
  CHECK(sp.first < t.first);  // leaves left to right
  CHECK(t.first < h.first);
  CHECK(h.first < e.first);
  CHECK(sp.second == e.second);  // one row
  CHECK(root.second < st.second);  // parents above
  CHECK(st.second < sp.second);
  CHECK(std::abs(st.first - (sp.first + t.first) / 2) < 0.11);  // centred over the children
  CHECK(std::abs(root.first - (st.first + he.first) / 2) < 0.11);
  CHECK(pic.find(">merge 9</text>") != std::string::npos);
  // a lone leaf, and children out of range, draw without a crash
  ts::FigureData one;
  one.kind = ts::FigureData::Kind::Tree;
  one.row_labels = {"'a'"};
  one.children = {{-1, -1}};
  CHECK(ts::svg(one).find(">'a'</text>") != std::string::npos);
  one.children = {{5, 7}};
  CHECK(ts::svg(one).find(">'a'</text>") != std::string::npos);
  ts::FigureData none;
  none.kind = ts::FigureData::Kind::Tree;
  CHECK(ts::svg(none).rfind("<svg ", 0) == 0);
}
