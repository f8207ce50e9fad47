// test_matmul.cpp: matrix products, BLAS path against the naive loop and against live PyTorch 1.13.
//
// 1) BLAS vs naive: random shapes (1-row / 1-col edges, all transposes, padded leading
//    dims, strided and transposed views), |blas - naive| <= 1e-5 * sum_k |a||b|.
// 2) Bits: tests/twins/matmul_reference.py writes inputs and torch's outputs as raw
//    float32 into a temp dir; our Blas path must match every bit, case by case.
// 3) The process-wide switch really changes the path.
#include "catch_compat.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "exact/matmul.hpp"
#include "fast/blas_core.hpp"
#include "reference_run.hpp"

namespace {

namespace fs = std::filesystem;

// Restores the Blas path when a test leaves (even by a failed REQUIRE).
// Restores the path; holds OpenBLAS at the reference scripts' thread count (reference_run.hpp).
struct PathGuard {
  ts::MatmulPath saved = ts::matmul_path();
  ts_test::BlasThreadsPinned blas_threads;
  ~PathGuard() { ts::set_matmul_path(saved); }
};

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

// Column-major element of op(X) as gemm reads it.
float op_at(const std::vector<float>& x, bool trans, int64_t ld, int64_t i, int64_t j) {
  return trans ? x[size_t(j + i * ld)] : x[size_t(i + j * ld)];
}

// ---------------------------------------------------------------------------
// 1) BLAS vs naive
// ---------------------------------------------------------------------------

TEST_CASE("matmul: gemm BLAS path agrees with the naive loop", "[matmul]") {
  PathGuard guard;
  std::mt19937 rng(1234);
  const int64_t edge[] = {1, 2, 3, 17};
  int checked = 0;
  for (int trial = 0; trial < 120; ++trial) {
    // first trials sweep the 1-row / 1-col / k=1 edges, then random sizes
    const int64_t m = trial < 64 ? edge[trial % 4] : pick(rng, 1, 70);
    const int64_t n = trial < 64 ? edge[(trial / 4) % 4] : pick(rng, 1, 70);
    const int64_t k = trial < 64 ? edge[(trial / 16) % 4] : pick(rng, 1, 300);
    const bool ta = (trial & 1) != 0, tb = (trial & 2) != 0;
    const int64_t lda = (ta ? k : m) + pick(rng, 0, 3), ldb = (tb ? n : k) + pick(rng, 0, 3), ldc = m + pick(rng, 0, 3);
    const float alpha = trial % 3 == 0 ? 1.0f : 0.75f, beta = trial % 5 == 0 ? 0.0f : (trial % 5 == 1 ? 1.0f : -0.5f);
    const auto a = random_floats(rng, size_t(lda * (ta ? m : k)));
    const auto b = random_floats(rng, size_t(ldb * (tb ? k : n)));
    const auto c0 = random_floats(rng, size_t(ldc * n));
    auto c_blas = c0, c_naive = c0;
    ts::set_matmul_path(ts::MatmulPath::Blas);
    ts::gemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c_blas.data(), ldc);
    ts::set_matmul_path(ts::MatmulPath::Naive);
    ts::gemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c_naive.data(), ldc);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) {
        double scale = std::fabs(double(beta) * c0[size_t(i + j * ldc)]);
        for (int64_t l = 0; l < k; ++l)
          scale += std::fabs(double(alpha) * op_at(a, ta, lda, i, l) * op_at(b, tb, ldb, l, j));
        const float x = c_blas[size_t(i + j * ldc)], y = c_naive[size_t(i + j * ldc)];
        INFO(fmt::format("m={} n={} k={} ta={} tb={} alpha={} beta={} at ({},{})", m, n, k, ta, tb, alpha, beta, i, j));
        REQUIRE(std::fabs(double(x) - double(y)) <= 1e-5 * scale + 1e-30);
        ++checked;
      }
      for (int64_t i = m; i < ldc; ++i) REQUIRE(c_blas[size_t(i + j * ldc)] == c0[size_t(i + j * ldc)]);  // padding untouched
    }
  }
  CHECK(checked > 10000);
}

