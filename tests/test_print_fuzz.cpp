// test_print_fuzz.cpp: str(tensor) against live torch on random cases (test_print.cpp has the
// corpus and the transcripts): ~300 random tensors, plus floats, sizes and module reprs, printed
// here and by tests/twins/print_reference.py; TS_PRINT_FUZZ_SEED varies them.
#include "catch_compat.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exact/print.hpp"
#include "exact/tfprint.hpp"
#include "exact/torch_version.hpp"

using nlohmann::json;

#include "print_test_helpers.hpp"

using print_test::hexf;
using print_test::mismatch;
using print_test::read_text;
using print_test::TorchVersionScope;

// ---------------------------------------------------------------------------------------
// 3) fuzz against live torch
namespace {

struct FuzzCase {
  ts::DType dtype;
  std::vector<size_t> shape;
  std::vector<double> fvals;   // float dtypes (already rounded to float for float32)
  std::vector<int64_t> ivals;  // integer dtypes and bool
  ts::PrintMeta meta;
};

const char* dtype_key(ts::DType d) {
  switch (d) {
    case ts::DType::Float32: return "float32";
    case ts::DType::Float64: return "float64";
    case ts::DType::Int64: return "int64";
    case ts::DType::Int32: return "int32";
    case ts::DType::UInt8: return "uint8";
    case ts::DType::Bool: return "bool";
  }
  return "?";
}

// A random shape: small (dims 0..7) or with numel near / above the 1000-element threshold.
std::vector<size_t> random_shape(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> u(0, 99);
  const size_t rank = static_cast<size_t>(u(rng) % 5);
  std::vector<size_t> shape(rank);
  if (rank == 0) return shape;
  if (u(rng) < 55) {
    for (auto& d : shape) d = static_cast<size_t>(u(rng) < 4 ? 0 : 1 + u(rng) % 7);
    return shape;
  }
  static const size_t targets[] = {995, 1000, 1001, 1002, 1008, 1024, 1100, 1500, 2000, 3000, 4800};
  const size_t target = targets[static_cast<size_t>(u(rng)) % 11];
  size_t prod = 1;
  for (size_t d = 0; d + 1 < rank; ++d) {
    const int draw = u(rng);  // two draws, one statement each: the same shapes under every compiler
    shape[d] = static_cast<size_t>(1 + draw % (u(rng) < 30 ? 3 : 12));
    prod *= shape[d];
  }
  shape[rank - 1] = std::max<size_t>(1, (target + prod - 1) / prod);
  std::shuffle(shape.begin(), shape.end(), rng);
  return shape;
}

// One random float in the given style: scales 1e-6..1e9, integers, specials, ties, boundaries.
double random_float(std::mt19937_64& rng, int style, double scale) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  switch (style) {
    case 0: return normal(rng) * scale;
    case 1: return std::round(normal(rng) * scale);
    case 2: {  // a mix of everything
      const int k = static_cast<int>(unit(rng) * 10);
      if (k == 0) return 0.0;
      if (k == 1) return -0.0;
      if (k == 2) return unit(rng) < 0.5 ? inf : -inf;
      if (k == 3) return unit(rng) < 0.5 ? std::nan("") : -std::nan("");
      if (k == 4) return std::round(normal(rng) * 100);
      const double mantissa = normal(rng);  // drawn before the exponent, whatever the compiler
      return mantissa * std::pow(10.0, -6.0 + 15.0 * unit(rng));
    }
    case 3: return std::round(normal(rng) * 4096) / 64.0;  // exact 4-decimal ties (x.xxxx5)
    case 4: {  // only zeros and non-finite values
      const int k = static_cast<int>(unit(rng) * 5);
      return k == 0 ? 0.0 : k == 1 ? -0.0 : k == 2 ? inf : k == 3 ? -inf : -std::nan("");
    }
    default: {  // the mode boundaries of the formatter
      static const double edges[] = {1.0,     1000.0, 1000.5, 1e-4,   9.9999e-5,   1e8,     1e8 + 8,
                                     99999999, 0.5,   -0.5,   0.0001, 123456789.0, 1e-6,    -1000.0,
                                     0.0,     -0.0,   2.0,    3.0,    999.9999,    0.99995, 12345.678};
      const double edge = edges[static_cast<size_t>(unit(rng) * 21) % 21];  // then the sign's draw
      return edge * (unit(rng) < 0.2 ? -1.0 : 1.0);
    }
  }
}

