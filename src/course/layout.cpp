// layout.cpp: see layout.hpp.
#include "course/layout.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>

namespace ts {

namespace {

struct ColumnRange {  // every code point in [first, last]
  char32_t first, last;
};
#include "course/display_width.inc"

template <size_t N>
bool in_ranges(const ColumnRange (&table)[N], char32_t c) {
  const ColumnRange* it = std::upper_bound(std::begin(table), std::end(table), c,
                                           [](char32_t x, const ColumnRange& r) { return x < r.first; });
  return it != std::begin(table) && c <= (it - 1)->last;
}

// The code point starting at s[i] and its length in bytes (a malformed byte: itself, 1 byte).
std::pair<char32_t, size_t> decode(const std::string& s, size_t i) {
  const unsigned char b = static_cast<unsigned char>(s[i]);
  const size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (len == 1 || i + len > s.size()) return {b, 1};
  char32_t c = b & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cb = static_cast<unsigned char>(s[i + k]);
    if ((cb & 0xC0) != 0x80) return {b, 1};
    c = (c << 6) | (cb & 0x3F);
  }
  return {c, len};
}

}  // namespace

size_t column_width(char32_t c) {
  if (in_ranges(kZeroWidthRanges, c)) return 0;
  return in_ranges(kWideRanges, c) ? 2 : 1;
}

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\033') {  // ESC [ ... m: a colour, no column
      while (i < s.size() && s[i] != 'm') ++i;
      ++i;
      continue;
    }
    const auto [c, len] = decode(s, i);
    n += column_width(c);
    i += len;
  }
  return n;
}

std::string pad_left(const std::string& s, size_t width) {
  const size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

std::string pad_right(const std::string& s, size_t width) {
  const size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string fit(const std::string& s, size_t width) {
  if (display_width(s) <= width) return s;
  std::string out;
  size_t used = 0;
  for (size_t i = 0; i < s.size();) {
    const auto [c, len] = decode(s, i);
    const size_t w = column_width(c);
    if (used + w + 1 > width) break;  // keep a column for the '~'
    out += s.substr(i, len);
    used += w;
    i += len;
  }
  return out + "~";
}

std::string side_by_side(const std::vector<std::string>& blocks, size_t width) {
  std::vector<std::vector<std::string>> lines(blocks.size());
  std::vector<size_t> widths(blocks.size(), 0);
  for (size_t i = 0; i < blocks.size(); ++i) {
    size_t start = 0;
    while (start < blocks[i].size()) {
      size_t end = blocks[i].find('\n', start);
      if (end == std::string::npos) end = blocks[i].size();
      lines[i].push_back(blocks[i].substr(start, end - start));
      widths[i] = std::max(widths[i], display_width(lines[i].back()));
      start = end + 1;
    }
  }
  std::string out;
  const size_t gap = 3;
  for (size_t first = 0; first < blocks.size();) {
    size_t last = first + 1, used = widths[first];
    while (last < blocks.size() && used + gap + widths[last] <= width) used += gap + widths[last++];
    size_t rows = 0;
    for (size_t i = first; i < last; ++i) rows = std::max(rows, lines[i].size());
    for (size_t r = 0; r < rows; ++r) {
      std::string line;
      for (size_t i = first; i < last; ++i) {
        const std::string cell = r < lines[i].size() ? lines[i][r] : "";
        line += cell;
        if (i + 1 < last) line += std::string(widths[i] - display_width(cell) + gap, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();  // no trailing blanks
      out += line + "\n";
    }
    out += "\n";
    first = last;
  }
  return out;
}

size_t terminal_width(size_t fallback) {
  if (!isatty(STDOUT_FILENO)) return fallback;
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const long n = std::strtol(c, nullptr, 10);
    if (n >= 20 && n <= 1000) return static_cast<size_t>(n);
  }
  return fallback;
}

std::string wrap(const std::string& text, size_t width) {
  std::string out, line, indent;
  auto flush = [&] {
    if (!line.empty()) out += line + "\n";
    line.clear();
  };
  size_t start = 0;
  for (;;) {
    size_t end = text.find('\n', start);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    const std::string raw = text.substr(start, end - start);
    start = end + 1;
    const size_t lead = raw.find_first_not_of(' ');
    if (lead == std::string::npos) {  // a blank line ends the paragraph (and is kept)
      flush();
      if (!last) out += "\n";
    } else if (lead > 2 || raw.find("  ", lead) != std::string::npos) {  // a table row, code: as it is
      flush();
      out += raw + "\n";
    } else {  // prose: its words join the paragraph
      if (line.empty()) indent = raw.substr(0, lead);
      size_t i = lead;
      while (i < raw.size()) {
        const size_t e = std::min(raw.find(' ', i), raw.size());
        const std::string word = raw.substr(i, e - i);
        i = std::min(raw.find_first_not_of(' ', e), raw.size());
        if (line.empty()) {
          line = indent + word;
        } else if (display_width(line) + 1 + display_width(word) <= width) {
          line += " " + word;
        } else {
          out += line + "\n";
          line = indent + word;
        }
      }
    }
    if (last) break;
  }
  flush();
  return out;
}

std::string hang(const std::string& text, size_t width, const std::string& first, const std::string& rest) {
  if (text.find('\n') != std::string::npos || text.find("  ") != std::string::npos) {
    std::string out = first;
    for (char c : text) out += c == '\n' ? "\n" + rest : std::string(1, c);
    return out + "\n";
  }
  std::string out, line = first;
  bool empty = true;
  size_t i = 0;
  while (i < text.size()) {
    const size_t e = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, e - i);
    i = e + 1;
    if (word.empty()) continue;
    if (!empty && display_width(line) + 1 + display_width(word) > width) {
      out += line + "\n";
      line = rest + word;
    } else {
      line += (empty ? "" : " ") + word;
    }
    empty = false;
  }
  return out + line + "\n";
}

std::string text_table(const std::vector<std::vector<std::string>>& rows, size_t right_from) {
  // width of every column: its widest cell, in display columns
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], display_width(row[c]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const size_t gap = width[c] - std::min(width[c], display_width(row[c]));
      if (c >= right_from) {
        line += std::string(1 + gap, ' ') + row[c];
      } else {
        line += " " + row[c];
        if (c + 1 < row.size()) line += std::string(gap, ' ');
      }
      if (c + 1 < row.size()) line += " ";
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace ts
