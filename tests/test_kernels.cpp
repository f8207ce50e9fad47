// test_kernels.cpp: the row kernels against the live PyTorch (tests/twins/kernels_reference.py):
// 1.13 or 2.6, whichever the twin ran (its torch_version.txt), through that version's table.
//
// The twin writes inputs and torch's outputs as raw float32 into a temp dir; here both of
// our paths run on the same inputs:
//   Exact -> 0 mismatching bits required (NaN matches NaN), case by case;
//   Naive -> within 1e-5 * max(1, |torch|) (1e-4 for two LayerNorm cases where torch's
//            own rounding is that large; see the twin).
#include "catch_compat.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exact/kernels.hpp"
#include "exact/torch_version.hpp"
#include "reference_run.hpp"

namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name, op;
  int64_t rows = 0, n = 0;
  float eps = 0;
  double naive_tol = 1e-5;
  std::vector<float> x, y, gamma, beta;
};

Case read_case(std::istringstream& ss, const fs::path& dir) {
  Case c;
  ss >> c.name >> c.op >> c.rows >> c.n >> c.eps >> c.naive_tol;
  c.x = ts_test::read_f32(dir / (c.name + ".x.f32"));
  c.y = ts_test::read_f32(dir / (c.name + ".y.f32"));
  if (c.op == "layer_norm") {
    c.gamma = ts_test::read_f32(dir / (c.name + ".g.f32"));
    c.beta = ts_test::read_f32(dir / (c.name + ".b.f32"));
  }
  return c;
}

struct TwinRun {
  std::vector<Case> cases;
  std::string torch;  // the twin's torch.__version__, e.g. "1.13.0a0"
};

// torch's cases: the twin runs once per test binary, its temporary folder goes once they are read.
const TwinRun& twin_run() {
  static const TwinRun run = [] {
    const ts_test::ReferenceRun ref("kernels_reference.py");
    TwinRun r{ref.manifest_cases<Case>(read_case), ""};
    std::ifstream v(ref / "torch_version.txt");
    std::getline(v, r.torch);
    return r;
  }();
  return run;
}
const std::vector<Case>& twin_cases() { return twin_run().cases; }

// The exact kernels of the PyTorch the twin ran (a build reproduces one by default: TS_TORCH).
struct TorchGuard {
  explicit TorchGuard(ts::TorchVersion v) : old(ts::torch_version()) { ts::set_torch_version(v); }
  ~TorchGuard() { ts::set_torch_version(old); }
  ts::TorchVersion old;
};
ts::TorchVersion twin_torch() {
  const std::string& v = twin_run().torch;
  if (v.rfind("1.13.", 0) == 0) return ts::TorchVersion::V1_13;
  if (v.rfind("2.6.", 0) == 0) return ts::TorchVersion::V2_6;
  throw std::runtime_error("the twin ran PyTorch '" + v + "': the exact kernels reproduce 1.13 and 2.6 only");
}

