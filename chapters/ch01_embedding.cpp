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

#include "course/chapter.hpp"
#include "course/heatmap.hpp"
#include "exact/compare.hpp"
#include "exact/rng.hpp"
#include "exact/tfprint.hpp"
#include "text/tokenizer.hpp"
#include "transformer/annotated.hpp"
#include "transformer/nn.hpp"

using namespace ts;

// Article 004's positional_encoding(l_1, d_model), computed in double like numpy, then cast.
// -> (L, C)
static Tensor positional_encoding(int64_t length, int64_t d_model) {
  Tensor pe = Tensor::from_shape({static_cast<size_t>(length), static_cast<size_t>(d_model)});
  for (int64_t pos = 0; pos < length; ++pos) {
    for (int64_t i = 0; i < d_model; ++i) {
      // angle = pos / 10000^(2*(i//2) / d_model)   (the exponent divides by float32(d_model), as numpy does)
      double rate = 1.0 / std::pow(10000.0, static_cast<double>(2 * (i / 2)) / static_cast<double>(static_cast<float>(d_model)));
      double angle = static_cast<double>(pos) * rate;
      // even dimensions take the sine, odd ones the cosine
      pe(pos, i) = static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return pe;
}

// Python's repr of a str: single quotes unless the text has a ' and no ", backslashes doubled.
// (Tokens come out of the tokenizer's cleaning step: no control characters are left to escape.)
static std::string py_repr(const std::string& s) {
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == '\\' || c == q) out += '\\';
    out += c;
  }
  return out + q;
}

// Python's repr of a list: ['time', 'flies'] or [2051, 10029].
static std::string py_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + py_repr(items[i]);
  return s + "]";
}
static std::string py_list(const std::vector<int64_t>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + std::to_string(items[i]);
  return s + "]";
}

// Root mean square of all elements: the typical size of an entry (for the sqrt(d_model) discussion).
static double rms(const Tensor& t) {
  double sq = 0;
  for (float v : t) sq += static_cast<double>(v) * v;
  return std::sqrt(sq / static_cast<double>(t.size()));
}

// Share of the token part in x = token + pe, by energy: |token|^2 / (|token|^2 + |pe|^2).
static double token_share(const Tensor& token, const Tensor& pe) {
  const double a = rms(token), b = rms(pe);
  return a * a / (a * a + b * b);
}

