// pager.cpp: see pager.hpp.
#include "course/pager.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "course/layout.hpp"

namespace ts {

// ---------------------------------------------------------------------------------
// Single keys: the terminal in non-canonical mode, no echo, while a pause waits
// ---------------------------------------------------------------------------------
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};
constexpr size_t kNumSignals = sizeof kSignals / sizeof kSignals[0];
struct sigaction g_before[kNumSignals];  // the actions the pause replaced
termios g_cooked, g_raw;                 // the terminal as it was, and as the pause wants it
volatile sig_atomic_t g_is_raw = 0;

void cooked() {  // async-signal-safe: tcsetattr is
  if (g_is_raw) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &g_cooked);
    g_is_raw = 0;
  }
}

void on_signal(int sig);

void catch_signal(int sig) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
}

// The terminal is put back first; then the signal does what it did before the pause (by
// default: the process ends, or for Ctrl-Z stops); if the process goes on (fg, or the
// signal was ignored), the pause takes the terminal again.
void on_signal(int sig) {
  const int saved = errno;
  cooked();
  size_t i = 0;
  while (i < kNumSignals && kSignals[i] != sig) ++i;
  if (i < kNumSignals) ::sigaction(sig, &g_before[i], nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);  // ends or stops the process here
  catch_signal(sig);
  if (::tcsetattr(STDIN_FILENO, TCSANOW, &g_raw) == 0) g_is_raw = 1;
  errno = saved;
}

// The terminal in key-at-a-time mode for one pause; put back on every way out.
class RawKeys {
 public:
  RawKeys() {
    if (::tcgetattr(STDIN_FILENO, &g_cooked) != 0) return;
    g_raw = g_cooked;
    g_raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));  // ISIG stays: Ctrl-C, Ctrl-Z work
    g_raw.c_cc[VMIN] = 1;
    g_raw.c_cc[VTIME] = 0;
    for (size_t i = 0; i < kNumSignals; ++i) {
      ::sigaction(kSignals[i], nullptr, &g_before[i]);
      if (g_before[i].sa_handler != SIG_IGN) catch_signal(kSignals[i]);  // an ignored one stays ignored
    }
    if (::tcsetattr(STDIN_FILENO, TCSANOW, &g_raw) != 0) {
      restore_signals();
      return;
    }
    g_is_raw = 1;
    ok_ = true;
  }
  ~RawKeys() {
    if (!ok_) return;
    cooked();
    restore_signals();
  }
  RawKeys(const RawKeys&) = delete;
  RawKeys& operator=(const RawKeys&) = delete;
  bool ok() const { return ok_; }

 private:
  static void restore_signals() {
    for (size_t i = 0; i < kNumSignals; ++i) ::sigaction(kSignals[i], &g_before[i], nullptr);
  }
  bool ok_ = false;
};

// One byte from stdin; false at the end of the input or on a read error.
bool read_byte(char& c) {
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    return n == 1;
  }
}

// The rest of an escape sequence (an arrow key: ESC [ A), which comes at once: read and dropped.
void drop_escape_sequence() {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  char c = 0;
  if (::poll(&p, 1, 30) <= 0 || !read_byte(c)) return;
  if (c != '[' && c != 'O') return;
  while (::poll(&p, 1, 30) > 0 && read_byte(c))
    if (c >= 0x40 && c <= 0x7E) return;  // the sequence's final byte
}

}  // namespace

Key read_key(bool back_allowed) {
  RawKeys raw;
  char c = 0;
  if (!raw.ok()) {  // not a terminal we can set: a line, its first letter
    std::string line;
    for (;;) {
      if (!read_byte(c)) return Key::Quit;
      if (c == '\n') break;
      line += c;
    }
    const size_t b = line.find_first_not_of(" \t");
    const char k = b == std::string::npos ? '\0' : line[b];
    if (k == 'q' || k == 'Q') return Key::Quit;
    if (back_allowed && (k == 'b' || k == 'B')) return Key::Back;
    return Key::Next;
  }
  for (;;) {
    if (!read_byte(c)) return Key::Quit;
    switch (c) {
      case '\n': case '\r': case ' ': return Key::Next;
      case 'q': case 'Q': case 4: return Key::Quit;  // 4: Ctrl-D, the end of the input
      case 'b': case 'B':
        if (back_allowed) return Key::Back;
        break;
      case '\033': drop_escape_sequence(); break;
      default: break;
    }
  }
}

