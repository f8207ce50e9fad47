// token_notes.hpp: the table ch01 prints under tokenize() (introduced in ch01). Presentation only:
// it asks the tokenizer the chapter built how it cut each word.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.hpp"

namespace ts {

// One line per word of `text` (basic_tokenize): the word, its WordPiece pieces and their ids,
// under a header; `any_split` says whether some word was cut into more than one piece.
struct WordPieceTable {
  std::string text;
  bool any_split = false;
};
WordPieceTable word_piece_table(const WordPieceTokenizer& tokenizer, const std::string& text);

// Python's repr of a str: single quotes unless the text has a ' and no ", backslashes doubled.
// (Tokens come out of the tokenizer's cleaning step: no control characters are left to escape.)
std::string py_repr(const std::string& s);
// Python's repr of a list, as print() shows tokenize() and convert_tokens_to_ids() results:
// ['time', 'flies'] or [2051, 10029].
std::string py_list(const std::vector<std::string>& items);
std::string py_list(const std::vector<int64_t>& items);

}  // namespace ts
