// train/safetensors.cpp: see safetensors.hpp. Written by hand: Debian 12 packages no C++
// safetensors library, and the format is a length, a JSON header and raw bytes.
#include "train/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

namespace ts::train {

static size_t numel(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

// n values of `item` bytes each, as a tensor of the given dtype and shape
static StTensor st_raw(const char* dtype, const void* p, size_t item, const std::vector<int64_t>& shape) {
  StTensor t;
  t.dtype = dtype;
  t.shape = shape;
  const auto* b = static_cast<const unsigned char*>(p);
  t.data.assign(b, b + numel(shape) * item);
  return t;
}

StTensor st_f32(const float* p, const std::vector<int64_t>& shape) { return st_raw("F32", p, sizeof(float), shape); }
StTensor st_i64(const int64_t* p, const std::vector<int64_t>& shape) {
  return st_raw("I64", p, sizeof(int64_t), shape);
}

static std::string errno_text() { return std::strerror(errno); }

// write all n bytes or throw
static void write_all(int fd, const void* p, size_t n, const std::string& what) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw FileError("cannot write " + what + ": " + errno_text());
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void save_safetensors(const std::string& path, const StFile& tensors, const StMeta& metadata) {
  // 1) the header: names in sorted order (std::map), offsets laid end to end
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';  // the format allows trailing spaces; keeps data aligned
  // 2) refuse a symlink target (rename would replace the link, not what it points to)
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw FileError("refusing to overwrite " + path + ": it is a symbolic link");
  // 3) a temporary file in the same folder, then rename
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw FileError("cannot create a file next to " + path + ": " + errno_text());
  try {
    // mkstemp makes the file private (0600); a checkpoint is readable like any other output
    if (::fchmod(fd, 0644) != 0) throw FileError("cannot set the mode of " + tmp + ": " + errno_text());
    unsigned char len[8];
    uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    write_all(fd, len, 8, tmp);
    write_all(fd, text.data(), text.size(), tmp);
    for (const auto& [name, t] : tensors) write_all(fd, t.data.data(), t.data.size(), tmp);
    if (::fsync(fd) != 0) throw FileError("cannot flush " + tmp + ": " + errno_text());
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw FileError("cannot close " + tmp + ": " + errno_text());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string e = errno_text();
    ::unlink(tmp.c_str());
    throw FileError("cannot rename " + tmp + " to " + path + ": " + e);
  }
}

StFile load_safetensors(const std::string& path, StMeta* metadata) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw FileError("cannot open " + path + ": " + errno_text());
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw FileError("cannot read " + path);
  if (bytes.size() < 8) throw FileError(path + " is truncated: shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  if (n > bytes.size() - 8) throw FileError(path + " is truncated: its header says " + std::to_string(n) + " bytes");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const nlohmann::json::exception&) {
    throw FileError(path + " is not a safetensors file: its header is not JSON");
  }
  if (!header.is_object()) throw FileError(path + " is not a safetensors file: its header is not a JSON object");
  const size_t data_size = bytes.size() - 8 - n;
  StFile out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (metadata && it.value().is_object())
        for (auto m = it.value().begin(); m != it.value().end(); ++m)
          if (m.value().is_string()) (*metadata)[m.key()] = m.value().get<std::string>();
      continue;
    }
    const auto& e = it.value();
    try {
      StTensor t;
      t.dtype = e.at("dtype").get<std::string>();
      t.shape = e.at("shape").get<std::vector<int64_t>>();
      const auto off = e.at("data_offsets").get<std::vector<uint64_t>>();
      const size_t item = t.dtype == "F32" ? 4 : t.dtype == "I64" ? 8 : 0;
      if (item == 0) throw FileError(path + ": tensor " + it.key() + " has dtype " + t.dtype + " (F32 or I64 expected)");
      for (int64_t d : t.shape)
        if (d < 0) throw FileError(path + ": tensor " + it.key() + " has a negative dimension");
      if (off.size() != 2 || off[0] > off[1] || off[1] > data_size)
        throw FileError(path + " is truncated: tensor " + it.key() + " lies beyond the end of the file");
      if (off[1] - off[0] != numel(t.shape) * item)
        throw FileError(path + ": tensor " + it.key() + " has " + std::to_string(off[1] - off[0]) +
                        " bytes for its shape");
      const auto* base = reinterpret_cast<const unsigned char*>(bytes.data()) + 8 + n;
      t.data.assign(base + off[0], base + off[1]);
      out[it.key()] = std::move(t);
    } catch (const nlohmann::json::exception&) {
      throw FileError(path + ": tensor " + it.key() + " has a malformed header entry");
    }
  }
  return out;
}

}  // namespace ts::train
