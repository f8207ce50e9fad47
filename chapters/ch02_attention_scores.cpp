// ch02_attention_scores: how much does each token look at each other token?
//
// Follows: article 000 "Scaled Dot-product Attention" (q = k = v = the embedded sentence,
//          dim_k, scores = bmm(q, k^T) / sqrt(dim_k) -> torch.Size([1, 5, 5]));
//          article 004 §3.2 (scaled_dot_product_attention on its toy q 3x3, k 4x3, v 4x2).
// Formula: scores = Q K^T / sqrt(D)                      (B,T,D) x (B,S,D) -> (B,T,S)
//          Attention(Q,K,V) = softmax(Q K^T / sqrt(D)) V  (B,T,S) x (B,S,D) -> (B,T,D)
// Run:     ./build/ch02_attention_scores [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch02_attention_scores --d-model 64      (smaller vectors, a smaller diagonal)
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "exact/matmul.hpp"
#include "exact/tfprint.hpp"
#include "text/tokenizer.hpp"
#include "transformer/article004.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// print(t) after np.set_printoptions(suppress=True), as the article's outputs were made: numbers
// that round to 0 at numpy's 8 decimals print as "0.". tfprint.hpp has no suppress switch, so the
// tiny entries are set to (signed) zero first; that is the same text whenever the other entries
// need no scientific notation, which this function checks.
static std::string tf_str_suppressed(const Tensor& t) {
  Tensor shown = t;
  double mn = INFINITY, mx = 0;
  for (float& x : shown) {
    if (std::fabs(x) < 5e-9f) x = std::copysign(0.0f, x);
    if (x != 0 && std::isfinite(x)) {
      mn = std::min(mn, static_cast<double>(std::fabs(x)));
      mx = std::max(mx, static_cast<double>(std::fabs(x)));
    }
  }
  if (mx > 0 && (mn < 1e-4 || mx / mn > 1000.0 || mx >= 1e8))
    throw std::logic_error("tf_str_suppressed: these values need numpy's suppress mode, which tfprint lacks");
  return tf_str(shown);
}

static Tensor matrix(const std::vector<std::vector<float>>& rows) {
  Tensor m = Tensor::from_shape({rows.size(), rows[0].size()});
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows[i].size(); ++j) m(i, j) = rows[i][j];
  return m;
}

