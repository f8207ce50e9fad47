// test_rng.cpp: src/exact/rng.cpp against live PyTorch 1.13.1, bit for bit.
//
// tests/twins/rng_reference.py runs a list of probes in torch and dumps the raw
// bits; here the same probes run in C++ and every element must have the same bits
// (so -0.0 vs 0.0 and 1-ulp differences all count). Run: ts_tests "[rng]"
#include "catch_compat.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "exact/rng.hpp"

namespace fs = std::filesystem;
using namespace ts;

namespace {

// ---- one output of a probe: dtype name (numpy's), shape, raw little-endian bytes ----
struct Out {
  std::string dtype;
  Shape shape;
  std::vector<char> bytes;
};

template <class T>
Out make_out(const char* dtype, const Shape& shape, const T* data, size_t n) {
  Out o{dtype, shape, std::vector<char>(n * sizeof(T))};
  if (n > 0) std::memcpy(o.bytes.data(), data, n * sizeof(T));
  return o;
}
Out f32(const Tensor& t) { return make_out("float32", shape_of(t), t.data(), t.size()); }
Out i64(const ITensor& t) { return make_out("int64", shape_of(t), t.data(), t.size()); }
Out f64(const std::vector<double>& v, const Shape& shape) { return make_out("float64", shape, v.data(), v.size()); }

// float64 helpers (the course's Tensor is float32; these mirror dtype=torch.float64)
std::vector<double> randn64(size_t n, double mean = 0.0, double stdv = 1.0) {
  std::vector<double> v(n);
  normal_(v.data(), n, mean, stdv);
  return v;
}
std::vector<double> uniform64(size_t n, double from = 0.0, double to = 1.0) {
  std::vector<double> v(n);
  uniform_(v.data(), n, from, to);
  return v;
}
Tensor empty(const Shape& shape) { return Tensor::from_shape(shape); }
Tensor normal(const Shape& shape, double mean, double stdv) {
  Tensor t = empty(shape);
  normal_(t, mean, stdv);
  return t;
}
Tensor uniform(const Shape& shape, double from, double to) {
  Tensor t = empty(shape);
  uniform_(t, from, to);
  return t;
}
// nn.Linear(in, out): weight (out,in) then bias (out)
std::vector<Out> linear(size_t in, size_t out, bool with_bias = true) {
  Tensor w = empty({out, in});
  Tensor b = empty({out});
  init_linear_(w, with_bias ? &b : nullptr);
  if (!with_bias) return {f32(w)};
  return {f32(w), f32(b)};
}
Tensor embedding(size_t n, size_t d, std::optional<int64_t> padding_idx = {}) {
  Tensor w = empty({n, d});
  init_embedding_(w, padding_idx);
  return w;
}
void append(std::vector<Out>& a, std::vector<Out> b) {
  for (auto& o : b) a.push_back(std::move(o));
}

// ---- the probes: keep each in step with the function of the same name in rng_reference.py ----
std::map<std::string, std::function<std::vector<Out>()>> cpp_probes() {
  std::map<std::string, std::function<std::vector<Out>()>> p;
  p["rand_4x4"] = [] {
    manual_seed(42);
    return std::vector<Out>{f32(rand({4, 4}))};
  };
  p["randn_5x768"] = [] {
    manual_seed(42);
    return std::vector<Out>{f32(randn({5, 768}))};
  };
  p["randn3_twice"] = [] {
    manual_seed(42);
    Tensor a = randn({3});
    Tensor b = randn({3});
    return std::vector<Out>{f32(a), f32(b)};
  };
  p["randn_tails"] = [] {
    std::vector<Out> outs;
    for (size_t n : {15, 16, 17, 37, 1, 31, 48, 100}) {
      manual_seed(7);
      outs.push_back(f32(randn({n})));
    }
    return outs;
  };
  p["randn_sequence"] = [] {
    manual_seed(0);
    std::vector<Out> outs;
    for (size_t n : {15, 16, 17, 37, 1}) outs.push_back(f32(randn({n})));
    outs.push_back(f32(rand({15})));
    outs.push_back(f32(randn({3})));
    manual_seed(0);
    outs.push_back(f32(randn({1})));
    return outs;
  };
  p["normal_mean_std"] = [] {
    manual_seed(3);
    Tensor a = normal({1000}, 2, .5), b = normal({7}, 2, .5), c = normal({33}, -1.5, 3.25),
           d = normal({2, 8}, 0.1, 1e-3);
    return std::vector<Out>{f32(a), f32(b), f32(c), f32(d)};
  };
  p["uniform_range"] = [] {
    manual_seed(5);
    Tensor a = uniform({1000}, -3.7, 2.1), b = uniform({5}, -3.7, 2.1), c = uniform({64}, 0.3, 0.30001),
           d = uniform({10}, -1e6, 1e6);
    return std::vector<Out>{f32(a), f32(b), f32(c), f32(d)};
  };
  p["linear_768_64"] = [] {
    manual_seed(42);
    return linear(768, 64);
  };
  p["linear_3072_768"] = [] {
    manual_seed(42);
    return linear(3072, 768);
  };
  p["linear_small"] = [] {
    manual_seed(11);
    std::vector<Out> outs = linear(10, 3, false);
    append(outs, linear(7, 5));
    return outs;
  };
  p["embedding_1000_64"] = [] {
    manual_seed(42);
    return std::vector<Out>{f32(embedding(1000, 64))};
  };
  p["embedding_bert"] = [] {
    manual_seed(42);
    return std::vector<Out>{f32(embedding(30522, 768))};
  };
  p["embedding_padding"] = [] {
    manual_seed(1);
    Tensor a = embedding(50, 16, 0), b = embedding(50, 16, -1), c = embedding(7, 3, 2), d = embedding(5, 3);
    return std::vector<Out>{f32(a), f32(b), f32(c), f32(d)};
  };
  p["xavier"] = [] {
    manual_seed(42);
    Tensor a = empty({256, 256}), b = empty({1000, 256}), c = empty({8, 4, 3, 3});
    xavier_uniform_(a);
    xavier_uniform_(b);
    xavier_uniform_(c, std::sqrt(2.0));  // calculate_gain('relu')
    return std::vector<Out>{f32(a), f32(b), f32(c)};
  };
  p["dropout"] = [] {
    manual_seed(42);
    Tensor x = randn({5, 768});
    std::vector<Out> outs{f32(x), f32(dropout(x, 0.1)), f32(dropout(x, 0.5)), f32(dropout(x, 0.0)),
                          f32(dropout(x, 1.0))};
    outs.push_back(f32(randn({4})));
    outs.push_back(f32(dropout(randn({3, 7}), 0.25)));
    return outs;
  };
  p["randint"] = [] {
    manual_seed(42);
    std::vector<Out> outs;
    outs.push_back(i64(randint(0, 10, {20})));
    outs.push_back(i64(randint(-5, 5, {7})));
    outs.push_back(i64(randint(0, 30522, {10})));
    outs.push_back(i64(randint(0, int64_t{1} << 33, {5})));
    outs.push_back(i64(randint(-(int64_t{1} << 40), int64_t{1} << 40, {5})));
    outs.push_back(i64(randint(3, 4, {3})));
    return outs;
  };
  p["float64"] = [] {
    manual_seed(42);
    std::vector<Out> outs;
    outs.push_back(f64(randn64(5 * 768), {5, 768}));
    outs.push_back(f64(uniform64(16), {4, 4}));
    outs.push_back(f64(randn64(3), {3}));
    outs.push_back(f64(randn64(100, 2, .5), {100}));
    outs.push_back(f64(uniform64(100, -3.7, 2.1), {100}));
    outs.push_back(f64(randn64(17), {17}));
    outs.push_back(f64(randn64(3), {3}));
    outs.push_back(f32(randn({3})));  // float and double share the Box-Muller cache
    outs.push_back(f64(randn64(519, 0.3, 1.7), {519}));
    outs.push_back(f64(randn64(5, 0.3, 1.7), {5}));
    return outs;
  };
  p["big_seeds"] = [] {
    std::vector<Out> outs;
    const uint64_t seeds[] = {(uint64_t{1} << 32) + 42, ~uint64_t{0}, *parse_seed("-1"),
                              *parse_seed("-9223372036854775808"), 0};
    for (uint64_t s : seeds) {
      manual_seed(s);
      outs.push_back(f32(rand({5})));
      outs.push_back(f32(randn({20})));
      outs.push_back(f32(randn({3})));
    }
    return outs;
  };
  p["interleaved"] = [] {
    manual_seed(42);
    std::vector<Out> outs = linear(64, 32);
    outs.push_back(f32(randn({3})));
    outs.push_back(f32(embedding(100, 16)));
    outs.push_back(f32(dropout(randn({4, 8}), 0.1)));
    outs.push_back(f32(randn({3})));
    append(outs, linear(16, 8));
    outs.push_back(f32(rand({5})));
    return outs;
  };
  p["own_generator"] = [] {
    Generator g;  // default seed 67280421310721, like torch.Generator()
    std::vector<Out> outs{f32(rand({4}, g)), f32(randn({20}, g))};
    g.manual_seed(123);
    outs.push_back(f32(rand({3}, g)));
    return outs;
  };
  return p;
}

// ---- comparison: bitwise, with a mismatch count and the largest difference ----
template <class T>
std::string diff_report(const char* exp, const char* got, size_t n, size_t* mismatches) {
  size_t bad = 0, first = n;
  double max_diff = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(exp + i * sizeof(T), got + i * sizeof(T), sizeof(T)) == 0) continue;
    T e, g;
    std::memcpy(&e, exp + i * sizeof(T), sizeof(T));
    std::memcpy(&g, got + i * sizeof(T), sizeof(T));
    if (bad++ == 0) first = i;
    const double d = std::fabs(static_cast<double>(e) - static_cast<double>(g));
    if (!(d <= max_diff)) max_diff = d;  // NaN-safe
  }
  *mismatches = bad;
  if (bad == 0) return "identical";
  T e, g;
  std::memcpy(&e, exp + first * sizeof(T), sizeof(T));
  std::memcpy(&g, got + first * sizeof(T), sizeof(T));
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << n << " elements NOT OK, max |diff| " << max_diff << "; first at [" << first
     << "]: torch " << e << " vs C++ " << g;
  return os.str();
}

