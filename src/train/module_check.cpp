// train/module_check.cpp: see module_check.hpp.
#include "train/module_check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/code_site.hpp"
#include "exact/compare.hpp"

namespace ts::train {

EncoderDecoder to_module(const Model<float>& m) {
  const ModelConfig& c = m.cfg;
  EncoderDecoder module = create_model(c.src_vocab, c.tgt_vocab, c.layers, c.d_model, c.d_ff, c.heads, c.dropout);
  const auto named = module.named_parameters();
  if (named.size() != m.layout.specs.size()) throw std::logic_error("to_module: parameter count differs");
  for (size_t i = 0; i < named.size(); ++i) {
    const ParamSpec& s = m.layout.specs[i];
    if (named[i].second->size() != s.numel) throw std::logic_error("to_module: " + s.name + " differs in size");
    std::copy_n(m.params.begin() + static_cast<std::ptrdiff_t>(s.offset), s.numel, named[i].second->begin());
  }
  return module;
}

namespace {
// ch11's 1 = hide (n rows of `cols` floats, `rows` per batch row) -> ch10's true = keep (B,rows,cols)
BTensor keep_of(const std::vector<float>& hide, int64_t B, int64_t rows, int64_t cols) {
  BTensor k = BTensor::from_shape({size_t(B), size_t(rows), size_t(cols)});
  for (size_t i = 0; i < hide.size(); ++i) k.data()[i] = hide[i] == 0.0f;
  return k;
}
ITensor ids_of(const std::vector<int64_t>& ids, int64_t B, int64_t T) {
  ITensor t = ITensor::from_shape({size_t(B), size_t(T)});
  std::copy(ids.begin(), ids.end(), t.begin());
  return t;
}
}  // namespace

ModuleCheck check_against_module(EncoderDecoder& module, const Model<float>& m, const Batch& b) {
  ModuleCheck r;
  r.B = b.B, r.T = b.T, r.V = m.cfg.tgt_vocab;
  const auto masks = create_mask<float>(b.inputs, b.tar_inp, b.B, b.S, b.T, m.cfg.look_ahead);
  const BTensor enc = keep_of(masks.enc, b.B, b.S, b.S), cross = keep_of(masks.dec_cross, b.B, b.T, b.S);
  const BTensor self = keep_of(masks.dec_self, b.B, b.T, b.T);
  module.train(false);
  const Tensor memory = module.encode(ids_of(b.inputs, b.B, b.S), &enc);
  const Tensor logp = module.generator(module.decode(memory, &cross, ids_of(b.tar_inp, b.B, b.T), &self));
  r.maxdiff = NAN;
  for (bool relu : {false, true}) {
    Model<float> ours = m;
    ours.cfg.pre_ln = true, ours.cfg.scale_scores = true, ours.cfg.relu = relu;
    Workspace<float> w;
    Rng rng(0);  // eval mode: no draws
    forward(ours, w, b, false, rng);
    double worst = 0;
    for (int64_t n = 0; n < b.B * b.T; ++n) {
      // log_softmax of row n, in double
      const float* z = w.logits.data() + n * r.V;
      const double mx = *std::max_element(z, z + r.V);
      double sum = 0;
      for (int64_t v = 0; v < r.V; ++v) sum += std::exp(double(z[v]) - mx);
      const double lse = mx + std::log(sum);
      for (int64_t v = 0; v < r.V; ++v)
        worst = std::max(worst, std::fabs(double(z[v]) - lse - double(logp.data()[n * r.V + v])));
    }
    if (std::isnan(r.maxdiff) || worst < r.maxdiff) r.maxdiff = worst, r.relu = relu;  // the closer one
  }
  r.scale = max_abs(logp.data(), logp.size());
  r.tolerance = scaled_tolerance(r.scale, ModuleCheck::kModuleGrowth);
  r.ok = r.maxdiff <= r.tolerance;
  return r;
}

}  // namespace ts::train
