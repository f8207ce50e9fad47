// npy.hpp: write tensors as NumPy .npy files (format version 1.0), for --dump DIR.
// Load them in Python with numpy.load(path). Introduced in ch01.
//
// Every file is written whole or not at all: into a temporary file in the same directory,
// each write checked, then closed and renamed over the target. The target path itself is
// never opened, so a symlink planted there (to a victim file, to /dev/full) is replaced,
// never followed.
#pragma once

#include <string>
#include <vector>

#include "exact/tensor.hpp"

namespace ts {

// Writes t to path (row-major, little-endian). Throws IoError on any I/O failure (the
// message names the file and the system's reason); no partial file is left behind.
void save_npy(const std::string& path, const Tensor& t);   // dtype '<f4'
void save_npy(const std::string& path, const ITensor& t);  // dtype '<i8'
void save_npy(const std::string& path, const BTensor& t);  // dtype '|b1'
// A text file (an SVG figure for --svg), written the same way: whole or not at all.
void save_text(const std::string& path, const std::string& text);

// A --dump directory holds ONE run: the files it wrote and a manifest naming them
// (kManifest: the chapter, its command line, one "file NAME" line per file). A new run
//   - creates the directory if it does not exist;
//   - in a directory with a manifest, removes the files the manifest lists (and temporary
//     files an interrupted run left) before writing its own;
//   - refuses (UsageError) a directory holding anything else, or one it cannot write in.
class DumpDir {
 public:
  static constexpr const char* kManifest = "ts-dump-manifest.txt";
  DumpDir(const std::string& dir, const std::string& chapter, const std::string& command);
  // Lists `name` in the manifest (rewritten first, so no file is ever unlisted) and returns
  // the path to write it to.
  std::string add(const std::string& name);

 private:
  void write_manifest() const;
  std::string dir_, header_;
  std::vector<std::string> files_;
};

}  // namespace ts