std::string compare(const nlohmann::json& entry, const std::vector<char>& expected, const Out& got,
                    size_t* mismatches) {
  *mismatches = 1;
  const std::string dtype = entry["dtype"];
  const Shape shape = entry["shape"].get<Shape>();
  if (dtype != got.dtype) return "dtype " + dtype + " vs C++ " + got.dtype;
  if (shape != got.shape) return "shapes differ";
  if (expected.size() != got.bytes.size()) return "byte counts differ";
  if (dtype == "float32") return diff_report<float>(expected.data(), got.bytes.data(), expected.size() / 4, mismatches);
  if (dtype == "float64") return diff_report<double>(expected.data(), got.bytes.data(), expected.size() / 8, mismatches);
  if (dtype == "int64") return diff_report<int64_t>(expected.data(), got.bytes.data(), expected.size() / 8, mismatches);
  return "unknown dtype " + dtype;
}

std::vector<char> read_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// ---- the torch side, produced once per test run into a private temp dir ----
struct Reference {
  fs::path dir;
  nlohmann::json index;
  bool ok = false;
  Reference() {
    std::string tmpl = (fs::temp_directory_path() / "ts_rng_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return;
    dir = tmpl;
    const std::string cmd = std::string("/usr/bin/python3 '") + TS_SOURCE_DIR + "/tests/twins/rng_reference.py' '" +
                            dir.string() + "'";
    if (std::system(cmd.c_str()) != 0) return;
    std::ifstream f(dir / "index.json");
    if (!f) return;
    f >> index;
    ok = true;
  }
  ~Reference() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};
const Reference& reference() {
  static Reference r;
  return r;
}

}  // namespace

