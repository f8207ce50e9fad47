// train/numbers.cpp: the digits -> words task, its vocabularies, batches and masks.
#include "train/numbers.hpp"
#include "base/code_site.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ts::train {

static const std::vector<std::string> kOnes = {"zero",    "one",     "two",       "three",    "four",
                                               "five",    "six",     "seven",     "eight",    "nine",
                                               "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                               "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
static const std::vector<std::string> kTens = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
                                               "eighty", "ninety"};

static Vocab make_vocab(const std::vector<std::string>& tokens) {
  Vocab v;
  v.words.push_back("<pad>");
  v.words.insert(v.words.end(), tokens.begin(), tokens.end());
  v.vocab_size = static_cast<int64_t>(v.words.size());
  v.words.push_back("<start>");
  v.words.push_back("<end>");
  return v;
}

const Vocab& source_vocab() {
  static const Vocab v = make_vocab({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"});
  return v;
}

const Vocab& target_vocab() {
  static const Vocab v = [] {
    std::vector<std::string> w(kOnes);
    w.insert(w.end(), kTens.begin() + 2, kTens.end());
    w.push_back("hundred");
    w.push_back("thousand");
    return make_vocab(w);
  }();
  return v;
}

std::string Vocab::decode(const std::vector<int64_t>& ids) const {
  std::string s;
  for (int64_t id : ids)
    if (id > 0 && id < vocab_size) s += (s.empty() ? "" : " ") + words[static_cast<size_t>(id)];
  return s;
}

std::string number_to_words(int64_t n) {
  if (n < 0 || n > kMaxNumber) throw std::invalid_argument("number_to_words: out of range");
  if (n == 0) return "zero";
  std::vector<std::string> w;
  if (n >= 1000) {
    w.push_back(kOnes[static_cast<size_t>(n / 1000)]);
    w.push_back("thousand");
  }
  const int64_t h = n / 100 % 10, rest = n % 100;
  if (h > 0) {
    w.push_back(kOnes[static_cast<size_t>(h)]);
    w.push_back("hundred");
  }
  if (rest >= 20) {
    w.push_back(kTens[static_cast<size_t>(rest / 10)]);
    if (rest % 10) w.push_back(kOnes[static_cast<size_t>(rest % 10)]);
  } else if (rest > 0) {
    w.push_back(kOnes[static_cast<size_t>(rest)]);
  }
  std::string s;
  for (const auto& x : w) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::vector<int64_t> encode_source(int64_t n) {
  const Vocab& v = source_vocab();
  std::vector<int64_t> ids = {v.start()};
  for (char c : std::to_string(n)) ids.push_back(1 + (c - '0'));
  ids.push_back(v.end());
  return ids;
}

std::vector<int64_t> encode_target(int64_t n) {
  const Vocab& v = target_vocab();
  std::vector<int64_t> ids = {v.start()};
  const std::string words = number_to_words(n);
  size_t pos = 0;
  while (pos < words.size()) {
    const size_t sp = std::min(words.find(' ', pos), words.size());
    const std::string w = words.substr(pos, sp - pos);
    ids.push_back(std::find(v.words.begin(), v.words.end(), w) - v.words.begin());
    pos = sp + 1;
  }
  ids.push_back(v.end());
  return ids;
}

// the line below: number_split's own, for number_split_site()
static const CodeSite kNumberSplitSite{__FILE__, __LINE__ + 1, "number_split"};
const Split& number_split() {
  static const Split split = [] {
    // a fixed shuffle (its own seed, not --seed): the first 500 numbers are held out
    std::vector<int64_t> all(kMaxNumber + 1);
    std::iota(all.begin(), all.end(), 0);
    Rng rng(20240);
    for (size_t i = all.size() - 1; i > 0; --i) std::swap(all[i], all[rng.next() % (i + 1)]);
    Split s;
    s.held_out.assign(all.begin(), all.begin() + kHeldOut);
    s.train.assign(all.begin() + kHeldOut, all.end());
    std::sort(s.held_out.begin(), s.held_out.end());
    std::sort(s.train.begin(), s.train.end());
    return s;
  }();
  return split;
}

Batch make_batch(const std::vector<int64_t>& numbers) {
  Batch b;
  b.B = static_cast<int64_t>(numbers.size());
  b.numbers = numbers;
  const EncodedRows src = encode_rows(numbers, encode_source), tgt = encode_rows(numbers, encode_target);
  b.S = src.longest;
  b.T = std::max<int64_t>(0, tgt.longest - 1);
  b.inputs.assign(static_cast<size_t>(b.B * b.S), kPad);
  b.tar_inp.assign(static_cast<size_t>(b.B * b.T), kPad);
  b.tar_real.assign(static_cast<size_t>(b.B * b.T), kPad);
  for (int64_t i = 0; i < b.B; ++i) {
    const auto& s = src.rows[static_cast<size_t>(i)];
    const auto& t = tgt.rows[static_cast<size_t>(i)];
    std::copy(s.begin(), s.end(), b.inputs.begin() + i * b.S);
    // tar_inp = targets[:, :-1], tar_real = targets[:, 1:]
    std::copy(t.begin(), t.end() - 1, b.tar_inp.begin() + i * b.T);
    std::copy(t.begin() + 1, t.end(), b.tar_real.begin() + i * b.T);
  }
  return b;
}

// the line below: create_mask's own, for create_mask_site()
static const CodeSite kCreateMaskSite{__FILE__, __LINE__ + 2, "create_mask"};
template <class F>
MasksT<F> create_mask(const std::vector<int64_t>& inputs, const std::vector<int64_t>& tar_inp, int64_t B, int64_t S,
                      int64_t T, bool look_ahead) {
  MasksT<F> m;
  m.enc.resize(static_cast<size_t>(B * S * S));
  m.dec_cross.resize(static_cast<size_t>(B * T * S));
  m.dec_self.resize(static_cast<size_t>(B * T * T));
  for (int64_t b = 0; b < B; ++b) {
    // create_padding_mask(inputs): 1 where the source id is 0, the same for every query row
    for (int64_t q = 0; q < S; ++q)
      for (int64_t s = 0; s < S; ++s) m.enc[static_cast<size_t>((b * S + q) * S + s)] = inputs[b * S + s] == kPad;
    for (int64_t q = 0; q < T; ++q)
      for (int64_t s = 0; s < S; ++s) m.dec_cross[static_cast<size_t>((b * T + q) * S + s)] = inputs[b * S + s] == kPad;
    // combine_mask = max(create_padding_mask(tar_inp), create_look_ahead_mask(T))
    for (int64_t q = 0; q < T; ++q)
      for (int64_t s = 0; s < T; ++s) {
        const bool pad = tar_inp[b * T + s] == kPad, future = look_ahead && s > q;
        m.dec_self[static_cast<size_t>((b * T + q) * T + s)] = pad || future;
      }
  }
  return m;
}
std::string create_mask_site() {
  return code_site_path(kCreateMaskSite.file) + ":" + std::to_string(kCreateMaskSite.line) + " " + kCreateMaskSite.func;
}

template MasksT<float> create_mask<float>(const std::vector<int64_t>&, const std::vector<int64_t>&, int64_t, int64_t,
                                          int64_t, bool);
template MasksT<double> create_mask<double>(const std::vector<int64_t>&, const std::vector<int64_t>&, int64_t,
                                            int64_t, int64_t, bool);

Epochs::Epochs(int64_t batch_size, uint64_t seed)
    : B_(batch_size), per_epoch_(static_cast<int64_t>(number_split().train.size()) / batch_size), rng_(seed) {}

std::string number_split_site() { return code_site_words(kNumberSplitSite); }

// the line below: Epochs::next's own, for epochs_next_site()
static const CodeSite kEpochsNextSite{__FILE__, __LINE__ + 1, "Epochs::next"};
std::vector<int64_t> Epochs::next(int64_t* epoch, int64_t* batch) {
  if (order_.empty() || batch_ == per_epoch_) {
    // a new epoch: reshuffle the training numbers
    order_ = number_split().train;
    for (size_t i = order_.size() - 1; i > 0; --i) std::swap(order_[i], order_[rng_.next() % (i + 1)]);
    ++epoch_;
    batch_ = 0;
  }
  *epoch = epoch_;
  *batch = batch_;
  std::vector<int64_t> out(order_.begin() + batch_ * B_, order_.begin() + (batch_ + 1) * B_);
  ++batch_;
  return out;
}

std::string epochs_next_site() { return code_site_words(kEpochsNextSite); }

}  // namespace ts::train
