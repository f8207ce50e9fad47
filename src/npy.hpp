// npy.hpp: write tensors as NumPy .npy files (format version 1.0), for --dump DIR.
// Load them in Python with numpy.load(path). Introduced in ch01.
#pragma once

#include <string>

#include "tensor.hpp"

namespace ts {

// Writes t to path (row-major, little-endian). Throws std::runtime_error on I/O failure.
void save_npy(const std::string& path, const Tensor& t);   // dtype '<f4'
void save_npy(const std::string& path, const ITensor& t);  // dtype '<i8'
void save_npy(const std::string& path, const BTensor& t);  // dtype '|b1'

}  // namespace ts
