// ch03_softmax: from scores to attention weights, and from weights to outputs.
//
// Follows: article 000 "Scaled Dot-product Attention" (weights = F.softmax(scores, dim=-1),
//          weights.sum(dim=-1), attn_outputs = torch.bmm(weights, value) -> torch.Size([1, 5, 768])).
// Formula: softmax(x)_s = exp(x_s - max_j x_j) / sum_j exp(x_j - max_j x_j)     (B,T,S) -> (B,T,S)
//          out_t = sum_s weights[t,s] v_s                                       (B,T,S) x (B,S,D) -> (B,T,D)
// Run:     ./build/ch03_softmax [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch03_softmax --d-model 16     (small scores: the naive softmax no longer overflows)
//          ./build/ch03_softmax --d-k 512        (the scaling matters more as d_k grows)
//
// Every note that states a fact about a value computes it (row_stats, peakedness); the checks
// (rows sum to 1, by hand = F.softmax, the scaling table's trends) are verdicts: OK / NOT OK.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "base/code_site.hpp"
#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/shape_check.hpp"
#include "course/softmax_notes.hpp"
#include "course/weight_stats.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/rng.hpp"
#include "text/tokenizer.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// The chapter's small helpers, defined after main.
// torch.exp(x) as PyTorch's CPU kernel computes it (SLEEF), or std::exp with --naive.   x (any) -> same shape
static Tensor torch_exp(const Tensor& x, bool naive);
// x / x.sum(dim=-1, keepdim=True)   (B,T,S) -> (B,T,S)
static Tensor divide_by_row_sum(const Tensor& x);
// x - x.amax(dim=-1, keepdim=True)   (B,T,S) -> (B,T,S)
static Tensor subtract_row_max(const Tensor& x);
// The notes' statistics (row_stats, peakedness, ...) are in src/course/weight_stats.hpp.
// Step 5's two verdicts on the columns of its table (the table and the naive softmax's note:
// src/course/softmax_notes.hpp).
static void scaling_verdicts(Chapter& ch, const std::vector<int64_t>& dks, const std::vector<Peak>& unscaled,
                             const std::vector<Peak>& scaled);

// float32 results of the same sum in different orders agree up to rounding below these.
constexpr double kSumTol = 1e-5, kSoftmaxTol = 1e-6;

