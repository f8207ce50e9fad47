// tokenizer.cpp: bert-base-uncased's WordPiece tokenizer (introduced in ch01).
// Follows HF transformers' slow BertTokenizer step by step; the step numbers match
// the list in tokenizer.hpp. Text is handled as UTF-32 (one char32_t per code point)
// between decoding the UTF-8 input and encoding the finished words back to UTF-8.
#include "text/tokenizer.hpp"
#include "text/code_ranges.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string_view>

namespace ts {
namespace {

// ---------------------------------------------------------------------------------
// Unicode character data, generated from Python's unicodedata
// ---------------------------------------------------------------------------------
struct LowerRun {             // every stride-th code point in [first, last] lower-cases to c + delta
  char32_t first, last;
  int32_t delta, stride;
};
struct LowerSpecial {         // lower-cases to several code points (to[] is 0-terminated)
  char32_t from;
  char32_t to[3];
};
struct Decomposition {        // canonical decomposition cp -> first second (second 0 if none)
  char32_t cp, first, second;
};
struct CombiningClassRange {  // canonical combining class ccc of [first, last] (only ccc != 0)
  char32_t first, last;
  int ccc;
};

// The table set of the Unicode that configure chose (TS_UNICODE: by default /usr/bin/python3's,
// which the reference twin runs), e.g. "text/unicode_tables_14_0_0.inc".
#ifndef TS_UNICODE_TABLES
#error "TS_UNICODE_TABLES names src/text/unicode_tables_<version>.inc (CMakeLists.txt defines it)"
#endif
#include TS_UNICODE_TABLES


// HF _is_control: category C* (Cc, Cf, Cs, Co, Cn), except \t \n \r which count as spaces.
bool is_control(char32_t c) {
  if (c == U'\t' || c == U'\n' || c == U'\r') return false;
  return in_ranges(kControlRanges, c);
}

// HF _is_whitespace: space, \t, \n, \r, or category Zs.
bool is_whitespace(char32_t c) {
  if (c == U' ' || c == U'\t' || c == U'\n' || c == U'\r') return true;
  return in_ranges(kSpaceSeparatorRanges, c);
}

// HF _is_punctuation: every non-alphanumeric printable ASCII character, or category P*.
bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
    return true;
  return in_ranges(kPunctuationRanges, c);
}

// HF _is_chinese_char: the CJK Unified Ideographs blocks and extensions A-E plus the
// compatibility ideographs, exactly the ranges HF lists (not Hiragana, Katakana, Hangul).
bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Python's str.split() splits on every c.isspace(). After cleaning (step 1) the only
// ones left are the space itself and U+2028/U+2029 (line/paragraph separators).
bool is_split_space(char32_t c) {
  return c == U' ' || std::find(std::begin(kExtraSplitSpaces), std::end(kExtraSplitSpaces), c) !=
                          std::end(kExtraSplitSpaces);
}

bool is_nonspacing_mark(char32_t c) { return in_ranges(kNonspacingMarkRanges, c); }

// Python's chr(c).lower(), appended to out (one code point, or several for U+0130).
void append_lower(char32_t c, std::u32string& out) {
  if (c < 0x80) {  // fast path for ASCII
    out += (c >= U'A' && c <= U'Z') ? char32_t(c + 32) : c;
    return;
  }
  for (const LowerSpecial& s : kLowerSpecial) {
    if (s.from == c) {
      for (char32_t t : s.to)
        if (t != 0) out += t;
      return;
    }
  }
  const LowerRun* it = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), c,
                                        [](char32_t x, const LowerRun& r) { return x < r.first; });
  if (it != std::begin(kLowerRuns)) {
    const LowerRun& r = *(it - 1);
    if (c <= r.last && (c - r.first) % char32_t(r.stride) == 0) {
      out += char32_t(int32_t(c) + r.delta);
      return;
    }
  }
  out += c;
}

