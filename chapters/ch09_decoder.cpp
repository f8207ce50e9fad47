// ch09_decoder: the decoder layer -- look back at the target so far, then across at the source.
//
// Follows: article 002 §9.3.1 (listing 9.4, DecoderLayer: masked self-attention, cross-attention
//          over the encoder output `memory`, feed-forward, each in a pre-LN SublayerConnection;
//          the running example: target (1, 5, 256), memory (1, 6, 256), cross weights (1, 5, 6));
//          article 001 "Decoder Block" (post-LN AddNorm; the per-layer cache state[2] at
//          inference, the valid_lens mask in training); article 004 "Decoder" (post-LN layer).
// Formula: x = x + dropout(self_attn(n, n, n, tgt_mask)),  n = norm(x)    (B,T,C), mask (1,T,T)
//          x = x + dropout(src_attn(n, memory, memory)),   n = norm(x)    (B,T,C) over (B,S,C)
//          out = x + dropout(w_2(dropout(w_1(n)))),        n = norm(x)    (B,T,C) -> (B,T,F) -> (B,T,C)
//          one token at a time: K = cat(K, k_t), V = cat(V, v_t); x_t attends over K, V  (B,1,C) over (B,t,C)
// Run:     ./build/ch09_decoder [--seed 0] [--eval] [--plain]
//          ./build/ch09_decoder --tgt-len 12 --src-len 9 --layers 2   (longer target, a 2-layer stack)
//
// Every note that states a fact about a value computes it; the checks (deep copies start
// equal, the mask hides the future, post-LN rows have std 1, the cache gives the full pass's
// rows) are verdicts: OK / NOT OK with the figure.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/pace.hpp"
#include "course/decoder_notes.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "exact/compare.hpp"
#include "exact/rng.hpp"
#include "exact/tensor_ops.hpp"
#include "transformer/annotated.hpp"
#include "transformer/kv_cache.hpp"

using namespace ts;

static std::vector<std::string> labels(size_t n, const std::vector<std::string>& example, const char* prefix);
static Tensor head_mean(const Tensor& w);

