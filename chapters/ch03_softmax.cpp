// ch03_softmax: from scores to attention weights, and from weights to outputs.
//
// Follows: article 000 "Scaled Dot-product Attention" (weights = F.softmax(scores, dim=-1),
//          weights.sum(dim=-1), attn_outputs = torch.bmm(weights, value) -> torch.Size([1, 5, 768])).
// Formula: softmax(x)_s = exp(x_s - max_j x_j) / sum_j exp(x_j - max_j x_j)     (B,T,S) -> (B,T,S)
//          out_t = sum_s weights[t,s] v_s                                       (B,T,S) x (B,S,D) -> (B,T,D)
// Run:     ./build/ch03_softmax [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch03_softmax --d-model 16     (small scores: the naive softmax no longer overflows)
//          ./build/ch03_softmax --d-k 512        (the scaling matters more as d_k grows)

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/rng.hpp"
#include "text/tokenizer.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// y = torch.exp(x), elementwise. PyTorch's CPU kernel (at::vml::vexp) runs SLEEF's
// Sleef_expf8_u10 on 8 floats at a time, the last partial block padded with zeros; doing the same
// gives the same bits. With --naive, plain std::exp (the same to within 1 ulp).
// x (any) -> same shape
static Tensor torch_exp(const Tensor& x, bool naive) {
  Tensor y = Tensor::from_shape(shape_of(x));
  const float* in = x.data();
  float* out = y.data();
  const size_t n = x.size();
  if (naive) {
    for (size_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
    return y;
  }
  std::copy(in, in + n, out);
  exact::sleef_exp(out, static_cast<int64_t>(n));
  return y;
}

// y = x / x.sum(dim=-1, keepdim=True): each row divided by its own sum.
// x (B,T,S) -> (B,T,S)
static Tensor divide_by_row_sum(const Tensor& x) {
  Tensor sums = sum_lastdim(x);  // (B,T), torch's summation order
  Tensor y = x;
  const size_t S = x.shape()[2];
  for (size_t r = 0; r < sums.size(); ++r)
    for (size_t s = 0; s < S; ++s) y.data()[r * S + s] = x.data()[r * S + s] / sums.data()[r];
  return y;
}

// x - x.amax(dim=-1, keepdim=True): every row shifted so that its largest entry is 0.
// x (B,T,S) -> (B,T,S)
static Tensor subtract_row_max(const Tensor& x) {
  Tensor y = x;
  const size_t S = x.shape()[2];
  for (size_t r = 0; r < x.size() / S; ++r) {
    float* row = y.data() + r * S;
    const float mx = *std::max_element(row, row + S);
    for (size_t s = 0; s < S; ++s) row[s] -= mx;
  }
  return y;
}

// How peaked a row of weights is: its largest weight, and exp(entropy) = the number of keys
// it effectively spreads over (1 = one key, S = all keys equally).
struct Peak {
  double max_weight = 0, effective_keys = 0;
};
// w (B,T,S) -> averages over the B*T rows
static Peak peakedness(const Tensor& w) {
  const size_t S = w.shape()[w.dimension() - 1], rows = w.size() / S;
  Peak p;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = w.data() + r * S;
    double h = 0;
    for (size_t s = 0; s < S; ++s)
      if (row[s] > 0) h -= static_cast<double>(row[s]) * std::log(static_cast<double>(row[s]));
    p.max_weight += *std::max_element(row, row + S);
    p.effective_keys += std::exp(h);
  }
  p.max_weight /= static_cast<double>(rows);
  p.effective_keys /= static_cast<double>(rows);
  return p;
}

