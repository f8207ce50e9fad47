// test_threads.cpp: training does not depend on the thread count (train/batch_parts.hpp). ch11's
// Trainer and ch12's Gpt split a batch into a fixed number of parts, whatever --threads says,
// and add the parts' gradients in part order: the loss curve and the weights are bit for bit
// the same at 1, 2, 3 and 4 threads (dropout on: each part has its own generator).
#include "catch_compat.hpp"

#include <atomic>
#include <stdexcept>
#include <vector>

#include "train/batch_parts.hpp"
#include "train/gpt.hpp"
#include "train/trainer.hpp"

using namespace ts::train;

TEST_CASE("threads: ch11's Trainer gives the same losses and weights at 1, 2, 3, 4 threads", "[threads]") {
  ModelConfig c;
  c.src_vocab = source_vocab().size(), c.tgt_vocab = target_vocab().size();
  c.layers = 1, c.d_model = 16, c.heads = 2, c.d_ff = 32, c.dropout = 0.1;
  // 11 rows: parts of unequal size
  const Batch batch = make_batch({3, 45, 678, 9012, 100, 7, 31, 4096, 55, 800, 12});
  std::vector<double> curve1;
  std::vector<float> params1;
  for (int threads : {1, 2, 3, 4}) {
    Trainer t(init_model(c, 5), threads, 5);
    CHECK(t.threads() == threads);
    std::vector<double> curve;
    for (int s = 0; s < 4; ++s) curve.push_back(t.step(batch, Reduction::ArticleMean).loss_article);
    if (threads == 1) {
      curve1 = curve, params1 = t.model().params;
      continue;
    }
    INFO("threads " << threads);
    CHECK(curve == curve1);
    CHECK(t.model().params == params1);
  }
}

TEST_CASE("threads: ch12's Gpt gives the same losses and weights at 1, 2, 3, 4 threads", "[threads]") {
  GptConfig c;
  c.vocab = seq_vocab().size(), c.layers = 1, c.d_model = 16, c.heads = 2, c.d_ff = 32, c.dropout = 0.1;
  const SeqBatch batch = make_seq_batch({3, 45, 678, 9012, 100, 7, 31, 4096, 55, 800, 12});
  std::vector<double> curve1;
  std::vector<ts::Tensor> params1;
  for (int threads : {1, 2, 3, 4}) {
    Gpt m(c, 5, threads);
    std::vector<double> curve;
    for (int s = 0; s < 3; ++s) {
      curve.push_back(m.forward(batch, true));
      m.zero_grad();
      m.backward();
      const ts::NamedTensors p = m.parameters(), g = m.gradients();
      for (size_t t = 0; t < p.size(); ++t) *p[t].second -= 0.01f * *g[t].second;  // plain SGD
    }
    std::vector<ts::Tensor> params;
    for (const auto& nt : m.parameters()) params.push_back(*nt.second);
    if (threads == 1) {
      curve1 = curve, params1 = params;
      continue;
    }
    INFO("threads " << threads);
    CHECK(curve == curve1);
    CHECK(params == params1);
  }
}

TEST_CASE("threads: run_parts runs every part once, on any thread count, and rethrows", "[threads]") {
  for (int threads : {1, 3, 8, 20}) {
    std::vector<std::atomic<int>> runs(7);
    run_parts(7, threads, [&](int64_t k) { ++runs[size_t(k)]; });
    for (const auto& r : runs) CHECK(r == 1);
  }
  CHECK_THROWS_AS(run_parts(4, 2, [](int64_t k) { if (k == 3) throw std::runtime_error("part 3"); }),
                  std::runtime_error);
  CHECK(batch_parts(1) == 1);
  CHECK(batch_parts(64) == kBatchParts);
  CHECK(part_rows(11, 0, 8).r0 == 0);
  CHECK(part_rows(11, 7, 8).r1 == 11);
  std::vector<float> dst{1, 2}, a{10, 20}, b{100, 200};
  add_parts(dst, {&a, &b});
  CHECK(dst == std::vector<float>{111, 222});
}
