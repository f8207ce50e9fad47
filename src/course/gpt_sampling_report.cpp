// course/gpt_sampling_report.cpp: ch12's held-out score, completions, one sampling step taken
// apart and the sampler's settings as they ran (see gpt_report.hpp); the rest of ch12's notes are
// gpt_report.cpp's.
#include "course/gpt_report.hpp"

#include <stdlib.h>  // getloadavg
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "course/counts.hpp"
#include "course/i18n.hpp"
#include "course/mask_stats.hpp"
#include "course/three_kinds.hpp"
#include "course/train_views.hpp"
#include "exact/compare.hpp"
#include "train/beam_models.hpp"
#include "train/numbers.hpp"
#include "train/safetensors.hpp"
#include "train/trainer.hpp"
#include "course/model_probes.hpp"
#include "course/plot.hpp"
#include "course/settings.hpp"
#include "course/train_knobs.hpp"

namespace ts {

using namespace train;

static std::string sampler_name(const Sampler& s) {
  if (s.greedy()) return "greedy";
  std::string n = fmt::format("T={}", s.temperature);
  if (s.top_k > 0) n += fmt::format(" top-k={}", s.top_k);
  if (s.top_p < 1.0) n += fmt::format(" top-p={}", s.top_p);
  return n;
}

// ---------------------------------------------------------------- evaluation
static void completion_line(Chapter& ch, int64_t n, const std::vector<int64_t>& ids) {
  const std::string got = seq_vocab().decode(ids), right = number_to_words(n);
  ch.show(fmt::format("complete('{} =')", n), fmt::format("{} = {}", n, got),
          got == right ? _("correct") : trf("WRONG: the right answer is \"{words}\"", fmt::arg("words", right)),
          Shown::Article);
}

void show_held_out(Chapter& ch, const Gpt& m, double exact, const std::vector<int64_t>& wrong, double seconds) {
  const auto& held = number_split().held_out;
  ch.show("held-out exact match",
          fmt::format("held-out exact match: {}/{} ({:.1f} %)", std::llround(exact * double(held.size())), held.size(),
                      100.0 * exact),
          trf("greedy with the KV cache, the numbers whose prompts have one length as one batch, in {s:.2f} s; a "
              "number counts only if every word and the <end> are right",
              fmt::arg("s", seconds)),
          Shown::Article);
  std::vector<int64_t> show(wrong.begin(), wrong.begin() + std::min<size_t>(wrong.size(), 2));
  for (size_t i : {size_t(17), size_t(250), size_t(499)})
    if (show.size() < 4 && std::find(show.begin(), show.end(), held[i]) == show.end()) show.push_back(held[i]);
  Rng rng(0);
  for (int64_t n : show) completion_line(ch, n, generate(m, encode_prompt(n), m.cfg.ctx, Sampler{}, rng));
  ch.say(wrong.empty() ? _("  Every held-out number is completed exactly.")
                       : trf("  {n} held-out numbers are wrong (e.g. {first}).", fmt::arg("n", wrong.size()),
                             fmt::arg("first", wrong[0])));
}

void show_completion(Chapter& ch, const Gpt& m, int64_t n, const Sampler& s, uint64_t seed, bool use_cache) {
  Rng rng(seed);
  const auto ids = generate(m, encode_prompt(n), m.cfg.ctx, s, rng, use_cache);
  ch.say(trf("  --prompt {n} with {how}{cache}:", fmt::arg("n", n), fmt::arg("how", sampler_name(s)),
             fmt::arg("cache", use_cache ? "" : _(", recomputing the prefix (--no-cache)"))));
  completion_line(ch, n, ids);
}

// ---------------------------------------------------------------- one sampling step
void show_sampling_step(Chapter& ch, const Gpt& m, int64_t n, const Sampler& s, uint64_t seed) {
  const SeqVocab& v = seq_vocab();
  const int64_t V = m.cfg.vocab;
  // greedy completion of n, keeping each step's logits; pick the step with the flattest distribution
  std::vector<int64_t> ids = encode_prompt(n);
  std::vector<float> logits(static_cast<size_t>(V)), pick;
  std::vector<int64_t> prefix;
  double best = -1;
  GPT g = m.module();
  GptCache cache = g.make_caches();
  logits = next_logits(g, cache, ids);  // the prompt, its keys and values cached
  Rng unused(0);
  while (static_cast<int64_t>(ids.size()) < m.cfg.ctx) {
    SampleTrace t;
    const int64_t next = sample_next(logits.data(), V, Sampler{}, unused, &t);
    double entropy = 0;
    for (double p : t.probs) entropy -= p > 0 ? p * std::log(p) : 0.0;
    if (entropy > best) best = entropy, pick = logits, prefix = ids;
    if (next == v.end) break;
    ids.push_back(next);
    logits = next_logits(g, cache, {next});
  }
  Rng rng(seed);
  SampleTrace t;
  sample_next(pick.data(), V, s, rng, &t);
  std::vector<size_t> order(static_cast<size_t>(V));
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.probs[a] > t.probs[b]; });
  std::string table = fmt::format("{:<10} {:>8} {:>9} {:>10} {:>6} {:>6} {:>9}\n", "token", "logit", "p (T=1)",
                                  "logit/T", "top-k", "top-p", "final p");
  int64_t kept_k = 0, kept_p = 0;
  const size_t shown = std::min<size_t>(8, order.size());  // the rows of the table
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t id = order[i];
    kept_k += t.kept_k[id], kept_p += t.kept_p[id];
    if (i < shown)
      table += fmt::format("{:<10} {:>8.3f} {:>9.5f} {:>10.3f} {:>6} {:>6} {:>9.5f}\n", v.words[id], pick[id],
                           t.probs[id], t.scaled[id], t.kept_k[id] ? "kept" : "cut", t.kept_p[id] ? "kept" : "cut",
                           t.final[id]);
  }
  table.pop_back();
  ch.show(fmt::format("next token after '{}'", seq_vocab().spelled(prefix)), table,
          trf("the answer step of {n} where the model is least sure (entropy {e:.3f} nats); the {k} most likely of {V} "
              "tokens, most likely first",
              fmt::arg("n", n), fmt::arg("e", best), fmt::arg("k", shown), fmt::arg("V", V)),
          Shown::Info);
  ch.say(s.greedy()
             ? trf("  {how}: temperature 0 means the argmax: no scaling, no cut, nothing drawn; it takes '{tok}'.",
                   fmt::arg("how", sampler_name(s)), fmt::arg("tok", v.words[size_t(t.chosen)]))
             : trf("  {how}: top-k keeps {k} of {V} tokens, top-p then keeps {p}; renormalised over those {p}, the "
                   "seeded draw takes '{tok}' (final p {fp:.4f}).",
                   fmt::arg("how", sampler_name(s)), fmt::arg("k", kept_k), fmt::arg("V", V), fmt::arg("p", kept_p),
                   fmt::arg("tok", v.words[size_t(t.chosen)]), fmt::arg("fp", t.final[size_t(t.chosen)])));
  if (s.greedy()) return;
  // the rules, checked on this step's own numbers against what sample_next kept
  // 1) logit/T: every scaled value is the logit divided by T
  double scale_err = 0;
  for (int64_t i = 0; i < V; ++i)
    scale_err = std::max(scale_err, std::abs(t.scaled[size_t(i)] - double(pick[size_t(i)]) / s.temperature));
  double biggest = 1.0;
  for (double x : t.scaled) biggest = std::max(biggest, std::abs(x));
  const bool scale_ok = scale_err <= 1e-9 * biggest;
  // 2) top-k: the k largest logits/T (k = 0 or >= V: all), and no cut one above a kept one
  const int64_t want_k = s.top_k > 0 && s.top_k < V ? s.top_k : V;
  double lowest_kept = INFINITY, highest_cut = -INFINITY;
  for (int64_t i = 0; i < V; ++i)
    (t.kept_k[size_t(i)] ? lowest_kept : highest_cut) = t.kept_k[size_t(i)]
                                                            ? std::min(lowest_kept, t.scaled[size_t(i)])
                                                            : std::max(highest_cut, t.scaled[size_t(i)]);
  const bool k_ok = kept_k == want_k && !(highest_cut > lowest_kept);
  // 3) top-p: over softmax(logit/T) of what top-k kept, the kept set is the smallest set of the most likely
  //    tokens whose probabilities sum to >= p: its sum reaches p, and without its least likely token it does not
  double mx = -INFINITY, z = 0;
  for (int64_t i = 0; i < V; ++i)
    if (t.kept_k[size_t(i)]) mx = std::max(mx, t.scaled[size_t(i)]);
  std::vector<double> pk(static_cast<size_t>(V), 0.0);
  for (int64_t i = 0; i < V; ++i)
    if (t.kept_k[size_t(i)]) z += pk[size_t(i)] = std::exp(t.scaled[size_t(i)] - mx);
  double sum = 0, least = INFINITY, best_cut = 0;
  for (int64_t i = 0; i < V; ++i) {
    pk[size_t(i)] /= z;
    if (t.kept_p[size_t(i)]) sum += pk[size_t(i)], least = std::min(least, pk[size_t(i)]);
    else if (t.kept_k[size_t(i)]) best_cut = std::max(best_cut, pk[size_t(i)]);
  }
  const double eps = 1e-12;
  const bool p_ok = s.top_p >= 1.0 ? kept_p == kept_k
                                   : sum >= s.top_p - eps && sum - least < s.top_p - eps && !(best_cut > least);
  const bool ok = scale_ok && k_ok && p_ok;
  const std::string rules =
      trf("logit/T = logit / {T} for all {V} tokens (max error {e:.1e}); top-k keeps the {k} largest; top-p keeps the "
          "fewest most likely tokens whose p sum to >= {p}: the {n} kept sum to {sum:.4f}, without the least likely "
          "of them ({least:.4f}) {rest:.4f}",
          fmt::arg("T", s.temperature), fmt::arg("V", V), fmt::arg("e", scale_err), fmt::arg("k", want_k),
          fmt::arg("p", s.top_p), fmt::arg("n", kept_p), fmt::arg("sum", sum), fmt::arg("least", least),
          fmt::arg("rest", sum - least));
  if (ok) {
    ch.say("  " + ch.verdict(true, rules));
    return;
  }
  // under NOT OK, each rule says what sample_next did, the broken one against what the rule gives
  const std::string scale_words =
      scale_ok ? trf("logit/T = logit / {T} for all {V} tokens (max error {e:.1e})", fmt::arg("T", s.temperature),
                     fmt::arg("V", V), fmt::arg("e", scale_err))
               : trf("sample_next's logit/T is off the logit divided by {T} by up to {e:.3g}", fmt::arg("T", s.temperature),
                     fmt::arg("e", scale_err));
  const std::string k_words =
      k_ok ? trf("top-k keeps the {k} largest", fmt::arg("k", want_k))
           : trf("top-k kept {n} tokens{order}, where the rule keeps the {k} largest", fmt::arg("n", kept_k),
                 fmt::arg("order", highest_cut > lowest_kept ? _(", one of them below a token it cut") : ""),
                 fmt::arg("k", want_k));
  const std::string p_words =
      p_ok ? trf("top-p keeps the fewest most likely tokens whose p sum to >= {p}: the {n} kept sum to {sum:.4f}, "
                 "without the least likely of them ({least:.4f}) {rest:.4f}",
                 fmt::arg("p", s.top_p), fmt::arg("n", kept_p), fmt::arg("sum", sum), fmt::arg("least", least),
                 fmt::arg("rest", sum - least))
           : trf("top-p kept {n} tokens that sum to {sum:.4f}, {rest:.4f} without the least likely of them ({least:.4f}), "
                 "where the rule keeps the fewest most likely tokens whose p sum to >= {p}",
                 fmt::arg("p", s.top_p), fmt::arg("n", kept_p), fmt::arg("sum", sum), fmt::arg("least", least),
                 fmt::arg("rest", sum - least));
  ch.say("  " + ch.verdict(false, trf("{a}; {b}; {c}: {which} (look at {site})", fmt::arg("a", scale_words),
                                      fmt::arg("b", k_words), fmt::arg("c", p_words),
                                      fmt::arg("which", !scale_ok ? _("logit/T is not the logit divided by T")
                                                        : !k_ok   ? _("top-k did not keep the k largest")
                                                                  : _("top-p's kept set is not the smallest reaching p")),
                                      fmt::arg("site", sample_next_site()))));
}

