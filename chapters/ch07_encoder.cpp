// ch07_encoder: the encoder layer, pre-LN vs post-LN, and the whole 12-layer encoder.
//
// Follows: article 000 "Layer Normalization" (pre-LN TransformerEncoderLayer), "Positional
//          Embeddings" and the TransformerEncoder that stacks them (-> torch.Size([1, 5, 768]));
//          articles 001 (AddNorm / EncoderBlock) and 004 (EncoderLayer): the post-LN arrangement;
//          article 002 §9.2.2 (SublayerConnection, and the Encoder's final LayerNorm).
// Formula: pre-LN  (000, 002):  x = x + MHA(LN1(x));  x = x + FFN(LN2(x))      (B,T,C) -> (B,T,C)
//          post-LN (001, 004):  x = LN1(x + MHA(x));  x = LN2(x + FFN(x))      (B,T,C) -> (B,T,C)
//          encoder:  x = Embeddings(ids);  x = layer_l(x) for l = 1..N       (B,T) -> (B,T,C)
//          (article 002 adds a final x = LayerNorm(x) after the N layers)
// Run:     ./build/ch07_encoder [--text "time flies like an arrow"] [--seed 0] [--eval] [--plain]
//          ./build/ch07_encoder --layers 24        (a deeper stack: watch the pre-LN scale keep growing)
//          ./build/ch07_encoder --naive            (the same, on the plain loops; the timing shows the gap)
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/encoder_timing.hpp"
#include "course/i18n.hpp"
#include "course/layernorm_notes.hpp"
#include "course/layout.hpp"
#include "course/model_probes.hpp"
#include "exact/compare.hpp"
#include "exact/stats.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

using namespace ts;

// x.std(-1): the unbiased std of every row.   x (...,C) -> (...)
static Tensor row_std(const Tensor& x);
// x.std(-1).mean().item(): the typical spread of one token's vector.   x (B,T,C) -> scalar
static float mean_row_std(const Tensor& x);
// The note under encoder_layer's repr: its parts, with the activation FeedForward::operator()
// runs when it is not GELU (measured: the repr lists the modules the constructor declares, as
// PyTorch's does, not what operator() calls).
static std::string encoder_layer_note(const TransformerEncoderLayer& layer);
// the functions among `names` that ran in this step or before, "file:line name", joined by " and "
static std::string sites_that_ran(const Chapter& ch, std::initializer_list<const char*> names);
// The Step 6 table: per row l (0 = embeddings) the mean row std of the pre-LN and post-LN
// streams, with a bar for the pre-LN one.   layer_std (L,2) -> text
static std::string std_table(const Tensor& layer_std);

