// ch09_decoder: the decoder layer -- look back at the target so far, then across at the source.
//
// Follows: article 002 §9.3.1 (listing 9.4, DecoderLayer: masked self-attention, cross-attention
//          over the encoder output `memory`, feed-forward, each in a pre-LN SublayerConnection;
//          the running example: target (1, 5, 256), memory (1, 6, 256), cross weights (1, 5, 6));
//          article 001 "Decoder Block" (post-LN AddNorm; the per-layer key/value cache state[2]
//          at inference, the valid_lens mask in training); article 004 "Decoder" (post-LN layer).
// Formula: x = x + dropout(self_attn(n, n, n, tgt_mask)),  n = norm(x)    (B,T,C), mask (1,T,T)
//          x = x + dropout(src_attn(n, memory, memory)),   n = norm(x)    (B,T,C) over (B,S,C)
//          out = x + dropout(w_2(dropout(w_1(n)))),        n = norm(x)    (B,T,C) -> (B,T,F) -> (B,T,C)
//          one token at a time: K = cat(K, k_t), V = cat(V, v_t); x_t attends over K, V  (B,1,C) over (B,t,C)
// Run:     ./build/ch09_decoder [--seed 0] [--eval] [--plain]
//          ./build/ch09_decoder --tgt-len 12 --src-len 9 --layers 2   (longer target, a 2-layer stack)
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "exact/compare.hpp"
#include "exact/rng.hpp"
#include "exact/stats.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/annotated.hpp"
#include "transformer/kv_cache.hpp"

using namespace ts;

// The labels of article 002's running example when the sizes are its own, else t0.., s0..
static std::vector<std::string> labels(size_t n, const std::vector<std::string>& example, const char* prefix) {
  if (n == example.size()) return example;
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(fmt::format("{}{}", prefix, i));
  return out;
}

// Mean over the heads of a (B,H,T,S) weight tensor, batch 0, for the picture only.
// (B,H,T,S) -> (T,S)
static Tensor head_mean(const Tensor& w) {
  const size_t H = w.shape()[1], T = w.shape()[2], S = w.shape()[3];
  Tensor m = zeros({T, S});
  for (size_t h = 0; h < H; ++h)
    for (size_t t = 0; t < T; ++t)
      for (size_t s = 0; s < S; ++s) m(t, s) += w(0, h, t, s) / static_cast<float>(H);
  return m;
}

