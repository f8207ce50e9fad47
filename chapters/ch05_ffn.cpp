// ch05_ffn: the position-wise feed-forward layer, and why it needs its activation.
//
// Follows: article 000 "The Feed-Forward Layer" (FeedForward: Linear 768 -> 3072, GELU,
//          Linear 3072 -> 768, Dropout 0.1, applied to the multi-head output ->
//          torch.Size([1, 5, 768]));
//          article 001 "Pointwise Feed-Forward Networks" (PositionWiseFFN: LazyLinear, ReLU,
//          LazyLinear);
//          article 002 §9.2.1 (PositionwiseFeedForward: w_2(dropout(w_1(x))), no activation).
// Formula: FFN(x) = Dropout(GELU(x W1^T + b1) W2^T + b2)     (B,T,C) -> (B,T,F) -> (B,T,C)
//          without the activation: (x W1^T + b1) W2^T + b2 = x (W2 W1)^T + (W2 b1 + b2),
//          i.e. ONE Linear with W = W2 W1 (C,C) and b = W2 b1 + b2 (C).
// Run:     ./build/ch05_ffn [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch05_ffn --d-ff 16           (a narrow hidden layer)
//          ./build/ch05_ffn --eval              (no dropout: ff_outputs = with_gelu)
//
// Notes that state a fact about a value compute it; the checks (dropout keeps the rest scaled by
// 1/(1-p), the merged Linear reproduces the listing) are verdicts: OK / NOT OK with the figure.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "course/i18n.hpp"
#include "course/model_probes.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// Article 001's PositionWiseFFN: dense2(relu(dense1(X))). Its layers are nn.LazyLinear: they
// learn in_features from the first input they see, and only then draw their weights (dense1
// first, then dense2), so until the first call the module prints in_features=0.
struct PositionWiseFFN {
  int64_t ffn_hidden_dims = 0, ffn_output_dims = 0;  // F, C
  bool materialized = false;
  Linear dense1;  // (F, in) once materialized
  Linear dense2;  // (C, F)
  PositionWiseFFN(int64_t hidden, int64_t output) : ffn_hidden_dims(hidden), ffn_output_dims(output) {}
  // X (B,T,C) -> (B,T,F) -> (B,T,C); the first call draws dense1, then dense2
  Tensor operator()(const Tensor& X) {
    // 1) dense1 (drawn now, in_features = X's last dim), then ReLU   (B,T,F)
    if (!materialized) dense1 = Linear(static_cast<int64_t>(X.shape().back()), ffn_hidden_dims);
    const Tensor h = relu(dense1(X));
    // 2) dense2 (drawn now, in_features = F)                         (B,T,C)
    if (!materialized) dense2 = Linear(ffn_hidden_dims, ffn_output_dims);
    materialized = true;
    return dense2(h);
  }
  ModuleRepr repr() const {
    auto lazy = [&](const Linear& l, int64_t out) {
      return materialized ? l.repr()
                          : ModuleRepr{"LazyLinear", fmt::format("in_features=0, out_features={}, bias=True", out), {}};
    };
    return {"PositionWiseFFN", "",
            {{"dense1", lazy(dense1, ffn_hidden_dims)}, {"relu", relu_repr()}, {"dense2", lazy(dense2, ffn_output_dims)}}};
  }
};

// The chapter's small helpers, defined after main.
// Largest |a - b| as a double (0 for empty tensors).   a, b same shape
static double max_gap(const Tensor& a, const Tensor& b);
// Largest |x|.
static double max_abs(const Tensor& x);
// Where GELU and ReLU differ most, on a fine grid of z in [-8, 8]: the gap and its z, and the
// largest gap with |z| >= 3.
struct GeluReluGap {
  double max_gap = 0, at = 0, beyond3 = 0;
};
static GeluReluGap gelu_relu_gap();
// The note under ff_outputs: in train mode, how many values dropout zeroed and whether the
// others are exactly kept / (1 - p); in eval mode, whether ff_outputs equals kept. kept is
// linear_2(act(hidden)) for the activation act FeedForward runs, named kept_name.
static std::string dropout_note(Chapter& ch, const Tensor& ff_outputs, const Tensor& kept, const std::string& kept_name,
                                const std::string& act, double p);

