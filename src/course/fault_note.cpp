// course/fault_note.cpp: see fault_note.hpp. Everything the handler reads is in fixed buffers
// filled before the fault; it substitutes {sig}, {step} and {site} itself.
#include "course/fault_note.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "base/code_site.hpp"
#include "course/i18n.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TS_FAULT_NOTE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_FAULT_NOTE_ASAN 1
#endif
#endif

namespace ts {
namespace {

char g_note[1024];  // the sentence, translated, with {sig}, {step}, {site} left in
char g_step[256];   // the step's title
char g_stack[64 * 1024];  // the handler's own stack: a fault from a runaway recursion has none left

void copy_cut(char* to, size_t size, const std::string& from) {
  size_t n = from.size() < size - 1 ? from.size() : size - 1;
  // a cut inside a UTF-8 character (a Chinese title) backs off to its first byte
  if (n < from.size())
    while (n > 0 && (static_cast<unsigned char>(from[n]) & 0xC0) == 0x80) --n;
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

void put(const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w, n -= size_t(w);
  }
}
void put(const char* s) { put(s, std::strlen(s)); }

void put_int(int v) {
  char digits[16];
  size_t n = 0;
  unsigned u = v < 0 ? 0u : unsigned(v);
  do digits[n++] = char('0' + u % 10), u /= 10;
  while (u > 0 && n < sizeof digits);
  char out[16];
  for (size_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  put(out, n);
}

// file:line name, as code_site_words says it, without allocating: the path from its last src/,
// chapters/, bench/ or tests/ folder, the name cut before its parameters ("ts::train::Adam::update(...)" -> "ts::train::Adam::update")
void put_site(const CodeSite* s) {
  if (s == nullptr) {
    put("-");
    return;
  }
  const char* path = s->file;
  for (const char* dir : {"/src/", "/chapters/", "/bench/", "/tests/"}) {
    for (const char* p = std::strstr(s->file, dir); p != nullptr; p = std::strstr(p + 1, dir))
      if (p + 1 > path) path = p + 1;
  }
  put(path);
  put(":");
  put_int(s->line);
  put(" ");
  const char* f = s->func;
  const char* op = std::strstr(f, "operator()");
  const char* end = op ? op + std::strlen("operator()") : std::strchr(f, '(');
  if (end == nullptr) end = f + std::strlen(f);
  const char* start = end;
  while (start > f && start[-1] != ' ') --start;
  for (bool cut = true; cut;) {  // the course's namespaces left out, as code_site_name does
    cut = false;
    for (const char* ns : {"ts::", "detail::"})
      if (std::strncmp(start, ns, std::strlen(ns)) == 0 && start + std::strlen(ns) < end)
        start += std::strlen(ns), cut = true;
  }
  put(start, size_t(end - start));
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    default: return "a signal";
  }
}

extern "C" void on_fault(int sig) {
  put("\n");
  for (const char* p = g_note; *p != '\0';) {
    if (std::strncmp(p, "{sig}", 5) == 0) put(signal_name(sig)), p += 5;
    else if (std::strncmp(p, "{step}", 6) == 0) put(g_step), p += 6;
    else if (std::strncmp(p, "{site}", 6) == 0) put_site(detail::last_code_site), p += 6;
    else put(p, 1), ++p;
  }
  put("\n");
  // then the system's own ending (status, core dump): the default action back, the signal sent
  // again; it waits, blocked, until this handler returns
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void fault_note_step(const std::string& title) { copy_cut(g_step, sizeof g_step, title); }

bool install_fault_note(const std::string& id) {
#ifndef TS_FAULT_NOTE_ASAN
  copy_cut(g_step, sizeof g_step, _("(before the first step)"));
  copy_cut(g_note, sizeof g_note,
           id + _(": stopped by {sig} in the step \"{step}\": the program read or wrote memory it does not own, most "
                  "often an edited loop bound or index that runs past the end of a tensor or vector. The last course "
                  "function it entered: {site} (the fault is there or in the code that ran after it). To have the "
                  "line named, build with AddressSanitizer (cmake -S . -B build-asan -DTS_SANITIZE=ON, then cmake "
                  "--build build-asan) and run build-asan's chapter with the same flags."));
  stack_t ss{};
  ss.ss_sp = g_stack;
  ss.ss_size = sizeof g_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_fault;
  sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) ::sigaction(sig, &sa, nullptr);
  return true;
#else
  (void)id;
  return false;
#endif
}

}  // namespace ts
