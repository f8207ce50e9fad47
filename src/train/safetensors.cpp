// train/safetensors.cpp: see safetensors.hpp. Written by hand: Debian 12 packages no C++
// safetensors library, and the format is a length, a JSON header and raw bytes.
#include "train/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <tuple>

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

static std::string errno_text(int err = errno) { return std::strerror(err); }

// ---------------------------------------------------------------- writing

// write all n bytes or throw
static void write_all(int fd, const void* p, size_t n, const std::string& what) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw FileIoError(N_("cannot write {path}: {reason}"), fmt::arg("path", what),
                                   fmt::arg("reason", errno_text(w < 0 ? errno : ENOSPC)));
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void write_safetensors(int fd, const std::string& path, const StFile& tensors, const StMeta& metadata) {
  // the header: names in sorted order (std::map), offsets laid end to end
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';  // the format allows trailing spaces; keeps data aligned
  unsigned char len[8];
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  write_all(fd, len, 8, path);
  write_all(fd, text.data(), text.size(), path);
  for (const auto& [name, t] : tensors) write_all(fd, t.data.data(), t.data.size(), path);
  if (::fsync(fd) != 0) throw FileIoError(N_("cannot flush {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text()));
}

void save_safetensors(const std::string& path, const StFile& tensors, const StMeta& metadata) {
  // refuse a symlink target (rename would replace the link, not what it points to)
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw FileError(N_("refusing to overwrite {path}: it is a symbolic link"), fmt::arg("path", path));
  // a temporary file in the same folder, then rename, then flush the folder
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw FileIoError(N_("cannot create a file next to {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text()));
  try {
    // mkstemp makes the file private (0600); a checkpoint is readable like any other output
    if (::fchmod(fd, 0644) != 0) throw FileIoError(N_("cannot set the mode of {path}: {reason}"), fmt::arg("path", tmp), fmt::arg("reason", errno_text()));
    write_safetensors(fd, tmp, tensors, metadata);
    if (::close(fd) != 0) throw FileIoError(N_("cannot write {path}: {reason}"), fmt::arg("path", tmp), fmt::arg("reason", errno_text()));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string e = errno_text();
    ::unlink(tmp.c_str());
    throw FileIoError(N_("cannot rename {tmp} to {path}: {reason}"), fmt::arg("tmp", tmp), fmt::arg("path", path), fmt::arg("reason", e));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    const bool synced = ::fsync(dfd) == 0;
    ::close(dfd);
    if (!synced) throw FileIoError(N_("cannot flush {path}: {reason}"), fmt::arg("path", dir), fmt::arg("reason", errno_text()));
  }
}

// ---------------------------------------------------------------- reading

namespace {

constexpr uint64_t kMaxHeaderBytes = 16u << 20;  // ours are a few kB; the format's own cap is 100 MB
constexpr int kMaxDepth = 4;                     // {"name": {"shape": [..]}} is 3 deep
constexpr uint64_t kMaxDim = uint64_t(1) << 40;  // one dimension; the product is checked too

// read n bytes at `offset` into dst, or throw
using ReadAt = std::function<void(uint64_t offset, void* dst, size_t n)>;

// A refusal: msgid names the file as {path} (and the tensor as {tensor}, ...)
template <class... Args>
[[noreturn]] void bad(const char* msgid, const std::string& path, const Args&... named) {
  throw FileError(msgid, fmt::arg("path", path), named...);
}

// Nesting depth of a JSON text outside its strings: refused above kMaxDepth before parsing, so a
// header of a million '[' is not built in memory.
int json_depth(const char* p, size_t n) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > kMaxDepth) return deepest;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// The header as JSON; a duplicate key at any depth is refused (nlohmann-json keeps the last).
nlohmann::json parse_header(const std::string& text, const std::string& path) {
  if (text.find('\0') != std::string::npos) bad(N_("{path} is not a valid safetensors file: its header holds a NUL byte"), path);
  if (json_depth(text.data(), text.size()) > kMaxDepth) bad(N_("{path} is not a valid safetensors file: its header is nested too deeply"), path);
  std::vector<std::set<std::string>> keys;  // the keys seen in each open object
  std::string duplicate;
  const auto watch = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) keys.emplace_back();
    if (ev == E::object_end && !keys.empty()) keys.pop_back();
    if (ev == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, watch);
  } catch (const nlohmann::json::exception&) {
    bad(N_("{path} is not a valid safetensors file: its header is not JSON"), path);
  }
  if (!duplicate.empty()) bad(N_("{path} is not a valid safetensors file: its header names \"{key}\" twice"), path,
                               fmt::arg("key", duplicate));
  if (!header.is_object()) bad(N_("{path} is not a valid safetensors file: its header is not a JSON object"), path);
  return header;
}

uint64_t unsigned_of(const nlohmann::json& v, const std::string& path, const std::string& tensor, const char* field) {
  if (!v.is_number_unsigned())
    bad(N_("{path} is not a valid safetensors file: tensor {tensor}: {field} holds {value}, not a non-negative integer"),
        path, fmt::arg("tensor", tensor), fmt::arg("field", field), fmt::arg("value", v.dump().substr(0, 40)));
  return v.get<uint64_t>();
}

StFile parse(uint64_t size, const ReadAt& read_at, const std::string& path, StMeta* metadata, bool read_data = true) {
  // 1) the header's length, then the header
  if (size < 8) bad(N_("{path} is not a valid safetensors file: it is shorter than the 8-byte header length (truncated?)"), path);
  unsigned char len[8];
  read_at(0, len, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  if (n > size - 8) bad(N_("{path} is not a valid safetensors file: its header length {n} runs past the end of the file (truncated?)"), path,
        fmt::arg("n", n));
  if (n > kMaxHeaderBytes) bad(N_("{path} is not a valid safetensors file: its header length {n} is larger than any checkpoint's"), path,
        fmt::arg("n", n));
  std::string text(n, '\0');
  read_at(8, text.data(), n);
  const nlohmann::json header = parse_header(text, path);
  const uint64_t data_size = size - 8 - n;
  // 2) every entry: the metadata, or one tensor with exactly dtype, shape and data_offsets
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  StFile out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& e = it.value();
    if (name == "__metadata__") {
      if (!e.is_object()) bad(N_("{path} is not a valid safetensors file: __metadata__ is not an object"), path);
      for (auto m = e.begin(); m != e.end(); ++m) {
        if (!m.value().is_string()) bad(N_("{path} is not a valid safetensors file: __metadata__ \"{key}\" is not a string"), path,
              fmt::arg("key", m.key()));
        if (metadata) (*metadata)[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!e.is_object() || e.size() != 3 || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      bad(N_("{path} is not a valid safetensors file: tensor {tensor} is not {{dtype, shape, data_offsets}}"), path,
          fmt::arg("tensor", name));
    StTensor t;
    if (!e["dtype"].is_string()) bad(N_("{path} is not a valid safetensors file: tensor {tensor}: its dtype is not a string"), path,
                                        fmt::arg("tensor", name));
    t.dtype = e["dtype"].get<std::string>();
    const uint64_t item = t.dtype == "F32" ? 4 : t.dtype == "I64" ? 8 : 0;
    if (item == 0) bad(N_("{path} is not a valid safetensors file: tensor {tensor} has dtype {dtype} (F32 or I64 expected)"),
                       path, fmt::arg("tensor", name), fmt::arg("dtype", t.dtype));
    if (!e["shape"].is_array() || e["shape"].size() > 8) bad(N_("{path} is not a valid safetensors file: tensor {tensor}: its shape is not a list of up to 8 sizes"),
          path, fmt::arg("tensor", name));
    uint64_t bytes = item;
    for (const auto& d : e["shape"]) {
      const uint64_t v = unsigned_of(d, path, name, "shape");
      if (v > kMaxDim || __builtin_mul_overflow(bytes, v, &bytes) || bytes > size)
        bad(N_("{path} is not a valid safetensors file: tensor {tensor} has a shape larger than the file"), path,
            fmt::arg("tensor", name));
      t.shape.push_back(static_cast<int64_t>(v));
    }
    const nlohmann::json& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2) bad(N_("{path} is not a valid safetensors file: tensor {tensor}: its data_offsets are not [begin, end]"),
          path, fmt::arg("tensor", name));
    const uint64_t b = unsigned_of(off[0], path, name, "data_offsets"),
                   end = unsigned_of(off[1], path, name, "data_offsets");
    if (b > end || end > data_size) bad(N_("{path} is not a valid safetensors file: tensor {tensor} lies beyond the end of the file (truncated?)"),
          path, fmt::arg("tensor", name));
    if (end - b != bytes)
      bad(N_("{path} is not a valid safetensors file: tensor {tensor} has {n} bytes, its shape and dtype need {need}"),
          path, fmt::arg("tensor", name), fmt::arg("n", end - b), fmt::arg("need", bytes));
    ranges.push_back({b, end, name});
    out.emplace(name, std::move(t));
  }
  // 3) the byte ranges laid end to end, from 0 to the end of the file
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t at = 0;
  for (const Range& r : ranges) {
    if (r.begin != at)
      bad(r.begin < at ? N_("{path} is not a valid safetensors file: tensor {tensor} overlaps the tensor before it")
                       : N_("{path} is not a valid safetensors file: tensor {tensor} leaves a gap before it"),
          path, fmt::arg("tensor", r.name));
    at = r.end;
  }
  if (at != data_size) bad(N_("{path} is not a valid safetensors file: {n} bytes follow the last tensor"), path,
                             fmt::arg("n", data_size - at));
  // 4) the values, read straight into each tensor; F32 values must be finite
  if (!read_data) return out;
  for (const Range& r : ranges) {
    StTensor& t = out.at(r.name);
    t.data.resize(r.end - r.begin);
    if (!t.data.empty()) read_at(8 + n + r.begin, t.data.data(), t.data.size());
    if (t.dtype != "F32") continue;
    for (size_t i = 0; i < t.data.size(); i += 4) {
      float v;
      std::memcpy(&v, t.data.data() + i, 4);
      if (!std::isfinite(v))
        throw FileError(std::isnan(v) ? N_("{path}: tensor {tensor} holds NaN (value {i}): the run that saved it "
                                            "diverged; train it again")
                                      : N_("{path}: tensor {tensor} holds an infinity (value {i}): the run that saved "
                                           "it diverged; train it again"),
                        fmt::arg("path", path), fmt::arg("tensor", r.name), fmt::arg("i", i / 4));
    }
  }
  return out;
}

}  // namespace

StFile parse_safetensors(const unsigned char* bytes, size_t size, const std::string& path, StMeta* metadata) {
  return parse(size, [&](uint64_t offset, void* dst, size_t n) { std::memcpy(dst, bytes + offset, n); }, path,
               metadata);
}

// fd's size, after refusing what is not a regular file or is larger than max_bytes
static uint64_t checked_size(int fd, const std::string& path, uint64_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw FileIoError(N_("cannot read {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text()));
  if (!S_ISREG(st.st_mode))
    throw FileError(S_ISDIR(st.st_mode)    ? N_("{path} is not a regular file (a directory): a checkpoint holds files "
                                              "written by --save")
                    : S_ISFIFO(st.st_mode) ? N_("{path} is not a regular file (a pipe): a checkpoint holds files written "
                                              "by --save")
                                           : N_("{path} is not a regular file (a device or socket): a checkpoint holds "
                                              "files written by --save"),
                    fmt::arg("path", path));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    throw FileError(N_("{path} is {size} bytes, more than the {max} this checkpoint can be: it is not one written by "
                       "--save for this model"),
                    fmt::arg("path", path), fmt::arg("size", size), fmt::arg("max", max_bytes));
  return size;
}

static ReadAt reader_of(int fd, const std::string& path) {
  return [fd, path](uint64_t offset, void* dst, size_t n) {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw FileIoError(N_("cannot read {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text()));
      if (r == 0) throw FileError(N_("{path} became shorter while it was read: is another run writing it?"), fmt::arg("path", path));
      p += r, n -= static_cast<size_t>(r), offset += static_cast<uint64_t>(r);
    }
  };
}

StFile load_safetensors_fd(int fd, const std::string& path, StMeta* metadata, uint64_t max_bytes) {
  return parse(checked_size(fd, path, max_bytes), reader_of(fd, path), path, metadata);
}

void read_safetensors_metadata_fd(int fd, const std::string& path, StMeta* metadata) {
  parse(checked_size(fd, path, kMaxSafetensorsBytes), reader_of(fd, path), path, metadata, false);
}

StFile load_safetensors(const std::string& path, StMeta* metadata, uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == EIO || err == ENOMEM || err == EMFILE || err == ENFILE)
      throw FileIoError(N_("cannot open {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text(err)));
    throw FileError(N_("cannot open {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text(err)));
  }
  try {
    StFile f = load_safetensors_fd(fd, path, metadata, max_bytes);
    ::close(fd);
    return f;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace ts::train
