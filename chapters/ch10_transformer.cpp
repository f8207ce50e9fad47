// ch10_transformer: the whole encoder-decoder, and greedy decoding from a start token.
//
// Follows: article 002 §9.3.2-9.4 (listing 9.5 Transformer: encode / decode; listing 9.6
//          create_model(src_vocab, tgt_vocab, N=6, d_model=256, d_ff=1024, h=8) with sinusoidal
//          positions, embeddings x sqrt(d_model), xavier_uniform_; Generator = Linear + log_softmax;
//          "How are you?" -> 6 source tokens with BOS/EOS, a 5-token French target);
//          article 004 "模型测试" (evaluate(): start token, decode, take the last position, argmax,
//          stop at the end token or after MAX_LENGTH steps) and its final Dense to the vocabulary.
// Formula: memory = encoder(src_embed(src))                            (B,S) -> (B,S,C)
//          h      = decoder(tgt_embed(ys), memory, src_mask, tgt_mask)  (B,t) -> (B,t,C)
//          log p(next | ys, src) = log_softmax(h[:, -1] W^T + b)       (B,C) -> (B,V)
//          greedy: ys <- [ys, argmax log p] until argmax = EOS or t = max_len
// Run:     ./build/ch10_transformer [--text "How are you?"] [--target "comment et es-vous ?"] [--seed 0]
//          ./build/ch10_transformer --layers 2 --max-len 20 --src-vocab 3000
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "exact/compare.hpp"
#include "exact/tensor_ops.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/kv_cache.hpp"

using namespace ts;

// The target side's vocabulary: a small French word list chosen for this chapter (no French
// tokenizer ships with the course). Ids beyond the list (--tgt-vocab > 32) have no word.
static const std::vector<std::string> kFrench = {
    "<pad>", "<bos>", "<eos>", "<unk>", "comment", "et",   "es-vous", "?",   "je", "ne", "parle",
    "pas",   "français", "bonjour", "merci", "vous", "allez", "bien", "très", "oui", "non", "le",
    "la",    "un",  "une",   "!",     ".",   ",",    "suis",    "étudiant", "ça", "va"};
static constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3;

static std::string french(int64_t id) {
  return id >= 0 && id < static_cast<int64_t>(kFrench.size()) ? kFrench[static_cast<size_t>(id)]
                                                                : fmt::format("<{}>", id);
}

// ids (1,T) as an int64 tensor
static ITensor id_tensor(const std::vector<int64_t>& ids) {
  ITensor t = ITensor::from_shape({1, ids.size()});
  std::copy(ids.begin(), ids.end(), t.begin());
  return t;
}

// (ids != pad).unsqueeze(-2): true on real tokens.   (1,T) -> (1,1,T) bool
static BTensor pad_mask(const std::vector<int64_t>& ids, int64_t pad) {
  BTensor m = BTensor::from_shape({1, 1, ids.size()});
  for (size_t i = 0; i < ids.size(); ++i) m(0, 0, i) = ids[i] != pad;
  return m;
}

// x[:, -1]: the last position.   (B,T,C) -> (B,C)
static Tensor last_row(const Tensor& x) { return position(x, x.shape()[1] - 1); }

// logp.topk(k) of row 0: (id, log-prob), largest first.   (1,V) -> k pairs
static std::vector<std::pair<int64_t, float>> top_k(const Tensor& logp, size_t k) {
  const size_t V = logp.shape()[1];
  std::vector<int64_t> idx(V);
  for (size_t i = 0; i < V; ++i) idx[i] = static_cast<int64_t>(i);
  k = std::min(k, V);
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), [&](int64_t a, int64_t b) {
    const float va = logp.data()[a], vb = logp.data()[b];
    return va > vb || (va == vb && a < b);
  });
  std::vector<std::pair<int64_t, float>> out;
  for (size_t i = 0; i < k; ++i) out.emplace_back(idx[i], logp.data()[idx[i]]);
  return out;
}

// "comment -3.1416, et -3.2000, ..."
static std::string top_line(const std::vector<std::pair<int64_t, float>>& top) {
  std::string s;
  for (const auto& [id, lp] : top) s += fmt::format("{}{} {:.4f}", s.empty() ? "" : ", ", french(id), lp);
  return s;
}

