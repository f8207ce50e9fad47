// bench_bpe: byte-level BPE training and GPT-2 encoding, one thread (run by bench/bpe_report.py).
//
//   bench_bpe TEXT RECORDS GPT2_DIR MERGES REPS
//     TEXT      the training text (all of fortunes, concatenated)
//     RECORDS   the texts to encode (4-byte little-endian length, then the bytes, per record)
//     GPT2_DIR  vocab.bpe and encoder.json (scripts/fetch_gpt2_bpe.sh)
// Prints one JSON object: training seconds (wall and this thread's CPU) for MERGES merges in both splits (incremental; the
// full rescan is not timed here: it would take minutes), and GPT-2 encoding seconds over all
// records for REPS passes, the first with an empty cache (a fresh Encoder), plus the id count.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "text/bpe.hpp"
#include "text/gpt2_encoder.hpp"

namespace {

// Wall and CPU seconds of this thread: on a shared machine the CPU time is what the code cost.
struct Clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu0 = cpu_now();
  static double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
  // {"wall": s, "cpu": s}
  std::string json() const {
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    return "{\"wall\": " + std::to_string(w) + ", \"cpu\": " + std::to_string(cpu_now() - cpu0) + "}";
  }
};

bool read_all(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: bench_bpe TEXT RECORDS GPT2_DIR MERGES REPS\n";
    return 2;
  }
  std::string text, all;
  if (!read_all(argv[1], text) || !read_all(argv[2], all)) {
    std::cerr << "bench_bpe: cannot read " << argv[1] << " or " << argv[2] << "\n";
    return 2;
  }
  std::vector<std::string> records;
  for (size_t at = 0; at + 4 <= all.size();) {
    const uint32_t n = uint32_t(uint8_t(all[at])) | uint32_t(uint8_t(all[at + 1])) << 8 |
                       uint32_t(uint8_t(all[at + 2])) << 16 | uint32_t(uint8_t(all[at + 3])) << 24;
    records.push_back(all.substr(at + 4, n));
    at += 4 + n;
  }
  const size_t merges = std::stoul(argv[4]);
  const int reps = std::max(2, std::atoi(argv[5]));
  std::string json = "{";
  // 1) training, both splits
  for (ts::bpe::Split split : {ts::bpe::Split::Bytes, ts::bpe::Split::Gpt2}) {
    const Clock clock;
    const ts::bpe::Tokenizer tok = ts::bpe::train(text, merges, split);
    json += "\"train_" + std::string(ts::bpe::split_name(split)) + "\": {\"seconds\": " + clock.json() +
            ", \"merges\": " + std::to_string(tok.merges.size()) + ", \"bytes\": " + std::to_string(text.size()) + "}, ";
  }
  // 2) GPT-2 encoding: pass 1 with an empty cache, then warm passes
  try {
    ts::gpt2::Encoder enc(std::string(argv[3]) + "/vocab.bpe", std::string(argv[3]) + "/encoder.json");
    size_t ids = 0, bytes = 0;
    for (const std::string& r : records) bytes += r.size();
    json += "\"encode\": {\"bytes\": " + std::to_string(bytes) + ", \"seconds\": [";
    for (int k = 0; k < reps; ++k) {
      const Clock clock;
      ids = 0;
      for (const std::string& r : records) ids += enc.encode(r, ts::gpt2::InvalidUtf8::Replace).size();
      json += (k ? ", " : "") + clock.json();
    }
    json += "], \"tokens\": " + std::to_string(ids) + "}}";
  } catch (const std::exception& e) {
    std::cerr << "bench_bpe: " << e.what() << "\n";
    return 2;
  }
  std::cout << json << "\n";
  return 0;
}
