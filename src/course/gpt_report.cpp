// course/gpt_report.cpp: see gpt_report.hpp.
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
using Clock = std::chrono::steady_clock;


// ---------------------------------------------------------------- checkpoints
GptConfig checkpoint_config_or_usage(const Chapter& ch, const std::string& dir, const GptConfig& knobs) {
  GptConfig c = checkpoint_io("--load", [&] { return gpt_checkpoint_config(dir); });
  // the sizes come from the checkpoint: a size knob that says otherwise is a mistake
  const std::vector<std::tuple<const char*, int64_t, int64_t>> sizes = {
      {"--layers", knobs.layers, c.layers}, {"--d-model", knobs.d_model, c.d_model},
      {"--heads", knobs.heads, c.heads}, {"--d-ff", knobs.d_ff, c.d_ff}, {"--untied", !knobs.tied, !c.tied}};
  for (const auto& [flag, asked, saved] : sizes)
    if (ch.given(flag) && asked != saved)
      throw UsageError(trf("--load: {dir} was saved with {what}: drop {flag} (the sizes come from the checkpoint)",
                           fmt::arg("dir", dir), fmt::arg("flag", flag),
                           fmt::arg("what", std::string(flag) == "--untied" ? std::string(_("a tied LM head"))
                                                                            : fmt::format("{} {}", flag, saved))));
  c.dropout = knobs.dropout, c.causal = knobs.causal;
  return c;
}

void load_or_usage(Chapter& ch, const std::string& dir, Gpt& m, Adam& adam) {
  checkpoint_io("--load", [&] { load_gpt(dir, m, adam); });
  ch.say(trf("  loaded {dir} (after {n} steps of training)", fmt::arg("dir", dir), fmt::arg("n", adam.step)));
}

void save_or_usage(const std::string& dir, Gpt& m, const Adam& adam) {
  checkpoint_io("--save", [&] { save_gpt(dir, m, adam); });
}

// ---------------------------------------------------------------- --check-grads
void show_grad_check(Chapter& ch, const GptConfig& cfg) {
  ch.section(_("Gradient check: every parameter, hand-written backward vs finite differences"),
             _("llm.c test_gpt2.c style; the modules' GPT in float32, dropout off"));
  GptConfig tiny = cfg;
  tiny.layers = 2, tiny.d_model = 8, tiny.heads = 2, tiny.d_ff = 16, tiny.dropout = 0.0;
  const std::vector<int64_t> nums = {7, 42, 905, 2048};
  const auto rows = gpt_check_grads(tiny, ch.seed, nums);
  ch.say(trf("  tiny model: {N} blocks, d_model {C}, {H} heads, d_ff {F}, {head}; batch = {{7, 42, 905, 2048}}; "
             "central differences, h = {h:g}",
             fmt::arg("N", tiny.layers), fmt::arg("C", tiny.d_model), fmt::arg("H", tiny.heads),
             fmt::arg("F", tiny.d_ff), fmt::arg("head", tiny.tied ? _("tied head") : _("untied head")),
             fmt::arg("h", kFdStepFloat)));
  std::string table;
  std::string first_bad;  // the failing tensor the backward reaches first: the rows run backward from the end
  for (const auto& r : rows)
    table += fmt::format("{:<6} {:<36} maxdiff {:.2e} (max |grad| {:.2e})  first ours/fd: {:+.6e}/{:+.6e}\n",
                         r.ok ? "OK" : "NOT OK", r.name, r.maxdiff, r.maxgrad, r.ours[0], r.fd[0]);
  for (auto r = rows.rbegin(); r != rows.rend(); ++r)
    if (!r->ok) {
      first_bad = r->name;
      break;
    }
  table.pop_back();
  ch.show("check every gradient", table, _("a backward function edited wrongly shows up here as NOT OK"), Shown::Twin);
  ch.say("  " + grad_check_verdict(ch, rows, first_bad, kGptFdTolerance, kGptFdFloor, gpt_backward_site()));
}

// ---------------------------------------------------------------- the model and the task
// The activation the model's feed-forward computes, named by probing block 0's own mlp
// (course/model_probes.hpp)
static std::string activation_name(const GPT& g) {
  return g.h.empty() ? "-" : activation_words(feed_forward_activation(g.h[0].feed_forward));
}

