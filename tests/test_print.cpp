// test_print.cpp: str(tensor) must be byte-identical to PyTorch 1.13's print.
//
// Four sources of truth, all produced by torch itself:
//   1) the 200-case dev corpus (shared/reference/print_corpus_dev.json)
//   2) the transcripts: tensors we rebuild from their definitions (masks, ids) and every
//      non-summarized printed tensor re-read from its own text; module reprs
//   3) a fuzz run (test_print_fuzz.cpp): ~300 random tensors (plus floats, sizes, modules)
//      printed here and by live torch through tests/twins/print_reference.py
//   4) speed: a (30522, 768) weight prints by reading only the 36 displayed elements
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
using print_test::transcript_block;
using print_test::TorchVersionScope;
using print_test::kShared;
using print_test::kTranscripts;

// ---------------------------------------------------------------------------------------
// 1) the dev corpus
TEST_CASE("print: dev corpus is byte-identical to torch", "[print]") {
  const std::string path = kShared + "/reference/print_corpus_dev.json";
  const std::string text = read_text(path);
  const json cases = json::parse(text);
  const std::vector<std::string> got = ts::print_corpus(text);
  REQUIRE(got.size() == cases.size());
  REQUIRE(cases.size() == 200);
  size_t pass = 0;
  std::string report;
  std::vector<int> failing;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string expected = cases[i].at("printed").get<std::string>();
    if (got[i] == expected) {
      ++pass;
    } else {
      failing.push_back(cases[i].value("id", static_cast<int>(i)));
      if (failing.size() <= 5) report += mismatch(std::to_string(failing.back()), expected, got[i]);
    }
  }
  std::string ids;
  for (int id : failing) ids += std::to_string(id) + " ";
  INFO(pass << "/" << cases.size() << " pass; failing ids: " << ids << "\n" << report);
  CHECK(pass == cases.size());
}

