// bleu_dump: random BLEU cases and the C++ scores of them, for tests/twins/bleu_reference.py,
// which scores the same tokens with NLTK's corpus_bleu and torchtext's bleu_score.
//
//   bleu_dump [--count N] [--seed S] [--from-data DIR]
//
// Each case: 1 to 3 references of 0 to 30 tokens, and a hypothesis made from the first
// reference by random replacements, drops and insertions (one case in 20 is unrelated), so
// matches, short sentences, zero counts and ties of reference lengths all occur. Tokens are
// drawn from 25 words (synthetic), or, with --from-data, the references are the French sides
// of data/'s pairs (src/data/pairs.hpp) split by bleu_tokens. Output, JSON on stdout:
//   {"cases": [{"hyp": [...], "refs": [[...], ...]}, ...],
//    "scores": {"nltk": {"corpus": x, "each": [x per case as a corpus of one],
//                        "prefix": {"10": x, ...}}, "torchtext": {...}}}
// Bad arguments: one line, exit 2; data missing with --from-data: one line, exit 2.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.hpp"
#include "data/bleu.hpp"
#include "data/fortunes.hpp"
#include "data/pairs.hpp"

using namespace ts::data;

int main(int argc, char** argv) {
  size_t count = 1000;
  uint64_t seed = 0;
  std::string data_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--count" || a == "--seed" || a == "--from-data") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--from-data") { data_dir = v; continue; }
      char* end = nullptr;
      const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end || v[0] == '-' || (a == "--count" && (x == 0 || x > 100000))) {
        std::cerr << "bleu_dump: " << a << " takes a whole number (--count: 1 to 100000), not '" << v << "'\n";
        return 2;
      }
      (a == "--count" ? count : seed) = x;
    } else {
      std::cerr << "bleu_dump: unknown argument '" << a << "': use --count N, --seed S, --from-data DIR\n";
      return 2;
    }
  }
  std::mt19937_64 rng(seed);  // its raw output is fixed by the standard; no std:: distributions
  auto below = [&](uint64_t n) { return rng() % n; };
  std::vector<Tokens> pool;  // the reference sentences to draw from
  if (!data_dir.empty()) {
    try {
      std::vector<MoCatalog> cats;
      for (const std::string& f : manifest_files(data_dir, "mo/")) cats.push_back(read_mo(f));
      for (const Pair& p : extract_pairs(cats).pairs) pool.push_back(bleu_tokens(p.fr));
    } catch (const ts::FileError& e) {
      std::cerr << "bleu_dump: " << e.what() << "\n";
      return 2;
    }
  }
  std::vector<std::string> words;
  for (int w = 0; w < 25; ++w) words.push_back("w" + std::to_string(w));
  auto word = [&]() -> std::string {
    if (!pool.empty()) {
      const Tokens& s = pool[below(pool.size())];
      if (!s.empty()) return s[below(s.size())];
    }
    return words[below(words.size())];
  };
  auto sentence = [&]() {
    if (!pool.empty()) return pool[below(pool.size())];
    Tokens t(below(8) == 0 ? below(4) : below(31));
    for (auto& x : t) x = word();
    return t;
  };
  std::vector<Tokens> hyps;
  std::vector<std::vector<Tokens>> refs;
  for (size_t c = 0; c < count; ++c) {
    std::vector<Tokens> r(1 + below(3));
    for (auto& x : r) x = sentence();
    Tokens h;
    if (below(20) == 0) {
      h = sentence();
    } else {
      for (const std::string& t : r[0]) {
        const uint64_t u = below(10);
        if (u == 0) continue;              // dropped
        h.push_back(u == 1 ? word() : t);  // replaced, or kept
        if (below(10) == 0) h.push_back(word());  // an insertion
      }
    }
    hyps.push_back(std::move(h));
    refs.push_back(std::move(r));
  }
  nlohmann::json out;
  for (size_t c = 0; c < count; ++c) out["cases"].push_back({{"hyp", hyps[c]}, {"refs", refs[c]}});
  for (auto [name, conv] : {std::pair{"nltk", BleuConvention::nltk}, std::pair{"torchtext", BleuConvention::torchtext}}) {
    nlohmann::json& s = out["scores"][name];
    s["corpus"] = corpus_bleu(hyps, refs, conv).score;
    for (size_t c = 0; c < count; ++c) s["each"].push_back(corpus_bleu({hyps[c]}, {refs[c]}, conv).score);
    for (size_t k : {size_t(2), size_t(10), size_t(100)}) {
      if (k > count) continue;
      s["prefix"][std::to_string(k)] =
          corpus_bleu(std::vector<Tokens>(hyps.begin(), hyps.begin() + long(k)),
                      std::vector<std::vector<Tokens>>(refs.begin(), refs.begin() + long(k)), conv).score;
    }
  }
  std::cout << out.dump() << "\n";
  if (!std::cout.flush()) {
    std::cerr << "bleu_dump: writing to stdout failed\n";
    return 1;
  }
  return 0;
}
