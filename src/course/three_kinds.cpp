// course/three_kinds.cpp: see three_kinds.hpp.
#include "course/three_kinds.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/train_views.hpp"
#include "transformer/gpt.hpp"
#include "train/trainer.hpp"
#include "train/numbers.hpp"
#include "course/counts.hpp"  // thousands()

namespace ts {

using namespace train;

// ---------------------------------------------------------------- positions per answer
double encdec_positions() {
  const auto& held = number_split().held_out;
  double sum = 0;
  for (int64_t n : held) sum += double(encode_source(n).size() + encode_target(n).size() - 1);
  return sum / double(held.size());
}

double gpt_positions() {
  const auto& held = number_split().held_out;
  double sum = 0;
  for (int64_t n : held) sum += double(encode_sequence(n).size() - 1);
  return sum / double(held.size());
}

double classifier_positions() {
  const ClsBatch b = make_cls_batch(number_split().held_out);
  double sum = 0;
  for (int64_t id : b.ids) sum += id != kPad;
  return sum / double(b.B);
}

// ---------------------------------------------------------------- tables
std::string compare_table(const std::vector<std::string>& heads, const std::vector<CompareRow>& rows,
                          size_t label_width, size_t cell_width) {
  std::vector<size_t> w(heads.size(), cell_width);  // a column grows to its widest cell
  for (size_t j = 0; j < heads.size(); ++j) w[j] = std::max(w[j], display_width(heads[j]));
  for (const auto& [label, cells] : rows) {
    label_width = std::max(label_width, display_width(label));
    for (size_t j = 0; j < cells.size() && j < w.size(); ++j) w[j] = std::max(w[j], display_width(cells[j]));
  }
  auto line = [&](const std::string& label, const std::vector<std::string>& cells) {
    std::string s = label + std::string(label_width - display_width(label), ' ');
    for (size_t j = 0; j < cells.size() && j < w.size(); ++j)
      s += " " + std::string(w[j] - display_width(cells[j]), ' ') + cells[j];
    return s;
  };
  std::string out = line("", heads);
  for (const auto& [label, cells] : rows) out += "\n" + line(label, cells);
  return out;
}

std::string at_target(int64_t step_hit, double seconds_hit, int64_t steps) {
  return step_hit > 0 ? fmt::format("{} / {:.1f} s", step_hit, seconds_hit) : trf("not in {n}", fmt::arg("n", steps));
}

// ---------------------------------------------------------------- one kind
Kind make_kind(const char* id, int64_t vocab, int64_t positions, const std::string& writes, size_t params,
               double run_positions, const std::string& score) {
  Kind k;
  k.id = id, k.name = tr(id), k.writes = writes, k.params = params, k.positions = run_positions, k.score = score;
  k.reads = trf("V={V}, {P} positions", fmt::arg("V", vocab), fmt::arg("P", positions));
  return k;
}

// ---------------------------------------------------------------- masks
std::string mask_kind(const std::vector<float>& mask, int64_t T, int64_t S, const std::vector<bool>& key_pad) {
  int64_t hidden = 0;
  bool causal = true, padding = true, both = true;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) {
      const bool hide = mask[size_t(t * S + s)] != 0.0f, pad = key_pad[size_t(s)];
      hidden += hide;
      causal &= hide == (s > t), padding &= hide == pad, both &= hide == (pad || s > t);
    }
  if (hidden == 0) return _("none");
  if (causal) return _("causal");
  if (padding) return _("padding");
  if (both) return _("causal + padding");
  return trf("{n} of {all} pairs", fmt::arg("n", hidden), fmt::arg("all", T * S));
}

// row 0's (T,S) block of a (B,T,S) mask
static std::vector<float> row0(const std::vector<float>& m, int64_t T, int64_t S) {
  return std::vector<float>(m.begin(), m.begin() + T * S);
}

static std::vector<bool> pads(const std::vector<int64_t>& ids, int64_t n) {
  std::vector<bool> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[size_t(i)] = ids[size_t(i)] == kPad;
  return p;
}

