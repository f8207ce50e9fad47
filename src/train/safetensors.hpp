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

#include <fmt/args.h>
#include <fmt/format.h>

namespace ts::train {

// Marks a message for translation (xgettext); the same definition as course/i18n.hpp's, which
// this layer may not include: the course translates the message where it shows it.
#define N_(msgid) msgid

// A file that is not what it should be: the message names the file and what is wrong.
// msgid is an English format string with named arguments, marked N_(): what() is it in
// English; the course shows tr(msgid) formatted with the same arguments (translated()).
struct FileError : std::runtime_error {
  template <class... Args>
  explicit FileError(const char* id, const Args&... named)
      : std::runtime_error(fmt::format(fmt::runtime(id), named...)), msgid(id),
        args(std::make_shared<fmt::dynamic_format_arg_store<fmt::format_context>>()) {
    (args->push_back(named), ...);
  }
  // the message in another language: `translation` is the catalog's text for msgid
  std::string translated(const char* translation) const { return fmt::vformat(translation, *args); }
  const char* msgid;
  std::shared_ptr<fmt::dynamic_format_arg_store<fmt::format_context>> args;
};
// The system failed a read or a write (disk full, I/O error): the message names the file and
// the system's reason. A FileError too, so a caller that does not care may catch both.
struct FileIoError : FileError {
  using FileError::FileError;
};

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
