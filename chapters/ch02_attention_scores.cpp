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
#include "course/i18n.hpp"
#include "course/layernorm_notes.hpp"
#include "course/layout.hpp"
#include "course/shape_check.hpp"
#include "exact/compare.hpp"
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
static std::string tf_str_suppressed(const Tensor& t);

static Tensor matrix(const std::vector<std::vector<float>>& rows);

// A list of numbers as "[550, 5.5]" (6 significant digits).
static std::string num_list(const std::vector<double>& xs);

// Does PyTorch print this tensor in scientific notation? (its "e+01"/"e-02" suffixes)
static bool printed_in_sci_mode(const std::string& printed);

// The note under one query's output in article 004's toy example: which keys it attends to (the
// weights above 1e-3) and, when they share the weight equally, a check that the output is the plain
// mean of their value rows, computed from v directly.  attn (1,S), out (1,Dv), v (S,Dv)
static std::string toy_output_note(Chapter& ch, const Tensor& attn, const Tensor& out, const Tensor& v);

// The note under the toy keys k (S,D): how many, and which rows are equal.
static std::string equal_keys_note(const Tensor& k);

// The note under a query's weights: its scores q.k / sqrt(D) and what softmax makes of the gap
// between the best key and the next.  q (1,D), k (S,D)
static std::string toy_scores_note(const Tensor& q, const Tensor& k);

