// train/numbers.hpp: ch11's synthetic translation task, numbers written as digits -> English
// words ("2048" -> "two thousand forty eight"), with article 004's token conventions
// (introduced in ch11).
//
// Vocabularies (article 004: id 0 is padding, start = vocab_size, end = vocab_size + 1):
//   source  pad 0, digits '0'..'9' -> 1..10, vocab_size 11, start 11, end 12   (V_src = 13)
//   target  pad 0, the 30 words below -> 1..30, vocab_size 31, start 31, end 32 (V_tgt = 33)
// The 500 held-out numbers are fixed (the same for every --seed), so runs compare.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "train/rng.hpp"

namespace ts::train {

constexpr int64_t kMaxNumber = 9999;  // the numbers run from 0 to 9999
constexpr int64_t kHeldOut = 500;
constexpr int64_t kPad = 0;

struct Vocab {
  std::vector<std::string> words;  // words[id]: "<pad>", the tokens, "<start>", "<end>"
  int64_t vocab_size = 0;          // the article's tokenizer.vocab_size: pad + tokens
  int64_t start() const { return vocab_size; }
  int64_t end() const { return vocab_size + 1; }
  int64_t size() const { return vocab_size + 2; }  // V, rows of the embedding table
  std::string decode(const std::vector<int64_t>& ids) const;  // ids < vocab_size, joined by spaces
};
const Vocab& source_vocab();  // digits
const Vocab& target_vocab();  // words

// 2048 -> "two thousand forty eight"; no "and", no hyphens, lower case.   0 <= n <= 9999
std::string number_to_words(int64_t n);
// [start, digits..., end] and [start, words..., end]
std::vector<int64_t> encode_source(int64_t n);
std::vector<int64_t> encode_target(int64_t n);

// A padded batch's rows before padding: rows[i] = encode(numbers[i]), and the longest row's
// length (make_batch below, ch12's make_seq_batch, ch13's make_cls_batch).
struct EncodedRows {
  std::vector<std::vector<int64_t>> rows;
  int64_t longest = 0;
};
template <class Encode>
EncodedRows encode_rows(const std::vector<int64_t>& numbers, const Encode& encode) {
  EncodedRows e;
  for (int64_t n : numbers) {
    e.rows.push_back(encode(n));
    e.longest = std::max<int64_t>(e.longest, static_cast<int64_t>(e.rows.back().size()));
  }
  return e;
}

// The fixed split: 500 held-out numbers (sorted) and the 9,500 training numbers.
struct Split {
  std::vector<int64_t> train, held_out;
};
const Split& number_split();
std::string number_split_site();  // "src/train/numbers.cpp:LINE number_split", from the compiler

// One padded batch, as article 004's padded_batch gives it.
struct Batch {
  int64_t B = 0, S = 0, T = 0;       // T = target length minus one (tar_inp / tar_real)
  std::vector<int64_t> numbers;      // (B)
  std::vector<int64_t> inputs;       // (B,S)   source ids, padded with 0
  std::vector<int64_t> tar_inp;      // (B,T)   targets[:, :-1]
  std::vector<int64_t> tar_real;     // (B,T)   targets[:, 1:]
};
Batch make_batch(const std::vector<int64_t>& numbers);

// Article 004's create_mask(inputs, tar_inp), 1 = hide, expanded per query row:
//   encode_padding_mask  (B,1,1,S) -> enc (B,S,S)   source padding, for encoder self-attention
//   combined_mask        (B,1,T,T) -> dec_self (B,T,T)  max(target padding, look-ahead)
//   decode_padding_mask  (B,1,1,S) -> dec_cross (B,T,S)  source padding, for cross-attention
// look_ahead = false drops the look-ahead part (the exercise that lets the decoder cheat).
template <class F>
struct MasksT {
  std::vector<F> enc, dec_self, dec_cross;
};
template <class F>
MasksT<F> create_mask(const std::vector<int64_t>& inputs, const std::vector<int64_t>& tar_inp, int64_t B, int64_t S,
                      int64_t T, bool look_ahead = true);
// create_mask's file and line, from the compiler: "src/train/numbers.cpp:LINE create_mask"
std::string create_mask_site();

// Shuffled passes over the training numbers: an epoch is floor(9500 / B) batches.
class Epochs {
 public:
  Epochs(int64_t batch_size, uint64_t seed);
  int64_t batches_per_epoch() const { return per_epoch_; }
  // The next batch's numbers; *epoch (1-based) and *batch (0-based in the epoch) say where it is.
  std::vector<int64_t> next(int64_t* epoch, int64_t* batch);

 private:
  int64_t B_, per_epoch_, epoch_ = 0, batch_ = 0;
  std::vector<int64_t> order_;
  Rng rng_;
};
std::string epochs_next_site();  // "src/train/numbers.cpp:LINE Epochs::next", from the compiler

}  // namespace ts::train
