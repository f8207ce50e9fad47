// data/bleu.hpp: corpus BLEU (Papineni et al. 2002), 4-grams with uniform weights and the
// brevity penalty, written by hand (introduced with the real-text data, issue 43; no Debian
// package offers BLEU to C++). Checked live against NLTK's corpus_bleu and torchtext's bleu_score
// (tests/twins/bleu_reference.py, ctest bleu_twin).
//
//   p_n  = sum over sentences of clipped n-gram matches / sum of the hypothesis' n-grams
//          (clipped: a hypothesis n-gram counts at most as often as in the reference that has it
//          most often)
//   BP   = 1 if c > r, else exp(1 - r / c)   (c: hypothesis tokens, r: the closest reference
//          lengths, both summed over the corpus)
//   BLEU = BP * exp(sum_n 1/4 * log p_n)
//
// The two references differ where a count is zero or a sentence is short; each is followed:
//   nltk       (nltk.translate.bleu_score.corpus_bleu, no smoothing) a sentence contributes at
//              least 1 to every denominator, even when shorter than n; closest reference: the
//              smallest |r - c|, ties to the shorter; no unigram match: 0; a higher-order p_n of
//              0 is replaced by the smallest normal double (2.2e-308), so the score is tiny but
//              not 0 (NLTK warns); the log terms summed exactly (math.fsum).
//   torchtext  (torchtext.data.metrics.bleu_score) denominators count max(len - n + 1, 0);
//              closest reference: the first with the smallest |r - c|; any p_n of 0: 0.
//
// Tokenization (bleu_tokens): the text split at ASCII whitespace after sacrebleu's "13a" rules
// for punctuation (no lower-casing, no HTML unescaping):
//   each of  ! " # $ % & ( ) * + / : ; < = > ? @ [ \ ] ^ _ ` { | } ~  becomes a token of its own;
//   '.' and ',' too, unless a digit stands on both sides ("3.14", "1,000" stay whole);
//   '-' after a digit is split off ("1-2" -> "1 - 2"); the apostrophe is never split.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ts::data {

using Tokens = std::vector<std::string>;

Tokens bleu_tokens(std::string_view text);

enum class BleuConvention { nltk, torchtext };

struct BleuStats {
  std::array<uint64_t, 4> matches{}, totals{};   // per n = 1..4, summed over the corpus
  uint64_t hyp_len = 0, ref_len = 0;             // c and r
  double brevity = 0, score = 0;
};

// hypotheses[i] against references[i] (one or more); sizes must agree (std::invalid_argument)
BleuStats corpus_bleu(const std::vector<Tokens>& hypotheses, const std::vector<std::vector<Tokens>>& references,
                      BleuConvention convention = BleuConvention::nltk);

}  // namespace ts::data