// A strided (rows,cols) view of a fresh buffer in one of four layouts:
// 0 row-major, 1 column-major, 2 every other element (neither stride 1), 3 row-major with padded rows.
struct Layout {
  std::vector<float> buf;
  int64_t rows, cols, rs, cs;
  Layout(std::mt19937& rng, int64_t r, int64_t c, int kind) : rows(r), cols(c) {
    switch (kind) {
      case 0: rs = c; cs = 1; break;
      case 1: rs = 1; cs = r; break;
      case 2: rs = 2 * c; cs = 2; break;
      default: rs = c + 3; cs = 1; break;
    }
    buf = random_floats(rng, size_t((r - 1) * rs + (c - 1) * cs + 1));
  }
  ts::MatView view() { return {buf.data(), rows, cols, rs, cs}; }
  ts::CMatView cview() const { return {buf.data(), rows, cols, rs, cs}; }
  float at(int64_t i, int64_t j) const { return buf[size_t(i * rs + j * cs)]; }
};

TEST_CASE("matmul: addmm_ on strided views, BLAS vs naive", "[matmul]") {
  PathGuard guard;
  std::mt19937 rng(99);
  for (int trial = 0; trial < 192; ++trial) {
    const int64_t M = trial % 3 == 0 ? 1 : pick(rng, 1, 40);
    const int64_t N = trial % 5 == 0 ? 1 : pick(rng, 1, 40);
    const int64_t K = trial % 7 == 0 ? 1 : pick(rng, 1, 90);
    const int kr = trial % 4, k1 = (trial / 4) % 4, k2 = (trial / 16) % 4;
    const float beta = trial % 2 ? 1.0f : 0.0f, alpha = 1.0f;
    Layout m1(rng, M, K, k1), m2(rng, K, N, k2);
    Layout r_blas(rng, M, N, kr);
    Layout r_naive = r_blas;
    const Layout r0 = r_blas;
    ts::set_matmul_path(ts::MatmulPath::Blas);
    ts::addmm_(r_blas.view(), m1.cview(), m2.cview(), beta, alpha);
    ts::set_matmul_path(ts::MatmulPath::Naive);
    ts::addmm_(r_naive.view(), m1.cview(), m2.cview(), beta, alpha);
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double exact = beta * double(r0.at(i, j)), scale = std::fabs(beta * double(r0.at(i, j)));
        for (int64_t l = 0; l < K; ++l) {
          exact += double(m1.at(i, l)) * m2.at(l, j);
          scale += std::fabs(double(m1.at(i, l)) * m2.at(l, j));
        }
        INFO(fmt::format("M={} N={} K={} layouts result={} m1={} m2={} beta={} at ({},{})", M, N, K, kr, k1, k2, beta, i, j));
        REQUIRE(std::fabs(r_blas.at(i, j) - r_naive.at(i, j)) <= 1e-5 * scale + 1e-30);
        REQUIRE(std::fabs(r_blas.at(i, j) - exact) <= 1e-5 * scale + 1e-30);
      }
    }
  }
}

