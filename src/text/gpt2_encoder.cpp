// gpt2_encoder.cpp: GPT-2's byte-level BPE from vocab.bpe and encoder.json (see gpt2_encoder.hpp).
#include "text/gpt2_encoder.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <queue>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/code_site.hpp"

namespace ts::gpt2 {
namespace {

constexpr const char* kFetchHint = "; fetch it with scripts/fetch_gpt2_bpe.sh";
constexpr size_t kMaxFileBytes = size_t{64} << 20;  // GPT-2's: 456 kB and 1.04 MB
constexpr uint64_t kEmpty = ~uint64_t{0};            // no id pair has it: ids are below 2^31

// slot of a pair key in a table of `slots` (a power of two): Fibonacci hashing
size_t slot_of(uint64_t key, size_t slots) {
  return size_t((key * 0x9E3779B97F4A7C15ull) >> 32) & (slots - 1);
}

[[noreturn]] void bad_file(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what + kFetchHint);
}

std::string read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) bad_file(path, std::string("cannot read it: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) bad_file(path, "not a regular file");
  if (size_t(st.st_size) > kMaxFileBytes) bad_file(path, "larger than 64 MiB");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) bad_file(path, "read error");
  return ss.str();
}

// The inverse of byte_to_unicode: code point -> byte, -1 if it stands for none.
int unicode_to_byte(char32_t c) {
  static const std::vector<int> table = [] {
    std::vector<int> t(324, -1);
    for (int b = 0; b < 256; ++b) t[byte_to_unicode(uint8_t(b))] = b;
    return t;
  }();
  return c < table.size() ? table[c] : -1;
}

// A piece as the files write it (UTF-8 of byte_to_unicode characters) -> its raw bytes;
// false if it is not valid UTF-8 or has a character that stands for no byte.
bool piece_to_bytes(std::string_view piece, std::string& out) {
  out.clear();
  for (size_t i = 0; i < piece.size();) {
    const unsigned char b = static_cast<unsigned char>(piece[i]);
    char32_t c;
    if (b < 0x80) {
      c = b, i += 1;
    } else if ((b & 0xE0) == 0xC0 && i + 1 < piece.size()) {
      c = char32_t(b & 0x1F) << 6 | (static_cast<unsigned char>(piece[i + 1]) & 0x3F), i += 2;
    } else {
      return false;  // every character of the map is below U+0800: two bytes at most
    }
    const int byte = unicode_to_byte(c);
    if (byte < 0) return false;
    out += char(byte);
  }
  return !out.empty();
}

}  // namespace

char32_t byte_to_unicode(uint8_t b) {
  // bytes_to_unicode(): the printable bytes stand for themselves, the rest are numbered from 256
  static const std::vector<char32_t> table = [] {
    std::vector<char32_t> t(256);
    char32_t n = 0;
    for (int x = 0; x < 256; ++x) {
      const bool printable = (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF);
      t[size_t(x)] = printable ? char32_t(x) : 256 + n++;
    }
    return t;
  }();
  return table[b];
}