int main(int argc, char** argv) {
  Chapter ch("ch03_softmax", "Softmax: scores -> weights -> outputs",
             "article 000 (Scaled Dot-product Attention: softmax, sum, bmm)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  int64_t d_model = 768, d_k = 64;
  ch.option("--d-model", d_model, "size C of each token vector, = dim_k of the scores (default 768)", 1, 2048,
            "the 30522-row table must fit in memory");
  ch.option("--d-k", d_k, "size of the random query/key vectors of the scaling demo (default 64, one BERT head)", 1,
            65536);

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base

    // ---------------------------------------------------------------- 1) the scores of chapter 2
    ch.section("Step 1: the scores of chapter 2", "article 000, Scaled Dot-product Attention");
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    Embedding token_emb(config.vocab_size, d_model);
    // q = k = v = E   (B,T,C)
    const Tensor inputs_embeds = token_emb(input_ids);
    const Tensor& query = inputs_embeds;
    const Tensor& key = inputs_embeds;
    const Tensor& value = inputs_embeds;
    const int64_t dim_k = d_model;
    // scores = Q K^T / sqrt(D)
    // (B,T,S)
    Tensor scores = bmm_nt(query, key);
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(dim_k)));
    for (float& s : scores) s = s / scale;
    ch.show("scores", scores, {"DivBackward0"}, "as in chapter 2: large diagonal (a token matches itself)",
            Shown::Twin);

    // ---------------------------------------------------------------- 2) softmax
    ch.section("Step 2: weights = softmax(scores, dim=-1)", "article 000, Scaled Dot-product Attention");
    // weights[t,s] = exp(scores[t,s] - max) / sum_j exp(scores[t,j] - max)
    // (B,T,S)
    Tensor weights = softmax(scores);
    ch.show("weights", weights, {"SoftmaxBackward0"},
            "every entry in (0, 1]: a gap of ~27 in the scores becomes a factor e^27 ~ 5e11 in the weights",
            Shown::Twin);
    // (B,T,S) -> (B,T)
    Tensor row_sums = sum_lastdim(weights);
    ch.show("weights.sum(dim=-1)", row_sums, {"SumBackward1"},
            "each query's weights sum to 1: a weighted average over the keys");
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.vmin = 0.0f;  // weights: one fixed scale, 0 blank and 1 darkest, so the pictures compare
    hopt.vmax = 1.0f;
    hopt.title = "weights: rows = queries, columns = keys (each row sums to 1)";
    hopt.cell_width = 7;
    ch.figure(heatmap(xt::view(weights, 0, xt::all(), xt::all()), tokens, tokens, hopt));

    // ---------------------------------------------------------------- 3) weighted sum of the values
    ch.section("Step 3: attn_outputs = bmm(weights, value)", "article 000, Scaled Dot-product Attention");
    // out = W V
    // (B,T,S) x (B,S,D) -> (B,T,D)
    Tensor attn_outputs = bmm(weights, value);
    ch.show("attn_outputs.shape", size_str(shape_of(attn_outputs)), "one new vector per token, same size as before");
    ch.show("attn_outputs", attn_outputs, {"BmmBackward0"},
            "almost the input rows themselves: with q = k = v each token attends to itself (hence chapter 4's projections)",
            Shown::Twin);
    ch.say(fmt::format("  max |attn_outputs - value| = {:.3g}", max_abs_diff(attn_outputs, value)()));

    // ---------------------------------------------------------------- 4) why subtract the max
    ch.section("Step 4: why softmax subtracts the row maximum", "the formula behind F.softmax");
    // raw = Q K^T, without the 1/sqrt(D)
    // (B,T,S)
    Tensor raw = bmm_nt(query, key);
    ch.show("raw = torch.bmm(query, key.transpose(1, 2))", raw, {"BmmBackward0"},
            "unscaled: the diagonal is |e_t|^2, about D", Shown::Twin);
    // naive softmax: exp(x) / sum exp(x)
    Tensor e = torch_exp(raw, ch.naive);
    ch.show("torch.exp(raw)", e, {"ExpBackward0"},
            "float32 holds numbers up to 3.4e38, so exp(x) is inf for every x > 88.72", Shown::Twin);
    ch.show("torch.exp(raw) / torch.exp(raw).sum(dim=-1, keepdim=True)", divide_by_row_sum(e), {"DivBackward0"},
            "inf / inf = nan and finite / inf = 0: the naive formula destroys the rows that overflow", Shown::Twin);
    // stable softmax: shift each row so that its largest entry is 0, then exp never exceeds 1
    Tensor shifted = subtract_row_max(raw);
    ch.show("shifted = raw - raw.amax(dim=-1, keepdim=True)", shifted, {"SubBackward0"},
            "softmax(x) = softmax(x - c) for any c: the common factor e^-c cancels", Shown::Twin);
    Tensor stable = divide_by_row_sum(torch_exp(shifted, ch.naive));
    ch.show("torch.exp(shifted) / torch.exp(shifted).sum(dim=-1, keepdim=True)", stable, {"DivBackward0"},
            "exp(0) = 1 for the maximum, the rest underflow gently to 0", Shown::Twin);
    Tensor library = softmax(raw);
    ch.show("F.softmax(raw, dim=-1)", library, {"SoftmaxBackward0"}, "F.softmax does the shift for you",
            Shown::Twin);
    {
      // The same recipe by hand on the scaled scores of step 2, against F.softmax's weights.
      Tensor by_hand = divide_by_row_sum(torch_exp(subtract_row_max(scores), ch.naive));
      const float max_diff = max_abs_diff(by_hand, weights)();
      ch.say(fmt::format(
          "  On the scaled scores of step 2: max |by hand - F.softmax| = {:.3g}. F.softmax multiplies by 1/sum\n"
          "  instead of dividing by sum, so the two can differ by about one unit in the last place.",
          max_diff));
    }

    // ---------------------------------------------------------------- 5) what sqrt(d_k) does
    ch.section("Step 5: what dividing by sqrt(d_k) does to the weights", "article 000, formula (4)");
    // After the learned projections of chapter 4, queries and keys are no longer copies of each
    // other: model them as independent N(0,1) vectors of size d_k.
    // q, k (B,T,D) with D = d_k; qk (B,T,S) has entries of variance d_k
    const size_t T = tokens.size();
    Tensor q = randn({1, T, static_cast<size_t>(d_k)});
    Tensor k = randn({1, T, static_cast<size_t>(d_k)});
    Tensor qk = bmm_nt(q, k);
    ch.show("qk = torch.bmm(q, k.transpose(1, 2))", qk, {},
            fmt::format("q, k = torch.randn(1, {}, {}): each dot product is a sum of {} products, std sqrt({}) = {:.1f}",
                        T, d_k, d_k, d_k, std::sqrt(static_cast<double>(d_k))),
            Shown::Twin);
    Tensor unscaled_w = softmax(qk);
    ch.show("F.softmax(qk, dim=-1)", unscaled_w, {}, "without scaling: nearly one-hot rows, tiny gradients elsewhere",
            Shown::Twin);
    Tensor qk_scaled = qk;
    const float scale_k = static_cast<float>(std::sqrt(static_cast<double>(d_k)));
    for (float& s : qk_scaled) s = s / scale_k;
    Tensor scaled_w = softmax(qk_scaled);
    ch.show("F.softmax(qk / sqrt(d_k), dim=-1)", scaled_w, {}, "scaled back to variance 1: weights spread over keys",
            Shown::Twin);
    hopt.title = "softmax(qk): unscaled";
    ch.figure(heatmap(xt::view(unscaled_w, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    hopt.title = "softmax(qk / sqrt(d_k)): scaled";
    ch.figure(heatmap(xt::view(scaled_w, 0, xt::all(), xt::all()), tokens, tokens, hopt));

    // The same measurement for several d_k, on a private generator (it does not disturb --seed).
    Generator g(ch.seed);
    std::string table = fmt::format("  {:>6}  {:>22}  {:>22}\n  {:>6}  {:>10} {:>11}  {:>10} {:>11}\n", "",
                                    "unscaled", "scaled by 1/sqrt(d_k)", "d_k", "max weight", "eff. keys",
                                    "max weight", "eff. keys");
    const size_t demo_T = 16, trials = 64;
    for (int64_t dk : {4, 16, 64, 256, 1024}) {
      // q, k (trials, 16, dk) -> weights (trials, 16, 16)
      Tensor qd = randn({trials, demo_T, static_cast<size_t>(dk)}, g);
      Tensor kd = randn({trials, demo_T, static_cast<size_t>(dk)}, g);
      Tensor s = bmm_nt(qd, kd);
      Peak un = peakedness(softmax(s));
      s /= static_cast<float>(std::sqrt(static_cast<double>(dk)));
      Peak sc = peakedness(softmax(s));
      table += fmt::format("  {:>6}  {:>10.3f} {:>11.2f}  {:>10.3f} {:>11.2f}\n", dk, un.max_weight,
                           un.effective_keys, sc.max_weight, sc.effective_keys);
    }
    ch.say(fmt::format(
        "  Averages over {} random 16x16 score matrices (q, k ~ N(0,1)): 'eff. keys' = exp(entropy) of a row,\n"
        "  16 = uniform, 1 = one-hot. Unscaled, the rows become one-hot as d_k grows (softmax saturates and its\n"
        "  gradient vanishes); scaled, they stay the same at every d_k.\n{}",
        trials, table));
  });
}
