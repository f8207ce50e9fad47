// train/batch_parts.cpp: see batch_parts.hpp.
#include "train/batch_parts.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace ts::train {

int64_t batch_parts(int64_t B) { return std::max<int64_t>(1, std::min(kBatchParts, B)); }

RowRange part_rows(int64_t B, int64_t k, int64_t K) { return {B * k / K, B * (k + 1) / K}; }

int max_training_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void run_parts(int64_t K, int threads, const std::function<void(int64_t)>& f) {
  const int64_t n = std::max<int64_t>(1, std::min<int64_t>(threads, K));
  std::exception_ptr first;
  std::mutex m;
  // thread j: parts j, j + n, j + 2n, ...
  auto take = [&](int64_t j) {
    try {
      for (int64_t k = j; k < K; k += n) f(k);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(m);
      if (!first) first = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int64_t j = 1; j < n; ++j) pool.emplace_back(take, j);
  take(0);
  for (std::thread& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

void add_parts(std::vector<float>& dst, const std::vector<const std::vector<float>*>& parts) {
  for (const std::vector<float>* p : parts) {
    if (p->size() != dst.size()) throw std::invalid_argument("add_parts: a part's gradients have another size");
    for (size_t i = 0; i < dst.size(); ++i) dst[i] += (*p)[i];
  }
}

}  // namespace ts::train
