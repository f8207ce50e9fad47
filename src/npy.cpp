// npy.cpp: the .npy header is a Python dict literal padded so data starts 64-byte aligned.
#include "npy.hpp"

#include <cstdint>
#include <fstream>
#include <stdexcept>

namespace ts {
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
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(magic, 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_le, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw std::runtime_error("cannot write " + path);
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

}  // namespace ts
