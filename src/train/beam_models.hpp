// train/beam_models.hpp: ch11's and ch12's models as beam search sees them (train/beam.hpp),
// each twice: with a cache per beam (fast), and recomputing every prefix (the reference the
// cache is checked against). Introduced in ch11 (--beam), used by ch12.
//
// ch11 (TranslationBeams), per source number, through ch10's EncoderDecoder itself:
//   memory = encode(source)                           once        (1,S,C)
//   per beam, per step: the new token's row through the module's decoder with the beam's
//   DecoderLayerCache per layer (self-attention keys/values appended; the memory's keys and
//   values projected at the first step, then kept)
//   pruning: beam i's caches become a copy of its parent's
// ch12 (GptBeams), through the modules' GPT (transformer/gpt.hpp): one KVCache per block per beam,
// handed to GPT::forward with the beam's new token; the prompt is fed once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "train/beam.hpp"
#include "train/gpt.hpp"
#include "train/trainer.hpp"
#include "transformer/annotated.hpp"

namespace ts::train {

// ---------------------------------------------------------------- ch11: the encoder-decoder
// ch10's EncoderDecoder as ch11 trains it (training_module), in eval mode.
class TranslationBeams : public BeamModel {
 public:
  TranslationBeams(const Model<float>& m, int64_t number);  // runs the encoder once
  // the same on a module already built (beam_translate builds one for all its numbers)
  TranslationBeams(std::shared_ptr<EncoderDecoder> module, const ModelConfig& cfg, int64_t number);
  int64_t vocab() const override { return cfg_.tgt_vocab; }
  int64_t end_id() const override;
  std::vector<double> log_probs(const std::vector<std::vector<int64_t>>& prefixes) override;
  void reorder(const std::vector<int64_t>& parent) override;

 private:
  std::shared_ptr<EncoderDecoder> module_;
  ModelConfig cfg_;
  Tensor memory_;                                     // (1,S,C) encode(source)
  BTensor src_mask_;                                  // (1,1,S) true = a real source token
  std::vector<std::vector<DecoderLayerCache>> beams_;  // per live beam: one cache per decoder layer
};

// The same log-probabilities by the module's full forward on [start] + prefix, all the live
// beams as one batch, create_mask's masks: no cache, nothing to reorder.
class TranslationRecompute : public BeamModel {
 public:
  TranslationRecompute(const Model<float>& m, int64_t number);
  int64_t vocab() const override { return cfg_.tgt_vocab; }
  int64_t end_id() const override;
  std::vector<double> log_probs(const std::vector<std::vector<int64_t>>& prefixes) override;
  void reorder(const std::vector<int64_t>&) override {}

 private:
  EncoderDecoder module_;
  ModelConfig cfg_;
  int64_t number_;
};

// What a cached translation step runs beyond the full forward: the cache's append
// (src/transformer/annotated.cpp KVCache::append, file and line from the compiler).
std::string translation_cache_site();
// TranslationBeams::reorder's and GptBeams::reorder's file and line, the same way
std::string translation_reorder_site();
std::string gpt_reorder_site();

// The best hypothesis of every number (its tokens, without <end>): the cached model.
std::vector<std::vector<int64_t>> beam_translate(const Model<float>& m, const std::vector<int64_t>& numbers,
                                                 const BeamOptions& opt);

// ---------------------------------------------------------------- ch12: the GPT
class GptBeams : public BeamModel {
 public:
  GptBeams(std::shared_ptr<GPT> g, int64_t number);  // feeds the prompt "N =" but its last token
  GptBeams(const Gpt& m, int64_t number);            // the same through m.module()
  int64_t vocab() const override;
  int64_t end_id() const override;
  std::vector<double> log_probs(const std::vector<std::vector<int64_t>>& prefixes) override;
  void reorder(const std::vector<int64_t>& parent) override;
  int64_t max_len() const;  // steps until the context (block_size tokens) is full, as generate() stops

 private:
  std::shared_ptr<GPT> g_;
  std::vector<int64_t> prompt_;
  std::vector<GptCache> beams_;  // one cache (a KVCache per block) per beam
};

class GptRecompute : public BeamModel {
 public:
  GptRecompute(std::shared_ptr<GPT> g, int64_t number);
  GptRecompute(const Gpt& m, int64_t number);
  int64_t vocab() const override;
  int64_t end_id() const override;
  std::vector<double> log_probs(const std::vector<std::vector<int64_t>>& prefixes) override;
  void reorder(const std::vector<int64_t>&) override {}

 private:
  std::shared_ptr<GPT> g_;
  std::vector<int64_t> prompt_;
};

std::vector<std::vector<int64_t>> beam_complete(const Gpt& m, const std::vector<int64_t>& numbers, BeamOptions opt);

// ---------------------------------------------------------------- the cache check
// Searches of width opt.K on `numbers`, the cached model beside the one that recomputes
// (CompareBeams): the largest |log p cached - log p recomputed| and what was compared.
// Each number is searched twice: with one beam (no cache ever changes slot: the step alone) and
// with K beams (pruning copies caches: the step and the reorder).
struct CacheCheck {
  double maxdiff = 0;      // over both searches
  double maxdiff_one = 0;  // over the one-beam searches only
  double scale = 0;        // max |log p recomputed| over both searches (the tolerance scales with it)
  int64_t rows = 0, argmax_differ = 0, moved = 0, numbers = 0, K = 0;
};
CacheCheck check_translation_cache(const Model<float>& m, const std::vector<int64_t>& numbers, const BeamOptions& opt);
CacheCheck check_gpt_cache(const Gpt& m, const std::vector<int64_t>& numbers, BeamOptions opt);

}  // namespace ts::train
