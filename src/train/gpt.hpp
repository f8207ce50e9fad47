// train/gpt.hpp: what training adds to ch12's decoder-only Transformer (introduced in ch12). The
// model itself is the modules' GPT (src/transformer/gpt.hpp: wte + wpe, N pre-LN blocks of the
// course's attention and a GELU feed-forward, ln_f, the head tied to wte), written once; here:
//   the task as one sequence:  2 0 4 8 = two thousand forty eight <end>, the loss counting only
//     the answer (the prompt positions' targets are <pad>)
//   the checkpoint's names for the modules' parameters, nanoGPT's state_dict keys
//     (transformer.h.0.attn.c_attn.weight, ...: c_attn (3C,C) holds the q, k, v Linears' rows),
//     and GPT-2's init
//   the loss (token_losses), the batch in parts (train/batch_parts.hpp), generation's cache calls,
//   checkpoints, and what the chapter measures on the module (wiring, --check-grads).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exact/rng.hpp"
#include "train/adam.hpp"
#include "train/checkpoint.hpp"
#include "train/gradcheck.hpp"
#include "train/params.hpp"
#include "train/rng.hpp"
#include "transformer/gpt.hpp"

namespace ts::train {

// ---------------------------------------------------------------- the task as one sequence
// ids: 0 <pad>, 1..10 the digits, 11 "=", then ch11's 30 words, then <end>
struct SeqVocab {
  std::vector<std::string> words;  // words[id]
  int64_t eq = 0, end = 0;         // the ids of "=" and "<end>"
  int64_t size() const { return static_cast<int64_t>(words.size()); }  // V
  std::string decode(const std::vector<int64_t>& ids) const;  // the words of ids, <end> and digits dropped
  std::string spelled(const std::vector<int64_t>& ids) const;  // every id's word (digits, "=", <end> too)
};
const SeqVocab& seq_vocab();
std::vector<int64_t> encode_prompt(int64_t n);    // digits, "="
std::vector<int64_t> encode_sequence(int64_t n);  // digits, "=", words, <end>

// A padded batch of whole sequences: x = seq[:-1], y = seq[1:] with the prompt's targets and
// the padding set to <pad> (0), which the loss skips.
struct SeqBatch {
  int64_t B = 0, T = 0;
  std::vector<int64_t> numbers;  // (B)
  std::vector<int64_t> x, y;     // (B,T)
  int64_t answer_tokens() const;  // targets that count: y != <pad>
};
SeqBatch make_seq_batch(const std::vector<int64_t>& numbers);
SeqBatch slice_seq_batch(const SeqBatch& b, int64_t r0, int64_t r1);

// ---------------------------------------------------------------- the model
struct GptConfig {
  int64_t vocab = 0, ctx = 16;   // V, T_ctx (rows of wpe)
  int64_t layers = 2, d_model = 64, heads = 4, d_ff = 256;
  double dropout = 0.0;
  bool tied = true;              // logits use wte (GPT-2) or their own lm_head.weight
  bool causal = true;            // false: no causal mask (an exercise: the model then sees the answer)
};

// The attention mask the modules' GPT builds for a sequence of T tokens (gpt_causal_mask, read
// back), as (T,T) 1 = hide: with cfg.causal query t sees keys 0..t; without, nothing is hidden.
// Where to edit it: gpt_causal_mask_site() (transformer/gpt.hpp).
std::vector<float> gpt_mask(const GptConfig& cfg, int64_t T);
// the same for make_seq_batch (the targets)
std::string make_seq_batch_site();

// ---------------------------------------------------------------- the module it trains
// The modules' GPT (src/transformer/gpt.hpp) of a config: the same sizes, settings and dropout.
GPTConfig module_config(const GptConfig& cfg);
// The checkpoint's names for g's parameters: nanoGPT's state_dict keys (the twin's), in its order
// (which is also the order of GPT-2's init draws): transformer.wte, wpe, then per block ln_1,
// attn.c_attn (3C,C) = the q, k and v Linears' weights one after another (and c_attn.bias their
// biases), attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj; ln_f; lm_head when g lists one. A parameter
// of g that none of these names keeps its own name.
std::vector<CheckpointKey> gpt_checkpoint_keys(GPT& g);

// The loss of ch12, per position: -log softmax(logits_n)[y_n] where y_n != <pad>, else 0
// logits (N,V), y (N) -> (N)
std::vector<double> token_losses(const Tensor& logits, const std::vector<int64_t>& y);
// its backward for loss = scale * sum_n loss_n: dlogits_n = scale (softmax(logits_n) - onehot(y_n)),
// 0 where y_n = <pad>   (N,V)
Tensor token_losses_backward(const Tensor& logits, const std::vector<int64_t>& y, float scale);
// token_losses's file and line, from the compiler
std::string token_losses_site();

// The model, its gradients and its threads: forward, zero_grad, backward, as torch's loop.
// The modules hold the weights (model) and their gradients (grad): Adam steps over their
// named_parameters(), the checkpoint saves them under keys; each forward copies the model's
// weights into the module of every batch part, whose forward keeps what its backward needs.
class Gpt {
 public:
  GptConfig cfg;
  GPT model;  // the weights (dropout off: what generation and the probes run)
  GPT grad;   // d loss / d every parameter of model: the parts' sums, in part order
  std::vector<CheckpointKey> keys;  // gpt_checkpoint_keys(model)
  // GPT-2's init: N(0, 0.02) weights, c_proj weights N(0, 0.02 / sqrt(2 N)), zero biases,
  // LayerNorm 1 and 0; from the course's seeded generator, in the checkpoint keys' order
  Gpt(const GptConfig& c, uint64_t seed, int threads);
  // loss = mean cross-entropy over the answer tokens of b (the batch in kBatchParts parts, each
  // through its own GPT module, which the threads take: results do not depend on the thread count)
  double forward(const SeqBatch& b, bool training);
  void zero_grad();
  void backward();  // d loss / d params of the last forward into grad (the parts' sums in part order)
  NamedTensors parameters() { return model.named_parameters(); }
  NamedTensors gradients() { return grad.named_parameters(); }
  size_t parameter_count();  // every weight of model
  int64_t correct() const { return correct_; }  // argmax == target over the answer tokens
  int64_t tokens() const { return tokens_; }
  int threads() const { return threads_; }
  // a copy of the model, dropout off (generation, probes)
  GPT module() const { return model; }

