// train/beam.cpp: beam search in its naive form (every candidate scored and sorted).
#include "train/beam.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/code_site.hpp"

namespace ts::train {

// the line below: length_penalty's own, for length_penalty_site()
static const CodeSite kPenaltySite{__FILE__, __LINE__ + 1, "length_penalty"};
double length_penalty(int64_t length, double alpha) {
  return alpha == 0.0 ? 1.0 : std::pow((5.0 + double(length)) / 6.0, alpha);
}

std::string length_penalty_site() {
  return code_site_path(kPenaltySite.file) + ":" + std::to_string(kPenaltySite.line) + " " + kPenaltySite.func;
}

double penalised_score(const Hypothesis& h, double alpha) { return h.logp / length_penalty(h.length(), alpha); }

std::vector<double> log_softmax_row(const float* logits, int64_t V) {
  const double mx = *std::max_element(logits, logits + V);
  double sum = 0.0;
  for (int64_t v = 0; v < V; ++v) sum += std::exp(double(logits[v]) - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) out[size_t(v)] = double(logits[v]) - lse;
  return out;
}

BeamResult beam_search(BeamModel& model, const BeamOptions& opt, bool trace) {
  TS_CODE_SITE();
  const int64_t V = model.vocab(), end = model.end_id(), K = opt.K;
  if (K < 1 || K > V) throw std::invalid_argument("beam_search: K must be in 1..V");
  BeamResult r;
  std::vector<Hypothesis> live(1);  // one empty beam, score 0
  for (int64_t t = 0; t < opt.max_len && !live.empty(); ++t) {
    // 1) the next-token log-probabilities of every live beam   (L,V)
    std::vector<std::vector<int64_t>> prefixes;
    for (const Hypothesis& h : live) prefixes.push_back(h.tokens);
    const std::vector<double> logp = model.log_probs(prefixes);
    const int64_t L = static_cast<int64_t>(live.size());
    // 2) every candidate: beam i extended by token v, score_i + log p(v | beam i)   (L*V)
    std::vector<BeamCandidate> cand;
    cand.reserve(static_cast<size_t>(L * V));
    for (int64_t i = 0; i < L; ++i)
      for (int64_t v = 0; v < V; ++v) {
        BeamCandidate c;
        c.parent = i, c.token = v;
        const double lp = logp[size_t(i * V + v)];
        c.hyp.logp = live[size_t(i)].logp + (std::isnan(lp) ? -INFINITY : lp);  // a NaN never wins
        cand.push_back(c);
      }
    // 3) best first; equal scores: lower beam index, then lower token id (the order built above)
    std::stable_sort(cand.begin(), cand.end(),
                     [](const BeamCandidate& a, const BeamCandidate& b) { return a.hyp.logp > b.hyp.logp; });
    // 4) the best K - |finished| survive: <end> finishes a beam, any other token keeps it live
    const int64_t want = K - static_cast<int64_t>(r.finished.size());
    std::vector<Hypothesis> next;
    std::vector<int64_t> parent;
    const size_t shown = std::min(cand.size(), size_t(2 * want));
    for (size_t j = 0; j < cand.size() && (j < size_t(want) || (trace && j < shown)); ++j) {
      BeamCandidate& c = cand[j];
      c.hyp.tokens = live[size_t(c.parent)].tokens;
      if (c.token == end)
        c.hyp.ended = true;
      else
        c.hyp.tokens.push_back(c.token);
      if (j < size_t(want)) {
        c.fate = c.hyp.ended ? Fate::Finished : Fate::Live;
        if (c.hyp.ended) {
          r.finished.push_back(c.hyp);
        } else {
          next.push_back(c.hyp);
          parent.push_back(c.parent);
        }
      }
    }
    if (trace)
      r.steps.push_back(BeamStep{live, std::vector<BeamCandidate>(cand.begin(), cand.begin() + long(shown)),
                                 K - want});
    // 5) each kept beam's state (its cache) follows its parent
    for (size_t i = 0; i < parent.size(); ++i) r.reorders_moved += parent[i] != int64_t(i);
    if (!next.empty()) model.reorder(parent);
    live = std::move(next);
  }
  // max_len reached: the live beams are cut there and compete with the finished ones
  for (Hypothesis& h : live) r.finished.push_back(std::move(h));
  std::stable_sort(r.finished.begin(), r.finished.end(), [&](const Hypothesis& a, const Hypothesis& b) {
    return penalised_score(a, opt.alpha) > penalised_score(b, opt.alpha);
  });
  return r;
}

std::vector<double> CompareBeams::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  const std::vector<double> a = cached_.log_probs(prefixes), b = full_.log_probs(prefixes);
  const int64_t V = vocab();
  for (size_t i = 0; i < prefixes.size(); ++i) {
    const double* ra = a.data() + i * size_t(V);
    const double* rb = b.data() + i * size_t(V);
    for (int64_t v = 0; v < V; ++v) maxdiff = std::max(maxdiff, std::abs(ra[v] - rb[v])), scale = std::max(scale, std::abs(rb[v]));
    argmax_differ += (std::max_element(ra, ra + V) - ra) != (std::max_element(rb, rb + V) - rb);
    ++rows;
  }
  return a;
}

void CompareBeams::reorder(const std::vector<int64_t>& parent) {
  for (size_t i = 0; i < parent.size(); ++i) moved += parent[i] != int64_t(i);
  cached_.reorder(parent);
  full_.reorder(parent);
}

}  // namespace ts::train
