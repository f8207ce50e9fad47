// ch04_multihead: many small attentions side by side, per head and fused.
//
// Follows: article 000 "Multi-head Attention" (AttentionHead(768, 64): three Linears, then
//          scaled dot-product attention; MultiHeadAttention: 12 heads concatenated, then
//          output_linear -> torch.Size([1, 5, 768]));
//          article 002 listing 9.2 (MultiHeadedAttention: one Linear per q/k/v, the heads cut
//          out with view/transpose: (1, 6, 256) -> 8 heads of (1, 6, 32));
//          article 004 §3.2 (MutilHeadAttention with split_heads: d_model 512, 8 heads on
//          (1, 60, 512) -> (1, 60, 512) and weights (1, 8, 60, 60)).
// Formula: head_i = softmax((Q W_i^Q)(K W_i^K)^T / sqrt(D)) (V W_i^V)       (B,T,C) -> (B,T,D)
//          MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W^O              H x (B,T,D) -> (B,T,C)
//          fused: stack the H matrices W_i^Q (D,C) into one (C,C) Linear, then view the
//          (B,T,C) result as (B,T,H,D) and move H forward: (B,H,T,D). Same numbers.
// Run:     ./build/ch04_multihead [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch04_multihead --heads 4            (4 heads of 192 instead of 12 of 64)
//          ./build/ch04_multihead --seq-len 10         (article 004's layer on 10 positions)
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "exact/compare.hpp"
#include "exact/kernels.hpp"
#include "exact/matmul.hpp"
#include "exact/rng.hpp"
#include "exact/tensor_ops.hpp"
#include "exact/tfprint.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/article004.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// The chapter's own helpers, defined after main():
// one head's weights softmax(q(query) k(key)^T / sqrt(D)): query (B,T,C), key (B,S,C) -> (B,T,S)
static Tensor head_weights(const AttentionHead& head, const Tensor& query, const Tensor& key);
// the mean weight a query puts on its own position: w (..., T, T) -> a number in [0, 1]
// (1/T for uniform rows, 1 when every token attends only to itself)
static double mean_diagonal(const Tensor& w);
// the largest attention weight of each head: w (1,H,T,S) -> H numbers
static std::vector<float> max_per_head(const Tensor& w);

// Two results of different float32 summation orders agree up to rounding below this.
constexpr double kRounding = 1e-5;

