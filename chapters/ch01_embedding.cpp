// ch01_embedding: from text to vectors.
//
// Follows: article 000 "Scaled Dot-product Attention" (tokenizer -> ids -> nn.Embedding) and
//          "Positional Embeddings" (the learned-position Embeddings module);
//          article 004 §2 and articles 001/002 (the sinusoidal encoding, x * sqrt(d_model)).
// Formula: E = Embedding(ids)                      (B,T) -> (B,T,C)
//          PE(pos, 2i)   = sin(pos / 10000^(2i/C))
//          PE(pos, 2i+1) = cos(pos / 10000^(2i/C))  (T,C)
// Run:     ./build/ch01_embedding [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch01_embedding --text "unaffable tokenization"   (words that split into pieces)
//          ./build/ch01_embedding --d-model 64 --seq-len 20 --pe-dim 64   (smaller tables)
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xview.hpp>

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "course/i18n.hpp"
#include "course/layernorm_notes.hpp"
#include "course/model_probes.hpp"
#include "course/layout.hpp"
#include "course/token_notes.hpp"
#include "course/weight_stats.hpp"
#include "exact/compare.hpp"
#include "exact/rng.hpp"
#include "exact/tfprint.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"
#include "transformer/transformer_encoder.hpp"

using namespace ts;

// Article 004's get_angles rate for column i: 1 / 10000^(2*(i//2) / d_model), in double like numpy
// (the exponent divides by float32(d_model), as the article's np.float32(d_model) does).
static double angle_rate(int64_t i, int64_t d_model);

// Article 004's positional_encoding(l_1, d_model), computed in double like numpy, then cast. -> (L, C)
static Tensor positional_encoding(int64_t length, int64_t d_model);

// Root mean square of all elements: the typical size of an entry (for the sqrt(d_model) discussion).
static double rms(const Tensor& t);

// Share of the token part in x = token + pe, by energy: |token|^2 / (|token|^2 + |pe|^2).
static double token_share(const Tensor& token, const Tensor& pe);

// The note on the train-mode Embeddings output: how many entries `dropout` zeroed, and whether it
// scaled the others by 1/(1-p) (compared with the same layer's output without Dropout, `normed`).
static std::string dropout_note(Chapter& ch, const Dropout& dropout, const Tensor& out, const Tensor& normed,
                                bool normalises);

// The note on the eval-mode Embeddings output: LayerNorm leaves each row with mean 0 and variance 1.
static std::string layer_norm_note(Chapter& ch, const Tensor& out);

