// train/params.cpp: see params.hpp.
#include "train/params.hpp"

#include <algorithm>
#include <stdexcept>

#include "exact/rng.hpp"
#include "transformer/annotated.hpp"

namespace ts::train {

Layout make_layout(const ModelConfig& cfg) {
  Layout L;
  const int64_t C = cfg.d_model, Fd = cfg.d_ff;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    ParamSpec p{name, std::move(shape), L.total, 1};
    for (int64_t d : p.shape) p.numel *= static_cast<size_t>(d);
    L.total += p.numel;
    L.specs.push_back(p);
  };
  auto attn = [&](const std::string& pre) {  // linears 0..3: query, key, value, output (C,C), (C)
    for (int i = 0; i < 4; ++i) {
      add(pre + ".linears." + std::to_string(i) + ".weight", {C, C});
      add(pre + ".linears." + std::to_string(i) + ".bias", {C});
    }
  };
  auto ffn = [&](const std::string& pre) {  // w_1 (F,C), b_1 (F), w_2 (C,F), b_2 (C)
    add(pre + ".w_1.weight", {Fd, C});
    add(pre + ".w_1.bias", {Fd});
    add(pre + ".w_2.weight", {C, Fd});
    add(pre + ".w_2.bias", {C});
  };
  auto norm = [&](const std::string& pre) {  // a_2, b_2 (C)
    add(pre + ".a_2", {C});
    add(pre + ".b_2", {C});
  };
  // article 002's Transformer.parameters(): encoder, decoder, src_embed, tgt_embed, generator
  for (int64_t i = 0; i < cfg.layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    attn(p + ".self_attn");
    ffn(p + ".feed_forward");
    for (int s = 0; s < 2; ++s) norm(p + ".sublayer." + std::to_string(s) + ".norm");
  }
  norm("encoder.norm");
  for (int64_t i = 0; i < cfg.layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    attn(p + ".self_attn");
    attn(p + ".src_attn");
    ffn(p + ".feed_forward");
    for (int s = 0; s < 3; ++s) norm(p + ".sublayer." + std::to_string(s) + ".norm");
  }
  norm("decoder.norm");
  add("src_embed.0.lut.weight", {cfg.src_vocab, C});
  add("tgt_embed.0.lut.weight", {cfg.tgt_vocab, C});
  add("generator.proj.weight", {cfg.tgt_vocab, C});
  add("generator.proj.bias", {cfg.tgt_vocab});
  return L;
}

Model<float> init_model(const ModelConfig& cfg, uint64_t seed) {
  Model<float> m;
  m.cfg = cfg;
  m.layout = make_layout(cfg);
  m.params.assign(m.layout.total, 0.0f);
  // ch10's create_model draws exactly what torch.manual_seed(seed) + article 002's code draws
  ts::manual_seed(seed);
  EncoderDecoder ref = create_model(cfg.src_vocab, cfg.tgt_vocab, cfg.layers, cfg.d_model, cfg.d_ff, cfg.heads,
                                    cfg.dropout);
  const auto named = ref.named_parameters();
  if (named.size() != m.layout.specs.size()) throw std::logic_error("init_model: parameter count differs");
  for (size_t i = 0; i < named.size(); ++i) {
    const ParamSpec& s = m.layout.specs[i];
    if (named[i].first != s.name || named[i].second->size() != s.numel)
      throw std::logic_error("init_model: parameter " + s.name + " differs from create_model's " + named[i].first);
    std::copy_n(named[i].second->data(), s.numel, m.params.begin() + static_cast<std::ptrdiff_t>(s.offset));
  }
  return m;
}

size_t parameter_count(const NamedTensors& named) {
  size_t n = 0;
  for (const auto& nt : named) n += nt.second->size();
  return n;
}

int64_t reduction_denominator(const Batch& b, Reduction r) {
  if (r == Reduction::ArticleMean) return b.B * b.T;
  int64_t n = 0;
  for (int64_t y : b.tar_real) n += y != kPad;
  return n;
}

}  // namespace ts::train
