// data_summary: what scripts/fetch_data.sh put in data/, read back by src/data/'s readers.
//
//   data_summary [--data DIR] [--pairs N] [--test]
//
// Prints the fortunes (files, bytes, records; fortunes-min apart), every catalog of the manifest
// (package, version, byte order, entries, pairs kept, the rules that refused the rest), the pairs
// per split and the first N pairs (default 5). Every .mo of the manifest must parse and every
// fortune file give a record: a file that is not what it should be is one line on stderr naming
// it, exit 2 (a read the system fails: exit 1); an English key in two splits is NOT OK, exit 1.
// Without data/ (no MANIFEST.tsv): one line, exit 2, or with --test exit 77 (ctest SKIP:
// data_all_parse runs it). Bad arguments: one line, exit 2.
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/errors.hpp"
#include "data/fortunes.hpp"
#include "data/mo.hpp"
#include "data/pairs.hpp"

using namespace ts::data;

int main(int argc, char** argv) {
  std::string dir = default_data_dir();
  size_t show = 5;
  bool test = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--test") { test = true; continue; }
    if (a == "--data" && i + 1 < argc) { dir = argv[++i]; continue; }
    if (a == "--pairs" && i + 1 < argc) {
      const std::string v = argv[++i];
      char* end = nullptr;
      show = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end || v[0] == '-') {
        std::cerr << "data_summary: --pairs takes a whole number, not '" << v << "'\n";
        return 2;
      }
      continue;
    }
    std::cerr << "data_summary: unknown argument '" << a << "': use --data DIR, --pairs N, --test\n";
    return 2;
  }
  std::vector<ManifestRow> rows;
  try {
    rows = read_manifest(dir);
  } catch (const ts::FileError& e) {
    std::cerr << (test ? "SKIP: " : "data_summary: ") << e.what() << "\n";
    return test ? 77 : 2;
  }
  int bad = 0;
  try {
    // fortunes
    size_t files[2] = {0, 0}, bytes[2] = {0, 0}, records[2] = {0, 0};
    for (const ManifestRow& r : rows) {
      if (r.file.compare(0, 9, "fortunes/") != 0) continue;
      const std::vector<FortuneRecord> recs = read_fortunes(dir + "/" + r.file);
      if (recs.empty()) {
        std::cout << "NOT OK: " << r.file << " gave no record\n";
        ++bad;
      }
      const int k = r.file.compare(0, 13, "fortunes/min/") == 0 ? 0 : 1;
      ++files[k];
      bytes[k] += r.bytes;
      records[k] += recs.size();
    }
    std::cout << fmt::format("fortunes: {} files, {} bytes, {} records (fortunes-min: {} files, {} bytes, {} records)\n",
                             files[0] + files[1], bytes[0] + bytes[1], records[0] + records[1], files[0], bytes[0],
                             records[0]);
    // catalogs
    std::vector<MoCatalog> cats;
    std::map<std::string, const ManifestRow*> row_of;
    for (const ManifestRow& r : rows) {
      if (r.file.compare(0, 3, "mo/") != 0) continue;
      cats.push_back(read_mo(dir + "/" + r.file));
      row_of[cats.back().file] = &r;
    }
    const PairSet set = extract_pairs(cats);
    std::cout << fmt::format("{:<16} {:<24} {:>5} {:>7} {:>6}  refused (rule: count)\n", "catalog", "package version",
                             "order", "entries", "pairs");
    size_t entries = 0;
    for (size_t c = 0; c < cats.size(); ++c) {
      const SourceCount& s = set.sources[c];
      const ManifestRow& r = *row_of[cats[c].file];
      std::string why;
      for (const auto& [rule, n] : s.refused)
        if (n) why += fmt::format(" {}: {}", rule, n);
      std::cout << fmt::format("{:<16} {:<24} {:>5} {:>7} {:>6} {}\n", s.source, r.package + " " + r.version,
                               cats[c].big_endian ? "BE" : "LE", s.entries, s.kept, why);
      entries += s.entries;
    }
    size_t per[3] = {0, 0, 0};
    std::map<std::string, Split> split_of_key;
    for (const Pair& p : set.pairs) {
      ++per[int(p.split)];
      const auto [it, fresh] = split_of_key.emplace(english_key(p.en), p.split);
      if (!fresh && it->second != p.split) {
        std::cout << "NOT OK: \"" << p.en << "\" sits in two splits\n";
        ++bad;
      }
    }
    std::cout << fmt::format("pairs: {} of {} catalog entries; train {}, validation {}, test {} (FNV-1a 64 of the English key, % 100: 80/10/10)\n",
                             set.pairs.size(), entries, per[0], per[1], per[2]);
    for (size_t i = 0; i < show && i < set.pairs.size(); ++i)
      std::cout << fmt::format("  [{}, {}] {}\n  {:>{}}-> {}\n", set.pairs[i].source, split_name(set.pairs[i].split),
                               set.pairs[i].en, "", 0, set.pairs[i].fr);
  } catch (const ts::FileIoError& e) {
    std::cerr << "data_summary: " << e.what() << "\n";
    return 1;
  } catch (const ts::FileError& e) {
    std::cerr << "data_summary: " << e.what() << " (scripts/fetch_data.sh fetches a damaged file again)\n";
    return 2;
  }
  if (bad) return 1;
  std::cout << "OK: every file of " << dir << "/MANIFEST.tsv read\n";
  if (!std::cout.flush()) return 1;
  return 0;
}