// What the mask the forward builds hides, read from the mask itself (T = the context).
static std::string mask_words(const GptConfig& c) {
  const BTensor m = gpt_causal_mask(c.ctx, 0, c.causal);  // (1,T,T) true = keep
  int64_t hidden = 0, causal = 0;
  for (int64_t t = 0; t < c.ctx; ++t)
    for (int64_t s = 0; s < c.ctx; ++s) {
      const bool hide = !m(0, size_t(t), size_t(s));
      hidden += hide, causal += hide == (s > t);
    }
  if (causal == c.ctx * c.ctx) return _("causal mask: query t sees keys 0..t");
  if (hidden == 0) return _("NO mask: every query sees every key, later ones too");
  return trf("a mask hiding {n} of {all} query-key pairs, not the causal one", fmt::arg("n", hidden),
             fmt::arg("all", c.ctx * c.ctx));
}

// ids (one row) -> the modules' logits (T*V)
static std::vector<float> logits_of(GPT& g, const std::vector<int64_t>& input) {
  ITensor idx = ITensor::from_shape({1, input.size()});
  std::copy(input.begin(), input.end(), idx.begin());
  const Tensor l = g.forward(idx);
  return std::vector<float>(l.begin(), l.end());
}

// Whether the LM head reads wte, measured: wte's row of <end> (a token the input "7 =" does not
// hold, so it enters the forward only through a head that reads wte) is moved, and the largest
// move of any logit is returned: 0 means the head reads storage of its own.
static double head_moves_with_wte(const Gpt& m, const std::vector<int64_t>& input, int64_t token) {
  GPT g = m.module();
  const std::vector<float> before = logits_of(g, input);
  const int64_t C = m.cfg.d_model;
  for (int64_t c = 0; c < C; ++c) g.wte.weight(size_t(token), size_t(c)) += 0.5f * float((c * 7 % 11) - 5) / 5.0f;
  const std::vector<float> after = logits_of(g, input);
  double moved = 0;
  for (size_t i = 0; i < before.size(); ++i) moved = std::max(moved, double(std::abs(after[i] - before[i])));
  return moved;
}

std::vector<std::string> unread_by_forward(const Gpt& m, const std::vector<std::string>& names) {
  const std::vector<int64_t> input = encode_prompt(7);
  GPT g = m.module();
  const std::vector<float> before = logits_of(g, input);
  const NamedTensors params = g.named_parameters();
  std::vector<std::string> unread;
  for (const std::string& name : names)
    for (const CheckpointKey& k : m.keys) {
      if (k.key != name) continue;
      // every value of the tensor moved by a different amount (a uniform shift could cancel in a softmax)
      std::vector<Tensor> kept;
      size_t i = 0;
      for (size_t p : k.params) {
        kept.push_back(*params[p].second);
        for (float& v : *params[p].second) v += 0.5f * float(int64_t(i * 7 % 11) - 5) / 5.0f + 0.25f, ++i;
      }
      if (logits_of(g, input) == before) unread.push_back(name);
      for (size_t j = 0; j < k.params.size(); ++j) *params[k.params[j]].second = kept[j];  // back as it was
      break;
    }
  return unread;
}

