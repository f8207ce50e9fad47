// layout.hpp: text laid out for the terminal -- display width, label cutting, blocks side by
// side, prose wrapped to the screen (introduced in ch01's heatmaps, used by every chapter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

// Columns a character takes on a terminal: 2 for East Asian Wide and Fullwidth (CJK:
// 注意力), 0 for combining marks and format characters, else 1 (src/course/display_width.inc,
// generated from Python's unicodedata by scripts/gen_unicode_tables.py).
size_t column_width(char32_t c);
// Columns `s` (UTF-8) takes on a terminal; ANSI colour sequences take none.
size_t display_width(const std::string& s);

// `s` padded with spaces to `width` columns (unchanged if already wider).
std::string pad_right(const std::string& s, size_t width);
// `s` right-aligned in `width` columns: spaces before it (unchanged if already wider).
std::string pad_left(const std::string& s, size_t width);

// `s` cut to at most `width` columns, the cut marked with '~' (the '~' takes the last column;
// a wide character that would not fit is left out whole).
std::string fit(const std::string& s, size_t width);

// A table of text cells, one string per row, each row starting with two spaces; the columns
// are as wide as their widest cell in display columns (CJK headers align), 2 spaces apart.
// Columns from `right_from` on are right-aligned (numbers); the others left-aligned.
std::string text_table(const std::vector<std::vector<std::string>>& rows, size_t right_from = SIZE_MAX);

// Multi-line blocks side by side, as many per row as fit in `width` columns, 3 spaces apart;
// a blank line after each row of blocks.
std::string side_by_side(const std::vector<std::string>& blocks, size_t width);

// The columns the explained output is laid out for: TS_COLUMNS (20..1000) if set; else the
// terminal on stdout (TIOCGWINSZ, else $COLUMNS); piped or redirected, the terminal on stderr
// (`| less -R`, `> out.txt` typed at a prompt), else the process's terminal, /dev/tty
// (`2>&1 | less -R`); else 80 (no terminal at all: a cron job, a CI log). TS_COLUMNS=0 asks for
// no layout: then `as_written` is returned, which callers take as "each line as written"
// (the tests that match lines set it, so that they do not depend on who runs them).
size_t terminal_width(size_t as_written = std::string::npos);
// Throws UsageError (one line naming the fix, in the learner's language) when TS_COLUMNS is set to anything but
// 0 or a whole number from 20 to 1000 (kMinColumns, kMaxColumns in layout.cpp): each chapter checks it once, with its flags (bad input, exit 2).
void check_columns_env();

// A table or a figure laid out in `width` columns: as it is when it fits; else the columns
// that fit whole (columns: text parted by at least two blank columns on every line), then one
// line saying how many were left out. Never cut into blocks one under the other, which would
// look like new rows or a new table. A block with no such columns is folded (fold_block).
std::string fit_block(const std::string& text, size_t width);

// A printed value (a tensor printed at the width, a module repr, a list) laid out in `width`
// columns: each line that is wider is folded after its last ", " or " " that fits (a number
// longer than the room: where the width ends), the rest under the line's first value, as
// PyTorch wraps a row: nothing is left out, nothing is repeated.
std::string fold_block(const std::string& text, size_t width);

// Prose re-flowed to `width` columns, by display width: a line breaks at a space, or between
// two CJK characters (never before closing punctuation such as ，。）), and a word longer
// than a line is cut. A line that carries a verdict ("OK: ", "NOT OK: ") is a paragraph of
// its own. Rows of a table that do not fit are laid out by fit_block. A prose line starts with at most 2 spaces and has no
// run of 2 spaces inside; consecutive prose lines form a paragraph whose words are joined
// and broken before `width`, each line starting with the paragraph's first indent. Other
// lines (tables, code, anything aligned with spaces) and blank lines are kept as they are.
std::string wrap(const std::string& text, size_t width);

// One note with a hanging indent: `first` before its first line, `rest` before the others,
// words re-flowed to `width` columns; ends with a newline. A note with a line break or a
// double space inside (a table, aligned figures) keeps its lines, each after `rest`.
std::string hang(const std::string& text, size_t width, const std::string& first, const std::string& rest);

}  // namespace ts
