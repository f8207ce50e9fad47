// course/fault_note.hpp: a chapter that a learner's edit makes read or write outside its memory
// (a loop bound one too far, an index past a tensor's end) dies of SIGSEGV, SIGBUS or SIGFPE; no
// check of the course runs after that. Before it dies, it writes one paragraph on stderr: which
// step was running, the last course function it entered (the newest TS_CODE_SITE(), base/
// code_site.hpp) and how to have AddressSanitizer name the line. Then the signal takes its
// default course (the exit status and a core dump stay the system's). Written for a handler:
// no allocation, no locks, only write(2) (introduced for issue 41; every chapter installs it).
// Not installed under AddressSanitizer, whose own report names the line.
#pragma once

#include <string>

namespace ts {

// Install the handlers for chapter `id`, the note's sentence translated now (a handler cannot).
// false: not installed (an AddressSanitizer build).
bool install_fault_note(const std::string& id);
// The step now running, for the note (copied, cut to a fixed size).
void fault_note_step(const std::string& title);

}  // namespace ts
