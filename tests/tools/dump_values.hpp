// dump_values.hpp: what the dump tools share (train_dump for ch11, gpt_dump for ch12,
// classifier_dump for ch13): the random inputs, the safetensors entries they write for the
// PyTorch twins, and their main.
#pragma once

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "exact/tensor.hpp"
#include "fast/blas_core.hpp"
#include "train/checkpoint.hpp"
#include "train/params.hpp"
#include "train/numbers.hpp"
#include "train/rng.hpp"
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

// A tensor of the given shape filled with N(0, scale^2) values from rng (the module dumps).
inline ts::Tensor rand_tensor(Rng& rng, const ts::Shape& shape, float scale = 1.0f) {
  ts::Tensor t = ts::Tensor::from_shape(shape);
  const std::vector<float> v = randn(rng, t.size(), scale);
  std::copy(v.begin(), v.end(), t.data());
  return t;
}

inline void put(StFile& f, const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
  f[name] = st_f32(v.data(), shape);
}

// Every parameter's value in `values` (a model's params or grads): one F32 entry per parameter.
inline StFile per_param(const std::vector<ParamSpec>& specs, const float* values) {
  StFile f;
  for (const ParamSpec& p : specs) f[p.name] = st_f32(values + p.offset, p.shape);
  return f;
}
// the same under a model's checkpoint keys (a key holding several parameters: their values one after another)
inline StFile per_key(const ts::NamedTensors& named, const std::vector<CheckpointKey>& keys) {
  StFile f;
  for (const CheckpointKey& k : keys) {
    std::vector<float> v;
    for (size_t i : k.params) v.insert(v.end(), named[i].second->begin(), named[i].second->end());
    f[k.key] = st_f32(v.data(), k.shape);
  }
  return f;
}

// the same for a module's tensors (its named_parameters())
inline StFile per_param(const ts::NamedTensors& named) {
  StFile f;
  for (const auto& [name, t] : named) f[name] = st_f32(t->data(), std::vector<int64_t>(t->shape().begin(), t->shape().end()));
  return f;
}

// How many Adam steps the twins replay: 20, or 1 with --quick (step 0's gradients only).
inline int adam_steps(bool quick) { return quick ? 1 : 20; }

// f["NAME.STEP"]: one batch's ids (or labels) at Adam step `step`.
inline void put_ids(StFile& f, const std::string& name, int step, const std::vector<int64_t>& ids,
                    std::vector<int64_t> shape) {
  f[name + "." + std::to_string(step)] = st_i64(ids.data(), shape);
}

// DIR/losses.safetensors: "loss", the loss of each Adam step.
inline void save_losses(const std::string& dir, const std::vector<float>& loss) {
  StFile f;
  f["loss"] = st_f32(loss.data(), {static_cast<int64_t>(loss.size())});
  save_safetensors(dir + "/losses.safetensors", f, {});
}

// The number indices of the next batch (its epoch and batch counters are not needed here).
inline std::vector<int64_t> next_numbers(Epochs& epochs) {
  int64_t epoch = 0, batch = 0;
  return epochs.next(&epoch, &batch);
}

// A dump tool's main: `NAME DIR [--quick]`. Writes DIR/ops.safetensors from ops(), then runs
// body(DIR, quick) on the widest BLAS core this CPU runs. Usage error: exit 2; any error: one
// line on stderr, exit 1.
template <class Ops, class Body>
int main_of(int argc, char** argv, const char* name, Ops ops, Body body) {
  ts::use_widest_blas_core();
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [--quick]\n", name);
    return 2;
  }
  const std::string dir = argv[1];
  const bool quick = argc > 2 && std::string(argv[2]) == "--quick";
  try {
    save_safetensors(dir + "/ops.safetensors", ops(), {});
    body(dir, quick);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    return 1;
  }
  return 0;
}

}  // namespace ts::train::dump