// what a forward kept of row 0 (kept_in_forward's (T,S)), as 1 = hide for mask_kind
static std::vector<float> hidden_row0(const std::vector<bool>& keep, int64_t T, int64_t S) {
  std::vector<float> m(size_t(T * S));
  for (size_t i = 0; i < m.size(); ++i) m[i] = keep[i] ? 0.0f : 1.0f;
  return m;
}

// A mask as its forward built it (row 0's (T,S) values), drawn with the polarity read from what
// that forward kept (pol): the legend says which value is hidden, as measured (train_views.hpp).
static void draw(Chapter& ch, const std::string& title, const std::vector<float>& values, const Polarity& pol,
                 int64_t T, int64_t S, const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  HeatmapOptions opt;
  opt.mode = heatmap_mode(ch.color);
  opt.vmin = 0, opt.vmax = 1;
  opt.cell_width = 4;
  opt.title = trf("{what}: rows = queries, columns = keys", fmt::arg("what", title));
  mask_legend(opt, pol);
  Tensor t = Tensor::from_shape({size_t(T), size_t(S)});
  std::copy(values.begin(), values.begin() + T * S, t.begin());
  ch.figure(heatmap(t, rows, cols, opt));
}

// The one self-attention mask of a decoder-only or encoder-only model: `values`, the mask (B,T,T)
// its forward built, and `keep`, what that forward kept of it (the same layout), over `tokens`
// (ids: row 0 of the batch, for its padding): row 0 named, said and drawn.
static std::string self_mask(Chapter& ch, const std::string& name, const std::string& over, const char* forward,
                             const std::vector<float>& values, const std::vector<bool>& keep,
                             const std::vector<int64_t>& ids, const std::vector<std::string>& tokens) {
  const int64_t T = int64_t(tokens.size());
  const std::vector<float> row_values = row0(values, T, T);
  const std::vector<bool> row_keep(keep.begin(), keep.begin() + T * T);
  const std::string kind = mask_kind(hidden_row0(row_keep, T, T), T, T, pads(ids, T));
  ch.say(trf("  {name}: one self-attention over {over}, mask: {kind} ({forward}'s).", fmt::arg("name", name),
             fmt::arg("over", over), fmt::arg("kind", kind), fmt::arg("forward", forward)));
  draw(ch, trf("{name}, self-attention ({kind})", fmt::arg("name", name), fmt::arg("kind", kind)), row_values,
       read_polarity({{row_values, row_keep, size_t(T)}}), T, T, tokens, tokens);
  return kind;
}

// What an attention kept of row 0, head 0, in its last forward: attn (B,H,T,S), the weights it
// stored (eval mode: no dropout); a weight of exactly 0 is a key hidden from that query.
static std::vector<bool> kept_in_forward(const Tensor& attn, int64_t T, int64_t S, const char* where) {
  if (attn.dimension() != 4 || attn.shape()[0] < 1 || attn.shape()[1] < 1 || int64_t(attn.shape()[2]) != T ||
      int64_t(attn.shape()[3]) != S)
    throw std::logic_error(std::string(where) + ": its attention weights are not (B, H, " + std::to_string(T) +
                           ", " + std::to_string(S) + ")");
  std::vector<bool> keep(size_t(T * S));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s2 = 0; s2 < S; ++s2) keep[size_t(t * S + s2)] = attn(0, 0, size_t(t), size_t(s2)) != 0.0f;
  return keep;
}

