// ch10_transformer: the whole encoder-decoder, and greedy decoding from a start token.
//
// Follows: article 002 §9.3.2-9.4 (listing 9.5 Transformer: encode / decode; listing 9.6
//          create_model(src_vocab, tgt_vocab, N=6, d_model=256, d_ff=1024, h=8) with sinusoidal
//          positions, embeddings x sqrt(d_model), xavier_uniform_; Generator = Linear + log_softmax;
//          "How are you?" -> 6 source tokens with BOS/EOS, a 5-token French target);
//          article 004 "4) 模型测试" (evaluate(): start token, decode, take the last position, argmax,
//          stop at the end token or after MAX_LENGTH steps) and its final Dense to the vocabulary.
// Formula: memory = encoder(src_embed(src))                            (B,S) -> (B,S,C)
//          h      = decoder(tgt_embed(ys), memory, src_mask, tgt_mask)  (B,t) -> (B,t,C)
//          log p(next | ys, src) = log_softmax(h[:, -1] W^T + b)       (B,C) -> (B,V)
//          greedy: ys <- [ys, argmax log p] until argmax = EOS or t = max_len
// Run:     ./build/ch10_transformer [--text "How are you?"] [--target "comment et es-vous ?"] [--seed 0]
//          ./build/ch10_transformer --layers 2 --max-len 20 --src-vocab 3000
//
// Every note that states a fact about a value computes it; the checks (xavier's bound, the
// parameter count of a decoder layer, log_softmax's rows, the cached greedy loop) are verdicts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "base/code_site.hpp"
#include "base/trace.hpp"
#include "course/chapter.hpp"
#include "course/counts.hpp"
#include "course/decoder_notes.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "course/model_probes.hpp"
#include "course/shape_check.hpp"
#include "course/translation.hpp"
#include "course/weight_stats.hpp"
#include "exact/compare.hpp"
#include "exact/tensor_ops.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/kv_cache.hpp"

using namespace ts;