int main(int argc, char** argv) {
  Chapter ch("ch09_decoder", _("The decoder layer: masked self-attention, cross-attention, a key/value cache"),
             {{2, N_("§9.3.1 (DecoderLayer)")}, {1, N_("Decoder Block and its cache")}, {4, N_("§Decoder")}});
  int64_t d_model = 256, heads = 8, d_ff = 1024, tgt_len = 5, src_len = 6, n_layers = 6;
  ch.option("--d-model", d_model, _("C, the width of every token vector, article 002's by default"), 2, 512,
            _("LayerNorm's unbiased std divides by d_model - 1"));
  ch.option("--heads", heads, _("h, the attention heads; must divide --d-model"));
  ch.option("--d-ff", d_ff, _("F, the feed-forward width"), 1, 8192);
  ch.option("--tgt-len", tgt_len, _("T, target tokens the decoder reads (by default BOS comment et es-vous ?)"), 1, 64,
            _("target tokens"));
  ch.option("--src-len", src_len, _("S, rows of the encoder output memory (by default BOS how are you ? EOS)"), 1, 64,
            _("memory rows"));
  ch.option("--layers", n_layers, _("N, decoder layers in the key/value-cache demo, article 002's N by default"), 1,
            12);

  return ch.run(argc, argv, [&](Chapter& ch) {
    check_model_dims(d_model, heads, 2);
    const size_t T = static_cast<size_t>(tgt_len), S = static_cast<size_t>(src_len);
    const std::vector<std::string> tgt_tokens = labels(T, {"BOS", "comment", "et", "es-vous", "?"}, "t");
    const std::vector<std::string> src_tokens = labels(S, {"BOS", "how", "are", "you", "?", "EOS"}, "s");
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.cell_width = 8;

    // ---------------------------------------------------------------- 1) the layer and its inputs
    ch.section(_("Step 1: a DecoderLayer from deep copies, a target and a memory"),
               _("article 002 §9.3.1 创建解码器层, listing 9.4"));
    // one MultiHeadedAttention (four independent Linear draws: q, k, v, output), one PositionwiseFeedForward
    const MultiHeadedAttention attn(heads, d_model);
    const FeedForward ff = positionwise_feed_forward(d_model, d_ff, 0.1);
    // DecoderLayer(C, deepcopy(attn), deepcopy(attn), deepcopy(ff), 0.1): self_attn and src_attn start equal
    DecoderLayer layer(d_model, attn, attn, ff, 0.1);
    layer.train(ch.training());
    // tgt: the embedded target tokens, memory: the encoder's output (random stand-ins here)
    const Tensor tgt = randn({1, T, static_cast<size_t>(d_model)});     // (B,T,C)
    const Tensor memory = randn({1, S, static_cast<size_t>(d_model)});  // (B,S,C)
    ch.show("layer", layer.repr(),
            trf("two attention blocks (self_attn, src_attn), the feed-forward and {n} sublayer wrappers; "
                "sublayer[0] computes {f}",
                fmt::arg("n", layer.sublayer.size()), fmt::arg("f", sublayer_words(layer.sublayer[0], tgt))),
            Shown::Twin);
    ch.say(copies_verdicts(ch, layer));
    ch.show("tgt.shape", size_str(shape_of(tgt)),
            trf("the decoder input, one row per target token (random vectors stand in for the embeddings of {tokens})",
                fmt::arg("tokens", fmt::format("{}", fmt::join(tgt_tokens, " ")))));
    ch.show("memory.shape", size_str(shape_of(memory)),
            trf("the encoder output, one row per source token ({tokens})",
                fmt::arg("tokens", fmt::format("{}", fmt::join(src_tokens, " ")))));
    // tgt_mask[t,s] = s <= t
    // (1,T,T) bool
    const BTensor tgt_mask = subsequent_mask(tgt_len);
    const BTensor tgt_mask2 = xt::view(tgt_mask, 0, xt::all(), xt::all());
    ch.show("subsequent_mask(tgt.size(1))[0]", tgt_mask2,
            trf("True = may attend: {sees} (the article prints it on cuda:0, hence its device=)",
                fmt::arg("sees", mask_sees(tgt_mask))));
    // article 001 builds its training mask from valid lengths: query t sees keys s < dec_valid_lens[t]
    ITensor dec_valid_lens = ITensor::from_shape({1, T});
    for (size_t t = 0; t < T; ++t) dec_valid_lens(0, t) = static_cast<int64_t>(t + 1);
    BTensor valid_mask = BTensor::from_shape({T, T});  // (T,T) keep s < dec_valid_lens[t]
    for (size_t t = 0; t < T; ++t)
      for (size_t s = 0; s < T; ++s) valid_mask(t, s) = static_cast<int64_t>(s) < dec_valid_lens(0, t);
    const bool same_mask = valid_mask == tgt_mask2;
    ch.show("dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch, 1)", dec_valid_lens,
            same_mask ? _("article 001's training mask: query t may see the first dec_valid_lens[t] keys, the same "
                          "mask as subsequent_mask above")
                      : trf("article 001's training mask: query t may see the first dec_valid_lens[t] keys, so "
                            "{sees}; subsequent_mask above is another mask",
                            fmt::arg("sees", mask_sees(valid_mask))),
            Shown::Twin);

    // ---------------------------------------------------------------- 2) sublayer 0: masked self-attention
    ch.section(_("Step 2: sublayer 0, masked multi-head self-attention"), _("article 002 §9.3.1 创建解码器层"));
    ch.erratum(_("002 §9.3.1, listing 9.4, lines 358-360"),
               _("the three lines of forward() lost their arguments in print (\"x = self.sublayer0)\"), so the "
                 "listing does not run as shown. This chapter runs what they stand for: x = sublayer[0](x, lambda x: "
                 "self_attn(x, x, x, tgt_mask)), then x = sublayer[1](x, lambda x: src_attn(x, memory, memory, "
                 "src_mask)), then sublayer[2](x, feed_forward)."));
    // x1 = tgt + dropout(self_attn(n, n, n, tgt_mask)), n = norm(tgt)
    // (B,T,C)
    const Tensor x1 =
        layer.sublayer[0](tgt, [&](const Tensor& n) { return layer.self_attn(n, n, n, &tgt_mask); });
    ch.show("x1.shape", size_str(shape_of(x1)), _("the sublayer wrapper returns its input's shape, (B, T, C)"));
    // what the wrapper computes, measured with probe sublayers: "x + f(norm(x))" keeps the residual
    const std::string f0 = sublayer_formula(layer.sublayer[0], tgt);
    const auto residual = [](const std::string& f) { return f.rfind("x + ", 0) == 0; };
    ch.show("x1", x1, {"AddBackward0"},
            residual(f0) ? _("the residual stream after the first sublayer")
            : f0.find(" x + ") != std::string::npos
                ? trf("the first sublayer's output, {f} (measured): its input is added back at weight {a} (article "
                      "002: 1)",
                      fmt::arg("f", f0), fmt::arg("a", f0.substr(0, f0.find(' '))))
                : trf("the first sublayer's output, {f} (measured): its input is not added back",
                      fmt::arg("f", f0.empty() ? "?" : f0)),
            Shown::Twin);
    ch.show("layer.self_attn.attn.shape", size_str(shape_of(layer.self_attn.attn)),
            _("(B, H, T, T): one T x T weight matrix per head"), Shown::Twin);
    // the weights the self-attention keeps exist only if it ran (the layer is fresh: nothing ran it before)
    if (layer.self_attn.attn.dimension() != 4)
      throw CheckFailure(trf("layer.self_attn.attn is empty after x1 = layer.sublayer[0](tgt, ...): the masked "
                             "self-attention did not run in sublayer 0, so there are no weights to show or check "
                             "(look at Step 2's x1 in {file})",
                             fmt::arg("file", code_site_path(__FILE__))));
    {
      // the mask check over the heads, and dropout's zeros only where it ran and zeroed weights the mask keeps
      const SelfAttentionNotes notes = self_attention_notes(ch, layer.self_attn, tgt_mask2);
      const Tensor self_w0 = xt::view(layer.self_attn.attn, 0, 0, xt::all(), xt::all());  // (T,T)
      ch.show("layer.self_attn.attn[0, 0]", self_w0, {"SelectBackward0"}, notes.weights, Shown::Twin);
      hopt.title = _("masked self-attention, head 0: rows = target queries, columns = target keys");
      ch.figure(heatmap(self_w0, tgt_tokens, tgt_tokens, hopt));
      if (!notes.self_vs_other.empty()) ch.say(notes.self_vs_other);
    }

    // ---------------------------------------------------------------- 3) sublayer 1: cross-attention
    ch.section(_("Step 3: sublayer 1, cross-attention: queries from the target, keys and values from memory"),
               _("article 002 §9.3.1 创建解码器层, figure 9.8"));
    // the divisor the scores are divided by, measured on a probe of src_attn's heads
    ch.erratum(_("002 §9.3.1, lines 384 and 388"), scaling_erratum(layer.src_attn));
    // x2 = x1 + dropout(src_attn(n, memory, memory)), n = norm(x1)
    // Q (B,T,C) from x1, K and V (B,S,C) from memory -> weights (B,H,T,S)
    const Tensor x2 =
        layer.sublayer[1](x1, [&](const Tensor& n) { return layer.src_attn(n, memory, memory, nullptr); });
    ch.show("x2.shape", size_str(shape_of(x2)), _("(B, T, C) again: one row per target token, not per memory row"));
    ch.show("x2", x2, {"AddBackward0"}, "", Shown::Twin);
    const Shape cw = shape_of(layer.src_attn.attn);  // (B,H,T,S)
    if (cw.size() != 4) {  // src_attn keeps the weights of its last run: none, or not 4-d, if it did not run above
      throw CheckFailure(trf("layer.src_attn.attn holds {n} dimensions, not the (B, H, T, S) weights of a run: the "
                             "cross-attention did not run in sublayer 1 (look at Step 3's x2 in {file})",
                             fmt::arg("n", cw.size()), fmt::arg("file", code_site_path(__FILE__))));
    }
    ch.show("layer.src_attn.attn.shape", size_str(cw),
            trf("(B, H, T, S): each head weighs {S} key rows for each of the {T} target tokens",
                fmt::arg("S", cw[3]), fmt::arg("T", cw[2])),
            Shown::Twin);
    ch.say("  " + ch.verdict(cw[3] == S,
                             N_("the keys are memory's rows: {k} key columns for the {S} rows of memory."),
                             N_("the keys are not memory's rows: {k} key columns for the {S} rows of memory."),
                             fmt::arg("k", cw[3]), fmt::arg("S", S)));
    // the columns: memory's tokens, or (if the keys came from elsewhere) k0, k1, ...
    const std::vector<std::string> key_tokens = cw[3] == S ? src_tokens : labels(cw[3], {}, "k");
    const Tensor cross_w0 = xt::view(layer.src_attn.attn, 0, 0, xt::all(), xt::all());
    ch.show("layer.src_attn.attn[:, 0].shape", size_str({cw[0], cw[2], cw[3]}),
            _("one head's cross-attention weights, target tokens x source tokens (the article's example: (1, 5, 6))"));
    {
      const auto zeros = static_cast<size_t>(std::count(cross_w0.begin(), cross_w0.end(), 0.0f));
      const Dropout& drop = layer.src_attn.dropout;
      ch.show("layer.src_attn.attn[0, 0]", cross_w0, {"SelectBackward0"},
              drop.training && drop.p > 0.0
                  ? trf("no mask: every target token may look at every source token; {z} of these {n} weights are "
                        "0, zeroed by train-mode dropout (p = {p})",
                        fmt::arg("z", zeros), fmt::arg("n", cross_w0.size()), fmt::arg("p", drop.p))
                  : trf("no mask and no dropout: every target token looks at every source token; {z} of these {n} "
                        "weights are 0",
                        fmt::arg("z", zeros), fmt::arg("n", cross_w0.size())),
              Shown::Twin);
    }
    hopt.title = _("cross-attention, head 0: rows = target tokens (queries), columns = memory rows (keys)");
    ch.figure(heatmap(cross_w0, tgt_tokens, key_tokens, hopt));
    const Tensor cross_mean = head_mean(layer.src_attn.attn);  // (T,S)
    hopt.title = trfn("cross-attention, the {H} head", "cross-attention, mean over the {H} heads", heads, fmt::arg("H", heads));
    ch.figure(heatmap(cross_mean, tgt_tokens, key_tokens, hopt));
    {
      const size_t at = static_cast<size_t>(std::max_element(cross_mean.begin(), cross_mean.end()) - cross_mean.begin());
      const size_t K = cross_mean.shape()[1];
      ch.say(trf("  The inputs are random and the weights untrained, so these weights mean nothing yet: the largest "
                 "mean weight, {w:.3f}, goes from {t} to {s} by chance (a uniform row would give {u:.3f}). After "
                 "training, the row of a French word would peak on the English words it translates. The shape is the "
                 "point: T queries x S keys.",
                 fmt::arg("w", cross_mean.data()[at]), fmt::arg("t", tgt_tokens[at / K]), fmt::arg("s", key_tokens[at % K]),
                 fmt::arg("u", 1.0 / static_cast<double>(K))));
    }

    // ---------------------------------------------------------------- 4) sublayer 2: feed-forward
    ch.section(_("Step 4: sublayer 2, the position-wise feed-forward"),
               _("article 002 §9.2.1 注意力机制 (PositionwiseFeedForward) and §9.3.1 创建解码器层"));
    // out = x2 + dropout(w_2(dropout(w_1(n)))), n = norm(x2)
    // (B,T,C) -> (B,T,F) -> (B,T,C)
    const Tensor out = layer.sublayer[2](x2, [&](const Tensor& n) { return layer.feed_forward(n); });
    ch.show("out.shape", size_str(shape_of(out)), _("the decoder layer's output has its input's shape, (B, T, C)"));
    {
      // what the three wrappers add, measured on their own inputs (dropout off)
      const std::string f1 = sublayer_formula(layer.sublayer[1], x1), f2 = sublayer_formula(layer.sublayer[2], x2);
      // and what each of the three steps above added, measured: a part is there if its output differs from its input
      std::vector<std::string> parts{"tgt"}, missing;
      const std::pair<float, std::string> added[] = {
          {max_abs_diff(x1, tgt)(), _("self-attention part")}, {max_abs_diff(x2, x1)(), _("cross-attention part")},
          {max_abs_diff(out, x2)(), _("FFN part")}};
      for (const auto& [d, part] : added) (d == 0.0f ? missing : parts).push_back(part);
      ch.show("out", out, {"AddBackward0"},
              !missing.empty() && residual(f0) && residual(f1) && residual(f2)
                  ? trf("residual additions measured: out = {sum}; no {missing} was added (that sublayer's output "
                        "equals its input)",
                        fmt::arg("sum", fmt::format("{}", fmt::join(parts, " + "))),
                        fmt::arg("missing", fmt::format("{}", fmt::join(missing, _(", no ")))))
              : residual(f0) && residual(f1) && residual(f2)
                  ? _("three residual additions: out = tgt + self-attention part + cross-attention part + FFN part")
                  : trf("the three wrappers compute {a}, {b} and {c} (measured): out is not tgt plus three parts",
                        fmt::arg("a", f0.empty() ? "?" : f0), fmt::arg("b", f1.empty() ? "?" : f1),
                        fmt::arg("c", f2.empty() ? "?" : f2)),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 5) post-LN (articles 001, 004)
    ch.section(_("Step 5: the same weights wired post-LN, as articles 001 and 004 write the layer"),
               _("article 001 Add & Norm, Decoder Block; article 004 §Decoder"));
    // post-LN: x = norm(x + dropout(sublayer(x))), three times, on the same modules
    // (B,T,C)
    const Tensor p1 = layer.sublayer[0].norm(tgt + layer.sublayer[0].dropout(layer.self_attn(tgt, tgt, tgt, &tgt_mask)));
    const Tensor p2 =
        layer.sublayer[1].norm(p1 + layer.sublayer[1].dropout(layer.src_attn(p1, memory, memory, nullptr)));
    const Tensor post = layer.sublayer[2].norm(p2 + layer.sublayer[2].dropout(layer.feed_forward(p2)));
    ch.show("post", post, {"AddBackward0"},
            _("the norm now comes AFTER each residual addition, so it is the last thing each row goes through"),
            Shown::Twin);
    ch.say(pre_post_note(ch, out, post, layer.sublayer[2].norm.eps, tgt_tokens));

    // ---------------------------------------------------------------- 6) the key/value cache (article 001)
    ch.section(_("Step 6: decoding one token at a time with a per-layer cache"),
               _("article 001 Decoder Block, state[2]"));
    ch.erratum(_("001 Decoder Block, line 44"),
               _("state[2] is described as each layer's cache of keys and values. The code stores the layer's input "
                 "rows X (key_values = X, then torch.cat) and hands them to attn1, which projects them into keys and "
                 "values again at every step: it is an input cache. This step runs both it and a cache of projected "
                 "keys and values; Step 7 counts what re-projecting costs."));
    // N deep copies of the layer and a final norm (article 002's Decoder); inference = eval mode
    Decoder decoder(layer, n_layers);
    decoder.train(false);
    // decoder.training: every dropout of the stack follows decoder.train(on)
    const bool decoder_training = decoder.layers[0].sublayer[0].dropout.training;
    ch.say("  " + (decoder_training
                       ? ch.verdict(false, _("the decoder is still in train mode: its dropout draws new random masks "
                                             "at every call, so a step-by-step pass cannot match the full pass."))
                       : ch.verdict(true, _("inference runs in eval mode (decoder.eval()): train-mode dropout would "
                                            "draw new random masks at every call, so a step-by-step pass could never "
                                            "match the full pass."))));
    const size_t N = decoder.layers.size();
    // full = decoder(tgt, memory, None, tgt_mask): all T rows at once, the future hidden by the mask
    // (B,T,C); traced, so the sentence on the Decoder's structure says what ran
    std::vector<TraceEvent> ran;
    // the weights each layer keeps (the copies hold Step 2's): cleared, so what is read below is this pass's
    for (DecoderLayer& l : decoder.layers) l.self_attn.attn = Tensor();
    const Tensor full = [&] {
      const TraceRecorder trace(ran);
      return decoder(tgt, memory, nullptr, &tgt_mask);
    }();
    ch.say(decoder_structure_words(ch, ran, N));
    const float future = future_weight(decoder);  // weight on later tokens, 0 when the mask hid them
    // how many layers' self-attention computed weights in this pass (none: no token looked at another)
    const auto attended = std::count_if(decoder.layers.begin(), decoder.layers.end(),
                                        [](const DecoderLayer& l) { return l.self_attn.attn.dimension() == 4; });
    ch.show("full = decoder(tgt, memory, None, tgt_mask)", full, {"AddBackward0"},
            attended == 0 ? trf("the full pass (teacher forcing), all T rows at once; none of the {N} layers' "
                                "self-attention computed weights (self_attn.attn is empty after it), so no target "
                                "token looked at another and tgt_mask was not used",
                                fmt::arg("N", N))
            : future == 0.0f ? trf("the full pass (teacher forcing), all T rows at once; with tgt_mask, {sees}",
                                 fmt::arg("sees", mask_sees(tgt_mask)))
                           : trf("the full pass (teacher forcing), all T rows at once; tokens gave weight up to "
                                 "{w:.3g} to later tokens",
                                 fmt::arg("w", future)),
            Shown::Twin);
    // Row t, one at a time: x_t (B,1,C) through each layer with that layer's cache; no mask needed
    const int64_t C = layer.size, F = layer.feed_forward.linear_1.out_features;
    DecoderCache in_cache(CacheKind::Inputs, N);
    DecoderCache kv_cache(CacheKind::KeysValues, N);
    std::vector<Tensor> in_rows, kv_rows;
    std::vector<StepCost> steps;
    // the > 10 s note: each step's multiply-adds with both caches, counted before the loop runs;
    // the first two steps timed in processor time; the rest at the second step's pace (pace.hpp)
    std::vector<double> step_work, step_seconds;
    for (size_t t = 0; t < T; ++t) {
      const int64_t cached = static_cast<int64_t>(t + 1), rows = static_cast<int64_t>(S);
      const MacCount in = decoder_step_macs(CacheKind::Inputs, 1, cached, rows, C, F, t > 0);
      const MacCount kv = decoder_step_macs(CacheKind::KeysValues, 1, cached, rows, C, F, t > 0);
      step_work.push_back(double(N) * double(in.total() + kv.total()));
    }
    double step_start = cpu_seconds();
    for (size_t t = 0; t < T; ++t) {
      const Tensor x_t = position(tgt, t, /*keepdim=*/true);  // (B,1,C)
      const uint64_t in_before = in_cache.macs.total(), kv_before = kv_cache.macs.total();
      in_rows.push_back(decoder_step(decoder, x_t, memory, nullptr, in_cache));
      kv_rows.push_back(decoder_step(decoder, x_t, memory, nullptr, kv_cache));
      // without a cache, step t re-runs the full masked pass on the t + 1 tokens so far
      steps.push_back({tgt_tokens[t], shape_of(kv_cache.layers[0].self_attn.k),
                       decoder_full_pass_macs(static_cast<int64_t>(N), 1, static_cast<int64_t>(t + 1),
                                              static_cast<int64_t>(S), C, F).total(),
                       in_cache.macs.total() - in_before, kv_cache.macs.total() - kv_before});
      if (t < 2) {
        const double now = cpu_seconds();
        step_seconds.push_back(now - step_start);
        step_start = now;
      }
      if (t + 1 == std::min<size_t>(T, 2))
        ch.pace_note(trf("decoding the first {n} of the {T} tokens with both caches", fmt::arg("n", t + 1),
                         fmt::arg("T", T)),
                     step_seconds[0] + (t > 0 ? step_seconds[1] : 0.0),
                     loop_seconds(step_work, step_seconds), "--tgt-len, --src-len, --layers, --d-model or --d-ff",
                     /*processor=*/true);
    }
    // torch.cat(rows, dim=1): T x (B,1,C) -> (B,T,C)
    const Tensor cached_in = cat(in_rows, 1), cached_kv = cat(kv_rows, 1);
    const Shape cached_k = shape_of(kv_cache.layers[0].self_attn.k);  // (B,t,C) after the T steps
    const size_t cached_rows = cached_k.size() == 3 ? cached_k[1] : 0;
    ch.show("kv_cache[0].k.shape", size_str(cached_k),
            cached_rows == T ? _("layer 0's cached keys after the last step: one row per token decoded")
                             : trf("layer 0's cached keys after the last step: {r} rows for the {T} tokens decoded, "
                                   "not one per token",
                                   fmt::arg("r", cached_rows), fmt::arg("T", T)),
            Shown::Twin);
    ch.show("kv_cache[0].mem_k.shape", size_str(shape_of(kv_cache.layers[0].src_attn.k)),
            _("the memory's keys, projected once at step 1 and reused (article 001 projects them at every step)"),
            Shown::Twin);
    ch.show("cached = torch.cat(rows, dim=1)", cached_kv, {"CatBackward0"},
            _("the T rows decoded one at a time with the key/value cache"), Shown::Twin);
    // NaN-aware, like torch: a NaN anywhere makes the difference NaN, and NaN is never "<= 1e-5"
    const float diff_kv = max_abs_diff(full, cached_kv)(), diff_in = max_abs_diff(full, cached_in)();
    const bool equal_kv = std::equal(full.begin(), full.end(), cached_kv.begin());
    // what "the same rows" means here: float32 rounding of a different product shape, which grows
    // with the values (exact/compare.hpp): kRoundingGrowth float epsilons x max(1, max |full|)
    const double scale = max_abs(full.data(), full.size());
    const double tol = scaled_tolerance(scale);
    // what this run measured: the mode, the mask, the caches' lengths against the T positions
    const std::string cause = cached_rows_cause(decoder_training, future, tgt_mask, kv_cache, T, S);
    const auto same_rows = [&](float d, const char* ok, const char* not_ok) {
      return ch.verdict(d <= tol, d <= tol ? trf(ok, fmt::arg("d", d), fmt::arg("tol", tol), fmt::arg("s", scale), fmt::arg("g", kRoundingGrowth))
                                           : trf(not_ok, fmt::arg("d", d), fmt::arg("tol", tol), fmt::arg("s", scale),
                                                 fmt::arg("g", kRoundingGrowth), fmt::arg("why", cause)));
    };
    ch.show("(full - cached).abs().max()", fmt::format("{:.2e}", diff_kv),
            same_rows(diff_kv,
                      N_("max |full - cached| = {d:.2e}: the key/value cache gives the rows of the full pass (limit "
                        "{tol:.2g}: {g:g} float epsilons x max(1, max |full| {s:.3g}))"),
                      N_("max |full - cached| = {d:.2e}, above the limit {tol:.2g} ({g:g} float epsilons x max(1, "
                        "max |full| {s:.3g})): the key/value cache does not give the rows of the full pass; {why}")),
            Shown::Twin);
    ch.show("torch.equal(full, cached)", std::string(equal_kv ? "True" : "False"),
            equal_kv           ? _("bit for bit: each product sums in the same order one row at a time as in one block")
            : diff_kv <= tol ? _("not to the last bit: a product over 1 row and one over T rows may round differently")
                             : trf("not equal: the rows differ by up to {d:.3g} (above)", fmt::arg("d", diff_kv)),
            Shown::Twin);
    ch.show("(full - cached_inputs).abs().max()", fmt::format("{:.2e}", diff_in),
            same_rows(diff_in,
                      N_("max |full - cached_inputs| = {d:.2e}: article 001's input cache gives the rows of the full "
                        "pass (limit {tol:.2g}: {g:g} float epsilons x max(1, max |full| {s:.3g}))"),
                      N_("max |full - cached_inputs| = {d:.2e}, above the limit {tol:.2g} ({g:g} float epsilons x "
                        "max(1, max |full| {s:.3g})): article 001's input cache "
                        "does not give the rows of the full pass; {why}")),
            Shown::Twin);

    // ---------------------------------------------------------------- 7) what each way costs
    ch.section(_("Step 7: multiply-adds of the matrix products, each way"),
               _("article 001 Decoder Block cache; article 004 4) 模型测试 (evaluate)"));
    ch.say(decoding_costs(ch, DecoderShape{N, T, S, C, F}, steps, in_cache.macs, kv_cache));
  });
}

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

