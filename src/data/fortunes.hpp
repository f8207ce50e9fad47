// data/fortunes.hpp: the fortune files of Debian's fortunes / fortunes-min, and data/'s
// manifest (introduced with the real-text data, issue 43; scripts/fetch_data.sh fetches both).
//
// A fortune file is plain text whose records are separated by lines holding only "%" (strfile's
// default delimiter; the .dat index files are not needed). A record's text is every line
// between two delimiters, newlines included; a file's first record starts at byte 0, the text
// after the last delimiter is a record too, and records with no text (two delimiters in a row)
// (or only spaces and newlines) are skipped. The texts are bytes as the file has them (the fortunes are ASCII/UTF-8).
//   "A\n%\nB b\n%\n" -> {offset 0, "A\n"}, {offset 4, "B b\n"}
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ts::data {

struct FortuneRecord {
  std::string file;     // the path it came from
  size_t offset = 0;    // the byte where its text starts in that file
  std::string text;     // its lines, each with its '\n'
};

std::vector<FortuneRecord> parse_fortunes(const std::string& bytes, const std::string& file);
std::vector<FortuneRecord> read_fortunes(const std::string& path);

// data/MANIFEST.tsv, one row per fetched file (docs/conventions.md, "data/")
struct ManifestRow {
  std::string package, version, deb, deb_sha256, file, sha256;
  size_t bytes = 0;
};
// the rows; a missing manifest is a ts::FileError naming scripts/fetch_data.sh, a malformed one
// names the line
std::vector<ManifestRow> read_manifest(const std::string& data_dir);
// the manifest's files under `prefix` ("fortunes/min/", "fortunes/", "mo/fr/"), as paths
// data_dir/file, in manifest order
std::vector<std::string> manifest_files(const std::string& data_dir, const std::string& prefix);
// where data/ is: $TS_DATA_DIR when set, else the source tree's data/
std::string default_data_dir();

}  // namespace ts::data
