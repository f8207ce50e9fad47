// thread_pool.cpp: the team of threads of thread_pool.hpp.
#include "fast/thread_pool.hpp"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "exact/matmul.hpp"  // set_blas_threads

namespace ts {
namespace {

thread_local bool t_in_team = false;  // set while a thread runs a Pool::run body

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return int(workers_.size()) + 1; }

  // Stop the current workers and start n - 1 new ones.
  void resize(int n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stop_.store(false);
    const uint64_t g = generation_.load();
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i, g] { work(i, g); });
  }

  // body(tid) for tid in [0, size()): 0 on the caller, the others on the workers; returns
  // when all are done. Called from inside a body, it runs body(0) alone.
  void run(const std::function<void(int)>& body) {
    if (workers_.empty() || t_in_team) {
      body(0);
      return;
    }
    body_ = &body;
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    t_in_team = true;
    body(0);
    t_in_team = false;
    wait_until([this] { return pending_.load(std::memory_order_acquire) == 0; });
  }

 private:
  void work(int tid, uint64_t seen) {
    t_in_team = true;
    for (;;) {
      // a new generation: spin briefly (back-to-back calls), then sleep
      for (int spin = 0; spin < 20000 && generation_.load(std::memory_order_acquire) == seen; ++spin) cpu_relax();
      if (generation_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_.load() != seen; });
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load()) return;
      (*body_)(tid);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* body_ = nullptr;
  std::atomic<int> pending_{0};
};

Pool& pool() {
  static Pool p;
  return p;
}

std::atomic<int> g_threads{1};

}  // namespace

void set_num_threads(int n) {
  n = std::max(1, n);
  set_blas_threads(n);
  if (pool().size() != n) pool().resize(n);
  g_threads.store(n);
}

int num_threads() { return g_threads.load(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(pool().size(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (chunks <= 1 || t_in_team) {
    body(0, n);
    return;
  }
  pool().run([&](int c) {
    if (c >= chunks) return;
    const auto [b, e] = part_of(n, int(chunks), c);
    if (b < e) body(b, e);
  });
}

void team_run(const std::function<void(int)>& body) { pool().run(body); }
int team_size() { return pool().size(); }

}  // namespace ts
