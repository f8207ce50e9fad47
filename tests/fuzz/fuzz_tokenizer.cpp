// fuzz_tokenizer.cpp: libFuzzer target for the WordPiece tokenizer and the vocabulary loader
// (src/text/tokenizer.cpp), built with clang's -fsanitize=fuzzer,address,undefined.
//   make test   runs it for a fixed number of inputs (CTest "fuzz_tokenizer", label sanitize)
//   make fuzz   runs it for 10 minutes
// The first byte of an input picks what is fuzzed:
//   0  text -> bert-base-uncased pieces and ids (the real vocabulary, if fetched)
//   1  "vocabulary\0text": load the vocabulary from the bytes, then tokenize the text
//   2  text -> python_split (ch10's --target) and utf8_error (every text knob)
// Beyond the sanitizers, each mode checks what callers rely on and traps if it fails.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "text/tokenizer.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

// A small vocabulary if the real one is missing (the fuzzer must run without `make deps`).
const ts::WordPieceTokenizer& bert() {
  static const std::unique_ptr<ts::WordPieceTokenizer> tok = [] {
    std::ifstream probe(TS_DEFAULT_VOCAB);
    if (probe) return std::make_unique<ts::WordPieceTokenizer>(TS_DEFAULT_VOCAB);
    return std::make_unique<ts::WordPieceTokenizer>(
        ts::WordPieceTokenizer::from_string("[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\ntime\n,\n"));
  }();
  return *tok;
}

// Text -> pieces and ids: valid UTF-8 never throws, pieces are UTF-8, ids are in [0, V),
// and encode adds exactly [CLS] ... [SEP]. Invalid UTF-8 throws std::invalid_argument.
void check_tokenize(const ts::WordPieceTokenizer& tok, const std::string& text) {
  const bool valid = ts::utf8_error(text).empty();
  try {
    const std::vector<std::string> pieces = tok.tokenize(text);
    require(valid);
    const std::vector<int64_t> ids = tok.encode(text, true);
    require(ids.size() == pieces.size() + 2);
    for (size_t i = 0; i < pieces.size(); ++i) {
      require(ts::utf8_error(pieces[i]).empty());
      require(ids[i + 1] >= 0 && static_cast<size_t>(ids[i + 1]) < tok.vocab_size());
      require(tok.id_to_token(ids[i + 1]) == pieces[i] || ids[i + 1] == tok.token_to_id("[UNK]"));
    }
  } catch (const std::invalid_argument&) {
    require(!valid);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      check_tokenize(bert(), in);
      break;
    case 1: {
      const size_t nul = in.find('\0');
      const std::string vocab = in.substr(0, nul), text = nul == std::string::npos ? "" : in.substr(nul + 1);
      try {
        const ts::WordPieceTokenizer tok = ts::WordPieceTokenizer::from_string(vocab, "fuzz");
        require(tok.vocab_size() >= 3 && tok.token_to_id("[UNK]") >= 0);
        check_tokenize(tok, text);
      } catch (const std::runtime_error&) {
        // refused vocabulary: fine, as long as it was refused cleanly
      }
      break;
    }
    default: {
      if (!ts::utf8_error(in).empty()) return 0;
      size_t total = 0;
      for (const std::string& w : ts::python_split(in)) {
        require(!w.empty() && ts::utf8_error(w).empty() && w.find(' ') == std::string::npos);
        total += w.size();
      }
      require(total <= in.size());
      break;
    }
  }
  return 0;
}