Encoder::Encoder(const std::string& vocab_bpe_path, const std::string& encoder_json_path) {
  // 1) encoder.json: piece -> id, ids 0..V-1 each once
  const std::string json_text = read_file(encoder_json_path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    bad_file(encoder_json_path, std::string("not JSON (") + e.what() + ")");
  }
  if (!j.is_object() || j.empty()) bad_file(encoder_json_path, "not a JSON object {\"piece\": id}");
  token_bytes_.assign(j.size(), std::string());
  std::vector<bool> seen(j.size(), false);
  std::string bytes;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_integer()) bad_file(encoder_json_path, "the id of \"" + it.key() + "\" is not an integer");
    const int64_t id = it.value().get<int64_t>();
    if (id < 0 || size_t(id) >= j.size() || seen[size_t(id)])
      bad_file(encoder_json_path, "id " + std::to_string(id) + " is repeated or outside [0, " + std::to_string(j.size()) + ")");
    if (!piece_to_bytes(it.key(), bytes))
      bad_file(encoder_json_path, "piece \"" + it.key() + "\" has a character that stands for no byte");
    seen[size_t(id)] = true;
    token_bytes_[size_t(id)] = bytes;
    id_of_[bytes] = int32_t(id);
  }
  for (int b = 0; b < 256; ++b)
    if ((byte_id_[b] = id_of(std::string(1, char(b)))) < 0) bad_file(encoder_json_path, "byte " + std::to_string(b) + " has no id");

  // 2) vocab.bpe: Encoder.js drops the first line (#version) and the last (empty after the final
  // newline), then splits each line on whitespace: rank = index among the rest
  const std::string bpe_text = read_file(vocab_bpe_path);
  std::vector<std::string_view> lines;
  for (size_t at = 0;;) {
    const size_t nl = bpe_text.find('\n', at);
    lines.emplace_back(std::string_view(bpe_text).substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  if (lines.size() < 3 || lines[0].substr(0, 9) != "#version:") bad_file(vocab_bpe_path, "does not start with a #version line");
  if (!lines.back().empty()) bad_file(vocab_bpe_path, "does not end with a newline (cut short?)");
  std::string first, second;
  std::vector<std::pair<uint64_t, Merge>> ids;
  for (size_t k = 1; k + 1 < lines.size(); ++k) {
    std::vector<std::string_view> parts;
    std::string_view line = lines[k];
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && std::strchr(" \t\r\v\f", line[i]) && line[i]) ++i;
      size_t e = i;
      while (e < line.size() && !(std::strchr(" \t\r\v\f", line[e]) && line[e])) ++e;
      if (e > i) parts.push_back(line.substr(i, e - i));
      i = e;
    }
    if (parts.size() != 2 || !piece_to_bytes(parts[0], first) || !piece_to_bytes(parts[1], second))
      bad_file(vocab_bpe_path, "line " + std::to_string(k + 1) + " is not two pieces \"first second\"");
    const int32_t rank = int32_t(merges_.size());
    merges_.emplace_back(first, second);
    comma_rank_[first + "," + second] = rank;  // later lines win, as in Encoder.js's dictZip
    const int32_t a = id_of(first), b = id_of(second);
    if (a >= 0 && b >= 0) ids.emplace_back(uint64_t(uint32_t(a)) << 32 | uint32_t(b), Merge{rank, id_of(first + second)});
  }
  // the id pairs in a table at most half full
  size_t slots = 16;
  while (slots < 2 * ids.size()) slots *= 2;
  pair_merge_.assign(slots, {kEmpty, Merge{-1, -1}});
  for (const auto& [key, merge] : ids) {
    size_t i = slot_of(key, slots);
    while (pair_merge_[i].first != kEmpty && pair_merge_[i].first != key) i = (i + 1) & (slots - 1);
    pair_merge_[i] = {key, merge};  // a repeated line: the later one wins, as in Encoder.js
  }
}

int32_t Encoder::id_of(std::string_view bytes) const {
  const auto it = id_of_.find(std::string(bytes));
  return it == id_of_.end() ? -1 : it->second;
}

int32_t Encoder::rank(const std::string& a, const std::string& b) const {
  const auto it = comma_rank_.find(a + "," + b);
  return it == comma_rank_.end() ? -1 : it->second;
}

std::string Encoder::token_text(int32_t id) const {
  std::string out;
  for (unsigned char b : token_bytes(id)) {
    const char32_t c = byte_to_unicode(b);
    if (c < 0x80) {
      out += char(c);
    } else {
      out += char(0xC0 | (c >> 6));
      out += char(0x80 | (c & 0x3F));
    }
  }
  return out;
}

Encoder::Merge Encoder::pair_merge(std::string_view chunk, const Piece& a, const Piece& b, bool comma) const {
  if (!comma) {  // one comma-free key per pair: look the ids up
    const uint64_t key = uint64_t(uint32_t(a.id)) << 32 | uint32_t(b.id);
    const size_t mask = pair_merge_.size() - 1;
    for (size_t i = slot_of(key, pair_merge_.size());; i = (i + 1) & mask) {
      if (pair_merge_[i].first == key) return pair_merge_[i].second;
      if (pair_merge_[i].first == kEmpty) return Merge{-1, -1};
    }
  }
  // Encoder.js: bpe_ranks[[first, second]] reads the key "first,second"
  std::string key(chunk.substr(a.begin, a.end - a.begin));
  key += ',';
  key.append(chunk.substr(b.begin, b.end - b.begin));
  const auto it = comma_rank_.find(key);
  if (it == comma_rank_.end()) return Merge{-1, -1};
  return Merge{it->second, id_of(chunk.substr(a.begin, b.end - a.begin))};
}

