// ch08_masks: which keys may a query look at? Causal masks, padding masks, two polarities.
//
// Follows: article 000 "Scaled Dot-product Attention" (query_mask/key_mask combined with bmm,
//          masked_fill(mask == 0, -inf)) and "Transformer Decoder" (the tril mask and the masked
//          score matrix); article 004 §3.1-3.2 (padding_mask (B,1,1,S) and look_ahead_mask with
//          1 = hide, tf.maximum to combine them, attn_weight += mask * -1e9); article 002's
//          attention() (masked_fill(mask == 0, -1e9)) and its boolean 5x5 tgt_mask; article 001's
//          DecoderBlock (decoder_visible_mask: the causal mask as valid lengths).
// Formula: keep-mask (000/002, 1 = keep):  scores' = where(mask == 0, -inf or -1e9, scores)
//          hide-mask (004, 1 = hide):      scores' = scores + mask * -1e9
//          weights = softmax(scores', dim=-1)                            (B,T,S)
//          out = weights V                                               (B,T,S) x (B,S,D) -> (B,T,D)
// Run:     ./build/ch08_masks [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch08_masks --valid-len 4      (4 real tokens, 1 padding token in the padding demo)
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "course/layout.hpp"
#include "course/mask_notes.hpp"
#include "course/mask_stats.hpp"
#include "course/weight_stats.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/tensor_ops.hpp"
#include "exact/tfprint.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/article004.hpp"
#include "transformer/nn.hpp"

using namespace ts;


