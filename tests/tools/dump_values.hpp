// dump_values.hpp: the random inputs and the safetensors entries the dump tools write for the
// PyTorch twins (train_dump for ch11, gpt_dump for ch12).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "train/ops.hpp"
#include "train/safetensors.hpp"

namespace ts::train::dump {

// N(0, 1) values (Box-Muller on the course's xoshiro generator)
inline std::vector<float> randn(Rng& rng, size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
    v[i] = scale * static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  return v;
}

inline std::vector<float> zeros(size_t n) { return std::vector<float>(n, 0.0f); }

inline void put(StFile& f, const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
  f[name] = st_f32(v.data(), shape);
}

}  // namespace ts::train::dump