int main(int argc, char** argv) {
  Chapter ch("ch07_encoder", _("The encoder: pre-LN vs post-LN, and the 12-layer stack"),
             {{0, N_("§Layer Normalization, §Positional Embeddings")}, {1, N_("§Add & Norm, EncoderBlock")},
              {2, N_("§9.2.2 创建编码器 (SublayerConnection, Encoder)")}, {4, N_("Encoder (EncoderLayer)")}});
  ch.add_sentence_flags();
  Config config;  // BERT-base
  bool full_timing = false;
  ch.flag("--time", full_timing, _("time each path for ~0.4 s instead of a warm-up and 3 runs (steadier figures)"));
  ch.option("--layers", config.num_hidden_layers, _("number N of encoder layers, BERT-base's by default"), 1, 48);
  ch.option("--d-model", config.hidden_size, _("width C of every token vector"), 2, 2048,
            _("a row's unbiased std (article 002's LayerNorm, the .std(-1) checks) needs 2 values; the 30522-row "
              "tables must fit in memory"));
  ch.option("--heads", config.num_attention_heads, _("number H of attention heads, dividing C"));
  ch.option("--d-ff", config.intermediate_size, _("inner width F of the feed-forward network"), 1,
            16384);

  return ch.run(argc, argv, [&](Chapter& ch) {
    check_model_dims(config.hidden_size, config.num_attention_heads, 2);
    const double C = static_cast<double>(config.hidden_size), F = static_cast<double>(config.intermediate_size);
    const double params = 2.0 * config.vocab_size * C + (config.num_hidden_layers + 1) * (4 * C * C + 2 * C * F);
    if (params > 400e6)
      throw UsageError(trf("this model would have {m:.0f}M parameters ({gb:.1f} GB): choose fewer --layers or "
                           "a smaller --d-model / --d-ff (at most 400M)",
                           fmt::arg("m", params / 1e6), fmt::arg("gb", params * 4 / 1e9)));

    // ---------------------------------------------------------------- 1) the input
    ch.section(_("Step 1: the input of the encoder layer"), _("article 000 §Layer Normalization"));
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const ITensor& input_ids = sentence.input_ids;
    {
      // one layer: 4TC^2 + 2TCF + 2T^2C; about ten stacks' worth in all (pre-LN, post-LN, the
      // timed exact, fast and naive forwards); memory: the parameters twice (exact + packed).
      // Drawing and first touching that memory costs about 2.5 s per GB besides (measured: at
      // --layers 25 --d-model 1024 --d-ff 4096, 8 s of CPU of which 2.2 s multiply-adds)
      const double T = static_cast<double>(sentence.T());
      const double bytes = 2 * 4 * params;
      ch.budget(bytes, 10.0 * static_cast<double>(config.num_hidden_layers) * (4 * T * C * C + 2 * T * C * F + 2 * T * T * C),
                "--layers, --d-model, --d-ff or --text", 2.5e-9 * bytes);
    }
    ch.show("inputs.input_ids", input_ids, _("the ids of chapter 1"), Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, config.hidden_size);
    Tensor inputs_embeds = token_emb(input_ids);
    ch.show("inputs_embeds.shape", size_str(shape_of(inputs_embeds)), _("(B,T,C): what goes in must come out"));
    const float input_spread = mean_row_std(inputs_embeds);
    const Moments table = moments_of(token_emb.weight);  // how the table was drawn, measured
    ch.show("inputs_embeds.std(-1)", row_std(inputs_embeds), {"StdBackward0"},
            table.standard_normal
                ? trf("each token's spread, {s:.4f} on average: nn.Embedding's table is drawn from N(0, 1)",
                      fmt::arg("s", input_spread))
                : trf("each token's spread, {s:.4f} on average, from a table that is not N(0, 1) (its values' mean "
                      "{m:.3g}, std {sd:.3g}: look at {site})",
                      fmt::arg("s", input_spread), fmt::arg("m", table.mean),
                      fmt::arg("sd", table.std), fmt::arg("site", ch.ran("Embedding::Embedding"))),
            Shown::Twin);

    // ---------------------------------------------------------------- 2) pre-LN
    ch.section(_("Step 2: article 000's layer, pre-LN, as the article writes it: x = x + MHA(LN1(x)); x = x + FFN(LN2(x))"),
               _("article 000 §Layer Normalization, TransformerEncoderLayer"));
    TransformerEncoderLayer encoder_layer(config);  // draws: attention heads, output_linear, linear_1, linear_2
    encoder_layer.train(ch.training());
    ch.show("encoder_layer", encoder_layer.repr(),
            encoder_layer_note(encoder_layer), Shown::Twin);
    // 1) h = LN1(x)  2) x = x + MHA(h, h, h)  3) x = x + FFN(LN2(x))
    // (B,T,C) -> (B,T,C)
    Tensor pre_ln = encoder_layer(inputs_embeds);
    ch.show("encoder_layer(inputs_embeds).size()", size_str(shape_of(pre_ln)),
            _("the article's check: the layer keeps the shape, so layers can be stacked"));
    // does the layer return x + MHA(LN1(x)) + FFN(LN2(.))? measured on an eval-mode copy (no draw)
    const ResidualCheck residual = pre_ln_residuals(encoder_layer, inputs_embeds);
    ch.show("pre_ln = encoder_layer(inputs_embeds)", pre_ln, {"AddBackward0"},
            ch.verdict(residual.holds(),
                       residual.holds()
                           ? trf("the input plus two corrections: x + MHA(LN1(x)) + FFN(LN2(...)) rebuilt from the "
                                 "sublayers gives the layer's output to {g:.3g} (eval mode)",
                                 fmt::arg("g", residual.gap))
                           : trf("the layer's output is not x + MHA(LN1(x)) + FFN(LN2(...)) rebuilt from its "
                                 "sublayers: they differ by up to {g:.3g} (eval mode); {instead} "
                                 "(look at {site})",
                                 fmt::arg("g", residual.gap), fmt::arg("instead", residual.instead()),
                                 fmt::arg("site", sites_that_ran(ch, {"EncoderLayer::operator()",
                                                                      "SublayerConnection::operator()"})))),
            Shown::Twin);
    {
      const double r = mean_row_std(pre_ln) / input_spread;
      ch.show("pre_ln.std(-1)", row_std(pre_ln), {"StdBackward0"},
              !residual.holds() ? trf("{r:.4f} times the input's spread on average", fmt::arg("r", r))
              : r >= 1          ? trf("{r:.4f} times the input's spread on average: the corrections add to the stream "
                                      "and nothing divides it back",
                                      fmt::arg("r", r))
                                : trf("{r:.4f} times the input's spread on average: here the corrections partly "
                                      "cancel the input; still nothing divides the stream back",
                                      fmt::arg("r", r)),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 3) post-LN
    ch.section(_("Step 3: the same weights, post-LN: x = LN1(x + MHA(x)); x = LN2(x + FFN(x))"),
               _("article 001 §Add & Norm, EncoderBlock; article 004 Encoder, EncoderLayer"));
    // 1) x = LN1(x + MHA(x, x, x))  2) x = LN2(x + FFN(x))
    // (B,T,C) -> (B,T,C)
    Tensor post_ln = encoder_layer.post_ln(inputs_embeds);
    // a LayerNorm's output has variance ~1 (divided by C); the unbiased std shows sqrt(C/(C-1))
    const Range s = range_of(row_std(post_ln));
    const double want = std::sqrt(C / (C - 1));
    const bool unit_rows = std::fabs(s.lo - want) <= 1e-3 && std::fabs(s.hi - want) <= 1e-3;
    ch.show("post_ln = encoder_layer.post_ln(inputs_embeds)", post_ln, {"NativeLayerNormBackward0"},
            unit_rows ? _("the original paper's order: normalise after each residual add")
                      : _("the same weights in the original paper's order (the check below: its rows no longer "
                          "leave with a LayerNorm's variance)"),
            Shown::Twin);
    // the paper's order, rebuilt from the same sublayers (eval mode): the check that the
    // sentence above describes what post_ln computes
    const ResidualCheck post = post_ln_rebuilt(encoder_layer, inputs_embeds);
    ch.say("  " + ch.verdict(post.holds(),
                             post.holds()
                                 ? trf("LN2(x1 + FFN(x1)) with x1 = LN1(x + MHA(x)), rebuilt from the layer's sublayers, "
                                       "gives post_ln's output to {g:.3g} (eval mode)",
                                       fmt::arg("g", post.gap))
                                 : trf("post_ln's output is not LN2(x1 + FFN(x1)) with x1 = LN1(x + MHA(x)) rebuilt "
                                       "from the layer's sublayers: they differ by up to {g:.3g} (eval mode; look at "
                                       "{site})",
                                       fmt::arg("g", post.gap),
                                       fmt::arg("site", sites_that_ran(ch, {"TransformerEncoderLayer::post_ln",
                                                                            "SublayerConnection::operator()"})))));
    ch.show("post_ln.std(-1)", row_std(post_ln), {"StdBackward0"},
            ch.verdict(unit_rows, unit_rows ? trf("{lo:.5f} to {hi:.5f}: LayerNorm's output has variance 1 (divided by "
                                                  "C), which the unbiased std (divided by C-1) shows as sqrt(C/(C-1)) "
                                                  "= {w:.5f}, up to eps",
                                                  fmt::arg("lo", s.lo), fmt::arg("hi", s.hi), fmt::arg("w", want))
                                            : trf("{lo:.5f} to {hi:.5f}, not sqrt(C/(C-1)) = {w:.5f} (to 1e-3): the "
                                                  "rows leaving post_ln no longer have a LayerNorm's unit variance",
                                                  fmt::arg("lo", s.lo), fmt::arg("hi", s.hi), fmt::arg("w", want))),
            Shown::Twin);
    Tensor pre_minus_post = pre_ln - post_ln;
    ch.show("pre_ln - post_ln", pre_minus_post, {"SubBackward0"},
            ch.training() ? _("same weights, same input; the arrangement changes every number (and in train mode the "
                              "feed-forward's Dropout drew a new mask for this call)")
                          : _("same weights, same input, no dropout: the arrangement alone changes every number"),
            Shown::Twin);
    ch.show("(pre_ln - post_ln).abs().max()", max_abs_diff(pre_ln, post_ln), {"MaxBackward1"},
            unit_rows ? _("pre-LN normalises what enters each sublayer; post-LN normalises the sums that leave it")
                      : _("pre-LN normalises what enters each sublayer; post_ln's output no longer comes out of a "
                          "LayerNorm (above)"),
            Shown::Twin);

    // ---------------------------------------------------------------- 4) article 002's form
    ch.section(_("Step 4: article 002's SublayerConnection around the same two sublayers"),
               _("article 002 §9.2.2 创建编码器, SublayerConnection: x + dropout(sublayer(norm(x)))"));
    // Two fresh SublayerConnections (their LayerNorm has no random weights: no draws)
    std::vector<SublayerConnection> sublayer(2, SublayerConnection(config.hidden_size, config.hidden_dropout_prob));
    for (SublayerConnection& s : sublayer) s.train(ch.training());
    ch.show("sublayer[0]", sublayer[0].repr(),
            trf("article 002's LayerNorm (unbiased std, eps 1e-6) and a Dropout(p = {p}) on the sublayer's output",
                fmt::arg("p", sublayer[0].dropout.p)),
            Shown::Twin);
    // x = x + dropout(MHA(norm(x)));  out = x + dropout(FFN(norm(x)))
    // (B,T,C) -> (B,T,C)
    Tensor x_002 = sublayer[0](inputs_embeds, [&](const Tensor& h) { return encoder_layer.self_attn(h, h, h); });
    Tensor out_002 = sublayer[1](x_002, [&](const Tensor& h) { return encoder_layer.feed_forward(h); });
    ch.show("out_002 = sublayer[1](sublayer[0](inputs_embeds, self_attn), feed_forward)", out_002, {"AddBackward0"},
            _("the same pre-LN idea written as a wrapper around any sublayer"), Shown::Twin);
    ch.show("(out_002 - pre_ln).abs().max()", max_abs_diff(out_002, pre_ln), {"MaxBackward1"},
            !residual.holds() ? trf("SublayerConnection adds the input once around each sublayer; encoder_layer "
                                    "does not (Step 2: {instead})",
                                    fmt::arg("instead", residual.instead()))
            : !ch.training()  ? _("eval mode: no dropout masks, so the gap is the LayerNorm formulas' (chapter 6: "
                                  "unbiased std, eps 1e-6)")
            : sublayer[0].dropout.p > 0
                ? _("train mode: each call draws new dropout masks (the feed-forward's own, and article 002's "
                    "Dropout after each sublayer); run --eval to see what is left")
                : _("train mode: the feed-forward's own dropout draws a new mask for this call (article 002's Dropout "
                    "has p = 0 and draws none); run --eval to see what is left"),
            Shown::Twin);

    // ---------------------------------------------------------------- 5) the whole encoder
    TransformerEncoder encoder(config);  // draws: token table, position table, then layer 1..N
    const size_t N = encoder.layers.size();
    ch.section(trf("Step 5: TransformerEncoder: Embeddings, then {n} layers", fmt::arg("n", N)),
               _("article 000 §Positional Embeddings, TransformerEncoder"));
    encoder.train(ch.training());
    {
      const size_t emb = encoder.embeddings.token_embeddings.weight.size() +
                         encoder.embeddings.position_embeddings.weight.size() + 2 * static_cast<size_t>(C);
      const size_t per_layer = parameter_count(encoder.layers[0]);
      ch.say(trf("  parameters: embeddings {e:.1f}M + {n} layers x {l:.2f}M = {t:.1f}M", fmt::arg("e", emb / 1e6),
                 fmt::arg("n", encoder.layers.size()), fmt::arg("l", per_layer / 1e6),
                 fmt::arg("t", (emb + per_layer * encoder.layers.size()) / 1e6)));
    }
    // x = Embeddings(ids); then x = layer_l(x), keeping every intermediate x (the same ops as encoder(ids))
    // (B,T) -> (B,T,C) -> ... -> (B,T,C)
    std::vector<Tensor> pre_hidden{encoder.embeddings(input_ids)};
    for (const TransformerEncoderLayer& layer : encoder.layers) pre_hidden.push_back(layer(pre_hidden.back()));
    const Tensor& encoded = pre_hidden.back();
    ch.show("encoder(inputs.input_ids).size()", size_str(shape_of(encoded)),
            trf("one C-vector per token, now mixed with every other token's, {n} times over", fmt::arg("n", N)));
    ch.show("encoder(inputs.input_ids)", encoded, {"AddBackward0"},
            _("article 000 stops here: no LayerNorm after the last layer"), Shown::Twin);
    {
      const double first = mean_row_std(pre_hidden.front()), last = mean_row_std(encoded);
      ch.show("encoder(inputs.input_ids).std(-1)", row_std(encoded), {"StdBackward0"},
              trf("the residual stream's spread went from {a:.4f} (embeddings) to {b:.4f} after {n} layers (table "
                  "below)",
                  fmt::arg("a", first), fmt::arg("b", last), fmt::arg("n", N)),
              Shown::Twin);
    }
    // article 002's Encoder ends with self.norm(x)
    LayerNorm norm(config.hidden_size, LayerNormArithmetic::Article002);
    Tensor final_norm = norm(encoded);
    ch.show("norm(encoder(inputs.input_ids))  # article 002's Encoder.norm", final_norm, {"AddBackward0"},
            _("article 002 normalises once more after the stack: a pre-LN stack needs it, its output is never "
              "normalised otherwise"),
            Shown::Twin);
    ch.erratum(_("002 §9.2.2, lines 323-327"),
               _("Encoder.forward computes output = self.norm(x) inside the loop, after every layer, and keeps only "
                 "the last one: the same result as one norm after the loop (what runs here), at the cost of N-1 "
                 "unused LayerNorms (and with N = 0, output is never assigned). The Annotated Transformer writes "
                 "the norm after the loop."));
    {
      const Range s = range_of(row_std(final_norm));
      ch.show("norm(encoder(inputs.input_ids)).std(-1)", row_std(final_norm), {"StdBackward0"},
              ch.verdict(std::fabs(s.lo - 1) <= 1e-4 && std::fabs(s.hi - 1) <= 1e-4,
                         std::fabs(s.lo - 1) <= 1e-4 && std::fabs(s.hi - 1) <= 1e-4
                             ? trf("{lo:.5f} to {hi:.5f}: 1 up to eps, since article 002's LayerNorm divides by the "
                                   "unbiased std, the same yardstick as .std(-1)",
                                   fmt::arg("lo", s.lo), fmt::arg("hi", s.hi))
                             : trf("{lo:.5f} to {hi:.5f}, not 1 (to 1e-4): article 002's LayerNorm no longer divides "
                                   "each row by its unbiased std",
                                   fmt::arg("lo", s.lo), fmt::arg("hi", s.hi))),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 6) the scale, layer by layer
    ch.section(_("Step 6: how the activation scale grows, pre-LN vs post-LN"),
               _("article 000 vs articles 001 / 004"));
    // post-LN stack: the same layers, from the same embedding output
    // (B,T,C) -> ... -> (B,T,C)
    std::vector<Tensor> post_hidden{pre_hidden[0]};
    for (const TransformerEncoderLayer& layer : encoder.layers) post_hidden.push_back(layer.post_ln(post_hidden.back()));
    ch.show("post_ln_stack[-1]", post_hidden.back(), {"NativeLayerNormBackward0"},
            _("the post-LN stack's output, for comparison with encoder(inputs.input_ids)"), Shown::Twin);
    // x.std(-1).mean() after every layer   (L,2): pre-LN, post-LN
    const size_t L = pre_hidden.size();
    Tensor layer_std = Tensor::from_shape({L, 2});
    for (size_t l = 0; l < L; ++l) {
      layer_std(l, 0) = mean_row_std(pre_hidden[l]);
      layer_std(l, 1) = mean_row_std(post_hidden[l]);
    }
    ch.show("layer_std  # row l: after l layers (0 = embeddings); columns: pre-LN, post-LN", layer_std, {},
            _("x.std(-1).mean() after every layer"), Shown::Twin);
    {
      ch.figure(std_table(layer_std));
      const double v0 = layer_std(0, 0) * layer_std(0, 0), vN = layer_std(L - 1, 0) * layer_std(L - 1, 0);
      const double per = (vN - v0) / static_cast<double>(L - 1);
      const double post_last = layer_std(L - 1, 1), want = std::sqrt(C / (C - 1));
      const std::string post =
          std::fabs(post_last - want) <= 1e-3
              ? trf("Post-LN ends every layer with a LayerNorm: its column reads {post:.4f} after the last layer, the "
                    "unbiased std of a unit-variance row, sqrt(C/(C-1)) = {want:.4f}.",
                    fmt::arg("post", post_last), fmt::arg("want", want))
              : trf("Post-LN's column reads {post:.4f} after the last layer, not the {want:.4f} of a LayerNorm's "
                    "unit-variance row: post_ln no longer ends with a LayerNorm (Step 3).",
                    fmt::arg("post", post_last), fmt::arg("want", want));
      ch.say(residual.holds()
                 ? trf("  Pre-LN: every layer adds its attention and feed-forward outputs to the stream and nothing "
                       "divides it back: its variance went from {v0:.3f} to {vN:.3f}, {per:+.4f} per layer with these "
                       "weights (sublayers that write larger outputs move it faster). {post}",
                       fmt::arg("v0", v0), fmt::arg("vN", vN), fmt::arg("per", per), fmt::arg("post", post))
                 : trf("  Pre-LN: its variance went from {v0:.3f} to {vN:.3f}, {per:+.4f} per layer; {instead} "
                       "(Step 2). {post}",
                       fmt::arg("v0", v0), fmt::arg("vN", vN), fmt::arg("per", per), fmt::arg("post", post),
                       fmt::arg("instead", residual.instead())));
      if (ch.training()) {
        // the embeddings without their dropout (eval mode draws nothing): what row 0 would be
        Embeddings quiet = encoder.embeddings;
        quiet.train(false);
        const double p = encoder.embeddings.dropout.p;
        ch.say(trf("  Row 0 is {r:.4f}; the same embeddings in eval mode spread {e:.4f}. Embeddings ends with "
                   "nn.Dropout() (p = {p}), which in train mode scales its kept values by 1/(1-p): the std by about "
                   "sqrt(1/(1-p)) = {f:.3f}.",
                   fmt::arg("r", layer_std(0, 0)), fmt::arg("e", mean_row_std(quiet(input_ids))), fmt::arg("p", p),
                   fmt::arg("f", std::sqrt(1.0 / (1.0 - p)))));
      }
    }

    // ---------------------------------------------------------------- 7) timing (default mode only)
    if (!ch.rich()) return;
    ch.section(_("Step 7: the same encoder, timed: PyTorch-exact path, fast path, plain loops"),
               _("the course's fast path, docs/performance.md"));
    // exact, fast (src/fast/fast_encoder.cpp) and with --naive plain loops; checks fast against exact
    time_encoder_paths(ch, encoder, input_ids, full_timing);
  });
}

static Tensor row_std(const Tensor& x) {
  Tensor s = std_lastdim(x, 1);  // (...,1)
  Shape shape = shape_of(s);
  shape.pop_back();
  s.reshape(shape);
  return s;
}

static float mean_row_std(const Tensor& x) {
  Tensor s = row_std(x);  // (B,T)
  s.reshape({1, s.size()});
  return mean_lastdim_keepdim(s).data()[0];
}

static std::string std_table(const Tensor& layer_std) {
  const size_t L = layer_std.shape()[0];
  float top = 0;
  for (float v : layer_std) top = std::max(top, v);
  std::vector<std::vector<std::string>> rows = {{_("after"), "pre-LN", "", "post-LN"}};
  for (size_t l = 0; l < L; ++l) {
    // a bar of up to 24 '#' for the pre-LN column
    const int bar = static_cast<int>(std::lround(24.0 * layer_std(l, 0) / top));
    rows.push_back({l == 0 ? std::string(_("embeddings")) : trf("layer {l}", fmt::arg("l", l)),
                    fmt::format("{:.4f}", layer_std(l, 0)), pad_right(std::string(static_cast<size_t>(bar), '#'), 24),
                    fmt::format("{:.4f}", layer_std(l, 1))});
  }
  return text_table(rows, 1);
}

static std::string sites_that_ran(const Chapter& ch, std::initializer_list<const char*> names) {
  std::string out;
  for (const char* name : names) {
    const std::string site = ch.ran(name);
    if (site.empty()) continue;
    out += (out.empty() ? std::string() : std::string(_(" and "))) + site;
  }
  return out;
}

static std::string encoder_layer_note(const TransformerEncoderLayer& layer) {
  const std::string act = feed_forward_activation();
  const std::string note = trf("two LayerNorms, chapter 4's {H}-head attention, chapter 5's feed-forward",
                               fmt::arg("H", layer.self_attn.h));
  if (act == "GELU") return note;
  return note + trf(", whose operator() runs {act} (measured), whatever modules the repr above lists",
                    fmt::arg("act", activation_words(act)));
}
