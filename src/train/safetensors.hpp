// train/safetensors.hpp: the safetensors file format, written and read by hand with
// nlohmann-json for the header (introduced in ch11 for --save / --load).
//
// Format: 8 bytes little-endian u64 N, then N bytes of JSON
//   {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}
// then the raw little-endian tensor bytes; offsets are relative to the end of the header.
//
// The reader is strict and bounded (a checkpoint is input the user hands us):
//   - a regular file only: a FIFO, a directory or a device is refused at once (opened with
//     O_NONBLOCK, then fstat), never read or waited on;
//   - its size is checked against a cap before anything is read; the header is read, parsed
//     and checked, then each tensor's bytes are read straight into the tensor (never twice);
//   - the header: a JSON object, no duplicate key at any depth (nlohmann-json would keep the
//     last one silently), "__metadata__" string -> string, each tensor exactly
//     {dtype, shape, data_offsets} with non-negative integers (2.0, -1, 1e3 are refused),
//     only spaces after the JSON (no NUL), the tensors' byte ranges laid end to end from 0 and
//     covering the data exactly (no overlap, no gap, nothing after the last one);
//   - F32 values must be finite: a NaN or an infinity is refused naming the tensor.
// A file that breaks any of these is a FileError (bad input); a read or write the system fails
// is a FileIoError.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.hpp"

namespace ts::train {

// A file that is not what it should be throws FileError, a read or write the system fails
// FileIoError (base/errors.hpp): the message names the file and what is wrong.
using ts::FileError;
using ts::FileIoError;

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

// Writes the file to the open descriptor fd (every write checked, then fsync); `path` names it
// in errors. Throws FileIoError.
void write_safetensors(int fd, const std::string& path, const StFile& tensors, const StMeta& metadata);
// Writes `path` atomically: a temporary file in the same folder, write_safetensors, rename over
// the target, fsync of the folder; a symlink target is refused (FileError). An interrupted save
// leaves the old file (or none), never half of one.
void save_safetensors(const std::string& path, const StFile& tensors, const StMeta& metadata);

// Files larger than this are refused before reading (a checkpoint of the largest model ch11's
// budget allows is well below it).
constexpr uint64_t kMaxSafetensorsBytes = uint64_t(4) << 30;
StFile load_safetensors(const std::string& path, StMeta* metadata, uint64_t max_bytes = kMaxSafetensorsBytes);
// The same from an open descriptor (openat by the caller); `path` names the file in errors.
StFile load_safetensors_fd(int fd, const std::string& path, StMeta* metadata, uint64_t max_bytes = kMaxSafetensorsBytes);
// Only the header, checked as strictly (the tensors' bytes are not read): the metadata.
void read_safetensors_metadata_fd(int fd, const std::string& path, StMeta* metadata);
// The same from bytes in memory (the fuzz target's entry point; no file, no size cap).
StFile parse_safetensors(const unsigned char* bytes, size_t size, const std::string& path, StMeta* metadata);

}  // namespace ts::train