int main(int argc, char** argv) {
  Chapter ch("ch02_attention_scores", _("Attention scores: Q K^T / sqrt(d_k)"),
             {{0, N_("§Scaled Dot-product Attention")}, {4, N_("§3.2 Multi-Head Attention (the toy example)")}});
  int64_t d_model = 768;
  ch.add_sentence_flags(d_model, _("size C of each token vector, = dim_k here, BERT-base's by default"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base

    // ---------------------------------------------------------------- 1) q = k = v = embeddings
    ch.section(_("Step 1: the sentence as vectors, used as query, key and value"),
               _("article 000 §Scaled Dot-product Attention"));
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    ch.show("inputs.input_ids", input_ids,
            trf("the ids of chapter 1: one row, T = {T} tokens", fmt::arg("T", tokens.size())), Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, d_model);
    Tensor inputs_embeds = token_emb(input_ids);
    const Tensor& query = inputs_embeds;
    const Tensor& key = inputs_embeds;
    ch.show("inputs_embeds.size()", size_str(shape_of(inputs_embeds)),
            key.data() == query.data()
                ? _("no projections yet: article 000 uses inputs_embeds itself as query, key and value")
                : _("no projections yet: query is inputs_embeds, but key is another tensor (article 000 uses "
                    "inputs_embeds for both)"),
            Shown::Twin);

    // ---------------------------------------------------------------- 2) scores
    ch.section(_("Step 2: scores = Q K^T / sqrt(dim_k)"), _("article 000 §Scaled Dot-product Attention"));
    const int64_t dim_k = static_cast<int64_t>(key.shape()[2]);
    ch.show("dim_k", std::to_string(dim_k), _("key.size(-1): the length D of each key vector"), Shown::Twin);
    // scores = Q K^T / sqrt(D)
    // (B,T,D) x (B,S,D)^T -> (B,T,S)
    Tensor scores = scaled_scores(query, key);
    const size_t T = tokens.size();
    // every step below reads scores as (1,T,T): another shape stops here, naming the code
    require_shape(scores, {1, T, T}, "scores", _("one score per (query, key) pair: (B,T,S)"), ch.ran("scaled_scores"));
    ch.show("scores.size()", size_str(shape_of(scores)),
            _("one score for every (query token, key token) pair: (B,T,S) with T = S here"));
    size_t diag_wins = 0;  // rows whose largest score is on the diagonal
    for (size_t t = 0; t < T; ++t) {
      bool wins = true;
      for (size_t s = 0; s < T; ++s) wins = wins && (s == t || scores(0, t, s) < scores(0, t, t));
      diag_wins += wins;
    }
    // torch's grad_fn names the last op: the division, if scaled_scores divided Q K^T at all
    const bool divided = max_abs_diff(scores, bmm_nt(query, key))() != 0.0f;
    ch.show("scores", scores, {divided ? "DivBackward0" : "BmmBackward0"},
            trf("row t = how strongly token t's query matches every key; the diagonal is the row's largest score in "
                "{n} of the {T} rows",
                fmt::arg("n", diag_wins), fmt::arg("T", T)),
            Shown::Twin);
    // The diagonal: q = k makes scores[t,t] = |e_t|^2 / sqrt(D).
    const double d = static_cast<double>(dim_k);
    const auto row = [](const std::string& a, const std::string& b, const std::string& c, const std::string& e) {
      return "  " + pad_right(a, 12) + " " + fmt::format("{:>12} {:>16} {:>12}", b, c, e) + "\n";
    };
    std::string table = row(_("token"), "|e_t|^2", "|e_t|^2/sqrt(D)", "scores[t,t]");
    double off_sq = 0, min_abs = INFINITY, max_abs = 0, worst = 0, diag_lo = INFINITY, diag_hi = -INFINITY;
    double sq_lo = INFINITY, sq_hi = 0;  // |e_t|^2 over the rows
    for (size_t t = 0; t < T; ++t) {
      double sq = 0;
      for (int64_t c = 0; c < dim_k; ++c) sq += static_cast<double>(inputs_embeds(0, t, c)) * inputs_embeds(0, t, c);
      const double diag = scores(0, t, t);
      table += row(tokens[t], fmt::format("{:.2f}", sq), fmt::format("{:.4f}", sq / std::sqrt(d)),
                   fmt::format("{:.4f}", diag));
      worst = std::max(worst, std::fabs(diag - sq / std::sqrt(d)) / std::max(1.0, sq / std::sqrt(d)));
      diag_lo = std::min(diag_lo, diag), diag_hi = std::max(diag_hi, diag);
      sq_lo = std::min(sq_lo, sq), sq_hi = std::max(sq_hi, sq);
      for (size_t s = 0; s < T; ++s) {
        double a = std::fabs(static_cast<double>(scores(0, t, s)));
        if (a != 0) min_abs = std::min(min_abs, a), max_abs = std::max(max_abs, a);
        if (s != t) off_sq += static_cast<double>(scores(0, t, s)) * scores(0, t, s);
      }
    }
    // the explanation holds only while scores[t,t] is |e_t|^2 / sqrt(D), which the verdict checks
    constexpr double kDiagTol = 1e-5;  // relative: what float32 rounding of C products and a sum leaves
    const bool diag_ok = worst <= kDiagTol;
    // the N(0, 1) estimates below hold only for rows copied from a table drawn N(0, 1): both measured
    const bool normal = rows_not_from_table(inputs_embeds, token_emb.weight, input_ids) == 0 &&
                        moments_of(token_emb.weight).standard_normal;
    ch.erratum(_("002 §9.2.1, line 184"),
               diag_ok ? _("the note on attention() says the dot product is multiplied by the square root of d[k] (so "
                           "do lines 62 and 192); the code divides by math.sqrt(d_k), as this step does.")
                       : _("the note on attention() says the dot product is multiplied by the square root of d[k] (so "
                           "do lines 62 and 192); the code divides by math.sqrt(d_k)."));

    ch.say(trf(diag_ok && normal ? N_("  On the diagonal, q = k gives scores[t,t] = |e_t|^2 / sqrt(D). Each of the D = {D} "
                            "entries of\n"
                            "  an embedding row is N(0,1), so |e_t|^2 is about D and the diagonal about\n"
                            "  D/sqrt(D) = sqrt(D) = {root:.2f}; here it runs from {lo:.2f} to {hi:.2f}. Off the "
                            "diagonal two\n"
                            "  independent rows meet: a sum of D products with mean 0 and variance 1, so about N(0, D), "
                            "and\n"
                            "  divided by sqrt(D) about N(0, 1). Here their root-mean-square is {off:.3f}.")
                       : N_("  On the diagonal, scores[t,t] runs from {lo:.2f} to {hi:.2f}, and off it the "
                            "root-mean-square is {off:.3f};\n"
                            "  |e_t|^2 / sqrt(D), with D = {D}, is in the table's second column."),
               fmt::arg("D", dim_k), fmt::arg("root", std::sqrt(d)), fmt::arg("lo", diag_lo), fmt::arg("hi", diag_hi),
               fmt::arg("off", T > 1 ? std::sqrt(off_sq / static_cast<double>(T * T - T)) : 0.0)) +
           "\n" + table + "  " +
           ch.verdict(diag_ok,
                      N_("scores[t,t] against |e_t|^2 / sqrt(D): largest relative gap {g:.2g} (float32 rounding "
                         "stays below {tol:.0e})"),
                      N_("scores[t,t] is no longer |e_t|^2 / sqrt(D): largest relative gap {g:.2g}, above {tol:.0e}"),
                      fmt::arg("g", worst), fmt::arg("tol", kDiagTol)));
    ch.erratum(_("000 §Scaled Dot-product Attention, line 195"),
               trf(normal ? N_("the article says a token's dot product with itself is 1. It is |e_t|^2: here {sq_lo:.1f} "
                               "to {sq_hi:.1f}, and {lo:.2f} to {hi:.2f} once divided by sqrt(D) (about sqrt(D) = "
                               "{root:.1f}).")
                          : N_("the article says a token's dot product with itself is 1. It is |e_t|^2: here {sq_lo:.1f} "
                               "to {sq_hi:.1f}, and {lo:.2f} to {hi:.2f} once divided by sqrt(D)."),
                   fmt::arg("sq_lo", sq_lo), fmt::arg("sq_hi", sq_hi), fmt::arg("lo", sq_lo / std::sqrt(d)),
                   fmt::arg("hi", sq_hi / std::sqrt(d)), fmt::arg("root", std::sqrt(d))));
    const double ratio = max_abs / min_abs;
    const bool sci = printed_in_sci_mode(str(scores));
    if (!sci)
      ch.say(trf("  Why fixed notation: PyTorch prints every entry with one format; largest |value| / smallest =\n"
                 "  {hi:.4g} / {lo:.4g} = {r:.0f}, at most 1000, so 4 decimals show both ends.",
                 fmt::arg("hi", max_abs), fmt::arg("lo", min_abs), fmt::arg("r", ratio)));
    else if (ratio > 1000)
      ch.say(trf("  Why sci mode: PyTorch prints every entry with one format; largest |value| / smallest =\n"
                 "  {hi:.4g} / {lo:.4g} = {r:.0f}, and above 1000 it switches to d.dddde+xx so that both ends keep 5\n"
                 "  significant digits.",
                 fmt::arg("hi", max_abs), fmt::arg("lo", min_abs), fmt::arg("r", ratio)));
    else
      ch.say(trf("  Why sci mode: PyTorch prints every entry with one format, and switches to d.dddde+xx when an\n"
                 "  entry is above 1e8 or below 1e-4 in size: here they range from {lo:.4g} to {hi:.4g}.",
                 fmt::arg("hi", max_abs), fmt::arg("lo", min_abs)));
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.title = _("scores: rows = queries, columns = keys");
    hopt.cell_width = 7;
    Tensor score_matrix = xt::view(scores, 0, xt::all(), xt::all());  // (T,S)
    ch.figure(heatmap(score_matrix, tokens, tokens, hopt));

    // ---------------------------------------------------------------- 3) article 004's toy example
    const Tensor k = matrix({{10, 0, 0}, {0, 10, 0}, {0, 0, 10}, {0, 0, 10}});  // (S,D) = (4,3)
    const Tensor v = matrix({{1, 0}, {10, 0}, {100, 5}, {1000, 6}});            // (S,Dv) = (4,2)
    const std::vector<std::vector<float>> q_rows = {{0, 0, 10}, {0, 10, 0}, {10, 10, 0}};
    ch.section(trf("Step 3: article 004's toy example, one query at a time, then all {n}", fmt::arg("n", q_rows.size())),
               _("article 004 §3.2 Multi-Head Attention, scaled_dot_product_attention"));
    ch.show("k", tf_str(k), equal_keys_note(k), Shown::Twin);
    ch.show("v", tf_str(v), _("the value carried by each key"), Shown::Twin);
    ch.erratum(_("004 §3.2, line 189"),
               trf("the comment on v says (4, 3); v has {r} rows of {c} numbers, ({r}, {c}), as the output's second "
                   "dimension shows.",
                   fmt::arg("r", v.shape()[0]), fmt::arg("c", v.shape()[1])));
    // The article's three queries, taken one at a time in the order of TensorFlow's tutorial.
    const size_t order[] = {1, 0, 2};
    std::vector<Tensor> single_attn(q_rows.size());
    for (size_t row : order) {
      // Attention(q, K, V) for one query: (1,D) -> weights (1,S), output (1,Dv)
      Tensor temp_q = matrix({q_rows[row]});
      Tensor temp_attn;
      Tensor temp_out = scaled_dot_product_attention_004(temp_q, k, v, nullptr, &temp_attn);
      single_attn[row] = temp_attn;
      ch.show("temp_q", tf_str(temp_q), "", Shown::Twin);
      ch.show("temp_attn", tf_str_suppressed(temp_attn), row == order[0] ? toy_scores_note(temp_q, k) : "",
              Shown::Twin);
      ch.show("temp_out", tf_str_suppressed(temp_out), toy_output_note(ch, temp_attn, temp_out, v), Shown::Twin);
      if (row == order[0])
        ch.erratum(_("004 Q&A §sqrt(d_model)的解释, line 799"),
                   trf("the article says attention divides the scores by sqrt(d_model); its code divides by "
                       "sqrt(dk), dk = the last dimension of k: {dk} here, and depth = d_model / num_heads (64 "
                       "for 512 and 8 heads) in its MultiHeadAttention, not d_model.",
                       fmt::arg("dk", k.shape()[1])));
    }
    // All three queries at once: the same rows, computed as one matrix product.
    // (T,D) = (3,3) -> weights (3,4), output (3,2)
    Tensor q = matrix(q_rows);
    Tensor att;
    Tensor out = scaled_dot_product_attention_004(q, k, v, nullptr, &att);
    double stack_gap = 0;  // |att - the single-query rows|
    for (size_t r = 0; r < q_rows.size(); ++r)
      for (size_t s = 0; s < att.shape()[1]; ++s)
        stack_gap = std::max(stack_gap, std::fabs(static_cast<double>(att(r, s)) - single_attn[r](0, s)));
    const bool stacked = stack_gap <= 1e-6;
    ch.show("att", tf_str_suppressed(att),
            ch.verdict(stacked,
                       N_("the {n} rows above, stacked (largest difference {d:.2g}): queries are independent of each "
                          "other"),
                       N_("the {n} rows differ from the single-query rows above by {d:.2g}: stacking the queries "
                          "changed their weights"),
                       fmt::arg("n", q_rows.size()), fmt::arg("d", stack_gap)));
    ch.show("out", tf_str_suppressed(out), _("= att v: each output row is a weighted mean of the value rows"));
    size_t tiny = 0, zero = 0;
    double tiny_lo = INFINITY, tiny_hi = 0;
    for (float w : att) {
      if (w == 0.0f) ++zero;
      if (w > 0.0f && w < 5e-9f) ++tiny, tiny_lo = std::min<double>(tiny_lo, w), tiny_hi = std::max<double>(tiny_hi, w);
    }
    std::string hidden;
    if (tiny > 0)
      hidden = trf("{n} weights printed as 0. above are not zero: they lie between {lo:.3g} and {hi:.3g}, hidden by "
                   "the article's suppressed printout",
                   fmt::arg("n", tiny), fmt::arg("lo", tiny_lo), fmt::arg("hi", tiny_hi));
    if (zero > 0)
      hidden += (hidden.empty() ? "" : "; ") +
                trf("{n} weights are exactly 0: their score is more than ~104 below the best, and e^-104 underflows "
                    "float32",
                    fmt::arg("n", zero));
    if (hidden.empty()) hidden = _("no weight is below 5e-9: the suppressed printout hid nothing");
    ch.show("att  # np.set_printoptions(suppress=False)", tf_str(att), hidden, Shown::Twin);
    ch.show("out  # np.set_printoptions(suppress=False)", tf_str(out), "", Shown::Twin);
  });
}

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