// ---------------------------------------------------------------------------------------
// 2a) transcript tensors rebuilt from their definitions
TEST_CASE("print: transcript tensors rebuilt from their definitions", "[print]") {
  using ts::BTensor;
  using ts::ITensor;
  using ts::Tensor;

  // 01: the article's token ids
  const ITensor input_ids = {{2051, 10029, 2066, 2019, 8612}};
  CHECK(ts::str(input_ids) == transcript_block("01_embedding.txt", "input_ids"));
  CHECK(ts::size_str({1, 5, 768}) == transcript_block("01_embedding.txt", "inputs_embeds.size()"));

  // 11: causal mask = tril(ones(5, 5)) with a batch dimension
  Tensor mask = ts::zeros({1, 5, 5});
  BTensor mask_eq0 = BTensor::from_shape({1, 5, 5});
  for (size_t i = 0; i < 5; ++i)
    for (size_t j = 0; j < 5; ++j) {
      mask(0, i, j) = j <= i ? 1.0f : 0.0f;
      mask_eq0(0, i, j) = mask(0, i, j) == 0.0f;
    }
  Tensor mask0 = ts::zeros({5, 5});
  for (size_t i = 0; i < 5; ++i)
    for (size_t j = 0; j < 5; ++j) mask0(i, j) = mask(0, i, j);
  CHECK(ts::str(mask0) == transcript_block("11_causal_mask.txt", "mask[0]"));
  CHECK(ts::str(mask_eq0) == transcript_block("11_causal_mask.txt", "mask == 0"));

  // 13: padding and look-ahead masks of article 004
  const ITensor x = {{1, 2, 0, 0, 0}, {3, 4, 5, 0, 0}};
  CHECK(ts::str(x) == transcript_block("13_tf_masks.txt", "x"));
  Tensor pad = ts::zeros({2, 1, 1, 5});  // (x == 0)[:, None, None, :] as float
  BTensor x_eq0 = BTensor::from_shape({2, 5});
  BTensor x_eq0_4d = BTensor::from_shape({2, 1, 1, 5});
  for (size_t b = 0; b < 2; ++b)
    for (size_t s = 0; s < 5; ++s) {
      x_eq0(b, s) = x(b, s) == 0;
      x_eq0_4d(b, 0, 0, s) = x(b, s) == 0;
      pad(b, 0, 0, s) = x(b, s) == 0 ? 1.0f : 0.0f;
    }
  CHECK(ts::str(pad) == transcript_block("13_tf_masks.txt", "create_padding_mask(x)"));
  CHECK(ts::size_str(ts::shape_of(pad)) == transcript_block("13_tf_masks.txt", "create_padding_mask(x).shape"));
  CHECK(ts::str(x_eq0) == transcript_block("13_tf_masks.txt", "x == 0"));
  CHECK(ts::str(x_eq0_4d) == transcript_block("13_tf_masks.txt", "(x == 0)[:, None, None, :]"));

  auto look_ahead = [](size_t n) {  // 1 - tril(ones(n, n))
    Tensor m = ts::zeros({n, n});
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) m(i, j) = j > i ? 1.0f : 0.0f;
    return m;
  };
  const Tensor la3 = look_ahead(3);
  BTensor la3_eq0 = BTensor::from_shape({3, 3});
  for (size_t i = 0; i < 9; ++i) la3_eq0.data()[i] = la3.data()[i] == 0.0f;
  CHECK(ts::str(la3) == transcript_block("13_tf_masks.txt", "create_look_ahead_mask(3)"));
  CHECK(ts::str(la3_eq0) == transcript_block("13_tf_masks.txt", "create_look_ahead_mask(3) == 0"));

  // combined = maximum(pad, look_ahead(5)) -> (2,1,5,5); logits = 0 + combined * -1e9; softmax
  const Tensor la5 = look_ahead(5);
  Tensor combined = ts::zeros({2, 1, 5, 5}), logits = ts::zeros({2, 1, 5, 5}), probs = ts::zeros({2, 1, 5, 5});
  for (size_t b = 0; b < 2; ++b)
    for (size_t i = 0; i < 5; ++i) {
      float sum = 0.0f, row_max = -std::numeric_limits<float>::infinity();
      for (size_t j = 0; j < 5; ++j) {
        combined(b, 0, i, j) = std::max(pad(b, 0, 0, j), la5(i, j));
        logits(b, 0, i, j) = 0.0f + combined(b, 0, i, j) * -1e9f;
        row_max = std::max(row_max, logits(b, 0, i, j));
      }
      for (size_t j = 0; j < 5; ++j) sum += probs(b, 0, i, j) = std::exp(logits(b, 0, i, j) - row_max);
      for (size_t j = 0; j < 5; ++j) probs(b, 0, i, j) /= sum;
    }
  CHECK(ts::str(combined) ==
        transcript_block("13_tf_masks.txt", "torch.maximum(create_padding_mask(x), create_look_ahead_mask(5))"));
  CHECK(ts::str(logits) == transcript_block("13_tf_masks.txt", "logits (zeros + mask * -1e9)"));
  CHECK(ts::str(probs) == transcript_block("13_tf_masks.txt", "F.softmax(logits, dim=-1)"));

  // 12: the toy keys and values
  const Tensor temp_k = {{10, 0, 0}, {0, 10, 0}, {0, 0, 10}, {0, 0, 10}};
  const Tensor temp_v = {{1, 0}, {10, 0}, {100, 5}, {1000, 6}};
  CHECK(ts::str(temp_k) == transcript_block("12_tf_scaled_dot_product.txt", "temp_k"));
  CHECK(ts::str(temp_v) == transcript_block("12_tf_scaled_dot_product.txt", "temp_v"));

  // 08: a tuple of sizes
  CHECK("(" + ts::size_str({1, 5, 768}) + ", " + ts::size_str({1, 5, 768}) + ")" ==
        transcript_block("08_encoder_layer_prenorm_eval.txt", "inputs_embeds.shape, encoder_layer(inputs_embeds).size()"));
}

