// test_annotated.cpp: article 002's modules (src/transformer/annotated.hpp) against the live PyTorch 1.13
// (tests/twins/annotated_reference.py runs tests/twins/article002.py).
//
// The twin replays fixed scenarios after torch.manual_seed(S) and writes every result as raw
// float32; here the same scenarios run in C++ after ts::manual_seed(S) and every tensor must
// have the same bits (0 mismatches), reprs the same text:
//   1) transcript 14: MultiHeadedAttention h=8 on self, masked and cross attention (train+eval)
//   2) attention() on (B,H,T,D) with a padding mask and dropout
//   3) article 002's LayerNorm (unbiased std, sqrt(std^2 + eps))
//   4) PositionalEncoding's buffer (SLEEF exp/sin/cos)
//   5) ch09's DecoderLayer of deep copies (train+eval)
//   6) create_model (N=2, tiny sizes): xavier parameters, encode, decode, generator
#include "catch_compat.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exact/rng.hpp"
#include "reference_run.hpp"
#include "transformer/grad.hpp"
#include "transformer/annotated.hpp"
#include "transformer/article004.hpp"

namespace {

namespace fs = std::filesystem;

struct AnnotatedTwin {
  ts_test::ReferenceRun run{"annotated_reference.py"};  // torch writes its tensors into run.dir()
  fs::path dir = run.dir();
  std::map<std::string, size_t> numel;
  AnnotatedTwin() {
    std::ifstream m(dir / "manifest.txt");
    std::string key;
    size_t n = 0;
    while (m >> key >> n) numel[key] = n;
  }
  std::vector<float> get(const std::string& key) const {
    std::ifstream f(dir / (key + ".f32"), std::ios::binary);
    if (!f) throw std::runtime_error("twin has no tensor " + key);
    std::vector<float> v(numel.at(key));
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    return v;
  }
  std::string text(const std::string& key) const {
    std::ifstream f(dir / (key + ".txt"));
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
};

const AnnotatedTwin& twin() {
  static AnnotatedTwin t;
  return t;
}

// Number of elements whose bits differ (NaN matches NaN); prints the first few.
size_t mismatches(const std::string& key, const ts::Tensor& ours) {
  const std::vector<float> ref = twin().get(key);
  if (ref.size() != ours.size()) {
    UNSCOPED_INFO(key << ": " << ours.size() << " elements, torch has " << ref.size());
    return std::max<size_t>(ref.size(), 1);
  }
  size_t bad = 0;
  double maxdiff = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const float a = ours.data()[i], b = ref[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::memcmp(&a, &b, sizeof(float)) != 0) {
      if (bad < 3) UNSCOPED_INFO(key << "[" << i << "]: ours " << a << " torch " << b);
      maxdiff = std::max(maxdiff, std::fabs(double(a) - double(b)));
      ++bad;
    }
  }
  if (bad) UNSCOPED_INFO(key << ": " << bad << " of " << ref.size() << " differ, max diff " << maxdiff);
  return bad;
}

ts::Tensor load(const std::string& key, const ts::Shape& shape) {
  const std::vector<float> v = twin().get(key);
  ts::Tensor t = ts::Tensor::from_shape(shape);
  REQUIRE(v.size() == t.size());
  std::copy(v.begin(), v.end(), t.data());
  return t;
}

}  // namespace

TEST_CASE("annotated: transcript 14 MultiHeadedAttention equals torch bit for bit", "[annotated]") {
  const ts_test::BlasThreadsPinned pin;  // the reference ran at this OpenBLAS thread count
  for (const std::string mode : {"train", "eval"}) {
    ts::manual_seed(0);
    ts::MultiHeadedAttention mha(8, 256);
    if (mode == "eval") mha.train(false);
    const ts::Tensor x = ts::randn({1, 6, 256});
    CHECK(mismatches("mha_" + mode + ".self", mha(x, x, x)) == 0);
    CHECK(mismatches("mha_" + mode + ".self_attn", mha.attn) == 0);
    const ts::BTensor mask = ts::subsequent_mask(6);
    CHECK(mismatches("mha_" + mode + ".masked", mha(x, x, x, &mask)) == 0);
    CHECK(mismatches("mha_" + mode + ".masked_attn", mha.attn) == 0);
    const ts::Tensor tgt = ts::randn({1, 5, 256});
    CHECK(mismatches("mha_" + mode + ".cross", mha(tgt, x, x)) == 0);
    CHECK(mismatches("mha_" + mode + ".cross_attn", mha.attn) == 0);
    CHECK(mha.attn.shape()[1] == 8);
    if (mode == "train") CHECK(mha.repr().str() == twin().text("mha_repr"));
  }
}