void show_model(Chapter& ch, const Gpt& m) {
  const GptConfig& c = m.cfg;
  const SeqVocab& v = seq_vocab();
  const std::vector<int64_t> input = encode_prompt(7);
  const double moved = head_moves_with_wte(m, input, v.end);
  const bool tied = moved > 0;  // what the forward does, whatever cfg.tied says
  PartCounts counts;
  bool own_head = false;  // a parameter of its own named lm_head among the model's
  size_t total = 0;
  GPT g = m.module();
  const NamedTensors params = g.named_parameters();
  for (const CheckpointKey& k : m.keys) {
    // "transformer.h.3.ln_1.weight" -> "h.3", "transformer.wte.weight" -> "wte"
    std::string part = k.key.rfind("transformer.", 0) == 0 ? k.key.substr(12) : k.key;
    own_head = own_head || part.rfind("lm_head", 0) == 0;
    size_t n = 0;
    for (size_t i : k.params) n += params[i].second->size();
    counts.add(part.substr(0, part.find('.', part.rfind("h.", 0) == 0 ? 2 : 0)), n);
    total += n;
  }
  std::vector<std::pair<std::string, std::string>> shared;
  if (tied && !own_head) shared.emplace_back("lm_head", "= wte");
  const std::string table = counts.table(8, 9, shared);
  ch.show("{part: parameters}", table,
          trfn("V={V}, T_ctx={T}, N={N} blocks, C={C}, H={H} head of {D}, F={F}, {act}, {ln}, {mask}",
               "V={V}, T_ctx={T}, N={N} blocks, C={C}, H={H} heads of {D}, F={F}, {act}, {ln}, {mask}", c.heads,
              fmt::arg("V", c.vocab), fmt::arg("T", c.ctx), fmt::arg("N", c.layers), fmt::arg("C", c.d_model),
              fmt::arg("H", c.heads), fmt::arg("D", c.d_model / c.heads), fmt::arg("F", c.d_ff),
              fmt::arg("act", activation_name(g)), fmt::arg("ln", wiring_words(gpt_block_wiring())),
              fmt::arg("mask", mask_words(c))),
          Shown::Info);
  const size_t head = size_t(c.vocab * c.d_model), untied = total + (tied ? head : 0);
  const double pct = 100.0 * double(head) / double(untied);
  const std::string probe = trf("moving wte's row of '{tok}', a token the input '{in}' does not hold",
                                fmt::arg("tok", v.words[size_t(v.end)]), fmt::arg("in", seq_vocab().spelled(input)));
  std::string said =
      tied ? trf("  The LM head is tied: its (V, C) = ({V}, {C}) weight IS the token embedding wte, as in GPT-2 "
                 "({probe}, moves the logits by up to {d:.2g}). That saves {n} parameters, {pct:.1f} % of the {u} an "
                 "untied head would make.",
                 fmt::arg("V", c.vocab), fmt::arg("C", c.d_model), fmt::arg("probe", probe), fmt::arg("d", moved),
                 fmt::arg("n", thousands(head)), fmt::arg("pct", pct), fmt::arg("u", thousands(untied)))
           : trf("  The LM head is untied: {probe}, leaves every logit where it was, so the head reads a (V, C) = ({V}, "
                 "{C}) weight of its own, {n} parameters, {pct:.1f} % of this model; tying it to wte would save them.",
                 fmt::arg("probe", probe), fmt::arg("V", c.vocab), fmt::arg("C", c.d_model),
                 fmt::arg("n", thousands(head)), fmt::arg("pct", pct));
  if (tied != c.tied)  // the setting meant one thing, the storage does the other: say where
    said += trf(" The config says {cfg} (GptConfig::tied); the storage the head reads is set in {site}.",
                fmt::arg("cfg", c.tied ? _("tied") : _("untied")), fmt::arg("site", gpt_head_weight_site()));
  else if (tied && own_head)
    said += trf(" The model still holds an lm_head weight the logits never read ({site}).",
                fmt::arg("site", gpt_parameters_site()));
  ch.say(said);
}

