// ch06_layernorm: three LayerNorms from three articles, and Add & Norm.
//
// Follows: article 000 "Layer Normalization" (nn.LayerNorm inside its encoder layer);
//          article 002 §9.2.2 (its hand-written LayerNorm: a_2, b_2, eps 1e-6);
//          article 004 §3.3 (Keras LayerNormalization: gamma, beta, eps 1e-6);
//          article 001 "Add & Norm" (AddNorm: LayerNorm(dropout(Y) + X)).
// Formula: over the last dim of each row x (C values), mean m, then
//   article 000  nn.LayerNorm         y = (x - m) / sqrt(var_n + 1e-5) * w + b     var_n = sum (x-m)^2 / C
//   article 002  LayerNorm            y = a_2 (x - m) / sqrt(std_u^2 + 1e-6) + b_2  std_u^2 = sum (x-m)^2 / (C-1)
//   article 004  LayerNormalization   y = gamma (x - m) / (std_n + 1e-6) + beta      std_n = sqrt(var_n)
//   article 001  AddNorm(X, Y)        out = LayerNorm(dropout(Y) + X)
//   x (B,T,C) -> (B,T,C)   (w, b, a_2, b_2, gamma, beta: (C), ones and zeros when fresh)
// Run:     ./build/ch06_layernorm [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch06_layernorm --row "1,2,3,4"      (any short row: see the formulas disagree)
//          ./build/ch06_layernorm --d-model 8          (short embedding rows: article 002 drifts away)
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/i18n.hpp"
#include "course/layernorm_notes.hpp"
#include "course/layout.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/stats.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/article004.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

using namespace ts;

// Article 001's AddNorm: the residual X plus the (dropped-out) sublayer output Y, then nn.LayerNorm.
struct AddNorm {
  Dropout dropout;
  LayerNorm ln;
  AddNorm(int64_t dim, double p) : dropout(p), ln(dim) {}
  ModuleRepr repr() const { return {"AddNorm", "", {{"dropout", dropout.repr()}, {"ln", ln.repr()}}}; }
};

