// bpe.hpp: byte-level BPE, trained on a text (minbpe's BasicTokenizer and RegexTokenizer).
//
// Training starts from the 256 bytes and learns merges one at a time:
//   count every adjacent pair of tokens (overlapping: "aaa" has the pair (a, a) twice);
//   the pair with the highest count becomes a new token, id 256 + merge number;
//   every occurrence of it, left to right, becomes that token; repeat.
//   "aaabdaaabac", 3 merges: (a,a)=256 x4; (a,b)=257 x2 (tied with (256,a): the smaller left id
//   wins); (256,257)=258 x2 -> ids [258 d 258 a c]
// Ties: among pairs of equal count, the smallest (left id, then right id) wins; the Python twin
// (tests/twins/bpe_reference.py) breaks them the same way, so both learn the same merges.
// Split::Bytes treats the text as one sequence of bytes (BasicTokenizer); Split::Gpt2 first cuts
// it with GPT-2's pattern (gpt2_pretokenize.hpp, invalid UTF-8 kept as bytes) and never merges
// across chunks (RegexTokenizer). Training stops early when no pair is left.
//
// train() keeps the pair counts up to date as it merges (only the pairs beside each merged
// occurrence change) and picks the next pair from a max-heap: 4,096 merges on all of fortunes
// (2.5 MB) take seconds. train_naive() recounts everything after each merge, as the twin does:
// the same merges, for small texts and for checking train().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ts::bpe {

enum class Split { Bytes, Gpt2 };

struct Merge {
  int32_t left, right;  // the pair of token ids
  int32_t id;           // the new token: 256 + its index in merges
  int64_t count;        // how often the pair occurred when it was chosen
};

struct Tokenizer {
  Split split = Split::Bytes;
  std::vector<Merge> merges;       // (M), in the order learned
  std::vector<std::string> vocab;  // (256 + M): id -> the bytes it stands for

  // text (any bytes) -> ids (T): within each chunk, merges applied in the order learned
  std::vector<int32_t> encode(std::string_view text) const;
  // ids (T) -> bytes; decode(encode(t)) == t for every byte string t. Throws
  // std::invalid_argument for an id outside [0, 256 + M).
  std::string decode(const std::vector<int32_t>& ids) const;
};

// text -> up to num_merges merges (fewer when no pair is left), incremental pair counts
Tokenizer train(std::string_view text, size_t num_merges, Split split);
// the same result by the full rescan after every merge (slow: for tests and small texts)
Tokenizer train_naive(std::string_view text, size_t num_merges, Split split);

// "bytes" / "gpt2"
const char* split_name(Split split);

}  // namespace ts::bpe
