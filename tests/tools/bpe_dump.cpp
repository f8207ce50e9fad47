// bpe_dump: the C++ side of the BPE twins (tests/twins/bpe_reference.py, gpt2_reference.py).
//
//   bpe_dump train  bytes|gpt2 MERGES TEXT [ENCODE]   merges learned from TEXT, one per line
//                   "left right id count"; then, with ENCODE, the line "ids i1 i2 ..." of ENCODE
//   bpe_dump naive  bytes|gpt2 MERGES TEXT [ENCODE]   the same by the full-rescan trainer
//   bpe_dump gpt2   DIR RECORDS keep|replace          GPT-2 ids (DIR/vocab.bpe, DIR/encoder.json)
//                   of each record of RECORDS (4-byte little-endian length, then the bytes), one
//                   JSON array per line (-1 written as null, as node writes undefined); with keep,
//                   exit 1 when a record does not come back from decode(encode(record))
//   bpe_dump chunks RECORDS                           GPT-2's pre-tokenizer chunks of each record,
//                   one JSON array of byte strings (as lists of byte values) per line
//   bpe_dump classes                                  one letter per code point 0..0x10FFFF:
//                   L N S O (letter, number, space, other), lower case where \p{Cn} (unassigned)
// Bad arguments or unreadable files: one line on stderr, exit code 2.
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/bpe.hpp"
#include "text/gpt2_encoder.hpp"

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "bpe_dump: " << why
            << " (usage: bpe_dump train|naive bytes|gpt2 MERGES TEXT [ENCODE] | gpt2 DIR RECORDS keep|replace"
               " | chunks RECORDS | classes)\n";
  std::exit(2);
}

std::string read_all(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) usage(path + " is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) usage("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> read_records(const std::string& path) {
  const std::string all = read_all(path);
  std::vector<std::string> out;
  for (size_t at = 0; at < all.size();) {
    if (at + 4 > all.size()) usage(path + ": truncated record length at byte " + std::to_string(at));
    const uint32_t n = uint32_t(uint8_t(all[at])) | uint32_t(uint8_t(all[at + 1])) << 8 |
                       uint32_t(uint8_t(all[at + 2])) << 16 | uint32_t(uint8_t(all[at + 3])) << 24;
    at += 4;
    if (n > all.size() - at) usage(path + ": record at byte " + std::to_string(at - 4) + " runs past the end");
    out.push_back(all.substr(at, n));
    at += n;
  }
  return out;
}

void ids_line(const std::vector<int32_t>& ids) {
  std::string line = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ',';
    line += ids[i] < 0 ? "null" : std::to_string(ids[i]);
  }
  line += "]\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.empty()) usage("no command");
  try {
    if ((a[0] == "train" || a[0] == "naive") && (a.size() == 4 || a.size() == 5)) {
      if (a[1] != "bytes" && a[1] != "gpt2") usage("split must be bytes or gpt2, not '" + a[1] + "'");
      const auto split = a[1] == "bytes" ? ts::bpe::Split::Bytes : ts::bpe::Split::Gpt2;
      size_t merges = 0;
      try {
        merges = std::stoul(a[2]);
      } catch (const std::exception&) {
        usage("MERGES must be a count, not '" + a[2] + "'");
      }
      const std::string text = read_all(a[3]);
      const ts::bpe::Tokenizer tok =
          a[0] == "train" ? ts::bpe::train(text, merges, split) : ts::bpe::train_naive(text, merges, split);
      for (const ts::bpe::Merge& m : tok.merges) std::printf("%d %d %d %lld\n", m.left, m.right, m.id, (long long)m.count);
      if (a.size() == 5) {
        std::printf("ids");
        for (int32_t id : tok.encode(read_all(a[4]))) std::printf(" %d", id);
        std::printf("\n");
      }
    } else if (a[0] == "gpt2" && a.size() == 4) {
      if (a[3] != "keep" && a[3] != "replace") usage("invalid UTF-8 policy must be keep or replace, not '" + a[3] + "'");
      ts::gpt2::Encoder enc(a[1] + "/vocab.bpe", a[1] + "/encoder.json");
      const auto policy = a[3] == "keep" ? ts::gpt2::InvalidUtf8::Keep : ts::gpt2::InvalidUtf8::Replace;
      size_t k = 0;
      for (const std::string& r : read_records(a[2])) {
        const std::vector<int32_t> ids = enc.encode(r, policy);
        ids_line(ids);
        if (policy == ts::gpt2::InvalidUtf8::Keep && enc.decode(ids) != r) {  // Keep must round-trip
          std::cerr << "bpe_dump: record " << k << " does not come back from decode(encode())\n";
          return 1;
        }
        ++k;
      }
    } else if (a[0] == "chunks" && a.size() == 2) {
      for (const std::string& r : read_records(a[1])) {
        nlohmann::json line = nlohmann::json::array();
        for (std::string_view c : ts::gpt2::split(r)) line.push_back(std::vector<int>(c.begin(), c.end()));
        for (auto& c : line)
          for (auto& b : c) b = int(b.get<int>() & 0xFF);
        std::cout << line.dump() << "\n";
      }
    } else if (a[0] == "classes" && a.size() == 1) {
      std::string out;
      for (char32_t c = 0; c <= 0x10FFFF; ++c) {
        const char letter = "LNSO"[int(ts::gpt2::char_class(c))];
        out += ts::gpt2::unassigned(c) ? char(letter + 32) : letter;
      }
      std::cout << out << "\n";
    } else {
      usage("unknown command or wrong number of arguments");
    }
  } catch (const std::exception& e) {
    std::cerr << "bpe_dump: " << e.what() << "\n";
    return 2;
  }
  std::fflush(stdout);
  if (std::ferror(stdout)) {
    std::cerr << "bpe_dump: cannot write the output\n";
    return 1;
  }
  return 0;
}