TEST_CASE("MT19937 stream: std::mt19937 of the low 32 bits of the seed", "[rng]") {
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}, (uint64_t{1} << 32) + 42, ~uint64_t{0}}) {
    Generator g(seed);
    std::mt19937 ref(static_cast<uint32_t>(seed));
    size_t bad = 0;
    for (int i = 0; i < 200000; ++i) bad += g.random() != ref();
    INFO("seed " << seed);
    CHECK(bad == 0);
    // random64: FIRST draw is the high word; uniforms use the low 53 / 24 bits
    const uint64_t hi = ref(), lo = ref();
    CHECK(g.random64() == ((hi << 32) | lo));
    const uint64_t a = ref(), b = ref();
    CHECK(g.uniform01_double() == static_cast<double>(((a << 32) | b) & ((uint64_t{1} << 53) - 1)) * 0x1p-53);
    CHECK(g.uniform01_float() == static_cast<float>(ref() & 0xffffff) * 0x1p-24f);
  }
  Generator g(42), h(42);
  g.random();
  g.manual_seed(42);  // re-seeding restarts the stream and clears the cache
  g.next_double_normal = 1.0;
  g.manual_seed(42);
  CHECK(!g.next_double_normal.has_value());
  CHECK(g.random() == h.random());
  CHECK(Generator().initial_seed() == Generator::kDefaultSeed);
}

