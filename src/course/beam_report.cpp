// course/beam_report.cpp: beam search as ch11 and ch12 show it.
#include "course/beam_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/mask_stats.hpp"
#include "exact/compare.hpp"
#include "train/numbers.hpp"

namespace ts {

using train::BeamOptions;
using train::BeamResult;
using train::Fate;
using train::Hypothesis;

void check_beam_knobs(const Chapter& ch, int64_t K, double alpha) {
  if (ch.given("--beam")) check_range("--beam", K, 1, kMaxBeam, _("the step-by-step tables list every beam"));
  if (!(alpha >= 0.0 && alpha <= 5.0))
    throw UsageError(trf("--length-penalty must be a number in [0, 5] (0 = the plain sum), got {v}", fmt::arg("v", alpha)));
  if (!ch.given("--beam") && ch.given("--length-penalty"))
    throw UsageError(_("--length-penalty ranks the finished beams of beam search: give --beam K too"));
}

// GNMT's length penalty ((5 + |Y|) / 6)^alpha, what the course's length_penalty is meant to be
static double gnmt_penalty(int64_t n, double alpha) { return std::pow((5.0 + double(n)) / 6.0, alpha); }

// the first |Y| in 1..4 where the code's train::length_penalty is not GNMT's, 0 where it is
static int64_t first_non_gnmt(double alpha) {
  for (int64_t n = 1; n <= 4; ++n) {
    const double got = train::length_penalty(n, alpha), want = gnmt_penalty(n, alpha);
    if (!(std::abs(got - want) <= 1e-12 * std::max(1.0, std::abs(want)))) return n;
  }
  return 0;
}

std::string beam_name(const BeamOptions& o) {
  // the formula named only when the code's length_penalty evaluates it
  return o.alpha == 0.0          ? trf("beam search, K = {K}, plain sum of log-probabilities", fmt::arg("K", o.K))
         : first_non_gnmt(o.alpha) == 0
             ? trf("beam search, K = {K}, length penalty ((5 + |Y|) / 6)^{a}", fmt::arg("K", o.K), fmt::arg("a", o.alpha))
             : trf("beam search, K = {K}, length penalty length_penalty(|Y|, {a}), not GNMT's ((5 + |Y|) / 6)^{a} "
                   "(look at {site})",
                   fmt::arg("K", o.K), fmt::arg("a", o.alpha), fmt::arg("site", train::length_penalty_site()));
}

std::string beam_words(const Hypothesis& h, const std::vector<std::string>& vocab) {
  std::string s;
  for (int64_t t : h.tokens) s += (s.empty() ? "" : " ") + vocab[size_t(t)];
  if (h.ended) s += s.empty() ? "<end>" : " <end>";
  return s.empty() ? "(empty)" : s;
}

// text_table without its last newline (show adds one)
static std::string table(const std::vector<std::vector<std::string>>& rows, size_t right_from = 2) {
  std::string t = text_table(rows, right_from);
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

static std::string fate_name(Fate f) {
  return f == Fate::Live ? _("kept") : f == Fate::Finished ? _("finished") : _("dropped");
}

void show_beam_steps(Chapter& ch, const std::string& what, const BeamResult& r, const BeamOptions& o,
                     const std::vector<std::string>& vocab, train::BeamModel* rescore) {
  const bool pen = o.alpha != 0.0;
  ch.say(trf("  {what}, {how}, step by step. At each step every live beam is extended by every token; the "
             "candidates are ranked by their summed log-probability, the best K minus the finished ones are "
             "kept, and a kept candidate ending in <end> is finished.",
             fmt::arg("what", what), fmt::arg("how", beam_name(o))));
  for (size_t s = 0; s < r.steps.size(); ++s) {
    const train::BeamStep& st = r.steps[s];
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"", _("words"), _("sum log p")});
    if (pen) rows.back().push_back(_("penalised"));
    for (const auto& c : st.shown) {
      rows.push_back({fate_name(c.fate), beam_words(c.hyp, vocab), fmt::format("{:.4f}", c.hyp.logp)});
      if (pen) rows.back().push_back(fmt::format("{:.4f}", train::penalised_score(c.hyp, o.alpha)));
    }
    int64_t kept = 0, done = 0;
    for (const auto& c : st.shown) kept += c.fate == Fate::Live, done += c.fate == Fate::Finished;
    ch.show(fmt::format("beam step {}", s + 1), table(rows),
            trf("{L} live beam(s) extended, {f} finished before this step: {k} kept, {d} finished now, the best "
                "{x} dropped shown",
                fmt::arg("L", st.live.size()), fmt::arg("f", st.finished_before), fmt::arg("k", kept),
                fmt::arg("d", done), fmt::arg("x", st.shown.size() - size_t(kept + done))),
            Shown::Info);
  }
  // the rule stated above, checked on every step shown: K minus the finished beams kept, and no
  // dropped candidate scored above a kept one
  size_t bad_step = 0;
  int64_t bad_kept = 0, bad_want = 0;
  for (size_t s = 0; s < r.steps.size() && bad_step == 0; ++s) {
    const train::BeamStep& st = r.steps[s];
    int64_t kept = 0;
    double worst_kept = INFINITY, best_dropped = -INFINITY;
    for (const auto& c : st.shown)
      if (c.fate == Fate::Dropped)
        best_dropped = std::max(best_dropped, c.hyp.logp);
      else
        ++kept, worst_kept = std::min(worst_kept, c.hyp.logp);
    const int64_t want = o.K - st.finished_before;
    if (kept != want || best_dropped > worst_kept) bad_step = s + 1, bad_kept = kept, bad_want = want;
  }
  const std::string site = ch.ran("train::beam_search");  // "src/train/beam.cpp:LINE train::beam_search"
  ch.say("  " + ch.verdict(bad_step == 0,
                           bad_step == 0
                               ? trf("at each of the {n} steps, K = {K} minus the finished beams were kept and no "
                                     "dropped candidate shown scored above a kept one: the rule above, as {site} ran "
                                     "it",
                                     fmt::arg("n", r.steps.size()), fmt::arg("K", o.K), fmt::arg("site", site))
                               : bad_kept != bad_want
                               ? trf("at step {s}, beam_search kept {k} candidates where the rule above keeps {w} "
                                     "(K = {K} minus the finished ones) (look at {site})",
                                     fmt::arg("s", bad_step), fmt::arg("k", bad_kept), fmt::arg("w", bad_want),
                                     fmt::arg("K", o.K), fmt::arg("site", site))
                               : trf("at step {s}, beam_search dropped a candidate that scored above a kept one: it "
                                     "did not keep the best-scored (look at {site})",
                                     fmt::arg("s", bad_step), fmt::arg("site", site))));
  if (rescore) {
    // the "sum log p" column, checked: each candidate's score is its parent's plus log p(token | parent's
    // tokens), that log p recomputed from the whole prefix by another model
    const int64_t V = rescore->vocab();
    double maxdiff = 0;
    int64_t n = 0;
    size_t bad = 0;  // the first step with a candidate off, 1-based
    std::string bad_words, bad_tok;
    double got = 0, parent = 0, lp = 0;
    for (size_t s = 0; s < r.steps.size(); ++s) {
      const train::BeamStep& st = r.steps[s];
      if (st.live.empty()) continue;
      std::vector<std::vector<int64_t>> prefixes;
      for (const Hypothesis& h : st.live) prefixes.push_back(h.tokens);
      const std::vector<double> logp = rescore->log_probs(prefixes);
      for (const auto& c : st.shown) {
        const double pl = st.live[size_t(c.parent)].logp, l = logp[size_t(c.parent * V + c.token)];
        const double d = std::abs(c.hyp.logp - (pl + l));
        maxdiff = std::max(maxdiff, d), ++n;
        if (bad == 0 && !(d <= 1e-4 * std::max(1.0, std::abs(pl + l))))
          bad = s + 1, bad_words = beam_words(c.hyp, vocab), bad_tok = vocab[size_t(c.token)], got = c.hyp.logp,
          parent = pl, lp = l;
      }
    }
    const std::string site = ch.ran("train::beam_search");
    ch.say("  " + ch.verdict(bad == 0,
                             bad == 0 ? trf("every one of the {n} candidates shown scores its parent's sum log p plus "
                                            "the log-probability of its token, recomputed from the whole prefix (max "
                                            "|diff| {d:.1e}): the column is the summed log-probability",
                                            fmt::arg("n", n), fmt::arg("d", maxdiff))
                                      : trf("at step {s}, '{w}' scores {got:.4f}, but its parent's sum {p:.4f} plus "
                                            "log p('{tok}') {lp:.4f}, recomputed from the whole prefix, is {want:.4f}: "
                                            "the 'sum log p' column is not the summed log-probability (look at {site})",
                                            fmt::arg("s", bad), fmt::arg("w", bad_words), fmt::arg("got", got),
                                            fmt::arg("p", parent), fmt::arg("tok", bad_tok), fmt::arg("lp", lp),
                                            fmt::arg("want", parent + lp), fmt::arg("site", site))));
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"", _("words"), "|Y|", _("sum log p"), _("penalised")});
  for (size_t i = 0; i < r.finished.size(); ++i) {
    const Hypothesis& h = r.finished[i];
    rows.push_back({i == 0 ? _("best") : fmt::format("{}", i + 1), beam_words(h, vocab), fmt::format("{}", h.length()),
                    fmt::format("{:.4f}", h.logp), fmt::format("{:.4f}", train::penalised_score(h, o.alpha))});
  }
  ch.show("finished beams", table(rows),
          pen ? trf("ranked by sum log p / lp(|Y|), lp = length_penalty(|Y|, {a})", fmt::arg("a", o.alpha))
              : _("ranked by the sum of log-probabilities (no length penalty: lp = 1)"),
          Shown::Info);
  if (!pen) return;
  // the penalty the code evaluated, |Y| = 1..4, against GNMT's ((5 + |Y|) / 6)^alpha
  std::string values;
  for (int64_t n = 1; n <= 4; ++n) values += fmt::format("{}{:.4f}", n > 1 ? ", " : "", train::length_penalty(n, o.alpha));
  const int64_t bad = first_non_gnmt(o.alpha);
  ch.say("  " + ch.verdict(bad == 0,
                           bad == 0 ? trf("length_penalty gives lp(|Y|) = {v} for |Y| = 1..4: GNMT's ((5 + |Y|) / 6)^{a}",
                                          fmt::arg("v", values), fmt::arg("a", o.alpha))
                                    : trf("length_penalty gives lp(|Y|) = {v} for |Y| = 1..4, not GNMT's ((5 + |Y|) / "
                                          "6)^{a} ({w:.4f} at |Y| = {n}): the ranking above uses that (look at {site})",
                                          fmt::arg("v", values), fmt::arg("a", o.alpha),
                                          fmt::arg("w", gnmt_penalty(bad, o.alpha)), fmt::arg("n", bad),
                                          fmt::arg("site", train::length_penalty_site()))));
}

