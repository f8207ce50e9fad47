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
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/chapter.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/stats.hpp"
#include "fast/fast_encoder.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// x.std(-1): the unbiased std of every row.   x (...,C) -> (...)
static Tensor row_std(const Tensor& x) {
  Tensor s = std_lastdim(x, 1);  // (...,1)
  Shape shape = shape_of(s);
  shape.pop_back();
  s.reshape(shape);
  return s;
}

// x.std(-1).mean().item(): the typical spread of one token's vector.   x (B,T,C) -> scalar
static float mean_row_std(const Tensor& x) {
  Tensor s = row_std(x);  // (B,T)
  s.reshape({1, s.size()});
  return mean_lastdim_keepdim(s).data()[0];
}

static size_t count(const Linear& l) { return l.weight.size() + l.bias.size(); }
static size_t count(const TransformerEncoderLayer& layer) {
  size_t n = 2 * (layer.layer_norm_1.weight.size() + layer.layer_norm_1.bias.size());
  for (const AttentionHead& h : layer.attention.heads) n += count(h.q) + count(h.k) + count(h.v);
  return n + count(layer.attention.output_linear) + count(layer.feed_forward.linear_1) +
         count(layer.feed_forward.linear_2);
}

// Median wall time of fn() in milliseconds: one warm-up call, then at least 3 repeats and
// more until budget_ms is spent (at most 25); a single call when one already takes longer
// than the budget (e.g. the plain loops).
static double median_ms(const std::function<void()>& fn, double budget_ms) {
  using clock = std::chrono::steady_clock;
  auto once = [&] {
    const auto t0 = clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  const double first = once();
  if (first > budget_ms) return first;
  std::vector<double> times;
  double total = 0;
  while (times.size() < 3 || (total < budget_ms && times.size() < 25)) {
    times.push_back(once());
    total += times.back();
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int main(int argc, char** argv) {
  Chapter ch("ch07_encoder", "The encoder: pre-LN vs post-LN, and the 12-layer stack",
             "article 000 (Layer Normalization, Positional Embeddings, TransformerEncoder), 001 (AddNorm), "
             "002 §9.2.2 (SublayerConnection, Encoder), 004 (EncoderLayer)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  Config config;  // BERT-base
  bool full_timing = false;
  ch.flag("--time", full_timing, "time each path for ~0.4 s instead of 3 quick runs (steadier figures)");
  ch.option("--layers", config.num_hidden_layers, "number N of encoder layers (default 12, BERT-base)");
  ch.option("--d-model", config.hidden_size, "width C of every token vector (default 768)");
  ch.option("--heads", config.num_attention_heads, "number H of attention heads, dividing C (default 12)");
  ch.option("--d-ff", config.intermediate_size, "inner width F of the feed-forward network (default 3072)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    // ---- the knobs: impossible values are refused before any work
    check_range("--d-model", config.hidden_size, 2, 2048,
                "a row's unbiased std (article 002's LayerNorm, the .std(-1) checks) needs 2 values; the 30522-row "
                "tables must fit in memory");
    check_model_dims(config.hidden_size, config.num_attention_heads, 2);
    check_range("--layers", config.num_hidden_layers, 1, 48);
    check_range("--d-ff", config.intermediate_size, 1, 16384);
    const double C = static_cast<double>(config.hidden_size), F = static_cast<double>(config.intermediate_size);
    const double params = 2.0 * config.vocab_size * C + (config.num_hidden_layers + 1) * (4 * C * C + 2 * C * F);
    if (params > 400e6)
      throw UsageError(fmt::format("this model would have {:.0f}M parameters ({:.1f} GB): choose fewer --layers or "
                                   "a smaller --d-model / --d-ff (at most 400M)",
                                   params / 1e6, params * 4 / 1e9));

    // ---------------------------------------------------------------- 1) the input
    ch.section("Step 1: the input of the encoder layer", "article 000, Layer Normalization");
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    {
      // one layer: 4TC^2 + 2TCF + 2T^2C; about ten stacks' worth in all (pre-LN, post-LN, the
      // timed exact, fast and naive forwards); memory: the parameters twice (exact + packed)
      const double T = static_cast<double>(sentence.T());
      ch.budget(2 * 4 * params, 10.0 * static_cast<double>(config.num_hidden_layers) * (4 * T * C * C + 2 * T * C * F + 2 * T * T * C),
                "--layers, --d-model, --d-ff or --text");
    }
    ch.show("inputs.input_ids", input_ids, "the ids of chapter 1", Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, config.hidden_size);
    Tensor inputs_embeds = token_emb(input_ids);
    ch.show("inputs_embeds.shape", size_str(shape_of(inputs_embeds)), "(B,T,C): what goes in must come out");
    ch.show("inputs_embeds.std(-1)", row_std(inputs_embeds), {"StdBackward0"},
            "each token's spread: ~1, the N(0,1) table of nn.Embedding", Shown::Twin);

    // ---------------------------------------------------------------- 2) pre-LN
    ch.section("Step 2: article 000's layer, pre-LN: x = x + MHA(LN1(x)); x = x + FFN(LN2(x))",
               "article 000, TransformerEncoderLayer");
    TransformerEncoderLayer encoder_layer(config);  // draws: attention heads, output_linear, linear_1, linear_2
    encoder_layer.train(ch.training());
    ch.show("encoder_layer", encoder_layer.repr(),
            "two LayerNorms, chapter 4's 12-head attention, chapter 5's feed-forward", Shown::Twin);
    // 1) h = LN1(x)  2) x = x + MHA(h, h, h)  3) x = x + FFN(LN2(x))
    // (B,T,C) -> (B,T,C)
    Tensor pre_ln = encoder_layer(inputs_embeds);
    ch.show("encoder_layer(inputs_embeds).size()", size_str(shape_of(pre_ln)),
            "the article's check: the layer keeps the shape, so layers can be stacked");
    ch.show("pre_ln = encoder_layer(inputs_embeds)", pre_ln, {"AddBackward0"},
            "the input plus two corrections; the last op is an add, not a LayerNorm", Shown::Twin);
    ch.show("pre_ln.std(-1)", row_std(pre_ln), {"StdBackward0"},
            "a little above the input's spread: the corrections add variance, nothing removes it", Shown::Twin);

    // ---------------------------------------------------------------- 3) post-LN
    ch.section("Step 3: the same weights, post-LN: x = LN1(x + MHA(x)); x = LN2(x + FFN(x))",
               "article 001 AddNorm / EncoderBlock, article 004 EncoderLayer");
    // 1) x = LN1(x + MHA(x, x, x))  2) x = LN2(x + FFN(x))
    // (B,T,C) -> (B,T,C)
    Tensor post_ln = encoder_layer.post_ln(inputs_embeds);
    ch.show("post_ln = encoder_layer.post_ln(inputs_embeds)", post_ln, {"NativeLayerNormBackward0"},
            "the original paper's order: normalise after each residual add", Shown::Twin);
    ch.show("post_ln.std(-1)", row_std(post_ln), {"StdBackward0"},
            fmt::format("LayerNorm's output: variance 1 (divided by C), which the unbiased std (divided by C-1) "
                        "shows as about sqrt(C/(C-1)) = {:.5f}",
                        std::sqrt(C / (C - 1))),
            Shown::Twin);
    Tensor pre_minus_post = pre_ln - post_ln;
    ch.show("pre_ln - post_ln", pre_minus_post, {"SubBackward0"},
            ch.training() ? "same weights, same input; the arrangement changes every number (and in train mode the "
                            "feed-forward's Dropout drew a new mask for this call)"
                          : "same weights, same input, no dropout: the arrangement alone changes every number",
            Shown::Twin);
    ch.show("(pre_ln - post_ln).abs().max()", max_abs_diff(pre_ln, post_ln), {"MaxBackward1"},
            "pre-LN normalises what enters each sublayer; post-LN normalises the sums that leave it", Shown::Twin);

    // ---------------------------------------------------------------- 4) article 002's form
    ch.section("Step 4: article 002's SublayerConnection around the same two sublayers",
               "article 002 §9.2.2, SublayerConnection: x + dropout(sublayer(norm(x)))");
    // Two fresh SublayerConnections (their LayerNorm has no random weights: no draws)
    std::vector<SublayerConnection> sublayer(2, SublayerConnection(config.hidden_size, config.hidden_dropout_prob));
    for (SublayerConnection& s : sublayer) s.train(ch.training());
    ch.show("sublayer[0]", sublayer[0].repr(),
            "article 002's LayerNorm (unbiased std, eps 1e-6) and a Dropout(0.1) on the sublayer's output",
            Shown::Twin);
    // x = x + dropout(MHA(norm(x)));  out = x + dropout(FFN(norm(x)))
    // (B,T,C) -> (B,T,C)
    Tensor x_002 = sublayer[0](inputs_embeds, [&](const Tensor& h) { return encoder_layer.attention(h, h, h); });
    Tensor out_002 = sublayer[1](x_002, [&](const Tensor& h) { return encoder_layer.feed_forward(h); });
    ch.show("out_002 = sublayer[1](sublayer[0](inputs_embeds, self_attn), feed_forward)", out_002, {"AddBackward0"},
            "the same pre-LN idea written as a wrapper around any sublayer", Shown::Twin);
    ch.show("(out_002 - pre_ln).abs().max()", max_abs_diff(out_002, pre_ln), {"MaxBackward1"},
            ch.training() ? "train mode: each call draws new dropout masks (the feed-forward's own, and article "
                            "002's Dropout after each sublayer); run --eval to see what is left"
                          : "eval mode: only chapter 6's LayerNorm difference is left (unbiased std, eps 1e-6)",
            Shown::Twin);

    // ---------------------------------------------------------------- 5) the whole encoder
    ch.section(fmt::format("Step 5: TransformerEncoder: Embeddings, then {} layers", config.num_hidden_layers),
               "article 000, Positional Embeddings and TransformerEncoder");
    TransformerEncoder encoder(config);  // draws: token table, position table, then layer 1..N
    encoder.train(ch.training());
    {
      const size_t emb = encoder.embeddings.token_embeddings.weight.size() +
                         encoder.embeddings.position_embeddings.weight.size() + 2 * static_cast<size_t>(C);
      const size_t per_layer = count(encoder.layers[0]);
      ch.say(fmt::format("  parameters: embeddings {:.1f}M + {} layers x {:.2f}M = {:.1f}M", emb / 1e6,
                         encoder.layers.size(), per_layer / 1e6, (emb + per_layer * encoder.layers.size()) / 1e6));
    }
    // x = Embeddings(ids); then x = layer_l(x), keeping every intermediate x (the same ops as encoder(ids))
    // (B,T) -> (B,T,C) -> ... -> (B,T,C)
    std::vector<Tensor> pre_hidden{encoder.embeddings(input_ids)};
    for (const TransformerEncoderLayer& layer : encoder.layers) pre_hidden.push_back(layer(pre_hidden.back()));
    const Tensor& encoded = pre_hidden.back();
    ch.show("encoder(inputs.input_ids).size()", size_str(shape_of(encoded)),
            "one C-vector per token, now mixed with every other token's, N times over");
    ch.show("encoder(inputs.input_ids)", encoded, {"AddBackward0"},
            "article 000 stops here: no LayerNorm after the last layer", Shown::Twin);
    ch.show("encoder(inputs.input_ids).std(-1)", row_std(encoded), {"StdBackward0"},
            "the residual stream has grown, layer after layer (table below)", Shown::Twin);
    // article 002's Encoder ends with self.norm(x)
    AnnotatedLayerNorm norm(config.hidden_size);
    Tensor final_norm = norm(encoded);
    ch.show("norm(encoder(inputs.input_ids))  # article 002's Encoder.norm", final_norm, {"AddBackward0"},
            "article 002 normalises once more after the stack: a pre-LN stack needs it, its output is never "
            "normalised otherwise",
            Shown::Twin);
    ch.show("norm(encoder(inputs.input_ids)).std(-1)", row_std(final_norm), {"StdBackward0"},
            "back to 1.0000: article 002's LayerNorm divides by the unbiased std, the same yardstick as .std(-1)",
            Shown::Twin);

    // ---------------------------------------------------------------- 6) the scale, layer by layer
    ch.section("Step 6: how the activation scale grows, pre-LN vs post-LN", "articles 000 vs 001/004");
    // post-LN stack: the same layers, from the same embedding output
    // (B,T,C) -> ... -> (B,T,C)
    std::vector<Tensor> post_hidden{pre_hidden[0]};
    for (const TransformerEncoderLayer& layer : encoder.layers) post_hidden.push_back(layer.post_ln(post_hidden.back()));
    ch.show("post_ln_stack[-1]", post_hidden.back(), {"NativeLayerNormBackward0"},
            "the post-LN stack's output, for comparison with encoder(inputs.input_ids)", Shown::Twin);
    const size_t L = pre_hidden.size();
    Tensor layer_std = Tensor::from_shape({L, 2});
    for (size_t l = 0; l < L; ++l) {
      layer_std(l, 0) = mean_row_std(pre_hidden[l]);
      layer_std(l, 1) = mean_row_std(post_hidden[l]);
    }
    ch.show("layer_std  # row l: after l layers (0 = embeddings); columns: pre-LN, post-LN", layer_std, {},
            "x.std(-1).mean() after every layer", Shown::Twin);
    {
      float top = 0;
      for (float v : layer_std) top = std::max(top, v);
      std::string table = fmt::format("  {:<12} {:>8} {:<24} {:>8}\n", "after", "pre-LN", "", "post-LN");
      for (size_t l = 0; l < L; ++l) {
        const int bar = static_cast<int>(std::lround(24.0 * layer_std(l, 0) / top));
        table += fmt::format("  {:<12} {:>8.4f} {:<24} {:>8.4f}\n", l == 0 ? "embeddings" : "layer " + std::to_string(l),
                             layer_std(l, 0), std::string(static_cast<size_t>(bar), '#'), layer_std(l, 1));
      }
      const double v0 = layer_std(0, 0) * layer_std(0, 0), vN = layer_std(L - 1, 0) * layer_std(L - 1, 0);
      ch.figure(table);
      ch.say(fmt::format(
          "  Pre-LN: every layer adds its attention and feed-forward outputs to the stream and nothing divides\n"
          "  it back: its variance {} from {:.3f} to {:.3f}, {:+.4f} per layer with these fresh weights (sublayers\n"
          "  that write larger outputs move it faster). Post-LN ends every layer with a LayerNorm, so the\n"
          "  stream stays at 1 ({:.4f} in the table: the unbiased std of a unit-variance row, ~sqrt(C/(C-1))).{}",
          vN >= v0 ? "grows" : "goes", v0, vN, (vN - v0) / static_cast<double>(L - 1), layer_std(L - 1, 1),
          ch.training() ? fmt::format("\n  Row 0 is {:.4f}, not 1: Embeddings ends with nn.Dropout() (p = 0.5), whose "
                                      "kept values are doubled\n  (train mode; std x sqrt(1/(1-p)) = x 1.414).",
                                      layer_std(0, 0))
                        : ""));
    }

    // ---------------------------------------------------------------- 7) timing (default mode only)
    if (!ch.rich()) return;
    ch.section("Step 7: the same encoder, timed: PyTorch-exact path, fast path, plain loops", "issue 5, performance");
    encoder.train(false);  // every path in eval mode (FastEncoder has no dropout): no random draws from here on
    // The two BLAS paths always run on OpenBLAS and the torch-exact row kernels; with --naive the plain
    // loops are timed as a third row (the exact path's code, every product and row kernel a plain loop).
    set_matmul_path(MatmulPath::Blas);
    set_kernel_path(KernelPath::Exact);
    set_num_threads(1);  // one thread for every path (OpenBLAS included), so the rows compare like with like
    Tensor exact_out, fast_out, naive_out;
    const double budget_ms = full_timing ? 400.0 : 0.0;  // by default: a warm-up and 3 timed runs
    const double exact_ms = median_ms([&] { exact_out = encoder(input_ids); }, budget_ms);
    FastEncoder fast(encoder);  // packs each layer's 3 x H head weights into one (3C, C) matrix
    const double fast_ms = median_ms([&] { fast_out = fast(input_ids); }, budget_ms);
    double naive_ms = 0;
    if (ch.naive) {
      set_matmul_path(MatmulPath::Naive);
      set_kernel_path(KernelPath::Naive);
      naive_ms = median_ms([&] { naive_out = encoder(input_ids); }, budget_ms);
    }
    const float max_diff = max_abs_diff(fast_out, exact_out)();
    // matmul FLOPs of one forward (fast_encoder.hpp): per layer Q,K,V 6TC^2, scores and P V 4T^2C,
    // output 2TC^2, FFN 4TCF
    const double flops = fast.flops(1, static_cast<int64_t>(tokens.size()));
    const double weight_bytes = 4.0 * static_cast<double>(count(encoder.layers[0]) * encoder.layers.size());
    std::string table = fmt::format("  {:<50} {:>10} {:>9}\n",
                                    "path (eval mode, 1 thread, OpenBLAS " + blas_core() + ")",
                                    full_timing ? "ms/forward" : "ms (3 runs)",
                                    "GFLOP/s");
    auto row = [&](const std::string& name, double ms) {
      table += fmt::format("  {:<50} {:>10.2f} {:>9.2f}\n", name, ms, flops / ms / 1e6);
    };
    row("exact: TransformerEncoder::operator() (nn.hpp)", exact_ms);
    row("fast:  FastEncoder (fast_encoder.hpp)", fast_ms);
    if (ch.naive) row("plain loops: the exact path's code with --naive", naive_ms);
    ch.figure(table);
    ch.say(fmt::format(
        "  Workload: {} layers on (1, {}, {}), {:.2f} GFLOP of matrix products per forward; the fast path runs at\n"
        "  {:.2f}x the exact path's speed{}.\n"
        "  max |fast - exact| = {:.3g} ({} the 1e-4 the course allows): the fast path packs the heads' weights\n"
        "  into one product and folds bias and residual into it, so its sums round in another order.\n"
        "  The exact path replays PyTorch op by op ({} small Linears, {} bmm pairs and a cat per layer) so\n"
        "  that every printed digit equals the twin's.\n"
        "  Each forward also reads all {:.0f} MB of layer weights from memory ({:.1f} GB/s for the exact path)\n"
        "  and uses each weight for only T = {} rows: at short T the time goes to moving weights, not to\n"
        "  arithmetic, whichever path runs it. Timings vary with what else the machine is doing.{}{}",
        encoder.layers.size(), tokens.size(), config.hidden_size, flops / 1e9, exact_ms / fast_ms,
        ch.naive ? fmt::format(", the plain loops {:.1f}x slower (max |plain - exact| = {:.3g})", naive_ms / exact_ms,
                               max_abs_diff(naive_out, exact_out)())
                 : "",
        max_diff, max_diff <= 1e-4f ? "within" : "OUTSIDE", 3 * config.num_attention_heads,
        config.num_attention_heads, weight_bytes / 1e6, weight_bytes / exact_ms / 1e6, tokens.size(),
        full_timing ? "" : "\n  These are medians of 3 quick runs: --time times each path for ~0.4 s.",
        ch.naive ? "" : "\n  Run with --naive to time the plain loops as well."));
  });
}
