// dump_dir.cpp: see dump_dir.hpp (moved here from exact/npy.cpp: the directory, its messages
// and exit codes are the course's; the .npy bytes stay in exact/).
#include "course/dump_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "course/errors.hpp"
#include "course/i18n.hpp"
#include "exact/npy.hpp"

namespace ts {
namespace {

const char kManifestMagic[] = "transformer-steps --dump manifest 1";

// The names a manifest lists ("file NAME" lines); nullopt if `path` is not a manifest.
std::optional<std::vector<std::string>> read_manifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!std::getline(in, line) || line != kManifestMagic) return std::nullopt;
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    if (line.rfind("file ", 0) != 0) continue;
    const std::string name = line.substr(5);
    // only plain names inside the directory
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) return std::nullopt;
    names.push_back(name);
  }
  return names;
}

// The learner's message for a write the system failed.
std::string write_failure(const WriteError& e) {
  const char* step = std::strcmp(e.step, kStepCreate) == 0 ? _("create a file in its directory")
                     : std::strcmp(e.step, kStepClose) == 0 ? _("close")
                     : std::strcmp(e.step, kStepRename) == 0 ? _("rename")
                                                             : _("write");
  return trf("cannot write {path} ({what}): {reason}", fmt::arg("path", e.path), fmt::arg("what", step),
             fmt::arg("reason", std::strerror(e.err)));
}

}  // namespace

DumpDir::DumpDir(const std::string& dir, const std::string& chapter, const std::string& command) : dir_(dir) {
  const std::string fix = _(": give --dump a new or empty directory (a dump directory holds one run)");
  // 1) the directory: created if missing (a symlink the user names as DIR is followed, like mkdir -p)
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw UsageError(trf("--dump: '{dir}' is not a directory", fmt::arg("dir", dir)) + fix);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)  // the system refused (permissions, a read-only or virtual file system): an I/O failure
    throw IoError(trf("--dump: cannot create directory '{dir}': {reason}", fmt::arg("dir", dir),
                      fmt::arg("reason", ec.message())) + fix);
  // 2) the lock: one run at a time, held until this run ends (closing the descriptor frees it,
  //    also when the process is killed)
  lock_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ < 0)
    throw IoError(trf("--dump: cannot read directory '{dir}': {reason}", fmt::arg("dir", dir),
                      fmt::arg("reason", std::strerror(errno))));
  while (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK)
      throw UsageError(trf("--dump: another run is writing to '{dir}' now: wait for it to end, or give another "
                           "directory",
                           fmt::arg("dir", dir)));
    throw IoError(trf("--dump: cannot lock '{dir}': {reason}", fmt::arg("dir", dir), fmt::arg("reason", std::strerror(err))));
  }
  // 3) what an earlier run left: its manifest's files may go; anything else stays, and we stop
  const std::string manifest = (std::filesystem::path(dir) / kManifest).string();
  std::vector<std::string> listed;
  struct stat mst;
  if (::lstat(manifest.c_str(), &mst) == 0) {
    auto names = S_ISREG(mst.st_mode) ? read_manifest(manifest) : std::nullopt;
    if (!names)
      throw UsageError(trf("--dump: '{file}' is not a manifest this course wrote", fmt::arg("file", manifest)) + fix);
    listed = std::move(*names);
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr)
    throw IoError(trf("--dump: cannot read directory '{dir}': {reason}", fmt::arg("dir", dir),
                      fmt::arg("reason", std::strerror(errno))));
  std::vector<std::string> remove;
  std::string stranger;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = (std::filesystem::path(dir) / name).string();
    struct stat est;
    const bool is_dir = ::lstat(path.c_str(), &est) == 0 && S_ISDIR(est.st_mode);
    const bool ours = name == kManifest || name.rfind(kTempPrefix, 0) == 0 ||
                      std::find(listed.begin(), listed.end(), name) != listed.end();
    if (ours && !is_dir) {
      remove.push_back(path);
    } else if (stranger.empty()) {
      stranger = name;
    }
  }
  ::closedir(d);
  if (!stranger.empty())
    throw UsageError(trf("--dump: '{dir}' already holds '{name}', which no earlier --dump wrote there",
                         fmt::arg("dir", dir), fmt::arg("name", stranger)) + fix);
  for (const std::string& path : remove)  // unlink removes a symlink itself, never its target
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw IoError(trf("--dump: cannot remove the earlier run's '{path}': {reason}", fmt::arg("path", path),
                        fmt::arg("reason", std::strerror(errno))) + fix);
  // 4) our manifest; writing it also proves the directory is writable (a refusal, like any
  //    failure of the system to write, is an I/O failure: exit 1, as for every other write)
  std::string one_line = command;  // a --text with a newline must not add lines to the manifest
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  std::replace(one_line.begin(), one_line.end(), '\r', ' ');
  header_ = std::string(kManifestMagic) + "\nchapter " + chapter + "\ncommand " + one_line + "\n";
  try {
    write_atomically(manifest, {{header_.data(), header_.size()}});
  } catch (const WriteError& e) {
    if (e.err == EACCES || e.err == EPERM || e.err == EROFS)
      throw IoError(trf("--dump: {reason}: give a directory you can write in", fmt::arg("reason", write_failure(e))));
    throw IoError(write_failure(e));
  }
}

DumpDir::~DumpDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string DumpDir::add(const std::string& name) {
  files_.push_back(name);
  write_manifest();
  return (std::filesystem::path(dir_) / name).string();
}

void DumpDir::write(const std::string& name, const std::function<void(const std::string&)>& write) {
  const std::string path = add(name);
  try {
    write(path);
  } catch (const WriteError& e) {
    throw IoError(write_failure(e));
  }
}

void DumpDir::write_manifest() const {
  std::string text = header_;
  for (const std::string& f : files_) text += "file " + f + "\n";
  try {
    write_atomically((std::filesystem::path(dir_) / kManifest).string(), {{text.data(), text.size()}});
  } catch (const WriteError& e) {
    throw IoError(write_failure(e));
  }
}

}  // namespace ts