FuzzCase random_case(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> u(0, 99);
  FuzzCase c;
  const int d = u(rng);
  c.dtype = d < 55   ? ts::DType::Float32
            : d < 63 ? ts::DType::Float64
            : d < 78 ? ts::DType::Int64
            : d < 84 ? ts::DType::Int32
            : d < 89 ? ts::DType::UInt8
                     : ts::DType::Bool;
  c.shape = random_shape(rng);
  size_t n = 1;
  for (size_t s : c.shape) n *= s;
  if (c.dtype == ts::DType::Float32 || c.dtype == ts::DType::Float64) {
    const int style = u(rng) % 6;
    const double scale = std::pow(10.0, -6.0 + 15.0 * (u(rng) / 99.0));
    for (size_t i = 0; i < n; ++i) {
      double v = random_float(rng, style, scale);
      if (c.dtype == ts::DType::Float32) v = static_cast<double>(static_cast<float>(v));
      c.fvals.push_back(v);
    }
    const int m = u(rng);
    if (m < 15) c.meta.requires_grad = true;
    else if (m < 22) c.meta.grad_fn = "ViewBackward0";
    else if (m < 29) c.meta.grad_fn = "MulBackward0";
    else if (m < 33) c.meta.grad_fn = "CloneBackward0";
  } else {
    const double mag = std::pow(10.0, 18.0 * (u(rng) / 99.0));
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (size_t i = 0; i < n; ++i) {
      int64_t v = 0;
      if (c.dtype == ts::DType::Bool) v = u(rng) < 50;
      else if (c.dtype == ts::DType::UInt8) v = u(rng) * 255 / 99;
      else if (c.dtype == ts::DType::Int32) v = static_cast<int64_t>(unit(rng) * std::min(mag, 2147483647.0));
      else v = static_cast<int64_t>(unit(rng) * std::min(mag, 9.2e18));
      c.ivals.push_back(v);
    }
  }
  return c;
}

// Hand-made edge cases: the formatter's limits (ratio 1000, 1e8, 1e-4), signed zeros and nans.
std::vector<FuzzCase> edge_cases() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<std::vector<double>> rows = {
      {1, 1000},        {1, 1000.5},    {1.5, 1500},      {1.5, 1500.5},  {1e-4},          {1e-4, 0.5},
      {9.9999e-5, 1},   {1e8},          {1e8 + 8},        {1e8, 1},       {100000000.5},   {0, -inf},
      {0, 0},           {-0.0},         {-0.0, 1},        {-0.0, 0.5},    {-nan, nan, 1},  {-nan},
      {inf, -inf, nan}, {0.5, 1.5, 2.5}, {0.03125, 0.09375}, {-0.00005, 0.5}, {12345678, 0.5}, {1e-5, inf}};
  std::vector<FuzzCase> cases;
  for (const auto& r : rows)
    for (ts::DType dt : {ts::DType::Float32, ts::DType::Float64}) {
      FuzzCase c{dt, {r.size()}, {}, {}, {}};
      for (double v : r) c.fvals.push_back(dt == ts::DType::Float32 ? static_cast<double>(static_cast<float>(v)) : v);
      cases.push_back(c);
      if (r.size() == 1) {  // and as a 0-d tensor
        c.shape.clear();
        cases.push_back(c);
      }
    }
  return cases;
}

