// test_print_width.cpp: tensors printed at a line width other than the default, against live
// PyTorch (torch.set_printoptions(linewidth=W)) and numpy (np.set_printoptions(linewidth=W),
// which TensorFlow's str() follows): the explained mode prints at min(default, terminal
// columns), so a narrow terminal shows the tensor the way the library itself would wrap it.
// The cases (1-D .. 4-D, summarised with '...', negative, sci mode, int64, a grad suffix, at
// widths 20 .. 101) come from tests/twins/print_width_reference.py.
#include "catch_compat.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exact/print.hpp"
#include "exact/tfprint.hpp"
#include "reference_run.hpp"

namespace {

const nlohmann::json& width_cases() {
  static const ts_test::ReferenceRun run("print_width_reference.py");
  static const nlohmann::json cases = [] {
    std::ifstream in(run / "cases.json");
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str());
  }();
  return cases;
}

double from_hex(const nlohmann::json& v) { return std::strtod(v.get<std::string>().c_str(), nullptr); }

std::string report(const nlohmann::json& c, const std::string& got) {
  return c.at("name").get<std::string>() + " at linewidth " + std::to_string(c.at("linewidth").get<int>()) +
         "\n--- expected ---\n" + c.at("printed").get<std::string>() + "\n--- got ---\n" + got + "\n";
}

}  // namespace

TEST_CASE("print width: torch.set_printoptions(linewidth=W) wraps as PyTorch does", "[print]") {
  size_t n = 0, fails = 0, narrow = 0;
  std::string first;
  for (const auto& c : width_cases().at("torch")) {
    const std::vector<size_t> shape = c.at("shape").get<std::vector<size_t>>();
    const nlohmann::json& values = c.at("values");
    ts::PrintMeta meta;
    meta.linewidth = c.at("linewidth").get<size_t>();
    meta.requires_grad = c.at("requires_grad").get<bool>();
    const std::string got =
        c.at("dtype") == "int64"
            ? ts::format_tensor_int(ts::DType::Int64, shape, [&](size_t i) { return values[i].get<int64_t>(); }, meta)
            : ts::format_tensor(ts::DType::Float32, shape, [&](size_t i) { return from_hex(values[i]); }, meta);
    ++n;
    narrow += meta.linewidth < ts::kTorchLineWidth;
    if (got != c.at("printed").get<std::string>() && ++fails == 1) first = report(c, got);
  }
  INFO(n - fails << "/" << n << " prints identical\n" << first);
  CHECK(n >= 200);
  CHECK(narrow >= 100);
  CHECK(fails == 0);
}

TEST_CASE("print width: the global width is the default of every print", "[print]") {
  const auto& c = width_cases().at("torch").at(0);  // 1-D float32 at the first width
  const std::vector<size_t> shape = c.at("shape").get<std::vector<size_t>>();
  auto get = [&](size_t i) { return from_hex(c.at("values")[i]); };
  ts::PrintMeta at;
  at.linewidth = c.at("linewidth").get<size_t>();
  const std::string wide = ts::format_tensor(ts::DType::Float32, shape, get);
  ts::set_print_linewidth(at.linewidth);
  const std::string narrow = ts::format_tensor(ts::DType::Float32, shape, get);
  ts::set_print_linewidth(0);  // back to PyTorch's 80
  CHECK(narrow == ts::format_tensor(ts::DType::Float32, shape, get, at));
  CHECK(narrow != wide);
  CHECK(ts::print_linewidth() == ts::kTorchLineWidth);
}

TEST_CASE("print width: np.set_printoptions(linewidth=W) wraps as numpy does (article 004's tf.Tensor)", "[print]") {
  size_t n = 0, fails = 0;
  std::string first;
  for (const auto& c : width_cases().at("numpy")) {
    ts::Tensor t = ts::Tensor::from_shape(c.at("shape").get<std::vector<size_t>>());
    size_t i = 0;
    for (float& x : t) x = static_cast<float>(from_hex(c.at("values")[i++]));
    const std::string got = ts::np_array_str(t, c.at("linewidth").get<size_t>());
    ++n;
    if (got != c.at("printed").get<std::string>() && ++fails == 1) first = report(c, got);
  }
  INFO(n - fails << "/" << n << " array_str identical\n" << first);
  CHECK(n >= 70);
  CHECK(fails == 0);
  ts::set_np_linewidth(40);
  CHECK(ts::np_linewidth() == 40);
  ts::set_np_linewidth(0);
  CHECK(ts::np_linewidth() == ts::kNumpyLineWidth);
}
