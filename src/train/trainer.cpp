// train/trainer.cpp: one training step, its batch in a fixed number of parts (batch_parts.hpp).
#include "train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/code_site.hpp"
#include "exact/compare.hpp"
#include "exact/matmul.hpp"
#include "train/batch_parts.hpp"
#include "transformer/grad.hpp"

namespace ts::train {

Batch slice_batch(const Batch& b, int64_t r0, int64_t r1) {
  Batch s;
  s.B = r1 - r0, s.S = b.S, s.T = b.T;
  s.numbers.assign(b.numbers.begin() + r0, b.numbers.begin() + r1);
  s.inputs.assign(b.inputs.begin() + r0 * b.S, b.inputs.begin() + r1 * b.S);
  s.tar_inp.assign(b.tar_inp.begin() + r0 * b.T, b.tar_inp.begin() + r1 * b.T);
  s.tar_real.assign(b.tar_real.begin() + r0 * b.T, b.tar_real.begin() + r1 * b.T);
  return s;
}

void Metrics::add(int64_t epoch_now, const StepStats& st, double loss) {
  if (epoch_now != epoch) {
    epoch_loss = 0, epoch_steps = 0, epoch_correct = 0, epoch_correct_all = 0, epoch_tokens = 0, epoch_positions = 0;
    epoch = epoch_now;
  }
  epoch_loss += loss, ++epoch_steps, epoch_correct += st.correct, epoch_correct_all += st.correct_all;
  epoch_tokens += st.tokens, epoch_positions += st.positions;
  run_counted += st.counted, run_padding += st.padding, run_positions += st.positions;
  run_not_logp += st.not_logp;
  if (!(st.lse_worst <= run_lse_worst)) run_lse_worst = st.lse_worst;  // NaN kept
  curve.push_back(loss);
  sum_article += st.loss_article, sum_token += st.loss_token;
  const double ratio = double(st.tokens) / double(st.positions);
  ratio_sum += ratio, ratio_min = std::min(ratio_min, ratio), ratio_max = std::max(ratio_max, ratio);
}

ModelSettings module_settings(const ModelConfig& cfg) {
  ModelSettings s;
  s.activation = cfg.relu ? Activation::ReLU : Activation::Identity;
  s.norm_place = cfg.pre_ln ? NormPlace::Pre : NormPlace::Post;
  s.attention_dropout = cfg.dropout;
  s.scale_scores = cfg.scale_scores;
  return s;
}

void copy_params(const Model<float>& m, const std::vector<std::pair<std::string, Tensor*>>& named) {
  const std::vector<ParamSpec>& specs = m.layout.specs;
  if (named.size() != specs.size()) throw std::logic_error("copy_params: parameter count differs");
  for (size_t i = 0; i < specs.size(); ++i) {
    if (named[i].second->size() != specs[i].numel || named[i].first != specs[i].name)
      throw std::logic_error("copy_params: " + specs[i].name + " differs from the module's " + named[i].first);
    std::copy_n(m.params.data() + specs[i].offset, specs[i].numel, named[i].second->data());
  }
}

EncoderDecoder training_module(const Model<float>& m) {
  const ModelConfig& c = m.cfg;
  const Generator before = default_generator();  // create_model draws; the weights come from m
  EncoderDecoder module =
      create_model(c.src_vocab, c.tgt_vocab, c.layers, c.d_model, c.d_ff, c.heads, c.dropout, module_settings(c));
  default_generator() = before;
  copy_params(m, module.named_parameters());
  return module;
}

ModuleInputs module_inputs(const Batch& b, bool look_ahead) {
  const size_t B = size_t(b.B), S = size_t(b.S), T = size_t(b.T);
  ModuleInputs in{ITensor::from_shape({B, S}), ITensor::from_shape({B, T}), BTensor::from_shape({B, S, S}),
                  BTensor::from_shape({B, T, T}), BTensor::from_shape({B, T, S})};
  std::copy(b.inputs.begin(), b.inputs.end(), in.src.begin());
  std::copy(b.tar_inp.begin(), b.tar_inp.end(), in.tgt.begin());
  // create_mask's 1 = hide -> the modules' true = keep
  const MasksT<float> m = create_mask<float>(b.inputs, b.tar_inp, b.B, b.S, b.T, look_ahead);
  for (size_t i = 0; i < m.enc.size(); ++i) in.enc.data()[i] = m.enc[i] == 0.0f;
  for (size_t i = 0; i < m.dec_self.size(); ++i) in.self.data()[i] = m.dec_self[i] == 0.0f;
  for (size_t i = 0; i < m.dec_cross.size(); ++i) in.cross.data()[i] = m.dec_cross[i] == 0.0f;
  return in;
}

Trainer::Trainer(Model<float> model, int threads, uint64_t seed)
    : model_(std::move(model)), threads_(std::max(1, threads)) {
  // one module, gradient module and dropout generator per part, whatever the thread count
  parts_ = make_parts<Part>(training_module(model_), seed);
  grads_.assign(model_.layout.total, 0.0f);
  // each product runs on one OpenBLAS thread: our threads take the parts, and OpenBLAS's own
  // threads must not decide how a product's sums are split
  set_blas_threads(1);
}

// the line below: Trainer::forward's own, for trainer_loss_site()
static const CodeSite kLossSite{__FILE__, __LINE__ + 1, "Trainer::forward"};
StepStats Trainer::forward(const Batch& b, bool training) {
  const int64_t K = batch_parts(b.B);
  const int64_t V = model_.cfg.tgt_vocab;
  const double eps = model_.cfg.label_smoothing;
  batch_ = b;
  used_ = K;
  std::vector<double> sums(size_t(K), 0.0);
  std::vector<int64_t> correct(size_t(K), 0), correct_all(size_t(K), 0), counted(size_t(K), 0), padding(size_t(K), 0);
  std::vector<int64_t> not_logp(size_t(K), 0);
  std::vector<double> lse_worst(size_t(K), 0.0);
  run_parts(K, threads_, [&](int64_t k) {
    Part& p = *parts_[size_t(k)];
    const RowRange r = part_rows(b.B, k, K);
    p.batch = slice_batch(b, r.r0, r.r1);
    copy_params(model_, p.params);  // this step's weights (Adam or --load changed model_.params)
    p.model.train(training);
    EnableGrad keep;                 // the modules keep what their backward needs
    UseGenerator draws(p.generator);  // this part's dropout draws
    const ModuleInputs in = module_inputs(p.batch, model_.cfg.look_ahead);
    // logp = generator(decode(encode(src, enc_mask), cross_mask, tar_inp, self_mask))   (B,T,V)
    const Tensor memory = p.model.encode(in.src, &in.enc);
    p.logp = p.model.generator(p.model.decode(memory, &in.cross, in.tgt, &in.self));
    // loss_fun's per-token cross-entropy, 0 on padding: -(1 - eps) log p_y - eps/V sum_v log p_v
    const float* lp = p.logp.data();
    for (int64_t n = 0; n < p.batch.B * p.batch.T; ++n, lp += V) {
      const int64_t y = p.batch.tar_real[size_t(n)];
      const int64_t arg = std::max_element(lp, lp + V) - lp;  // the prediction
      correct_all[size_t(k)] += arg == y;
      padding[size_t(k)] += y == kPad;
      if (y == kPad) continue;
      correct[size_t(k)] += arg == y;
      double all = 0.0;
      if (eps != 0.0)
        for (int64_t v = 0; v < V; ++v) all += lp[v];
      sums[size_t(k)] += -(1.0 - eps) * double(lp[y]) - eps / double(V) * all;
      ++counted[size_t(k)];  // this position's cross-entropy is in the loss
      // a log-probability row? logsumexp = 0 up to float rounding, scaled to the row's largest |log p|
      const double top = *std::max_element(lp, lp + V);
      double z = 0.0, big = 0.0;
      for (int64_t v = 0; v < V; ++v) z += std::exp(double(lp[v]) - top), big = std::max(big, std::fabs(double(lp[v])));
      const double lse = std::fabs(top + std::log(z));
      not_logp[size_t(k)] += !(lse <= scaled_tolerance(big));
      if (!(lse <= lse_worst[size_t(k)])) lse_worst[size_t(k)] = lse;
    }
  });
  StepStats s;
  double sum = 0;
  for (int64_t k = 0; k < K; ++k) {  // in part order
    sum += sums[size_t(k)];
    s.correct += correct[size_t(k)];
    s.correct_all += correct_all[size_t(k)];
    s.counted += counted[size_t(k)], s.padding += padding[size_t(k)];
    s.not_logp += not_logp[size_t(k)];
    if (!(lse_worst[size_t(k)] <= s.lse_worst)) s.lse_worst = lse_worst[size_t(k)];
  }
  s.positions = b.B * b.T;
  s.tokens = reduction_denominator(b, Reduction::TokenMean);
  s.loss_article = sum / static_cast<double>(s.positions);
  s.loss_token = sum / static_cast<double>(s.tokens);
  return s;
}

void Trainer::zero_grad() {
  for (auto& p : parts_) ts::zero_grad(p->grads);
  std::fill(grads_.begin(), grads_.end(), 0.0f);
}

// the line below: Trainer::backward's own, for trainer_backward_site()
static const CodeSite kBackwardSite{__FILE__, __LINE__ + 1, "Trainer::backward"};
void Trainer::backward(Reduction r) {
  const double denom = static_cast<double>(reduction_denominator(batch_, r));
  const int64_t V = model_.cfg.tgt_vocab;
  const double eps = model_.cfg.label_smoothing;
  run_parts(used_, threads_, [&](int64_t k) {
    Part& p = *parts_[size_t(k)];
    // d(loss)/d(log p): -(eps/V) / denom on every word of a real target, -(1 - eps) / denom more on y
    Tensor dlogp = zeros(shape_of(p.logp));
    const float all = static_cast<float>(-eps / double(V) / denom), at_y = static_cast<float>(-(1.0 - eps) / denom);
    for (int64_t n = 0; n < p.batch.B * p.batch.T; ++n) {
      const int64_t y = p.batch.tar_real[size_t(n)];
      if (y == kPad) continue;
      float* d = dlogp.data() + n * V;
      if (eps != 0.0) std::fill(d, d + V, all);
      d[y] += at_y;
    }
    // the generator's backward, then the model's, into this part's gradient module
    p.model.backward(p.model.generator.backward(dlogp, p.grads.generator), p.grads);
  });
  // add the parts' gradients in part order: the same sums for any thread count
  const std::vector<ParamSpec>& specs = model_.layout.specs;
  for (int64_t k = 0; k < used_; ++k) {
    const Part& p = *parts_[size_t(k)];
    for (size_t i = 0; i < specs.size(); ++i) {
      float* dst = grads_.data() + specs[i].offset;
      const float* g = p.gparams[i].second->data();
      for (size_t j = 0; j < specs[i].numel; ++j) dst[j] += g[j];
    }
  }
}

std::vector<std::vector<int64_t>> greedy_translate(const Model<float>& m, const std::vector<int64_t>& numbers,
                                                   int64_t max_new, std::vector<float>* cross, int64_t* cross_T,
                                                   int64_t* cross_S) {
  const Vocab& tv = target_vocab();
  const int64_t V = m.cfg.tgt_vocab, B = static_cast<int64_t>(numbers.size()), C = m.cfg.d_model;
  EncoderDecoder model = training_module(m);
  model.train(false);
  const Batch b = make_batch(numbers);  // the padded sources
  const size_t S = size_t(b.S);
  // memory = encode(src, src_mask), once   (B,S,C); src_mask (B,1,S) true = a real source token
  ITensor src = ITensor::from_shape({size_t(B), S});
  std::copy(b.inputs.begin(), b.inputs.end(), src.begin());
  BTensor src_mask = BTensor::from_shape({size_t(B), 1, S});
  for (size_t i = 0; i < src.size(); ++i) src_mask.data()[i] = src.data()[i] != kPad;
  const Tensor memory = model.encode(src, &src_mask);
  // one cache per decoder layer: each step feeds only the new token's row (DecoderLayerCache)
  std::vector<DecoderLayerCache> caches(model.decoder.layers.size());
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(B));
  std::vector<bool> done(static_cast<size_t>(B), false);
  std::vector<int64_t> ys(static_cast<size_t>(B), tv.start());  // (B,t) decoder input so far
  std::vector<float> cross_rows;  // row 0's last-layer cross-attention, one (H,S) block per step
  const int64_t H = m.cfg.heads;
  for (int64_t t = 1; t <= max_new && t <= m.cfg.max_len; ++t) {
    // the new token's row: tgt_embed of [start, predictions so far] at position t-1   (B,1,C)
    ITensor tgt = ITensor::from_shape({size_t(B), size_t(t)});
    std::copy(ys.begin(), ys.end(), tgt.begin());
    const Tensor emb = model.tgt_embed(tgt);
    Tensor x = Tensor::from_shape({size_t(B), 1, size_t(C)});
    for (int64_t i = 0; i < B; ++i)
      std::copy_n(emb.data() + (i * t + t - 1) * C, C, x.data() + i * C);
    // logp = generator(decoder(x, memory, src_mask, no mask: the caches hold only the past))   (B,1,V)
    const Tensor logp = model.generator(model.decoder(x, memory, &src_mask, nullptr, &caches));
    const Tensor& attn = model.decoder.layers.back().src_attn.attn;  // (B,H,1,S)
    cross_rows.insert(cross_rows.end(), attn.data(), attn.data() + H * int64_t(S));
    std::vector<int64_t> next_ys(static_cast<size_t>(B * (t + 1)));
    bool all_done = true;
    for (int64_t i = 0; i < B; ++i) {
      const float* row = logp.data() + i * V;
      const int64_t id = std::max_element(row, row + V) - row;  // argmax of the new position
      std::copy_n(ys.begin() + i * t, t, next_ys.begin() + i * (t + 1));
      next_ys[static_cast<size_t>(i * (t + 1) + t)] = id;
      if (!done[static_cast<size_t>(i)]) {
        if (id == tv.end())
          done[static_cast<size_t>(i)] = true;
        else
          out[static_cast<size_t>(i)].push_back(id);
      }
      all_done = all_done && done[static_cast<size_t>(i)];
    }
    if (cross && (all_done || t == max_new || t == m.cfg.max_len)) {
      // the last decoder layer's cross-attention of row 0: (H, t, S), step by step
      cross->assign(size_t(H * t) * S, 0.0f);
      for (int64_t step = 0; step < t; ++step)
        for (int64_t h = 0; h < H; ++h)
          std::copy_n(cross_rows.data() + (step * H + h) * int64_t(S), S, cross->data() + (h * t + step) * int64_t(S));
      *cross_T = t;
      *cross_S = int64_t(S);
    }
    if (all_done) break;
    ys = std::move(next_ys);
  }
  return out;
}

StepStats Trainer::gradients(const Batch& b, Reduction r, bool training) {
  const StepStats s = forward(b, training);
  zero_grad();
  backward(r);
  return s;
}

StepStats Trainer::step(const Batch& b, Reduction r) {
  const StepStats s = gradients(b, r, true);
  adam_.update(model_.params.data(), grads_.data(), model_.params.size());
  return s;
}

std::string trainer_loss_site() {
  return code_site_path(kLossSite.file) + ":" + std::to_string(kLossSite.line) + " " + kLossSite.func;
}

std::string trainer_backward_site() {
  return code_site_path(kBackwardSite.file) + ":" + std::to_string(kBackwardSite.line) + " " + kBackwardSite.func;
}

}  // namespace ts::train