int main(int argc, char** argv) {
  Chapter ch("ch03_softmax", _("Softmax: scores -> weights -> outputs"),
             {{0, N_("§Scaled Dot-product Attention (softmax, sum, bmm; its re-post 003 is the same)")}});
  int64_t d_model = 768, d_k = 64;
  ch.add_sentence_flags(d_model, _("size C of each token vector, = dim_k of the scores"));
  ch.option("--d-k", d_k, _("size of the random query/key vectors of the scaling demo, one BERT head's by default"), 1,
            65536);

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base

    // ---------------------------------------------------------------- 1) the scores of chapter 2
    ch.section(_("Step 1: the scores of chapter 2"), _("article 000 §Scaled Dot-product Attention"));
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
    const size_t T = tokens.size();
    // scores = Q K^T / sqrt(D)
    // (B,T,S)
    Tensor scores = scaled_scores(query, key);
    // every step below reads scores as (1,T,T): another shape stops here, naming the code
    require_shape(scores, {1, T, T}, "scores", _("one score per (query, key) pair: (B,T,S)"), ch.ran("scaled_scores"));
    const RowStats sc = row_stats(scores);
    ch.show("scores", scores, {"DivBackward0"},
            trf("as in chapter 2, row t scores query t against every key; the diagonal (a token against itself) is "
                "its row's largest score in {n} of the {T} rows",
                fmt::arg("n", sc.diagonal_max_rows), fmt::arg("T", T)),
            Shown::Twin);

    // ---------------------------------------------------------------- 2) softmax
    ch.section(_("Step 2: weights = softmax(scores, dim=-1)"), _("article 000 §Scaled Dot-product Attention"));
    // weights[t,s] = exp(scores[t,s] - max) / sum_j exp(scores[t,j] - max)
    // (B,T,S)
    Tensor weights = softmax(scores);
    {
      const RowStats w = row_stats(weights);
      // softmax makes best / runner-up = e^(their scores' gap): checked against the scores printed above
      const bool exp_gap = T > 1 && std::fabs(std::log(w.min_ratio) - sc.min_gap) <= 1e-3 * std::max(1.0, sc.min_gap) &&
                           std::fabs(std::log(w.max_ratio) - sc.max_gap) <= 1e-3 * std::max(1.0, sc.max_gap);
      // one whole message each: with one key there is no runner-up
      const bool in_unit = w.min >= 0 && w.max <= 1;  // softmax's range, checked on what came out
      const std::string why =
          !in_unit ? trf("the weights are not all in [0, 1], as softmax's would be: here from {lo:.3g} to {hi:.3g}",
                         fmt::arg("lo", w.min), fmt::arg("hi", w.max))
          : T == 1  ? trf("every weight lies in [0, 1]: here from {lo:.3g} to {hi:.3g}", fmt::arg("lo", w.min),
                        fmt::arg("hi", w.max))
          : exp_gap ? trf("every weight lies in [0, 1]: here from {lo:.3g} to {hi:.3g}. In each row the largest weight "
                          "is {rlo:.3g} to {rhi:.3g} times the runner-up: e^gap, where the gap between their scores is "
                          "{glo:.3g} to {ghi:.3g}",
                          fmt::arg("lo", w.min), fmt::arg("hi", w.max), fmt::arg("rlo", w.min_ratio),
                          fmt::arg("rhi", w.max_ratio), fmt::arg("glo", sc.min_gap), fmt::arg("ghi", sc.max_gap))
                    : trf("every weight lies in [0, 1]: here from {lo:.3g} to {hi:.3g}. In each row the largest weight "
                          "is {rlo:.3g} to {rhi:.3g} times the runner-up, e^({llo:.3g} to {lhi:.3g}), while the scores "
                          "printed above differ by {glo:.3g} to {ghi:.3g} there: these weights are not the softmax of "
                          "those scores",
                          fmt::arg("lo", w.min), fmt::arg("hi", w.max), fmt::arg("rlo", w.min_ratio),
                          fmt::arg("rhi", w.max_ratio), fmt::arg("llo", std::log(w.min_ratio)),
                          fmt::arg("lhi", std::log(w.max_ratio)), fmt::arg("glo", sc.min_gap),
                          fmt::arg("ghi", sc.max_gap));
      ch.show("weights", weights, {"SoftmaxBackward0"}, why, Shown::Twin);
    }
    // (B,T,S) -> (B,T)
    Tensor row_sums = sum_lastdim(weights);
    {
      double off = 0;
      for (float s : row_sums) off = std::max(off, std::fabs(static_cast<double>(s) - 1.0));
      ch.show("weights.sum(dim=-1)", row_sums, {"SumBackward1"},
              ch.verdict(off <= kSumTol,
                         N_("each query's weights sum to 1 (largest |sum - 1| = {d:.2g}, tolerance for float rounding: "
                            "{tol}): a weighted average over the keys"),
                         N_("the weights of a query no longer sum to 1: largest |sum - 1| = {d:.2g}, above {tol}, so a "
                            "row is not a weighted average"),
                         fmt::arg("d", off), fmt::arg("tol", short_sci(kSumTol))));
    }
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.vmin = 0.0f;  // weights: one fixed scale, 0 blank and 1 darkest, so the pictures compare
    hopt.vmax = 1.0f;
    hopt.title = _("weights: rows = queries, columns = keys (each row sums to 1)");
    hopt.cell_width = 7;
    ch.figure(heatmap(xt::view(weights, 0, xt::all(), xt::all()), tokens, tokens, hopt));

    // ---------------------------------------------------------------- 3) weighted sum of the values
    ch.section(_("Step 3: attn_outputs = bmm(weights, value)"), _("article 000 §Scaled Dot-product Attention"));
    // out = W V
    // (B,T,S) x (B,S,D) -> (B,T,D)
    const CodeSite out_site{__FILE__, __LINE__ + 1, "attn_outputs = bmm(weights, value)"};
    Tensor attn_outputs = bmm(weights, value);
    require_shape(attn_outputs, shape_of(value), "attn_outputs",
                  _("one weighted mean of the value rows per token: (B,T,D)"), code_site_words(out_site));
    ch.show("attn_outputs.shape", size_str(shape_of(attn_outputs)), _("one new vector per token, same size as before"));
    {
      const double gap = max_abs_diff(attn_outputs, value)();
      double vmax = 0;
      for (float v : value) vmax = std::max(vmax, std::fabs(static_cast<double>(v)));
      const double off = off_diagonal_mass(weights);
      double sum_off = 0;  // a mean's weights are >= 0 and sum to 1 (step 2's checks, read again)
      for (float v : sum_lastdim(weights)) sum_off = std::max(sum_off, std::fabs(static_cast<double>(v) - 1.0));
      const bool mean = row_stats(weights).min >= 0 && sum_off <= kSumTol;
      ch.show("attn_outputs", attn_outputs, {"BmmBackward0"},
              trf(mean ? N_("each row is the weighted mean of the value rows. With q = k = v the weights off the "
                            "diagonal add up to at most {off:.3g} in a row, so max |attn_outputs - value| = {gap:.3g} "
                            "against values up to {vmax:.3g} (chapter 4's projections are what lets a token look "
                            "elsewhere)")
                       : N_("each row mixes the value rows with step 2's weights, which are not a mean's (not all in "
                            "[0, 1], or not summing to 1). The weights off the diagonal add up to at most {off:.3g} in "
                            "a row, and max |attn_outputs - value| = {gap:.3g} against values up to {vmax:.3g}"),
                  fmt::arg("off", off), fmt::arg("gap", gap), fmt::arg("vmax", vmax)),
              Shown::Twin);
    }
    ch.erratum(_("000 §Scaled Dot-product Attention, formula (5), lines 96-99"),
               _("the text says softmax of q_t against each k_s gives the similarity of q_t with each v_s. The weights "
                 "come from the keys only; the values are just averaged with them (and the sum in (5) runs over the n "
                 "keys, not to m)."));

    // ---------------------------------------------------------------- 4) why subtract the max
    ch.section(_("Step 4: why softmax subtracts the row maximum"),
               _("article 000 §Scaled Dot-product Attention, the softmax of formula (4)"));
    // raw = Q K^T, without the 1/sqrt(D)
    // (B,T,S)
    Tensor raw = bmm_nt(query, key);
    {
      // |e_t|^2 from the embeddings themselves, against raw's diagonal
      const RowStats r = row_stats(raw);
      const double gap = diagonal_vs_squared_norms(raw, inputs_embeds);
      ch.show("raw = torch.bmm(query, key.transpose(1, 2))", raw, {"BmmBackward0"},
              ch.verdict(gap <= kSumTol,
                         N_("unscaled: the diagonal is |e_t|^2 (largest relative gap {g:.2g}, tolerance for float "
                            "rounding: {tol}), here {lo:.4g} to {hi:.4g}; for N(0,1) entries its expected value is D = "
                            "{D}"),
                         N_("the diagonal, {lo:.4g} to {hi:.4g}, is no longer |e_t|^2: largest relative gap {g:.2g}, "
                            "above {tol}"),
                         fmt::arg("g", gap), fmt::arg("tol", short_sci(kSumTol)), fmt::arg("lo", r.diag_min),
                         fmt::arg("hi", r.diag_max), fmt::arg("D", dim_k)),
              Shown::Twin);
    }
    // naive softmax: exp(x) / sum exp(x)
    Tensor e = torch_exp(raw, ch.naive);
    size_t n_inf = 0;
    for (float x : e) n_inf += std::isinf(x);
    ch.show("torch.exp(raw)", e, {"ExpBackward0"},
            trf("float32 holds numbers up to 3.4e38, so exp(x) is inf for every x > 88.72: here {n} of the {N} "
                "entries",
                fmt::arg("n", n_inf), fmt::arg("N", e.size())),
            Shown::Twin);
    Tensor library = softmax(raw);
    Tensor naive_w = divide_by_row_sum(e);
    ch.show("torch.exp(raw) / torch.exp(raw).sum(dim=-1, keepdim=True)", naive_w, {"DivBackward0"},
            naive_softmax_note(ch, naive_w, library, kSoftmaxTol), Shown::Twin);
    // stable softmax: shift each row so that its largest entry is 0, then exp never exceeds 1
    Tensor shifted = subtract_row_max(raw);
    ch.show("shifted = raw - raw.amax(dim=-1, keepdim=True)", shifted, {"SubBackward0"},
            trf("softmax(x) = softmax(x - c) for any c: the common factor e^-c cancels. Every row now peaks at "
                "{hi:.4g}; the lowest entry is {lo:.4g}",
                fmt::arg("hi", row_stats(shifted).max), fmt::arg("lo", row_stats(shifted).min)),
            Shown::Twin);
    Tensor stable = divide_by_row_sum(torch_exp(shifted, ch.naive));
    {
      const RowStats s = row_stats(stable);
      const size_t zeros = count_zeros(stable), lost = std::count_if(stable.begin(), stable.end(), [](float x) {
        return !std::isfinite(x);
      });
      ch.show("torch.exp(shifted) / torch.exp(shifted).sum(dim=-1, keepdim=True)", stable, {"DivBackward0"},
              lost == 0 ? trf("exp(0) = 1 for each row's maximum, so every sum lies between 1 and S and nothing "
                              "overflows. The weights run from {lo:.3g} to {hi:.3g}; {z} of them are exactly 0 (e^x "
                              "underflows below x = -103.3)",
                              fmt::arg("lo", s.min), fmt::arg("hi", s.max), fmt::arg("z", zeros))
                        : trf("{n} of the {N} weights are not finite: exp still overflowed, so the shift did not bring "
                              "every row's maximum down to 0",
                              fmt::arg("n", lost), fmt::arg("N", stable.size())),
              Shown::Twin);
    }
    {
      const double d = max_abs_diff(library, stable)();
      ch.show("F.softmax(raw, dim=-1)", library, {"SoftmaxBackward0"},
              ch.verdict(d <= kSoftmaxTol,
                         N_("F.softmax does the shift for you: max |F.softmax - by hand| = {d:.3g} (tolerance for "
                            "float rounding: {tol})"),
                         N_("max |F.softmax - by hand| = {d:.3g}, above {tol}: the recipe by hand no longer gives "
                            "F.softmax's weights"),
                         fmt::arg("d", d), fmt::arg("tol", short_sci(kSoftmaxTol))),
              Shown::Twin);
    }
    {
      // The same recipe by hand on the scaled scores of step 2, against F.softmax of them.
      Tensor by_hand = divide_by_row_sum(torch_exp(subtract_row_max(scores), ch.naive));
      const double d = max_abs_diff(by_hand, softmax(scores))();
      const bool ok = d <= kSoftmaxTol;
      ch.say("  " + ch.verdict(ok,
                               N_("on the scaled scores of step 2, max |by hand - F.softmax| = {d:.3g} (tolerance for "
                                  "float rounding: {tol}): F.softmax multiplies by 1/sum where the recipe divides by "
                                  "the sum, so the last bits of a float may differ"),
                               N_("on the scaled scores of step 2, max |by hand - F.softmax| = {d:.3g}, above {tol}: "
                                  "the recipe by hand no longer gives F.softmax's weights"),
                               fmt::arg("d", d), fmt::arg("tol", short_sci(kSoftmaxTol))));
    }

    // ---------------------------------------------------------------- 5) what sqrt(d_k) does
    ch.section(_("Step 5: what dividing by sqrt(d_k) does to the weights"),
               _("article 000 §Scaled Dot-product Attention, formula (4)"));
    // After the learned projections of chapter 4, queries and keys are no longer copies of each
    // other: model them as independent N(0,1) vectors of size d_k.
    // q, k (B,T,D) with D = d_k; qk (B,T,S) has entries of variance d_k
    Tensor q = randn({1, T, static_cast<size_t>(d_k)});
    Tensor k = randn({1, T, static_cast<size_t>(d_k)});
    Tensor qk = bmm_nt(q, k);
    ch.show("qk = torch.bmm(q, k.transpose(1, 2))", qk, {},
            trf("q, k = torch.randn(1, {T}, {dk}): each dot product is a sum of {dk} products of N(0,1) numbers, "
                "expected std sqrt({dk}) = {sd:.3g}; these {N} have std {got:.3g}",
                fmt::arg("T", T), fmt::arg("dk", d_k), fmt::arg("sd", std::sqrt(static_cast<double>(d_k))),
                fmt::arg("N", qk.size()), fmt::arg("got", std_of(qk))),
            Shown::Twin);
    Tensor unscaled_w = softmax(qk);
    const Peak pu = peakedness(unscaled_w);
    ch.show("F.softmax(qk, dim=-1)", unscaled_w, {},
            trf("without scaling: the largest weight of a row is {m:.3f} on average, and a row spreads over {e:.2f} "
                "of the {T} keys (exp of its entropy)",
                fmt::arg("m", pu.max_weight), fmt::arg("e", pu.effective_keys), fmt::arg("T", T)),
            Shown::Twin);
    // qk / sqrt(d_k)   (B,T,S)
    Tensor qk_scaled = scaled_scores(q, k);
    Tensor scaled_w = softmax(qk_scaled);
    const Peak ps = peakedness(scaled_w);
    ch.show("F.softmax(qk / sqrt(d_k), dim=-1)", scaled_w, {},
            trf("scaled: the scores have std {sd:.3g}; the largest weight is {m:.3f} on average, and a row spreads "
                "over {e:.2f} of the {T} keys",
                fmt::arg("sd", std_of(qk_scaled)), fmt::arg("m", ps.max_weight), fmt::arg("e", ps.effective_keys),
                fmt::arg("T", T)),
            Shown::Twin);
    // q and k are random vectors, not the sentence's tokens: label them q0.. and k0..
    const std::vector<std::string> q_labels = numbered("q", T), k_labels = numbered("k", T);
    hopt.title = _("softmax(qk), unscaled: rows = random queries, columns = random keys");
    ch.figure(heatmap(xt::view(unscaled_w, 0, xt::all(), xt::all()), q_labels, k_labels, hopt));
    hopt.title = _("softmax(qk / sqrt(d_k)), scaled: the same queries and keys");
    ch.figure(heatmap(xt::view(scaled_w, 0, xt::all(), xt::all()), q_labels, k_labels, hopt));

    // The same measurement for several d_k, on a private generator (it does not disturb --seed).
    Generator g(ch.seed);
    const std::vector<int64_t> dks = {4, 16, 64, 256, 1024};
    const size_t demo_T = 16, trials = 64;
    std::vector<Peak> unscaled, scaled;
    for (int64_t dk : dks) {
      // q, k (trials, demo_T, dk) -> weights (trials, demo_T, demo_T), unscaled and scaled
      Tensor qd = randn({trials, demo_T, static_cast<size_t>(dk)}, g);
      Tensor kd = randn({trials, demo_T, static_cast<size_t>(dk)}, g);
      unscaled.push_back(peakedness(softmax(bmm_nt(qd, kd))));
      scaled.push_back(peakedness(softmax(scaled_scores(qd, kd))));
    }
    ch.say(trf("  Averages over {n} random {T}x{T} score matrices (q, k ~ N(0,1)): 'eff. keys' = exp(entropy) of a "
               "row, {T} = uniform, 1 = one-hot.",
               fmt::arg("n", trials), fmt::arg("T", demo_T)));
    ch.figure(scaling_table(dks, unscaled, scaled));
    scaling_verdicts(ch, dks, unscaled, scaled);
  });
}

