// test_fault_note.cpp: src/course/fault_note.hpp -- a chapter that faults says where it was before
// the signal ends it (a child process faults; the parent reads its stderr and its end).
#include "catch_compat.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "base/code_site.hpp"
#include "course/fault_note.hpp"

// a course function: what the note names as the last one entered
static constexpr int kMarkedLine = __LINE__ + 2;  // the TS_CODE_SITE() line
__attribute__((noinline)) static int marked_function(volatile int* p) {
  TS_CODE_SITE();
  return *p;  // p null: a read of memory the program does not own
}

namespace {

struct Ended {
  int signal = 0;       // the signal that ended the child (0: it exited)
  std::string stderr_;  // what it wrote there
};

// Runs `body` in a child with the note installed and its stderr piped here.
template <class F>
Ended run_child(F body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::signal(SIGSEGV, SIG_DFL);  // not the test runner's handler, if it has one
    ts::install_fault_note("ch99_demo");
    ts::fault_note_step("Step 9: the demo step");
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  Ended e;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) e.stderr_.append(buf, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return e;
}

bool installed() {
  // an AddressSanitizer build keeps its own report: nothing to test
  static const bool on = [] {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(ts::install_fault_note("probe") ? 0 : 1);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  return on;
}

}  // namespace

TEST_CASE("a fault in a course function: the note names the step and the function, the signal still ends the run",
          "[fault_note]") {
  if (!installed()) return;
  const Ended e = run_child([] { marked_function(nullptr); });
  CHECK(e.signal == SIGSEGV);
  CHECK(e.stderr_.find("ch99_demo: stopped by SIGSEGV in the step \"Step 9: the demo step\"") != std::string::npos);
  // the function's file from its tests/ folder, the TS_CODE_SITE() line, the name without parameters
  CHECK(e.stderr_.find("The last course function it entered: tests/test_fault_note.cpp:" +
                       std::to_string(kMarkedLine) + " marked_function (") != std::string::npos);
  CHECK(e.stderr_.find("-DTS_SANITIZE=ON") != std::string::npos);
}

TEST_CASE("a raised SIGFPE ends the run with its own signal after the note", "[fault_note]") {
  if (!installed()) return;
  const Ended e = run_child([] { ::raise(SIGFPE); });
  CHECK(e.signal == SIGFPE);
  CHECK(e.stderr_.find("stopped by SIGFPE") != std::string::npos);
}

TEST_CASE("a step title too long for the note is cut at a character's start", "[fault_note]") {
  if (!installed()) return;
  std::string title = "x";  // 1 byte, then 3 bytes a character: the note's 255 end inside one
  for (int i = 0; i < 200; ++i) title += "步";
  const Ended e = run_child([&] {
    ts::fault_note_step(title);
    ::raise(SIGSEGV);
  });
  CHECK(e.signal == SIGSEGV);
  const size_t open = e.stderr_.find("\"x步"), close = e.stderr_.find("\"", open + 1);
  REQUIRE(open != std::string::npos);
  REQUIRE(close != std::string::npos);
  const std::string kept = e.stderr_.substr(open + 1, close - open - 1);
  CHECK((kept.size() - 1) % 3 == 0);  // whole characters only
  CHECK(kept.size() >= 240);
}

TEST_CASE("no fault, no note", "[fault_note]") {
  if (!installed()) return;
  const Ended e = run_child([] {});
  CHECK(e.signal == 0);
  CHECK(e.stderr_.empty());
}
