// gpt2_pretokenize.hpp: GPT-2's pre-tokenizer, the regex that cuts text into chunks before BPE,
// written out by hand (no regex library) over generated Unicode tables.
//
// The pattern (OpenAI's encoder.py; the npm package gpt-3-encoder runs it as a JavaScript regex
// with the u flag, alternatives tried left to right at each position):
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   "Hello world's  2024!!\n" -> "Hello" | " world" | "'s" | " " | " 2024" | "!!" | "\n"
// so a chunk is: a contraction; one optional space (U+0020) then a run of letters, of numbers or
// of "others"; or a run of spaces, less its last one when a non-space follows (that space starts
// the next chunk: "a  b" -> "a" | " " | " b").
// Letters \p{L}, numbers \p{N} and spaces \s are JavaScript's, from src/text/gpt2_unicode_*.inc
// (scripts/gen_gpt2_unicode.js, made by the node that runs the twin; its Unicode is
// gpt2_unicode_version()). JavaScript's \s is not Python's: it has U+FEFF, not U+0085 or U+001C..1F.
// Which Unicode answers \p{L} depends on the engine, measured here: node answers from its ICU
// (node 20.20 from NodeSource with ICU 78.2: Unicode 17.0; Debian 12's own nodejs 18 has ICU 72,
// Unicode 15.0; Debian 13's nodejs 20 ICU 76, Unicode 16.0); OpenAI's encoder.py runs Python's
// `regex` module, whose tables are its own (Debian 12's python3-regex 2022.10.31: Unicode 15.0,
// U+1C89 of 16.0 is unassigned there), and Python's unicodedata is Unicode 14.0. The tables
// follow node, the engine the twin runs; they differ from the others only on code points that
// one of them calls unassigned (gpt2_twin checks every code point against the node it finds).
//
// Invalid UTF-8 (the pattern is defined on code points, the input here is bytes), two policies:
//   Keep     each byte that does not start a valid sequence is a one-byte "other" (neither letter,
//            number nor space): every byte of the input lands in exactly one chunk, so byte-level
//            BPE over the chunks gives back the input exactly.
//   Replace  what node does: reading a Buffer as UTF-8 replaces each maximal invalid subpart with
//            U+FFFD (WHATWG's decoder), then the pattern runs on that string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ts::gpt2 {

enum class CharClass : uint8_t { Letter, Number, Space, Other };
enum class InvalidUtf8 { Keep, Replace };

// \p{L} -> Letter, \p{N} -> Number, \s -> Space, anything else -> Other (code point c <= 0x10FFFF)
CharClass char_class(char32_t c);
// \p{Cn}: c is unassigned in the tables' Unicode
bool unassigned(char32_t c);
// The Unicode of the tables, e.g. "17.0" (node's process.versions.unicode when they were made)
const char* unicode_version();

// text -> the same text with every maximal invalid UTF-8 subpart replaced by U+FFFD (EF BF BD),
// as WHATWG's decoder (node's Buffer.toString('utf8')) does: "a\xE2\x82b\xFF" -> "a\uFFFDb\uFFFD"
std::string replace_invalid_utf8(std::string_view text);

// whether text is valid UTF-8 (then replace_invalid_utf8 would return it unchanged)
bool valid_utf8(std::string_view text);

// text (bytes) -> chunks, views into text that cover it in order, each non-empty (Keep policy;
// for Replace, split replace_invalid_utf8(text)). Appends to chunks.
void split(std::string_view text, std::vector<std::string_view>& chunks);
std::vector<std::string_view> split(std::string_view text);

}  // namespace ts::gpt2