int main(int argc, char** argv) {
  Chapter ch("ch02_attention_scores", "Attention scores: Q K^T / sqrt(d_k)",
             "article 000 (Scaled Dot-product Attention) and article 004 §3.2 (the toy example)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  int64_t d_model = 768;
  ch.option("--d-model", d_model, "size C of each token vector, = dim_k here (default 768, BERT-base)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base
    check_range("--d-model", d_model, 1, 2048, "the 30522-row table must fit in memory");

    // ---------------------------------------------------------------- 1) q = k = v = embeddings
    ch.section("Step 1: the sentence as vectors, used as query, key and value", "article 000, Scaled Dot-product Attention");
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    ch.show("inputs.input_ids", input_ids, "the ids of chapter 1: one row, T = " + std::to_string(tokens.size()) + " tokens",
            Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, d_model);
    Tensor inputs_embeds = token_emb(input_ids);
    ch.show("inputs_embeds.size()", size_str(shape_of(inputs_embeds)),
            "no projections yet: query = key = value = inputs_embeds", Shown::Twin);
    const Tensor& query = inputs_embeds;
    const Tensor& key = inputs_embeds;

    // ---------------------------------------------------------------- 2) scores
    ch.section("Step 2: scores = Q K^T / sqrt(dim_k)", "article 000, Scaled Dot-product Attention");
    const int64_t dim_k = static_cast<int64_t>(key.shape()[2]);
    ch.show("dim_k", std::to_string(dim_k), "key.size(-1): the length D of each key vector", Shown::Twin);
    // scores = Q K^T / sqrt(D)
    // (B,T,D) x (B,S,D)^T -> (B,T,S)
    Tensor scores = bmm_nt(query, key);
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(dim_k)));  // Python float -> float32
    for (float& s : scores) s = s / scale;
    ch.show("scores.size()", size_str(shape_of(scores)),
            "one score for every (query token, key token) pair: (B,T,S) with T = S here");
    ch.show("scores", scores, {"DivBackward0"},
            "row t = how strongly token t's query matches every key; the diagonal stands out", Shown::Twin);

    // Why ~27 on the diagonal and ~1 elsewhere.
    const size_t T = tokens.size();
    const double d = static_cast<double>(dim_k);
    std::string table = fmt::format("  {:<12} {:>12} {:>16} {:>12}\n", "token", "|e_t|^2", "|e_t|^2/sqrt(D)",
                                    "scores[t,t]");
    double off_sq = 0, min_abs = INFINITY, max_abs = 0;
    for (size_t t = 0; t < T; ++t) {
      double sq = 0;
      for (int64_t c = 0; c < dim_k; ++c) sq += static_cast<double>(inputs_embeds(0, t, c)) * inputs_embeds(0, t, c);
      table += fmt::format("  {:<12} {:>12.2f} {:>16.4f} {:>12.4f}\n", tokens[t], sq, sq / std::sqrt(d), scores(0, t, t));
      for (size_t s = 0; s < T; ++s) {
        double a = std::fabs(static_cast<double>(scores(0, t, s)));
        if (a != 0) min_abs = std::min(min_abs, a), max_abs = std::max(max_abs, a);
        if (s != t) off_sq += static_cast<double>(scores(0, t, s)) * scores(0, t, s);
      }
    }
    ch.say(fmt::format(
        "  Why the diagonal is ~{0:.1f}: q = k, so scores[t,t] = |e_t|^2 / sqrt(D). Each of the D = {1} entries of an\n"
        "  embedding row is N(0,1), so |e_t|^2 is about D and the diagonal about D/sqrt(D) = sqrt(D) = {0:.2f}.\n"
        "  Off the diagonal two independent rows meet: a sum of D products with mean 0 and variance 1, so\n"
        "  about N(0, D), and divided by sqrt(D) about N(0, 1). Here their root-mean-square is {2:.3f}.\n{3}",
        std::sqrt(d), dim_k, T > 1 ? std::sqrt(off_sq / static_cast<double>(T * T - T)) : 0.0, table));
    ch.say(fmt::format(
        "  Why sci mode: PyTorch prints every entry with one format; largest |value| / smallest = {:.4g} / {:.4g}\n"
        "  = {:.0f}, and above 1000 it switches to d.dddde+xx so that both ends keep 5 significant digits.",
        max_abs, min_abs, max_abs / min_abs));
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.title = "scores: rows = queries, columns = keys";
    hopt.cell_width = 7;
    Tensor score_matrix = xt::view(scores, 0, xt::all(), xt::all());  // (T,S)
    ch.figure(heatmap(score_matrix, tokens, tokens, hopt));

    // ---------------------------------------------------------------- 3) article 004's toy example
    ch.section("Step 3: article 004's toy example, one query at a time, then all three",
               "article 004 §3.2, scaled_dot_product_attention");
    const Tensor k = matrix({{10, 0, 0}, {0, 10, 0}, {0, 0, 10}, {0, 0, 10}});  // (S,D) = (4,3)
    const Tensor v = matrix({{1, 0}, {10, 0}, {100, 5}, {1000, 6}});            // (S,Dv) = (4,2)
    const std::vector<std::vector<float>> q_rows = {{0, 0, 10}, {0, 10, 0}, {10, 10, 0}};
    ch.show("k", tf_str(k), "four keys; keys 2 and 3 are equal", Shown::Twin);
    ch.show("v", tf_str(v), "the value carried by each key", Shown::Twin);
    // The article's three queries, taken one at a time in the order of TensorFlow's tutorial.
    const std::vector<std::pair<size_t, std::string>> one_by_one = {
        {1, "matches key 1 only: weight 1 there, so the output is exactly value 1 = [10, 0]"},
        {0, "matches keys 2 and 3 equally: half each, so the output is their mean [550, 5.5]"},
        {2, "matches keys 0 and 1 equally: the output is the mean of their values, [5.5, 0]"}};
    for (const auto& [row, why] : one_by_one) {
      // Attention(q, K, V) for one query: (1,D) -> weights (1,S), output (1,Dv)
      Tensor temp_q = matrix({q_rows[row]});
      Tensor temp_attn;
      Tensor temp_out = scaled_dot_product_attention_004(temp_q, k, v, nullptr, &temp_attn);
      ch.show("temp_q", tf_str(temp_q), "", Shown::Twin);
      ch.show("temp_attn", tf_str_suppressed(temp_attn),
              row != 1 ? "" : "q.k is 100 for a matching key and 0 otherwise; /sqrt(3) that is 57.7 apart, so "
                              "softmax gives the others e^-57.7 ~ 1e-25 (printed as 0.)",
              Shown::Twin);
      ch.show("temp_out", tf_str_suppressed(temp_out), why, Shown::Twin);
    }
    // All three queries at once: the same rows, computed as one matrix product.
    // (T,D) = (3,3) -> weights (3,4), output (3,2)
    Tensor q = matrix(q_rows);
    Tensor att;
    Tensor out = scaled_dot_product_attention_004(q, k, v, nullptr, &att);
    ch.show("att", tf_str_suppressed(att), "the three rows above, stacked: queries are independent of each other");
    ch.show("out", tf_str_suppressed(out), "= att v: each output row is a weighted mean of the value rows");
    ch.show("att  # np.set_printoptions(suppress=False)", tf_str(att),
            "the 0. above were never exactly zero: softmax is positive everywhere; the article's printout hid them",
            Shown::Twin);
    ch.show("out  # np.set_printoptions(suppress=False)", tf_str(out), "", Shown::Twin);
  });
}
