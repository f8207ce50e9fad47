// test_layout.cpp: src/course/layout.hpp -- widths, cutting, blocks side by side, prose
// re-flowed (say()) and notes under their arrow (show()).
#include "catch_compat.hpp"

#include <string>
#include <vector>

#include "course/layout.hpp"

TEST_CASE("layout: display width counts code points, not bytes or colour codes", "[layout]") {
  CHECK(ts::display_width("time") == 4);
  CHECK(ts::display_width("caf\xc3\xa9") == 4);               // café: é is two bytes
  CHECK(ts::display_width("\033[1mbold\033[0m") == 4);        // ANSI colour takes no column
  CHECK(ts::fit("arrow", 4) == "arr~");
  CHECK(ts::fit("an", 4) == "an");
  CHECK(ts::pad_right("ab", 4) == "ab  ");
}

TEST_CASE("layout: side_by_side puts as many blocks per row as fit", "[layout]") {
  const std::string two = ts::side_by_side({"a\nbb", "c"}, 80);
  CHECK(two == "a    c\nbb\n\n");  // widths 2 and 1, 3 spaces apart, then a blank line
  const std::string one_each = ts::side_by_side({"aaaa", "bbbb"}, 6);
  CHECK(one_each == "aaaa\n\nbbbb\n\n");
}

TEST_CASE("layout: wrap re-flows prose and keeps tables", "[layout]") {
  // two prose lines form one paragraph, re-broken before 20 columns, indent kept
  CHECK(ts::wrap("  one two three\n  four five six seven", 20) == "  one two three four\n  five six seven\n");
  // a line aligned with double spaces is a table row: kept as written when it fits, and ends
  // the paragraph; wider than the width, the columns that fit and a line saying what is left out
  CHECK(ts::wrap("  word  pieces  ids\n  time  time    2051", 20) == "  word  pieces  ids\n  time  time    2051\n");
  const std::string cut = ts::wrap("  word  pieces  ids\n  time  time    2051", 16);
  CHECK(cut.rfind("  word  pieces\n  time  time\n  (1 more column", 0) == 0);
  // a blank line separates paragraphs
  CHECK(ts::wrap("  a b\n\n  c d", 80) == "  a b\n\n  c d\n");
  // a word longer than the width is cut: no line is wider than the width
  CHECK(ts::wrap("  abcdefghij k", 5) == "  abc\n  def\n  ghi\n  j k\n");
  // a verdict is a line of its own, never joined to the prose around it
  CHECK(ts::wrap("  OK: one holds\n  OK: two holds\n  and more", 80) == "  OK: one holds\n  OK: two holds\n  and more\n");
}

namespace {
bool fits(const std::string& text, size_t width) {
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    if (ts::display_width(text.substr(b, e - b)) > width) return false;
    b = e + 1;
  }
  return true;
}
}  // namespace

TEST_CASE("layout: fit_block shows the columns that fit and says how many it left out", "[layout]") {
  // fits: unchanged
  CHECK(ts::fit_block("ab  cd\n", 10) == "ab  cd\n");
  // too wide: the first columns, never a second block under them (which would look like new rows)
  const std::string t = ts::fit_block("q0  1  2  3\nq1  4  5  6\n", 8);
  CHECK(t.rfind("q0  1  2\nq1  4  5\n  (1\n", 0) == 0);  // the note wraps at 8 columns too
  CHECK(t.find("q0  3") == std::string::npos);
  CHECK(fits(t, 8));
  const std::string two = ts::fit_block("a  bbbbbbbbbb  c\n", 12);
  CHECK(two.rfind("a\n  (2 more\n   columns", 0) == 0);
  CHECK(fits(two, 12));
  // no columns to keep (one wide column, prose): folded, nothing left out
  CHECK(ts::fit_block("one two three four\n", 9) == "one two\nthree\nfour\n");
}

