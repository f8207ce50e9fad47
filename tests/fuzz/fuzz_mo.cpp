// fuzz_mo.cpp: libFuzzer target for the GNU .mo reader (src/data/mo.cpp) and the pair filter
// after it (src/data/pairs.cpp), built with clang's -fsanitize=fuzzer,address,undefined.
//   make test   runs it for a fixed number of inputs (CTest "fuzz_mo", label sanitize)
//   make fuzz   runs it for 10 minutes
// Seeds: with TS_FUZZ_SEEDS=DIR, LLVMFuzzerInitialize first writes valid catalogs into DIR in
// both byte orders (tests/mo_writer.hpp: contexts, plural forms, the header).
// An input must be refused with one FileError naming the file (one line), or read into entries
// that keep the reader's promises; anything else (another exception, a crash, a sanitizer
// report, a read out of bounds) fails.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "../mo_writer.hpp"
#include "base/errors.hpp"
#include "data/mo.hpp"
#include "data/pairs.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("TS_FUZZ_SEEDS");
  if (!dir) return 0;
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"", "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n"},
      {"Premature end of regular expression", "Fin prématurée d'une expression régulière"},
      {std::string("menu\4Open the file now"), "Ouvrir le fichier maintenant"},
      {std::string("%d file\0%d files", 16), std::string("%d fichier\0%d fichiers", 22)},
  };
  for (bool big : {false, true})
    std::ofstream(std::string(dir) + (big ? "/big.mo" : "/little.mo"), std::ios::binary)
        << ts::test::mo_bytes(entries, big);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ts::data;
  MoCatalog cat;
  try {
    cat = parse_mo(data, size, "fuzz.mo");
  } catch (const ts::FileError& e) {
    require(std::strncmp(e.what(), "fuzz.mo: ", 9) == 0);  // every refusal names the file
    require(std::strchr(e.what(), '\n') == nullptr);       // in one line
    return 0;
  }
  size_t total = 0;
  for (const MoEntry& e : cat.entries) {
    require(!e.msgstr.empty());
    require(e.msgid.find('\0') == std::string::npos && e.context.find('\4') == std::string::npos);
    for (const std::string& s : e.msgstr) total += s.size();
    total += e.msgid.size() + e.msgid_plural.size() + e.context.size();
  }
  require(total <= size);
  try {
    const PairSet set = extract_pairs({cat});
    require(set.sources.size() == 1 && set.sources[0].entries == cat.entries.size());
    size_t refused = 0;
    for (const auto& r : set.sources[0].refused) refused += r.second;
    require(set.sources[0].kept + refused == cat.entries.size());
    for (const Pair& p : set.pairs) require(pair_refusal(p.en, p.fr).empty());
  } catch (const ts::FileError& e) {
    require(std::strstr(e.what(), "charset") != nullptr);  // the only refusal extract_pairs makes
  }
  return 0;
}
