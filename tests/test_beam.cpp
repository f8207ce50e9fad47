// test_beam.cpp: src/train/beam.hpp and beam_models.hpp -- beam 1 is greedy, K > 1 keeps sorted
// sums that equal the log-probabilities added up again, the length penalty's formula, and the
// per-beam caches (reordered on pruning) against recomputing every prefix, for ch11 and ch12.
#include "catch_compat.hpp"

#include <cmath>
#include <map>

#include "train/beam_models.hpp"
#include "train/gradcheck.hpp"
#include "train/sampling.hpp"

using namespace ts::train;

namespace {

// A toy model whose next-token distribution depends on the whole prefix (a hash of it), so a
// beam that received another beam's state would get other numbers.
class ToyModel : public BeamModel {
 public:
  int64_t vocab() const override { return 6; }
  int64_t end_id() const override { return 5; }
  std::vector<double> log_probs(const std::vector<std::vector<int64_t>>& prefixes) override {
    std::vector<double> out;
    for (const auto& p : prefixes) {
      const auto row = row_of(p);
      out.insert(out.end(), row.begin(), row.end());
    }
    return out;
  }
  void reorder(const std::vector<int64_t>&) override {}
  static std::vector<double> row_of(const std::vector<int64_t>& p) {
    uint64_t h = 1469598103934665603ull;
    for (int64_t t : p) h = (h ^ uint64_t(t + 1)) * 1099511628211ull;
    std::vector<float> logits(6);
    for (int v = 0; v < 6; ++v) logits[size_t(v)] = float((h >> (5 * v)) % 97) / 20.0f - (p.size() < 2 && v == 5 ? 3 : 0);
    return log_softmax_row(logits.data(), 6);
  }
};

double sum_of(const std::vector<int64_t>& tokens, bool ended) {
  double s = 0;
  std::vector<int64_t> p;
  for (int64_t t : tokens) s += ToyModel::row_of(p)[size_t(t)], p.push_back(t);
  if (ended) s += ToyModel::row_of(p)[5];
  return s;
}

ModelConfig tiny_translation() {
  ModelConfig c = tiny_config();
  c.src_vocab = source_vocab().size(), c.tgt_vocab = target_vocab().size(), c.dropout = 0.0;
  return c;
}

}  // namespace

TEST_CASE("beam: K = 1 takes the first argmax at every step (greedy)", "[beam]") {
  ToyModel toy;
  const BeamResult r = beam_search(toy, BeamOptions{1, 0.0, 8});
  std::vector<int64_t> greedy, p;
  for (int step = 0; step < 8; ++step) {
    const auto row = ToyModel::row_of(p);
    const int64_t v = std::max_element(row.begin(), row.end()) - row.begin();
    if (v == 5) break;
    greedy.push_back(v), p.push_back(v);
  }
  CHECK(r.best().tokens == greedy);
}

TEST_CASE("beam: K > 1 keeps sorted sums equal to the log-probabilities added again", "[beam]") {
  ToyModel toy;
  for (int64_t K : {2, 3, 5}) {
    const BeamResult r = beam_search(toy, BeamOptions{K, 0.0, 6}, true);
    REQUIRE(int64_t(r.finished.size()) == K);
    for (size_t i = 0; i < r.finished.size(); ++i) {
      const Hypothesis& h = r.finished[i];
      CHECK(h.logp == Approx(sum_of(h.tokens, h.ended)).margin(1e-12));
      if (i > 0) CHECK(r.finished[i - 1].logp >= h.logp);
    }
    for (const BeamStep& s : r.steps)
      for (size_t j = 1; j < s.shown.size(); ++j) CHECK(s.shown[j - 1].hyp.logp >= s.shown[j].hyp.logp);
    // a wider beam never finds a worse best sum than greedy's
    CHECK(r.best().logp >= beam_search(toy, BeamOptions{1, 0.0, 6}).best().logp - 1e-12);
  }
}

