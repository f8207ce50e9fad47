// pager.hpp: a chapter's standard output, and --step-by-step on a terminal: page by page, the
// printed blocks kept whole, single keys read at each pause (introduced in ch01, used by every
// chapter through course/chapter.cpp).
#pragma once

#include <cstddef>
#include <streambuf>
#include <string>
#include <vector>

namespace ts {

// A key pressed at a pause: Enter (or space) goes on, b shows the step again, q (or the end of
// the input, Ctrl-D) quits.
enum class Key { Next, Back, Quit };

// One key from the terminal on stdin, read as it is pressed: the terminal is put in
// non-canonical mode without echo for the read only (termios), and put back as it was after
// it, on SIGINT, SIGTERM, SIGHUP and SIGQUIT (then the signal does what it did before) and on
// SIGTSTP (Ctrl-Z: the pause goes on after fg). Other keys are ignored, escape sequences (arrow
// keys) whole. Where stdin is not a terminal whose mode can be read, a line is read and its
// first letter decides (Enter: Next).
Key read_key(bool back_allowed);

// std::cout's buffer while a chapter runs: straight to fd 1, remembering the first write error
// (errno) so that it can be reported at the end, as coreutils' close_stdout does.
class StdoutBuf : public std::streambuf {
 public:
  StdoutBuf();
  int error() const { return error_; }
  // --step N: the steps before N are run but not shown
  bool mute = false;
  // --step-by-step: the current step's output is kept, its blocks marked, so that `b` shows it
  // again as it was paged (replay)
  bool recording = false;
  void clear_record() { record_.clear(); }
  void replay();
  // --step-by-step on a terminal of `rows` rows and `cols` columns: a step taller than the
  // screen pauses each time it fills it (before its first rows scroll away) and, on Enter,
  // shows `title` (the step's title, "continued", one row) again above the next page; q mutes
  // the rest of the chapter (quit is then set, and the next step's pause ends the chapter).
  // `prompt` is shown at such a pause; `prompt_cut` where the pause falls inside a block
  // taller than a page (it says the block goes on).
  size_t rows = 0, cols = 80;  // rows 0: no paging
  std::string title, prompt, prompt_cut;
  bool quit = false;
  // The chapter's title lines: written before the first byte the chapter writes, so that a
  // run refused while it checks its knobs prints nothing on stdout.
  std::string header;
  // A new page starts here (a step's header is about to be written, or the screen was cleared).
  void new_page();
  // A printed block (a tensor with its >>> line, a heatmap, a mask, a table): what is written
  // between begin_block() and end_block() is shown on one page when it fits on one (a page
  // break comes before it rather than inside it); a block taller than a page is broken only at
  // `breaks`, the byte offsets in it where one of its rows starts, and the pause there says so
  // (prompt_cut). Blocks do not nest: an inner one is part of the outer one.
  void begin_block();
  void end_block(const std::vector<size_t>& breaks);
  // `text` that is about to be written on another stream to the same terminal (stderr): room
  // is made for its rows on this page (a pause first, if needed) and they are counted, so that
  // nothing scrolls away unseen. False when the learner quit at that pause.
  bool aside(const std::string& text);
  // A pause of our own (the end of a step): `text` as the prompt, a key, the prompt erased.
  Key ask(const std::string& text, bool back_allowed);

 protected:
  int_type overflow(int_type c) override;
  int sync() override { return drain(); }

 private:
  struct Piece {  // the current step's output: plain bytes, or a block and its breaks
    std::string text;
    bool block = false;
    std::vector<size_t> breaks;
  };
  int drain();
  void emit(const char* p, size_t n);  // written page by page (no paging: as it is)
  void emit(const std::string& s) { emit(s.data(), s.size()); }
  void put_block(const std::string& text, const std::vector<size_t>& breaks);
  void count_line(const std::string& line);
  size_t rows_of(const std::string& line) const;
  size_t room() const;  // rows still free on this page (the prompt's row kept)
  bool fresh() const;   // nothing on this page yet but its title
  void page_pause(bool cut);
  void write_all(const char* p, size_t n);
  char buf_[1 << 16];
  int error_ = 0;
  size_t used_ = 0;      // rows written on this page
  size_t top_ = 0;       // rows the page's title took
  bool full_ = false;    // the page is full: pause before the next byte
  bool in_cut_ = false;  // inside a block taller than a page (its pauses say so)
  std::string line_;     // the line being written, not ended yet
  int depth_ = 0;        // begin_block()s not ended yet
  std::string block_;    // the block being written
  std::vector<Piece> record_;
};

// `text` cut to at most `width` columns at a word's end (a space, or between two CJK
// characters, as wrap breaks lines), marked with "…" where it was cut; a first word longer than
// that is cut where a character starts.
std::string fit_words(const std::string& text, size_t width);

}  // namespace ts