// ---------------------------------------------------------------------------------------
// 2b) every non-summarized tensor in the transcripts, re-read from its own text and printed again
namespace {

struct ParsedBlock {
  std::vector<size_t> shape;
  std::vector<std::string> tokens;  // the printed elements, in order
  bool summarized = false;
  std::string suffix;  // everything after the values
};

void skip_ws(const std::string& s, size_t& p) {
  while (p < s.size() && (s[p] == ' ' || s[p] == '\n')) ++p;
}

// One nested list (or one bare value) starting at s[p]; records the size of each level.
void parse_value(const std::string& s, size_t& p, size_t level, ParsedBlock& out, std::vector<long>& dims) {
  skip_ws(s, p);
  if (s[p] == '[') {
    ++p;
    long count = 0;
    for (;;) {
      skip_ws(s, p);
      if (s[p] == ']') {
        ++p;
        break;
      }
      parse_value(s, p, level + 1, out, dims);
      ++count;
      skip_ws(s, p);
      if (s[p] == ',') ++p;
    }
    if (dims.size() <= level) dims.resize(level + 1, -1);
    if (dims[level] < count) dims[level] = count;
    return;
  }
  const size_t start = p;
  while (p < s.size() && std::string(",]) \n").find(s[p]) == std::string::npos) ++p;
  const std::string tok = s.substr(start, p - start);
  if (tok == "...")
    out.summarized = true;
  else
    out.tokens.push_back(tok);
}

// block = "tensor(...)" -> shape, element tokens and suffix text
ParsedBlock parse_block(const std::string& block) {
  ParsedBlock out;
  size_t p = 7;  // after "tensor("
  std::vector<long> dims;
  parse_value(block, p, 0, out, dims);
  for (long d : dims) out.shape.push_back(static_cast<size_t>(d));
  out.suffix = block.substr(p);
  return out;
}

// All "tensor(...)" blocks that start a line, each up to its matching ')'.
std::vector<std::string> tensor_blocks(const std::string& text) {
  std::vector<std::string> blocks;
  size_t at = 0;
  while ((at = text.find("tensor(", at)) != std::string::npos) {
    if (at > 0 && text[at - 1] != '\n') {
      ++at;
      continue;
    }
    int depth = 0;
    size_t end = at + 6;
    for (; end < text.size(); ++end) {
      if (text[end] == '(') ++depth;
      if (text[end] == ')' && --depth == 0) break;
    }
    blocks.push_back(text.substr(at, end + 1 - at));
    at = end;
  }
  return blocks;
}

}  // namespace

TEST_CASE("print: every non-summarized transcript tensor reprints identically", "[print]") {
  size_t checked = 0, fails = 0;
  std::string report;
  for (const auto& entry : std::filesystem::directory_iterator(kTranscripts)) {
    const std::string text = read_text(entry.path().string());
    for (const std::string& block : tensor_blocks(text)) {
      const ParsedBlock pb = parse_block(block);
      if (pb.summarized) continue;
      ts::PrintMeta meta;
      const size_t g = pb.suffix.find("grad_fn=<");
      if (g != std::string::npos) meta.grad_fn = pb.suffix.substr(g + 9, pb.suffix.find('>', g) - g - 9);
      meta.requires_grad = pb.suffix.find("requires_grad=True") != std::string::npos;
      bool is_bool = false, is_float = false;
      for (const auto& t : pb.tokens) {
        if (t == "True" || t == "False") is_bool = true;
        if (t.find_first_of(".ein") != std::string::npos && !is_bool) is_float = true;
      }
      std::string got;
      if (is_bool) {
        got = ts::format_tensor_int(ts::DType::Bool, pb.shape,
                                    [&](size_t i) -> int64_t { return pb.tokens[i] == "True"; }, meta);
      } else if (is_float) {
        got = ts::format_tensor(ts::DType::Float32, pb.shape,
                                [&](size_t i) { return std::strtod(pb.tokens[i].c_str(), nullptr); }, meta);
      } else {
        got = ts::format_tensor_int(ts::DType::Int64, pb.shape,
                                    [&](size_t i) -> int64_t { return std::stoll(pb.tokens[i]); }, meta);
      }
      ++checked;
      if (got != block) {
        ++fails;
        if (fails <= 3) report += mismatch(entry.path().filename().string(), block, got);
      }
    }
  }
  INFO(checked << " blocks reprinted, " << fails << " differ\n" << report);
  CHECK(checked >= 30);
  CHECK(fails == 0);
}

