// ch01_embedding: from text to vectors.
//
// Follows: article 000 "Scaled Dot-product Attention" (tokenizer -> ids -> nn.Embedding) and
//          "Positional Embeddings" (the learned-position Embeddings module);
//          article 004 §2 and articles 001/002 (the sinusoidal encoding, x * sqrt(d_model)).
// Formula: E = Embedding(ids)                      (B,T) -> (B,T,C)
//          PE(pos, 2i)   = sin(pos / 10000^(2i/C))
//          PE(pos, 2i+1) = cos(pos / 10000^(2i/C))  (T,C)
// Run:     ./build/ch01_embedding [--text "time flies like an arrow"] [--seed 0] [--plain]
//          ./build/ch01_embedding --text "unaffable tokenization"   (a word that splits)
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chapter.hpp"
#include "heatmap.hpp"
#include "nn.hpp"
#include "tokenizer.hpp"
#include "tfprint.hpp"

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

// Python's repr of a list of strings: ['time', 'flies'].
static std::string py_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", '" : "'") + items[i] + "'";
  return s + "]";
}

// Standard deviation of all elements (for the sqrt(d_model) discussion).
static double spread(const Tensor& t) {
  double mean = 0, sq = 0;
  for (float v : t) mean += v;
  mean /= static_cast<double>(t.size());
  for (float v : t) sq += (v - mean) * (v - mean);
  return std::sqrt(sq / static_cast<double>(t.size() - 1));
}

int main(int argc, char** argv) {
  Chapter ch("ch01_embedding", "Embeddings: tokens, vectors and positions",
             "article 000 (tokenize, nn.Embedding, Embeddings) and articles 001/002/004 (sinusoidal encoding)");
  ch.add_text_flag();
  ch.add_vocab_flag();
  bool special = false;
  int64_t pe_len = 50, pe_dim = 512;
  ch.flag("--special", special, "add [CLS] and [SEP] (add_special_tokens=True)");
  ch.option("--pe-len", pe_len, "positions of the sinusoidal encoding (default 50)");
  ch.option("--pe-dim", pe_dim, "d_model of the sinusoidal encoding (default 512)");

  return ch.run(argc, argv, [&](Chapter& ch) {
    Config config;  // BERT-base
    if (pe_len < 1 || pe_len > 100000) throw UsageError("--pe-len must be between 1 and 100000");
    if (pe_dim < 2 || pe_dim > 8192) throw UsageError("--pe-dim must be between 2 and 8192");

    // ---------------------------------------------------------------- 1) tokenize
    ch.section("Step 1: text -> token ids", "article 000, Scaled Dot-product Attention");
    WordPieceTokenizer tokenizer = load_tokenizer(ch.vocab_path);
    std::vector<std::string> pieces = tokenizer.tokenize(ch.text);
    if (pieces.empty()) throw UsageError("--text has no tokens: give a non-empty sentence");
    std::vector<int64_t> id_list = tokenizer.encode(ch.text, special);
    check_seq_len(static_cast<int64_t>(id_list.size()), config.max_position_embeddings);
    ch.show("tokenizer.tokenize(text)", py_list(pieces),
            "WordPiece: lower-case, split on spaces and punctuation, then the longest vocabulary pieces ('##' = inside a word)",
            Shown::Info);
    // ids (B,T) with B = 1
    ITensor input_ids = ITensor::from_shape({1, id_list.size()});
    std::copy(id_list.begin(), id_list.end(), input_ids.begin());
    ch.show("inputs.input_ids", input_ids,
            "one row per sentence: each piece's line number in the 30522-entry vocabulary");

    // ---------------------------------------------------------------- 2) token embedding
    ch.section("Step 2: ids -> vectors with nn.Embedding", "article 000, Scaled Dot-product Attention");
    // E = weight[ids]      weight (V,C) -> (B,T,C)
    Embedding token_emb(config.vocab_size, config.hidden_size);
    ch.show("token_emb", token_emb.repr().str(), "a table of V = 30522 rows of C = 768 numbers, drawn from N(0, 1)");
    Tensor inputs_embeds = token_emb(input_ids);
    ch.show("inputs_embeds.size()", size_str(shape_of(inputs_embeds)), "[batch_size, seq_len, hidden_dim] = (B,T,C)");
    ch.show("inputs_embeds", inputs_embeds, {"EmbeddingBackward0"},
            "each row is the table row of its id: the lookup copies, it does not compute", Shown::Twin);
    Tensor row = xt::view(token_emb.weight, id_list[0], xt::range(0, 8));
    ch.show(fmt::format("token_emb.weight[{}, :8]", id_list[0]), row, {"SliceBackward0"},
            "the same numbers as the first row above: the embedding of '" + pieces[0] + "'", Shown::Twin);
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
    hopt.title = "positional encoding: rows = positions, columns = dimensions (every k-th)";
    hopt.cell_width = 1;
    hopt.max_cols = 96;
    hopt.max_rows = 50;
    ch.figure(heatmap(pe, {}, {}, hopt));

    // ---------------------------------------------------------------- 5) why x * sqrt(d_model)
    ch.section("Step 5: why embeddings are multiplied by sqrt(d_model)", "article 001; article 002 Embeddings");
    const double d = static_cast<double>(config.hidden_size);
    Tensor xavier_like = inputs_embeds / static_cast<float>(std::sqrt(d));
    ch.say(fmt::format(
        "  A table initialised with variance 1/d (xavier-style, as articles 001/002 assume) has entries of std {:.4f};\n"
        "  sin/cos positions have std {:.4f}. Added as they are, position would drown the token.\n"
        "  Multiplying by sqrt(d) = {:.4f} brings the token part back to std {:.4f}, the same scale as the positions.",
        spread(xavier_like), spread(pe), std::sqrt(d), spread(xavier_like * static_cast<float>(std::sqrt(d)))));
  });
}