// ---------------------------------------------------------------- helpers

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

// Unscaled, the rows sharpen (eff. keys falls) at every step of d_k; scaled, eff. keys stays
// within 1 key of itself at every d_k.
static void scaling_verdicts(Chapter& ch, const std::vector<int64_t>& dks, const std::vector<Peak>& unscaled,
                             const std::vector<Peak>& scaled) {
  bool falls = true;
  std::string trend;
  double lo = scaled[0].effective_keys, hi = lo;
  for (size_t i = 0; i < dks.size(); ++i) {
    if (i > 0) {
      falls = falls && unscaled[i].effective_keys < unscaled[i - 1].effective_keys;
      trend += " -> ";
    }
    trend += fmt::format("{:.2f}", unscaled[i].effective_keys);
    lo = std::min(lo, scaled[i].effective_keys);
    hi = std::max(hi, scaled[i].effective_keys);
  }
  ch.say("  " + ch.verdict(falls,
                           N_("unscaled, eff. keys falls at every step as d_k grows ({trend}): the rows turn one-hot, "
                              "softmax saturates and its gradient vanishes"),
                           N_("unscaled, eff. keys does not fall at every step as d_k grows ({trend})"),
                           fmt::arg("trend", trend)));
  const bool steady = hi - lo < 1.0;
  ch.say("  " + ch.verdict(steady,
                           N_("scaled by 1/sqrt(d_k), the scores keep variance 1 and eff. keys stays within one key at "
                              "every d_k ({lo:.2f} to {hi:.2f})"),
                           N_("the scaled column's eff. keys moves from {lo:.2f} to {hi:.2f} across the d_k, more than "
                              "one key: its scores do not keep one variance"),
                           fmt::arg("lo", lo), fmt::arg("hi", hi)));
}
