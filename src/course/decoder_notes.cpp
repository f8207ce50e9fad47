// decoder_notes.cpp: words about the decoder read from its objects (see decoder_notes.hpp).
#include "course/decoder_notes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/code_site.hpp"
#include "course/counts.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/mask_stats.hpp"
#include "exact/compare.hpp"
#include "exact/stats.hpp"

namespace ts {

namespace {
// the layers' own file, "src/transformer/annotated.cpp" (from KVCache::append's site)


// (T,S) view of a (T,S) or (1,T,S) mask: its rows and columns and entry (t, s)
struct Mask2 {
  const BTensor& m;
  size_t T, S;
  explicit Mask2(const BTensor& mask)
      : m(mask), T(mask.dimension() == 3 ? mask.shape()[1] : mask.shape()[0]), S(mask.shape().back()) {}
  bool at(size_t t, size_t s) const { return m.data()[t * S + s]; }
};

// the keys row t keeps, as ranges: "0..2, 4"
std::string row_keys(const Mask2& m, size_t t) {
  std::string out;
  for (size_t s = 0; s < m.S;) {
    if (!m.at(t, s)) {
      ++s;
      continue;
    }
    size_t e = s;
    while (e + 1 < m.S && m.at(t, e + 1)) ++e;
    out += (out.empty() ? "" : ",") + (e == s ? fmt::format("{}", s) : fmt::format("{}..{}", s, e));
    s = e + 1;
  }
  return out.empty() ? "-" : out;
}

}  // namespace

bool is_lower_triangle(const BTensor& mask) {
  const Mask2 m(mask);
  for (size_t t = 0; t < m.T; ++t)
    for (size_t s = 0; s < m.S; ++s)
      if (m.at(t, s) != (s <= t)) return false;
  return true;
}

std::string mask_sees(const BTensor& mask) {
  const Mask2 m(mask);
  bool lower = true, upper = true, all = true;
  for (size_t t = 0; t < m.T; ++t)
    for (size_t s = 0; s < m.S; ++s) {
      lower = lower && m.at(t, s) == (s <= t);
      upper = upper && m.at(t, s) == (s >= t);
      all = all && m.at(t, s);
    }
  if (all) return trf("every token sees all {S} tokens", fmt::arg("S", m.S));
  if (lower) return _("token t sees tokens 0..t, itself and the earlier ones");
  if (upper)
    return trf("token t sees tokens t..{last}, itself and the later ones: the future is visible, the past hidden",
               fmt::arg("last", m.S - 1));
  std::string rows;
  for (size_t t = 0; t < m.T; ++t) rows += fmt::format("{}{}: {}", t ? "; " : "", t, row_keys(m, t));
  return trf("the tokens each row sees: {rows}", fmt::arg("rows", rows));
}

SelfAttentionStats self_attention_stats(const Tensor& w, const BTensor& mask) {
  const size_t H = w.shape()[1], T = w.shape()[2], S = w.shape()[3];
  const Mask2 m(mask);
  SelfAttentionStats st;
  size_t n_self = 0;
  for (size_t t = 0; t < m.T; ++t)
    for (size_t s = t + 1; s < m.S; ++s) st.mask_above += m.at(t, s);
  std::vector<size_t> keys(m.T, 0);  // keys each row keeps
  for (size_t t = 0; t < m.T; ++t)
    for (size_t s = 0; s < m.S; ++s) keys[t] += m.at(t, s);
  for (size_t h = 0; h < H; ++h)
    for (size_t t = 0; t < T; ++t) {
      float sum = 0.0f;
      for (size_t s = 0; s < S; ++s) {
        const float v = w(0, h, t, s);
        sum += v;
        if (s > t) st.above = std::max(st.above, std::fabs(v));
        if (!m.at(t, s)) continue;
        ++st.kept;
        st.kept_zeros += v == 0.0f;
        if (keys[t] < 2) continue;  // self vs other: rows that see another token only
        if (s == t) st.self += v, ++n_self;
        else st.other += v, ++st.n_other;
      }
      st.row_err = std::max(st.row_err, std::fabs(sum - 1.0f));
    }
  if (n_self) st.self /= static_cast<double>(n_self);
  if (st.n_other) st.other /= static_cast<double>(st.n_other);
  return st;
}

std::string sublayer_formula(const SublayerConnection& sub, const Tensor& x) {
  SublayerConnection probe = sub;  // a copy: its dropout off, the module untouched
  probe.dropout.training = false;
  std::vector<const CodeSite*> unseen;  // the probe is not a step of the chapter
  const CodeSiteRecorder quiet(unseen);
  const Tensor zero_out = probe(x, [](const Tensor& n) { return Tensor(n * 0.0f); });
  const Tensor same_out = probe(x, [](const Tensor& n) { return n; });
  const Tensor n = sub.norm(x), zero = x * 0.0f;
  const auto near = [](const Tensor& a, const Tensor& b) { return max_abs_diff(a, b)() <= 1e-5f; };
  // f = 0 and f = identity, under each candidate formula
  if (near(zero_out, x) && near(same_out, Tensor(x + n))) return "x + f(norm(x))";
  if (near(zero_out, sub.norm(x)) && near(same_out, sub.norm(Tensor(x + x)))) return "norm(x + f(x))";
  if (near(zero_out, x) && near(same_out, Tensor(x + x))) return "x + f(x)";
  if (near(zero_out, zero) && near(same_out, n)) return "f(norm(x))";
  // the input added back at another weight a: f = 0 leaves a x, measured as <out, x> / <x, x>
  double xo = 0.0, xx = 0.0;
  for (size_t i = 0; i < x.size(); ++i)
    xo += double(x.data()[i]) * double(zero_out.data()[i]), xx += double(x.data()[i]) * double(x.data()[i]);
  const float a = xx > 0.0 ? static_cast<float>(xo / xx) : 0.0f;
  if (std::isfinite(a) && near(zero_out, Tensor(x * a)) && near(same_out, Tensor(x * a + n)))
    return fmt::format("{:.3g} x + f(norm(x))", a);
  return "";
}

double score_divisor(int64_t h, int64_t d_k) {
  const size_t C = static_cast<size_t>(h * d_k);
  Tensor q = Tensor::from_shape({1, 1, C}), k = Tensor::from_shape({1, 2, C});
  q.fill(1.0f / static_cast<float>(d_k));
  for (size_t c = 0; c < C; ++c) k(0, 0, c) = 1.0f, k(0, 1, c) = 0.0f;
  Tensor w;
  std::vector<const CodeSite*> unseen;
  {
    const CodeSiteRecorder quiet(unseen);
    attention_heads(q, k, k, h, nullptr, nullptr, &w);  // w (1,H,1,2)
  }
  // scores 1 and 0 before the division: w0 / w1 = exp(1 / divisor)
  return 1.0 / std::log(static_cast<double>(w(0, 0, 0, 0)) / static_cast<double>(w(0, 0, 0, 1)));
}

std::string copies_verdicts(Chapter& ch, const DecoderLayer& layer) {
  // max |self_attn - src_attn| over the weights and biases of the Linears: deep copies -> 0
  const size_t n = layer.self_attn.linears.size();
  float copy_gap = 0.0f;
  for (size_t i = 0; i < n; ++i)
    copy_gap = std::max({copy_gap, max_abs_diff(layer.self_attn.linears[i].weight, layer.src_attn.linears[i].weight)(),
                         max_abs_diff(layer.self_attn.linears[i].bias, layer.src_attn.linears[i].bias)()});
  // W_q vs W_k inside one block: two independent draws
  const float qk_gap = max_abs_diff(layer.self_attn.linears[0].weight, layer.self_attn.linears[1].weight)();
  return "  " +
         ch.verdict(copy_gap == 0.0f,
                    copy_gap == 0.0f ? trf("self_attn and src_attn are deep copies of one attn: max |difference| over "
                                           "their {n} Linears = 0, they start equal.", fmt::arg("n", n))
                                     : trf("self_attn and src_attn differ at the start: max |difference| over their "
                                           "{n} Linears = {d:.3g}; they are not copies of one attn.",
                                           fmt::arg("n", n), fmt::arg("d", copy_gap))) +
         "\n  " +
         ch.verdict(qk_gap > 0.0f, qk_gap > 0.0f
                                       ? trf("inside one block the {n} Linears are independent draws: max |W_q - W_k| "
                                             "= {d:.3g}, so a token's query and its key differ.",
                                             fmt::arg("n", n), fmt::arg("d", qk_gap))
                                       : _("W_q and W_k are equal (max |W_q - W_k| = 0): one draw serves both, so a "
                                           "token's query is its key."));
}

std::string sublayer_words(const SublayerConnection& sub, const Tensor& x) {
  const std::string f = sublayer_formula(sub, x);
  if (f.empty()) return _("none of x + f(norm(x)), norm(x + f(x)), x + f(x), f(norm(x))");
  if (f == "x + f(norm(x))") return f + _(" (pre-LN: the norm before the sublayer, the input added back)");
  return f;
}

SelfAttentionNotes self_attention_notes(Chapter& ch, const MultiHeadedAttention& attn, const BTensor& mask) {
  const SelfAttentionStats st = self_attention_stats(attn.attn, mask);
  const int64_t H = attn.h;
  // rows of the mask that keep no key: softmax then spreads their weight over every key
  size_t hidden_rows = 0;
  {
    const Mask2 m(mask);
    for (size_t t = 0; t < m.T; ++t) {
      bool any = false;
      for (size_t s = 0; s < m.S; ++s) any = any || m.at(t, s);
      hidden_rows += !any;
    }
  }
  // the mask check, and what it measured when it fails: the mask itself, or attention not applying it
  const std::string check = ch.verdict(
      st.above == 0.0f,
      st.above == 0.0f
          ? trf("largest weight above the diagonal over the {H} heads = 0: the mask hides every later token",
                fmt::arg("H", H))
      : st.mask_above > 0
          ? trf("largest weight above the diagonal over the {H} heads = {w:.3g}: later tokens get weight, because "
                "tgt_mask keeps {k} entries above the diagonal ({sees})",
                fmt::arg("H", H), fmt::arg("w", st.above), fmt::arg("k", st.mask_above),
                fmt::arg("sees", mask_sees(mask)))
      : hidden_rows > 0 && !is_lower_triangle(mask)
          ? trf("largest weight above the diagonal over the {H} heads = {w:.3g}: the first output that differs from "
                "the reference is tgt_mask, from subsequent_mask ({file}): it is not the causal lower triangle "
                "({sees}), and {r} of its rows hide every key, so softmax over a row filled with -1e9 spreads the "
                "weight evenly over all keys, later ones included; the attention applied the mask it was given",
                fmt::arg("H", H), fmt::arg("w", st.above), fmt::arg("file", annotated_source()),
                fmt::arg("sees", mask_sees(mask)), fmt::arg("r", hidden_rows))
          : trf("largest weight above the diagonal over the {H} heads = {w:.3g}: later tokens get weight although "
                "tgt_mask hides them, so the attention did not apply the mask",
                fmt::arg("H", H), fmt::arg("w", st.above)));
  // dropout named only when it is active, and its zeros counted where the mask keeps the weight
  const Dropout& drop = attn.dropout;
  std::string rest;
  if (drop.training && drop.p > 0.0 && st.kept_zeros > 0)
    rest = trf("train-mode dropout also zeroed {z} of the {n} weights the mask keeps and scales the others by "
               "1/(1 - {p})",
               fmt::arg("z", st.kept_zeros), fmt::arg("n", st.kept), fmt::arg("p", drop.p));
  else if (drop.training && drop.p > 0.0)
    rest = trf("train-mode dropout (p = {p}) zeroed none of the {n} weights the mask keeps this time and scales "
               "them by 1/(1 - {p})",
               fmt::arg("n", st.kept), fmt::arg("p", drop.p));
  else if (st.row_err <= 1e-5f)
    rest = trf("no dropout runs: every row sums to 1 within {e:.1e}", fmt::arg("e", st.row_err));
  else
    rest = trf("no dropout runs, yet a row sums to 1 +- {e:.3g}", fmt::arg("e", st.row_err));
  SelfAttentionNotes notes;
  notes.weights = check + "; " + rest;
  if (st.n_other > 0 && st.other > 0.0)
    notes.self_vs_other =
        trf("  Rows that see another token, all {H} heads: the mean weight of a token on itself is {d:.3f}, on one "
            "other token it sees {e:.3f} ({r:.2f}x). A query and a key come from two different Linears (Step 1), so "
            "q_t . k_t has no reason to be the largest score of row t: with untrained weights, which token gets the "
            "most weight is chance.",
            fmt::arg("H", H), fmt::arg("d", st.self), fmt::arg("e", st.other), fmt::arg("r", st.self / st.other));
  return notes;
}

std::string scaling_erratum(const MultiHeadedAttention& attn) {
  const int64_t d_k = attn.d_k, h = attn.h;
  const double divisor = score_divisor(h, d_k), root = std::sqrt(static_cast<double>(d_k));
  if (std::fabs(divisor - root) <= 1e-3 * root && h == 1)
    return trf("the text says the cross-attention scores Q K^T are multiplied by sqrt(d_k), and figure 9.8's caption "
               "divides them by the square root of K's dimension, which line 384 gives as 256. attention() (listing "
               "9.1) divides by sqrt(d_k), and with h = 1 head d_k = d_model = {dk}: sqrt({dk}) = {s:.3f} (measured "
               "here); with the article's 8 heads it would be sqrt(d_model / 8).",
               fmt::arg("dk", d_k), fmt::arg("s", divisor));
  if (std::fabs(divisor - root) <= 1e-3 * root)
    return trf("the text says the cross-attention scores Q K^T are multiplied by sqrt(d_k), and figure 9.8's caption "
               "divides them by the square root of K's dimension, which line 384 gives as 256. attention() (listing "
               "9.1) divides by sqrt(d_k), with d_k = d_model / h = {dk} per head: sqrt({dk}) = {s:.3f} (measured "
               "here), not sqrt({C}) = {sc:.3f}.",
               fmt::arg("dk", d_k), fmt::arg("s", divisor), fmt::arg("C", d_k * h),
               fmt::arg("sc", std::sqrt(static_cast<double>(d_k * h))));
  return trf("the text says the cross-attention scores Q K^T are multiplied by sqrt(d_k), and figure 9.8's caption "
             "divides them by the square root of K's dimension, which line 384 gives as 256. The attention code run "
             "here divides them by {s:.4g} (measured), neither sqrt(d_k) = sqrt({dk}) = {r:.3f} as listing 9.1 does, "
             "nor sqrt({C}).",
             fmt::arg("s", divisor), fmt::arg("dk", d_k), fmt::arg("r", root), fmt::arg("C", d_k * h));
}

std::string pre_post_note(Chapter& ch, const Tensor& out, const Tensor& post, double eps,
                          const std::vector<std::string>& tokens) {
  const Tensor sd_pre = std_lastdim(out, 1), sd_post = std_lastdim(post, 1);  // (B,T,1)
  float post_err = 0.0f;
  for (float s : sd_post) post_err = std::max(post_err, std::fabs(s - 1.0f));
  std::vector<std::vector<std::string>> cells = {{_("token"), _("pre-LN out"), _("post-LN")}};
  for (size_t t = 0; t < tokens.size() && t < 8; ++t)
    cells.push_back({tokens[t], fmt::format("{:.4f}", sd_pre.data()[t]), fmt::format("{:.4f}", sd_post.data()[t])});
  const float gap = max_abs_diff(out, post)();
  return trf(
      "  Row std of the layer output (the tokens' scale as the next layer receives it):\n{rows}\n"
      "  {post}\n"
      "  Pre-LN rows leave the layer with std {lo:.4f} to {hi:.4f} (measured); article 002's Decoder ends with one "
      "final LayerNorm after its N layers.\n"
      "  {differ}",
      fmt::arg("rows", text_table(cells, 1)),
      fmt::arg("lo", *std::min_element(sd_pre.begin(), sd_pre.end())),
      fmt::arg("hi", *std::max_element(sd_pre.begin(), sd_pre.end())),
      fmt::arg("post", ch.verdict(post_err < 1e-3f,
                                  post_err < 1e-3f
                                      ? trf("post-LN rows have std 1, the norm is last: max |std - 1| = {e:.1e} (eps "
                                            "= {eps:g} only).",
                                            fmt::arg("e", post_err), fmt::arg("eps", eps))
                                      : trf("post-LN rows should have std 1, the norm being last, but max |std - 1| = "
                                            "{e:.3g}.",
                                            fmt::arg("e", post_err)))),
      fmt::arg("differ", ch.verdict(gap > 1e-3f, gap > 1e-3f
                                                     ? trf("max |out - post| = {d:.4f}: pre-LN and post-LN are two "
                                                           "different functions of the same weights.",
                                                           fmt::arg("d", gap))
                                                     : trf("max |out - post| = {d:.2g}: the pre-LN layer gives the "
                                                           "post-LN numbers, so it is no longer wired pre-LN.",
                                                           fmt::arg("d", gap)))));
}

float future_weight(const Decoder& decoder) {
  float w = 0.0f;
  for (const DecoderLayer& l : decoder.layers) {
    const Tensor& a = l.self_attn.attn;  // (B,H,T,T)
    if (a.dimension() != 4) continue;
    for (size_t b = 0; b < a.shape()[0]; ++b)
      for (size_t h = 0; h < a.shape()[1]; ++h)
        for (size_t t = 0; t < a.shape()[2]; ++t)
          for (size_t s = t + 1; s < a.shape()[3]; ++s) w = std::max(w, std::fabs(a(b, h, t, s)));
  }
  return w;
}

std::string cached_rows_cause(bool training, float future, const BTensor& tgt_mask, const DecoderCache& cache,
                              size_t positions, size_t memory_rows) {
  if (training) return _("the decoder is in train mode, so each pass drew other dropout masks");
  const std::string append = kv_cache_append_site();  // KVCache::append's file:line, from the compiler
  if (future > 0.0f && !is_lower_triangle(tgt_mask)) {
    // read from the mask the full pass used (its first (T,T)), 1 = hide as mask_breaks_cache reads it
    const Mask2 m(tgt_mask);
    std::vector<float> hide(m.T * m.S);
    for (size_t t = 0; t < m.T; ++t)
      for (size_t s = 0; s < m.S; ++s) hide[t * m.S + s] = m.at(t, s) ? 0.0f : 1.0f;
    const std::string why =
        m.T == m.S ? mask_breaks_cache(hide, int64_t(m.T), "subsequent_mask, " + annotated_source()) : std::string();
    if (!why.empty())
      return trf("tgt_mask is not the causal lower triangle ({sees}): {why}", fmt::arg("sees", mask_sees(tgt_mask)),
                 fmt::arg("why", why));
    return trf("tgt_mask is not the causal lower triangle ({sees}), while a cache holds only tokens 0..t",
               fmt::arg("sees", mask_sees(tgt_mask)));
  }
  if (future > 0.0f)
    return trf("in the full pass, tokens gave weight up to {w:.3g} to later tokens, so it did not hide the future "
               "as tgt_mask does, while a cache holds only tokens 0..t",
               fmt::arg("w", future));
  // the mask is the causal triangle: what the caches hold, against the positions decoded
  for (size_t i = 0; i < cache.layers.size(); ++i) {
    const DecoderLayerCache& l = cache.layers[i];
    if (l.len() != positions)
      return trf("the mask is the causal triangle, but layer {i}'s self-attention cache holds {n} positions after "
                 "{t} tokens were decoded, so the last row attended over {n} keys where the full pass's attends over "
                 "{t}: the cache {how} (look at {site}, which MultiHeadedAttention::operator() calls)",
                 fmt::arg("i", i), fmt::arg("n", l.len()), fmt::arg("t", positions),
                 fmt::arg("how", l.len() < positions ? trf("dropped {d} of them", fmt::arg("d", positions - l.len()))
                                                     : trf("holds {d} too many", fmt::arg("d", l.len() - positions))),
                 fmt::arg("site", append));
    if (!l.inputs && l.src_attn.len() != memory_rows)
      return trf("the mask is the causal triangle, but layer {i}'s cross-attention cache holds {n} of the {s} memory "
                 "positions (look at {site}, which MultiHeadedAttention::operator() calls)",
                 fmt::arg("i", i), fmt::arg("n", l.src_attn.len()), fmt::arg("s", memory_rows),
                 fmt::arg("site", append));
  }
  return trf("the mask is the causal triangle and every layer's cache holds the {t} positions decoded, yet the rows "
             "differ: the same DecoderLayer code gives a row one value with its past cached and another in the full "
             "pass, so something in it depends on the rows that come after or on how many rows it is given (look at "
             "MultiHeadedAttention::operator() in {attn} and DecoderLayer::operator() in {file})",
             fmt::arg("t", positions), fmt::arg("attn", attention_source()), fmt::arg("file", annotated_source()));
}

std::string decoder_layer_params_verdict(Chapter& ch, uint64_t encoder_layer, uint64_t decoder_layer,
                                         const DecoderLayer& layer) {
  // a decoder layer = an encoder layer + one attention block (its Linears, C x C + C each) + one more
  // LayerNorm (a_2, b_2); sizes read from the layer
  const uint64_t C = static_cast<uint64_t>(layer.size), n = layer.src_attn.linears.size();
  const uint64_t attn_block = n * (C * C + C), norm = 2 * C, expected = encoder_layer + attn_block + norm;
  const bool ok = decoder_layer == expected;
  return "  " + ch.verdict(ok, trf(ok ? N_("a decoder layer has {dec} parameters, an encoder layer {enc}: the {diff} "
                                           "more are its cross-attention block, {n} x (C x C + C) = {attn}, and its "
                                           "third LayerNorm, 2 x C = {norm}.")
                                      : N_("a decoder layer has {dec} parameters, an encoder layer {enc}: not the "
                                           "encoder layer plus a cross-attention block, {n} x (C x C + C) = {attn}, "
                                           "and a third LayerNorm, 2 x C = {norm}, which would make {want}."),
                                   fmt::arg("dec", thousands(decoder_layer)), fmt::arg("enc", thousands(encoder_layer)),
                                   fmt::arg("diff", thousands(decoder_layer - encoder_layer)), fmt::arg("n", n),
                                   fmt::arg("attn", thousands(attn_block)), fmt::arg("norm", thousands(norm)),
                                   fmt::arg("want", thousands(expected))));
}

std::string decoding_costs(Chapter& ch, const DecoderShape& d, const std::vector<StepCost>& steps,
                           const MacCount& inputs, const DecoderCache& kv_cache) {
  const int64_t n = static_cast<int64_t>(d.N), s = static_cast<int64_t>(d.S), c = d.C, f = d.F;
  std::string out;
  out += (trf("  Per step (all {N} layers): a no-cache decoder re-runs the full masked pass on the t tokens so far; "
             "article 001 caches the rows and re-projects their keys and values (and the memory's); a K/V cache "
             "projects only the new row.\n\n{table}",
             fmt::arg("N", d.N), fmt::arg("table", step_cost_table(steps))));
  const MacCount one_pass =
      decoder_full_pass_macs(n, 1, static_cast<int64_t>(d.T), s, c, f);
  MacCount no_cache;
  uint64_t no_cache_steps = 0;  // the per-step column's sum
  for (size_t t = 1; t <= d.T; ++t)
    no_cache += decoder_full_pass_macs(n, 1, static_cast<int64_t>(t), s, c, f);
  for (const StepCost& st : steps) no_cache_steps += st.no_cache;
  out += "\n" + (total_cost_table(d.T, {{{_("full pass"), _("one full masked pass (training)")}, one_pass},
                              {{_("no cache"), _("generate, no cache (re-run prefix)")}, no_cache},
                              {{_("input cache"), _("generate, article 001 input cache")}, inputs},
                              {{_("K/V cache"), _("generate, K/V cache")}, kv_cache.macs}}));
  const uint64_t kv = kv_cache.macs.total(), full_macs = one_pass.total();
  uint64_t kv_floats = 0, mem_floats = 0;  // what the caches hold
  for (const DecoderLayerCache& l : kv_cache.layers)
    kv_floats += l.self_attn.k.size() + l.self_attn.v.size(), mem_floats += l.src_attn.k.size() + l.src_attn.v.size();
  out += "\n" + (trf("  Generating takes T steps, one after another. Without a cache they cost {none} multiply-adds ({r:.1f}x "
             "the cached {kv}), and the gap grows with T: re-running the prefix is O(T^2 C^2) in projections, the "
             "K/V cache O(T C^2) plus O(T^2 C) for the scores. What the full pass has over it is parallelism: all T "
             "rows in one batch of products, possible only when the whole target is known (training, teacher "
             "forcing). The cache costs memory: 2 x N x T x C floats = {kvf} here, plus the memory's keys and "
             "values, 2 x N x S x C = {memf}.\n"
             "  {cheaper}\n"
             "  {sum}",
             fmt::arg("none", thousands(no_cache.total())),
             fmt::arg("r", static_cast<double>(no_cache.total()) / static_cast<double>(kv)),
             fmt::arg("kv", thousands(kv)), fmt::arg("kvf", thousands(kv_floats)),
             fmt::arg("memf", thousands(mem_floats)),
             fmt::arg("cheaper", ch.verdict(kv <= full_macs,
                                            trf(kv <= full_macs ? N_("generating with the K/V cache ({kv}) costs no "
                                                                  "more than ONE full masked pass ({full}): it never "
                                                                  "scores the masked half.")
                                                                : N_("generating with the K/V cache ({kv}) costs more "
                                                                  "than one full masked pass ({full})."),
                                                fmt::arg("kv", thousands(kv)), fmt::arg("full", thousands(full_macs))))),
             fmt::arg("sum", ch.verdict(no_cache_steps == no_cache.total(),
                                        trf(no_cache_steps == no_cache.total()
                                                ? N_("the per-step no-cache column adds up to the total "
                                                     "above: {a} = {b}.")
                                                : N_("the per-step no-cache column adds up to {a}, not to the "
                                                     "total above, {b}."),
                                            fmt::arg("a", thousands(no_cache_steps)),
                                            fmt::arg("b", thousands(no_cache.total())))))));
  return out;
}

std::string step_cost_table(const std::vector<StepCost>& steps) {
  std::vector<std::vector<std::string>> rows = {
      {_("step"), _("token"), _("K,V cache"), _("no cache"), _("article 001"), _("K/V cache")}};
  for (size_t i = 0; i < steps.size(); ++i)
    rows.push_back({fmt::format("{}", i + 1), steps[i].token, py_tuple(steps[i].k_shape),
                    thousands(steps[i].no_cache), thousands(steps[i].inputs), thousands(steps[i].keys_values)});
  return text_table(rows, 2);
}

// One column per way of computing the T tokens (narrow enough for 80 columns), one row per part of
// the decoder; the key above the table spells out each column's name.
std::string total_cost_table(size_t T, const std::vector<std::pair<CostWay, MacCount>>& ways) {
  std::vector<std::vector<std::string>> key = {{_("column"), _("counts the multiply-adds of")}};
  for (const auto& [way, m] : ways) key.push_back({way.column, way.description});
  std::vector<std::vector<std::string>> rows = {{trf("T = {T} tokens", fmt::arg("T", T))}};
  for (const auto& [way, m] : ways) rows[0].push_back(way.column);
  const std::vector<std::pair<std::string, uint64_t MacCount::*>> parts = {
      {_("self proj"), &MacCount::self_proj}, {_("self QK,PV"), &MacCount::self_attn},
      {_("cross proj"), &MacCount::cross_proj}, {_("cross QK,PV"), &MacCount::cross_attn},
      {_("FFN"), &MacCount::ffn}};
  for (const auto& [name, field] : parts) {
    rows.push_back({name});
    for (const auto& [way, m] : ways) rows.back().push_back(thousands(m.*field));
  }
  rows.push_back({_("total")});
  for (const auto& [way, m] : ways) rows.back().push_back(thousands(m.total()));
  return text_table(key) + "\n" + text_table(rows, 1);
}

StackRun stack_run(const std::vector<TraceEvent>& events, const char* stack, const char* layer, size_t n_layers) {
  const std::vector<std::string> ran = trace_children(events, stack);
  const std::string prefix = layer;
  size_t first = 0;  // the layers that ran before anything else
  while (first < ran.size() && ran[first].rfind(prefix, 0) == 0) ++first;
  StackRun r;
  r.layers = static_cast<size_t>(
      std::count_if(ran.begin(), ran.end(), [&](const std::string& c) { return c.rfind(prefix, 0) == 0; }));
  r.whole = first > 0 && first == n_layers && first + 1 == ran.size() && ran.back() == "LayerNorm";
  r.words = ran.empty() ? std::string(_("nothing")) : trace_children_words(ran);
  return r;
}

std::string decoder_structure_words(Chapter& ch, const std::vector<TraceEvent>& events, size_t n_layers) {
  const StackRun run = stack_run(events, "Decoder", "DecoderLayer", n_layers);
  if (run.whole)
    return trf("  Decoder = {N} deep copies of the layer, then a final LayerNorm.", fmt::arg("N", run.layers));
  if (run.layers < n_layers) {
    const std::string site = ch.ran("Decoder::operator()");
    return "  " + ch.verdict(false, trf("Decoder ran (traced): {ran}: {k} of the {N} layers it holds ran, so the "
                                        "rows below went through {k} layers, not {N} (look at the layer loop of "
                                        "{site})",
                                        fmt::arg("ran", run.words), fmt::arg("k", run.layers), fmt::arg("N", n_layers),
                                        fmt::arg("site", site.empty() ? "Decoder::operator()" : site)));
  }
  return trf("  Decoder ran (traced): {ran}. Article 002's Decoder runs its N layers, then a final LayerNorm.",
             fmt::arg("ran", run.words));
}

}  // namespace ts
