// data/io.hpp: whole files in, for the data readers (introduced with issue 43's data).
// A missing file, a directory, a FIFO or a device is a ts::FileError naming the path; a read
// the system fails is a ts::FileIoError. Files over `max_bytes` are refused, never read.
#pragma once

#include <cstddef>
#include <string>

namespace ts::data {

std::string read_file(const std::string& path, size_t max_bytes = size_t(1) << 30);

}  // namespace ts::data