// Our printer, through the typed overloads where there is one.
std::string our_print(const FuzzCase& c) {
  switch (c.dtype) {
    case ts::DType::Float32: {
      ts::Tensor t = ts::Tensor::from_shape(c.shape);
      for (size_t i = 0; i < c.fvals.size(); ++i) t.data()[i] = static_cast<float>(c.fvals[i]);
      return ts::str(t, c.meta);
    }
    case ts::DType::Int64: {
      ts::ITensor t = ts::ITensor::from_shape(c.shape);
      for (size_t i = 0; i < c.ivals.size(); ++i) t.data()[i] = c.ivals[i];
      return ts::str(t, c.meta);
    }
    case ts::DType::Bool: {
      ts::BTensor t = ts::BTensor::from_shape(c.shape);
      for (size_t i = 0; i < c.ivals.size(); ++i) t.data()[i] = c.ivals[i] != 0;
      return ts::str(t, c.meta);
    }
    case ts::DType::Float64:
      return ts::format_tensor(c.dtype, c.shape, [&](size_t i) { return c.fvals[i]; }, c.meta);
    default:  // int32 (exact as double) through the double entry, uint8 through the int one
      if (c.dtype == ts::DType::Int32)
        return ts::format_tensor(c.dtype, c.shape, [&](size_t i) { return static_cast<double>(c.ivals[i]); }, c.meta);
      return ts::format_tensor_int(c.dtype, c.shape, [&](size_t i) { return c.ivals[i]; }, c.meta);
  }
}

json to_request(const FuzzCase& c) {
  json j = {{"dtype", dtype_key(c.dtype)}, {"shape", c.shape}};
  json vals = json::array();
  for (double v : c.fvals) vals.push_back(hexf(v));
  for (int64_t v : c.ivals) {
    if (c.dtype == ts::DType::Bool) vals.push_back(v != 0);
    else vals.push_back(v);
  }
  j["values"] = vals;
  if (c.meta.requires_grad) j["requires_grad"] = true;
  if (!c.meta.grad_fn.empty()) j["grad_fn"] = c.meta.grad_fn;
  return j;
}

// Random module specs for the twin, with the same module built here.
std::pair<json, ts::ModuleRepr> random_module(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> u(0, 99);
  static const double eps[] = {1e-5, 1e-12, 1e-6, 0.001, 0.1, 2.5e-7};
  static const double ps[] = {0.1, 0.5, 0.0, 0.25, 1.0 / 3.0, 0.15};
  const int k = depth >= 2 ? u(rng) % 7 : u(rng) % 9;
  switch (k) {
    case 0: {
      const int64_t in = 1 + u(rng) * 37, out = 1 + u(rng) * 11;
      const bool bias = u(rng) < 70;
      return {{{"kind", "linear"}, {"in", in}, {"out", out}, {"bias", bias}}, ts::linear_repr(in, out, bias)};
    }
    case 1: {
      const int64_t n = 1 + u(rng) * 300, d = 1 + u(rng) * 8;
      if (u(rng) < 50) return {{{"kind", "embedding"}, {"n", n}, {"d", d}}, ts::embedding_repr(n, d)};
      const int64_t pad = u(rng) % n;
      return {{{"kind", "embedding"}, {"n", n}, {"d", d}, {"padding_idx", pad}}, ts::embedding_repr(n, d, pad)};
    }
    case 2: {
      const int64_t d = 1 + u(rng) * 10;
      const double e = eps[u(rng) % 6];
      return {{{"kind", "layer_norm"}, {"d", d}, {"eps", hexf(e)}}, ts::layer_norm_repr(d, e)};
    }
    case 3: {
      const double p = ps[u(rng) % 6];
      return {{{"kind", "dropout"}, {"p", hexf(p)}}, ts::dropout_repr(p)};
    }
    case 4: return {{{"kind", "gelu"}}, ts::gelu_repr()};
    case 5: return {{{"kind", "relu"}}, ts::relu_repr()};
    case 6: {
      const int dim = u(rng) % 5 - 2;
      return {{{"kind", "softmax"}, {"dim", dim}}, ts::softmax_repr(dim)};
    }
    case 7: {
      json items = json::array();
      std::vector<ts::ModuleRepr> reprs;
      for (int i = 0, n = u(rng) % 6; i < n; ++i) {
        if (!reprs.empty() && u(rng) < 40) {  // a run of equal children (collapsed by torch 2.x)
          items.push_back(items.back());
          reprs.push_back(reprs.back());
          continue;
        }
        auto [j, r] = random_module(rng, depth + 1);
        items.push_back(j);
        reprs.push_back(r);
      }
      return {{{"kind", "list"}, {"items", items}}, ts::module_list_repr(reprs)};
    }
    default: {
      static const char* names[] = {"Block", "AttentionHead", "Encoder", "Sublayer"};
      static const char* keys[] = {"q", "layer_norm", "ff", "dropout", "heads"};
      ts::ModuleRepr m{names[u(rng) % 4], "", {}};
      json children = json::array();
      for (int i = 0, n = u(rng) % 4; i < n; ++i) {
        const std::string key = std::string(keys[u(rng) % 5]) + std::to_string(i);
        auto [j, r] = random_module(rng, depth + 1);
        children.push_back(json::array({key, j}));
        m.children.emplace_back(key, r);
      }
      return {{{"kind", "custom"}, {"name", m.name}, {"children", children}}, m};
    }
  }
}