void show_loss_mask(Chapter& ch, const Gpt& m, const SeqBatch& b) {
  const SeqVocab& v = seq_vocab();
  // which positions the loss counts, measured: the training loss's per-position value on the
  // model's logits, 0 where skipped
  GPT g = m.module();
  ITensor idx = ITensor::from_shape({size_t(b.B), size_t(b.T)});
  std::copy(b.x.begin(), b.x.end(), idx.begin());
  const std::vector<double> loss = token_losses(g.forward(idx), b.y);
  std::string table;
  int64_t real = 0, answer = 0, counted = 0, counted_answer = 0, counted_prompt = 0, counted_pad = 0, target_prompt = 0;
  for (int64_t i = 0; i < b.B; ++i) {
    std::string in = "x  ", out = "y  ";
    const std::vector<int64_t> seq = encode_sequence(b.numbers[size_t(i)]);
    for (int64_t t = 0; t < b.T; ++t) {
      const size_t at = size_t(i * b.T + t);
      const int64_t xi = b.x[at], yi = b.y[at];
      const bool counts = loss[at] != 0.0;
      if (xi == kPad) {
        counted_pad += counts;
        continue;
      }
      // what position t is asked to predict: the sequence's next token, a prompt token (digits, '=') or the answer's
      const bool asks_answer = t + 1 < int64_t(seq.size()) && seq[size_t(t + 1)] > v.eq;
      const std::string a = v.words[size_t(xi)], c = counts ? v.words[size_t(yi)] : ".";
      const size_t wd = std::max(a.size(), c.size()) + 1;
      in += fmt::format("{:<{}}", a, wd), out += fmt::format("{:<{}}", c, wd);
      ++real, answer += asks_answer, counted += counts;
      counted_answer += counts && asks_answer, counted_prompt += counts && !asks_answer;
      target_prompt += !asks_answer && yi != kPad;
    }
    while (!in.empty() && in.back() == ' ') in.pop_back();
    while (!out.empty() && out.back() == ' ') out.pop_back();
    table += fmt::format("{}:\n{}\n{}\n", b.numbers[size_t(i)], in, out);
  }
  table.pop_back();
  ch.show("x = seq[:-1], y = seq[1:]", table,
          trf("'.' = a position whose loss token_losses gives 0: the loss skips it. Of the {real} real positions, {a} "
              "predict an answer token (a word or <end>), {p} a token of the prompt (a digit or '=')",
              fmt::arg("real", real), fmt::arg("a", answer), fmt::arg("p", real - answer)),
          Shown::Info);
  const bool ok = counted_answer == answer && counted_prompt == 0 && counted_pad == 0;
  // under NOT OK, which side: targets that are not <pad> at the prompt's positions are make_seq_batch's
  const std::string where = target_prompt > 0 ? make_seq_batch_site() : token_losses_site();
  ch.say("  " + ch.verdict(ok, ok ? trf("the loss counts exactly the {a} positions that predict the answer; the {p} "
                                        "that predict the prompt are skipped: the model is given the prompt, not "
                                        "asked for it",
                                        fmt::arg("a", answer), fmt::arg("p", real - answer))
                                  : trf("the loss counts {k} positions: {ca} of the {a} that predict the answer, {cp} "
                                        "of the {p} that predict the prompt and {cpad} padded ones, not the answer "
                                        "alone (look at {where})",
                                        fmt::arg("k", counted + counted_pad), fmt::arg("ca", counted_answer),
                                        fmt::arg("a", answer), fmt::arg("cp", counted_prompt),
                                        fmt::arg("p", real - answer), fmt::arg("cpad", counted_pad),
                                        fmt::arg("where", where))));
}

// ---------------------------------------------------------------- training
// The 1-minute load average as /proc/loadavg's first field prints it; getloadavg() (glibc, macOS,
// the BSDs) rather than reading /proc, which macOS does not have.
static std::string load_average() {
  double one = 0;
  return ::getloadavg(&one, 1) == 1 ? fmt::format("{:.2f}", one) : std::string("?");
}

void TrainLog::step(int64_t epoch, int64_t batch, double loss, int64_t correct_now, int64_t tokens_now, int64_t s,
                    double seconds) {
  const bool tty = ch.live_progress();
  if (epoch != last_epoch) loss_sum = 0, n = 0, correct = 0, tokens = 0, last_epoch = epoch;
  loss_sum += loss, ++n, correct += correct_now, tokens += tokens_now;
  if (batch % every == 0) {
    if (tty) std::cout << "\r\033[K";
    // the article's own progress line (what it prints, so never translated)
    ch.show(fmt::format("epoch {} batch {}", epoch, batch),
            fmt::format("epoch {}, batch {}, loss:{:.4f}, acc:{:.4f}", epoch, batch, loss_sum / double(n),
                        double(correct) / double(std::max<int64_t>(tokens, 1))),
            "", Shown::Article);
  }
  if (tty && (s % 5 == 0 || s + 1 == steps))
    std::cout << "\r\033[K" << progress_bar(s + 1, steps, loss, double(s + 1) / seconds) << std::flush;
}

