// train/safetensors.hpp: the safetensors file format, written and read by hand with
// nlohmann-json for the header (introduced in ch11 for --save / --load).
//
// Format: 8 bytes little-endian u64 N, then N bytes of JSON
//   {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}
// then the raw little-endian tensor bytes; offsets are relative to the end of the header.
// Writes are atomic: a temporary file in the same folder, every write checked, fsync, then
// rename over the target; a symlink target is refused. An interrupted save leaves the old
// file (or none), never half of one.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.hpp"

namespace ts::train {

// Any failure to read or write a file throws FileError (base/errors.hpp): the message names
// the file and what is wrong.
using ts::FileError;

struct StTensor {
  std::string dtype = "F32";       // "F32" or "I64"
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;  // raw little-endian bytes
};

using StFile = std::map<std::string, StTensor>;
using StMeta = std::map<std::string, std::string>;

// float values as an F32 tensor of the given shape
StTensor st_f32(const float* p, const std::vector<int64_t>& shape);
StTensor st_i64(const int64_t* p, const std::vector<int64_t>& shape);

void save_safetensors(const std::string& path, const StFile& tensors, const StMeta& metadata);
StFile load_safetensors(const std::string& path, StMeta* metadata);

}  // namespace ts::train