TEST_CASE("annotated: attention() on (B,H,T,D) with a padding mask and dropout", "[annotated]") {
  const ts_test::BlasThreadsPinned pin;  // the reference ran at this OpenBLAS thread count
  ts::manual_seed(1);
  const ts::Tensor q = ts::randn({2, 4, 3, 8}), k = ts::randn({2, 4, 7, 8}), v = ts::randn({2, 4, 7, 8});
  ts::BTensor pad = ts::BTensor::from_shape({2, 1, 1, 7});
  for (size_t s = 0; s < 7; ++s) {
    pad(0, 0, 0, s) = s < 5;
    pad(1, 0, 0, s) = true;
  }
  const ts::Dropout drop(0.1);
  ts::Tensor p;
  CHECK(mismatches("attn.out", ts::attention(q, k, v, &pad, &drop, &p)) == 0);
  CHECK(mismatches("attn.p", p) == 0);
  CHECK(mismatches("attn.out_nomask", ts::attention(q, k, v, nullptr, nullptr, &p)) == 0);
  CHECK(mismatches("attn.p_nomask", p) == 0);
  // a mask that does not broadcast is refused
  const ts::BTensor bad = ts::BTensor::from_shape({5, 7});
  CHECK_THROWS_AS(ts::attention(q, k, v, &bad, nullptr, nullptr), std::invalid_argument);
}

TEST_CASE("annotated: article 002 LayerNorm equals torch bit for bit", "[annotated]") {
  ts::LayerNorm ln(256, ts::LayerNormArithmetic::Article002);
  const ts::Tensor x = load("ln.x", {3, 5, 256});
  CHECK(mismatches("ln.y", ln(x)) == 0);
  const ts::Tensor x1 = load("ln.x1", {1, 256});
  CHECK(mismatches("ln.y1", ln(x1)) == 0);
  ln.weight = load("ln.a_2", {256});
  ln.bias = load("ln.b_2", {256});
  CHECK(mismatches("ln.y2", ln(x)) == 0);
  CHECK(ln.repr().str() == "LayerNorm()");
}

TEST_CASE("the one LayerNorm: each article's arithmetic, eps, names and repr", "[annotated][layernorm]") {
  const ts::LayerNorm n0(4), n2(4, ts::LayerNormArithmetic::Article002), n4(4, ts::LayerNormArithmetic::Article004);
  CHECK(n0.eps == 1e-5);
  CHECK(n2.eps == 1e-6);
  CHECK(n4.eps == static_cast<double>(1e-6f));  // the Keras layer's float32 epsilon
  CHECK(std::string(n0.param_names().first) == "weight");
  CHECK(std::string(n2.param_names().first) == "a_2");
  CHECK(std::string(n4.param_names().second) == "beta");
  CHECK(n0.repr().str() == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)");
  CHECK(n4.repr().str() == "LayerNormalization()");
  // one row x = (1, 2, 3, 6): mean 3, sum (x - m)^2 = 14; each divides by its own divisor
  ts::Tensor x = ts::Tensor::from_shape({1, 4});
  const float v[4] = {1, 2, 3, 6};
  std::copy(v, v + 4, x.begin());
  CHECK(n0(x)(0, 3) == Approx(3.0 / std::sqrt(14.0 / 4 + 1e-5)));
  CHECK(n2(x)(0, 3) == Approx(3.0 / std::sqrt(14.0 / 3 + 1e-6)));
  CHECK(n4(x)(0, 3) == Approx(3.0 / (std::sqrt(14.0 / 4) + 1e-6)));
  // a constant row: article 004's std is 0, the backward still finite (the std's slope taken as 0)
  ts::Tensor flat = ts::Tensor::from_shape({1, 4});
  flat.fill(0.5f);
  ts::LayerNorm g(4, ts::LayerNormArithmetic::Article004);
  g.weight.fill(0.0f);
  const ts::Tensor dx = n4.backward(flat, x, g);
  for (float d : dx) CHECK(std::isfinite(d));
}

