// terminal_width.cpp: how many columns the chapters' output has (see layout.hpp): TS_COLUMNS,
// else the terminal's (stdout's, stderr's, then the process's own), else 80.
#include "course/layout.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "base/errors.hpp"
#include "course/i18n.hpp"

namespace ts {

namespace {
// The columns of the terminal on fd (TIOCGWINSZ, else $COLUMNS); 0 if fd is no terminal.
// The widths the layout accepts (TS_COLUMNS, a terminal's COLUMNS): narrower cannot hold a
// table's first column, wider is not a screen.
constexpr long kMinColumns = 20, kMaxColumns = 1000;

size_t columns_of_terminal(int fd) {
  if (fd < 0 || !isatty(fd)) return 0;
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= kMinColumns) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const long n = std::strtol(c, nullptr, 10);
    if (n >= kMinColumns && n <= kMaxColumns) return static_cast<size_t>(n);
  }
  return 0;
}

// TS_COLUMNS as a width: -1 when unset or empty, -2 when it is not 0 or a whole number from 20
// to 1000, else the number (0: every line as written)
long columns_env() {
  const char* c = std::getenv("TS_COLUMNS");
  if (!c || !*c) return -1;
  char* end = nullptr;
  const long n = std::strtol(c, &end, 10);
  return end != c && *end == '\0' && (n == 0 || (n >= kMinColumns && n <= kMaxColumns)) ? n : -2;
}
}  // namespace

void check_columns_env() {
  if (columns_env() != -2) return;
  std::string shown(std::getenv("TS_COLUMNS"));
  if (shown.size() > 20) shown = shown.substr(0, 20) + "...";
  throw UsageError(trf("TS_COLUMNS={value} is not a width: use a whole number from {lo} to {hi}, or 0 for every line "
                       "as written (unset it to follow the terminal)",
                       fmt::arg("value", "'" + shown + "'"), fmt::arg("lo", kMinColumns), fmt::arg("hi", kMaxColumns)));
}

size_t terminal_width(size_t as_written) {
  // TS_COLUMNS: a width for every output, terminal or not (tests, a pager of known width);
  // 0: none, every line as the chapter writes it
  // (a value that is neither is refused before the chapter runs: check_columns_env)
  if (const long n = columns_env(); n >= 0) return n == 0 ? as_written : static_cast<size_t>(n);
  // stdout a terminal; piped or redirected with stderr on one (`| less -R`, `> out.txt`); else
  // the process's own terminal (`2>&1 | less -R`); else 80
  if (const size_t n = columns_of_terminal(STDOUT_FILENO)) return n;
  if (const size_t n = columns_of_terminal(STDERR_FILENO)) return n;
  const int tty = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (tty >= 0) {
    const size_t n = columns_of_terminal(tty);
    ::close(tty);
    if (n) return n;
  }
  return 80;
}

}  // namespace ts