// Canonical combining class (0 for base characters, e.g. 230 for U+0301 acute accent).
int combining_class(char32_t c) {
  const CombiningClassRange* it =
      std::upper_bound(std::begin(kCombiningClassRanges), std::end(kCombiningClassRanges), c,
                       [](char32_t x, const CombiningClassRange& r) { return x < r.first; });
  if (it == std::begin(kCombiningClassRanges) || c > (it - 1)->last) return 0;
  return (it - 1)->ccc;
}

// Full canonical decomposition of one code point, appended to out ("é" -> "e" U+0301).
void append_decomposition(char32_t c, std::u32string& out) {
  // Hangul syllables decompose by arithmetic into 2 or 3 conjoining jamo (Unicode ch. 3.12).
  constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
  constexpr char32_t kSCount = 11172, kNCount = 588, kTCount = 28;
  if (c >= kSBase && c < kSBase + kSCount) {
    char32_t s = c - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount != 0) out += kTBase + s % kTCount;
    return;
  }
  const Decomposition* it =
      std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), c,
                       [](const Decomposition& d, char32_t x) { return d.cp < x; });
  if (it == std::end(kDecompositions) || it->cp != c) {
    out += c;
    return;
  }
  append_decomposition(it->first, out);  // mappings nest, e.g. U+1E09 -> U+00E7 U+0301
  if (it->second != 0) append_decomposition(it->second, out);
}

// Step 5, HF _run_strip_accents: unicodedata.normalize("NFD", word), drop category Mn.
std::u32string strip_accents(const std::u32string& word) {
  // a) decompose every code point
  std::u32string nfd;
  for (char32_t c : word) append_decomposition(c, nfd);
  // b) canonical ordering: a run of combining marks (ccc != 0) is stably sorted by ccc
  for (size_t i = 0; i < nfd.size();) {
    if (combining_class(nfd[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < nfd.size() && combining_class(nfd[j]) != 0) ++j;
    std::stable_sort(nfd.begin() + i, nfd.begin() + j,
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  // c) drop the nonspacing marks (the accents)
  std::u32string out;
  for (char32_t c : nfd)
    if (!is_nonspacing_mark(c)) out += c;
  return out;
}

// ---------------------------------------------------------------------------------
// UTF-8 <-> UTF-32
// ---------------------------------------------------------------------------------
[[noreturn]] void throw_bad_utf8(const std::string& s, size_t at, const char* why) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", unsigned(static_cast<unsigned char>(s[at])));
  throw std::invalid_argument("invalid UTF-8 at byte " + std::to_string(at) + " of the input (" +
                              hex + "): " + why);
}

// UTF-8 -> code points, as strict as Python's decoder: no overlong forms, no surrogates,
// nothing above U+10FFFF, no truncated sequences. byte_at (optional) receives the byte
// offset of each code point, plus one final entry = s.size().
std::u32string decode_utf8(const std::string& s, std::vector<size_t>* byte_at = nullptr) {
  std::u32string out;
  out.reserve(s.size());
  if (byte_at) byte_at->clear();
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    size_t len;
    char32_t c;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b < 0x80) {
      len = 1, c = b;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2, c = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3, c = b & 0x0F;
      if (b == 0xE0) lo = 0xA0;  // overlong
      if (b == 0xED) hi = 0x9F;  // surrogates U+D800..U+DFFF
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4, c = b & 0x07;
      if (b == 0xF0) lo = 0x90;  // overlong
      if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      throw_bad_utf8(s, i, b < 0xC0 ? "unexpected continuation byte" : "not a UTF-8 lead byte");
    }
    if (i + len > s.size()) throw_bad_utf8(s, i, "truncated sequence at the end");
    for (size_t k = 1; k < len; ++k) {
      const unsigned char t = static_cast<unsigned char>(s[i + k]);
      if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xBF))
        throw_bad_utf8(s, i, "bad continuation byte");
      c = (c << 6) | (t & 0x3F);
    }
    if (byte_at) byte_at->push_back(i);
    out += c;
    i += len;
  }
  if (byte_at) byte_at->push_back(s.size());
  return out;
}