TEST_CASE("the one FeedForward: article 000's and 002's settings print their own module", "[annotated][ffn]") {
  ts::manual_seed(0);
  const ts::FeedForward f2 = ts::positionwise_feed_forward(4, 8, 0.1);
  CHECK(f2.repr().name == "PositionwiseFeedForward");
  CHECK(std::string(f2.linear_names().first) == "w_1");
  ts::FeedForward f0 = f2;
  f0.article = ts::FeedForwardArticle::Article000;
  f0.activation = ts::Activation::GELU;
  CHECK(f0.repr().name == "FeedForward");
  CHECK(f0.repr().children.at(2).first == "gelu");
  CHECK(std::string(f0.linear_names().second) == "linear_2");
}

TEST_CASE("the one multi-head attention: article 002's and 004's settings", "[annotated][attention]") {
  // article 004's layer: four Keras Dense (xavier weights, zero biases), its names and repr
  ts::manual_seed(0);
  ts::MultiHeadedAttention m4 = ts::mutil_head_attention(8, 2);
  CHECK(m4.h == 2);
  CHECK(m4.d_k == 4);
  CHECK(m4.linear_name(0) == "wq");
  CHECK(m4.linear_name(3) == "dense");
  CHECK(m4.repr().str().rfind("MutilHeadAttention(\n  (wq): Linear(in_features=8, out_features=8, bias=True)", 0) == 0);
  CHECK(m4.repr().str().find("ropout") == std::string::npos);
  for (const ts::Linear& l : m4.linears)
    for (float b : l.bias) CHECK(b == 0.0f);
  // no dropout on its weights: in train mode with p = 0.5 set on the module, the weights still sum to 1
  m4.dropout = ts::Dropout(0.5);
  ts::Tensor y = ts::Tensor::from_shape({1, 3, 8});
  for (size_t i = 0; i < y.size(); ++i) y.data()[i] = 0.1f * static_cast<float>(i % 7);
  const ts::Tensor out4 = m4(y, y, y);
  for (size_t r = 0; r < 2 * 3; ++r) {
    float sum = 0.0f;
    for (size_t s = 0; s < 3; ++s) sum += m4.attn.data()[r * 3 + s];
    CHECK(sum == Approx(1.0f));
  }
  // the same weights in article 002's setting: the dropout on the weights runs (some weights
  // zeroed, the rest doubled), the names are linears.i and the repr its own
  ts::MultiHeadedAttention m2 = m4;
  m2.article = ts::AttentionArticle::Article002;
  CHECK(m2.linear_name(3) == "linears.3");
  CHECK(m2.repr().name == "MultiHeadedAttention");
  m2(y, y, y);
  bool dropped = false;
  for (float w : m2.attn) dropped = dropped || w == 0.0f;
  CHECK(dropped);
  // in eval mode the two settings compute the same output from the same weights
  m2.train(false);
  const ts::Tensor out2 = m2(y, y, y);
  for (size_t i = 0; i < out2.size(); ++i) CHECK(out2.data()[i] == out4.data()[i]);
}

TEST_CASE("annotated: PositionalEncoding buffer equals torch bit for bit", "[annotated]") {
  CHECK(mismatches("pe.256", ts::PositionalEncoding(256, 0.1).pe) == 0);
  CHECK(mismatches("pe.512", ts::PositionalEncoding(512, 0.1, 60).pe) == 0);
}

TEST_CASE("annotated: ch09 DecoderLayer of deep copies equals torch bit for bit", "[annotated]") {
  const ts_test::BlasThreadsPinned pin;  // the reference ran at this OpenBLAS thread count
  for (const std::string mode : {"train", "eval"}) {
    ts::manual_seed(42);
    const ts::MultiHeadedAttention attn(8, 256);
    ts::FeedForward ff = ts::positionwise_feed_forward(256, 1024, 0.1);
    ts::DecoderLayer layer(256, attn, attn, ff, 0.1);
    if (mode == "eval") layer.train(false);
    const ts::Tensor tgt = ts::randn({1, 5, 256});
    const ts::Tensor memory = ts::randn({1, 6, 256});
    const ts::BTensor tgt_mask = ts::subsequent_mask(5);
    CHECK(mismatches("dec_" + mode + ".y", layer(tgt, memory, nullptr, &tgt_mask)) == 0);
    CHECK(mismatches("dec_" + mode + ".cross_attn", layer.src_attn.attn) == 0);
    CHECK(mismatches("dec_" + mode + ".ff", ff(tgt)) == 0);
    if (mode == "train") CHECK(layer.repr().str() == twin().text("dec_repr"));
  }
}

