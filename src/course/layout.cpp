// layout.cpp: see layout.hpp.
#include "course/layout.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/errors.hpp"
#include "course/i18n.hpp"

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

namespace {

// Punctuation that never starts a line (it stays with the character before it) and that
// never ends one (it stays with the character after it).
bool closing(char32_t c) {
  static const char32_t kClosing[] = {U'，', U'。', U'、', U'；', U'：', U'！', U'？', U'）', U'」', U'』', U'》',
                                      U'】', U'〉', U'”', U'’', U'…'};
  return std::find(std::begin(kClosing), std::end(kClosing), c) != std::end(kClosing);
}
bool opening(char32_t c) {
  static const char32_t kOpening[] = {U'（', U'「', U'『', U'《', U'【', U'〈', U'“', U'‘'};
  return std::find(std::begin(kOpening), std::end(kOpening), c) != std::end(kOpening);
}

// One unbreakable piece of a paragraph, and whether a space stood before it.
struct Unit {
  std::string text;
  bool space_before;
};

// A line of prose -> its units: runs of non-space characters, except that a line may break
// between two wide (CJK) characters and between a wide character and a narrow one; never
// before closing punctuation (，。、；：！？）」』》) nor after opening punctuation.
std::vector<Unit> units_of(const std::string& text) {
  std::vector<Unit> out;
  bool space = false, glue_next = false;
  char32_t prev = 0;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\033') {  // a colour sequence sticks to what follows
      size_t e = text.find('m', i);
      e = e == std::string::npos ? text.size() : e + 1;
      if (out.empty() || space) out.push_back({"", space}), space = false, glue_next = true;
      out.back().text += text.substr(i, e - i);
      i = e;
      continue;
    }
    const auto [c, len] = decode(text, i);
    const std::string ch = text.substr(i, len);
    i += len;
    if (c == ' ') {
      space = true;
      glue_next = false;
      prev = c;
      continue;
    }
    const bool wide = column_width(c) == 2, prev_wide = prev != 0 && column_width(prev) == 2;
    const bool start = out.empty() || space ||
                       (!glue_next && !closing(c) && (wide || prev_wide) && !opening(prev));
    if (start) {
      out.push_back({ch, space});
    } else {
      out.back().text += ch;
    }
    glue_next = false;
    space = false;
    prev = c;
  }
  return out;
}

// `unit` cut into pieces of at most `width` columns (a word longer than a line).
std::vector<std::string> split_columns(const std::string& unit, size_t width) {
  std::vector<std::string> out(1);
  size_t used = 0;
  for (size_t i = 0; i < unit.size();) {
    size_t len = decode(unit, i).second, w = column_width(decode(unit, i).first);
    if (unit[i] == '\033') {
      const size_t e = unit.find('m', i);
      len = (e == std::string::npos ? unit.size() : e + 1) - i;
      w = 0;
    }
    if (used + w > width && used > 0) out.emplace_back(), used = 0;
    out.back() += unit.substr(i, len);
    used += w;
    i += len;
  }
  return out;
}

// One paragraph re-flowed: `first` before its first line, `rest` before the others.
std::string flow(const std::string& text, size_t width, const std::string& first, const std::string& rest) {
  std::string out, line = first;
  size_t used = display_width(first);
  bool empty = true;
  for (const Unit& u : units_of(text)) {
    const size_t w = display_width(u.text), gap = !empty && u.space_before ? 1 : 0;
    if (empty || used + gap + w <= width) {
      if (used + gap + w > width && width != std::string::npos) {  // longer than a line: cut it
        const size_t room = width > used + gap ? width - used - gap : 1;
        const std::vector<std::string> pieces = split_columns(u.text, std::max<size_t>(room, 1));
        for (size_t k = 0; k < pieces.size(); ++k) {
          if (k > 0) {
            out += line + "\n";
            line = rest;
            used = display_width(rest);
          }
          line += (k == 0 && gap ? " " : "") + pieces[k];
          used += display_width(pieces[k]) + (k == 0 ? gap : 0);
        }
      } else {
        line += (gap ? " " : "") + u.text;
        used += gap + w;
      }
    } else {
      out += line + "\n";
      line = rest;
      used = display_width(rest);
      const size_t room = width > used ? width - used : 1;
      const std::vector<std::string> pieces = w > room ? split_columns(u.text, room) : std::vector<std::string>{u.text};
      for (size_t k = 0; k < pieces.size(); ++k) {
        if (k > 0) {
          out += line + "\n";
          line = rest;
          used = display_width(rest);
        }
        line += pieces[k];
        used += display_width(pieces[k]);
      }
    }
    empty = false;
  }
  return out + line + "\n";
}