int main(int argc, char** argv) {
  Chapter ch("ch01_embedding", "Embeddings: tokens, vectors and positions",
             "article 000 (tokenize, nn.Embedding, Embeddings) and articles 001/002/004 (sinusoidal encoding)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  bool special = false;
  int64_t d_model = 768, pe_len = 50, pe_dim = 512;
  ch.flag("--special", special, "add [CLS] and [SEP] (add_special_tokens=True)");
  ch.option("--d-model", d_model, "width C of the token and position tables (default 768, BERT-base's hidden_size)");
  ch.option("--seq-len,--pe-len", pe_len, "positions L of article 004's sinusoidal encoding (default 50)");
  ch.option("--pe-dim", pe_dim, "width of article 004's sinusoidal encoding (default 512)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base, with hidden_size = --d-model
    check_range("--d-model", d_model, 1, 2048, "the 30522-row table must fit in memory");
    config.hidden_size = d_model;
    check_range("--seq-len", pe_len, 1, 100000, "positions of the sinusoidal table");
    check_range("--pe-dim", pe_dim, 2, 8192, "one sin and one cos column at least");

    {
      // the sinusoidal table: ~20 bytes and ~76 ns per entry L x D (three float copies, double
      // math, the comparison; measured on a 2-core Zen 3), beside the (30522,C) tables
      const double entries = static_cast<double>(pe_len) * static_cast<double>(pe_dim);
      ch.budget(20.0 * entries + 3.0 * 30522 * 4 * static_cast<double>(d_model), 0, "--seq-len/--pe-len or --pe-dim",
                76e-9 * entries);
    }
    // ---------------------------------------------------------------- 1) tokenize
    ch.section("Step 1: text -> token ids", "article 000, Scaled Dot-product Attention");
    WordPieceTokenizer tokenizer = load_tokenizer(ch.vocab_path);
    std::vector<std::string> pieces = tokenizer.tokenize(ch.text);
    if (pieces.empty()) throw UsageError("--text has no tokens: give a non-empty sentence");
    std::vector<int64_t> id_list = tokenizer.encode(ch.text, special);
    check_seq_len(static_cast<int64_t>(id_list.size()), config.max_position_embeddings);
    ch.show("tokenizer.tokenize(text)", py_list(pieces),
            "WordPiece: lower-case, split on spaces and punctuation, then the longest vocabulary pieces ('##' = inside a word)",
            Shown::Twin);
    // Each word and its pieces: greedy longest match from the left, '##' marks a continuation.
    {
      std::string table = fmt::format("  {:<16} {:<34} {}\n", "word", "pieces", "ids");
      bool any_split = false;
      for (const std::string& word : tokenizer.basic_tokenize(ch.text)) {
        std::vector<std::string> wp = tokenizer.wordpiece(word);
        std::string joined, ids;
        for (const std::string& p : wp) {
          joined += (joined.empty() ? "" : " ") + p;
          ids += (ids.empty() ? "" : " ") + std::to_string(tokenizer.token_to_id(p));
        }
        any_split = any_split || wp.size() > 1;
        table += fmt::format("  {:<16} {:<34} {}\n", word, joined, ids);
      }
      ch.say(table + (any_split ? "  A word missing from the vocabulary is cut into the longest pieces it has."
                                : "  Every word here is in the vocabulary as a whole: none splits."));
      if (!any_split) {
        // A sentence whose words are not in the vocabulary, to see the pieces.
        const std::string demo = "unaffable tokenization";
        const std::vector<std::string> demo_pieces = tokenizer.tokenize(demo);
        std::vector<int64_t> demo_ids;
        for (const std::string& p : demo_pieces) demo_ids.push_back(tokenizer.token_to_id(p));
        ch.show("tokenizer.tokenize(\"" + demo + "\")", py_list(demo_pieces),
                "two words the vocabulary lacks: each becomes a first piece plus '##' continuations", Shown::Twin);
        ch.show("tokenizer.convert_tokens_to_ids(_)", py_list(demo_ids),
                "one id per piece: the model sees 5 tokens for these 2 words", Shown::Twin);
      }
    }
    // ids (B,T) with B = 1
    ITensor input_ids = ITensor::from_shape({1, id_list.size()});
    std::copy(id_list.begin(), id_list.end(), input_ids.begin());
    ch.show("inputs.input_ids", input_ids,
            "one row per sentence: each piece's line number in the 30522-entry vocabulary");

    // ---------------------------------------------------------------- 2) token embedding
    ch.section("Step 2: ids -> vectors with nn.Embedding", "article 000, Scaled Dot-product Attention");
    // E = weight[ids]      weight (V,C) -> (B,T,C)
    Embedding token_emb(config.vocab_size, config.hidden_size);
    ch.show("token_emb", token_emb.repr().str(),
            fmt::format("a table of V = {} rows of C = {} numbers, drawn from N(0, 1)", config.vocab_size, d_model));
    Tensor inputs_embeds = token_emb(input_ids);
    ch.show("inputs_embeds.size()", size_str(shape_of(inputs_embeds)), "[batch_size, seq_len, hidden_dim] = (B,T,C)");
    ch.show("inputs_embeds", inputs_embeds, {"EmbeddingBackward0"},
            "each row is the table row of its id: the lookup copies, it does not compute", Shown::Twin);
    Tensor row = xt::view(token_emb.weight, id_list[0], xt::range(0, std::min<int64_t>(8, d_model)));
    ch.show(fmt::format("token_emb.weight[{}, :8]", id_list[0]), row, {"SliceBackward0"},
            fmt::format("the same numbers as the first row above: the embedding of '{}'",
                        tokenizer.id_to_token(id_list[0])),
            Shown::Twin);
    ch.show_parameter("token_emb.weight", token_emb.weight,
            "the whole table, a Parameter: training will move these numbers; print shows its corners", Shown::Twin);

    // ---------------------------------------------------------------- 3) learned positions
    ch.section("Step 3: adding positions (learned), LayerNorm, Dropout", "article 000, Positional Embeddings");
    Embeddings embedding_layer(config);
    embedding_layer.train(ch.training());
    ch.show("embedding_layer", embedding_layer.repr().str(),
            "token table + position table (one learned row per position 0..511), then LayerNorm and Dropout(p=0.5)",
            Shown::Twin);
    Tensor embedded = embedding_layer(input_ids);
    ch.show("embedding_layer(inputs.input_ids).size()", size_str(shape_of(embedded)),
            "same shape as before: position t's vector is added to token t's vector");
    ch.show("embedding_layer(inputs.input_ids)", embedded,
            {ch.training() ? "MulBackward0" : "NativeLayerNormBackward0"},
            ch.training() ? "train mode: Dropout zeroed about half the entries and doubled the rest (try --eval)"
                          : "eval mode: Dropout is the identity, each row has mean 0 and variance 1",
            Shown::Twin);

    // ---------------------------------------------------------------- 4) sinusoidal positions
    ch.section("Step 4: fixed sinusoidal positions", "article 004 §2; articles 001 and 002");
    // PE (L,C): even dims sin(pos * rate_i), odd dims cos(pos * rate_i), rate_i = 10000^(-2i/C)
    Tensor pe = positional_encoding(pe_len, pe_dim);
    ch.show("pos_encoding.shape", tf_shape_str(shape_of(pe)),
            "TensorFlow prints a shape as a tuple: L positions x d_model dimensions");
    const size_t show_r = std::min<size_t>(5, pe.shape()[0]), show_c = std::min<size_t>(8, pe.shape()[1]);
    Tensor corner = xt::view(pe, xt::range(0, show_r), xt::range(0, show_c));
    ch.show(fmt::format("torch.from_numpy(pos_encoding[:{}, :{}])", show_r, show_c), corner, {},
            "row 0 is sin(0)=0, cos(0)=1; low dimensions turn fast with the position, high ones slowly",
            Shown::Twin);
    HeatmapOptions hopt;
    hopt.mode = heatmap_mode(ch.color);
    hopt.title = "pos_encoding: rows = positions, columns = dimensions";
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
      ch.show(fmt::format("(torch.from_numpy(pos_encoding) - PositionalEncoding({}, 0.1, max_len={}).pe[0]).abs().max()",
                          pe_dim, pe_len),
              diff, {},
              "article 002's PositionalEncoding gives the same table up to float32 rounding: the angles pos * rate "
              "are rounded before sin/cos, which matters most for the large positions",
              Shown::Twin);
    }

    // ---------------------------------------------------------------- 5) why x * sqrt(d_model)
    ch.section("Step 5: why embeddings are multiplied by sqrt(d_model)", "article 001 Encoder; article 004 §sqrt(d_model); article 002 Embeddings");
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
    std::string table = fmt::format("  {:<38} {:>8} {:>13} {:>14} {:>13}\n", "token table drawn from", "rms(E)",
                                    "E share in", "rms(E*sqrt(d))", "E share in");
    table += fmt::format("  {:<38} {:>8} {:>13} {:>14} {:>13}\n", "", "", "E + PE", "", "E*sqrt(d)+PE");
    const std::pair<const char*, const Tensor*> inits[] = {
        {"N(0, 1/d)  (articles 001 and 004)", &small},
        {"N(0, 1)    (nn.Embedding's default)", &unit},
        {"xavier_uniform_ (article 002)", &xavier}};
    for (const auto& [name, e] : inits) {
      const Tensor scaled = *e * static_cast<float>(root_d);
      table += fmt::format("  {:<38} {:>8.4f} {:>12.2f}% {:>14.4f} {:>12.2f}%\n", name, rms(*e),
                           100 * token_share(*e, pe_T), rms(scaled), 100 * token_share(scaled, pe_T));
    }
    ch.say(fmt::format(
        "  Articles 001, 002 and 004 add the sin/cos table to the token vectors, after multiplying those by\n"
        "  sqrt(d) = {:.4f}. The sin/cos entries have rms {:.4f} here (each sin^2 + cos^2 pair is 1). Their\n"
        "  argument (articles 001, 004): a table drawn with variance 1/d has entries of about 1/sqrt(d), and added\n"
        "  as they are the positions would drown the token, the word itself; times sqrt(d) its variance is 1,\n"
        "  the scale of the positions. Measured on this sentence (E = the T = {} rows looked up, d = {}):\n{}"
        "  So the factor balances token and position only for a table of variance 1/d. With nn.Embedding's own\n"
        "  N(0, 1) it does the opposite (the position is then a rounding error); article 002's xavier_uniform_\n"
        "  gives variance 2/(V + d), so even times sqrt(d) the token stays the smaller part. Training adjusts\n"
        "  the table anyway; the factor only sets where it starts.",
        root_d, rms(pe_T), T, d_model, table));
  });
}