void show_masks(Chapter& ch, Trainer& ed, const Gpt& gpt, Classifier& cls, int64_t short_n,
                int64_t long_n, Kind& k_ed, Kind& k_gpt, Kind& k_cls) {
  // 1) encoder-decoder: create_mask's floats (B,S,S), (B,T,T), (B,T,S), and what Trainer::forward
  //    kept of them: one eval-mode forward (no draw) of this batch, then the first layers' weights
  //    (row 0 sits in part 0, whose module module() is)
  const Batch b = make_batch({short_n, long_n});
  const auto m = create_mask<float>(b.inputs, b.tar_inp, b.B, b.S, b.T, ed.model().cfg.look_ahead);
  ed.forward(b, /*training=*/false);
  const EncoderDecoder& mod = ed.module();
  const std::vector<bool> enc_keep =
      kept_in_forward(mod.encoder.layers.at(0).self_attn.attn, b.S, b.S, "Trainer::forward, encoder layer 1");
  const std::vector<bool> self_keep =
      kept_in_forward(mod.decoder.layers.at(0).self_attn.attn, b.T, b.T, "Trainer::forward, decoder layer 1");
  const std::vector<bool> cross_keep =
      kept_in_forward(mod.decoder.layers.at(0).src_attn.attn, b.T, b.S, "Trainer::forward, decoder layer 1");
  // which value hides, read over the three masks' row 0 (as ch11 reads it)
  const Polarity pol = read_polarity({{row0(m.enc, b.S, b.S), enc_keep, size_t(b.S)},
                                      {row0(m.dec_self, b.T, b.T), self_keep, size_t(b.T)},
                                      {row0(m.dec_cross, b.T, b.S), cross_keep, size_t(b.S)}});
  std::vector<std::string> src, tgt;
  for (int64_t s = 0; s < b.S; ++s) src.push_back(source_vocab().words[size_t(b.inputs[size_t(s)])]);
  for (int64_t t = 0; t < b.T; ++t) tgt.push_back(target_vocab().words[size_t(b.tar_inp[size_t(t)])]);
  const std::vector<int64_t> in0(b.inputs.begin(), b.inputs.begin() + b.S),
      ti0(b.tar_inp.begin(), b.tar_inp.begin() + b.T);
  const std::string enc = mask_kind(hidden_row0(enc_keep, b.S, b.S), b.S, b.S, pads(in0, b.S));
  const std::string self = mask_kind(hidden_row0(self_keep, b.T, b.T), b.T, b.T, pads(ti0, b.T));
  const std::string cross = mask_kind(hidden_row0(cross_keep, b.T, b.S), b.T, b.S, pads(in0, b.S));
  k_ed.enc_self = enc, k_ed.dec_self = self, k_ed.cross = cross;
  ch.say(
      trf("  {n} in a batch with {m} (its rows padded to the longer number). {name}: encoder self-attention "
          "{a}, decoder self-attention {b}, cross-attention {c} (create_mask's, as its forward applied them).",
          fmt::arg("name", k_ed.name), fmt::arg("n", short_n), fmt::arg("m", long_n), fmt::arg("a", enc),
          fmt::arg("b", self), fmt::arg("c", cross)));
  draw(ch, trf("{name}, encoder self-attention ({kind})", fmt::arg("name", k_ed.name), fmt::arg("kind", enc)),
       row0(m.enc, b.S, b.S), pol, b.S, b.S, src, src);
  draw(ch, trf("{name}, decoder self-attention ({kind})", fmt::arg("name", k_ed.name), fmt::arg("kind", self)),
       row0(m.dec_self, b.T, b.T), pol, b.T, b.T, tgt, tgt);
  draw(ch, trf("{name}, cross-attention ({kind})", fmt::arg("name", k_ed.name), fmt::arg("kind", cross)),
       row0(m.dec_cross, b.T, b.S), pol, b.T, b.S, tgt, src);

  // 2) decoder-only: the mask GPT::forward builds (gpt_causal_mask, true = keep, the same for every
  //    row) (1,T,T), and what the first block's attention kept of it in an eval-mode forward of
  //    the module (no draw)
  const SeqBatch sb = make_seq_batch({short_n, long_n});
  const BTensor causal = gpt_causal_mask(sb.T, 0, gpt.cfg.causal);
  const std::vector<float> causal_values(causal.begin(), causal.end());  // true = 1
  GPT g = gpt.module();
  g.train(false);
  ITensor idx = ITensor::from_shape({size_t(sb.B), size_t(sb.T)});
  std::copy(sb.x.begin(), sb.x.end(), idx.begin());
  g.forward(idx);
  const std::vector<bool> gpt_keep = kept_in_forward(g.h.at(0).self_attn.attn, sb.T, sb.T, "GPT::forward, block 1");
  std::vector<std::string> seq;
  for (int64_t t = 0; t < sb.T; ++t) seq.push_back(seq_vocab().words[size_t(sb.x[size_t(t)])]);
  k_gpt.dec_self = self_mask(ch, k_gpt.name, _("prompt and answer"), "GPT::forward", causal_values, gpt_keep, sb.x, seq);

  // 3) encoder-only: EncoderClassifier::padding_mask (B,T,T), the one classifier_forward ran, and
  //    what its first layer kept of it (a key it hides gets weight 0; head 0 of each row)
  const ClsBatch cb = make_cls_batch({short_n, long_n});
  ClsWorkspace cw;
  classifier_forward(cls, cw, cb, /*training=*/false);
  const Tensor& used = cls.model.saved.mask;  // (B,T,T)
  const std::vector<float> cls_values(used.begin(), used.end());
  std::vector<bool> cls_keep(cls_values.size());
  const std::vector<float>& p0 = cw.layers.at(0).p;  // (B,H,T,T)
  const size_t TT = size_t(cb.T * cb.T), H = p0.size() / (size_t(cb.B) * TT);
  for (size_t i = 0; i < cls_keep.size(); ++i) cls_keep[i] = p0[(i / TT) * H * TT + i % TT] != 0.0f;
  std::vector<std::string> words;
  for (int64_t t = 0; t < cb.T; ++t) words.push_back(classifier_token(cb.ids[size_t(t)]));
  k_cls.enc_self = self_mask(ch, k_cls.name, _("[CLS] and the words"), "EncoderClassifier::padding_mask", cls_values,
                             cls_keep, cb.ids, words);
}