int main(int argc, char** argv) {
  Chapter ch("ch06_layernorm", _("LayerNorm: three formulas, and Add & Norm"),
             {{0, N_("§Layer Normalization")}, {2, N_("§9.2.2 创建编码器 (LayerNorm)")}, {4, N_("§3.3 LayerNorm")},
              {1, N_("§Add & Norm")}});
  ch.add_sentence_flags();
  int64_t d_model = 768;
  std::string row_text = "1,2,3,4";
  ch.option("--d-model", d_model,
            _("width C of each embedding row, the normalised length (BERT-base: 768)"),
            2, 2048, _("a row needs 2 values for an unbiased std"));
  ch.option("--row", row_text, _("a short row for Step 5, comma-separated"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base
    const std::vector<float> row_values = parse_row(row_text);
    const size_t C = static_cast<size_t>(d_model);
    const double c = static_cast<double>(C);

    // ---------------------------------------------------------------- 1) the rows to normalise
    ch.section(_("Step 1: the rows to normalise: the embedded sentence"), _("article 000 §Layer Normalization"));
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    ch.show("inputs.input_ids", input_ids, _("the ids of chapter 1"), Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, d_model);
    Tensor inputs_embeds = token_emb(input_ids);
    // are the rows the table's rows for their ids? compared value for value; and is the table
    // N(0, 1)? its mean, std and kurtosis over all V*C values, measured
    const size_t lost = rows_not_from_table(inputs_embeds, token_emb.weight, input_ids);
    const Moments drawn = moments_of(token_emb.weight);
    const bool from_table = lost == 0, normal = from_table && drawn.standard_normal;
    ch.show("inputs_embeds", inputs_embeds, {"EmbeddingBackward0"},
            normal ? trf("each row is one token's C = {C} numbers, drawn from N(0, 1)", fmt::arg("C", C))
            : from_table
                ? trf("each row is one token's C = {C} numbers, copied from a table whose {n} values have mean "
                      "{m:.3g}, std {s:.3g} and kurtosis {k:.3g}: not N(0, 1)'s 0, 1 and 3, so the table was not "
                      "drawn as nn.Embedding draws it (look at {site})",
                      fmt::arg("C", C), fmt::arg("n", token_emb.weight.size()), fmt::arg("m", drawn.mean),
                      fmt::arg("s", drawn.std), fmt::arg("k", drawn.kurtosis),
                      fmt::arg("site", ch.ran("Embedding::Embedding")))
                : ch.verdict(false, trf("{k} of the {T} rows are not the table's row for their id "
                                               "(token_emb.weight[id]): the lookup did not copy them, so they are no "
                                               "N(0, 1) draws; {bad} of their values are NaN or inf, the largest "
                                               "|x| is {big:.3g} (look at {site})",
                                               fmt::arg("k", lost), fmt::arg("T", input_ids.size()),
                                               fmt::arg("bad", count_nonfinite(inputs_embeds)),
                                               fmt::arg("big", max_abs(inputs_embeds.data(), inputs_embeds.size())),
                                               fmt::arg("site", ch.ran("Embedding::operator()")))),
            Shown::Twin);
    // every row's population and unbiased variance: what the three formulas divide by   (B,T)
    const Tensor var_n = squeeze_last(var_lastdim(inputs_embeds, 0)), var_u = squeeze_last(var_lastdim(inputs_embeds, 1));
    {
      const Tensor mean = squeeze_last(mean_lastdim_keepdim(inputs_embeds));
      const Range m = range_of(mean), v = range_of(var_n);
      ch.show("inputs_embeds.mean(-1)", mean, {"MeanBackward1"},
              !from_table ? trf("from {lo:.4g} to {hi:.4g}: not the mean of draws from N(0, 1), since the rows are "
                                "not the table's (above)",
                                fmt::arg("lo", m.lo), fmt::arg("hi", m.hi))
              : !normal
                  ? trf("from {lo:.4g} to {hi:.4g}: the mean of {C} draws of std {s:.3g} strays about std/sqrt(C) = "
                        "{e:.3g} from the table's mean {mu:.3g}",
                        fmt::arg("lo", m.lo), fmt::arg("hi", m.hi), fmt::arg("C", C), fmt::arg("s", drawn.std),
                        fmt::arg("e", drawn.std / std::sqrt(c)), fmt::arg("mu", drawn.mean))
              : trf("from {lo:.4f} to {hi:.4f}: the mean of {C} draws from N(0, 1) strays about 1/sqrt(C) = {s:.3f} "
                  "from 0",
                  fmt::arg("lo", m.lo), fmt::arg("hi", m.hi), fmt::arg("C", C), fmt::arg("s", 1.0 / std::sqrt(c))),
              Shown::Twin);
      ch.show("inputs_embeds.var(-1, unbiased=False)", var_n, {"VarBackward0"},
              !from_table ? trf("from {lo:.4g} to {hi:.4g}: not the variance of draws from N(0, 1), since the rows "
                                "are not the table's (above)",
                                fmt::arg("lo", v.lo), fmt::arg("hi", v.hi))
              : !normal
                  ? trf("from {lo:.4g} to {hi:.4g}: the variance of {C} draws strays about std^2 sqrt((kurtosis - 1)/C) "
                        "= {e:.3g} from the table's {v:.3g}",
                        fmt::arg("lo", v.lo), fmt::arg("hi", v.hi), fmt::arg("C", C),
                        fmt::arg("e", drawn.std * drawn.std * std::sqrt(std::max(0.0, drawn.kurtosis - 1) / c)),
                        fmt::arg("v", drawn.std * drawn.std))
              : trf("from {lo:.4f} to {hi:.4f}: the variance of {C} draws from N(0, 1) strays about sqrt(2/C) = {s:.3f} "
                  "from 1",
                  fmt::arg("lo", v.lo), fmt::arg("hi", v.hi), fmt::arg("C", C), fmt::arg("s", std::sqrt(2.0 / c))),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 2) nn.LayerNorm
    LayerNorm layer_norm(d_model);  // no random draws
    const double eps_000 = layer_norm.eps;
    ch.section(trf("Step 2: nn.LayerNorm: (x - mean) / sqrt(var + {eps}), biased var", fmt::arg("eps", eps_str(eps_000))),
               _("article 000 §Layer Normalization, TransformerEncoderLayer's layer_norm_1"));
    ch.show("layer_norm", layer_norm.repr(), _("a fresh LayerNorm: weight = ones, bias = zeros, both trainable"),
            Shown::Twin);
    // y = (x - mean) / sqrt(var_n + eps) * weight + bias
    // (B,T,C) -> (B,T,C)
    Tensor ln_000 = layer_norm(inputs_embeds);
    ch.show("ln_000 = layer_norm(inputs_embeds)", ln_000, {"NativeLayerNormBackward0"},
            _("every row shifted by its own mean and divided by its own spread"), Shown::Twin);
    row_stats(ch, "ln_000", ln_000, layer_norm.weight, layer_norm.bias,
              per_row(var_n, [&](double vn) { return vn / (vn + eps_000); }), "var_n / (var_n + " + eps_str(eps_000) + ")");

    // ---------------------------------------------------------------- 3) article 002
    LayerNorm norm_002(d_model, LayerNormArithmetic::Article002);  // no random draws
    bool as_formula_002 = true;            // do its rows have the variance its formula gives? (below)
    const double eps_002 = norm_002.eps;
    ch.section(trf("Step 3: article 002's LayerNorm: (x - mean) / sqrt(std**2 + {eps}), unbiased std",
                   fmt::arg("eps", eps_str(eps_002))),
               _("article 002 §9.2.2 创建编码器, class LayerNorm"));
    ch.show("norm_002", norm_002.repr(),
            trf("a_2 = ones, b_2 = zeros, eps = {eps} (its repr shows none of it)", fmt::arg("eps", eps_str(eps_002))),
            Shown::Twin);
    // y = a_2 (x - mean) / sqrt(std_u^2 + eps) + b_2,  std_u^2 = sum (x - mean)^2 / (C - 1)
    // (B,T,C) -> (B,T,C)
    Tensor ln_002 = norm_002(inputs_embeds);
    const double shrink = std::sqrt((c - 1) / c);
    // ln_002 / ln_000 measured: per row at its largest |ln_000|, averaged over the rows
    double ratio_rows = 0;
    for (size_t t = 0; t < var_n.size(); ++t) {
      size_t k = t * C;
      for (size_t i = t * C; i < (t + 1) * C; ++i)
        if (std::fabs(ln_000.data()[i]) > std::fabs(ln_000.data()[k])) k = i;
      ratio_rows += ln_002.data()[k] / ln_000.data()[k] / static_cast<double>(var_n.size());
    }
    ch.show("ln_002 = norm_002(inputs_embeds)", ln_002, {"AddBackward0"},
            _("the same rows through article 002's formula"), Shown::Twin);
    {
      // a row's population variance: var_n / (var_u + eps) = (C-1)/C up to eps
      std::vector<double> unit(var_n.size());
      for (size_t t = 0; t < unit.size(); ++t)
        unit[t] = var_n.data()[t] / (static_cast<double>(var_u.data()[t]) + eps_002);
      as_formula_002 =
          row_stats(ch, "ln_002", ln_002, norm_002.weight, norm_002.bias, unit,
                    fmt::format("var_n / (var_u + {}) ~ (C-1)/C = {}/{} = {:.5f}", eps_str(eps_002), C - 1, C, (c - 1) / c));
      ch.say(as_formula_002 ? _("  x.std() divides by C-1, so by nn.LayerNorm's yardstick article 002's rows come out a "
                            "little narrow.")
                            : _("  These rows do not have the variance article 002's formula (x.std(), divided by C-1) "
                            "gives: norm_002() (src/transformer/layer_norm.cpp) computes another."));
    }
    {
      // its own yardstick: std_u(y) = a_2 sqrt(var_u / (var_u + eps)), 1 up to eps when fresh
      const Tensor std_u = squeeze_last(std_lastdim(ln_002, 1));
      const double a2 = static_cast<double>(norm_002.weight.data()[0]);
      double gap = 0;
      for (size_t t = 0; t < std_u.size(); ++t) {
        const double vu = var_u.data()[t];
        gap = std::max(gap, std::fabs(std_u.data()[t] - std::fabs(a2) * std::sqrt(vu / (vu + eps_002))));
      }
      const Range s = range_of(std_u);
      ch.show("ln_002.std(-1)", std_u, {"StdBackward0"},
              ch.verdict(gap <= 1e-4, gap <= 1e-4
                                          ? trf("by its own yardstick, the unbiased std, every row has spread a_2 = "
                                                "{a:.4g} up to eps ({lo:.6f} to {hi:.6f}): the two formulas disagree on "
                                                "what 'unit variance' means",
                                                fmt::arg("a", a2), fmt::arg("lo", s.lo), fmt::arg("hi", s.hi))
                                          : trf("{lo:.6f} to {hi:.6f}: by the unbiased std the rows' spread is off from "
                                                "a_2 = {a:.4g} (up to eps) by {g:.2g}, more than the 1e-4 allowed",
                                                fmt::arg("a", a2), fmt::arg("lo", s.lo), fmt::arg("hi", s.hi),
                                                fmt::arg("g", gap))),
              Shown::Twin);
    }
    {
      // ln_002 = ln_000 sqrt((var_n + eps_000) / (var_u + eps_002)) row by row: the unbiased std and the two
      // modules' eps; the largest |value| of a row moves the most. The std alone: 1 - sqrt((C-1)/C).
      double predicted = 0, predicted_std = 0, max_abs = 0;
      for (size_t t = 0; t < var_n.size(); ++t) {
        double row_max = 0;
        for (size_t i = t * C; i < (t + 1) * C; ++i) row_max = std::max(row_max, double(std::fabs(ln_000.data()[i])));
        const double vn = var_n.data()[t], vu = var_u.data()[t];
        predicted = std::max(predicted, row_max * std::fabs(1.0 - std::sqrt((vn + eps_000) / (vu + eps_002))));
        predicted_std = std::max(predicted_std, row_max * (1.0 - shrink));
        max_abs = std::max(max_abs, row_max);
      }
      const Tensor gap = max_abs_diff(ln_002, ln_000);
      const double measured = gap.data()[0];
      const bool ok = std::fabs(measured - predicted) <= 0.01 * predicted + 1e-5;
      // the eps count when they move the prediction by more than the 1% allowed
      const bool eps_count = std::fabs(predicted - predicted_std) > 0.01 * predicted_std;
      const std::string e0 = eps_str(eps_000), e2 = eps_str(eps_002);
      std::string note;
      if (!eps_count)
        note = ok ? ch.verdict(true, trf("{d:.4f}; the unbiased std predicts {p:.4f}: the largest |value| of ln_000, "
                                         "{m:.4f}, times 1 - sqrt((C-1)/C) = 1 - {s:.6f}",
                                         fmt::arg("d", measured), fmt::arg("m", max_abs), fmt::arg("s", shrink),
                                         fmt::arg("p", predicted_std)))
                  : ch.verdict(false, trf("{d:.4f}, not the {p:.4f} the unbiased std predicts (the largest |value| of "
                                          "ln_000, {m:.4f}, times 1 - sqrt((C-1)/C) = 1 - {s:.6f}): the gap has another "
                                          "cause",
                                          fmt::arg("d", measured), fmt::arg("m", max_abs), fmt::arg("s", shrink),
                                          fmt::arg("p", predicted_std)));
      else
        note = ok ? ch.verdict(true, trf("{d:.4f}; the unbiased std and the two eps ({e0} in nn.LayerNorm, {e2} in "
                                         "article 002's) predict {p:.4f}: each row's largest |value| of ln_000 times "
                                         "1 - sqrt((var_n + {e0}) / (var_u + {e2})); the std alone would give {ps:.4f}",
                                         fmt::arg("d", measured), fmt::arg("p", predicted), fmt::arg("e0", e0),
                                         fmt::arg("e2", e2), fmt::arg("ps", predicted_std)))
                  : ch.verdict(false, trf("{d:.4f}, not the {p:.4f} the unbiased std and the two eps ({e0} in "
                                          "nn.LayerNorm, {e2} in article 002's) predict (each row's largest |value| of "
                                          "ln_000 times 1 - sqrt((var_n + {e0}) / (var_u + {e2}))): the gap has another "
                                          "cause",
                                          fmt::arg("d", measured), fmt::arg("p", predicted), fmt::arg("e0", e0),
                                          fmt::arg("e2", e2)));
      ch.show("(ln_002 - ln_000).abs().max()", gap, {"MaxBackward1"}, note, Shown::Twin);
    }

    // ---------------------------------------------------------------- 4) article 004
    LayerNorm norm_004(static_cast<int64_t>(C), LayerNormArithmetic::Article004);
    const double eps_004 = norm_004.eps;
    ch.section(trf("Step 4: article 004's LayerNormalization: gamma (x - mean) / (std + {eps}) + beta",
                   fmt::arg("eps", eps_str(eps_004))),
               _("article 004 §3.3 LayerNorm, LayerNormalization.call"));
    ch.erratum(_("004 §3.3, line 274"),
               _("the text calls gamma and beta hyperparameters; they are trainable weights (add_weight, learned "
                 "with the rest of the model). It also calls sigma the variance, but the code divides by the "
                 "standard deviation (tf.keras.backend.std)."));
    // y = gamma (x - mean) / (std_n + eps) + beta,  std_n = sqrt(sum (x - mean)^2 / C)
    // (B,T,C) -> (B,T,C)
    Tensor ln_004 = norm_004(inputs_embeds);
    ch.show("ln_004 = norm_004(inputs_embeds)", ln_004, {"AddBackward0"},
            _("the same rows through article 004's formula"), Shown::Twin);
    row_stats(ch, "ln_004", ln_004, norm_004.weight, norm_004.bias,
              per_row(var_n, [&](double vn) { return vn / ((std::sqrt(vn) + eps_004) * (std::sqrt(vn) + eps_004)); }),
              "var_n / (std_n + " + eps_str(eps_004) + ")^2");
    {
      // only eps differs: at most |x - m| |1 / (std_n + eps_004) - 1 / sqrt(var_n + eps_000)| per row
      double predicted = 0;
      for (size_t t = 0; t < var_n.size(); ++t) {
        const float* row = inputs_embeds.data() + t * C;
        const double vn = var_n.data()[t], mean = std::accumulate(row, row + C, 0.0) / c;
        double far = 0;  // the largest |x - m| of the row
        for (size_t i = 0; i < C; ++i) far = std::max(far, std::fabs(row[i] - mean));
        predicted = std::max(predicted, far * std::fabs(1.0 / (std::sqrt(vn) + eps_004) - 1.0 / std::sqrt(vn + eps_000)));
      }
      const Tensor gap = max_abs_diff(ln_004, ln_000);
      const double d = gap.data()[0];
      ch.show("(ln_004 - ln_000).abs().max()", gap, {"MaxBackward1"},
              std::fabs(d - predicted) <= 1e-5 + 0.01 * predicted
                  ? ch.verdict(true, trf("{d:.2g} apart; eps alone accounts for {p:.2g}, if both divide by the "
                                         "population std and only eps differs (sqrt(var + {e0}) vs std + {e4})",
                                         fmt::arg("d", d), fmt::arg("p", predicted), fmt::arg("e0", eps_str(eps_000)),
                                         fmt::arg("e4", eps_str(eps_004))))
                  : ch.verdict(false, trf("{d:.2g} apart, not the {p:.2g} that eps alone (sqrt(var + {e0}) vs std + "
                                          "{e4}) accounts for: the two no longer divide by the same population std",
                                          fmt::arg("d", d), fmt::arg("p", predicted), fmt::arg("e0", eps_str(eps_000)),
                                          fmt::arg("e4", eps_str(eps_004)))),
              Shown::Twin);
    }

    // What each formula divides by, per token (in double, from the row statistics).
    divisor_table(ch, tokens, var_n, var_u, C, eps_000, eps_002, eps_004, as_formula_002);

    // ---------------------------------------------------------------- 5) a short row
    ch.section(_("Step 5: a short row, where the formulas disagree visibly"),
               _("articles 000 / 002 / 004 on the same row"));
    const size_t n = row_values.size();
    Tensor x = Tensor::from_shape({1, n});  // (1,n)
    std::copy(row_values.begin(), row_values.end(), x.begin());
    ch.show("x", x, {}, trf("C = {n}: here C-1 vs C is no longer a rounding detail", fmt::arg("n", n)), Shown::Twin);
    Tensor x_small = x;
    for (float& v : x_small) v = v / 1000.0f;
    std::vector<double> ratio_002(2);  // y_002 / y_000 on x and on x_small
    bool overflowed = false;           // did float32 overflow decide an output (x or x_small)?
    const double ln_000_eps = LayerNorm(static_cast<int64_t>(n)).eps;
    bool rounding_rows = false;  // did float32 rounding decide an output (x or x_small)?
    for (int pass = 0; pass < 2; ++pass) {
      const Tensor& row = pass == 0 ? x : x_small;
      const std::string name = pass == 0 ? "x" : "x_small";
      // the row's statistics in float32 (as the modules compute them) and in double (the formulas')
      const ShortRow r = short_row(row);
      const double vn = r.var_n, vu = r.var_u;
      if (pass == 1)
        ch.show("x_small = x / 1000", x_small, {},
                // eps (1e-5, 1e-6) counts once it is at least a thousandth of the variance
                vn <= 1e3 * ln_000_eps
                    ? trf("the same shape of row, with variance {v:.3g}: next to it, eps is no longer small",
                          fmt::arg("v", vn))
                    : trf("the same shape of row, with variance {v:.3g}: eps is still small next to it",
                          fmt::arg("v", vn)),
                Shown::Twin);
      // the three formulas on one row   (1,n) -> (1,n)
      const LayerNorm ln_n(static_cast<int64_t>(n));
      const LayerNorm ln_u(static_cast<int64_t>(n), LayerNormArithmetic::Article002);
      const LayerNorm ln_s(static_cast<int64_t>(n), LayerNormArithmetic::Article004);
      Tensor y_000 = ln_n(row), y_002 = ln_u(row), y_004 = ln_s(row);
      const std::string n_s = std::to_string(n), e0 = eps_str(ln_n.eps), e2 = eps_str(ln_u.eps), e4 = eps_str(ln_s.eps);
      const double d000 = divisor_of(row, y_000), d002 = divisor_of(row, y_002), d004 = divisor_of(row, y_004);
      const double f000 = std::sqrt(vn + ln_n.eps), f002 = std::sqrt(vu + ln_u.eps), f004 = std::sqrt(vn) + ln_s.eps;
      // float32 overflow decides an output (NaN, or 0 from an inf divisor): said by overflow_note
      const std::string o000 = overflow_note(ch, y_000, r, "sum (x - mean)^2", r.sum_sq),
                        o002 = overflow_note(ch, y_002, r, "std_u^2", vu),
                        o004 = overflow_note(ch, y_004, r, "std_n + " + e4, f004);
      const bool over_002 = !o000.empty() || !o002.empty(), over_004 = !o000.empty() || !o004.empty();
      overflowed = overflowed || over_002 || over_004;
      // float32 rounds the row's values by about epsilon x max |x|: when the deviations from the mean are
      // so small that a few such roundings pass the 1e-4 the divisor check allows, the divisor read off
      // the output measures the rounding, not the formula (e.g. --row "1e20,1.0000001e20")
      double max_abs = 0;
      for (float v : row) max_abs = std::max(max_abs, std::fabs(double(v)));
      const double rounding = 8 * std::numeric_limits<float>::epsilon() * max_abs / std::sqrt(vn);
      const std::string rounded =
          r.constant || !(rounding > 1e-4)
              ? std::string()
              : trf("the deviations from the mean (std {s:.3g}) are within float32's rounding of values this large "
                    "(8 x epsilon x max |x| = {u:.3g}, {p:.2g} x the std): the output shows the rounding, so no divisor "
                    "can be read off it",
                    fmt::arg("s", std::sqrt(vn)), fmt::arg("u", rounding * std::sqrt(vn)), fmt::arg("p", rounding));
      // each divisor is its formula's (divisor_note's check; 0: a constant row, any divisor gives 0)
      auto holds = [&](double d, double f) { return !rounded.empty() || d == 0.0 || std::fabs(d - f) <= 1e-4 * f; };
      const bool as_formulas = (!o000.empty() || holds(d000, f000)) && (!o002.empty() || holds(d002, f002)) &&
                               (!o004.empty() || holds(d004, f004));
      as_formula_002 = as_formula_002 && as_formulas;
      ch.show("y_000 = nn.LayerNorm(" + n_s + ")(" + name + ")", y_000, {"NativeLayerNormBackward0"},
              !o000.empty()       ? o000
              : !rounded.empty() ? rounded
                                 : divisor_note(ch, d000, f000, fmt::format("sqrt(var_n + {1}) = sqrt({0:.6g} + {1})", vn, e0)),
              Shown::Twin);
      ch.show("y_002 = LayerNorm(" + n_s + ")(" + name + ")  # article 002", y_002, {"AddBackward0"},
              !o002.empty()       ? o002
              : !rounded.empty() ? rounded
                                 : divisor_note(ch, d002, f002, fmt::format("sqrt(std_u^2 + {1}) = sqrt({0:.6g} + {1})", vu, e2)),
              Shown::Twin);
      ch.show("y_004 = LayerNormalization(" + n_s + ")(" + name + ")  # article 004", y_004, {"AddBackward0"},
              !o004.empty()       ? o004
              : !rounded.empty() ? rounded
                                 : divisor_note(ch, d004, f004, fmt::format("std_n + {1} = {0:.6g} + {1}", std::sqrt(vn), e4)),
              Shown::Twin);
      // y_002 / y_000 = d000 / d002: sqrt((C-1)/C) from the unbiased std, the rest from the two eps
      const double by_std = std::sqrt((static_cast<double>(n) - 1) / static_cast<double>(n));
      ratio_002[pass] = over_002 || r.constant || !rounded.empty() ? 1.0 : d000 / d002;
      rounding_rows = rounding_rows || !rounded.empty();
      const std::string flat = _("a constant row: both outputs are 0, up to float rounding");
      const std::string overflow = _("float32 overflowed in one of these outputs (above): the difference shows what the "
                                     "overflow left, not how the two formulas differ");
      const std::string rounding_gap = _("float32's rounding decides these outputs (above): the difference shows the "
                                         "rounding, not how the two formulas differ");
      ch.show("y_002 - y_000", y_002 - y_000, {"SubBackward0"},
              over_002       ? overflow
              : r.constant   ? flat
              : !rounded.empty() ? rounding_gap
              : !as_formulas ? trf("y_002 = y_000 x {r:.4f} (a divisor above is not its formula's)",
                                   fmt::arg("r", ratio_002[pass]))
                             : trf("y_002 = y_000 x {r:.4f}: the unbiased std alone gives x {s:.4f} (sqrt((C-1)/C)), the two "
                         "eps the rest (x {e:.4f})",
                         fmt::arg("r", ratio_002[pass]), fmt::arg("s", by_std), fmt::arg("e", ratio_002[pass] / by_std)),
              Shown::Twin);
      ch.show("y_004 - y_000", y_004 - y_000, {"SubBackward0"},
              over_004       ? overflow
              : r.constant   ? flat
              : !rounded.empty() ? rounding_gap
              : !as_formulas ? trf("y_004 = y_000 x {r:.7g} (a divisor above is not its formula's)",
                                   fmt::arg("r", d000 / d004))
                             : trf("y_004 = y_000 x {r:.7g}: the two divide by the same std; eps makes the gap ({e0} "
                                   "inside the sqrt of the variance, {e4} added to the std)",
                                   fmt::arg("r", d000 / d004), fmt::arg("e0", e0), fmt::arg("e4", e4)),
              Shown::Twin);
    }
    if (overflowed)  // the ratios of x and x_small say nothing about the formulas then
      ch.say(trf("  On this row float32 overflowed (above), so it cannot show how the three formulas differ: try one "
                 "whose sums and squared deviations stay below float32's largest value, {max:.6g}, such as --row "
                 "\"1,2,3,4\".",
                 fmt::arg("max", std::numeric_limits<float>::max())));
    else if (as_formula_002 && !rounding_rows)
      ch.say(trf("  So the three 'LayerNorms' are one idea with three yardsticks. On the C = {C} rows of Steps 2-4 "
               "article 002's output is nn.LayerNorm's x {s:.5f}; on the {n} values of x it is x {r0:.4f}; on "
               "x_small, where eps decides, x {r1:.4f}. With trained weights (w, a_2, gamma) each model learns "
               "around its own formula: swapping the formula under trained weights changes the model.",
               fmt::arg("C", C), fmt::arg("s", ratio_rows), fmt::arg("n", n), fmt::arg("r0", ratio_002[0]),
               fmt::arg("r1", ratio_002[1])));

    // ---------------------------------------------------------------- 6) Add & Norm
    ch.section(_("Step 6: Add & Norm: LayerNorm(dropout(Y) + X)"), _("article 001 §Add & Norm, class AddNorm"));
    // Y = a sublayer's output. Chapter 3's self-attention has no weights, so it draws nothing:
    // weights = softmax(Q K^T / sqrt(C)), Y = weights V, with Q = K = V = X = inputs_embeds
    // (B,T,C) x (B,S,C)^T -> (B,T,S) -> (B,T,C)
    Tensor scores = bmm_nt(inputs_embeds, inputs_embeds);
    const float scale = static_cast<float>(std::sqrt(c));
    for (float& s : scores) s = s / scale;
    const Tensor weights = softmax(scores);
    Tensor attn_outputs = bmm(weights, inputs_embeds);
    {
      // the mean attention weight on the diagonal (B = 1)   (T,T) -> a number
      const size_t T = tokens.size();
      double diag = 0;
      for (size_t t = 0; t < T; ++t) diag += weights.data()[t * T + t];
      ch.show("attn_outputs", attn_outputs, {"BmmBackward0"},
              trf("Y, chapter 3's attention output: on average a token gives {pct:.1f}% of its attention to itself",
                  fmt::arg("pct", 100.0 * diag / static_cast<double>(T))),
              Shown::Twin);
    }
    AddNorm add_norm(d_model, config.hidden_dropout_prob);
    add_norm.dropout.training = ch.training();
    ch.show("add_norm", add_norm.repr(), _("the residual add and the LayerNorm in one module"), Shown::Twin);
    // summed = dropout(Y) + X   (B,T,C)
    const Tensor dropped = add_norm.dropout(attn_outputs);
    Tensor summed = dropped + inputs_embeds;
    const double off_residual = max_abs_diff(summed, dropped + inputs_embeds)();  // 0 while X is added back
    {
      size_t zeroed = 0;
      for (size_t i = 0; i < dropped.size(); ++i) zeroed += dropped.data()[i] == 0.0f && attn_outputs.data()[i] != 0.0f;
      const double p = add_norm.dropout.p, N = static_cast<double>(dropped.size());
      const std::string sum_words =
          off_residual == 0 ? (ch.training() ? _("X + dropout(Y)") : _("X + Y"))
                            : trf(ch.training() ? N_("not X + dropout(Y) (off by up to {g:.3g})")
                                                : N_("not X + Y (off by up to {g:.3g})"),
                                  fmt::arg("g", off_residual));
      ch.show("summed = add_norm.dropout(attn_outputs) + inputs_embeds", summed, {"AddBackward0"},
              ch.training() ? trf("{sum}: dropout zeroed {n} of the {N} values of Y ({pct:.1f}%, p = {p}) "
                                  "and scaled the rest by 1/(1-p) = {s:.4g}",
                                  fmt::arg("sum", sum_words), fmt::arg("n", zeroed), fmt::arg("N", dropped.size()),
                                  fmt::arg("pct", 100.0 * static_cast<double>(zeroed) / N), fmt::arg("p", p),
                                  fmt::arg("s", 1.0 / (1.0 - p)))
                            : trf("{sum} (eval mode: dropout passes Y through)", fmt::arg("sum", sum_words)),
              Shown::Twin);
    }
    {
      // the sum's spread against X's, row by row   (B,T) -> a number
      const Tensor s_sum = squeeze_last(std_lastdim(summed, 1)), s_x = std_lastdim(inputs_embeds, 1);
      double ratio = 0, sx = 0;
      for (size_t t = 0; t < s_sum.size(); ++t) {
        ratio += s_sum.data()[t] / s_x.data()[t];
        sx += s_x.data()[t];
      }
      const double T = static_cast<double>(s_sum.size());
      ch.show("summed.std(-1)", s_sum, {"StdBackward0"},
              trf(off_residual == 0 ? N_("the residual sum spreads {r:.2f} times as wide as X (whose rows have std "
                                         "{sx:.3f} on average)")
                                    : N_("summed, which no longer adds X back, spreads {r:.2f} times as wide as X "
                                         "(whose rows have std {sx:.3f} on average)"),
                  fmt::arg("r", ratio / T), fmt::arg("sx", sx / T)),
              Shown::Twin);
    }
    // out = LayerNorm(summed)   (B,T,C)
    Tensor out = add_norm.ln(summed);
    ch.show("add_norm(inputs_embeds, attn_outputs)", out, {"NativeLayerNormBackward0"},
            _("= add_norm.ln(summed): the sum normalised again, whatever its scale was"), Shown::Twin);
    row_stats(ch, "add_norm(inputs_embeds, attn_outputs)", out, add_norm.ln.weight, add_norm.ln.bias,
              per_row(squeeze_last(var_lastdim(summed, 0)), [&](double vn) { return vn / (vn + add_norm.ln.eps); }),
              "var_n / (var_n + " + eps_str(add_norm.ln.eps) + ")");
    ch.erratum(_("001 §Add & Norm, line 23"),
               _("the text names X the sublayer's output and Y the residual input, but the code "
                 "(forward(X, Y) = ln(dropout(Y) + X), called as addnorm1(X, attention(X, X, X))) drops out Y, the "
                 "sublayer's output, and adds the residual X. The code is what runs here."));
  });
}