void TrainLog::finish(const std::vector<double>& curve, double seconds, int64_t step_95, double seconds_95) {
  if (ch.live_progress()) std::cout << "\r\033[K";
  if (curve.empty()) return;
  ch.say(trf("  {n} steps in {s:.1f} s: {r:.1f} steps/s (load average {load} on this machine as training ended)",
             fmt::arg("n", curve.size()), fmt::arg("s", seconds), fmt::arg("r", double(curve.size()) / seconds),
             fmt::arg("load", load_average())));
  ch.say(step_95 > 0 ? trf("  Held-out exact match (greedy, checked every {every} steps) first reached {pct} % at "
                           "step {k}, {s:.1f} s into training.",
                           fmt::arg("every", kCheckEvery), fmt::arg("pct", 100 * kTarget), fmt::arg("k", step_95),
                           fmt::arg("s", seconds_95))
                     : trf("  Held-out exact match (greedy, checked every {every} steps) did not reach {pct} % in {n} "
                           "steps.",
                           fmt::arg("every", kCheckEvery), fmt::arg("pct", 100 * kTarget), fmt::arg("n", curve.size())));
  ch.figure(_("loss per step (log scale):") + std::string("\n") + loss_curve(curve));
}

// ---------------------------------------------------------------- the KV cache
void show_cache_check(Chapter& ch, const Gpt& m) {
  const auto& held = number_split().held_out;
  const int64_t V = m.cfg.vocab;
  double maxdiff = 0, scale = 0;  // max |cached - recomputed|, max |recomputed| over the logits compared
  int64_t compared = 0, differ = 0, numbers = 0;
  GPT g = m.module();  // one forward, with the caches and without
  for (size_t i = 0; i < held.size(); i += 25, ++numbers) {
    std::vector<int64_t> ids = encode_prompt(held[i]);
    GptCache cache = g.make_caches();
    std::vector<float> logits = next_logits(g, cache, ids);  // the prompt, cached
    while (static_cast<int64_t>(ids.size()) < m.cfg.ctx) {
      const std::vector<float> full = last_logits(g, ids);  // every position again
      for (int64_t j = 0; j < V; ++j) maxdiff = std::max(maxdiff, double(std::abs(full[size_t(j)] - logits[size_t(j)])));
      scale = std::max(scale, max_abs(full.data(), full.size()));
      ++compared;
      const int64_t a = std::max_element(logits.begin(), logits.end()) - logits.begin();
      const int64_t b = std::max_element(full.begin(), full.end()) - full.begin();
      differ += a != b;
      if (b == seq_vocab().end) break;
      ids.push_back(b);
      logits = next_logits(g, cache, {b});
    }
  }
  // float rounding grows with the logits: kRoundingGrowth float epsilons x max(1, max |logit|)
  const double tolerance = scaled_tolerance(scale);
  const bool ok = maxdiff <= tolerance && differ == 0;
  ch.show("max |logits(cached) - logits(recomputed)|", fmt::format("{:.3e}", maxdiff),
          trf("{k} generation steps of {n} held-out numbers, greedy", fmt::arg("k", compared), fmt::arg("n", numbers)),
          Shown::Info);
  // under NOT OK, what the run measured: the mask the forward builds (a mask no cache reproduces), else
  // the code only the cached forward runs
  const std::string mask = ok ? "" : mask_breaks_cache(gpt_mask(m.cfg, m.cfg.ctx), m.cfg.ctx, gpt_causal_mask_site());
  const std::string differ_words =
      trf("cached and recomputed logits differ by up to {d:.3e} (more than {tol:.2g} = {g:g} float epsilons x max(1, "
          "max |logit| {s:.3g})) and {bad} of {k} greedy tokens differ",
          fmt::arg("d", maxdiff), fmt::arg("tol", tolerance), fmt::arg("g", kRoundingGrowth), fmt::arg("s", scale),
          fmt::arg("bad", differ), fmt::arg("k", compared));
  ch.say("  " + ch.verdict(ok, ok ? trf("the cached step gives the logits of recomputing the whole prefix (max |diff| "
                                        "{d:.2e} <= {tol:.2g} = {g:g} float epsilons x max(1, max |logit| {s:.3g})) "
                                        "and the same {k} greedy tokens",
                                        fmt::arg("d", maxdiff), fmt::arg("tol", tolerance),
                                        fmt::arg("g", kRoundingGrowth), fmt::arg("s", scale), fmt::arg("k", compared))
                                  : !mask.empty()
                                        ? differ_words + ": " + mask
                                        : differ_words + trf(", with the causal mask a cache reproduces: the "
                                                             "forward with a cache no longer computes what the same "
                                                             "forward computes without one; look at what only the "
                                                             "cached call runs: {append} and the positions "
                                                             "past..past+T in {forward}",
                                                             fmt::arg("append", kv_cache_append_site()),
                                                             fmt::arg("forward", gpt_forward_site()))));
}

