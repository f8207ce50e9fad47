// base/errors.hpp: the kinds of failure the course reports to the learner, in one place for
// every layer (introduced in ch01; FileError in ch11).
//   UsageError  bad input (a flag, a text, a file the user named): one line naming the fix, exit 2
//   IoError     the system failed us while writing or reading (disk full, I/O error): exit 1
//   FileError   a file the course reads or writes is missing, truncated or inconsistent
//               (train/safetensors, train/checkpoint): the message names the file and what is
//               wrong; the chapter that named the file says which flag it came from (ch11
//               rethrows it as a UsageError "--load: ...").
// Anything else that escapes a chapter is a bug ("internal error", exit 1).
#pragma once

#include <stdexcept>

namespace ts {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ts
