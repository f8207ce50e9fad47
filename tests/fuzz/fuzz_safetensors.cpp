// fuzz_safetensors.cpp: libFuzzer target for the safetensors reader ch11's --load uses
// (src/train/safetensors.cpp), built with clang's -fsanitize=fuzzer,address,undefined.
//   make test   runs it for a fixed number of inputs (CTest "fuzz_safetensors", label sanitize)
//   make fuzz   runs it for 10 minutes
// Seeds: with TS_FUZZ_SEEDS=DIR, LLVMFuzzerInitialize first writes valid files into DIR with
// the real writer (save_safetensors), so the corpus starts from what --save produces.
// An input must be refused with a FileError (never another exception, a crash or a sanitizer
// report) or read into tensors that keep the reader's promises; anything else traps.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "train/safetensors.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

void write_seeds(const std::string& dir) {
  using namespace ts::train;
  const std::vector<float> w = {0.5f, -1.25f, 3.0f, 0.0f, 1e-8f, -7.5f};
  const std::vector<int64_t> ids = {1, 2, 3};
  const StMeta meta = {{"format", "pt"}, {"ts_checkpoint", "2"}, {"checkpoint_id", "0123456789abcdef"},
                       {"step", "40"}, {"layers", "1"}, {"d_model", "2"}, {"heads", "1"}, {"d_ff", "3"},
                       {"norm", "pre-LN"}};
  save_safetensors(dir + "/checkpoint.safetensors",
                   {{"encoder.layers.0.ff.w_1.weight", st_f32(w.data(), {3, 2})},
                    {"encoder.layers.0.ff.w_1.bias", st_f32(w.data(), {3})}, {"ids", st_i64(ids.data(), {3})}},
                   meta);
  save_safetensors(dir + "/optimizer.safetensors",
                   {{"a.exp_avg", st_f32(w.data(), {2, 3})}, {"a.exp_avg_sq", st_f32(w.data() + 3, {3})}},
                   {{"step", "1"}, {"lr", "0.001"}});
  save_safetensors(dir + "/empty.safetensors", {}, {});
  save_safetensors(dir + "/zero_size.safetensors", {{"z", st_f32(w.data(), {0, 4})}, {"s", st_f32(w.data(), {})}},
                   {{"step", "0"}});
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TS_FUZZ_SEEDS")) write_seeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ts::train;
  StMeta meta;
  StFile f;
  try {
    f = parse_safetensors(data, size, "fuzz.safetensors", &meta);
  } catch (const FileError& e) {
    require(std::strstr(e.what(), "fuzz.safetensors") != nullptr);  // every refusal names the file
    return 0;
  }
  // accepted: the header's length, then tensors whose bytes cover the rest exactly
  require(size >= 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  size_t bytes = 0;
  for (const auto& [name, t] : f) {
    require(name != "__metadata__");
    const size_t item = t.dtype == "F32" ? 4 : 8;
    require(t.dtype == "F32" || t.dtype == "I64");
    size_t numel = 1;
    for (int64_t d : t.shape) {
      require(d >= 0);
      numel *= static_cast<size_t>(d);
    }
    require(t.data.size() == numel * item);
    if (t.dtype == "F32")
      for (size_t i = 0; i < t.data.size(); i += 4) {
        float v;
        std::memcpy(&v, t.data.data() + i, 4);
        require(std::isfinite(v));
      }
    bytes += t.data.size();
  }
  require(8 + n + bytes == size);
  return 0;
}
