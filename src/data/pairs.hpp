// data/pairs.hpp: English->French sentence pairs from message catalogs, and their
// train/validation/test split (introduced with the real-text data, issue 43).
//
// A catalog entry (msgid -> msgstr[0], its context ignored) becomes a pair when every rule holds,
// checked in this order; the first that fails is the reason counted against it:
//   plural       the entry has no plural forms (their English has two sides, and a count)
//   untranslated the French is not empty
//   utf8         both sides are valid UTF-8 (the catalog's charset must be UTF-8 or ASCII)
//   control      no control byte (newline, tab, ...): usage texts and aligned tables fail here
//   placeholder  no '%' on either side: printf conversions (%s %d %1$s %<PRIu64>) and %%
//   marker       no '_' or '&': accelerator markers, and identifiers such as GIT_DIR
//   option       neither side starts with '-' (an option's description, "-a, --all ...")
//   letters      both sides have a letter (ASCII, or any non-ASCII character): "..." fails
//   words        4 to 30 words on each side; a word is a run of bytes between ASCII spaces
//   copied       the French differs from the English
//   duplicate    the same (English, French) pair was not already taken, from any catalog
// Both sides are first trimmed of leading and trailing spaces, tabs and newlines (a one-line
// message that ends in "\n" is a sentence), and kept so, otherwise as the catalog has them.
//
// Split: by the English side alone, so a sentence never sits in two splits (two translations of
// one English sentence land together):
//   key    = the English trimmed, each run of ASCII spaces made one, ASCII letters lower-cased
//   h      = FNV-1a 64 of key's bytes (offset basis 14695981039346656037, prime 1099511628211)
//   bucket = h % 100:  0-79 train, 80-89 validation, 90-99 test
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/mo.hpp"

namespace ts::data {

enum class Split { train, validation, test };
const char* split_name(Split s);

std::string english_key(std::string_view en);
uint64_t fnv1a64(std::string_view bytes);
Split split_of(std::string_view en);

// the rules' names, in the order they are checked (the counts below use them)
const std::vector<std::string>& pair_rules();
// the rule the pair fails ("placeholder", ...), or "" when it passes every rule but `duplicate`
std::string pair_refusal(std::string_view en, std::string_view fr);

struct Pair {
  std::string en, fr;
  std::string source;  // the catalog's file name without directory, "coreutils.mo"
  Split split = Split::train;
};

struct SourceCount {
  std::string source;
  size_t entries = 0, kept = 0;
  std::vector<std::pair<std::string, size_t>> refused;  // per rule, in pair_rules() order
};

struct PairSet {
  std::vector<Pair> pairs;            // catalogs in the order given, entries in file order
  std::vector<SourceCount> sources;   // one per catalog
};

// pairs from the catalogs; a catalog whose charset is neither UTF-8 nor ASCII: ts::FileError
PairSet extract_pairs(const std::vector<MoCatalog>& catalogs);

}  // namespace ts::data