// Runs the twin on a request and returns its answer.
json run_twin(const json& request) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = "ts_print_" + std::to_string(::getpid());
  const std::string in = (dir / (tag + "_in.json")).string(), out = (dir / (tag + "_out.json")).string();
  std::ofstream(in) << request.dump();
  const std::string cmd = "/usr/bin/python3 " + std::string(TS_SOURCE_DIR) + "/tests/twins/print_reference.py " + in +
                          " " + out;
  const int rc = std::system(cmd.c_str());
  std::remove(in.c_str());
  if (rc != 0) throw std::runtime_error("twin failed (rc " + std::to_string(rc) + "): " + cmd);
  const json answer = json::parse(read_text(out));
  std::remove(out.c_str());
  return answer;
}

}  // namespace

TEST_CASE("print: fuzz against live torch (tensors, floats, sizes, modules)", "[print]") {
  const char* seed_env = std::getenv("TS_PRINT_FUZZ_SEED");
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : 20240613u;
  std::mt19937_64 rng(seed);
  INFO("seed " << seed << " (set TS_PRINT_FUZZ_SEED to vary)");

  // tensors
  std::vector<FuzzCase> cases;
  json request = {{"tensors", json::array()}, {"floats", json::array()}, {"sizes", json::array()},
                  {"modules", json::array()}};
  cases = edge_cases();
  for (int i = 0; i < 300; ++i) cases.push_back(random_case(rng));
  for (const auto& c : cases) request["tensors"].push_back(to_request(c));
  // floats: the spec's examples, specials, random decimals and random bit patterns
  std::vector<double> floats = {27.712812921102035, 1e-05, 0.1, 768.0, 1e-12, 0.5, 1e16, 1e15, 1e22, 0.0001,
                                123456789012345678.0, 5e-324, 1.7976931348623157e308, -0.0, 0.0,
                                std::numeric_limits<double>::infinity(), -2.5e-7, 1.0 / 3.0, 9999999999999998.0};
  std::uniform_int_distribution<uint64_t> bits;
  std::uniform_int_distribution<int> small(-25, 25);
  for (int i = 0; i < 150; ++i) {
    uint64_t b = bits(rng);
    double v;
    std::memcpy(&v, &b, sizeof v);
    if (std::isfinite(v)) floats.push_back(v);
    const int digits = small(rng);  // drawn before the exponent, whatever the compiler
    floats.push_back(static_cast<double>(digits * 37 + 1) * std::pow(10.0, small(rng)));
  }
  for (double v : floats) request["floats"].push_back(hexf(v));
  // sizes
  std::vector<std::vector<size_t>> sizes;
  for (int i = 0; i < 20; ++i) {
    std::vector<size_t> s(static_cast<size_t>(i % 5));
    for (auto& d : s) d = static_cast<size_t>(small(rng) + 25) * 40;
    sizes.push_back(s);
    request["sizes"].push_back(s);
  }
  // modules
  std::vector<ts::ModuleRepr> modules;
  for (int i = 0; i < 120; ++i) {
    auto [j, r] = random_module(rng, 0);
    request["modules"].push_back(j);
    modules.push_back(r);
  }

  // float32 arrays as numpy.array_str shows them (article 004's TensorFlow prints): the
  // float32 fuzz cases that are not summarised by numpy (<= 1000 values)
  std::vector<size_t> np_cases;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (c.dtype != ts::DType::Float32 || c.shape.empty() || c.fvals.empty() || c.fvals.size() > 1000) continue;
    json a = {{"shape", c.shape}, {"values", json::array()}};
    for (double v : c.fvals) a["values"].push_back(hexf(v));
    request["np_arrays"].push_back(a);
    np_cases.push_back(i);
  }

  const json answer = run_twin(request);
  REQUIRE(answer.at("tensors").size() == cases.size());

  size_t fails = 0, summarized = 0;
  std::string report;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string expected = answer["tensors"][i].get<std::string>();
    const std::string got = our_print(cases[i]);
    if (expected.find("...") != std::string::npos) ++summarized;
    if (got != expected && ++fails <= 5)
      report += mismatch(std::to_string(i) + " " + to_request(cases[i]).dump().substr(0, 300), expected, got);
  }
  INFO(cases.size() - fails << "/" << cases.size() << " tensors identical (" << summarized << " summarized)\n"
                            << report);
  CHECK(summarized >= 30);  // the fuzz really straddles the threshold
  CHECK(fails == 0);

  for (size_t i = 0; i < floats.size(); ++i) {
    INFO("float " << hexf(floats[i]));
    CHECK(ts::py_float(floats[i]) == answer["floats"][i].get<std::string>());
  }
  for (size_t i = 0; i < sizes.size(); ++i) CHECK(ts::size_str(sizes[i]) == answer["sizes"][i].get<std::string>());
  for (size_t i = 0; i < modules.size(); ++i) CHECK(modules[i].str() == answer["modules"][i].get<std::string>());
  // the default mode's collapsed reprs: torch 2.x's ModuleList.__repr__, run by the twin
  // (counted against torch 1.13's expanded form: under a live torch 2.x "modules" is collapsed too)
  size_t collapsed = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string expected = answer["modules_collapsed"][i].get<std::string>();
    CHECK(modules[i].str_collapsed() == expected);
    const TorchVersionScope torch_1_13(ts::TorchVersion::V1_13);
    collapsed += expected != modules[i].str();
  }
  CHECK(collapsed >= 3);  // the fuzz really has runs to collapse

  REQUIRE(answer.at("np_arrays").size() == np_cases.size());
  CHECK(np_cases.size() >= 50);
  size_t np_fails = 0;
  std::string np_report;
  for (size_t j = 0; j < np_cases.size(); ++j) {
    const auto& c = cases[np_cases[j]];
    ts::Tensor t = ts::Tensor::from_shape(c.shape);
    std::transform(c.fvals.begin(), c.fvals.end(), t.begin(), [](double v) { return static_cast<float>(v); });
    const std::string expected = answer["np_arrays"][j].get<std::string>(), got = ts::np_array_str(t);
    if (got != expected && ++np_fails <= 5) np_report += mismatch("np " + std::to_string(np_cases[j]), expected, got);
  }
  INFO(np_cases.size() - np_fails << "/" << np_cases.size() << " numpy.array_str identical\n" << np_report);
  CHECK(np_fails == 0);
}

