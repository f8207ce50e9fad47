// translation.cpp: chapter 10's toy translation pieces (see translation.hpp).
#include "course/translation.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "course/errors.hpp"
#include "course/i18n.hpp"
#include "exact/tensor_ops.hpp"
#include "text/tokenizer.hpp"
#include "transformer/kv_cache.hpp"

namespace ts {

const std::vector<std::string> kFrench = {
    "<pad>", "<bos>", "<eos>", "<unk>", "comment", "et",   "es-vous", "?",   "je", "ne", "parle",
    "pas",   "français", "bonjour", "merci", "vous", "allez", "bien", "très", "oui", "non", "le",
    "la",    "un",  "une",   "!",     ".",   ",",    "suis",    "étudiant", "ça", "va"};

std::string french(int64_t id) {
  return id >= 0 && id < static_cast<int64_t>(kFrench.size()) ? kFrench[static_cast<size_t>(id)]
                                                                : fmt::format("<{}>", id);
}

std::string words(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += (s.empty() ? "" : " ") + french(id);
  return s;
}

// ids (1,T) as an int64 tensor
ITensor id_tensor(const std::vector<int64_t>& ids) {
  ITensor t = ITensor::from_shape({1, ids.size()});
  std::copy(ids.begin(), ids.end(), t.begin());
  return t;
}

// (ids != pad).unsqueeze(-2): true on real tokens.   (1,T) -> (1,1,T) bool
BTensor pad_mask(const std::vector<int64_t>& ids, int64_t pad) {
  BTensor m = BTensor::from_shape({1, 1, ids.size()});
  for (size_t i = 0; i < ids.size(); ++i) m(0, 0, i) = ids[i] != pad;
  return m;
}

// x[:, -1]: the last position.   (B,T,C) -> (B,C)
Tensor last_row(const Tensor& x) { return position(x, x.shape()[1] - 1); }

// x.argmax(dim=-1) of batch 0, the first of equal maxima as torch.   (1,T,V) -> T ids
std::vector<int64_t> argmax_lastdim(const Tensor& x) {
  const size_t T = x.shape()[1], V = x.shape()[2];
  std::vector<int64_t> ids;
  for (size_t t = 0; t < T; ++t) {
    const float* row = x.data() + t * V;
    ids.push_back(std::max_element(row, row + V) - row);
  }
  return ids;
}

// logp.topk(k) of row 0: (id, log-prob), largest first.   (1,V) -> k pairs
std::vector<std::pair<int64_t, float>> top_k(const Tensor& logp, size_t k) {
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
std::string top_line(const std::vector<std::pair<int64_t, float>>& top) {
  std::string s;
  for (const auto& [id, lp] : top) s += fmt::format("{}{} {:.4f}", s.empty() ? "" : ", ", french(id), lp);
  return s;
}

// {part: numel} by the state_dict prefix before the first '.', and one encoder / decoder layer.
ParameterCounts count_parameters(EncoderDecoder& model) {
  ParameterCounts c;
  for (auto& [name, p] : model.named_parameters()) {
    c.add(first_field(name), p->size());
    if (name.rfind("encoder.layers.0.", 0) == 0) c.encoder_layer += p->size();
    if (name.rfind("decoder.layers.0.", 0) == 0) c.decoder_layer += p->size();
  }
  return c;
}

// model.training: every dropout of the model follows model.train(on); the positional encoding's stands for all
double max_dropout(const EncoderDecoder& model) {
  double p = std::max(model.src_embed.pos.dropout.p, model.tgt_embed.pos.dropout.p);
  const auto attn = [&](const MultiHeadedAttention& a) { p = std::max(p, a.dropout.p); };
  const auto rest = [&](const FeedForward& ff, const std::vector<SublayerConnection>& subs) {
    p = std::max(p, ff.dropout.p);
    for (const SublayerConnection& s : subs) p = std::max(p, s.dropout.p);
  };
  for (const EncoderLayer& l : model.encoder.layers) attn(l.self_attn), rest(l.feed_forward, l.sublayer);
  for (const DecoderLayer& l : model.decoder.layers) attn(l.self_attn), attn(l.src_attn), rest(l.feed_forward, l.sublayer);
  return p;
}

bool in_train_mode(const EncoderDecoder& model) { return model.src_embed.pos.dropout.training; }

TranslationInputs read_translation_inputs(Chapter& ch, const std::string& target, int64_t src_vocab) {
  WordPieceTokenizer tokenizer = load_tokenizer(ch.vocab_path);
  const std::vector<std::string> pieces = tokenizer.tokenize(ch.text);
  if (pieces.empty()) throw UsageError(_("--text has no tokens: give an English sentence, e.g. \"How are you?\""));
  if (pieces.size() + 2 > 256)
    throw UsageError(trf("--text has {n} tokens with BOS/EOS; this chapter takes at most 256: shorten it",
                         fmt::arg("n", pieces.size() + 2)));
  // src = [CLS] pieces [SEP]: bert-base-uncased's [CLS] and [SEP] serve as BOS and EOS
  std::vector<int64_t> src_ids = tokenizer.encode(ch.text, true);
  std::vector<std::string> src_tokens = {"[CLS]"};
  src_tokens.insert(src_tokens.end(), pieces.begin(), pieces.end());
  src_tokens.push_back("[SEP]");
  // the largest id the text needs: a table of that many rows + 1 takes every token
  size_t i = 0;
  for (size_t k = 1; k < src_ids.size(); ++k)
    if (src_ids[k] > src_ids[i]) i = k;
  if (src_ids[i] >= src_vocab)
    throw UsageError(trf("--src-vocab {given} is too small: '{token}' has id {id} in {file}, the largest id of the "
                         "text, so the source table needs at least {rows} rows",
                         fmt::arg("given", typed("--src-vocab", src_vocab)), fmt::arg("token", src_tokens[i]),
                         fmt::arg("id", src_ids[i]),
                         fmt::arg("file", ch.given("--vocab") ? _("the --vocab file") : "bert-base-uncased"),
                         fmt::arg("rows", src_ids[i] + 1)));
  // tgt = <bos> + the French words (a word outside the list becomes <unk>)
  std::vector<int64_t> tgt_ids = {kFrBos};
  for (const std::string& w : python_split(target)) {  // the twin's target.split()
    const auto it = std::find(kFrench.begin(), kFrench.end(), w);
    tgt_ids.push_back(it == kFrench.end() ? kFrUnk : static_cast<int64_t>(it - kFrench.begin()));
  }
  if (tgt_ids.size() == 1)
    throw UsageError(_("--target has no words: give the French words the decoder reads, e.g. \"comment et es-vous ?\""));
  if (tgt_ids.size() > 64)
    throw UsageError(trf("--target has {n} words; this chapter takes at most 63", fmt::arg("n", tgt_ids.size() - 1)));
  return {src_ids, tgt_ids, src_tokens};
}

}  // namespace ts
