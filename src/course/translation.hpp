// translation.hpp: the pieces of chapter 10's toy translation that are not the model: the
// French target list, ids <-> words, id tensors and padding masks, argmax / top-k of the
// generator's log-probabilities, and the parameter count per part of the model (introduced in
// ch10).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "course/counts.hpp"
#include "course/chapter.hpp"
#include "exact/tensor.hpp"
#include "transformer/annotated.hpp"

namespace ts {

// The target side's vocabulary: a small French word list chosen for chapter 10 (no French
// tokenizer ships with the course). Ids beyond the list (--tgt-vocab > 32) have no word.
extern const std::vector<std::string> kFrench;
constexpr int64_t kFrPad = 0, kFrBos = 1, kFrEos = 2, kFrUnk = 3;

// kFrench[id], or "<id>" beyond the list
std::string french(int64_t id);
// the words of ids, space-separated
std::string words(const std::vector<int64_t>& ids);
// ids (1,T) as an int64 tensor
ITensor id_tensor(const std::vector<int64_t>& ids);
// (ids != pad).unsqueeze(-2): true on real tokens.   (1,T) -> (1,1,T) bool
BTensor pad_mask(const std::vector<int64_t>& ids, int64_t pad);
// x[:, -1]: the last position.   (B,T,C) -> (B,C)
Tensor last_row(const Tensor& x);
// x.argmax(dim=-1) of batch 0, the first of equal maxima as torch.   (1,T,V) -> T ids
std::vector<int64_t> argmax_lastdim(const Tensor& x);
// logp.topk(k) of row 0: (id, log-prob), largest first.   (1,V) -> k pairs
std::vector<std::pair<int64_t, float>> top_k(const Tensor& logp, size_t k);
// "comment -3.1416, et -3.2000, ..."
std::string top_line(const std::vector<std::pair<int64_t, float>>& top);

// {part: numel} by the state_dict prefix before the first '.', and one encoder / decoder layer.
struct ParameterCounts : PartCounts {
  uint64_t encoder_layer = 0, decoder_layer = 0;
  std::string table() const { return PartCounts::table(10, 12); }  // "encoder       4,739,072" ... (the twin's)
};
ParameterCounts count_parameters(EncoderDecoder& model);
// The source and target of --text / --target as ids: src = [CLS] pieces [SEP] (bert-base-uncased's
// [CLS] and [SEP] serve as BOS and EOS), tgt = <bos> + the French words (a word outside the list
// becomes <unk>). Bad input (no tokens, too many, a --src-vocab too small) -> UsageError.
struct TranslationInputs {
  std::vector<int64_t> src_ids, tgt_ids;
  std::vector<std::string> src_tokens;  // [CLS] pieces [SEP]
};
TranslationInputs read_translation_inputs(Chapter& ch, const std::string& target, int64_t src_vocab);
// The largest dropout rate of the model's Dropout modules (create_model's `dropout`, and the
// MultiHeadedAttention default 0.1 that listing 9.6 keeps)
double max_dropout(const EncoderDecoder& model);
// model.training: every dropout of the model follows model.train(on); the positional encoding's stands for all
bool in_train_mode(const EncoderDecoder& model);

}  // namespace ts