 private:
  int threads_ = 1;  // threads that take the batch's parts (results do not depend on it)
  // One part of the batch: its own module and gradient module (and their named_parameters()),
  // its dropout generator, its rows and its logits.
  struct Part {
    GPT model, grads;
    NamedTensors params, gparams;  // their named_parameters()
    Generator generator;
    SeqBatch batch;
    Tensor logits;  // (B,T,V) of the last forward
  };
  std::vector<std::unique_ptr<Part>> parts_;  // kBatchParts (heap: the named pointers stay put)
  int64_t used_ = 0;                          // parts the last forward used
  int64_t correct_ = 0, tokens_ = 0;
};

// The SIMD route ("avx512", "avx2", "neon", "scalar") whose GELU backward the last training step
// ran, "" when none did (the modules' plain loop ran: --naive, or an edit the module's probe caught).
std::string gelu_backward_route();

// ---------------------------------------------------------------- generation
// Generation runs the modules' GPT with its cache argument (transformer/gpt.hpp): one KVCache per
// block; each forward appends the new positions' keys and values and attends over all of them.
using GptCache = std::vector<KVCache>;
// logits (V) of the last of `ids` fed at positions len..len+n through g, appended to the cache
// (the prompt in one forward, then one token per call)
std::vector<float> next_logits(GPT& g, GptCache& cache, const std::vector<int64_t>& ids);
// The logits (V) of the last position, recomputing the whole prefix (no cache).
std::vector<float> last_logits(GPT& g, const std::vector<int64_t>& ids);

// ---------------------------------------------------------------- checkpoints (safetensors, as ch11)
// DIR/model.safetensors (nanoGPT's keys) + DIR/optimizer.safetensors (Adam's moments)
void save_gpt(const std::string& dir, Gpt& m, const Adam& adam);
// Reads the sizes from the file's metadata: returns the config it was saved with.
GptConfig gpt_checkpoint_config(const std::string& dir);
void load_gpt(const std::string& dir, Gpt& m, Adam& adam);

// ---------------------------------------------------------------- the block's wiring
// Where the modules' GPT puts a block's LayerNorms, measured on one token (train/wiring.hpp):
// "pre-LN" (x + f(ln(x))), "post-LN" (ln(x + f(x))), or "" for neither.
std::string gpt_block_wiring();

// ---------------------------------------------------------------- --check-grads
// every parameter tensor of a tiny model (the modules' GPT, float) vs central differences,
// h = kFdStepFloat (train/gradcheck.hpp). A tensor passes when maxdiff <= kGptFdTolerance *
// max(max |fd|, kGptFdFloor): tighter than ch11's 5 %, since GELU has no kink for the step to
// cross; the float loss's rounding alone measured maxdiff <= 6.4e-5, at most 0.15 % of a
// tensor's max |grad| (0.025 to 0.41) on the tiny model, so the floor's 3e-4 leaves it 4x room.
constexpr double kGptFdTolerance = 1e-2, kGptFdFloor = 3e-2;
std::vector<GradCheckRow> gpt_check_grads(const GptConfig& tiny, uint64_t seed, const std::vector<int64_t>& numbers);

}  // namespace ts::train
