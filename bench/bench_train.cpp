// bench_train: ch11's train_step as ch11 runs it: ch10's EncoderDecoder (src/transformer/annotated.cpp)
// with article 004's differences, built from ch11's defaults (course/settings.cpp: 2+2 layers,
// d_model 64, 4 heads, d_ff 256, dropout 0.1, B = 64) by encdec_config, trained by train::Trainer
// (forward, zero_grad, the backward written below each module's forward, Adam; the batch in
// kBatchParts parts, which the threads take) at each of bench_thread_counts().
// The PyTorch peer (bench/bench_pytorch.py, "train_step_64") runs the same model, batch and
// optimizer in eager mode. Row "train_step_64" of make bench; steps/s = 1000 / ms.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_isa.hpp"
#include "course/train_knobs.hpp"  // encdec_config: ch11's model from its settings

using namespace ts::train;

static void train_step(benchmark::State& state) {
  ts::Ch11Settings s = ts::ch11_defaults();
  s.threads = state.range(0);
  Trainer tr(init_model(ts::encdec_config(s), 0), int(s.threads), 0);
  tr.adam().lr = s.lr;
  Epochs epochs(s.batch, 0);
  const std::vector<Batch> batches = first_batches(epochs, make_batch, 8);
  size_t i = 0;
  for (auto _ : state) {
    tr.step(batches[i++ % batches.size()], Reduction::ArticleMean);  // forward, zero_grad, backward, Adam
    benchmark::ClobberMemory();
  }
}

int main(int argc, char** argv) {
  if (!init_on_widest_blas_core(&argc, argv)) return 2;
  add_at_thread_counts("train_step_64", 100, train_step);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
