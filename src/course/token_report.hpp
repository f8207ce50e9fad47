// course/token_report.hpp: what ch15 measures about tokens (introduced in ch15, "tokens from real
// text"): the text's characters, a check of the BPE trainer against a full recount, the vocabulary
// as it grows, GPT-2's merges traced on one chunk. Presentation and checks over text/bpe.hpp and
// text/gpt2_encoder.hpp; nothing here trains or encodes differently from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe.hpp"
#include "text/gpt2_encoder.hpp"

namespace ts {

// bytes as Python's repr of a str shows them, in single quotes: printable ASCII and valid UTF-8
// (not a control or invisible character) as they are; \n \t \r \\ \' and \0 escaped; any other
// byte, and a byte of invalid UTF-8, as \xNN. "caf\xe9\n" -> 'caf\xe9\n'
std::string visible(std::string_view bytes);

// the characters of a text: each valid UTF-8 sequence is one, each byte of invalid UTF-8 one
std::vector<std::string_view> characters(std::string_view text);

// The first `k` merges of `tok` checked against a full recount, the way minbpe trains: before
// each merge, every adjacent pair of every chunk counted again (chunks: GPT-2's pre-tokenizer
// for Split::Gpt2, the whole text for Split::Bytes); the merge must be the pair with the highest
// count, the smallest (left, right) on a tie, with that count.
struct RecountCheck {
  size_t checked = 0;  // merges compared
  size_t ties = 0;     // of them, merges chosen among two or more pairs of the same count
  bool ok = true;
  size_t first_bad = 0;        // the first merge that differs (when !ok)
  bpe::Merge expected{};       // what the recount chose there
};
RecountCheck recount_merges(std::string_view text, const bpe::Tokenizer& tok, size_t k);

// The text's length in tokens after the first k merges, for each k of `ks` (ascending), the plain
// way: the chunks cut as the trainer cut them, each merge applied in turn at every place it occurs,
// left to right (no ranks, no heap: what encode() must agree with).
std::vector<size_t> replay_lengths(std::string_view text, const bpe::Tokenizer& tok, const std::vector<size_t>& ks);

// the tokenizer with only its first k merges (the vocabulary as it was after merge k)
bpe::Tokenizer first_merges(const bpe::Tokenizer& tok, size_t k);

// The lengths in bytes of the learned tokens (ids 256..), as a text histogram: one row per length,
// a bar of '#' scaled to `bar` columns at most, and the count (and as a Bars figure for --svg).
std::string length_histogram(const bpe::Tokenizer& tok, size_t bar = 40);

// How one learned token was built: the merges that made it, from the token down to its bytes,
// read from tok.merges (the trainer's list, in the order encode() applies them). Draws the tree for --svg (a Tree figure) and
// returns it as text, one line per merge, indented under the merge it feeds (at most
// `most_lines`, then how many more), with what the walk measured.
struct MergeTree {
  std::string text;
  std::string leaves;  // the bytes at the leaves, left to right (the token itself, when built right)
  size_t merges = 0;   // joins in the tree (a merge used twice, as in 'aaaa' = 'aa' + 'aa', counts twice)
  size_t distinct = 0; // distinct merges among them
  size_t depth = 0;    // the longest chain of merges from a byte up to the token
};
MergeTree merge_tree(const bpe::Tokenizer& tok, int32_t id, size_t most_lines = 24);

// GPT-2's merges on one chunk, as Encoder.js applies them: the pieces start as the chunk's bytes;
// the adjacent pair whose merge has the lowest rank (its line in vocab.bpe) is merged at every
// place it occurs, left to right; again until no pair has a rank. (Written out here to show the
// ranks; the chapter checks that its pieces are those of Encoder::encode.)
struct RankStep {
  int32_t rank;
  std::string left, right;  // raw bytes
};
std::vector<RankStep> trace_merges(const gpt2::Encoder& enc, std::string_view chunk,
                                   std::vector<std::string>& pieces);

}  // namespace ts