std::string to_utf8(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(c, out);
  return out;
}

// ---------------------------------------------------------------------------------
// The basic tokenizer (steps 0-6)
// ---------------------------------------------------------------------------------
constexpr size_t kMaxWordChars = 100;  // HF max_input_chars_per_word
const char* const kUnkToken = "[UNK]";
const char32_t* const kSpecialTokens[] = {U"[UNK]", U"[SEP]", U"[PAD]", U"[CLS]", U"[MASK]"};

bool is_special_token(const std::string& word) {
  return word == "[UNK]" || word == "[SEP]" || word == "[PAD]" || word == "[CLS]" || word == "[MASK]";
}

// Length of the special token starting at text[i], or 0 if none does.
size_t special_token_at(const std::u32string& text, size_t i) {
  for (const char32_t* tok : kSpecialTokens) {
    const std::u32string_view t(tok);
    if (text.compare(i, t.size(), t) == 0) return t.size();
  }
  return 0;
}

// Step 6, HF _run_split_on_punc: every punctuation code point becomes its own word.
void split_on_punctuation(const std::u32string& token, std::vector<std::string>& words) {
  std::u32string current;
  for (char32_t c : token) {
    if (is_punctuation(c)) {
      if (!current.empty()) words.push_back(to_utf8(current));
      current.clear();
      words.push_back(to_utf8(std::u32string(1, c)));
    } else {
      current += c;
    }
  }
  if (!current.empty()) words.push_back(to_utf8(current));
}

// Steps 1-6 on a piece of text that holds no special token (HF BasicTokenizer.tokenize).
void basic_tokenize_chunk(const std::u32string& chunk, std::vector<std::string>& words) {
  // 1) clean and 2) space out CJK ideographs
  std::u32string text;
  for (char32_t c : chunk) {
    if (c == 0 || c == 0xFFFD || is_control(c)) continue;
    if (is_whitespace(c)) {
      text += U' ';
    } else if (is_chinese_char(c)) {
      text += U' ';
      text += c;
      text += U' ';
    } else {
      text += c;
    }
  }
  // 3) whitespace split; each token is then 4) lower-cased, 5) stripped of accents
  // and 6) split on punctuation. (HF also skips 4-6 for never_split tokens, but step 0
  // already took every special token out of the text.)
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_split_space(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && !is_split_space(text[j])) ++j;
    if (j > i) {
      std::u32string lower;
      for (size_t k = i; k < j; ++k) append_lower(text[k], lower);
      split_on_punctuation(strip_accents(lower), words);
    }
    i = j;
  }
}

}  // namespace

bool is_category_c(char32_t c) { return in_ranges(kControlRanges, c); }
bool is_category_zs(char32_t c) { return in_ranges(kSpaceSeparatorRanges, c); }

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

