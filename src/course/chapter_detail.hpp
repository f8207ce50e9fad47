// course/chapter_detail.hpp: what chapter.cpp (the run), chapter_options.cpp (flags and options)
// and chapter_output.cpp (what a step prints) share. Chapters include chapter.hpp, not this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "course/chapter.hpp"

namespace ts {

// ---------------------------------------------------------------------------------
// Knobs: every flag and option, with what the user typed
// ---------------------------------------------------------------------------------
enum KnobKind { kFlag, kInt, kDouble, kText, kPath };

struct Chapter::Knob {
  std::vector<std::string> names;  // "--seq-len", "--pe-len"
  KnobKind kind;
  void* target;                    // bool*, int64_t*, double* or std::string*
  std::string text;                // the value as typed (CLI11 stores it here)
  std::string typed_name;          // the alias the user wrote
  bool given = false;
  bool has_range = false;          // integers: lo <= value <= hi, checked after parsing
  int64_t lo = 0, hi = 0;
  std::string why;
  NearZero near_zero;              // decimals: 0 valid?, the smallest nonzero value accepted
  Help help;                       // the English help and its values (translated when --help is built)
  std::string default_text;        // a chapter knob's value before parsing, shown as " (default X)"
  CLI::Option* option = nullptr;
};

namespace chapter_detail {

struct QuitSteps {};  // q at a --step-by-step pause

// An error message kept to ONE line whatever the user typed into it: control bytes as \xNN, and
// what a terminal would not show as typed (a byte that is not UTF-8, an invisible or bidi format
// character such as U+202E, which would reorder the rest of the line) as \xNN or \uNNNN.
std::string one_line(const std::string& msg);
// A value echoed in a message: one line, at most 60 bytes, cut where a character starts.
std::string printable(const std::string& v);
std::string in_quotes(const std::string& v);  // quoted_input(v)
bool dumb_terminal();  // TERM=dumb: a terminal that shows escape sequences as text
// Two paths naming one folder (either may not exist yet).
bool same_folder(const std::string& a, const std::string& b);
std::string join_words(int argc, char** argv);  // argv as typed, one space between

}  // namespace chapter_detail
}  // namespace ts
