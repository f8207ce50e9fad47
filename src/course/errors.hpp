// errors.hpp: UsageError and IoError, the two kinds of failure a chapter reports to the
// learner (introduced in ch01), now live in base/errors.hpp beside train's FileError, so every
// layer reads them from one home; this header keeps the chapters' include.
#pragma once

#include "base/errors.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include "course/i18n.hpp"
#include "train/checkpoint.hpp"

namespace ts {

// Runs what a --save/--load flag asks (introduced in ch11, used by ch12 and ch13): a checkpoint
// that is not right is bad input (exit 2), a failing disk an I/O failure (exit 1); the message,
// in the learner's language, starts with the flag.
template <class Work>
auto checkpoint_io(const char* flag, const Work& work) {
  // a note the load left (an older checkpoint, loaded unchecked), said once it has succeeded
  struct Notes {
    const char* flag;
    ~Notes() {
      for (const FileError& n : train::take_checkpoint_notes())
        if (std::uncaught_exceptions() == 0) std::fprintf(stderr, "%s: %s\n", flag, n.in(tr).c_str());
    }
  } notes{flag};
  try {
    return work();
  } catch (const FileIoError& e) {
    throw IoError(std::string(flag) + ": " + e.in(tr));
  } catch (const FileError& e) {
    throw UsageError(std::string(flag) + ": " + e.in(tr));
  }
}

}  // namespace ts