int main(int argc, char** argv) {
  Chapter ch("ch05_ffn", _("The feed-forward layer: Linear, activation, Linear"),
             {{0, N_("§The Feed-Forward Layer")}, {1, N_("§Pointwise Feed-Forward Networks")},
              {2, N_("§9.2.1 (PositionwiseFeedForward)")}});
  int64_t d_model = 768, heads = 12, d_ff = 3072;
  ch.add_sentence_flags(d_model, _("hidden_size C (BERT-base: 768)"));
  ch.option("--heads", heads, _("num_attention_heads H of the attention before the FFN; must divide --d-model"));
  ch.option("--d-ff", d_ff,
            _("intermediate_size F, the hidden width of the FFN"), 1, 16384, _("BERT-base uses 3072 = 4 x 768"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    check_model_dims(d_model, heads);
    Config config;  // BERT-base, with the chapter's C, H and F
    config.hidden_size = d_model;
    config.num_attention_heads = heads;
    config.intermediate_size = d_ff;

    // ---------------------------------------------------------------- 1) the input: chapter 4's output
    ch.section(_("Step 1: the multi-head attention output of chapter 4"), _("article 000 §Multi-head Attention"));
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const ITensor& input_ids = sentence.input_ids;
    {
      // attention 4TC^2 + 2T^2C, seven passes of a (C,F)+(F,C) FFN 2TCF each, and W2 W1 = C^2 F
      const double T = static_cast<double>(sentence.T()), C = static_cast<double>(d_model),
                   F = static_cast<double>(d_ff);
      ch.budget(4.0 * (2 * 30522 * C + 6 * C * F + 2 * C * C + 8 * T * F), 4 * T * C * C + 2 * T * T * C + 14 * T * C * F + C * C * F,
                "--d-model, --d-ff or --text");
    }
    ch.show("inputs.input_ids", input_ids, _("the ids of chapter 1"), Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C); q = k = v = E
    Embedding token_emb(config.vocab_size, config.hidden_size);
    const Tensor inputs_embeds = token_emb(input_ids);
    MultiHeadAttention multihead_attn(config);
    // (B,T,C)
    const Tensor attn_output = multihead_attn(inputs_embeds, inputs_embeds, inputs_embeds);
    // the input itself, value for value, when the line above returns it: then nothing was mixed
    const bool unchanged = shape_of(attn_output) == shape_of(inputs_embeds) &&
                           std::equal(attn_output.begin(), attn_output.end(), inputs_embeds.begin());
    // which tokens reach which: the attention run again with one token's input moved at a time
    // (article 000's attention draws nothing, so the runs change nothing the chapter prints)
    const MixProbe mix = probe_mixing(
        [&](const Tensor& x) { return multihead_attn(x, x, x); }, inputs_embeds);
    auto token = [&](size_t t) { return t < sentence.tokens.size() ? "'" + sentence.tokens[t] + "'" : std::to_string(t); };
    std::string mixed;
    if (unchanged) {
      mixed = _("inputs_embeds itself, value for value: the line above returns its input, so no token's vector mixes "
                "the others' (chapter 4's attention does)");
    } else if (mix.pairs == 0 || mix.reached == mix.pairs) {
      mixed = mix.pairs == 0 ? _("chapter 4's result: one token, so its vector mixes its own value vector only")
                             : trf("chapter 4's result: each token's vector is now a mix of the value vectors of all "
                                   "tokens: moving one token's input moved every other token's output ({n} of {n} "
                                   "pairs, {p} tokens moved in turn)",
                                   fmt::arg("n", mix.pairs), fmt::arg("p", mix.probed));
    } else if (mix.reached == 0) {
      mixed = trf("each token's vector depends on its own input alone: moving one token's input moved no other "
                  "token's output (0 of {n} pairs); chapter 4's attention mixes all tokens: look at the line above",
                  fmt::arg("n", mix.pairs));
    } else {
      mixed = trf("each token's vector mixes only some of the others: moving {j}'s input left {i}'s output as it "
                  "was ({k} of {n} pairs moved); chapter 4's attention mixes all tokens: look at the line above",
                  fmt::arg("j", token(mix.first_j)), fmt::arg("i", token(mix.first_i)), fmt::arg("k", mix.reached),
                  fmt::arg("n", mix.pairs));
    }
    ch.show("attn_output", attn_output, {"ViewBackward0"}, mixed, Shown::Twin);

    // ---------------------------------------------------------------- 2) article 000's FeedForward
    // which activation FeedForward::operator() runs, measured (src/course/model_probes.hpp)
    const std::string act = feed_forward_activation();
    ch.section(trf("Step 2: FeedForward: Linear(C, F), {act}, Linear(F, C), Dropout", fmt::arg("act", activation_words(act))),
               _("article 000 §The Feed-Forward Layer"));
    FeedForward feed_forward(config);  // draws linear_1, then linear_2
    feed_forward.train(ch.training());
    ch.show("feed_forward", feed_forward.repr(),
            trf("the first Linear takes each token from C = {C} to F = {F} numbers (F/C = {r:.3g}), the second takes "
                "it back to C",
                fmt::arg("C", d_model), fmt::arg("F", d_ff),
                fmt::arg("r", static_cast<double>(d_ff) / static_cast<double>(d_model))),
            Shown::Twin);
    ch.show("feed_forward.training", std::string(ch.training() ? "True" : "False"),
            ch.training() ? _("a fresh module is in train mode: its dropout is active (run --eval to switch it off)")
                          : _("--eval: dropout passes values through unchanged"),
            Shown::Twin);
    // hidden = attn_output W1^T + b1   (B,T,C) -> (B,T,F)
    const Tensor hidden = feed_forward.linear_1(attn_output);
    ch.show("feed_forward.linear_1(attn_output).size()", size_str(shape_of(hidden)),
            _("F numbers per token; each token is processed on its own (\"position-wise\")"), Shown::Twin);
    // GELU(h) = h * Phi(h)   (B,T,F)
    const Tensor activated = gelu(hidden);
    ch.show("feed_forward.gelu(feed_forward.linear_1(attn_output))", activated, {"GeluBackward0"},
            activation_note(act, N_("GELU keeps large positive values, squashes negative ones towards 0"),
                            N_("GELU keeps large positive values, squashes negative ones towards 0; the FeedForward "
                               "built here runs {act} instead (measured)")),
            Shown::Twin);
    {
      size_t neg = 0;
      for (float h : hidden) neg += h < 0;
      ch.say(trf("  {n} of the {N} hidden values ({pct:.1f}%) are negative: that is where GELU (and ReLU) bend the "
                 "line.",
                 fmt::arg("n", neg), fmt::arg("N", hidden.size()),
                 fmt::arg("pct", 100.0 * static_cast<double>(neg) / static_cast<double>(hidden.size()))));
    }
    // ff_outputs = Dropout(GELU(h) W2^T + b2)   (B,T,F) -> (B,T,C)
    const Tensor ff_outputs = feed_forward(attn_output);
    ch.show("ff_outputs.size()", size_str(shape_of(ff_outputs)),
            _("back to C per token, so the block can be stacked and added to its input (chapter 6)"));
    // the same Linears without the dropout (no random draw): what ff_outputs keeps   (B,T,C)
    const Tensor with_gelu = feed_forward.linear_2(gelu(hidden));
    const Tensor kept = act == "GELU" ? with_gelu : feed_forward.linear_2(apply_activation(act, hidden));
    const std::string kept_name =
        act == "GELU"   ? std::string("with_gelu")
        : act == "none" ? std::string("feed_forward.linear_2(hidden)")
                        : fmt::format("feed_forward.linear_2({}(hidden))", act.empty() ? "GELU" : act);
    ch.show("ff_outputs", ff_outputs, {ch.training() ? "MulBackward0" : "ViewBackward0"},
            dropout_note(ch, ff_outputs, kept, kept_name, act, feed_forward.dropout.p), Shown::Twin);

    // ---------------------------------------------------------------- 3) GELU vs ReLU
    ch.section(_("Step 3: GELU (article 000) vs ReLU (article 001), on the same numbers and the same weights"),
               _("article 000 §The Feed-Forward Layer; article 001 §Pointwise Feed-Forward Networks"));
    const std::vector<float> zs = {-3.0f, -2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f, 3.0f};
    Tensor z = Tensor::from_shape({zs.size()});
    std::copy(zs.begin(), zs.end(), z.begin());
    ch.show("z", z, {}, "", Shown::Twin);
    ch.show("F.gelu(z)", gelu(z), {}, _("GELU(z) = z * P(N(0,1) < z): smooth, slightly negative just below 0"),
            Shown::Twin);
    ch.show("F.relu(z)", relu(z), {}, _("ReLU(z) = max(z, 0): a hard corner at 0"), Shown::Twin);
    // the same Linears, two activations   (B,T,F) -> (B,T,C)
    const Tensor with_relu = feed_forward.linear_2(relu(hidden));
    ch.show("with_gelu = feed_forward.linear_2(F.gelu(hidden))", with_gelu, {"ViewBackward0"},
            activation_note(act, N_("FeedForward without its dropout (equal to ff_outputs under --eval)"),
                            N_("article 000's FeedForward without its dropout; the FeedForward built here runs {act} "
                               "(Step 2)")),
            Shown::Twin);
    ch.show("with_relu = feed_forward.linear_2(F.relu(hidden))", with_relu, {"ViewBackward0"},
            act == "ReLU" ? _("the same weights with ReLU: what the FeedForward built here computes without its dropout")
                          : _("the same weights with ReLU instead"),
            Shown::Twin);
    const double act_gap = max_gap(with_gelu, with_relu);
    ch.show("(with_gelu - with_relu).abs().max()", max_abs_diff(with_gelu, with_relu), {"MaxBackward1"},
            trf("against outputs up to {m:.3g}: the two layers compute different functions of the same hidden values",
                fmt::arg("m", max_abs(with_gelu))),
            Shown::Twin);
    {
      size_t inside = 0;
      for (float h : hidden) inside += std::fabs(h) < 3.0f;
      const GeluReluGap g = gelu_relu_gap();
      ch.say(trf("  GELU and ReLU differ by at most {gap:.3g} (at |z| = {at:.2f}), and little far from 0: for |z| >= 3 "
                 "by at most {far:.2g}. Here {pct:.1f}% of the hidden values have |z| < 3, which is why the two "
                 "outputs differ by {d:.3g}.",
                 fmt::arg("gap", g.max_gap), fmt::arg("at", std::fabs(g.at)), fmt::arg("far", g.beyond3),
                 fmt::arg("pct", 100.0 * static_cast<double>(inside) / static_cast<double>(hidden.size())),
                 fmt::arg("d", act_gap)));
    }

    // ---------------------------------------------------------------- 4) article 001's module
    ch.section(_("Step 4: article 001's PositionWiseFFN (LazyLinear, ReLU, LazyLinear)"),
               _("article 001 §Pointwise Feed-Forward Networks"));
    PositionWiseFFN ffn(config.intermediate_size, config.hidden_size);
    ch.show(fmt::format("ffn = PositionWiseFFN({}, {})", config.intermediate_size, config.hidden_size),
            ffn.repr(), _("LazyLinear knows only its output size; nothing is drawn yet"), Shown::Twin);
    // (B,T,C) -> (B,T,F) -> (B,T,C); draws dense1, then dense2
    const Tensor ffn_outputs = ffn(attn_output);
    // what the call did, read from the module and its output: drawn or not, and whether the
    // output is the input itself
    ch.show("ffn  # after ffn(attn_output)", ffn.repr(),
            ffn.materialized
                ? trf("the first call fixed in_features = {in} from the input's last dimension and turned both "
                      "layers into plain Linears",
                      fmt::arg("in", ffn.dense1.in_features))
                : _("still LazyLinear: the line above did not call the module, so nothing was drawn"),
            Shown::Twin);
    const bool ffn_unchanged = shape_of(ffn_outputs) == shape_of(attn_output) &&
                               std::equal(ffn_outputs.begin(), ffn_outputs.end(), attn_output.begin());
    ch.show("ffn(attn_output)", ffn_outputs, {"ViewBackward0"},
            ffn_unchanged ? _("attn_output itself, value for value: the line above returns its input, so no weight "
                              "acted on it")
                          : _("its own random weights, so other numbers than FeedForward's; no dropout inside"),
            Shown::Twin);

    // ---------------------------------------------------------------- 5) article 002's module
    ch.section(_("Step 5: article 002's PositionwiseFeedForward: w_2(dropout(w_1(x))), no activation"),
               _("article 002 §9.2.1 注意力机制, PositionwiseFeedForward"));
    FeedForward ff = positionwise_feed_forward(config.hidden_size, config.intermediate_size, config.hidden_dropout_prob);
    ff.train(ch.training());
    ch.show(fmt::format("ff = PositionwiseFeedForward({}, {})", config.hidden_size, config.intermediate_size),
            ff.repr(), _("two Linears and a dropout between them, but no activation"), Shown::Twin);
    ch.erratum(_("002 §9.2.1, lines 249-252"),
               _("the listing's forward runs w_1, dropout, w_2 with no activation between them, so the layer is one "
                 "linear map (Step 6), although lines 240 and 255 say it helps the model learn complex features. The "
                 "Annotated Transformer the chapter credits (line 157) writes w_2(dropout(relu(w_1(x)))). The course "
                 "keeps the listing as printed."));
    // (B,T,C) -> (B,T,F) -> (B,T,C)
    ch.show("ff(attn_output)", ff(attn_output), {"ViewBackward0"},
            ch.training() ? _("train mode: the dropout acts on the (B,T,F) hidden values") : _("eval mode: no dropout"),
            Shown::Twin);

    // ---------------------------------------------------------------- 6) it collapses to one Linear
    ch.section(_("Step 6: two Linears with nothing between them are one Linear"),
               _("article 002 §9.2.1 注意力机制 vs article 000 §The Feed-Forward Layer"));
    ff.train(false);  // ff.eval(): dropout off, compare the maps themselves
    // the line that ran, and its effect (an edit that drops ff.train(false) shows ff.training = True)
    ch.show(ff.dropout.training ? "ff.training" : "ff.eval(); ff.training",
            std::string(ff.dropout.training ? "True" : "False"),
            ff.dropout.training
                ? _("train mode: the dropout draws a new mask on every call, so no fixed map can match ff")
                : _("dropout off: in train mode it would draw a new mask on every call, and no fixed map could match it"),
            Shown::Info);
    // W = W2 W1: (C,F) x (F,C) -> (C,C)
    const Tensor W = matmul(ff.linear_2.weight, ff.linear_1.weight);
    // b = W2 b1 + b2: (F) -> (C)
    const Tensor b = ff.linear_2(ff.linear_1.bias);
    ch.show("W = ff.w_2.weight @ ff.w_1.weight; W.shape", size_str(shape_of(W)),
            _("(x W1^T + b1) W2^T + b2 = x (W2 W1)^T + (W2 b1 + b2)"), Shown::Twin);
    ch.show("b = ff.w_2(ff.w_1.bias); b.shape", size_str(shape_of(b)), _("w_2 applied to b1 is W2 b1 + b2"),
            Shown::Twin);
    Linear merged(config.hidden_size, config.hidden_size);  // drawn, then overwritten with W and b
    merged.weight = W;
    merged.bias = b;
    ch.show("merged", merged.repr(),
            trf("{m} parameters; w_1 and w_2 have {w}",
                fmt::arg("m", W.size() + b.size()),
                fmt::arg("w", ff.linear_1.weight.size() + ff.linear_1.bias.size() + ff.linear_2.weight.size() + ff.linear_2.bias.size())),
            Shown::Twin);
    // y (B,T,C) each way
    const Tensor merged_out = merged(attn_output);
    const Tensor ff_out = ff(attn_output);
    const double lin_gap = max_gap(ff_out, merged_out);
    ch.show("(ff(attn_output) - merged(attn_output)).abs().max()", max_abs_diff(ff_out, merged_out), {"MaxBackward1"},
            ch.verdict(lin_gap <= 1e-5,
                       lin_gap <= 1e-5 ? trf("merged reproduces the listing to {d:.3g} (tolerance for float rounding: "
                                             "1e-5): article 002's listing is one linear map in disguise",
                                             fmt::arg("d", lin_gap))
                                       : trf("merged(attn_output) and ff(attn_output) differ by up to {d:.3g}, more "
                                             "than the 1e-5 float rounding allows: here merged does not reproduce ff",
                                             fmt::arg("d", lin_gap))),
            Shown::Twin);
    const Tensor gelu_out = ff.linear_2(gelu(ff.linear_1(attn_output)));
    const double gelu_gap = max_gap(gelu_out, merged_out);
    ch.show("(ff.w_2(F.gelu(ff.w_1(attn_output))) - merged(attn_output)).abs().max()",
            max_abs_diff(gelu_out, merged_out), {"MaxBackward1"},
            trf("with GELU between the Linears the merged Linear is off by {d:.3g}, {x:.3g} times the gap above: it "
                "no longer reproduces the layer",
                fmt::arg("d", gelu_gap), fmt::arg("x", gelu_gap / std::max(lin_gap, 1e-12))),
            Shown::Twin);
    const Tensor relu_out = ff.linear_2(relu(ff.linear_1(attn_output)));
    const double relu_gap = max_gap(relu_out, merged_out);
    ch.show("(ff.w_2(F.relu(ff.w_1(attn_output))) - merged(attn_output)).abs().max()",
            max_abs_diff(relu_out, merged_out), {"MaxBackward1"},
            trf("with ReLU it is off by {d:.3g}", fmt::arg("d", relu_gap)), Shown::Twin);
    ch.say(_("  What the activation adds: a stack of Linears is still a Linear, whatever its width, so without an\n"
             "  activation the FFN could only rotate and stretch each token vector the way one (C,C) matrix can; the\n"
             "  output_linear of chapter 4 already does that. With GELU or ReLU each hidden unit switches on for part\n"
             "  of the space only, and F such pieces can bend the map into a non-linear function of the token."));
    if (act == "none")
      ch.say(_("  The FeedForward of Step 2 runs no activation (measured): it is such a stack, one (C,C) map."));
  });
}