static std::string num_list(const std::vector<double>& xs) {
  std::string s = "[";
  // |x| < 5e-9 shows as 0, as in the suppressed printouts
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + fmt::format("{:.6g}", std::fabs(xs[i]) < 5e-9 ? 0.0 : xs[i]);
  return s + "]";
}

static bool printed_in_sci_mode(const std::string& printed) {
  for (size_t i = 1; i + 2 < printed.size(); ++i)
    if (printed[i] == 'e' && std::isdigit(static_cast<unsigned char>(printed[i - 1])) &&
        (printed[i + 1] == '+' || printed[i + 1] == '-') && std::isdigit(static_cast<unsigned char>(printed[i + 2])))
      return true;
  return false;
}

static std::string toy_output_note(Chapter& ch, const Tensor& attn, const Tensor& out, const Tensor& v) {
  std::vector<double> keys, weights;
  for (size_t s = 0; s < attn.shape()[1]; ++s)
    if (attn(0, s) > 1e-3f) keys.push_back(static_cast<double>(s)), weights.push_back(attn(0, s));
  std::vector<double> got(out.shape()[1]), mean(out.shape()[1], 0.0);
  for (size_t j = 0; j < got.size(); ++j) {
    got[j] = out(0, j);
    for (double s : keys) mean[j] += v(static_cast<size_t>(s), j) / static_cast<double>(keys.size());
  }
  const auto [lo, hi] = std::minmax_element(weights.begin(), weights.end());
  if (keys.empty() || *hi - *lo > 1e-6)
    return trf("weights {w} on keys {keys}: the output {out} is the weighted mean of their value rows",
               fmt::arg("w", num_list(weights)), fmt::arg("keys", num_list(keys)), fmt::arg("out", num_list(got)));
  double gap = 0;
  for (size_t j = 0; j < got.size(); ++j) gap = std::max(gap, std::fabs(got[j] - mean[j]) / std::max(1.0, std::fabs(mean[j])));
  const bool ok = gap <= 1e-5;
  if (keys.size() == 1)
    return ch.verdict(ok,
                      N_("matches key {key} only (weight {w:.6g}): the output {out} is value row {key}, {mean}"),
                      N_("matches key {key} only (weight {w:.6g}), but the output {out} is not value row {key}, "
                         "{mean}"),
                      fmt::arg("key", keys[0]), fmt::arg("w", weights[0]), fmt::arg("out", num_list(got)),
                      fmt::arg("mean", num_list(mean)));
  return ch.verdict(ok,
                    N_("matches keys {keys} equally ({w:.6g} each): the output {out} is the mean of their value "
                       "rows, {mean}"),
                    N_("matches keys {keys} equally ({w:.6g} each), but the output {out} is not the mean of their "
                       "value rows, {mean}"),
                    fmt::arg("keys", num_list(keys)), fmt::arg("w", weights[0]), fmt::arg("out", num_list(got)),
                    fmt::arg("mean", num_list(mean)));
}

