// course/token_report.cpp: see token_report.hpp.
#include "course/token_report.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "text/gpt2_pretokenize.hpp"
#include "text/tokenizer.hpp"  // is_category_c, is_category_zs

namespace ts {

namespace {

// the length of the valid UTF-8 sequence at text[i], or 0 when the byte there starts none
size_t utf8_length(std::string_view text, size_t i, char32_t& c) {
  const auto b = static_cast<unsigned char>(text[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  if (n > 1 && !gpt2::valid_utf8(text.substr(i, n))) return 0;
  c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return n;
}

}  // namespace

std::string visible(std::string_view bytes) {
  std::string out = "'";
  for (size_t i = 0; i < bytes.size();) {
    char32_t c = 0;
    const size_t n = utf8_length(bytes, i, c);
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (n == 1 && (b == '\n' || b == '\t' || b == '\r' || b == '\\' || b == '\'')) {
      out += b == '\n' ? "\\n" : b == '\t' ? "\\t" : b == '\r' ? "\\r" : b == '\\' ? "\\\\" : "\\'";
    } else if (n == 0 || (n == 1 && (b < 0x20 || b == 0x7F))) {
      out += fmt::format("\\x{:02x}", b);
      i += 1;
      continue;
    } else if (n > 1 && (is_category_c(c) || (is_category_zs(c) && c != 0x20))) {
      out += c <= 0xFFFF ? fmt::format("\\u{:04x}", uint32_t(c)) : fmt::format("\\U{:08x}", uint32_t(c));
    } else {
      out.append(bytes.substr(i, n));
    }
    i += n;
  }
  return out + "'";
}

std::vector<std::string_view> characters(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const size_t n = std::max<size_t>(1, utf8_length(text, i, c));
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

RecountCheck recount_merges(std::string_view text, const bpe::Tokenizer& tok, size_t k) {
  // every distinct chunk once, with how often it occurs, as its ids (its bytes to start with)
  std::map<std::string_view, int64_t> seen;
  if (tok.split == bpe::Split::Gpt2) {
    for (std::string_view c : gpt2::split(text)) ++seen[c];
  } else if (!text.empty()) {
    seen[text] = 1;
  }
  std::vector<std::pair<std::vector<int32_t>, int64_t>> chunks;
  for (const auto& [c, n] : seen) {
    std::vector<int32_t> ids;
    for (unsigned char b : c) ids.push_back(b);
    chunks.emplace_back(std::move(ids), n);
  }
  RecountCheck r;
  for (size_t m = 0; m < k && m < tok.merges.size(); ++m) {
    // 1) count every adjacent pair, each chunk weighted by how often it occurs
    std::unordered_map<uint64_t, int64_t> counts;
    for (const auto& [ids, n] : chunks)
      for (size_t i = 0; i + 1 < ids.size(); ++i) counts[uint64_t(uint32_t(ids[i])) << 32 | uint32_t(ids[i + 1])] += n;
    // 2) the highest count; among pairs with it, the smallest (left, right)
    uint64_t best = 0;
    int64_t best_count = 0;
    size_t at_best = 0;
    for (const auto& [pair, n] : counts) {
      if (n > best_count) {
        best = pair, best_count = n, at_best = 1;
      } else if (n == best_count) {
        ++at_best;
        best = std::min(best, pair);
      }
    }
    const bpe::Merge want{int32_t(best >> 32), int32_t(best & 0xFFFFFFFFu), int32_t(256 + m), best_count};
    const bpe::Merge& got = tok.merges[m];
    ++r.checked;
    if (best_count == 0 || got.left != want.left || got.right != want.right || got.count != want.count) {
      r.ok = false, r.first_bad = m, r.expected = want;
      return r;
    }
    r.ties += at_best > 1;
    // 3) the merge, at every place it occurs, left to right
    for (auto& [ids, n] : chunks) {
      size_t w = 0;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i + 1 < ids.size() && ids[i] == got.left && ids[i + 1] == got.right) {
          ids[w++] = got.id;
          ++i;
        } else {
          ids[w++] = ids[i];
        }
      }
      ids.resize(w);
    }
  }
  return r;
}

bpe::Tokenizer first_merges(const bpe::Tokenizer& tok, size_t k) {
  bpe::Tokenizer t = tok;
  k = std::min(k, t.merges.size());
  t.merges.resize(k);
  t.vocab.resize(256 + k);
  return t;
}

std::string length_histogram(const bpe::Tokenizer& tok, size_t bar) {
  std::map<size_t, size_t> by_length;
  for (size_t id = 256; id < tok.vocab.size(); ++id) ++by_length[tok.vocab[id].size()];
  size_t most = 1;
  for (const auto& [len, n] : by_length) most = std::max(most, n);
  std::string out;
  for (const auto& [len, n] : by_length) {
    const size_t w = std::max<size_t>(1, (n * bar + most - 1) / most);
    out += fmt::format("  {:>3}  {:<{}} {}\n", len, std::string(w, '#'), bar, n);
  }
  return out;
}

std::vector<RankStep> trace_merges(const gpt2::Encoder& enc, std::string_view chunk, std::vector<std::string>& pieces) {
  pieces.clear();
  for (char b : chunk) pieces.emplace_back(1, b);
  std::vector<RankStep> steps;
  for (;;) {
    int32_t best = -1;
    size_t at = 0;
    for (size_t i = 0; i + 1 < pieces.size(); ++i) {
      const int32_t r = enc.rank(pieces[i], pieces[i + 1]);
      if (r >= 0 && (best < 0 || r < best)) best = r, at = i;
    }
    if (best < 0) break;
    const std::string left = pieces[at], right = pieces[at + 1];
    steps.push_back({best, left, right});
    std::vector<std::string> next;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (i + 1 < pieces.size() && pieces[i] == left && pieces[i + 1] == right) {
        next.push_back(left + right);
        ++i;
      } else {
        next.push_back(pieces[i]);
      }
    }
    pieces = std::move(next);
  }
  return steps;
}

}  // namespace ts