static std::string words(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : " ") + french(id);
  return s;
}

int main(int argc, char** argv) {
  Chapter ch("ch10_transformer", "The full Transformer: create_model, encode, decode, greedy decoding",
             "article 002 §9.3.2-9.4 (Transformer, Generator, create_model), article 004 (evaluate: greedy decoding)");
  ch.text = "How are you?";
  ch.option("--text", ch.text, "the English source sentence (default \"How are you?\"; bert-base-uncased pieces)");
  ch.add_vocab_flag();
  std::string target = "comment et es-vous ?";
  int64_t n_layers = 6, d_model = 256, heads = 8, d_ff = 1024, max_len = 10, src_vocab = 30522,
          tgt_vocab = static_cast<int64_t>(kFrench.size());
  ch.option("--target", target, "French words the decoder reads after <bos> (default \"comment et es-vous ?\")");
  ch.option("--layers", n_layers, "N, encoder and decoder layers (default 6)");
  ch.option("--d-model", d_model, "C, the model width (default 256)");
  ch.option("--heads", heads, "h, attention heads; must divide --d-model (default 8)");
  ch.option("--d-ff", d_ff, "F, the feed-forward width (default 1024)");
  ch.option("--max-len", max_len, "greedy decoding stops after this many new tokens (default 10)");
  ch.option("--src-vocab", src_vocab, "rows of the source embedding (default 30522, bert-base-uncased)");
  ch.option("--tgt-vocab", tgt_vocab, "rows of the target embedding and generator outputs (default 32, the French list)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    // ---------------------------------------------------------------- knobs
    check_range("--d-model", d_model, 2, 512, "LayerNorm's unbiased std divides by d_model - 1");
    check_model_dims(d_model, heads, 2);
    check_range("--d-ff", d_ff, 1, 4096);
    check_range("--layers", n_layers, 1, 12);
    check_range("--max-len", max_len, 1, 100, "new tokens");
    check_range("--tgt-vocab", tgt_vocab, static_cast<int64_t>(kFrench.size()), 100000, "the French word list at least");
    check_range("--src-vocab", src_vocab, 1, 100000);
    WordPieceTokenizer tokenizer = load_tokenizer(ch.vocab_path);
    const std::vector<std::string> pieces = tokenizer.tokenize(ch.text);
    if (pieces.empty()) throw UsageError("--text has no tokens: give an English sentence, e.g. \"How are you?\"");
    if (pieces.size() + 2 > 256)
      throw UsageError(fmt::format("--text has {} tokens with BOS/EOS; this chapter takes at most 256: shorten it",
                                   pieces.size() + 2));
    // src = [CLS] pieces [SEP]: bert-base-uncased's [CLS] and [SEP] serve as BOS and EOS
    const std::vector<int64_t> src_ids = tokenizer.encode(ch.text, true);
    std::vector<std::string> src_tokens = {"[CLS]"};
    src_tokens.insert(src_tokens.end(), pieces.begin(), pieces.end());
    src_tokens.push_back("[SEP]");
    for (size_t i = 0; i < src_ids.size(); ++i)
      if (src_ids[i] >= src_vocab)
        throw UsageError(fmt::format("--src-vocab {} is too small: '{}' has id {} in {}, so the source "
                                     "table needs at least {} rows",
                                     typed("--src-vocab", src_vocab), src_tokens[i], src_ids[i],
                                     ch.given("--vocab") ? "the --vocab file" : "bert-base-uncased", src_ids[i] + 1));
    // tgt = <bos> + the French words (a word outside the list becomes <unk>)
    std::vector<int64_t> tgt_ids = {kBos};
    for (const std::string& w : python_split(target)) {  // the twin's target.split()
      const auto it = std::find(kFrench.begin(), kFrench.end(), w);
      tgt_ids.push_back(it == kFrench.end() ? kUnk : static_cast<int64_t>(it - kFrench.begin()));
    }
    if (tgt_ids.size() == 1)
      throw UsageError("--target has no words: give the French words the decoder reads, e.g. \"comment et es-vous ?\"");
    if (tgt_ids.size() > 64)
      throw UsageError(fmt::format("--target has {} words; this chapter takes at most 63", tgt_ids.size() - 1));
    {
      // encoder over S tokens, decoder over T, then greedy decoding twice (re-running the prefix
      // of up to max_len tokens, and with the cache): per layer and token 4C^2 + 2CF (+4C^2 across)
      const double S = static_cast<double>(pieces.size() + 2), T = static_cast<double>(tgt_ids.size()),
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
    ch.section("Step 1: create_model: encoder, decoder, two embeddings, generator", "article 002 §9.4.2, listing 9.6");
    // attn, ff, pos drawn once; N deep copies each side; then xavier_uniform_ on every matrix
    EncoderDecoder model = create_model(src_vocab, tgt_vocab, n_layers, d_model, d_ff, heads);
    model.train(ch.training());
    ch.show("model.src_embed", model.src_embed.repr().str(),
            "token table (V_src, C), scaled by sqrt(d_model), then the fixed sinusoidal positions and dropout",
            Shown::Twin);
    ch.show("model.generator", model.generator.repr().str(), "C -> V_tgt scores, then log_softmax", Shown::Twin);
    {
      // parameters per part: the state_dict prefix before the first '.'
      std::vector<std::pair<std::string, uint64_t>> parts;
      uint64_t total = 0;
      for (auto& [name, p] : model.named_parameters()) {
        const std::string part = name.substr(0, name.find('.'));
        if (parts.empty() || parts.back().first != part) parts.emplace_back(part, 0);
        parts.back().second += p->size();
        total += p->size();
      }
      std::string table;
      for (const auto& [part, n] : parts) table += fmt::format("{:<10} {:>12}\n", part, thousands(n));
      table += fmt::format("{:<10} {:>12}", "total", thousands(total));
      ch.show("{part: sum(p.numel() for p in module.parameters())}", table,
              fmt::format("with V_src = {} the source table alone is {:.0f}% of the model; each decoder layer has "
                          "one more attention block than an encoder layer",
                          src_vocab, 100.0 * static_cast<double>(src_vocab * d_model) / static_cast<double>(total)),
              Shown::Twin);
    }
    {
      const Tensor w = model.generator.proj.weight;
      const double bound = std::sqrt(6.0 / static_cast<double>(w.shape()[0] + w.shape()[1]));
      Tensor first = xt::view(w, 0, xt::range(0, std::min<size_t>(6, w.shape()[1])));
      ch.show("model.generator.proj.weight[0, :6]", first, {"SliceBackward0"},
              fmt::format("xavier_uniform_: U(-b, b) with b = sqrt(6 / (fan_in + fan_out)) = {:.4f}; the bias keeps "
                          "Linear's own init",
                          bound),
              Shown::Twin);
    }
    ch.say(fmt::format(
        "  Vocabularies (chosen for this chapter): source = bert-base-uncased WordPiece, V_src = {} rows\n"
        "  (--src-vocab), with [CLS] = 101 as BOS and [SEP] = 102 as EOS; target = a {}-word French list\n"
        "  (<pad> 0, <bos> 1, <eos> 2, <unk> 3, then comment et es-vous ? je ne parle ...), V_tgt = {} (--tgt-vocab).",
        src_vocab, kFrench.size(), tgt_vocab));

    // ---------------------------------------------------------------- 2) encode
    ch.section("Step 2: encode the source: memory = encoder(src_embed(src))", "article 002 §9.3.2, listing 9.5");
    const ITensor src = id_tensor(src_ids);  // (B,S)
    ch.show("src", src, "the source with BOS and EOS, as bert-base-uncased ids: " + [&] {
      std::string s;
      for (const std::string& t : src_tokens) s += (s.empty() ? "" : " ") + t;
      return s;
    }(), Shown::Twin);
    // src_mask = (src != pad).unsqueeze(-2)   (B,1,S)
    const BTensor src_mask = pad_mask(src_ids, 0);
    ch.show("src_mask = (src != 0).unsqueeze(-2)", src_mask, "no padding in one sentence: every source token is visible",
            Shown::Twin);
    // memory (B,S,C)
    const Tensor memory = model.encode(src, &src_mask);
    ch.show("memory.shape", size_str(shape_of(memory)), "the article's (1, 6, 256): one vector per source token");
    ch.show("memory", memory, {"AddBackward0"}, "after N encoder layers and the final LayerNorm", Shown::Twin);

    // ---------------------------------------------------------------- 3) decode
    ch.section("Step 3: decode a known target (teacher forcing)", "article 002 §9.3.1-9.3.2, listing 9.5");
    const ITensor tgt = id_tensor(tgt_ids);  // (B,T)
    ch.show("tgt", tgt, "<bos> " + target + " as ids of the French list", Shown::Twin);
    // tgt_mask = (tgt != pad).unsqueeze(-2) & subsequent_mask(T)   (B,T,T)
    const size_t T = tgt_ids.size(), S = src_ids.size();
    const BTensor tpad = pad_mask(tgt_ids, kPad), causal = subsequent_mask(static_cast<int64_t>(T));
    BTensor tgt_mask = BTensor::from_shape({1, T, T});
    for (size_t t = 0; t < T; ++t)
      for (size_t s = 0; s < T; ++s) tgt_mask(0, t, s) = tpad(0, 0, s) && causal(0, t, s);
    ch.show("tgt_mask = (tgt != 0).unsqueeze(-2) & subsequent_mask(tgt.size(-1))", tgt_mask,
            "padding AND the future hidden; with no padding, just the lower triangle", Shown::Twin);
    const Tensor out = model.decode(memory, &src_mask, tgt, &tgt_mask);  // (B,T,C)
    ch.show("out.shape", size_str(shape_of(out)), "the article's (1, 5, 256): one vector per target position");
    ch.show("out", out, {"AddBackward0"}, "", Shown::Twin);
    const Tensor& cross = model.decoder.layers.back().src_attn.attn;  // (B,H,T,S)
    const Shape cw = shape_of(cross);  // (B,H,T,S)
    ch.show("model.decoder.layers[-1].src_attn.attn[:, 0].shape", size_str({cw[0], cw[2], cw[3]}),
            "the last layer's cross-attention, one head: target positions x source tokens, the article's (1, 5, 6)");
    std::vector<std::string> tgt_tokens;
    for (int64_t id : tgt_ids) tgt_tokens.push_back(french(id));
    hopt.title = "last decoder layer, cross-attention head 0: rows = target positions, columns = source tokens";
    ch.figure(heatmap(xt::view(cross, 0, 0, xt::all(), xt::all()), tgt_tokens, src_tokens, hopt));

    // ---------------------------------------------------------------- 4) generator
    ch.section("Step 4: the generator: log-probabilities of the next word", "article 002 §9.4.1; article 004 final_layer");
    const Tensor logp = model.generator(out);  // (B,T,V)
    ch.show("logp = model.generator(out)", logp, {"LogSoftmaxBackward0"},
            "log p(word | target so far, source) for every position and every target word", Shown::Twin);
    std::vector<int64_t> pred;
    {
      const size_t V = logp.shape()[2];
      ITensor am = ITensor::from_shape({1, T});
      for (size_t t = 0; t < T; ++t) {
        const float* row = logp.data() + t * V;
        am(0, t) = std::max_element(row, row + V) - row;
        pred.push_back(am(0, t));
      }
      ch.show("logp.argmax(dim=-1)", am,
              "the word each position would predict next: " + words(pred) +
                  " -- arbitrary, the weights are untrained (log(1/V_tgt) = " + fmt::format("{:.3f}", -std::log(double(V))) +
                  " would be a uniform guess)",
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 5) greedy decoding
    ch.section("Step 5: greedy decoding from <bos> (eval mode)", "article 004, evaluate()");
    // Inference is eval mode: train-mode dropout would make every step a random draw (step 7)
    model.train(false);
    ch.say("  model.eval(): dropout off, so the same prefix always gives the same next word. The loop follows\n"
           "  article 004's evaluate(): re-run the decoder on the whole prefix, keep the last position, argmax,\n"
           "  stop at <eos> (not appended) or after --max-len steps.");
    const Tensor memory_eval = model.encode(src, &src_mask);
    std::vector<int64_t> ys = {kBos};
    std::vector<Tensor> step_logp;
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
      if (next == kEos) break;
      ys.push_back(next);
    }
    std::vector<int64_t> predicted(ys.begin() + 1, ys.end());
    ch.show("print('输入: {}'.format(sentence))", "输入: " + ch.text, "article 004's translate() prints the input ...");
    ch.show("print('预测输出: {}'.format(predicted_sentence))", "预测输出: " + words(predicted),
            "... and the prediction without the start/end tokens", Shown::Article);
    ch.say(fmt::format(
        "  {} The weights are xavier-random and untrained, so this 'translation' is\n"
        "  arbitrary: it only shows the loop running. No chapter of this course trains the model (article 004's\n"
        "  train_step -- teacher forcing, masked cross-entropy, Adam with beta_2 = 0.98 -- is not implemented, and\n"
        "  article 002 trains it in its next chapter on 47,000 English-French pairs, which the course does not have).",
        ys.size() > static_cast<size_t>(max_len)
            ? fmt::format("No <eos> within --max-len {}: the loop stopped at its limit.", max_len)
            : std::string("The model chose <eos>, which ended the loop.")));

    // ---------------------------------------------------------------- 6) the same loop with ch09's K/V cache
    ch.section("Step 6: the same loop with a key/value cache (chapter 9)", "article 001, DecoderBlock state[2]");
    {
      DecoderCache cache(CacheKind::KeysValues, model.decoder.layers.size());
      std::vector<int64_t> ys_c = {kBos};
      float max_diff = 0.0f;
      uint64_t no_cache = 0;
      for (size_t i = 0; i < step_logp.size(); ++i) {
        // embed the whole prefix (row-wise, no products) and feed only its last row   (B,1,C)
        const Tensor x_t = last_row(model.tgt_embed(id_tensor(ys_c)));
        Tensor x3 = x_t;
        x3.reshape({1, 1, x_t.shape()[1]});
        const Tensor h = decoder_step(model.decoder, x3, memory_eval, &src_mask, cache);
        const Tensor lp = model.generator(last_row(h));
        const float d = max_abs_diff(lp, step_logp[i])();  // NaN-aware, like torch's max
        if (std::isnan(d) || d > max_diff) max_diff = d;
        no_cache += decoder_full_pass_macs(n_layers, 1, static_cast<int64_t>(ys_c.size()), static_cast<int64_t>(S),
                                           d_model, d_ff).total();
        const int64_t next = top_k(lp, 1)[0].first;
        if (next == kEos) break;
        ys_c.push_back(next);
      }
      const bool same = ys_c == ys;
      const float tol = 1e-5f;  // float32 rounding of one-row vs whole-prefix products
      const std::string verdict =
          ch.verdict(same && max_diff <= tol,
                     fmt::format("decoding with the cache {} the same words; largest log-prob difference over the {} "
                                 "steps: {:.2e} (limit {:.0e})",
                                 same ? "picks" : "does NOT pick", step_logp.size(), max_diff, tol));
      ch.say(fmt::format(
          "  {}.\n"
          "  Decoder multiply-adds: {} re-running the prefix (above) vs {} with the cache ({:.1f}x fewer).",
          verdict, thousands(no_cache), thousands(cache.macs.total()),
          static_cast<double>(no_cache) / static_cast<double>(cache.macs.total())));
    }

    // ---------------------------------------------------------------- 7) forgetting model.eval()
    ch.section("Step 7: what if model.eval() is forgotten?", "article 004 passes training=False to the model");
    model.train(true);
    const std::vector<int64_t> first = {kBos};
    const BTensor first_mask = subsequent_mask(1);
    std::vector<int64_t> picks;
    for (int trial = 1; trial <= 2; ++trial) {
      // the first greedy step again, in train mode: encoder and decoder both drop activations at random
      const Tensor mem_tr = model.encode(src, &src_mask);
      const Tensor lp = model.generator(last_row(model.decode(mem_tr, &src_mask, id_tensor(first), &first_mask)));
      const auto top = top_k(lp, 5);
      picks.push_back(top[0].first);
      ch.show(fmt::format("train mode, try {}: step 1 top-5", trial), top_line(top),
              trial == 1 ? "fresh dropout masks at every call: the same input gives other log-probabilities" : "",
              Shown::Twin);
    }
    ch.say(fmt::format("  Eval mode gave {} for step 1; the two train-mode tries gave {} and {}. A decoder in train mode\n"
                       "  samples noise, not the model's answer: greedy decoding must run with model.eval().",
                       french(top_k(step_logp[0], 1)[0].first), french(picks[0]), french(picks[1])));
  });
}