TEST_CASE("annotated: create_model parameters, encode, decode, generator", "[annotated]") {
  const ts_test::BlasThreadsPinned pin;  // the reference ran at this OpenBLAS thread count
  ts::manual_seed(3);
  ts::EncoderDecoder model = ts::create_model(11, 13, 2, 32, 64, 4);
  std::string names;
  for (auto& [name, p] : model.named_parameters()) {
    names += name + "\n";
    CHECK(mismatches("model.param." + name, *p) == 0);
  }
  CHECK(names == twin().text("model_param_names"));
  CHECK(model.repr().str() == twin().text("model_repr"));
  ts::ITensor src = ts::ITensor::from_shape({1, 6});
  const int64_t s_ids[6] = {1, 5, 7, 3, 9, 2};
  std::copy(s_ids, s_ids + 6, src.data());
  ts::BTensor src_mask = ts::BTensor::from_shape({1, 1, 6});
  for (size_t i = 0; i < 6; ++i) src_mask.data()[i] = src.data()[i] != 0;
  const ts::Tensor memory = model.encode(src, &src_mask);
  CHECK(mismatches("model.memory", memory) == 0);
  ts::ITensor tgt = ts::ITensor::from_shape({1, 5});
  const int64_t t_ids[5] = {1, 4, 4, 12, 6};
  std::copy(t_ids, t_ids + 5, tgt.data());
  const ts::BTensor tgt_mask = ts::subsequent_mask(5);
  const ts::Tensor out = model.decode(memory, &src_mask, tgt, &tgt_mask);
  CHECK(mismatches("model.decode", out) == 0);
  CHECK(mismatches("model.logp", model.generator(out)) == 0);
}

// The backward beside each module (transformer/grad.hpp) must not change any forward: without
// EnableGrad nothing is kept, and with it the same draws give the same bits. Article 004's
// settings (ReLU, post-LN) draw nothing, and only the ReLU shows in the repr.
TEST_CASE("annotated: EnableGrad keeps what backward needs and changes no bit; settings draw nothing", "[annotated]") {
  ts::manual_seed(3);
  ts::EncoderDecoder model = ts::create_model(11, 13, 2, 32, 64, 4);
  ts::manual_seed(3);
  ts::EncoderDecoder model004 =
      ts::create_model(11, 13, 2, 32, 64, 4, 0.1, {ts::Activation::ReLU, ts::NormPlace::Post});
  const auto a = model.named_parameters(), b = model004.named_parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = *a[i].second == *b[i].second;
    CHECK(same);
  }
  CHECK(model004.repr().str().find("(activation): ReLU()") != std::string::npos);
  CHECK(model.repr().str().find("ReLU") == std::string::npos);
  CHECK(model004.decoder.layers[1].sublayer[2].norm_place == ts::NormPlace::Post);
  CHECK(model.decoder.layers[1].sublayer[2].norm_place == ts::NormPlace::Pre);

  ts::ITensor src = ts::ITensor::from_shape({2, 4}), tgt = ts::ITensor::from_shape({2, 3});
  for (size_t i = 0; i < src.size(); ++i) src.data()[i] = int64_t(1 + i % 10);
  for (size_t i = 0; i < tgt.size(); ++i) tgt.data()[i] = int64_t(2 + i % 11);
  const ts::BTensor tgt_mask = ts::subsequent_mask(3);
  model.train(true);  // dropout draws
  ts::manual_seed(9);
  const ts::Tensor plain = model.forward(src, tgt, nullptr, &tgt_mask);
  // nothing kept: a default xarray is 0-dimensional
  CHECK(model.encoder.layers[0].feed_forward.saved.x.dimension() == 0);
  CHECK(model.decoder.layers[1].src_attn.saved.p.dimension() == 0);
  CHECK(model.decoder.layers[0].sublayer[0].dropout.keep.dimension() == 0);
  ts::manual_seed(9);
  ts::Tensor kept;
  {
    ts::EnableGrad grad_mode;
    kept = model.forward(src, tgt, nullptr, &tgt_mask);
  }
  CHECK(ts::grad_enabled() == false);
  REQUIRE(plain.size() == kept.size());
  CHECK(std::memcmp(plain.data(), kept.data(), plain.size() * sizeof(float)) == 0);
  CHECK(model.encoder.layers[0].feed_forward.saved.x.size() == 2 * 4 * 32);
  CHECK(model.decoder.layers[1].src_attn.saved.p.size() == 2 * 4 * 3 * 4);
  CHECK(model.decoder.layers[0].sublayer[0].dropout.keep.size() == 2 * 3 * 32);
}