void show_settings(Chapter& ch, const Gpt& m, const Sampler& user, int64_t samples, uint64_t seed) {
  std::vector<Sampler> settings = {Sampler{}, Sampler{0.5, 0, 1.0}, Sampler{1.0, 0, 1.0}, Sampler{1.0, 3, 1.0},
                                   Sampler{1.0, 0, 0.9}, Sampler{2.0, 0, 1.0}};
  if (std::none_of(settings.begin(), settings.end(), [&](const Sampler& s) { return sampler_name(s) == sampler_name(user); }))
    settings.push_back(user);
  const std::vector<int64_t> probe = {3907, 1234, 580};
  std::string table = fmt::format("{:<22} {:>12}  {}\n", "setting", "held-out", "distinct outputs of");
  table += fmt::format("{:<22} {:>12} ", "", "exact match");
  for (int64_t n : probe) table += fmt::format(" {:>5}", n);
  table += "\n";
  GPT g = m.module();
  size_t greedy_distinct = 1;  // the most distinct outputs the greedy row gave (settings[0] is greedy)
  for (size_t i = 0; i < settings.size(); ++i) {
    const double match = held_out_exact_match(m, settings[i], seed);
    table += fmt::format("{:<22} {:>11.1f}% ", sampler_name(settings[i]), 100.0 * match);
    for (int64_t n : probe) {
      Rng rng(seed + 1000 * i + uint64_t(n));
      std::set<std::vector<int64_t>> distinct;
      for (int64_t r = 0; r < samples; ++r) distinct.insert(generate(g, encode_prompt(n), m.cfg.ctx, settings[i], rng));
      table += fmt::format(" {:>5}", distinct.size());
      if (settings[i].greedy()) greedy_distinct = std::max(greedy_distinct, distinct.size());
    }
    table += "\n";
  }
  table.pop_back();
  ch.show("held-out exact match and diversity per setting", table,
          greedy_distinct == 1
              ? trf("distinct outputs over {s} samples per number; greedy draws nothing, so it always gives 1",
                    fmt::arg("s", samples))
              : trf("distinct outputs over {s} samples per number", fmt::arg("s", samples)),
          Shown::Info);
  if (greedy_distinct != 1)  // the note's reason, checked: greedy takes the argmax and draws nothing
    ch.say("  " + ch.verdict(false, trf("greedy gave {d} distinct outputs of one prompt over {s} samples: it drew "
                                        "something, where temperature 0 takes the argmax (look at {site})",
                                        fmt::arg("d", greedy_distinct), fmt::arg("s", samples),
                                        fmt::arg("site", sample_next_site()))));
}

}  // namespace ts