int main(int argc, char** argv) {
  Chapter ch("ch09_decoder", "The decoder layer: masked self-attention, cross-attention, a key/value cache",
             "article 002 §9.3.1 (DecoderLayer), article 001 (DecoderBlock and its cache), article 004 (Decoder)");
  int64_t d_model = 256, heads = 8, d_ff = 1024, tgt_len = 5, src_len = 6, n_layers = 6;
  ch.option("--d-model", d_model, "C, the width of every token vector (default 256, article 002)");
  ch.option("--heads", heads, "h, the attention heads; must divide --d-model (default 8)");
  ch.option("--d-ff", d_ff, "F, the feed-forward width (default 1024 = 4 x 256)");
  ch.option("--tgt-len", tgt_len, "T, target tokens the decoder reads (default 5: BOS comment et es-vous ?)");
  ch.option("--src-len", src_len, "S, rows of the encoder output memory (default 6: BOS how are you ? EOS)");
  ch.option("--layers", n_layers, "N, decoder layers in the key/value-cache demo (default 6, article 002's N)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    check_range("--d-model", d_model, 2, 512, "LayerNorm's unbiased std divides by d_model - 1");
    check_model_dims(d_model, heads, 2);
    check_range("--d-ff", d_ff, 1, 8192);
    check_range("--tgt-len", tgt_len, 1, 64, "target tokens");
    check_range("--src-len", src_len, 1, 64, "memory rows");
    check_range("--layers", n_layers, 1, 12);
    const size_t T = static_cast<size_t>(tgt_len), S = static_cast<size_t>(src_len);
    const std::vector<std::string> tgt_tokens = labels(T, {"BOS", "comment", "et", "es-vous", "?"}, "t");
    const std::vector<std::string> src_tokens = labels(S, {"BOS", "how", "are", "you", "?", "EOS"}, "s");
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.cell_width = 8;

    // ---------------------------------------------------------------- 1) the layer and its inputs
    ch.section("Step 1: a DecoderLayer from deep copies, a target and a memory", "article 002 §9.3.1, listing 9.4");
    // one MultiHeadedAttention (4 deep copies of ONE Linear), one PositionwiseFeedForward (w_1, w_2)
    const MultiHeadedAttention attn(heads, d_model);
    const PositionwiseFeedForward ff(d_model, d_ff, 0.1);
    // DecoderLayer(C, deepcopy(attn), deepcopy(attn), deepcopy(ff), 0.1): self_attn and src_attn start equal
    DecoderLayer layer(d_model, attn, attn, ff, 0.1);
    layer.train(ch.training());
    ch.show("layer", layer.repr().str(),
            "two attention blocks (self_attn, src_attn), the feed-forward and three pre-LN sublayer wrappers",
            Shown::Twin);
    // tgt: the embedded target tokens, memory: the encoder's output (random stand-ins here)
    const Tensor tgt = randn({1, T, static_cast<size_t>(d_model)});     // (B,T,C)
    const Tensor memory = randn({1, S, static_cast<size_t>(d_model)});  // (B,S,C)
    ch.show("tgt.shape", size_str(shape_of(tgt)),
            "the decoder input: the French tokens BOS comment et es-vous ? (random vectors stand in for their "
            "embeddings)");
    ch.show("memory.shape", size_str(shape_of(memory)),
            "the encoder output for BOS how are you ? EOS: one row per source token");
    // tgt_mask[t,s] = s <= t
    // (1,T,T) bool
    const BTensor tgt_mask = subsequent_mask(tgt_len);
    const BTensor tgt_mask2 = xt::view(tgt_mask, 0, xt::all(), xt::all());
    ch.show("subsequent_mask(tgt.size(1))[0]", tgt_mask2,
            "True = may attend: token t sees tokens 0..t (the article prints it on cuda:0, hence its device=)");
    // article 001 builds the same training mask from valid lengths: query t sees keys s < t + 1
    ITensor dec_valid_lens = ITensor::from_shape({1, T});
    for (size_t t = 0; t < T; ++t) dec_valid_lens(0, t) = static_cast<int64_t>(t + 1);
    ch.show("dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch, 1)", dec_valid_lens,
            "article 001's training mask: query t may see the first t + 1 keys, the same lower triangle", Shown::Twin);

    // ---------------------------------------------------------------- 2) sublayer 0: masked self-attention
    ch.section("Step 2: sublayer 0, masked multi-head self-attention", "article 002 §9.3.1");
    // x1 = tgt + dropout(self_attn(n, n, n, tgt_mask)), n = norm(tgt)
    // (B,T,C)
    const Tensor x1 =
        layer.sublayer[0](tgt, [&](const Tensor& n) { return layer.self_attn(n, n, n, &tgt_mask); });
    ch.show("x1.shape", size_str(shape_of(x1)), "the self-attention sublayer keeps the shape (1, T, 256)");
    ch.show("x1", x1, {"AddBackward0"}, "the residual stream after the first sublayer", Shown::Twin);
    ch.show("layer.self_attn.attn.shape", size_str(shape_of(layer.self_attn.attn)),
            "(B, H, T, T): one T x T weight matrix per head", Shown::Twin);
    const Tensor self_w0 = xt::view(layer.self_attn.attn, 0, 0, xt::all(), xt::all());
    ch.show("layer.self_attn.attn[0, 0]", self_w0, {"SelectBackward0"},
            ch.training() ? "head 0: zeros above the diagonal (the mask); train-mode dropout also zeroes a few "
                            "weights and scales the rest by 1/0.9"
                          : "head 0: zeros above the diagonal; each row sums to 1 over tokens 0..t",
            Shown::Twin);
    hopt.title = "masked self-attention, head 0: rows = target queries, columns = target keys";
    ch.figure(heatmap(self_w0, tgt_tokens, tgt_tokens, hopt));
    ch.say("  Why the diagonal dominates: self_attn's four Linears are deep copies of ONE Linear, so each token's\n"
           "  query equals its key: scores[t,t] = |q_t|^2 / sqrt(D), usually the largest in its row. Training pulls them apart.");

    // ---------------------------------------------------------------- 3) sublayer 1: cross-attention
    ch.section("Step 3: sublayer 1, cross-attention: queries from the target, keys and values from memory",
               "article 002 §9.3.1, figure 9.8");
    // x2 = x1 + dropout(src_attn(n, memory, memory)), n = norm(x1)
    // Q (B,T,C) from x1, K and V (B,S,C) from memory -> weights (B,H,T,S)
    const Tensor x2 =
        layer.sublayer[1](x1, [&](const Tensor& n) { return layer.src_attn(n, memory, memory, nullptr); });
    ch.show("x2.shape", size_str(shape_of(x2)), "still (1, T, 256): one row per target token");
    ch.show("x2", x2, {"AddBackward0"}, "", Shown::Twin);
    ch.show("layer.src_attn.attn.shape", size_str(shape_of(layer.src_attn.attn)),
            "(B, H, T, S): each head weighs the S memory rows for each of the T target tokens", Shown::Twin);
    const Tensor cross_w0 = xt::view(layer.src_attn.attn, 0, 0, xt::all(), xt::all());
    const Shape cw = shape_of(layer.src_attn.attn);  // (B,H,T,S)
    ch.show("layer.src_attn.attn[:, 0].shape", size_str({cw[0], cw[2], cw[3]}),
            "one head's cross-attention weights: the article's (1, 5, 6), target tokens x source tokens");
    ch.show("layer.src_attn.attn[0, 0]", cross_w0, {"SelectBackward0"},
            "no mask here: every target token may look at every source token, so no zeros except dropout's",
            Shown::Twin);
    hopt.title = "cross-attention, head 0: rows = target tokens (queries), columns = memory rows (keys)";
    ch.figure(heatmap(cross_w0, tgt_tokens, src_tokens, hopt));
    hopt.title = fmt::format("cross-attention, mean over the {} heads", heads);
    ch.figure(heatmap(head_mean(layer.src_attn.attn), tgt_tokens, src_tokens, hopt));
    ch.say("  The inputs are random, so these weights mean nothing yet; after training, the row of 'comment'\n"
           "  would light up on 'how', and so on. The shape is the point: T queries x S keys.");

    // ---------------------------------------------------------------- 4) sublayer 2: feed-forward
    ch.section("Step 4: sublayer 2, the position-wise feed-forward", "article 002 §9.2.1 and §9.3.1");
    // out = x2 + dropout(w_2(dropout(w_1(n)))), n = norm(x2)
    // (B,T,C) -> (B,T,F) -> (B,T,C)
    const Tensor out = layer.sublayer[2](x2, [&](const Tensor& n) { return layer.feed_forward(n); });
    ch.show("out.shape", size_str(shape_of(out)), "the decoder layer's output: the input shape, (1, T, 256)");
    ch.show("out", out, {"AddBackward0"},
            "three residual additions: out = tgt + self-attention part + cross-attention part + FFN part",
            Shown::Twin);

    // ---------------------------------------------------------------- 5) post-LN (articles 001, 004)
    ch.section("Step 5: the same weights wired post-LN, as articles 001 and 004 write the layer",
               "article 001 AddNorm, article 004 DecoderLayer");
    // post-LN: x = norm(x + dropout(sublayer(x))), three times, on the same modules
    // (B,T,C)
    const Tensor p1 = layer.sublayer[0].norm(tgt + layer.sublayer[0].dropout(layer.self_attn(tgt, tgt, tgt, &tgt_mask)));
    const Tensor p2 =
        layer.sublayer[1].norm(p1 + layer.sublayer[1].dropout(layer.src_attn(p1, memory, memory, nullptr)));
    const Tensor post = layer.sublayer[2].norm(p2 + layer.sublayer[2].dropout(layer.feed_forward(p2)));
    ch.show("post", post, {"AddBackward0"},
            "the norm now comes AFTER each residual addition: every output row is normalised", Shown::Twin);
    {
      const Tensor sd_pre = std_lastdim(out, 1), sd_post = std_lastdim(post, 1);
      std::string rows;
      for (size_t t = 0; t < T && t < 8; ++t)
        rows += fmt::format("  {:<9} {:>12.4f} {:>12.4f}\n", tgt_tokens[t], sd_pre.data()[t], sd_post.data()[t]);
      ch.say(fmt::format(
          "  Row std of the layer output (the tokens' scale as the next layer receives it):\n"
          "  {:<9} {:>12} {:>12}\n{}"
          "  post-LN rows have std 1 (the norm is last); pre-LN rows keep the residual stream's own scale, so\n"
          "  article 002's Decoder adds one final LayerNorm after its N layers. Max |out - post| = {:.4f}:\n"
          "  two different functions of the same weights.",
          "token", "pre-LN out", "post-LN", rows, max_abs_diff(out, post)()));
    }

    // ---------------------------------------------------------------- 6) the key/value cache (article 001)
    ch.section("Step 6: decoding one token at a time with a per-layer cache", "article 001, DecoderBlock state[2]");
    // N deep copies of the layer and a final norm (article 002's Decoder); inference = eval mode
    Decoder decoder(layer, n_layers);
    decoder.train(false);
    ch.say(fmt::format(
        "  Inference runs in eval mode (decoder.eval()): train-mode dropout would draw new random masks at every\n"
        "  call, so a step-by-step pass could never match the full pass. Decoder = {} deep copies of the layer.",
        n_layers));
    // full = decoder(tgt, memory, None, tgt_mask): all T rows at once, the future hidden by the mask
    // (B,T,C)
    const Tensor full = decoder(tgt, memory, nullptr, &tgt_mask);
    ch.show("full = decoder(tgt, memory, None, tgt_mask)", full, {"AddBackward0"},
            "the full masked pass (teacher forcing): row t was computed from tokens 0..t only", Shown::Twin);
    // Row t, one at a time: x_t (B,1,C) through each layer with that layer's cache; no mask needed
    DecoderCache in_cache(CacheKind::Inputs, decoder.layers.size());
    DecoderCache kv_cache(CacheKind::KeysValues, decoder.layers.size());
    std::vector<Tensor> in_rows, kv_rows;
    std::string table = fmt::format("  {:>4}  {:<9} {:>14}  {:>16} {:>16} {:>16}\n", "step", "token", "K,V cache",
                                    "no cache", "article 001", "K/V cache");
    uint64_t no_cache_total = 0;
    for (size_t t = 0; t < T; ++t) {
      const Tensor x_t = position(tgt, t, /*keepdim=*/true);  // (B,1,C)
      const uint64_t in_before = in_cache.macs.total(), kv_before = kv_cache.macs.total();
      in_rows.push_back(decoder_step(decoder, x_t, memory, nullptr, in_cache));
      kv_rows.push_back(decoder_step(decoder, x_t, memory, nullptr, kv_cache));
      // without a cache, step t re-runs the full masked pass on the t + 1 tokens so far
      const uint64_t recompute = decoder_full_pass_macs(n_layers, 1, static_cast<int64_t>(t + 1),
                                                        static_cast<int64_t>(S), d_model, d_ff).total();
      no_cache_total += recompute;
      table += fmt::format("  {:>4}  {:<9} {:>14}  {:>16} {:>16} {:>16}\n", t + 1, tgt_tokens[t],
                           py_tuple(shape_of(kv_cache.layers[0].k)), thousands(recompute),
                           thousands(in_cache.macs.total() - in_before), thousands(kv_cache.macs.total() - kv_before));
    }
    Tensor cached_in = in_rows[0], cached_kv = kv_rows[0];
    for (size_t t = 1; t < T; ++t) {
      cached_in = cat_dim1(cached_in, in_rows[t]);
      cached_kv = cat_dim1(cached_kv, kv_rows[t]);
    }
    ch.show("kv_cache[0].k.shape", size_str(shape_of(kv_cache.layers[0].k)),
            "layer 0's cached keys after the last step: one row per token decoded (article 001's state[2][0])",
            Shown::Twin);
    ch.show("kv_cache[0].mem_k.shape", size_str(shape_of(kv_cache.layers[0].mem_k)),
            "the memory's keys, projected once at step 1 and reused (article 001 projects them at every step)",
            Shown::Twin);
    ch.show("cached = torch.cat(rows, dim=1)", cached_kv, {"CatBackward0"},
            "the T rows decoded one at a time with the key/value cache", Shown::Twin);
    // NaN-aware, like torch: a NaN anywhere makes the difference NaN, and NaN is never "<= 1e-5"
    const float diff_kv = max_abs_diff(full, cached_kv)(), diff_in = max_abs_diff(full, cached_in)();
    const bool equal_kv = std::equal(full.begin(), full.end(), cached_kv.begin());
    const float tol = 1e-5f;  // what "the same rows" means here: float32 rounding of a different product shape
    const bool ok_kv = diff_kv <= tol, ok_in = diff_in <= tol;
    ch.show("(full - cached).abs().max()", fmt::format("{:.2e}", diff_kv),
            ch.verdict(ok_kv, fmt::format("max |full - cached| = {:.2e}: the cached rows {} the full pass (limit {:.0e})",
                                          diff_kv, ok_kv ? "equal" : "differ from", tol)),
            Shown::Twin);
    ch.show("torch.equal(full, cached)", std::string(equal_kv ? "True" : "False"),
            equal_kv ? "bit for bit: each product sums in the same order one row at a time as in one block"
                     : "not to the last bit: a product over 1 row and one over T rows may round differently",
            Shown::Twin);
    ch.show("(full - cached_inputs).abs().max()", fmt::format("{:.2e}", diff_in),
            ch.verdict(ok_in, fmt::format("max |full - cached_inputs| = {:.2e}: article 001's input cache {} the full "
                                          "pass (limit {:.0e})",
                                          diff_in, ok_in ? "gives the rows of" : "differs from", tol)),
            Shown::Twin);

    // ---------------------------------------------------------------- 7) what each way costs
    ch.section("Step 7: multiply-adds of the matrix products, each way", "article 001 cache; article 004 greedy loop");
    ch.say("  Per step (all " + std::to_string(n_layers) + " layers): a no-cache decoder re-runs the full masked pass "
           "on the t tokens so far;\n  article 001 caches the rows and re-projects their keys and values (and the "
           "memory's); a K/V cache\n  projects only the new row.\n" + table);
    const MacCount one_pass = decoder_full_pass_macs(n_layers, 1, tgt_len, src_len, d_model, d_ff);
    auto line = [&](const std::string& name, const MacCount& m) {
      return fmt::format("  {:<34} {:>15} {:>13} {:>15} {:>13} {:>15} {:>16}\n", name, thousands(m.self_proj),
                         thousands(m.self_attn), thousands(m.cross_proj), thousands(m.cross_attn), thousands(m.ffn),
                         thousands(m.total()));
    };
    std::string totals = fmt::format("  {:<34} {:>15} {:>13} {:>15} {:>13} {:>15} {:>16}\n", "T = " + std::to_string(T) + " tokens",
                                     "self proj", "self QK,PV", "cross proj", "cross QK,PV", "FFN", "total");
    totals += line("one full masked pass (training)", one_pass);
    MacCount no_cache;
    for (size_t t = 1; t <= T; ++t)
      no_cache += decoder_full_pass_macs(n_layers, 1, static_cast<int64_t>(t), src_len, d_model, d_ff);
    totals += line("generate, no cache (re-run prefix)", no_cache);
    totals += line("generate, article 001 input cache", in_cache.macs);
    totals += line("generate, K/V cache", kv_cache.macs);
    ch.say(totals);
    ch.say(fmt::format(
        "  Generating takes T steps, one after another. Without a cache they cost {} multiply-adds ({:.1f}x the\n"
        "  cached {}), and the gap grows with T: re-running the prefix is O(T^2 C^2) in projections, the K/V cache\n"
        "  O(T C^2) plus O(T^2 C) for the scores -- no more than ONE full masked pass (a little less: it never scores\n"
        "  the masked half). What the full pass has over it is parallelism: all T rows in one batch of products,\n"
        "  possible only when the whole target is known (training, teacher forcing). The cache costs memory:\n"
        "  2 x N x T x C floats = {} here, plus the memory's keys and values, 2 x N x S x C = {}.",
        thousands(no_cache.total()), static_cast<double>(no_cache.total()) / static_cast<double>(kv_cache.macs.total()),
        thousands(kv_cache.macs.total()), thousands(2 * static_cast<uint64_t>(n_layers) * T * static_cast<uint64_t>(d_model)),
        thousands(2 * static_cast<uint64_t>(n_layers) * S * static_cast<uint64_t>(d_model))));
    if (no_cache_total != no_cache.total()) throw std::logic_error("MAC totals disagree");
  });
}
