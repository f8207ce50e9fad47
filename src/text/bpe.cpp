// bpe.cpp: byte-level BPE training, incremental and naive, and its encode/decode (see bpe.hpp).
#include "text/bpe.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "base/code_site.hpp"
#include "text/gpt2_pretokenize.hpp"

namespace ts::bpe {
namespace {

using PairKey = uint64_t;  // left << 32 | right: ordering keys orders pairs by (left, right)
PairKey key_of(int32_t left, int32_t right) { return uint64_t(uint32_t(left)) << 32 | uint32_t(right); }
int32_t left_of(PairKey k) { return int32_t(k >> 32); }
int32_t right_of(PairKey k) { return int32_t(k & 0xFFFFFFFFu); }

// The text's chunks with how often each occurs (one chunk, the whole text, for Split::Bytes),
// sorted so that the result never depends on a hash table's order.
std::vector<std::pair<std::string_view, int64_t>> chunk_counts(std::string_view text, Split split) {
  if (split == Split::Bytes) {
    if (text.empty()) return {};
    return {{text, 1}};
  }
  std::unordered_map<std::string_view, int64_t> counts;
  for (std::string_view c : gpt2::split(text)) ++counts[c];
  std::vector<std::pair<std::string_view, int64_t>> out(counts.begin(), counts.end());
  std::sort(out.begin(), out.end());
  return out;
}

Tokenizer start(Split split) {
  Tokenizer tok;
  tok.split = split;
  for (int b = 0; b < 256; ++b) tok.vocab.emplace_back(1, char(b));
  return tok;
}

void add_merge(Tokenizer& tok, PairKey pair, int64_t count) {
  const int32_t id = int32_t(tok.vocab.size());
  tok.merges.push_back(Merge{left_of(pair), right_of(pair), id, count});
  tok.vocab.push_back(tok.vocab[size_t(left_of(pair))] + tok.vocab[size_t(right_of(pair))]);
}

// The heap's order: highest count first; on equal counts the smaller pair (left, then right).
struct Candidate {
  int64_t count;
  PairKey pair;
  bool operator<(const Candidate& o) const { return count != o.count ? count < o.count : pair > o.pair; }
};

}  // namespace

const char* split_name(Split split) { return split == Split::Bytes ? "bytes" : "gpt2"; }

Tokenizer train(std::string_view text, size_t num_merges, Split split) {
  TS_CODE_SITE();
  Tokenizer tok = start(split);
  // 1) every chunk's bytes in one array, linked within its chunk: token[p], prev[p], next[p]
  //    (-1 at a chunk's ends), weight[p] = how often that chunk occurs
  std::vector<int32_t> token, prev, next;
  std::vector<int64_t> weight;
  for (const auto& [chunk, count] : chunk_counts(text, split)) {
    const int32_t base = int32_t(token.size());
    for (size_t i = 0; i < chunk.size(); ++i) {
      token.push_back(static_cast<unsigned char>(chunk[i]));
      prev.push_back(i == 0 ? -1 : base + int32_t(i) - 1);
      next.push_back(i + 1 == chunk.size() ? -1 : base + int32_t(i) + 1);
      weight.push_back(count);
    }
  }
  // 2) pair -> count, and pair -> positions where it may occur (checked when used)
  std::unordered_map<PairKey, int64_t> counts;
  std::unordered_map<PairKey, std::vector<int32_t>> where;
  for (int32_t p = 0; p < int32_t(token.size()); ++p) {
    if (next[size_t(p)] < 0) continue;
    const PairKey k = key_of(token[size_t(p)], token[size_t(next[size_t(p)])]);
    counts[k] += weight[size_t(p)];
    where[k].push_back(p);
  }
  std::priority_queue<Candidate> heap;
  for (const auto& [k, c] : counts) heap.push(Candidate{c, k});

  std::vector<PairKey> changed;
  auto add = [&](int32_t left, int32_t right, int64_t w, int32_t at) {
    const PairKey k = key_of(left, right);
    counts[k] += w;
    if (at >= 0) where[k].push_back(at);
    changed.push_back(k);
  };
  while (tok.merges.size() < num_merges) {
    // 3) the best pair: the heap's top, once stale entries (an older count) are dropped
    while (!heap.empty()) {
      const auto it = counts.find(heap.top().pair);
      if (it != counts.end() && it->second == heap.top().count && it->second > 0) break;
      heap.pop();
    }
    if (heap.empty()) break;  // no pair left
    const Candidate best = heap.top();
    heap.pop();
    const int32_t a = left_of(best.pair), b = right_of(best.pair);
    const int32_t z = int32_t(tok.vocab.size());
    add_merge(tok, best.pair, best.count);
    // 4) merge its occurrences left to right; only the pairs beside each one change:
    //    (L, a) (a, b) (b, R) -> (L, z) (z, R)
    std::vector<int32_t> at = std::move(where[best.pair]);
    where.erase(best.pair);
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    changed.clear();
    for (const int32_t p : at) {
      const int32_t q = next[size_t(p)];
      if (token[size_t(p)] != a || q < 0 || token[size_t(q)] != b) continue;  // gone since
      const int64_t w = weight[size_t(p)];
      const int32_t l = prev[size_t(p)], r = next[size_t(q)];
      if (l >= 0) add(token[size_t(l)], a, -w, -1), add(token[size_t(l)], z, w, l);
      add(a, b, -w, -1);
      if (r >= 0) add(b, token[size_t(r)], -w, -1), add(z, token[size_t(r)], w, p);
      token[size_t(p)] = z;
      token[size_t(q)] = -1;
      next[size_t(p)] = r;
      if (r >= 0) prev[size_t(r)] = p;
    }
    // 5) each changed pair goes back on the heap with its new count
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (const PairKey k : changed) {
      const auto it = counts.find(k);
      if (it->second > 0) {
        heap.push(Candidate{it->second, k});
      } else {
        counts.erase(it);
        where.erase(k);
      }
    }
  }
  return tok;
}

Tokenizer train_naive(std::string_view text, size_t num_merges, Split split) {
  Tokenizer tok = start(split);
  std::vector<std::vector<int32_t>> chunks;
  std::vector<int64_t> weights;
  for (const auto& [chunk, count] : chunk_counts(text, split)) {
    chunks.emplace_back(chunk.begin(), chunk.end());
    for (int32_t& t : chunks.back()) t &= 0xFF;
    weights.push_back(count);
  }
  while (tok.merges.size() < num_merges) {
    // 1) count every pair again
    std::unordered_map<PairKey, int64_t> counts;
    for (size_t c = 0; c < chunks.size(); ++c)
      for (size_t i = 0; i + 1 < chunks[c].size(); ++i) counts[key_of(chunks[c][i], chunks[c][i + 1])] += weights[c];
    if (counts.empty()) break;
    // 2) the best: highest count, then the smallest pair
    Candidate best{0, 0};
    bool first = true;
    for (const auto& [k, c] : counts)
      if (first || best < Candidate{c, k}) best = Candidate{c, k}, first = false;
    const int32_t z = int32_t(tok.vocab.size());
    add_merge(tok, best.pair, best.count);
    // 3) replace it left to right
    for (std::vector<int32_t>& ids : chunks) {
      std::vector<int32_t> out;
      for (size_t i = 0; i < ids.size();) {
        if (i + 1 < ids.size() && key_of(ids[i], ids[i + 1]) == best.pair) {
          out.push_back(z);
          i += 2;
        } else {
          out.push_back(ids[i++]);
        }
      }
      ids.swap(out);
    }
  }
  return tok;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  TS_CODE_SITE();
  // rank of a pair = the index of its merge; within a chunk, the lowest rank present is merged
  // everywhere (left to right), then the next: a min-heap of (rank, position) over a linked list
  std::unordered_map<PairKey, int32_t> rank;
  for (size_t m = 0; m < merges.size(); ++m) rank.emplace(key_of(merges[m].left, merges[m].right), int32_t(m));
  std::vector<int32_t> ids;
  std::vector<std::string_view> chunks;
  if (split == Split::Gpt2)
    gpt2::split(text, chunks);
  else if (!text.empty())
    chunks.push_back(text);
  std::vector<int32_t> token, next, prev;
  using Entry = std::pair<int32_t, int32_t>;  // (rank, position)
  for (std::string_view chunk : chunks) {
    const int32_t n = int32_t(chunk.size());
    token.assign(chunk.begin(), chunk.end());
    for (int32_t& t : token) t &= 0xFF;
    next.resize(size_t(n));
    prev.resize(size_t(n));
    for (int32_t i = 0; i < n; ++i) prev[size_t(i)] = i - 1, next[size_t(i)] = i + 1 < n ? i + 1 : -1;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    auto push = [&](int32_t p) {
      if (p < 0 || next[size_t(p)] < 0) return;
      const auto it = rank.find(key_of(token[size_t(p)], token[size_t(next[size_t(p)])]));
      if (it != rank.end()) heap.emplace(it->second, p);
    };
    for (int32_t i = 0; i + 1 < n; ++i) push(i);
    while (!heap.empty()) {
      const auto [r, p] = heap.top();
      heap.pop();
      const Merge& m = merges[size_t(r)];
      const int32_t q = next[size_t(p)];  // a merged-away position has token -1
      if (token[size_t(p)] != m.left || q < 0 || token[size_t(q)] != m.right) continue;
      token[size_t(p)] = m.id;
      token[size_t(q)] = -1;
      next[size_t(p)] = next[size_t(q)];
      if (next[size_t(q)] >= 0) prev[size_t(next[size_t(q)])] = p;
      push(prev[size_t(p)]);
      push(p);
    }
    for (int32_t p = 0; p >= 0 && n > 0; p = next[size_t(p)]) ids.push_back(token[size_t(p)]);
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  TS_CODE_SITE();
  std::string out;
  for (const int32_t id : ids) {
    if (id < 0 || size_t(id) >= vocab.size())
      throw std::invalid_argument("BPE decode: id " + std::to_string(id) + " is outside [0, " +
                                  std::to_string(vocab.size()) + ")");
    out += vocab[size_t(id)];
  }
  return out;
}

}  // namespace ts::bpe
