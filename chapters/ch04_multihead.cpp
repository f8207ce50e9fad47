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
#include <string>
#include <vector>

#include <fmt/format.h>

#include "course/attention_notes.hpp"
#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "course/model_probes.hpp"
#include "course/weight_stats.hpp"
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

constexpr double kRounding = 1e-5;  // two float32 sums in different orders agree up to rounding below this

int main(int argc, char** argv) {
  Chapter ch("ch04_multihead", _("Multi-head attention: per head and fused"),
             {{0, N_("§Multi-head Attention")}, {2, N_("§9.2.1, listing 9.2")}, {4, N_("§3.2 Multi-Head Attention")}});
  int64_t d_model = 768, heads = 12, seq_len = 60;
  ch.add_sentence_flags(d_model, _("hidden_size C of article 000's layer, BERT-base's by default"));
  ch.option("--heads", heads, _("num_attention_heads H of article 000's layer; must divide --d-model"));
  ch.option("--seq-len", seq_len, _("positions of the random input of article 004's layer, the article's by default"),
            1, 1024, _("article 004 uses 60"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    check_model_dims(d_model, heads);
    Config config;  // BERT-base, with the chapter's C and H
    config.hidden_size = d_model;
    config.num_attention_heads = heads;
    HeatmapOptions hopt;  // heatmaps: the terminal's mode (colour, Unicode shades or ASCII)
    hopt.mode = heatmap_mode(ch.color);

    // ---------------------------------------------------------------- 1) the input
    ch.section(_("Step 1: the sentence as vectors (query = key = value)"),
               _("article 000 §Multi-head Attention"));
    // text -> WordPiece tokens -> ids   (B,T), B = 1
    const Sentence sentence = read_sentence(ch, config.max_position_embeddings);
    const std::vector<std::string>& tokens = sentence.tokens;
    const ITensor& input_ids = sentence.input_ids;
    {  // three multi-head passes over the text (per head, fused, compared): 4TC^2 + 2T^2C each, and
       // article 004's layer on the (L,512) random input: 4L 512^2 + 2L^2 512
      const double T = static_cast<double>(sentence.T()), C = static_cast<double>(d_model), L = seq_len * 1.0;
      ch.budget(4.0 * (30522 * C + 8 * C * C + 4.0 * heads * T * T + 8 * L * L),
                3 * (4 * T * C * C + 2 * T * T * C) + 4 * L * 512 * 512 + 2 * L * L * 512,
                "--d-model, --seq-len or --text");
    }
    ch.show("inputs.input_ids", input_ids, _("the ids of chapter 1"), Shown::Twin);
    // E = W[ids]   (B,T) -> (B,T,C)
    Embedding token_emb(config.vocab_size, config.hidden_size);
    const Tensor inputs_embeds = token_emb(input_ids);
    const Tensor &query = inputs_embeds, &key = inputs_embeds, &value = inputs_embeds;

    // ---------------------------------------------------------------- 2) one head
    ch.section(_("Step 2: one attention head: three Linears, then attention"),
               _("article 000 §Multi-head Attention, AttentionHead"));
    // multihead_attn draws heads[0].q, .k, .v, heads[1]..., then output_linear
    MultiHeadAttention multihead_attn(config);
    const AttentionHead& head = multihead_attn.heads[0];
    // the layer's own sizes, for every note below: H heads, q (D,C)
    const size_t H = multihead_attn.heads.size(), D = head.q.weight.shape()[0], C = head.q.weight.shape()[1];
    ch.show("head = multihead_attn.heads[0]", head.repr(),
            trf("AttentionHead({C}, {D}): head_dim = {C} / {H} = {D}", fmt::arg("C", C), fmt::arg("D", D),
                fmt::arg("H", H)),
            Shown::Twin);
    // q_h = query W_q^T + b_q   (B,T,C) -> (B,T,D)
    const Tensor head_q = head.q(query);
    // D numbers per token, measured on what the line above returned
    const size_t q_width = head_q.dimension() == 3 ? head_q.shape()[2] : 0;
    ch.show("head.q(query)", head_q, {"ViewBackward0"},
            q_width == D ? _("this head's queries: every token projected to D numbers (ch02 used the raw embedding "
                             "instead)")
                         : ch.verdict(false, trf("head.q(query) holds {n} numbers per token where this head's queries "
                                                 "have D = {D}: the line above does not project them with head.q",
                                                 fmt::arg("n", q_width), fmt::arg("D", D))),
            Shown::Twin);
    // head = softmax(q_h k_h^T / sqrt(D)) v_h   (B,T,D)
    const Tensor head_out = head(query, key, value);
    ch.show("head(query, key, value).size()", size_str(shape_of(head_out)),
            _("(B,T,D): one D-sized vector per token from this head"), Shown::Twin);
    // the note reads this head's weights softmax(q_h k_h^T / sqrt(D))   (B,T,S)
    ch.show("head(query, key, value)", head_out, {"BmmBackward0"},
            weights_range_note(softmax(scaled_scores(head.q(query), head.k(key)))), Shown::Twin);

    // ---------------------------------------------------------------- 3) every head's weights
    ch.section(_("Step 3: each head has its own attention pattern"), _("article 000 §Multi-head Attention"));
    std::vector<Tensor> per_head_weights;
    // softmax(q_h k_h^T / sqrt(D)) per head   H x (B,T,S)
    for (const AttentionHead& h : multihead_attn.heads)
      per_head_weights.push_back(softmax(scaled_scores(h.q(query), h.k(key))));
    // weights (B,H,T,S)
    const Tensor weights = stack(per_head_weights, 1);
    ch.show("weights = torch.stack([softmax(q_h k_h^T / sqrt(head_dim)) for h in heads], dim=1)", weights,
            {"StackBackward0"}, _("(B,H,T,S): one T x S matrix of weights per head, each row summing to 1"),
            Shown::Twin);
    // chapter 3's weights, without projections, for the note: softmax(E E^T / sqrt(C))   (B,T,T)
    ch.say(self_weight_note(softmax(scaled_scores(inputs_embeds, inputs_embeds)), weights));
    ch.say(_("  Every head's weights (rows = queries, columns = keys), each map shaded from its own min to max:"));
    ch.figure(head_heatmaps(weights, tokens, hopt, 120));

    // ---------------------------------------------------------------- 4) the whole layer
    ch.section(_("Step 4: MultiHeadAttention: concatenate the heads, then output_linear"),
               _("article 000 §Multi-head Attention, MultiHeadAttention"));
    ch.show("multihead_attn", multihead_attn.repr(),
            trfn("{H} head of 3 Linears ({C} -> {D}), then one Linear({C} -> {C})",
                 "{H} heads of 3 Linears ({C} -> {D}), then one Linear({C} -> {C})", H, fmt::arg("H", H),
                 fmt::arg("C", C), fmt::arg("D", D)),
            Shown::Twin);
    // out = Concat(head_1..head_H) W^O + b^O   (B,T,C)
    const Tensor attn_output = multihead_attn(query, key, value);
    const int attn_line = __LINE__ - 1;  // the line above, for a note to name
    ch.show("attn_output.size()", size_str(shape_of(attn_output)),
            trfn("{H} head x {D} = {C} numbers per token again, so layers can be stacked",
                 "{H} heads x {D} = {C} numbers per token again, so layers can be stacked", H, fmt::arg("H", H),
                 fmt::arg("D", D), fmt::arg("C", attn_output.shape()[2])));
    {  // does every output number read every head? each head's values doubled in turn, on a copy
      const HeadReach reach = probe_head_reach(multihead_attn, query, key, value, attn_output);
      ch.show("attn_output", attn_output, {"ViewBackward0"},
              !reach.is_shown
                  ? trf("attn_output is not what multihead_attn(query, key, value) returns when run again (look at "
                        "{site}, the line that computes attn_output)",
                        fmt::arg("site", fmt::format("{}:{}", code_site_path(__FILE__), attn_line)))
              : reach.all()
                  ? trf("output_linear mixes the heads: doubling any one head's values moves all {n} output numbers "
                        "(measured head by head on a copy)",
                        fmt::arg("n", reach.numbers))
                  : trf("doubling head {h}'s values moves only {k} of the {n} output numbers: those numbers no longer "
                        "read every head, so the heads are not mixed (look at {site})",
                        fmt::arg("h", reach.fewest_head),
                        fmt::arg("k", reach.moved.empty() ? size_t(0) : reach.moved[reach.fewest_head]),
                        fmt::arg("n", reach.numbers), fmt::arg("site", ch.ran("MultiHeadAttention::operator()"))),
              Shown::Twin);
    }

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
    ch.show("Q = F.linear(query, W_q, b_q).view(1, -1, H, D).transpose(1, 2); Q.shape",
            size_str({Q.shape()[0], H, Q.shape()[1], D}),
            _("(B,H,T,D): column block h of Q is exactly head h's q(query)"), Shown::Twin);
    // x = softmax(Q_h K_h^T / sqrt(D)) V_h per head   (B,H,T,D); p_attn (B,H,T,S)
    Tensor p_attn;
    const Tensor fused_heads = attention_heads(Q, K, V, static_cast<int64_t>(H), nullptr, nullptr, &p_attn);
    const int fused_line = __LINE__ - 1;  // the line above, for a NOT OK to name
    // merge (B,T,C), then the same output_linear
    const Tensor fused_output = multihead_attn.output_linear(merge_heads(fused_heads));
    const Tensor d_weights = max_abs_diff(p_attn, weights), d_output = max_abs_diff(fused_output, attn_output);
    // under NOT OK, the two codes compared: step 3's per-head layer and the fused lines above
    const std::string fused_site = fmt::format("{}:{} (step 5's fused pass)", code_site_path(__FILE__), fused_line),
                      heads_site = ch.ran("MultiHeadAttention::operator()");
    const bool weights_ok = d_weights() <= kRounding, output_ok = d_output() <= kRounding;
    ch.show("(p_attn - weights).abs().max()", d_weights, {"MaxBackward1"},
            ch.verdict(weights_ok,
                       N_("the fused weights and the per-head weights of step 3 differ by {d:.3g} (float rounding is "
                          "below {tol:.0e})"),
                       N_("the fused weights and the per-head weights of step 3 differ by {d:.3g}, above {tol:.0e}: "
                          "they are no longer the same weights (look at {a} and {b})"),
                       fmt::arg("d", d_weights()), fmt::arg("tol", kRounding), fmt::arg("a", heads_site),
                       fmt::arg("b", fused_site)),
            Shown::Twin);
    ch.show("(fused_output - attn_output).abs().max()", d_output, {"MaxBackward1"},
            ch.verdict(output_ok,
                       N_("the same layer within {tol:.0e} ({d:.3g}), with 4 large matrix products instead of {n} "
                          "small ones (3 per head + 1)"),
                       N_("the fused layer and the per-head layer differ by {d:.3g}, above {tol:.0e}: they no longer "
                          "compute the same layer (look at {a} and {b})"),
                       fmt::arg("tol", kRounding), fmt::arg("d", d_output()), fmt::arg("n", 3 * H + 1),
                       fmt::arg("a", heads_site), fmt::arg("b", fused_site)),
            Shown::Twin);
    ch.erratum(_("002 §9.1.1, line 51"),
               _("the article writes K = X * Q^K; the keys come from their own weight: K = X * W^K (listing 9.2's "
                 "linears[1])."));

    // ---------------------------------------------------------------- 6) article 002's module
    // [deepcopy(nn.Linear(256, 256)) for i in range(4)]: four Linears, four independent draws
    // (src/transformer/annotated.hpp); every note below reads H, D and C from mha itself
    MultiHeadedAttention mha(8, 256);
    mha.train(ch.training());
    const size_t hx = static_cast<size_t>(mha.h), dx = static_cast<size_t>(mha.d_k);
    const size_t Cx = mha.linears[0].weight.shape()[1];  // C = in_features = H * D
    ch.section(trfn("Step 6: article 002's MultiHeadedAttention: d_model {C} split into {H} head of {D}",
                    "Step 6: article 002's MultiHeadedAttention: d_model {C} split into {H} heads of {D}", hx,
                    fmt::arg("C", Cx), fmt::arg("H", hx), fmt::arg("D", dx)),
               _("article 002 §9.2.1 注意力机制, listing 9.2"));
    ch.show(fmt::format("mha = MultiHeadedAttention({}, {})", hx, Cx), mha.repr(),
            trf("{n} Linears: q, k, v projections and the output, each (C,C); dropout acts on the weights",
                fmt::arg("n", mha.linears.size())),
            Shown::Twin);
    const bool same = mha.linears[0].weight == mha.linears[1].weight;
    ch.show("torch.equal(mha.linears[0].weight, mha.linears[1].weight)", std::string(same ? "True" : "False"),
            same ? trf("the query and key projections hold the same weights, as the Annotated Transformer's clones() "
                       "(one Linear copied {n} times) would give", fmt::arg("n", mha.linears.size()))
                 : trf("the listing's comprehension builds a new Linear on each of its {n} iterations: {n} independent "
                       "draws (the Annotated Transformer's clones() would copy one)",
                       fmt::arg("n", mha.linears.size())),
            Shown::Twin);
    // x ~ N(0,1)   (B,S,C) = (1,6,C): "How are you?" with BOS/EOS
    const Tensor x = randn({1, 6, Cx});
    ch.show(fmt::format("x = torch.randn(1, 6, {}); x.shape", Cx), size_str(shape_of(x)),
            _("stands in for the embedded \"<BOS> How are you ? <EOS>\""), Shown::Twin);
    // Q = linears[0](x)   (B,T,C)
    const Tensor q_x = mha.linears[0](x);
    ch.show("mha.linears[0](x).shape", size_str(shape_of(q_x)),
            trfn("the {H} head's queries in one product", "all {H} heads' queries in one product", hx, fmt::arg("H", hx)), Shown::Twin);
    const size_t Bx = q_x.shape()[0], Tx = q_x.shape()[1];
    // view(B,-1,h,d_k): (B,T,C) -> (B,T,H,D); transpose(1,2) -> (B,H,T,D)
    const std::string view = fmt::format("mha.linears[0](x).view(1, -1, {}, {}).transpose(1, 2)", hx, dx);
    ch.show(view + ".shape", size_str({Bx, hx, Tx, dx}),
            trf("view cuts each {C}-vector into {H} pieces of {D}; transpose puts the head index first",
                fmt::arg("C", Cx), fmt::arg("H", hx), fmt::arg("D", dx)),
            Shown::Twin);
    ch.show(view + "[:, 0].shape", size_str({Bx, Tx, dx}),
            trf("head 0: the {shape} queries made of columns 0..{last}", fmt::arg("shape", tf_shape_str({Bx, Tx, dx})),
                fmt::arg("last", dx - 1)),
            Shown::Twin);
    // out = linears[3](merge(attention(Q_h, K_h, V_h)))   (B,T,C); mha.attn (B,H,T,S)
    const Tensor out = mha(x, x, x);
    ch.show("mha(x, x, x).shape", size_str(shape_of(out)),
            trfn("{H} head x {D} merged back to {C}", "{H} heads x {D} merged back to {C}", mha.attn.shape()[1],
                 fmt::arg("H", mha.attn.shape()[1]), fmt::arg("D", dx), fmt::arg("C", out.shape()[2])),
            Shown::Twin);
    ch.show("mha.attn.shape", size_str(shape_of(mha.attn)),
            _("(B,H,T,S): the weights of every head, kept on the module"), Shown::Twin);
    ch.show("mha(x, x, x)", out, {"ViewBackward0"}, dropout_weights_note(mha.dropout, mha.attn), Shown::Twin);
    ch.say("  " + std::string(_("mha.attn, head by head (rows = queries, columns = keys).")) + " " +
           head_peaks_note(mha.attn));
    if (mha.dropout.training && count_zeros(mha.attn) > 0) ch.say(_("  Cells dropped by dropout are blank."));
    ch.figure(head_heatmaps(mha.attn, {}, hopt, 120));

    // ---------------------------------------------------------------- 7) per-head == fused
    ch.section(_("Step 7: per-head == fused: load the per-head weights as slices of the fused ones"),
               _("article 000 §Multi-head Attention vs article 002 listing 9.2"));
    mha.train(false);  // dropout off: compare the two maps themselves
    Config config_mha;
    config_mha.hidden_size = static_cast<int64_t>(Cx);
    config_mha.num_attention_heads = mha.h;
    MultiHeadAttention per_head(config_mha);  // drawn, then overwritten below
    for (size_t i = 0; i < per_head.heads.size(); ++i) {
      // head i's rows of each fused (C,C) weight: weight[i*D : (i+1)*D]   (D,C), bias (D)
      Linear* lins[3] = {&per_head.heads[i].q, &per_head.heads[i].k, &per_head.heads[i].v};
      for (size_t j = 0; j < 3; ++j) {
        lins[j]->weight = slice_rows(mha.linears[j].weight, i * dx, dx);
        lins[j]->bias = slice_rows(mha.linears[j].bias, i * dx, dx);
      }
    }
    per_head.output_linear.weight = mha.linears[3].weight;
    per_head.output_linear.bias = mha.linears[3].bias;
    const size_t shown = std::min<size_t>(1, hx - 1);  // head 1 (head 0 when there is only one)
    ch.show(fmt::format("per_head.heads[{}].q.weight.shape", shown), size_str(shape_of(per_head.heads[shown].q.weight)),
            trf("= mha.linears[0].weight[{lo}:{hi}]: head {i}'s slice of the fused query weight",
                fmt::arg("lo", shown * dx), fmt::arg("hi", (shown + 1) * dx), fmt::arg("i", shown)),
            Shown::Twin);
    // one statement each: both record their code sites, in the order the expression reads
    const Tensor per_head_out = per_head(x, x, x);
    const Tensor d_layers = max_abs_diff(per_head_out, mha(x, x, x));
    const bool layers_ok = d_layers() <= kRounding;
    ch.show("(per_head(x, x, x) - mha(x, x, x)).abs().max()", d_layers, {"MaxBackward1"},
            ch.verdict(layers_ok,
                       N_("article 000's {H} separate heads and article 002's fused layer differ by {d:.3g}: float32 "
                          "rounding, the same function in two layouts"),
                       N_("article 000's {H} separate heads and article 002's fused layer differ by {d:.3g}, above "
                          "{tol:.0e}: they compute different functions (look at {a} and {b})"),
                       fmt::arg("H", per_head.heads.size()), fmt::arg("d", d_layers()), fmt::arg("tol", kRounding),
                       fmt::arg("a", ch.ran("MultiHeadAttention::operator()")),
                       fmt::arg("b", ch.ran("MultiHeadedAttention::operator()"))),
            Shown::Twin);
    ch.say(std::string(_("  Step 5 went from article 000's heads to fused weights (cat), step 7 from fused weights to "
                         "heads (slices).")) +
           (layers_ok ? _(" Different product shapes add in a different order, so at most the last bits differ.")
                      : ""));

    // ---------------------------------------------------------------- 8) article 004
    MultiHeadedAttention mha004 = mutil_head_attention(512, 8);
    const int64_t d_model = mha004.h * mha004.d_k;  // C = H * D
    // y ~ U[0,1)   (B,T,C): tf.random.uniform((1, 60, 512))
    const Tensor y = rand({1, static_cast<size_t>(seq_len), static_cast<size_t>(d_model)});
    ch.section(trf("Step 8: article 004's split_heads layer on a {shape} input",
                   fmt::arg("shape", tf_shape_str(shape_of(y)))),
               _("article 004 §3.2 Multi-Head Attention, MutilHeadAttention; TensorFlow, printed its way"));
    // output, att = mha(y, k=y, q=y, mask=None)   (B,T,C), (B,H,T,S): v, k, q are all y
    const Tensor output = mha004(y, y, y);
    const Tensor& att = mha004.attn;
    ch.show("print(output.shape, att.shape)", tf_shape_str(shape_of(output)) + " " + tf_shape_str(shape_of(att)),
            _("the output keeps the input's shape; one (T, T) weight matrix per head"));
    ch.show("output", tf_str(output), row_spread_note(output), Shown::Twin);
    ch.say(not_tensorflow_draws_note(y.size(), static_cast<size_t>(d_model), ch.seed_text));
  });
}
