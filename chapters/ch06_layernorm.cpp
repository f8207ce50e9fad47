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
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
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

// t (..., 1) -> (...): drop the kept last dim (what torch prints for x.mean(-1) without keepdim)
static Tensor squeeze_last(Tensor t) {
  Shape s = shape_of(t);
  s.pop_back();
  t.reshape(s);
  return t;
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
      throw UsageError("--row must be comma-separated finite numbers such as \"1,2,3,4\", got '" + text + "'");
    row.push_back(static_cast<float>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (row.size() < 2)
    throw UsageError("--row needs at least 2 numbers (the unbiased std of one number is undefined), got 1");
  if (row.size() > 64) throw UsageError("--row takes at most 64 numbers, got " + std::to_string(row.size()));
  return row;
}

int main(int argc, char** argv) {
  Chapter ch("ch06_layernorm", "LayerNorm: three formulas, and Add & Norm",
             "article 000 (Layer Normalization), 002 §9.2.2 (LayerNorm), 004 §3.3 (LayerNormalization), "
             "001 (Add & Norm)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  int64_t d_model = 768;
  std::string row_text = "1,2,3,4";
  ch.option("--d-model", d_model, "width C of each embedding row, the normalised length (default 768, BERT-base)");
  ch.option("--row", row_text, "a short row for Step 5, comma-separated (default \"1,2,3,4\")");

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base
    check_range("--d-model", d_model, 2, 2048, "a row needs 2 values for an unbiased std");
    const std::vector<float> row_values = parse_row(row_text);
    const size_t C = static_cast<size_t>(d_model);

    // mean and population variance of every row: what a LayerNorm sets to 0 and 1
    auto row_stats = [&](const std::string& name, const Tensor& y, const std::string& why_mean,
                         const std::string& why_var) {
      ch.show(name + ".mean(-1)", squeeze_last(mean_lastdim_keepdim(y)), {"MeanBackward1"}, why_mean, Shown::Twin);
      ch.show(name + ".var(-1, unbiased=False)", squeeze_last(var_lastdim(y, 0)), {"VarBackward0"}, why_var,
              Shown::Twin);
    };

    // ---------------------------------------------------------------- 1) the rows to normalise
    ch.section("Step 1: the rows to normalise: the embedded sentence", "article 000, Layer Normalization");
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    ch.show("inputs.input_ids", input_ids, "the ids of chapter 1", Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, d_model);
    Tensor inputs_embeds = token_emb(input_ids);
    ch.show("inputs_embeds", inputs_embeds, {"EmbeddingBackward0"},
            "each row is one token's C = " + std::to_string(C) + " numbers, drawn from N(0, 1)", Shown::Twin);
    row_stats("inputs_embeds", inputs_embeds, "per token: close to 0 already, but not 0",
              "per token: close to 1, but not 1 (a sample of " + std::to_string(C) + " N(0,1) draws)");

    // ---------------------------------------------------------------- 2) nn.LayerNorm
    ch.section("Step 2: nn.LayerNorm: (x - mean) / sqrt(var + 1e-5), biased var",
               "article 000, TransformerEncoderLayer's layer_norm_1");
    LayerNorm layer_norm(d_model);
    ch.show("layer_norm", layer_norm.repr(), "weight = ones, bias = zeros: a fresh LayerNorm only normalises",
            Shown::Twin);
    // y = (x - mean) / sqrt(var_n + eps) * weight + bias
    // (B,T,C) -> (B,T,C)
    Tensor ln_000 = layer_norm(inputs_embeds);
    ch.show("ln_000 = layer_norm(inputs_embeds)", ln_000, {"NativeLayerNormBackward0"},
            "every row shifted by its own mean and divided by its own spread", Shown::Twin);
    row_stats("ln_000", ln_000, "0 up to float rounding (sci mode: the numbers are ~1e-9)",
              "1 - a hair: var / (var + 1e-5) with var ~ 1 is 0.99999");

    // ---------------------------------------------------------------- 3) article 002
    ch.section("Step 3: article 002's LayerNorm: (x - mean) / sqrt(std**2 + 1e-6), unbiased std",
               "article 002 §9.2.2, class LayerNorm");
    AnnotatedLayerNorm norm_002(d_model);
    ch.show("norm_002", norm_002.repr(), "a_2 = ones, b_2 = zeros, eps = 1e-6 (its repr shows none of it)",
            Shown::Twin);
    // y = a_2 (x - mean) / sqrt(std_u^2 + eps) + b_2,  std_u^2 = sum (x - mean)^2 / (C - 1)
    // (B,T,C) -> (B,T,C)
    Tensor ln_002 = norm_002(inputs_embeds);
    ch.show("ln_002 = norm_002(inputs_embeds)", ln_002, {"AddBackward0"},
            "almost ln_000: every value a little closer to 0", Shown::Twin);
    const double shrink = std::sqrt((static_cast<double>(C) - 1) / static_cast<double>(C));
    row_stats("ln_002", ln_002, "0 again: the mean is removed the same way",
              fmt::format("(C-1)/C = {}/{} = {:.5f}: x.std() divides by C-1, so the rows come out a little small",
                          C - 1, C, (static_cast<double>(C) - 1) / static_cast<double>(C)));
    ch.show("ln_002.std(-1)", squeeze_last(std_lastdim(ln_002, 1)), {"StdBackward0"},
            "its own yardstick, the unbiased std, is 1: the two formulas disagree on what 'unit variance' means",
            Shown::Twin);
    float max_abs = 0.0f;
    for (float v : ln_000) max_abs = std::max(max_abs, std::fabs(v));
    ch.show("(ln_002 - ln_000).abs().max()", max_abs_diff(ln_002, ln_000), {"MaxBackward1"},
            fmt::format("ln_002 ~ ln_000 * sqrt((C-1)/C) = ln_000 * {:.6f}: the largest |value|, {:.4f}, moves by "
                        "about {:.4f}",
                        shrink, max_abs, max_abs * (1.0 - shrink)),
            Shown::Twin);

    // ---------------------------------------------------------------- 4) article 004
    ch.section("Step 4: article 004's LayerNormalization: gamma (x - mean) / (std + 1e-6) + beta",
               "article 004 §3.3, LayerNormalization.call");
    LayerNormalization norm_004(C);
    // y = gamma (x - mean) / (std_n + eps) + beta,  std_n = sqrt(sum (x - mean)^2 / C)
    // (B,T,C) -> (B,T,C)
    Tensor ln_004 = norm_004(inputs_embeds);
    ch.show("ln_004 = norm_004(inputs_embeds)", ln_004, {"AddBackward0"},
            "tf.keras.backend.std divides by C, like nn.LayerNorm: the same numbers to 4 decimals", Shown::Twin);
    row_stats("ln_004", ln_004, "0", "1: population std, and eps only 1e-6 next to a std of ~1");
    ch.show("(ln_004 - ln_000).abs().max()", max_abs_diff(ln_004, ln_000), {"MaxBackward1"},
            "only eps differs: sqrt(var + 1e-5) vs std + 1e-6, about 4e-6 apart when std ~ 1", Shown::Twin);

    // The denominators side by side, per token (computed in double from the row statistics).
    {
      const Tensor var_n = var_lastdim(inputs_embeds, 0), var_u = var_lastdim(inputs_embeds, 1);
      std::string table = fmt::format("  {:<10} {:>10} {:>10}   {:>16} {:>18} {:>15}\n", "token", "var_n", "var_u",
                                      "sqrt(var_n+1e-5)", "sqrt(std_u^2+1e-6)", "std_n+1e-6");
      for (size_t t = 0; t < tokens.size() && t < 8; ++t) {
        const double vn = var_n.data()[t], vu = var_u.data()[t];
        table += fmt::format("  {:<10} {:>10.6f} {:>10.6f}   {:>16.8f} {:>18.8f} {:>15.8f}\n", tokens[t], vn, vu,
                             std::sqrt(vn + 1e-5), std::sqrt(vu + 1e-6), std::sqrt(vn) + 1e-6);
      }
      ch.say("  What each formula divides by (000 | 002 | 004). var_n divides by C, var_u by C-1:\n" + table +
             "  The 002 column is the largest, so article 002's outputs are the smallest, by the factor\n"
             "  sqrt(var_n / var_u) = sqrt((C-1)/C) in every row, whatever the data.");
    }

    // ---------------------------------------------------------------- 5) a short row
    ch.section("Step 5: a short row, where the formulas disagree visibly",
               "articles 000 / 002 / 004 on the same row");
    const size_t n = row_values.size();
    Tensor x = Tensor::from_shape({1, n});  // (1,n)
    std::copy(row_values.begin(), row_values.end(), x.begin());
    ch.show("x", x, {}, "C = " + std::to_string(n) + ": here C-1 vs C is no longer a rounding detail", Shown::Twin);
    Tensor x_small = x;
    for (float& v : x_small) v = v / 1000.0f;
    for (int pass = 0; pass < 2; ++pass) {
      const Tensor& row = pass == 0 ? x : x_small;
      const std::string name = pass == 0 ? "x" : "x_small";
      if (pass == 1)
        ch.show("x_small = x / 1000", x_small, {}, "the same shape of row, 1000 times smaller: now eps matters",
                Shown::Twin);
      // the three formulas on one row   (1,n) -> (1,n)
      Tensor y_000 = LayerNorm(static_cast<int64_t>(n))(row);
      Tensor y_002 = AnnotatedLayerNorm(static_cast<int64_t>(n))(row);
      Tensor y_004 = LayerNormalization(n)(row);
      const double vn = var_lastdim(row, 0).data()[0], vu = var_lastdim(row, 1).data()[0];
      const std::string nn_s = std::to_string(n);
      ch.show("y_000 = nn.LayerNorm(" + nn_s + ")(" + name + ")", y_000, {"NativeLayerNormBackward0"},
              fmt::format("divided by sqrt(var_n + 1e-5) = sqrt({:.6g} + 1e-5) = {:.6g}", vn, std::sqrt(vn + 1e-5)),
              Shown::Twin);
      ch.show("y_002 = LayerNorm(" + nn_s + ")(" + name + ")  # article 002", y_002, {"AddBackward0"},
              fmt::format("divided by sqrt(std_u^2 + 1e-6) = sqrt({:.6g} + 1e-6) = {:.6g}", vu, std::sqrt(vu + 1e-6)),
              Shown::Twin);
      ch.show("y_004 = LayerNormalization(" + nn_s + ")(" + name + ")  # article 004", y_004, {"AddBackward0"},
              fmt::format("divided by std_n + 1e-6 = {:.6g} + 1e-6 = {:.6g}", std::sqrt(vn), std::sqrt(vn) + 1e-6),
              Shown::Twin);
      Tensor d_002 = y_002 - y_000, d_004 = y_004 - y_000;
      ch.show("y_002 - y_000", d_002, {"SubBackward0"},
              pass == 0 ? fmt::format("unbiased vs biased: y_002 = y_000 * sqrt((C-1)/C) = y_000 * {:.4f}",
                                      std::sqrt((static_cast<double>(n) - 1) / static_cast<double>(n)))
                        : "now eps inside the sqrt decides: 1e-6 next to var ~ 1e-6 is no longer small",
              Shown::Twin);
      ch.show("y_004 - y_000", d_004, {"SubBackward0"},
              pass == 0 ? "same std, different eps: a few 1e-6"
                        : "nn.LayerNorm's 1e-5 inside the sqrt swamps a variance of ~1e-6; 1e-6 added to the std "
                          "(~1e-3) hardly counts",
              Shown::Twin);
    }
    ch.say(
        "  So the three 'LayerNorms' are one idea with three yardsticks. For wide rows (C = 768) the only\n"
        "  visible gap is article 002's unbiased std (x sqrt((C-1)/C)); for short rows it becomes large, and\n"
        "  for rows with a tiny spread eps decides: nn.LayerNorm's eps 1e-5 inside the sqrt flattens them.\n"
        "  With trained weights (w, a_2, gamma) each model learns around its own formula: swapping the\n"
        "  formula under trained weights changes the model.");

    // ---------------------------------------------------------------- 6) Add & Norm
    ch.section("Step 6: Add & Norm: LayerNorm(dropout(Y) + X)", "article 001, class AddNorm");
    // Y = a sublayer's output. Chapter 3's self-attention has no weights, so it draws nothing:
    // weights = softmax(Q K^T / sqrt(C)), Y = weights V, with Q = K = V = X = inputs_embeds
    // (B,T,C) x (B,S,C)^T -> (B,T,S) -> (B,T,C)
    Tensor scores = bmm_nt(inputs_embeds, inputs_embeds);
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(C)));
    for (float& s : scores) s = s / scale;
    Tensor attn_outputs = bmm(softmax(scores), inputs_embeds);
    ch.show("attn_outputs", attn_outputs, {"BmmBackward0"},
            "Y, chapter 3's attention output: nearly X itself, since every token attends mostly to itself",
            Shown::Twin);
    AddNorm add_norm(d_model, config.hidden_dropout_prob);
    add_norm.dropout.training = ch.training();
    ch.show("add_norm", add_norm.repr(), "the residual add and the LayerNorm in one module", Shown::Twin);
    // summed = dropout(Y) + X   (B,T,C)
    Tensor summed = add_norm.dropout(attn_outputs) + inputs_embeds;
    ch.show("summed = add_norm.dropout(attn_outputs) + inputs_embeds", summed, {"AddBackward0"},
            ch.training() ? "X + Y ~ 2X, except where dropout zeroed Y (the rest of Y is scaled by 1/0.9)"
                          : "X + Y ~ 2X (eval mode: dropout passes Y through)",
            Shown::Twin);
    ch.show("summed.std(-1)", squeeze_last(std_lastdim(summed, 1)), {"StdBackward0"},
            "the residual sum has about twice the spread of its inputs", Shown::Twin);
    // out = LayerNorm(summed)   (B,T,C)
    Tensor out = add_norm.ln(summed);
    ch.show("add_norm(inputs_embeds, attn_outputs)", out, {"NativeLayerNormBackward0"},
            "= add_norm.ln(summed): the sum brought back to mean 0, variance 1", Shown::Twin);
    row_stats("add_norm(inputs_embeds, attn_outputs)", out, "0", "1: whatever the sum's scale was");
    ch.say(
        "  Note: article 001's text names X the sublayer output and Y the residual input, but its code\n"
        "  (forward(X, Y) = ln(dropout(Y) + X), called as addnorm1(X, attention(X, X, X))) drops out Y,\n"
        "  the sublayer output, and adds the residual X. The code is what runs here.");
  });
}