int main(int argc, char** argv) {
  Chapter ch("ch01_embedding", _("Embeddings: tokens, vectors and positions"),
             {{0, N_("§Scaled Dot-product Attention, §Positional Embeddings (tokenize, nn.Embedding, Embeddings)")},
              {1, N_("Encoder Module")}, {2, N_("§9.1.2, §9.4.2")},
              {4, N_("§2 模型输入 (sinusoidal encoding, x * sqrt(d_model))")}});
  ch.add_sentence_flags();
  bool special = false;
  int64_t d_model = 768, pe_len = 50, pe_dim = 512;
  ch.flag("--special", special, _("add [CLS] and [SEP] (add_special_tokens=True)"));
  ch.option("--d-model", d_model, _("width C of the token and position tables, BERT-base's hidden_size by default"),
            1, 2048, _("the 30522-row table must fit in memory"));
  ch.option("--seq-len,--pe-len", pe_len, _("positions L of article 004's sinusoidal encoding"), 1, 100000,
            _("positions of the sinusoidal table"));
  ch.option("--pe-dim", pe_dim, _("width of article 004's sinusoidal encoding"), 2, 8192,
            _("one sin and one cos column at least"));

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base, with hidden_size = --d-model
    config.hidden_size = d_model;
    {
      // the sinusoidal table: ~20 bytes and ~76 ns per entry L x D (three float copies, double
      // math, the comparison; measured on a 2-core Zen 3), beside the (30522,C) tables
      const double entries = static_cast<double>(pe_len) * static_cast<double>(pe_dim);
      ch.budget(20.0 * entries + 3.0 * 30522 * 4 * static_cast<double>(d_model), 0, "--seq-len/--pe-len or --pe-dim",
                76e-9 * entries);
    }
    // ---------------------------------------------------------------- 1) tokenize
    ch.section(_("Step 1: text -> token ids"), _("article 000 §Scaled Dot-product Attention"));
    WordPieceTokenizer tokenizer = load_tokenizer(ch.vocab_path);
    std::vector<std::string> pieces = tokenizer.tokenize(ch.text);
    if (pieces.empty()) throw UsageError(_("--text has no tokens: give a non-empty sentence"));
    std::vector<int64_t> id_list = tokenizer.encode(ch.text, special);
    check_seq_len(static_cast<int64_t>(id_list.size()), config.max_position_embeddings);
    ch.show("tokenizer.tokenize(text)", py_list(pieces),
            _("WordPiece: lower-case, split on spaces and punctuation, then the longest vocabulary pieces ('##' = "
              "inside a word)"),
            Shown::Twin);
    // Each word and its pieces: greedy longest match from the left, '##' marks a continuation.
    {
      const WordPieceTable table = word_piece_table(tokenizer, ch.text);  // src/course/token_notes.hpp
      ch.say(table.text + (table.any_split
                               ? _("  A word missing from the vocabulary is cut into the longest pieces it has.")
                               : _("  Every word here is in the vocabulary as a whole: none splits.")));
      if (!table.any_split) {
        // A sentence whose words are not in the vocabulary, to see the pieces.
        const std::string demo = "unaffable tokenization";
        const std::vector<std::string> demo_pieces = tokenizer.tokenize(demo);
        std::vector<int64_t> demo_ids;
        for (const std::string& p : demo_pieces) demo_ids.push_back(tokenizer.token_to_id(p));
        ch.show("tokenizer.tokenize(\"" + demo + "\")", py_list(demo_pieces),
                _("two words the vocabulary lacks: each becomes a first piece plus '##' continuations"), Shown::Twin);
        ch.show("tokenizer.convert_tokens_to_ids(_)", py_list(demo_ids),
                trf("one id per piece: the model sees {n} tokens for these {words} words",
                    fmt::arg("n", demo_ids.size()), fmt::arg("words", tokenizer.basic_tokenize(demo).size())),
                Shown::Twin);
      }
    }
    // ids (B,T) with B = 1
    ITensor input_ids = ITensor::from_shape({1, id_list.size()});
    std::copy(id_list.begin(), id_list.end(), input_ids.begin());
    ch.show("inputs.input_ids", input_ids,
            trf("one row per sentence, T = {T} ids: each piece's line number in the {V}-entry vocabulary",
                fmt::arg("T", id_list.size()), fmt::arg("V", tokenizer.vocab_size())));

    // ---------------------------------------------------------------- 2) token embedding
    ch.section(_("Step 2: ids -> vectors with nn.Embedding"), _("article 000 §Scaled Dot-product Attention"));
    // E = weight[ids]      weight (V,C) -> (B,T,C)
    Embedding token_emb(config.vocab_size, config.hidden_size);
    const Tensor& W = token_emb.weight;  // the init's draw, measured (nn.Embedding draws N(0, 1))
    const Moments drawn = moments_of(W);   // N(0, 1)'s mean, std and kurtosis, within their sampling error?
    ch.show("token_emb", token_emb.repr(),
            drawn.standard_normal
                ? trf("a table of V = {V} rows of C = {C} numbers; as drawn, their mean is {m:.3f} and their std "
                      "{s:.3f} (nn.Embedding's init is N(0, 1))",
                      fmt::arg("V", W.shape()[0]), fmt::arg("C", W.shape()[1]), fmt::arg("m", mean_of(W)),
                      fmt::arg("s", std_of(W)))
                : trf("a table of V = {V} rows of C = {C} numbers whose mean is {m:.3g}, std {s:.3g} and kurtosis "
                      "{k:.3g}: not N(0, 1)'s 0, 1 and 3, so it was not drawn as nn.Embedding's init draws it "
                      "(look at {site})",
                      fmt::arg("V", W.shape()[0]), fmt::arg("C", W.shape()[1]), fmt::arg("m", drawn.mean),
                      fmt::arg("s", drawn.std), fmt::arg("k", drawn.kurtosis),
                      fmt::arg("site", ch.ran("Embedding::Embedding"))));
    Tensor inputs_embeds = token_emb(input_ids);
    ch.show("inputs_embeds.size()", size_str(shape_of(inputs_embeds)), _("[batch_size, seq_len, hidden_dim] = (B,T,C)"));
    // The lookup copies: row t of inputs_embeds is row ids[t] of the table, bit for bit.
    size_t copied = 0;
    for (size_t t = 0; t < id_list.size(); ++t)
      copied += xt::view(inputs_embeds, 0, t, xt::all()) == xt::view(token_emb.weight, id_list[t], xt::all()) ? 1 : 0;
    ch.show("inputs_embeds", inputs_embeds, {"EmbeddingBackward0"},
            ch.verdict(copied == id_list.size(),
                       N_("{n} of the {T} rows are exactly the table row of their id: the lookup copies, it does not "
                          "compute"),
                       N_("only {n} of the {T} rows are exactly the table row of their id: the lookup no longer just "
                          "copies"),
                       fmt::arg("n", copied), fmt::arg("T", id_list.size())),
            Shown::Twin);
    Tensor row = xt::view(token_emb.weight, id_list[0], xt::range(0, std::min<int64_t>(8, d_model)));
    ch.show(fmt::format("token_emb.weight[{}, :8]", id_list[0]), row, {"SliceBackward0"},
            trf("row {id} of the table, the embedding of '{token}': the start of the first row above",
                fmt::arg("id", id_list[0]), fmt::arg("token", tokenizer.id_to_token(id_list[0]))),
            Shown::Twin);
    ch.show_parameter("token_emb.weight", token_emb.weight,
                      _("the whole table, a Parameter: training will move these numbers; print shows its corners"),
                      Shown::Twin);

    // ---------------------------------------------------------------- 3) learned positions
    Embeddings embedding_layer(config);
    embedding_layer.train(ch.training());
    const bool normalises = embeddings_apply_layer_norm(embedding_layer, input_ids);  // read from its forward
    ch.section(normalises ? _("Step 3: adding positions (learned), LayerNorm, Dropout")
                          : _("Step 3: adding positions (learned), then Dropout without the LayerNorm"),
               _("article 000 §Positional Embeddings"));
    ch.show("embedding_layer", embedding_layer.repr(),
            trf(normalises ? N_("token table + position table (one learned row per position 0..{last}), then "
                                "LayerNorm and Dropout(p={p:g})")
                           : N_("token table + position table (one learned row per position 0..{last}); its forward "
                                "does not give LayerNorm of their sum, then Dropout(p={p:g})"),
                fmt::arg("last", embedding_layer.position_embeddings.weight.shape()[0] - 1),
                fmt::arg("p", embedding_layer.dropout.p)),
            Shown::Twin);
    Tensor embedded = embedding_layer(input_ids);
    ch.show("embedding_layer(inputs.input_ids).size()", size_str(shape_of(embedded)),
            _("same shape as before: position t's vector is added to token t's vector"));
    // The same layer without Dropout (no random draws): what comes before Dropout.
    embedding_layer.train(false);
    const Tensor normed = embedding_layer(input_ids);
    embedding_layer.train(ch.training());
    ch.show("embedding_layer(inputs.input_ids)", embedded,
            {ch.training() ? "MulBackward0" : "NativeLayerNormBackward0"},
            ch.training() ? dropout_note(ch, embedding_layer.dropout, embedded, normed, normalises)
                          : layer_norm_note(ch, embedded),
            Shown::Twin);

    // ---------------------------------------------------------------- 4) sinusoidal positions
    ch.section(_("Step 4: fixed sinusoidal positions"),
               _("article 004 §2 模型输入; article 002 §9.1.2 Transformer 架构, equation 9.3"));
    // PE (L,C): even dims sin(pos * rate_i), odd dims cos(pos * rate_i), rate_i = 10000^(-2i/C)
    Tensor pe = positional_encoding(pe_len, pe_dim);
    ch.show("pos_encoding.shape", tf_shape_str(shape_of(pe)),
            _("TensorFlow prints a shape as a tuple: L positions x d_model dimensions"));
    const size_t show_r = std::min<size_t>(5, pe.shape()[0]), show_c = std::min<size_t>(8, pe.shape()[1]);
    Tensor corner = xt::view(pe, xt::range(0, show_r), xt::range(0, show_c));
    {
      // row 0: sin(0) = 0 in the even columns, cos(0) = 1 in the odd ones
      bool row0 = true;
      for (int64_t i = 0; i < pe_dim; ++i) row0 = row0 && pe(0, i) == (i % 2 == 0 ? 0.0f : 1.0f);
      const int64_t last = pe_dim - 1;
      const std::string row0_text = fmt::format("[{}]", fmt::join(pe.data(), pe.data() + std::min<int64_t>(4, pe_dim), ", "));
      ch.show(fmt::format("torch.from_numpy(pos_encoding[:{}, :{}])", show_r, show_c), corner, {},
              ch.verdict(row0,
                         N_("row 0 (position 0) starts {row}: sin(0) = 0 in the even columns, cos(0) = 1 in the odd "
                            "ones; columns 0 and 1 turn by 1 radian per position, the last column ({last}) by "
                            "{rate:.3g}: over positions 0..{end} its angle reaches only {reach:.3g}"),
                         N_("row 0 (position 0) starts {row}: no longer 0 in every even column and 1 in every odd "
                            "one, as sin(0) and cos(0) give"),
                         fmt::arg("row", row0_text), fmt::arg("last", last),
                         fmt::arg("rate", angle_rate(last, pe_dim)), fmt::arg("end", pe_len - 1),
                         fmt::arg("reach", static_cast<double>(pe_len - 1) * angle_rate(last, pe_dim))),
              Shown::Twin);
    }
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.title = _("pos_encoding: rows = positions, columns = dimensions");
    hopt.cell_width = 1;
    hopt.max_cols = 96;
    hopt.max_rows = 50;
    ch.figure(heatmap(pe, {}, {}, hopt));
    // Article 002 builds the same table in float32 torch ops (div_term = exp(2i * -ln(10000)/C)),
    // article 004 in float64 numpy, then casts: the formula is the same, the rounding is not.
    if (pe_dim % 2 == 0) {  // article 002's pe[:, 1::2] = cos(...) needs an even width
      PositionalEncoding pos(pe_dim, 0.1, pe_len);  // no random draws
      // |PE_004 - PE_002[0]|   (L,C) -> max over all entries, a 0-d tensor (NaN-aware, like torch)
      Tensor pe_002 = pos.pe;  // (1,L,C)
      pe_002.reshape({pe.shape()[0], pe.shape()[1]});
      const Tensor diff = max_abs_diff(pe, pe_002);
      // float32 rounds an angle of size a by up to a * 2^-24, and the rate itself by as much: with
      // angles up to L - 1, the tables stay within (L - 1) * 2^-22 (one float32 step at 1 below that)
      const double tol = std::ldexp(std::max<double>(1.0, static_cast<double>(pe_len - 1)), -22);
      ch.show(fmt::format("(torch.from_numpy(pos_encoding) - PositionalEncoding({}, 0.1, max_len={}).pe[0]).abs().max()",
                          pe_dim, pe_len),
              diff, {},
              ch.verdict(diff() <= tol,
                         N_("article 002's PositionalEncoding differs from this table by {d:.3g}, against (L - 1) * "
                            "2^-22 = {tol:.3g} for float32 rounding of the angles pos * rate (up to {amax}) before "
                            "sin/cos"),
                         N_("article 002's PositionalEncoding differs from this table by {d:.3g}, above (L - 1) * "
                            "2^-22 = {tol:.3g}: the two tables no longer follow one formula"),
                         fmt::arg("d", diff()), fmt::arg("tol", tol), fmt::arg("amax", pe_len - 1)),
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 5) why x * sqrt(d_model)
    ch.section(_("Step 5: why embeddings are multiplied by sqrt(d_model)"),
               _("article 001 Encoder Module; article 004 Q&A §sqrt(d_model)的解释; article 002 §9.4.2 create_model"));
    // x = E * sqrt(C) + PE[:T]: the sentence's token vectors and the encoding of its positions 0..T-1,
    // both of width C = d_model, for three ways to initialise the token table.
    // (B,T,C) + (T,C) -> (B,T,C)
    const size_t T = id_list.size(), C = static_cast<size_t>(d_model);
    const double d = static_cast<double>(d_model), root_d = std::sqrt(d);
    const Tensor pe_T = positional_encoding(static_cast<int64_t>(T), d_model);  // (T,C)
    // 1) N(0, 1/d): the variance articles 001 and 004 assume ("xavier"); our N(0,1) rows divided by sqrt(d)
    const Tensor small = inputs_embeds / static_cast<float>(root_d);
    // 2) N(0, 1): what nn.Embedding draws by default (the rows printed in step 2)
    const Tensor& unit = inputs_embeds;
    // 3) xavier_uniform_ on the (V,C) table, as article 002's create_model does: U(-a, a), a = sqrt(6 / (V + C)).
    //    T rows drawn from a private generator (seeded with --seed), so the main stream stays the twin's.
    Generator g(ch.seed);
    Tensor xavier = Tensor::from_shape({1, T, C});
    const double a = std::sqrt(6.0 / static_cast<double>(config.vocab_size + d_model));
    uniform_(xavier.data(), xavier.size(), -a, a, g);
    const auto table_row = [](const std::string& name, const std::string& c1, const std::string& c2,
                              const std::string& c3, const std::string& c4) {
      // 80 columns: it fits an 80-column terminal whole
      return "  " + pad_right(name, 35) + " " + fmt::format("{:>7} {:>11} {:>9} {:>12}", c1, c2, c3, c4) + "\n";
    };
    std::string table = table_row(_("token table drawn from"), "rms(E)", _("E share in"), "rms(E*", _("E share in"));
    table += table_row("", "", "E + PE", "sqrt(d))", "E*sqrt(d)+PE");
    const std::pair<const char*, const Tensor*> inits[] = {
        {N_("N(0, 1/d)  (articles 001 and 004)"), &small},
        {N_("N(0, 1)    (nn.Embedding's default)"), &unit},
        {N_("xavier_uniform_ (article 002)"), &xavier}};
    double share[3];  // E's share in E*sqrt(d) + PE, per initialisation
    for (size_t k = 0; k < 3; ++k) {
      const Tensor& e = *inits[k].second;
      const Tensor scaled = e * static_cast<float>(root_d);
      share[k] = 100 * token_share(scaled, pe_T);
      table += table_row(_(inits[k].first), fmt::format("{:.4f}", rms(e)), fmt::format("{:.2f}%", 100 * token_share(e, pe_T)),
                         fmt::format("{:.4f}", rms(scaled)), fmt::format("{:.2f}%", share[k]));
    }
    const double pe_rms = rms(pe_T);
    ch.say(trf("  Articles 001, 002 and 004 add the sin/cos table to the token vectors, after multiplying those by\n"
               "  sqrt(d) = {root:.4f}. The sin/cos entries have rms {pe_rms:.4f} here. Their argument (articles 001,\n"
               "  004): a table drawn with variance 1/d has entries of about 1/sqrt(d), and added as they are the\n"
               "  positions would drown the token, the word itself; times sqrt(d) its variance is 1, the scale of\n"
               "  the positions. Measured on this sentence (E = the T = {T} rows looked up, d = {d}):",
               fmt::arg("root", root_d), fmt::arg("pe_rms", pe_rms), fmt::arg("T", T), fmt::arg("d", d_model)) +
           "\n" + table +
           trf("  With the factor, the token's share of x is {s0:.2f}% for a table of variance 1/d, {s1:.2f}% for\n"
               "  nn.Embedding's own N(0, 1), and {s2:.2f}% for article 002's xavier_uniform_ (variance 2/(V + d)).\n"
               "  So the factor sets the balance only together with the initialisation; training adjusts the table\n"
               "  anyway, the factor only sets where it starts.",
               fmt::arg("s0", share[0]), fmt::arg("s1", share[1]), fmt::arg("s2", share[2])));
    ch.erratum(_("001 Encoder Module, line 34"),
               trf("the notes say Xavier initialisation draws the table from N(0, 1/d). For a (V, d) table Xavier's "
                   "variance is 2/(V + d) = {xv:.2g} here, not 1/d = {inv:.2g}; and the notes' own Encoder keeps "
                   "nn.Embedding's default N(0, 1), whose rows the factor makes {s1:.2f}% token (table above).",
                   fmt::arg("xv", 2.0 / static_cast<double>(config.vocab_size + d_model)), fmt::arg("inv", 1.0 / d),
                   fmt::arg("s1", share[1])));
    ch.erratum(_("004 Q&A §sqrt(d_model)的解释, line 800"),
               _("the article says each entry of a Xavier-initialised token vector is N(0, 1) and, in the same "
                 "sentence, that its variance is 1/d_model; both cannot hold. Variance 1/d_model is what the "
                 "argument needs (entries of N(0, 1) would have variance 1 already), and its own code uses Keras's "
                 "Embedding, whose default draws uniformly from [-0.05, 0.05]."));
  });
}

