// print_test_helpers.hpp: what test_print.cpp and test_print_fuzz.cpp share: the transcripts'
// text, a mismatch's report, a float's exact bits.
#pragma once

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "exact/torch_version.hpp"

namespace print_test {

inline const std::string kShared = TS_SHARED_DIR;
inline const std::string kTranscripts = kShared + "/reference/transcripts/";

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What the transcript shows after the line ">>> expr", up to the next ">>> " line.
inline std::string transcript_block(const std::string& file, const std::string& expr) {
  const std::string text = read_text(kTranscripts + file);
  const std::string key = ">>> " + expr + "\n";
  size_t at = text.rfind(key, 0) == 0 ? 0 : text.find("\n" + key);
  if (at == std::string::npos) throw std::runtime_error(file + ": no '>>> " + expr + "'");
  at = text.find('\n', at + (at == 0 ? 0 : 1)) + 1;
  size_t end = text.find("\n>>> ", at - 1);
  if (end == std::string::npos) end = text.size();
  std::string block = text.substr(at, end - at);
  while (!block.empty() && block.back() == '\n') block.pop_back();
  return block;
}

// A report line for one mismatch: id, expected, got.
inline std::string mismatch(const std::string& id, const std::string& expected, const std::string& got) {
  return "case " + id + "\n--- expected (torch) ---\n" + expected + "\n--- got ---\n" + got + "\n";
}

// Hex float: the exact bits, readable by Python's float.fromhex.
inline std::string hexf(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// Runs under the PyTorch version given, then restores the build's (or $TS_TORCH's).
struct TorchVersionScope {
  ts::TorchVersion saved = ts::torch_version();
  explicit TorchVersionScope(ts::TorchVersion v) { ts::set_torch_version(v); }
  ~TorchVersionScope() { ts::set_torch_version(saved); }
  TorchVersionScope(const TorchVersionScope&) = delete;
  TorchVersionScope& operator=(const TorchVersionScope&) = delete;
};

}  // namespace print_test
