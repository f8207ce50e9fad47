// npy.cpp: the .npy header is a Python dict literal padded so data starts 64-byte aligned.
// Files are written through a temporary file and rename (see npy.hpp).
#include "exact/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>

namespace ts {

WriteError::WriteError(std::string p, const char* s, int e)
    : std::runtime_error("cannot write " + p + " (" + s + "): " + std::strerror(e)), path(std::move(p)), step(s), err(e) {}

namespace {

std::string dir_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

// A temporary file in the same directory (created with O_EXCL, so never through a symlink),
// every write checked, close checked, then rename over `path`.
void write_atomically(const std::string& path, const std::vector<std::pair<const void*, size_t>>& parts) {
  std::string tmp = (std::filesystem::path(dir_of(path)) / (std::string(kTempPrefix) + "XXXXXX")).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  auto fail = [&](const char* step, int err) {
    ::unlink(tmp.c_str());
    throw WriteError(path, step, err);
  };
  if (fd < 0) throw WriteError(path, kStepCreate, errno);
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
        fail(kStepWrite, err);
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (::close(fd) != 0) fail(kStepClose, errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(kStepRename, errno);
}

namespace {

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

}  // namespace ts
