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
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/stats.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// Article 004's LayerNormalization (a Keras layer), as its call() computes it:
//   mean = mean(x, -1);  std = std(x, -1)      (tf.keras.backend.std: the POPULATION std, / C)
//   output = gamma * (x - mean) / (std + eps) + beta       eps = 1e-6, added to the std itself
struct LayerNormalization {
  Tensor gamma;  // (C) ones
  Tensor beta;   // (C) zeros
  float eps;
  explicit LayerNormalization(size_t features, double epsilon = 1e-6)
      : gamma(Tensor::from_shape({features})), beta(Tensor::from_shape({features})),
        eps(static_cast<float>(epsilon)) {
    gamma.fill(1.0f);
    beta.fill(0.0f);
  }
  // x (...,C) -> (...,C)
  Tensor operator()(const Tensor& x) const {
    const size_t C = gamma.size(), rows = x.size() / C;
    // 1) mean and population std of each row    (...,1)
    const Tensor mean = mean_lastdim_keepdim(x);
    const Tensor std_n = std_lastdim(x, /*correction=*/0);
    // 2) gamma * (x - mean) / (std + eps) + beta, each op rounded to float in this order   (...,C)
    Tensor out = Tensor::from_shape(shape_of(x));
    for (size_t r = 0; r < rows; ++r) {
      const float denom = std_n.data()[r] + eps;
      for (size_t c = 0; c < C; ++c) {
        const float centered = x.data()[r * C + c] - mean.data()[r];
        const float scaled = gamma.data()[c] * centered;
        const float z = scaled / denom;
        out.data()[r * C + c] = z + beta.data()[c];
      }
    }
    return out;
  }
};

// Article 001's AddNorm: the residual X plus the (dropped-out) sublayer output Y, then nn.LayerNorm.
struct AddNorm {
  Dropout dropout;
  LayerNorm ln;
  AddNorm(int64_t dim, double p) : dropout(p), ln(dim) {}
  ModuleRepr repr() const { return {"AddNorm", "", {{"dropout", dropout.repr()}, {"ln", ln.repr()}}}; }
};

// The chapter's helpers, after main: shapes, statistics for the notes, the --row parser.
// t (..., 1) -> (...): drop the kept last dim (what torch prints for x.mean(-1) without keepdim)
static Tensor squeeze_last(Tensor t);
// The smallest and largest value of a list, in double.
static Range range_of(const std::vector<double>& v);
// f(v) for every value v of a per-row statistic: (T) -> T doubles
template <class F>
static std::vector<double> per_row(const Tensor& stat, F f);
// y.mean(-1) and y.var(-1, unbiased=False) of a LayerNorm's output, shown and checked against
// its bias and weight² x `unit` (the formula's own variance per row, named by `formula`).
static void row_stats(Chapter& ch, const std::string& name, const Tensor& y, const Tensor& weight,
                      const Tensor& bias, const std::vector<double>& unit, const std::string& formula);
// What a LayerNorm divided a row by, measured; and the note that checks it against the formula.
static double divisor_of(const Tensor& x, const Tensor& y);
static std::string divisor_note(Chapter& ch, double measured, double formula, const std::string& how);
// "1,2,3,4" -> {1, 2, 3, 4}
static std::vector<float> parse_row(const std::string& text);

