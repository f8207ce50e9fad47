// thread_pool.hpp: the fast path's team of threads (introduced with ch07's fast encoder).
//
// One team per forward: the caller plus n - 1 workers run the same body(tid), each doing
// its share of rows, heads or output panels (part_of), with a Barrier between phases.
// Workers spin briefly between back-to-back phases, then sleep.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>

namespace ts {

// Threads used by the fast path (its team) and by OpenBLAS for the exact path's products.
// Default: 1.
void set_num_threads(int n);
int num_threads();

// body(begin, end) over [0, n) split into at most num_threads() contiguous chunks of at
// least `grain` items, run in parallel (the caller runs the first chunk).
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

// body(tid) for tid in [0, team_size()): 0 on the caller, the others on the workers;
// returns when all are done. Called from inside a body, it runs body(0) alone.
void team_run(const std::function<void(int)>& body);
int team_size();

// [begin, end) of part `i` of `n` items split into `parts` near-equal parts, boundaries
// rounded to multiples of `align` (keeps column blocks on whole vectors).
inline std::pair<int64_t, int64_t> part_of(int64_t n, int parts, int i, int64_t align = 1) {
  const int64_t units = (n + align - 1) / align;
  const int64_t b = std::min(n, units * i / parts * align), e = std::min(n, units * (i + 1) / parts * align);
  return {b, e};
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spin a little (the other threads are usually microseconds away), then give the core up.
template <class Done>
void wait_until(Done done) {
  for (int spin = 0; !done(); ++spin) {
    if (spin < 4000)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

// All n threads of a team wait here until the last one arrives.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    if (n_ <= 1) return;
    const uint32_t gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      count_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_release);
      return;
    }
    wait_until([&] { return gen_.load(std::memory_order_acquire) != gen; });
  }

 private:
  const int n_;
  std::atomic<int> count_{0};
  std::atomic<uint32_t> gen_{0};
};

}  // namespace ts