TEST_CASE("beam: GNMT's length penalty ((5 + |Y|) / 6)^alpha", "[beam]") {
  CHECK(length_penalty(7, 0.0) == 1.0);
  CHECK(length_penalty(1, 1.0) == Approx(1.0));
  CHECK(length_penalty(7, 0.6) == Approx(std::pow(2.0, 0.6)));
  Hypothesis h;
  h.tokens = {1, 2}, h.ended = true, h.logp = -3.0;
  CHECK(h.length() == 3);
  CHECK(penalised_score(h, 1.0) == Approx(-3.0 / (8.0 / 6.0)));
}

TEST_CASE("beam: ch11's cached decoder, reordered on pruning, equals recomputing", "[beam][train]") {
  for (bool pre_ln : {true, false}) {
    ModelConfig cfg = tiny_translation();
    cfg.pre_ln = pre_ln;
    const Model<float> m = init_model(cfg, 3);
    for (int64_t n : {7, 905, 2048}) {
      TranslationBeams cached(m, n);
      TranslationRecompute full(m, n);
      CompareBeams both(cached, full);
      beam_search(both, BeamOptions{4, 0.0, 8});
      CHECK(both.rows > 8);
      CHECK(both.maxdiff < 1e-4);
      CHECK(both.argmax_differ == 0);
    }
    // beam 1 with the cache gives greedy_translate's tokens
    for (int64_t n : {7, 905, 2048}) CHECK(beam_translate(m, {n}, BeamOptions{1, 0.0, 10})[0] == greedy_translate(m, {n}, 10)[0]);
  }
}

TEST_CASE("beam: a <pad> a beam emitted is a token, cached and recomputed alike", "[beam][train]") {
  // an untrained model may emit <pad> (id 0); the recompute's masks must not hide it as padding
  // while the cache attends to it (ch11 --steps 1 --beam K blamed KVCache::append for that)
  const Model<float> m = init_model(tiny_translation(), 3);
  TranslationBeams cached(m, 905);
  TranslationRecompute full(m, 905);
  CompareBeams both(cached, full);
  for (const std::vector<int64_t>& prefix : {std::vector<int64_t>{}, {kPad}, {kPad, 3}, {kPad, 3, kPad}})
    both.log_probs({prefix});
  CHECK(both.rows == 4);
  CHECK(both.maxdiff < 1e-4);
  CHECK(both.argmax_differ == 0);
}

TEST_CASE("beam: a cache that does not follow its parent is caught", "[beam][train]") {
  // the check must be able to fail: a model that forgets to reorder
  class NoReorder : public TranslationBeams {
   public:
    using TranslationBeams::TranslationBeams;
    void reorder(const std::vector<int64_t>& parent) override {
      std::vector<int64_t> same(parent.size(), 0);
      TranslationBeams::reorder(same);  // every beam continues beam 0's cache
    }
  };
  const Model<float> m = init_model(tiny_translation(), 3);
  NoReorder cached(m, 2048);
  TranslationRecompute full(m, 2048);
  CompareBeams both(cached, full);
  beam_search(both, BeamOptions{4, 0.0, 8});
  CHECK(both.maxdiff > 1e-3);
}

TEST_CASE("beam: ch12's KVCaches per beam equal recomputing; beam 1 = greedy", "[beam][gpt]") {
  GptConfig cfg;
  cfg.vocab = seq_vocab().size(), cfg.layers = 1, cfg.d_model = 16, cfg.heads = 2, cfg.d_ff = 32;
  const Gpt m(cfg, 5, 1);
  for (int64_t n : {15, 3907}) {
    GptBeams cached(m, n);
    GptRecompute full(m, n);
    CompareBeams both(cached, full);
    beam_search(both, BeamOptions{3, 0.0, cached.max_len()});
    CHECK(both.maxdiff < 1e-4);
    CHECK(both.moved >= 0);
    Rng rng(0);
    CHECK(beam_complete(m, {n}, BeamOptions{1, 0.0, 0})[0] == generate(m, encode_prompt(n), cfg.ctx, Sampler{}, rng));
  }
}
