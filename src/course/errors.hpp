// errors.hpp: the two kinds of failure a chapter reports to the learner (introduced in ch01).
//   UsageError  bad input (a flag, a text, a file the user named): one line naming the fix, exit 2
//   IoError     the system failed us while writing or reading (disk full, I/O error): exit 1
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

}  // namespace ts
