// npy.hpp: write tensors as NumPy .npy files (format version 1.0), for --dump DIR
// (course/dump_dir.hpp keeps the directory).
// Load them in Python with numpy.load(path). Introduced in ch01.
//
// Every file is written whole or not at all: into a temporary file in the same directory,
// each write checked, then closed and renamed over the target. The target path itself is
// never opened, so a symlink planted there (to a victim file, to /dev/full) is replaced,
// never followed.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "exact/tensor.hpp"

namespace ts {

// A write the system failed: the file, the step that failed (kStepCreate ...) and errno. The
// course turns it into the learner's message (course/dump_dir.hpp: IoError, exit 1).
struct WriteError : std::runtime_error {
  WriteError(std::string path, const char* step, int err);
  std::string path;
  const char* step;
  int err;
};
inline constexpr const char kStepCreate[] = "create a file in its directory", kStepWrite[] = "write",
                            kStepClose[] = "close", kStepRename[] = "rename";
// The temporary files write_atomically makes (an interrupted run may leave one behind).
inline constexpr const char kTempPrefix[] = ".ts-dump-tmp-";

// Writes the byte ranges `parts` to `path` atomically (see above). Throws WriteError.
void write_atomically(const std::string& path, const std::vector<std::pair<const void*, size_t>>& parts);

// Writes t to path (row-major, little-endian). Throws WriteError on any I/O failure; no
// partial file is left behind.
void save_npy(const std::string& path, const Tensor& t);   // dtype '<f4'
void save_npy(const std::string& path, const ITensor& t);  // dtype '<i8'
void save_npy(const std::string& path, const BTensor& t);  // dtype '|b1'
// A text file (an SVG figure for --svg), written the same way: whole or not at all.
void save_text(const std::string& path, const std::string& text);

}  // namespace ts
