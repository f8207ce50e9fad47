// tokenizer.hpp: bert-base-uncased's WordPiece tokenizer (introduced in ch01).
//
// Text -> token ids, exactly as HuggingFace's slow `BertTokenizer(do_lower_case=True)`:
//   "Time flies like an arrow" -> time | flies | like | an | arrow -> 2051 10029 2066 2019 8612
//
// The pipeline (HF transformers: PreTrainedTokenizer.tokenize, then
// tokenization_bert.py's BasicTokenizer and WordpieceTokenizer):
//   0) split out the special tokens [UNK] [SEP] [PAD] [CLS] [MASK] wherever they occur
//      (case-sensitive: "[cls]" is ordinary text and gets split into "[", "cl", "##s", "]")
//   1) clean:        drop U+0000, U+FFFD and category C* (controls, format, unassigned,
//                    private use); \t \n \r and category Zs become a space
//   2) CJK:          put spaces around every CJK ideograph, so each one is a word
//   3) split on whitespace
//   4) lower-case:   Python's str.lower() one code point at a time ("İ" -> "i" + U+0307;
//                    "Σ" -> "σ" always: HF lower-cases char by char, so no final "ς")
//   5) strip accents: NFD, then drop category Mn ("café" -> "cafe", "한" -> 3 jamo)
//   6) split punctuation: ASCII !"#$%&'()*+,-./ :;<=>?@ [\]^_` {|}~ and category P*
//      each become a word of their own ("don't" -> don ' t)
//   7) WordPiece each word: greedy longest match first; pieces after the first carry
//      "##"; a word of more than 100 code points, or one that cannot be fully covered
//      by vocabulary pieces, becomes the single piece [UNK]
// Unicode data comes from src/text/unicode_tables_<version>.inc (scripts/gen_unicode_tables.py),
// the set of the Unicode configure chose (TS_UNICODE: by default /usr/bin/python3's).
//
// Input text must be valid UTF-8: anything else throws std::invalid_argument
// ("invalid UTF-8 at byte N of the input: ..."), like Python refusing to decode it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

class WordPieceTokenizer {
 public:
  // Loads a vocabulary: one token per line, line number (from 0) = id, e.g.
  // data/bert-base-uncased-vocab.txt (V = 30522; scripts/fetch_vocab.sh downloads it).
  // Throws std::runtime_error("cannot read vocabulary <path>: ...") if the file is
  // missing, unreadable, not a regular file (a FIFO, /dev/zero: never opened blocking, never
  // read without bound), larger than kMaxVocabBytes, empty, not UTF-8, lists a piece twice,
  // or lacks [UNK], [CLS] or [SEP].
  explicit WordPieceTokenizer(const std::string& vocab_path);
  // The same from the file's contents (`name` is used in messages), e.g. for the fuzz target.
  static WordPieceTokenizer from_string(const std::string& contents, const std::string& name = "<string>");
  static constexpr size_t kMaxVocabBytes = size_t{16} << 20;  // 16 MiB; bert-base-uncased's: 231 kB

  // text -> words (steps 0-6): cleaned, lower-cased, accent-free, punctuation split
  std::vector<std::string> basic_tokenize(const std::string& text) const;
  // one word of basic_tokenize (no spaces) -> its pieces (step 7), e.g.
  // "tokenization" -> "token", "##ization"
  std::vector<std::string> wordpiece(const std::string& word) const;
  // text -> all pieces (steps 0-7)
  std::vector<std::string> tokenize(const std::string& text) const;
  // text -> ids (T) of tokenize(text); with add_special_tokens: [CLS] ... [SEP] (T+2)
  std::vector<int64_t> encode(const std::string& text, bool add_special_tokens = false) const;

  // piece -> id; the id of [UNK] (100 in bert-base-uncased) if the piece is not in the vocabulary
  int64_t token_to_id(const std::string& tok) const;
  // id -> piece; "[UNK]" for an id outside [0, V), as HF does
  const std::string& id_to_token(int64_t id) const;
  // V, the number of lines of the vocabulary file
  size_t vocab_size() const;
  // Unicode version of the character tables (src/text/unicode_tables_<version>.inc), e.g. "14.0.0"
  static const char* unicode_version();

 private:
  WordPieceTokenizer() = default;
  void load(const std::string& contents, const std::string& name);
  static size_t hash_piece(const std::string& piece);
  int64_t lookup(const std::string& piece) const;  // id, or -1 if absent
  void wordpiece_into(const std::string& word, std::vector<std::string>& out) const;

  std::vector<std::string> id_to_token_;  // (V): id -> piece
  std::vector<int32_t> slots_;            // hash table piece -> id: ids, -1 = empty; size 2^k >= 2V
  int64_t unk_id_ = 0, cls_id_ = 0, sep_id_ = 0;
};

// Appends code point c (<= 0x10FFFF, not a surrogate) to out as UTF-8 (1 to 4 bytes).
void append_utf8(char32_t c, std::string& out);

// "" if s is valid UTF-8, else why not: "invalid UTF-8 at byte N of the input (0xFF): ...".
std::string utf8_error(const std::string& s);

// Unicode category of code point c, from the tables the tokenizer uses (unicode_tables_<version>.inc):
// C* (a control, format, private-use or unassigned code point: nothing, or a box, on screen; U+200E
// and the other bidi marks are format characters) or Zs (a space separator other than U+0020).
// Bad-input messages name such a character where a learner's value holds one (quoted_input).
bool is_category_c(char32_t c);
bool is_category_zs(char32_t c);

// Python's text.split(): the words between runs of the code points str.isspace() is true
// for (ASCII whitespace, U+001C..U+001F, U+0085, U+00A0, U+3000, ...). s must be valid UTF-8.
std::vector<std::string> python_split(const std::string& text);

}  // namespace ts
