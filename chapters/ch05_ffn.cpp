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
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
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

int main(int argc, char** argv) {
  Chapter ch("ch05_ffn", "The feed-forward layer: Linear, activation, Linear",
             "article 000 (The Feed-Forward Layer), article 001 (PositionWiseFFN), article 002 (PositionwiseFeedForward)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  int64_t d_model = 768, heads = 12, d_ff = 3072;
  ch.option("--d-model", d_model, "hidden_size C (default 768, BERT-base)");
  ch.option("--heads", heads, "num_attention_heads H of the attention before the FFN; must divide --d-model (default 12)");
  ch.option("--d-ff", d_ff, "intermediate_size F, the hidden width of the FFN (default 3072 = 4 x 768)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    check_range("--d-model", d_model, 1, 2048, "the 30522-row table must fit in memory");
    check_model_dims(d_model, heads);
    check_range("--d-ff", d_ff, 1, 16384, "BERT-base uses 3072 = 4 x 768");
    Config config;  // BERT-base, with the chapter's C, H and F
    config.hidden_size = d_model;
    config.num_attention_heads = heads;
    config.intermediate_size = d_ff;

    // ---------------------------------------------------------------- 1) the input: chapter 4's output
    ch.section("Step 1: the multi-head attention output of chapter 4", "article 000, Multi-head Attention");
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
    ch.show("inputs.input_ids", input_ids, "the ids of chapter 1", Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C); q = k = v = E
    Embedding token_emb(config.vocab_size, config.hidden_size);
    const Tensor inputs_embeds = token_emb(input_ids);
    MultiHeadAttention multihead_attn(config);
    // (B,T,C)
    const Tensor attn_output = multihead_attn(inputs_embeds, inputs_embeds, inputs_embeds);
    ch.show("attn_output", attn_output, {"ViewBackward0"},
            "chapter 4's result: each token has gathered information from the others", Shown::Twin);

    // ---------------------------------------------------------------- 2) article 000's FeedForward
    ch.section("Step 2: FeedForward: Linear(C, 4C), GELU, Linear(4C, C), Dropout", "article 000, The Feed-Forward Layer");
    FeedForward feed_forward(config);  // draws linear_1, then linear_2
    feed_forward.train(ch.training());
    ch.show("feed_forward", feed_forward.repr().str(), "the first Linear widens each token 4x, the second narrows it back",
            Shown::Twin);
    ch.show("feed_forward.training", std::string(ch.training() ? "True" : "False"),
            ch.training() ? "a fresh module is in train mode: its dropout is active (run --eval to switch it off)"
                          : "--eval: dropout passes values through unchanged",
            Shown::Twin);
    // hidden = attn_output W1^T + b1   (B,T,C) -> (B,T,F)
    const Tensor hidden = feed_forward.linear_1(attn_output);
    ch.show("feed_forward.linear_1(attn_output).size()", size_str(shape_of(hidden)),
            "F numbers per token; each token is processed on its own (\"position-wise\")", Shown::Twin);
    // GELU(h) = h * Phi(h)   (B,T,F)
    const Tensor activated = gelu(hidden);
    ch.show("feed_forward.gelu(feed_forward.linear_1(attn_output))", activated, {"GeluBackward0"},
            "GELU keeps large positive values, squashes negative ones towards 0", Shown::Twin);
    {
      size_t neg = 0;
      for (float h : hidden) neg += h < 0;
      ch.say(fmt::format("  {} of the {} hidden values ({:.1f}%) are negative: that is where GELU (and ReLU) bend the line.",
                         neg, hidden.size(), 100.0 * static_cast<double>(neg) / static_cast<double>(hidden.size())));
    }
    // ff_outputs = Dropout(GELU(h) W2^T + b2)   (B,T,F) -> (B,T,C)
    const Tensor ff_outputs = feed_forward(attn_output);
    ch.show("ff_outputs.size()", size_str(shape_of(ff_outputs)),
            "back to C per token, so the block can be stacked and added to its input (chapter 6)");
    ch.show("ff_outputs", ff_outputs, {ch.training() ? "MulBackward0" : "ViewBackward0"},
            ch.training() ? "train mode: about 10% of the values are dropped (0.0000) and the rest scaled by 1/0.9"
                          : "eval mode: dropout does nothing",
            Shown::Twin);

    // ---------------------------------------------------------------- 3) GELU vs ReLU
    ch.section("Step 3: GELU (article 000) vs ReLU (article 001), on the same numbers and the same weights",
               "article 000, FeedForward; article 001, PositionWiseFFN");
    const std::vector<float> zs = {-3.0f, -2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f, 3.0f};
    Tensor z = Tensor::from_shape({zs.size()});
    std::copy(zs.begin(), zs.end(), z.begin());
    ch.show("z", z, {}, "", Shown::Twin);
    ch.show("F.gelu(z)", gelu(z), {}, "GELU(z) = z * P(N(0,1) < z): smooth, slightly negative just below 0",
            Shown::Twin);
    ch.show("F.relu(z)", relu(z), {}, "ReLU(z) = max(z, 0): a hard corner at 0", Shown::Twin);
    // the same Linears, two activations   (B,T,F) -> (B,T,C)
    const Tensor with_gelu = feed_forward.linear_2(gelu(hidden));
    const Tensor with_relu = feed_forward.linear_2(relu(hidden));
    ch.show("with_gelu = feed_forward.linear_2(F.gelu(hidden))", with_gelu, {"ViewBackward0"},
            "FeedForward without its dropout (equal to ff_outputs under --eval)", Shown::Twin);
    ch.show("with_relu = feed_forward.linear_2(F.relu(hidden))", with_relu, {"ViewBackward0"},
            "the same weights with ReLU instead", Shown::Twin);
    ch.show("(with_gelu - with_relu).abs().max()", max_abs_diff(with_gelu, with_relu), {"MaxBackward1"},
            "not a rounding error: the two layers compute different functions", Shown::Twin);
    {
      size_t inside = 0;
      for (float h : hidden) inside += std::fabs(h) < 3.0f;
      ch.say(fmt::format(
          "  GELU and ReLU differ by at most 0.17 (at z = ±0.75), and only where |z| is small: beyond |z| = 3 they\n"
          "  agree to 0.004. Here {:.1f}% of the hidden values have |z| < 3, so the two outputs differ.",
          100.0 * static_cast<double>(inside) / static_cast<double>(hidden.size())));
    }

    // ---------------------------------------------------------------- 4) article 001's module
    ch.section("Step 4: article 001's PositionWiseFFN (LazyLinear, ReLU, LazyLinear)",
               "article 001, Pointwise Feed-Forward Networks");
    PositionWiseFFN ffn(config.intermediate_size, config.hidden_size);
    ch.show(fmt::format("ffn = PositionWiseFFN({}, {})", config.intermediate_size, config.hidden_size),
            ffn.repr().str(), "LazyLinear knows only its output size; nothing is drawn yet", Shown::Twin);
    // (B,T,C) -> (B,T,F) -> (B,T,C); draws dense1, then dense2
    const Tensor ffn_outputs = ffn(attn_output);
    ch.show("ffn  # after ffn(attn_output)", ffn.repr().str(),
            "the first call fixed in_features from the input and turned both layers into plain Linears",
            Shown::Twin);
    ch.show("ffn(attn_output)", ffn_outputs, {"ViewBackward0"},
            "its own random weights, so other numbers than FeedForward's; no dropout inside", Shown::Twin);

    // ---------------------------------------------------------------- 5) article 002's module
    ch.section("Step 5: article 002's PositionwiseFeedForward: w_2(dropout(w_1(x))), no activation",
               "article 002 §9.2.1, PositionwiseFeedForward");
    PositionwiseFeedForward ff(config.hidden_size, config.intermediate_size, config.hidden_dropout_prob);
    ff.train(ch.training());
    ch.show(fmt::format("ff = PositionwiseFeedForward({}, {})", config.hidden_size, config.intermediate_size),
            ff.repr().str(), "two Linears and a dropout between them, but no activation", Shown::Twin);
    // (B,T,C) -> (B,T,F) -> (B,T,C)
    ch.show("ff(attn_output)", ff(attn_output), {"ViewBackward0"},
            ch.training() ? "train mode: the dropout acts on the (B,T,F) hidden values" : "eval mode: no dropout",
            Shown::Twin);

    // ---------------------------------------------------------------- 6) it collapses to one Linear
    ch.section("Step 6: two Linears with nothing between them are one Linear", "article 002 vs article 000");
    ff.train(false);  // dropout off: compare the maps themselves
    // W = W2 W1: (C,F) x (F,C) -> (C,C)
    const Tensor W = matmul(ff.w_2.weight, ff.w_1.weight);
    // b = W2 b1 + b2: (F) -> (C)
    const Tensor b = ff.w_2(ff.w_1.bias);
    ch.show("W = ff.w_2.weight @ ff.w_1.weight; W.shape", size_str(shape_of(W)),
            "(x W1^T + b1) W2^T + b2 = x (W2 W1)^T + (W2 b1 + b2)", Shown::Twin);
    ch.show("b = ff.w_2(ff.w_1.bias); b.shape", size_str(shape_of(b)), "w_2 applied to b1 is W2 b1 + b2", Shown::Twin);
    Linear merged(config.hidden_size, config.hidden_size);  // drawn, then overwritten with W and b
    merged.weight = W;
    merged.bias = b;
    ch.show("merged", merged.repr().str(),
            fmt::format("{} parameters instead of the {} of w_1 and w_2", W.size() + b.size(),
                        ff.w_1.weight.size() + ff.w_1.bias.size() + ff.w_2.weight.size() + ff.w_2.bias.size()),
            Shown::Twin);
    // y (B,T,C) each way
    const Tensor merged_out = merged(attn_output);
    ch.show("(ff(attn_output) - merged(attn_output)).abs().max()", max_abs_diff(ff(attn_output), merged_out),
            {"MaxBackward1"}, "float rounding only: article 002's listing is one linear map in disguise", Shown::Twin);
    ch.show("(ff.w_2(F.gelu(ff.w_1(attn_output))) - merged(attn_output)).abs().max()",
            max_abs_diff(ff.w_2(gelu(ff.w_1(attn_output))), merged_out), {"MaxBackward1"},
            "with GELU between the Linears, the merged Linear no longer reproduces the layer", Shown::Twin);
    ch.show("(ff.w_2(F.relu(ff.w_1(attn_output))) - merged(attn_output)).abs().max()",
            max_abs_diff(ff.w_2(relu(ff.w_1(attn_output))), merged_out), {"MaxBackward1"},
            "nor with ReLU", Shown::Twin);
    ch.say(
        "  What the activation adds: a stack of Linears is still a Linear, whatever its width, so without an\n"
        "  activation the FFN could only rotate and stretch each token vector the way one (C,C) matrix can; the\n"
        "  output_linear of chapter 4 already does that. With GELU or ReLU each hidden unit switches on for part\n"
        "  of the space only, and F = 4C such pieces can bend the map into a non-linear function of the token.\n"
        "  (The canonical Annotated Transformer has w_2(dropout(relu(w_1(x)))); article 002's listing lost the relu.)");
  });
}
