// gpt2_pretokenize.cpp: GPT-2's pre-tokenizer pattern by hand (see gpt2_pretokenize.hpp).
// The input is scanned once, left to right; at each position the pattern's alternatives are
// tried in their order, each reduced to "what class is the next unit, how far does its run go".
#include "text/gpt2_pretokenize.hpp"
#include "text/code_ranges.hpp"

#include <algorithm>
#include <iterator>

#include "base/code_site.hpp"

namespace ts::gpt2 {
namespace {

// The tables node's regex engine answers from (scripts/gen_gpt2_unicode.js).
#include "text/gpt2_unicode_17_0.inc"


CharClass slow_class(char32_t c) {
  if (in_ranges(kLetterRanges, c)) return CharClass::Letter;
  if (in_ranges(kNumberRanges, c)) return CharClass::Number;
  if (in_ranges(kSpaceRanges, c)) return CharClass::Space;
  return CharClass::Other;
}

// The 128 ASCII code points' classes, from the same tables (filled before main runs).
struct AsciiClasses {
  CharClass cls[128];
  AsciiClasses() {
    for (char32_t c = 0; c < 128; ++c) cls[c] = slow_class(c);
  }
};
const AsciiClasses kAscii;

// One unit of the input: a valid UTF-8 sequence (one code point) or one invalid byte (Other).
struct Unit {
  CharClass cls;
  size_t len;  // bytes, 1 to 4
};

// The unit starting at text[i] (i < text.size()); strict UTF-8: no overlong forms, no
// surrogates, nothing above U+10FFFF, no truncated sequence.
Unit unit_at(std::string_view text, size_t i) {
  const unsigned char b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) return {kAscii.cls[b], 1};
  size_t len;
  char32_t c;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2, c = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3, c = b & 0x0F;
    if (b == 0xE0) lo = 0xA0;  // overlong
    if (b == 0xED) hi = 0x9F;  // surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4, c = b & 0x07;
    if (b == 0xF0) lo = 0x90;  // overlong
    if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return {CharClass::Other, 1};
  }
  if (i + len > text.size()) return {CharClass::Other, 1};
  for (size_t k = 1; k < len; ++k) {
    const unsigned char t = static_cast<unsigned char>(text[i + k]);
    if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xBF)) return {CharClass::Other, 1};
    c = (c << 6) | (t & 0x3F);
  }
  return {slow_class(c), len};
}

// End of the run of units of class cls that starts at text[i].
size_t run_end(std::string_view text, size_t i, CharClass cls) {
  while (i < text.size()) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {  // ASCII without the decoder
      if (kAscii.cls[b] != cls) break;
      ++i;
      continue;
    }
    const Unit u = unit_at(text, i);
    if (u.cls != cls) break;
    i += u.len;
  }
  return i;
}

// Length of the contraction 's 't 're 've 'm 'll 'd at text[i] (text[i] == '\''), else 0.
size_t contraction_at(std::string_view text, size_t i) {
  if (i + 1 >= text.size()) return 0;
  const char a = text[i + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= text.size()) return 0;
  const char b = text[i + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace

CharClass char_class(char32_t c) { return c < 128 ? kAscii.cls[c] : slow_class(c); }
bool unassigned(char32_t c) { return in_ranges(kUnassignedRanges, c); }
const char* unicode_version() { return kGpt2UnicodeVersion; }

bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Unit u = unit_at(text, i);
    if (u.len == 1) return false;  // a non-ASCII unit of one byte is an invalid byte
    i += u.len;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view text) {
  // WHATWG's UTF-8 decoder: a lead byte says how many continuation bytes follow and the range
  // of the first; the first byte that breaks the sequence ends it (one U+FFFD for all so far)
  // and is read again as the start of what follows.
  static constexpr char kReplacement[] = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      out += char(b);
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      out += kReplacement;
      ++i;
      continue;
    }
    size_t k = 1;
    for (; k <= need && i + k < text.size(); ++k) {
      const unsigned char t = static_cast<unsigned char>(text[i + k]);
      if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xBF)) break;
    }
    if (k == need + 1) {
      out.append(text.substr(i, k));
    } else {
      out += kReplacement;  // the maximal subpart text[i, i+k) was invalid
    }
    i += k;
  }
  return out;
}

void split(std::string_view text, std::vector<std::string_view>& chunks) {
  TS_CODE_SITE();
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const size_t start = i;
    // 1) 's 't 're 've 'm 'll 'd
    if (text[i] == '\'') {
      if (const size_t len = contraction_at(text, i)) {
        chunks.push_back(text.substr(i, len));
        i += len;
        continue;
      }
    }
    const Unit u = unit_at(text, i);
    // 2-4) " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": one space joins the run that follows
    size_t from = i;
    CharClass cls = u.cls;
    if (text[i] == ' ' && i + 1 < n) {
      const CharClass next = unit_at(text, i + 1).cls;
      if (next != CharClass::Space) from = i + 1, cls = next;
    }
    if (cls != CharClass::Space) {
      i = run_end(text, from, cls);
      chunks.push_back(text.substr(start, i - start));
      continue;
    }
    // 5) "\s+(?!\S)": the run of spaces, less its last space when a non-space follows;
    // 6) "\s+": a single space before a non-space (5 matched nothing)
    size_t last = i;  // start of the run's last unit
    while (i < n) {
      const Unit s = unit_at(text, i);
      if (s.cls != CharClass::Space) break;
      last = i;
      i += s.len;
    }
    if (i < n && last > start) i = last;
    chunks.push_back(text.substr(start, i - start));
  }
}

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> chunks;
  split(text, chunks);
  return chunks;
}

}  // namespace ts::gpt2