int main(int argc, char** argv) {
  Chapter ch("ch10_transformer", _("The full Transformer: create_model, encode, decode, greedy decoding"),
             {{2, N_("§9.3.2-9.4 (Transformer, Generator, create_model)")},
              {4, N_("4) 模型测试 (evaluate: greedy decoding)")}});
  ch.text = "How are you?";
  ch.option("--text", ch.text, _("the English source sentence (bert-base-uncased pieces)"));
  ch.add_vocab_flag();
  std::string target = "comment et es-vous ?";
  int64_t n_layers = 6, d_model = 256, heads = 8, d_ff = 1024, max_len = 10, src_vocab = 30522,
          tgt_vocab = static_cast<int64_t>(kFrench.size());
  ch.option("--target", target, _("French words the decoder reads after <bos>"));
  ch.option("--layers", n_layers, _("N, encoder and decoder layers"), 1, 12);
  ch.option("--d-model", d_model, _("C, the model width"), 2, 512,
            _("LayerNorm's unbiased std divides by d_model - 1"));
  ch.option("--heads", heads, _("h, attention heads; must divide --d-model"));
  ch.option("--d-ff", d_ff, _("F, the feed-forward width"), 1, 4096);
  ch.option("--max-len", max_len, _("greedy decoding stops after this many new tokens"), 1, 100,
            _("new tokens"));
  ch.option("--src-vocab", src_vocab, _("rows of the source embedding, bert-base-uncased's by default"), 1, 100000);
  ch.option("--tgt-vocab", tgt_vocab,
            _("rows of the target embedding and generator outputs, the French list's by default"),
            static_cast<int64_t>(kFrench.size()), 100000, _("the French word list at least"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    // ---------------------------------------------------------------- inputs
    check_model_dims(d_model, heads, 2);
    // src = [CLS] pieces [SEP] (bert-base-uncased's ids), tgt = <bos> + the French words' ids
    const TranslationInputs in = read_translation_inputs(ch, target, src_vocab);
    const std::vector<int64_t>& src_ids = in.src_ids;
    const std::vector<int64_t>& tgt_ids = in.tgt_ids;
    const std::vector<std::string>& src_tokens = in.src_tokens;
    {
      // encoder over S tokens, decoder over T, then greedy decoding twice (re-running the prefix
      // of up to max_len tokens, and with the cache): per layer and token 4C^2 + 2CF (+4C^2 across)
      const double S = static_cast<double>(src_ids.size()), T = static_cast<double>(tgt_ids.size()),
                   N = static_cast<double>(n_layers), C = static_cast<double>(d_model), F = static_cast<double>(d_ff),
                   M = static_cast<double>(max_len), V = static_cast<double>(src_vocab + tgt_vocab);
      const double row = 8 * C * C + 2 * C * F;
      ch.budget(4.0 * (V * C + N * (12 * C * C + 4 * C * F)) * 2,
                N * S * (4 * C * C + 2 * C * F) + N * T * row + N * row * (M * M / 2 + 2 * M) + 2 * M * C * tgt_vocab,
                "--layers, --d-model, --d-ff, --max-len or --tgt-vocab");
    }
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.cell_width = 8;

    // ---------------------------------------------------------------- 1) create_model
    ch.section(_("Step 1: create_model: encoder, decoder, two embeddings, generator"),
               _("article 002 §9.4.2 创建用于两种语言之间翻译的模型, listing 9.6"));
    // attn, ff, pos drawn once; N deep copies each side; then xavier_uniform_ on every matrix
    EncoderDecoder model = create_model(src_vocab, tgt_vocab, n_layers, d_model, d_ff, heads);
    model.train(ch.training());
    ch.show("model.src_embed", model.src_embed.repr(), embed_sequential_words(model.src_embed, "V_src"), Shown::Twin);
    ch.show("model.generator", model.generator.repr(), generator_words(model.generator, "V_tgt"), Shown::Twin);
    {
      // parameters per part: the state_dict prefix before the first '.'
      const ParameterCounts counts = count_parameters(model);
      const Tensor& table = model.src_embed.embed.lut.weight;  // (V_src, C)
      ch.show("{part: sum(p.numel() for p in module.parameters())}", counts.table(),
              trf("with V_src = {V} the source table alone is {pct:.0f}% of the model",
                  fmt::arg("V", table.shape()[0]),
                  fmt::arg("pct", 100.0 * static_cast<double>(table.size()) / static_cast<double>(counts.total))),
              Shown::Twin);
      ch.say(decoder_layer_params_verdict(ch, counts.encoder_layer, counts.decoder_layer, model.decoder.layers[0]));
    }
    {
      // xavier_uniform_: U(-b, b), b = sqrt(6 / (fan_in + fan_out)); the 1-D bias keeps U(-1/sqrt(C), 1/sqrt(C))
      const Tensor& w = model.generator.proj.weight;  // (V_tgt, C)
      const Tensor& b = model.generator.proj.bias;    // (V_tgt)
      const double bound = std::sqrt(6.0 / static_cast<double>(w.shape()[0] + w.shape()[1]));
      const double bias_bound = 1.0 / std::sqrt(static_cast<double>(w.shape()[1]));
      float max_w = 0.0f, max_b = 0.0f;
      for (float v : w) max_w = std::max(max_w, std::fabs(v));
      for (float v : b) max_b = std::max(max_b, std::fabs(v));
      const Tensor first = xt::view(w, 0, xt::range(0, std::min<size_t>(6, w.shape()[1])));
      ch.show("model.generator.proj.weight[0, :6]", first, {"SliceBackward0"},
              ch.verdict(max_w <= bound, trf(max_w <= bound ? N_("xavier_uniform_ draws U(-b, b) with b = sqrt(6 / "
                                                                 "(fan_in + fan_out)) = {b:.4f}: max |weight| over "
                                                                 "the whole matrix = {m:.4f}")
                                                            : N_("max |weight| over the whole matrix = {m:.4f}, above "
                                                                 "xavier_uniform_'s bound b = sqrt(6 / (fan_in + "
                                                                 "fan_out)) = {b:.4f}: these weights were not drawn "
                                                                 "by xavier_uniform_"),
                                             fmt::arg("b", bound), fmt::arg("m", max_w))),
              Shown::Twin);
      ch.say("  " + ch.verdict(max_b <= bias_bound,
                               trf(max_b <= bias_bound ? N_("the bias is 1-D, so xavier_uniform_ leaves it alone: it "
                                                            "keeps Linear's own U(-1/sqrt(C), 1/sqrt(C)), max |bias| "
                                                            "= {m:.4f} <= {b:.4f}.")
                                                       : N_("max |bias| = {m:.4f}, above Linear's own bound "
                                                            "1/sqrt(C) = {b:.4f}: the bias was drawn otherwise."),
                                   fmt::arg("m", max_b), fmt::arg("b", bias_bound))));
    }
    ch.say(trf("  Vocabularies (chosen for this chapter): source = bert-base-uncased WordPiece, V_src = {V_src} rows "
               "(--src-vocab), with [CLS] = 101 as BOS and [SEP] = 102 as EOS; target = a {n}-word French list "
               "(<pad> 0, <bos> 1, <eos> 2, <unk> 3, then comment et es-vous ? je ne parle ...), V_tgt = {V_tgt} "
               "(--tgt-vocab).",
               fmt::arg("V_src", model.src_embed.embed.lut.weight.shape()[0]), fmt::arg("n", kFrench.size()),
               fmt::arg("V_tgt", model.tgt_embed.embed.lut.weight.shape()[0])));

    // ---------------------------------------------------------------- 2) encode
    ch.section(_("Step 2: encode the source: memory = encoder(src_embed(src))"),
               _("article 002 §9.3.2 创建编码器-解码器 Transformer, listing 9.5"));
    const ITensor src = id_tensor(src_ids);  // (B,S)
    ch.show("src", src,
            trf("the source with BOS and EOS as ids: {tokens}",
                fmt::arg("tokens", fmt::format("{}", fmt::join(src_tokens, " ")))),
            Shown::Twin);
    // src_mask = (src != pad).unsqueeze(-2)   (B,1,S)
    const BTensor src_mask = pad_mask(src_ids, 0);
    const auto visible = static_cast<size_t>(std::count(src_mask.begin(), src_mask.end(), true));
    ch.show("src_mask = (src != 0).unsqueeze(-2)", src_mask,
            trf("True where the id is not the padding id 0: {k} of the {S} source tokens are visible",
                fmt::arg("k", visible), fmt::arg("S", src_ids.size())),
            Shown::Twin);
    // memory (B,S,C)
    // traced, so the sentence under it says which layers ran
    std::vector<TraceEvent> encoded;
    const Tensor memory = [&] {
      const TraceRecorder trace(encoded);
      return model.encode(src, &src_mask);
    }();
    const StackRun enc = stack_run(encoded, "Encoder", "EncoderLayer", model.encoder.layers.size());
    ch.show("memory.shape", size_str(shape_of(memory)),
            _("one vector per source token (the article's example: (1, 6, 256))"));
    ch.show("memory", memory, {"AddBackward0"},
            enc.whole ? trf("after the {N} encoder layers and the final LayerNorm", fmt::arg("N", enc.layers))
                      : ch.verdict(false, trf("Encoder ran (traced): {ran}: not its {N} layers, then a final LayerNorm "
                                              "(look at {site})",
                                              fmt::arg("ran", enc.words), fmt::arg("N", model.encoder.layers.size()),
                                              fmt::arg("site", ch.ran("Encoder::operator()")))),
            Shown::Twin);

    // ---------------------------------------------------------------- 3) decode
    ch.section(_("Step 3: decode a known target (teacher forcing)"),
               _("article 002 §9.3.2 创建编码器-解码器 Transformer, listing 9.5"));
    const ITensor tgt = id_tensor(tgt_ids);  // (B,T)
    const auto unknown = static_cast<size_t>(std::count(tgt_ids.begin(), tgt_ids.end(), kFrUnk));
    ch.show("tgt", tgt,
            trf("<bos>, then the words of --target as ids of the French list ({u} of them outside it, given <unk> = 3)",
                fmt::arg("u", unknown)),
            Shown::Twin);
    // tgt_mask = (tgt != pad).unsqueeze(-2) & subsequent_mask(T)   (1,1,T) & (1,T,T) -> (B,T,T)
    const size_t T = tgt_ids.size(), S = src_ids.size();
    const BTensor tgt_mask = pad_mask(tgt_ids, kFrPad) && subsequent_mask(static_cast<int64_t>(T));
    ch.show("tgt_mask = (tgt != 0).unsqueeze(-2) & subsequent_mask(tgt.size(-1))", tgt_mask,
            trf("padding AND the future hidden: {sees}", fmt::arg("sees", mask_sees(tgt_mask))), Shown::Twin);
    const CodeSite decode_site{__FILE__, __LINE__ + 1, "model.decode"};
    const Tensor out = model.decode(memory, &src_mask, tgt, &tgt_mask);  // (B,T,C)
    // every line below reads out as (1,T,C) and the last layer's cross-attention as (1,H,T,S)
    // C from the model's own width (memory may itself have been edited into another shape)
    require_shape(out, {1, T, static_cast<size_t>(model.decoder.layers.back().size)}, "out",
                  _("one vector per target position: (B,T,C)"), code_site_words(decode_site));
    const Tensor& src_weights = model.decoder.layers.back().src_attn.attn;
    if (src_weights.dimension() != 4 || src_weights.shape()[0] != 1 || src_weights.shape()[2] != T)
      throw CheckFailure(trf("model.decoder.layers[-1].src_attn.attn holds {got}, not the (B,H,T,S) weights of this "
                             "decode's {T} target positions: the last layer's cross-attention did not run on them "
                             "(look at {site})",
                             fmt::arg("got", size_str(shape_of(src_weights))), fmt::arg("T", T),
                             fmt::arg("site", ch.ran("Decoder::operator()").empty() ? code_site_words(decode_site)
                                                                                    : ch.ran("Decoder::operator()"))));
    ch.show("out.shape", size_str(shape_of(out)),
            _("one vector per target position (the article's example: (1, 5, 256))"));
    ch.show("out", out, {"AddBackward0"}, "", Shown::Twin);
    const Tensor& cross = model.decoder.layers.back().src_attn.attn;  // (B,H,T,S)
    const Shape cw = shape_of(cross);                                 // (B,H,T,S)
    const bool over_source = cw[3] == S;  // the keys are the S source tokens, as the memory has
    ch.show("model.decoder.layers[-1].src_attn.attn[:, 0].shape", size_str({cw[0], cw[2], cw[3]}),
            over_source ? _("the last layer's cross-attention, one head: target positions x source tokens (the "
                            "article's example: (1, 5, 6))")
                        : trf("the last layer's cross-attention, one head: target positions x {K} keys, while the "
                              "source has {S} tokens: this src_attn no longer attends over the memory",
                              fmt::arg("K", cw[3]), fmt::arg("S", S)));
    std::vector<std::string> tgt_tokens;
    for (int64_t id : tgt_ids) tgt_tokens.push_back(french(id));
    hopt.title = over_source ? _("last decoder layer, cross-attention head 0: rows = target positions, columns = "
                                 "source tokens")
                             : trf("last decoder layer, src_attn head 0: rows = target positions, columns = its {K} "
                                   "keys", fmt::arg("K", cw[3]));
    const auto& keys = over_source ? src_tokens : cw[3] == T ? tgt_tokens : numbered("k", cw[3]);
    ch.figure(heatmap(xt::view(cross, 0, 0, xt::all(), xt::all()), tgt_tokens, keys, hopt));

    // ---------------------------------------------------------------- 4) generator
    ch.section(_("Step 4: the generator: log-probabilities of the next word"),
               _("article 002 §9.4.1 定义生成器; article 004 §transformer (final_layer)"));
    const Tensor logp = model.generator(out);  // (B,T,V)
    const size_t V = logp.shape()[2];
    bool log_probs = false;  // every row: exp sums to 1 and no value above 0, as log_softmax gives
    {
      // exp(logp) sums to 1 over the V words of every row; logp <= 0
      const auto [sum_err, top] = exp_row_sums(logp);
      log_probs = top <= 0.0f && sum_err < 1e-5f;
      ch.erratum(_("002 §9.4.1, lines 457 and 473"),
                 trf(log_probs ? N_("figure 9.9's caption says the generator applies softmax, so that its output is "
                                    "a probability distribution, and line 473 calls the outputs predicted "
                                    "probabilities. The code applies log_softmax: the outputs are log-probabilities, "
                                    "all <= 0 (here at most {top:.4f}), and it is their exp that sums to 1. The "
                                    "argmax, and so the next word, is the same either way.")
                               : N_("figure 9.9's caption says the generator applies softmax, and listing 9.6's "
                                    "code applies log_softmax. The generator run here gives neither "
                                    "log-probabilities nor probabilities of that kind: its outputs reach {top:.4f}, "
                                    "and their exp sums to 1 only within {e:.3g}."),
                     fmt::arg("top", top), fmt::arg("e", sum_err)));
      ch.show("logp = model.generator(out)", logp, {"LogSoftmaxBackward0"},
              ch.verdict(sum_err < 1e-5f, trf(sum_err < 1e-5f ? N_("log p(word | target so far, source) for every "
                                                                   "position and word: exp(logp) sums to 1 over the "
                                                                   "{V} words within {e:.1e}")
                                                              : N_("exp(logp) does not sum to 1 over the {V} words: a "
                                                                   "row is off by {e:.3g}, so these are not "
                                                                   "log-probabilities"),
                                              fmt::arg("V", V), fmt::arg("e", sum_err))),
              Shown::Twin);
    }
    {
      const std::vector<int64_t> pred = argmax_lastdim(logp);  // (B,T)
      float lo = INFINITY, hi = -INFINITY;
      for (size_t t = 0; t < T; ++t) {
        const float lp = logp(0, t, static_cast<size_t>(pred[t]));
        lo = std::min(lo, lp);
        hi = std::max(hi, lp);
      }
      ch.show("logp.argmax(dim=-1)", id_tensor(pred),
              trf(log_probs ? N_("the word each position would predict next: [{words}]. The weights are untrained, "
                                 "so the picks are arbitrary: their log-probabilities run from {lo:.3f} to {hi:.3f}, "
                                 "where a uniform guess gives log(1/V_tgt) = {u:.3f}")
                            : N_("the word each position would predict next: [{words}]. The weights are untrained, "
                                 "so the picks are arbitrary: their outputs run from {lo:.3f} to {hi:.3f} (not "
                                 "log-probabilities, see above)"),
                  fmt::arg("words", words(pred)), fmt::arg("lo", lo), fmt::arg("hi", hi),
                  fmt::arg("u", -std::log(static_cast<double>(V)))),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 5) greedy decoding
    ch.section(_("Step 5: greedy decoding from <bos> (eval mode)"), _("article 004 4) 模型测试, evaluate()"));
    // Inference is eval mode: train-mode dropout would make every step a random draw (step 7)
    model.train(false);
    const bool greedy_in_train_mode = in_train_mode(model);
    ch.say("  " + (greedy_in_train_mode
                       ? ch.verdict(false, _("the model is still in train mode: dropout is on, so each step below is a "
                                             "random draw (Step 7), not the model's answer."))
                       : ch.verdict(true, _("model.eval(): dropout is off, so the same prefix always gives the same "
                                            "next word."))));
    ch.say(_("  The loop follows article 004's evaluate(): re-run the decoder on the whole prefix, keep the last "
             "position, argmax, stop at <eos> (not appended) or after --max-len steps."));
    const Tensor memory_eval = model.encode(src, &src_mask);
    std::vector<int64_t> ys = {kFrBos};
    std::vector<Tensor> step_logp;
    const CodeSite loop_site{__FILE__, __LINE__ + 1, "the greedy loop"};
    for (int64_t i = 0; i < max_len; ++i) {
      // out = decode(memory, src_mask, ys, subsequent_mask(t))   (B,t,C)
      const BTensor ys_mask = subsequent_mask(static_cast<int64_t>(ys.size()));
      const Tensor h = model.decode(memory_eval, &src_mask, id_tensor(ys), &ys_mask);
      // log p(next) = generator(out[:, -1])   (B,V)
      const Tensor lp = model.generator(last_row(h));
      step_logp.push_back(lp);
      const auto top = top_k(lp, 5);
      const int64_t next = top[0].first;  // argmax
      ch.show(fmt::format("step {}: model.generator(model.decode(memory, src_mask, ys, subsequent_mask({}))[:, -1])",
                          i + 1, ys.size()),
              fmt::format("ys = [{}] -> next = {} (id {})\ntop-5: {}", words(ys), french(next), next, top_line(top)),
              "", Shown::Twin);
      if (next == kFrEos) break;
      ys.push_back(next);
    }
    // every step below compares with the loop's first step: a loop that took none stops here
    if (step_logp.empty())
      throw CheckFailure(trf("the greedy loop took no step with --max-len {n}: it must run at least once (look at {site})",
                             fmt::arg("n", max_len), fmt::arg("site", code_site_words(loop_site))));
    const float future = future_weight(model.decoder);  // the last decode's weight on later tokens, 0 if hidden
    std::vector<int64_t> predicted(ys.begin() + 1, ys.end());
    ch.show("print('输入: {}'.format(sentence))", "输入: " + ch.text, _("article 004's translate() prints the input ..."));
    ch.show("print('预测输出: {}'.format(predicted_sentence))", "预测输出: " + words(predicted),
            _("... and the prediction without the start/end tokens"), Shown::Article);
    ch.say(trf("  {stop} The weights are xavier-random and untrained, so this 'translation' is arbitrary: it only shows "
               "the loop running. Chapter 11 trains an encoder-decoder of this layout with article 004's train_step "
               "(teacher forcing, masked cross-entropy, a hand-written backward, Adam with the settings chapter 11 prints) on a "
               "digits-to-words task; article 002 trains its model in its next chapter on 47,000 English-French "
               "pairs, which the course does not have.",
               fmt::arg("stop", ys.size() > static_cast<size_t>(max_len)
                                    ? trf("No <eos> within --max-len {n}: the loop stopped at its limit.",
                                          fmt::arg("n", max_len))
                                    : std::string(_("The model chose <eos>, which ended the loop.")))));

    // ---------------------------------------------------------------- 6) the same loop with ch09's K/V cache
    ch.section(_("Step 6: the same loop with a key/value cache (chapter 9)"), _("article 001 Decoder Block, state[2]"));
    {
      DecoderCache cache(CacheKind::KeysValues, model.decoder.layers.size());
      std::vector<int64_t> ys_c = {kFrBos};
      float max_diff = 0.0f;
      double scale = 0;  // max |log p| of the full passes: float rounding grows with it
      uint64_t no_cache = 0;
      size_t fed = 0;  // tokens fed through the cache so far (the positions it must hold)
      for (size_t i = 0; i < step_logp.size(); ++i) {
        // embed the whole prefix (row-wise, no products) and feed only its last row   (B,1,C)
        const Tensor x_t = position(model.tgt_embed(id_tensor(ys_c)), ys_c.size() - 1, /*keepdim=*/true);
        const Tensor h = decoder_step(model.decoder, x_t, memory_eval, &src_mask, cache);
        ++fed;
        const Tensor lp = model.generator(last_row(h));
        scale = std::max(scale, max_abs(step_logp[i].data(), step_logp[i].size()));
        const float d = max_abs_diff(lp, step_logp[i])();  // NaN-aware, like torch's max
        if (std::isnan(d) || d > max_diff) max_diff = d;
        // without a cache: the full masked pass over the whole prefix, on the model's own sizes
        const DecoderLayer& l0 = model.decoder.layers[0];
        no_cache += decoder_full_pass_macs(static_cast<int64_t>(model.decoder.layers.size()), 1,
                                           static_cast<int64_t>(ys_c.size()), static_cast<int64_t>(S), l0.size,
                                           l0.feed_forward.linear_1.out_features).total();
        const int64_t next = top_k(lp, 1)[0].first;
        if (next == kFrEos) break;
        ys_c.push_back(next);
      }
      const bool same = ys_c == ys;
      // float32 rounding of one-row vs whole-prefix products, grown with the log-probs (exact/compare.hpp)
      const double tol = scaled_tolerance(scale);
      // the NOT OK names what this run measured: train mode, a pass that saw the future, a cache that
      // holds another number of positions than were fed, or the layer code itself
      const bool ok = same && max_diff <= tol;
      const std::string cause =
          ok ? "" : cached_rows_cause(greedy_in_train_mode, future, subsequent_mask(static_cast<int64_t>(ys.size())),
                                      cache, fed, static_cast<size_t>(S));
      const std::string verdict = ch.verdict(
          ok,
          ok
              ? trf("decoding with the cache picks the same words; largest log-prob difference over the {n} steps: "
                    "{d:.2e} (limit {tol:.2g}: {g:g} float epsilons x max(1, max |log p| {s:.3g}))",
                    fmt::arg("n", step_logp.size()), fmt::arg("d", max_diff), fmt::arg("tol", tol),
                    fmt::arg("g", kRoundingGrowth), fmt::arg("s", scale))
          : same ? trf("decoding with the cache picks the same words, but a log-prob differs by {d:.2e} over the {n} "
                       "steps, above the limit {tol:.2g} ({g:g} float epsilons x max(1, max |log p| {s:.3g})): {why}",
                       fmt::arg("n", step_logp.size()), fmt::arg("d", max_diff), fmt::arg("tol", tol),
                       fmt::arg("g", kRoundingGrowth), fmt::arg("s", scale), fmt::arg("why", cause))
                 : trf("decoding with the cache picks other words ({words}); largest log-prob difference over the "
                       "{n} steps: {d:.2e}, above the limit {tol:.2g} ({g:g} float epsilons x max(1, max |log p| {s:.3g})): "
                       "{why}",
                       fmt::arg("words", words(std::vector<int64_t>(ys_c.begin() + 1, ys_c.end()))),
                       fmt::arg("n", step_logp.size()), fmt::arg("d", max_diff), fmt::arg("tol", tol),
                       fmt::arg("g", kRoundingGrowth), fmt::arg("s", scale), fmt::arg("why", cause)));
      ch.say(trf("  {verdict}.\n"
                 "  Decoder multiply-adds: {none} re-running the prefix (above) vs {kv} with the cache ({r:.1f}x fewer).",
                 fmt::arg("verdict", verdict), fmt::arg("none", thousands(no_cache)),
                 fmt::arg("kv", thousands(cache.macs.total())),
                 fmt::arg("r", static_cast<double>(no_cache) / static_cast<double>(cache.macs.total()))));
    }

    // ---------------------------------------------------------------- 7) forgetting model.eval()
    ch.section(_("Step 7: what if model.eval() is forgotten?"),
               _("article 004 4) 模型测试: evaluate() passes training=False"));
    model.train(true);
    const double drop_p = max_dropout(model);  // the largest p over the model's Dropout modules
    const std::vector<int64_t> first = {kFrBos};
    const BTensor first_mask = subsequent_mask(1);
    std::vector<int64_t> picks;
    std::vector<Tensor> tries;
    for (int trial = 1; trial <= 2; ++trial) {
      // the first greedy step again, in train mode: encoder and decoder both drop activations at random
      const Tensor mem_tr = model.encode(src, &src_mask);
      const Tensor lp = model.generator(last_row(model.decode(mem_tr, &src_mask, id_tensor(first), &first_mask)));
      const auto top = top_k(lp, 5);
      picks.push_back(top[0].first);
      tries.push_back(lp);
      ch.show(fmt::format("train mode, try {}: step 1 top-5", trial), top_line(top),
              drop_p > 0.0 ? trf("fresh dropout masks (p up to {p}) at this call: max |log p - Step 5's step 1| = {d:.4f}",
                                 fmt::arg("p", drop_p), fmt::arg("d", max_abs_diff(lp, step_logp[0])()))
                           : trf("train mode with every dropout p = 0: max |log p - Step 5's step 1| = {d:.4f}",
                                 fmt::arg("d", max_abs_diff(lp, step_logp[0])())),
              Shown::Twin);
    }
    const std::string step1 = french(top_k(step_logp[0], 1)[0].first);
    const float spread = max_abs_diff(tries[0], tries[1])();
    ch.say(spread == 0.0f
               ? trf("  The two train-mode tries gave {a} and {b} with the same log-probabilities (max difference "
                     "0): with dropout p up to {p}, train mode drew nothing here. With a dropout above 0, every "
                     "train-mode call would be a random draw, and greedy decoding must run with model.eval().",
                     fmt::arg("a", french(picks[0])), fmt::arg("b", french(picks[1])), fmt::arg("p", drop_p))
           : greedy_in_train_mode
               ? trf("  Step 5 also ran in train mode ({first} for step 1); the two tries here gave {a} and {b}, and "
                     "differ from each other by up to {d:.4f} in log-probability. Every train-mode call is a new "
                     "random draw: greedy decoding must run with model.eval().",
                     fmt::arg("first", step1), fmt::arg("a", french(picks[0])), fmt::arg("b", french(picks[1])),
                     fmt::arg("d", spread))
               : trf("  Eval mode gave {first} for step 1; the two train-mode tries gave {a} and {b}, and differ from "
                     "each other by up to {d:.4f} in log-probability. A decoder in train mode samples noise, not the "
                     "model's answer: greedy decoding must run with model.eval().",
                     fmt::arg("first", step1), fmt::arg("a", french(picks[0])), fmt::arg("b", french(picks[1])),
                     fmt::arg("d", spread)));
  });
}