// ---------------------------------------------------------------- helpers

static double max_gap(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, std::fabs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i])));
  return d;
}

static double max_abs(const Tensor& x) {
  double m = 0;
  for (float v : x) m = std::max(m, std::fabs(static_cast<double>(v)));
  return m;
}

// z = -8, -7.999, ..., 8 through the chapter's own gelu and relu
static GeluReluGap gelu_relu_gap() {
  const size_t n = 16001;
  Tensor z = Tensor::from_shape({n});
  for (size_t i = 0; i < n; ++i) z.data()[i] = -8.0f + 0.001f * static_cast<float>(i);
  const Tensor g = gelu(z), r = relu(z);
  GeluReluGap out;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(g.data()[i]) - r.data()[i]);
    if (d > out.max_gap) {
      out.max_gap = d;
      out.at = z.data()[i];
    }
    if (std::fabs(z.data()[i]) >= 3.0f) out.beyond3 = std::max(out.beyond3, d);
  }
  return out;
}

// ff_outputs, kept (B,T,C); p = the dropout probability
static std::string dropout_note(Chapter& ch, const Tensor& ff_outputs, const Tensor& kept, const std::string& kept_name,
                                const std::string& act, double p) {
  // an activation the probe could not name: the check still runs against GELU, and says so
  const std::string which = act.empty() ? trf(" (FeedForward runs {act})", fmt::arg("act", activation_words(act))) : "";
  if (!ch.training()) {
    const double d = max_gap(ff_outputs, kept);
    return ch.verdict(d == 0.0, d == 0.0 ? trf("eval mode: dropout does nothing, ff_outputs equals {k} (max difference "
                                               "0)",
                                               fmt::arg("k", kept_name))
                                         : trf("eval mode: ff_outputs differs from {k} by up to {d:.3g}{w}: "
                                               "FeedForward::operator() no longer computes linear_2({k2}(linear_1(x)))",
                                               fmt::arg("k", kept_name), fmt::arg("d", d), fmt::arg("w", which),
                                               fmt::arg("k2", act.empty() ? std::string("GELU") : act)));
  }
  size_t dropped = 0;
  double kept_gap = 0;
  const float keep = static_cast<float>(1.0 - p);
  for (size_t i = 0; i < ff_outputs.size(); ++i) {
    const float y = ff_outputs.data()[i], x = kept.data()[i];
    if (y == 0.0f && x != 0.0f) {
      ++dropped;
      continue;
    }
    kept_gap = std::max(kept_gap, std::fabs(static_cast<double>(y) - static_cast<double>(x / keep)));
  }
  const double pct = 100.0 * static_cast<double>(dropped) / static_cast<double>(ff_outputs.size());
  if (kept_gap <= 1e-6)
    return ch.verdict(true, trf("train mode: dropout zeroed {n} of the {N} values ({pct:.1f}%, p = {p}) and scaled "
                                "the rest by 1/(1 - p): they equal {k} / {keep} to {d:.2g} (tolerance for float "
                                "rounding: 1e-6)",
                                fmt::arg("n", dropped), fmt::arg("N", ff_outputs.size()), fmt::arg("pct", pct),
                                fmt::arg("p", p), fmt::arg("k", kept_name), fmt::arg("keep", keep),
                                fmt::arg("d", kept_gap)));
  return ch.verdict(false, trf("train mode: {n} of the {N} values are 0 where {k} is not, and the others differ from "
                               "{k} / {keep} by up to {d:.3g}{w}: FeedForward::operator() no longer computes "
                               "Dropout(linear_2({k2}(linear_1(x))))",
                               fmt::arg("n", dropped), fmt::arg("N", ff_outputs.size()), fmt::arg("k", kept_name),
                               fmt::arg("keep", keep), fmt::arg("d", kept_gap), fmt::arg("w", which),
                               fmt::arg("k2", act.empty() ? std::string("GELU") : act)));
}