// ---------------------------------------------------------------------------------
// Standard output, page by page
// ---------------------------------------------------------------------------------
namespace {

bool dumb_terminal() {  // TERM=dumb: a terminal that shows escape sequences as text
  const char* term = std::getenv("TERM");
  return term != nullptr && std::strcmp(term, "dumb") == 0;
}

// `s` without its escape sequences (colours, "\033[K"): what the terminal shows of it
std::string shown(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\033') {
      out += s[i];
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7E)) ++i;
    }
  }
  return out;
}

}  // namespace

StdoutBuf::StdoutBuf() { setp(buf_, buf_ + sizeof buf_); }

StdoutBuf::int_type StdoutBuf::overflow(int_type c) {
  if (drain() != 0) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int StdoutBuf::drain() {
  const size_t n = static_cast<size_t>(pptr() - pbase());
  if (n > 0 && !mute) {
    const std::string data(pbase(), n);
    auto plain = [&](const std::string& s) {
      if (recording) {
        if (record_.empty() || record_.back().block) record_.emplace_back();
        record_.back().text += s;
      }
      emit(s);
    };
    if (!header.empty()) {
      std::string h;
      h.swap(header);
      plain(h);
    }
    if (depth_ > 0)
      block_ += data;
    else
      plain(data);
  }
  setp(buf_, buf_ + sizeof buf_);
  return error_ == 0 ? 0 : -1;
}

void StdoutBuf::new_page() {
  used_ = top_ = 0;
  full_ = false;
  line_.clear();
}

size_t StdoutBuf::rows_of(const std::string& line) const {
  const size_t w = display_width(shown(line));
  return w == 0 ? 1 : (w + cols - 1) / cols;
}

void StdoutBuf::count_line(const std::string& line) {
  used_ += rows_of(line);
  full_ = used_ + 1 >= rows;
}

size_t StdoutBuf::room() const { return full_ || used_ + 1 >= rows ? 0 : rows - 1 - used_; }

bool StdoutBuf::fresh() const { return used_ <= top_ && line_.empty(); }

// When the screen is full (one row kept for the prompt), a pause before the next byte.
void StdoutBuf::emit(const char* p, size_t n) {
  if (quit) return;
  if (rows <= 2) return write_all(p, n);
  size_t start = 0, from = 0;  // the first byte not written yet; where the current line starts
  for (size_t i = 0; i < n; ++i) {
    if (full_) {
      write_all(p + start, i - start);
      start = i;
      page_pause(in_cut_);
      if (quit) {
        mute = true;
        return;
      }
    }
    if (p[i] == '\r') {  // a line drawn again in place (a progress line): it starts over
      line_.clear();
      from = i + 1;
    } else if (p[i] == '\n') {
      count_line(line_ + std::string(p + from, i - from));
      line_.clear();
      from = i + 1;
    }
  }
  line_.append(p + from, n - from);
  write_all(p + start, n - start);
}

void StdoutBuf::begin_block() {
  if (depth_ == 0) {
    sync();  // what came before is not part of it
    block_.clear();
  }
  ++depth_;
}

void StdoutBuf::end_block(const std::vector<size_t>& breaks) {
  if (depth_ == 0) return;
  if (depth_ > 1) {  // an inner block: part of the outer one
    --depth_;
    return;
  }
  sync();  // its last bytes
  depth_ = 0;
  std::string text;
  text.swap(block_);
  if (text.empty()) return;
  if (recording) record_.push_back({text, true, breaks});
  put_block(text, breaks);
}

void StdoutBuf::put_block(const std::string& text, const std::vector<size_t>& breaks) {
  if (quit) return;
  if (rows <= 2 || !line_.empty()) return emit(text);  // no paging, or not at a line's start
  // the block's rows from one break to the next (a break is where a line starts)
  std::vector<size_t> at{0};
  std::vector<size_t> sorted = breaks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t b : sorted)
    if (b > at.back() && b < text.size() && text[b - 1] == '\n') at.push_back(b);
  at.push_back(text.size());
  std::vector<size_t> height;
  size_t total = 0;
  for (size_t k = 0; k + 1 < at.size(); ++k) {
    size_t h = 0;
    for (size_t b = at[k]; b < at[k + 1];) {
      size_t e = text.find('\n', b);
      if (e == std::string::npos || e > at[k + 1]) e = at[k + 1];
      h += rows_of(text.substr(b, e - b));
      b = e + 1;
    }
    height.push_back(h);
    total += h;
  }
  const size_t page = rows - 1 - (title.empty() ? 0 : rows_of(title.substr(0, title.find('\n'))));
  if (total <= room()) return emit(text);
  if (total <= page) {  // a page break before it, rather than inside it
    if (!fresh()) full_ = true;
    return emit(text);
  }
  // taller than a page: whole rows on each page, each pause inside it saying that it goes on
  if (height[0] > room() && !fresh()) full_ = true;
  for (size_t k = 0; k + 1 < at.size() && !quit; ++k) {
    if (k > 0) {
      in_cut_ = true;
      if (height[k] > room() && !fresh()) full_ = true;
    }
    emit(text.data() + at[k], at[k + 1] - at[k]);
  }
  in_cut_ = false;
}

