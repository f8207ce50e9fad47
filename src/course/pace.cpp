// pace.cpp: see pace.hpp.
#include "course/pace.hpp"

#include <algorithm>
#include <ctime>

namespace ts {

double cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0.0;
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double loop_seconds(const std::vector<double>& work, const std::vector<double>& timed) {
  const size_t k = std::min(timed.size(), work.size());
  double seconds = 0;
  for (size_t i = 0; i < k; ++i) seconds += timed[i];
  if (k == 0 || !(work[k - 1] > 0)) return seconds;
  // seconds per unit of work, from the last timed step   x   the work still to come
  double rest = 0;
  for (size_t i = k; i < work.size(); ++i) rest += work[i];
  return seconds + timed[k - 1] / work[k - 1] * rest;
}

}  // namespace ts