static double angle_rate(int64_t i, int64_t d_model) {
  return 1.0 / std::pow(10000.0, static_cast<double>(2 * (i / 2)) / static_cast<double>(static_cast<float>(d_model)));
}

static Tensor positional_encoding(int64_t length, int64_t d_model) {
  Tensor pe = Tensor::from_shape({static_cast<size_t>(length), static_cast<size_t>(d_model)});
  for (int64_t pos = 0; pos < length; ++pos) {
    for (int64_t i = 0; i < d_model; ++i) {
      // angle = pos / 10000^(2*(i//2) / d_model)
      double angle = static_cast<double>(pos) * angle_rate(i, d_model);
      // even dimensions take the sine, odd ones the cosine
      pe(pos, i) = static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return pe;
}

static double rms(const Tensor& t) {
  double sq = 0;
  for (float v : t) sq += static_cast<double>(v) * v;
  return std::sqrt(sq / static_cast<double>(t.size()));
}

static double token_share(const Tensor& token, const Tensor& pe) {
  const double a = rms(token), b = rms(pe);
  return a * a / (a * a + b * b);
}

static std::string dropout_note(Chapter& ch, const Dropout& dropout, const Tensor& out, const Tensor& normed,
                                bool normalises) {
  // kept entries are scaled by 1/(1-p), as torch's float32 multiply does
  const float scale = dropout.p < 1 ? static_cast<float>(1.0 / (1.0 - dropout.p)) : 0.0f;
  size_t zeros = 0;
  double worst = 0;  // largest |out - normed / (1 - p)| over the kept entries
  for (size_t i = 0; i < out.size(); ++i) {
    if (out.data()[i] == 0.0f) {
      zeros += normed.data()[i] != 0.0f;  // (with C = 1 LayerNorm itself gives 0)
    } else {
      worst = std::max(worst, std::fabs(static_cast<double>(out.data()[i]) - scale * normed.data()[i]));
    }
  }
  const size_t n = out.size();
  const bool ok = worst <= 1e-6;
  return ch.verdict(ok,
                    N_("train mode: Dropout zeroed {z} of the {n} entries ({pct:.1f}%, p = {p:g}) and scaled the "
                       "other {k} by 1/(1 - p) = {s:g}: each is exactly that multiple of the {before} (largest gap "
                       "{d:.2g}); try --eval"),
                    N_("train mode: Dropout zeroed {z} of the {n} entries ({pct:.1f}%, p = {p:g}), but the other {k} "
                       "are not 1/(1 - p) = {s:g} times the {before}: largest gap {d:.2g}"),
                    fmt::arg("z", zeros), fmt::arg("n", n),
                    fmt::arg("pct", 100.0 * static_cast<double>(zeros) / static_cast<double>(n)),
                    fmt::arg("p", dropout.p), fmt::arg("k", n - zeros), fmt::arg("s", scale), fmt::arg("d", worst),
                    fmt::arg("before", normalises ? _("LayerNorm output") : _("same layer's eval-mode output")));
}

static std::string layer_norm_note(Chapter& ch, const Tensor& out) {
  const size_t C = out.shape()[2];
  if (C == 1) return _("eval mode: Dropout is the identity; with C = 1 each row is one number, its own mean, so LayerNorm makes it 0");
  double worst_mean = 0, worst_var = 0;
  for (size_t t = 0; t < out.shape()[1]; ++t) {
    double sum = 0, sq = 0;
    for (size_t c = 0; c < C; ++c) sum += out(0, t, c);
    const double mean = sum / static_cast<double>(C);
    for (size_t c = 0; c < C; ++c) sq += (out(0, t, c) - mean) * (out(0, t, c) - mean);
    worst_mean = std::max(worst_mean, std::fabs(mean));
    worst_var = std::max(worst_var, std::fabs(sq / static_cast<double>(C) - 1.0));
  }
  const bool ok = worst_mean <= 1e-5 && worst_var <= 1e-4;
  return ch.verdict(ok,
                    N_("eval mode: Dropout is the identity, and each row has mean 0 and variance 1 (largest |mean| "
                       "{m:.2g}, largest |variance - 1| {v:.2g})"),
                    N_("eval mode: the rows no longer have mean 0 and variance 1: largest |mean| {m:.2g}, largest "
                       "|variance - 1| {v:.2g}"),
                    fmt::arg("m", worst_mean), fmt::arg("v", worst_var));
}
