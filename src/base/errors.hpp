// base/errors.hpp: the kinds of failure the course reports to the learner, in one place for
// every layer (introduced in ch01; FileError in ch11).
//   UsageError  bad input (a flag, a text, a file the user named): one line naming the fix, exit 2
//   IoError     the system failed us while writing or reading (disk full, I/O error): exit 1
//   FileError   a file the course reads or writes is missing, truncated or inconsistent
//               (train/safetensors, train/checkpoint): the message names the file and what is
//               wrong; the chapter that named the file says which flag it came from (ch11
//               rethrows it as a UsageError "--load: ...").
//   FileIoError the system failed a read or a write of such a file (disk full, I/O error): a
//               FileError too, so a caller that does not care may catch both; ch11 makes it an
//               IoError (exit 1).
// Anything else that escapes a chapter is a bug ("internal error", exit 1).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/args.h>
#include <fmt/format.h>

// Marks a message for translation (xgettext) without translating it; the same definition as
// course/i18n.hpp's, for the layers below the course: the course translates where it shows it.
#ifndef N_
#define N_(msgid) msgid
#endif

namespace ts {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A check that fails where the run cannot go on (a module's backward that does not match its
// forward): Chapter::run prints it as NOT OK and exits 3, as a failed check that lets the run finish.
struct CheckFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FileError : std::runtime_error {
  // A translatable message: `id` is an English fmt format with named arguments, marked N_();
  // what() is it in English, in(tr) in the learner's language.
  template <class... Args>
  explicit FileError(const char* id, const Args&... named)
      : std::runtime_error(fmt::format(fmt::runtime(id), named...)), msgid(id),
        args(std::make_shared<fmt::dynamic_format_arg_store<fmt::format_context>>()) {
    (args->push_back(named), ...);
  }
  // A message already written out (not translated).
  explicit FileError(const std::string& message) : std::runtime_error(message) {}
  // The message through `translate` (course/i18n's tr): the catalog's text for msgid, formatted
  // with the same arguments; a message written out is returned as it is.
  std::string in(const char* (*translate)(const char*)) const {
    return msgid ? fmt::vformat(translate(msgid), *args) : std::string(what());
  }
  const char* msgid = nullptr;
  std::shared_ptr<fmt::dynamic_format_arg_store<fmt::format_context>> args;
};

struct FileIoError : FileError {
  using FileError::FileError;
};

}  // namespace ts