// Encoder.js's bpe(): each round, the pair of lowest rank (the last of them when several share
// it), then every occurrence of that pair, left to right, becomes one piece.
void Encoder::bpe_naive(std::string_view chunk, bool comma, std::vector<Piece>& word) const {
  auto same = [&](const Piece& x, const Piece& y) {
    return comma ? chunk.substr(x.begin, x.end - x.begin) == chunk.substr(y.begin, y.end - y.begin) : x.id == y.id;
  };
  std::vector<Piece> next;
  while (word.size() >= 2) {
    size_t best = SIZE_MAX;
    Merge best_merge{INT32_MAX, -1};
    for (size_t k = 0; k + 1 < word.size(); ++k) {
      const Merge m = pair_merge(chunk, word[k], word[k + 1], comma);
      if (m.rank >= 0 && m.rank <= best_merge.rank) best = k, best_merge = m;
    }
    if (best == SIZE_MAX) break;
    const Piece first = word[best], second = word[best + 1];
    next.clear();
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && same(word[i], first) && same(word[i + 1], second)) {
        next.push_back(Piece{word[i].begin, word[i + 1].end, best_merge.merged});
        i += 2;
      } else {
        next.push_back(word[i++]);
      }
    }
    word.swap(next);
  }
}

// The same rounds over a linked list: a min-heap of (rank, position of the left piece) holds
// every pair that has a rank; stale entries are skipped when popped.
void Encoder::bpe_heap(std::string_view chunk, bool comma, std::vector<Piece>& word) const {
  const int n = int(word.size());
  std::vector<int> prev(static_cast<size_t>(n)), next(static_cast<size_t>(n));
  std::vector<bool> alive(static_cast<size_t>(n), true);
  for (int i = 0; i < n; ++i) prev[size_t(i)] = i - 1, next[size_t(i)] = i + 1 < n ? i + 1 : -1;
  using Entry = std::pair<int32_t, int>;  // (rank, position)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto push_pair = [&](int p) {
    if (p < 0 || next[size_t(p)] < 0) return;
    const Merge m = pair_merge(chunk, word[size_t(p)], word[size_t(next[size_t(p)])], comma);
    if (m.rank >= 0) heap.emplace(m.rank, p);
  };
  for (int i = 0; i + 1 < n; ++i) push_pair(i);
  auto bytes = [&](const Piece& x) { return chunk.substr(x.begin, x.end - x.begin); };
  std::vector<int> batch;
  while (!heap.empty()) {
    // 1) every live pair of the lowest rank r, in chunk order (the heap pops equal ranks by position)
    const int32_t r = heap.top().first;
    batch.clear();
    while (!heap.empty() && heap.top().first == r) {
      const int p = heap.top().second;
      heap.pop();
      if (!alive[size_t(p)] || next[size_t(p)] < 0 || (!batch.empty() && batch.back() == p)) continue;
      if (pair_merge(chunk, word[size_t(p)], word[size_t(next[size_t(p)])], comma).rank == r) batch.push_back(p);
    }
    if (batch.empty()) continue;
    // 2) the pair to merge: the last one of rank r (they differ only through comma-joined keys)
    const Piece first = word[size_t(batch.back())], second = word[size_t(next[size_t(batch.back())])];
    const int32_t merged = pair_merge(chunk, first, second, comma).merged;
    // 3) merge its occurrences left to right; pairs of rank r that are other pieces wait
    for (const int p : batch) {
      const int q = next[size_t(p)];
      if (!alive[size_t(p)] || q < 0) continue;
      if (bytes(word[size_t(p)]) != bytes(first) || bytes(word[size_t(q)]) != bytes(second)) {
        heap.emplace(r, p);
        continue;
      }
      word[size_t(p)] = Piece{word[size_t(p)].begin, word[size_t(q)].end, merged};
      alive[size_t(q)] = false;
      next[size_t(p)] = next[size_t(q)];
      if (next[size_t(q)] >= 0) prev[size_t(next[size_t(q)])] = p;
      push_pair(prev[size_t(p)]);
      push_pair(p);
    }
  }
  std::vector<Piece> out;
  for (int p = 0; p >= 0; p = next[size_t(p)]) out.push_back(word[size_t(p)]);
  word.swap(out);
}

