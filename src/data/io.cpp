// data/io.cpp: whole files in (see io.hpp).
#include "data/io.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.hpp"

namespace ts::data {

std::string read_file(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: a FIFO is refused by fstat below, never waited on
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw FileError(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(path + ": not a regular file");
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    throw FileError(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                    std::to_string(max_bytes) + " a data file may have");
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      const int e = errno;
      ::close(fd);
      throw FileIoError(path + ": read failed (" + std::strerror(e) + ")");
    }
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      throw FileError(path + ": grew past " + std::to_string(max_bytes) + " bytes while read");
    }
  }
  ::close(fd);
  return out;
}

}  // namespace ts::data