// ---------------------------------------------------------------- the table and what fits
static std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

void show_kinds_table(Chapter& ch, const std::vector<Kind>& kinds, const TargetPlan& plan, int64_t classes,
                      bool defaults) {
  const double pct = 100 * plan.target;
  std::vector<std::string> heads;
  std::vector<CompareRow> rows = {{_("reads"), {}},
                                  {_("writes"), {}},
                                  {_("encoder self-attention mask"), {}},
                                  {_("decoder self-attention mask"), {}},
                                  {_("cross-attention mask"), {}},
                                  {_("parameters"), {}},
                                  {_("loss of the first batch"), {}},
                                  {trf("steps / seconds to {pct} %", fmt::arg("pct", pct)), {}},
                                  {_("steps trained"), {}},
                                  {_("seconds trained"), {}},
                                  {_("steps/s"), {}},
                                  {_("held-out score at the end"), {}},
                                  {_("positions run per answer (mean)"), {}}};
  for (const Kind& k : kinds) {
    heads.push_back(k.name);
    const std::vector<std::string> cells = {k.reads,
                                            k.writes,
                                            or_dash(k.enc_self),
                                            or_dash(k.dec_self),
                                            or_dash(k.cross),
                                            thousands(k.params),
                                            fmt::format("{:.4f}", k.run.first_loss),
                                            at_target(k.run.step_hit, k.run.seconds_hit, k.run.steps),
                                            fmt::format("{}", k.run.steps),
                                            fmt::format("{:.1f}", k.run.seconds),
                                            fmt::format("{:.1f}", k.run.steps_per_second()),
                                            fmt::format("{:.1f} % {}", 100 * k.run.held_out, k.score),
                                            fmt::format("{:.2f}", k.positions)};
    for (size_t i = 0; i < rows.size(); ++i) rows[i].second.push_back(cells[i]);
  }
  ch.show(
      "the three kinds on the course's numbers, same seed", compare_table(heads, rows, 0, 0),
      trf("each trained with {which} until its held-out score reached {pct} % (checked {every}, at most {cap}); "
          "the seconds include those checks. Each kind's loss is its chapter's own, so its first batch's loss is "
          "for comparing one run of a kind with another (before and after an edit), not one kind with another",
          fmt::arg("which", defaults ? _("its chapter's defaults") : _("the settings Step 1 lists, not all its chapter's "
                                                                       "defaults")),
          fmt::arg("pct", pct),
          fmt::arg("every", trfn("every {n} step", "every {n} steps", static_cast<unsigned long>(plan.check_every),
                                 fmt::arg("n", plan.check_every))),
          fmt::arg("cap", trfn("{n} step", "{n} steps", static_cast<unsigned long>(plan.max_steps),
                               fmt::arg("n", plan.max_steps)))),
      Shown::Info);

  // which kind fits which task: each sentence from the figures above
  const Kind &ed = kinds[0], &gpt = kinds[1], &cls = kinds[2];
  auto reached = [&](const Kind& k) {
    return k.run.hit() ? trf("reached {pct} % at step {s} ({t:.1f} s)", fmt::arg("pct", pct),
                             fmt::arg("s", k.run.step_hit), fmt::arg("t", k.run.seconds_hit))
                       : trfn("did NOT reach {pct} % in {s} step (it ended at {h:.1f} %)",
                              "did NOT reach {pct} % in {s} steps (it ended at {h:.1f} %)",
                              static_cast<unsigned long>(k.run.steps), fmt::arg("pct", pct),
                              fmt::arg("s", k.run.steps), fmt::arg("h", 100 * k.run.held_out));
  };
  std::string seq;
  if (ed.run.hit() && gpt.run.hit()) {
    const Kind& first = gpt.run.seconds_hit < ed.run.seconds_hit ? gpt : ed;
    const Kind& second = &first == &gpt ? ed : gpt;
    seq = trf("both wrote the words; the {a} got there first, in {r:.1f}x less time", fmt::arg("a", first.name),
              fmt::arg("r", second.run.seconds_hit / first.run.seconds_hit));
  } else if (ed.run.hit() || gpt.run.hit()) {
    seq = trf("only the {a} reached the target in this run", fmt::arg("a", ed.run.hit() ? ed.name : gpt.name));
  } else {
    seq = _("neither reached the target in this run: give them more steps (--max-steps)");
  }
  const Kind& smaller = gpt.params < ed.params ? gpt : ed;
  ch.say(trf(
      "  Writing a sequence from a sequence (digits to words): the {ed} {red}; the {gpt} {rgpt}: {seq}. The "
      "{small} has fewer parameters ({a} against {b}).",
      fmt::arg("ed", ed.name), fmt::arg("red", reached(ed)), fmt::arg("gpt", gpt.name), fmt::arg("rgpt", reached(gpt)),
      fmt::arg("seq", seq), fmt::arg("small", smaller.name), fmt::arg("a", thousands(smaller.params)),
      fmt::arg("b", thousands(&smaller == &gpt ? ed.params : gpt.params))));
  ch.say(
      trf("  Labelling a whole input: the {cls} {rcls}. It writes one of {K} classes from a single pass over "
          "{p:.2f} positions per answer, {r1:.1f}x fewer than the {gpt} runs and {r2:.1f}x fewer than the {ed}; "
          "it cannot write a sentence, since its head has {K} outputs and nothing is fed back.",
          fmt::arg("cls", cls.name), fmt::arg("rcls", reached(cls)), fmt::arg("K", classes),
          fmt::arg("p", cls.positions), fmt::arg("gpt", gpt.name), fmt::arg("r1", gpt.positions / cls.positions),
          fmt::arg("ed", ed.name), fmt::arg("r2", ed.positions / cls.positions)));
}

}  // namespace ts
