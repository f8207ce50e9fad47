// train/params.hpp: the encoder-decoder's weights as training keeps them (introduced in ch11):
// one flat buffer, named by the PyTorch twin's state_dict keys (the checkpoint's tensor names),
// in article 002's model.parameters() order. The model itself is ch10's EncoderDecoder
// (src/transformer/annotated.cpp), which ch11 trains through train::Trainer (trainer.hpp): its
// parameters are copied from and its gradients into buffers of this layout, and init_model and
// copy_params check that every name and size agrees with the module's named_parameters().
// Shapes: C = d_model, F = d_ff, V_src / V_tgt the vocabularies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "exact/tensor.hpp"
#include "train/numbers.hpp"

namespace ts::train {

// create_model's sizes and article 004's differences from ch10's defaults, as module settings
// (trainer.hpp's module_settings turns them into the module's ModelSettings).
struct ModelConfig {
  int64_t src_vocab = 13, tgt_vocab = 33;  // V_src, V_tgt (train/numbers.hpp)
  int64_t layers = 2;                      // N encoder and N decoder layers
  int64_t d_model = 64, heads = 4, d_ff = 256;
  int64_t max_len = 32;                    // rows of the positional table
  double dropout = 0.1;
  bool pre_ln = true;        // false: post-LN (article 004, the paper)
  bool scale_scores = true;  // false: scores are not divided by sqrt(D) (an exercise)
  bool look_ahead = true;    // false: create_mask drops the look-ahead mask (an exercise)
  bool relu = true;          // false: the feed-forward without its ReLU, as article 002's listing
  double label_smoothing = 0.0;
};

// One parameter tensor: its state_dict key, shape, and where it sits in the flat buffer.
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  size_t offset = 0, numel = 0;
};

// every value of a module's parameters (sum(p.numel() for p in module.parameters()))
size_t parameter_count(const NamedTensors& named);

// Every parameter of cfg's model, in article 002's Transformer.parameters() order: encoder
// layers (self_attn.linears.0..3, feed_forward.w_1, w_2, sublayer.0..1.norm), encoder.norm,
// decoder layers (self_attn, src_attn, feed_forward, sublayer.0..2.norm), decoder.norm,
// src_embed.0.lut, tgt_embed.0.lut, generator.proj. The checkpoint's layout: old checkpoints
// load as long as these names and shapes stay.
struct Layout {
  std::vector<ParamSpec> specs;
  size_t total = 0;
};
Layout make_layout(const ModelConfig& cfg);

// The weights training updates (the template keeps the name the chapters use: Model<float>).
template <class F>
struct Model {
  ModelConfig cfg;
  Layout layout;
  std::vector<F> params;  // (total) every parameter, layout.specs order
};

// The weights torch.manual_seed(seed) then article 002's create_model(V_src, V_tgt, N, C, F, H)
// gives (ch10's ts::create_model, xavier_uniform_ included), copied into the flat buffer.
Model<float> init_model(const ModelConfig& cfg, uint64_t seed);

// How the masked per-token losses become one number:
//   ArticleMean  article 004's loss_fun: reduce_mean over ALL B*T positions (padding counts as 0)
//   TokenMean    the mean over the real (unpadded) target tokens only
enum class Reduction { ArticleMean, TokenMean };
// The denominator of a reduction for batch b: B*T or the number of real target tokens.
int64_t reduction_denominator(const Batch& b, Reduction r);

}  // namespace ts::train