int main(int argc, char** argv) {
  Chapter ch("ch08_masks", _("Masks: causal, padding, keep vs hide, -inf vs -1e9"),
             {{0, N_("§Scaled Dot-product Attention, §Transformer Decoder")},
              {4, N_("§3.1 掩码 mask, §3.2 Multi-Head Attention")}, {2, N_("§9.2.1, §9.3.1")}, {1, N_("DecoderBlock")}});
  // --valid-len's default depends on T (valid_len, or T if the text is shorter): set once T is known.
  int64_t d_model = 768, valid_len = 3, look_ahead = 3;
  ch.add_sentence_flags(d_model, _("size C of each token vector, = dim_k of the scores, BERT-base's by default"));
  ch.option("--valid-len", valid_len,
            _("real tokens in the padding-mask demo, at most T, the tokens of --text (a larger value is refused; the "
              "default is cut to T); the rest count as padding"),
            1, 512, _("at most T, the tokens of --text"));
  ch.option("--look-ahead", look_ahead,
            _("size of the article-004 look-ahead mask that is printed"), 1, 64);
  const int64_t valid_len_default = valid_len;  // without --valid-len: this, or T if the text is shorter

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.vmin = 0.0f, hopt.vmax = 1.0f;  // masks and weights share one scale: 0 blank, 1 darkest
    // a mask's picture: in the SVG, kept and hidden cells in the colours every chapter's masks use
    auto as_mask = [](HeatmapOptions o, MaskMeaning meaning) {
      o.mask = meaning;
      return o;
    };

    // ---------------------------------------------------------------- 1) the scores of chapter 2
    ch.section(_("Step 1: the scores of chapter 2"), _("article 000 §Scaled Dot-product Attention"));
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    const size_t T = tokens.size();
    if (!ch.given("--valid-len")) valid_len = std::min<int64_t>(valid_len_default, static_cast<int64_t>(T));
    check_range("--valid-len", valid_len, 1, static_cast<int64_t>(T), _("the tokens of --text"));  // depends on T
    ch.show("inputs.input_ids", input_ids, trf("the sentence of chapter 1, T = {T} tokens", fmt::arg("T", T)),
            Shown::Twin);
    Embedding token_emb(config.vocab_size, d_model);
    // q = k = v = E   (B,T,C)
    const Tensor inputs_embeds = token_emb(input_ids);
    const Tensor &query = inputs_embeds, &key = inputs_embeds, &value = inputs_embeds;
    // scores = Q K^T / sqrt(D)
    // (B,T,S)
    Tensor scores = bmm_nt(query, key);
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
    for (float& s : scores) s = s / scale;
    ch.show("scores", scores, {"DivBackward0"}, _("as in chapter 2: every query sees every key"), Shown::Twin);

    // ---------------------------------------------------------------- 2) article 000: the causal mask
    // mask[t,s] = 1 if s <= t (keep) else 0 (hide)
    // (1,T,S)
    Tensor mask = tril_ones(T);
    mask.reshape({1, T, T});
    Tensor mask0 = xt::view(mask, 0, xt::all(), xt::all());
    const bool causal = same(mask0, tril_ones(T));
    const std::string pattern = kept_pattern(mask0);  // which keys it keeps, in words ("" = no simple pattern)
    ch.section(causal ? _("Step 2: a decoder may not look ahead: tril and masked_fill(mask == 0, -inf)")
                      : _("Step 2: the decoder's mask as built here, and masked_fill(mask == 0, -inf)"),
               _("article 000 §Transformer Decoder"));
    ch.show("mask[0]", mask0, {},
            mask_note(ch, mask0, causal, pattern));
    hopt.title = _("mask[0] (article 000, 1 = keep): rows = queries, columns = keys");
    hopt.cell_width = 7;
    ch.figure(heatmap(mask0, tokens, tokens, as_mask(hopt, MaskMeaning::OneKeeps)));
    // hide = (mask == 0)   (1,T,S) bool
    BTensor hide = xt::equal(mask, 0.0f);
    ch.show("mask == 0", hide,
            trf("True marks the {hidden} scores masked_fill overwrites, the keys the query may not see",
                fmt::arg("hidden", count_equal(mask, 0.0f))),
            Shown::Twin);
    // scores' = where(mask == 0, -inf, scores)
    // (B,T,S)
    Tensor masked_scores = masked_fill_zero(scores, mask, -INFINITY);
    // the kept scores must come through unchanged: compare them where mask == 1
    const bool kept_unchanged = same(Tensor(xt::where(xt::equal(mask, 0.0f), 0.0f, masked_scores)),
                                     Tensor(xt::where(xt::equal(mask, 0.0f), 0.0f, scores)));
    ch.show("scores.masked_fill(mask == 0, -float(\"inf\"))", masked_scores, {"MaskedFillBackward0"},
            trf("the {hidden} hidden scores are all {fill}; {check}", fmt::arg("hidden", count_equal(mask, 0.0f)),
                fmt::arg("fill", filled_value(masked_scores, mask)),
                fmt::arg("check", kept_unchanged ? ch.verdict(true, _("the kept scores are chapter 2's, unchanged"))
                                                 : ch.verdict(false, _("some kept scores differ from chapter 2's: "
                                                                       "masked_fill changed more than the hidden "
                                                                       "ones")))));
    HeatmapOptions sopt = hopt;  // scores: their own range
    sopt.vmin = sopt.vmax = NAN, sopt.title = "scores.masked_fill(mask == 0, -inf)";
    ch.figure(heatmap(xt::view(masked_scores, 0, xt::all(), xt::all()), tokens, tokens, sopt));
    unseeded_note(ch);  // why the article's printout shows other numbers
    // what article 001's sentence would do: the hidden scores set to 0 instead
    const float zero_leak = max_hidden(softmax(masked_fill_zero(scores, mask, 0.0f)), mask);
    ch.erratum(_("001, line 13"),
               trf("the article says the scores of the future tokens are set to 0. A score of 0 still gets weight "
                   "e^0 / (sum of e^score) > 0 after the softmax (here up to {leak:.2g} on a hidden key). What must "
                   "be 0 is the weight; for that the score is set to -inf (article 000) or to a large negative "
                   "number (-1e9 in articles 002 and 004), as done here.",
                   fmt::arg("leak", zero_leak)));
    // weights = softmax(scores', dim=-1)
    // (B,T,S)
    Tensor masked_weights = softmax(masked_scores);
    ch.show("masked_weights", masked_weights, {"SoftmaxBackward0"}, weights_note(ch, masked_weights, mask),
            Shown::Twin);
    hopt.title = "masked_weights";
    ch.figure(heatmap(xt::view(masked_weights, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // out = softmax(masked scores) V
    // (B,T,S) x (B,S,D) -> (B,T,D)
    Tensor causal_out = scaled_dot_product_attention(query, key, value, &mask);
    std::string out_note = nan_rows(causal_out) == 0
                               ? _("row t is a weighted mean of the value rows its mask row keeps")
                               : trf("row t is a weighted mean of the value rows its mask row keeps; {n} row(s) keep "
                                     "none and are nan",
                                     fmt::arg("n", nan_rows(causal_out)));
    if (count_equal(xt::view(mask0, 0, xt::all()), 1.0f) == 1 && mask0(0, 0) == 1.0f) {
      // row 0 keeps only key 0: its weight is exactly 1, so the row is token 0's value
      const double d0 = max_abs_diff(position(causal_out, 0), position(value, 0))();
      out_note = trf("row t is a weighted mean of the value rows its mask row keeps; row 0 keeps only token 0: {check}",
                     fmt::arg("check", d0 == 0.0 ? ch.verdict(true, _("it equals token 0's value (max |diff| = 0)"))
                                                 : ch.verdict(false, trf("it differs from token 0's value by up to "
                                                                         "{d:.3g}",
                                                                         fmt::arg("d", d0)))));
    }
    ch.show("scaled_dot_product_attention(query, key, value, mask=mask)", causal_out, {"BmmBackward0"}, out_note,
            Shown::Twin);

    // ---------------------------------------------------------------- 3) article 000: padding masks via bmm
    ch.section(_("Step 3: padding: query_mask and key_mask combined with bmm"),
               _("article 000 §Scaled Dot-product Attention"));
    // key_mask[s] = 1 for the first valid_len tokens, 0 for padding   (B,S)
    Tensor key_mask = zeros({1, T});
    for (int64_t s = 0; s < valid_len; ++s) key_mask(0, s) = 1.0f;
    const Tensor& query_mask = key_mask;
    const size_t n_pad = T - count_equal(key_mask, 1.0f);
    ch.show("key_mask", key_mask, {},
            trf("1 = a real token, 0 = padding: {real} real, {pad} padding (query_mask = key_mask)",
                fmt::arg("real", T - n_pad), fmt::arg("pad", n_pad)),
            Shown::Twin);
    // pad_mask[t,s] = query_mask[t] * key_mask[s]: an outer product, as a bmm with K = 1
    // (B,T,1) x (B,1,S) -> (B,T,S)
    Tensor q_col = query_mask, k_row = key_mask;
    q_col.reshape({1, T, 1});
    k_row.reshape({1, 1, T});
    Tensor pad_mask = bmm(q_col, k_row);
    const size_t n_empty = empty_rows(pad_mask);
    ch.show("torch.bmm(query_mask.unsqueeze(-1), key_mask.unsqueeze(1))", pad_mask, {},
            trf("1 only where both the query and the key are kept: a padded key is hidden from every query, and "
                "{empty} of the {T} query rows keep no key at all",
                fmt::arg("empty", n_empty), fmt::arg("T", T)),
            Shown::Twin);
    hopt.title = _("pad_mask[0] (1 = keep)");
    ch.figure(heatmap(xt::view(pad_mask, 0, xt::all(), xt::all()), tokens, tokens,
                      as_mask(hopt, MaskMeaning::OneKeeps)));
    // weights = softmax(where(pad_mask == 0, -inf, scores))
    // (B,T,S)
    Tensor pad_weights_inf = softmax(masked_fill_zero(scores, pad_mask, -INFINITY));
    const size_t n_nan = nan_rows(pad_weights_inf);
    const std::string nan_check =
        ch.verdict(n_nan == n_empty, trf("{nan} rows are nan, and {empty} rows of the mask keep no key",
                                         fmt::arg("nan", n_nan), fmt::arg("empty", n_empty)));
    ch.show("F.softmax(scores.masked_fill(pad_mask == 0, -float(\"inf\")), dim=-1)", pad_weights_inf,
            {"SoftmaxBackward0"},
            n_empty ? trf("a query with no key left has a row max of -inf, and softmax computes exp(-inf - (-inf)) = "
                          "exp(nan). {check}",
                          fmt::arg("check", nan_check))
                    : trf("every query keeps at least one key, so no row is nan. {check}", fmt::arg("check", nan_check)),
            Shown::Twin);
    hopt.title = _("weights with -inf");
    ch.figure(heatmap(xt::view(pad_weights_inf, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // out = softmax(masked scores) V    (B,T,D)
    Tensor pad_out = scaled_dot_product_attention(query, key, value, &pad_mask);
    const size_t out_nan = nan_rows(pad_out);
    // the attention's output against the weights printed above times V: the same nan rows, and
    // the other rows equal to float rounding (scaled to the values compared)
    const Tensor by_hand = bmm(pad_weights_inf, value);
    const bool same_shape = shape_of(by_hand) == shape_of(pad_out);
    double row_gap = same_shape ? 0.0 : INFINITY, big = 1.0;  // over the entries that are numbers in both
    for (size_t i = 0; same_shape && i < by_hand.size(); ++i) {
      const double a = by_hand.data()[i], b = pad_out.data()[i];
      if (!std::isnan(a) && !std::isnan(b)) row_gap = std::max(row_gap, std::fabs(a - b)), big = std::max(big, std::fabs(a));
    }
    const bool uses_weights = out_nan == n_nan && row_gap <= 1e-5 * big;
    ch.show("scaled_dot_product_attention(query, key, value, query_mask, key_mask)", pad_out, {"BmmBackward0"},
            uses_weights ? trf("{nan} of the {T} output rows are nan: a nan row of weights stays nan through bmm",
                       fmt::arg("nan", out_nan), fmt::arg("T", T))
                 : ch.verdict(false, trf("{nan} of the {T} output rows are nan where the weights above have {wn}, and "
                                         "where both are numbers they differ from those weights times V by up to {g:.3g}: the "
                                         "attention did not use these masked weights (look at {site})",
                                         fmt::arg("nan", out_nan), fmt::arg("T", T), fmt::arg("wn", n_nan),
                                         fmt::arg("g", row_gap), fmt::arg("site", ch.ran("scaled_dot_product_attention")))),
            Shown::Twin);
    // a second attention layer on that output, same masks   (B,T,D)
    Tensor pad_out2 = scaled_dot_product_attention(pad_out, pad_out, pad_out, &pad_mask);
    const size_t out2_nan = nan_rows(pad_out2);
    ch.show("scaled_dot_product_attention(pad_out, pad_out, pad_out, query_mask, key_mask)", pad_out2,
            {"BmmBackward0"},
            out_nan ? trf("one layer later {nan} of the {T} rows are nan: a real query gives a padded key weight 0, "
                          "but 0 * nan = nan in weights @ V",
                          fmt::arg("nan", out2_nan), fmt::arg("T", T))
                    : trf("{nan} of the {T} rows are nan: no nan came in from the first layer", fmt::arg("nan", out2_nan),
                          fmt::arg("T", T)),
            Shown::Twin);

    // ---------------------------------------------------------------- 4) -inf vs -1e9
    const float fill = -1e9f;  // article 002's large finite number
    const std::string F = short_sci(fill);
    ch.section(trf("Step 4: the same fully masked rows with {fill} instead of -inf", fmt::arg("fill", F)),
               _("article 002 §9.2.1 注意力机制, attention()"));
    // scores' = where(pad_mask == 0, fill, scores)
    // (B,T,S)
    Tensor pad_scores_1e9 = masked_fill_zero(scores, pad_mask, fill);
    ch.show("scores.masked_fill(pad_mask == 0, " + F + ")", pad_scores_1e9, {"MaskedFillBackward0"},
            fill == -1e9f ? _("article 002 writes a large finite number instead of -inf")
                          : trf("a finite number, {fill}, instead of -inf (article 002 writes -1e9)", fmt::arg("fill", F)),
            Shown::Twin);
    ch.erratum(_("002 §9.2.1, line 186"),
               _("note ② says the mask hides the future elements of the sequence. attention() applies whatever mask it "
                 "is given: in the encoder that is src_mask, which hides padding; only the decoder's tgt_mask hides "
                 "the future (Step 6)."));
    Tensor pad_weights_1e9 = softmax(pad_scores_1e9);
    ch.show("F.softmax(scores.masked_fill(pad_mask == 0, " + F + "), dim=-1)", pad_weights_1e9, {"SoftmaxBackward0"},
            empty_rows_1e9_note(ch, pad_weights_1e9, pad_mask, fill), Shown::Twin);
    hopt.title = trf("weights with {fill}", fmt::arg("fill", F));
    ch.figure(heatmap(xt::view(pad_weights_1e9, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // the rows that keep a key: -inf and fill give the same bits when e^(fill - max) is 0.0 in float32
    inf_vs_1e9_notes(ch, scores, pad_weights_inf, pad_weights_1e9, n_empty, fill);

    // ---------------------------------------------------------------- 5) article 004: 1 = hide, additive -1e9
    ch.section(_("Step 5: article 004's masks: 1 = hide, added as mask * -1e9"),
               _("article 004 §3.1 掩码 mask, §3.2 Multi-Head Attention"));
    // padding_mask[b,0,0,s] = (x[b,s] == 0)
    // (B,1,1,S) = (2,1,1,5)
    const std::vector<std::vector<int64_t>> x = {{1, 2, 0, 0, 0}, {3, 4, 5, 0, 0}};
    Tensor padding_mask = create_padding_mask(x);
    ch.show("create_padding_mask(x)", tf_str(padding_mask),
            _("x = [[1,2,0,0,0],[3,4,5,0,0]]: 1 where the id is the padding id 0 (1 = hide), shaped to broadcast "
              "over heads and queries"));
    ch.show("create_padding_mask(x).shape", tf_shape_str(shape_of(padding_mask)), _("(batch_size, 1, 1, seq_len)"),
            Shown::Twin);
    hopt.title = _("padding_mask[:, 0, 0, :] (article 004, 1 = hide): rows = sentences, columns = positions");
    hopt.cell_width = 3;
    ch.figure(heatmap(xt::view(padding_mask, xt::all(), 0, 0, xt::all()), {"x[0]", "x[1]"}, {},
                      as_mask(hopt, MaskMeaning::OneHides)));
    // look_ahead[t,s] = 1 if s > t (hide the future)
    // (T,S)
    Tensor look = create_look_ahead_mask(look_ahead);
    // does article 004's function hide exactly the future? (1 - mask is then the causal triangle)
    const bool look_causal = same(Tensor(1.0f - create_look_ahead_mask(5)), tril_ones(5));
    ch.show(fmt::format("create_look_ahead_mask({})", look_ahead), tf_str(look),
            look_note(look));
    ch.erratum(_("004 §3.1, lines 105 and 127"),
               _("the tests call padding_mask(...) and look_ahead_mask(3), names the article never defines; as "
                 "written they stop with a NameError. The functions are create_padding_mask and "
                 "create_look_ahead_mask, which this chapter calls."));
    hopt.title = trf("create_look_ahead_mask({n}) (1 = hide)", fmt::arg("n", look_ahead));
    ch.figure(heatmap(look, {}, {}, as_mask(hopt, MaskMeaning::OneHides)));
    // combine = max(padding, look_ahead): hidden if either says hide
    // (2,1,1,5) with (5,5) -> (2,1,5,5)
    Tensor combine_mask = xt::maximum(padding_mask, create_look_ahead_mask(5));  // broadcast like numpy
    ch.show("tf.maximum(create_padding_mask(x), create_look_ahead_mask(5))", tf_str(combine_mask),
            look_causal ? _("the decoder's first sublayer hides the future AND the padding; maximum = logical OR on 0/1")
                        : _("maximum = logical OR on 0/1: hidden where either mask says 1 (the look-ahead mask above "
                            "does not hide the future only)"),
            Shown::Twin);
    for (size_t b = 0; b < 2; ++b) {
      hopt.title = trf("combine_mask[{b}, 0] (1 = hide)", fmt::arg("b", b));
      ch.figure(heatmap(xt::view(combine_mask, b, 0, xt::all(), xt::all()), {}, {},
                        as_mask(hopt, MaskMeaning::OneHides)));
    }
    // logits = 0 + mask * -1e9
    // (2,1,5,5)
    // (0 * -1e9 is -0.0; adding it to the zeros gives +0.0, which is what TensorFlow prints)
    Tensor logits = zeros(shape_of(combine_mask)) + combine_mask * -1e9f;
    ch.show("logits = tf.zeros((2, 1, 5, 5)) + combine_mask * -1e9", tf_str(logits),
            _("with all scores 0, the logits are just the mask times -1e9"), Shown::Twin);
    const Tensor logit_weights = softmax(logits);
    ch.show("tf.nn.softmax(logits, axis=-1)", tf_str(logit_weights),
            visible_uniform_note(ch, logit_weights, 1.0f - combine_mask),
            Shown::Twin);
    // Article 004's scaled_dot_product_attention on our q = k = v with create_look_ahead_mask(T):
    // attn_weight = softmax(Q K^T / sqrt(dk) + mask * -1e9)   (B,T,S)
    Tensor look_ahead_T = create_look_ahead_mask(static_cast<int64_t>(T));
    Tensor attn_weight;
    scaled_dot_product_attention_004(query, key, value, &look_ahead_T, &attn_weight);
    const bool same_004 = same(attn_weight, masked_weights);
    ch.show("torch.equal(attn_weight, masked_weights)", py_bool(same_004),
            same_004 ? ch.verdict(true, _("additive -1e9 with 1 = hide gives the same bits as Step 2's masked_fill "
                                          "with 1 = keep: s - 1e9 rounds to -1e9 and e^(-1e9 - max) = 0.0"))
                     : ch.verdict(false, mask_differs(causal, pattern, "create_look_ahead_mask(T)")),
            Shown::Twin);

    // ---------------------------------------------------------------- 6) article 002: a boolean mask
    ch.section(_("Step 6: article 002's tgt_mask: a boolean lower triangle"), _("article 002 §9.3.1 创建解码器层"));
    // tgt_mask[t,s] = (s <= t)   (1,T,S) bool, True = keep
    BTensor tgt_mask = subsequent_mask(static_cast<int64_t>(T));
    BTensor tgt_mask0 = xt::view(tgt_mask, 0, xt::all(), xt::all());
    ch.show("tgt_mask[0]", tgt_mask0,
            trf("subsequent_mask({T}): True = may attend (the article printed it on cuda:0)", fmt::arg("T", T)));
    hopt.title = _("tgt_mask[0] (article 002, True = keep)");
    hopt.cell_width = 7;
    const Tensor tgt_keep = xt::cast<float>(tgt_mask);
    ch.figure(heatmap(xt::view(tgt_keep, 0, xt::all(), xt::all()), tokens, tokens,
                      as_mask(hopt, MaskMeaning::OneKeeps)));
    // p_attn = softmax(where(tgt_mask == 0, -1e9, scores))   (B,T,S)
    // (the bool mask == 0 is the float mask == 0 of its 0/1 values)
    Tensor p_attn = softmax(masked_fill_zero(scores, tgt_keep, -1e9f));
    const bool same_002 = same(p_attn, masked_weights);
    ch.show("torch.equal(p_attn, masked_weights)", py_bool(same_002),
            same_002 ? ch.verdict(true, trf("article 002's attention() (masked_fill(mask == 0, -1e9)) gives Step 2's "
                                            "weights; {empty} rows of tgt_mask keep no key, so -1e9 and -inf cannot "
                                            "part",
                                            fmt::arg("empty", empty_rows(tgt_keep))))
                     : ch.verdict(false, mask_differs(causal, pattern, "tgt_mask")),
            Shown::Twin);

    // ---------------------------------------------------------------- 7) article 001: valid lengths
    ch.section(_("Step 7: article 001's decoder_visible_mask: the same triangle as valid lengths"),
               _("article 001 (d2l-style notes), DecoderBlock"));
    // valid_lens[t] = t + 1: query t may see t + 1 keys
    // (B,T) with B = 1
    ITensor decoder_visible_mask = ITensor::from_shape({1, T});
    for (size_t t = 0; t < T; ++t) decoder_visible_mask(0, t) = static_cast<int64_t>(t) + 1;
    ch.show("decoder_visible_mask = torch.arange(1, num_steps + 1).repeat(batch, 1)", decoder_visible_mask,
            _("in training, article 001 gives each query a count of visible keys instead of a matrix (at inference "
              "it passes None: its key/value cache then holds only the past)"),
            Shown::Twin);
    // keep[t,s] = s < valid_lens[t]
    // (T,S) bool
    BTensor visible = BTensor::from_shape({T, T});
    for (size_t t = 0; t < T; ++t)
      for (size_t s = 0; s < T; ++s) visible(t, s) = static_cast<int64_t>(s) < decoder_visible_mask(0, t);
    ch.show("visible = torch.arange(num_steps)[None, :] < decoder_visible_mask[0][:, None]", visible,
            _("expanding the counts over the keys, as the attention it calls does"), Shown::Twin);
    const bool same_001 = same(visible, tgt_mask0);
    ch.show("torch.equal(visible, tgt_mask[0])", py_bool(same_001),
            same_001 ? ch.verdict(true, _("a third spelling of the same causal mask, 1 = keep"))
                     : ch.verdict(false, _("visible and tgt_mask[0] keep different keys: one of them is not the causal "
                                           "triangle")),
            Shown::Twin);

    // ---------------------------------------------------------------- 8) two polarities
    ch.section(_("Step 8: 1 = keep vs 1 = hide, and what happens when they are mixed up"),
               _("articles 000, 001, 002 vs article 004 §3.1 掩码 mask"));
    ch.figure(polarity_table());
    // keep = 1 - hide;  keep_bool = (keep == 1)
    Tensor flipped = 1.0f - look_ahead_T;
    const bool same_flip = same(flipped, mask0);
    ch.show("torch.equal(1 - look_ahead_mask, mask[0])", py_bool(same_flip),
            same_flip ? ch.verdict(true, _("converting article 004's mask to article 000's: subtract it from 1"))
                      : ch.verdict(false, mask_differs(causal, pattern, "1 - look_ahead_mask")),
            Shown::Twin);
    BTensor mask_is_one = xt::equal(mask, 1.0f);
    const bool same_bool = same(tgt_mask, mask_is_one);
    ch.show("torch.equal(tgt_mask, mask == 1)", py_bool(same_bool),
            same_bool ? ch.verdict(true, _("and article 000's float mask to article 002's bool one: compare it with 1"))
                      : ch.verdict(false, mask_differs(causal, pattern, "tgt_mask")),
            Shown::Twin);
    // Mix-up A: a hide-mask given to a keep-convention function (masked_fill(mask == 0, -inf))
    // (B,T,S)
    Tensor look_ahead_T1 = look_ahead_T;
    look_ahead_T1.reshape({1, T, T});  // (T,S) -> (1,T,S), broadcast over the batch
    Tensor wrong_a = softmax(masked_fill_zero(scores, look_ahead_T1, -INFINITY));
    ch.show("F.softmax(scores.masked_fill(look_ahead_mask == 0, -float(\"inf\")), dim=-1)", wrong_a,
            {"SoftmaxBackward0"},
            mixup_a_note(wrong_a, look_ahead_T1, look_causal),
            Shown::Twin);
    hopt.title = _("mix-up A: weights");
    ch.figure(heatmap(xt::view(wrong_a, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // Mix-up B: a keep-mask given to a hide-convention function (scores + mask * -1e9)
    // (article 004's function with article 000's mask: its weights are softmax(scores + mask * -1e9))
    Tensor wrong_b;
    scaled_dot_product_attention_004(query, key, value, &mask, &wrong_b);
    ch.show("article004.scaled_dot_product_attention(query, key, value, mask)[1]", wrong_b, {"SoftmaxBackward0"},
            mixup_b_note(wrong_b, mask, causal),
            Shown::Twin);
    hopt.title = _("mix-up B: weights");
    ch.figure(heatmap(xt::view(wrong_b, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    ch.say(_("  Rule of thumb: read the function that applies the mask, not the mask. masked_fill(mask == 0, ...) "
             "wants 1 = keep; mask * -1e9 wants 1 = hide. A causal mask with the wrong polarity does not crash: it "
             "trains a model that cheats by reading the future (or, with -inf, produces nan in the last row)."));
  });
}
