// train/beam_models.cpp: ch11's module (ch10's EncoderDecoder) one row at a time with a
// DecoderLayerCache per layer per beam, ch12's GPT with a KVCache per block per beam, and both recomputing
// every prefix (the reference).
#include "train/beam_models.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/code_site.hpp"

namespace ts::train {

// ================================================================ both: a cache per beam
namespace {

// Every live beam's next-token log-probabilities (L,V), one cached step per beam: the beam's
// last token (or `first` while it has written none) fed by step(cache, token, logits).
template <class Cache, class Step>
std::vector<double> cached_log_probs(std::vector<Cache>& beams, const std::vector<std::vector<int64_t>>& prefixes,
                                     int64_t first, int64_t V, const Step& step) {
  if (prefixes.size() != beams.size()) throw std::logic_error("beam search: one cache per beam");
  std::vector<double> out;
  std::vector<float> logits(static_cast<size_t>(V));
  for (size_t i = 0; i < prefixes.size(); ++i) {
    step(beams[i], prefixes[i].empty() ? first : prefixes[i].back(), logits.data());
    const std::vector<double> row = log_softmax_row(logits.data(), V);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// New beam i continues old beam parent[i]: its cache becomes a copy of the parent's (a copy,
// not a move: two children may share a parent).
template <class Cache>
void reorder_caches(std::vector<Cache>& beams, const std::vector<int64_t>& parent) {
  std::vector<Cache> next;
  for (int64_t p : parent) next.push_back(beams[size_t(p)]);
  beams = std::move(next);
}

}  // namespace

static std::string site(const CodeSite& s) { return code_site_path(s.file) + ":" + std::to_string(s.line) + " " + s.func; }
std::string translation_cache_site() { return kv_cache_append_site(); }

// ================================================================ ch11
TranslationBeams::TranslationBeams(const Model<float>& m, int64_t number)
    : TranslationBeams(std::make_shared<EncoderDecoder>(training_module(m)), m.cfg, number) {}

TranslationBeams::TranslationBeams(std::shared_ptr<EncoderDecoder> module, const ModelConfig& cfg, int64_t number)
    : module_(std::move(module)), cfg_(cfg) {
  module_->train(false);
  // 1) the encoder, once: memory = encode(source, its padding mask)   (1,S,C)
  Batch b = make_batch({number});
  b.T = 1, b.tar_inp = {target_vocab().start()}, b.tar_real = {kPad};
  const ModuleInputs in = module_inputs(b, cfg.look_ahead);
  memory_ = module_->encode(in.src, &in.enc);
  // 2) the decoder's source mask (1,1,S), true = a real source token
  src_mask_ = BTensor::from_shape({1, 1, size_t(b.S)});
  for (int64_t s = 0; s < b.S; ++s) src_mask_.data()[s] = b.inputs[size_t(s)] != kPad;
  // 3) one empty cache per decoder layer: the first beam (the memory's keys and values are
  //    projected at its first step, then copied along with the cache)
  beams_.emplace_back(module_->decoder.layers.size());
}

int64_t TranslationBeams::end_id() const { return target_vocab().end(); }

std::vector<double> TranslationBeams::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  // the decoder input is [start] + prefix: its last token's row, at its position, through the
  // module's own decoder with the beam's caches (self-attention reads the cached past)
  if (prefixes.size() != beams_.size()) throw std::logic_error("beam search: one cache per beam");
  const int64_t V = vocab(), C = cfg_.d_model;
  std::vector<double> out;
  for (size_t i = 0; i < prefixes.size(); ++i) {
    const size_t t = prefixes[i].size() + 1;
    ITensor tgt = ITensor::from_shape({1, t});
    tgt.data()[0] = target_vocab().start();
    std::copy(prefixes[i].begin(), prefixes[i].end(), tgt.data() + 1);
    const Tensor emb = module_->tgt_embed(tgt);  // (1,t,C): lut * sqrt(C) + pe
    Tensor x = Tensor::from_shape({1, 1, size_t(C)});
    std::copy_n(emb.data() + (t - 1) * size_t(C), C, x.data());
    const Tensor y = module_->decoder(x, memory_, &src_mask_, nullptr, &beams_[i]);  // (1,1,C)
    const Tensor logits = module_->generator.proj(y);                                  // (1,1,V)
    const std::vector<double> row = log_softmax_row(logits.data(), V);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// the line below: TranslationBeams::reorder's own
const CodeSite kTranslationReorderSite{__FILE__, __LINE__ + 1, "TranslationBeams::reorder"};
void TranslationBeams::reorder(const std::vector<int64_t>& parent) { reorder_caches(beams_, parent); }

int64_t TranslationRecompute::end_id() const { return target_vocab().end(); }

TranslationRecompute::TranslationRecompute(const Model<float>& m, int64_t number)
    : module_(training_module(m)), cfg_(m.cfg), number_(number) {
  module_.train(false);
}

std::vector<double> TranslationRecompute::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  // the training forward on [start] + prefix, every live beam as one row of a batch, with
  // create_mask's masks: logits = proj(decode(encode(src), tar_inp)), the last position
  const int64_t Lb = static_cast<int64_t>(prefixes.size()), V = vocab();
  const int64_t T = static_cast<int64_t>(prefixes.front().size()) + 1;
  Batch b = make_batch(std::vector<int64_t>(size_t(Lb), number_));
  b.T = T;
  b.tar_inp.clear();
  for (const auto& pre : prefixes) {
    b.tar_inp.push_back(target_vocab().start());
    b.tar_inp.insert(b.tar_inp.end(), pre.begin(), pre.end());
  }
  b.tar_real.assign(size_t(Lb * T), kPad);
  const ModuleInputs in = module_inputs(b, cfg_.look_ahead);
  // every row has the same length, so no position is padding: a <pad> the beam emitted (an untrained
  // model may) is a token the cached decoder and greedy decoding attend to, not one create_mask
  // should hide; the self-attention mask is built as if it were any other token
  Batch unpadded = b;
  for (int64_t& id : unpadded.tar_inp)
    if (id == kPad) id = target_vocab().start();
  const ModuleInputs masks = module_inputs(unpadded, cfg_.look_ahead);
  const Tensor memory = module_.encode(in.src, &in.enc);
  const Tensor logits = module_.generator.proj(module_.decode(memory, &in.cross, in.tgt, &masks.self));  // (L,T,V)
  std::vector<double> out;
  for (int64_t i = 0; i < Lb; ++i) {
    const std::vector<double> row = log_softmax_row(logits.data() + (i * T + T - 1) * V, V);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<std::vector<int64_t>> beam_translate(const Model<float>& m, const std::vector<int64_t>& numbers,
                                                 const BeamOptions& opt) {
  std::vector<std::vector<int64_t>> out;
  const auto module = std::make_shared<EncoderDecoder>(training_module(m));  // one module for every number
  for (int64_t n : numbers) {
    TranslationBeams beams(module, m.cfg, n);
    out.push_back(beam_search(beams, opt).best().tokens);
  }
  return out;
}

// ================================================================ ch12
GptBeams::GptBeams(std::shared_ptr<GPT> g, int64_t number)
    : g_(std::move(g)), prompt_(encode_prompt(number)) {
  // the prompt but its last token: its keys and values into the first beam's caches, one forward
  beams_.push_back(g_->make_caches());
  if (prompt_.size() > 1) next_logits(*g_, beams_[0], std::vector<int64_t>(prompt_.begin(), prompt_.end() - 1));
}
GptBeams::GptBeams(const Gpt& m, int64_t number) : GptBeams(std::make_shared<GPT>(m.module()), number) {}

int64_t GptBeams::vocab() const { return g_->config.vocab_size; }
int64_t GptBeams::end_id() const { return seq_vocab().end; }

int64_t GptBeams::max_len() const { return g_->config.block_size - static_cast<int64_t>(prompt_.size()) + 1; }

std::vector<double> GptBeams::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  // the prompt but its last token is in the cache: feed that token first, then the beam's
  return cached_log_probs(beams_, prefixes, prompt_.back(), vocab(), [&](GptCache& c, int64_t token, float* logits) {
    const std::vector<float> l = next_logits(*g_, c, {token});  // the modules' forward with the beam's caches
    std::copy(l.begin(), l.end(), logits);
  });
}

// the line below: GptBeams::reorder's own
const CodeSite kGptReorderSite{__FILE__, __LINE__ + 1, "GptBeams::reorder"};
void GptBeams::reorder(const std::vector<int64_t>& parent) { reorder_caches(beams_, parent); }

GptRecompute::GptRecompute(std::shared_ptr<GPT> g, int64_t number) : g_(std::move(g)), prompt_(encode_prompt(number)) {}
GptRecompute::GptRecompute(const Gpt& m, int64_t number) : GptRecompute(std::make_shared<GPT>(m.module()), number) {}

int64_t GptRecompute::vocab() const { return g_->config.vocab_size; }
int64_t GptRecompute::end_id() const { return seq_vocab().end; }

std::vector<double> GptRecompute::log_probs(const std::vector<std::vector<int64_t>>& prefixes) {
  std::vector<double> out;
  for (const auto& pre : prefixes) {
    std::vector<int64_t> ids = prompt_;
    ids.insert(ids.end(), pre.begin(), pre.end());
    const std::vector<float> logits = last_logits(*g_, ids);
    const std::vector<double> row = log_softmax_row(logits.data(), vocab());
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<std::vector<int64_t>> beam_complete(const Gpt& m, const std::vector<int64_t>& numbers, BeamOptions opt) {
  std::vector<std::vector<int64_t>> out;
  const auto g = std::make_shared<GPT>(m.module());  // one module for every number
  for (int64_t n : numbers) {
    GptBeams beams(g, n);
    opt.max_len = beams.max_len();
    out.push_back(beam_search(beams, opt).best().tokens);
  }
  return out;
}

std::string translation_reorder_site() { return site(kTranslationReorderSite); }
std::string gpt_reorder_site() { return site(kGptReorderSite); }

// ================================================================ the cache check
static void add(CacheCheck& c, const CompareBeams& b, int64_t K) {
  c.maxdiff = std::max(c.maxdiff, b.maxdiff);
  c.scale = std::max(c.scale, b.scale);
  if (K == 1) c.maxdiff_one = std::max(c.maxdiff_one, b.maxdiff);
  c.rows += b.rows, c.argmax_differ += b.argmax_differ, c.moved += b.moved;
}

// each number searched with one beam and with opt.K, the cached model beside the recomputing one
template <class Cached, class Full, class M, class MaxLen>
static CacheCheck check_cache(const M& m, const std::vector<int64_t>& numbers, const BeamOptions& opt,
                              const MaxLen& max_len) {
  CacheCheck c;
  c.K = opt.K;
  c.numbers = static_cast<int64_t>(numbers.size());
  for (int64_t n : numbers)
    for (int64_t K : {int64_t(1), opt.K}) {
      Cached cached(m, n);
      Full full(m, n);
      CompareBeams both(cached, full);
      beam_search(both, BeamOptions{K, opt.alpha, max_len(cached)});
      add(c, both, K);
    }
  return c;
}

CacheCheck check_translation_cache(const Model<float>& m, const std::vector<int64_t>& numbers, const BeamOptions& opt) {
  return check_cache<TranslationBeams, TranslationRecompute>(m, numbers, opt,
                                                             [&](const TranslationBeams&) { return opt.max_len; });
}

CacheCheck check_gpt_cache(const Gpt& m, const std::vector<int64_t>& numbers, BeamOptions opt) {
  const auto g = std::make_shared<GPT>(m.module());  // one module, cached and recomputing
  return check_cache<GptBeams, GptRecompute>(g, numbers, opt, [](const GptBeams& b) { return b.max_len(); });
}

}  // namespace ts::train