bool StdoutBuf::aside(const std::string& text) {
  if (rows <= 2 || quit || !::isatty(STDERR_FILENO)) return !quit;  // (muted steps still show it)
  std::vector<std::string> lines;
  size_t h = 0;
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    lines.push_back(text.substr(b, e - b));
    h += rows_of(lines.back());
    b = e + 1;
  }
  if (!line_.empty()) {  // it starts on a line of its own
    count_line(line_);
    line_.clear();
  }
  if ((full_ || h > room()) && !fresh()) {
    page_pause(false);
    if (quit) {
      mute = true;
      return false;
    }
  }
  for (const std::string& l : lines) count_line(l);
  return true;
}

void StdoutBuf::replay() {
  const std::vector<Piece> pieces = record_;
  for (const Piece& p : pieces) {
    if (quit) break;
    if (p.block)
      put_block(p.text, p.breaks);
    else
      emit(p.text);
  }
}

Key StdoutBuf::ask(const std::string& text, bool back_allowed) {
  write_all(text.data(), text.size());
  const Key k = read_key(back_allowed);
  // the prompt's line goes away (the key was not echoed: the cursor is still on it); a dumb
  // terminal keeps it and goes to the next line
  static const char kErase[] = "\r\033[2K";
  if (dumb_terminal())
    write_all("\n", 1);
  else
    write_all(kErase, sizeof kErase - 1);
  winsize ws{};  // the terminal may have been resized meanwhile
  if (rows > 0 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 2) rows = ws.ws_row;
  return k;
}

// The screen is full: the prompt, a key, the step's title again at the top of the next page.
void StdoutBuf::page_pause(bool cut) {
  full_ = false;
  if (ask(cut ? prompt_cut : prompt, false) == Key::Quit) {
    quit = true;
    return;
  }
  used_ = top_ = 0;
  line_.clear();
  if (!title.empty()) {
    write_all(title.data(), title.size());
    used_ = top_ = rows_of(title.substr(0, title.find('\n')));
  }
}

void StdoutBuf::write_all(const char* p, size_t left) {
  while (left > 0 && error_ == 0) {  // after an error, the rest is dropped (and reported)
    const ssize_t n = ::write(STDOUT_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::string fit_words(const std::string& text, size_t width) {
  if (display_width(text) <= width) return text;
  if (width == 0) return "";
  // the first line of the text re-flowed to width - 1 columns, then the ellipsis
  const std::string flowed = hang(text, width - 1, "", "");
  std::string line = flowed.substr(0, flowed.find('\n'));
  while (!line.empty() && line.back() == ' ') line.pop_back();
  while (!line.empty() && display_width(line) > width - 1) {  // kept as it was (a double space): cut
    while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) line.pop_back();
    if (!line.empty()) line.pop_back();  // the character's first byte
  }
  return line + "…";
}

}  // namespace ts