// ---------------------------------------------------------------------------------
// WordPieceTokenizer
// ---------------------------------------------------------------------------------
namespace {

// What a file type is called in a message ("a FIFO", "a directory", ...).
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The whole vocabulary file, refusing anything but a regular file of at most kMaxVocabBytes.
// O_NONBLOCK: opening a FIFO must not wait for a writer (fstat then refuses it).
std::string read_vocab_file(const std::string& path) {
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("cannot read vocabulary " + path + ": " + why);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(std::string(std::strerror(errno)) + " (scripts/fetch_vocab.sh downloads it)");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(std::string("it is ") + file_kind(st.st_mode) + ", not a vocabulary text file");
  auto too_big = [&](uint64_t bytes) {
    fail(std::to_string(bytes) + " bytes is more than the " + std::to_string(WordPieceTokenizer::kMaxVocabBytes) +
         " a vocabulary may have (bert-base-uncased's has 231508): is this the right file?");
  };
  if (static_cast<uint64_t>(st.st_size) > WordPieceTokenizer::kMaxVocabBytes) too_big(static_cast<uint64_t>(st.st_size));
  std::string data;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(std::string("read error: ") + std::strerror(errno));
    if (got == 0) break;
    data.append(chunk, static_cast<size_t>(got));
    if (data.size() > WordPieceTokenizer::kMaxVocabBytes) too_big(data.size());  // it grew while we read
  }
  return data;
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(const std::string& vocab_path) { load(read_vocab_file(vocab_path), vocab_path); }

WordPieceTokenizer WordPieceTokenizer::from_string(const std::string& contents, const std::string& name) {
  WordPieceTokenizer t;
  t.load(contents, name);
  return t;
}

void WordPieceTokenizer::load(const std::string& data, const std::string& name) {
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("cannot read vocabulary " + name + ": " + why);
  };
  if (data.empty()) fail("the file is empty (scripts/fetch_vocab.sh downloads it)");
  if (data.size() > kMaxVocabBytes) fail("more than " + std::to_string(kMaxVocabBytes) + " bytes");

  // 1) one token per line; like Python's readlines(), "\n", "\r\n" and "\r" end a line
  id_to_token_.reserve(30522);
  const char* p = data.data();
  const char* const end = p + data.size();
  while (p < end) {
    const char* eol = p;
    while (eol < end && *eol != '\n' && *eol != '\r') ++eol;
    id_to_token_.emplace_back(p, eol);
    const std::string bad = utf8_error(id_to_token_.back());
    if (!bad.empty()) fail("line " + std::to_string(id_to_token_.size()) + ": " + bad + " (vocabularies are UTF-8 text)");
    p = eol + 1;
    if (eol < end && *eol == '\r' && p < end && *p == '\n') ++p;
  }

  // 2) reverse map piece -> id: an open-addressing hash table of ids (see lookup). A piece
  // listed twice would leave an id no lookup returns (and ids past the model's table):
  // refused, so ids are exactly the line numbers 0..V-1 of distinct pieces.
  size_t capacity = 1;
  while (capacity < 2 * id_to_token_.size()) capacity *= 2;
  slots_.assign(capacity, -1);
  for (size_t id = 0; id < id_to_token_.size(); ++id) {
    size_t h = hash_piece(id_to_token_[id]) & (capacity - 1);
    while (slots_[h] >= 0 && id_to_token_[slots_[h]] != id_to_token_[id]) h = (h + 1) & (capacity - 1);
    if (slots_[h] >= 0) {
      std::string piece = id_to_token_[id].substr(0, 40);
      fail("line " + std::to_string(id + 1) + " repeats line " + std::to_string(slots_[h] + 1) + " ('" + piece +
           "'): a vocabulary lists each piece once");
    }
    slots_[h] = static_cast<int32_t>(id);
  }

  unk_id_ = lookup("[UNK]");
  cls_id_ = lookup("[CLS]");
  sep_id_ = lookup("[SEP]");
  if (unk_id_ < 0 || cls_id_ < 0 || sep_id_ < 0)
    fail("no [UNK], [CLS] or [SEP] line; is this a BERT vocabulary?");
}

// FNV-1a: a simple, good-enough string hash.
size_t WordPieceTokenizer::hash_piece(const std::string& piece) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : piece) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h);
}

// Probe slots_ from the piece's hash until its id or an empty slot (-1) turns up.
int64_t WordPieceTokenizer::lookup(const std::string& piece) const {
  const size_t mask = slots_.size() - 1;
  for (size_t h = hash_piece(piece) & mask;; h = (h + 1) & mask) {
    if (slots_[h] < 0) return -1;
    if (id_to_token_[slots_[h]] == piece) return slots_[h];
  }
}

