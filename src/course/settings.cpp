// course/settings.cpp: see settings.hpp.
#include "course/settings.hpp"

#include <fmt/format.h>

namespace ts {

// ---------------------------------------------------------------- the defaults, once
Ch11Settings ch11_defaults() {
  Ch11Settings s;
  s.steps = 1000, s.batch = 64, s.log_every = 50, s.threads = 2;  // B: article 004's BATCH_SIZE
  s.layers = 2, s.d_model = 64, s.heads = 4, s.d_ff = 256;
  s.dropout = 0.1, s.lr = 0.001, s.label_smoothing = 0.0;        // Adam(0.001), article 004's
  return s;
}

Ch12Settings ch12_defaults() {
  Ch12Settings s;
  s.steps = 400, s.batch = 64, s.layers = 2, s.d_model = 64, s.heads = 4, s.d_ff = 256, s.log_every = 200;
  s.threads = 2, s.top_k = 0, s.samples = 20;
  s.dropout = 0.0, s.lr = 0.002, s.temperature = 0.0, s.top_p = 1.0;
  return s;
}

Ch13Settings ch13_defaults() {
  Ch13Settings s;
  s.steps = 400, s.batch = 64, s.log_every = 100;
  s.layers = 2, s.d_model = 64, s.heads = 4, s.d_ff = 256;
  s.lr = 0.001, s.dropout = 0.1;
  return s;
}

// ---------------------------------------------------------------- what a run used
template <class S>
static std::string sizes_and_optimizer(const S& s) {
  return fmt::format("B = {}, lr {}, dropout {}, N = {}, C = {}, H = {}, F = {}", s.batch, s.lr, s.dropout, s.layers,
                     s.d_model, s.heads, s.d_ff);
}

std::string describe(const Ch11Settings& s) {
  return sizes_and_optimizer(s) +
         (s.label_smoothing != 0 ? fmt::format(", label smoothing {}", s.label_smoothing) : std::string());
}
std::string describe(const Ch12Settings& s) { return sizes_and_optimizer(s); }
std::string describe(const Ch13Settings& s) { return sizes_and_optimizer(s); }

}  // namespace ts