TEST_CASE("layout: fold_block folds a printed value as PyTorch wraps a row", "[layout]") {
  CHECK(ts::fold_block("tensor([1., 2.])\n", 80) == "tensor([1., 2.])\n");
  // trailing spaces (a plot's padding) are dropped rather than folded into blank lines
  CHECK(ts::fold_block("  |**          \n  |  **        \n", 7) == "  |**\n  |  **\n");
  // the rest of the line goes under the first value, after the last ", " that fits
  CHECK(ts::fold_block("tensor([[ 0.0000,  1.0000,  0.0000]])\n", 20) ==
        "tensor([[ 0.0000,\n          1.0000,\n          0.0000]])\n");
  CHECK(ts::fold_block("        [-0.7568, -0.6536]]\n", 20) == "        [-0.7568,\n         -0.6536]]\n");
  // a number longer than the room is cut where the width ends, and every line fits
  const std::string narrow = ts::fold_block("tensor([[[-1.2345e-05, 1.0000e+00]]])\n", 20);
  CHECK(fits(narrow, 20));
  std::string joined;
  for (char c : narrow)
    if (c != '\n' && c != ' ') joined += c;
  CHECK(joined == "tensor([[[-1.2345e-05,1.0000e+00]]])");
  // a colour open at a fold is closed there and opened again on the next line
  CHECK(ts::fold_block("\033[2mab cd\033[0m\n", 3) == "\033[2mab\033[0m\n\033[2mcd\033[0m\n");
}

TEST_CASE("layout: hang puts a note under its arrow", "[layout]") {
  CHECK(ts::hang("one two three", 12, "-> ", "   ") == "-> one two\n   three\n");
  CHECK(ts::hang("short", 80, "-> ", "   ") == "-> short\n");
  // lines of their own (a figure in a note) are kept, each after the indent
  CHECK(ts::hang("a\nb", 80, "-> ", "   ") == "-> a\n   b\n");
}

TEST_CASE("layout: CJK characters take two columns, marks none", "[layout]") {
  CHECK(ts::display_width("\xe6\xb3\xa8\xe6\x84\x8f\xe5\x8a\x9b") == 6);  // 注意力: 3 wide characters
  CHECK(ts::display_width("e\xcc\x81") == 1);                             // e + combining acute
  CHECK(ts::display_width("\xef\xbc\xa1") == 2);                          // fullwidth A
  CHECK(ts::column_width(U'\u6ce8') == 2);
  CHECK(ts::column_width(U'a') == 1);
  // cutting never splits a character, and never overflows the width
  CHECK(ts::fit("\xe6\xb3\xa8\xe6\x84\x8f\xe5\x8a\x9b", 4) == "\xe6\xb3\xa8~");  // 注~ : 3 columns
  CHECK(ts::display_width(ts::fit("\xe6\xb3\xa8\xe6\x84\x8f\xe5\x8a\x9b", 5)) <= 5);
  // blocks of Chinese text line up by columns
  const std::string row = ts::side_by_side({"\xe6\xb3\xa8\xe6\x84\x8f", "x"}, 80);  // 注意 | x
  CHECK(row == "\xe6\xb3\xa8\xe6\x84\x8f   x\n\n");
  // prose wraps by columns: 10 wide characters are 20 columns
  CHECK(ts::wrap("  \xe6\xb3\xa8\xe6\x84\x8f \xe6\xb3\xa8\xe6\x84\x8f", 7) == "  \xe6\xb3\xa8\xe6\x84\x8f\n  \xe6\xb3\xa8\xe6\x84\x8f\n");
  // Chinese breaks between any two characters, with no space: 注意力注意 at 6 columns
  CHECK(ts::wrap("注意力注意", 6) == "注意力\n注意\n");
  // but never before closing punctuation: 注意，力 at 4 columns keeps ， with 意
  CHECK(ts::wrap("注意，力", 4) == "注\n意，\n力\n");
}

TEST_CASE("layout: text_table aligns columns by display width, numbers to the right", "[layout]") {
  // a CJK header (2 columns per character) over ASCII cells: every row's columns start at the
  // same terminal column, and right-aligned numbers end at the same column
  const std::string t = ts::text_table({{"经过", "pre-LN", "post-LN"}, {"嵌入层", "1.4011", "1.4011"},
                                        {"第 12 层", "1.6819", "10.0006"}},
                                       1);
  std::vector<std::string> rows;
  for (size_t a = 0, b; (b = t.find('\n', a)) != std::string::npos; a = b + 1) rows.push_back(t.substr(a, b - a));
  REQUIRE(rows.size() == 3);
  for (const std::string& r : rows) CHECK(ts::display_width(r) == ts::display_width(rows[0]));
  CHECK(rows[0] == "  经过      pre-LN  post-LN");
  CHECK(rows[1] == "  嵌入层    1.4011   1.4011");
  CHECK(rows[2] == "  第 12 层  1.6819  10.0006");
  // left-aligned only (the default): the last column is not padded
  CHECK(ts::text_table({{"a", "b"}, {"ccc", "d"}}) == "  a    b\n  ccc  d\n");
}
