// test_bpe.cpp: byte-level BPE (src/text/bpe.hpp) and GPT-2's tokenizer (src/text/gpt2_*.hpp).
//
// The trainers against each other (incremental counts vs the full rescan) on random texts, the
// round trip on arbitrary bytes, the examples the headers promise, and GPT-2's two merge loops
// (Encoder.js's and the heap) against each other on hostile chunks. The Python and node twins
// (tests/twins/bpe_reference.py, gpt2_reference.py) compare with outside references.
#include "catch_compat.hpp"

#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "text/bpe.hpp"
#include "text/gpt2_encoder.hpp"
#include "text/gpt2_pretokenize.hpp"

namespace {

using ts::bpe::Split;

// random bytes drawn mostly from a small alphabet (so pairs repeat), some anywhere in 0..255
std::string random_text(std::mt19937& rng, size_t n) {
  static const std::string alphabet = "aab ,.'\n\xC3\xA9\xE2\x80\x99zz  ";
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += rng() % 8 == 0 ? char(rng() % 256) : alphabet[rng() % alphabet.size()];
  return s;
}

const std::string kGpt2Dir = std::string(TS_SOURCE_DIR) + "/data/gpt2-bpe";

ts::gpt2::Encoder& gpt2() {
  if (!std::ifstream(kGpt2Dir + "/vocab.bpe")) FAIL(kGpt2Dir << " is missing: run scripts/fetch_gpt2_bpe.sh");
  static ts::gpt2::Encoder enc(kGpt2Dir + "/vocab.bpe", kGpt2Dir + "/encoder.json");
  return enc;
}

}  // namespace

TEST_CASE("bpe: the header's example, merge by merge", "[bpe]") {
  const ts::bpe::Tokenizer tok = ts::bpe::train("aaabdaaabac", 3, Split::Bytes);
  REQUIRE(tok.merges.size() == 3);
  CHECK(tok.merges[0].left == 'a');
  CHECK(tok.merges[0].right == 'a');
  CHECK(tok.merges[0].count == 4);
  CHECK(tok.merges[1].left == 'a');  // tied at 2 with (256, 'a'): the smaller left id wins
  CHECK(tok.merges[1].right == 'b');
  CHECK(tok.merges[1].count == 2);
  CHECK(tok.merges[2].left == 256);
  CHECK(tok.merges[2].right == 257);
  CHECK(tok.merges[2].count == 2);
  CHECK(tok.encode("aaabdaaabac") == std::vector<int32_t>{258, 'd', 258, 'a', 'c'});
  CHECK(tok.vocab[258] == "aaab");
}

TEST_CASE("bpe: incremental training learns exactly the full rescan's merges", "[bpe]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    const std::string text = random_text(rng, 200 + rng() % 2000);
    for (Split split : {Split::Bytes, Split::Gpt2}) {
      const size_t m = 1 + rng() % 150;
      const ts::bpe::Tokenizer fast = ts::bpe::train(text, m, split), naive = ts::bpe::train_naive(text, m, split);
      INFO("trial " << trial << " split " << ts::bpe::split_name(split) << " merges " << m);
      REQUIRE(fast.merges.size() == naive.merges.size());
      for (size_t k = 0; k < fast.merges.size(); ++k) {
        INFO("merge " << k);
        CHECK(fast.merges[k].left == naive.merges[k].left);
        CHECK(fast.merges[k].right == naive.merges[k].right);
        CHECK(fast.merges[k].count == naive.merges[k].count);
      }
    }
  }
}

TEST_CASE("bpe: training stops when no pair is left; empty and one-byte texts", "[bpe]") {
  CHECK(ts::bpe::train("", 10, Split::Bytes).merges.empty());
  CHECK(ts::bpe::train("x", 10, Split::Gpt2).merges.empty());
  const ts::bpe::Tokenizer tok = ts::bpe::train("abab", 10, Split::Bytes);
  CHECK(tok.merges.size() == 2);  // (a,b) then (256,256): nothing after
  CHECK(tok.encode("abab") == std::vector<int32_t>{257});
  CHECK(tok.encode("").empty());
}