// A line that carries a check's outcome stays a paragraph of its own.
bool has_verdict(const std::string& line) {
  const size_t lead = line.find_first_not_of(' ');
  return lead != std::string::npos &&
         (line.compare(lead, 4, "OK: ") == 0 || line.compare(lead, 8, "NOT OK: ") == 0 ||
          line.find(" OK: ") != std::string::npos || line.find("NOT OK: ") != std::string::npos);
}

// The columns of a block of lines: each line as one cell per terminal column (a wide
// character's second column is an empty cell; colour sequences stick to the next cell).
std::vector<std::string> columns_of(const std::string& line, bool& coloured) {
  std::vector<std::string> cells;
  std::string pending;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '\033') {
      size_t e = line.find('m', i);
      e = e == std::string::npos ? line.size() : e + 1;
      pending += line.substr(i, e - i);
      coloured = true;
      i = e;
      continue;
    }
    const auto [c, len] = decode(line, i);
    const size_t w = column_width(c);
    if (w == 0 && !cells.empty()) {
      cells.back() += line.substr(i, len);
    } else {
      cells.push_back(pending + line.substr(i, len));
      pending.clear();
      if (w == 2) cells.emplace_back();
    }
    i += len;
  }
  if (!pending.empty()) cells.push_back(pending);
  return cells;
}

}  // namespace

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    lines.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return lines;
}

// The column where the rest of a folded line goes: under the first value after the line's
// indent, a call's "name(" and its opening brackets ("tensor([[", "        [", "Linear("), so
// that a folded row reads as PyTorch's own wrapped rows do; at most half the width.
size_t fold_indent(const std::string& line, size_t width) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const size_t lead = i;
  size_t j = i;
  while (j < line.size() && (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '_' || line[j] == '.')) ++j;
  if (j > i && j < line.size() && line[j] == '(') i = j + 1;
  while (i < line.size() && line[i] == '[') ++i;
  if (i > width / 2) i = std::min(lead, width / 2);
  return i;
}

// One line cut into pieces of at most `width` columns, each after the first starting with
// `indent` spaces. A piece ends before a run of spaces (the rest keeps a number's padding):
// preferably after a ", " in the last third of the room at the outermost bracket depth there
// (", shape=(1, 3)" breaks before shape=, not inside its parentheses), else at the last space
// that fits, else where the width ends (a number longer than the room). A colour open at a
// break is closed there and opened again on the next piece.
std::vector<std::string> fold_line(const std::string& line, size_t width, size_t indent) {
  struct Break {
    size_t at;            // byte of the space
    int depth;            // brackets open before it
    bool comma;           // after a ','
    size_t used;          // columns before it
    std::string colour;   // in force there
  };
  std::vector<std::string> out;
  std::string rest = line, open;  // open: the colour in force where `rest` starts
  size_t pad = 0;
  while (display_width(rest) + pad > width) {
    std::vector<Break> breaks;
    size_t used = pad, i = 0;
    int depth = 0;
    bool text = false;  // a space before any text (the indent) is no place to break
    char32_t prev = 0;
    std::string colour = open;
    while (i < rest.size()) {
      if (rest[i] == '\033') {
        size_t e = rest.find('m', i);
        e = e == std::string::npos ? rest.size() : e + 1;
        const std::string seq = rest.substr(i, e - i);
        colour = seq == "\033[0m" ? "" : seq;
        i = e;
        continue;
      }
      const auto [c, len] = decode(rest, i);
      const size_t w = column_width(c);
      if (used + w > width) break;
      if (c == ' ' && text && prev != ' ') breaks.push_back({i, depth, prev == ',', used, colour});
      depth += (c == '(' || c == '[' || c == '{') - (c == ')' || c == ']' || c == '}');
      text = text || c != ' ';
      prev = c;
      used += w;
      i += len;
    }
    size_t cut = 0, next = 0;
    std::string colour_at_cut = colour;
    const Break* pick = nullptr;
    for (const Break& b : breaks)  // a ", " late enough, at the outermost depth among them
      if (b.comma && 3 * (b.used - pad) >= width - pad && (!pick || b.depth <= pick->depth)) pick = &b;
    if (!pick && !breaks.empty()) pick = &breaks.back();
    if (pick) {
      cut = pick->at, next = pick->at + 1, colour_at_cut = pick->colour;
    } else {  // where the width ends, never inside a character
      cut = next = i > 0 ? i : decode(rest, 0).second;
    }
    std::string piece = (out.empty() ? "" : std::string(pad, ' ') + open) + rest.substr(0, cut);
    while (!piece.empty() && piece.back() == ' ') piece.pop_back();
    if (!colour_at_cut.empty()) piece += "\033[0m";
    out.push_back(piece);
    rest = rest.substr(next);
    open = colour_at_cut;
    pad = indent + 1 < width ? indent : 0;
    // spaces that would fill the next piece (a plot's empty stretch) go: no piece is blank
    const size_t sp = rest.find_first_not_of(' ');
    if (sp == std::string::npos) return out;  // only spaces were left
    if (pad + sp + 1 > width) rest.erase(0, sp);
  }
  out.push_back((out.empty() ? "" : std::string(pad, ' ') + open) + rest);
  return out;
}

}  // namespace

