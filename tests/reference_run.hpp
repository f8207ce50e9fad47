// reference_run.hpp: run a PyTorch reference script once and read what it wrote.
//
// The unit tests that compare the core with torch bit for bit (kernels, stats, matmul,
// article 002's modules) all work the same way: `/usr/bin/python3 tests/twins/<script> DIR`
// writes torch's inputs and outputs into DIR as raw little-endian float32 files plus a
// manifest; the test reads them back. DIR is a fresh temporary folder, removed when the
// ReferenceRun is destroyed (a function-local static: once per test binary).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <stdlib.h>  // mkdtemp

#include "exact/matmul.hpp"  // ts::set_blas_threads

namespace ts_test {

// OpenBLAS splits a product over its threads, and with some kernels (its Zen/Haswell core,
// at 1x5x768 -> 3072 for one) the split changes the last bits: torch's own linear gives other
// bits at 1 and at 2 OpenBLAS threads. So the reference scripts run with this many OpenBLAS
// threads, and a test that compares bits holds a BlasThreadsPinned while it computes.
constexpr int kReferenceBlasThreads = 1;

struct BlasThreadsPinned {
  int saved = ts::blas_threads();
  BlasThreadsPinned() { ts::set_blas_threads(kReferenceBlasThreads); }
  ~BlasThreadsPinned() { ts::set_blas_threads(saved); }
  BlasThreadsPinned(const BlasThreadsPinned&) = delete;
  BlasThreadsPinned& operator=(const BlasThreadsPinned&) = delete;
};

namespace fs = std::filesystem;

// The whole file as float32 values (its size must be a multiple of 4).
inline std::vector<float> read_f32(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + p.string());
  f.seekg(0, std::ios::end);
  const auto bytes = static_cast<size_t>(f.tellg());
  if (bytes % sizeof(float) != 0) throw std::runtime_error(p.string() + " is not a float32 file");
  f.seekg(0);
  std::vector<float> v(bytes / sizeof(float));
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes));
  return v;
}

class ReferenceRun {
 public:
  // Runs tests/twins/<script> with a new temporary folder; its log is shown if it fails.
  explicit ReferenceRun(const std::string& script) {
    std::string tmpl = (fs::temp_directory_path() / "ts_ref_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir_ = tmpl;
    // TS_REFERENCE_PYTHON: another interpreter for the script, e.g. one in a chroot with
    // another PyTorch (it must see this source tree and the temporary folder at these paths)
    const char* python = std::getenv("TS_REFERENCE_PYTHON");
    const std::string cmd = "OPENBLAS_NUM_THREADS=" + std::to_string(kReferenceBlasThreads) + " " +
                            (python && *python ? std::string(python) : std::string("/usr/bin/python3")) + " '" +
                            std::string(TS_SOURCE_DIR) + "/tests/twins/" + script + "' '" +
                            dir_.string() + "' > '" + (dir_ / "log.txt").string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir_ / "log.txt");
      const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error("reference script failed: " + cmd + "\n" + text);
    }
  }
  ~ReferenceRun() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  ReferenceRun(const ReferenceRun&) = delete;
  ReferenceRun& operator=(const ReferenceRun&) = delete;

  const fs::path& dir() const { return dir_; }
  fs::path operator/(const std::string& file) const { return dir_ / file; }
  std::vector<float> f32(const std::string& file) const { return read_f32(dir_ / file); }

  // The script's cases: read(fields, dir()) for each non-empty line of the manifest.txt it wrote
  // (fields: a stream over that line).
  template <class Case, class Read>
  std::vector<Case> manifest_cases(Read read) const {
    std::vector<Case> cases;
    std::ifstream m(dir_ / "manifest.txt");
    std::string line;
    while (std::getline(m, line)) {
      if (line.empty()) continue;
      std::istringstream fields(line);
      cases.push_back(read(fields, dir_));
    }
    return cases;
  }

 private:
  fs::path dir_;
};

}  // namespace ts_test