static std::string toy_scores_note(const Tensor& q, const Tensor& k) {
  const size_t S = k.shape()[0], D = k.shape()[1];
  std::vector<double> scores(S, 0.0);
  for (size_t s = 0; s < S; ++s) {
    for (size_t j = 0; j < D; ++j) scores[s] += static_cast<double>(q(0, j)) * k(s, j);
    scores[s] /= std::sqrt(static_cast<double>(D));
  }
  const double best = *std::max_element(scores.begin(), scores.end());
  double next = -INFINITY;
  for (double x : scores)
    if (x < best) next = std::max(next, x);
  if (!std::isfinite(next))
    return trf("q.k / sqrt({D}) = {scores}: every key scores the same, so softmax gives each 1/{S}",
               fmt::arg("D", D), fmt::arg("scores", num_list(scores)), fmt::arg("S", S));
  const double gap = best - next;
  return trf("q.k / sqrt({D}) = {scores}: a key {gap:.3g} below the best gets e^-{gap:.3g} = {w:.2g} times its "
             "weight",
             fmt::arg("D", D), fmt::arg("scores", num_list(scores)), fmt::arg("gap", gap),
             fmt::arg("w", std::exp(-gap)));
}

static std::string equal_keys_note(const Tensor& k) {
  const size_t S = k.shape()[0], D = k.shape()[1];
  std::vector<std::string> pairs;
  for (size_t a = 0; a < S; ++a)
    for (size_t b = a + 1; b < S; ++b)
      if (std::equal(&k(a, 0), &k(a, 0) + D, &k(b, 0)))
        pairs.push_back(trf("{a} and {b}", fmt::arg("a", a), fmt::arg("b", b)));
  if (pairs.empty()) return trf("{S} keys, no two of them equal", fmt::arg("S", S));
  std::string list;
  for (size_t i = 0; i < pairs.size(); ++i) list += (i ? ", " : "") + pairs[i];
  return trf("{S} keys; keys {pairs} are equal", fmt::arg("S", S), fmt::arg("pairs", list));
}