std::string fold_block(const std::string& text, size_t width) {
  std::string out;
  for (const std::string& raw : lines_of(text)) {
    if (display_width(raw) <= width) {
      out += raw + "\n";
      continue;
    }
    std::string line = raw;  // trailing spaces (a plot's padding) carry nothing
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (display_width(line) <= width) {
      out += line + "\n";
      continue;
    }
    // an indent of more than half the width (a header far to the right) shrinks to half of it,
    // so that no piece is blank
    const size_t lead = line.find_first_not_of(' ');
    const std::string shown = lead != std::string::npos && lead > width / 2 ? line.substr(lead - width / 2) : line;
    for (const std::string& piece : fold_line(shown, width, fold_indent(shown, width))) out += piece + "\n";
  }
  return out;
}

std::string fit_block(const std::string& text, size_t width) {
  const std::vector<std::string> lines = lines_of(text);
  size_t widest = 0;
  for (const std::string& l : lines) widest = std::max(widest, display_width(l));
  if (widest <= width) return text;
  bool coloured = false;
  std::vector<std::vector<std::string>> cells;
  for (const std::string& l : lines) cells.push_back(columns_of(l, coloured));
  size_t n = 0;
  for (const auto& c : cells) n = std::max(n, c.size());
  // a gap: a column that is blank on every line (or past its end)
  auto blank = [&](size_t col) {  // (a wide character's second column is an empty cell: not blank)
    for (const auto& c : cells)
      if (col < c.size() && c[col] != " " && c[col] != "\033[0m ") return false;
    return true;
  };
  std::vector<bool> gap(n + 1, true);
  for (size_t col = 0; col < n; ++col) gap[col] = blank(col);
  // the table's columns: runs of text parted by at least two blank columns (text_table's gap)
  std::vector<std::pair<size_t, size_t>> runs;  // [first, last) columns of each
  for (size_t col = 0; col < n;) {
    while (col < n && gap[col]) ++col;
    if (col >= n) break;
    size_t end = col;
    while (end < n && !(gap[end] && gap[end + 1])) ++end;
    while (end > col && gap[end - 1]) --end;
    runs.push_back({col, end});
    col = end;
  }
  // the columns that fit whole; none (a single column wider than the screen, or text that is
  // no table): folded instead, nothing left out
  size_t keep = 0;
  while (keep < runs.size() && runs[keep].second <= width) ++keep;
  if (keep == 0 || keep == runs.size()) return fold_block(text, width);
  std::string out;
  for (size_t r = 0; r < cells.size(); ++r) {
    std::string s;
    for (size_t col = 0; col < runs[keep - 1].second && col < cells[r].size(); ++col) s += cells[r][col];
    if (coloured) s += "\033[0m";
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  }
  const size_t left = runs.size() - keep;
  const std::string note = trfn("({n} more column to the right, not shown: it needs {w} columns)",
                                "({n} more columns to the right, not shown: they need {w} columns)", left,
                                fmt::arg("n", left), fmt::arg("w", widest));
  return out + hang(note, width, "  ", "   ");
}

std::string wrap(const std::string& text, size_t width) {
  std::string out, para, indent, table;
  auto flush = [&] {
    if (!para.empty()) out += flow(para, width, indent, indent);
    para.clear();
    if (!table.empty()) out += fit_block(table, width);
    table.clear();
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
      if (!para.empty()) {
        out += flow(para, width, indent, indent);
        para.clear();
      }
      table += raw + "\n";
    } else {  // prose: its words join the paragraph; a verdict is a paragraph of its own
      if (!table.empty() || has_verdict(raw)) flush();
      if (para.empty()) indent = raw.substr(0, lead);
      para += (para.empty() ? "" : " ") + raw.substr(lead);
      if (has_verdict(raw)) flush();
    }
    if (last) break;
  }
  flush();
  return out;
}

std::string hang(const std::string& text, size_t width, const std::string& first, const std::string& rest) {
  if (text.find('\n') != std::string::npos || text.find("  ") != std::string::npos) {
    // kept line by line; a line longer than the width is re-flowed under `rest`
    std::string out;
    size_t b = 0;
    for (bool head = true; b <= text.size(); head = false) {
      size_t e = text.find('\n', b);
      if (e == std::string::npos) e = text.size();
      const std::string line = text.substr(b, e - b), pre = head ? first : rest;
      out += display_width(pre + line) <= width ? pre + line + "\n" : flow(line, width, pre, rest);
      b = e + 1;
    }
    return out;
  }
  return flow(text, width, first, rest);
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