void show_cache_speed(Chapter& ch, const Gpt& m) {
  const int64_t V = m.cfg.vocab, T = m.cfg.ctx;
  // feed T tokens one by one: the cost of the token at position t, with and without the cache
  std::vector<int64_t> ids;
  for (int64_t t = 0; t < T; ++t) ids.push_back(1 + t % 10);
  // the fastest of `reps` passes per length: the machine is shared, a slow pass is someone else's
  std::vector<double> cached(static_cast<size_t>(T), 1e9), full(static_cast<size_t>(T), 1e9);
  std::vector<float> logits(static_cast<size_t>(V));
  const int reps = 30;
  GPT g = m.module();
  for (int r = 0; r < reps; ++r) {
    GptCache cache = g.make_caches();
    for (int64_t t = 0; t < T; ++t) {
      auto t0 = Clock::now();
      logits = next_logits(g, cache, {ids[size_t(t)]});
      cached[size_t(t)] = std::min(cached[size_t(t)], std::chrono::duration<double>(Clock::now() - t0).count());
      t0 = Clock::now();
      const auto l = last_logits(g, std::vector<int64_t>(ids.begin(), ids.begin() + t + 1));
      full[size_t(t)] = std::min(full[size_t(t)], std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  std::string table = fmt::format("{:>8} {:>14} {:>14} {:>7}\n", "length", "cached tok/s", "recompute tok/s", "gap");
  double sum_c = 0, sum_f = 0;
  for (int64_t t = 0; t < T; ++t) {
    sum_c += cached[size_t(t)], sum_f += full[size_t(t)];
    if ((t + 1) % std::max<int64_t>(T / 4, 1) == 0 || t == 0)
      table += fmt::format("{:>8} {:>14.0f} {:>14.0f} {:>6.1f}x\n", t + 1, 1.0 / cached[size_t(t)],
                           1.0 / full[size_t(t)], full[size_t(t)] / cached[size_t(t)]);
  }
  table += fmt::format("{:>8} {:>14.0f} {:>14.0f} {:>6.1f}x", fmt::format("1..{}", T), double(T) / sum_c,
                       double(T) / sum_f, sum_f / sum_c);
  ch.show("tokens/s of the next token at each length, this run's model, one thread", table,
          trf("the fastest of {r} passes per length; the last row: all {T} tokens of a full context, one after the other",
              fmt::arg("r", reps), fmt::arg("T", T)),
          Shown::Info);
  const double first = full[0] / cached[0], last = full[size_t(T - 1)] / cached[size_t(T - 1)];
  if (!(last > first)) {  // the explanation below only where this run's timings show the growth it explains
    ch.say(trf("  Measured here: {a:.1f}x at length 1, {b:.1f}x at length {T}: the gap did not grow on this run (the "
               "timings of a shared machine), so there is no growth to explain.",
               fmt::arg("a", first), fmt::arg("b", last), fmt::arg("T", T)));
    return;
  }
  ch.say(trf("  Why the gap grows with length: without the cache, the token at position t runs all t positions "
             "through every block again (t rows in every product, t x t attention scores), so a sequence of n tokens "
             "costs about n^2 / 2 position-passes; with the cache it runs one position and reads the t keys and "
             "values stored so far. Measured here: {a:.1f}x at length 1, {b:.1f}x at length {T}.",
             fmt::arg("a", first), fmt::arg("b", last), fmt::arg("T", T)));
}

// ---------------------------------------------------------------- side by side with ch11
void show_vs_ch11(Chapter& ch, const Gpt& m, const RunSummary& ours, int64_t max_steps) {
  const Ch11Settings s11 = ch11_defaults();  // ch11's defaults, the struct ch11 binds its flags to (course/settings.cpp)
  // ch11's model and Trainer built as ch11 and ch14 build them (course/train_knobs.hpp), not a copy here
  Trainer tr = encdec_trainer(encdec_config(s11), s11, ch.seed);
  const int64_t batch = s11.batch;
  // what the run uses, read back from the Trainer built above
  Ch11Settings used = s11;
  const ModelConfig& cfg = tr.model().cfg;
  used.lr = tr.adam().lr, used.dropout = cfg.dropout, used.layers = cfg.layers, used.d_model = cfg.d_model;
  used.heads = cfg.heads, used.d_ff = cfg.d_ff, used.label_smoothing = cfg.label_smoothing, used.threads = tr.threads();
  // the runner ch14 trains its three kinds with (train/until_target.hpp)
  const TargetRun run = train_encdec_until(tr, batch, ch.seed, TargetPlan{kCheckEvery, max_steps, kTarget});
  const RunSummary c11{tr.model().layout.total, run.steps, run.step_hit, run.seconds_hit, run.held_out};
  // positions each model runs to answer one number (mean over the held-out numbers)
  const double pos11 = encdec_positions(), pos12 = gpt_positions();
  const std::vector<CompareRow> rows = {
      {"parameters", {thousands(c11.params), thousands(ours.params)}},
      {fmt::format("steps / seconds to {} % held-out", 100 * kTarget),
       {at_target(c11.step_95, c11.seconds_95, c11.steps), at_target(ours.step_95, ours.seconds_95, ours.steps)}},
      {"held-out exact match at the end",
       {fmt::format("{:.1f}%", 100 * c11.held_out), fmt::format("{:.1f}%", 100 * ours.held_out)}},
      {"steps trained", {fmt::format("{}", c11.steps), fmt::format("{}", ours.steps)}},
      {"positions run per answer (mean)", {fmt::format("{:.2f}", pos11), fmt::format("{:.2f}", pos12)}}};
  ch.show("ch11 vs ch12 on the same task, seed and held-out numbers",
          compare_table({"ch11 encoder-decoder", "ch12 decoder-only"}, rows, 34, 22),
          describe(used) == describe(s11)
              ? trf("ch11 trained here with its defaults from src/course/settings.cpp ({s}), stopped at {pct} %; both "
                    "checked every {every} steps, the seconds include those checks",
                    fmt::arg("s", describe(used)), fmt::arg("pct", 100 * kTarget), fmt::arg("every", kCheckEvery))
              : trf("ch11 trained here with {s}, NOT its defaults from src/course/settings.cpp ({d}), stopped at {pct} "
                    "%; both checked every {every} steps, the seconds include those checks",
                    fmt::arg("s", describe(used)), fmt::arg("d", describe(s11)), fmt::arg("pct", 100 * kTarget),
                    fmt::arg("every", kCheckEvery)),
          Shown::Info);
  const bool faster = ours.step_95 > 0 && (c11.step_95 < 0 || ours.step_95 < c11.step_95);
  const bool smaller = ours.params < c11.params;
  ch.say(trf("  On this task the decoder-only model has {size} parameters ({a} vs {b}) and reached {pct} % in {speed} "
             "steps. It reads the digits and writes the words in one stream, with one attention kind and one mask; "
             "the encoder-decoder keeps the digits in a separate memory that every decoder layer reads through "
             "cross-attention.",
             fmt::arg("size", smaller ? _("fewer") : _("more")), fmt::arg("a", thousands(ours.params)),
             fmt::arg("b", thousands(c11.params)), fmt::arg("speed", faster ? _("fewer") : _("no fewer")),
             fmt::arg("pct", 100 * kTarget)));
  (void)m;
}

}  // namespace ts