std::vector<int32_t> Encoder::bpe_chunk(std::string_view chunk, Loop loop) const {
  std::vector<Piece> word;
  word.reserve(chunk.size());
  for (uint32_t i = 0; i < chunk.size(); ++i) word.push_back(Piece{i, i + 1, byte_id_[uint8_t(chunk[i])]});
  const bool comma = chunk.find(',') != std::string_view::npos;
  if (!word.empty()) {
    if (loop == Loop::Naive)
      bpe_naive(chunk, comma, word);
    else
      bpe_heap(chunk, comma, word);
  }
  std::vector<int32_t> ids;
  for (const Piece& p : word) ids.push_back(p.id);
  return ids;
}

void Encoder::cache_clear() {
  cache_.assign(size_t{1} << 12, Slot{});
  cache_used_ = 0;
  cache_bytes_.clear();
  cache_ids_.clear();
}

void Encoder::cache_grow() {  // twice the slots, every entry placed again
  std::vector<Slot> old(cache_.size() * 2);
  old.swap(cache_);
  const size_t mask = cache_.size() - 1;
  for (const Slot& s : old) {
    if (s.bytes_len == 0) continue;
    size_t i = size_t(s.hash) & mask;
    while (cache_[i].bytes_len != 0) i = (i + 1) & mask;
    cache_[i] = s;
  }
}

void Encoder::encode_chunk(std::string_view chunk, std::vector<int32_t>& out) {
  const uint64_t hash = std::hash<std::string_view>()(chunk);
  const size_t mask = cache_.size() - 1;
  size_t i = size_t(hash) & mask;
  for (; cache_[i].bytes_len != 0; i = (i + 1) & mask) {
    const Slot& s = cache_[i];
    if (s.hash == hash && s.bytes_len == chunk.size() &&
        std::string_view(cache_bytes_).substr(s.bytes_at, s.bytes_len) == chunk) {
      out.insert(out.end(), cache_ids_.begin() + s.ids_at, cache_ids_.begin() + s.ids_at + s.ids_len);
      return;
    }
  }
  const std::vector<int32_t> ids = bpe_chunk(chunk, chunk.size() <= 32 ? Loop::Naive : Loop::Heap);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cache_used_ >= kCacheEntries || cache_bytes_.size() + chunk.size() > (size_t{256} << 20) ||
      cache_ids_.size() + ids.size() > (size_t{64} << 20)) {
    cache_clear();  // bounded: start again (Encoder.js's Map only grows)
    i = size_t(hash) & (cache_.size() - 1);
    while (cache_[i].bytes_len != 0) i = (i + 1) & (cache_.size() - 1);
  }
  cache_[i] = Slot{hash, uint32_t(cache_bytes_.size()), uint32_t(chunk.size()), uint32_t(cache_ids_.size()),
                   uint32_t(ids.size())};
  cache_bytes_.append(chunk);
  cache_ids_.insert(cache_ids_.end(), ids.begin(), ids.end());
  if (++cache_used_ * 2 > cache_.size()) cache_grow();  // at most half full
}

std::vector<int32_t> Encoder::encode(std::string_view text, InvalidUtf8 invalid) {
  TS_CODE_SITE();
  std::string replaced;
  if (invalid == InvalidUtf8::Replace && !valid_utf8(text)) {
    replaced = replace_invalid_utf8(text);
    text = replaced;
  }
  chunks_.clear();
  split(text, chunks_);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3);
  for (std::string_view c : chunks_) encode_chunk(c, ids);
  return ids;
}

std::string Encoder::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (const int32_t id : ids) {
    if (id < 0 || size_t(id) >= token_bytes_.size())
      throw std::invalid_argument("GPT-2 decode: id " + std::to_string(id) + " is outside [0, " +
                                  std::to_string(token_bytes_.size()) + ")");
    out += token_bytes_[size_t(id)];
  }
  return out;
}

}  // namespace ts::gpt2