TEST_CASE("bpe: decode(encode(text)) == text for any bytes, both splits", "[bpe]") {
  std::mt19937 rng(11);
  const std::string train_text = random_text(rng, 5000);
  std::string hostile = std::string("NUL\0in the middle", 18) + "\xFF\xFE\xC0\xAF\xED\xA0\x80 e\xCC\x81 \xF0\x9F\x98\x80" +
                        "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D \xE6\xBC\xA2\xE5\xAD\x97 caf\xC3";
  for (Split split : {Split::Bytes, Split::Gpt2}) {
    const ts::bpe::Tokenizer tok = ts::bpe::train(train_text, 200, split);
    CHECK(tok.decode(tok.encode(hostile)) == hostile);
    for (int k = 0; k < 50; ++k) {
      const std::string t = random_text(rng, rng() % 300);
      CHECK(tok.decode(tok.encode(t)) == t);
    }
    CHECK_THROWS_AS(tok.decode({int32_t(tok.vocab.size())}), std::invalid_argument);
  }
}

TEST_CASE("gpt2: the pre-tokenizer cuts as the header says", "[gpt2]") {
  using V = std::vector<std::string_view>;
  CHECK(ts::gpt2::split("Hello world's  2024!!\n") == V{"Hello", " world", "'s", " ", " 2024", "!!", "\n"});
  CHECK(ts::gpt2::split("a  b") == V{"a", " ", " b"});
  CHECK(ts::gpt2::split("x \n\n") == V{"x", " \n\n"});
  CHECK(ts::gpt2::split("''s 's") == V{"''", "s", " '", "s"});
  CHECK(ts::gpt2::split(" \xFF!x") == V{" \xFF!", "x"});  // an invalid byte is an "other"
  CHECK(ts::gpt2::replace_invalid_utf8("a\xE2\x82" "b\xFF") == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  CHECK(ts::gpt2::replace_invalid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(ts::gpt2::char_class(U'\u00A0') == ts::gpt2::CharClass::Space);  // JavaScript's \s ...
  CHECK(ts::gpt2::char_class(U'\uFEFF') == ts::gpt2::CharClass::Space);
  CHECK(ts::gpt2::char_class(U'\u0085') == ts::gpt2::CharClass::Other);  // ... not Python's
  CHECK(ts::gpt2::char_class(U'\u0663') == ts::gpt2::CharClass::Number);
  CHECK(ts::gpt2::char_class(U'\u05E9') == ts::gpt2::CharClass::Letter);
}

TEST_CASE("gpt2: ids from GPT-2's files, the byte map, decode", "[gpt2]") {
  ts::gpt2::Encoder& enc = gpt2();
  CHECK(enc.vocab_size() == 50257);
  CHECK(enc.merges() == 50000);
  CHECK(enc.encode("Hello world") == std::vector<int32_t>{15496, 995});
  CHECK(enc.token_text(995) == "\xC4\xA0world");  // "Ġworld": the space 0x20 is U+0120
  CHECK(ts::gpt2::byte_to_unicode(0x20) == U'\u0120');
  CHECK(ts::gpt2::byte_to_unicode('A') == U'A');
  CHECK(enc.rank(" ", "t") == 0);  // vocab.bpe's first merge: "Ġ t"
  CHECK(enc.encode("<|endoftext|>").size() > 1);  // ordinary text, as in Encoder.js
  std::mt19937 rng(3);
  for (int k = 0; k < 100; ++k) {
    const std::string t = random_text(rng, rng() % 200);
    CHECK(enc.decode(enc.encode(t)) == t);
  }
  CHECK_THROWS_AS(enc.decode({50257}), std::invalid_argument);
  CHECK_THROWS_WITH(ts::gpt2::Encoder("/nonexistent/vocab.bpe", kGpt2Dir + "/encoder.json"),
                    Catch::Contains("fetch_gpt2_bpe.sh"));
}

TEST_CASE("gpt2: Encoder.js's merge loop and the heap agree on hostile chunks", "[gpt2]") {
  ts::gpt2::Encoder& enc = gpt2();
  std::mt19937 rng(5);
  const std::vector<std::string> pieces = {",", ",,", "\"", "},{\"", "),", "'", "(", "?", ".", "-", "]", "}", "!", "%",
                                           "*", "+", ">", " ", "=", "\xFF"};
  for (int k = 0; k < 400; ++k) {
    std::string chunk;
    const size_t n = 1 + rng() % 40;
    for (size_t i = 0; i < n; ++i) chunk += pieces[rng() % pieces.size()];
    INFO("chunk \"" << chunk << "\"");
    CHECK(enc.bpe_chunk(chunk, ts::gpt2::Encoder::Loop::Naive) == enc.bpe_chunk(chunk, ts::gpt2::Encoder::Loop::Heap));
  }
  // a long run stays fast through the heap: 200,000 commas
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> ids = enc.encode(std::string(200000, ','));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(enc.decode(ids) == std::string(200000, ','));
}
