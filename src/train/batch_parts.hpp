// train/batch_parts.hpp: a training batch split into a FIXED number of parts, whatever the
// thread count (introduced in ch11; used by ch11's Trainer and ch12's Gpt).
//
// Each part runs forward and backward into its own buffers (activations, gradients, dropout
// generator); threads only decide who computes which part, and the parts' gradients are then
// summed in part order 0, 1, ..., K-1. Every float is computed by the same operations in the
// same order with --threads 1 or 16: a run gives the same losses on a laptop and on a server.
// (Each product inside a part runs on one OpenBLAS thread: its own threads could split a sum.)
// The split knows nothing of the model: f(k) is whatever forward or backward the caller runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace ts::train {

// K, the number of parts of a batch: fixed, so that --threads never changes a result.
// 2 is the split ch11 and ch12 always ran at their default --threads 2 (the same halves, the
// same dropout generators, the same sum order), so every documented run keeps its numbers;
// threads beyond K wait. Raising K lets more cores work (each part's products stay large
// enough, B/K rows of T tokens, for OpenBLAS up to K = 8) but moves every loss in the docs'
// samples by float rounding: regenerate them (tests docs_samples) when raising it.
constexpr int64_t kBatchParts = 2;

// min(kBatchParts, B): every part gets at least one row
int64_t batch_parts(int64_t B);
// rows [r0, r1) of part k of K over B rows: r0 = B*k/K, r1 = B*(k+1)/K
struct RowRange {
  int64_t r0, r1;
};
RowRange part_rows(int64_t B, int64_t k, int64_t K);

// The most threads training may use: the machine's cores (std::thread::hardware_concurrency, at
// least 1).
int max_training_threads();

// Runs f(k) once for every part k in [0, K) on min(threads, K) threads: thread j takes parts
// j, j + threads, j + 2 threads, ... (thread 0 is the caller's). f(k) must write only part k's
// buffers. Returns when every part is done; the first exception thrown by a part is rethrown.
void run_parts(int64_t K, int threads, const std::function<void(int64_t)>& f);

// kBatchParts parts of a trainer (ch11's Trainer::Part, ch12's Gpt::Part): each holds its own copy
// of `module` to run forward (which keeps what its backward needs) and one to receive its
// gradients, their named_parameters(), and its own dropout generator, seeded from `seed` and k.
template <class Part, class Module>
std::vector<std::unique_ptr<Part>> make_parts(const Module& module, uint64_t seed) {
  std::vector<std::unique_ptr<Part>> parts;
  for (int64_t k = 0; k < kBatchParts; ++k) {
    auto p = std::make_unique<Part>();  // on the heap: the named pointers stay put
    p->model = module;
    p->grads = module;
    p->params = p->model.named_parameters();
    p->gparams = p->grads.named_parameters();
    p->generator.manual_seed(seed * 1000003ull + uint64_t(k) + 1);
    parts.push_back(std::move(p));
  }
  return parts;
}

// dst[i] += parts[0][i] + ... in part order (k = 0, 1, ...): the same sum for any thread count.
// Every part has dst.size() values.
void add_parts(std::vector<float>& dst, const std::vector<const std::vector<float>*>& parts);

}  // namespace ts::train