TEST_CASE("matmul: bmm_ and tensor ops, BLAS vs naive", "[matmul]") {
  PathGuard guard;
  std::mt19937 rng(7);
  auto randn = [&](ts::Shape s) {
    ts::Tensor t = ts::Tensor::from_shape(s);
    for (auto& x : t) x = std::normal_distribution<float>(0.0f, 1.0f)(rng);
    return t;
  };
  auto both = [&](auto&& f) {
    ts::set_matmul_path(ts::MatmulPath::Blas);
    ts::Tensor x = f();
    ts::set_matmul_path(ts::MatmulPath::Naive);
    ts::Tensor y = f();
    REQUIRE(x.shape() == y.shape());
    for (size_t i = 0; i < x.size(); ++i) REQUIRE(std::fabs(x.data()[i] - y.data()[i]) <= 1e-5f * std::max(1.0f, std::fabs(y.data()[i])));
  };
  for (int trial = 0; trial < 30; ++trial) {
    const size_t B = size_t(pick(rng, 1, 4)), M = size_t(pick(rng, 1, 12)), K = size_t(pick(rng, 1, 40)),
                 N = size_t(pick(rng, 1, 12));
    const ts::Tensor a = randn({B, M, K}), b = randn({B, K, N}), bt = randn({B, N, K});
    both([&] { return ts::bmm(a, b); });
    both([&] { return ts::bmm_nt(a, bt); });
    both([&] { return ts::matmul(a, b); });
    const ts::Tensor w = randn({N, K}), bias = randn({N});
    both([&] { return ts::linear(a, w, &bias); });
    both([&] { return ts::linear(a, w, nullptr); });
  }
  const ts::Tensor q = randn({2, 5, 64}), k = randn({2, 6, 64});
  both([&] { return ts::matmul_heads_qk(q, k, 4); });
  const ts::Tensor p = randn({2, 4, 5, 6});
  both([&] { return ts::matmul_heads_pv(p, k); });

  // shapes and contract errors
  CHECK(ts::shape_of(ts::matmul_heads_qk(q, k, 4)) == ts::Shape{2, 4, 5, 6});
  CHECK(ts::shape_of(ts::matmul_heads_pv(p, k)) == ts::Shape{2, 4, 5, 16});
  CHECK(ts::shape_of(ts::matmul(randn({2, 1, 3, 4}), randn({5, 4, 6}))) == ts::Shape{2, 5, 3, 6});
  CHECK_THROWS_AS(ts::bmm(randn({2, 3, 4}), randn({2, 5, 6})), std::invalid_argument);
  CHECK_THROWS_AS(ts::matmul(randn({2, 3, 4}), randn({3, 4, 6})), std::invalid_argument);
  CHECK_THROWS_AS(ts::matmul_heads_qk(q, k, 5), std::invalid_argument);
  CHECK_THROWS_AS(ts::gemm('X', 'N', 1, 1, 1, 1.0f, nullptr, 1, nullptr, 1, 0.0f, nullptr, 1), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// 2) Bits against live torch
// ---------------------------------------------------------------------------

ts::Tensor read_f32(const nlohmann::json& spec) {
  ts::Shape shape;
  for (const auto& s : spec["shape"]) shape.push_back(s.get<size_t>());
  ts::Tensor t = ts::Tensor::from_shape(shape);
  const std::string path = spec["file"].get<std::string>();
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  f.read(reinterpret_cast<char*>(t.data()), std::streamsize(t.size() * sizeof(float)));
  if (size_t(f.gcount()) != t.size() * sizeof(float)) throw std::runtime_error("short file " + path);
  return t;
}

// Runs the twin once per test binary; the temp dir is removed at exit.
struct Twin {
  ts_test::ReferenceRun run{"matmul_reference.py"};  // torch writes its tensors into run.dir()
  fs::path dir = run.dir();
  nlohmann::json manifest;
  Twin() {
    std::ifstream m(dir / "manifest.json");
    manifest = nlohmann::json::parse(m);
  }
};

const Twin& twin() {
  static const Twin t;
  return t;
}

// Our result for one manifest case, on the current path.
ts::Tensor run_case(const nlohmann::json& c) {
  std::vector<ts::Tensor> in;
  for (const auto& spec : c["inputs"]) in.push_back(read_f32(spec));
  const std::string op = c["op"];
  if (op == "linear") return ts::linear(in[0], in[1], in.size() > 2 ? &in[2] : nullptr);
  if (op == "bmm") return ts::bmm(in[0], in[1]);
  if (op == "bmm_nt") return ts::bmm_nt(in[0], in[1]);
  if (op == "matmul") return ts::matmul(in[0], in[1]);
  if (op == "heads_qk") return ts::matmul_heads_qk(in[0], in[1], c["H"].get<int64_t>());
  if (op == "heads_pv") return ts::matmul_heads_pv(in[0], in[1]);
  throw std::runtime_error("unknown op " + op);
}

struct Diff {
  size_t bits = 0;        // values whose bits differ
  double max_rel = 0.0;   // largest |ours - torch| / max(1, |torch|)
};

Diff compare(const ts::Tensor& ours, const ts::Tensor& ref) {
  Diff d;
  for (size_t i = 0; i < ref.size(); ++i) {
    const float x = ours.data()[i], y = ref.data()[i];
    uint32_t bx, by;
    std::memcpy(&bx, &x, 4);
    std::memcpy(&by, &y, 4);
    if (bx != by) ++d.bits;
    d.max_rel = std::max(d.max_rel, std::fabs(double(x) - double(y)) / std::max(1.0, std::fabs(double(y))));
  }
  return d;
}

TEST_CASE("matmul: bit-exact against live PyTorch", "[matmul]") {
  PathGuard guard;
  ts::set_matmul_path(ts::MatmulPath::Blas);
  const auto& cases = twin().manifest["cases"];
  REQUIRE(cases.size() >= 30);
  size_t all_ok = 0;
  for (const auto& c : cases) {
    const std::string name = c["name"];
    const ts::Tensor ref = read_f32(c["output"]);
    const ts::Tensor ours = run_case(c);
    REQUIRE(ts::shape_of(ours) == ts::shape_of(ref));
    const Diff d = compare(ours, ref);
    fmt::print("  {:<6} {:<28} {:>7} values, {} differ in bits, max rel diff {:.3g}\n", d.bits == 0 ? "OK" : "NOT OK",
               name, ref.size(), d.bits, d.max_rel);
    INFO(name);
    CHECK(d.bits == 0);
    if (d.bits == 0) ++all_ok;
  }
  fmt::print("  matmul twin: {} of {} cases bit-exact\n", all_ok, cases.size());
}

// ---------------------------------------------------------------------------
// 3) The switch
// ---------------------------------------------------------------------------

TEST_CASE("matmul: the process-wide path switch", "[matmul]") {
  PathGuard guard;
  ts::set_matmul_path(ts::MatmulPath::Naive);
  CHECK(ts::matmul_path() == ts::MatmulPath::Naive);
  // The FFN-sized linear: K = 768 summed in another order must land off by a last bit
  // somewhere, yet stay close; back on Blas it is bit-exact again.
  const nlohmann::json* big = nullptr;
  for (const auto& c : twin().manifest["cases"])
    if (c["name"] == "linear_1x5x768_to_3072") big = &c;
  REQUIRE(big != nullptr);
  const ts::Tensor ref = read_f32((*big)["output"]);
  const Diff naive = compare(run_case(*big), ref);
  fmt::print("  naive path on {}: {} of {} values differ in bits, max rel diff {:.3g}\n",
             (*big)["name"].get<std::string>(), naive.bits, ref.size(), naive.max_rel);
  CHECK(naive.bits > 0);
  CHECK(naive.max_rel < 1e-5);
  ts::set_matmul_path(ts::MatmulPath::Blas);
  CHECK(ts::matmul_path() == ts::MatmulPath::Blas);
  CHECK(compare(run_case(*big), ref).bits == 0);
}

TEST_CASE("matmul: few-row products, close to sgemm's", "[matmul]") {
  PathGuard guard;
  std::mt19937 rng(31);
  for (int64_t rows : {1, 2, 3, 8})
    for (int64_t in_f : {1, 7, 8, 17, 64, 256})
      for (int64_t out_f : {1, 5, 8, 13, 64, 100}) {
        const std::vector<float> x = random_floats(rng, size_t(rows * in_f)), w = random_floats(rng, size_t(out_f * in_f)),
                                 bias = random_floats(rng, size_t(out_f));
        std::vector<float> got(size_t(rows * out_f));
        ts::few_rows_linear(x.data(), rows, in_f, w.data(), out_f, bias.data(), got.data());
        // and close to the sgemm path linear() takes without the scope
        ts::Tensor xt = ts::Tensor::from_shape({size_t(rows), size_t(in_f)}), wt = ts::Tensor::from_shape({size_t(out_f), size_t(in_f)}),
                   bt = ts::Tensor::from_shape({size_t(out_f)});
        std::copy(x.begin(), x.end(), xt.data());
        std::copy(w.begin(), w.end(), wt.data());
        std::copy(bias.begin(), bias.end(), bt.data());
        const ts::Tensor blas = ts::linear(xt, wt, &bt);
        ts::Tensor few;
        {
          const ts::FewRowsProducts scope;
          CHECK(ts::few_rows_products());
          few = ts::linear(xt, wt, &bt);
        }
        CHECK_FALSE(ts::few_rows_products());
        for (size_t i = 0; i < few.size(); ++i) {
          CHECK(few.data()[i] == got[i]);
          // two summation orders of the same in_f + 1 terms: each within in_f + 1 float epsilons
          // of |bias| + sum |w||x| of the exact value (the classic worst-case bound)
          const size_t r = i / size_t(out_f), j = i % size_t(out_f);
          double mass = std::abs(double(bias[j]));
          for (int64_t l = 0; l < in_f; ++l)
            mass += std::abs(double(w[j * size_t(in_f) + size_t(l)]) * double(x[r * size_t(in_f) + size_t(l)]));
          CHECK(std::abs(double(few.data()[i]) - double(blas.data()[i])) <= 2.0 * double(in_f + 1) * 1.2e-7 * mass);
        }
      }
  CHECK_THROWS(ts::few_rows_linear(nullptr, ts::kFewRows + 1, 1, nullptr, 1, nullptr, nullptr));
}

// a parallel-for that runs its chunks last to first (3 of them, as a pool's threads might finish)
static void reversed_chunks(int64_t n, int64_t grain, void (*body)(void*, int64_t, int64_t), void* ctx) {
  CHECK(grain >= 1);
  const int64_t parts = 3;
  for (int64_t c = parts - 1; c >= 0; --c) body(ctx, n * c / parts, n * (c + 1) / parts);
}

TEST_CASE("matmul: a wide few-row product split over threads gives the same bits", "[matmul]") {
  std::mt19937 rng(32);
  // wide enough to be split (kFewRowsSplit), with out_f not a multiple of 8 and in_f not of 8
  for (int64_t rows : {1, 3})
    for (auto [in_f, out_f] : {std::pair<int64_t, int64_t>{288, 1003}, {131, 1017}, {64, 2048}}) {
      REQUIRE(in_f * out_f >= ts::kFewRowsSplit);
      const std::vector<float> x = random_floats(rng, size_t(rows * in_f)), w = random_floats(rng, size_t(out_f * in_f)),
                               bias = random_floats(rng, size_t(out_f));
      std::vector<float> alone(size_t(rows * out_f)), split(size_t(rows * out_f));
      ts::set_few_rows_parallel(nullptr);
      ts::few_rows_linear(x.data(), rows, in_f, w.data(), out_f, bias.data(), alone.data());
      ts::set_few_rows_parallel(&reversed_chunks);
      ts::few_rows_linear(x.data(), rows, in_f, w.data(), out_f, bias.data(), split.data());
      ts::set_few_rows_parallel(nullptr);
      CHECK(std::memcmp(alone.data(), split.data(), alone.size() * sizeof(float)) == 0);
    }
}

}  // namespace

namespace {
// ---------------------------------------------------------------------------
// 4) Which OpenBLAS kernel runs (matmul.hpp, choose_blas_core; twin_compare.py mirrors it)
// ---------------------------------------------------------------------------
TEST_CASE("matmul: the OpenBLAS core rule", "[matmul]") {
  using ts::Isa;
  // an explicit OPENBLAS_CORETYPE always wins
  CHECK(ts::choose_blas_core("Prescott", "Prescott", Isa::Avx512).core.empty());
  CHECK(ts::choose_blas_core("Zen", "Haswell", Isa::Avx2).core.empty());
  // AVX-512 CPU: anything without AVX-512 kernels becomes SkylakeX
  CHECK(ts::choose_blas_core("Haswell", nullptr, Isa::Avx512).core == "SkylakeX");
  CHECK(ts::choose_blas_core("Prescott", "", Isa::Avx512).core == "SkylakeX");
  CHECK(ts::choose_blas_core("Cooperlake", nullptr, Isa::Avx512).core.empty());
  // AVX2 CPU: an unknown one gets Prescott (SSE3) from OpenBLAS 0.3.21: Haswell instead
  CHECK(ts::choose_blas_core("Prescott", nullptr, Isa::Avx2).core == "Haswell");
  CHECK(ts::choose_blas_core("Sandybridge", nullptr, Isa::Avx2).core == "Haswell");
  CHECK(ts::choose_blas_core("Zen", nullptr, Isa::Avx2).core.empty());
  CHECK(ts::choose_blas_core("Haswell", nullptr, Isa::Avx2).core.empty());
  // no AVX2: OpenBLAS's own pick
  CHECK(ts::choose_blas_core("Prescott", nullptr, Isa::Scalar).core.empty());
  // the reason names what happened
  CHECK(ts::choose_blas_core("Prescott", nullptr, Isa::Avx2).reason.find("switched to Haswell") != std::string::npos);
  // this process: the rule ran before main() and OpenBLAS runs what it said
  if (!ts::blas_core().empty() && !std::getenv("OPENBLAS_CORETYPE"))
    CHECK(ts::blas_core_reason() != "not chosen yet");
}
}  // namespace