int main(int argc, char** argv) {
  Chapter ch("ch06_layernorm", _("LayerNorm: three formulas, and Add & Norm"),
             _("article 000 《使用 Pytorch 一步一步实现 Transformer Encoder》 §Layer Normalization; article 002 "
               "《第九章：注意力和 Transformer 的逐行实现》 §9.2.2 创建编码器 (LayerNorm); article 004 "
               "《GPT （一）transformer原理和代码详解》 §3.3 LayerNorm; article 001 (d2l-style notes) §Add & Norm"));
  ch.add_text_flag();
  ch.add_vocab_flag();
  int64_t d_model = 768;
  std::string row_text = "1,2,3,4";
  ch.option("--d-model", d_model, _("width C of each embedding row, the normalised length (default 768, BERT-base)"),
            2, 2048, _("a row needs 2 values for an unbiased std"));
  ch.option("--row", row_text, _("a short row for Step 5, comma-separated (default \"1,2,3,4\")"));

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
    ch.show("inputs_embeds", inputs_embeds, {"EmbeddingBackward0"},
            trf("each row is one token's C = {C} numbers, drawn from N(0, 1)", fmt::arg("C", C)), Shown::Twin);
    // every row's population and unbiased variance: what the three formulas divide by   (B,T)
    const Tensor var_n = squeeze_last(var_lastdim(inputs_embeds, 0)), var_u = squeeze_last(var_lastdim(inputs_embeds, 1));
    {
      const Tensor mean = squeeze_last(mean_lastdim_keepdim(inputs_embeds));
      const Range m = range_of(mean), v = range_of(var_n);
      ch.show("inputs_embeds.mean(-1)", mean, {"MeanBackward1"},
              trf("from {lo:.4f} to {hi:.4f}: the mean of {C} draws from N(0, 1) strays about 1/sqrt(C) = {s:.3f} "
                  "from 0",
                  fmt::arg("lo", m.lo), fmt::arg("hi", m.hi), fmt::arg("C", C), fmt::arg("s", 1.0 / std::sqrt(c))),
              Shown::Twin);
      ch.show("inputs_embeds.var(-1, unbiased=False)", var_n, {"VarBackward0"},
              trf("from {lo:.4f} to {hi:.4f}: the variance of {C} draws from N(0, 1) strays about sqrt(2/C) = {s:.3f} "
                  "from 1",
                  fmt::arg("lo", v.lo), fmt::arg("hi", v.hi), fmt::arg("C", C), fmt::arg("s", std::sqrt(2.0 / c))),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 2) nn.LayerNorm
    ch.section(_("Step 2: nn.LayerNorm: (x - mean) / sqrt(var + 1e-5), biased var"),
               _("article 000 §Layer Normalization, TransformerEncoderLayer's layer_norm_1"));
    LayerNorm layer_norm(d_model);
    ch.show("layer_norm", layer_norm.repr(), _("a fresh LayerNorm: weight = ones, bias = zeros, both trainable"),
            Shown::Twin);
    // y = (x - mean) / sqrt(var_n + eps) * weight + bias
    // (B,T,C) -> (B,T,C)
    Tensor ln_000 = layer_norm(inputs_embeds);
    ch.show("ln_000 = layer_norm(inputs_embeds)", ln_000, {"NativeLayerNormBackward0"},
            _("every row shifted by its own mean and divided by its own spread"), Shown::Twin);
    row_stats(ch, "ln_000", ln_000, layer_norm.weight, layer_norm.bias,
              per_row(var_n, [](double vn) { return vn / (vn + 1e-5); }), "var_n / (var_n + 1e-5)");

    // ---------------------------------------------------------------- 3) article 002
    ch.section(_("Step 3: article 002's LayerNorm: (x - mean) / sqrt(std**2 + 1e-6), unbiased std"),
               _("article 002 §9.2.2 创建编码器, class LayerNorm"));
    AnnotatedLayerNorm norm_002(d_model);
    ch.show("norm_002", norm_002.repr(), _("a_2 = ones, b_2 = zeros, eps = 1e-6 (its repr shows none of it)"),
            Shown::Twin);
    // y = a_2 (x - mean) / sqrt(std_u^2 + eps) + b_2,  std_u^2 = sum (x - mean)^2 / (C - 1)
    // (B,T,C) -> (B,T,C)
    Tensor ln_002 = norm_002(inputs_embeds);
    const double shrink = std::sqrt((c - 1) / c);
    ch.show("ln_002 = norm_002(inputs_embeds)", ln_002, {"AddBackward0"},
            _("the same rows through article 002's formula"), Shown::Twin);
    {
      // a row's population variance: var_n / (var_u + eps) = (C-1)/C up to eps
      std::vector<double> unit(var_n.size());
      for (size_t t = 0; t < unit.size(); ++t)
        unit[t] = var_n.data()[t] / (static_cast<double>(var_u.data()[t]) + 1e-6);
      row_stats(ch, "ln_002", ln_002, norm_002.a_2, norm_002.b_2, unit,
                fmt::format("var_n / (var_u + 1e-6) ~ (C-1)/C = {}/{} = {:.5f}", C - 1, C, (c - 1) / c));
      ch.say(_("  x.std() divides by C-1, so by nn.LayerNorm's yardstick article 002's rows come out a little "
               "narrow."));
    }
    {
      // its own yardstick: std_u(y) = a_2 sqrt(var_u / (var_u + eps)), 1 up to eps when fresh
      const Tensor std_u = squeeze_last(std_lastdim(ln_002, 1));
      const double a2 = static_cast<double>(norm_002.a_2.data()[0]);
      double gap = 0;
      for (size_t t = 0; t < std_u.size(); ++t) {
        const double vu = var_u.data()[t];
        gap = std::max(gap, std::fabs(std_u.data()[t] - std::fabs(a2) * std::sqrt(vu / (vu + 1e-6))));
      }
      const Range s = range_of(std_u);
      ch.show("ln_002.std(-1)", std_u, {"StdBackward0"},
              ch.verdict(gap <= 1e-4, trf("by its own yardstick, the unbiased std, every row has spread a_2 = {a:.4g} "
                                          "up to eps ({lo:.6f} to {hi:.6f}): the two formulas disagree on what 'unit "
                                          "variance' means",
                                          fmt::arg("a", a2), fmt::arg("lo", s.lo), fmt::arg("hi", s.hi))),
              Shown::Twin);
    }
    {
      // ln_002 ~ ln_000 sqrt((C-1)/C): the largest |value| moves the most
      float max_abs = 0.0f;
      for (float v : ln_000) max_abs = std::max(max_abs, std::fabs(v));
      const Tensor gap = max_abs_diff(ln_002, ln_000);
      const double predicted = max_abs * (1.0 - shrink), measured = gap.data()[0];
      ch.show("(ln_002 - ln_000).abs().max()", gap, {"MaxBackward1"},
              ch.verdict(std::fabs(measured - predicted) <= 0.01 * predicted + 1e-5,
                         trf("{d:.4f}; the unbiased std predicts {p:.4f}: the largest |value| of ln_000, {m:.4f}, times 1 - "
                             "sqrt((C-1)/C) = 1 - {s:.6f}",
                             fmt::arg("d", measured), fmt::arg("m", max_abs), fmt::arg("s", shrink),
                             fmt::arg("p", predicted))),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 4) article 004
    ch.section(_("Step 4: article 004's LayerNormalization: gamma (x - mean) / (std + 1e-6) + beta"),
               _("article 004 §3.3 LayerNorm, LayerNormalization.call"));
    ch.erratum(_("004 §3.3, line 274"),
               _("the text calls gamma and beta hyperparameters; they are trainable weights (add_weight, learned "
                 "with the rest of the model). It also calls sigma the variance, but the code divides by the "
                 "standard deviation (tf.keras.backend.std)."));
    LayerNormalization norm_004(C);
    // y = gamma (x - mean) / (std_n + eps) + beta,  std_n = sqrt(sum (x - mean)^2 / C)
    // (B,T,C) -> (B,T,C)
    Tensor ln_004 = norm_004(inputs_embeds);
    ch.show("ln_004 = norm_004(inputs_embeds)", ln_004, {"AddBackward0"},
            _("the same rows through article 004's formula"), Shown::Twin);
    row_stats(ch, "ln_004", ln_004, norm_004.gamma, norm_004.beta,
              per_row(var_n, [](double vn) { return vn / ((std::sqrt(vn) + 1e-6) * (std::sqrt(vn) + 1e-6)); }),
              "var_n / (std_n + 1e-6)^2");
    {
      // only eps differs: at most |x - m| |1 / (std_n + 1e-6) - 1 / sqrt(var_n + 1e-5)| per row
      double predicted = 0;
      for (size_t t = 0; t < var_n.size(); ++t) {
        const float* row = inputs_embeds.data() + t * C;
        const double vn = var_n.data()[t], mean = std::accumulate(row, row + C, 0.0) / c;
        double far = 0;  // the largest |x - m| of the row
        for (size_t i = 0; i < C; ++i) far = std::max(far, std::fabs(row[i] - mean));
        predicted = std::max(predicted, far * std::fabs(1.0 / (std::sqrt(vn) + 1e-6) - 1.0 / std::sqrt(vn + 1e-5)));
      }
      const Tensor gap = max_abs_diff(ln_004, ln_000);
      const double d = gap.data()[0];
      ch.show("(ln_004 - ln_000).abs().max()", gap, {"MaxBackward1"},
              ch.verdict(std::fabs(d - predicted) <= 1e-5 + 0.01 * predicted,
                         trf("{d:.2g} apart; eps alone accounts for {p:.2g}, if both divide by the population std and only "
                             "eps differs (sqrt(var + 1e-5) vs std + 1e-6)",
                             fmt::arg("d", d), fmt::arg("p", predicted))),
              Shown::Twin);
    }

    // What each formula divides by, per token (in double, from the row statistics).
    {
      std::vector<std::vector<std::string>> rows = {
          {_("token"), "var_n", "var_u", "sqrt(var_n+1e-5)", "sqrt(std_u^2+1e-6)", "std_n+1e-6"}};
      size_t largest_002 = 0;
      for (size_t t = 0; t < tokens.size(); ++t) {
        const double vn = var_n.data()[t], vu = var_u.data()[t];
        const double d000 = std::sqrt(vn + 1e-5), d002 = std::sqrt(vu + 1e-6), d004 = std::sqrt(vn) + 1e-6;
        largest_002 += d002 > d000 && d002 > d004;
        if (t < 8)
          rows.push_back({tokens[t], fmt::format("{:.6f}", vn), fmt::format("{:.6f}", vu), fmt::format("{:.8f}", d000),
                          fmt::format("{:.8f}", d002), fmt::format("{:.8f}", d004)});
      }
      ch.say(_("  What each formula divides by (000 | 002 | 004). var_n divides by C, var_u by C-1:"));
      ch.figure(text_table(rows, 1));
      ch.say(trf("  The 002 column is the largest in {n} of the {T} rows: there article 002's outputs are the "
                 "smallest. var_u = var_n C/(C-1) outgrows nn.LayerNorm's larger eps when var_n > 9e-6 (C-1) = {v:.3g}.",
                 fmt::arg("n", largest_002), fmt::arg("T", tokens.size()), fmt::arg("v", 9e-6 * (c - 1))));
    }

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
    for (int pass = 0; pass < 2; ++pass) {
      const Tensor& row = pass == 0 ? x : x_small;
      const std::string name = pass == 0 ? "x" : "x_small";
      const double vn = var_lastdim(row, 0).data()[0], vu = var_lastdim(row, 1).data()[0];
      if (pass == 1)
        ch.show("x_small = x / 1000", x_small, {},
                trf("the same shape of row, with variance {v:.3g}: next to it, eps is no longer small",
                    fmt::arg("v", vn)),
                Shown::Twin);
      // the three formulas on one row   (1,n) -> (1,n)
      Tensor y_000 = LayerNorm(static_cast<int64_t>(n))(row);
      Tensor y_002 = AnnotatedLayerNorm(static_cast<int64_t>(n))(row);
      Tensor y_004 = LayerNormalization(n)(row);
      const std::string n_s = std::to_string(n);
      const double d000 = divisor_of(row, y_000), d002 = divisor_of(row, y_002), d004 = divisor_of(row, y_004);
      ch.show("y_000 = nn.LayerNorm(" + n_s + ")(" + name + ")", y_000, {"NativeLayerNormBackward0"},
              divisor_note(ch, d000, std::sqrt(vn + 1e-5), fmt::format("sqrt(var_n + 1e-5) = sqrt({:.6g} + 1e-5)", vn)),
              Shown::Twin);
      ch.show("y_002 = LayerNorm(" + n_s + ")(" + name + ")  # article 002", y_002, {"AddBackward0"},
              divisor_note(ch, d002, std::sqrt(vu + 1e-6), fmt::format("sqrt(std_u^2 + 1e-6) = sqrt({:.6g} + 1e-6)", vu)),
              Shown::Twin);
      ch.show("y_004 = LayerNormalization(" + n_s + ")(" + name + ")  # article 004", y_004, {"AddBackward0"},
              divisor_note(ch, d004, std::sqrt(vn) + 1e-6, fmt::format("std_n + 1e-6 = {:.6g} + 1e-6", std::sqrt(vn))),
              Shown::Twin);
      // y_002 / y_000 = d000 / d002: sqrt((C-1)/C) from the unbiased std, the rest from the two eps
      const double by_std = std::sqrt((static_cast<double>(n) - 1) / static_cast<double>(n));
      const bool flat = d002 == 0.0 || d004 == 0.0;
      ratio_002[pass] = flat ? 1.0 : d000 / d002;
      ch.show("y_002 - y_000", y_002 - y_000, {"SubBackward0"},
              flat ? _("a constant row: both outputs are 0, up to float rounding")
                   : trf("y_002 = y_000 x {r:.4f}: the unbiased std alone gives x {s:.4f} (sqrt((C-1)/C)), the two "
                         "eps the rest (x {e:.4f})",
                         fmt::arg("r", ratio_002[pass]), fmt::arg("s", by_std), fmt::arg("e", ratio_002[pass] / by_std)),
              Shown::Twin);
      ch.show("y_004 - y_000", y_004 - y_000, {"SubBackward0"},
              flat ? _("a constant row: both outputs are 0, up to float rounding")
                   : trf("y_004 = y_000 x {r:.7g}: the two divide by the same std; eps makes the gap (1e-5 inside "
                         "the sqrt of the variance, 1e-6 added to the std)",
                         fmt::arg("r", d000 / d004)),
              Shown::Twin);
    }
    ch.say(trf("  So the three 'LayerNorms' are one idea with three yardsticks. On the C = {C} rows of Steps 2-4 "
               "article 002's output is nn.LayerNorm's x {s:.5f}; on the {n} values of x it is x {r0:.4f}; on "
               "x_small, where eps decides, x {r1:.4f}. With trained weights (w, a_2, gamma) each model learns "
               "around its own formula: swapping the formula under trained weights changes the model.",
               fmt::arg("C", C), fmt::arg("s", shrink), fmt::arg("n", n), fmt::arg("r0", ratio_002[0]),
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
    {
      size_t zeroed = 0;
      for (size_t i = 0; i < dropped.size(); ++i) zeroed += dropped.data()[i] == 0.0f && attn_outputs.data()[i] != 0.0f;
      const double p = add_norm.dropout.p, N = static_cast<double>(dropped.size());
      ch.show("summed = add_norm.dropout(attn_outputs) + inputs_embeds", summed, {"AddBackward0"},
              ch.training() ? trf("X + dropout(Y): dropout zeroed {n} of the {N} values of Y ({pct:.1f}%, p = {p}) "
                                  "and scaled the rest by 1/(1-p) = {s:.4g}",
                                  fmt::arg("n", zeroed), fmt::arg("N", dropped.size()),
                                  fmt::arg("pct", 100.0 * static_cast<double>(zeroed) / N), fmt::arg("p", p),
                                  fmt::arg("s", 1.0 / (1.0 - p)))
                            : _("X + Y (eval mode: dropout passes Y through)"),
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
              trf("the residual sum spreads {r:.2f} times as wide as X (whose rows have std {sx:.3f} on average)",
                  fmt::arg("r", ratio / T), fmt::arg("sx", sx / T)),
              Shown::Twin);
    }
    // out = LayerNorm(summed)   (B,T,C)
    Tensor out = add_norm.ln(summed);
    ch.show("add_norm(inputs_embeds, attn_outputs)", out, {"NativeLayerNormBackward0"},
            _("= add_norm.ln(summed): the sum normalised again, whatever its scale was"), Shown::Twin);
    row_stats(ch, "add_norm(inputs_embeds, attn_outputs)", out, add_norm.ln.weight, add_norm.ln.bias,
              per_row(squeeze_last(var_lastdim(summed, 0)), [](double vn) { return vn / (vn + 1e-5); }),
              "var_n / (var_n + 1e-5)");
    ch.erratum(_("001 §Add & Norm, line 23"),
               _("the text names X the sublayer's output and Y the residual input, but the code "
                 "(forward(X, Y) = ln(dropout(Y) + X), called as addnorm1(X, attention(X, X, X))) drops out Y, the "
                 "sublayer's output, and adds the residual X. The code is what runs here."));
  });
}

// t (..., 1) -> (...): drop the kept last dim (what torch prints for x.mean(-1) without keepdim)
static Tensor squeeze_last(Tensor t) {
  Shape s = shape_of(t);
  s.pop_back();
  t.reshape(s);
  return t;
}

// The smallest and largest value of a list, in double.
static Range range_of(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

// f(v) for every value v of a per-row statistic: (T) -> T doubles
template <class F>
static std::vector<double> per_row(const Tensor& stat, F f) {
  std::vector<double> out;
  for (float v : stat) out.push_back(f(static_cast<double>(v)));
  return out;
}

// What a LayerNorm makes of every row, checked. With a uniform weight w and bias b (fresh: 1
// and 0), y = w z + b, where z has mean 0 and the formula's own variance unit[t] (a hair under
// 1 because of eps), so
//   y.mean(-1) = b       y.var(-1, unbiased=False) = w^2 unit[t]
// y (B,T,C), weight (C), bias (C), unit (T); `formula` names unit[t] for the note.
static void row_stats(Chapter& ch, const std::string& name, const Tensor& y, const Tensor& weight,
                      const Tensor& bias, const std::vector<double>& unit, const std::string& formula) {
  const Tensor mean = squeeze_last(mean_lastdim_keepdim(y)), var = squeeze_last(var_lastdim(y, 0));
  const Range w = range_of(weight), b = range_of(bias), u = range_of(unit);
  const bool uniform = w.lo == w.hi && b.lo == b.hi;
  double mean_gap = 0, var_gap = 0;  // largest |measured - expected| (the variance's relative to w^2)
  for (size_t t = 0; t < mean.size(); ++t) {
    mean_gap = std::max(mean_gap, std::fabs(mean.data()[t] - b.lo));
    var_gap = std::max(var_gap, std::fabs(var.data()[t] - w.lo * w.lo * unit[t]) / std::max(w.lo * w.lo, 1e-30));
  }
  // a float32 mean of C values of size ~1 is off by ~1e-7 at most: 1e-5 is rounding; 1e-4 for variances
  ch.show(name + ".mean(-1)", mean, {"MeanBackward1"},
          uniform ? ch.verdict(mean_gap <= 1e-5, trf("every row's mean is the bias, {b:.4g}, up to float rounding "
                                                     "(largest gap {g:.2g}): the input's own mean is gone",
                                                     fmt::arg("b", b.lo), fmt::arg("g", mean_gap)))
                  : _("weight or bias is not a single value: each row's mean depends on the row"),
          Shown::Twin);
  ch.show(name + ".var(-1, unbiased=False)", var, {"VarBackward0"},
          uniform ? ch.verdict(var_gap <= 1e-4,
                               trf("each row's variance is {w2:.4g} x {formula}, {lo:.6f} to {hi:.6f} for these rows "
                                   "(largest gap {g:.2g})",
                                   fmt::arg("w2", w.lo * w.lo), fmt::arg("formula", formula), fmt::arg("lo", u.lo),
                                   fmt::arg("hi", u.hi), fmt::arg("g", var_gap)))
                  : _("weight or bias is not a single value: each row's variance depends on the row"),
          Shown::Twin);
}

// What a LayerNorm divided the row x by, measured: (x_k - mean) / y_k at the k farthest from
// the mean (bias 0, weight 1); 0 when the row is constant (then every y_k is 0, up to rounding).
// x (1,n), y (1,n) -> a number
static double divisor_of(const Tensor& x, const Tensor& y) {
  const size_t n = x.size();
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  size_t k = 0;
  for (size_t i = 1; i < n; ++i)
    if (std::fabs(x.data()[i] - mean) > std::fabs(x.data()[k] - mean)) k = i;
  return y.data()[k] == 0.0f ? 0.0 : (x.data()[k] - mean) / y.data()[k];
}

// A divisor note: the measured one against the formula's, OK within 1e-4 relative.
static std::string divisor_note(Chapter& ch, double measured, double formula, const std::string& how) {
  if (measured == 0.0) return _("a constant row: every value is its mean, so every output is 0 (up to float rounding) whatever the divisor");
  return ch.verdict(std::fabs(measured - formula) <= 1e-4 * formula,
                    trf("divided by {m:.6g}; the formula says {how} = {f:.6g}", fmt::arg("m", measured),
                        fmt::arg("how", how), fmt::arg("f", formula)));
}

// "1,2,3,4" -> {1, 2, 3, 4}: plain decimal numbers only (what Python's float() reads the same way)
static std::vector<float> parse_row(const std::string& text) {
  std::vector<float> row;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const bool chars_ok = !item.empty() && item.find_first_not_of("0123456789+-.eE") == std::string::npos;
    char* end = nullptr;
    const double v = chars_ok ? std::strtod(item.c_str(), &end) : 0.0;
    if (!chars_ok || end != item.c_str() + item.size() || !std::isfinite(static_cast<float>(v)))
      throw UsageError(trf("--row must be comma-separated finite numbers such as \"1,2,3,4\", got '{text}'",
                           fmt::arg("text", text)));
    row.push_back(static_cast<float>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (row.size() < 2)
    throw UsageError(_("--row needs at least 2 numbers (the unbiased std of one number is undefined), got 1"));
  if (row.size() > 64) throw UsageError(trf("--row takes at most 64 numbers, got {n}", fmt::arg("n", row.size())));
  return row;
}
