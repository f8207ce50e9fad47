// course/train_views.cpp: see train_views.hpp.
#include "course/train_views.hpp"

#include <algorithm>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "course/counts.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "exact/print.hpp"
#include "transformer/annotated.hpp"

namespace ts {

using namespace ts::train;

namespace {

std::vector<std::string> tokens_of(const Vocab& v, const std::vector<int64_t>& ids) {
  std::vector<std::string> out;
  for (int64_t id : ids) out.push_back(v.words[static_cast<size_t>(id)]);
  return out;
}


// tokens per source row of b, padding excluded
std::vector<int64_t> source_lengths(const Batch& b) {
  std::vector<int64_t> n(size_t(b.B), 0);
  for (int64_t i = 0; i < b.B; ++i)
    for (int64_t s = 0; s < b.S; ++s) n[size_t(i)] += b.inputs[size_t(i * b.S + s)] != kPad;
  return n;
}

// What a (T,T) decoder mask of one row lets each query see (keep[q*T + s]: the forward keeps key s
// for query q), against its keys' padding (pad[s]): exactly the keys 0..t that are not padding
// (causal), every key that is not padding (all_real), or the first query that sees something else.
struct MaskReading {
  bool causal = true, all_real = true;
  int64_t first_odd = -1;
  std::string first_odd_keys;
};
MaskReading read_mask(const std::vector<bool>& keep, const std::vector<int64_t>& keys, int64_t T) {
  MaskReading r;
  for (int64_t q = 0; q < T; ++q) {
    bool causal = true, all = true;
    std::vector<int64_t> seen;
    for (int64_t s = 0; s < T; ++s) {
      const bool sees = keep[size_t(q * T + s)], real = keys[size_t(s)] != kPad;
      causal = causal && sees == (real && s <= q);
      all = all && sees == real;
      if (sees) seen.push_back(s);
    }
    r.causal = r.causal && causal, r.all_real = r.all_real && all;
    if (!causal && !all && r.first_odd < 0) {
      r.first_odd = q;
      r.first_odd_keys = seen.empty() ? std::string(_("none")) : fmt::format("{}", fmt::join(seen, ", "));
    }
  }
  return r;
}

}  // namespace

std::vector<bool> kept_by_attention(const BTensor& mask) {
  const size_t B = mask.shape()[0], Q = mask.shape()[1], K = mask.shape()[2];
  const Tensor q = xt::zeros<float>({B, size_t(1), Q, size_t(1)}), k = xt::zeros<float>({B, size_t(1), K, size_t(1)});
  BTensor m4 = mask;  // (B,1,Q,K): the same mask for the one head
  m4.reshape({B, size_t(1), Q, K});
  Tensor p;  // (B,1,Q,K)
  attention(q, k, k, &m4, nullptr, &p);
  std::vector<bool> keep(p.size());
  for (size_t i = 0; i < p.size(); ++i) keep[i] = p.data()[i] != 0.0f;
  return keep;
}

Polarity read_polarity(std::initializer_list<RowsOf> masks) {
  std::vector<float> hidden_values, kept_values;
  for (const RowsOf& m : masks)
    for (size_t r0 = 0; r0 < m.values.size(); r0 += m.K) {
      const auto row = m.values.begin() + std::ptrdiff_t(r0);
      if (std::all_of(row, row + std::ptrdiff_t(m.K), [&](float v) { return v == *row; })) continue;
      for (size_t i = r0; i < r0 + m.K; ++i) {
        std::vector<float>& into = m.keep[i] ? kept_values : hidden_values;
        if (std::find(into.begin(), into.end(), m.values[i]) == into.end()) into.push_back(m.values[i]);
      }
    }
  Polarity r;
  r.told = !hidden_values.empty() || !kept_values.empty();
  r.consistent = hidden_values.size() == 1 && kept_values.size() == 1 && kept_values[0] != hidden_values[0];
  if (r.consistent) r.hide = hidden_values[0], r.keep = kept_values[0];
  return r;
}

void mask_legend(HeatmapOptions& opt, const Polarity& pol) {
  // the SVG draws it in the mask colours, with their legend: which value is hidden, as measured
  opt.mask = !pol.consistent ? MaskMeaning::None : pol.hide == 1.0f ? MaskMeaning::OneHides : MaskMeaning::OneKeeps;
  // the terminal's legend, in the terminal's shades
  if (pol.consistent)
    opt.terminal_legend = trf(", {hide} = {h} = hidden, {keep} = {k} = visible",
                              fmt::arg("hide", heatmap_swatch(pol.hide, opt)), fmt::arg("h", pol.hide),
                              fmt::arg("keep", heatmap_swatch(pol.keep, opt)), fmt::arg("k", pol.keep));
}

std::string parameter_table(const Model<float>& model) {
  PartCounts counts;
  for (const ParamSpec& s : model.layout.specs) counts.add(first_field(s.name), s.numel);
  return counts.table(10, 10);
}


void show_batch(Chapter& ch, const Batch& b, const ModelConfig& cfg) {
  const auto sources = source_lengths(b);  // tokens per source, padding excluded
  const int64_t shortest = *std::min_element(sources.begin(), sources.end());
  const int64_t longest = *std::max_element(sources.begin(), sources.end());
  ch.show("inputs.shape, targets.shape",
          fmt::format("{} {}", size_str({size_t(b.B), size_t(b.S)}), size_str({size_t(b.B), size_t(b.T + 1)})),
          shortest < longest
              ? trf("padded to the longest number in the batch: its sources hold {lo} to {hi} tokens, so every "
                    "padding mask matters",
                    fmt::arg("lo", shortest), fmt::arg("hi", longest))
              : trf("every source of this batch holds {n} tokens: no padding here, but other batches have some",
                    fmt::arg("n", longest)),
          Shown::Twin);
  const auto m = create_mask<float>(b.inputs, b.tar_inp, b.B, b.S, b.T, cfg.look_ahead);
  // which of create_mask's values the forward hides: module_inputs (what the trainer's forward
  // gets), then the attention's masking of those tensors
  const ModuleInputs in = module_inputs(b, cfg.look_ahead);
  const std::vector<bool> enc_keep = kept_by_attention(in.enc), self_keep = kept_by_attention(in.self),
                          cross_keep = kept_by_attention(in.cross);
  const Polarity pol = read_polarity({{m.enc, enc_keep, size_t(b.S)}, {m.dec_self, self_keep, size_t(b.T)},
                                      {m.dec_cross, cross_keep, size_t(b.S)}});
  // each mask's own, to say which one disagrees
  auto hidden_value = [](const Polarity& p) { return p.consistent ? fmt::format("{}", p.hide) : std::string("?"); };
  const std::string enc_hides = hidden_value(read_polarity({{m.enc, enc_keep, size_t(b.S)}})),
                    self_hides = hidden_value(read_polarity({{m.dec_self, self_keep, size_t(b.T)}})),
                    cross_hides = hidden_value(read_polarity({{m.dec_cross, cross_keep, size_t(b.S)}}));
  const std::string what =
      cfg.look_ahead ? _("the source padding (encoder and cross-attention); combined_mask = max(target padding, "
                         "look-ahead) (decoder self-attention)")
                     : _("the source padding (encoder and cross-attention); combined_mask = the target padding only, "
                         "no look-ahead mask (--no-look-ahead) (decoder self-attention)");
  ch.show("create_mask(inputs, tar_inp)",
          fmt::format("encode_padding_mask {}\ncombined_mask       {}\ndecode_padding_mask {}",
                      size_str({size_t(b.B), 1, 1, size_t(b.S)}), size_str({size_t(b.B), 1, size_t(b.T), size_t(b.T)}),
                      size_str({size_t(b.B), 1, 1, size_t(b.S)})),
          pol.consistent ? trf("{hide} = hide: {what}", fmt::arg("hide", pol.hide), fmt::arg("what", what))
          : pol.told
              ? ch.verdict(false, trf("the forward hides a value in one place that it keeps in another (the {e}s of "
                                      "encode_padding_mask, the {s}s of combined_mask, the {c}s of "
                                      "decode_padding_mask; ? = both), so create_mask's values no longer say what is "
                                      "hidden (look at {site} and at module_inputs in src/train/trainer.cpp)",
                                      fmt::arg("e", enc_hides), fmt::arg("s", self_hides), fmt::arg("c", cross_hides),
                                      fmt::arg("site", create_mask_site())))
              : trf("no row of this batch's masks both hides and keeps: {what}", fmt::arg("what", what)),
          Shown::Twin);
  // the shortest number of the batch (the most padding): what its masks let each query see
  const int64_t row = std::min_element(b.numbers.begin(), b.numbers.end()) - b.numbers.begin();
  const std::vector<int64_t> ti(b.tar_inp.begin() + row * b.T, b.tar_inp.begin() + (row + 1) * b.T);
  const std::vector<float> comb(m.dec_self.begin() + row * b.T * b.T, m.dec_self.begin() + (row + 1) * b.T * b.T);
  // what the forward keeps: the entries holding the value it keeps (rows it hides whole included),
  // else (no single such value) what its attention kept
  std::vector<bool> keep(size_t(b.T * b.T)), src_keep(size_t(b.S)), cross_src_keep(size_t(b.S));
  for (size_t i = 0; i < keep.size(); ++i)
    keep[i] = pol.consistent ? comb[i] == pol.keep : bool(self_keep[size_t(row * b.T * b.T) + i]);
  for (size_t s = 0; s < src_keep.size(); ++s) {  // the row's first query (every query's alike)
    src_keep[s] = pol.consistent ? m.enc[size_t(row * b.S * b.S) + s] == pol.keep
                                 : bool(enc_keep[size_t(row * b.S * b.S) + s]);
    cross_src_keep[s] = pol.consistent ? m.dec_cross[size_t(row * b.T * b.S) + s] == pol.keep
                                       : bool(cross_keep[size_t(row * b.T * b.S) + s]);
  }
  const MaskReading r = read_mask(keep, ti, b.T);
  const int64_t src_hidden = std::count(src_keep.begin(), src_keep.end(), false),
                cross_hidden = std::count(cross_src_keep.begin(), cross_src_keep.end(), false),
                tgt_pad = std::count(ti.begin(), ti.end(), kPad);
  std::string sees = r.causal ? trf("each query t sees the keys 0..t that are not padding ({p} of its {T} keys are "
                                    "padding): the look-ahead and the padding mask",
                                    fmt::arg("p", tgt_pad), fmt::arg("T", b.T))
                     : r.all_real ? trf("each query sees every key that is not padding, the later ones too ({p} of "
                                        "{T} keys are padding): no look-ahead mask",
                                        fmt::arg("p", tgt_pad), fmt::arg("T", b.T))
                                  : trf("query {q} sees the keys {keys}", fmt::arg("q", r.first_odd),
                                        fmt::arg("keys", r.first_odd_keys));
  const std::string source =
      src_hidden == cross_hidden
          ? trf("the encoder and the cross-attention hide {h} of its {S} source positions", fmt::arg("h", src_hidden),
                fmt::arg("S", b.S))
          : trf("the encoder hides {h} of its {S} source positions and the cross-attention {c}",
                fmt::arg("h", src_hidden), fmt::arg("S", b.S), fmt::arg("c", cross_hidden));
  ch.say(trf("  In {n} (\"{words}\"), the batch's shortest number: {source}; in the decoder, {sees}.",
             fmt::arg("n", b.numbers[size_t(row)]), fmt::arg("words", number_to_words(b.numbers[size_t(row)])),
             fmt::arg("source", source), fmt::arg("sees", sees)));
  Tensor picture = Tensor::from_shape({size_t(b.T), size_t(b.T)});  // combined_mask[row]   (T,T)
  std::copy(comb.begin(), comb.end(), picture.begin());
  HeatmapOptions opt;
  opt.mode = heatmap_mode(ch.color);
  opt.vmin = 0, opt.vmax = 1;
  opt.cell_width = 8;
  opt.title = trf("combined_mask of {n} (\"{words}\"): rows = queries, columns = keys",
                  fmt::arg("n", b.numbers[size_t(row)]), fmt::arg("words", number_to_words(b.numbers[size_t(row)])));
  mask_legend(opt, pol);
  ch.figure(heatmap(picture, tokens_of(target_vocab(), ti), tokens_of(target_vocab(), ti), opt));
}


void show_article_differences(Chapter& ch, const ModelConfig& cfg, int64_t batch, double lr, int64_t log_every,
                              int64_t batches_per_epoch) {
  // article 004's hyperparameter block (num_layers = 4, d_model = 128, ...) and its loop
  struct Article { int64_t layers = 4, d_model = 128, dff = 512, heads = 8, batch = 64, log_every = 500;
                   double dropout = 0.1, lr = 0.001; bool post_ln = true; } a;
  std::vector<std::string> diff;
  auto differs = [&](bool d, const std::string& ours, const std::string& theirs) {
    if (d) diff.push_back(trf("{ours} (article 004: {theirs})", fmt::arg("ours", ours), fmt::arg("theirs", theirs)));
  };
  differs(cfg.layers != a.layers, fmt::format("num_layers {}", cfg.layers), fmt::format("{}", a.layers));
  differs(cfg.d_model != a.d_model, fmt::format("d_model {}", cfg.d_model), fmt::format("{}", a.d_model));
  differs(cfg.d_ff != a.dff, fmt::format("dff {}", cfg.d_ff), fmt::format("{}", a.dff));
  differs(cfg.heads != a.heads, fmt::format("num_heads {}", cfg.heads), fmt::format("{}", a.heads));
  differs(cfg.dropout != a.dropout, fmt::format("dropout_rate {}", cfg.dropout), fmt::format("{}", a.dropout));
  differs(batch != a.batch, fmt::format("BATCH_SIZE {}", batch), fmt::format("{}", a.batch));
  differs(lr != a.lr, fmt::format("Adam lr {}", lr), fmt::format("{}", a.lr));
  differs(cfg.pre_ln == a.post_ln, cfg.pre_ln ? "pre-LN" : "post-LN", a.post_ln ? "post-LN" : "pre-LN");
  differs(cfg.label_smoothing != 0.0, fmt::format("label smoothing {}", cfg.label_smoothing), "0");
  differs(log_every != a.log_every,
          trf("a progress line every {n} of an epoch's {per} batches", fmt::arg("n", log_every),
              fmt::arg("per", batches_per_epoch)),
          trf("every {n}", fmt::arg("n", a.log_every)));
  if (diff.empty())
    ch.say(_("  Every hyperparameter of article 004's block is the article's."));
  else
    ch.say(trf("  Where this run differs from article 004's hyperparameters: {list}.",
               fmt::arg("list", fmt::join(diff, _("; ")))));
}

void show_loss_reduction(Chapter& ch, const Metrics& metrics) {
  const double steps = double(metrics.steps()), mean_ratio = metrics.ratio_sum / steps;
  ch.show("loss_fun vs per-token mean (averaged over the run)",
          trf("article loss_fun (/ all B*T positions): {a:.4f}\nper-token mean (/ real tokens):        {t:.4f}",
              fmt::arg("a", metrics.sum_article / steps), fmt::arg("t", metrics.sum_token / steps)),
          trf("the article divides by padding too: its loss is the per-token mean times real/all = {m:.3f} on "
              "average ({lo:.3f}..{hi:.3f} per batch)",
              fmt::arg("m", mean_ratio), fmt::arg("lo", metrics.ratio_min), fmt::arg("hi", metrics.ratio_max)),
          Shown::Twin);
  // which positions the loss counted: its own loop's count, against the targets it received;
  // first, whether what it summed are log-probabilities (the generator's log_softmax, measured)
  const int64_t words = metrics.run_positions - metrics.run_padding;
  if (metrics.run_not_logp > 0) {
    const std::string site = ch.ran("AnnotatedGenerator::operator()");
    ch.say("  " + ch.verdict(false, trf("the loss read {r} of its {c} rows from a generator output that is not "
                                        "log-probabilities: a row's logsumexp is up to {g:.3g} away from 0 (a "
                                        "log_softmax row gives 0, up to float rounding), so what it summed is no "
                                        "cross-entropy (look at the generator's log_softmax, {site})",
                                        fmt::arg("r", metrics.run_not_logp), fmt::arg("c", metrics.run_counted),
                                        fmt::arg("g", metrics.run_lse_worst),
                                        fmt::arg("site", site.empty() ? "AnnotatedGenerator::operator()" : site))));
  } else {
    ch.say("  " + ch.verdict(metrics.run_counted == words,
                             N_("the loss summed the cross-entropy of {c} of the run's {all} target positions: each one "
                                "whose target (tar_real) is a word, none of the {pad} padding targets"),
                             N_("the loss summed the cross-entropy of {c} of the run's {all} target positions, but {w} "
                                "targets are words and {pad} are padding: it no longer counts exactly the words' "
                                "positions (look at {site})"),
                             fmt::arg("c", metrics.run_counted), fmt::arg("all", metrics.run_positions),
                             fmt::arg("pad", metrics.run_padding), fmt::arg("w", words),
                             fmt::arg("site", trainer_loss_site())));
  }
  ch.say(trf("  What it does: every gradient is scaled by that batch's real/all ratio, so batches with more padding "
             "(short numbers) count less. With SGD this would lower the learning rate by about {pct:.0f}%; Adam "
             "divides m by sqrt(v), so a scale that varies only between {lo:.3f} and {hi:.3f} mostly cancels. Try "
             "--loss token.",
             fmt::arg("pct", 100.0 * (1.0 - mean_ratio)), fmt::arg("lo", metrics.ratio_min),
             fmt::arg("hi", metrics.ratio_max)));
  ch.say(trf("  acc counts the real target tokens only; article 004's SparseCategoricalAccuracy also counts the "
             "padding positions (right when their argmax is the padding id 0). Over epoch {e} so far: acc {real:.4f}, "
             "the article's accuracy {all:.4f}.",
             fmt::arg("e", metrics.epoch), fmt::arg("real", metrics.train_accuracy()),
             fmt::arg("all", metrics.train_accuracy_all())));
}

void show_cross_attention(Chapter& ch, const Model<float>& trained, const std::vector<float>& untrained,
                                 int64_t n, int64_t max_new) {
  const Vocab& sv = source_vocab();
  const Vocab& tv = target_vocab();
  Model<float> before = trained;
  before.params = untrained;
  std::vector<float> pa, pb;
  int64_t Ta = 0, Sa = 0, Tb = 0, Sb = 0;
  const auto after_ids = greedy_translate(trained, {n}, max_new, &pa, &Ta, &Sa)[0];
  const auto before_ids = greedy_translate(before, {n}, max_new, &pb, &Tb, &Sb)[0];
  const std::vector<std::string> cols = tokens_of(sv, encode_source(n));
  // rows: the decoder input at the final step, <start> + predicted words
  auto rows_of = [&](const std::vector<int64_t>& ids, int64_t T) {
    std::vector<std::string> r = {tv.words[size_t(tv.start())]};
    for (size_t i = 0; i + 1 < size_t(T) && i < ids.size(); ++i) r.push_back(tv.words[size_t(ids[i])]);
    while (r.size() < size_t(T)) r.push_back(tv.words[size_t(tv.end())]);
    return r;
  };
  HeatmapOptions opt;
  opt.mode = heatmap_mode(ch.color);
  opt.vmin = 0, opt.vmax = 1;
  opt.cell_width = 7;
  const int64_t H = trained.cfg.heads, last = trained.cfg.layers - 1;
  for (int64_t h = 0; h < H; ++h) {
    // head h of the last decoder layer's cross-attention   (T,S), trained and untrained
    Tensor a = Tensor::from_shape({size_t(Ta), size_t(Sa)}), b = Tensor::from_shape({size_t(Tb), size_t(Sb)});
    std::copy_n(pa.begin() + h * Ta * Sa, Ta * Sa, a.begin());
    std::copy_n(pb.begin() + h * Tb * Sb, Tb * Sb, b.begin());
    opt.title = trf("decoder layer {l} cross-attention, head {h}, TRAINED: rows = decoder input, columns = source "
                    "digits of {n}",
                    fmt::arg("l", last), fmt::arg("h", h), fmt::arg("n", n));
    ch.figure(heatmap(a, rows_of(after_ids, Ta), cols, opt));
    opt.title = trf("the same head UNTRAINED (its greedy output: \"{words}\")", fmt::arg("words", tv.decode(before_ids)));
    ch.figure(heatmap(b, rows_of(before_ids, Tb), cols, opt));
  }
  // which digit does the row that predicts "hundred" look at? (the query row whose next word is "hundred")
  const auto hundred = std::find(tv.words.begin(), tv.words.end(), "hundred") - tv.words.begin();
  const auto it = std::find(after_ids.begin(), after_ids.end(), hundred);
  if (it == after_ids.end() || n < 100) return;
  const int64_t q = it - after_ids.begin();  // the query row that predicted "hundred"
  // the hundreds digit's column in the source: <start> d d d d <end>, digits left to right
  const std::string digits = std::to_string(n);
  const std::string hundreds(1, digits[digits.size() - 3]);
  std::string line;
  int64_t on_digit = 0;
  for (int64_t h = 0; h < H; ++h) {
    const float* r = pa.data() + (h * Ta + q) * Sa;
    const int64_t s = std::max_element(r, r + Sa) - r;
    on_digit += s == static_cast<int64_t>(digits.size()) - 2;  // column 0 is <start>
    line += fmt::format("{}head {}: '{}' ({:.2f})", h ? ", " : "", h, cols[size_t(s)], r[s]);
  }
  ch.say(trf("  The row that predicts \"hundred\" (query '{q}') looks most at: {line}. The hundreds digit of {n} "
             "is '{d}': {k} of the {H} heads look at it most.",
             fmt::arg("q", q == 0 ? tv.words[size_t(tv.start())] : tv.words[size_t(after_ids[size_t(q - 1)])]),
             fmt::arg("line", line), fmt::arg("n", n), fmt::arg("d", hundreds), fmt::arg("k", on_digit),
             fmt::arg("H", H)));
}

std::string grad_check_verdict(Chapter& ch, const std::vector<GradCheckRow>& rows, const std::string& first_bad,
                               double tol, double floor, const std::string& site) {
  const size_t bad = static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return !r.ok; }));
  if (bad == 0)
    return ch.verdict(true, trf("all {n} parameter tensors match finite differences "
                                "(maxdiff <= {tol:g} x max(max |grad|, {floor:g}))",
                                fmt::arg("n", rows.size()), fmt::arg("tol", tol), fmt::arg("floor", floor)));
  const char* where = site.empty() ? N_("{bad} of {n} parameter tensors differ from finite differences; the backward "
                                        "reaches {name} first: look at that module's backward ({file})")
                                   : N_("{bad} of {n} parameter tensors differ from finite differences; the backward "
                                        "reaches {name} first: look at that module's backward ({file}, called by {site})");
  // the file that holds the backward of the module first_bad belongs to (article 002's names, or GPT-2's)
  auto has = [&](const char* part) { return first_bad.find(part) != std::string::npos; };
  const std::string file = has("feed_forward.") || has(".mlp.")  ? feed_forward_source()
                           : has("norm.") || has("ln_")           ? layer_norm_source()
                           : has("attn.")                         ? attention_source()
                                                                  : annotated_source();
  return ch.verdict(false, trf(where, fmt::arg("bad", bad), fmt::arg("n", rows.size()), fmt::arg("name", first_bad),
                               fmt::arg("file", file), fmt::arg("site", site)));
}

}  // namespace ts
