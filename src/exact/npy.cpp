// npy.cpp: the .npy header is a Python dict literal padded so data starts 64-byte aligned.
// Files are written through a temporary file and rename (see npy.hpp).
#include "exact/npy.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "course/errors.hpp"
#include "course/i18n.hpp"

namespace ts {
namespace {

const char kTempPrefix[] = ".ts-dump-tmp-";

std::string dir_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// Writes the byte ranges `parts` to `path` atomically: a temporary file in the same
// directory (created with O_EXCL, so never through a symlink), every write checked,
// close checked, then rename over `path`. Throws IoError with the system's reason.
void write_atomically(const std::string& path, const std::vector<std::pair<const void*, size_t>>& parts) {
  std::string tmp = (std::filesystem::path(dir_of(path)) / (std::string(kTempPrefix) + "XXXXXX")).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  auto fail = [&](const char* what, int err) {
    ::unlink(tmp.c_str());
    throw IoError(trf("cannot write {path} ({what}): {reason}", fmt::arg("path", path), fmt::arg("what", tr(what)),
                      fmt::arg("reason", std::strerror(err))));
  };
  if (fd < 0)
    throw IoError(trf("cannot write {path} ({what}): {reason}", fmt::arg("path", path),
                      fmt::arg("what", _("create a file in its directory")), fmt::arg("reason", std::strerror(errno))));
  // mkostemp makes 0600 files; give the usual 0666 & ~umask, like any other output file
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  for (const auto& [data, bytes] : parts) {
    const char* p = static_cast<const char*>(data);
    size_t left = bytes;
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : ENOSPC;
        ::close(fd);
        fail(N_("write"), err);
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (::close(fd) != 0) fail(N_("close"), errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(N_("rename"), errno);
}

// shape (d0, d1, ...) -> "(d0, d1, )" Python tuple syntax ("(5,)" for one dimension).
std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += std::to_string(shape[i]);
    s += (shape.size() == 1 || i + 1 < shape.size()) ? "," : "";
    if (i + 1 < shape.size()) s += " ";
  }
  return s + ")";
}

void write_npy(const std::string& path, const char* descr, const Shape& shape, const void* data, size_t bytes) {
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                       shape_tuple(shape) + ", }";
  size_t total = 10 + header.size() + 1;  // magic(6) + version(2) + len(2) + header + '\n'
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char preamble[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(len & 0xff),
                             static_cast<char>(len >> 8)};
  write_atomically(path, {{preamble, sizeof preamble}, {header.data(), header.size()}, {data, bytes}});
}

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

}  // namespace

void save_npy(const std::string& path, const Tensor& t) {
  write_npy(path, "<f4", shape_of(t), t.data(), t.size() * sizeof(float));
}
void save_npy(const std::string& path, const ITensor& t) {
  write_npy(path, "<i8", shape_of(t), t.data(), t.size() * sizeof(int64_t));
}
void save_npy(const std::string& path, const BTensor& t) {
  std::vector<uint8_t> bytes(t.begin(), t.end());
  write_npy(path, "|b1", shape_of(t), bytes.data(), bytes.size());
}

void save_text(const std::string& path, const std::string& text) {
  write_atomically(path, {{text.data(), text.size()}});
}

DumpDir::DumpDir(const std::string& dir, const std::string& chapter, const std::string& command) : dir_(dir) {
  const std::string fix = _(": give --dump a new or empty directory (a dump directory holds one run)");
  // 1) the directory: created if missing (a symlink the user names as DIR is followed, like mkdir -p)
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw UsageError(trf("--dump: '{dir}' is not a directory", fmt::arg("dir", dir)) + fix);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw UsageError(trf("--dump: cannot create directory '{dir}': {reason}", fmt::arg("dir", dir),
                         fmt::arg("reason", ec.message())) + fix);
  // 2) what an earlier run left: its manifest's files may go; anything else stays, and we stop
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
    throw UsageError(trf("--dump: cannot read directory '{dir}': {reason}", fmt::arg("dir", dir),
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
      throw UsageError(trf("--dump: cannot remove the earlier run's '{path}': {reason}", fmt::arg("path", path),
                           fmt::arg("reason", std::strerror(errno))) + fix);
  // 3) our manifest; writing it also proves the directory is writable
  std::string one_line = command;  // a --text with a newline must not add lines to the manifest
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  std::replace(one_line.begin(), one_line.end(), '\r', ' ');
  header_ = std::string(kManifestMagic) + "\nchapter " + chapter + "\ncommand " + one_line + "\n";
  try {
    write_manifest();
  } catch (const IoError& e) {
    throw UsageError(trf("--dump: {reason}: give a directory you can write in", fmt::arg("reason", e.what())));
  }
}

std::string DumpDir::add(const std::string& name) {
  files_.push_back(name);
  write_manifest();
  return (std::filesystem::path(dir_) / name).string();
}

void DumpDir::write_manifest() const {
  std::string text = header_;
  for (const std::string& f : files_) text += "file " + f + "\n";
  write_atomically((std::filesystem::path(dir_) / kManifest).string(), {{text.data(), text.size()}});
}

}  // namespace ts
