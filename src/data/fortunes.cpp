// data/fortunes.cpp: fortune records and data/'s manifest (see fortunes.hpp).
#include "data/fortunes.hpp"

#include <cstdlib>

#include "base/errors.hpp"
#include "data/io.hpp"

namespace ts::data {

std::vector<FortuneRecord> parse_fortunes(const std::string& bytes, const std::string& file) {
  std::vector<FortuneRecord> out;
  size_t start = 0, line = 0;
  auto close = [&](size_t end) {
    // a record with no text but spaces and newlines is skipped
    if (bytes.find_first_not_of(" \t\r\n", start) < end) out.push_back({file, start, bytes.substr(start, end - start)});
  };
  while (line < bytes.size()) {
    size_t nl = bytes.find('\n', line);
    const size_t end = nl == std::string::npos ? bytes.size() : nl;
    if (end - line == 1 && bytes[line] == '%') {  // a delimiter line
      close(line);
      start = nl == std::string::npos ? bytes.size() : nl + 1;
    }
    line = nl == std::string::npos ? bytes.size() : nl + 1;
  }
  close(bytes.size());
  return out;
}

std::vector<FortuneRecord> read_fortunes(const std::string& path) {
  return parse_fortunes(read_file(path, size_t(64) << 20), path);
}

std::vector<ManifestRow> read_manifest(const std::string& data_dir) {
  const std::string path = data_dir + "/MANIFEST.tsv";
  std::string text;
  try {
    text = read_file(path, size_t(16) << 20);
  } catch (const FileIoError&) {
    throw;
  } catch (const FileError&) {
    throw FileError(path + ": missing: run scripts/fetch_data.sh (or make deps): it fetches Debian's fortunes-min and fortunes packages into data/");
  }
  std::vector<ManifestRow> rows;
  size_t pos = 0, n = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (++n == 1) continue;  // the header row
    std::vector<std::string> f;
    size_t a = 0;
    for (;;) {
      const size_t t = line.find('\t', a);
      f.push_back(line.substr(a, t == std::string::npos ? std::string::npos : t - a));
      if (t == std::string::npos) break;
      a = t + 1;
    }
    char* end = nullptr;
    const unsigned long long bytes = f.size() == 7 ? std::strtoull(f[6].c_str(), &end, 10) : 0;
    if (f.size() != 7 || f[6].empty() || *end != '\0' || f[4].empty() || f[4].find("..") != std::string::npos ||
        f[4][0] == '/')
      throw FileError(path + ":" + std::to_string(n) +
                      ": not a manifest row (7 tab-separated fields, a relative file): run scripts/fetch_data.sh");
    rows.push_back({f[0], f[1], f[2], f[3], f[4], f[5], static_cast<size_t>(bytes)});
  }
  return rows;
}

std::vector<std::string> manifest_files(const std::string& data_dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const ManifestRow& r : read_manifest(data_dir))
    if (r.file.compare(0, prefix.size(), prefix) == 0) out.push_back(data_dir + "/" + r.file);
  return out;
}

std::string default_data_dir() {
  if (const char* d = std::getenv("TS_DATA_DIR"); d && *d) return d;
#ifdef TS_SOURCE_DIR
  return std::string(TS_SOURCE_DIR) + "/data";
#else
  return "data";
#endif
}

}  // namespace ts::data
