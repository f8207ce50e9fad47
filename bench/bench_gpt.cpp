// bench_gpt: ch12's decoder-only model in make bench (rows of bench/report.py).
//   gpt_train_step_64/T    the default GPT (2 blocks, C 64, 4 heads, F 256, tied head), B = 64,
//                          forward + the modules' backward + Adam, T threads (bench_thread_counts()); the
//                          PyTorch peer (bench/bench_pytorch.py) trains tests/twins/gpt_reference.py's
//                          GPT on the same batch in eager mode
//   gpt_gen_stories15m/T   generation at llama2.c's stories15M size (C 288, 6 blocks, 6 heads,
//                          F 768, V 32000, context 256), random weights, batch 1: 256 tokens fed
//                          one by one through the modules' GPT with a KVCache per block
//                          (GPT::forward, train/gpt.hpp next_logits), greedy; T threads
// The bound of generation (each token reads every weight once: tokens/s <= bandwidth / weight
// bytes) divides by bench_peak's mem_read_bw, measured the way bench_peak measures the FMA peak.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <vector>

#include "bench_isa.hpp"
#include "exact/matmul.hpp"
#include "fast/thread_pool.hpp"
#include "train/sampling.hpp"

using namespace ts::train;

static void gpt_train_step(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  GptConfig cfg;
  cfg.vocab = seq_vocab().size();
  Gpt m(cfg, 0, threads);
  if (threads == 1) ts::set_blas_threads(1);
  Adam adam;
  adam.lr = 0.002;
  Epochs epochs(64, 0);
  const std::vector<SeqBatch> batches = first_batches(epochs, make_seq_batch, 8);
  size_t i = 0;
  for (auto _ : state) {
    m.forward(batches[i++ % batches.size()], true);
    m.zero_grad();
    m.backward();
    adam.update(m.parameters(), m.gradients());
    benchmark::ClobberMemory();
  }
}

static GptConfig stories15m() {
  GptConfig c;
  c.vocab = 32000, c.ctx = 256, c.layers = 6, c.d_model = 288, c.heads = 6, c.d_ff = 768;
  return c;
}

static void gpt_generate(benchmark::State& state) {
  ts::set_num_threads(int(state.range(0)));  // the course's thread pool, and OpenBLAS's
  Gpt m(stories15m(), 0, 1);
  ts::GPT g = m.module();
  Rng rng(0);
  for (auto _ : state) {
    GptCache cache = g.make_caches();
    int64_t token = 1;
    for (int64_t t = 0; t < m.cfg.ctx; ++t) {
      const std::vector<float> logits = next_logits(g, cache, {token});
      token = sample_next(logits.data(), m.cfg.vocab, Sampler{}, rng);
    }
    benchmark::DoNotOptimize(token);
  }
  state.counters["weight_bytes"] = double(m.parameter_count() * sizeof(float));
  state.counters["tokens"] = double(m.cfg.ctx);
}

int main(int argc, char** argv) {
  if (!init_on_widest_blas_core(&argc, argv)) return 2;
  add_at_thread_counts("gpt_train_step_64", 100, gpt_train_step);
  add_at_thread_counts("gpt_gen_stories15m", 1, gpt_generate);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