// Runs one case through the table kernel_path() picks (ts::kernels()).
std::vector<float> run(const Case& c) {
  const bool reduces = c.op == "sum" || c.op == "mean";
  std::vector<float> y(static_cast<size_t>(reduces ? c.rows : c.rows * c.n));
  const ts::RowKernels& k = ts::kernels();
  if (c.op == "softmax") k.softmax_rows(c.x.data(), y.data(), c.rows, c.n);
  else if (c.op == "log_softmax") k.log_softmax_rows(c.x.data(), y.data(), c.rows, c.n);
  else if (c.op == "layer_norm")
    k.layer_norm_rows(c.x.data(), y.data(), c.rows, c.n, c.gamma.data(), c.beta.data(), c.eps);
  else if (c.op == "sum") k.sum_rows(c.x.data(), y.data(), c.rows, c.n);
  else if (c.op == "mean") k.mean_rows(c.x.data(), y.data(), c.rows, c.n);
  else if (c.op == "gelu") k.gelu(c.x.data(), y.data(), c.n);
  else if (c.op == "relu") k.relu(c.x.data(), y.data(), c.n);
  else throw std::runtime_error("unknown op " + c.op);
  return y;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

struct Diff {
  size_t bit_mismatches = 0;  // values whose bits differ (NaN vs NaN counts as equal)
  size_t tol_failures = 0;    // values off by more than tol * max(1, |torch|)
  double max_diff = 0;
  size_t first_bad = SIZE_MAX;
};

Diff compare(const std::vector<float>& ours, const std::vector<float>& ref, double tol) {
  Diff d;
  for (size_t i = 0; i < ref.size(); ++i) {
    const float a = ours[i], b = ref[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    const bool same = bits(a) == bits(b);
    if (!same) {
      ++d.bit_mismatches;
      if (d.first_bad == SIZE_MAX) d.first_bad = i;
    }
    const double diff = (std::isinf(a) && a == b) ? 0.0 : std::fabs(double(a) - double(b));
    if (std::isnan(diff) || diff > tol * std::max(1.0, std::fabs(double(b)))) ++d.tol_failures;
    if (!std::isnan(diff)) d.max_diff = std::max(d.max_diff, diff);
  }
  return d;
}

struct PathGuard {
  explicit PathGuard(ts::KernelPath p) : old(ts::kernel_path()) { ts::set_kernel_path(p); }
  ~PathGuard() { ts::set_kernel_path(old); }
  ts::KernelPath old;
};

}  // namespace

TEST_CASE("exact kernels match the installed torch bit for bit", "[kernels]") {
  PathGuard guard(ts::KernelPath::Exact);
  TorchGuard torch(twin_torch());
  INFO("PyTorch " << twin_run().torch << ", replayed by the " << ts::torch_version_name() << " kernels");
  REQUIRE(twin_cases().size() > 50);
  size_t bad_cases = 0;
  std::string report;
  for (const Case& c : twin_cases()) {
    const std::vector<float> y = run(c);
    REQUIRE(y.size() == c.y.size());
    const Diff d = compare(y, c.y, 0.0);
    if (d.bit_mismatches != 0) {
      ++bad_cases;
      const size_t i = d.first_bad;
      report += fmt::format("NOT OK {:<28} {}/{} values differ, max diff {:.3g}; first at {}: ours {:.9g} torch {:.9g}\n",
                            c.name, d.bit_mismatches, c.y.size(), d.max_diff, i, y[i], c.y[i]);
    }
  }
  INFO(report);
  CHECK(bad_cases == 0);
}

TEST_CASE("naive kernels are close to torch", "[kernels]") {
  PathGuard guard(ts::KernelPath::Naive);
  size_t bad_cases = 0, differing_cases = 0;
  std::string report;
  for (const Case& c : twin_cases()) {
    const std::vector<float> y = run(c);
    const Diff d = compare(y, c.y, c.naive_tol);
    if (d.bit_mismatches != 0) ++differing_cases;
    if (d.tol_failures != 0) {
      ++bad_cases;
      report += fmt::format("NOT OK {:<28} {}/{} values beyond {:g}, max diff {:.3g}\n", c.name,
                            d.tol_failures, c.y.size(), c.naive_tol, d.max_diff);
    }
  }
  INFO(report);
  CHECK(bad_cases == 0);
  // The naive path really is another computation: some cases differ in the last bits.
  CHECK(differing_cases > 0);
}

TEST_CASE("kernel Tensor wrappers work over the last dim", "[kernels]") {
  PathGuard guard(ts::KernelPath::Exact);
  ts::Tensor x = ts::zeros({2, 3, 4});
  for (size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i % 7) - 3.0f;

  const ts::Tensor s = ts::softmax(x);
  CHECK(ts::shape_of(s) == ts::Shape{2, 3, 4});
  std::vector<float> rows(6);
  ts::exact_kernels.sum_rows(s.data(), rows.data(), 6, 4);
  for (float r : rows) CHECK(r == Approx(1.0f).epsilon(1e-6));

  const ts::Tensor sum = ts::sum_lastdim(x);
  CHECK(ts::shape_of(sum) == ts::Shape{2, 3});
  CHECK(sum(0, 0) == -6.0f);  // -3 -2 -1 0
  CHECK(ts::shape_of(ts::mean_lastdim(x)) == ts::Shape{2, 3});
  CHECK(ts::mean_lastdim(x)(0, 0) == -1.5f);

  ts::Tensor gamma = ts::zeros({4});
  gamma.fill(1.0f);
  const ts::Tensor beta = ts::zeros({4});
  const ts::Tensor ln = ts::layer_norm(x, gamma, beta, 1e-5);
  CHECK(ts::shape_of(ln) == ts::Shape{2, 3, 4});
  CHECK(ts::mean_lastdim(ln)(1, 2) == Approx(0.0f).margin(1e-6));
  CHECK_THROWS(ts::layer_norm(x, ts::zeros({3}), beta, 1e-5));

  CHECK(ts::shape_of(ts::log_softmax(x)) == ts::Shape{2, 3, 4});
  const ts::Tensor r = ts::relu(x);
  CHECK(ts::shape_of(r) == ts::Shape{2, 3, 4});
  CHECK(r(0, 0, 0) == 0.0f);
  CHECK(r(0, 1, 0) == 1.0f);  // element 4 -> 4 % 7 - 3 = 1
  CHECK(ts::gelu(x)(0, 0, 3) == 0.0f);

  // a 0-d tensor is one row of length 1
  const ts::Tensor scalar = ts::Tensor(2.5f);
  CHECK(ts::softmax(scalar)() == 1.0f);
  CHECK(ts::sum_lastdim(scalar)() == 2.5f);
}

TEST_CASE("PyTorch 2.6's kernels are another computation than 1.13's where torch changed", "[kernels]") {
  // LayerNorm: 2.6 centres first, (x - mean) * rstd; around a large mean 1.13's
  // x * rstd - rstd * mean rounds otherwise
  const int64_t n = 37;
  std::vector<float> x(n), g(n), b(n), y(n), y13(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 1000.0f + 0.37f * static_cast<float>((i * 7) % 11) - 0.11f * static_cast<float>(i);
    g[i] = 0.5f + 0.01f * static_cast<float>(i);
    b[i] = -0.25f + 0.003f * static_cast<float>(i);
  }
  ts::exact_kernels_torch2.layer_norm_rows(x.data(), y.data(), 1, n, g.data(), b.data(), 1e-5f);
  ts::exact_kernels.layer_norm_rows(x.data(), y13.data(), 1, n, g.data(), b.data(), 1e-5f);
  size_t differ13 = 0;
  for (int64_t i = 0; i < n; ++i) differ13 += bits(y[i]) != bits(y13[i]);
  // around a large mean, 1.13's x * rstd - rstd * mean is another rounding
  CHECK(differ13 > 0);

  // softmax, log_softmax: the same bits as 1.13's on a CPU without AVX-512 (torch 2.6 runs its
  // AVX2 kernels there); with AVX-512 the row sums take 16 lanes and some rows differ in the last bit
  const int64_t rows = 64, m = 50;
  std::vector<float> s(rows * m), p26(rows * m), p13(rows * m);
  for (int64_t i = 0; i < rows * m; ++i) s[i] = std::sin(0.7f * static_cast<float>(i)) * 4.0f;
  size_t differ = 0;
  for (auto f : {&ts::RowKernels::softmax_rows, &ts::RowKernels::log_softmax_rows}) {
    (ts::exact_kernels_torch2.*f)(s.data(), p26.data(), rows, m);
    (ts::exact_kernels.*f)(s.data(), p13.data(), rows, m);
    for (int64_t i = 0; i < rows * m; ++i) differ += bits(p26[i]) != bits(p13[i]);
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  const char* cap = std::getenv("ATEN_CPU_CAPABILITY");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      !(cap && *cap && std::string(cap) != "avx512");
#else
  const bool avx512 = false;  // exact_kernels_torch2.cpp replays torch's AVX2 kernels off x86
#endif
  if (avx512) CHECK(differ > 0);
  else CHECK(differ == 0);
}