// ---------------------------------------------------------------------------------------
// 2c) module reprs of the transcripts
namespace {
ts::ModuleRepr attention_head() {
  return {"AttentionHead", "", {{"q", ts::linear_repr(768, 64, true)}, {"k", ts::linear_repr(768, 64, true)},
                                {"v", ts::linear_repr(768, 64, true)}}};
}
ts::ModuleRepr multi_head_attention() {
  return {"MultiHeadAttention", "",
          {{"heads", ts::module_list_repr(std::vector<ts::ModuleRepr>(12, attention_head()))},
           {"output_linear", ts::linear_repr(768, 768, true)}}};
}
ts::ModuleRepr feed_forward() {
  return {"FeedForward", "",
          {{"linear_1", ts::linear_repr(768, 3072, true)}, {"linear_2", ts::linear_repr(3072, 768, true)},
           {"gelu", ts::gelu_repr()}, {"dropout", ts::dropout_repr(0.1)}}};
}
ts::ModuleRepr embeddings() {
  return {"Embeddings", "",
          {{"token_embeddings", ts::embedding_repr(30522, 768)}, {"position_embeddings", ts::embedding_repr(512, 768)},
           {"layer_norm", ts::layer_norm_repr(768, 1e-12)}, {"dropout", ts::dropout_repr(0.5)}}};
}
ts::ModuleRepr encoder_layer() {
  return {"TransformerEncoderLayer", "",
          {{"layer_norm_1", ts::layer_norm_repr(768, 1e-5)}, {"layer_norm_2", ts::layer_norm_repr(768, 1e-5)},
           {"attention", multi_head_attention()}, {"feed_forward", feed_forward()}}};
}
}  // namespace

TEST_CASE("print: module reprs match the transcripts", "[print]") {
  // the transcripts are the articles' runs, under PyTorch 1.13 (every ModuleList child printed)
  const TorchVersionScope torch_1_13(ts::TorchVersion::V1_13);
  CHECK(ts::embedding_repr(30522, 768).str() == transcript_block("01_embedding.txt", "token_emb"));
  CHECK(attention_head().str() == transcript_block("05_attention_head.txt", "head"));
  CHECK(multi_head_attention().str() == transcript_block("06_multihead_attention.txt", "multihead_attn"));
  CHECK(feed_forward().str() == transcript_block("07_feed_forward_eval.txt", "feed_forward"));
  CHECK(embeddings().str() == transcript_block("09_embeddings_eval.txt", "embedding_layer"));
  CHECK(encoder_layer().str() == transcript_block("08_encoder_layer_prenorm_eval.txt", "encoder_layer"));
  const ts::ModuleRepr encoder{"TransformerEncoder", "",
                               {{"embeddings", embeddings()},
                                {"layers", ts::module_list_repr(std::vector<ts::ModuleRepr>(12, encoder_layer()))}}};
  CHECK(encoder.str() == transcript_block("10_transformer_encoder_eval.txt", "encoder"));
  const ts::ModuleRepr mha{"MultiHeadedAttention", "",
                           {{"linears", ts::module_list_repr(std::vector<ts::ModuleRepr>(4, ts::linear_repr(256, 256, true)))},
                            {"dropout", ts::dropout_repr(0.1)}}};
  CHECK(mha.str() == transcript_block("14_annotated_mha_eval.txt", "mha"));
  // the spec's one-liners
  CHECK(ts::embedding_repr(512, 768, 0).str() == "Embedding(512, 768, padding_idx=0)");
  CHECK(ts::softmax_repr(-1).str() == "Softmax(dim=-1)");
  CHECK(ts::relu_repr().str() == "ReLU()");
  CHECK(ts::layer_norm_repr(768, 1e-5).str() == "LayerNorm((768,), eps=1e-05, elementwise_affine=True)");
}

// ---------------------------------------------------------------------------------------
// 4) cost: only the displayed elements are read (the count is the check; speed belongs in make bench)
TEST_CASE("print: a (30522, 768) weight reads only the 36 elements it shows", "[print]") {
  size_t calls = 0;
  auto get = [&calls](size_t i) {
    ++calls;
    return std::sin(static_cast<double>(i));
  };
  const std::vector<size_t> shape = {30522, 768};
  const std::string first = ts::parameter_str(ts::Tensor(ts::zeros({2, 2})));  // warm-up + parameter prefix
  CHECK(first == "Parameter containing:\ntensor([[0., 0.],\n        [0., 0.]], requires_grad=True)");

  std::string s;
  const int reps = 50;
  for (int r = 0; r < reps; ++r) s = ts::format_tensor(ts::DType::Float32, shape, get);
  CHECK(calls == 36u * reps);
  CHECK(s.find("...,") != std::string::npos);
}
