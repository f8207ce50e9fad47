// course/token_report.cpp: see token_report.hpp.
#include "course/token_report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "base/figure_sink.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
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

namespace {

using Chunks = std::vector<std::pair<std::vector<int32_t>, int64_t>>;  // (ids, how often the chunk occurs)

// every distinct chunk of the text once, with how often it occurs, as its ids (its bytes to start with)
Chunks distinct_chunks(std::string_view text, bpe::Split split) {
  std::map<std::string_view, int64_t> seen;
  if (split == bpe::Split::Gpt2) {
    for (std::string_view c : gpt2::split(text)) ++seen[c];
  } else if (!text.empty()) {
    seen[text] = 1;
  }
  Chunks chunks;
  for (const auto& [c, n] : seen) {
    std::vector<int32_t> ids;
    for (unsigned char b : c) ids.push_back(b);
    chunks.emplace_back(std::move(ids), n);
  }
  return chunks;
}

// the merge, at every place it occurs in every chunk, left to right
void apply_merge(Chunks& chunks, const bpe::Merge& g) {
  for (auto& [ids, n] : chunks) {
    size_t w = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i + 1 < ids.size() && ids[i] == g.left && ids[i + 1] == g.right) {
        ids[w++] = g.id;
        ++i;
      } else {
        ids[w++] = ids[i];
      }
    }
    ids.resize(w);
  }
}

}  // namespace

std::vector<size_t> replay_lengths(std::string_view text, const bpe::Tokenizer& tok, const std::vector<size_t>& ks) {
  Chunks chunks = distinct_chunks(text, tok.split);
  std::vector<size_t> out;
  size_t done = 0;
  for (size_t k : ks) {
    for (; done < k && done < tok.merges.size(); ++done) apply_merge(chunks, tok.merges[done]);
    size_t n = 0;
    for (const auto& [ids, count] : chunks) n += ids.size() * size_t(count);
    out.push_back(n);
  }
  return out;
}

RecountCheck recount_merges(std::string_view text, const bpe::Tokenizer& tok, size_t k) {
  Chunks chunks = distinct_chunks(text, tok.split);
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
    apply_merge(chunks, got);
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
  {  // the same counts, for --svg (base/figure_sink.hpp)
    FigureData f;
    f.kind = FigureData::Kind::Bars;
    f.title = trf("the {m} learned tokens by their length in bytes", fmt::arg("m", tok.vocab.size() - 256));
    f.rows = 1;
    for (const auto& [len, n] : by_length) {
      f.values.push_back(static_cast<float>(n));
      f.col_labels.push_back(std::to_string(len));
    }
    f.cols = f.values.size();
    f.x_label = _("bytes in the token");
    f.y_label = _("learned tokens");
    emit_figure(f);
  }
  size_t most = 1;
  for (const auto& [len, n] : by_length) most = std::max(most, n);
  std::string out;
  for (const auto& [len, n] : by_length) {
    const size_t w = std::max<size_t>(1, (n * bar + most - 1) / most);
    out += fmt::format("  {:>3}  {:<{}} {}\n", len, std::string(w, '#'), bar, n);
  }
  return out;
}

MergeTree merge_tree(const bpe::Tokenizer& tok, int32_t id, size_t most_lines) {
  MergeTree t;
  // merge index of each learned id, read from the merges the encoder applies
  std::unordered_map<int32_t, size_t> merge_of;
  for (size_t m = 0; m < tok.merges.size(); ++m) merge_of[tok.merges[m].id] = m;
  FigureData f;
  f.kind = FigureData::Kind::Tree;
  // 1) the nodes, children before their parent (the root last), for the figure
  std::vector<int> node_of;  // during the walk: the node index each finished child got
  struct Frame {
    int32_t id;
    bool done;
  };
  std::vector<Frame> stack{{id, false}};
  while (!stack.empty()) {
    const Frame fr = stack.back();
    stack.pop_back();
    const auto it = merge_of.find(fr.id);
    if (it == merge_of.end() || fr.id < 256) {  // a byte: a leaf
      t.leaves += tok.vocab[size_t(fr.id)];
      f.row_labels.push_back(visible(tok.vocab[size_t(fr.id)]));
      f.col_labels.emplace_back();
      f.children.push_back({-1, -1});
      node_of.push_back(static_cast<int>(f.children.size() - 1));
      continue;
    }
    const bpe::Merge& g = tok.merges[it->second];
    if (!fr.done) {
      stack.push_back({fr.id, true});
      stack.push_back({g.right, false});
      stack.push_back({g.left, false});
      continue;
    }
    const int r = node_of.back();
    node_of.pop_back();
    const int l = node_of.back();
    node_of.pop_back();
    f.row_labels.push_back(visible(tok.vocab[size_t(fr.id)]));
    f.col_labels.push_back(trf("merge {m}", fmt::arg("m", it->second + 1)));
    f.children.push_back({l, r});
    node_of.push_back(static_cast<int>(f.children.size() - 1));
    ++t.merges;
  }
  std::set<std::string> seen(f.col_labels.begin(), f.col_labels.end());
  t.distinct = seen.size() - seen.count("");
  f.rows = f.children.size();
  f.title = trf("how {t} (id {id}) was built: each merge joins the two tokens under it", fmt::arg("t", visible(tok.vocab[size_t(id)])),
                fmt::arg("id", id));
  emit_figure(f);
  // 2) the text: one line per merge, from the root down, each indented under the one it makes
  std::vector<std::vector<std::string>> rows{{_("token"), _("= left + right"), _("merge")}};
  std::vector<std::pair<int32_t, size_t>> walk{{id, 0}};  // (id, depth)
  size_t lines = 0;
  while (!walk.empty()) {
    const auto [at, depth] = walk.back();
    walk.pop_back();
    const auto it = merge_of.find(at);
    if (it == merge_of.end() || at < 256) continue;
    t.depth = std::max(t.depth, depth + 1);
    const bpe::Merge& g = tok.merges[it->second];
    if (lines++ < most_lines)
      rows.push_back({std::string(2 * depth, ' ') + visible(tok.vocab[size_t(at)]),
                      "= " + visible(tok.vocab[size_t(g.left)]) + " + " + visible(tok.vocab[size_t(g.right)]),
                      std::to_string(it->second + 1)});
    walk.push_back({g.right, depth + 1});
    walk.push_back({g.left, depth + 1});
  }
  t.text = text_table(rows, 2);
  if (lines > most_lines)
    t.text += trf("  ... and {n} more merges\n", fmt::arg("n", lines - most_lines));
  return t;
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
