// token_notes.hpp: the table ch01 prints under tokenize() (introduced in ch01). Presentation only:
// it asks the tokenizer the chapter built how it cut each word.
#pragma once

#include <string>

#include "text/tokenizer.hpp"

namespace ts {

// One line per word of `text` (basic_tokenize): the word, its WordPiece pieces and their ids,
// under a header; `any_split` says whether some word was cut into more than one piece.
struct WordPieceTable {
  std::string text;
  bool any_split = false;
};
WordPieceTable word_piece_table(const WordPieceTokenizer& tokenizer, const std::string& text);

}  // namespace ts