// text (UTF-8) -> words
std::vector<std::string> WordPieceTokenizer::basic_tokenize(const std::string& text) const {
  const std::u32string cps = decode_utf8(text);
  std::vector<std::string> words;
  // 0) cut the text at special tokens; the pieces in between go through steps 1-6
  size_t chunk_start = 0;
  for (size_t i = 0; i < cps.size();) {
    const size_t n = cps[i] == U'[' ? special_token_at(cps, i) : 0;
    if (n == 0) {
      ++i;
      continue;
    }
    basic_tokenize_chunk(cps.substr(chunk_start, i - chunk_start), words);
    words.push_back(to_utf8(cps.substr(i, n)));
    i += n;
    chunk_start = i;
  }
  basic_tokenize_chunk(cps.substr(chunk_start), words);
  return words;
}

// Step 7, HF WordpieceTokenizer: greedy longest-match-first over code points.
void WordPieceTokenizer::wordpiece_into(const std::string& word, std::vector<std::string>& out) const {
  std::vector<size_t> byte_at;  // byte offset of code point k; byte_at[n] = word.size()
  const size_t n = decode_utf8(word, &byte_at).size();
  if (n > kMaxWordChars) {
    out.push_back(kUnkToken);
    return;
  }
  std::vector<std::string> pieces;
  std::string candidate;
  size_t start = 0;
  while (start < n) {
    // the longest vocabulary piece word[start:end]; "##" marks a piece inside the word
    size_t end = n;
    for (; end > start; --end) {
      candidate.assign(start > 0 ? "##" : "");
      candidate.append(word, byte_at[start], byte_at[end] - byte_at[start]);
      if (lookup(candidate) >= 0) break;
    }
    if (end == start) {  // nothing in the vocabulary fits: the whole word is unknown
      out.push_back(kUnkToken);
      return;
    }
    pieces.push_back(candidate);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

std::vector<std::string> WordPieceTokenizer::wordpiece(const std::string& word) const {
  std::vector<std::string> out;
  wordpiece_into(word, out);
  return out;
}

std::vector<std::string> WordPieceTokenizer::tokenize(const std::string& text) const {
  std::vector<std::string> pieces;
  for (const std::string& word : basic_tokenize(text)) {
    if (is_special_token(word))
      pieces.push_back(word);  // special tokens are kept whole (step 0)
    else
      wordpiece_into(word, pieces);
  }
  return pieces;
}

std::vector<int64_t> WordPieceTokenizer::encode(const std::string& text, bool add_special_tokens) const {
  std::vector<int64_t> ids;
  if (add_special_tokens) ids.push_back(cls_id_);
  for (const std::string& piece : tokenize(text)) ids.push_back(token_to_id(piece));
  if (add_special_tokens) ids.push_back(sep_id_);
  return ids;
}

int64_t WordPieceTokenizer::token_to_id(const std::string& tok) const {
  const int64_t id = lookup(tok);
  return id >= 0 ? id : unk_id_;
}

const std::string& WordPieceTokenizer::id_to_token(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(id_to_token_.size())) return id_to_token_[unk_id_];
  return id_to_token_[id];
}

size_t WordPieceTokenizer::vocab_size() const { return id_to_token_.size(); }

const char* WordPieceTokenizer::unicode_version() { return kUnicodeVersion; }

std::string utf8_error(const std::string& s) {
  try {
    decode_utf8(s);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

std::vector<std::string> python_split(const std::string& text) {
  const std::u32string cps = decode_utf8(text);
  auto is_space = [](char32_t c) { return std::binary_search(std::begin(kPythonSpaces), std::end(kPythonSpaces), c); };
  std::vector<std::string> words;
  for (size_t i = 0; i < cps.size();) {
    while (i < cps.size() && is_space(cps[i])) ++i;
    size_t j = i;
    while (j < cps.size() && !is_space(cps[j])) ++j;
    if (j > i) words.push_back(to_utf8(cps.substr(i, j - i)));
    i = j;
  }
  return words;
}

}  // namespace ts
