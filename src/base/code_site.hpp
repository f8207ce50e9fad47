// code_site.hpp: "where is the code this step ran?", answered by the compiler (introduced in
// ch01, for issue "edit anything": every step names the file and line of the code it runs).
//
// A function a learner may want to edit opens with TS_CODE_SITE(); the chapter's current step
// records each marked function the first time it runs (file, line, name, from __FILE__,
// __LINE__ and __PRETTY_FUNCTION__), and prints them when the step ends:
//   code: chapters/ch04_multihead.cpp:120-161 · src/transformer/nn.cpp:186 TransformerEncoderLayer::operator()
// so the line stays right when code moves. Outside a chapter's explained mode nothing is
// recorded (one well-predicted branch per call), and only the thread that started recording
// records (the fast path's workers never touch the list).
// This is the lowest layer of src/: it includes nothing of the course.
#pragma once

#include <string>
#include <vector>

namespace ts {

struct CodeSite {
  const char* file;  // __FILE__: an absolute path from the build, shown from src/ or chapters/
  int line;          // __LINE__ of the TS_CODE_SITE() line
  const char* func;  // __PRETTY_FUNCTION__, shortened for display (code_site_name)
};

namespace detail {
// the recorder's list, or nullptr when nobody records on this thread
extern thread_local std::vector<const CodeSite*>* code_sites;
// the newest marked function this thread entered (one store per call), which a fault's note
// names (course/fault_note.hpp)
extern thread_local const CodeSite* last_code_site;
void record_code_site(const CodeSite* site);
}  // namespace detail

#define TS_CODE_SITE()                                                                     \
  do {                                                                                     \
    static const ::ts::CodeSite ts_code_site_{__FILE__, __LINE__, __PRETTY_FUNCTION__};    \
    ::ts::detail::last_code_site = &ts_code_site_;                                         \
    if (::ts::detail::code_sites) ::ts::detail::record_code_site(&ts_code_site_);          \
  } while (0)

// Records the sites marked on this thread into `into` (in first-run order, each once) while
// alive; nests (the inner recorder wins until it ends).
class CodeSiteRecorder {
 public:
  explicit CodeSiteRecorder(std::vector<const CodeSite*>& into);
  ~CodeSiteRecorder();
  CodeSiteRecorder(const CodeSiteRecorder&) = delete;
  CodeSiteRecorder& operator=(const CodeSiteRecorder&) = delete;

 private:
  std::vector<const CodeSite*>* previous_;
};

// "/work/x/src/transformer/nn.cpp" -> "src/transformer/nn.cpp" (from the last src/ or chapters/
// folder; a path with neither is kept as it is)
std::string code_site_path(const char* file);
// "ts::Tensor ts::TransformerEncoderLayer::operator()(const ts::Tensor&) const"
//   -> "TransformerEncoderLayer::operator()"
std::string code_site_name(const char* pretty_function);
// "src/transformer/gpt.cpp:128 GPT::backward": a site as a NOT OK names it (path, line, name;
// the name through code_site_name, so a __PRETTY_FUNCTION__ and a plain name read alike)
std::string code_site_words(const CodeSite& site);

}  // namespace ts
