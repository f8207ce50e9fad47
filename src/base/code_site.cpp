// code_site.cpp: the recorder behind TS_CODE_SITE() (see code_site.hpp).
#include "base/code_site.hpp"

#include <algorithm>
#include <cstring>

namespace ts {

namespace detail {
thread_local std::vector<const CodeSite*>* code_sites = nullptr;
thread_local const CodeSite* last_code_site = nullptr;

void record_code_site(const CodeSite* site) {
  // a step runs a handful of marked functions: a linear search keeps first-run order
  if (std::find(code_sites->begin(), code_sites->end(), site) == code_sites->end()) code_sites->push_back(site);
}
}  // namespace detail

CodeSiteRecorder::CodeSiteRecorder(std::vector<const CodeSite*>& into) : previous_(detail::code_sites) {
  detail::code_sites = &into;
}

CodeSiteRecorder::~CodeSiteRecorder() { detail::code_sites = previous_; }

std::string code_site_path(const char* file) {
  const std::string f = file ? file : "";
  size_t best = std::string::npos;
  for (const char* dir : {"/src/", "/chapters/", "/bench/", "/tests/"}) {
    const size_t at = f.rfind(dir);
    if (at != std::string::npos && (best == std::string::npos || at > best)) best = at;
  }
  if (best != std::string::npos) return f.substr(best + 1);
  for (const char* dir : {"src/", "chapters/"})
    if (f.rfind(dir, 0) == 0) return f;
  return f;
}

std::string code_site_name(const char* pretty_function) {
  const std::string p = pretty_function ? pretty_function : "";
  // the name ends at the parameter list: the first '(' outside "operator()" at depth 0
  size_t end = p.find("operator()");
  if (end != std::string::npos) {
    end += std::strlen("operator()");
  } else {
    int angle = 0;
    end = p.size();
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] == '<') ++angle;
      if (p[i] == '>') --angle;
      if (p[i] == '(' && angle == 0) {
        end = i;
        break;
      }
    }
  }
  // it starts after the return type: the last space before `end` at template depth 0
  size_t start = 0;
  int angle = 0;
  for (size_t i = end; i-- > 0;) {
    if (p[i] == '>') ++angle;
    if (p[i] == '<') --angle;
    if (p[i] == ' ' && angle == 0) {
      start = i + 1;
      break;
    }
  }
  std::string name = p.substr(start, end - start);
  for (const std::string ns : {"ts::", "detail::"}) {
    for (size_t at; (at = name.find(ns)) != std::string::npos;) name.erase(at, ns.size());
  }
  return name;
}

std::string code_site_words(const CodeSite& site) {
  return code_site_path(site.file) + ":" + std::to_string(site.line) + " " + code_site_name(site.func);
}

}  // namespace ts
