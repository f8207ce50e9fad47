// bench_train: ch11's train_step (forward, hand-written backward, Adam) on the default model,
// 2+2 layers, d_model 64, 4 heads, d_ff 256, dropout 0.1, B = 64, at each of bench_thread_counts().
// The PyTorch peer (bench/bench_pytorch.py, "train_step_64") runs the same model, batch and
// optimizer in eager mode. Row "train_step_64" of make bench; steps/s = 1000 / ms.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "bench_isa.hpp"
#include "exact/matmul.hpp"
#include "train/module_check.hpp"
#include "train/trainer.hpp"
#include "transformer/grad.hpp"

using namespace ts::train;

static void train_step(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  ModelConfig cfg;
  cfg.src_vocab = source_vocab().size();
  cfg.tgt_vocab = target_vocab().size();
  Trainer tr(init_model(cfg, 0), threads, 0);
  if (threads == 1) ts::set_blas_threads(1);  // one core: no OpenBLAS helper thread either
  Epochs epochs(64, 0);
  const std::vector<Batch> batches = first_batches(epochs, make_batch, 8);
  size_t i = 0;
  for (auto _ : state) {
    tr.step(batches[i++ % batches.size()], Reduction::ArticleMean);
    benchmark::ClobberMemory();
  }
}

// The same step through ch10's modules (src/transformer/annotated.cpp): forward with EnableGrad,
// generator, article 004's loss_fun over all B*T positions, generator.backward, model.backward
// into a second module, Adam per named parameter. The whole batch in one part (no thread split
// yet): the row measures what ch11 would cost on the modules. Row "train_step_64_module".
static void train_step_module(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  ModelConfig cfg;
  cfg.src_vocab = source_vocab().size();
  cfg.tgt_vocab = target_vocab().size();
  ts::EncoderDecoder model = ts::create_model(cfg.src_vocab, cfg.tgt_vocab, cfg.layers, cfg.d_model, cfg.d_ff,
                                              cfg.heads, cfg.dropout, {ts::Activation::ReLU, ts::NormPlace::Pre});
  model.train(true);
  ts::EncoderDecoder grads = model;
  ts::set_blas_threads(threads);
  auto params = model.named_parameters();
  auto gparams = grads.named_parameters();
  std::vector<Adam> adam(params.size());
  Epochs epochs(64, 0);
  const std::vector<Batch> batches = first_batches(epochs, make_batch, 8);
  struct In { ts::ITensor src, tgt; ts::BTensor enc, self, cross; };
  std::vector<In> ins;
  for (const Batch& b : batches) {
    const auto m = create_mask<float>(b.inputs, b.tar_inp, b.B, b.S, b.T);
    In in{ts::ITensor::from_shape({size_t(b.B), size_t(b.S)}), ts::ITensor::from_shape({size_t(b.B), size_t(b.T)}),
          ts::BTensor::from_shape({size_t(b.B), size_t(b.S), size_t(b.S)}),
          ts::BTensor::from_shape({size_t(b.B), size_t(b.T), size_t(b.T)}),
          ts::BTensor::from_shape({size_t(b.B), size_t(b.T), size_t(b.S)})};
    std::copy(b.inputs.begin(), b.inputs.end(), in.src.begin());
    std::copy(b.tar_inp.begin(), b.tar_inp.end(), in.tgt.begin());
    for (size_t i = 0; i < m.enc.size(); ++i) in.enc.data()[i] = m.enc[i] == 0.0f;
    for (size_t i = 0; i < m.dec_self.size(); ++i) in.self.data()[i] = m.dec_self[i] == 0.0f;
    for (size_t i = 0; i < m.dec_cross.size(); ++i) in.cross.data()[i] = m.dec_cross[i] == 0.0f;
    ins.push_back(std::move(in));
  }
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % batches.size();
    const Batch& b = batches[k];
    const In& in = ins[k];
    ts::EnableGrad on;
    ts::zero_grad(grads);
    const ts::Tensor memory = model.encode(in.src, &in.enc);
    const ts::Tensor logp = model.generator(model.decode(memory, &in.cross, in.tgt, &in.self));
    ts::Tensor dlogp = logp;  // d(loss)/d(logp): -1/(B*T) at each real target, 0 elsewhere
    std::fill(dlogp.begin(), dlogp.end(), 0.0f);
    const int64_t V = cfg.tgt_vocab;
    double loss = 0;
    for (int64_t n = 0; n < b.B * b.T; ++n)
      if (b.tar_real[size_t(n)] != 0) {
        loss -= logp.data()[n * V + b.tar_real[size_t(n)]];
        dlogp.data()[n * V + b.tar_real[size_t(n)]] = -1.0f / float(b.B * b.T);
      }
    benchmark::DoNotOptimize(loss);
    model.backward(model.generator.backward(dlogp, grads.generator), grads);
    for (size_t p = 0; p < params.size(); ++p)
      adam[p].update(params[p].second->data(), gparams[p].second->data(), params[p].second->size());
    benchmark::ClobberMemory();
  }
}

int main(int argc, char** argv) {
  if (!init_on_widest_blas_core(&argc, argv)) return 2;
  add_at_thread_counts("train_step_64", 100, train_step);
  add_at_thread_counts("train_step_64_module", 100, train_step_module);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
