// dump_dir.hpp: the --dump DIR directory (introduced in ch01). The .npy files themselves are
// written by exact/npy.hpp; this keeps the directory: one run, its manifest, its lock.
//
// A --dump directory holds ONE run: the files it wrote and a manifest naming them
// (kManifest: the chapter, its command line, one "file NAME" line per file). A new run
//   - creates the directory if it does not exist;
//   - locks it (flock on the directory, held until the run ends): a second run started on the
//     same directory meanwhile is refused (UsageError, exit 2) and touches nothing;
//   - in a directory with a manifest, removes the files the manifest lists (and temporary
//     files an interrupted run left) before writing its own;
//   - refuses (UsageError) a directory holding anything else, or one it cannot write in.
// A write the system fails later (disk full, I/O error) is an IoError (exit 1).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ts {

class DumpDir {
 public:
  static constexpr const char* kManifest = "ts-dump-manifest.txt";
  DumpDir(const std::string& dir, const std::string& chapter, const std::string& command);
  ~DumpDir();
  DumpDir(const DumpDir&) = delete;
  DumpDir& operator=(const DumpDir&) = delete;
  // Lists `name` in the manifest (rewritten first, so no file is ever unlisted) and returns
  // the path to write it to.
  std::string add(const std::string& name);
  // add(name), then write(path) (e.g. save_npy); a failed write is an IoError naming the file.
  void write(const std::string& name, const std::function<void(const std::string&)>& write);
  // How many files this run listed.
  size_t count() const { return files_.size(); }

 private:
  void write_manifest() const;
  std::string dir_, header_;
  std::vector<std::string> files_;
  int lock_fd_ = -1;
};

}  // namespace ts
