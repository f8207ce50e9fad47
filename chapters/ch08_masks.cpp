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
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/tensor_ops.hpp"
#include "exact/tfprint.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/article004.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// ---------------------------------------------------------------- the masks themselves

// torch.equal: same shape and every element equal (xtensor's == on containers; NaN != NaN).
template <class A>
static bool same(const A& a, const A& b) {
  return a == b;
}

static std::string py_bool(bool b) { return b ? "True" : "False"; }

// Largest |a - b| over the entries that are numbers in both (NaN rows skipped).
static double max_abs_diff(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (!std::isnan(a.data()[i]) && !std::isnan(b.data()[i]))
      m = std::max(m, std::fabs(static_cast<double>(a.data()[i]) - b.data()[i]));
  return m;
}

// How many rows of a (B,T,S) tensor are all NaN.
static size_t nan_rows(const Tensor& w) {
  const size_t S = w.shape()[w.dimension() - 1];
  size_t n = 0;
  for (size_t r = 0; r < w.size() / S; ++r)
    if (std::all_of(w.data() + r * S, w.data() + (r + 1) * S, [](float x) { return std::isnan(x); })) ++n;
  return n;
}

int main(int argc, char** argv) {
  Chapter ch("ch08_masks", "Masks: causal, padding, keep vs hide, -inf vs -1e9",
             "article 000 (masked_fill, query/key masks, Decoder tril), article 004 §3.1 (padding and "
             "look-ahead masks, -1e9), article 002 (attention(), tgt_mask), article 001 (decoder_visible_mask)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  // --valid-len's default depends on T (3, or T if the text is shorter): set once T is known.
  int64_t d_model = 768, valid_len = 0, look_ahead = 3;
  ch.option("--d-model", d_model, "size C of each token vector, = dim_k of the scores (default 768, BERT-base)");
  ch.option("--valid-len", valid_len,
            "real tokens in the padding-mask demo; the rest count as padding (default 3, or T if shorter)");
  ch.option("--look-ahead", look_ahead, "size of the article-004 look-ahead mask that is printed (default 3)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base
    check_range("--d-model", d_model, 1, 2048, "the 30522-row table must fit in memory");
    check_range("--look-ahead", look_ahead, 1, 64);
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.vmin = 0.0f;  // masks and weights share one scale: 0 blank, 1 darkest
    hopt.vmax = 1.0f;

    // ---------------------------------------------------------------- 1) the scores of chapter 2
    ch.section("Step 1: the scores of chapter 2", "article 000, Scaled Dot-product Attention");
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    const size_t T = tokens.size();
    if (!ch.given("--valid-len")) valid_len = std::min<int64_t>(3, static_cast<int64_t>(T));
    check_range("--valid-len", valid_len, 1, static_cast<int64_t>(T), "the tokens of --text");
    ch.show("inputs.input_ids", input_ids, "the sentence of chapter 1, T = " + std::to_string(T) + " tokens",
            Shown::Twin);
    Embedding token_emb(config.vocab_size, d_model);
    // q = k = v = E   (B,T,C)
    const Tensor inputs_embeds = token_emb(input_ids);
    const Tensor& query = inputs_embeds;
    const Tensor& key = inputs_embeds;
    const Tensor& value = inputs_embeds;
    // scores = Q K^T / sqrt(D)
    // (B,T,S)
    Tensor scores = bmm_nt(query, key);
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
    for (float& s : scores) s = s / scale;
    ch.show("scores", scores, {"DivBackward0"}, "as in chapter 2: every query sees every key", Shown::Twin);

    // ---------------------------------------------------------------- 2) article 000: the causal mask
    ch.section("Step 2: a decoder may not look ahead: tril and masked_fill(mask == 0, -inf)",
               "article 000, Transformer Decoder");
    // mask[t,s] = 1 if s <= t (keep) else 0 (hide)
    // (1,T,S)
    Tensor mask = tril_ones(T);
    mask.reshape({1, T, T});
    Tensor mask0 = xt::view(mask, 0, xt::all(), xt::all());
    ch.show("mask[0]", mask0, {}, "torch.tril(torch.ones(seq_len, seq_len)): row t keeps keys 0..t (1 = keep)");
    hopt.title = "mask[0] (article 000, 1 = keep): rows = queries, columns = keys";
    hopt.cell_width = 7;
    ch.figure(heatmap(mask0, tokens, tokens, hopt));
    // hide = (mask == 0)   (1,T,S) bool
    BTensor hide = xt::equal(mask, 0.0f);
    ch.show("mask == 0", hide, "True marks what masked_fill overwrites: the future keys above the diagonal",
            Shown::Twin);
    // scores' = where(mask == 0, -inf, scores)
    // (B,T,S)
    Tensor masked_scores = masked_fill_zero(scores, mask, -INFINITY);
    ch.show("scores.masked_fill(mask == 0, -float(\"inf\"))", masked_scores, {"MaskedFillBackward0"},
            "the lower triangle is chapter 2's scores unchanged; above it -inf, and e^-inf = 0");
    HeatmapOptions sopt = hopt;  // scores: their own range
    sopt.vmin = sopt.vmax = NAN;
    sopt.title = "scores.masked_fill(mask == 0, -inf)";
    ch.figure(heatmap(xt::view(masked_scores, 0, xt::all(), xt::all()), tokens, tokens, sopt));
    // weights = softmax(scores', dim=-1)
    // (B,T,S)
    Tensor masked_weights = softmax(masked_scores);
    ch.show("masked_weights", masked_weights, {"SoftmaxBackward0"},
            "exact zeros above the diagonal; each row still sums to 1 over the keys it may see", Shown::Twin);
    hopt.title = "masked_weights";
    ch.figure(heatmap(xt::view(masked_weights, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // out = softmax(masked scores) V
    // (B,T,S) x (B,S,D) -> (B,T,D)
    Tensor causal_out = scaled_dot_product_attention(query, key, value, &mask);
    ch.show("scaled_dot_product_attention(query, key, value, mask=mask)", causal_out, {"BmmBackward0"},
            "row t mixes only the values of tokens 0..t; the first row is token 0's own value", Shown::Twin);

    // ---------------------------------------------------------------- 3) article 000: padding masks via bmm
    ch.section("Step 3: padding: query_mask and key_mask combined with bmm",
               "article 000, Scaled Dot-product Attention");
    // key_mask[s] = 1 for the first valid_len tokens, 0 for padding   (B,S)
    Tensor key_mask = zeros({1, T});
    for (int64_t s = 0; s < valid_len; ++s) key_mask(0, s) = 1.0f;
    const Tensor& query_mask = key_mask;
    ch.show("key_mask", key_mask, {},
            valid_len < static_cast<int64_t>(T)
                ? fmt::format("pretend only the first {} tokens are real and the rest padding (query_mask = key_mask)",
                              valid_len)
                : std::string("all tokens real, none padding (query_mask = key_mask)"),
            Shown::Twin);
    // pad_mask[t,s] = query_mask[t] * key_mask[s]: an outer product, as a bmm with K = 1
    // (B,T,1) x (B,1,S) -> (B,T,S)
    Tensor q_col = query_mask, k_row = key_mask;
    q_col.reshape({1, T, 1});
    k_row.reshape({1, 1, T});
    Tensor pad_mask = bmm(q_col, k_row);
    ch.show("torch.bmm(query_mask.unsqueeze(-1), key_mask.unsqueeze(1))", pad_mask, {},
            "1 only where both the query and the key are real: padded keys are hidden, AND padded queries "
            "hide every key",
            Shown::Twin);
    hopt.title = "pad_mask[0] (1 = keep)";
    ch.figure(heatmap(xt::view(pad_mask, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // weights = softmax(where(pad_mask == 0, -inf, scores))
    // (B,T,S)
    Tensor pad_weights_inf = softmax(masked_fill_zero(scores, pad_mask, -INFINITY));
    const size_t n_nan = nan_rows(pad_weights_inf);
    ch.show("F.softmax(scores.masked_fill(pad_mask == 0, -float(\"inf\")), dim=-1)", pad_weights_inf,
            {"SoftmaxBackward0"},
            n_nan ? fmt::format("the {} padded queries have no key left: their row max is -inf, and softmax "
                                "computes exp(-inf - (-inf)) = exp(nan)",
                                n_nan)
                  : std::string("every query keeps at least one key, so no row is nan"),
            Shown::Twin);
    hopt.title = "weights with -inf";
    ch.figure(heatmap(xt::view(pad_weights_inf, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // out = softmax(masked scores) V    (B,T,D)
    Tensor pad_out = scaled_dot_product_attention(query, key, value, &pad_mask);
    ch.show("scaled_dot_product_attention(query, key, value, query_mask, key_mask)", pad_out, {"BmmBackward0"},
            n_nan ? "the nan rows go on through bmm: the padded rows of the output are nan" : "no nan rows, no nan output",
            Shown::Twin);
    // a second attention layer on that output, same masks   (B,T,D)
    Tensor pad_out2 = scaled_dot_product_attention(pad_out, pad_out, pad_out, &pad_mask);
    ch.show("scaled_dot_product_attention(pad_out, pad_out, pad_out, query_mask, key_mask)", pad_out2,
            {"BmmBackward0"},
            n_nan ? "one layer later every row is nan: the real queries give the padded keys weight 0, but "
                    "0 * nan = nan in weights @ V"
                  : "still finite: no row of the mask is all zeros",
            Shown::Twin);

    // ---------------------------------------------------------------- 4) -inf vs -1e9
    ch.section("Step 4: the same fully masked rows with -1e9 instead of -inf", "article 002, attention()");
    // scores' = where(pad_mask == 0, -1e9, scores)
    // (B,T,S)
    Tensor pad_scores_1e9 = masked_fill_zero(scores, pad_mask, -1e9f);
    ch.show("scores.masked_fill(pad_mask == 0, -1e9)", pad_scores_1e9, {"MaskedFillBackward0"},
            "article 002 writes a large finite number instead of -inf", Shown::Twin);
    Tensor pad_weights_1e9 = softmax(pad_scores_1e9);
    ch.show("F.softmax(scores.masked_fill(pad_mask == 0, -1e9), dim=-1)", pad_weights_1e9, {"SoftmaxBackward0"},
            n_nan ? fmt::format("a fully masked row is now {0} equal numbers: uniform weights 1/{0}, over padding "
                                "keys too (wrong but finite); the other rows are unchanged",
                                T)
                  : std::string("every row keeps a key, so -1e9 gives the same weights as -inf"),
            Shown::Twin);
    hopt.title = "weights with -1e9";
    ch.figure(heatmap(xt::view(pad_weights_1e9, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    const double row_diff = max_abs_diff(pad_weights_inf, pad_weights_1e9);
    if (n_nan)
      ch.say(fmt::format(
          "  -inf vs -1e9: rows that keep at least one key differ by at most {:.1e} (e^(-1e9 - max) is 0.0 in\n"
          "  float32, exactly like e^-inf); only the {} fully masked row(s) differ: nan with -inf, 1/{} with -1e9.\n"
          "  The -1e9 rows are garbage (they attend to padding too) but finite, and the loss can ignore them; the\n"
          "  nan rows are not harmless, because the next layer multiplies them by 0 and 0 * nan = nan (step 3).",
          row_diff, n_nan, T));
    else
      ch.say(fmt::format(
          "  -inf vs -1e9: no row is fully masked here, and the two give weights that differ by at most {:.1e}\n"
          "  (e^(-1e9 - max) is 0.0 in float32, exactly like e^-inf). Try --valid-len 1 for the rows where they part.",
          row_diff));

    // ---------------------------------------------------------------- 5) article 004: 1 = hide, additive -1e9
    ch.section("Step 5: article 004's masks: 1 = hide, added as mask * -1e9", "article 004 §3.1-3.2");
    // padding_mask[b,0,0,s] = (x[b,s] == 0)
    // (B,1,1,S) = (2,1,1,5)
    const std::vector<std::vector<int64_t>> x = {{1, 2, 0, 0, 0}, {3, 4, 5, 0, 0}};
    Tensor padding_mask = create_padding_mask(x);
    ch.show("create_padding_mask(x)", tf_str(padding_mask),
            "x = [[1,2,0,0,0],[3,4,5,0,0]]: 1 where the id is the padding id 0 (1 = hide), shaped to broadcast "
            "over heads and queries");
    ch.show("create_padding_mask(x).shape", tf_shape_str(shape_of(padding_mask)), "(batch_size, 1, 1, seq_len)",
            Shown::Twin);
    hopt.title = "padding_mask[:, 0, 0, :] (article 004, 1 = hide): rows = sentences, columns = positions";
    hopt.cell_width = 3;
    ch.figure(heatmap(xt::view(padding_mask, xt::all(), 0, 0, xt::all()), {"x[0]", "x[1]"}, {}, hopt));
    // look_ahead[t,s] = 1 if s > t (hide the future)
    // (T,S)
    Tensor look = create_look_ahead_mask(look_ahead);
    ch.show(fmt::format("create_look_ahead_mask({})", look_ahead), tf_str(look),
            "1 - band_part(ones, -1, 0): the upper triangle, the keys a query may NOT see");
    hopt.title = fmt::format("create_look_ahead_mask({}) (1 = hide)", look_ahead);
    ch.figure(heatmap(look, {}, {}, hopt));
    // combine = max(padding, look_ahead): hidden if either says hide
    // (2,1,1,5) with (5,5) -> (2,1,5,5)
    Tensor combine_mask = xt::maximum(padding_mask, create_look_ahead_mask(5));  // broadcast like numpy
    ch.show("tf.maximum(create_padding_mask(x), create_look_ahead_mask(5))", tf_str(combine_mask),
            "the decoder's first sublayer hides the future AND the padding; maximum = logical OR on 0/1",
            Shown::Twin);
    for (size_t b = 0; b < 2; ++b) {
      hopt.title = fmt::format("combine_mask[{}, 0] (1 = hide)", b);
      ch.figure(heatmap(xt::view(combine_mask, b, 0, xt::all(), xt::all()), {}, {}, hopt));
    }
    // logits = 0 + mask * -1e9
    // (2,1,5,5)
    // (0 * -1e9 is -0.0; adding it to the zeros gives +0.0, which is what TensorFlow prints)
    Tensor logits = zeros(shape_of(combine_mask)) + combine_mask * -1e9f;
    ch.show("logits = tf.zeros((2, 1, 5, 5)) + combine_mask * -1e9", tf_str(logits),
            "with all scores 0, the logits are just the mask times -1e9", Shown::Twin);
    ch.show("tf.nn.softmax(logits, axis=-1)", tf_str(softmax(logits)),
            "uniform over the visible keys: 1, 1/2, 1/3 (sentence 1 has 3 real tokens), never over padding",
            Shown::Twin);
    // Article 004's scaled_dot_product_attention on our q = k = v with create_look_ahead_mask(T):
    // attn_weight = softmax(Q K^T / sqrt(dk) + mask * -1e9)   (B,T,S)
    Tensor look_ahead_T = create_look_ahead_mask(static_cast<int64_t>(T));
    Tensor attn_weight;
    scaled_dot_product_attention_004(query, key, value, &look_ahead_T, &attn_weight);
    ch.show("torch.equal(attn_weight, masked_weights)", py_bool(same(attn_weight, masked_weights)),
            "additive -1e9 with 1 = hide gives the same bits as step 2's masked_fill(-inf) with 1 = keep: "
            "s - 1e9 rounds to -1e9 and e^(-1e9 - max) = 0.0",
            Shown::Twin);

    // ---------------------------------------------------------------- 6) article 002: a boolean mask
    ch.section("Step 6: article 002's tgt_mask: a boolean lower triangle", "article 002, DecoderLayer");
    // tgt_mask[t,s] = (s <= t)   (1,T,S) bool, True = keep
    BTensor tgt_mask = subsequent_mask(static_cast<int64_t>(T));
    BTensor tgt_mask0 = xt::view(tgt_mask, 0, xt::all(), xt::all());
    ch.show("tgt_mask[0]", tgt_mask0,
            fmt::format("subsequent_mask({}): True = may attend, the same picture as article 000's 1. (the "
                        "article printed it on cuda:0)",
                        T));
    hopt.title = "tgt_mask[0] (article 002, True = keep)";
    hopt.cell_width = 7;
    ch.figure(heatmap(xt::cast<float>(tgt_mask0), tokens, tokens, hopt));
    // p_attn = softmax(where(tgt_mask == 0, -1e9, scores))   (B,T,S)
    // (the bool mask == 0 is the float mask == 0 of its 0/1 values)
    Tensor p_attn = softmax(masked_fill_zero(scores, xt::cast<float>(tgt_mask), -1e9f));
    ch.show("torch.equal(p_attn, masked_weights)", py_bool(same(p_attn, masked_weights)),
            "article 002's attention(): masked_fill(mask == 0, -1e9), same weights as -inf since no row is empty",
            Shown::Twin);

    // ---------------------------------------------------------------- 7) article 001: valid lengths
    ch.section("Step 7: article 001's decoder_visible_mask: the same triangle as valid lengths",
               "article 001, DecoderBlock");
    // valid_lens[t] = t + 1: query t may see t + 1 keys
    // (B,T) with B = 1
    ITensor decoder_visible_mask = ITensor::from_shape({1, T});
    for (size_t t = 0; t < T; ++t) decoder_visible_mask(0, t) = static_cast<int64_t>(t) + 1;
    ch.show("decoder_visible_mask = torch.arange(1, num_steps + 1).repeat(batch, 1)", decoder_visible_mask,
            "in training, article 001 gives each query a count of visible keys instead of a matrix (at inference "
            "it passes None: its key/value cache then holds only the past)",
            Shown::Twin);
    // keep[t,s] = s < valid_lens[t]
    // (T,S) bool
    BTensor visible = BTensor::from_shape({T, T});
    for (size_t t = 0; t < T; ++t)
      for (size_t s = 0; s < T; ++s) visible(t, s) = static_cast<int64_t>(s) < decoder_visible_mask(0, t);
    ch.show("visible = torch.arange(num_steps)[None, :] < decoder_visible_mask[0][:, None]", visible,
            "expanding the counts over the keys, as the attention it calls does", Shown::Twin);
    ch.show("torch.equal(visible, tgt_mask[0])", py_bool(same(visible, tgt_mask0)),
            "a third spelling of the same causal mask, 1 = keep", Shown::Twin);

    // ---------------------------------------------------------------- 8) two polarities
    ch.section("Step 8: 1 = keep vs 1 = hide, and what happens when they are mixed up",
               "articles 000/001/002 vs article 004");
    ch.say(
        "  article  mask                              1 / True means   applied as\n"
        "  000      torch.tril(torch.ones(T, T))      keep             scores.masked_fill(mask == 0, -inf)\n"
        "  002      subsequent_mask(T)  (bool)        keep             scores.masked_fill(mask == 0, -1e9)\n"
        "  001      arange(1, T + 1)  (valid lengths) keys kept        key s kept if s < valid_lens[t]\n"
        "  004      1 - band_part(ones, -1, 0)        HIDE             scores + mask * -1e9\n"
        "  004      create_padding_mask(seq)          HIDE             scores + mask * -1e9");
    // keep = 1 - hide;  keep_bool = (keep == 1)
    Tensor flipped = 1.0f - look_ahead_T;
    ch.show("torch.equal(1 - look_ahead_mask, mask[0])", py_bool(same(flipped, mask0)),
            "converting article 004's mask to article 000's: subtract from 1", Shown::Twin);
    BTensor mask_is_one = xt::equal(mask, 1.0f);
    ch.show("torch.equal(tgt_mask, mask == 1)", py_bool(same(tgt_mask, mask_is_one)),
            "and article 000's float mask to article 002's bool one: compare with 1", Shown::Twin);
    // Mix-up A: a hide-mask given to a keep-convention function (masked_fill(mask == 0, -inf))
    // (B,T,S)
    Tensor look_ahead_T1 = look_ahead_T;
    look_ahead_T1.reshape({1, T, T});  // (T,S) -> (1,T,S), broadcast over the batch
    Tensor wrong_a = softmax(masked_fill_zero(scores, look_ahead_T1, -INFINITY));
    ch.show("F.softmax(scores.masked_fill(look_ahead_mask == 0, -float(\"inf\")), dim=-1)", wrong_a,
            {"SoftmaxBackward0"},
            "article 004's mask (1 = hide) read as 1 = keep: every token sees only its FUTURE, never itself, "
            "and the last token sees nothing at all: nan",
            Shown::Twin);
    hopt.title = "mix-up A: weights";
    ch.figure(heatmap(xt::view(wrong_a, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    // Mix-up B: a keep-mask given to a hide-convention function (scores + mask * -1e9)
    // (article 004's function with article 000's mask: its weights are softmax(scores + mask * -1e9))
    Tensor wrong_b;
    scaled_dot_product_attention_004(query, key, value, &mask, &wrong_b);
    ch.show("article004.scaled_dot_product_attention(query, key, value, mask)[1]", wrong_b, {"SoftmaxBackward0"},
            fmt::format("article 000's mask (1 = keep) given to article 004's function, which adds mask * -1e9 "
                        "(1 = hide): the same future-only attention, and the last row, all -1e9, silently becomes "
                        "uniform 1/{}: no nan to warn you",
                        T),
            Shown::Twin);
    hopt.title = "mix-up B: weights";
    ch.figure(heatmap(xt::view(wrong_b, 0, xt::all(), xt::all()), tokens, tokens, hopt));
    ch.say(
        "  Rule of thumb: read the function that applies the mask, not the mask. masked_fill(mask == 0, ...) wants\n"
        "  1 = keep; mask * -1e9 wants 1 = hide. A causal mask with the wrong polarity does not crash: it trains\n"
        "  a model that cheats by reading the future (or, with -inf, produces nan in the last row).");
  });
}
