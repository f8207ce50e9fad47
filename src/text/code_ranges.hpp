// code_ranges.hpp: sorted, disjoint ranges of code points, the form the generated Unicode tables
// take (src/text/unicode_tables_*.inc for the WordPiece tokenizer, gpt2_unicode_*.inc for GPT-2's
// pre-tokenizer), and the one lookup both use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace ts {

struct CodeRange {  // every code point in [first, last]
  char32_t first, last;
};

// Binary search: is c inside one of the sorted, disjoint ranges of `table`?
template <size_t N>
bool in_ranges(const CodeRange (&table)[N], char32_t c) {
  const CodeRange* it = std::upper_bound(std::begin(table), std::end(table), c,
                                         [](char32_t x, const CodeRange& r) { return x < r.first; });
  return it != std::begin(table) && c <= (it - 1)->last;
}

}  // namespace ts