void show_beam_vs_greedy(Chapter& ch, const std::vector<int64_t>& numbers, const std::vector<std::vector<int64_t>>& greedy,
                         const std::vector<std::vector<int64_t>>& beam1, const std::vector<std::vector<int64_t>>& beamK,
                         const BeamOptions& o, const std::function<bool(size_t, const std::vector<int64_t>&)>& right,
                         const std::function<std::string(const std::vector<int64_t>&)>& words) {
  const size_t n = numbers.size();
  size_t same = 0, first_bad = n;
  for (size_t i = 0; i < n; ++i) {
    same += beam1[i] == greedy[i];
    if (beam1[i] != greedy[i] && first_bad == n) first_bad = i;
  }
  const bool ok = same == n;
  ch.say("  " + ch.verdict(ok, ok ? trf("beam 1 gives exactly greedy's tokens on all {n} held-out numbers: with one "
                                         "beam the kept candidate is the first argmax at every step, as greedy's",
                                         fmt::arg("n", n))
                                   : trf("beam 1 and greedy differ on {bad} of {n} held-out numbers (first {num}: "
                                         "greedy \"{g}\", beam 1 \"{b}\"); one beam should keep greedy's argmax at "
                                         "every step (look at {site})",
                                         fmt::arg("bad", n - same), fmt::arg("n", n), fmt::arg("num", numbers[first_bad]),
                                         fmt::arg("g", words(greedy[first_bad])), fmt::arg("b", words(beam1[first_bad])),
                                         fmt::arg("site", ch.ran("train::beam_search")))));
  if (o.K == 1) return;
  size_t differ = 0, g_right = 0, b_right = 0;
  std::vector<size_t> shown;
  for (size_t i = 0; i < n; ++i) {
    const bool d = beamK[i] != greedy[i];
    differ += d;
    g_right += right(i, greedy[i]);
    b_right += right(i, beamK[i]);
    if (d && shown.size() < 4) shown.push_back(i);
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({_("number"), _("greedy"), trf("beam {K}", fmt::arg("K", o.K))});
  for (size_t i : shown)
    rows.push_back({fmt::format("{}", numbers[i]), words(greedy[i]) + (right(i, greedy[i]) ? "  ✓" : "  ✗"),
                    words(beamK[i]) + (right(i, beamK[i]) ? "  ✓" : "  ✗")});
  ch.show(trf("greedy vs beam {K}", fmt::arg("K", o.K)),
          trf("disagree on {d}/{n}; right: greedy {g}/{n}, beam {K} {b}/{n}", fmt::arg("d", differ), fmt::arg("n", n),
              fmt::arg("g", g_right), fmt::arg("b", b_right), fmt::arg("K", o.K)) +
              (shown.empty() ? std::string() : "\n" + table(rows, SIZE_MAX)),
          differ == 0 ? trf("{how}: the same answer as greedy on every held-out number", fmt::arg("how", beam_name(o)))
                      : trf("{how}; the first {s} numbers where they disagree (✓ = right)", fmt::arg("how", beam_name(o)),
                            fmt::arg("s", shown.size())),
          Shown::Info);
}

void show_beam_cache_check(Chapter& ch, const train::CacheCheck& c, const std::string& cached_name,
                           const std::string& full_name, const std::string& edit, const std::string& reorder,
                           const std::string& stale) {
  const double tol = scaled_tolerance(c.scale, kBeamCacheGrowth);
  const bool ok = c.maxdiff <= tol && c.argmax_differ == 0;
  ch.show(trf("max |log p({a}) - log p({b})|", fmt::arg("a", cached_name), fmt::arg("b", full_name)),
          fmt::format("{:.3e}", c.maxdiff),
          trf("{r} beam rows of {n} numbers, each searched with K = 1 and K = {K}; pruning copied {m} caches from "
              "another beam",
              fmt::arg("r", c.rows), fmt::arg("n", c.numbers), fmt::arg("K", c.K), fmt::arg("m", c.moved)),
          Shown::Info);
  const std::string what = trf("{r} rows, {d} with another argmax", fmt::arg("r", c.rows), fmt::arg("d", c.argmax_differ));
  ch.say("  " + ch.verdict(ok, ok ? trf("every beam's cache, copied from its parent when the beams were pruned, gives the "
                                         "log-probabilities of recomputing its whole prefix (max |diff| {d:.2e} <= {tol:.2g} "
                                         "= {g:g} float epsilons x max(1, max |log p| {s:.3g}); {what})",
                                         fmt::arg("d", c.maxdiff), fmt::arg("tol", tol), fmt::arg("g", kBeamCacheGrowth),
                                         fmt::arg("s", c.scale), fmt::arg("what", what))
                                   : !stale.empty()
                                         ? trf("cached and recomputed log-probabilities differ by up to {d:.3e} ({what}): "
                                               "{stale}",
                                               fmt::arg("d", c.maxdiff), fmt::arg("what", what), fmt::arg("stale", stale))
                                         : c.maxdiff_one > tol
                                               ? trf("cached and recomputed log-probabilities differ by up to {d:.3e} "
                                                     "({what}), already with one beam, with a mask a cache "
                                                     "reproduces: the forward with a cache no longer computes what the "
                                                     "same forward computes without one; look at what only the cached "
                                                     "call runs: {edit}",
                                                     fmt::arg("d", c.maxdiff), fmt::arg("what", what), fmt::arg("edit", edit))
                                               : trf("with one beam the cached step matches (max |diff| {one:.2e}), with "
                                                     "K = {K} cached and recomputed log-probabilities differ by up to "
                                                     "{d:.3e} ({what}): a beam's cache no longer follows its parent when "
                                                     "the beams are pruned ({reorder})",
                                                     fmt::arg("one", c.maxdiff_one), fmt::arg("K", c.K),
                                                     fmt::arg("d", c.maxdiff), fmt::arg("what", what),
                                                     fmt::arg("reorder", reorder))));
}

std::string translation_mask_breaks_cache(const train::ModelConfig& cfg, int64_t T) {
  // one source token, T target tokens, none of them padding (id 1): only the look-ahead part is left
  const std::vector<int64_t> src{1}, tgt(static_cast<size_t>(T), 1);
  const auto masks = train::create_mask<float>(src, tgt, 1, 1, T, cfg.look_ahead);
  return mask_breaks_cache(masks.dec_self, T, train::create_mask_site());
}

}  // namespace ts
