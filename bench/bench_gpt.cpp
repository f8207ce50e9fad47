// bench_gpt: ch12's decoder-only model in make bench (rows of bench/report.py).
//   gpt_train_step_64/T    the default GPT (2 blocks, C 64, 4 heads, F 256, tied head), B = 64,
//                          forward + hand-written backward + Adam, T = 1 or 2 threads; the
//                          PyTorch peer (bench/bench_pytorch.py) trains tests/twins/gpt_reference.py's
//                          GPT on the same batch in eager mode
//   gpt_gen_stories15m/1   generation at llama2.c's stories15M size (C 288, 6 blocks, 6 heads,
//                          F 768, V 32000, context 256), random weights, batch 1: 256 tokens fed
//                          one by one through the KV cache (gpt_step), one thread
//   mem_read_bw/1          one thread reading a 256 MB buffer (bench/report.py turns its time into
//                          GB/s): the bound of generation, which reads every weight once per
//                          token: tokens/s <= bandwidth / weight bytes
#include <benchmark/benchmark.h>

#include <cstdio>
#include <vector>

#include "bench_isa.hpp"
#include "exact/matmul.hpp"
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
    adam.update(m.params.data(), m.grads.data(), m.params.size());
    benchmark::ClobberMemory();
  }
}

static GptConfig stories15m() {
  GptConfig c;
  c.vocab = 32000, c.ctx = 256, c.layers = 6, c.d_model = 288, c.heads = 6, c.d_ff = 768;
  return c;
}

static void gpt_generate(benchmark::State& state) {
  ts::set_blas_threads(1);
  const Gpt m(stories15m(), 0, 1);
  std::vector<float> logits(static_cast<size_t>(m.cfg.vocab));
  Rng rng(0);
  for (auto _ : state) {
    KvCache cache = make_kv_cache(m);
    int64_t token = 1;
    for (int64_t t = 0; t < m.cfg.ctx; ++t) {
      gpt_step(m, cache, token, logits.data());
      token = sample_next(logits.data(), m.cfg.vocab, Sampler{}, rng);
    }
    benchmark::DoNotOptimize(token);
  }
  state.counters["weight_bytes"] = double(m.params.size() * sizeof(float));
  state.counters["tokens"] = double(m.cfg.ctx);
}

static void mem_read(benchmark::State& state) {
  std::vector<float> buf(size_t(64) << 20, 1.0f);  // 256 MB, far beyond the caches
  for (auto _ : state) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i < buf.size(); i += 4) s0 += buf[i], s1 += buf[i + 1], s2 += buf[i + 2], s3 += buf[i + 3];
    benchmark::DoNotOptimize(s0 + s1 + s2 + s3);
  }
  state.counters["bytes"] = double(buf.size() * sizeof(float));
}

int main(int argc, char** argv) {
  if (!init_on_widest_blas_core(&argc, argv)) return 2;
  add_at_1_and_2_threads("gpt_train_step_64", 100, gpt_train_step);
  benchmark::RegisterBenchmark("gpt_gen_stories15m", gpt_generate)->Arg(1)->Iterations(1)
      ->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("mem_read_bw", mem_read)->Arg(1)->Iterations(5)->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