TEST_CASE("random_n and dropout_: the draws of random() one at a time, in blocks", "[rng]") {
  // random_n crosses twists (624 words) at every offset a block can start from
  for (size_t n : {size_t{1}, size_t{623}, size_t{625}, size_t{5000}}) {
    Generator g(7), h(7);
    h.random();  // start one word into the state, so blocks end away from the twist
    g.random();
    std::vector<uint32_t> got(n);
    g.random_n(got.data(), n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += got[i] != h.random();
    INFO("n " << n);
    CHECK(bad == 0);
    CHECK(g.random() == h.random());  // the stream goes on where n calls of random() leave it
  }
  // dropout_: keep = uniform01_double() < 1 - p, element by element, across its 256-element blocks
  const size_t n = 1000;
  const double p = 0.3;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = 1.0f + static_cast<float>(i);
  std::vector<float> want = x;
  Generator g(3), h(3);
  dropout_(x.data(), n, p, g);
  const float scale = 1.0f / static_cast<float>(1.0 - p);
  for (size_t i = 0; i < n; ++i) want[i] = want[i] * (h.uniform01_double() < 1.0 - p ? scale : 0.0f);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += x[i] != want[i];
  CHECK(bad == 0);
  CHECK(g.random() == h.random());
}

TEST_CASE("fill16: AVX2 fast path equals the lane-by-lane path on every float uniform", "[rng]") {
  // Each of the 2^24 possible uniforms k * 2^-24 goes once through log (u1 = 1 - u)
  // and once through sincos (u2 = u): block b holds u = 8b..8b+7 in lanes 0-7 AND 8-15.
  const size_t n = size_t{1} << 24;
  std::vector<float> naive(2 * n), fast;
  for (size_t k = 0; k < n; ++k) {
    const float u = static_cast<float>(k) * 0x1p-24f;
    const size_t block = k / 8, lane = k % 8;
    naive[block * 16 + lane] = u;      // as u1
    naive[block * 16 + 8 + lane] = u;  // as u2
  }
  fast = naive;
  const float mean = 0.25f, stdv = 1.5f;
  for (size_t i = 0; i < 2 * n; i += 16) {
    rng_detail::fill16_naive(naive.data() + i, mean, stdv);
    rng_detail::fill16_fast(fast.data() + i, mean, stdv);
  }
  size_t mismatches = 0;
  const std::string report = diff_report<float>(reinterpret_cast<const char*>(naive.data()),
                                                reinterpret_cast<const char*>(fast.data()), 2 * n, &mismatches);
  INFO(report);
  CHECK(mismatches == 0);

  // The Cephes polynomials are real log / sin / cos to within a few float ulps.
  for (float x : {1e-7f, 0.1f, 0.5f, 0.7071f, 0.9f, 1.0f}) CHECK(rng_detail::log_cephes(x) == Approx(std::log(x)).epsilon(1e-6).margin(1e-7));
  for (float x : {0.0f, 0.3f, 1.0f, 2.5f, 3.14159f, 4.0f, 5.5f, 6.2831855f}) {
    float s, c;
    rng_detail::sincos_cephes(x, &s, &c);
    CHECK(s == Approx(std::sin(x)).margin(1e-6));
    CHECK(c == Approx(std::cos(x)).margin(1e-6));
  }
}

TEST_CASE("rng probes: bit-identical to live torch", "[rng]") {
  const Reference& ref = reference();
  INFO("twin: /usr/bin/python3 " TS_SOURCE_DIR "/tests/twins/rng_reference.py (needs torch 1.13.1)");
  REQUIRE(ref.ok);
  auto probes = cpp_probes();
  const auto& listed = ref.index["probes"];
  CHECK(listed.size() == probes.size());  // both sides know the same probes
  size_t total = 0;
  for (auto it = listed.begin(); it != listed.end(); ++it) {
    const std::string name = it.key();
    INFO("probe " << name);
    REQUIRE(probes.count(name) == 1);
    const std::vector<Out> got = probes[name]();
    REQUIRE(got.size() == it.value().size());
    for (size_t k = 0; k < got.size(); ++k) {
      const auto& entry = it.value()[k];
      size_t mismatches = 0;
      const std::string report = compare(entry, read_bytes(ref.dir / entry["file"].get<std::string>()), got[k],
                                         &mismatches);
      INFO("output " << k << ": " << report);
      CHECK(mismatches == 0);
      total += got[k].bytes.size();
    }
  }
  CHECK(total > 23440896 * 4);  // the full BERT embedding was among them
}

TEST_CASE("parse_seed: same verdict as torch.manual_seed(int(text))", "[rng]") {
  const Reference& ref = reference();
  REQUIRE(ref.ok);
  REQUIRE(ref.index["seeds"].size() > 20);
  for (const auto& c : ref.index["seeds"]) {
    const std::string text = c["text"];
    const std::optional<uint64_t> got = parse_seed(text);
    INFO("text \"" << text << "\"");
    if (c["seed"].is_null()) {
      CHECK(!got.has_value());
    } else {
      REQUIRE(got.has_value());
      CHECK(*got == c["seed"].get<uint64_t>());
    }
  }
}

TEST_CASE("rng timing: nn.Embedding(30522, 768) init, C++ vs torch", "[.][rng-bench]") {
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    manual_seed(42);
    const auto t0 = std::chrono::steady_clock::now();
    Tensor w = Tensor::from_shape({30522, 768});
    init_embedding_(w);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const Reference& ref = reference();
  REQUIRE(ref.ok);
  std::printf("nn.Embedding(30522,768) init, best of runs: C++ %.3f s, torch %.3f s\n", best,
              ref.index["timing"]["embedding_30522x768_s"].get<double>());
}
