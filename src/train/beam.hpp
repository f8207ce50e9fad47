// train/beam.hpp: beam search, one implementation for ch11's encoder-decoder and ch12's GPT
// (introduced in ch11, used by ch12).
//
//   K partial outputs ("beams"), each with the SUM of its tokens' log-probabilities:
//     score(y_1..y_t) = log p(y_1) + log p(y_2 | y_1) + ... + log p(y_t | y_<t)
//   one step: every live beam i and every token v give a candidate, score_i + log p(v | beam i);
//   the candidates are sorted best first and the best K - |finished| are kept: a kept candidate
//   that ends with <end> moves to the finished list, the others are the next step's live beams.
//   Stop when K beams have finished, or after max_len steps (the live beams are then cut there
//   and join the finished list). The answer is the finished beam with the best score below.
// Length penalty (GNMT, Wu et al. 2016, eq. 14):  lp(Y) = ((5 + |Y|) / 6)^alpha, and the finished
//   beams are ranked by  score(Y) / lp(Y),  |Y| = the tokens written, <end> included.
//   alpha = 0 gives lp = 1: the plain sum. Every candidate of one step has the same length, so the
//   penalty never changes which candidates survive a step; it changes which finished beam wins
//   (a longer one loses less for its extra negative log-probabilities).
// Ties, broken so that every run gives the same beams: candidates of equal score are taken in the
//   order (beam index, then token id), both ascending; the live beams are kept best first, so
//   with K = 1 the kept token is the first maximum of the log-probabilities, as greedy's
//   std::max_element takes it. Finished beams of equal penalised score keep the order in which
//   they finished (a stable sort).
// A model plugs in through BeamModel: it returns the next-token log-probabilities of every live
// beam, and reorders its per-beam state (a KV cache) when the beams are pruned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ts::train {

// What beam search needs from a model.
class BeamModel {
 public:
  virtual ~BeamModel() = default;
  virtual int64_t vocab() const = 0;   // V
  virtual int64_t end_id() const = 0;  // the token that finishes a beam
  // prefixes (L): the tokens each live beam has written so far (all of one length t) ->
  // log p(v | prefix) for every beam and token, (L,V) row-major, in double.
  virtual std::vector<double> log_probs(const std::vector<std::vector<int64_t>>& prefixes) = 0;
  // The beams were pruned: new beam i continues old beam parent[i] (L' entries, parents may
  // repeat). A model with a cache per beam copies parent[i]'s cache into slot i.
  virtual void reorder(const std::vector<int64_t>& parent) = 0;
};

struct BeamOptions {
  int64_t K = 1;         // the beam width
  double alpha = 0.0;    // the length penalty's exponent (0: plain sum of log-probabilities)
  int64_t max_len = 10;  // at most this many steps (tokens written, <end> included)
};

struct Hypothesis {
  std::vector<int64_t> tokens;  // written so far, <end> not included
  double logp = 0.0;            // sum of the log-probabilities, <end>'s included when ended
  bool ended = false;           // finished with <end> (false: cut at max_len)
  int64_t length() const { return static_cast<int64_t>(tokens.size()) + (ended ? 1 : 0); }  // |Y|
};

// lp(|Y|) = ((5 + |Y|) / 6)^alpha
double length_penalty(int64_t length, double alpha);
std::string length_penalty_site();  // "src/train/beam.cpp:LINE length_penalty", from the compiler
// score / lp: what ranks the finished beams
double penalised_score(const Hypothesis& h, double alpha);

// One step as the chapter shows it: the best candidates (the kept ones first, then the best
// dropped ones) and what became of each.
enum class Fate { Live, Finished, Dropped };
struct BeamCandidate {
  int64_t parent = 0;  // the live beam it extends (index in that step's live list)
  int64_t token = 0;
  Hypothesis hyp;      // parent's tokens + token (ended if token is <end>), summed log-prob
  Fate fate = Fate::Dropped;
};
struct BeamStep {
  std::vector<Hypothesis> live;          // the live beams this step extends, best first
  std::vector<BeamCandidate> shown;      // kept candidates, then up to as many dropped ones
  int64_t finished_before = 0;           // finished beams before this step
};

struct BeamResult {
  std::vector<Hypothesis> finished;  // best first by penalised_score (stable)
  std::vector<BeamStep> steps;       // filled when asked (trace = true)
  int64_t reorders_moved = 0;        // live slots whose cache came from another slot
  const Hypothesis& best() const { return finished.front(); }
};

// The naive form: every (beam, token) pair is a candidate, all sorted. K >= 1, K <= V.
BeamResult beam_search(BeamModel& model, const BeamOptions& opt, bool trace = false);

// Runs a cached model and a model that recomputes, on the same beams: returns the cached one's
// log-probabilities and keeps the largest |cached - recomputed| seen (the cache check).
class CompareBeams : public BeamModel {
 public:
  CompareBeams(BeamModel& cached, BeamModel& full) : cached_(cached), full_(full) {}
  int64_t vocab() const override { return cached_.vocab(); }
  int64_t end_id() const override { return cached_.end_id(); }
  std::vector<double> log_probs(const std::vector<std::vector<int64_t>>& prefixes) override;
  void reorder(const std::vector<int64_t>& parent) override;
  double maxdiff = 0.0;      // max |log p cached - log p recomputed| over every row compared
  double scale = 0.0;        // max |log p recomputed| over the same rows (what a tolerance scales with)
  int64_t rows = 0;          // beam rows compared
  int64_t argmax_differ = 0; // rows whose argmax differs
  int64_t moved = 0;         // caches copied from another slot by reorder

 private:
  BeamModel& cached_;
  BeamModel& full_;
};

// log_softmax of one row of float logits, in double: x - max - log(sum exp(x - max))   (V)
std::vector<double> log_softmax_row(const float* logits, int64_t V);

}  // namespace ts::train
