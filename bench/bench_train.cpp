// bench_train: ch11's train_step (forward, hand-written backward, Adam) on the default model,
// 2+2 layers, d_model 64, 4 heads, d_ff 256, dropout 0.1, B = 64, at each of bench_thread_counts().
// The PyTorch peer (bench/bench_pytorch.py, "train_step_64") runs the same model, batch and
// optimizer in eager mode. Row "train_step_64" of make bench; steps/s = 1000 / ms.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_isa.hpp"
#include "exact/matmul.hpp"
#include "train/trainer.hpp"

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

int main(int argc, char** argv) {
  if (!init_on_widest_blas_core(&argc, argv)) return 2;
  add_at_thread_counts("train_step_64", 100, train_step);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
