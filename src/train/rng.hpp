// train/rng.hpp: the small, fast, seedable generator training draws from (xoshiro256**, seeded
// through splitmix64): dropout masks, weight inits, batch order, sampling. Training draws millions
// of numbers per second; the torch-exact mt19937 of src/exact/rng.hpp is not needed here, because
// the twin checks run with dropout off and load the C++-initialised weights.
#pragma once

#include <cstdint>

namespace ts::train {

struct Rng {
  uint64_t s[4];
  explicit Rng(uint64_t seed = 0) {
    // splitmix64 spreads one seed over the four words of state
    for (auto& w : s) {
      uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      w = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
};

}  // namespace ts::train