int main(int argc, char** argv) {
  Chapter ch("ch04_multihead", _("Multi-head attention: per head and fused"),
             _("article 000 《使用 Pytorch 一步一步实现 Transformer Encoder》 §Multi-head Attention; article 002 "
               "《第九章：注意力和 Transformer 的逐行实现》 §9.2.1, listing 9.2; article 004 《GPT （一）transformer原理和代码详解》 "
               "§3.2 Multi-Head Attention"));
  ch.add_text_flag();
  ch.add_vocab_flag();
  int64_t d_model = 768, heads = 12, seq_len = 60;
  ch.option("--d-model", d_model, _("hidden_size C of article 000's layer (default 768, BERT-base)"), 1, 2048,
            _("the 30522-row table must fit in memory"));
  ch.option("--heads", heads, _("num_attention_heads H of article 000's layer; must divide --d-model (default 12)"));
  ch.option("--seq-len", seq_len, _("positions of the random input of article 004's layer (default 60, the article's)"),
            1, 1024, _("article 004 uses 60"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    check_model_dims(d_model, heads);
    Config config;  // BERT-base, with the chapter's C and H
    config.hidden_size = d_model;
    config.num_attention_heads = heads;
    const int64_t head_dim = d_model / heads;  // D

    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);

    // ---------------------------------------------------------------- 1) the input
    ch.section(_("Step 1: the sentence as vectors (query = key = value)"),
               _("article 000 §Multi-head Attention"));
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    {
      // about three multi-head passes over the text (per head, fused, the comparison):
      // 4TC^2 + 2T^2C each; article 004's layer on the (L,512) random input: 4L 512^2 + 2L^2 512
      const double T = static_cast<double>(sentence.T()), C = static_cast<double>(d_model),
                   L = static_cast<double>(seq_len);
      ch.budget(4.0 * (30522 * C + 8 * C * C + 4 * static_cast<double>(heads) * T * T + 8 * L * L),
                3 * (4 * T * C * C + 2 * T * T * C) + 4 * L * 512 * 512 + 2 * L * L * 512,
                "--d-model, --seq-len or --text");
    }
    ch.show("inputs.input_ids", input_ids, _("the ids of chapter 1"), Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, config.hidden_size);
    const Tensor inputs_embeds = token_emb(input_ids);
    const Tensor& query = inputs_embeds;
    const Tensor& key = inputs_embeds;
    const Tensor& value = inputs_embeds;

    // ---------------------------------------------------------------- 2) one head
    ch.section(_("Step 2: one attention head: three Linears, then attention"),
               _("article 000 §Multi-head Attention, AttentionHead"));
    // multihead_attn draws heads[0].q, .k, .v, heads[1]..., then output_linear
    MultiHeadAttention multihead_attn(config);
    const AttentionHead& head = multihead_attn.heads[0];
    ch.show("head = multihead_attn.heads[0]", head.repr(),
            trf("AttentionHead({C}, {D}): head_dim = {C} / {H} = {D}", fmt::arg("C", d_model), fmt::arg("D", head_dim),
                fmt::arg("H", heads)),
            Shown::Twin);
    // q_h = query W_q^T + b_q   (B,T,C) -> (B,T,D)
    const Tensor head_q = head.q(query);
    ch.show("head.q(query)", head_q, {"ViewBackward0"},
            _("this head's queries: every token projected to D numbers (ch02 used the raw embedding instead)"),
            Shown::Twin);
    // head = softmax(q_h k_h^T / sqrt(D)) v_h   (B,T,D)
    const Tensor head_out = head(query, key, value);
    const Tensor w0 = head_weights(head, query, key);  // (B,T,S), for the note
    ch.show("head(query, key, value).size()", size_str(shape_of(head_out)),
            _("(B,T,D): one D-sized vector per token from this head"), Shown::Twin);
    ch.show("head(query, key, value)", head_out, {"BmmBackward0"},
            trf("each row is a weighted mean of the same {T} value rows; this head's weights lie between {lo:.3f} "
                "and {hi:.3f} (1/T = {uniform:.3f})",
                fmt::arg("T", tokens.size()), fmt::arg("lo", *std::min_element(w0.begin(), w0.end())),
                fmt::arg("hi", *std::max_element(w0.begin(), w0.end())),
                fmt::arg("uniform", 1.0 / static_cast<double>(tokens.size()))),
            Shown::Twin);

    // ---------------------------------------------------------------- 3) every head's weights
    ch.section(_("Step 3: each head has its own attention pattern"), _("article 000 §Multi-head Attention"));
    std::vector<Tensor> per_head_weights;
    for (const AttentionHead& h : multihead_attn.heads) per_head_weights.push_back(head_weights(h, query, key));
    // weights (B,H,T,S)
    const Tensor weights = stack(per_head_weights, 1);
    ch.show("weights = torch.stack([softmax(q_h k_h^T / sqrt(head_dim)) for h in heads], dim=1)", weights,
            {"StackBackward0"}, _("(B,H,T,S): one T x S matrix of weights per head, each row summing to 1"),
            Shown::Twin);
    {
      // chapter 3's weights, without projections: softmax(E E^T / sqrt(C))   (B,T,T)
      Tensor raw = bmm_nt(inputs_embeds, inputs_embeds);
      const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
      for (float& s : raw) s = s / scale;
      const double diag_raw = mean_diagonal(softmax(raw)), diag = mean_diagonal(weights);
      ch.say(trf("  The mean weight a token puts on itself: {raw:.3f} in chapter 3 (q = k = v, no projections), "
                 "{diag:.3f} here, where q and k come from different random projections; a uniform row gives "
                 "1/T = {uniform:.3f}. Training is what would give each head a pattern of its own (one head for "
                 "the previous word, one for the verb...).",
                 fmt::arg("raw", diag_raw), fmt::arg("diag", diag),
                 fmt::arg("uniform", 1.0 / static_cast<double>(tokens.size()))));
      ch.say(_("  Every head's weights (rows = queries, columns = keys), each map shaded from its own min to max:"));
      ch.figure(head_heatmaps(weights, tokens, hopt, 120));
    }

    // ---------------------------------------------------------------- 4) the whole layer
    ch.section(_("Step 4: MultiHeadAttention: concatenate the heads, then output_linear"),
               _("article 000 §Multi-head Attention, MultiHeadAttention"));
    ch.show("multihead_attn", multihead_attn.repr(),
            trf("{H} heads of 3 Linears ({C} -> {D}), then one Linear({C} -> {C})", fmt::arg("H", heads),
                fmt::arg("C", d_model), fmt::arg("D", head_dim)),
            Shown::Twin);
    // out = Concat(head_1..head_H) W^O + b^O   (B,T,C)
    const Tensor attn_output = multihead_attn(query, key, value);
    ch.show("attn_output.size()", size_str(shape_of(attn_output)),
            trf("{H} heads x {D} = {C} numbers per token again, so layers can be stacked", fmt::arg("H", heads),
                fmt::arg("D", head_dim), fmt::arg("C", d_model)));
    ch.show("attn_output", attn_output, {"ViewBackward0"},
            _("output_linear mixes the heads: every output number depends on all of them"), Shown::Twin);

    // ---------------------------------------------------------------- 5) the same layer, fused
    ch.section(_("Step 5: the same layer fused: one Linear per q/k/v, heads cut out by view/transpose"),
               _("article 002 §9.2.1 注意力机制, listing 9.2"));
    std::vector<const Tensor*> wq, bq, wk, bk, wv, bv;
    for (const AttentionHead& h : multihead_attn.heads) {
      wq.push_back(&h.q.weight), bq.push_back(&h.q.bias);
      wk.push_back(&h.k.weight), bk.push_back(&h.k.bias);
      wv.push_back(&h.v.weight), bv.push_back(&h.v.bias);
    }
    // W_q = [W_q of head 0; head 1; ...]   H x (D,C) -> (C,C), b_q H x (D) -> (C)
    const Tensor W_q = cat(wq, 0), b_q = cat(bq, 0);
    const Tensor W_k = cat(wk, 0), b_k = cat(bk, 0);
    const Tensor W_v = cat(wv, 0), b_v = cat(bv, 0);
    ch.show("W_q = torch.cat([h.q.weight for h in multihead_attn.heads], dim=0); W_q.shape",
            size_str(shape_of(W_q)), _("rows h*D .. h*D+D-1 are head h's query weights"), Shown::Twin);
    // Q = query W_q^T + b_q: all heads' queries in one product   (B,T,C)
    const Tensor Q = linear(query, W_q, &b_q);
    const Tensor K = linear(key, W_k, &b_k);
    const Tensor V = linear(value, W_v, &b_v);
    // view(B,-1,H,D).transpose(1,2): (B,T,C) -> (B,H,T,D), no copy
    const Shape q_heads_shape = {Q.shape()[0], static_cast<size_t>(heads), Q.shape()[1], static_cast<size_t>(head_dim)};
    ch.show("Q = F.linear(query, W_q, b_q).view(1, -1, H, D).transpose(1, 2); Q.shape", size_str(q_heads_shape),
            _("(B,H,T,D): column block h of Q is exactly head h's q(query)"), Shown::Twin);
    // x = softmax(Q_h K_h^T / sqrt(D)) V_h per head   (B,H,T,D); p_attn (B,H,T,S)
    Tensor p_attn;
    const Tensor fused_heads = attention_heads(Q, K, V, heads, nullptr, nullptr, &p_attn);
    // merge (B,T,C), then the same output_linear
    const Tensor fused_output = multihead_attn.output_linear(merge_heads(fused_heads));
    const Tensor d_weights = max_abs_diff(p_attn, weights), d_output = max_abs_diff(fused_output, attn_output);
    ch.show("(p_attn - weights).abs().max()", d_weights, {"MaxBackward1"},
            ch.verdict(d_weights() <= kRounding,
                       trf("the fused weights and the per-head weights of step 3 differ by {d:.3g} (float rounding "
                           "is below {tol:.0e})",
                           fmt::arg("d", d_weights()), fmt::arg("tol", kRounding))),
            Shown::Twin);
    ch.show("(fused_output - attn_output).abs().max()", d_output, {"MaxBackward1"},
            ch.verdict(d_output() <= kRounding,
                       trf("the same layer within {tol:.0e} ({d:.3g}), with 4 large matrix products instead of "
                           "{n} small ones (3 per head + 1)",
                           fmt::arg("tol", kRounding), fmt::arg("d", d_output()), fmt::arg("n", 3 * heads + 1))),
            Shown::Twin);
    ch.erratum(_("002 §9.1.1, line 51"),
               _("the article writes K = X * Q^K; the keys come from their own weight: K = X * W^K (listing 9.2's "
                 "linears[1])."));

    // ---------------------------------------------------------------- 6) article 002's module
    ch.section(_("Step 6: article 002's MultiHeadedAttention: d_model 256 split into 8 heads of 32"),
               _("article 002 §9.2.1 注意力机制, listing 9.2"));
    // [deepcopy(nn.Linear(256, 256)) for i in range(4)]: four Linears, four independent draws
    // (src/transformer/annotated.hpp)
    MultiHeadedAttention mha(8, 256);
    mha.train(ch.training());
    ch.show("mha = MultiHeadedAttention(8, 256)", mha.repr(),
            _("4 Linears: q, k, v projections and the output, each (C,C); dropout acts on the weights"), Shown::Twin);
    const bool same = mha.linears[0].weight == mha.linears[1].weight;
    ch.show("torch.equal(mha.linears[0].weight, mha.linears[1].weight)", std::string(same ? "True" : "False"),
            same ? _("the query and key projections hold the same weights, as the Annotated Transformer's clones() "
                     "(one Linear copied four times) would give")
                 : _("the listing's comprehension builds a new Linear on each of its 4 iterations: four independent "
                     "draws (the Annotated Transformer's clones() would copy one)"),
            Shown::Twin);
    // x ~ N(0,1)   (B,S,C) = (1,6,256): "How are you?" with BOS/EOS
    const Tensor x = randn({1, 6, 256});
    ch.show("x = torch.randn(1, 6, 256); x.shape", size_str(shape_of(x)),
            _("stands in for the embedded \"<BOS> How are you ? <EOS>\""), Shown::Twin);
    // Q = linears[0](x)   (B,T,C)
    const Tensor q_x = mha.linears[0](x);
    ch.show("mha.linears[0](x).shape", size_str(shape_of(q_x)), _("all 8 heads' queries in one product"), Shown::Twin);
    const size_t Bx = q_x.shape()[0], Tx = q_x.shape()[1];
    const size_t hx = static_cast<size_t>(mha.h), dx = static_cast<size_t>(mha.d_k);
    // view(B,-1,h,d_k): (B,T,C) -> (B,T,H,D); transpose(1,2) -> (B,H,T,D)
    ch.show("mha.linears[0](x).view(1, -1, 8, 32).transpose(1, 2).shape", size_str({Bx, hx, Tx, dx}),
            _("view cuts each 256-vector into 8 pieces of 32; transpose puts the head index first"), Shown::Twin);
    ch.show("mha.linears[0](x).view(1, -1, 8, 32).transpose(1, 2)[:, 0].shape", size_str({Bx, Tx, dx}),
            _("head 0: the (1, 6, 32) queries made of columns 0..31"), Shown::Twin);
    // out = linears[3](merge(attention(Q_h, K_h, V_h)))   (B,T,C); mha.attn (B,H,T,S)
    const Tensor out = mha(x, x, x);
    ch.show("mha(x, x, x).shape", size_str(shape_of(out)), _("8 heads x 32 merged back to 256"), Shown::Twin);
    ch.show("mha.attn.shape", size_str(shape_of(mha.attn)),
            _("(B,H,T,S): the weights of every head, kept on the module"), Shown::Twin);
    ch.show("mha(x, x, x)", out, {"ViewBackward0"},
            ch.training() ? _("train mode: dropout zeroed some attention weights and scaled the rest by 1/0.9")
                          : _("eval mode: no dropout"),
            Shown::Twin);
    {
      const std::vector<float> peaks = max_per_head(mha.attn);
      ch.say(trf("  mha.attn, head by head (rows = queries, columns = keys). The mean weight a position puts on "
                 "itself is {diag:.3f} (1/T = {uniform:.3f}); the largest weight of a head ranges from {lo:.2f} to "
                 "{hi:.2f}.",
                 fmt::arg("diag", mean_diagonal(mha.attn)), fmt::arg("uniform", 1.0 / static_cast<double>(Tx)),
                 fmt::arg("lo", *std::min_element(peaks.begin(), peaks.end())),
                 fmt::arg("hi", *std::max_element(peaks.begin(), peaks.end()))));
      if (ch.training()) ch.say(_("  Cells dropped by dropout are blank."));
    }
    ch.figure(head_heatmaps(mha.attn, {}, hopt, 120));

    // ---------------------------------------------------------------- 7) per-head == fused
    ch.section(_("Step 7: per-head == fused: load the per-head weights as slices of the fused ones"),
               _("article 000 §Multi-head Attention vs article 002 listing 9.2"));
    mha.train(false);  // dropout off: compare the two maps themselves
    Config config_256;
    config_256.hidden_size = mha.h * mha.d_k;
    config_256.num_attention_heads = mha.h;
    MultiHeadAttention per_head(config_256);  // drawn, then overwritten below
    for (size_t i = 0; i < per_head.heads.size(); ++i) {
      AttentionHead& h = per_head.heads[i];
      // head i's rows of each fused (C,C) weight: weight[i*D : (i+1)*D]   (D,C), bias (D)
      Linear* lins[3] = {&h.q, &h.k, &h.v};
      for (size_t j = 0; j < 3; ++j) {
        lins[j]->weight = slice_rows(mha.linears[j].weight, i * dx, dx);
        lins[j]->bias = slice_rows(mha.linears[j].bias, i * dx, dx);
      }
    }
    per_head.output_linear.weight = mha.linears[3].weight;
    per_head.output_linear.bias = mha.linears[3].bias;
    ch.show("per_head.heads[1].q.weight.shape", size_str(shape_of(per_head.heads[1].q.weight)),
            _("= mha.linears[0].weight[32:64]: head 1's slice of the fused query weight"), Shown::Twin);
    const Tensor from_heads = per_head(x, x, x);
    const Tensor from_fused = mha(x, x, x);
    const Tensor d_layers = max_abs_diff(from_heads, from_fused);
    ch.show("(per_head(x, x, x) - mha(x, x, x)).abs().max()", d_layers, {"MaxBackward1"},
            ch.verdict(d_layers() <= kRounding,
                       trf("article 000's 8 separate heads and article 002's fused layer differ by {d:.3g}: "
                           "{same}",
                           fmt::arg("d", d_layers()),
                           fmt::arg("same", d_layers() <= kRounding
                                                ? _("float32 rounding, the same function in two layouts")
                                                : _("more than float32 rounding, so they compute different functions")))),
            Shown::Twin);
    ch.say(_("  Step 5 went from article 000's heads to fused weights (cat), step 7 from fused weights to heads "
             "(slices). Different product shapes add in a different order, so at most the last bits differ."));

    // ---------------------------------------------------------------- 8) article 004
    ch.section(_("Step 8: article 004's split_heads layer on a (1, 60, 512) input"),
               _("article 004 §3.2 Multi-Head Attention, MutilHeadAttention; TensorFlow, printed its way"));
    const MutilHeadAttention mha004(512, 8);
    // y ~ U[0,1)   (B,T,C): tf.random.uniform((1, 60, 512))
    const Tensor y = rand({1, static_cast<size_t>(seq_len), 512});
    Tensor att;
    // output, att = mha(y, k=y, q=y, mask=None)   (B,T,C), (B,H,T,S)
    const Tensor output = mha004(y, y, y, &att);
    ch.show("print(output.shape, att.shape)", tf_shape_str(shape_of(output)) + " " + tf_shape_str(shape_of(att)),
            _("the output keeps the input's shape; one (T, T) weight matrix per head"));
    {
      // how far apart the rows are: the largest spread (max - min over the T rows) of any column
      const size_t T = output.shape()[1], C = output.shape()[2];
      double spread = 0, range_lo = INFINITY, range_hi = -INFINITY;
      for (size_t c = 0; c < C; ++c) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t t = 0; t < T; ++t) lo = std::min<double>(lo, output(0, t, c)), hi = std::max<double>(hi, output(0, t, c));
        spread = std::max(spread, hi - lo);
        range_lo = std::min(range_lo, lo), range_hi = std::max(range_hi, hi);
      }
      ch.show("output", tf_str(output),
              trf("across the {T} rows a column varies by at most {spread:.4f}, while the values range over "
                  "[{lo:.3f}, {hi:.3f}]: every row is a mean of the same similar value rows (uniform random inputs)",
                  fmt::arg("T", T), fmt::arg("spread", spread), fmt::arg("lo", range_lo), fmt::arg("hi", range_hi)),
              Shown::Twin);
    }
  });
}

static Tensor head_weights(const AttentionHead& head, const Tensor& query, const Tensor& key) {
  // 1) project: (B,T,C) -> (B,T,D), (B,S,C) -> (B,S,D)
  const Tensor q = head.q(query);
  const Tensor k = head.k(key);
  // 2) scores = q k^T / sqrt(D)   (B,T,S)
  Tensor scores = bmm_nt(q, k);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.shape()[2])));
  for (float& s : scores) s = s / scale;
  // 3) softmax over the keys      (B,T,S)
  return softmax(scores);
}

static double mean_diagonal(const Tensor& w) {
  const size_t T = w.shape()[w.dimension() - 1], maps = w.size() / (T * T);
  double sum = 0;
  for (size_t m = 0; m < maps; ++m)
    for (size_t t = 0; t < T; ++t) sum += w.data()[m * T * T + t * T + t];
  return sum / static_cast<double>(maps * T);
}

static std::vector<float> max_per_head(const Tensor& w) {
  const size_t H = w.shape()[1], n = w.size() / H;
  std::vector<float> out(H);
  for (size_t h = 0; h < H; ++h) out[h] = *std::max_element(w.data() + h * n, w.data() + (h + 1) * n);
  return out;
}
